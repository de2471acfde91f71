/**
 * A controller runtime: reconcile loops driven by shared informers, with client-go's
 * work-queue guarantees, per-key backoff, finalizers, events, metrics and a span per
 * reconcile.
 *
 * - A key (namespace/name of a primary object) is never reconciled concurrently with
 *   itself; triggers that arrive while it is queued or running coalesce into one more
 *   run; at most `concurrency` reconciles run at once.
 * - Triggers: the primary resource's watcher; `owns` maps a changed owned object to its
 *   controlling owner (`ownerReferences` with `controller: true`); `watches` maps any
 *   object to keys. All go through the shared `Informers` (the one in the context, or a
 *   private set when there is none).
 * - `reconcile` returns `Controller.done` or `Controller.requeueAfter(duration)`, or
 *   fails; the `errorPolicy` (default exponential 5 ms to 1000 s per key, as client-go's
 *   rate-limited queue) says when to try again. A success resets the key's backoff.
 * - With `finalizer`, the finalizer is added before the first reconcile of a live
 *   object, and a deleted object is reconciled one last time through `cleanup`, after
 *   which the finalizer is removed. Without it, deleted objects are not reconciled.
 * - `resync` requeues every object periodically (off by default).
 * - `run` runs until interrupted; interruption stops every fiber and closes every watch.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { ConfigMaps, Controller, Kube, NodeKube } from "effect-kube"
 *
 * const controller = Controller.make({
 *   name: "example.com/annotator",
 *   api: Kube.api(ConfigMaps, { namespace: "default" }),
 *   reconcile: (cm, ctx) =>
 *     Effect.gen(function* () {
 *       yield* ctx.recorder.normal("Seen", `saw ${cm.metadata?.name}`)
 *       return Controller.requeueAfter("5 minutes")
 *     })
 * })
 *
 * // call main() to run it against the cluster your kubeconfig names
 * const main = () => Effect.runPromise(Controller.run(controller).pipe(Effect.provide(NodeKube.layer)))
 * ```
 * @since 0.1.0
 */
import * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import type * as Metric from "effect/Metric"
import type * as Schedule from "effect/Schedule"
import * as internal from "./internal/runtime/controller.js"
import type * as Kube from "./Kube.js"
import type * as Resource from "./Resource.js"
import type * as Watcher from "./Watcher.js"

/**
 * What a reconcile asks for next: nothing (until the next trigger), or another run after
 * a delay.
 *
 * @since 0.1.0
 * @category models
 */
export type Action =
  | { readonly _tag: "Done" }
  | { readonly _tag: "RequeueAfter"; readonly delay: Duration.Duration }

/**
 * Nothing more until something changes.
 *
 * @since 0.1.0
 * @category constructors
 */
export const done: Action = { _tag: "Done" }

/**
 * Reconcile again after `delay` (an earlier trigger still runs it sooner).
 *
 * @since 0.1.0
 * @category constructors
 */
export const requeueAfter = (delay: Duration.Input): Action => ({
  _tag: "RequeueAfter",
  delay: Duration.fromInputUnsafe(delay)
})

/**
 * Which object to reconcile. `namespace` is absent for cluster-scoped kinds.
 *
 * @since 0.1.0
 * @category models
 */
export interface ObjectKey {
  readonly namespace?: string | undefined
  readonly name: string
}

/**
 * The metadata the runtime reads from objects.
 *
 * @since 0.1.0
 * @category models
 */
export interface HasMetadata {
  readonly metadata?: {
    readonly name?: string | undefined
    readonly namespace?: string | undefined
    readonly uid?: string | undefined
    readonly resourceVersion?: string | undefined
    readonly finalizers?: ReadonlyArray<string> | undefined
    readonly deletionTimestamp?: string | undefined
    readonly ownerReferences?: ReadonlyArray<{
      readonly apiVersion: string
      readonly kind: string
      readonly name: string
      readonly uid: string
      readonly controller?: boolean | undefined
    }> | undefined
  } | undefined
}

/**
 * What `reconcile` is given besides the object.
 *
 * @since 0.1.0
 * @category models
 */
export interface Context<A> {
  readonly key: ObjectKey
  /** The primary api, bound to the object's namespace. */
  readonly api: Kube.Api<A>
  /** The shared cache of primary objects. */
  readonly store: Watcher.Store<A, Kube.Error>
  /** Records events.k8s.io Events about the object (best effort, never fails). */
  readonly recorder: {
    readonly normal: (reason: string, note: string, action?: string) => Effect.Effect<void, never, Kube.Requirements>
    readonly warning: (reason: string, note: string, action?: string) => Effect.Effect<void, never, Kube.Requirements>
  }
}

/**
 * A resource to watch for triggers, given as its `Kube.api(...)`.
 *
 * @since 0.1.0
 * @category models
 */
export interface Watched {
  readonly resource: Resource.Info
  readonly namespace: string | undefined
}

/**
 * A trigger from another resource: `mapper` says which primary keys a changed object
 * concerns. Use `Controller.watch` for a typed mapper.
 *
 * @since 0.1.0
 * @category models
 */
export interface Watch {
  readonly api: Watched
  readonly mapper: (object: never) => ReadonlyArray<ObjectKey>
  readonly labelSelector?: string | undefined
  readonly fieldSelector?: string | undefined
  /** A namespaced kind in every namespace. */
  readonly allNamespaces?: boolean | undefined
}

/**
 * An owned resource with selectors, or in every namespace (a cluster-scoped owner may own
 * objects in many namespaces).
 *
 * @since 0.1.0
 * @category models
 */
export interface Owns {
  readonly api: Watched
  readonly labelSelector?: string | undefined
  readonly fieldSelector?: string | undefined
  readonly allNamespaces?: boolean | undefined
}

/**
 * A trigger from another resource with a typed mapper.
 *
 * @since 0.1.0
 * @category constructors
 */
export const watch = <A>(
  api: Kube.Api<A>,
  mapper: (object: A) => ReadonlyArray<ObjectKey>,
  selectors?: Kube.Selectors & { readonly allNamespaces?: boolean | undefined }
): Watch => ({ api, mapper, ...selectors })

/**
 * Options of `make`.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options<A, E, R> {
  /** The controller's name: metrics, spans, and the reporting controller of its events. */
  readonly name: string
  /** The primary resource (and namespace). */
  readonly api: Kube.Api<A>
  readonly reconcile: (object: A, context: Context<A>) => Effect.Effect<Action, E, R>
  /** A finalizer and the cleanup it guards. */
  readonly finalizer?: {
    readonly name: string
    readonly cleanup: (object: A, context: Context<A>) => Effect.Effect<void, E, R>
  } | undefined
  /** Owned resources: a change to one reconciles its controlling owner. */
  readonly owns?: ReadonlyArray<Watched | Owns> | undefined
  /** Other triggers. */
  readonly watches?: ReadonlyArray<Watch> | undefined
  /** Reconciles running at once (default 1). */
  readonly concurrency?: number | undefined
  /** Delays after failures, per key; its input is the failure (default `defaultErrorPolicy`). */
  readonly errorPolicy?: Schedule.Schedule<unknown, E> | undefined
  /** Requeue every object this often (default never). */
  readonly resync?: Duration.Input | undefined
  /** Selects the primary objects. */
  readonly labelSelector?: string | undefined
  readonly fieldSelector?: string | undefined
  /** Watch a namespaced primary kind in every namespace. */
  readonly allNamespaces?: boolean | undefined
  /**
   * Only the keys of this shard: `hash(namespace/name) % count === index` (see
   * `LeaderElection.shards`, which runs one controller per shard lease held).
   */
  readonly shard?: { readonly index: number; readonly count: number } | undefined
  /** This replica's name in events (default the controller's name and a random suffix). */
  readonly instance?: string | undefined
}

/**
 * A controller, ready to `run`.
 *
 * @since 0.1.0
 * @category models
 */
export interface Controller<A, E, R> {
  readonly options: Options<A, E, R>
}

/**
 * Exponential backoff from 5 ms, doubling, capped at 1000 s: client-go's
 * `DefaultTypedItemBasedRateLimiter`.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultErrorPolicy: Schedule.Schedule<unknown, unknown> = internal.defaultErrorPolicy

/**
 * Describes a controller (nothing runs until `run`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = <A extends HasMetadata, E = never, R = never>(options: Options<A, E, R>): Controller<A, E, R> => ({
  options
})

/**
 * Runs a controller until interrupted. Fails only when a watch fails with an error the
 * watcher does not retry (such as 403 Forbidden).
 *
 * @since 0.1.0
 * @category running
 */
export const run: <A, E, R>(controller: Controller<A, E, R>) => Effect.Effect<never, Kube.Error, R | Kube.Requirements> =
  internal.run

/**
 * The shard of a key among `count`: FNV-1a of `namespace/name`, modulo `count`.
 *
 * @since 0.1.0
 * @category sharding
 */
export const shardOf: (key: ObjectKey, count: number) => number = (key, count) =>
  internal.shardOfKey(`${key.namespace ?? ""}/${key.name}`, count)

/**
 * The metrics every controller updates, with the attribute `controller` (its name);
 * `reconciles` also has `result` (`success`, `requeue`, `error`). Read them with
 * `Metric.value(Metric.withAttributes(metric, { controller }))` or export them with
 * `@effect/opentelemetry`.
 *
 * @since 0.1.0
 * @category metrics
 */
export const metrics: {
  readonly reconciles: Metric.Counter<number>
  readonly reconcileDuration: Metric.Histogram<number>
  readonly queueDepth: Metric.Gauge<number>
  readonly retries: Metric.Counter<number>
} = internal.metrics

/**
 * The key of an object.
 *
 * @since 0.1.0
 * @category constructors
 */
export const keyOf = (object: HasMetadata): ObjectKey => ({
  name: object.metadata?.name ?? "",
  ...(object.metadata?.namespace !== undefined ? { namespace: object.metadata.namespace } : {})
})

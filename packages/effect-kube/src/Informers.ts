/**
 * Shared informers: one watch per (resource, namespace, selectors) for the whole
 * application, however many controllers, caches and streams subscribe. Each subscriber
 * gets the shared `Store` and a stream of the watcher's events (beginning with a replay
 * of what the store already holds, framed as a listing); the watch starts with the
 * first subscriber and stops when the last subscriber's scope closes. client-go's
 * SharedInformerFactory is the model.
 *
 * @example
 * ```ts
 * import { Effect, Stream } from "effect"
 * import { Informers, Kube, NodeKube, Pods } from "effect-kube"
 *
 * const program = Effect.scoped(Effect.gen(function* () {
 *   const informers = yield* Informers.Informers
 *   const a = yield* informers.subscribe(Kube.api(Pods), { labelSelector: "app=web" })
 *   const b = yield* informers.subscribe(Kube.api(Pods), { labelSelector: "app=web" }) // same watch
 *   yield* a.store.ready
 *   yield* b.events.pipe(Stream.take(10), Stream.runDrain)
 * }))
 *
 * // call main() to run it against the cluster your kubeconfig names
 * const main = () => Effect.runPromise(program.pipe(Effect.provide(Informers.layer), Effect.provide(NodeKube.layer)))
 * ```
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import type * as Stream from "effect/Stream"
import * as internal from "./internal/runtime/informers.js"
import type * as Kube from "./Kube.js"
import type * as Watcher from "./Watcher.js"

/**
 * What selects the objects of an informer; with the resource and namespace of the api,
 * it is the key informers are shared by.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options extends Kube.Selectors {
  /** A namespaced kind across every namespace. */
  readonly allNamespaces?: boolean | undefined
}

/**
 * One subscription to a shared informer: the shared store and this subscriber's event
 * stream. The stream starts with `Init`, `InitApply` for every object known so far and
 * `InitDone` (unless the first listing is still under way), then follows the watch. It
 * fails when the watcher fails with an error it does not retry. A listing reaches the store
 * whole at its `InitDone`: until then the store holds what it held before it (nothing, the
 * first time), so a subscriber that reads the store for an `InitApply` waits for `InitDone`,
 * as `Controller` does.
 *
 * @since 0.1.0
 * @category models
 */
export interface Informer<A> {
  readonly store: Watcher.Store<A, Kube.Error>
  readonly events: Stream.Stream<Watcher.Event<A>, Kube.Error>
}

/**
 * The service.
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /**
   * Subscribes for as long as the scope is open; the first subscriber starts the watch.
   * A `transform` or `indexers` (see `Watcher.StoreOptions`) make the store and events of
   * the informer: subscribers share an informer only when they give the same functions
   * (the same function objects, so define them once, not in the call).
   */
  readonly subscribe: <A>(
    api: Kube.Api<A>,
    options?: Options & Watcher.StoreOptions<A>
  ) => Effect.Effect<Informer<A>, never, Scope.Scope>
  /** How many informers (watches) are running. */
  readonly active: () => number
}

/**
 * @since 0.1.0
 * @category tags
 */
export class Informers extends Context.Service<Informers, Service>()("effect-kube/Informers") {}

/**
 * A set of informers whose watches run in the given scope with the given requirements.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<Service, never, Kube.Requirements | Scope.Scope> = Effect.gen(function*() {
  const context = yield* Effect.context<Kube.Requirements>()
  const scope = yield* Effect.scope
  return internal.make(context, scope)
})

/**
 * The application's informers; watches stop when the layer is released at the latest.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<Informers, never, Kube.Requirements> = Layer.effect(Informers, make)

/**
 * Subscribes through the `Informers` service.
 *
 * @since 0.1.0
 * @category accessors
 */
export const subscribe = <A>(
  api: Kube.Api<A>,
  options?: Options
): Effect.Effect<Informer<A>, never, Informers | Scope.Scope> =>
  Effect.flatMap(Informers, (informers) => informers.subscribe(api, options))

/**
 * The operations of the Kubernetes API, bound to a Resource. Every operation is an
 * `Effect` (or a `Stream`) that requires exactly `KubeConfig | HttpClient`, fails with
 * tagged errors, and decodes objects with the resource's Schema.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Kube, NodeKube, Pods } from "effect-kube"
 *
 * const pods = Kube.api(Pods, { namespace: "default" })
 *
 * const program = Effect.gen(function* () {
 *   yield* pods.create({ metadata: { name: "hello", labels: { app: "hello" } }, spec: { containers: [{ name: "c", image: "busybox" }] } })
 *   const found = yield* pods.get("hello") // Option<Pod>
 *   return yield* pods.deleteAll({ labelSelector: "app=hello" }) // 1
 * })
 *
 * Effect.runPromise(program.pipe(Effect.provide(NodeKube.layer)))
 * ```
 * @since 0.1.0
 */
import type * as HttpClient from "@effect/platform/HttpClient"
import type * as HttpClientError from "@effect/platform/HttpClientError"
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import type * as Stream from "effect/Stream"
import type { ApiError, KubeConfigError, Status, ValidationError, WaitTimeout } from "./Errors.js"
import * as internal from "./internal/api.js"
import type { KubeConfig } from "./KubeConfig.js"
import type { Patch } from "./Patch.js"
import type { Resource } from "./Resource.js"
import type * as Watcher from "./Watcher.js"

/**
 * What every operation requires: a layer such as `NodeKube.layer` or
 * `FakeCluster.layer()` provides both.
 *
 * @since 0.1.0
 * @category models
 */
export type Requirements = KubeConfig | HttpClient.HttpClient

/**
 * What an operation can fail with: the server's answer (`ApiError`), bad input or a
 * response that does not fit its Schema (`ValidationError`), credentials that could not
 * be obtained (`KubeConfigError`), or the transport (`HttpClientError`).
 *
 * @since 0.1.0
 * @category models
 */
export type Error = ApiError | ValidationError | KubeConfigError | HttpClientError.HttpClientError

/**
 * `dryRun: true` asks the server to validate and answer without persisting.
 *
 * @since 0.1.0
 * @category models
 */
export interface WriteOptions {
  readonly dryRun?: boolean | undefined
  readonly fieldManager?: string | undefined
}

/**
 * Label and field selectors, as the API takes them (`app=web,tier!=db`,
 * `metadata.name=web`).
 *
 * @since 0.1.0
 * @category models
 */
export interface Selectors {
  readonly labelSelector?: string | undefined
  readonly fieldSelector?: string | undefined
}

/**
 * Options of `list`. `allNamespaces` lists a namespaced kind across every namespace.
 *
 * @since 0.1.0
 * @category models
 */
export interface ListOptions extends Selectors {
  readonly limit?: number | undefined
  readonly continue?: string | undefined
  readonly resourceVersion?: string | undefined
  readonly resourceVersionMatch?: "Exact" | "NotOlderThan" | undefined
  readonly allNamespaces?: boolean | undefined
}

/**
 * One page of a list: its items and where the list stands.
 *
 * @since 0.1.0
 * @category models
 */
export interface ListResult<A> {
  readonly items: ReadonlyArray<A>
  readonly metadata: {
    readonly resourceVersion: string
    readonly continue?: string | undefined
    readonly remainingItemCount?: number | undefined
  }
}

/**
 * Options of `delete`.
 *
 * @since 0.1.0
 * @category models
 */
export interface DeleteOptions {
  readonly propagationPolicy?: "Foreground" | "Background" | "Orphan" | undefined
  readonly gracePeriodSeconds?: number | undefined
  readonly preconditions?: { readonly uid?: string | undefined; readonly resourceVersion?: string | undefined } | undefined
  readonly dryRun?: boolean | undefined
}

/**
 * Options of `deleteAll`: a `labelSelector` or a `fieldSelector` is required (by the
 * type, and a blank one fails with a ValidationError), so that a forgotten selector
 * never deletes a whole namespace.
 *
 * @example
 * ```ts
 * pods.deleteAll({ labelSelector: "app=smoke" })
 * pods.deleteAll({ fieldSelector: "status.phase=Succeeded", propagationPolicy: "Background" })
 * // pods.deleteAll({}) does not compile
 * ```
 * @since 0.1.0
 * @category models
 */
export type DeleteAllOptions =
  & {
    readonly propagationPolicy?: "Foreground" | "Background" | "Orphan" | undefined
    readonly gracePeriodSeconds?: number | undefined
    readonly dryRun?: boolean | undefined
  }
  & (
    | { readonly labelSelector: string; readonly fieldSelector?: string | undefined }
    | { readonly labelSelector?: string | undefined; readonly fieldSelector: string }
  )

/**
 * Options of server-side apply.
 *
 * @since 0.1.0
 * @category models
 */
export interface ApplyOptions {
  readonly fieldManager: string
  readonly force?: boolean | undefined
  readonly dryRun?: boolean | undefined
}

/**
 * Options of a raw watch.
 *
 * @since 0.1.0
 * @category models
 */
export interface WatchOptions extends Selectors {
  readonly resourceVersion?: string | undefined
  readonly timeoutSeconds?: number | undefined
  readonly allowWatchBookmarks?: boolean | undefined
  readonly sendInitialEvents?: boolean | undefined
  readonly allNamespaces?: boolean | undefined
}

/**
 * One event of a raw watch. A bookmark carries only the resourceVersion the watch has
 * reached.
 *
 * @since 0.1.0
 * @category models
 */
export type WatchEvent<A> =
  | { readonly type: "ADDED" | "MODIFIED" | "DELETED"; readonly object: A }
  | { readonly type: "BOOKMARK"; readonly resourceVersion: string; readonly initialEventsEnd: boolean }

/**
 * Options of a paginated list stream.
 *
 * @since 0.1.0
 * @category models
 */
export interface ListStreamOptions extends Selectors {
  /** Objects per page (default 500). */
  readonly pageSize?: number | undefined
  readonly allNamespaces?: boolean | undefined
}

/**
 * Options of `logs` and `logStream`. `sinceSeconds` and `sinceTime` exclude each other.
 *
 * @since 0.1.0
 * @category models
 */
export interface LogOptions {
  readonly container?: string | undefined
  readonly tailLines?: number | undefined
  readonly sinceSeconds?: number | undefined
  /** RFC 3339 time, or a Date. */
  readonly sinceTime?: string | Date | undefined
  readonly timestamps?: boolean | undefined
  readonly previous?: boolean | undefined
  readonly limitBytes?: number | undefined
}

/**
 * A named test on the current state of an object (`undefined` once it is gone), used by
 * `waitFor`; the name appears in the timeout error.
 *
 * @since 0.1.0
 * @category models
 */
export interface Condition<A> {
  readonly name: string
  readonly test: (object: A | undefined) => boolean
}

/**
 * The operations bound to one resource (and namespace). `S` lists the subresources of
 * the resource: the operations on a subresource are offered only where the kind has it
 * (`logs` and `logStream` where `S` has `"log"`, as Pods do), so calling one a kind
 * lacks is a compile error.
 *
 * @since 0.1.0
 * @category models
 */
export type Api<A, S extends string = never> = Operations<A> & ("log" extends S ? LogOperations : unknown)

/**
 * The operations every resource has.
 *
 * @since 0.1.0
 * @category models
 */
export interface Operations<A> {
  readonly resource: Resource<A, unknown>
  /** The namespace given to `api`; `undefined` means the KubeConfig's (or none, for cluster-scoped kinds). */
  readonly namespace: string | undefined
  /** Creates an object and returns it as the server made it. */
  readonly create: (object: A, options?: WriteOptions) => Effect.Effect<A, Error, Requirements>
  /** Reads an object; a 404 is `Option.none()`. */
  readonly get: (name: string) => Effect.Effect<Option.Option<A>, Error, Requirements>
  /** Lists objects (one page when `limit` is given). */
  readonly list: (options?: ListOptions) => Effect.Effect<ListResult<A>, Error, Requirements>
  /** Replaces an object; a stale `metadata.resourceVersion` fails with ApiError Conflict. */
  readonly replace: (name: string, object: A, options?: WriteOptions) => Effect.Effect<A, Error, Requirements>
  /** Patches an object with one of the `Patch` kinds. */
  readonly patch: (name: string, patch: Patch, options?: WriteOptions) => Effect.Effect<A, Error, Requirements>
  /** Server-side applies a whole object (created when absent). */
  readonly apply: (object: A, options: ApplyOptions) => Effect.Effect<A, Error, Requirements>
  /** Deletes an object: `true`, or `false` when there was none (404). */
  readonly delete: (name: string, options?: DeleteOptions) => Effect.Effect<boolean, Error, Requirements>
  /** Deletes every object that matches a (required, non-empty) selector; returns how many there were. */
  readonly deleteAll: (options: DeleteAllOptions) => Effect.Effect<number, Error, Requirements>
  /** One watch request as a stream of events; ends when the server ends it. */
  readonly watch: (options?: WatchOptions) => Stream.Stream<WatchEvent<A>, Error, Requirements>
  /** Every matching object, fetched page by page as the stream is pulled. */
  readonly listStream: (options?: ListStreamOptions) => Stream.Stream<A, Error, Requirements>
  /** An endless, resilient stream of changes (see `Watcher`). */
  readonly watcher: (options?: Watcher.Options) => Stream.Stream<Watcher.Event<A>, Error, Requirements>
  /**
   * Waits until `condition` holds for the object: the object then, or `Option.none()`
   * when the condition is satisfied by its absence (as `Condition.deleted`). The
   * condition is a `Condition` or a plain predicate (named "predicate" in the
   * WaitTimeout). Starts from a `get` and watches from its resourceVersion, so no change
   * in between is missed.
   *
   * @example
   * ```ts
   * const ready = yield* pods.waitFor("web", Condition.podReady, { timeout: "2 minutes" })
   * const scaled = yield* deployments.waitFor("web", (d) => d?.status?.readyReplicas === 3, { timeout: "5 minutes" })
   * ```
   */
  readonly waitFor: (
    name: string,
    condition: Condition<A> | ((object: A | undefined) => boolean),
    options: WaitForOptions
  ) => Effect.Effect<Option.Option<A>, Error | WaitTimeout, Requirements>
}

/**
 * Options of `waitFor`: how long to wait, and the options of the watcher it runs.
 *
 * @since 0.1.0
 * @category models
 */
export interface WaitForOptions extends Omit<Watcher.Options, "labelSelector" | "fieldSelector" | "allNamespaces"> {
  readonly timeout: Duration.DurationInput
}

/**
 * The operations on the `log` subresource, offered by `Api` only for kinds that have it.
 *
 * @since 0.1.0
 * @category models
 */
export interface LogOperations {
  /** A pod's log as one string; `""` when the pod is gone. */
  readonly logs: (name: string, options?: LogOptions) => Effect.Effect<string, Error, Requirements>
  /** Follows a pod's log: its lines, without their newline, until the container ends; empty when the pod is gone. */
  readonly logStream: (name: string, options?: LogOptions) => Stream.Stream<string, Error, Requirements>
  /**
   * Follows a pod's log as the bytes arrive (UTF-8, lines not cut), until the container
   * ends; empty when the pod is gone. For throughput: a consumer pays per chunk of bytes
   * rather than per line (`Stream.runForEach` over `logStream` costs an effect per line).
   */
  readonly logBytes: (name: string, options?: LogOptions) => Stream.Stream<Uint8Array, Error, Requirements>
}

/**
 * Binds the operations to a resource. The namespace defaults to the KubeConfig's;
 * cluster-scoped kinds take none. The subresources of the resource decide which
 * subresource operations the api offers (`logs` for Pods, not for Jobs).
 *
 * @example
 * ```ts
 * const jobs = Kube.api(Jobs, { namespace: "batch" })
 * const namespaces = Kube.api(Namespaces)
 * Kube.api(Pods).logs("web") // Pods serve "log"; Kube.api(Jobs).logs does not compile
 * ```
 * @since 0.1.0
 * @category constructors
 */
export const api: <A, I, S extends string>(
  resource: Resource<A, I, S>,
  options?: { readonly namespace?: string | undefined }
) => Api<A, S> = internal.make

/**
 * The server's `Status` type, re-exported for convenience.
 *
 * @since 0.1.0
 * @category models
 */
export type { Status }

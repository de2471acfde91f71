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
 * // call main() to run it against the cluster your kubeconfig names
 * const main = () => Effect.runPromise(program.pipe(Effect.provide(NodeKube.layer)))
 * ```
 * @since 0.1.0
 */
import type * as HttpClient from "effect/http/HttpClient"
import type * as HttpClientError from "effect/http/HttpClientError"
import type * as Scope from "effect/Scope"
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import type * as Redacted from "effect/Redacted"
import type * as Stream from "effect/Stream"
import type {
  ApiError,
  KubeConfigError,
  LimitExceeded,
  RequestTimeout,
  ServerWarning,
  Status,
  ValidationError,
  WaitTimeout
} from "./Errors.js"
import * as Conflict from "./Conflict.js"
import * as Exec from "./Exec.js"
import * as internal from "./internal/kube.js"
import * as internalMetadata from "./internal/api/metadata.js"
import * as internalRaw from "./internal/api/raw.js"
import * as internalRestart from "./internal/runtime/restart.js"
import type { KubeConfig } from "./KubeConfig.js"
import type { Patch } from "./Patch.js"
import type { ApplyConfigurationOf, Resource } from "./Resource.js"
import type { ObjectMeta, Scale } from "./resources/generated.js"
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
 * be obtained (`KubeConfigError`), the transport (`HttpClientError`, whose `reason._tag`
 * says what failed: `TransportError` for the connection, `DecodeError` for a body that
 * broke off), or a server that gave no complete answer within the per-request timeout
 * (`RequestTimeout`); an answer past one of the limits on what a server can make the client
 * hold (`LimitExceeded`); and a server warning where `Warnings.layerFail` turns warnings into
 * failures (`ServerWarning`).
 *
 * @since 0.1.0
 * @category models
 */
export type Error =
  | ApiError
  | ValidationError
  | KubeConfigError
  | HttpClientError.HttpClientError
  | RequestTimeout
  | ServerWarning
  | LimitExceeded

/**
 * `dryRun: true` asks the server to validate and answer without persisting.
 *
 * @since 0.1.0
 * @category models
 */
export interface WriteOptions {
  readonly dryRun?: boolean | undefined
  readonly fieldManager?: string | undefined
  /** How the server treats unknown or duplicate fields (see `FieldValidation`); the server's default is `Warn`. */
  readonly fieldValidation?: FieldValidation | undefined
}

/**
 * How the server treats fields of a written object that its schema does not know:
 * `Strict` fails the request (400, `strict decoding error: unknown field "spec.foo"`),
 * `Warn` accepts it and answers a `Warning` header, `Ignore` drops them silently.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { ConfigMaps, Kube } from "effect-kube"
 * import { FakeCluster } from "@effect-kube/testing"
 *
 * const configMaps = Kube.api(ConfigMaps, { namespace: "default" })
 * // a field the ConfigMap schema does not know, as a manifest with a typo would carry it
 * const typo = { metadata: { name: "settings" }, dta: { mode: "fast" } } as unknown as Parameters<typeof configMaps.create>[0]
 *
 * const program = Effect.gen(function* () {
 *   const refused = yield* Effect.flip(configMaps.create(typo, { fieldValidation: "Strict" }))
 *   assert.ok(refused.message.includes('unknown field "dta"'))
 * })
 *
 * Effect.runPromise(program.pipe(Effect.provide(FakeCluster.layer())))
 * ```
 * @since 0.1.0
 * @category models
 */
export type FieldValidation = "Strict" | "Warn" | "Ignore"

/**
 * Options of `get`. `resourceVersion: "0"` lets the server answer from its cache (any
 * version), the default (none) asks for the latest.
 *
 * @since 0.1.0
 * @category models
 */
export interface GetOptions {
  readonly resourceVersion?: string | undefined
  readonly resourceVersionMatch?: "Exact" | "NotOlderThan" | undefined
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
export interface ListOptions extends Selectors, InvalidOptions {
  readonly limit?: number | undefined
  readonly continue?: string | undefined
  readonly resourceVersion?: string | undefined
  readonly resourceVersionMatch?: "Exact" | "NotOlderThan" | undefined
  readonly allNamespaces?: boolean | undefined
  /** How long the server may take to answer the list, in seconds. */
  readonly timeoutSeconds?: number | undefined
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
 * import { Kube, Pods } from "effect-kube"
 *
 * const pods = Kube.api(Pods, { namespace: "default" })
 * pods.deleteAll({ labelSelector: "app=smoke" })
 * pods.deleteAll({ fieldSelector: "status.phase=Succeeded", propagationPolicy: "Background" })
 * // @ts-expect-error: a label or field selector is required
 * pods.deleteAll({})
 * ```
 * @since 0.1.0
 * @category models
 */
export type DeleteAllOptions =
  & {
    readonly propagationPolicy?: "Foreground" | "Background" | "Orphan" | undefined
    readonly gracePeriodSeconds?: number | undefined
    readonly dryRun?: boolean | undefined
    /** Each object is deleted only if its uid / resourceVersion match (else it is kept: 409 Conflict). */
    readonly preconditions?: DeleteOptions["preconditions"]
    /** The resourceVersion the list of objects to delete is read at. */
    readonly resourceVersion?: string | undefined
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
  readonly fieldValidation?: FieldValidation | undefined
}

/**
 * Options of a raw watch.
 *
 * @since 0.1.0
 * @category models
 */
export interface WatchOptions extends Selectors, InvalidOptions {
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
export interface ListStreamOptions extends Selectors, InvalidOptions {
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
 * lacks is a compile error. `P` is what `apply` and `applyStatus` take (the kind's apply
 * configuration); an `Api<A>` written without it accepts every resource's api, and cannot
 * apply (`ApiOf<typeof Deployments>` names the whole type).
 *
 * @since 0.1.0
 * @category models
 */
export type Api<A, S extends string = never, P = never> =
  & Operations<A, P>
  & UpdateOperations<A>
  & ("log" extends S ? LogOperations : unknown)
  & ("exec" extends S ? Exec.Operations : unknown)
  & SubresourceOperations<A, S, P>

/**
 * The api `Kube.api` gives for a resource: `ApiOf<typeof Deployments>`.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Deployments, Kube } from "effect-kube"
 *
 * const scaleTo = (deployments: Kube.ApiOf<typeof Deployments>, name: string, replicas: number) =>
 *   deployments.apply(
 *     { apiVersion: "apps/v1", kind: "Deployment", metadata: { name }, spec: { replicas } },
 *     { fieldManager: "autoscaler" }
 *   )
 *
 * const program = scaleTo(Kube.api(Deployments, { namespace: "default" }), "web", 5).pipe(Effect.asVoid)
 * ```
 * @since 0.2.0
 * @category models
 */
export type ApiOf<R> = R extends Resource<infer A, infer I, infer S, infer P> ? Api<A, S, ApplyConfigurationOf<I, P>>
  : never

/**
 * Read-modify-write, as client-go's `RetryOnConflict` around a get and an update.
 *
 * @since 0.1.0
 * @category models
 */
export interface UpdateOperations<A> {
  /**
   * Gets the object, computes the next version with `f` (a value or an Effect) and
   * replaces it; a 409 (the object changed in between) starts again from a fresh read,
   * a bounded number of times (`Conflict.update`). Returning the object unchanged writes
   * nothing; a missing object fails with ApiError NotFound.
   */
  readonly update: <E = never, R = never>(
    name: string,
    f: (current: A) => A | Effect.Effect<A, E, R>,
    options?: Conflict.UpdateOptions
  ) => Effect.Effect<A, Error | E, R | Requirements>
}

/**
 * The operations every resource has.
 *
 * @since 0.1.0
 * @category models
 */
export interface Operations<A, P = never> {
  readonly resource: Resource<A, unknown>
  /** The namespace given to `api`; `undefined` means the KubeConfig's (or none, for cluster-scoped kinds). */
  readonly namespace: string | undefined
  /** Creates an object and returns it as the server made it. */
  readonly create: (object: A, options?: WriteOptions) => Effect.Effect<A, Error, Requirements>
  /** Reads an object; a 404 is `Option.none()`. */
  readonly get: (name: string, options?: GetOptions) => Effect.Effect<Option.Option<A>, Error, Requirements>
  /**
   * Reads an object that must be there: a 404 fails with the server's ApiError NotFound
   * (`ApiError.isNotFound`), whose message names it (`pods "web" not found`).
   */
  readonly getOrFail: (name: string, options?: GetOptions) => Effect.Effect<A, Error, Requirements>
  /** Lists objects (one page when `limit` is given); `invalid: "raw"` keeps objects that do not fit as `Invalid`. */
  readonly list: {
    (options: ListOptions & RawInvalid): Effect.Effect<ListResult<A | Invalid>, Error, Requirements>
    (options?: ListOptions): Effect.Effect<ListResult<A>, Error, Requirements>
  }
  /** Replaces an object; a stale `metadata.resourceVersion` fails with ApiError Conflict. */
  readonly replace: (name: string, object: A, options?: WriteOptions) => Effect.Effect<A, Error, Requirements>
  /** Patches an object with one of the `Patch` kinds. */
  readonly patch: (name: string, patch: Patch, options?: WriteOptions) => Effect.Effect<A, Error, Requirements>
  /**
   * Server-side applies an apply configuration (created when absent): the fields this
   * `fieldManager` owns, and only those; `apiVersion`, `kind` and `metadata.name` are
   * required, every other field is optional (`DeploymentApply` for Deployments). Answers the
   * whole object as the server made it.
   */
  readonly apply: (configuration: P, options: ApplyOptions) => Effect.Effect<A, Error, Requirements>
  /** Deletes an object: `true`, or `false` when there was none (404). */
  readonly delete: (name: string, options?: DeleteOptions) => Effect.Effect<boolean, Error, Requirements>
  /**
   * Deletes an object and says what the server answered: the object while it is still
   * terminating (finalizers, a grace period; custom resources answer the object even when
   * it is gone), or the `Status` of a completed delete. A missing object fails with
   * ApiError NotFound (`delete` answers `false` instead).
   */
  readonly deleteWithResult: (
    name: string,
    options?: DeleteOptions
  ) => Effect.Effect<DeleteResult<A>, Error, Requirements>
  /** Deletes every object that matches a (required, non-empty) selector; returns how many there were. */
  readonly deleteAll: (options: DeleteAllOptions) => Effect.Effect<number, Error, Requirements>
  /**
   * One watch request as a stream of events; ends when the server ends it, or at the latest
   * 30 s past its `timeoutSeconds` (past an hour without one), as if the server had.
   */
  readonly watch: {
    (options: WatchOptions & RawInvalid): Stream.Stream<WatchEvent<A | Invalid>, Error, Requirements>
    (options?: WatchOptions): Stream.Stream<WatchEvent<A>, Error, Requirements>
  }
  /** Every matching object, fetched page by page as the stream is pulled. */
  readonly listStream: {
    (options: ListStreamOptions & RawInvalid): Stream.Stream<A | Invalid, Error, Requirements>
    (options?: ListStreamOptions): Stream.Stream<A, Error, Requirements>
  }
  /** An endless, resilient stream of changes (see `Watcher`). */
  readonly watcher: {
    (options: Watcher.Options & RawInvalid): Stream.Stream<Watcher.Event<A | Invalid>, Error, Requirements>
    (options?: Watcher.Options): Stream.Stream<Watcher.Event<A>, Error, Requirements>
  }
  /**
   * A store kept equal to the cluster by a watcher running for as long as the scope is
   * open: `Watcher.reflector(api, options)` (see there for `ready`, `failure` and `stopped`).
   *
   * @example
   * ```ts
   * import { Effect, Option } from "effect"
   * import { Kube, Pods } from "effect-kube"
   * import { FakeCluster } from "@effect-kube/testing"
   *
   * const pods = Kube.api(Pods, { namespace: "default" })
   *
   * const program = Effect.scoped(Effect.gen(function* () {
   *   yield* pods.create({ metadata: { name: "web", labels: { app: "web" } }, spec: { containers: [{ name: "c" }] } })
   *   const store = yield* pods.reflector({ labelSelector: "app=web" })
   *   yield* store.ready
   *   assert.isTrue(Option.isSome(yield* store.get("web")))
   * }))
   *
   * Effect.runPromise(program.pipe(Effect.provide(FakeCluster.layer())))
   * ```
   */
  readonly reflector: (
    options?: Watcher.ReflectorOptions<A>
  ) => Effect.Effect<Watcher.Store<A, Error>, never, Requirements | Scope.Scope>
  /**
   * The objects as the server prints them (`kubectl get`): a `Table` of its printer
   * columns (a built-in kind's, or a CRD's `additionalPrinterColumns`) and one row of cells
   * per object, asked for with `Accept: application/json;as=Table;v=v1;g=meta.k8s.io`.
   * `name` reads one object's row; `includeObject` says what each row carries.
   *
   * @example
   * ```ts
   * import { Effect } from "effect"
   * import { Kube, Pods } from "effect-kube"
   * import { FakeCluster } from "@effect-kube/testing"
   *
   * const pods = Kube.api(Pods, { namespace: "default" })
   *
   * const program = Effect.gen(function* () {
   *   yield* pods.create({ metadata: { name: "web" }, spec: { containers: [{ name: "c", image: "nginx" }] } })
   *   const table = yield* pods.table({ includeObject: "None" })
   *   assert.deepStrictEqual(table.columnDefinitions.slice(0, 3).map((c) => c.name), ["Name", "Ready", "Status"])
   *   assert.strictEqual(table.rows[0]!.cells[0], "web")
   *   assert.strictEqual(table.rows[0]!.object, undefined)
   * })
   *
   * Effect.runPromise(program.pipe(Effect.provide(FakeCluster.layer())))
   * ```
   */
  readonly table: (options?: TableOptions) => Effect.Effect<Table, Error, Requirements>
  /**
   * Waits until `condition` holds for the object: the object then, or `Option.none()`
   * when the condition is satisfied by its absence (as `Condition.deleted`). The
   * condition is a `Condition` or a plain predicate (named "predicate" in the
   * WaitTimeout). Starts from a `get` and watches from its resourceVersion, so no change
   * in between is missed.
   *
   * @example
   * ```ts
   * import { Effect } from "effect"
   * import { Condition, Deployments, Kube, Pods } from "effect-kube"
   *
   * const pods = Kube.api(Pods, { namespace: "default" })
   * const deployments = Kube.api(Deployments, { namespace: "default" })
   *
   * const program = Effect.gen(function* () {
   *   const ready = yield* pods.waitFor("web", Condition.podReady, { timeout: "2 minutes" })
   *   const scaled = yield* deployments.waitFor("web", (d) => d?.status?.readyReplicas === 3, { timeout: "5 minutes" })
   * })
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
  readonly timeout: Duration.Input
}

/**
 * The operations on the `log` subresource, offered by `Api` only for kinds that have it.
 *
 * @since 0.1.0
 * @category models
 */
export interface LogOperations {
  /**
   * A pod's log as one string. A pod that does not exist (never created, or deleted: the
   * server cannot tell them apart) fails with ApiError NotFound naming it
   * (`pods "web" not found`); a pod that is there but whose log is gone (the kubelet's 404:
   * its containers removed from the node) answers `""`.
   */
  readonly logs: (name: string, options?: LogOptions) => Effect.Effect<string, Error, Requirements>
  /**
   * Follows a pod's log: its lines, without their newline, until the container ends or the
   * pod is deleted. A pod that does not exist fails as with `logs`; a log that is gone is empty.
   */
  readonly logStream: (name: string, options?: LogOptions) => Stream.Stream<string, Error, Requirements>
  /**
   * Follows a pod's log as the bytes arrive (UTF-8, lines not cut), as `logStream` does.
   * For throughput: a consumer pays per chunk of bytes rather than per line
   * (`Stream.runForEach` over `logStream` costs an effect per line).
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
 * import { Jobs, Kube, Namespaces, Pods } from "effect-kube"
 *
 * const jobs = Kube.api(Jobs, { namespace: "batch" })
 * const namespaces = Kube.api(Namespaces)
 * const logs = Kube.api(Pods).logs("web") // Pods serve "log"
 * // @ts-expect-error: Jobs do not serve "log"
 * jobs.logs("web")
 * ```
 * @since 0.1.0
 * @category constructors
 */
export const api = <A, I, S extends string = never, P = unknown>(
  resource: Resource<A, I, S, P>,
  options?: { readonly namespace?: string | undefined }
): Api<A, S, ApplyConfigurationOf<I, P>> => {
  const bound = internal.make(resource, options)
  // exec, attach and port-forward only where the kind serves them (Pods)
  const operations = resource.subresources.includes("exec" as S) ? { ...bound, ...Exec.operations(bound) } : bound
  const update: UpdateOperations<A>["update"] = (name, f, updateOptions) =>
    Conflict.update(operations as unknown as Api<A>, name, f, updateOptions)
  return { ...operations, update } as unknown as Api<A, S, ApplyConfigurationOf<I, P>>
}

/**
 * `kubectl rollout restart`: the Deployment, DaemonSet or StatefulSet replaces its pods one
 * by one, as after a change of its pod template, which it is: the template gets a
 * `kubectl.kubernetes.io/restartedAt` annotation with the time (the Effect `Clock`'s). Answers
 * the object as patched. Another kind, or a paused Deployment, fails with a ValidationError
 * before anything is changed; a missing object with ApiError NotFound.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Deployments, Kube } from "effect-kube"
 * import { FakeCluster } from "@effect-kube/testing"
 *
 * const deployments = Kube.api(Deployments, { namespace: "default" })
 *
 * const program = Effect.gen(function* () {
 *   yield* deployments.create({
 *     metadata: { name: "web" },
 *     spec: {
 *       selector: { matchLabels: { app: "web" } },
 *       template: { metadata: { labels: { app: "web" } }, spec: { containers: [{ name: "web", image: "nginx" }] } }
 *     }
 *   })
 *   const restarted = yield* Kube.rolloutRestart(deployments, "web")
 *   assert.ok(restarted.spec?.template.metadata?.annotations?.["kubectl.kubernetes.io/restartedAt"])
 * })
 *
 * Effect.runPromise(program.pipe(Effect.provide(FakeCluster.layer())))
 * ```
 * @since 0.2.0
 * @category combinators
 */
export const rolloutRestart: <A>(api: Api<A>, name: string) => Effect.Effect<A, Error, Requirements> =
  internalRestart.rolloutRestart

export type {
  /**
   * The server's `Status` type, re-exported for convenience.
   *
   * @since 0.1.0
   * @category models
   */
  Status
}

/**
 * What `deleteWithResult` answers: the object, while it terminates (a finalizer or a
 * grace period holds it), or the server's `Status` when the delete is complete.
 *
 * @since 0.1.0
 * @category models
 */
export type DeleteResult<A> =
  | { readonly _tag: "Object"; readonly object: A }
  | { readonly _tag: "Status"; readonly status: Status }

/**
 * The subresource operations a kind offers, from its subresources `S`: `status`, `scale`,
 * pod `eviction`, `ephemeralcontainers` and `resize`, service account `token`, the `proxy`
 * of pods, services and nodes. A kind
 * without one does not have its operations (a compile error, not a runtime failure).
 *
 * @since 0.1.0
 * @category models
 */
export type SubresourceOperations<A, S extends string, P = never> =
  & ("status" extends S ? StatusOperations<A, P> : unknown)
  & ("scale" extends S ? ScaleOperations : unknown)
  & ("eviction" extends S ? EvictionOperations : unknown)
  & ("ephemeralcontainers" extends S ? EphemeralContainersOperations<A> : unknown)
  & ("resize" extends S ? ResizeOperations<A> : unknown)
  & ("token" extends S ? TokenOperations : unknown)
  & ("proxy" extends S ? ProxyOperations : unknown)

/**
 * The `status` subresource: reads and writes only `.status` (the rest of the object
 * sent is ignored by the server); each answers the whole object.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Deployments, Kube, Patch } from "effect-kube"
 * import { FakeCluster } from "@effect-kube/testing"
 *
 * const deployments = Kube.api(Deployments, { namespace: "default" })
 * const web = {
 *   metadata: { name: "web" },
 *   spec: {
 *     replicas: 1,
 *     selector: { matchLabels: { app: "web" } },
 *     template: { metadata: { labels: { app: "web" } }, spec: { containers: [{ name: "web", image: "nginx" }] } }
 *   }
 * }
 *
 * const program = Effect.gen(function* () {
 *   yield* deployments.create(web)
 *   const patched = yield* deployments.patchStatus("web", Patch.merge({ status: { observedGeneration: 1 } }))
 *   assert.strictEqual(patched.status?.observedGeneration, 1)
 *   const applied = yield* deployments.applyStatus(
 *     { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "web" }, status: { availableReplicas: 1 } },
 *     { fieldManager: "my-controller" }
 *   )
 *   assert.strictEqual(applied.status?.availableReplicas, 1)
 *   assert.strictEqual(applied.spec?.replicas, 1) // the spec is untouched
 * })
 *
 * Effect.runPromise(program.pipe(Effect.provide(FakeCluster.layer())))
 * ```
 * @since 0.1.0
 * @category models
 */
export interface StatusOperations<A, P = never> {
  /** Reads an object through its status subresource; a 404 is `Option.none()`. */
  readonly getStatus: (name: string) => Effect.Effect<Option.Option<A>, Error, Requirements>
  /** Replaces `.status` (a stale `metadata.resourceVersion` fails with ApiError Conflict). */
  readonly replaceStatus: (name: string, object: A, options?: WriteOptions) => Effect.Effect<A, Error, Requirements>
  /** Patches `.status` with any `Patch` kind (a `Patch.apply` needs a field manager). */
  readonly patchStatus: (name: string, patch: Patch, options?: WriteOptions) => Effect.Effect<A, Error, Requirements>
  /** Server-side applies the `.status` of an apply configuration as `fieldManager`. */
  readonly applyStatus: (configuration: P, options: ApplyOptions) => Effect.Effect<A, Error, Requirements>
}

/**
 * The `scale` subresource (Deployments, StatefulSets, ReplicaSets, ReplicationControllers,
 * custom resources declared with `subresources: ["scale"]`), as an `autoscaling/v1` Scale.
 *
 * @example
 * ```ts
 * import { Effect, Option } from "effect"
 * import { Deployments, Kube, Patch } from "effect-kube"
 * import { FakeCluster } from "@effect-kube/testing"
 *
 * const deployments = Kube.api(Deployments, { namespace: "default" })
 * const web = {
 *   metadata: { name: "web" },
 *   spec: {
 *     replicas: 1,
 *     selector: { matchLabels: { app: "web" } },
 *     template: { metadata: { labels: { app: "web" } }, spec: { containers: [{ name: "web", image: "nginx" }] } }
 *   }
 * }
 *
 * const program = Effect.gen(function* () {
 *   yield* deployments.create(web)
 *   yield* deployments.patchScale("web", Patch.merge({ spec: { replicas: 3 } }))
 *   const scale = yield* deployments.getScale("web") // Option<Scale>: none for a missing object
 *   assert.strictEqual(Option.getOrThrow(scale).spec?.replicas, 3)
 * })
 *
 * Effect.runPromise(program.pipe(Effect.provide(FakeCluster.layer())))
 * ```
 * @since 0.1.0
 * @category models
 */
export interface ScaleOperations {
  /** The object's Scale; a 404 is `Option.none()`. */
  readonly getScale: (name: string) => Effect.Effect<Option.Option<Scale>, Error, Requirements>
  /** Sets the replicas from a Scale (its `metadata.resourceVersion`, when given, must be current). */
  readonly replaceScale: (
    name: string,
    scale: Scale,
    options?: WriteOptions
  ) => Effect.Effect<Scale, Error, Requirements>
  /** Patches the Scale (merge or JSON patch: `Patch.merge({ spec: { replicas: 3 } })`). */
  readonly patchScale: (name: string, patch: Patch, options?: WriteOptions) => Effect.Effect<Scale, Error, Requirements>
}

/**
 * Options of `evict`: the delete options the eviction deletes the pod with.
 *
 * @since 0.1.0
 * @category models
 */
export interface EvictOptions {
  readonly deleteOptions?: DeleteOptions | undefined
}

/**
 * Pod eviction (policy/v1 Eviction), as `kubectl drain` does it.
 *
 * @since 0.1.0
 * @category models
 */
export interface EvictionOperations {
  /**
   * Evicts a pod: deleted unless a PodDisruptionBudget forbids it, in which case the
   * eviction fails with ApiError TooManyRequests (`ApiError.isTooManyRequests`, the
   * server's message says which budget); try again later. Never retried on its own.
   */
  readonly evict: (name: string, options?: EvictOptions) => Effect.Effect<void, Error, Requirements>
}

/**
 * A pod's `ephemeralcontainers` subresource: adds debug containers to a running pod (only
 * `spec.ephemeralContainers` is written). Each answers the whole pod.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Kube, Patch, Pods } from "effect-kube"
 * import { FakeCluster } from "@effect-kube/testing"
 *
 * const pods = Kube.api(Pods, { namespace: "default" })
 *
 * const program = Effect.gen(function* () {
 *   yield* pods.create({ metadata: { name: "web" }, spec: { containers: [{ name: "web", image: "nginx" }] } })
 *   const debugged = yield* pods.patchEphemeralContainers("web", Patch.strategic({
 *     spec: { ephemeralContainers: [{ name: "debug", image: "busybox", stdin: true, tty: true }] }
 *   }))
 *   assert.deepStrictEqual(debugged.spec?.ephemeralContainers?.map((c) => c.name), ["debug"])
 * })
 *
 * Effect.runPromise(program.pipe(Effect.provide(FakeCluster.layer())))
 * ```
 * @since 0.1.0
 * @category models
 */
export interface EphemeralContainersOperations<A> {
  /** Reads the pod through its `ephemeralcontainers` subresource; a 404 is `Option.none()`. */
  readonly getEphemeralContainers: (name: string) => Effect.Effect<Option.Option<A>, Error, Requirements>
  readonly patchEphemeralContainers: (
    name: string,
    patch: Patch,
    options?: WriteOptions
  ) => Effect.Effect<A, Error, Requirements>
  /** Replaces `spec.ephemeralContainers` of the pod `name` (a stale resourceVersion fails with Conflict). */
  readonly replaceEphemeralContainers: (
    name: string,
    object: A,
    options?: WriteOptions
  ) => Effect.Effect<A, Error, Requirements>
}

/**
 * A pod's `resize` subresource (in-place resize of container resources, Kubernetes 1.33+):
 * only the containers' `resources` are written. Each answers the whole pod.
 *
 * @since 0.1.0
 * @category models
 */
export interface ResizeOperations<A> {
  /** Reads the pod through its `resize` subresource; a 404 is `Option.none()`. */
  readonly getResize: (name: string) => Effect.Effect<Option.Option<A>, Error, Requirements>
  readonly patchResize: (name: string, patch: Patch, options?: WriteOptions) => Effect.Effect<A, Error, Requirements>
  /** Replaces the containers' `resources` of the pod `name`. */
  readonly replaceResize: (name: string, object: A, options?: WriteOptions) => Effect.Effect<A, Error, Requirements>
}

/**
 * Options of `createToken` (a TokenRequest): who the token is for, how long it lives
 * (the server may shorten it; at least 600 seconds), and the object it is bound to.
 *
 * @since 0.1.0
 * @category models
 */
export interface TokenOptions {
  readonly audiences?: ReadonlyArray<string> | undefined
  readonly expirationSeconds?: number | undefined
  readonly boundObjectRef?: {
    readonly apiVersion?: string | undefined
    readonly kind?: string | undefined
    readonly name?: string | undefined
    readonly uid?: string | undefined
  } | undefined
}

/**
 * A service account token: `Redacted`, so it prints as `<redacted>`; read it with
 * `Redacted.value`.
 *
 * @since 0.1.0
 * @category models
 */
export interface Token {
  readonly token: Redacted.Redacted<string>
  /** When the token expires (RFC 3339). */
  readonly expirationTimestamp: string
}

/**
 * The `token` subresource of ServiceAccounts.
 *
 * @example
 * ```ts
 * import { Effect, Redacted } from "effect"
 * import { Kube, ServiceAccounts } from "effect-kube"
 * import { FakeCluster } from "@effect-kube/testing"
 *
 * const serviceAccounts = Kube.api(ServiceAccounts, { namespace: "default" })
 *
 * const program = Effect.gen(function* () {
 *   yield* serviceAccounts.create({ metadata: { name: "builder" } })
 *   const { token, expirationTimestamp } = yield* serviceAccounts.createToken("builder", {
 *     audiences: ["vault"],
 *     expirationSeconds: 3600
 *   })
 *   assert.strictEqual(String(token), "<redacted>") // printed, it shows nothing
 *   assert.ok(Redacted.value(token).length > 0 && expirationTimestamp.length > 0)
 * })
 *
 * Effect.runPromise(program.pipe(Effect.provide(FakeCluster.layer())))
 * ```
 * @since 0.1.0
 * @category models
 */
export interface TokenOperations {
  /** Creates a token for the service account (`kubectl create token`). */
  readonly createToken: (name: string, options?: TokenOptions) => Effect.Effect<Token, Error, Requirements>
}

/**
 * Options of `table`: the selectors and paging of `list`, `name` for one object's row,
 * and what each row carries (`includeObject`: `"Metadata"`, the server's default, a
 * PartialObjectMetadata; `"Object"`, the whole object; `"None"`, nothing).
 *
 * @since 0.2.0
 * @category models
 */
export interface TableOptions extends Selectors {
  readonly name?: string | undefined
  readonly allNamespaces?: boolean | undefined
  readonly limit?: number | undefined
  readonly continue?: string | undefined
  readonly includeObject?: "None" | "Metadata" | "Object" | undefined
}

/**
 * One column of a Table: its name as `kubectl get` heads it, its type (`string`,
 * `integer`, `number`, `boolean`, `date`), format (`name` for the name column), and
 * priority (0 is shown by default, higher only with `-o wide`).
 *
 * @since 0.2.0
 * @category models
 */
export interface TableColumnDefinition {
  readonly name: string
  readonly type: string
  readonly format: string
  readonly description: string
  readonly priority: number
}

/**
 * One row of a Table: a cell per column, and the object it prints as `includeObject` asked.
 *
 * @since 0.2.0
 * @category models
 */
export interface TableRow {
  readonly cells: ReadonlyArray<unknown>
  readonly conditions?: ReadonlyArray<unknown> | undefined
  readonly object?: unknown
}

/**
 * A `meta.k8s.io/v1` Table, as the server prints a list or an object.
 *
 * @since 0.2.0
 * @category models
 */
export interface Table {
  readonly apiVersion: "meta.k8s.io/v1"
  readonly kind: "Table"
  readonly metadata: {
    readonly resourceVersion?: string | undefined
    readonly continue?: string | undefined
    readonly remainingItemCount?: number | undefined
  }
  readonly columnDefinitions: ReadonlyArray<TableColumnDefinition>
  readonly rows: ReadonlyArray<TableRow>
}

/**
 * Options of `proxy`: where on the pod, service or node the request goes (`port`, a
 * number or a port's name, and `scheme`), and what it is (`method`, `path` below the
 * target's root, `query`, `body` sent as it is when a string, else as JSON, with
 * `contentType`, `accept` and further `headers`).
 *
 * @since 0.2.0
 * @category models
 */
export interface ProxyOptions {
  readonly port?: number | string | undefined
  readonly scheme?: "http" | "https" | undefined
  readonly method?: "GET" | "POST" | "PUT" | "PATCH" | "DELETE" | undefined
  /** The path on the target, from `/` (the default). */
  readonly path?: string | undefined
  readonly query?: Readonly<Record<string, string | number | boolean | undefined>> | undefined
  readonly body?: unknown
  readonly contentType?: string | undefined
  readonly accept?: string | undefined
  readonly headers?: Readonly<Record<string, string>> | undefined
}

/**
 * What the target answered through the API server's proxy.
 *
 * @since 0.2.0
 * @category models
 */
export interface ProxyResponse {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
}

/**
 * The `proxy` subresource of pods, services and nodes: an HTTP request to the target
 * through the API server (`/api/v1/namespaces/<ns>/pods/<name>:<port>/proxy/<path>`), with
 * the client's credentials. A non-2xx answer (the target's, or the server's: no endpoints,
 * an address it will not proxy to) fails with an `ApiError`; a bad port or path fails
 * with a `ValidationError` before anything is sent.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Kube, Services } from "effect-kube"
 *
 * const program = Effect.gen(function* () {
 *   const answer = yield* Kube.api(Services, { namespace: "default" }).proxy("web", { port: "http", path: "/healthz" })
 *   return answer.body
 * })
 * ```
 * @since 0.2.0
 * @category models
 */
export interface ProxyOperations {
  readonly proxy: (name: string, options?: ProxyOptions) => Effect.Effect<ProxyResponse, Error, Requirements>
}

/**
 * A request the library does not model, for `Kube.request` and `Kube.requestStream`:
 * any method and absolute path of the API server. `body` is sent as JSON (a string as it
 * is) with `contentType` (`application/json` by default, e.g.
 * `application/merge-patch+json` for a patch). `headers` may not set authorization,
 * accept, user-agent or content-type: the client sets those.
 *
 * @since 0.1.0
 * @category models
 */
export interface RequestOptions {
  readonly method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE"
  readonly path: string
  readonly query?: Readonly<Record<string, string | number | boolean | undefined>> | undefined
  readonly body?: unknown
  readonly contentType?: string | undefined
  readonly accept?: string | undefined
  readonly headers?: Readonly<Record<string, string>> | undefined
}

/**
 * The escape hatch: sends any request to the API server with the same credentials,
 * TLS, per-request timeout, retries (reads only), typed errors (a Status answer is an
 * `ApiError`) and scrubbing of secrets as every other operation. Returns the parsed
 * JSON answer (`unknown`: decode it with a Schema), or the text of an answer that is
 * not JSON (`/readyz` answers `"ok"`). A bad method, path or header fails with a
 * `ValidationError` before anything is sent.
 *
 * @example
 * ```ts
 * import { Effect, Schema } from "effect"
 * import { Kube } from "effect-kube"
 * import { FakeCluster } from "@effect-kube/testing"
 *
 * const Review = Schema.Struct({ status: Schema.Struct({ allowed: Schema.Boolean }) })
 *
 * const program = Effect.gen(function* () {
 *   const version = yield* Kube.request({ method: "GET", path: "/version" }) // { major, minor, gitVersion, ... }
 *   assert.ok(typeof version === "object" && version !== null && "gitVersion" in version)
 *   const review = yield* Kube.request({
 *     method: "POST",
 *     path: "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
 *     body: {
 *       apiVersion: "authorization.k8s.io/v1",
 *       kind: "SelfSubjectAccessReview",
 *       spec: { resourceAttributes: { verb: "list", resource: "pods", namespace: "default" } }
 *     }
 *   }).pipe(Effect.flatMap(Schema.decodeUnknownEffect(Review)))
 *   assert.strictEqual(review.status.allowed, true)
 * })
 *
 * Effect.runPromise(program.pipe(Effect.provide(FakeCluster.layer())))
 * ```
 * @since 0.1.0
 * @category constructors
 */
export const request: (options: RequestOptions) => Effect.Effect<unknown, Error, Requirements> = internalRaw.request

/**
 * The streaming form of `request`: the lines of the answer (without their newline) as
 * the server sends them, for a watch or a followed log of an API the library does not
 * model. No timeout and no retry apply (the stream lives as long as it is pulled);
 * interrupting it closes the connection. A non-2xx answer fails with an `ApiError`.
 *
 * @example
 * ```ts
 * import { Effect, Stream } from "effect"
 * import { ConfigMaps, Kube } from "effect-kube"
 * import { FakeCluster } from "@effect-kube/testing"
 *
 * const program = Effect.gen(function* () {
 *   yield* Kube.api(ConfigMaps, { namespace: "default" }).create({ metadata: { name: "settings" } })
 *   const events = yield* Kube.requestStream({
 *     method: "GET",
 *     path: "/api/v1/namespaces/default/configmaps",
 *     query: { watch: true }
 *   }).pipe(Stream.map((line) => JSON.parse(line) as { type: string }), Stream.take(1), Stream.runCollect)
 *   assert.strictEqual(events[0]!.type, "ADDED")
 * })
 *
 * Effect.runPromise(program.pipe(Effect.provide(FakeCluster.layer())))
 * ```
 * @since 0.1.0
 * @category constructors
 */
export const requestStream: (options: RequestOptions) => Stream.Stream<string, Error, Requirements> =
  internalRaw.requestStream

/**
 * An object's metadata alone (name, namespace, labels, annotations, owners, finalizers,
 * resourceVersion), as the API server answers `as=PartialObjectMetadata`.
 *
 * @since 0.1.0
 * @category models
 */
export interface PartialObjectMetadata {
  readonly apiVersion: "meta.k8s.io/v1"
  readonly kind: "PartialObjectMetadata"
  readonly metadata: ObjectMeta
}

/**
 * The metadata-only operations of a resource (see `metadata`).
 *
 * @since 0.1.0
 * @category models
 */
export interface MetadataApi {
  /** The resource whose metadata this reads. */
  readonly resource: Resource<unknown, unknown, string>
  readonly namespace: string | undefined
  /** Reads an object's metadata; a 404 is `Option.none()`. */
  readonly get: (name: string) => Effect.Effect<Option.Option<PartialObjectMetadata>, Error, Requirements>
  /** Lists objects' metadata (one page when `limit` is given). */
  readonly list: (
    options?: Omit<ListOptions, "invalid">
  ) => Effect.Effect<ListResult<PartialObjectMetadata>, Error, Requirements>
  /** Every matching object's metadata, page by page. */
  readonly listStream: (
    options?: Omit<ListStreamOptions, "invalid">
  ) => Stream.Stream<PartialObjectMetadata, Error, Requirements>
  /** One watch request; each event carries the object's metadata. */
  readonly watch: (
    options?: Omit<WatchOptions, "invalid">
  ) => Stream.Stream<WatchEvent<PartialObjectMetadata>, Error, Requirements>
  /** A resilient watcher of the objects' metadata (see `Watcher`). */
  readonly watcher: (
    options?: Omit<Watcher.Options, "invalid">
  ) => Stream.Stream<Watcher.Event<PartialObjectMetadata>, Error, Requirements>
  /** A store of the objects' metadata, kept by a watcher in the background of the scope (see `Watcher.reflector`). */
  readonly reflector: (
    options?: Watcher.ReflectorOptions<PartialObjectMetadata>
  ) => Effect.Effect<Watcher.Store<PartialObjectMetadata, Error>, never, Requirements | Scope.Scope>
  /** Patches an object (a label, an annotation, a finalizer) and returns its metadata. */
  readonly patch: (
    name: string,
    patch: Patch,
    options?: WriteOptions
  ) => Effect.Effect<PartialObjectMetadata, Error, Requirements>
}

/**
 * The metadata-only API of a resource: get, list, listStream, watch, watcher, reflector
 * and patch ask the server for `PartialObjectMetadata`
 * (`Accept: application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1`, the List
 * form for lists), so a controller that needs only names, labels, owners and finalizers
 * never downloads specs or Secret data. A server that ignores the Accept (an aggregated
 * API) still works: the metadata is taken out of the whole object.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Kube, Patch, Secrets } from "effect-kube"
 * import { FakeCluster } from "@effect-kube/testing"
 *
 * const program = Effect.gen(function* () {
 *   yield* Kube.api(Secrets, { namespace: "default" }).create({ metadata: { name: "tls" }, stringData: { key: "k" } })
 *   const secrets = Kube.metadata(Secrets, { namespace: "default" })
 *   const listed = yield* secrets.list()
 *   assert.deepStrictEqual(listed.items.map((s) => s.metadata.name), ["tls"])
 *   assert.ok(!("data" in listed.items[0]!)) // no Secret data downloaded
 *   const patched = yield* secrets.patch("tls", Patch.merge({ metadata: { labels: { rotated: "true" } } }))
 *   assert.strictEqual(patched.metadata.labels?.["rotated"], "true")
 * })
 *
 * Effect.runPromise(program.pipe(Effect.provide(FakeCluster.layer())))
 * ```
 * @since 0.1.0
 * @category constructors
 */
export const metadata: <A, I, S extends string>(
  resource: Resource<A, I, S>,
  options?: { readonly namespace?: string | undefined }
) => MetadataApi = internalMetadata.make

/**
 * What to do with an object the server sent that does not fit its Schema (a custom
 * resource written by another tool, a field of a newer server): `"fail"` (default)
 * fails with a ValidationError; `"skip"` leaves it out and reports it (a
 * ValidationError naming it) to the `Warnings` service; `"raw"` delivers it as an
 * `Invalid` in its place.
 *
 * @since 0.1.0
 * @category models
 */
export type InvalidOption = "fail" | "skip" | "raw"

/**
 * The `invalid` option of list, listStream, watch and watcher.
 *
 * @since 0.1.0
 * @category models
 */
export interface InvalidOptions {
  readonly invalid?: InvalidOption | undefined
}

/**
 * An object that did not fit its Schema, delivered under `invalid: "raw"`: the JSON as
 * the server sent it and the error that names the object and the field.
 *
 * @since 0.1.0
 * @category models
 */
export interface Invalid {
  readonly _tag: "Invalid"
  readonly raw: unknown
  readonly error: ValidationError
}

/**
 * Options that ask for `invalid: "raw"`: the reads that take them deliver `A | Invalid`.
 *
 * @example
 * ```ts
 * import { Effect, Schema } from "effect"
 * import { ConfigMaps, Kube, Resource } from "effect-kube"
 * import { FakeCluster } from "@effect-kube/testing"
 *
 * // ConfigMaps read through a stricter Schema of your own: `mode` must be fast or slow
 * const Settings = Resource.make({
 *   apiVersion: "v1",
 *   kind: "ConfigMap",
 *   plural: "configmaps",
 *   namespaced: true,
 *   schema: Schema.Struct({ data: Schema.Struct({ mode: Schema.Literals(["fast", "slow"]) }) })
 * })
 *
 * const program = Effect.gen(function* () {
 *   const configMaps = Kube.api(ConfigMaps, { namespace: "default" })
 *   yield* configMaps.create({ metadata: { name: "a", labels: { app: "settings" } }, data: { mode: "fast" } })
 *   yield* configMaps.create({ metadata: { name: "b", labels: { app: "settings" } }, data: { mode: "turbo" } })
 *   // (a namespace also holds the cluster's kube-root-ca.crt ConfigMap: select ours)
 *   const { items } = yield* Kube.api(Settings, { namespace: "default" })
 *     .list({ labelSelector: "app=settings", invalid: "raw" })
 *   const invalid = items.filter(Kube.isInvalid)
 *   assert.strictEqual(items.length, 2)
 *   assert.strictEqual(invalid.length, 1) // "turbo" did not fit, and the list did not fail
 * })
 *
 * Effect.runPromise(program.pipe(Effect.provide(FakeCluster.layer())))
 * ```
 * @since 0.1.0
 * @category models
 */
export interface RawInvalid {
  readonly invalid: "raw"
}

/**
 * Whether an item of an `invalid: "raw"` read is an object that did not fit its Schema.
 *
 * @since 0.1.0
 * @category guards
 */
export const isInvalid = (u: unknown): u is Invalid =>
  typeof u === "object" && u !== null && (u as { readonly _tag?: unknown })._tag === "Invalid" &&
  "raw" in u && "error" in u

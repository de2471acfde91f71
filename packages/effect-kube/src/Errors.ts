/**
 * The tagged errors of effect-kube. Every failure an operation can produce is one of
 * these (or `effect/http`'s `HttpClientError` for transport failures), so callers
 * branch with `Effect.catchTag` instead of parsing strings.
 *
 * No error here ever holds a token, a password, a client key or Secret data: errors
 * carry identities (kind, name, namespace, path) and the server's own Status message.
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import * as HttpClientError from "effect/http/HttpClientError"
import type * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as Predicate from "effect/Predicate"

/**
 * The server's `Status` object, as sent with every non-2xx answer.
 *
 * @since 0.1.0
 * @category models
 */
export interface Status {
  readonly kind?: "Status" | undefined
  readonly apiVersion?: string | undefined
  readonly metadata?: {
    readonly resourceVersion?: string | undefined
    /**
     * On a 410 Expired answer to a list's `continue`: a fresh continue token for the rest
     * of the list at the current state (kube-apiserver's inconsistent continuation).
     */
    readonly continue?: string | undefined
  } | undefined
  readonly status?: "Success" | "Failure" | (string & {}) | undefined
  readonly message?: string | undefined
  readonly reason?: string | undefined
  readonly details?: {
    readonly name?: string | undefined
    readonly group?: string | undefined
    readonly kind?: string | undefined
    readonly uid?: string | undefined
    readonly causes?: ReadonlyArray<{
      readonly reason?: string | undefined
      readonly message?: string | undefined
      readonly field?: string | undefined
    }> | undefined
    readonly retryAfterSeconds?: number | undefined
  } | undefined
  readonly code?: number | undefined
}

/**
 * Input or an object does not fit: a bad name, a missing namespace, an empty selector
 * for `deleteAll`, a manifest or a response that fails its Schema. Raised before any
 * request is sent when the input is at fault.
 *
 * @example
 * ```ts
 * import { Console, Effect } from "effect"
 * import { Kube, Pods } from "effect-kube"
 *
 * // "web/../secrets" cannot be used in a path: this fails before any request is sent
 * const program = Kube.api(Pods).get("web/../secrets").pipe(
 *   Effect.catchTag("ValidationError", (e) => Console.error(e.message))
 * )
 * ```
 * @since 0.1.0
 * @category errors
 */
export class ValidationError extends Data.TaggedError("ValidationError")<{
  /** What was being checked, e.g. `"metadata.name"` or `"Pod default/web"`. */
  readonly subject: string
  /** What is wrong with it, for a person. */
  readonly detail: string
  /** The underlying error (a YAML error, ...), when there is one. */
  readonly cause?: unknown
}> {
  override get message(): string {
    return `${this.subject}: ${this.detail}`
  }
}

/**
 * The reasons the Kubernetes API gives in a Status, plus `Unknown` for anything else.
 *
 * @since 0.1.0
 * @category models
 */
export type ApiErrorReason =
  | "BadRequest"
  | "Unauthorized"
  | "Forbidden"
  | "NotFound"
  | "MethodNotAllowed"
  | "NotAcceptable"
  | "AlreadyExists"
  | "Conflict"
  | "Gone"
  | "Invalid"
  | "RequestEntityTooLarge"
  | "UnsupportedMediaType"
  | "TooManyRequests"
  | "InternalError"
  | "ServiceUnavailable"
  | "Timeout"
  | "ServerTimeout"
  | "Expired"
  | "Unknown"

const reasonsByCode: Record<number, ApiErrorReason> = {
  400: "BadRequest",
  401: "Unauthorized",
  403: "Forbidden",
  404: "NotFound",
  405: "MethodNotAllowed",
  406: "NotAcceptable",
  409: "Conflict",
  410: "Gone",
  413: "RequestEntityTooLarge",
  415: "UnsupportedMediaType",
  422: "Invalid",
  429: "TooManyRequests",
  500: "InternalError",
  503: "ServiceUnavailable",
  504: "Timeout"
}

const knownReasons: ReadonlySet<string> = new Set<ApiErrorReason>([
  ...Object.values(reasonsByCode),
  "AlreadyExists",
  "ServerTimeout",
  "Expired",
  "Unknown"
])

/**
 * The reason for an answer: the Status's own `reason` when it names one, otherwise the
 * one its HTTP code stands for.
 *
 * @since 0.1.0
 * @category constructors
 */
export const reasonFor = (code: number, status?: Status | undefined): ApiErrorReason => {
  const given = status?.reason
  if (given !== undefined && knownReasons.has(given)) return given as ApiErrorReason
  return reasonsByCode[code] ?? "Unknown"
}

/**
 * The server answered with a non-2xx code (or a watch sent an `ERROR` event).
 * Carries the server's own `Status` when it sent one, and `retryAfter` (seconds) when
 * it asked the client to wait.
 *
 * Its message is exactly `k8s: <METHOD> <path>: <code> <reason>: <message>`.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { ApiError, Kube, type Pod, Pods } from "effect-kube"
 *
 * const pods = Kube.api(Pods, { namespace: "default" })
 * const pod: Pod = { metadata: { name: "web" }, spec: { containers: [{ name: "web", image: "nginx" }] } }
 *
 * const createOrReplace = pods.create(pod).pipe(
 *   Effect.catchIf(ApiError.isAlreadyExists, () => pods.replace("web", pod))
 * )
 * ```
 * @since 0.1.0
 * @category errors
 */
export class ApiError extends Data.TaggedError("ApiError")<ApiError.Fields> {
  constructor(fields: ApiError.Fields) {
    const { body, ...shown } = fields
    super(shown)
    // not enumerable: util.inspect, JSON.stringify and a span's exception event leave it out
    Object.defineProperty(this, "body", { value: body, enumerable: false, writable: false, configurable: true })
  }

  override get message(): string {
    return `k8s: ${this.method} ${this.path}: ${this.code} ${this.reason}: ${this.statusMessage}`
  }

  /** @since 0.1.0 */
  static is(u: unknown): u is ApiError {
    return u instanceof ApiError
  }
  /**
   * A 404: the object or collection does not exist.
   *
   * @since 0.1.0
   */
  static isNotFound(u: unknown): u is ApiError {
    return hasReason(u, "NotFound")
  }
  /**
   * A 409 that is not AlreadyExists: usually a stale resourceVersion or a failed precondition.
   *
   * @since 0.1.0
   */
  static isConflict(u: unknown): u is ApiError {
    return hasReason(u, "Conflict")
  }
  /**
   * A 409 AlreadyExists: create of a name that is taken.
   *
   * @since 0.1.0
   */
  static isAlreadyExists(u: unknown): u is ApiError {
    return hasReason(u, "AlreadyExists")
  }
  /**
   * A 410: the resourceVersion asked for is too old (watch) or the continue token expired.
   * For an expired continue token, kube-apiserver's Status carries a fresh one in
   * `status.metadata.continue` (the rest of the list at the current state); `listStream`
   * goes on with it by itself.
   *
   * @since 0.1.0
   */
  static isGone(u: unknown): u is ApiError {
    return hasReason(u, "Gone") || hasReason(u, "Expired")
  }
  /**
   * A 403.
   *
   * @since 0.1.0
   */
  static isForbidden(u: unknown): u is ApiError {
    return hasReason(u, "Forbidden")
  }
  /**
   * A 401.
   *
   * @since 0.1.0
   */
  static isUnauthorized(u: unknown): u is ApiError {
    return hasReason(u, "Unauthorized")
  }
  /**
   * A 422: the object failed the server's validation.
   *
   * @since 0.1.0
   */
  static isInvalid(u: unknown): u is ApiError {
    return hasReason(u, "Invalid")
  }
  /**
   * A 429: the server throttled the request; it did not act on it.
   *
   * @since 0.1.0
   */
  static isTooManyRequests(u: unknown): u is ApiError {
    return hasReason(u, "TooManyRequests")
  }
}

/**
 * @since 0.2.0
 */
export declare namespace ApiError {
  /**
   * What an `ApiError` holds.
   *
   * @since 0.2.0
   * @category models
   */
  export interface Fields {
    readonly method: string
    /** The path with its query, as errors show it: values of parameters the API does not define are `<redacted>`. */
    readonly path: string
    readonly code: number
    readonly reason: ApiErrorReason
    /**
     * The server's own message (the Status's `message`); for a body that is not a Status,
     * its content type and length only (`server error (a text/html body of 1,234 bytes)`):
     * such a body may be a proxy echoing the request, token included.
     */
    readonly statusMessage: string
    /** The Status, when the body was one (its fields of the wrong type left out). */
    readonly status?: Status | undefined
    /**
     * The body when it was not a Status (its first 4,096 characters), for a person to look
     * at: it is not shown by the message, `String()`, `util.inspect` or JSON.
     */
    readonly body?: string | undefined
    /** Seconds the server asked to wait before retrying (`Retry-After` or `retryAfterSeconds`), as it asked. */
    readonly retryAfter?: number | undefined
    /**
     * The UID of the FlowSchema API Priority and Fairness classified the request under
     * (`X-Kubernetes-PF-FlowSchema-UID`), when the server said: with a 429 from APF, the flow
     * that was throttled.
     */
    readonly flowSchemaUid?: string | undefined
    /** The UID of the request's PriorityLevelConfiguration (`X-Kubernetes-PF-PriorityLevel-UID`), when the server said. */
    readonly priorityLevelUid?: string | undefined
  }
}

const hasReason = (u: unknown, reason: ApiErrorReason): u is ApiError => u instanceof ApiError && u.reason === reason

/**
 * The identity of one object in a manifest set; never its body.
 *
 * @since 0.1.0
 * @category models
 */
export interface ObjectRef {
  readonly apiVersion: string
  readonly kind: string
  readonly name: string
  readonly namespace?: string | undefined
  readonly uid?: string | undefined
}

/**
 * Formats a reference as `Kind namespace/name` (or `Kind name` when cluster-scoped).
 *
 * @since 0.1.0
 */
export const formatRef = (ref: ObjectRef): string =>
  `${ref.kind} ${ref.namespace !== undefined && ref.namespace !== "" ? `${ref.namespace}/` : ""}${ref.name}`

/**
 * A failure of one object inside a multi-object operation.
 *
 * @since 0.1.0
 * @category models
 */
export interface RefFailure {
  readonly ref: ObjectRef
  readonly error: ApiError | ValidationError | KubeConfigError | { readonly _tag: string; readonly message: string }
}

/**
 * A multi-object apply stopped at its first failure. Objects applied before it stay
 * applied (nothing is rolled back); none after it was attempted.
 *
 * @since 0.1.0
 * @category errors
 */
export class ApplyFailed extends Data.TaggedError("ApplyFailed")<{
  readonly applied: ReadonlyArray<ObjectRef>
  readonly failed: RefFailure
}> {
  override get message(): string {
    return `apply stopped at ${formatRef(this.failed.ref)} after ${this.applied.length} applied: ${this.failed.error.message}`
  }
}

/**
 * A multi-object delete finished, and some objects could not be deleted.
 *
 * @since 0.1.0
 * @category errors
 */
export class DeleteFailed extends Data.TaggedError("DeleteFailed")<{
  readonly deleted: ReadonlyArray<ObjectRef>
  readonly failures: ReadonlyArray<RefFailure>
}> {
  override get message(): string {
    const first = this.failures.map((f) => `${formatRef(f.ref)}: ${f.error.message}`).join("; ")
    return `delete failed for ${this.failures.length} object(s) (${this.deleted.length} deleted): ${first}`
  }
}

/**
 * Configuration could not be loaded, or credentials could not be obtained. Names the
 * file, the context and the field at fault; never contains a token, password or key.
 *
 * @since 0.1.0
 * @category errors
 */
export class KubeConfigError extends Data.TaggedError("KubeConfigError")<{
  /** The kubeconfig file (or `"<string>"`, `"<in-cluster>"`, `"<explicit>"`). */
  readonly source: string
  readonly context?: string | undefined
  /** The field at fault, e.g. `users[admin].user.exec`. */
  readonly field?: string | undefined
  readonly detail: string
  readonly cause?: unknown
}> {
  override get message(): string {
    const where = [
      this.source,
      this.context !== undefined ? `context ${this.context}` : undefined,
      this.field
    ].filter(Predicate.isNotUndefined).join(", ")
    return `kubeconfig (${where}): ${this.detail}`
  }
}

/**
 * Waiting for a condition on an object ran out of time.
 *
 * @since 0.1.0
 * @category errors
 */
export class WaitTimeout extends Data.TaggedError("WaitTimeout")<{
  readonly kind: string
  readonly name: string
  readonly namespace?: string | undefined
  readonly condition: string
  readonly timeout: string
}> {
  override get message(): string {
    return `timed out after ${this.timeout} waiting for ${this.kind} ${this.namespace !== undefined ? `${this.namespace}/` : ""}${this.name} to be ${this.condition}`
  }
}

/**
 * A lookup in a store's index could not be answered: no index has that name
 * (`reason: "Unknown"`), or the index function threw on an object the store holds
 * (`reason: "Failed"`, with the object's `namespace/name` and what was thrown as the
 * cause). The store itself keeps every object and its other indexes; only lookups in
 * this index fail, until the object is replaced by one the function takes, or deleted.
 *
 * @example
 * ```ts
 * Effect.catchTag("IndexError", (e) => Console.error(`index ${e.index}: ${e.message}`))
 * ```
 * @since 0.2.0
 * @category errors
 */
export class IndexError extends Data.TaggedError("IndexError")<{
  /** The index asked for. */
  readonly index: string
  readonly reason: "Unknown" | "Failed"
  /** The `namespace/name` of the object the index function threw on (`Failed`). */
  readonly object?: string | undefined
  /** What the index function threw. */
  readonly cause?: unknown
}> {
  override get message(): string {
    if (this.reason === "Unknown") return `the store has no index ${JSON.stringify(this.index)}`
    const thrown = this.cause instanceof Error ? this.cause.message : String(this.cause)
    return `index ${JSON.stringify(this.index)} failed on ${this.object ?? "an object"}: the index function threw: ${thrown}`
  }
}

/**
 * A request got no complete answer within the per-request timeout of `RequestPolicy`:
 * the server is slow or silent (a refused or broken connection stays a transport
 * `RequestError`). A mutation that timed out may still have been carried out by the
 * server; it is never sent again on its own.
 *
 * @example
 * ```ts
 * Effect.catchTag("RequestTimeout", (e) => Console.error(`${e.method} ${e.path} took longer than ${e.timeout}`))
 * ```
 * @since 0.1.0
 * @category errors
 */
export class RequestTimeout extends Data.TaggedError("RequestTimeout")<{
  readonly method: string
  /** The path with its query. */
  readonly path: string
  /** The limit, as `Duration.format` writes it (`5s`). */
  readonly timeout: string
}> {
  override get message(): string {
    return `k8s: ${this.method} ${this.path}: no complete answer within ${this.timeout} (request timeout)`
  }
}

/**
 * What `LimitExceeded` names: the limit crossed, as its option is called
 * (`RequestPolicy`'s `maxResponseBytes`, `maxLineBytes` and `maxJsonDepth`, `NodeKube`'s
 * `maxHeaderBytes`).
 *
 * @since 0.2.0
 * @category models
 */
export type Limit = "maxResponseBytes" | "maxLineBytes" | "maxHeaderBytes" | "maxJsonDepth"

/**
 * An answer crossed one of the limits on what a server can make the client hold: a body
 * larger than `maxResponseBytes` (counted as sent and after gunzip), a watch or log line
 * longer than `maxLineBytes`, headers larger than `maxHeaderBytes`, or an object nested
 * deeper than `maxJsonDepth`. Past a size the connection is closed and nothing of the
 * answer is kept.
 * Each limit has a default no real cluster reaches and can be raised (see `RequestPolicy`
 * and `NodeKube.Options`).
 *
 * @example
 * ```ts
 * import { Console, Effect } from "effect"
 * import { Kube, Pods } from "effect-kube"
 *
 * const program = Kube.api(Pods).list().pipe(
 *   Effect.catchTag("LimitExceeded", (e) => Console.error(`${e.limit} is ${e.value}: page the list`))
 * )
 * ```
 * @since 0.2.0
 * @category errors
 */
export class LimitExceeded extends Data.TaggedError("LimitExceeded")<{
  readonly method: string
  /** The path, as errors show it. */
  readonly path: string
  /** The limit crossed. */
  readonly limit: Limit
  /** Its value: bytes, or levels of nesting for `maxJsonDepth`. */
  readonly value: number
  /** What crossed it: `the answer`, `a watch line`, ... */
  readonly subject: string
}> {
  override get message(): string {
    // a nesting is found once the answer has been read whole; a size, as the bytes come (the rest is not read)
    return this.limit === "maxJsonDepth"
      ? `k8s: ${this.method} ${this.path}: ${this.subject} is nested deeper than ${this.limit} (${
        this.value.toLocaleString("en-US")
      } levels)`
      : `k8s: ${this.method} ${this.path}: ${this.subject} is larger than ${this.limit} (${
        formatBytes(this.value)
      }); the connection was closed`
  }
}

/**
 * A size in bytes as people read it: `256 MiB`, `64 KiB`, `1,500 bytes`.
 *
 * @since 0.2.0
 */
export const formatBytes = (bytes: number): string => {
  const units = [["GiB", 2 ** 30], ["MiB", 2 ** 20], ["KiB", 2 ** 10]] as const
  for (const [unit, size] of units) {
    if (bytes >= size && bytes % (size / 16) === 0) return `${(bytes / size).toLocaleString("en-US")} ${unit}`
  }
  return `${bytes.toLocaleString("en-US")} bytes`
}

/**
 * The server answered with a warning (a `Warning: 299` header: a deprecated API version,
 * an unknown field under `fieldValidation: "Warn"`) and the `Warnings` service in context
 * turns warnings into failures (`Warnings.layerFail`, as kubectl's `--warnings-as-errors`).
 * The request itself was carried out.
 *
 * @since 0.1.0
 * @category errors
 */
export class ServerWarning extends Data.TaggedError("ServerWarning")<{
  readonly method: string
  /** The path with its query. */
  readonly path: string
  /** The server's text. */
  readonly text: string
}> {
  override get message(): string {
    return `k8s: ${this.method} ${this.path}: the server warned: ${this.text}`
  }
}

/**
 * An ApplySet's parent cannot be used, so nothing was applied or pruned:
 *
 * - `"ForeignTooling"`: the parent is managed by another tool (its `applyset.kubernetes.io/tooling`
 *   names another tool); pass that tool's name as `applySet.tooling` to share the set on purpose;
 * - `"NotAParent"`: an object of that name exists without the ApplySet id label or tooling annotation;
 * - `"WrongId"`: its `applyset.kubernetes.io/id` label is not the id computed from its name,
 *   namespace, kind and group (a copied or tampered parent);
 * - `"NoKinds"`: it lists neither `contains-group-kinds` nor `contains-group-resources`, so its
 *   members cannot be found without crawling the whole cluster;
 * - `"ParentNotAllowed"`: the kind is not Secret, ConfigMap or a custom resource whose CRD carries
 *   the `applyset.kubernetes.io/is-parent-type` label;
 * - `"ParentNotFound"`: a custom resource parent does not exist (only Secrets and ConfigMaps are
 *   created on the first apply, as kubectl does).
 *
 * @since 0.2.0
 * @category errors
 */
export class ApplySetError extends Data.TaggedError("ApplySetError")<{
  readonly reason: "ForeignTooling" | "NotAParent" | "WrongId" | "NoKinds" | "ParentNotAllowed" | "ParentNotFound"
  /** The parent object. */
  readonly parent: ObjectRef
  readonly detail: string
}> {
  override get message(): string {
    return `ApplySet ${formatRef(this.parent)}: ${this.detail}`
  }
}

/**
 * An apply with `prune: true` applied every object, but some members the manifests no
 * longer hold could not be pruned. The parent keeps listing the kinds and namespaces of
 * both the old and the new set, so the next apply with prune finds what was left.
 *
 * @since 0.2.0
 * @category errors
 */
export class PruneFailed extends Data.TaggedError("PruneFailed")<{
  readonly applied: ReadonlyArray<ObjectRef>
  readonly pruned: ReadonlyArray<ObjectRef>
  readonly failures: ReadonlyArray<RefFailure>
}> {
  override get message(): string {
    const first = this.failures.map((f) => `${formatRef(f.ref)}: ${f.error.message}`).join("; ")
    return `applied ${this.applied.length} object(s), then pruning failed for ${this.failures.length} ` +
      `(${this.pruned.length} pruned): ${first}`
  }
}

/**
 * One object's readiness, as `Manifests.status` reports it (kstatus semantics).
 *
 * @since 0.2.0
 * @category models
 */
export interface ObjectReadiness {
  readonly ref: ObjectRef
  readonly status: "Current" | "InProgress" | "Failed" | "Terminating" | "NotFound" | "Unknown"
  /** Why, for a person: `Ready: 1/3`, or the failing condition's reason and message. */
  readonly message: string
}

/**
 * One condition of an object, as `Manifests.explain` reports it.
 *
 * @since 0.2.0
 * @category models
 */
export interface ExplainedCondition {
  readonly type: string
  readonly status: string
  readonly reason: string
  readonly message: string
}

/**
 * One recent Event about an object that is not Current (core v1 Events, which are also
 * events.k8s.io/v1's), as `Manifests.explain` reports it: Warnings first, then the newest, with its
 * age when it was read.
 *
 * @since 0.2.0
 * @category models
 */
export interface ExplainedEvent {
  /** `Normal` or `Warning`. */
  readonly type: string
  readonly reason: string
  readonly message: string
  /** How many times it was seen (`count`, or `series.count`); at least 1. */
  readonly count: number
  /** Who reported it (`default-scheduler`, `replicaset-controller`, `kubelet`). */
  readonly source: string
  /** When it was last seen, as the server wrote it, when it did. */
  readonly lastSeen?: string | undefined
  /** Seconds from `lastSeen` to the moment it was read (the Effect Clock's), when known. */
  readonly ageSeconds?: number | undefined
}

/**
 * Why an object is as ready as it is: its readiness (kstatus), a one-line summary a person
 * reads (`2/3 available`, `Unschedulable: 0/1 nodes are available: ...`), the short reason
 * when there is one (`ImagePullBackOff`, `Unschedulable`, `FailedCreate`), its conditions, its
 * recent Events and the same for what it owns (Deployment → ReplicaSets → Pods; Job,
 * DaemonSet → Pods; StatefulSet → Pods and PVCs; Service → EndpointSlices).
 *
 * @since 0.2.0
 * @category models
 */
export interface Explanation {
  readonly ref: ObjectRef
  readonly status: ObjectReadiness["status"]
  readonly summary: string
  readonly reason?: string | undefined
  readonly conditions: ReadonlyArray<ExplainedCondition>
  readonly events: ReadonlyArray<ExplainedEvent>
  readonly children: ReadonlyArray<Explanation>
}

/**
 * Waiting for a set to be ready ended without every object Current: the time ran out
 * (`"Timeout"`), or an object failed (`"Failed"`, a Job past its backoff limit, a
 * Deployment past its progress deadline, a container crash-looping) while `failFast`
 * was on. Lists each object that is not Current, with its status and why, and then (in `explained`)
 * why down what they own: their conditions and recent Events.
 *
 * @since 0.2.0
 * @category errors
 */
export class NotReady extends Data.TaggedError("NotReady")<{
  readonly reason: "Timeout" | "Failed"
  /** The objects that are not Current, in the set's order. */
  readonly objects: ReadonlyArray<ObjectReadiness>
  /** The limit, as `Duration.format` writes it, when the time ran out. */
  readonly timeout?: string | undefined
  /** Why, object by object down what they own, read when the wait ended (see `Manifests.explain`). */
  readonly explanation?: ReadonlyArray<Explanation> | undefined
  /** The explanation as `Manifests.renderExplanation` writes it; the message's second part. */
  readonly explained?: string | undefined
}> {
  override get message(): string {
    const why = this.reason === "Timeout" ? `not ready after ${this.timeout ?? "the timeout"}` : "an object failed"
    const objects = this.objects.map((o) => `${formatRef(o.ref)} is ${o.status}: ${o.message}`).join("; ")
    return this.explained === undefined || this.explained === "" ? `${why}: ${objects}` :
      `${why}: ${objects}\n${this.explained}`
  }
}

/**
 * Why a connection to the server failed, as `ConnectionFailure.problem` says:
 * - `ConnectionRefused`: nothing listens there (`connect ECONNREFUSED 127.0.0.1:6443`);
 * - `HostNotFound`: the name does not resolve (`getaddrinfo ENOTFOUND`, `EAI_AGAIN`);
 * - `HostUnreachable`: no route to the host or its network;
 * - `ConnectTimeout`: the connection was not made in time;
 * - `ConnectionReset`: the server closed or reset the connection before answering (`socket hang up`);
 * - `CertificateUntrusted`: the server's certificate is not signed by a CA this client trusts
 *   (`unable to verify the first certificate`, `self-signed certificate`): the kubeconfig's
 *   `certificate-authority` is not the one that signed it;
 * - `CertificateExpired` / `CertificateNotYetValid`: outside its validity (`certificate has expired`);
 * - `CertificateNameMismatch`: the certificate is for another name
 *   (`Hostname/IP does not match certificate's altnames`; `tls-server-name` sets the name checked);
 * - `TlsHandshakeFailed`: another TLS failure (a protocol or cipher the two sides do not share);
 * - `StreamRefused`: the server refused the request's HTTP/2 stream, overloaded: it reset it with
 *   `ENHANCE_YOUR_CALM` before answering (as Go's servers do under load), or it allows no streams
 *   at all (`SETTINGS_MAX_CONCURRENT_STREAMS` = 0). A read is retried as after a reset.
 *
 * @since 0.2.0
 * @category models
 */
export type ConnectionProblem =
  | "ConnectionRefused"
  | "HostNotFound"
  | "HostUnreachable"
  | "ConnectTimeout"
  | "ConnectionReset"
  | "CertificateUntrusted"
  | "CertificateExpired"
  | "CertificateNotYetValid"
  | "CertificateNameMismatch"
  | "TlsHandshakeFailed"
  | "StreamRefused"

/**
 * The transport failure of a request that could not reach the server: an `effect/http`
 * `TransportError` (its `_tag`, so `reason._tag === "TransportError"` still holds) whose
 * message names the cause (`Transport: connect ECONNREFUSED 127.0.0.1:1 (GET https://...)`),
 * with `problem` to branch on and the system's `code` (`ECONNREFUSED`, `CERT_HAS_EXPIRED`).
 * The message holds the system's error text and never a header, a body or a credential.
 *
 * A mutation (any method but GET and HEAD) whose connection was lost after it was sent
 * (`ConnectionReset`, `StreamRefused`) has `outcomeUnknown`: the server may have carried it
 * out, and the message says so. It is never sent again on its own; read the object to know.
 *
 * @example
 * ```ts
 * import { Console, Effect } from "effect"
 * import { ConfigMaps, ConnectionFailure, Kube } from "effect-kube"
 *
 * const program = Kube.api(ConfigMaps).list().pipe(
 *   Effect.catchTag("HttpClientError", (e) =>
 *     e.reason instanceof ConnectionFailure && e.reason.problem === "CertificateUntrusted"
 *       ? Console.error("the kubeconfig's certificate-authority did not sign the server's certificate")
 *       : Effect.fail(e))
 * )
 * ```
 * @since 0.2.0
 * @category errors
 */
export class ConnectionFailure extends HttpClientError.TransportError {
  /**
   * The system's text and what it means (`connect ECONNREFUSED 127.0.0.1:1`).
   *
   * @since 0.2.0
   */
  declare readonly description: string
  /**
   * Why the connection failed.
   *
   * @since 0.2.0
   */
  readonly problem: ConnectionProblem
  /**
   * The system's error code (`ECONNREFUSED`, `ENOTFOUND`, `CERT_HAS_EXPIRED`, ...), when it gave one.
   *
   * @since 0.2.0
   */
  readonly code: string | undefined
  /**
   * A mutation whose answer was lost after it was sent: the server may have carried it out
   * (the message says so). `false` for reads, and for requests known not to have reached
   * the server (a refused connection, a stream the server allows none of).
   *
   * @since 0.2.0
   */
  readonly outcomeUnknown: boolean

  constructor(props: {
    readonly request: HttpClientRequest.HttpClientRequest
    readonly cause?: unknown
    readonly description: string
    readonly problem: ConnectionProblem
    readonly code: string | undefined
    readonly outcomeUnknown?: boolean | undefined
  }) {
    const outcomeUnknown = props.outcomeUnknown === true
    const said = `; the ${props.request.method} may have been carried out by the server`
    super({
      request: props.request,
      cause: props.cause,
      description: outcomeUnknown && !props.description.endsWith(said)
        ? `${props.description}${said}`
        : props.description
    })
    this.problem = props.problem
    this.code = props.code
    this.outcomeUnknown = outcomeUnknown
  }

  /** @since 0.2.0 */
  static is(u: unknown): u is ConnectionFailure {
    return u instanceof ConnectionFailure
  }
}

/**
 * Why a request could not reach the server, from an `HttpClientError` (or its `reason`):
 * `undefined` for every other failure.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { ConfigMaps, connectionProblem, Kube } from "effect-kube"
 *
 * // retry a refused connection (an API server restarting), fail on everything else
 * const program = Kube.api(ConfigMaps).list().pipe(
 *   Effect.retry({ while: (e) => connectionProblem(e) === "ConnectionRefused", times: 5 })
 * )
 * ```
 * @since 0.2.0
 * @category guards
 */
export const connectionProblem = (error: unknown): ConnectionProblem | undefined => {
  const reason = HttpClientError.isHttpClientError(error) ? error.reason : error
  return reason instanceof ConnectionFailure ? reason.problem : undefined
}

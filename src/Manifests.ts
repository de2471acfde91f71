/**
 * Sets of objects of any kinds, applied, read and deleted together: what a deployment
 * tool or a batch scheduler needs to create a job's resources and remove them later,
 * from a fresh process, with nothing stored but the manifests (or their references).
 *
 * Kinds are found by `Discovery`. Every operation checks the whole set before its first
 * request that changes anything, so a bad object never leaves half a set behind; after
 * that, `apply` stops at its first failure and `delete` goes on past failures, and both
 * say exactly what was done. Messages and errors name objects by identity only
 * (`Secret ns/name`), never by content.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import * as fs from "node:fs"
 * import { Manifests, NodeKube } from "effect-kube"
 *
 * const program = Effect.gen(function* () {
 *   const objects = yield* Manifests.parse(fs.readFileSync("app.yaml"))
 *   const refs = yield* Manifests.apply(objects, { namespace: "batch", fieldManager: "scheduler" })
 *   // ... later, even from another process:
 *   yield* Manifests.delete(objects, { namespace: "batch" })
 *   return refs
 * })
 *
 * // call main() to run it against the cluster your kubeconfig names
 * const main = () => Effect.runPromise(program.pipe(Effect.provide(NodeKube.layer)))
 * ```
 * @since 0.1.0
 */
import type * as Effect from "effect/Effect"
import type { ApplyFailed, DeleteFailed, ObjectRef, ValidationError } from "./Errors.js"
import * as internal from "./internal/manifests.js"
import type * as Kube from "./Kube.js"

/**
 * The metadata fields a set relies on; every other field is kept as given.
 *
 * @since 0.1.0
 * @category models
 */
export interface Metadata {
  readonly name?: string | undefined
  readonly namespace?: string | undefined
  readonly generateName?: string | undefined
  readonly uid?: string | undefined
  readonly [field: string]: unknown
}

/**
 * One object of a set, as JSON: of whatever kind, checked at run time.
 *
 * @since 0.1.0
 * @category models
 */
export interface Manifest {
  readonly apiVersion?: string | undefined
  readonly kind?: string | undefined
  readonly metadata?: Metadata | undefined
  readonly [field: string]: unknown
}

/**
 * An object `apply` takes (and `get` and `delete`, as given to `apply`): a parsed
 * `Manifest`, or a typed apply configuration of any kind (`DeploymentApply`,
 * `ConfigMapApply`, `Resource.PartialObject` of a custom resource), which names its
 * apiVersion, kind and `metadata.name`. Each is checked at run time as a parsed one is.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { type ConfigMapApply, type DeploymentApply, Manifests } from "effect-kube"
 *
 * const settings: ConfigMapApply = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "settings" }, data: { mode: "fast" } }
 * const replicas: DeploymentApply = { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "web" }, spec: { replicas: 3 } }
 * const program = Manifests.apply([settings, replicas], { namespace: "default", fieldManager: "deployer" })
 * ```
 * @since 0.2.0
 * @category models
 */
export type Applicable =
  | Manifest
  | {
    readonly apiVersion: string
    readonly kind: string
    readonly metadata: { readonly name: string }
  }

/**
 * Where a set acts. `namespace` defaults to the KubeConfig's; every namespaced object
 * of the set must be in it (or name no namespace, and is put in it). Cluster-scoped
 * kinds (Namespace, ClusterRole, CRDs...) are refused unless `clusterScoped` is `true`,
 * so that a set meant for one namespace never changes the whole cluster by mistake.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly namespace?: string | undefined
  readonly clusterScoped?: boolean | undefined
}

/**
 * Options of `apply`. `fieldManager` defaults to `"effect-kube"`; `force` takes over
 * fields that other managers own instead of failing with a 409 Conflict.
 *
 * @since 0.1.0
 * @category models
 */
export interface ApplyOptions extends Options {
  readonly fieldManager?: string | undefined
  readonly force?: boolean | undefined
  readonly dryRun?: boolean | undefined
}

/**
 * Options of `delete`. `propagationPolicy` defaults to `"Background"`.
 *
 * @since 0.1.0
 * @category models
 */
export interface DeleteOptions extends Options {
  readonly propagationPolicy?: "Foreground" | "Background" | "Orphan" | undefined
  readonly dryRun?: boolean | undefined
}

/**
 * Parses manifests as `kubectl apply -f` reads them: YAML (documents separated by `---`)
 * or JSON (one value, or objects one after another), given as text or as the bytes of a
 * file. Bytes may be UTF-8 or, with a byte order mark, UTF-16 (LE or BE, as Windows
 * PowerShell writes); a UTF-8 BOM and CRLF line ends are fine.
 *
 * YAML is read with kubectl's rules (go-yaml v2, mostly YAML 1.1), not YAML 1.2: `0755`
 * is octal (493), `yes`/`no`/`on`/`off`/`y`/`n` are booleans, `1:20` stays a string,
 * `<<` merges maps (overriding keys written before it, as kubectl does), anchors and
 * tags such as `!!str` apply, and keys that are not strings become strings as kubectl
 * writes them (`yes:` is `"true"`, `0755:` is `"493"`). Quote a value to keep it a string.
 * `.inf`, `.nan`, a null key, and a key written twice in one map are refused.
 *
 * An object with an `items` field is a list, whatever its kind (`List`, `PodList`...),
 * and gives its items, as kubectl does; arrays and lists nested in lists are flattened
 * too. Empty documents, documents of comments only and `null` are skipped. A document
 * that is not valid YAML, or an object without a string `apiVersion` and `kind`, fails
 * with a `ValidationError` whose subject names it: `document[2]`, `document[0].items[3]`
 * (indexes from 0), with the line and column where YAML is broken. The error never quotes
 * the text, which may hold Secret data. Integers beyond 2^53 lose precision (JavaScript
 * numbers), where kubectl would keep them exact.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Manifests } from "effect-kube"
 * import * as fs from "node:fs"
 *
 * const program = Effect.gen(function* () {
 *   const objects = yield* Manifests.parse(`
 * apiVersion: v1
 * kind: ConfigMap
 * metadata: { name: settings }
 * data: { mode: fast }
 * ---
 * apiVersion: v1
 * kind: Secret
 * metadata: { name: credentials }
 * stringData: { password: hunter2 }
 * `)
 *   // From a file, whatever its encoding:
 *   const fromFile = yield* Manifests.parse(fs.readFileSync("app.yaml"))
 * })
 * ```
 * @since 0.1.0
 * @category parsing
 */
export const parse: (input: string | Uint8Array) => Effect.Effect<ReadonlyArray<Manifest>, ValidationError> =
  internal.parse

/**
 * Server-side applies a set of objects, in order, and returns their references with the
 * uid each apply answered with.
 *
 * First it checks every object and resolves every kind, and fails with a
 * `ValidationError` (having changed nothing) when one has no apiVersion, kind or
 * `metadata.name`, uses `generateName` (names must be stable, so that a later `delete`
 * finds the objects), names another namespace, is cluster-scoped without
 * `clusterScoped: true`, is of a kind the server does not serve, or appears twice. It
 * applies copies without server-managed fields (status, uid, resourceVersion,
 * managedFields, creationTimestamp, generation, deletionTimestamp,
 * deletionGracePeriodSeconds, selfLink), with a v1 Secret's `stringData` turned into
 * base64 `data` (its keys win), since server-side apply handles stringData badly.
 *
 * The first object that fails stops it with `ApplyFailed`: the objects applied before
 * it stay applied and are listed; nothing is retried or rolled back.
 *
 * @since 0.1.0
 * @category operations
 */
export const apply: (
  objects: Iterable<Applicable>,
  options?: ApplyOptions
) => Effect.Effect<ReadonlyArray<ObjectRef>, ApplyFailed | Kube.Error, Kube.Requirements> = internal.apply

/**
 * Reads the live objects of a set (references, or objects as given to `apply`), in
 * order. References are checked as `delete` checks them, before any read. An object
 * that does not exist fails the whole read with the server's `ApiError` NotFound,
 * whose message names its path. A reference's uid is not compared: the object that
 * has the name now is returned.
 *
 * @since 0.1.0
 * @category operations
 */
export const get: (
  refs: Iterable<ObjectRef | Applicable>,
  options?: Options
) => Effect.Effect<ReadonlyArray<Manifest>, Kube.Error, Kube.Requirements> = internal.get

const del: (
  refs: Iterable<ObjectRef | Applicable>,
  options?: DeleteOptions
) => Effect.Effect<ReadonlyArray<ObjectRef>, DeleteFailed | Kube.Error, Kube.Requirements> = internal.del

export {
  /**
   * Deletes a set of objects (references, or objects as given to `apply`) in reverse
   * order, so that what was applied first goes last. Every reference is checked and
   * every kind resolved first; a bad one fails with a `ValidationError` before anything
   * is deleted. An object that is already gone counts as deleted. A reference with a
   * uid (as `apply` returns) is deleted only if the object of that name still has that
   * uid: a replacement made since answers 409 Conflict and is left alone.
   *
   * It goes on past failures and returns the references deleted, in the order they
   * were deleted; when any failed it ends with `DeleteFailed`, listing both.
   *
   * @example
   * ```ts
   * import { Effect } from "effect"
   * import { Manifests } from "effect-kube"
   * import * as fs from "node:fs"
   *
   * const program = Effect.gen(function* () {
   *   const objects = yield* Manifests.parse(fs.readFileSync("app.yaml"))
   *   const refs = yield* Manifests.apply(objects, { namespace: "batch" })
   *   yield* Manifests.delete(refs, { namespace: "batch" })
   * })
   * ```
   * @since 0.1.0
   * @category operations
   */
  del as delete
}

/**
 * Sets of objects of any kinds, applied, read and deleted together: what a deployment
 * tool or a batch scheduler needs to create a job's resources and remove them later,
 * from a fresh process, with nothing stored but the manifests (or their references).
 *
 * Kinds are found by `Discovery`; a kind the server does not serve yet may be one a CRD earlier
 * in the set serves, and its objects are applied once the server has established that CRD (a
 * CRD and its objects in one set). Every operation checks the whole set before its first
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
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import type * as Stream from "effect/Stream"
import type {
  ApplyFailed,
  ApplySetError,
  DeleteFailed,
  Explanation,
  NotReady,
  ObjectReadiness,
  ObjectRef,
  PruneFailed,
  ValidationError
} from "./Errors.js"
import * as applySet from "./internal/manifests/applyset.js"
import * as diffing from "./internal/manifests/diff.js"
import * as explaining from "./internal/manifests/explain.js"
import * as readiness from "./internal/manifests/readiness.js"
import * as internal from "./internal/manifests/manifests.js"
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
 * Where a set acts, by `kubectl apply -f`'s rule: an object's own `metadata.namespace`
 * wins, and the objects that name none go to `namespace` (default: the KubeConfig's).
 * A `namespace` given here is enforced, as kubectl's `--namespace` is: an object naming
 * another one is refused before any request, unless `enforceNamespace: false`;
 * `enforceNamespace: true` enforces the KubeConfig's namespace too (the strict check).
 * Cluster-scoped kinds (Namespace, ClusterRole, CRDs...) are applied like the others,
 * Namespaces first, unless `clusterScoped: false` refuses them; pruning a cluster-scoped
 * member of an ApplySet needs `clusterScoped: true`.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly namespace?: string | undefined
  /** Whether every namespaced object must be in the set's namespace: default `true` when `namespace` is given. */
  readonly enforceNamespace?: boolean | undefined
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
  /** No ApplySet: see `ApplySetOptions` for an apply that tracks (and prunes) its set. */
  readonly applySet?: undefined
}

/**
 * The parent of an ApplySet (KEP-3659, as kubectl 1.32 implements it): the object that
 * records the set's kinds and namespaces, and whose id labels every member.
 *
 * - `name`: the parent's name; it is the set's name for people.
 * - `kind` / `apiVersion`: `Secret` (default) or `ConfigMap` in `v1`, or a custom
 *   resource whose CRD carries the label `applyset.kubernetes.io/is-parent-type` (such a
 *   parent must exist already; a Secret or ConfigMap is created on the first apply).
 * - `namespace`: a namespaced parent's namespace, by default the set's namespace.
 * - `tooling`: `<tool>/<version>` written on the parent, `effect-kube/<version>` by
 *   default. A parent written by another tool is refused; to share a set with kubectl on
 *   purpose (either way), pass `"kubectl/v1.32.0"`: tools are compared by the name before
 *   the last `/`, as kubectl compares them.
 *
 * @since 0.2.0
 * @category models
 */
export interface ApplySet {
  readonly name: string
  readonly kind?: string | undefined
  readonly apiVersion?: string | undefined
  readonly namespace?: string | undefined
  readonly tooling?: string | undefined
}

/**
 * Options of an `apply` that tracks its set with an ApplySet. Every member is labelled
 * `applyset.kubernetes.io/part-of=<id>`; with `prune: true`, after every object was
 * applied, the members the manifests no longer hold are deleted (`propagationPolicy`,
 * default `"Background"`).
 *
 * @since 0.2.0
 * @category models
 */
export interface ApplySetOptions extends Omit<ApplyOptions, "applySet"> {
  readonly applySet: ApplySet
  readonly prune?: boolean | undefined
  readonly propagationPolicy?: "Foreground" | "Background" | "Orphan" | undefined
}

/**
 * What an `apply` with an ApplySet did (or, with `dryRun: true`, would do). `applied`
 * holds every object in order, with its uid; `created`, `changed` and `unchanged` split
 * them by what the apply did to them; `pruned` holds the members deleted, in the order
 * they were deleted.
 *
 * @since 0.2.0
 * @category models
 */
export interface ApplySetResult {
  /** The set's id: `applyset-<base64url(sha256(name.namespace.kind.group))>-v1`. */
  readonly id: string
  readonly parent: ObjectRef
  readonly applied: ReadonlyArray<ObjectRef>
  readonly created: ReadonlyArray<ObjectRef>
  readonly changed: ReadonlyArray<ObjectRef>
  readonly unchanged: ReadonlyArray<ObjectRef>
  readonly pruned: ReadonlyArray<ObjectRef>
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
 * numbers), where kubectl would keep them exact. Input past a limit of `ParseOptions`
 * (size, documents, nesting, nodes) fails the same way, naming the limit.
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
export const parse: (
  input: string | Uint8Array,
  options?: ParseOptions
) => Effect.Effect<ReadonlyArray<Manifest>, ValidationError> = internal.parse

/**
 * Limits of `parse`, for files nobody writes by hand: past one, parsing stops there with a
 * `ValidationError` naming the limit (the `yaml` parser's time and memory grow with every
 * node, document and level, and its recursion would run out of stack). With the defaults
 * the worst file (a million `k: v` nodes, 5.5 MB) took 40 s and 384 MB on a busy test
 * machine: lower them for input you do not trust.
 *
 * @since 0.2.0
 * @category models
 */
export interface ParseOptions {
  /** The most bytes (characters, for a string) of input. Default 16 MiB (a big CRD bundle is 4 MB). */
  readonly maxBytes?: number | undefined
  /** The most documents of a YAML stream (objects of a JSON one). Default 10,000. */
  readonly maxDocuments?: number | undefined
  /** The deepest nesting of maps and lists. Default 256 (real manifests nest a few dozen). */
  readonly maxDepth?: number | undefined
  /**
   * The most YAML scalars, list items and collections. Default 1,000,000 (a 16 MB
   * `kubectl get -o yaml` holds ~600,000).
   */
  readonly maxNodes?: number | undefined
}

/**
 * Server-side applies a set of objects, Namespaces first, then the other cluster-scoped
 * objects, then the namespaced ones (each group in the order given), and returns their
 * references, in that order, with the uid each apply answered with. Each object goes to the
 * namespace it names, else to `namespace` (see {@link Options}), as with `kubectl apply -f`.
 *
 * First it checks every object and resolves every kind, and fails with a
 * `ValidationError` (having changed nothing) when one has no apiVersion, kind or
 * `metadata.name`, uses `generateName` (names must be stable, so that a later `delete`
 * finds the objects), names a namespace other than an enforced one, is cluster-scoped with
 * `clusterScoped: false`, is of a kind the server does not serve, or appears twice. It
 * applies copies without server-managed fields (status, uid, resourceVersion,
 * managedFields, creationTimestamp, generation, deletionTimestamp,
 * deletionGracePeriodSeconds, selfLink), with a v1 Secret's `stringData` turned into
 * base64 `data` (its keys win), since server-side apply handles stringData badly.
 *
 * The first object that fails stops it with `ApplyFailed`: the objects applied before
 * it stay applied and are listed; nothing is retried or rolled back.
 *
 * With an `applySet` (see `ApplySetOptions`) the set is an ApplySet as kubectl keeps one
 * (`kubectl apply --prune --applyset=...`), and the answer is an `ApplySetResult`:
 *
 * 1. the parent is read and checked (`ApplySetError` when it is another tool's, or not
 *    this set's), every member of the kinds and namespaces it records is listed by the
 *    label `applyset.kubernetes.io/part-of=<id>`, and with `prune: true` a cluster-scoped
 *    member to prune needs `clusterScoped: true`, and an empty set is refused (an empty
 *    file would otherwise delete the whole set): all before anything changes;
 * 2. the parent is written with the kinds and namespaces of both the old and the new set,
 *    then every object is applied, labelled as a member (a manifest labelled for another
 *    set is refused);
 * 3. with `prune: true`, every member the manifests no longer hold is deleted, in reverse
 *    dependency order (custom resources first, then workloads, services, RBAC,
 *    configuration, CRDs, namespaces last), each with its uid as a precondition (a member
 *    replaced since the listing is left alone) and never anything without the label, or
 *    owned (`ownerReferences`) by another object; failures end with `PruneFailed`, and the
 *    parent keeps the union so that the next apply finds what was left;
 * 4. then the parent is narrowed to the new set.
 *
 * With `dryRun: true` every request is a server-side dry run, and the result says what
 * would be created, changed, left unchanged and pruned. kubectl 1.32
 * (`KUBECTL_APPLYSET=true`) can prune a set applied here and the other way round, when
 * both write the same tooling (`applySet.tooling: "kubectl/v1.32.0"`). Pruning a
 * Namespace member deletes everything in it, as with kubectl.
 *
 * @example
 * ```ts
 * import { Console, Effect } from "effect"
 * import * as fs from "node:fs"
 * import { Manifests } from "effect-kube"
 *
 * const deploy = Effect.gen(function* () {
 *   const objects = yield* Manifests.parse(fs.readFileSync("app.yaml"))
 *   const result = yield* Manifests.apply(objects, {
 *     namespace: "shop",
 *     fieldManager: "deployer",
 *     applySet: { name: "shop" },
 *     prune: true
 *   })
 *   const { changed, created, pruned } = result
 *   yield* Console.log(`${created.length} created, ${changed.length} changed, ${pruned.length} pruned`)
 * })
 * ```
 * @since 0.1.0
 * @category operations
 */
export const apply: {
  (
    objects: Iterable<Applicable>,
    options: ApplySetOptions
  ): Effect.Effect<ApplySetResult, ApplyFailed | PruneFailed | ApplySetError | Kube.Error, Kube.Requirements>
  (
    objects: Iterable<Applicable>,
    options?: ApplyOptions
  ): Effect.Effect<ReadonlyArray<ObjectRef>, ApplyFailed | Kube.Error, Kube.Requirements>
} = ((objects: Iterable<Applicable>, options?: ApplyOptions | ApplySetOptions) =>
  options?.applySet !== undefined
    ? applySet.apply(objects, options as ApplySetOptions)
    : internal.apply(objects, options as ApplyOptions | undefined)) as typeof apply

/**
 * The id of the ApplySet a parent stands for, as kubectl computes it:
 * `applyset-<base64url(sha256(<name>.<namespace>.<kind>.<group>))>-v1`, the label value
 * of `applyset.kubernetes.io/part-of` on every member (select them with it).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Manifests } from "effect-kube"
 *
 * // the label value kubectl writes for `kubectl apply -n shop --prune --applyset=shop`
 * const id = Effect.runPromise(Manifests.applySetId({ name: "shop", namespace: "shop", kind: "Secret", group: "" }))
 * ```
 * @since 0.2.0
 * @category ApplySet
 */
export const applySetId: (parent: {
  readonly name: string
  readonly namespace?: string | undefined
  readonly kind: string
  readonly group: string
}) => Effect.Effect<string> = applySet.applySetId


/**
 * Options of `diff`: those of the apply it previews (without `dryRun`: a diff is always
 * one). With an `applySet` and `prune: true`, the members that apply would prune are
 * listed too.
 *
 * @since 0.2.0
 * @category models
 */
export type DiffOptions = Omit<ApplyOptions, "dryRun"> | Omit<ApplySetOptions, "dryRun">

/**
 * What an apply would do to one object:
 *
 * - `"create"`: it does not exist; `diff` shows all of it as added;
 * - `"change"`: `paths` are the fields that would change (`spec.replicas`,
 *   `metadata.labels["app.kubernetes.io/version"]`, `spec.template.spec.containers[0].image`),
 *   `diff` a unified diff of the live and the merged YAML;
 * - `"unchanged"`: the apply would be a no-op (`diff` is empty);
 * - `"prune"`: a member of the ApplySet the manifests no longer hold.
 *
 * A Secret's values never appear: the YAML shows `***`, or `*** (before)` and
 * `*** (after)` for a value that changes (as `kubectl diff` masks them); `paths` name
 * the keys that change.
 *
 * @since 0.2.0
 * @category models
 */
export interface ObjectDiff {
  readonly ref: ObjectRef
  readonly action: "create" | "change" | "unchanged" | "prune"
  readonly paths: ReadonlyArray<string>
  readonly diff: string
}

/**
 * Previews an apply as the server would carry it out: each object is applied as a
 * server-side dry run (defaults, admission and field ownership are the server's, as with
 * `kubectl diff --server-side`) and compared with the live object. Server-set metadata
 * (resourceVersion, generation, managedFields, uid, creationTimestamp) and `status` are
 * not compared. The set is checked as `apply` checks it, and nothing is changed.
 *
 * @example
 * ```ts
 * import { Console, Effect } from "effect"
 * import * as fs from "node:fs"
 * import { Manifests } from "effect-kube"
 *
 * const preview = Effect.gen(function* () {
 *   const objects = yield* Manifests.parse(fs.readFileSync("app.yaml"))
 *   const diffs = yield* Manifests.diff(objects, { namespace: "shop", applySet: { name: "shop" }, prune: true })
 *   for (const d of diffs) {
 *     if (d.action !== "unchanged") yield* Console.log(`${d.action} ${d.ref.kind} ${d.ref.name} ${d.paths.join(", ")}`)
 *   }
 *   yield* Console.log(diffs.map((d) => d.diff).join(""))
 * })
 * ```
 * @since 0.2.0
 * @category operations
 */
export const diff: (
  objects: Iterable<Applicable>,
  options?: DiffOptions
) => Effect.Effect<ReadonlyArray<ObjectDiff>, ApplySetError | Kube.Error, Kube.Requirements> = diffing.diff

/**
 * Options of `statusChanges` and `waitReady`: where the set is (as `get` takes it), how
 * often to read it (`interval`, default 2 seconds), how long to wait (`timeout`, default
 * 5 minutes; `Duration.infinity` for ever), and whether an object that is Failed ends the
 * wait at once (`failFast`, default `true`).
 *
 * @since 0.2.0
 * @category models
 */
export interface WaitOptions extends Options {
  readonly interval?: Duration.Input | undefined
  readonly timeout?: Duration.Input | undefined
  readonly failFast?: boolean | undefined
}

/**
 * The readiness of one live object, with the semantics of kstatus (cli-utils, as Flux
 * and kpt use it), without any request:
 *
 * - `Terminating` while it is being deleted; `InProgress` while its controller has not
 *   observed its latest generation (`status.observedGeneration`), or while a
 *   `Reconciling` condition is True; `Failed` while a `Stalled` condition is True;
 * - Deployment, StatefulSet, DaemonSet, ReplicaSet: `InProgress` until the replicas are
 *   there, updated, available and ready (`Ready: 1/3`); a Deployment past its progress
 *   deadline is `Failed`;
 * - Pod: `Current` when Ready or finished, `Failed` when a container is in
 *   CrashLoopBackOff or it stays unschedulable; Job: `Current` once started (as kstatus:
 *   it then runs on its own) or complete, `Failed` when its Failed condition is True;
 *   PVC: `Current` when Bound; Service: `Current` unless a LoadBalancer has no cluster IP;
 *   CRD: `Current` when Established, `Failed` when its names are not accepted; Namespace:
 *   `Terminating` when terminating; PodDisruptionBudget, Secret, ConfigMap, CronJob:
 *   `Current`;
 * - anything else: beyond kstatus, `InProgress` while a `Ready` condition is not True
 *   (the convention of most operators), else `Current`.
 *
 * The message says why, with the driving condition's reason and message.
 *
 * @since 0.2.0
 * @category readiness
 */
export const statusOf: (object: Manifest) => Omit<ObjectReadiness, "ref"> = readiness.statusOf

/**
 * Reads every object of a set (references, or objects as given to `apply`) and says how
 * ready each is, in order (see `statusOf`); an object that does not exist is `NotFound`.
 *
 * @since 0.2.0
 * @category readiness
 */
export const status: (
  refs: Iterable<ObjectRef | Applicable>,
  options?: Options
) => Effect.Effect<ReadonlyArray<ObjectReadiness>, Kube.Error, Kube.Requirements> = readiness.status

/**
 * The readiness of a set as it changes, for progress output: reads the set every
 * `interval` and emits each object whose status or message changed (every object at
 * first). It ends once every object is `Current`, and fails with `NotReady` when
 * `timeout` runs out or, with `failFast` (the default), right after an object turned
 * `Failed` was emitted.
 *
 * @example
 * ```ts
 * import { Console, Effect, Stream } from "effect"
 * import { Errors, Manifests } from "effect-kube"
 *
 * const waitWithProgress = (refs: ReadonlyArray<Manifests.Manifest>) =>
 *   Manifests.statusChanges(refs, { namespace: "shop", timeout: "5 minutes" }).pipe(
 *     Stream.runForEach((s) => Console.log(`${Errors.formatRef(s.ref)}: ${s.status} (${s.message})`))
 *   )
 * ```
 * @since 0.2.0
 * @category readiness
 */
export const statusChanges: (
  refs: Iterable<ObjectRef | Applicable>,
  options?: WaitOptions
) => Stream.Stream<ObjectReadiness, NotReady | Kube.Error, Kube.Requirements> = readiness.statusChanges

/**
 * Waits until every object of a set is `Current`, and returns their last statuses. Fails
 * with `NotReady` naming each object that is not, with its status and why (the failing
 * condition's message), when `timeout` (default 5 minutes) runs out or, with `failFast`
 * (the default), as soon as one is `Failed`. Polls on the Effect Clock, so a `TestClock`
 * steps through it. The `NotReady` carries why (`explanation`, read once more as the wait ends, see
 * `explain`), and its message ends with it rendered.
 *
 * @since 0.2.0
 * @category readiness
 */
export const waitReady: (
  refs: Iterable<ObjectRef | Applicable>,
  options?: WaitOptions
) => Effect.Effect<ReadonlyArray<ObjectReadiness>, NotReady | Kube.Error, Kube.Requirements> = readiness.waitReady

/**
 * Why each object of a set is as ready as it is, as data: reads each object and walks down what it owns
 * (Deployment → its ReplicaSets, the current one first → their Pods; Job and DaemonSet → Pods;
 * StatefulSet → Pods and PersistentVolumeClaims; Service → EndpointSlices), and joins to each its kstatus
 * readiness (as `statusOf`), a one-line summary (`2/3 available`, `1 pod(s) not ready`,
 * `Unschedulable: 0/1 nodes are available: ...`), its conditions and, when it is not Current, three of its Events
 * (Warnings first, then the newest; core v1, by `involvedObject.uid`; events.k8s.io/v1 Events are the same objects;
 * a ready object's are not read, so a ready Deployment of 50 pods is 4 requests, not 56). An Event's age is
 * read from the Effect Clock, so a `TestClock` pins it. Reads only; an object that does not exist is
 * `NotFound`, and Events the caller may not list are left out. `renderExplanation` writes it for a person.
 *
 * kubectl, cli-utils' kstatus and fabric8 say whether an object is ready; this says why.
 *
 * @example
 * ```ts
 * import { Console, Effect } from "effect"
 * import { Deployments, Kube, Manifests } from "effect-kube"
 * import { FakeCluster } from "@effect-kube/testing"
 *
 * const program = Effect.gen(function* () {
 *   yield* Kube.api(Deployments, { namespace: "default" }).create({
 *     metadata: { name: "web" },
 *     spec: {
 *       replicas: 2,
 *       selector: { matchLabels: { app: "web" } },
 *       template: {
 *         metadata: { labels: { app: "web" } },
 *         // no node has this label: the pods stay Pending, PodScheduled False
 *         spec: { nodeSelector: { disk: "ssd" }, containers: [{ name: "c", image: "nginx" }] }
 *       }
 *     }
 *   })
 *   yield* Effect.sleep("1 second")
 *   const explanation = yield* Manifests.explain(
 *     [{ apiVersion: "apps/v1", kind: "Deployment", name: "web" }],
 *     { namespace: "default" }
 *   )
 *   yield* Console.log(Manifests.renderExplanation(explanation))
 *   // Deployment default/web: 0/2 available
 *   //   ← ReplicaSet default/web-…: 2 pod(s) not ready
 *   //     ← Pod default/web-…-…: Unschedulable: 0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector. …
 *   //         · Warning FailedScheduling (Event, 1 s ago)
 * })
 *
 * Effect.runPromise(program.pipe(Effect.provide(FakeCluster.layer())))
 * ```
 * @since 0.2.0
 * @category readiness
 */
export const explain: (
  refs: Iterable<ObjectRef | Applicable>,
  options?: Options
) => Effect.Effect<ReadonlyArray<Explanation>, Kube.Error, Kube.Requirements> = explaining.explain

/**
 * Writes an explanation for a person, one line per object, each under its owner after `← `:
 * `Kind namespace/name: summary`, and under an object that is not Current its Warning Events
 * (`· Warning FailedCreate: ... (Event, 12 s ago, ×3)`; the words left out where the summary already
 * quotes them, as the scheduler's FailedScheduling repeats PodScheduled's). What is ready down to its last child
 * is counted, not shown (`← 2 Pods ready`). Pure and deterministic: the ages are the explanation's
 * own (`ages: false` leaves them out, to compare two explanations). Never writes an object's spec, so
 * no Secret data and no environment value.
 *
 * @example
 * ```ts
 * import { Manifests } from "effect-kube"
 *
 * const text = Manifests.renderExplanation([{
 *   ref: { apiVersion: "v1", kind: "Pod", namespace: "shop", name: "web-x" },
 *   status: "InProgress",
 *   summary: "CrashLoopBackOff, back-off 10s restarting failed container, last exit code 1 (Error)",
 *   reason: "CrashLoopBackOff",
 *   conditions: [],
 *   events: [{ type: "Warning", reason: "BackOff", message: "Back-off restarting failed container", count: 3, source: "kubelet", ageSeconds: 12 }],
 *   children: []
 * }])
 * console.log(text)
 * // Pod shop/web-x: CrashLoopBackOff, back-off 10s restarting failed container, last exit code 1 (Error)
 * //   · Warning BackOff: Back-off restarting failed container (Event, 12 s ago, ×3)
 * ```
 * @since 0.2.0
 * @category readiness
 */
export const renderExplanation: (
  explanation: ReadonlyArray<Explanation>,
  options?: { readonly ages?: boolean | undefined }
) => string = explaining.render

/**
 * Explanations of a set while waiting for it (see `explain`): reads the whole tree every `interval`
 * (default 2 seconds) and emits it when what `renderExplanation` would write changed, ages aside (the first
 * read always). It ends after the explanation in which every object is Current, and fails with `NotReady`
 * (carrying the last explanation) when `timeout` (default 5 minutes) runs out.
 *
 * It polls rather than watches: the tree's members change as it is walked (a rollout makes a new
 * ReplicaSet and new Pods), and watching it would take a watch per kind and namespace (ReplicaSets, Pods,
 * Events, EndpointSlices) held open for the wait, where a poll is a few reads on the Effect Clock, as
 * `statusChanges` and cli-utils' poller do.
 *
 * @example
 * ```ts
 * import { Console, Effect, Stream } from "effect"
 * import { Manifests } from "effect-kube"
 *
 * const waitAndSay = (refs: ReadonlyArray<Manifests.Manifest>) =>
 *   Manifests.explainChanges(refs, { namespace: "shop", timeout: "5 minutes" }).pipe(
 *     Stream.runForEach((explanation) => Console.log(Manifests.renderExplanation(explanation)))
 *   )
 * ```
 * @since 0.2.0
 * @category readiness
 */
export const explainChanges: (
  refs: Iterable<ObjectRef | Applicable>,
  options?: WaitOptions
) => Stream.Stream<ReadonlyArray<Explanation>, NotReady | Kube.Error, Kube.Requirements> = explaining.explainChanges

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
   * Deletes a set of objects (references, or objects as given to `apply`) in the reverse
   * of `apply`'s order, so that what was applied first goes last (Namespaces last). Every reference is checked and
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

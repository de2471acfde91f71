/**
 * Cordon, uncordon and drain a node, as `kubectl cordon`, `kubectl uncordon` and
 * `kubectl drain` do (k8s.io/kubectl/pkg/drain).
 *
 * `drain` first sorts the node's pods as kubectl does: mirror pods (the kubelet's static
 * pods) are left alone; DaemonSet-owned pods are refused unless `ignoreDaemonSets` (then
 * left alone: their controller would put them back); pods with `emptyDir` volumes are
 * refused unless `deleteEmptyDirData`; pods no controller owns are refused unless `force`
 * (nothing brings them back). A refusal fails with `DrainFailed` (`reason: "Unevictable"`)
 * naming every blocking pod, before anything is written. Otherwise it cordons the node
 * (`spec.unschedulable`), evicts each pod through the Eviction API, so PodDisruptionBudgets
 * are honoured, and waits until each pod is gone (or replaced by a pod of another uid).
 *
 * An eviction the budget forbids is answered 429 and tried again every `retryInterval`
 * (5 seconds, kubectl's) until the drain's `timeout`: the one mutation this library sends
 * again on its own, as kubectl does by design. It is safe: a 429 eviction wrote nothing
 * (the server checks the budget before it deletes), and the budget opens by itself as the
 * pods' controllers bring replacements up elsewhere. Any other failure of an eviction ends
 * the drain with that error. When the timeout passes the drain fails with `DrainFailed`
 * (`reason: "Timeout"`) naming the pods still there and what held each (the budget's
 * message, or its deletion); the node stays cordoned, as kubectl leaves it.
 *
 * @example
 * ```ts
 * import { Console, Effect } from "effect"
 * import { Drain, Kube, Pods } from "effect-kube"
 * import { FakeCluster } from "@effect-kube/testing"
 *
 * const program = Effect.gen(function*() {
 *   yield* Kube.api(Pods, { namespace: "default" }).create({
 *     metadata: { name: "lonely" },
 *     spec: { containers: [{ name: "c", image: "busybox" }] }
 *   })
 *   // an unowned pod needs force, as kubectl drain --force
 *   const result = yield* Drain.drain("fake-node", { force: true, timeout: "30 seconds" })
 *   yield* Console.log(result.evicted.map(Drain.formatPod)) // [ 'default/lonely' ]
 *   yield* Drain.uncordon("fake-node")
 * })
 *
 * Effect.runPromise(program.pipe(Effect.provide(FakeCluster.layer())))
 * ```
 * @since 0.2.0
 */
import * as Data from "effect/Data"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Internal from "./internal/runtime/drain.js"
import type * as Kube from "./Kube.js"
import type { Node } from "./resources/index.js"

/**
 * A pod, by namespace and name (and the uid the drain saw).
 *
 * @since 0.2.0
 * @category models
 */
export interface PodRef {
  readonly namespace: string
  readonly name: string
  readonly uid?: string | undefined
}

/**
 * A pod with why the drain treated it so: why it blocks, why it was left, what held it.
 *
 * @since 0.2.0
 * @category models
 */
export interface PodReason extends PodRef {
  readonly reason: string
}

/**
 * Options of `drain`, named after kubectl drain's flags.
 *
 * @since 0.2.0
 * @category models
 */
export interface DrainOptions {
  /** Leave DaemonSet-owned pods (`--ignore-daemonsets`); without it they block the drain. */
  readonly ignoreDaemonSets?: boolean | undefined
  /** Evict pods with `emptyDir` volumes, whose data is lost (`--delete-emptydir-data`). */
  readonly deleteEmptyDirData?: boolean | undefined
  /** Evict pods no controller owns, which nothing brings back (`--force`). */
  readonly force?: boolean | undefined
  /** The grace period each pod is deleted with (`--grace-period`; default: the pod's own). */
  readonly gracePeriodSeconds?: number | undefined
  /** Only pods matching this label selector (`--pod-selector`). */
  readonly podSelector?: string | undefined
  /** How long evicting and waiting may take in all (`--timeout`; default: no limit, as kubectl). */
  readonly timeout?: Duration.Input | undefined
  /** How long to wait before evicting a pod again after a disruption budget refused it (default 5 seconds). */
  readonly retryInterval?: Duration.Input | undefined
  /** How often to look whether an evicted pod is gone (default 1 second). */
  readonly pollInterval?: Duration.Input | undefined
}

/**
 * The pods of a node as a drain sorts them: to evict, left alone (mirror pods, DaemonSet
 * pods under `ignoreDaemonSets`), and blocking (the drain refuses while there are any).
 * `warnings` are kubectl's: what will be evicted or left that a person should know of.
 *
 * @since 0.2.0
 * @category models
 */
export interface Plan {
  readonly node: string
  readonly evict: ReadonlyArray<PodRef>
  readonly skipped: ReadonlyArray<PodReason>
  readonly blocking: ReadonlyArray<PodReason>
  readonly warnings: ReadonlyArray<PodReason>
}

/**
 * What a drain did: whether it cordoned the node (false: it already was), the pods it
 * evicted (all gone), the pods it left and kubectl's warnings.
 *
 * @since 0.2.0
 * @category models
 */
export interface DrainResult {
  readonly node: string
  readonly cordoned: boolean
  readonly evicted: ReadonlyArray<PodRef>
  readonly skipped: ReadonlyArray<PodReason>
  readonly warnings: ReadonlyArray<PodReason>
}

/**
 * A drain that could not finish: pods that may not be evicted under the options given
 * (`Unevictable`, before anything was written), or pods still on the node when the
 * timeout passed (`Timeout`, with what held each: a disruption budget's refusal or the
 * wait for its deletion).
 *
 * @example
 * ```ts
 * Effect.catchTag("DrainFailed", (e) => Console.error(e.pods.map((p) => `${p.namespace}/${p.name}: ${p.reason}`)))
 * ```
 * @since 0.2.0
 * @category errors
 */
export class DrainFailed extends Data.TaggedError("DrainFailed")<{
  readonly node: string
  readonly reason: "Unevictable" | "Timeout"
  readonly pods: ReadonlyArray<PodReason>
  /** The timeout, as given, for `Timeout`. */
  readonly timeout?: string | undefined
}> {
  override get message(): string {
    const pods = this.pods.map((pod) => `${formatPod(pod)} (${pod.reason})`).join(", ")
    return this.reason === "Timeout"
      ? `drain node ${this.node}: not done within ${this.timeout}; still there: ${pods}`
      : `drain node ${this.node}: cannot evict ${this.pods.length} pod${this.pods.length === 1 ? "" : "s"}: ${pods}`
  }
}

/** The implementation, loaded by the first call: a program that never drains does not load it. */
const internal: Effect.Effect<typeof Internal> = Effect.promise(() => import("./internal/runtime/drain.js"))

/**
 * `namespace/name` of a pod.
 *
 * @since 0.2.0
 * @category formatting
 */
export const formatPod = (pod: PodRef): string => `${pod.namespace}/${pod.name}`

/**
 * Marks the node unschedulable (`spec.unschedulable: true`, a merge patch), as `kubectl
 * cordon`; answers whether it changed anything (false: it already was). A missing node is
 * the server's 404 `ApiError`.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Drain } from "effect-kube"
 * import { FakeCluster } from "@effect-kube/testing"
 *
 * Effect.runPromise(Drain.cordon("fake-node").pipe(Effect.provide(FakeCluster.layer()))) // true
 * ```
 * @since 0.2.0
 * @category combinators
 */
export const cordon = (node: string): Effect.Effect<boolean, Kube.Error, Kube.Requirements> =>
  Effect.flatMap(internal, (drain) => drain.setUnschedulable(node, true))

/**
 * Makes the node schedulable again (removes `spec.unschedulable`), as `kubectl uncordon`;
 * answers whether it changed anything.
 *
 * @since 0.2.0
 * @category combinators
 */
export const uncordon = (node: string): Effect.Effect<boolean, Kube.Error, Kube.Requirements> =>
  Effect.flatMap(internal, (drain) => drain.setUnschedulable(node, false))

/**
 * The node's pods sorted as `drain` would, without writing anything (`kubectl drain
 * --dry-run=server` shows the same sorting).
 *
 * @since 0.2.0
 * @category combinators
 */
export const plan = (node: string, options?: DrainOptions): Effect.Effect<Plan, Kube.Error, Kube.Requirements> =>
  Effect.flatMap(internal, (drain) => drain.plan(node, options))

/**
 * Cordons the node, evicts its pods (honouring PodDisruptionBudgets) and waits until they
 * are gone, as `kubectl drain`. See the module's comment for the rules.
 *
 * @since 0.2.0
 * @category combinators
 */
export const drain: (
  node: string,
  options?: DrainOptions
) => Effect.Effect<DrainResult, DrainFailed | Kube.Error, Kube.Requirements> = (node, options) =>
  Effect.flatMap(internal, (drain) => drain.drain(node, options)).pipe(
    Effect.catchTag("DrainStuck", (stuck) => Effect.fail(new DrainFailed({ node: stuck.node, reason: stuck.reason, pods: stuck.pods, timeout: stuck.timeout })))
  )

/**
 * Whether the node is cordoned.
 *
 * @since 0.2.0
 * @category predicates
 */
export const isCordoned = (node: Node): boolean => node.spec?.unschedulable === true

/**
 * Ready-made conditions for `waitFor`: a pod's phase or readiness, a job's completion,
 * an object's deletion; and `make` for any other test. A condition's name appears in
 * the `WaitTimeout` error when the wait runs out of time. `waitFor` also takes a plain
 * predicate `(object) => boolean`, named "predicate" in that error.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Condition, Kube, Pods } from "effect-kube"
 *
 * const pods = Kube.api(Pods, { namespace: "default" })
 *
 * const finished = pods.waitFor("smoke", Condition.or(Condition.podSucceeded, Condition.podFailed), {
 *   timeout: "5 minutes"
 * })
 * const gone = pods.waitFor("smoke", Condition.deleted, { timeout: "1 minute" })
 * ```
 * @since 0.1.0
 */
import { dual } from "effect/Function"
import type { Condition } from "./Kube.js"
import type { Job, Pod } from "./resources/generated.js"

/**
 * A condition from a name and a test on the object's current state (`undefined` when
 * the object does not exist).
 *
 * @example
 * ```ts
 * import { Condition, type Deployment } from "effect-kube"
 *
 * const scaled = Condition.make<Deployment>("scaled to 3", (d) => d?.status?.readyReplicas === 3)
 * ```
 * @since 0.1.0
 * @category constructors
 */
export const make = <A>(name: string, test: (object: A | undefined) => boolean): Condition<A> => ({ name, test })

/**
 * Holds when either condition holds. Data-first or data-last, as `Predicate.or`.
 *
 * @example
 * ```ts
 * import { pipe } from "effect"
 * import { Condition } from "effect-kube"
 *
 * const finished = Condition.or(Condition.podSucceeded, Condition.podFailed)
 * const same = pipe(Condition.podSucceeded, Condition.or(Condition.podFailed))
 * ```
 * @since 0.1.0
 * @category combinators
 */
export const or: {
  <A>(that: Condition<A>): (self: Condition<A>) => Condition<A>
  <A>(self: Condition<A>, that: Condition<A>): Condition<A>
} = dual(
  2,
  <A>(self: Condition<A>, that: Condition<A>): Condition<A> =>
    make(`${self.name} or ${that.name}`, (object) => self.test(object) || that.test(object))
)

/**
 * Holds when both conditions hold. Data-first or data-last, as `Predicate.and`.
 *
 * @example
 * ```ts
 * import { pipe } from "effect"
 * import { Condition } from "effect-kube"
 *
 * const serving = Condition.and(Condition.podRunning, Condition.podReady)
 * const same = pipe(Condition.podRunning, Condition.and(Condition.podReady))
 * ```
 * @since 0.1.0
 * @category combinators
 */
export const and: {
  <A>(that: Condition<A>): (self: Condition<A>) => Condition<A>
  <A>(self: Condition<A>, that: Condition<A>): Condition<A>
} = dual(
  2,
  <A>(self: Condition<A>, that: Condition<A>): Condition<A> =>
    make(`${self.name} and ${that.name}`, (object) => self.test(object) && that.test(object))
)

/**
 * Holds once the object does not exist (deleted, or never created).
 *
 * @since 0.1.0
 * @category conditions
 */
export const deleted: Condition<unknown> = make("deleted", (object) => object === undefined)

/**
 * Holds when the object exists.
 *
 * @since 0.1.0
 * @category conditions
 */
export const exists: Condition<unknown> = make("existing", (object) => object !== undefined)

const podPhase = (phase: string): Condition<Pod> =>
  make(phase, (pod) => pod?.status?.phase === phase)

/**
 * Holds when the pod's phase is `Succeeded`: every container ended with exit code 0.
 *
 * @since 0.1.0
 * @category conditions
 */
export const podSucceeded: Condition<Pod> = podPhase("Succeeded")

/**
 * Holds when the pod's phase is `Failed`.
 *
 * @since 0.1.0
 * @category conditions
 */
export const podFailed: Condition<Pod> = podPhase("Failed")

/**
 * Holds when the pod's phase is `Running` (its containers started; not necessarily ready).
 *
 * @since 0.1.0
 * @category conditions
 */
export const podRunning: Condition<Pod> = podPhase("Running")

const hasTrueCondition = (
  conditions: ReadonlyArray<{ readonly type: string; readonly status: string }> | undefined,
  type: string
): boolean => conditions !== undefined && conditions.some((c) => c.type === type && c.status === "True")

/**
 * Holds when the pod's `Ready` condition is `True` (its readiness probes pass).
 *
 * @since 0.1.0
 * @category conditions
 */
export const podReady: Condition<Pod> = make("Ready", (pod) => hasTrueCondition(pod?.status?.conditions, "Ready"))

/**
 * Holds when the job's `Complete` condition is `True`.
 *
 * @since 0.1.0
 * @category conditions
 */
export const jobComplete: Condition<Job> = make(
  "Complete",
  (job) => hasTrueCondition(job?.status?.conditions, "Complete")
)

/**
 * Holds when the job's `Failed` condition is `True` (backoff limit or deadline reached).
 *
 * @since 0.1.0
 * @category conditions
 */
export const jobFailed: Condition<Job> = make("Failed", (job) => hasTrueCondition(job?.status?.conditions, "Failed"))

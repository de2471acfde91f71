/**
 * The disruption controller: a PodDisruptionBudget's status (expected, healthy and
 * desired pods, disruptions allowed, the DisruptionAllowed condition), kept as the pods
 * it selects come, go and become ready. The eviction subresource counts the same way.
 *
 * @internal
 */
import { isObject, type JsonObject } from "../store/json.js"
import type { KindInfo } from "../store/kinds.js"
import type { FakeState } from "../store/state.js"
import type { Entry } from "../store/store.js"
import {
  builtinKind,
  conditionOf,
  controllerOf,
  editObject,
  entriesOf,
  entryOf,
  isDeleting,
  isSeed,
  labelsOf,
  selectorMatches,
  setCondition
} from "./api.js"
import { podKind } from "./pods.js"
import { keyFor, splitKey, WorkQueue } from "./queue.js"

/** @internal */
export const budgetKind = (state: FakeState): KindInfo => builtinKind(state, "policy", "v1", "poddisruptionbudgets")

/**
 * A pod that counts as healthy for a budget: not being deleted, and Ready (a pod with no
 * Ready condition at all, as a seeded one may be, by being Running).
 *
 * @internal
 */
export const isHealthy = (pod: JsonObject): boolean => {
  if ((pod.metadata as JsonObject).deletionTimestamp !== undefined) return false
  const ready = conditionOf(pod.status, "Ready")
  if (ready !== undefined) return ready.status === "True"
  return isObject(pod.status) && pod.status.phase === "Running"
}

/** An int-or-percent of `total`, rounded up as the disruption controller does. */
const scaled = (value: unknown, total: number): number | undefined => {
  if (typeof value === "number") return value
  if (typeof value === "string" && /^\d+%$/.test(value)) return Math.ceil((Number(value.slice(0, -1)) * total) / 100)
  if (typeof value === "string" && /^\d+$/.test(value)) return Number(value)
  return undefined
}

/**
 * The pods a budget selects: in its namespace, matching its selector (an empty selector
 * selects every pod).
 *
 * @internal
 */
export const selectedPods = (state: FakeState, budget: Entry): Array<Entry> => {
  const selector = (budget.obj.spec as JsonObject | undefined)?.selector
  return entriesOf(state, podKind(state), budget.namespace).filter((p) => selectorMatches(selector, labelsOf(p.obj)))
}

/** What a budget allows, as the disruption controller computes it. @internal */
export interface Budget {
  readonly expected: number
  readonly desired: number
  readonly healthy: number
  readonly allowed: number
}

/**
 * The pods a workload wants, where a budget counts by percentage or by `maxUnavailable`:
 * the `replicas` of the pods' controllers (through a ReplicaSet to its Deployment's),
 * else the pods themselves.
 */
const expectedByScale = (state: FakeState, pods: ReadonlyArray<Entry>): number => {
  const counted = new Map<string, number>()
  for (const pod of pods) {
    const ref = controllerOf(pod.obj)
    if (ref === undefined || typeof ref.apiVersion !== "string" || typeof ref.kind !== "string") return pods.length
    const kind = state.registry.lookup(ref.apiVersion, ref.kind)
    const owner = kind === undefined ? undefined : entryOf(state, kind, pod.namespace, ref.name as string)
    const replicas = (owner?.obj.spec as JsonObject | undefined)?.replicas
    if (owner === undefined || typeof replicas !== "number") return pods.length
    counted.set(owner.uid, replicas)
  }
  return [...counted.values()].reduce((a, b) => a + b, 0)
}

/** @internal */
export const budgetOf = (state: FakeState, budget: Entry): Budget => {
  const spec = isObject(budget.obj.spec) ? budget.obj.spec : {}
  const pods = selectedPods(state, budget)
  const healthy = pods.filter((p) => isHealthy(p.obj)).length
  let expected = pods.length
  let desired = 0
  if (spec.minAvailable !== undefined) {
    if (typeof spec.minAvailable === "string" && spec.minAvailable.endsWith("%")) {
      expected = expectedByScale(state, pods)
    }
    desired = scaled(spec.minAvailable, expected) ?? 0
  } else if (spec.maxUnavailable !== undefined) {
    expected = expectedByScale(state, pods)
    desired = Math.max(0, expected - (scaled(spec.maxUnavailable, expected) ?? 0))
  }
  return { expected, desired, healthy, allowed: Math.max(0, healthy - desired) }
}

/** @internal */
export const installDisruption = (state: FakeState): void => {
  const queue = new WorkQueue(state, (key) => {
    const { name, namespace } = splitKey(key)
    const kind = budgetKind(state)
    const budget = entryOf(state, kind, namespace, name)
    if (budget === undefined || isDeleting(budget)) return
    const b = budgetOf(state, budget)
    const at = state.now()
    editObject(state, kind, budget, (draft) => {
      const old = isObject(draft.status) ? draft.status : {}
      const status: JsonObject = {
        observedGeneration: budget.generation,
        ...(isObject(old.disruptedPods) && Object.keys(old.disruptedPods).length > 0 ?
          { disruptedPods: old.disruptedPods } :
          {}),
        disruptionsAllowed: b.allowed,
        currentHealthy: b.healthy,
        desiredHealthy: b.desired,
        expectedPods: b.expected,
        ...(Array.isArray(old.conditions) ? { conditions: old.conditions } : {})
      }
      setCondition(
        status,
        b.allowed > 0 ?
          { type: "DisruptionAllowed", status: "True", reason: "SufficientPods", message: "" } :
          { type: "DisruptionAllowed", status: "False", reason: "InsufficientPods", message: "" },
        at,
        { observedGeneration: budget.generation }
      )
      draft.status = status
    })
  })
  const podChanged = (pod: Entry, prev: Entry | undefined) => {
    for (const budget of entriesOf(state, budgetKind(state), pod.namespace)) {
      const selector = (budget.obj.spec as JsonObject | undefined)?.selector
      if (
        selectorMatches(selector, labelsOf(pod.obj)) ||
        (prev !== undefined && selectorMatches(selector, labelsOf(prev.obj)))
      ) queue.add(keyFor(budget.namespace, budget.name))
    }
  }
  state.onWrite((kind, entry, prev) => {
    if (isSeed(entry, prev)) return
    if (kind.group === "policy" && kind.plural === "poddisruptionbudgets") {
      queue.add(keyFor(entry.namespace, entry.name))
    } else if (kind.group === "" && kind.plural === "pods") podChanged(entry, prev)
  })
  state.onRemove((kind, removed) => {
    if (kind.group === "" && kind.plural === "pods") podChanged(removed, undefined)
  })
}

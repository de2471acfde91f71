/**
 * The ReplicaSet controller: as many active pods as `replicas` (created from the
 * template, deleted in the controller's order), orphans matching the selector adopted,
 * and the status (`replicas`, `fullyLabeledReplicas`, `readyReplicas`,
 * `availableReplicas` after `minReadySeconds`, `observedGeneration`); a create a pod-count
 * ResourceQuota refuses is a FailedCreate Event and the ReplicaFailure condition, as on a cluster.
 *
 * @internal
 */
import { isObject, type JsonObject, randomSuffix } from "../store/json.js"
import type { KindInfo } from "../store/kinds.js"
import type { FakeState } from "../store/state.js"
import type { Entry } from "../store/store.js"
import {
  builtinKind,
  conditionOf,
  controllerOf,
  createObject,
  editObject,
  entriesOf,
  entryOf,
  isDeleting,
  isEmptySelector,
  isSeed,
  isUsableSelector,
  labelsOf,
  removeObject,
  selectorMatches,
  setCondition
} from "./api.js"
import { recordEvent } from "./events.js"
import {
  claimPods,
  deletionOrder,
  isActive,
  isFinished,
  isReady,
  podFromTemplate,
  podKind,
  templateLabelsOf,
  untilAvailable
} from "./pods.js"
import { keyFor, splitKey, WorkQueue } from "./queue.js"

/** The most pods one sync creates or deletes, as the controller's burst. */
const burst = 500

/** @internal */
export const replicaSetKind = (state: FakeState): KindInfo => builtinKind(state, "apps", "v1", "replicasets")

/** @internal */
export const installReplicaSets = (state: FakeState): void => {
  const queue = new WorkQueue(state, (key) => sync(state, key, queue))
  state.onWrite((kind, entry, prev) => {
    if (isSeed(entry, prev)) return
    if (kind.group === "apps" && kind.plural === "replicasets") queue.add(keyFor(entry.namespace, entry.name))
    else if (kind.group === "" && kind.plural === "pods") podChanged(state, queue, entry)
  })
  state.onRemove((kind, removed) => {
    if (kind.group === "" && kind.plural === "pods") podChanged(state, queue, removed)
  })
}

/** A pod change concerns its controlling ReplicaSet, or (an orphan) the ReplicaSets that would adopt it. */
const podChanged = (state: FakeState, queue: WorkQueue, pod: Entry): void => {
  const ref = controllerOf(pod.obj)
  if (ref !== undefined) {
    if (ref.kind === "ReplicaSet" && typeof ref.name === "string") queue.add(keyFor(pod.namespace, ref.name))
    return
  }
  const labels = labelsOf(pod.obj)
  for (const rs of entriesOf(state, replicaSetKind(state), pod.namespace)) {
    if (selectorMatches((rs.obj.spec as JsonObject | undefined)?.selector, labels)) {
      queue.add(keyFor(rs.namespace, rs.name))
    }
  }
}

/** How long until the controller tries a create the quota refused again (its rate limiter's back-off, flattened). */
const quotaRetryMs = 10_000

/**
 * The quota admission's answer to the controller's create of one more pod, in kube-apiserver's words, when a
 * ResourceQuota of the namespace limits the count of pods (`pods` or `count/pods`) and it is used up; only the
 * controller's creates are checked (the fake's API does not enforce ResourceQuota).
 */
const quotaRefusal = (state: FakeState, namespace: string, pod: JsonObject): string | undefined => {
  const quotas = entriesOf(state, builtinKind(state, "", "v1", "resourcequotas"), namespace)
  if (quotas.length === 0) return undefined
  // as the pod evaluator: a pod in a terminal phase uses no quota
  const used = entriesOf(state, podKind(state), namespace).filter((p) => !isFinished(p.obj)).length
  for (const quota of quotas) {
    const hard = isObject(quota.obj.spec) && isObject(quota.obj.spec.hard) ? quota.obj.spec.hard : {}
    for (const resource of ["pods", "count/pods"]) {
      const limit = Number(hard[resource])
      if (hard[resource] === undefined || !Number.isInteger(limit) || used + 1 <= limit) continue
      const metadata = isObject(pod.metadata) ? pod.metadata : {}
      const name = typeof metadata.name === "string" ? metadata.name : `${String(metadata.generateName ?? "")}${randomSuffix()}`
      return `pods "${name}" is forbidden: exceeded quota: ${quota.name}, requested: ${resource}=1, ` +
        `used: ${resource}=${used}, limited: ${resource}=${limit}`
    }
  }
  return undefined
}

const sync = (state: FakeState, key: string, queue: WorkQueue): void => {
  const { name, namespace } = splitKey(key)
  const kind = replicaSetKind(state)
  const rs = entryOf(state, kind, namespace, name)
  if (rs === undefined) return
  const spec = isObject(rs.obj.spec) ? rs.obj.spec : {}
  const selector = spec.selector
  if (!isUsableSelector(selector) || isEmptySelector(selector)) return
  const replicas = typeof spec.replicas === "number" ? spec.replicas : 1
  const minReadySeconds = typeof spec.minReadySeconds === "number" ? spec.minReadySeconds : 0
  const claimed = claimPods(state, rs, selector)
  let active = claimed.filter(isActive)
  let createError: string | undefined
  // pods its selector would not select (a template the API server's validation refuses) it would release as made
  const ownsWhatItMakes = selectorMatches(selector, templateLabelsOf(spec.template))
  if (!isDeleting(rs)) {
    const diff = active.length - replicas
    if (diff < 0 && ownsWhatItMakes) {
      const created: Array<Entry> = []
      for (let i = 0; i < Math.min(-diff, burst); i++) {
        const template = podFromTemplate(rs, spec.template)
        const refused = quotaRefusal(state, namespace, template)
        if (refused !== undefined) {
          // as the controller's create refused by the quota admission: an Event, the condition, a retry later
          createError = refused
          recordEvent(state, rs, { component: "replicaset-controller" }, {
            type: "Warning",
            reason: "FailedCreate",
            message: `Error creating: ${refused}`
          })
          queue.addAfter(key, quotaRetryMs)
          break
        }
        const pod = createObject(state, podKind(state), template)
        if (pod !== undefined) created.push(pod)
      }
      active = [...active, ...created]
    } else if (diff > 0) {
      const doomed = new Set(deletionOrder(active).slice(0, Math.min(diff, burst)))
      for (const pod of doomed) removeObject(state, podKind(state), pod)
      active = active.filter((p) => !doomed.has(p))
    }
  }
  const current = (pod: Entry): Entry | undefined => entryOf(state, podKind(state), pod.namespace, pod.name)
  const pods = active.map(current).filter((p): p is Entry => p !== undefined && isActive(p))
  // the pods it owns that are going but not gone (kube-controller-manager v1.35's terminatingReplicas, 0 included)
  const terminating = [...new Set([...claimed, ...active])].map(current)
    .filter((p) => p !== undefined && isDeleting(p) && !isFinished(p.obj)).length
  const nowMs = state.clock.now()
  const templateLabels = templateLabelsOf(spec.template)
  let ready = 0
  let available = 0
  let fullyLabeled = 0
  let nextAvailable = Infinity
  for (const pod of pods) {
    if (isReady(pod.obj)) ready++
    const wait = untilAvailable(pod.obj, minReadySeconds, nowMs)
    if (wait === 0) available++
    else nextAvailable = Math.min(nextAvailable, wait)
    const labels = labelsOf(pod.obj)
    if (Object.entries(templateLabels).every(([k, v]) => labels[k] === v)) fullyLabeled++
  }
  if (nextAvailable !== Infinity) queue.addAfter(key, nextAvailable)
  const latest = entryOf(state, kind, namespace, name)
  if (latest === undefined || latest.uid !== rs.uid) return
  editObject(state, kind, latest, (draft) => {
    const old = isObject(draft.status) ? draft.status : {}
    // ReplicaFailure: set with the first failed create's words, gone after a sync whose creates all went through
    const kept: JsonObject = {
      conditions: (Array.isArray(old.conditions) ? old.conditions : []).filter((c) =>
        createError !== undefined || !isObject(c) || c.type !== "ReplicaFailure"
      )
    }
    if (createError !== undefined && conditionOf(kept, "ReplicaFailure") === undefined) {
      setCondition(kept, { type: "ReplicaFailure", status: "True", reason: "FailedCreate", message: createError }, state.now())
    }
    const conditions = kept.conditions as Array<unknown>
    draft.status = {
      replicas: pods.length,
      ...(fullyLabeled > 0 ? { fullyLabeledReplicas: fullyLabeled } : {}),
      ...(ready > 0 ? { readyReplicas: ready } : {}),
      ...(available > 0 ? { availableReplicas: available } : {}),
      observedGeneration: latest.generation,
      terminatingReplicas: terminating,
      ...(conditions.length > 0 ? { conditions } : {})
    }
  })
}

/**
 * The ReplicaSet controller: as many active pods as `replicas` (created from the
 * template, deleted in the controller's order), orphans matching the selector adopted,
 * and the status (`replicas`, `fullyLabeledReplicas`, `readyReplicas`,
 * `availableReplicas` after `minReadySeconds`, `observedGeneration`).
 *
 * @internal
 */
import { isObject, type JsonObject } from "../store/json.js"
import type { KindInfo } from "../store/kinds.js"
import type { FakeState } from "../store/state.js"
import type { Entry } from "../store/store.js"
import {
  builtinKind,
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
  selectorMatches
} from "./api.js"
import {
  claimPods,
  deletionOrder,
  isActive,
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
  let active = claimPods(state, rs, selector).filter(isActive)
  // pods its selector would not select (a template the API server's validation refuses) it would release as made
  const ownsWhatItMakes = selectorMatches(selector, templateLabelsOf(spec.template))
  if (!isDeleting(rs)) {
    const diff = active.length - replicas
    if (diff < 0 && ownsWhatItMakes) {
      const created: Array<Entry> = []
      for (let i = 0; i < Math.min(-diff, burst); i++) {
        const pod = createObject(state, podKind(state), podFromTemplate(rs, spec.template))
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
    draft.status = {
      replicas: pods.length,
      ...(fullyLabeled > 0 ? { fullyLabeledReplicas: fullyLabeled } : {}),
      ...(ready > 0 ? { readyReplicas: ready } : {}),
      ...(available > 0 ? { availableReplicas: available } : {}),
      observedGeneration: latest.generation,
      ...(Array.isArray(old.conditions) && old.conditions.length > 0 ? { conditions: old.conditions } : {})
    }
  })
}

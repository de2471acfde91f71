/**
 * What the workload controllers share about pods: a pod from a template with its owner,
 * readiness and availability (ready for `minReadySeconds`), finished and active pods,
 * claiming pods by selector (adopting orphans, releasing those that no longer match),
 * and which pods to delete first when scaling down.
 *
 * @internal
 */
import { clone, isObject, type JsonObject } from "../store/json.js"
import type { KindInfo } from "../store/kinds.js"
import type { FakeState } from "../store/state.js"
import type { Entry } from "../store/store.js"
import {
  builtinKind,
  conditionOf,
  controllerOf,
  controllerRef,
  editObject,
  entriesOf,
  isDeleting,
  labelsOf,
  metadataOf,
  selectorMatches
} from "./api.js"

/** @internal */
export const podKind = (state: FakeState): KindInfo => builtinKind(state, "", "v1", "pods")

/**
 * A new pod for `owner` from its template: the template's metadata and spec, the owner
 * as controller, named after `generateName` (or `name`).
 *
 * @internal
 */
export const podFromTemplate = (
  owner: Entry,
  template: unknown,
  extra: {
    readonly generateName?: string | undefined
    readonly name?: string | undefined
    readonly labels?: JsonObject | undefined
    readonly annotations?: JsonObject | undefined
    readonly finalizers?: ReadonlyArray<string> | undefined
    readonly spec?: JsonObject | undefined
  } = {}
): JsonObject => {
  const t = isObject(template) ? clone(template) : {}
  const meta = isObject(t.metadata) ? t.metadata : {}
  const labels = { ...(isObject(meta.labels) ? meta.labels : {}), ...extra.labels }
  const annotations = { ...(isObject(meta.annotations) ? meta.annotations : {}), ...extra.annotations }
  const finalizers = [...(Array.isArray(meta.finalizers) ? meta.finalizers : []), ...(extra.finalizers ?? [])]
  const metadata: JsonObject = {
    ...(extra.name !== undefined ? { name: extra.name } : { generateName: extra.generateName ?? `${owner.name}-` }),
    namespace: owner.namespace,
    ...(Object.keys(labels).length > 0 ? { labels } : {}),
    ...(Object.keys(annotations).length > 0 ? { annotations } : {}),
    ...(finalizers.length > 0 ? { finalizers } : {}),
    ownerReferences: [controllerRef(owner)]
  }
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata,
    spec: { ...(isObject(t.spec) ? t.spec : { containers: [] }), ...extra.spec }
  }
}

/** The labels of a pod template. @internal */
export const templateLabelsOf = (template: unknown): JsonObject =>
  isObject(template) && isObject(template.metadata) && isObject(template.metadata.labels) ?
    template.metadata.labels :
    {}

/** @internal */
export const phaseOf = (pod: JsonObject): unknown => (isObject(pod.status) ? pod.status.phase : undefined)

/** A pod that has finished (Succeeded or Failed). @internal */
export const isFinished = (pod: JsonObject): boolean => {
  const phase = phaseOf(pod)
  return phase === "Succeeded" || phase === "Failed"
}

/** Neither finished nor being deleted: what counts toward a workload's replicas. @internal */
export const isActive = (pod: Entry): boolean => !isFinished(pod.obj) && !isDeleting(pod)

/** The Ready condition is True. @internal */
export const isReady = (pod: JsonObject): boolean => conditionOf(pod.status, "Ready")?.status === "True"

/**
 * How long until a ready pod counts as available (ready for `minReadySeconds`): 0 when it
 * is, `Infinity` when it is not ready.
 *
 * @internal
 */
export const untilAvailable = (pod: JsonObject, minReadySeconds: number, nowMs: number): number => {
  const ready = conditionOf(pod.status, "Ready")
  if (ready?.status !== "True") return Infinity
  if (minReadySeconds <= 0) return 0
  const since = typeof ready.lastTransitionTime === "string" ? Date.parse(ready.lastTransitionTime) : nowMs
  return Math.max(0, since + minReadySeconds * 1000 - nowMs)
}

/**
 * The pods an owner controls, by its selector, as the controllers' ControllerRefManager
 * claims them: owned pods that still match, orphans that match adopted (unless the owner
 * is being deleted), owned pods that no longer match released.
 *
 * @internal
 */
export const claimPods = (state: FakeState, owner: Entry, selector: unknown): Array<Entry> => {
  const kind = podKind(state)
  const owned: Array<Entry> = []
  for (const pod of entriesOf(state, kind, owner.namespace)) {
    const ref = controllerOf(pod.obj)
    const matches = selectorMatches(selector, labelsOf(pod.obj))
    if (ref?.uid === owner.uid) {
      if (matches) {
        owned.push(pod)
      } else if (!isDeleting(owner)) {
        editObject(state, kind, pod, (draft) => {
          const meta = metadataOf(draft)
          const refs = (meta.ownerReferences as Array<JsonObject>).filter((r) => r.uid !== owner.uid)
          meta.ownerReferences = refs.length > 0 ? refs : undefined
        }, { keepGeneration: true })
      }
    } else if (ref === undefined && matches && !isDeleting(owner) && !isDeleting(pod)) {
      owned.push(editObject(state, kind, pod, (draft) => {
        const meta = metadataOf(draft)
        const refs = Array.isArray(meta.ownerReferences) ? meta.ownerReferences : []
        meta.ownerReferences = [...refs, controllerRef(owner)]
      }, { keepGeneration: true }))
    }
  }
  return owned
}

const phaseRank = (pod: JsonObject): number => {
  const phase = phaseOf(pod)
  return phase === "Pending" ? 0 : phase === "Unknown" ? 1 : phase === "Running" ? 2 : 3
}

const deletionCost = (pod: JsonObject): number => {
  const annotations = metadataOf(pod).annotations
  const cost = isObject(annotations) ? Number(annotations["controller.kubernetes.io/pod-deletion-cost"]) : NaN
  return Number.isFinite(cost) ? cost : 0
}

/**
 * Pods in the order the ReplicaSet controller deletes them: unscheduled first, then
 * Pending before Running, not ready before ready, lower deletion cost, newer first.
 *
 * @internal
 */
export const deletionOrder = (pods: ReadonlyArray<Entry>): Array<Entry> =>
  [...pods].sort((a, b) => {
    const scheduled = Number(typeof (a.obj.spec as JsonObject | undefined)?.nodeName === "string") -
      Number(typeof (b.obj.spec as JsonObject | undefined)?.nodeName === "string")
    if (scheduled !== 0) return scheduled
    const phase = phaseRank(a.obj) - phaseRank(b.obj)
    if (phase !== 0) return phase
    const ready = Number(isReady(a.obj)) - Number(isReady(b.obj))
    if (ready !== 0) return ready
    const cost = deletionCost(a.obj) - deletionCost(b.obj)
    if (cost !== 0) return cost
    return (b.creationTimestamp ?? "").localeCompare(a.creationTimestamp ?? "")
  })

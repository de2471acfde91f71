/**
 * Storage object in-use protection, as kube-controller-manager's pvc-protection and pv-protection controllers do it:
 * a new PersistentVolumeClaim gets the `kubernetes.io/pvc-protection` finalizer and a new PersistentVolume
 * `kubernetes.io/pv-protection` (the admission's part, writes/volumes.ts, on while these run), so a deleted one
 * stays, terminating, until its controller lets go (after a short delay, as the real ones take): a claim once no
 * scheduled pod that has not finished uses it, a volume once it is not Bound.
 *
 * @internal
 */
import { isObject, type JsonObject } from "../store/json.js"
import type { KindInfo } from "../store/kinds.js"
import type { FakeState } from "../store/state.js"
import type { Entry } from "../store/store.js"
import { builtinKind, dropFinalizer, entriesOf, entryOf, isDeleting, metadataOf } from "./api.js"
import { keyFor, splitKey, WorkQueue } from "./queue.js"
import * as Volumes from "../writes/volumes.js"

/**
 * How long the protection controllers take to let a deleted object go (fake clock ms): kube-controller-manager's took
 * 20 to 100 ms for an unused claim or volume on the test control plane.
 */
const releaseDelayMs = 100

const isClaim = (kind: KindInfo): boolean => kind.group === "" && kind.kind === "PersistentVolumeClaim"
const isVolume = (kind: KindInfo): boolean => kind.group === "" && kind.kind === "PersistentVolume"
const isPod = (kind: KindInfo): boolean => kind.group === "" && kind.kind === "Pod"

const hasFinalizer = (entry: Entry, finalizer: string): boolean => {
  const finalizers = metadataOf(entry.obj).finalizers
  return Array.isArray(finalizers) && finalizers.includes(finalizer)
}

/** The claims a pod names in its volumes. */
const claimsOf = (pod: JsonObject): ReadonlyArray<string> => {
  const spec = isObject(pod.spec) ? pod.spec : {}
  const volumes = Array.isArray(spec.volumes) ? spec.volumes.filter(isObject) : []
  const out: Array<string> = []
  for (const v of volumes) {
    const claim = isObject(v.persistentVolumeClaim) ? v.persistentVolumeClaim.claimName : undefined
    if (typeof claim === "string") out.push(claim)
  }
  return out
}

/** A pod that holds its claims: scheduled and not finished. */
const holdsClaims = (pod: JsonObject): boolean => {
  const spec = isObject(pod.spec) ? pod.spec : {}
  const phase = isObject(pod.status) ? pod.status.phase : undefined
  return typeof spec.nodeName === "string" && spec.nodeName !== "" && phase !== "Succeeded" && phase !== "Failed"
}

/** @internal */
export const installStorageProtection = (state: FakeState): void => {
  Volumes.protectNewObjects(state)
  const claims = () => builtinKind(state, "", "v1", "persistentvolumeclaims")
  const volumes = () => builtinKind(state, "", "v1", "persistentvolumes")
  const claimQueue = new WorkQueue(state, (key) => {
    const { name, namespace } = splitKey(key)
    const claim = entryOf(state, claims(), namespace, name)
    if (claim === undefined || !isDeleting(claim) || !hasFinalizer(claim, Volumes.pvcProtectionFinalizer)) return
    const used = entriesOf(state, builtinKind(state, "", "v1", "pods"), namespace)
      .some((pod) => holdsClaims(pod.obj) && claimsOf(pod.obj).includes(name))
    if (!used) dropFinalizer(state, claims(), claim, Volumes.pvcProtectionFinalizer)
  })
  const volumeQueue = new WorkQueue(state, (name) => {
    const volume = entryOf(state, volumes(), "", name)
    if (volume === undefined || !isDeleting(volume) || !hasFinalizer(volume, Volumes.pvProtectionFinalizer)) return
    const phase = isObject(volume.obj.status) ? volume.obj.status.phase : undefined
    if (phase !== "Bound") dropFinalizer(state, volumes(), volume, Volumes.pvProtectionFinalizer)
  })
  const podChanged = (pod: Entry) => {
    for (const claim of claimsOf(pod.obj)) claimQueue.add(keyFor(pod.namespace, claim))
  }
  state.onWrite((kind, entry) => {
    if (isClaim(kind) && isDeleting(entry)) claimQueue.addAfter(keyFor(entry.namespace, entry.name), releaseDelayMs)
    else if (isVolume(kind) && isDeleting(entry)) volumeQueue.addAfter(entry.name, releaseDelayMs)
    else if (isPod(kind)) podChanged(entry)
  })
  state.onRemove((kind, entry) => {
    if (isPod(kind)) podChanged(entry)
  })
}

/**
 * What kube-apiserver does to volumes on a write: the PersistentVolume registry's `status.lastPhaseTransitionTime`
 * (set when a volume is created, Pending, and whenever a write changes its phase without moving the time itself, as
 * the strategy's PrepareForCreate and the status strategy's PrepareForUpdate do), and the StorageObjectInUseProtection
 * admission's finalizers on a new claim or volume (controllers/storageProtection.ts lets them go).
 *
 * @internal
 */
import { isObject, type JsonObject } from "../store/json.js"
import type { KindInfo } from "../store/kinds.js"
import type { FakeState } from "../store/state.js"

/** @internal */
export const pvcProtectionFinalizer = "kubernetes.io/pvc-protection"
/** @internal */
export const pvProtectionFinalizer = "kubernetes.io/pv-protection"

/** The fakes that run the protection controllers, whose new claims and volumes get the finalizers. */
const protecting = new WeakSet<FakeState>()

/** From now on the fake's new claims and volumes get their protection finalizer. @internal */
export const protectNewObjects = (state: FakeState): void => {
  protecting.add(state)
}

/**
 * The admission's part, on a create (dry runs too): the kind's protection finalizer appended unless there. Only while
 * the fake runs the protection controllers (`controllers.storageProtection`), which are what let it go.
 *
 * @internal
 */
export const admitCreate = (state: FakeState, kind: KindInfo, obj: JsonObject): void => {
  if (kind.group !== "" || !protecting.has(state)) return
  const finalizer = kind.kind === "PersistentVolumeClaim"
    ? pvcProtectionFinalizer
    : kind.kind === "PersistentVolume"
    ? pvProtectionFinalizer
    : undefined
  if (finalizer === undefined) return
  const metadata = (obj.metadata ?? {}) as JsonObject
  const finalizers = Array.isArray(metadata.finalizers) ? metadata.finalizers : []
  if (!finalizers.includes(finalizer)) metadata.finalizers = [...finalizers, finalizer]
}

/** Sets the time of a volume's phase change (`at`, RFC 3339) on a create or a write that changes the phase. @internal */
export const phaseTransition = (kind: KindInfo, old: JsonObject | undefined, next: JsonObject, at: string): void => {
  if (kind.group !== "" || kind.kind !== "PersistentVolume" || !isObject(next.status)) return
  const status = next.status
  if (old === undefined) {
    status.lastPhaseTransitionTime = at
    return
  }
  const before = isObject(old.status) ? old.status : {}
  if (before.phase !== status.phase && status.lastPhaseTransitionTime === before.lastPhaseTransitionTime) {
    status.lastPhaseTransitionTime = at
  }
}

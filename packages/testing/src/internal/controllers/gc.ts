/**
 * The garbage collector: dependents (objects whose `ownerReferences` name an owner) go
 * when their last owner is gone (background), are deleted before an owner that carries
 * `foregroundDeletion` goes (which waits for those with `blockOwnerDeletion`), or lose
 * their reference to an owner that carries `orphan`, which then goes alone.
 *
 * @internal
 */
import { foregroundFinalizer, orphanFinalizer } from "../writes/deletes.js"
import { isObject, type JsonObject } from "../store/json.js"
import type { KindInfo } from "../store/kinds.js"
import type { FakeState } from "../store/state.js"
import type { Entry } from "../store/store.js"
import { dropFinalizer, editObject, entryOf, isDeleting, metadataOf, removeObject } from "./api.js"
import { WorkQueue } from "./queue.js"

const ownerRefs = (obj: JsonObject): Array<JsonObject> => {
  const refs = metadataOf(obj).ownerReferences
  return Array.isArray(refs) ? refs.filter(isObject) : []
}

const finalizersOf = (obj: JsonObject): ReadonlyArray<unknown> => {
  const f = metadataOf(obj).finalizers
  return Array.isArray(f) ? f : []
}

/** @internal */
export const installGarbageCollector = (state: FakeState): void => {
  /** Owners being deleted in the foreground or orphaning: uid -> where they are. */
  const deleting = new Map<string, { readonly kind: KindInfo; readonly namespace: string; readonly name: string }>()
  /** Owners that are gone, whose dependents are to be looked at. */
  const gone = new Set<string>()
  const queue = new WorkQueue(state, (uid) => {
    if (gone.delete(uid)) collectOrphans(state, uid)
    const owner = deleting.get(uid)
    if (owner === undefined) return
    const entry = entryOf(state, owner.kind, owner.namespace, owner.name)
    if (entry === undefined || entry.uid !== uid || !isDeleting(entry)) {
      deleting.delete(uid)
      return
    }
    const finalizers = finalizersOf(entry.obj)
    if (finalizers.includes(orphanFinalizer)) orphan(state, owner.kind, entry)
    else if (finalizers.includes(foregroundFinalizer)) foreground(state, owner.kind, entry)
    else deleting.delete(uid)
  })
  state.onWrite((kind, entry) => {
    if (isDeleting(entry)) {
      const finalizers = finalizersOf(entry.obj)
      if (finalizers.includes(orphanFinalizer) || finalizers.includes(foregroundFinalizer)) {
        deleting.set(entry.uid, { kind, namespace: entry.namespace, name: entry.name })
        queue.add(entry.uid)
      }
    }
    if (deleting.size > 0) for (const owner of entry.owners) if (deleting.has(owner)) queue.add(owner)
  })
  state.onRemove((_kind, removed) => {
    gone.add(removed.uid)
    queue.add(removed.uid)
    if (deleting.size > 0) for (const owner of removed.owners) if (deleting.has(owner)) queue.add(owner)
  })
}

/** Whether an owner reference names an object that exists (with that uid). */
const ownerExists = (state: FakeState, dependent: Entry, ref: JsonObject): boolean => {
  if (typeof ref.apiVersion !== "string" || typeof ref.kind !== "string" || typeof ref.name !== "string") return false
  const kind = state.registry.lookup(ref.apiVersion, ref.kind)
  if (kind === undefined) return false
  return entryOf(state, kind, dependent.namespace, ref.name)?.uid === ref.uid
}

const withoutOwner = (state: FakeState, kind: KindInfo, dependent: Entry, uid: string): void => {
  editObject(state, kind, dependent, (draft) => {
    const refs = ownerRefs(draft).filter((r) => r.uid !== uid)
    metadataOf(draft).ownerReferences = refs.length > 0 ? refs : undefined
  }, { keepGeneration: true })
}

/** An owner went: a dependent with no other owner left goes too (in the background); else it forgets the owner. */
const collectOrphans = (state: FakeState, uid: string): void => {
  for (const { collection, entry } of state.store.dependentsOf(uid)) {
    const others = ownerRefs(entry.obj).filter((r) => r.uid !== uid)
    if (others.some((r) => ownerExists(state, entry, r))) withoutOwner(state, collection.kind, entry, uid)
    else if (!isDeleting(entry)) removeObject(state, collection.kind, entry, { propagationPolicy: "Background" })
  }
}

/** Foreground deletion: dependents are deleted; the owner goes once none that blocks it is left. */
const foreground = (state: FakeState, kind: KindInfo, owner: Entry): void => {
  let blocked = false
  for (const { collection, entry } of state.store.dependentsOf(owner.uid)) {
    if (!isDeleting(entry)) {
      const policy = state.store.dependentsOf(entry.uid).length > 0 ? "Foreground" : "Background"
      removeObject(state, collection.kind, entry, { propagationPolicy: policy })
    }
    const still = state.store.existing(collection.kind)?.entries.get(entry.key)
    if (still === undefined || still.uid !== entry.uid) continue
    if (ownerRefs(still.obj).some((r) => r.uid === owner.uid && r.blockOwnerDeletion === true)) blocked = true
  }
  if (!blocked) {
    const current = entryOf(state, kind, owner.namespace, owner.name)
    if (current !== undefined && current.uid === owner.uid) dropFinalizer(state, kind, current, foregroundFinalizer)
  }
}

/** Orphaning: dependents lose their reference to the owner, then the owner goes. */
const orphan = (state: FakeState, kind: KindInfo, owner: Entry): void => {
  for (const { collection, entry } of state.store.dependentsOf(owner.uid)) {
    withoutOwner(state, collection.kind, entry, owner.uid)
  }
  const current = entryOf(state, kind, owner.namespace, owner.name)
  if (current !== undefined && current.uid === owner.uid) dropFinalizer(state, kind, current, orphanFinalizer)
}

/**
 * The controllers' own API: what kube-controller-manager, the scheduler and the kubelet
 * do through the API server, done on the store. Creates are admitted (no new content in
 * a terminating namespace) and named from `generateName`; updates that change nothing
 * are not written; deletes go through the registry's graceful deletion. Writes reach
 * watches and the other controllers like any other.
 *
 * @internal
 */
import { deleteObject } from "../writes/deletes.js"
import { deepEqual, isObject, type JsonObject, randomSuffix } from "../store/json.js"
import type { KindInfo } from "../store/kinds.js"
import { type FakeState, hasFinalizers } from "../store/state.js"
import { StatusError } from "../serve/statusBodies.js"
import { type Entry, keyOf } from "../store/store.js"
import * as Meta from "../validation/meta.js"
import type { Errors } from "../validation/rules.js"
import { finish } from "../writes/writes.js"

/** A built-in kind by group and plural (its stored version). @internal */
export const builtinKind = (state: FakeState, group: string, version: string, plural: string): KindInfo => {
  const kind = state.registry.byResource(group, version, plural)
  if (kind === undefined) throw new Error(`the fake cluster does not serve ${plural} in ${group}/${version}`)
  return kind
}

/** The objects of a kind in a namespace (every namespace when undefined), sorted by key. @internal */
export const entriesOf = (state: FakeState, kind: KindInfo, namespace: string | undefined): Array<Entry> => {
  const collection = state.store.existing(kind)
  if (collection === undefined || collection.entries.size === 0) return []
  const keys = collection.keys()
  const { end, start } = collection.range(namespace, undefined)
  const out: Array<Entry> = []
  for (let i = start; i < end; i++) out.push(collection.entries.get(keys[i]!)!)
  return out
}

/** One object, or undefined. @internal */
export const entryOf = (state: FakeState, kind: KindInfo, namespace: string, name: string): Entry | undefined =>
  state.store.existing(kind)?.entries.get(keyOf(kind.namespaced ? namespace : "", name))

/** @internal */
export const metadataOf = (obj: JsonObject): JsonObject => obj.metadata as JsonObject

/** Whether an object is marked for deletion. @internal */
export const isDeleting = (entry: Entry): boolean => metadataOf(entry.obj).deletionTimestamp !== undefined

/** A seeded object: the controllers leave it as it was given until a write through the API changes it. @internal */
export const isSeed = (entry: Entry, prev: Entry | undefined): boolean => prev === entry

/** The controlling owner of an object (`ownerReferences` with `controller: true`). @internal */
export const controllerOf = (obj: JsonObject): JsonObject | undefined => {
  const refs = metadataOf(obj).ownerReferences
  if (!Array.isArray(refs)) return undefined
  return refs.find((r): r is JsonObject => isObject(r) && r.controller === true)
}

/** An owner reference that makes `owner` the controller of its dependent. @internal */
export const controllerRef = (owner: Entry): JsonObject => ({
  apiVersion: owner.obj.apiVersion,
  kind: owner.obj.kind,
  name: owner.name,
  uid: owner.uid,
  controller: true,
  blockOwnerDeletion: true
})

/**
 * Creates an object as a controller would through the API: `generateName` picks a free
 * name, the server fills in what it owns, a terminating namespace refuses it
 * (`undefined`).
 *
 * @internal
 */
export const createObject = (state: FakeState, kind: KindInfo, obj: JsonObject): Entry | undefined => {
  const metadata = metadataOf(obj)
  const namespace = kind.namespaced ? metadata.namespace as string : ""
  const collection = state.collectionOf(kind)
  if (typeof metadata.name !== "string" || metadata.name === "") {
    const prefix = metadata.generateName as string
    let name = `${prefix}${randomSuffix()}`
    while (collection.entries.has(keyOf(namespace, name))) name = `${prefix}${randomSuffix()}`
    metadata.name = name
  }
  const name = metadata.name as string
  if (collection.entries.has(keyOf(namespace, name))) return undefined
  try {
    state.admitNamespace({ kind, namespace: kind.namespaced ? namespace : undefined, name }, "create")
  } catch (e) {
    if (e instanceof StatusError) return undefined
    throw e
  }
  finish(kind, obj, undefined, undefined, true)
  metadata.creationTimestamp = state.now()
  const entry = state.store.write(collection, namespace, name, (rv) => {
    metadata.resourceVersion = String(rv)
    return { obj, managers: [] }
  })
  state.afterWrite(kind, entry, undefined)
  return entry
}

/**
 * Stores a controller's change of an object: nothing when it changed nothing. The
 * `generation` moves with the spec unless `keepGeneration` (a binding, a status). An
 * object marked for deletion whose last finalizer went is removed.
 *
 * @internal
 */
export const updateObject = (
  state: FakeState,
  kind: KindInfo,
  prev: Entry,
  next: JsonObject,
  options: { readonly keepGeneration?: boolean | undefined } = {}
): Entry => {
  const metadata = metadataOf(next)
  metadata.resourceVersion = String(prev.rv)
  if (options.keepGeneration === true) {
    // a kind without a generation keeps having none (the entry's own counts from 1)
    const before = metadataOf(prev.obj).generation
    if (before === undefined) delete metadata.generation
    else metadata.generation = before
  }
  // compared as parsed objects: serializing the candidate for this would serialize it twice
  if (deepEqual(next, prev.obj)) return prev
  const entry = state.store.write(state.collectionOf(kind), prev.namespace, prev.name, (rv) => {
    metadata.resourceVersion = String(rv)
    return {
      obj: next,
      managers: prev.managers,
      generationFrom: options.keepGeneration === true ? undefined : prev
    }
  })
  state.afterWrite(kind, entry, prev)
  if (metadata.deletionTimestamp !== undefined && !hasFinalizers(entry.obj)) return state.removeEntry(kind, entry)
  return entry
}

/** Edits a copy of an object and stores it (see `updateObject`). @internal */
export const editObject = (
  state: FakeState,
  kind: KindInfo,
  prev: Entry,
  edit: (draft: JsonObject) => void,
  options: { readonly keepGeneration?: boolean | undefined } = {}
): Entry => {
  const draft = prev.copy()
  edit(draft)
  return updateObject(state, kind, prev, draft, options)
}

/** Deletes an object as a controller's DELETE would (graceful, with finalizers). @internal */
export const removeObject = (
  state: FakeState,
  kind: KindInfo,
  entry: Entry,
  options: JsonObject = {}
): void => {
  const current = state.store.existing(kind)?.entries.get(entry.key)
  if (current === undefined || current.uid !== entry.uid) return
  deleteObject(state, kind, current, options)
}

/** Takes a finalizer off an object (which goes once it was the last and it is being deleted). @internal */
export const dropFinalizer = (state: FakeState, kind: KindInfo, entry: Entry, finalizer: string): Entry =>
  editObject(state, kind, entry, (draft) => {
    const metadata = metadataOf(draft)
    const finalizers = Array.isArray(metadata.finalizers) ? metadata.finalizers : []
    const kept = finalizers.filter((f) => f !== finalizer)
    if (kept.length === finalizers.length) return
    if (kept.length > 0) metadata.finalizers = kept
    else metadata.finalizers = undefined
  }, { keepGeneration: true })

/** The condition of a type in a status, or undefined. @internal */
export const conditionOf = (status: unknown, type: string): JsonObject | undefined => {
  if (!isObject(status) || !Array.isArray(status.conditions)) return undefined
  return status.conditions.find((c): c is JsonObject => isObject(c) && c.type === type)
}

/**
 * Sets a condition in `status.conditions` as the controllers do: `lastTransitionTime`
 * moves only when the status changes (`lastUpdateTime`, where the kind has one, on every
 * change of reason or message).
 *
 * @internal
 */
export const setCondition = (
  status: JsonObject,
  condition: {
    readonly type: string
    readonly status: "True" | "False" | "Unknown"
    readonly reason?: string | undefined
    readonly message?: string | undefined
  },
  at: string,
  fields: {
    readonly lastUpdateTime?: boolean
    readonly lastProbeTime?: boolean
    readonly observedGeneration?: number
  } = {}
): void => {
  const conditions = Array.isArray(status.conditions) ? status.conditions as Array<JsonObject> : []
  const index = conditions.findIndex((c) => c.type === condition.type)
  const old = index === -1 ? undefined : conditions[index]!
  const same = old !== undefined && old.status === condition.status && old.reason === condition.reason &&
    old.message === condition.message
  const next: JsonObject = { type: condition.type, status: condition.status }
  if (fields.observedGeneration !== undefined) next.observedGeneration = fields.observedGeneration
  if (fields.lastProbeTime === true) next.lastProbeTime = old?.lastProbeTime ?? null
  if (fields.lastUpdateTime === true) next.lastUpdateTime = same ? old!.lastUpdateTime : at
  next.lastTransitionTime = old !== undefined && old.status === condition.status ? old.lastTransitionTime : at
  if (condition.reason !== undefined) next.reason = condition.reason
  if (condition.message !== undefined) next.message = condition.message
  if (index === -1) conditions.push(next)
  else conditions[index] = next
  status.conditions = conditions
}

/**
 * Whether a label selector (`matchLabels`, `matchExpressions`) selects these labels; a
 * missing one selects nothing, an empty one everything.
 *
 * @internal
 */
export const selectorMatches: (selector: unknown, labels: unknown) => boolean = Meta.selectorMatches

/** Whether a selector is empty (selects everything for a PDB, nothing for a workload). @internal */
export const isEmptySelector = (selector: unknown): boolean => isObject(selector) && Meta.isEmptySelector(selector)

/**
 * Whether a controller can use a selector: `LabelSelectorAsSelector` takes it (known
 * operators, values where they belong, valid keys and values). With one it does not,
 * kube-controller-manager's sync fails before it writes anything.
 *
 * @internal
 */
export const isUsableSelector = (selector: unknown): selector is JsonObject => {
  if (!isObject(selector)) return false
  const errors: Errors = []
  Meta.validateLabelSelector(selector, "spec.selector", errors)
  return errors.length === 0
}

/** An object's labels. @internal */
export const labelsOf = (obj: JsonObject): JsonObject => {
  const labels = metadataOf(obj).labels
  return isObject(labels) ? labels : {}
}

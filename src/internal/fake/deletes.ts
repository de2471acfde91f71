/**
 * Deletes: one object (with uid and resourceVersion preconditions) or a collection by
 * selector, finalizers (marked for deletion until they are gone), grace periods,
 * namespaces taking their contents with them, and garbage collection of dependents
 * (unless the propagation policy is Orphan).
 *
 * @internal
 */
import { json, type RawRequest, type RawResponse, readBody } from "./http.js"
import { isObject, type JsonObject, now } from "./json.js"
import { apiVersionOf, type KindInfo } from "./kinds.js"
import { listJson, matchers } from "./reads.js"
import { type FakeState, hasFinalizers, type Route } from "./state.js"
import * as Status from "./status.js"
import { Entry } from "./store.js"

const deleteOptions = async (query: Record<string, string>, request: RawRequest): Promise<JsonObject> => {
  const body = request.method.toUpperCase() === "DELETE" ? await readBody(request) : undefined
  const options: JsonObject = isObject(body) ? { ...body } : {}
  if (query.propagationPolicy !== undefined) options.propagationPolicy = query.propagationPolicy
  if (query.gracePeriodSeconds !== undefined) options.gracePeriodSeconds = Number(query.gracePeriodSeconds)
  if (query.dryRun !== undefined) options.dryRun = [query.dryRun]
  const uid = query["preconditions.uid"]
  const resourceVersion = query["preconditions.resourceVersion"]
  if (uid !== undefined || resourceVersion !== undefined) {
    options.preconditions = {
      ...(isObject(options.preconditions) ? options.preconditions : {}),
      ...(uid !== undefined ? { uid } : {}),
      ...(resourceVersion !== undefined ? { resourceVersion } : {})
    }
  }
  const policy = options.propagationPolicy
  if (policy !== undefined && policy !== "Orphan" && policy !== "Background" && policy !== "Foreground") {
    throw Status.invalid({ group: "meta.k8s.io", plural: "deleteoptions", kind: "DeleteOptions" }, "", [{
      reason: "FieldValueNotSupported",
      field: "propagationPolicy",
      message: `Unsupported value: ${JSON.stringify(policy)}: supported values: "Foreground", "Background", "Orphan", "nil"`
    }])
  }
  return options
}

/** DELETE of one object: preconditions, finalizers, grace, propagation. @internal */
export const deleteOne = async (
  state: FakeState,
  route: Route,
  query: Record<string, string>,
  request: RawRequest
): Promise<RawResponse> => {
  const options = await deleteOptions(query, request)
  return deleteWithOptions(state, route, options)
}

/** Deletes one object with options already read (an eviction's `deleteOptions`). @internal */
export const deleteWithOptions = (state: FakeState, route: Route, options: JsonObject): RawResponse => {
  const entry = state.entryOf(route)
  checkPreconditions(route.kind, entry, options)
  const dryRun = Array.isArray(options.dryRun) && options.dryRun.includes("All")
  const result = deleteEntry(state, route.kind, entry, options, dryRun)
  return deleteAnswer(state, route, result.entry, result.gone)
}

/** The uid and resourceVersion preconditions of a delete (409 when one fails). */
const checkPreconditions = (kind: KindInfo, entry: Entry, options: JsonObject): void => {
  const meta = entry.obj.metadata as JsonObject
  const pre = isObject(options.preconditions) ? options.preconditions : {}
  if (typeof pre.uid === "string" && pre.uid !== meta.uid) {
    throw Status.preconditionFailed(
      kind,
      entry.name,
      `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${String(meta.uid)}`
    )
  }
  if (typeof pre.resourceVersion === "string" && pre.resourceVersion !== meta.resourceVersion) {
    throw Status.preconditionFailed(
      kind,
      entry.name,
      `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ` +
        `ResourceVersion in object meta: ${String(meta.resourceVersion)}`
    )
  }
}

const deleteAnswer = (state: FakeState, route: Route, entry: Entry, gone: boolean): RawResponse => {
  const kind = route.kind
  const returnsObject = !gone || kind.custom ||
    (kind.group === "" && (kind.kind === "Pod" || kind.kind === "Namespace"))
  if (returnsObject) return json(200, state.jsonIn(entry, route.version))
  return json(200, Status.success(kind, entry.name, entry.uid))
}

/** Deletes (or marks for deletion, when finalizers remain) and cascades. */
const deleteEntry = (
  state: FakeState,
  kind: KindInfo,
  entry: Entry,
  options: JsonObject,
  dryRun: boolean
): { readonly entry: Entry; readonly gone: boolean } => {
  const grace = typeof options.gracePeriodSeconds === "number" ? options.gracePeriodSeconds : undefined
  const isPod = kind.group === "" && kind.kind === "Pod"
  const isNamespace = kind.group === "" && kind.kind === "Namespace"
  const markDeleting = (obj: JsonObject): JsonObject => {
    const metadata = { ...(obj.metadata as JsonObject) }
    metadata.deletionTimestamp ??= now()
    metadata.deletionGracePeriodSeconds ??= grace ?? (isPod ? 30 : 0)
    const out: JsonObject = { ...obj, metadata }
    if (isNamespace) out.status = { ...(isObject(obj.status) ? obj.status : {}), phase: "Terminating" }
    return out
  }
  if (dryRun) {
    const obj = markDeleting(entry.obj)
    return {
      entry: Entry.of(
        obj,
        entry.namespace,
        entry.name,
        entry.rv,
        entry.managers,
        kind.fieldSelectors,
        state.store.recent
      ),
      gone: !hasFinalizers(entry.obj)
    }
  }
  if (hasFinalizers(entry.obj)) {
    if ((entry.obj.metadata as JsonObject).deletionTimestamp !== undefined) return { entry, gone: false }
    const next = state.store.write(state.collectionOf(kind), entry.namespace, entry.name, (rv) => {
      const obj = markDeleting(entry.obj)
      ;(obj.metadata as JsonObject).resourceVersion = String(rv)
      return { obj, managers: entry.managers }
    })
    return { entry: next, gone: false }
  }
  const policy = options.propagationPolicy
  if (isNamespace) removeNamespaceContents(state, entry.name)
  const gone = state.removeEntry(kind, entry, isPod || isNamespace ? markDeleting : undefined)
  if (policy !== "Orphan") removeDependents(state, entry.uid)
  return { entry: gone, gone: true }
}

/** Removes every object in a namespace (the namespace itself stays). @internal */
export const removeNamespaceContents = (state: FakeState, namespace: string): void => {
  for (const collection of [...state.store.allCollections()]) {
    if (!collection.kind.namespaced) continue
    const { end, start } = collection.range(namespace, undefined)
    const keys = collection.keys().slice(start, end)
    for (const key of keys) {
      const e = collection.entries.get(key)
      if (e !== undefined) state.removeEntry(collection.kind, e)
    }
  }
}

/** Garbage collection: objects whose ownerReferences name a deleted uid. */
const removeDependents = (state: FakeState, uid: string): void => {
  for (const { collection, entry } of state.store.dependentsOf(uid)) {
    state.removeEntry(collection.kind, entry)
    removeDependents(state, entry.uid)
  }
}

/** DELETE of a collection: the objects its selectors match, as a list. @internal */
export const deleteCollection = async (
  state: FakeState,
  route: Route,
  query: Record<string, string>,
  request: RawRequest
): Promise<RawResponse> => {
  const options = await deleteOptions(query, request)
  const matches = matchers(route, query)
  const collection = state.collectionOf(route.kind)
  const keys = collection.keys()
  const { end, start } = collection.range(route.namespace, undefined)
  const targets: Array<Entry> = []
  for (let i = start; i < end; i++) {
    const e = collection.entries.get(keys[i]!)!
    if (matches(e.attrs)) targets.push(e)
  }
  const dryRun = Array.isArray(options.dryRun) && options.dryRun.includes("All")
  const items: Array<string> = []
  for (const e of targets) {
    const current = collection.entries.get(e.key)
    if (current === undefined) continue
    // as the API server's DeleteCollection: the first failed precondition fails the call
    checkPreconditions(route.kind, current, options)
    items.push(state.jsonIn(deleteEntry(state, route.kind, current, options, dryRun).entry, route.version))
  }
  const apiVersion = apiVersionOf(route.kind.group, route.version)
  const metadata = { resourceVersion: String(state.store.resourceVersion) }
  return json(200, listJson(route.kind, apiVersion, metadata, items.join(",")))
}


/**
 * Writes: create, replace, patch (JSON, merge, strategic merge) and server-side apply,
 * with the API server's checks (names, body against URL, preconditions, media types),
 * the fields it owns (uid, timestamps, generation, resourceVersion, status), field
 * managers, dry runs, and no-op writes that keep the stored version. Also the fake's
 * own changes (controls, simulation), which skip all of that.
 *
 * @internal
 */
import * as MicroTime from "./microtime.js"
import { isTrue, json, mediaType, type RawRequest, type RawResponse, readBody } from "./http.js"
import { child, clone, deepEqual, drop, isObject, type JsonObject, now, randomSuffix } from "./json.js"
import { apiVersionOf, type KindInfo } from "./kinds.js"
import * as FieldValidation from "./fieldvalidation.js"
import * as Managed from "./managed.js"
import { jsonPatch, mergePatch, PatchError, strategicMerge } from "./patch.js"
import { type FakeState, hasFinalizers, type Route, routeApiVersion } from "./state.js"
import * as Status from "./status.js"
import { type Entry, keyOf } from "./store.js"
import type { FakeObject, ObjectRef } from "./types.js"


const PATCH_TYPES = [
  "application/json-patch+json",
  "application/merge-patch+json",
  "application/strategic-merge-patch+json",
  "application/apply-patch+yaml"
]

const dns1123Label = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/
const dns1123Subdomain = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/

const nameProblem = (rule: KindInfo["nameRule"], name: string): string | undefined => {
  if (rule === "path") {
    if (name === "." || name === ".." || name.includes("/") || name.includes("%")) {
      return `may not contain '/' or '%' and may not be '.' or '..'`
    }
    return undefined
  }
  if (rule === "label") {
    if (name.length > 63) return "must be no more than 63 characters"
    if (!dns1123Label.test(name)) {
      return `a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`
    }
    return undefined
  }
  if (name.length > 253) return "must be no more than 253 characters"
  if (!dns1123Subdomain.test(name)) {
    return `a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`
  }
  return undefined
}

/** Fields outside metadata and status: a change to them bumps `generation`. */
const specChanged = (a: JsonObject, b: JsonObject): boolean => {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)])
  for (const k of keys) {
    if (k === "metadata" || k === "status" || k === "apiVersion" || k === "kind") continue
    if (!deepEqual(a[k], b[k])) return true
  }
  return false
}

const managerFromUserAgent = (userAgent: string | undefined): string => {
  const prefix = (userAgent ?? "").split("/")[0]!.trim()
  return prefix === "" ? "unknown" : prefix.slice(0, 128)
}

const serverOwnedMetadata = [
  "uid",
  "resourceVersion",
  "managedFields",
  "creationTimestamp",
  "generation",
  "selfLink",
  "deletionTimestamp",
  "deletionGracePeriodSeconds"
]

/**
 * Whether a write leaves field ownership as it was: the same managers owning the same
 * fields. The time of an entry is not compared: a repeated apply is a no-op on the API
 * server, which keeps the object (and its resourceVersion) as it was.
 */
const managersEqual = (a: ReadonlyArray<Managed.ManagerEntry>, b: ReadonlyArray<Managed.ManagerEntry>): boolean =>
  a.length === b.length && a.every((e, i) => {
    const other = b[i]!
    return e === other || (
      e.manager === other.manager && e.operation === other.operation && e.apiVersion === other.apiVersion &&
      e.fields.size === other.fields.size && [...e.fields].every((f) => other.fields.has(f))
    )
  })

/** The field manager of a request: `fieldManager`, else the user agent's first word. */
export const fieldManagerOf = (query: Record<string, string>, request: RawRequest): string => {
  return query.fieldManager !== undefined && query.fieldManager !== ""
    ? query.fieldManager
    : managerFromUserAgent(request.header("user-agent"))
}

/** Checks the body of a create or replace against the URL and returns a copy. */
export const checkBody = (route: Route, body: unknown): JsonObject => {
  if (!isObject(body)) throw Status.badRequest("the body of the request must be a JSON object")
  const apiVersion = apiVersionOf(route.kind.group, route.version)
  // like the API server, the URL supplies a missing apiVersion or kind
  if (body.apiVersion !== undefined && body.apiVersion !== "" && body.apiVersion !== apiVersion) {
    throw Status.badRequest(
      `the API version in the data (${String(body.apiVersion)}) does not match the expected API version ` +
        `(${apiVersion})`
    )
  }
  if (body.kind !== undefined && body.kind !== "" && body.kind !== route.kind.kind) {
    throw Status.badRequest(
      `the kind in the data (${body.kind}) does not match the expected kind (${route.kind.kind})`
    )
  }
  const obj: JsonObject = { apiVersion, kind: route.kind.kind, ...clone(body) }
  obj.apiVersion = apiVersion
  obj.kind = route.kind.kind
  const metadata = isObject(obj.metadata) ? obj.metadata : (obj.metadata = {})
  if (route.kind.namespaced) {
    if (metadata.namespace !== undefined && metadata.namespace !== "" && metadata.namespace !== route.namespace) {
      throw Status.badRequest("the namespace of the provided object does not match the namespace sent on the request")
    }
    metadata.namespace = route.namespace
  } else {
    drop(metadata, "namespace")
  }
  return obj
}

/** Fails with 422 Invalid when a name breaks the kind's naming rule. @internal */
export const validateName = (kind: KindInfo, name: string): void => {
  const problem = nameProblem(kind.nameRule, name)
  if (problem !== undefined) {
    throw Status.invalid(kind, name, [{
      reason: "FieldValueInvalid",
      field: "metadata.name",
      message: `Invalid value: ${JSON.stringify(name)}: ${problem}`
    }])
  }
}

/**
 * Fills in what the server owns on a new or changed object: identity, uid,
 * creationTimestamp, generation, resourceVersion and (for kinds with a status
 * subresource) the status.
 */
export const finish = (
  kind: KindInfo,
  obj: JsonObject,
  prev: JsonObject | undefined,
  rv: number | undefined,
  mainResource: boolean
): JsonObject => {
  MicroTime.checkMicroTimes(kind, obj)
  const metadata = child(obj, "metadata")
  const prevMeta = prev !== undefined ? (prev.metadata as JsonObject) : undefined
  if (prevMeta !== undefined) {
    metadata.uid = prevMeta.uid
    metadata.creationTimestamp = prevMeta.creationTimestamp
    if (prevMeta.deletionTimestamp !== undefined) {
      metadata.deletionTimestamp = prevMeta.deletionTimestamp
      metadata.deletionGracePeriodSeconds = prevMeta.deletionGracePeriodSeconds
    } else {
      drop(metadata, "deletionTimestamp")
      drop(metadata, "deletionGracePeriodSeconds")
    }
    const generation = typeof prevMeta.generation === "number" ? prevMeta.generation : 1
    metadata.generation = specChanged(prev!, obj) ? generation + 1 : generation
    if (kind.hasStatus && mainResource) {
      if (prev!.status !== undefined) obj.status = clone(prev!.status)
      else drop(obj, "status")
    }
  } else {
    metadata.uid = crypto.randomUUID()
    metadata.creationTimestamp = now()
    metadata.generation = 1
    drop(metadata, "deletionTimestamp")
    drop(metadata, "deletionGracePeriodSeconds")
    if (kind.hasStatus && mainResource) {
      if (kind.kind === "Pod" && kind.group === "") obj.status = { phase: "Pending", qosClass: "BestEffort" }
      else if (kind.kind === "Namespace" && kind.group === "") obj.status = { phase: "Active" }
      else drop(obj, "status")
    }
    if (kind.kind === "Namespace" && kind.group === "") {
      const spec = child(obj, "spec")
      if (!Array.isArray(spec.finalizers)) spec.finalizers = ["kubernetes"]
    }
  }
  drop(metadata, "selfLink")
  if (rv !== undefined) metadata.resourceVersion = String(rv)
  else drop(metadata, "resourceVersion")
  return obj
}

/** Puts the field managers into `metadata.managedFields` (or drops it). @internal */
export const withManagedFields = (obj: JsonObject, managers: ReadonlyArray<Managed.ManagerEntry>): JsonObject => {
  const metadata = obj.metadata as JsonObject
  if (managers.length > 0) metadata.managedFields = Managed.render(managers)
  else drop(metadata, "managedFields")
  return obj
}

const stripForCompare = (obj: JsonObject): JsonObject => {
  const metadata = { ...(obj.metadata as JsonObject) }
  drop(metadata, "resourceVersion")
  drop(metadata, "managedFields")
  return { ...obj, metadata }
}

/**
 * Writes a new version of an object (replace, patch, apply, status): no-op writes
 * keep the stored version, like the API server.
 */
export const commit = (
  state: FakeState,
  route: Route,
  prev: Entry | undefined,
  candidate: JsonObject,
  managers: ReadonlyArray<Managed.ManagerEntry>,
  dryRun: boolean,
  mainResource = true
): {
  readonly status: number
  readonly entry: Entry | undefined
  readonly json: string
  readonly warnings: ReadonlyArray<string>
} => {
  const kind = route.kind
  const namespace = route.namespace ?? ""
  const name = route.name ?? (candidate.metadata as JsonObject).name as string
  const obj = finish(kind, candidate, prev?.obj, undefined, mainResource)
  const warnings = state.admit({
    route: { ...route, name },
    operation: prev === undefined ? "CREATE" : "UPDATE",
    object: obj,
    oldObject: prev?.obj,
    dryRun
  })
  if (prev !== undefined) {
    const unchanged = deepEqual(stripForCompare(obj), stripForCompare(prev.obj)) &&
      managersEqual(managers, prev.managers)
    if (unchanged) return { status: 200, entry: prev, json: state.jsonIn(prev, route.version), warnings }
  }
  if (dryRun) {
    withManagedFields(obj, managers)
    if (prev !== undefined) (obj.metadata as JsonObject).resourceVersion = String(prev.rv)
    return { status: prev === undefined ? 201 : 200, entry: undefined, json: JSON.stringify(obj), warnings }
  }
  if (kind.namespaced) state.ensureNamespace(namespace)
  const entry = state.store.write(state.collectionOf(kind), namespace, name, (rv) => {
    (obj.metadata as JsonObject).resourceVersion = String(rv)
    return { obj: withManagedFields(obj, managers), managers }
  })
  state.afterWrite(kind, entry, prev)
  const metadata = entry.obj.metadata as JsonObject
  if (metadata.deletionTimestamp !== undefined && !hasFinalizers(entry.obj)) {
    const gone = state.removeEntry(kind, entry)
    return { status: 200, entry: gone, json: state.jsonIn(gone, route.version), warnings }
  }
  return { status: prev === undefined ? 201 : 200, entry, json: state.jsonIn(entry, route.version), warnings }
}

/**
 * What a write through a subresource keeps of the object sent: `status` its `.status`,
 * a pod's `ephemeralcontainers` its `spec.ephemeralContainers` (added only: one cannot
 * be removed or changed), a pod's `resize` its containers' `resources`. The rest is the
 * stored object's.
 */
const subresourceWrite = (route: Route, prev: Entry, obj: JsonObject): JsonObject => {
  const next = prev.copy()
  const sent = isObject(obj.spec) ? obj.spec : {}
  switch (route.subresource) {
    case "status":
      return { ...next, status: obj.status }
    case "ephemeralcontainers": {
      const had = Array.isArray(child(next, "spec").ephemeralContainers)
        ? (child(next, "spec").ephemeralContainers as Array<JsonObject>)
        : []
      const given = Array.isArray(sent.ephemeralContainers) ? (sent.ephemeralContainers as Array<unknown>) : []
      for (const old of had) {
        const same = given.find((c) => isObject(c) && c.name === old.name)
        if (same === undefined || !deepEqual(same, old)) {
          throw Status.invalid(route.kind, route.name!, [{
            reason: "FieldValueForbidden",
            field: "spec.ephemeralContainers",
            message: "Forbidden: existing ephemeral containers may not be changed"
          }])
        }
      }
      child(next, "spec").ephemeralContainers = given
      return next
    }
    case "resize": {
      const containers = child(next, "spec").containers
      const given = Array.isArray(sent.containers) ? sent.containers : []
      if (Array.isArray(containers)) {
        for (const c of containers) {
          const same = given.find((g) => isObject(g) && isObject(c) && g.name === c.name)
          if (isObject(c) && isObject(same)) c.resources = same.resources
        }
      }
      return next
    }
    default:
      throw Status.methodNotAllowed()
  }
}

/** The object a POST or PUT sends (JSON or YAML), checked, and the warnings of its field validation. */
const objectOf = async (route: Route, query: Record<string, string>, request: RawRequest) => {
  const type = mediaType(request.header("content-type"))
  if (type !== "" && type !== "application/json" && type !== "application/yaml") {
    throw Status.unsupportedMediaType(type, ["application/json", "application/yaml"])
  }
  const obj = checkBody(route, await readBody(request))
  return { obj, warnings: await FieldValidation.check(route, query, obj) }
}

/** POST of a new object (a name or generateName is required). @internal */
export const create = async (
  state: FakeState,
  route: Route,
  query: Record<string, string>,
  request: RawRequest
): Promise<RawResponse> => {
  const { obj, warnings } = await objectOf(route, query, request)
  const metadata = obj.metadata as JsonObject
  const collection = state.collectionOf(route.kind)
  const namespace = route.namespace ?? ""
  if (typeof metadata.name !== "string" || metadata.name === "") {
    if (typeof metadata.generateName === "string" && metadata.generateName !== "") {
      let name = `${metadata.generateName}${randomSuffix()}`
      while (collection.entries.has(keyOf(namespace, name))) name = `${metadata.generateName}${randomSuffix()}`
      metadata.name = name
    } else {
      throw Status.invalid(route.kind, "", [{
        reason: "FieldValueRequired",
        field: "metadata.name",
        message: "Required value: name or generateName is required"
      }])
    }
  }
  const name = metadata.name as string
  validateName(route.kind, name)
  if (collection.entries.has(keyOf(namespace, name))) throw Status.alreadyExists(route.kind, name)
  const dryRun = query.dryRun === "All"
  finish(route.kind, obj, undefined, undefined, true)
  const managers = Managed.recordUpdate([], fieldManagerOf(query, request), routeApiVersion(route), undefined, obj)
  const result = commit(state, { ...route, name }, undefined, obj, managers, dryRun)
  return FieldValidation.withWarnings(json(result.status, result.json), [...warnings, ...result.warnings])
}

/** PUT of an object or its status: resourceVersion and uid preconditions. @internal */
export const replace = async (
  state: FakeState,
  route: Route,
  query: Record<string, string>,
  request: RawRequest
): Promise<RawResponse> => {
  const { obj, warnings } = await objectOf(route, query, request)
  const metadata = obj.metadata as JsonObject
  if (metadata.name !== undefined && metadata.name !== route.name) {
    throw Status.badRequest(
      `the name of the object (${String(metadata.name)}) does not match the name on the URL (${route.name})`
    )
  }
  metadata.name = route.name
  const prev = state.entryOf(route)
  const prevMeta = prev.obj.metadata as JsonObject
  const rv = metadata.resourceVersion
  if (rv !== undefined && rv !== "" && rv !== prevMeta.resourceVersion) {
    throw Status.conflict(route.kind, route.name!)
  }
  if (metadata.uid !== undefined && metadata.uid !== "" && metadata.uid !== prevMeta.uid) {
    throw Status.preconditionFailed(
      route.kind,
      route.name!,
      `Precondition failed: UID in precondition: ${String(metadata.uid)}, UID in object meta: ${String(prevMeta.uid)}`
    )
  }
  return commitUpdate(state, route, query, request, prev, obj, warnings)
}

/**
 * Stores the new state of an existing object (a PUT or a PATCH): through its subresource's
 * own rules when the route names one, else with the manager's fields recorded.
 */
const commitUpdate = (
  state: FakeState,
  route: Route,
  query: Record<string, string>,
  request: RawRequest,
  prev: Entry,
  obj: JsonObject,
  warnings: ReadonlyArray<string>
): RawResponse => {
  if (route.subresource !== undefined) {
    const next = subresourceWrite(route, prev, obj)
    const result = commit(state, route, prev, next, prev.managers, query.dryRun === "All", false)
    return FieldValidation.withWarnings(json(result.status, result.json), result.warnings)
  }
  finish(route.kind, obj, prev.obj, undefined, true)
  const manager = fieldManagerOf(query, request)
  const managers = Managed.recordUpdate(prev.managers, manager, routeApiVersion(route), prev.obj, obj)
  const result = commit(state, route, prev, obj, managers, query.dryRun === "All")
  return FieldValidation.withWarnings(json(200, result.json), [...warnings, ...result.warnings])
}

/** PATCH: JSON patch, merge patch, strategic merge patch, or apply. @internal */
export const patch = async (
  state: FakeState,
  route: Route,
  query: Record<string, string>,
  request: RawRequest
): Promise<RawResponse> => {
  const type = mediaType(request.header("content-type"))
  if (!PATCH_TYPES.includes(type)) throw Status.unsupportedMediaType(type, PATCH_TYPES)
  if (type === "application/strategic-merge-patch+json" && route.kind.custom) {
    throw Status.unsupportedMediaType(type, PATCH_TYPES.filter((t) => t !== "application/strategic-merge-patch+json"))
  }
  if (type === "application/apply-patch+yaml") return apply(state, route, query, request)
  const body = await readBody(request)
  const prev = state.entryOf(route)
  const base = prev.copy()
  drop(base.metadata as JsonObject, "managedFields")
  let patched: unknown
  try {
    if (type === "application/json-patch+json") patched = jsonPatch(base, body)
    else if (type === "application/merge-patch+json") patched = mergePatch(base, body)
    else patched = strategicMerge(base, body)
  } catch (e) {
    if (e instanceof PatchError) {
      throw new Status.StatusError(
        422,
        "Invalid",
        `the server rejected our request due to an error in our request: ${e.message}`,
        {}
      )
    }
    throw e
  }
  if (!isObject(patched)) throw Status.badRequest("the patch did not produce an object")
  // a JSON patch is checked by its result, the merge patches by what they send
  const warnings = await FieldValidation.check(route, query, type === "application/json-patch+json" ? patched : body)
  const metadata = child(patched, "metadata")
  const prevMeta = prev.obj.metadata as JsonObject
  if (metadata.resourceVersion !== undefined && metadata.resourceVersion !== prevMeta.resourceVersion) {
    throw Status.conflict(route.kind, route.name!)
  }
  if (metadata.uid !== undefined && metadata.uid !== prevMeta.uid) {
    throw Status.preconditionFailed(
      route.kind,
      route.name!,
      `Precondition failed: UID in precondition: ${String(metadata.uid)}, UID in object meta: ${String(prevMeta.uid)}`
    )
  }
  metadata.name = route.name
  if (route.kind.namespaced) metadata.namespace = route.namespace
  patched.apiVersion = prev.obj.apiVersion
  patched.kind = prev.obj.kind
  return commitUpdate(state, route, query, request, prev, patched, warnings)
}

/** Server-side apply: field ownership by manager, conflicts unless forced. @internal */
export const apply = async (
  state: FakeState,
  route: Route,
  query: Record<string, string>,
  request: RawRequest
): Promise<RawResponse> => {
  const manager = query.fieldManager
  if (manager === undefined || manager === "") {
    throw new Status.StatusError(
      422,
      "Invalid",
      `PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch`,
      {
        group: "meta.k8s.io",
        kind: "PatchOptions",
        causes: [{
          reason: "FieldValueRequired",
          message: "Required value: is required for apply patch",
          field: "fieldManager"
        }]
      }
    )
  }
  if (route.subresource !== undefined && route.subresource !== "status") throw Status.methodNotAllowed()
  const body = await readBody(request)
  if (!isObject(body)) throw Status.badRequest("error decoding YAML: the apply configuration must be an object")
  const apiVersion = apiVersionOf(route.kind.group, route.version)
  if (body.apiVersion !== apiVersion || body.kind !== route.kind.kind) {
    throw Status.badRequest(
      `the API version and kind in the data (${String(body.apiVersion)}, ${String(body.kind)}) ` +
        `do not match the URL (${apiVersion}, ${route.kind.kind})`
    )
  }
  const config = clone(body)
  const warnings = await FieldValidation.check(route, query, config)
  const metadata = child(config, "metadata")
  if (metadata.name !== route.name) {
    throw Status.badRequest(
      `the name of the object (${String(metadata.name)}) does not match the name on the URL (${route.name})`
    )
  }
  if (route.kind.namespaced) {
    if (metadata.namespace !== undefined && metadata.namespace !== "" && metadata.namespace !== route.namespace) {
      throw Status.badRequest("the namespace of the provided object does not match the namespace sent on the request")
    }
    metadata.namespace = route.namespace
  } else {
    drop(metadata, "namespace")
  }
  validateName(route.kind, route.name!)
  const prev = state.collectionOf(route.kind).entries.get(keyOf(route.namespace ?? "", route.name!))
  if (prev !== undefined && metadata.resourceVersion !== undefined && metadata.resourceVersion !== String(prev.rv)) {
    throw Status.conflict(route.kind, route.name!)
  }
  for (const k of serverOwnedMetadata) drop(metadata, k)
  // the status subresource applies only `.status`; the main resource ignores it
  if (route.subresource === "status") {
    if (prev === undefined) throw Status.notFound(route.kind, route.name!)
    for (const k of Object.keys(config)) if (!["apiVersion", "kind", "metadata", "status"].includes(k)) drop(config, k)
    for (const k of Object.keys(metadata)) if (k !== "name" && k !== "namespace") drop(metadata, k)
  } else if (route.kind.hasStatus) drop(config, "status")
  const live = prev !== undefined ? prev.copy() : undefined
  if (live !== undefined) drop(live.metadata as JsonObject, "managedFields")
  const result = Managed.apply({
    live,
    config,
    manager,
    apiVersion,
    force: isTrue(query.force),
    entries: prev?.managers ?? []
  })
  if (result._tag === "Conflicts") {
    throw new Status.StatusError(409, "Conflict", Managed.conflictMessage(result.conflicts), {
      causes: result.conflicts.map((c) => ({
        reason: "FieldManagerConflict",
        message: `conflict with ${Managed.printManager(c.entry)}`,
        field: Managed.formatPath(c.path)
      }))
    })
  }
  const entries = route.kind.hasStatus
    ? keepOtherHalf(result.entries, prev?.managers ?? [], manager, route.subresource === "status")
    : result.entries
  if (route.subresource === "status") {
    const next = { ...prev!.copy(), status: result.object.status }
    const committed = commit(state, route, prev, next, entries, query.dryRun === "All", false)
    return FieldValidation.withWarnings(json(committed.status, committed.json), committed.warnings)
  }
  const obj = finish(route.kind, result.object, prev?.obj, undefined, true)
  const committed = commit(state, route, prev, obj, entries, query.dryRun === "All")
  return FieldValidation.withWarnings(json(committed.status, committed.json), [...warnings, ...committed.warnings])
}

const isStatusPath = (path: string): boolean => path === "f:status" || path.startsWith("f:status\n")

/**
 * A manager's Apply entry keeps what it owns in the other half of the object (`.status`
 * for an apply to the main resource, the rest for an apply to status): the API server
 * keeps one entry per subresource, so one apply never disowns the other's fields. (The
 * fake does not track ownership of `.status` fields themselves: `Managed.fieldPaths`
 * leaves them out.)
 */
const keepOtherHalf = (
  entries: ReadonlyArray<Managed.ManagerEntry>,
  before: ReadonlyArray<Managed.ManagerEntry>,
  manager: string,
  toStatus: boolean
): ReadonlyArray<Managed.ManagerEntry> => {
  const previous = before.find((e) => e.manager === manager && e.operation === "Apply")
  if (previous === undefined) return entries
  const kept = [...previous.fields].filter((p) => isStatusPath(p) !== toStatus)
  if (kept.length === 0) return entries
  if (!entries.some((e) => e.manager === manager && e.operation === "Apply")) {
    return [...entries, { ...previous, fields: new Set(kept) }]
  }
  return entries.map((e) =>
    e.manager === manager && e.operation === "Apply" ? { ...e, fields: new Set([...e.fields, ...kept]) } : e
  )
}

/** A change made by the fake itself (controls, simulation): no field manager, no validation. */
export const serverUpdate = (state: FakeState, kind: KindInfo, prev: Entry, next: JsonObject): Entry => {
  const metadata = child(next, "metadata")
  metadata.name = prev.name
  if (kind.namespaced) metadata.namespace = prev.namespace
  metadata.uid = prev.uid
  metadata.creationTimestamp = prev.creationTimestamp
  const apiVersion = next.apiVersion
  if (typeof apiVersion !== "string" || !kind.versions.some((v) => apiVersionOf(kind.group, v) === apiVersion)) {
    next.apiVersion = apiVersionOf(kind.group, kind.versions[0]!)
  }
  next.kind = kind.kind
  const entry = state.store.write(state.collectionOf(kind), prev.namespace, prev.name, (rv) => {
    metadata.resourceVersion = String(rv)
    // not kept parsed: the caller keeps `next` (controls hand it back)
    return {
      obj: withManagedFields(next, prev.managers),
      managers: prev.managers,
      generationFrom: prev,
      cache: false
    }
  })
  state.afterWrite(kind, entry, prev)
  if (metadata.deletionTimestamp !== undefined && !hasFinalizers(entry.obj)) return state.removeEntry(kind, entry)
  return entry
}

/**
 * A change made through the controls: a JSON merge patch or a function that edits (or
 * returns) a copy, stored as the fake's own change.
 *
 * @internal
 */
export const updateObject = (
  state: FakeState,
  ref: ObjectRef,
  change: { readonly [key: string]: unknown } | ((obj: FakeObject) => FakeObject | void)
): FakeObject => {
  const { entry, kind } = state.refEntry(ref)
  if (entry === undefined) {
    throw new Error(`update: ${ref.kind} ${ref.namespace ?? ""}/${ref.name} does not exist`)
  }
  let next: JsonObject
  if (typeof change === "function") {
    const draft = entry.copy()
    const result = change(draft as unknown as FakeObject)
    next = result === undefined ? draft : clone(result as unknown as JsonObject)
  } else {
    next = mergePatch(entry.copy(), change) as JsonObject
  }
  serverUpdate(state, kind, entry, next)
  return next as unknown as FakeObject
}

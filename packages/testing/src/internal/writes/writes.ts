/**
 * Writes: create, replace, patch (JSON, merge, strategic merge) and server-side apply,
 * as kube-apiserver handles them: the body decoded (field validation: repeated and
 * unknown fields), unknown fields pruned, the kind's defaults applied, checked against
 * the URL and preconditions, validated (422 Invalid with the server's messages), the
 * fields it owns filled in (uid, timestamps, generation, resourceVersion, status), field
 * managers recorded (with the subresource written through), dry runs, and no-op writes
 * that keep the stored version. Also the fake's own changes (controls, simulation),
 * which skip all of that.
 *
 * @internal
 */
import * as Crds from "../store/crds.js"
import * as Defaults from "../defaults/index.js"
import * as Decode from "../validation/decode.js"
import * as FieldValidation from "../validation/fieldValidation.js"
import { isTrue, json, mediaType, type RawRequest, type RawResponse } from "../serve/http.js"
import { child, clone, deepEqual, drop, isObject, type JsonObject, now, randomSuffix } from "../store/json.js"
import { apiVersionOf, type KindInfo, splitApiVersion } from "../store/kinds.js"
import * as Managed from "./managedFields.js"
import * as MicroTime from "../validation/microtime.js"
import { jsonPatch, mergeKeyFor, mergePatch, PatchError, strategicMerge } from "./patch.js"
import { type FakeState, hasFinalizers, objectIn, type Route, routeApiVersion, toStored } from "../store/state.js"
import * as Status from "../serve/statusBodies.js"
import { type Entry, keyOf } from "../store/store.js"
import type { FakeObject, ObjectRef } from "../types.js"
import * as Validation from "../validation/index.js"
import * as Generation from "./generation.js"
import * as Volumes from "./volumes.js"
import * as Pods from "../validation/pods.js"
import * as Schema from "../validation/schema.js"

const PATCH_TYPES = [
  "application/json-patch+json",
  "application/merge-patch+json",
  "application/strategic-merge-patch+json",
  "application/apply-patch+yaml"
]

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
      e.subresource === other.subresource && e.fields.size === other.fields.size && [...e.fields].every((f) => other.fields.has(f))
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
  const obj: JsonObject = { apiVersion, kind: route.kind.kind, ...body }
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
  const errors = Validation.nameRuleOf(kind)(name, false)
  if (errors.length > 0) {
    throw Status.invalid(
      kind,
      name,
      errors.map((problem) => ({
        reason: "FieldValueInvalid",
        field: "metadata.name",
        message: `Invalid value: ${JSON.stringify(name)}: ${problem}`
      }))
    )
  }
}

/** The kinds whose spec.replicas is an int32 (and whose controllers would make that many pods). */
const scalable = new Set(["apps/Deployment", "apps/ReplicaSet", "apps/StatefulSet", "/ReplicationController"])

/**
 * spec.replicas as Go decodes it into an int32: a number that is not one is the decoder's 400, before validation (and
 * before a controller would try to make that many pods).
 */
const checkReplicas = (kind: KindInfo, obj: JsonObject): void => {
  if (!scalable.has(`${kind.group}/${kind.kind}`) || !isObject(obj.spec)) return
  const replicas = obj.spec.replicas
  if (typeof replicas !== "number" || (Number.isInteger(replicas) && replicas >= -2147483648 && replicas <= 2147483647)) return
  const apiVersion = typeof obj.apiVersion === "string" ? obj.apiVersion : "v1"
  const version = JSON.stringify(apiVersion.slice(apiVersion.indexOf("/") + 1))
  throw Status.badRequest(
    `${kind.kind} in version ${version} cannot be handled as a ${kind.kind}: json: cannot unmarshal number ` +
      `${String(replicas)} into Go struct field ${kind.kind}Spec.spec.replicas of type int32`
  )
}

/** A new pod's status: Pending, its QoS class and, while scheduling gates hold it, the SchedulingGated condition. */
const podStatusAtCreate = (spec: unknown, at: string): JsonObject => {
  const gated = isObject(spec) && Array.isArray(spec.schedulingGates) && spec.schedulingGates.length > 0
  return {
    phase: "Pending",
    ...(gated
      ? {
        conditions: [{
          type: "PodScheduled",
          status: "False",
          lastProbeTime: null,
          lastTransitionTime: at.replace(/\.\d+Z$/, "Z"),
          reason: "SchedulingGated",
          message: "Scheduling is blocked due to non-empty scheduling gates"
        }]
      }
      : {}),
    qosClass: Pods.qosClass(spec)
  }
}

/**
 * Fills in what the server owns on a new or changed object: identity, uid,
 * creationTimestamp (`at`, the fake's time), generation (for the kinds that have one),
 * resourceVersion and (for kinds with a status subresource) the status.
 */
export const finish = (
  kind: KindInfo,
  obj: JsonObject,
  prev: JsonObject | undefined,
  rv: number | undefined,
  mainResource: boolean,
  at: string = now()
): JsonObject => {
  MicroTime.checkMicroTimes(kind, obj)
  checkReplicas(kind, obj)
  const metadata = child(obj, "metadata")
  // ObjectMeta's maps are omitempty: a patch that empties them leaves them out, as Go encodes them
  for (const k of kind.custom ? [] : ["labels", "annotations"]) {
    const v = metadata[k]
    if (isObject(v) && Object.values(v).every((x) => x === undefined)) drop(metadata, k)
  }
  const prevMeta = prev !== undefined ? (prev.metadata as JsonObject) : undefined
  const generation = Validation.hasGeneration(kind)
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
    if (generation) {
      // the kind's rule decides a bump once the object is defaulted (commit)
      metadata.generation = typeof prevMeta.generation === "number" ? prevMeta.generation : 1
    } else drop(metadata, "generation")
    if (kind.hasStatus && mainResource) {
      if (prev!.status !== undefined) obj.status = clone(prev!.status)
      else drop(obj, "status")
    }
  } else {
    metadata.uid = crypto.randomUUID()
    metadata.creationTimestamp = at
    if (generation) metadata.generation = 1
    else drop(metadata, "generation")
    drop(metadata, "deletionTimestamp")
    drop(metadata, "deletionGracePeriodSeconds")
    if (kind.hasStatus && mainResource) {
      if (kind.kind === "Pod" && kind.group === "") obj.status = podStatusAtCreate(obj.spec, at)
      else if (kind.kind === "Namespace" && kind.group === "") obj.status = { phase: "Active" }
      else drop(obj, "status")
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
 * Writes a new version of an object (create, replace, patch, apply, status), `finish`ed
 * by the caller: a write that changes nothing (the object and its managers) keeps the
 * stored version, no event, like the API server. A custom resource is stored with its
 * keys sorted, as the API server's unstructured JSON is.
 */
export const commit = (
  state: FakeState,
  route: Route,
  prev: Entry | undefined,
  candidate: JsonObject,
  managers: ReadonlyArray<Managed.ManagerEntry>,
  dryRun: boolean
): {
  readonly status: number
  readonly entry: Entry | undefined
  readonly json: string
  readonly warnings: ReadonlyArray<string>
} => {
  const kind = route.kind
  const namespace = route.namespace ?? ""
  const name = route.name ?? (candidate.metadata as JsonObject).name as string
  const obj = candidate
  if (prev !== undefined && Validation.hasGeneration(kind)) Generation.update(kind, prev.obj, obj)
  Volumes.phaseTransition(kind, prev?.obj, obj, state.now())
  if (prev === undefined) Volumes.admitCreate(state, kind, obj)
  const warnings = state.admit({
    route: { ...route, name },
    operation: prev === undefined ? "CREATE" : "UPDATE",
    object: obj,
    oldObject: prev?.obj,
    dryRun
  })
  // `prev` may be the stored version converted for this route: the comparison and the write are of the stored form
  const collection = state.collectionOf(kind)
  const storedPrev = prev === undefined ? undefined : collection.entries.get(prev.key) ?? prev
  const storedObj = toStored(kind, obj)
  if (storedPrev !== undefined) {
    const unchanged = deepEqual(stripForCompare(storedObj), stripForCompare(storedPrev.obj)) &&
      managersEqual(managers, storedPrev.managers)
    if (unchanged) {
      return { status: 200, entry: storedPrev, json: state.jsonIn(storedPrev, kind, route.version), warnings }
    }
  }
  const stored = (o: JsonObject): JsonObject => {
    withManagedFields(o, managers)
    return kind.custom ? (Schema.sortKeys(o) as JsonObject) : o
  }
  if (dryRun) {
    if (prev !== undefined) (obj.metadata as JsonObject).resourceVersion = String(prev.rv)
    return { status: prev === undefined ? 201 : 200, entry: undefined, json: JSON.stringify(stored(obj)), warnings }
  }
  const entry = state.store.write(collection, namespace, name, (rv) => {
    (storedObj.metadata as JsonObject).resourceVersion = String(rv)
    return { obj: stored(storedObj), managers }
  })
  state.afterWrite(collection.kind, entry, storedPrev)
  const metadata = entry.obj.metadata as JsonObject
  if (metadata.deletionTimestamp !== undefined && !hasFinalizers(entry.obj)) {
    const gone = state.removeEntry(kind, entry)
    return { status: 200, entry: gone, json: state.jsonIn(gone, kind, route.version), warnings }
  }
  return { status: prev === undefined ? 201 : 200, entry, json: state.jsonIn(entry, kind, route.version), warnings }
}

/** Unknown fields of an object, dropped: by the generated Schema of a built-in kind, a custom resource's CRD schema. */
const prune = async (state: FakeState, route: Route, obj: JsonObject): Promise<Array<string>> => {
  if (route.kind.custom) {
    const schema = Crds.schemaFor(state, route.kind, route.version)
    return schema === undefined ? [] : Schema.prune(obj, schema)
  }
  const node = Decode.kindNode(route.kind.group, route.version, route.kind.kind)
  return node === undefined ? [] : Decode.decode(node, obj, true).unknown
}

/** The fields of an object its kind's schema does not declare, left in place (an apply configuration's). */
const undeclared = async (state: FakeState, route: Route, obj: JsonObject): Promise<Array<string>> => {
  const copy = clone(obj)
  return prune(state, route, copy)
}

/** Every Service's cluster IPs and node ports (`:30080`), for the addresses a new Service may take. */
const serviceAddresses = (state: FakeState, kind: KindInfo): ReadonlySet<string> => {
  const taken = new Set<string>()
  const collection = state.store.existing(kind)
  if (collection === undefined) return taken
  for (const entry of collection.entries.values()) {
    const spec = entry.obj.spec
    if (!isObject(spec)) continue
    if (Array.isArray(spec.clusterIPs)) for (const ip of spec.clusterIPs) taken.add(String(ip))
    if (Array.isArray(spec.ports)) {
      for (const p of spec.ports) if (isObject(p) && typeof p.nodePort === "number") taken.add(`:${p.nodePort}`)
    }
  }
  return taken
}

/**
 * What the API server does to an object between decoding and storing: its kind's
 * defaults (a custom resource's schema defaults), then validation against the stored
 * version on update (a 422 Invalid Status on failure). The stored version (`prev`, a
 * copy) is defaulted first, as the API server decodes what it reads from storage: a
 * seeded object compares as a stored one would.
 */
const admit = (state: FakeState, route: Route, obj: JsonObject, prev: JsonObject | undefined): void => {
  const kind = route.kind
  let schema: Schema.Schema | undefined
  if (kind.custom) {
    schema = Crds.schemaFor(state, kind, route.version)
    if (schema !== undefined) {
      if (prev !== undefined) Schema.applyDefaults(prev, schema)
      Schema.applyDefaults(obj, schema)
    }
  } else {
    const takenServiceAddresses = () => serviceAddresses(state, kind)
    if (prev !== undefined) Defaults.apply(kind, prev, { old: prev, takenServiceAddresses })
    Defaults.apply(kind, obj, { old: prev, takenServiceAddresses })
  }
  if (validates(state)) Validation.check(kind, obj, prev, schema)
}

/** Whether the fake validates writes (the `validation` option, on unless `false`). @internal */
export const validates = (state: FakeState): boolean => state.options.validation !== false

/**
 * The managers to start from for an update: what the client wrote into
 * `metadata.managedFields` when it changed them (to something that decodes; `[{}]`
 * clears them), else the stored ones.
 */
const baseManagers = (state: FakeState, prev: Entry, sent: unknown): ReadonlyArray<Managed.ManagerEntry> => {
  if (!Array.isArray(sent) || sent.length === 0) return prev.managers
  const current = (prev.obj.metadata as JsonObject).managedFields
  if (deepEqual(sent, current)) return prev.managers
  return Managed.parse(sent, state.now()) ?? prev.managers
}

/**
 * What a write through a subresource keeps of the object sent: `status` its `.status`,
 * a pod's `ephemeralcontainers` its `spec.ephemeralContainers`, a pod's `resize` its
 * containers' `resources`. The rest is the stored object's.
 */
const subresourceWrite = (route: Route, prev: Entry, obj: JsonObject): JsonObject => {
  const next = prev.copy()
  drop(next.metadata as JsonObject, "managedFields")
  const sent = isObject(obj.spec) ? obj.spec : {}
  switch (route.subresource) {
    case "status":
      return { ...next, status: obj.status }
    case "ephemeralcontainers": {
      child(next, "spec").ephemeralContainers = Array.isArray(sent.ephemeralContainers) ? sent.ephemeralContainers : []
      return next
    }
    case "resize": {
      const spec = child(next, "spec")
      for (const field of ["containers", "initContainers"]) {
        if (!Array.isArray(spec[field]) || !Array.isArray(sent[field])) continue
        spec[field] = resizedContainers(spec[field], sent[field])
      }
      return next
    }
    default:
      throw Status.methodNotAllowed()
  }
}

/**
 * The containers a resize leaves: each sent container (in the order sent, so that a
 * reordering or renaming is seen by validation) as stored, with the resources and resize
 * policy sent.
 */
const resizedContainers = (stored: Array<unknown>, sent: Array<unknown>): Array<unknown> =>
  sent.map((given, i) => {
    if (!isObject(given)) return given
    const same = stored.find((c) => isObject(c) && c.name === given.name) ?? stored[i]
    const base: JsonObject = isObject(same) ? { ...same, name: given.name } : { name: given.name }
    base.resources = given.resources
    if (given.resizePolicy !== undefined) base.resizePolicy = given.resizePolicy
    return base
  })

/**
 * The object a POST or PUT sends (JSON or YAML), checked against the URL, its unknown
 * fields pruned, and the warnings of its field validation.
 */
const objectOf = async (
  state: FakeState,
  route: Route,
  query: Record<string, string>,
  request: RawRequest,
  options: "CreateOptions" | "UpdateOptions"
) => {
  const type = mediaType(request.header("content-type"))
  if (type !== "" && type !== "application/json" && type !== "application/yaml") {
    throw Status.unsupportedMediaType(type, ["application/json", "application/yaml"])
  }
  const mode = FieldValidation.modeOf(query, options)
  const read = await FieldValidation.readText(request)
  const duplicates = FieldValidation.duplicatesOf(mode, read)
  let unknown: ReadonlyArray<string> = []
  const node = route.kind.custom ? undefined : Decode.kindNode(route.kind.group, route.version, route.kind.kind)
  if (node !== undefined && isObject(read.body)) {
    // the typed decode comes first: a value its Go type cannot hold fails the request whatever the field validation
    const decoded = Decode.decode(node, read.body, true)
    if (decoded.error !== undefined) {
      const kind = route.kind.kind
      throw Status.badRequest(`${kind} in version ${JSON.stringify(route.version)} cannot be handled as a ${kind}: ${decoded.error}`)
    }
    unknown = decoded.unknown
  }
  const obj = checkBody(route, read.body)
  if (node === undefined) unknown = await prune(state, route, obj)
  return { obj, warnings: FieldValidation.report(route, mode, read, duplicates, unknown, true) }
}

/** POST of a new object (a name or generateName is required). @internal */
export const create = async (
  state: FakeState,
  route: Route,
  query: Record<string, string>,
  request: RawRequest
): Promise<RawResponse> => {
  const { obj, warnings } = await objectOf(state, route, query, request, "CreateOptions")
  return FieldValidation.keepWarnings(warnings, () => createObject(state, route, query, request, obj, warnings))
}

const createObject = (
  state: FakeState,
  route: Route,
  query: Record<string, string>,
  request: RawRequest,
  obj: JsonObject,
  warnings: ReadonlyArray<string>
): RawResponse => {
  const metadata = obj.metadata as JsonObject
  const collection = state.collectionOf(route.kind)
  const namespace = route.namespace ?? ""
  if ((typeof metadata.name !== "string" || metadata.name === "") && typeof metadata.generateName === "string" &&
    metadata.generateName !== "") {
    let name = `${metadata.generateName}${randomSuffix()}`
    while (collection.entries.has(keyOf(namespace, name))) name = `${metadata.generateName}${randomSuffix()}`
    metadata.name = name
  }
  // the LimitRange registry names a nameless LimitRange by a new uid (its PrepareForCreate)
  if (route.kind.group === "" && route.kind.kind === "LimitRange" && (metadata.name ?? "") === "" &&
    (metadata.generateName ?? "") === "") {
    metadata.name = crypto.randomUUID()
  }
  const name = typeof metadata.name === "string" ? metadata.name : ""
  state.admitNamespace({ kind: route.kind, namespace: route.namespace, name }, "create")
  finish(route.kind, obj, undefined, undefined, true, state.now())
  admit(state, route, obj, undefined)
  if (collection.entries.has(keyOf(namespace, name))) throw Status.alreadyExists(route.kind, name)
  const managers = Managed.recordUpdate([], fieldManagerOf(query, request), routeApiVersion(route), undefined, obj, state.now())
  const result = commit(state, { ...route, name }, undefined, obj, managers, query.dryRun === "All")
  return FieldValidation.withWarnings(json(result.status, result.json), [...warnings, ...result.warnings])
}

// a built-in kind's registry prints the uint64 as %#v (0x0) under its Kind; the custom resource handler prints 0, under
// the resource's plural
const mustHaveResourceVersion = (route: Route, name: string): Status.StatusError =>
  Status.invalid(route.kind.custom ? { ...route.kind, kind: route.kind.plural } : route.kind, name, [{
    reason: "FieldValueInvalid",
    field: "metadata.resourceVersion",
    message: `Invalid value: ${route.kind.custom ? "0" : "0x0"}: must be specified for an update`
  }])

/** The kinds a PUT without a resourceVersion creates when missing (`AllowCreateOnUpdate`), as in kube-apiserver v1.35. */
const createsOnUpdate = new Set([
  "/Service", "/LimitRange", "/Endpoints", "events.k8s.io/Event", "/Event", "coordination.k8s.io/Lease",
  "rbac.authorization.k8s.io/Role", "rbac.authorization.k8s.io/RoleBinding", "rbac.authorization.k8s.io/ClusterRole",
  "rbac.authorization.k8s.io/ClusterRoleBinding", "node.k8s.io/RuntimeClass"
])

/** PUT of an object or its status: resourceVersion and uid preconditions. @internal */
export const replace = async (
  state: FakeState,
  route: Route,
  query: Record<string, string>,
  request: RawRequest
): Promise<RawResponse> => {
  const { obj, warnings } = await objectOf(state, route, query, request, "UpdateOptions")
  return FieldValidation.keepWarnings(warnings, () => replaceObject(state, route, query, request, obj, warnings))
}

const replaceObject = (
  state: FakeState,
  route: Route,
  query: Record<string, string>,
  request: RawRequest,
  obj: JsonObject,
  warnings: ReadonlyArray<string>
): Promise<RawResponse> | RawResponse => {
  const metadata = obj.metadata as JsonObject
  if (metadata.name !== undefined && metadata.name !== route.name) {
    throw Status.badRequest(
      `the name of the object (${String(metadata.name)}) does not match the name on the URL (${route.name})`
    )
  }
  metadata.name = route.name
  const rvGiven = metadata.resourceVersion !== undefined && metadata.resourceVersion !== ""
  if (
    route.subresource === undefined && !rvGiven && createsOnUpdate.has(`${route.kind.group}/${route.kind.kind}`) &&
    !state.collectionOf(route.kind).entries.has(keyOf(route.namespace ?? "", route.name!))
  ) {
    return createObject(state, route, query, request, obj, warnings)
  }
  state.admitNamespace(route, "update")
  const prev = state.entryIn(route, state.entryOf(route))
  const prevMeta = prev.obj.metadata as JsonObject
  const rv = metadata.resourceVersion
  // custom resources allow no unconditional update
  if (route.kind.custom && (rv === undefined || rv === "")) throw mustHaveResourceVersion(route, route.name!)
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
 * Stores the new state of an existing object (a PUT or a PATCH): through its
 * subresource's own rules when the route names one, else as an update of the object,
 * with the manager's fields recorded either way. The stored version is compared as the
 * API server decodes it from storage, without fields its schema does not declare (a
 * seeded object may have some).
 */
const commitUpdate = async (
  state: FakeState,
  route: Route,
  query: Record<string, string>,
  request: RawRequest,
  prev: Entry,
  obj: JsonObject,
  warnings: ReadonlyArray<string>
): Promise<RawResponse> => {
  const manager = fieldManagerOf(query, request)
  const apiVersion = routeApiVersion(route)
  const live = prev.copy()
  drop(live.metadata as JsonObject, "managedFields")
  await prune(state, route, live)
  if (route.subresource !== undefined) {
    const next = subresourceWrite(route, prev, obj)
    finish(route.kind, next, prev.obj, undefined, false, state.now())
    if (route.subresource === "ephemeralcontainers" || route.subresource === "resize") {
      if (!route.kind.custom) Defaults.apply(route.kind, next, { old: prev.obj, takenServiceAddresses: () => new Set() })
      if (validates(state)) Validation.checkPodSubresource(route.kind, route.subresource, next, live)
    } else if (validates(state)) {
      Validation.checkStatus(route.kind, next, live)
    }
    const managers = Managed.recordUpdate(prev.managers, manager, apiVersion, live, next, state.now(), route.subresource)
    const result = commit(state, route, prev, next, managers, query.dryRun === "All")
    return FieldValidation.withWarnings(json(result.status, result.json), [...warnings, ...result.warnings])
  }
  const sentManagers = (obj.metadata as JsonObject).managedFields
  drop(obj.metadata as JsonObject, "managedFields")
  finish(route.kind, obj, prev.obj, undefined, true, state.now())
  admit(state, route, obj, live)
  const base = baseManagers(state, prev, sentManagers)
  const managers = Managed.recordUpdate(base, manager, apiVersion, live, obj, state.now())
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
  const mode = FieldValidation.modeOf(query, "PatchOptions")
  const read = await FieldValidation.readText(request)
  const body = read.body
  const duplicates = FieldValidation.duplicatesOf(mode, read)
  state.admitNamespace(route, "update")
  const prev = state.entryIn(route, state.entryOf(route))
  // the stored object with its managedFields: a patch may change them too
  const base = prev.copy()
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
  // what a strict 422 quotes: the patched object before pruning (a strategic merge patch's, the patch itself)
  const quoted = mode !== "Strict"
    ? ""
    : type === "application/json-patch+json"
    ? FieldValidation.jsonPatchedText(patched, body)
    : type === "application/merge-patch+json"
    ? FieldValidation.mergePatchedText(patched, body)
    : FieldValidation.strategicPatchText(body)
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
  // what the stored object already had that its schema does not know (a seeded one) is no news
  const unknown = await prune(state, route, patched)
  const known = unknown.length === 0 ? [] : await undeclared(state, route, prev.copy())
  const news = unknown.filter((f) => !known.includes(f))
  const warnings = FieldValidation.report(route, mode, read, duplicates, news, false, () => quoted)
  return commitUpdate(state, route, query, request, prev, patched, warnings)
}

/** `ns/name; group/version, Kind=Kind`, as the field manager names an object in its errors. */
const objectName = (route: Route, name: string, namespace = route.namespace ?? ""): string =>
  `${route.kind.namespaced ? namespace : ""}/${name}; ${route.kind.group}/${route.version}, Kind=${route.kind.kind}`

const appliedNamespace = (body: JsonObject): string => {
  const metadata = body.metadata
  return isObject(metadata) && typeof metadata.namespace === "string" ? metadata.namespace : ""
}

/** `.spec.foo`, `.spec.containers[name="app"].bar`: a pruned path as structured-merge-diff prints it. */
const smdPath = (config: JsonObject, path: string): string => {
  let out = ""
  let node: unknown = config
  const parts = path.match(/[^.[\]]+|\[\d+\]/g) ?? []
  let field = ""
  for (const part of parts) {
    if (part.startsWith("[")) {
      const i = Number(part.slice(1, -1))
      const list = node as Array<unknown>
      const item = Array.isArray(list) ? list[i] : undefined
      const mergeKey = Array.isArray(list) ? mergeKeyFor(field, list) : undefined
      const key = mergeKey !== undefined && isObject(item) && item[mergeKey] !== undefined
        ? `[${mergeKey}=${JSON.stringify(item[mergeKey])}]`
        : `[${i}]`
      out += key
      node = item
    } else {
      out += `.${part}`
      field = part
      node = isObject(node) ? node[part] : undefined
    }
  }
  return out
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
  const mode = FieldValidation.modeOf(query, "PatchOptions")
  const read = await FieldValidation.readText(request)
  const body = read.body
  if (!isObject(body)) throw Status.badRequest("error decoding YAML: the apply configuration must be an object")
  const apiVersion = apiVersionOf(route.kind.group, route.version)
  if (body.apiVersion !== apiVersion || body.kind !== route.kind.kind) {
    throw Status.badRequest(
      `the API version and kind in the data (${String(body.apiVersion)}, ${String(body.kind)}) ` +
        `do not match the URL (${apiVersion}, ${route.kind.kind})`
    )
  }
  const config = clone(body)
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
  const found = state.collectionOf(route.kind).entries.get(keyOf(route.namespace ?? "", route.name!))
  const prev = found === undefined ? undefined : state.entryIn(route, found)
  state.admitNamespace(route, prev === undefined ? "create" : "update")
  // a field the schema does not declare cannot be typed: the field manager fails with a plain error (a 500)
  const notDeclared = await undeclared(state, route, config)
  if (notDeclared.length > 0) {
    const paths = notDeclared.map((p) => `${smdPath(config, p)}: field not declared in schema`)
    throw new Status.StatusError(
      500,
      "",
      // the field manager names the object by the apply configuration's own namespace (none when it has none)
      `failed to create typed patch object (${objectName(route, route.name!, appliedNamespace(body))}): ${
        paths.length === 1 ? paths[0] : `errors:\n  ${paths.join("\n  ")}`
      }`
    )
  }
  const warnings = FieldValidation.reportApplyDuplicates(mode, FieldValidation.duplicatesOf(mode, read))
  if (prev !== undefined && metadata.resourceVersion !== undefined && metadata.resourceVersion !== String(prev.rv)) {
    throw Status.conflict(route.kind, route.name!)
  }
  for (const k of serverOwnedMetadata) drop(metadata, k)
  const toStatus = route.subresource === "status"
  // the status subresource applies only `.status`; the main resource ignores it
  if (toStatus) {
    if (prev === undefined) throw Status.notFound(route.kind, route.name!)
    for (const k of Object.keys(config)) if (!["apiVersion", "kind", "metadata", "status"].includes(k)) drop(config, k)
    for (const k of Object.keys(metadata)) if (k !== "name" && k !== "namespace") drop(metadata, k)
  } else if (route.kind.hasStatus) drop(config, "status")
  const live = prev !== undefined ? prev.copy() : undefined
  if (live !== undefined) drop(live.metadata as JsonObject, "managedFields")
  const applyWith = (force: boolean) =>
    Managed.apply({
      live,
      config,
      manager,
      apiVersion,
      force,
      entries: prev?.managers ?? [],
      subresource: toStatus ? "status" : undefined,
      time: state.now()
    })
  let result = applyWith(isTrue(query.force))
  if (result._tag === "Conflicts" && manager === "kubectl" && live !== undefined) {
    // kube-apiserver's last-applied manager: `kubectl apply --server-side` after client-side applies takes the fields
    // the last-applied-configuration annotation names (a forced apply); only conflicts outside them remain
    const allowed = lastAppliedFields(live)
    const left = result.conflicts.filter((c) => !allowed.has(c.path))
    if (left.length === 0) result = applyWith(true)
    else result = { _tag: "Conflicts", conflicts: left }
  }
  if (result._tag === "Conflicts") {
    throw new Status.StatusError(409, "Conflict", Managed.conflictMessage(result.conflicts), {
      causes: result.conflicts.map((c) => ({
        reason: "FieldManagerConflict",
        message: `conflict with ${Managed.printManager(c.entry)}`,
        field: Managed.formatPath(c.path)
      }))
    })
  }
  const dryRun = query.dryRun === "All"
  if (toStatus) {
    const next: JsonObject = { ...prev!.copy(), status: result.object.status }
    drop(next.metadata as JsonObject, "managedFields")
    finish(route.kind, next, prev!.obj, undefined, false, state.now())
    if (validates(state)) Validation.checkStatus(route.kind, next, live!)
    const committed = commit(state, route, prev, next, result.entries, dryRun)
    return FieldValidation.withWarnings(json(committed.status, committed.json), [...warnings, ...committed.warnings])
  }
  const obj = finish(route.kind, result.object, prev?.obj, undefined, true, state.now())
  admit(state, route, obj, live)
  const committed = commit(state, route, prev, obj, result.entries, dryRun)
  return FieldValidation.withWarnings(json(committed.status, committed.json), [...warnings, ...committed.warnings])
}

/** The fields of an object's kubectl.kubernetes.io/last-applied-configuration (none without one). */
const lastAppliedFields = (live: JsonObject): Set<string> => {
  const annotations = isObject(live.metadata) && isObject(live.metadata.annotations) ? live.metadata.annotations : {}
  const text = annotations["kubectl.kubernetes.io/last-applied-configuration"]
  if (typeof text !== "string" || text === "") return new Set()
  try {
    const parsed: unknown = JSON.parse(text)
    return isObject(parsed) ? Managed.fieldPaths(parsed) : new Set()
  } catch {
    return new Set()
  }
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
  const collection = state.collectionOf(kind)
  const entry = state.store.write(collection, prev.namespace, prev.name, (rv) => {
    metadata.resourceVersion = String(rv)
    // not kept parsed: the caller keeps `next` (controls hand it back)
    return {
      obj: withManagedFields(toStored(kind, next), prev.managers),
      managers: prev.managers,
      generationFrom: Validation.hasGeneration(kind) ? prev : undefined,
      cache: false
    }
  })
  state.afterWrite(collection.kind, entry, prev)
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
  const version = splitApiVersion(ref.apiVersion).version
  if (typeof change === "function") {
    // all of it copied, managedFields too (see `Entry.copy`): the test's function may change anything in place
    const draft = clone(objectIn(entry.obj, kind, version))
    const result = change(draft as unknown as FakeObject)
    next = result === undefined ? draft : clone(result as unknown as JsonObject)
  } else {
    next = mergePatch(clone(objectIn(entry.obj, kind, version)), change) as JsonObject
  }
  serverUpdate(state, kind, entry, next)
  return next as unknown as FakeObject
}

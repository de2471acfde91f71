/**
 * Subresources with their own shape: `scale` (a Scale view of `spec.replicas`) and pod
 * `log` (each container's log, read whole, tailed, since a time, of the previous
 * instance, or followed), with the controls that write logs.
 *
 * @internal
 */
import { isTrue, json, mediaType, type RawRequest, type RawResponse, readBody } from "../serve/http.js"
import { child, drop, isObject, type JsonObject, stringAt } from "../store/json.js"
import { ContainerLog, LogFollower, type ReadOptions } from "../kubelet/logs.js"
import * as Managed from "./managedFields.js"
import { jsonPatch, mergePatch } from "./patch.js"
import { type FakeState, type Route, routeApiVersion } from "../store/state.js"
import * as Status from "../serve/statusBodies.js"
import type { Entry } from "../store/store.js"
import * as Crds from "../store/crds.js"
import * as Validation from "../validation/index.js"
import { commit, fieldManagerOf, finish, validates } from "./writes.js"

const labelSelectorString = (obj: JsonObject): string => {
  const selector = (obj.spec as JsonObject | undefined)?.selector
  const labels = isObject(selector) && isObject(selector.matchLabels) ? selector.matchLabels : {}
  return Object.entries(labels).map(([k, v]) => `${k}=${String(v)}`).join(",")
}

/** What a Scale shows of an object: `spec.replicas`, `status.replicas`, `status.selector`. */
interface ScaleView {
  readonly replicas: number
  readonly statusReplicas: number
  readonly selector: string
}

const builtinScale = (obj: JsonObject): ScaleView => {
  const replicas = (obj.spec as JsonObject | undefined)?.replicas
  const statusReplicas = (obj.status as JsonObject | undefined)?.replicas
  return {
    replicas: typeof replicas === "number" ? replicas : 1,
    statusReplicas: typeof statusReplicas === "number" ? statusReplicas : 0,
    selector: stringAt(obj, "spec", "selector") ?? labelSelectorString(obj)
  }
}

/** Go's `%v` and `%T` of a JSON value, as unstructured's accessor errors print it. */
const goPlain = (value: unknown): string =>
  Array.isArray(value)
    ? `[${value.map(goPlain).join(" ")}]`
    : isObject(value)
    ? `map[${Object.keys(value).sort().map((k) => `${k}:${goPlain(value[k])}`).join(" ")}]`
    : String(value)
const goType = (value: unknown): string =>
  Array.isArray(value)
    ? "[]interface {}"
    : isObject(value)
    ? "map[string]interface {}"
    : typeof value === "number"
    ? Number.isInteger(value) ? "int64" : "float64"
    : typeof value

/**
 * The value at a CRD scale path (`.spec.replicas`) as `unstructured.NestedFieldNoCopy`
 * reads it: undefined when absent; a value of another type than expected is the 400 the
 * API server answers (`.status.selector accessor error: 3 is of the type int64, expected string`).
 */
const nestedAt = (obj: JsonObject, path: string, expected: "int64" | "string"): unknown => {
  const fields = path.replace(/^\./, "").split(".")
  const accessor = `.${fields.join(".")}`
  let value: unknown = obj
  for (const field of fields) {
    if (value === undefined || value === null) return undefined
    if (!isObject(value)) {
      throw Status.badRequest(
        `${accessor} accessor error: ${goPlain(value)} is of the type ${goType(value)}, expected map[string]interface{}`
      )
    }
    value = value[field]
  }
  if (value === undefined || value === null) return undefined
  if (goType(value) !== expected) {
    const type = goType(value)
    throw Status.badRequest(`${accessor} accessor error: ${goPlain(value)} is of the type ${type}, expected ${expected}`)
  }
  return value
}

/** A custom resource's Scale, by its CRD's paths: replicas absent are 0, a selector absent is empty. */
const customScale = (obj: JsonObject, paths: Crds.ScalePaths): ScaleView => ({
  replicas: (nestedAt(obj, paths.specReplicasPath, "int64") as number | undefined) ?? 0,
  statusReplicas: (nestedAt(obj, paths.statusReplicasPath, "int64") as number | undefined) ?? 0,
  selector: paths.labelSelectorPath === undefined ?
    "" :
    (nestedAt(obj, paths.labelSelectorPath, "string") as string | undefined) ?? ""
})

/** Sets `value` at a path, making the objects on the way (`unstructured.SetNestedField`). */
const setAt = (obj: JsonObject, path: string, value: unknown): void => {
  const fields = path.replace(/^\./, "").split(".")
  let at = obj
  for (const field of fields.slice(0, -1)) at = child(at, field)
  at[fields[fields.length - 1]!] = value
}

/** The names of a pod's containers. @internal */
export const containerNames = (pod: JsonObject): Array<string> => {
  const spec = pod.spec
  if (!isObject(spec) || !Array.isArray(spec.containers)) return []
  return spec.containers
    .filter((c): c is JsonObject => isObject(c) && typeof c.name === "string")
    .map((c) => c.name as string)
}

/**
 * The `scale` subresource: GET, PUT or PATCH of `spec.replicas` as a Scale. A write is
 * checked as a Scale (`Scale.autoscaling "web" is invalid: spec.replicas: ...`), then as
 * an update of the object, and its manager's entry names the subresource.
 *
 * @internal
 */
export const scale = (
  state: FakeState,
  route: Route,
  method: string,
  query: Record<string, string>,
  request: RawRequest
): Promise<RawResponse> | RawResponse => {
  const paths = route.kind.custom ? Crds.scalePathsFor(state, route.kind, route.version) : undefined
  const toScale = (entry: Entry): JsonObject => {
    const meta = entry.obj.metadata as JsonObject
    const { replicas, selector, statusReplicas } = paths === undefined ?
      builtinScale(entry.obj) :
      customScale(entry.obj, paths)
    return {
      kind: "Scale",
      apiVersion: "autoscaling/v1",
      metadata: {
        name: meta.name,
        namespace: meta.namespace,
        uid: meta.uid,
        resourceVersion: meta.resourceVersion,
        creationTimestamp: meta.creationTimestamp
      },
      // a Scale's replicas are `omitempty`: zero replicas is `spec: {}`
      spec: replicas === 0 ? {} : { replicas },
      // `selector` is `omitempty` too
      status: { replicas: statusReplicas, ...(selector !== "" ? { selector } : {}) }
    }
  }
  const prev = state.entryOf(route)
  if (method === "GET") return json(200, toScale(prev))
  if (method !== "PUT" && method !== "PATCH") throw Status.methodNotAllowed()
  return (async () => {
    const body = await readBody(request)
    let scale: unknown = toScale(prev)
    const type = mediaType(request.header("content-type"))
    if (method === "PUT") scale = body
    else if (type === "application/json-patch+json") scale = jsonPatch(scale, body)
    else scale = mergePatch(scale, body)
    // a Scale's resourceVersion is a precondition on the object, as the API server checks it
    const rv = isObject(scale) && isObject(scale.metadata) ? scale.metadata.resourceVersion : undefined
    if (rv !== undefined && rv !== "" && rv !== (prev.obj.metadata as JsonObject).resourceVersion) {
      throw Status.conflict(route.kind, route.name!)
    }
    if (!isObject(scale)) throw Status.badRequest("the body of the request must be a JSON object")
    if (validates(state)) Validation.checkScale(scale, route.name!)
    const replicas = isObject(scale.spec) && typeof scale.spec.replicas === "number" ? scale.spec.replicas : 0
    const live = prev.copy()
    drop(live.metadata as JsonObject, "managedFields")
    const next = prev.copy()
    drop(next.metadata as JsonObject, "managedFields")
    setAt(next, paths?.specReplicasPath ?? ".spec.replicas", replicas)
    finish(route.kind, next, prev.obj, undefined, true, state.now())
    if (validates(state)) {
      Validation.check(route.kind, next, live, route.kind.custom ? Crds.schemaFor(state, route.kind, route.version) : undefined)
    }
    const manager = fieldManagerOf(query, request)
    const managers = Managed.recordUpdate(prev.managers, manager, routeApiVersion(route), live, next, state.now(), "scale")
    const main = { ...route, subresource: undefined }
    const result = commit(state, main, prev, next, managers, query.dryRun === "All")
    const entry = result.entry ?? prev
    return json(200, toScale(entry))
  })()
}

/** A container's log (created when `create`); the container defaults to the pod's only one. @internal */
export const containerLog = (
  state: FakeState,
  pod: Entry,
  container: string | undefined,
  create: boolean
): { readonly log: ContainerLog; readonly name: string } => {
  const names = containerNames(pod.obj)
  let name = container
  if (name === undefined || name === "") {
    if (names.length > 1) {
      throw Status.badRequest(
        `a container name must be specified for pod ${pod.name}, choose one of: [${names.join(" ")}]`
      )
    }
    name = names[0] ?? ""
  } else if (names.length > 0 && !names.includes(name)) {
    throw Status.badRequest(`container ${name} is not valid for pod ${pod.name}`)
  }
  const uid = pod.uid
  let byContainer = state.logs.get(uid)
  if (byContainer === undefined) {
    byContainer = new Map()
    if (create) state.logs.set(uid, byContainer)
  }
  let log = byContainer.get(name)
  if (log === undefined) {
    log = new ContainerLog()
    if (create) byContainer.set(name, log)
  }
  return { log, name }
}

const forgetPod = (state: FakeState, pod: Entry): void => {
  const uid = pod.uid
  const byContainer = state.logs.get(uid)
  if (byContainer === undefined) return
  state.logs.delete(uid)
  for (const log of byContainer.values()) for (const f of [...log.followers]) f.finish()
}

/** GET of a pod's `log`: tail, since, timestamps, limitBytes, previous, follow. @internal */
export const podLog = (state: FakeState, route: Route, query: Record<string, string>): RawResponse => {
  if (!(route.kind.group === "" && route.kind.kind === "Pod")) throw Status.pathNotFound()
  const pod = state.entryOf(route)
  const { log, name } = containerLog(state, pod, query.container, true)
  const num = (key: string): number | undefined => {
    const v = query[key]
    if (v === undefined || v === "") return undefined
    const n = Number(v)
    if (!Number.isFinite(n)) throw Status.badRequest(`invalid ${key}: ${v}`)
    return n
  }
  if (query.sinceSeconds !== undefined && query.sinceTime !== undefined) {
    throw Status.invalid({ group: "", plural: "podlogoptions", kind: "PodLogOptions" }, "", [{
      reason: "FieldValueForbidden",
      field: "sinceSeconds",
      message: "Forbidden: at most one of `sinceTime` or `sinceSeconds` may be specified"
    }])
  }
  const sinceSeconds = num("sinceSeconds")
  let sinceMs: number | undefined = sinceSeconds !== undefined ? state.clock.now() - sinceSeconds * 1000 : undefined
  if (query.sinceTime !== undefined) {
    const t = Date.parse(query.sinceTime)
    if (Number.isNaN(t)) throw Status.badRequest(`invalid sinceTime: ${query.sinceTime}`)
    sinceMs = t
  }
  const options: ReadOptions = {
    tailLines: num("tailLines"),
    sinceMs,
    timestamps: isTrue(query.timestamps),
    limitBytes: num("limitBytes")
  }
  const headers = { "content-type": "text/plain" }
  if (isTrue(query.previous)) {
    if (!log.hasPrevious()) {
      throw Status.badRequest(`previous terminated container "${name}" in pod "${pod.name}" not found`)
    }
    return { status: 200, headers, body: log.read(options, true) }
  }
  const initial = log.read(options)
  if (!isTrue(query.follow)) return { status: 200, headers, body: initial }
  const follower = new LogFollower(log, initial, options, (f) => state.logStreams.delete(f))
  if (!log.ended) state.logStreams.add(follower)
  return { status: 200, headers: { ...headers, "cache-control": "no-cache" }, body: follower }
}

/** Appends to a container's log (see `Control.appendLog`). @internal */
export const appendLog = (
  state: FakeState,
  namespace: string,
  pod: string,
  text: string | ReadonlyArray<string>,
  options: { readonly container?: string | undefined } = {}
): void => {
  const { entry } = state.refEntry({ apiVersion: "v1", kind: "Pod", namespace, name: pod })
  if (entry === undefined) throw new Error(`appendLog: pod ${namespace}/${pod} does not exist`)
  const { log } = containerLog(state, entry, options.container, true)
  if (typeof text === "string") log.append(text, state.clock.now())
  else log.appendLines(text, state.clock.now())
}

/** A removed pod's logs go with it: their followers see the end. @internal */
export const install = (state: FakeState): void => {
  state.onRemove((kind, removed) => {
    if (kind.group === "" && kind.kind === "Pod") forgetPod(state, removed)
  })
}

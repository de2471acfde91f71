/**
 * The subresources that act rather than show: a pod's `eviction` (a delete that a
 * PodDisruptionBudget may refuse with 429, as the API server's eviction REST does) and
 * a service account's `token` (a TokenRequest answered with an opaque token).
 *
 * @internal
 */
import { json, type RawRequest, type RawResponse, readBody } from "./http.js"
import { isObject, type JsonObject } from "./json.js"
import type { KindInfo } from "./kinds.js"
import type { FakeState, Route } from "./state.js"
import * as Status from "./status.js"
import type { Entry } from "./store.js"

const matchesSelector = (selector: unknown, labels: JsonObject): boolean => {
  // policy/v1: a missing selector matches no pod, an empty one every pod of the namespace
  if (!isObject(selector)) return false
  const matchLabels = isObject(selector.matchLabels) ? selector.matchLabels : {}
  const expressions = Array.isArray(selector.matchExpressions) ? selector.matchExpressions : []
  if (Object.keys(matchLabels).length === 0 && expressions.length === 0) return true
  for (const [k, v] of Object.entries(matchLabels)) if (labels[k] !== v) return false
  for (const e of expressions) {
    if (!isObject(e) || typeof e.key !== "string") return false
    const values = Array.isArray(e.values) ? e.values : []
    const has = Object.prototype.hasOwnProperty.call(labels, e.key)
    const value = labels[e.key]
    if (e.operator === "In" && !(has && values.includes(value))) return false
    if (e.operator === "NotIn" && has && values.includes(value)) return false
    if (e.operator === "Exists" && !has) return false
    if (e.operator === "DoesNotExist" && has) return false
  }
  return true
}

const labelsOf = (obj: JsonObject): JsonObject => {
  const metadata = obj.metadata as JsonObject
  return isObject(metadata.labels) ? metadata.labels : {}
}

/** A pod that counts toward a budget: running, ready (or no Ready condition), not being deleted. */
const isHealthy = (pod: JsonObject): boolean => {
  const status = isObject(pod.status) ? pod.status : {}
  if ((pod.metadata as JsonObject).deletionTimestamp !== undefined || status.phase !== "Running") return false
  const conditions = Array.isArray(status.conditions) ? status.conditions : []
  const ready = conditions.find((c) => isObject(c) && c.type === "Ready")
  return !isObject(ready) || ready.status === "True"
}

/** An int-or-percent of `total`, rounded up as the disruption controller does. */
const scaled = (value: unknown, total: number): number | undefined => {
  if (typeof value === "number") return value
  if (typeof value === "string" && /^\d+%$/.test(value)) return Math.ceil((Number(value.slice(0, -1)) * total) / 100)
  if (typeof value === "string" && /^\d+$/.test(value)) return Number(value)
  return undefined
}

/** Pods that need no budget: not running yet, finished, or already being deleted. */
const ignoresBudget = (pod: JsonObject): boolean => {
  const phase = isObject(pod.status) ? pod.status.phase : undefined
  return (pod.metadata as JsonObject).deletionTimestamp !== undefined || phase === "Pending" ||
    phase === "Succeeded" || phase === "Failed" || phase === undefined
}

const tooManyRequests = (message: string, causes: ReadonlyArray<{ reason: string; message: string }>) =>
  new Status.StatusError(429, "TooManyRequests", message, { causes })

/**
 * POST of a policy/v1 Eviction: the pod is deleted (with the eviction's delete options)
 * unless a disruption budget would be violated (429, the API server's message and
 * cause). More than one budget for the pod is refused as the API server refuses it.
 *
 * @internal
 */
export const evict = async (
  state: FakeState,
  route: Route,
  request: RawRequest,
  deletePod: (options: JsonObject) => RawResponse
): Promise<RawResponse> => {
  if (!(route.kind.group === "" && route.kind.kind === "Pod")) throw Status.pathNotFound()
  const body = await readBody(request)
  if (!isObject(body) || (body.kind !== undefined && body.kind !== "Eviction")) {
    throw Status.badRequest("the body of an eviction must be a policy/v1 Eviction")
  }
  const metadata = isObject(body.metadata) ? body.metadata : {}
  if (metadata.name !== undefined && metadata.name !== route.name) {
    throw Status.badRequest(`name in URL does not match name in Eviction object`)
  }
  const pod = state.entryOf(route)
  const options: JsonObject = isObject(body.deleteOptions) ? { ...body.deleteOptions } : {}
  const dryRun = Array.isArray(options.dryRun) && options.dryRun.includes("All")
  if (!ignoresBudget(pod.obj)) {
    const pdbKind = state.kindFor("policy/v1", "PodDisruptionBudget")
    const labels = labelsOf(pod.obj)
    const budgets = [...state.collectionOf(pdbKind).entries.values()].filter((e) =>
      e.namespace === pod.namespace && matchesSelector((e.obj.spec as JsonObject | undefined)?.selector, labels)
    )
    if (budgets.length > 1) {
      throw new Status.StatusError(
        500,
        "InternalError",
        "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.",
        {}
      )
    }
    const budget = budgets[0]
    if (budget !== undefined) checkBudget(state, budget, pod)
  }
  deletePod(dryRun ? { ...options, dryRun: ["All"] } : options)
  return json(201, {
    kind: "Status",
    apiVersion: "v1",
    metadata: {},
    status: "Success",
    code: 201
  })
}

const checkBudget = (state: FakeState, budget: Entry, pod: Entry): void => {
  const spec = isObject(budget.obj.spec) ? budget.obj.spec : {}
  const podKind: KindInfo = state.kindFor("v1", "Pod")
  const selected = [...state.collectionOf(podKind).entries.values()].filter((e) =>
    e.namespace === pod.namespace && matchesSelector(spec.selector, labelsOf(e.obj))
  )
  const healthy = selected.filter((e) => isHealthy(e.obj)).length
  const expected = selected.length
  const desired = spec.minAvailable !== undefined
    ? scaled(spec.minAvailable, expected) ?? 0
    : spec.maxUnavailable !== undefined
    ? Math.max(0, expected - (scaled(spec.maxUnavailable, expected) ?? 0))
    : 0
  // IfHealthyBudget (the default): an unhealthy pod may go while the budget holds; a healthy one if one can be spared
  if (!isHealthy(pod.obj) ? healthy >= desired : healthy - 1 >= desired) return
  throw tooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", [{
    reason: "DisruptionBudget",
    message: `The disruption budget ${budget.name} needs ${desired} healthy pods and has ${healthy} currently`
  }])
}

/** The default and the bounds of a token's life, as the API server has them. */
const defaultExpirationSeconds = 3600
const minimumExpirationSeconds = 600

/**
 * POST of an authentication/v1 TokenRequest for a service account: an opaque token and
 * its expiry (the requested life, at least 10 minutes, default one hour).
 *
 * @internal
 */
export const token = async (state: FakeState, route: Route, request: RawRequest): Promise<RawResponse> => {
  if (!(route.kind.group === "" && route.kind.kind === "ServiceAccount")) throw Status.pathNotFound()
  const body = await readBody(request)
  if (!isObject(body)) throw Status.badRequest("the body of a token request must be a TokenRequest")
  const account = state.entryOf(route)
  const spec = isObject(body.spec) ? body.spec : {}
  const requested = spec.expirationSeconds
  if (requested !== undefined && (typeof requested !== "number" || requested < minimumExpirationSeconds)) {
    throw Status.invalid({ group: "authentication.k8s.io", plural: "tokenrequests", kind: "TokenRequest" }, "", [{
      reason: "FieldValueInvalid",
      field: "spec.expirationSeconds",
      message: `Invalid value: ${JSON.stringify(requested)}: may not specify a duration less than 10 minutes`
    }])
  }
  const seconds = typeof requested === "number" ? requested : defaultExpirationSeconds
  const audiences = Array.isArray(spec.audiences) && spec.audiences.length > 0
    ? spec.audiences
    : ["https://kubernetes.default.svc.cluster.local"]
  const expirationTimestamp = new Date(Date.now() + seconds * 1000).toISOString().replace(/\.\d{3}Z$/, "Z")
  const opaque = `fake-sa-token.${crypto.randomUUID().replaceAll("-", "")}`
  return json(201, {
    kind: "TokenRequest",
    apiVersion: "authentication.k8s.io/v1",
    metadata: { name: account.name, namespace: account.namespace, creationTimestamp: null },
    spec: { ...spec, audiences, expirationSeconds: seconds },
    status: { token: opaque, expirationTimestamp }
  })
}

/**
 * The subresources that act rather than show: a pod's `eviction` (a delete that a
 * PodDisruptionBudget may refuse with 429, as the API server's eviction REST does) and
 * a service account's `token` (a TokenRequest answered with a signed service-account
 * token).
 *
 * @internal
 */
import { rfc3339 } from "../store/clock.js"
import { entriesOf, selectorMatches } from "../controllers/api.js"
import { budgetKind, budgetOf, isHealthy } from "../controllers/disruption.js"
import { json, type RawRequest, type RawResponse, readBody } from "../serve/http.js"
import { isObject, type JsonObject } from "../store/json.js"
import type { FakeState, Route } from "../store/state.js"
import * as Status from "../serve/statusBodies.js"
import type { Entry } from "../store/store.js"
import { issue, issuer, type Named } from "../serve/tokens.js"

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
    const labels = isObject((pod.obj.metadata as JsonObject).labels) ? (pod.obj.metadata as JsonObject).labels : {}
    const budgets = entriesOf(state, budgetKind(state), pod.namespace).filter((e) =>
      selectorMatches((e.obj.spec as JsonObject | undefined)?.selector, labels)
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
  const { desired, healthy } = budgetOf(state, budget)
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
const maximumExpirationSeconds = 2 ** 32

const tokenRequestKind = { group: "authentication.k8s.io", plural: "tokenrequests", kind: "TokenRequest" }

/**
 * What a token is bound to (`spec.boundObjectRef`): a Pod (running as the account), a
 * Secret or a Node of the fake, checked as the API server checks it.
 */
const boundObject = (
  state: FakeState,
  account: Entry,
  ref: JsonObject
): { readonly pod?: Named; readonly secret?: Named; readonly node?: Named } => {
  const kind = typeof ref.kind === "string" ? ref.kind : ""
  const apiVersion = typeof ref.apiVersion === "string" ? ref.apiVersion : ""
  const name = typeof ref.name === "string" ? ref.name : ""
  const plural = kind === "Pod" ? "pods" : kind === "Secret" ? "secrets" : kind === "Node" ? "nodes" : undefined
  if (plural === undefined || apiVersion !== "v1") {
    const group = apiVersion.includes("/") ? apiVersion.slice(0, apiVersion.indexOf("/")) : ""
    const version = apiVersion.includes("/") ? apiVersion.slice(apiVersion.indexOf("/") + 1) : apiVersion
    throw Status.badRequest(`cannot bind token to object of type ${group}/${version}, Kind=${kind}`)
  }
  const objectKind = state.kindFor("v1", plural)
  const object = state.entryOf({
    kind: objectKind,
    version: "v1",
    namespace: plural === "nodes" ? undefined : account.namespace,
    name,
    subresource: undefined,
    watchPath: false
  })
  if (plural === "pods") {
    const runsAs = (object.obj.spec as JsonObject | undefined)?.serviceAccountName ?? "default"
    if (runsAs !== account.name) {
      throw Status.badRequest(
        `cannot bind token for serviceaccount ${JSON.stringify(account.name)} to pod running with serviceaccount ` +
          JSON.stringify(runsAs)
      )
    }
  }
  if (typeof ref.uid === "string" && ref.uid !== "" && ref.uid !== object.uid) {
    throw new Status.StatusError(
      409,
      "Conflict",
      `Operation cannot be fulfilled on ${kind} ${JSON.stringify(name)}: the UID in the bound object reference ` +
        `(${ref.uid}) does not match the UID in record (${object.uid}). The object might have been deleted and then ` +
        "recreated",
      { name, kind }
    )
  }
  const bound = { name: object.name, uid: object.uid }
  if (plural === "secrets") return { secret: bound }
  if (plural === "nodes") return { node: bound }
  // a token bound to a pod also names the pod's node
  const nodeName = (object.obj.spec as JsonObject | undefined)?.nodeName
  const node = typeof nodeName === "string" && nodeName !== "" ?
    state.store.existing(state.kindFor("v1", "nodes"))?.entries.get(`/${nodeName}`) :
    undefined
  return { pod: bound, ...(node !== undefined ? { node: { name: node.name, uid: node.uid } } : {}) }
}

/** The fields a TokenRequest's spec sets, as FieldsV1 (its lists atomic, its boundObjectRef a struct). */
const sentFields = (spec: JsonObject): JsonObject =>
  Object.fromEntries(
    Object.entries(spec).filter(([, v]) => v !== null && v !== undefined).map(([k, v]) => [
      `f:${k}`,
      isObject(v) && !Array.isArray(v)
        ? { ...Object.fromEntries(Object.keys(v).map((f) => [`f:${f}`, {}])) }
        : {}
    ])
  ) as JsonObject

/**
 * POST of an authentication/v1 TokenRequest for a service account: a signed
 * service-account JWT (see `tokens.ts`) and its expiry: the requested life (at least 10
 * minutes, one hour when unset or null), for the requested audiences (the API server's
 * own by default), bound to a pod, secret or node when asked.
 *
 * @internal
 */
export const token = async (
  state: FakeState,
  route: Route,
  request: RawRequest,
  manager = "unknown"
): Promise<RawResponse> => {
  if (!(route.kind.group === "" && route.kind.kind === "ServiceAccount")) throw Status.pathNotFound()
  const body = await readBody(request)
  if (!isObject(body)) throw Status.badRequest("the body of a token request must be a TokenRequest")
  const account = state.entryOf(route)
  const spec = isObject(body.spec) ? body.spec : {}
  const requested = spec.expirationSeconds ?? undefined
  const invalid = (message: string) =>
    Status.invalid(tokenRequestKind, "", [{
      reason: "FieldValueInvalid",
      field: "spec.expirationSeconds",
      message: `Invalid value: ${JSON.stringify(requested)}: ${message}`
    }])
  if (requested !== undefined) {
    if (typeof requested !== "number" || !Number.isInteger(requested)) throw invalid("must be an integer")
    if (requested < minimumExpirationSeconds) throw invalid("may not specify a duration less than 10 minutes")
    if (requested > maximumExpirationSeconds) throw invalid("may not specify a duration larger than 2^32 seconds")
  }
  const seconds = requested ?? defaultExpirationSeconds
  const audiences = Array.isArray(spec.audiences) && spec.audiences.length > 0 ?
    spec.audiences.filter((a): a is string => typeof a === "string") :
    [issuer]
  const ref = isObject(spec.boundObjectRef) ? spec.boundObjectRef : undefined
  const bound = ref === undefined ? {} : boundObject(state, account, ref)
  const boundUid = (bound.pod ?? bound.secret ?? bound.node)?.uid
  const issued = await issue(state, {
    namespace: account.namespace,
    serviceAccount: { name: account.name, uid: account.uid },
    ...bound,
    audiences
  }, seconds)
  return json(201, {
    kind: "TokenRequest",
    apiVersion: "authentication.k8s.io/v1",
    // the create handler fills the TokenRequest's system fields and records the request's fields for its manager
    metadata: {
      name: account.name,
      namespace: account.namespace,
      uid: crypto.randomUUID(),
      creationTimestamp: state.now(),
      managedFields: [{
        manager,
        operation: "Update",
        apiVersion: "authentication.k8s.io/v1",
        time: state.now(),
        fieldsType: "FieldsV1",
        fieldsV1: { "f:spec": sentFields(spec) },
        subresource: "token"
      }]
    },
    spec: {
      audiences,
      expirationSeconds: seconds,
      boundObjectRef: ref === undefined ?
        null :
        { kind: ref.kind, apiVersion: ref.apiVersion, name: ref.name, uid: boundUid }
    },
    status: { token: issued.token, expirationTimestamp: rfc3339(issued.expiresAt) }
  })
}

/**
 * The review kinds (authorization.k8s.io SubjectAccessReview and its local and self
 * forms, SelfSubjectRulesReview; authentication.k8s.io TokenReview and
 * SelfSubjectReview): create-only, never stored, answered with the request and a
 * `status`. Access reviews are answered by the fake's authorizer (RBAC, or every access
 * allowed, as for a cluster admin), rules reviews with the rules RBAC gives; a token review authenticates the fake's own token and the service-account
 * tokens it issued (for the audiences asked, the API server's own by default).
 *
 * @internal
 */
import { json, type RawRequest, type RawResponse } from "../serve/http.js"
import type { FakeState } from "../store/state.js"
import * as Status from "../serve/statusBodies.js"
import { issuer, userOf, verify } from "../serve/tokens.js"
import * as Authz from "../authz/index.js"
import type { Attributes } from "../authz/attributes.js"
import { rulesFor, type UserInfo } from "../authz/rbac.js"

const reviewKinds = new Set([
  "subjectaccessreviews",
  "localsubjectaccessreviews",
  "selfsubjectaccessreviews",
  "selfsubjectrulesreviews",
  "tokenreviews",
  "selfsubjectreviews"
])

/** Whether a resource is a review kind. @internal */
export const isReview = (group: string, plural: string): boolean =>
  (group === "authorization.k8s.io" || group === "authentication.k8s.io") && reviewKinds.has(plural)

const isObject = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/** Answers the POST of a review with its status. @internal */
export const review = async (
  plural: string,
  namespace: string | undefined,
  token: string | undefined,
  request: RawRequest,
  state?: FakeState | undefined,
  requester?: Authz.Requester | undefined
): Promise<RawResponse> => {
  let body: unknown
  try {
    body = JSON.parse(await request.text())
  } catch {
    throw Status.badRequest("the request body is not JSON")
  }
  if (!isObject(body)) throw Status.badRequest("the request body is not an object")
  const spec = isObject(body["spec"]) ? body["spec"] : {}
  const attributes = isObject(spec["resourceAttributes"]) || isObject(spec["nonResourceAttributes"])
  if (plural.endsWith("accessreviews") && !attributes) {
    const kind = String(body["kind"] ?? "SubjectAccessReview")
    throw Status.invalid({ group: "authorization.k8s.io", kind, plural }, "", [
      {
        reason: "FieldValueRequired",
        field: "spec.resourceAttributes",
        message: "exactly one of nonResourceAttributes or resourceAttributes must be specified"
      }
    ])
  }
  const metadata = { ...(isObject(body["metadata"]) ? body["metadata"] : {}), creationTimestamp: null }
  const self = requester?.user ?? Authz.admin
  const status = plural.endsWith("accessreviews")
    ? accessReview(state, plural === "selfsubjectaccessreviews" ? self : reviewedUser(spec), spec, namespace)
    : plural === "selfsubjectrulesreviews"
    ? rulesReview(state, self, spec)
    : plural === "tokenreviews"
    ? tokenReview(spec, token, state)
    : { userInfo: requester === undefined ? requesterOf(request, state) : userInfo(requester.user) }
  return json(201, {
    ...body,
    metadata: namespace !== undefined ? { ...metadata, namespace } : metadata,
    spec,
    status
  })
}

const admin = { username: "fake-admin", groups: ["system:masters", "system:authenticated"] }

/** A TokenReview's status: the fake's own token is its admin; a service-account token its account. */
const tokenReview = (
  spec: Record<string, unknown>,
  token: string | undefined,
  state: FakeState | undefined
): Record<string, unknown> => {
  const presented = spec["token"]
  const asked = Array.isArray(spec["audiences"]) && spec["audiences"].length > 0 ?
    spec["audiences"].filter((a): a is string => typeof a === "string") :
    undefined
  if (typeof presented === "string" && state !== undefined && presented.split(".").length === 3) {
    const claims = verify(state, presented, asked ?? [issuer])
    if (!("error" in claims)) return { authenticated: true, user: userOf(claims), audiences: claims.audiences }
    if (presented !== token) return { user: {}, error: claims.error }
  }
  if (token === undefined || presented === token) {
    return { authenticated: true, user: admin, ...(asked !== undefined ? { audiences: asked } : {}) }
  }
  return { user: {}, error: "invalid bearer token" }
}

const userInfo = (user: UserInfo): Record<string, unknown> => ({
  username: user.username,
  ...(user.uid !== undefined ? { uid: user.uid } : {}),
  groups: user.groups,
  ...(user.extra !== undefined && Object.keys(user.extra).length > 0 ? { extra: user.extra } : {})
})

const strings = (u: unknown): Array<string> => (Array.isArray(u) ? u.filter((s): s is string => typeof s === "string") : [])

/** The user a SubjectAccessReview asks about. */
const reviewedUser = (spec: Record<string, unknown>): UserInfo => ({
  username: typeof spec["user"] === "string" ? spec["user"] : "",
  ...(typeof spec["uid"] === "string" ? { uid: spec["uid"] } : {}),
  groups: strings(spec["groups"])
})

const text = (u: unknown): string => (typeof u === "string" ? u : "")

/** An access review's answer: its attributes decided as a request with them would be. */
const accessReview = (
  state: FakeState | undefined,
  user: UserInfo,
  spec: Record<string, unknown>,
  pathNamespace: string | undefined
): Record<string, unknown> => {
  if (state === undefined) return { allowed: true, reason: "the fake cluster allows every request" }
  const resource = spec["resourceAttributes"]
  const attributes: Attributes = isObject(resource)
    ? {
      resourceRequest: true,
      verb: text(resource["verb"]),
      apiGroup: text(resource["group"]),
      apiVersion: text(resource["version"]),
      resource: text(resource["resource"]),
      subresource: text(resource["subresource"]),
      namespace: pathNamespace ?? text(resource["namespace"]),
      name: text(resource["name"])
    }
    : (() => {
      const other = spec["nonResourceAttributes"] as Record<string, unknown>
      return { resourceRequest: false, verb: text(other["verb"]), path: text(other["path"]) }
    })()
  const decision = Authz.review(state, user, attributes)
  return decision.reason === "" ? { allowed: decision.allowed } : { allowed: decision.allowed, reason: decision.reason }
}

/** A SelfSubjectRulesReview's answer: the rules RBAC gives the user in the namespace. */
const rulesReview = (state: FakeState | undefined, user: UserInfo, spec: Record<string, unknown>): Record<string, unknown> => {
  if (state === undefined || !Authz.enforces(state)) {
    return { resourceRules: [{ verbs: ["*"], apiGroups: ["*"], resources: ["*"] }], nonResourceRules: [], incomplete: false }
  }
  const resourceRules: Array<Record<string, unknown>> = []
  const nonResourceRules: Array<Record<string, unknown>> = []
  if (user.groups.includes("system:masters")) {
    resourceRules.push({ verbs: ["*"], apiGroups: ["*"], resources: ["*"] })
    nonResourceRules.push({ verbs: ["*"], nonResourceURLs: ["*"] })
  }
  const held = rulesFor(state, user, text(spec["namespace"]))
  for (const rule of held.rules) {
    if ((rule.resources ?? []).length > 0) {
      resourceRules.push({
        verbs: rule.verbs,
        ...((rule.apiGroups ?? []).length > 0 ? { apiGroups: rule.apiGroups } : {}),
        resources: rule.resources,
        ...((rule.resourceNames ?? []).length > 0 ? { resourceNames: rule.resourceNames } : {})
      })
    }
    if ((rule.nonResourceURLs ?? []).length > 0) nonResourceRules.push({ verbs: rule.verbs, nonResourceURLs: rule.nonResourceURLs })
  }
  return {
    resourceRules,
    nonResourceRules,
    incomplete: false,
    ...(held.errors.length > 0 ? { evaluationError: held.errors.map((e) => `${e.cluster ? "clusterrole" : "role"}.rbac.authorization.k8s.io "${e.name}" not found`).join(", ") } : {})
  }
}

/** Who sent a request: the account of a service-account token, else the fake's admin. */
const requesterOf = (request: RawRequest, state: FakeState | undefined): Record<string, unknown> => {
  const authorization = request.header("authorization")
  if (state === undefined || authorization === undefined || !authorization.startsWith("Bearer ")) return admin
  const claims = verify(state, authorization.slice(7))
  return "error" in claims ? admin : userOf(claims)
}

/**
 * The review kinds (authorization.k8s.io SubjectAccessReview and its local and self
 * forms, SelfSubjectRulesReview; authentication.k8s.io TokenReview and
 * SelfSubjectReview): create-only, never stored, answered with the request and a
 * `status`. The fake has no authorizer, so every access is allowed, as for a cluster
 * admin; a token review authenticates the fake's own token and the service-account
 * tokens it issued (for the audiences asked, the API server's own by default).
 *
 * @internal
 */
import { json, type RawRequest, type RawResponse } from "../serve/http.js"
import type { FakeState } from "../store/state.js"
import * as Status from "../serve/statusBodies.js"
import { issuer, userOf, verify } from "../serve/tokens.js"

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
  state?: FakeState | undefined
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
  const status = plural.endsWith("accessreviews")
    ? { allowed: true, reason: "the fake cluster allows every request" }
    : plural === "selfsubjectrulesreviews"
    ? { resourceRules: [{ verbs: ["*"], apiGroups: ["*"], resources: ["*"] }], nonResourceRules: [], incomplete: false }
    : plural === "tokenreviews"
    ? tokenReview(spec, token, state)
    : { userInfo: requester(request, state) }
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

/** Who sent a request: the account of a service-account token, else the fake's admin. */
const requester = (request: RawRequest, state: FakeState | undefined): Record<string, unknown> => {
  const authorization = request.header("authorization")
  if (state === undefined || authorization === undefined || !authorization.startsWith("Bearer ")) return admin
  const claims = verify(state, authorization.slice(7))
  return "error" in claims ? admin : userOf(claims)
}

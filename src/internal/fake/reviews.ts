/**
 * The review kinds (authorization.k8s.io SubjectAccessReview and its local and self
 * forms, SelfSubjectRulesReview; authentication.k8s.io TokenReview and
 * SelfSubjectReview): create-only, never stored, answered with the request and a
 * `status`. The fake has no authorizer, so every access is allowed, as for a cluster
 * admin; a token review authenticates the fake's own token.
 *
 * @internal
 */
import { json, type RawRequest, type RawResponse } from "./http.js"
import * as Status from "./status.js"

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
  request: RawRequest
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
    ? (token === undefined || spec["token"] === token
      ? { authenticated: true, user: { username: "fake-admin", groups: ["system:masters", "system:authenticated"] } }
      : { authenticated: false, error: "invalid bearer token" })
    : { userInfo: { username: "fake-admin", groups: ["system:masters", "system:authenticated"] } }
  return json(201, {
    ...body,
    metadata: namespace !== undefined ? { ...metadata, namespace } : metadata,
    spec,
    status
  })
}

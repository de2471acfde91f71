/**
 * A non-2xx answer as an ApiError (internal/client/statusMapping.ts): the server's Status, its
 * reason, Retry-After and a body that is not a Status. Moved out of the request-building tests.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Util from "node:util"
import { ApiError } from "../../../packages/effect-kube/src/Errors.js"
import * as client from "../../../packages/effect-kube/src/internal/client/execute.js"

describe("ApiError", () => {
  const spec = { method: "GET", path: "/api/v1/namespaces/default/pods/x" } as const

  it("reads the server's Status and formats the message exactly", () => {
    const status = {
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: "pods \"x\" not found",
      reason: "NotFound",
      details: { name: "x", kind: "pods" },
      code: 404
    }
    const error = client.apiErrorFrom(spec, 404, JSON.stringify(status))
    expect(error.message).toBe("k8s: GET /api/v1/namespaces/default/pods/x: 404 NotFound: pods \"x\" not found")
    expect(error.status).toEqual(status)
    expect(error.body).toBeUndefined()
    expect(ApiError.isNotFound(error)).toBe(true)
    expect(ApiError.isConflict(error)).toBe(false)
  })

  it("tells AlreadyExists from Conflict and reads Retry-After", () => {
    const exists = client.apiErrorFrom(spec, 409, JSON.stringify({ kind: "Status", reason: "AlreadyExists", code: 409, message: "exists" }))
    expect(ApiError.isAlreadyExists(exists)).toBe(true)
    expect(ApiError.isConflict(exists)).toBe(false)
    const throttled = client.apiErrorFrom(spec, 429, "", "7")
    expect(throttled.reason).toBe("TooManyRequests")
    expect(throttled.retryAfter).toBe(7)
    expect(ApiError.isTooManyRequests(throttled)).toBe(true)
  })

  it("names a body that is not a Status by its type and length, and keeps it where it does not print", () => {
    const body = "<html>" + "x".repeat(5000)
    const error = client.apiErrorFrom(spec, 502, body, undefined, 0, "text/html; charset=utf-8")
    expect(error.reason).toBe("Unknown")
    expect(error.status).toBeUndefined()
    expect(error.message).toBe("k8s: GET /api/v1/namespaces/default/pods/x: 502 Unknown: server error (a text/html body of 5,006 bytes)")
    // kept for a person to look at (its first 4,096 characters), but no rendering of the error shows it
    expect(error.body).toBe(body.slice(0, 4096))
    expect(JSON.stringify(error)).not.toContain("xxxx")
    expect(Util.inspect(error, { depth: 10 })).not.toContain("xxxx")
    expect(String(error)).not.toContain("xxxx")
  })
})

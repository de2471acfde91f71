import { describe, expect, it } from "@effect/vitest"
import { readFileSync } from "node:fs"
import { ApiError } from "../src/Errors.js"
import * as client from "../src/internal/client.js"
import * as Patch from "../src/Patch.js"
import * as Resource from "../src/Resource.js"
import { userAgent } from "../src/internal/version.js"
import { Jobs, Namespaces, Pods } from "../src/resources/index.js"

describe("request building (pure)", () => {
  it("builds paths for core, grouped and cluster-scoped kinds", () => {
    expect(Resource.collectionPath(Pods, "default")).toBe("/api/v1/namespaces/default/pods")
    expect(Resource.collectionPath(Pods, undefined)).toBe("/api/v1/pods")
    expect(Resource.objectPath(Jobs, "batch", "nightly")).toBe("/apis/batch/v1/namespaces/batch/jobs/nightly")
    expect(Resource.objectPath(Pods, "ns", "p", "log")).toBe("/api/v1/namespaces/ns/pods/p/log")
    expect(Resource.objectPath(Namespaces, undefined, "prod")).toBe("/api/v1/namespaces/prod")
    const crd = Resource.make({
      apiVersion: "stable.example.com/v1beta1",
      kind: "CronTab",
      plural: "crontabs",
      namespaced: true,
      schema: Pods.schema
    })
    expect([crd.group, crd.version]).toEqual(["stable.example.com", "v1beta1"])
    expect(Resource.collectionPath(crd, "a")).toBe("/apis/stable.example.com/v1beta1/namespaces/a/crontabs")
  })

  it("percent-encodes selectors and leaves out undefined query values", () => {
    const spec: client.Spec = {
      method: "GET",
      path: "/api/v1/namespaces/default/pods",
      query: { labelSelector: "app in (a,b),tier!=db", fieldSelector: "metadata.name=x", limit: 5, continue: undefined }
    }
    expect(client.pathWithQuery(spec)).toBe(
      "/api/v1/namespaces/default/pods?labelSelector=app+in+%28a%2Cb%29%2Ctier%21%3Ddb&fieldSelector=metadata.name%3Dx&limit=5"
    )
    expect(new URL(`http://h${client.pathWithQuery(spec)}`).searchParams.get("labelSelector")).toBe(
      "app in (a,b),tier!=db"
    )
  })

  it("builds a request with the server prefix, JSON accept and the user agent", () => {
    const request = client.buildRequest("https://k8s.example:6443/prefix", {
      method: "PATCH",
      path: "/api/v1/namespaces/default/pods/p",
      query: { fieldManager: "me", force: true },
      body: { contentType: Patch.contentType(Patch.apply({}, { fieldManager: "me" })), text: "{}" }
    })
    expect(request.method).toBe("PATCH")
    expect(request.url).toBe("https://k8s.example:6443/prefix/api/v1/namespaces/default/pods/p?fieldManager=me&force=true")
    expect(request.headers["accept"]).toBe("application/json")
    const { version } = JSON.parse(readFileSync("package.json", "utf8")) as { version: string }
    expect(request.headers["user-agent"]).toBe(`effect-kube/${version}`)
    expect(userAgent).toBe(`effect-kube/${version}`)
    expect(request.body._tag).toBe("Uint8Array")
    expect(request.body._tag === "Uint8Array" && request.body.contentType).toBe("application/apply-patch+yaml")
  })

  it("gives each patch kind its content type and body", () => {
    expect(Patch.contentType(Patch.merge({}))).toBe("application/merge-patch+json")
    expect(Patch.contentType(Patch.json([]))).toBe("application/json-patch+json")
    expect(Patch.contentType(Patch.strategic({}))).toBe("application/strategic-merge-patch+json")
    expect(Patch.bodyText(Patch.json([{ op: "remove", path: "/a" }]))).toBe('[{"op":"remove","path":"/a"}]')
  })
})

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

  it("keeps a body that is not a Status, cut short", () => {
    const error = client.apiErrorFrom(spec, 502, "<html>" + "x".repeat(1000))
    expect(error.reason).toBe("Unknown")
    expect(error.status).toBeUndefined()
    expect(error.body?.length).toBe(300)
    expect(error.message.startsWith("k8s: GET /api/v1/namespaces/default/pods/x: 502 Unknown: <html>")).toBe(true)
  })
})

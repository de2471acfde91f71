import { describe, expect, it } from "@effect/vitest"
import { readFileSync } from "node:fs"
import * as request from "../../../packages/effect-kube/src/internal/request/verbs.js"
import { pathWithQuery, type Spec, toHttpRequest } from "../../../packages/effect-kube/src/internal/request/spec.js"
import * as Patch from "../../../packages/effect-kube/src/Patch.js"
import * as Resource from "../../../packages/effect-kube/src/Resource.js"
import { userAgent } from "../../../packages/effect-kube/src/internal/request/userAgent.js"
import { Jobs, Namespaces, Pods } from "../../../packages/effect-kube/src/resources/index.js"

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
    const spec: Spec = {
      method: "GET",
      path: "/api/v1/namespaces/default/pods",
      query: { labelSelector: "app in (a,b),tier!=db", fieldSelector: "metadata.name=x", limit: 5, continue: undefined },
      operation: { verb: "list", kind: "Pod", namespace: "default" }
    }
    expect(pathWithQuery(spec)).toBe(
      "/api/v1/namespaces/default/pods?labelSelector=app+in+%28a%2Cb%29%2Ctier%21%3Ddb&fieldSelector=metadata.name%3Dx&limit=5"
    )
    expect(new URL(`http://h${pathWithQuery(spec)}`).searchParams.get("labelSelector")).toBe(
      "app in (a,b),tier!=db"
    )
  })

  it("builds a request with the server prefix, JSON accept and the user agent", () => {
    const built = toHttpRequest(
      "https://k8s.example:6443/prefix",
      request.patch(Pods, "default", "p", Patch.apply({}, { fieldManager: "me", force: true }), { fieldManager: "me" })
    )
    expect(built.method).toBe("PATCH")
    expect(built.url).toBe("https://k8s.example:6443/prefix/api/v1/namespaces/default/pods/p?fieldManager=me&force=true")
    expect(built.headers["accept"]).toBe("application/json")
    const { version } = JSON.parse(readFileSync("packages/effect-kube/package.json", "utf8")) as { version: string }
    expect(built.headers["user-agent"]).toBe(`effect-kube/${version}`)
    expect(userAgent).toBe(`effect-kube/${version}`)
    expect(built.body._tag).toBe("Uint8Array")
    expect(built.body._tag === "Uint8Array" && built.body.contentType).toBe("application/apply-patch+yaml")
  })

  it("gives each patch kind its content type and body", () => {
    expect(Patch.contentType(Patch.merge({}))).toBe("application/merge-patch+json")
    expect(Patch.contentType(Patch.json([]))).toBe("application/json-patch+json")
    expect(Patch.contentType(Patch.strategic({}))).toBe("application/strategic-merge-patch+json")
    expect(Patch.bodyText(Patch.json([{ op: "remove", path: "/a" }]))).toBe('[{"op":"remove","path":"/a"}]')
  })
})

describe("the request of every operation (pure, request/)", () => {
  const pod = { apiVersion: "v1", kind: "Pod", metadata: { name: "p", namespace: "ns" } }

  it("get, list, create and replace", () => {
    expect(request.get(Pods, "ns", "p")).toEqual({
      method: "GET",
      path: "/api/v1/namespaces/ns/pods/p",
      operation: { verb: "get", kind: "Pod", namespace: "ns", name: "p" }
    })
    const list = request.list(Pods, undefined, { labelSelector: "app=a", fieldSelector: " ", limit: 10, continue: "c" })
    expect(list.method).toBe("GET")
    expect(pathWithQuery(list)).toBe("/api/v1/pods?labelSelector=app%3Da&limit=10&continue=c")
    expect(list.operation).toEqual({ verb: "list", kind: "Pod", namespace: undefined })
    const create = request.create(Pods, "ns", pod, { dryRun: true, fieldManager: "me" })
    expect([create.method, pathWithQuery(create)]).toEqual(["POST", "/api/v1/namespaces/ns/pods?dryRun=All&fieldManager=me"])
    expect(create.body).toEqual({ contentType: "application/json", text: JSON.stringify(pod) })
    expect(create.operation.verb).toBe("create")
    const replace = request.replace(Jobs, "batch", "j", { metadata: { name: "j" } }, {})
    expect([replace.method, pathWithQuery(replace)]).toEqual(["PUT", "/apis/batch/v1/namespaces/batch/jobs/j"])
    expect(replace.operation).toEqual({ verb: "replace", kind: "Job", namespace: "batch", name: "j" })
  })

  it("each patch kind with its content type; apply with its field manager and force", () => {
    const merge = request.patch(Pods, "ns", "p", Patch.merge({ a: 1 }), {})
    expect([merge.method, pathWithQuery(merge), merge.body, merge.operation.verb]).toEqual([
      "PATCH",
      "/api/v1/namespaces/ns/pods/p",
      { contentType: "application/merge-patch+json", text: "{\"a\":1}" },
      "patch"
    ])
    expect(request.patch(Pods, "ns", "p", Patch.json([]), {}).body?.contentType).toBe("application/json-patch+json")
    expect(request.patch(Pods, "ns", "p", Patch.strategic({}), { fieldManager: "m" }).query).toEqual({
      dryRun: undefined,
      fieldManager: "m",
      force: undefined
    })
    const apply = request.patch(Pods, "ns", "p", Patch.apply(pod, { force: true }), { fieldManager: "me", dryRun: true })
    expect(pathWithQuery(apply)).toBe("/api/v1/namespaces/ns/pods/p?dryRun=All&fieldManager=me&force=true")
    expect(apply.body).toEqual({ contentType: "application/apply-patch+yaml", text: JSON.stringify(pod) })
    expect(apply.operation).toEqual({ verb: "apply", kind: "Pod", namespace: "ns", name: "p" })
  })

  it("delete and delete-collection carry DeleteOptions in the body", () => {
    const del = request.del(Pods, "ns", "p", { propagationPolicy: "Foreground", preconditions: { uid: "u" } })
    expect([del.method, pathWithQuery(del)]).toEqual(["DELETE", "/api/v1/namespaces/ns/pods/p"])
    expect(JSON.parse(del.body!.text)).toEqual({
      kind: "DeleteOptions",
      apiVersion: "v1",
      propagationPolicy: "Foreground",
      preconditions: { uid: "u" }
    })
    const all = request.deleteCollection(Pods, "ns", { labelSelector: "app=a", gracePeriodSeconds: 0, dryRun: true })
    expect([all.method, pathWithQuery(all)]).toEqual(["DELETE", "/api/v1/namespaces/ns/pods?labelSelector=app%3Da"])
    expect(JSON.parse(all.body!.text)).toEqual({
      kind: "DeleteOptions",
      apiVersion: "v1",
      gracePeriodSeconds: 0,
      dryRun: ["All"]
    })
    expect(all.operation).toEqual({ verb: "deleteAll", kind: "Pod", namespace: "ns" })
  })

  it("watch, with the parameters sendInitialEvents needs", () => {
    expect(pathWithQuery(request.watch(Pods, "ns", { resourceVersion: "5", timeoutSeconds: 60 }))).toBe(
      "/api/v1/namespaces/ns/pods?watch=true&resourceVersion=5&timeoutSeconds=60"
    )
    const initial = request.watch(Namespaces, undefined, { sendInitialEvents: true, labelSelector: "a" })
    expect(pathWithQuery(initial)).toBe(
      "/api/v1/namespaces?watch=true&labelSelector=a&resourceVersionMatch=NotOlderThan&sendInitialEvents=true&allowWatchBookmarks=true"
    )
    expect(initial.operation.verb).toBe("watch")
  })

  it("log, as text", () => {
    const log = request.log(Pods, "ns", "p", { follow: true, container: "c", tailLines: 0, timestamps: false })
    expect(pathWithQuery(log)).toBe("/api/v1/namespaces/ns/pods/p/log?container=c&follow=true&tailLines=0")
    expect(log.accept).toBe("text/plain, */*")
    expect(log.operation).toEqual({ verb: "logs", kind: "Pod", namespace: "ns", name: "p" })
  })

  it("discovery of a group version", () => {
    expect(request.discovery("v1").path).toBe("/api/v1")
    expect(request.discovery("apps/v1")).toEqual({
      method: "GET",
      path: "/apis/apps/v1",
      operation: { verb: "discovery", kind: "APIResourceList", name: "apps/v1" }
    })
  })
})

describe("the requests of subresources and request options (pure, request/)", () => {
  it("builds status, scale, ephemeralcontainers and resize requests", () => {
    expect(request.getSubresource(Pods, "ns", "p", "status", "getStatus")).toEqual({
      method: "GET",
      path: "/api/v1/namespaces/ns/pods/p/status",
      operation: { verb: "getStatus", kind: "Pod", namespace: "ns", name: "p" }
    })
    const replaced = request.replaceSubresource(Jobs, "b", "j", "status", { status: {} }, { fieldValidation: "Strict" }, "replaceStatus")
    expect(replaced.method).toBe("PUT")
    expect(pathWithQuery(replaced)).toBe("/apis/batch/v1/namespaces/b/jobs/j/status?fieldValidation=Strict")
    expect(replaced.body).toEqual({ contentType: "application/json", text: "{\"status\":{}}" })
    expect(replaced.operation).toEqual({ verb: "replaceStatus", kind: "Job", namespace: "b", name: "j" })
    const applied = request.patchSubresource(
      Jobs,
      "b",
      "j",
      "status",
      Patch.apply({ status: { active: 1 } }, { force: true }),
      { fieldManager: "ctl" },
      "applyStatus"
    )
    expect(pathWithQuery(applied)).toBe("/apis/batch/v1/namespaces/b/jobs/j/status?fieldManager=ctl&force=true")
    expect(applied.method).toBe("PATCH")
    expect(applied.body?.contentType).toBe("application/apply-patch+yaml")
    expect(applied.operation.verb).toBe("applyStatus")
    const scale = request.patchSubresource(Jobs, "b", "j", "scale", Patch.merge({ spec: { replicas: 2 } }), {}, "patchScale")
    expect(scale.path).toBe("/apis/batch/v1/namespaces/b/jobs/j/scale")
    expect(scale.body).toEqual({ contentType: "application/merge-patch+json", text: "{\"spec\":{\"replicas\":2}}" })
    expect(request.getSubresource(Pods, "ns", "p", "ephemeralcontainers", "getEphemeralContainers").path)
      .toBe("/api/v1/namespaces/ns/pods/p/ephemeralcontainers")
    expect(request.getSubresource(Pods, "ns", "p", "resize", "getResize").path).toBe("/api/v1/namespaces/ns/pods/p/resize")
  })

  it("builds an Eviction and a TokenRequest", () => {
    const evict = request.evict(Pods, "ns", "p", { deleteOptions: { gracePeriodSeconds: 0, dryRun: true } })
    expect(evict.method).toBe("POST")
    expect(evict.path).toBe("/api/v1/namespaces/ns/pods/p/eviction")
    expect(JSON.parse(evict.body!.text)).toEqual({
      apiVersion: "policy/v1",
      kind: "Eviction",
      metadata: { name: "p", namespace: "ns" },
      deleteOptions: { kind: "DeleteOptions", apiVersion: "v1", gracePeriodSeconds: 0, dryRun: ["All"] }
    })
    expect(JSON.parse(request.evict(Pods, "ns", "p", {}).body!.text)).toEqual({
      apiVersion: "policy/v1",
      kind: "Eviction",
      metadata: { name: "p", namespace: "ns" }
    })
    const token = request.createToken(Pods, "ns", "sa", {
      audiences: ["vault"],
      expirationSeconds: 3600,
      boundObjectRef: { kind: "Pod", apiVersion: "v1", name: "p" }
    })
    expect(token.path).toBe("/api/v1/namespaces/ns/pods/sa/token")
    expect(JSON.parse(token.body!.text)).toEqual({
      apiVersion: "authentication.k8s.io/v1",
      kind: "TokenRequest",
      metadata: { name: "sa", namespace: "ns" },
      spec: { audiences: ["vault"], expirationSeconds: 3600, boundObjectRef: { kind: "Pod", apiVersion: "v1", name: "p" } }
    })
    expect(token.operation.verb).toBe("createToken")
  })

  it("sends fieldValidation, get's resourceVersion, list's timeoutSeconds, deleteAll's preconditions", () => {
    expect(pathWithQuery(request.create(Pods, "ns", {}, { fieldValidation: "Warn" })))
      .toBe("/api/v1/namespaces/ns/pods?fieldValidation=Warn")
    expect(pathWithQuery(request.patch(Pods, "ns", "p", Patch.merge({}), { fieldValidation: "Ignore" })))
      .toBe("/api/v1/namespaces/ns/pods/p?fieldValidation=Ignore")
    expect(pathWithQuery(request.get(Pods, "ns", "p", { resourceVersion: "0" })))
      .toBe("/api/v1/namespaces/ns/pods/p?resourceVersion=0")
    expect(request.get(Pods, "ns", "p").query).toBeUndefined()
    expect(pathWithQuery(request.list(Pods, "ns", { timeoutSeconds: 5 }))).toBe("/api/v1/namespaces/ns/pods?timeoutSeconds=5")
    const all = request.deleteCollection(Pods, "ns", {
      labelSelector: "a=b",
      resourceVersion: "42",
      preconditions: { resourceVersion: "7" }
    })
    expect(pathWithQuery(all)).toBe("/api/v1/namespaces/ns/pods?labelSelector=a%3Db&resourceVersion=42")
    expect(JSON.parse(all.body!.text)).toEqual({ kind: "DeleteOptions", apiVersion: "v1", preconditions: { resourceVersion: "7" } })
  })
})

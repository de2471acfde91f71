/**
 * `Kube.metadata` against FakeCluster over the real request path: the requests ask for
 * PartialObjectMetadata, the fake answers it as the API server does, and a server that
 * ignores the Accept (an aggregated API, here plain `Kube.request`-free JSON from a
 * loopback server) still gives metadata alone.
 */
import { assert, describe, it } from "@effect/vitest"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as Kube from "../packages/effect-kube/src/Kube.js"
import * as Patch from "../packages/effect-kube/src/Patch.js"
import { ConfigMaps, Secrets } from "../packages/effect-kube/src/resources/index.js"
import { FakeCluster } from "@effect-kube/testing"
import { failureOf } from "./util/failure.js"

const fake = FakeCluster.FakeCluster
const secrets = Kube.metadata(Secrets, { namespace: "default" })
const cms = Kube.metadata(ConfigMaps, { namespace: "default" })

const secret = (name: string, labels: Record<string, string> = { app: "m" }) => ({
  apiVersion: "v1",
  kind: "Secret",
  metadata: { name, namespace: "default", labels, finalizers: ["example.com/keep"] },
  data: { password: "c2VjcmV0LXZhbHVl" }
})

/** The one typed failure of an effect (a cause of exactly one Fail), else a defect saying what happened. */

describe("Kube.metadata", () => {
  it.layer(FakeCluster.layer())((it) => {
    it.effect("get and list ask for PartialObjectMetadata and get metadata alone (no Secret data)", () =>
      Effect.gen(function*() {
        const control = yield* fake
        control.seed([secret("a"), secret("b"), secret("other", { app: "x" })])
        control.reset()
        const got = yield* secrets.get("a")
        assert.isTrue(Option.isSome(got))
        const a = Option.getOrThrow(got)
        assert.strictEqual(a.kind, "PartialObjectMetadata")
        assert.strictEqual(a.apiVersion, "meta.k8s.io/v1")
        assert.strictEqual(a.metadata.name, "a")
        assert.deepStrictEqual(a.metadata.finalizers, ["example.com/keep"])
        assert.notProperty(a, "data")
        assert.isTrue(Option.isNone(yield* secrets.get("missing")))
        const listed = yield* secrets.list({ labelSelector: "app=m" })
        assert.deepStrictEqual(listed.items.map((s) => s.metadata.name), ["a", "b"])
        assert.isTrue(listed.items.every((s) => s.kind === "PartialObjectMetadata" && !("data" in s)))
        assert.isString(listed.metadata.resourceVersion)
        const accepts = control.requests().map((r) => r.path)
        assert.strictEqual(accepts[0], "/api/v1/namespaces/default/secrets/a")
      }))

    it.effect("the answers on the wire are PartialObjectMetadata(List), as the API server sends them", () =>
      Effect.gen(function*() {
        const control = yield* fake
        control.seed([secret("wire")])
        const one = (yield* Kube.request({
          method: "GET",
          path: "/api/v1/namespaces/default/secrets/wire",
          accept: "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"
        })) as Record<string, unknown>
        assert.deepStrictEqual(Object.keys(one).sort(), ["apiVersion", "kind", "metadata"])
        assert.strictEqual(one["kind"], "PartialObjectMetadata")
        const list = (yield* Kube.request({
          method: "GET",
          path: "/api/v1/namespaces/default/secrets",
          accept: "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
        })) as { kind: string; apiVersion: string; items: ReadonlyArray<Record<string, unknown>> }
        assert.strictEqual(list.kind, "PartialObjectMetadataList")
        assert.strictEqual(list.apiVersion, "meta.k8s.io/v1")
        assert.isTrue(list.items.every((i) => i["kind"] === "PartialObjectMetadata" && !("data" in i)))
      }))

    it.effect("listStream pages; patch changes a label and returns metadata", () =>
      Effect.gen(function*() {
        const control = yield* fake
        control.seed([secret("p1"), secret("p2"), secret("p3")])
        const names = yield* secrets.listStream({ pageSize: 1, labelSelector: "app=m" }).pipe(
          Stream.map((s) => s.metadata.name),
          Stream.runCollect
        )
        assert.includeMembers([...names], ["p1", "p2", "p3"])
        const patched = yield* secrets.patch("p1", Patch.merge({ metadata: { labels: { rotated: "yes" } } }))
        assert.strictEqual(patched.kind, "PartialObjectMetadata")
        assert.strictEqual(patched.metadata.labels?.["rotated"], "yes")
        const stored = control.get({ apiVersion: "v1", kind: "Secret", namespace: "default", name: "p1" })
        assert.strictEqual((stored as unknown as { data: Record<string, string> }).data["password"], "c2VjcmV0LXZhbHVl")
      }))

    it.effect("watch and watcher deliver metadata; a reflector keeps a store of it", () =>
      Effect.scoped(Effect.gen(function*() {
        const control = yield* fake
        control.seed([{ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "w", namespace: "default" }, data: { big: "x" } }])
        // only w: the namespace also holds the kube-root-ca.crt kube-controller-manager publishes
        const only = { fieldSelector: "metadata.name=w" }
        const first = yield* cms.watch({ resourceVersion: "0", ...only }).pipe(Stream.take(1), Stream.runCollect)
        const event = [...first][0]!
        assert.strictEqual(event.type, "ADDED")
        if (event.type === "ADDED") {
          assert.strictEqual(event.object.kind, "PartialObjectMetadata")
          assert.notProperty(event.object, "data")
        }
        const events = yield* cms.watcher(only).pipe(
          Stream.filter((e) => e._tag === "InitApply"),
          Stream.take(1),
          Stream.runCollect
        )
        const init = [...events][0]!
        assert.strictEqual(init._tag === "InitApply" ? init.object.metadata.name : "", "w")
        const store = yield* cms.reflector()
        yield* store.ready
        const found = yield* store.get("w")
        assert.strictEqual(Option.getOrThrow(found).kind, "PartialObjectMetadata")
      })))

    it.effect("bad input fails before anything is sent; a 404 patch is an ApiError", () =>
      Effect.gen(function*() {
        const control = yield* fake
        control.reset()
        const bad = yield* failureOf(secrets.get("Not A Name"))
        assert.strictEqual(bad._tag, "ValidationError")
        assert.strictEqual(control.requests().length, 0)
        const missing = yield* failureOf(secrets.patch("nope", Patch.merge({ metadata: { labels: { a: "b" } } })))
        assert.strictEqual(missing._tag === "ApiError" ? missing.code : 0, 404)
      }))
  })
})

/**
 * A server that ignores the Accept, as an aggregated API may: between the client and
 * the fake, the Accept is replaced by plain JSON (and what the client sent is kept).
 */
const ignoringAccept = (sent: Array<string>) =>
  Layer.effect(
    HttpClient.HttpClient,
    Effect.map(HttpClient.HttpClient, (client) =>
      HttpClient.mapRequest(client, (request) => {
        sent.push(request.headers["accept"] ?? "")
        return HttpClientRequest.setHeader(request, "accept", "application/json")
      }))
  ).pipe(Layer.provideMerge(FakeCluster.layer()))

describe("Kube.metadata against a server that ignores the Accept", () => {
  it.effect("whole objects are cut down to their metadata: get, list, watch, patch", () => {
    const sent: Array<string> = []
    return Effect.gen(function*() {
      const control = yield* fake
      control.seed([secret("full")])
      const got = Option.getOrThrow(yield* secrets.get("full"))
      assert.deepStrictEqual(Object.keys(got).sort(), ["apiVersion", "kind", "metadata"])
      assert.strictEqual(got.kind, "PartialObjectMetadata")
      assert.strictEqual(got.metadata.name, "full")
      const listed = yield* secrets.list()
      assert.isTrue(listed.items.every((s) => s.kind === "PartialObjectMetadata" && !("data" in s)))
      const first = yield* secrets.watch({ resourceVersion: "0" }).pipe(Stream.take(1), Stream.runCollect)
      const event = [...first][0]!
      assert.isTrue(event.type === "ADDED" && !("data" in event.object))
      const patched = yield* secrets.patch("full", Patch.merge({ metadata: { annotations: { a: "b" } } }))
      assert.strictEqual(patched.metadata.annotations?.["a"], "b")
      assert.deepStrictEqual(sent, [
        "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1, application/json",
        "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1, application/json",
        "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1, application/json",
        "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1, application/json"
      ])
    }).pipe(Effect.provide(ignoringAccept(sent)))
  })

  it.effect("a plain Kube.api of the same kind still asks for plain JSON", () => {
    const sent: Array<string> = []
    return Effect.gen(function*() {
      yield* Kube.api(Secrets, { namespace: "default" }).list()
      assert.deepStrictEqual(sent, ["application/json"])
    }).pipe(Effect.provide(ignoringAccept(sent)))
  })
})

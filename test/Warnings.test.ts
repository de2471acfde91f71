/**
 * Server warnings over the real request path: FakeCluster answers with a
 * `Warning: 299` header, and the Warnings service in context collects, ignores or fails
 * on it; without one it is logged. Watches and the escape hatch get the same treatment.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as Kube from "../packages/effect-kube/src/Kube.js"
import { ConfigMaps } from "../packages/effect-kube/src/resources/index.js"
import { FakeCluster } from "@effect-kube/testing"
import * as Warnings from "../packages/effect-kube/src/Warnings.js"
import { nodeLayer } from "./util/reliability.js"
import { failureOf } from "./util/failure.js"

const cms = Kube.api(ConfigMaps, { namespace: "default" })
const fake = FakeCluster.FakeCluster
const deprecated = "v1 ConfigMap is deprecated in v1.99+; use \"v2\" ConfigMap"

describe("Warnings against the fake cluster", () => {
  it.effect("layerCollect gathers the warnings of a list, a create and Kube.request, with method and path", () =>
    Effect.gen(function*() {
      const control = yield* fake
      control.warnNext({ text: deprecated, count: 3 })
      yield* cms.list()
      yield* cms.create({ metadata: { name: "w" } })
      yield* Kube.request({ method: "GET", path: "/version" })
      const collected = yield* Warnings.Collected
      const all = yield* collected.warnings
      assert.deepStrictEqual(all.map((w) => [w._tag, w.method, w.path, w.text]), [
        ["HeaderWarning", "GET", "/api/v1/namespaces/default/configmaps", deprecated],
        ["HeaderWarning", "POST", "/api/v1/namespaces/default/configmaps", deprecated],
        ["HeaderWarning", "GET", "/version", deprecated]
      ])
      yield* collected.clear
      yield* cms.list()
      assert.strictEqual((yield* collected.warnings).length, 0, "no warning, nothing collected")
    }).pipe(Effect.provide(Layer.merge(FakeCluster.layer(), Warnings.layerCollect))))

  it.effect("the warning of a refused request is reported too, and the ApiError stays the failure", () =>
    Effect.gen(function*() {
      const control = yield* fake
      control.warnNext({ text: "unknown field \"spec.foo\"" })
      const error = yield* failureOf(cms.replace("missing", { metadata: { name: "missing" } }))
      assert.strictEqual(error._tag === "ApiError" ? error.code : 0, 404)
      const all = yield* (yield* Warnings.Collected).warnings
      assert.deepStrictEqual(all.map((w) => w.text), ["unknown field \"spec.foo\""])
    }).pipe(Effect.provide(Layer.merge(FakeCluster.layer(), Warnings.layerCollect))))

  it.effect("a watch's answer headers are reported", () =>
    Effect.gen(function*() {
      const control = yield* fake
      control.seed([{ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a", namespace: "default" } }])
      control.warnNext({ text: "watch warned", match: (_m, _p, q) => q["watch"] === "true" })
      yield* cms.watch({ resourceVersion: "0" }).pipe(Stream.take(1), Stream.runDrain)
      const all = yield* (yield* Warnings.Collected).warnings
      assert.deepStrictEqual(all.map((w) => w.text), ["watch warned"])
    }).pipe(Effect.provide(Layer.merge(FakeCluster.layer(), Warnings.layerCollect))))

  it.effect("layerFail turns a warning into a ServerWarning failure (the write was carried out)", () =>
    Effect.gen(function*() {
      const control = yield* fake
      control.warnNext({ text: deprecated, match: (m) => m === "POST" })
      const error = yield* failureOf(cms.create({ metadata: { name: "strict" } }))
      assert.strictEqual(error._tag, "ServerWarning")
      assert.strictEqual(
        error.message,
        `k8s: POST /api/v1/namespaces/default/configmaps: the server warned: ${deprecated}`
      )
      assert.isTrue(Option.isSome(yield* cms.get("strict")), "the server did create it")
      assert.strictEqual(control.requests().filter((r) => r.method === "POST").length, 1, "not sent again")
    }).pipe(Effect.provide(Layer.merge(FakeCluster.layer(), Warnings.layerFail))))

  it.effect("layerIgnore drops them; a custom layer sees them", () =>
    Effect.gen(function*() {
      const seen: Array<string> = []
      const control = yield* fake
      control.warnNext({ text: "one" })
      yield* cms.list().pipe(Effect.provide(Warnings.layerIgnore))
      control.warnNext({ text: "two" })
      yield* cms.list().pipe(Effect.provide(Warnings.layer((w) => Effect.sync(() => void seen.push(w.text)))))
      assert.deepStrictEqual(seen, ["two"])
    }).pipe(Effect.provide(FakeCluster.layer())))

  it.effect("without a Warnings service, the warning is logged with logWarning", () =>
    Effect.gen(function*() {
      const logs: Array<{ level: string; message: unknown }> = []
      const logger = Logger.make(({ logLevel, message }) => void logs.push({ level: logLevel, message }))
      const control = yield* fake
      control.warnNext({ text: deprecated })
      yield* cms.list().pipe(Effect.provide(Logger.layer([logger])))
      const warned = logs.filter((l) => l.level === "Warn")
      assert.strictEqual(warned.length, 1)
      assert.include(String(warned[0]!.message), deprecated)
      assert.include(String(warned[0]!.message), "GET /api/v1/namespaces/default/configmaps")
    }).pipe(Effect.provide(FakeCluster.layer())))

  it.effect("the warning reaches the client over a real HTTP connection (FakeCluster.serve)", () =>
    Effect.gen(function*() {
      const served = yield* FakeCluster.serve()
      served.control.warnNext({ text: "over the wire" })
      const collected = yield* Warnings.Collected
      yield* cms.list().pipe(Effect.provide(nodeLayer(served)))
      assert.deepStrictEqual((yield* collected.warnings).map((w) => w.text), ["over the wire"])
    }).pipe(Effect.provide(Warnings.layerCollect)))
})

import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import * as Conflict from "../packages/effect-kube/src/Conflict.js"
import * as Kube from "../packages/effect-kube/src/Kube.js"
import * as RequestPolicy from "../packages/effect-kube/src/RequestPolicy.js"
import { ConfigMaps } from "../packages/effect-kube/src/resources/index.js"
import { FakeCluster } from "@effect-kube/testing"

const configMaps = Kube.api(ConfigMaps, { namespace: "default" })
const ref = { apiVersion: "v1", kind: "ConfigMap", name: "settings" }
const isPut = (method: string) => method === "PUT"
const puts = (cluster: FakeCluster.Control) => cluster.requests().filter((r) => r.method === "PUT").length
const fake = Layer.merge(
  FakeCluster.layer({ objects: [{ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "settings" }, data: { n: "0" } }] }),
  RequestPolicy.layer({ readRetries: Schedule.recurs(0), throttleRetries: 0, timeout: null })
)

const increment = (cm: typeof ConfigMaps.schema.Type) => ({ ...cm, data: { ...cm.data, n: String(Number(cm.data?.n ?? "0") + 1) } })

describe("Conflict", () => {
  it.live("update re-reads and re-applies the change when another writer got in between", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      let calls = 0
      const result = yield* Conflict.update(configMaps, "settings", (cm) => {
        calls++
        // a concurrent writer changes the object after our read, the first time only
        if (calls === 1) cluster.update(ref, { data: { n: "10", other: "x" } })
        return increment(cm)
      })
      assert.strictEqual(calls, 2)
      assert.deepStrictEqual(result.data, { n: "11", other: "x" })
      assert.strictEqual(puts(cluster), 2)
    }).pipe(Effect.provide(fake)))

  it.live("api.update is the same read-modify-write on the bound api, re-read after a 409", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      cluster.failNext({ status: 409, reason: "Conflict", count: 1, match: isPut })
      const updated = yield* configMaps.update("settings", (cm) => Effect.succeed(increment(cm)))
      assert.strictEqual(updated.data?.n, "1")
      assert.strictEqual(puts(cluster), 2)
      assert.strictEqual(cluster.requests().filter((r) => r.method === "GET").length, 2)
    }).pipe(Effect.provide(fake)))

  it.live("retries 409 only, and only a bounded number of times", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      cluster.failNext({ status: 409, reason: "Conflict", count: 100, match: isPut })
      const conflict = yield* Conflict.update(configMaps, "settings", increment).pipe(Effect.flip)
      assert.isTrue(conflict._tag === "ApiError" && conflict.code === 409)
      assert.strictEqual(puts(cluster), 6) // one attempt and 5 retries
      cluster.reset()
      cluster.failNext({ status: 500, count: 1, match: isPut })
      const internal = yield* Conflict.update(configMaps, "settings", increment).pipe(Effect.flip)
      assert.isTrue(internal._tag === "ApiError" && internal.code === 500)
      assert.strictEqual(puts(cluster), 1) // a mutation is never retried on a 500
      cluster.reset()
      cluster.failNext({ status: 409, reason: "Conflict", count: 2, match: isPut })
      const ok = yield* Conflict.update(configMaps, "settings", increment)
      assert.strictEqual(ok.data?.n, "1")
      assert.strictEqual(puts(cluster), 3)
    }).pipe(Effect.provide(fake)))

  it.effect("writes nothing when the function returns the object unchanged; a missing object is NotFound", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      yield* Conflict.update(configMaps, "settings", (cm) => cm)
      assert.strictEqual(puts(cluster), 0)
      const missing = yield* Conflict.update(configMaps, "nope", increment).pipe(Effect.flip)
      assert.isTrue(missing._tag === "ApiError" && missing.code === 404)
      assert.include(missing.message, "/api/v1/namespaces/default/configmaps/nope")
    }).pipe(Effect.provide(fake)))

  it.effect("retryOnConflict takes a schedule", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      cluster.failNext({ status: 409, reason: "Conflict", count: 100, match: isPut })
      const write = Effect.flatMap(configMaps.get("settings"), (cm) => configMaps.replace("settings", increment(cm.pipe((o) => o._tag === "Some" ? o.value : {}))))
      yield* Conflict.retryOnConflict(write, Schedule.recurs(2)).pipe(Effect.flip)
      assert.strictEqual(puts(cluster), 3)
    }).pipe(Effect.provide(fake)))
})

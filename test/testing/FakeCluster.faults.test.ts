/**
 * failNext and the other faults (issue 41.3): their argument shape (a count, `Infinity` until
 * clearFaults(), a method or path filter, a match function) checked at the call, and the
 * warning the fake gives once, under a TestClock, when the client will retry the failure it
 * answered after a backoff that waits on that clock. Through the client's real request path.
 */
import { afterEach, assert, describe, it, vi } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import * as TestClock from "effect/testing/TestClock"
import { ApiError, ConfigMaps, Kube } from "effect-kube"
import { FakeCluster } from "@effect-kube/testing"

const configMaps = Kube.api(ConfigMaps, { namespace: "default" })

const warnings = () => {
  const spy = vi.spyOn(console, "warn").mockImplementation(() => {})
  return () => spy.mock.calls.map((call) => String(call[0]))
}

afterEach(() => {
  vi.restoreAllMocks()
})

describe("FakeCluster faults", () => {
  it.effect("under it.effect a retried read waits for TestClock.adjust, and the fake says so once", () =>
    Effect.gen(function*() {
      const said = warnings()
      const fake = yield* FakeCluster.FakeCluster
      fake.failNext({ status: 500 })
      const read = yield* Effect.forkChild(configMaps.list())
      yield* TestClock.adjust("1 minute") // the backoff before the retry is on the TestClock
      const { items } = yield* Fiber.join(read)
      assert.isTrue(Array.isArray(items))
      const [warning, ...more] = said()
      assert.deepStrictEqual(more, [])
      assert.include(warning, "FakeCluster.failNext answered GET /api/v1/namespaces/default/configmaps with 500")
      assert.include(warning, "this fake runs on a TestClock (it.effect), so the retry waits until the test moves the clock")
      assert.include(warning, "TestClock.adjust")

      fake.failNext({ status: 503, count: 2 })
      const again = yield* Effect.forkChild(configMaps.list())
      yield* TestClock.adjust("1 minute")
      yield* Fiber.join(again)
      assert.strictEqual(said().length, 1, "once per fake")
    }).pipe(Effect.provide(FakeCluster.layer())))

  it.effect("a failure the client does not retry (a write's 500, a 409) gives no warning", () =>
    Effect.gen(function*() {
      const said = warnings()
      const fake = yield* FakeCluster.FakeCluster
      fake.failNext({ status: 500, method: "POST" })
      const error = yield* Effect.flip(configMaps.create({ metadata: { name: "a" } }))
      assert.instanceOf(error, ApiError)
      assert.strictEqual((error as ApiError).code, 500)
      assert.deepStrictEqual(said(), [])
    }).pipe(Effect.provide(FakeCluster.layer())))

  it.live("under it.live the retry passes as time does, without a warning", () =>
    Effect.gen(function*() {
      const said = warnings()
      const fake = yield* FakeCluster.FakeCluster
      fake.failNext({ status: 500 })
      yield* configMaps.list()
      assert.deepStrictEqual(said(), [])
    }).pipe(Effect.provide(FakeCluster.layer())))

  it.effect("the obvious forms: a method filter, a path prefix or RegExp, count: Infinity until clearFaults()", () =>
    Effect.gen(function*() {
      vi.spyOn(console, "warn").mockImplementation(() => {})
      const fake = yield* FakeCluster.FakeCluster
      // only writes fail: the read goes through
      fake.failNext({ status: 409, method: ["POST", "PUT"], count: Infinity })
      yield* configMaps.list()
      for (const name of ["a", "b", "c"]) {
        const error = yield* Effect.flip(configMaps.create({ metadata: { name } }))
        assert.strictEqual((error as ApiError).code, 409)
      }
      fake.clearFaults()
      yield* configMaps.create({ metadata: { name: "a" } })

      // a path prefix: Secrets fail, ConfigMaps do not
      fake.failNext({ status: 403, path: "/api/v1/namespaces/default/secrets" })
      yield* configMaps.get("a")
      fake.clearFaults()
      fake.failNext({ status: 404, path: /\/configmaps\/a$/ })
      const gone = yield* configMaps.get("a") // a 404 is Option.none()
      assert.strictEqual(gone._tag, "None")

      // every attempt of a read fails until cleared: the retries run out on the clock
      fake.failNext({ status: 500, method: "GET", count: Infinity })
      const read = yield* Effect.forkChild(Effect.flip(configMaps.list()))
      yield* TestClock.adjust("10 minutes")
      const error = yield* Fiber.join(read)
      assert.strictEqual((error as ApiError).code, 500)
      fake.clearFaults()
    }).pipe(Effect.provide(FakeCluster.layer())))

  it.effect("a wrong argument is refused at the call, saying what is wanted", () =>
    Effect.gen(function*() {
      const fake = yield* FakeCluster.FakeCluster
      const refused = (f: () => void) => {
        try {
          f()
        } catch (e) {
          return e instanceof TypeError ? e.message : `not a TypeError: ${String(e)}`
        }
        return "accepted"
      }
      assert.strictEqual(
        refused(() => fake.failNext({ status: "500" as unknown as number })),
        `FakeCluster.failNext: status must be an HTTP error code from 400 to 599, as in failNext({ status: 503 }) (got "500")`
      )
      assert.include(refused(() => fake.failNext(500 as unknown as { status: number })), "got undefined")
      assert.include(refused(() => fake.failNext({ status: 200 })), "from 400 to 599")
      assert.include(
        refused(() => fake.failNext({ status: 500, count: 0 })),
        "count must be a whole number from 1, or Infinity for every matching request until clearFaults() (got 0)"
      )
      assert.include(refused(() => fake.delayNext({ ms: 10, count: 1.5 })), "FakeCluster.delayNext: count must be")
      yield* configMaps.list() // nothing was left pending
    }).pipe(Effect.provide(FakeCluster.layer())))
})

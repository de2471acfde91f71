/**
 * Client-side flow control: RequestPolicy's token bucket (client-go's QPS/burst) on the
 * request path, driven by the Effect Clock, and API Priority and Fairness's headers on the
 * ApiError and the span.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/testing/TestClock"
import * as Tracer from "effect/Tracer"
import { ApiError } from "../packages/effect-kube/src/Errors.js"
import * as Kube from "../packages/effect-kube/src/Kube.js"
import * as NodeKube from "../packages/effect-kube/src/NodeKube.js"
import * as RequestPolicy from "../packages/effect-kube/src/RequestPolicy.js"
import { ConfigMaps } from "../packages/effect-kube/src/resources/index.js"
import { FakeCluster } from "@effect-kube/testing"
import { recordingTracer } from "./util/tracing.js"

const configMaps = Kube.api(ConfigMaps, { namespace: "default" })
const configMap = (name: string) => ({ metadata: { name }, data: { a: "1" } })

/** Lets forked requests run as far as they can without the TestClock moving. */
const settle = Effect.promise(() => new Promise<void>((resolve) => setTimeout(resolve, 20)))

const gets = (cluster: FakeCluster.Service) => cluster.requests().filter((r) => r.method === "GET").length

describe("RequestPolicy rate limit", () => {
  it("is off by default; clientGo and kubectl are client-go's and kubectl's numbers", () => {
    assert.isUndefined(RequestPolicy.defaults.rateLimiter)
    assert.isUndefined(RequestPolicy.make({}).rateLimiter)
    assert.isUndefined(RequestPolicy.make({ rateLimit: null }).rateLimiter)
    assert.deepStrictEqual(RequestPolicy.clientGo, { qps: 5, burst: 10 })
    assert.deepStrictEqual(RequestPolicy.kubectl, { qps: 50, burst: 300 })
    const limiter = RequestPolicy.make({ rateLimit: RequestPolicy.clientGo }).rateLimiter!
    assert.strictEqual(limiter.qps, 5)
    assert.strictEqual(limiter.burst, 10)
  })

  it("numbers that make no bucket throw, naming what is wrong", () => {
    assert.throws(() => RequestPolicy.make({ rateLimit: { qps: 0, burst: 10 } }), /qps must be a positive number, got 0/)
    assert.throws(() => RequestPolicy.make({ rateLimit: { qps: NaN, burst: 10 } }), /qps must be a positive number/)
    assert.throws(() => RequestPolicy.make({ rateLimit: { qps: 5, burst: 0 } }), /burst must be a positive integer, got 0/)
    assert.throws(() => RequestPolicy.make({ rateLimit: { qps: 5, burst: 2.5 } }), /burst must be a positive integer/)
  })

  it.effect("a burst goes at once, then requests go at qps, in order, on the Clock", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      cluster.seed([{ apiVersion: "v1", kind: "ConfigMap", ...configMap("cfg") }])
      const before = gets(cluster)
      const done: Array<number> = []
      const fiber = yield* Effect.forkChild(
        Effect.forEach(
          Array.from({ length: 14 }, (_, i) => i),
          (i) => Effect.tap(configMaps.get("cfg"), () => Effect.sync(() => done.push(i))),
          { concurrency: "unbounded" }
        ).pipe(Effect.provide(RequestPolicy.layer({ rateLimit: RequestPolicy.clientGo })))
      )
      yield* settle
      assert.strictEqual(gets(cluster) - before, 10, "the burst of 10 at once")
      yield* TestClock.adjust("199 millis")
      yield* settle
      assert.strictEqual(gets(cluster) - before, 10, "the next token comes 200 ms later (5 a second)")
      yield* TestClock.adjust("1 millis")
      yield* settle
      assert.strictEqual(gets(cluster) - before, 11)
      yield* TestClock.adjust("600 millis")
      yield* settle
      assert.strictEqual(gets(cluster) - before, 14)
      yield* Fiber.join(fiber)
      assert.deepStrictEqual(done.slice(10), [10, 11, 12, 13], "those that waited went in the order they came")
    }).pipe(Effect.provide(FakeCluster.layer())))

  it.effect("the bucket refills while idle, up to burst; mutations take tokens too", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      const policy = RequestPolicy.layer({ rateLimit: { qps: 2, burst: 3 } })
      yield* Effect.gen(function*() {
        // three creates empty the bucket
        for (const name of ["a", "b", "c"]) yield* configMaps.create(configMap(name))
        const fourth = yield* Effect.forkChild(configMaps.create(configMap("d")))
        yield* settle
        assert.strictEqual(cluster.mutations(), 3)
        yield* TestClock.adjust("500 millis")
        yield* Fiber.join(fourth)
        assert.strictEqual(cluster.mutations(), 4)
        // a long quiet spell refills to burst (3), not more
        yield* TestClock.adjust("1 minute")
        const burst = yield* Effect.forkChild(
          Effect.forEach(["e", "f", "g", "h"], (name) => configMaps.create(configMap(name)), { concurrency: "unbounded" })
        )
        yield* settle
        assert.strictEqual(cluster.mutations(), 7)
        yield* TestClock.adjust("500 millis")
        yield* Fiber.join(burst)
        assert.strictEqual(cluster.mutations(), 8)
      }).pipe(Effect.provide(policy))
    }).pipe(Effect.provide(FakeCluster.layer())))

  it.effect("a retry takes a token of its own", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      cluster.seed([{ apiVersion: "v1", kind: "ConfigMap", ...configMap("cfg") }])
      cluster.failNext({ status: 500, count: 1 })
      const policy = RequestPolicy.layer({ rateLimit: { qps: 1, burst: 1 }, readRetries: Schedule.recurs(1) })
      const fiber = yield* Effect.forkChild(configMaps.get("cfg").pipe(Effect.provide(policy)))
      yield* settle
      assert.strictEqual(gets(cluster), 1, "the first attempt failed; its retry waits for a token")
      yield* TestClock.adjust("1 second")
      const found = yield* Fiber.join(fiber)
      assert.strictEqual(Option.getOrThrow(found).metadata?.name, "cfg")
      assert.strictEqual(gets(cluster), 2)
    }).pipe(Effect.provide(FakeCluster.layer())))

  it.effect("a request interrupted while it waits gives its token back", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      cluster.seed([{ apiVersion: "v1", kind: "ConfigMap", ...configMap("cfg") }])
      yield* Effect.gen(function*() {
        yield* configMaps.get("cfg")
        const waiting = yield* Effect.forkChild(configMaps.get("cfg"))
        yield* settle
        yield* Fiber.interrupt(waiting)
        const next = yield* Effect.forkChild(configMaps.get("cfg"))
        yield* TestClock.adjust("1 second")
        yield* Fiber.join(next)
        assert.strictEqual(gets(cluster), 2, "the next request got the token at 1 s, not 2 s")
      }).pipe(Effect.provide(RequestPolicy.layer({ rateLimit: { qps: 1, burst: 1 } })))
    }).pipe(Effect.provide(FakeCluster.layer())))

  it.live("a watch takes a token to open, and none once open (real transport, real time)", () =>
    Effect.gen(function*() {
      const served = yield* FakeCluster.serve()
      const program = Effect.gen(function*() {
        const events = yield* Effect.forkChild(
          configMaps.watch().pipe(Stream.take(3), Stream.runCollect)
        )
        // the watch opened with the only token; the first create waits 100 ms for the next
        const start = Date.now()
        yield* Effect.promise(() => new Promise<void>((resolve) => setTimeout(resolve, 20)))
        for (const name of ["a", "b", "c"]) yield* configMaps.create(configMap(name))
        const took = Date.now() - start
        const seen = yield* Fiber.join(events)
        assert.deepStrictEqual(Array.from(seen, (e) => e.type), ["ADDED", "ADDED", "ADDED"])
        // three creates after the watch's token: ~300 ms at 10 a second, the events themselves never waited
        assert.isAtLeast(took, 250)
        return served.control.requests().filter((r) => r.query.watch === "true").length
      })
      const watches = yield* program.pipe(
        Effect.provide(
          Layer.merge(
            NodeKube.layerFromFile({ path: served.kubeconfigPath }),
            RequestPolicy.layer({ rateLimit: { qps: 10, burst: 1 } })
          )
        )
      )
      assert.strictEqual(watches, 1)
    }).pipe(Effect.scoped))
})

describe("API Priority and Fairness", () => {
  it.effect("a 429 keeps the FlowSchema and priority level UIDs on the ApiError and the span", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      cluster.failNext({ status: 429, count: 1 })
      const spans: Array<Tracer.Span> = []
      const tracer = yield* recordingTracer(spans)
      const error = yield* Effect.flip(
        configMaps.get("cfg").pipe(
          Effect.provide(RequestPolicy.layer({ throttleRetries: 0 })),
          Effect.withTracer(tracer)
        )
      )
      assert.instanceOf(error, ApiError)
      const apiError = error as ApiError
      assert.isTrue(ApiError.isTooManyRequests(apiError))
      assert.strictEqual(apiError.flowSchemaUid, "7f2b4a43-1ee6-4f4e-9f5a-fa4e0c4c3b10")
      assert.strictEqual(apiError.priorityLevelUid, "c5a2d8b7-3e1f-4c9b-8a7d-2b6e9f0a1d24")
      const [get] = spans.filter((s) => s.name === "kube.get")
      assert.strictEqual(get!.attributes.get("kube.apf.flow_schema_uid"), apiError.flowSchemaUid)
      assert.strictEqual(get!.attributes.get("kube.apf.priority_level_uid"), apiError.priorityLevelUid)
    }).pipe(Effect.provide(FakeCluster.layer())))

  it.effect("an answer without them leaves the fields out", () =>
    Effect.gen(function*() {
      yield* configMaps.create(configMap("taken"))
      const error = yield* Effect.flip(configMaps.create(configMap("taken")))
      assert.isTrue(ApiError.isAlreadyExists(error))
      assert.isFalse("flowSchemaUid" in (error as ApiError))
    }).pipe(Effect.provide(FakeCluster.layer())))
})

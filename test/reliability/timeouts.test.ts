/**
 * A slow or silent server, served on loopback HTTPS. The per-request timeout of
 * `RequestPolicy` ends non-streaming calls with a `RequestTimeout` (not a transport
 * error) that names the method, the path and the limit (on the TestClock, to the millisecond), closes the connection it was waiting on,
 * and is never applied to watches and log follows, which stay quiet for as long as
 * the cluster is (checked in real time against a real timeout, and for an hour on the
 * TestClock).
 */
import { afterAll, assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/testing/TestClock"
import * as Kube from "../../packages/effect-kube/src/Kube.js"
import * as RequestPolicy from "../../packages/effect-kube/src/RequestPolicy.js"
import { ConfigMaps, Pods } from "../../packages/effect-kube/src/resources/index.js"
import { FakeCluster } from "@effect-kube/testing"
import {
  eventually,
  failureOf,
  makeCounts,
  newSleep,
  nodeLayer,
  realSleep,
  recordingSleeps,
  report,
  serveTls,
  sleeps
} from "../util/reliability.js"
import { apiServerOnly } from "../util/apiServerOnly.js"

const counts = makeCounts()
afterAll(() => report("timeouts", counts))

const cms = Kube.api(ConfigMaps, { namespace: "default" })
const pods = Kube.api(Pods, { namespace: "default" })

const configMap = (name: string, labels: Record<string, string> = { app: "t" }) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace: "default", labels },
  data: { v: "0" }
})

/** The delay of the first sleep registered since `before`. */
const nextSleep = (before: ReadonlyArray<number>) => Effect.map(newSleep(before), Option.getOrThrow)

const podObject = (name: string) => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name, namespace: "default" },
  spec: { containers: [{ name: "c", image: "busybox" }] }
})

const withServed = <A, E>(
  program: (served: FakeCluster.Served) => Effect.Effect<A, E, Kube.Requirements>,
  policy: Layer.Layer<never>,
  listen: { readonly http2?: boolean } = {}
) =>
  Effect.scoped(Effect.gen(function*() {
    const served = yield* serveTls(listen)
    const result = yield* recordingSleeps(program(served)).pipe(Effect.provide(Layer.merge(nodeLayer(served), policy)))
    counts.requests += served.control.requests().length
    return result
  }))

describe("the timeout ends non-streaming calls", () => {
  it.effect("a mutation to a silent server fails after exactly the timeout, tagged, naming it; sent once", () =>
    withServed(
      (served) =>
        Effect.gen(function*() {
          const control = served.control
          yield* cms.list() // a connection in the pool, to see what becomes of it
          assert.strictEqual(served.openConnections(), 1)
          control.stallNext({ match: (m) => m === "POST" })
          counts.faults++
          const before = yield* sleeps
          const fiber = yield* Effect.forkChild(cms.create({ metadata: { name: "silent" } }))
          assert.strictEqual(yield* nextSleep(before), 5_000)
          yield* TestClock.adjust(4_999)
          yield* realSleep(20)
          assert.isTrue(fiber.pollUnsafe() === undefined, "still waiting a millisecond before the timeout")
          // The stalled POST holds one connection (the pooled one, or a new one beside it).
          const during = served.openConnections()
          yield* TestClock.adjust(1)
          const error = yield* failureOf(Fiber.join(fiber))
          assert.strictEqual(error._tag, "RequestTimeout")
          if (error._tag === "RequestTimeout") {
            assert.strictEqual(error.method, "POST")
            assert.strictEqual(error.path, "/api/v1/namespaces/default/configmaps")
            assert.strictEqual(error.timeout, "5s")
            assert.strictEqual(
              error.message,
              "k8s: POST /api/v1/namespaces/default/configmaps: no complete answer within 5s (request timeout)"
            )
          }
          assert.strictEqual(control.requests().filter((r) => r.method === "POST").length, 1)
          assert.isTrue(
            yield* eventually(() => served.openConnections() === during - 1),
            "the connection of the abandoned request is closed, not returned to the pool"
          )
          // the layer still works: a new connection for the next request
          assert.strictEqual((yield* cms.list()).items.length, 0)
        }),
      RequestPolicy.layer({ timeout: "5 seconds" }),
      // HTTP/1.1, whose abandoned request takes its connection with it (on HTTP/2 only its stream is reset)
      { http2: false }
    ))

  /** Creates an object the fake answers 400 ms late, with a 2 s timeout on the TestClock. */
  const late = (control: FakeCluster.Control) =>
    Effect.gen(function*() {
      control.delayNext({ ms: 400, match: (m) => m === "POST" })
      counts.faults++
      const before = yield* sleeps
      const fiber = yield* Effect.forkChild(cms.create({ metadata: { name: "late" } }))
      assert.strictEqual(yield* nextSleep(before), 2_000)
      // the server carries it out at once, then holds the answer back
      const ref = { apiVersion: "v1", kind: "ConfigMap", name: "late" }
      assert.isTrue(yield* eventually(() => control.get(ref) !== undefined))
      yield* TestClock.adjust(2_000)
      const error = yield* failureOf(Fiber.join(fiber))
      assert.strictEqual(error._tag, "RequestTimeout")
      assert.strictEqual(control.requests().filter((r) => r.method === "POST").length, 1, "not sent again")
    })

  it.effect("a mutation answered too late fails with the timeout although the server acted (HTTPS)", () =>
    withServed((served) => late(served.control), RequestPolicy.layer({ timeout: "2 seconds" })))

  it.effect("a mutation answered too late fails with the timeout although the server acted (in memory)", () =>
    Effect.gen(function*() {
      const control = yield* FakeCluster.FakeCluster
      yield* recordingSleeps(late(control))
      counts.requests += control.requests().length
    }).pipe(
      Effect.provide(Layer.merge(FakeCluster.layer(apiServerOnly), RequestPolicy.layer({ timeout: "2 seconds" })))
    ))

  it.effect("a read that times out is sent again; a read that always times out fails after readRetries", () =>
    withServed(
      (served) =>
        Effect.gen(function*() {
          const control = served.control
          control.seed([configMap("a")])
          control.stallNext({ match: (m) => m === "GET" })
          counts.faults++
          let before = yield* sleeps
          const once = yield* Effect.forkChild(cms.get("a"))
          assert.strictEqual(yield* nextSleep(before), 1_000)
          // the timeout is armed before the request is written: let it reach the server (the stalled one)
          assert.isTrue(yield* eventually(() => control.requests().length === 1), "the first try reached the server")
          before = yield* sleeps
          yield* TestClock.adjust(1_000)
          const got = yield* Fiber.join(once)
          assert.isTrue(Option.isSome(got))
          assert.strictEqual(control.requests().length, 2)

          control.reset()
          control.stallNext({ count: 10, match: (m) => m === "GET" })
          counts.faults += 4
          before = yield* sleeps
          const always = yield* Effect.forkChild(cms.get("a"))
          for (let attempt = 1; attempt <= 4; attempt++) {
            assert.strictEqual(yield* nextSleep(before), 1_000, `attempt ${attempt} waits the timeout`)
            assert.isTrue(
              yield* eventually(() => control.requests().length === attempt),
              `attempt ${attempt} reached the server`
            )
            before = yield* sleeps
            yield* TestClock.adjust(1_000)
            for (let i = 0; i < 500 && control.requests().length === attempt; i++) yield* realSleep(2)
          }
          const error = yield* failureOf(Fiber.join(always))
          assert.strictEqual(error._tag, "RequestTimeout")
          if (error._tag === "RequestTimeout") assert.strictEqual(error.path, "/api/v1/namespaces/default/configmaps/a")
          assert.strictEqual(control.requests().length, 4, "the first try and three retries")
          control.clearFaults()
        }),
      RequestPolicy.layer({ timeout: "1 second", readRetries: Schedule.recurs(3) })
    ))

  it.effect("logs (not followed) is a non-streaming call: the timeout applies", () =>
    withServed(
      (served) =>
        Effect.gen(function*() {
          const control = served.control
          control.seed([podObject("p")])
          control.stallNext({ match: (_m, path) => path.endsWith("/log") })
          counts.faults++
          const before = yield* sleeps
          const fiber = yield* Effect.forkChild(pods.logs("p"))
          assert.strictEqual(yield* nextSleep(before), 3_000)
          yield* TestClock.adjust(3_000)
          const error = yield* failureOf(Fiber.join(fiber))
          assert.strictEqual(error._tag, "RequestTimeout")
          if (error._tag === "RequestTimeout") assert.strictEqual(error.timeout, "3s")
        }),
      RequestPolicy.layer({ timeout: "3 seconds", readRetries: Schedule.recurs(0) })
    ))
})

describe("watches and log follows are not cut by the timeout", () => {
  it.live("a watch quiet for three times the timeout still delivers the next event (real time)", () =>
    withServed(
      (served) =>
        Effect.gen(function*() {
          const control = served.control
          const fiber = yield* cms.watch({ resourceVersion: control.resourceVersion() }).pipe(
            Stream.take(1),
            Stream.runCollect,
            Effect.forkChild
          )
          assert.isTrue(yield* eventually(() => control.openWatches() === 1))
          yield* realSleep(600)
          assert.isTrue(fiber.pollUnsafe() === undefined, "still open")
          control.seed([configMap("later")])
          const events = [...(yield* Fiber.join(fiber))]
          assert.strictEqual(events.length, 1)
          assert.strictEqual(events[0]!.type, "ADDED")
          counts.events++
        }),
      RequestPolicy.layer({ timeout: "200 millis" })
    ))

  it.live("a followed log quiet for three times the timeout still delivers the next line (real time)", () =>
    withServed(
      (served) =>
        Effect.gen(function*() {
          const control = served.control
          control.seed([podObject("q")])
          control.appendLog("default", "q", ["first"])
          const fiber = yield* pods.logStream("q").pipe(Stream.take(2), Stream.runCollect, Effect.forkChild)
          assert.isTrue(yield* eventually(() => control.openLogStreams() === 1))
          yield* realSleep(600)
          assert.isTrue(fiber.pollUnsafe() === undefined, "still open")
          control.appendLog("default", "q", ["second"])
          assert.deepStrictEqual([...(yield* Fiber.join(fiber))], ["first", "second"])
          counts.events += 2
          assert.isTrue(yield* eventually(() => control.openLogStreams() === 0), "the follower closed with the stream")
        }),
      RequestPolicy.layer({ timeout: "200 millis" })
    ))

  it.effect("a watch and a watcher quiet for an hour of TestClock time still deliver the next event", () =>
    withServed(
      (served) =>
        Effect.gen(function*() {
          const control = served.control
          control.seed([configMap("x")])
          const raw = yield* cms.watch({ resourceVersion: control.resourceVersion() }).pipe(
            Stream.take(1),
            Stream.runCollect,
            Effect.forkChild
          )
          const watcher = yield* cms.watcher({ timeoutSeconds: 7_200 }).pipe(
            Stream.filter((e) => e._tag === "Apply"),
            Stream.take(1),
            Stream.runCollect,
            Effect.forkChild
          )
          assert.isTrue(yield* eventually(() => control.openWatches() === 2))
          yield* TestClock.adjust("1 hour")
          yield* realSleep(20)
          assert.strictEqual(control.openWatches(), 2, "neither watch was cut")
          control.update({ apiVersion: "v1", kind: "ConfigMap", name: "x" }, { data: { v: "1" } })
          assert.strictEqual([...(yield* Fiber.join(raw))][0]!.type, "MODIFIED")
          assert.strictEqual([...(yield* Fiber.join(watcher))][0]!._tag, "Apply")
          counts.events += 2
        }),
      RequestPolicy.layer({ timeout: "5 seconds" })
    ))
})

describe("a silent watch", () => {
  it.live("the watcher takes a watch that goes silent for idleTimeout for a dead connection and resumes", () =>
    withServed(
      (served) =>
        Effect.gen(function*() {
          const control = served.control
          control.seed([configMap("a")])
          const events: Array<string> = []
          const fiber = yield* cms.watcher({ idleTimeout: "300 millis", backoff: Schedule.spaced("10 millis") }).pipe(
            Stream.runForEach((e) => Effect.sync(() => void events.push(e._tag))),
            Effect.forkChild
          )
          assert.isTrue(yield* eventually(() => events.includes("InitDone") && control.openWatches() === 1))
          // the watch stays open and silent: after idleTimeout it is dropped and a new one opened
          const before = control.requests().filter((r) => r.query["watch"] === "true").length
          yield* realSleep(500)
          const after = control.requests().filter((r) => r.query["watch"] === "true").length
          assert.isAbove(after, before, "a new watch after the idle timeout")
          control.update({ apiVersion: "v1", kind: "ConfigMap", name: "a" }, { data: { v: "1" } })
          assert.isTrue(yield* eventually(() => events.includes("Apply")))
          yield* Fiber.interrupt(fiber)
          counts.events += events.length
        }),
      RequestPolicy.layer({})
    ))

  it.live("the watcher recovers from a watch request that is never answered (no headers) after idleTimeout", () =>
    withServed(
      (served) =>
        Effect.gen(function*() {
          const control = served.control
          control.seed([configMap("a")])
          control.stallNext({ match: (_m, _p, query) => query["watch"] === "true" })
          counts.faults++
          const events: Array<string> = []
          const fiber = yield* cms.watcher({ idleTimeout: "300 millis", backoff: Schedule.spaced("10 millis") }).pipe(
            Stream.runForEach((e) => Effect.sync(() => void events.push(e._tag))),
            Effect.forkChild
          )
          assert.isTrue(yield* eventually(() => events.includes("InitDone")))
          yield* realSleep(50)
          control.update({ apiVersion: "v1", kind: "ConfigMap", name: "a" }, { data: { v: "1" } })
          const arrived = yield* eventually(() => events.includes("Apply"), 3_000)
          yield* Fiber.interrupt(fiber)
          assert.isTrue(arrived, "the change arrives through a new watch")
          assert.strictEqual(control.requests().filter((r) => r.query["watch"] === "true").length, 2)
          counts.events += events.length
        }),
      RequestPolicy.layer({})
    ))
})

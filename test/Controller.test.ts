import { assert, describe, it } from "@effect/vitest"
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import * as Schedule from "effect/Schedule"
import * as TestClock from "effect/testing/TestClock"
import * as Tracer from "effect/Tracer"
import * as Controller from "../packages/effect-kube/src/Controller.js"
import * as Kube from "../packages/effect-kube/src/Kube.js"
import * as RequestPolicy from "../packages/effect-kube/src/RequestPolicy.js"
import { type ConfigMap, ConfigMaps } from "../packages/effect-kube/src/resources/index.js"
import { FakeCluster } from "@effect-kube/testing"
import * as Loopback from "./util/loopback.js"
import { apiServerOnly } from "./util/apiServerOnly.js"

const configMaps = Kube.api(ConfigMaps, { namespace: "default" })
const cm = (name: string, data: Record<string, string> = {}) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace: "default" },
  data
})
const ref = (name: string) => ({ apiVersion: "v1", kind: "ConfigMap", name })
const until = (check: () => boolean, what: string) =>
  Effect.flatMap(Loopback.eventually(check, 500), (ok) => Effect.sync(() => assert.isTrue(ok, what)))
const realSleep = (ms: number) => Effect.promise(() => new Promise<void>((resolve) => setTimeout(resolve, ms)))
const noRetries = RequestPolicy.layer({ readRetries: Schedule.recurs(0), throttleRetries: 0, timeout: null })
const fake = (objects: ReadonlyArray<unknown> = []) => Layer.merge(FakeCluster.layer({ ...apiServerOnly, objects }), noRetries)

/** Records every run: when it started and ended, per key, and how many ran at once. */
const recorder = () => {
  const runs: Array<{ key: string; start: number; end?: number }> = []
  const active = new Map<string, number>()
  let running = 0
  let maxRunning = 0
  let overlaps = 0
  const track = <A, E, R>(key: string, effect: Effect.Effect<A, E, R>) =>
    Effect.gen(function*() {
      const run: { key: string; start: number; end?: number } = { key, start: yield* Clock.currentTimeMillis }
      runs.push(run)
      active.set(key, (active.get(key) ?? 0) + 1)
      if (active.get(key)! > 1) overlaps++
      running++
      maxRunning = Math.max(maxRunning, running)
      return yield* effect.pipe(
        Effect.ensuring(Effect.gen(function*() {
          run.end = yield* Clock.currentTimeMillis
          active.set(key, active.get(key)! - 1)
          running--
        }))
      )
    })
  return {
    runs,
    track,
    count: (key: string) => runs.filter((r) => r.key === key).length,
    get overlaps() {
      return overlaps
    },
    get maxRunning() {
      return maxRunning
    },
    get running() {
      return running
    }
  }
}

/** A server without watch-lists: listings come in pages of 500. */
const pagedFake = Layer.merge(
  FakeCluster.layer({
    ...apiServerOnly,
    features: { watchList: false },
    objects: Array.from({ length: 1200 }, (_, i) => cm(`cm-${i}`, { v: "0" }))
  }),
  noRetries
)

/**
 * The fake on real HTTP (loopback, the Node transport), holding every page of a listing after the first for 300 ms,
 * while `hold.pages`, and a controller on it that records the values of `data.v` each object was reconciled at.
 */
const listingSlowly = Effect.gen(function*() {
  const hold = { pages: true }
  const cluster = yield* FakeCluster.FakeCluster
  const server = yield* Loopback.serve((req, res) => {
    const url = new URL(req.url ?? "/", cluster.url)
    const headers = new Headers()
    for (const [name, value] of Object.entries(req.headers)) {
      if (typeof value === "string") headers.set(name, value)
    }
    setTimeout(async () => {
      const response = await cluster.handle(new Request(url, { method: req.method ?? "GET", headers }))
      const answer: Record<string, string> = {}
      response.headers.forEach((value, name) => {
        answer[name] = value
      })
      res.writeHead(response.status, answer)
      // streamed as it comes: the watch after the listing stays open
      const reader = response.body?.getReader()
      for (let chunk = await reader?.read(); chunk !== undefined && !chunk.done; chunk = await reader!.read()) {
        res.write(chunk.value)
      }
      res.end()
    }, hold.pages && url.searchParams.has("continue") ? 300 : 0)
  })
  const seen = new Map<string, Set<string>>()
  const controller = Controller.make({
    name: "test/listing",
    api: configMaps,
    concurrency: 4,
    reconcile: (object: ConfigMap) =>
      Effect.sync(() => {
        const name = object.metadata!.name!
        const values = seen.get(name) ?? new Set<string>()
        values.add(object.data?.["v"] ?? "")
        seen.set(name, values)
        return Controller.done
      })
  })
  return { hold, seen, run: Controller.run(controller).pipe(Effect.provide(Loopback.layer(server.url))) }
})

describe("Controller", () => {
  it.live("never runs a key twice at once, coalesces triggers, and runs at most `concurrency` reconciles", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      const rec = recorder()
      const gate = yield* Deferred.make<void>()
      const controller = Controller.make({
        name: "test/coalesce",
        api: configMaps,
        concurrency: 2,
        reconcile: (object: ConfigMap) =>
          rec.track(
            object.metadata!.name!,
            Effect.gen(function*() {
              if (object.metadata?.name === "a") yield* Deferred.await(gate)
              else yield* realSleep(20)
              return Controller.done
            })
          )
      })
      const fiber = yield* Effect.forkChild(Controller.run(controller))
      yield* until(() => rec.count("a") === 1, "a started")
      // while a runs, three changes arrive: they coalesce into one more run
      for (const n of ["1", "2", "3"]) cluster.update(ref("a"), { data: { n } })
      yield* realSleep(100)
      assert.strictEqual(rec.count("a"), 1)
      yield* Deferred.succeed(gate, undefined)
      yield* until(() => rec.count("a") === 2 && rec.running === 0, "a ran once more")
      yield* realSleep(100)
      assert.strictEqual(rec.count("a"), 2)
      // many keys, many changes: never the same key twice at once, never more than 2 at once
      for (let round = 0; round < 5; round++) {
        for (const name of ["b", "c", "d", "e", "f"]) cluster.update(ref(name), { data: { round: String(round) } })
        yield* realSleep(15)
      }
      yield* until(() => rec.running === 0 && ["b", "c", "d", "e", "f"].every((k) => rec.count(k) >= 2), "settled")
      assert.strictEqual(rec.overlaps, 0)
      assert.isAtMost(rec.maxRunning, 2)
      assert.strictEqual(rec.maxRunning, 2)
      for (const k of ["b", "c", "d", "e", "f"]) assert.isAtMost(rec.count(k), 7, k)
      yield* Fiber.interrupt(fiber)
    }).pipe(Effect.provide(fake(["a", "b", "c", "d", "e", "f"].map((n) => cm(n))))))

  it.live("a listing's keys run once it is in the store: a key a worker takes before InitDone is not lost", () =>
    Effect.gen(function*() {
      // The store swaps a listing in whole at InitDone. Its keys used to be enqueued as they came: a worker that took
      // one while the next page was on its way read a store without the object, and the key never ran again
      const { seen, run } = yield* listingSlowly
      const fiber = yield* Effect.forkChild(run)
      yield* until(() => seen.size === 1200, "every object reconciled")
      for (let i = 0; i < 1200; i++) assert.isTrue(seen.get(`cm-${i}`)?.has("0"), `cm-${i}`)
      yield* Fiber.interrupt(fiber)
    }).pipe(Effect.provide(pagedFake)))

  it.live("a re-list's keys run at the listed state, not the one the store had before it", () =>
    Effect.gen(function*() {
      // the same on a re-list: a worker read the object as it was before it, and the change the listing brought was
      // never reconciled
      const cluster = yield* FakeCluster.FakeCluster
      const { hold, seen, run } = yield* listingSlowly
      hold.pages = false
      const fiber = yield* Effect.forkChild(run)
      const reconciledAt = (v: string) => () => Array.from({ length: 10 }, (_, i) => seen.get(`cm-${i}`)?.has(v)).every(Boolean)
      // live changes first: the watch is on, its events reconciled
      yield* until(() => seen.size > 0, "the controller running")
      for (let i = 0; i < 10; i++) cluster.update(ref(`cm-${i}`), { data: { v: "live" } })
      yield* until(reconciledAt("live"), "the live changes reconciled")
      hold.pages = true
      // the watch ends with a 410 before these changes reach it: only the re-list brings them
      cluster.expireWatches()
      for (let i = 0; i < 10; i++) cluster.update(ref(`cm-${i}`), { data: { v: "1" } })
      yield* until(reconciledAt("1"), "the re-listed changes reconciled")
      yield* Fiber.interrupt(fiber)
    }).pipe(Effect.provide(pagedFake)))

  it.effect("a failing key backs off exponentially from 5 ms, per key; a success resets it", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      const rec = recorder()
      let failUntil = 5
      const controller = Controller.make({
        name: "test/backoff",
        api: configMaps,
        concurrency: 2,
        reconcile: (object: ConfigMap) =>
          rec.track(
            object.metadata!.name!,
            object.metadata?.name === "bad" && rec.count("bad") < failUntil
              ? Effect.fail("boom" as const)
              : Effect.succeed(Controller.done)
          )
      })
      const fiber = yield* Effect.forkChild(Controller.run(controller))
      yield* until(() => rec.count("bad") === 1 && rec.count("good") === 1, "first runs")
      const expectAt = function*(count: number, step: number) {
        yield* TestClock.adjust(step - 1)
        yield* realSleep(20)
        assert.strictEqual(rec.count("bad"), count - 1, `not before ${step} ms`)
        yield* TestClock.adjust(1)
        yield* until(() => rec.count("bad") === count, `run ${count} after ${step} ms`)
      }
      yield* expectAt(2, 5)
      yield* expectAt(3, 10)
      yield* expectAt(4, 20)
      yield* expectAt(5, 40)
      yield* expectAt(6, 80) // succeeds
      assert.strictEqual(rec.count("good"), 1)
      const starts = rec.runs.filter((r) => r.key === "bad").map((r) => r.start)
      assert.deepStrictEqual(starts.slice(1).map((s, i) => s - starts[i]!), [5, 10, 20, 40, 80])
      // the success reset the backoff: a new failure starts from 5 ms again
      failUntil = 7
      cluster.update(ref("bad"), { data: { changed: "yes" } })
      yield* until(() => rec.count("bad") === 7, "the change ran it, and it failed")
      yield* expectAt(8, 5)
      yield* TestClock.adjust(1000)
      yield* realSleep(20)
      assert.strictEqual(rec.count("bad"), 8)
      // metrics: reconciles by result, retries, durations
      const reconciles = (result: string) =>
        Metric.value(
          Metric.withAttributes(
            Metric.withAttributes(Controller.metrics.reconciles, { controller: "test/backoff" }),
            { result }
          )
        )
      assert.strictEqual((yield* reconciles("error")).count, 6)
      assert.strictEqual((yield* reconciles("success")).count, 3)
      const retries = Metric.withAttributes(Controller.metrics.retries, { controller: "test/backoff" })
      assert.strictEqual((yield* Metric.value(retries)).count, 6)
      const durations = yield* Metric.value(
        Metric.withAttributes(Controller.metrics.reconcileDuration, { controller: "test/backoff" })
      )
      assert.strictEqual(durations.count, 9)
      yield* Fiber.interrupt(fiber)
    }).pipe(Effect.provide(fake([cm("bad"), cm("good")]))))

  it.effect("requeueAfter runs the key again after the delay; resync is off by default", () =>
    Effect.gen(function*() {
      const rec = recorder()
      const controller = Controller.make({
        name: "test/requeue",
        api: configMaps,
        reconcile: (object: ConfigMap) =>
          rec.track(
            object.metadata!.name!,
            Effect.succeed(object.metadata?.name === "later" ? Controller.requeueAfter("1 minute") : Controller.done)
          )
      })
      const fiber = yield* Effect.forkChild(Controller.run(controller))
      yield* until(() => rec.count("later") === 1 && rec.count("idle") === 1, "first runs")
      yield* TestClock.adjust("59 seconds")
      yield* realSleep(20)
      assert.strictEqual(rec.count("later"), 1)
      yield* TestClock.adjust("1 second")
      yield* until(() => rec.count("later") === 2, "requeued after a minute")
      yield* TestClock.adjust("20 minutes")
      yield* realSleep(50)
      assert.strictEqual(rec.count("idle"), 1, "no resync by default")
      yield* Fiber.interrupt(fiber)
    }).pipe(Effect.provide(fake([cm("later"), cm("idle")]))))

  it.effect("resync requeues every object periodically when asked", () =>
    Effect.gen(function*() {
      const rec = recorder()
      const controller = Controller.make({
        name: "test/resync",
        api: configMaps,
        resync: "10 minutes",
        reconcile: (object: ConfigMap) => rec.track(object.metadata!.name!, Effect.succeed(Controller.done))
      })
      const fiber = yield* Effect.forkChild(Controller.run(controller))
      yield* until(() => rec.count("x") === 1 && rec.count("y") === 1, "first runs")
      yield* TestClock.adjust("10 minutes")
      yield* until(() => rec.count("x") === 2 && rec.count("y") === 2, "resynced")
      yield* Fiber.interrupt(fiber)
    }).pipe(Effect.provide(fake([cm("x"), cm("y")]))))

  it.live("interruption stops every reconcile and closes every watch", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      const rec = recorder()
      let interrupted = 0
      const controller = Controller.make({
        name: "test/interrupt",
        api: configMaps,
        concurrency: 3,
        owns: [Kube.api(ConfigMaps, { namespace: "other" })],
        reconcile: (object: ConfigMap) =>
          rec.track(object.metadata!.name!, Effect.never.pipe(Effect.onInterrupt(() => Effect.sync(() => interrupted++))))
      })
      const fiber = yield* Effect.forkChild(Controller.run(controller))
      yield* until(() => rec.running === 3 && cluster.openWatches() === 2, "three reconciles running, two watches")
      yield* Fiber.interrupt(fiber)
      assert.strictEqual(interrupted, 3)
      assert.strictEqual(rec.running, 0)
      yield* until(() => cluster.openWatches() === 0, "every watch closed")
    }).pipe(Effect.provide(fake([cm("p"), cm("q"), cm("r"), cm("s")]))))

  it.live("each reconcile runs in a span with the controller, kind, namespace and name", () =>
    Effect.gen(function*() {
      const base = yield* Effect.tracer
      const spans: Array<Tracer.Span> = []
      const tracer = Tracer.make({
        span: (options) => {
          const span = base.span(options)
          spans.push(span)
          return span
        }
      })
      const seen: Array<string> = []
      const controller = Controller.make({
        name: "test/spans",
        api: configMaps,
        reconcile: (object: ConfigMap) =>
          Effect.gen(function*() {
            const current = yield* Effect.currentSpan
            seen.push(`${current.name} ${object.metadata?.name}`)
            return Controller.done
          })
      })
      const fiber = yield* Effect.forkChild(Controller.run(controller).pipe(Effect.withTracer(tracer)))
      yield* until(() => seen.length === 1, "reconciled")
      yield* Fiber.interrupt(fiber)
      assert.deepStrictEqual(seen, ["Controller.reconcile traced"])
      const span = spans.find((s) => s.name === "Controller.reconcile")!
      assert.deepStrictEqual(Object.fromEntries(span.attributes), {
        "k8s.controller": "test/spans",
        "k8s.kind": "ConfigMap",
        "k8s.namespace": "default",
        "k8s.name": "traced"
      })
    }).pipe(Effect.provide(fake([cm("traced")]))))

  it.live("run fails when a watch fails with an error the watcher does not retry (403)", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      cluster.failNext({ status: 403, reason: "Forbidden", match: (method) => method === "GET" })
      const controller = Controller.make({
        name: "test/forbidden",
        api: configMaps,
        reconcile: () => Effect.succeed(Controller.done)
      })
      const error = yield* Controller.run(controller).pipe(Effect.flip)
      assert.isTrue(error._tag === "ApiError" && error.code === 403, String(error))
      yield* until(() => cluster.openWatches() === 0, "nothing left open")
    }).pipe(Effect.provide(fake([cm("x")]))))
})

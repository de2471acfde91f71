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

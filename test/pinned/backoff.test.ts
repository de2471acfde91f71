/**
 * Pins: the retry and backoff timings of the defaults, on the TestClock, measured from
 * FakeCluster's request log (how many requests it received after each clock step):
 *
 * - reads (`RequestPolicy.defaults.readRetries`): after a transport failure or a 5xx, 3
 *   retries after 200, 400 and 800 ms, each jittered to 80–120 %;
 * - throttling (`throttleRetries: 10`, client-go's count): a 429 without Retry-After is
 *   sent again after exactly 500, 1000, 2000, 4000 ms, then 8000 ms six times (any verb); a
 *   Retry-After is waited exactly, capped at `maxRetryAfter` (60 s);
 * - mutations are never sent again after a 5xx;
 * - the Watcher (`Watcher.defaultBackoff`): 800 ms doubling, capped at 30 s, each jittered
 *   to 80–120 %, started again after two healthy minutes, and never shorter than a Retry-After;
 * - the Controller (`errorPolicy` default): per key, 5 ms doubling, capped at 1000 s, not
 *   jittered; `requeueAfter` exactly.
 *
 * Where jitter makes a delay random, the pin is its bounds (80 % and 120 % of the base
 * delay, to the clock step used) and the number of attempts. Effect 4 rewrites Schedule
 * (`driver` → `toStep`, `union`/`intersect` → `min`/`max`, `jitteredWith` → `jittered`),
 * which is where such timings drift without any test failing.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/testing/TestClock"
import * as Controller from "../../packages/effect-kube/src/Controller.js"
import * as Kube from "../../packages/effect-kube/src/Kube.js"
import { ConfigMaps } from "../../packages/effect-kube/src/resources/index.js"
import { FakeCluster } from "@effect-kube/testing"
import * as Watcher from "../../packages/effect-kube/src/Watcher.js"
import { apiServerOnly } from "../util/apiServerOnly.js"
import { recordingSleeps, sleeps } from "../util/reliability.js"

const configMaps = Kube.api(ConfigMaps, { namespace: "default" })
const configMap = (name: string, data: Record<string, string> = {}) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace: "default" },
  data
})
const ref = (name: string) => ({ apiVersion: "v1", kind: "ConfigMap", name, namespace: "default" })

const realSleep = (ms: number) => Effect.promise(() => new Promise<void>((resolve) => setTimeout(resolve, ms)))

/** Polls in real time (the fake answers on the event loop while the TestClock stands still). */
const until = (check: () => boolean, what: string) =>
  Effect.gen(function*() {
    for (let i = 0; i < 300; i++) {
      if (check()) return
      yield* realSleep(10)
    }
    assert.isTrue(check(), what)
  })

type Count = () => number

/**
 * The delay until the next attempt, on the TestClock, counted from where the clock stands
 * (where the last attempt was seen; it must come `min` to `max` ms later, to `step`). The
 * clock is moved from one sleep on it to the next (a retry may wait in more than one sleep,
 * as a backoff and then the rest of a Retry-After): to a millisecond before each ends, where no
 * attempt may have come, then onto its end. After each, the woken fiber is waited for in real
 * time until it sends the attempt or sleeps again: on a busy machine that takes longer than any
 * fixed pause, and moving the clock on meanwhile would eat into the next delay.
 */
const nextAttempt = (attempts: Count, min: number, max: number, step = 1) =>
  Effect.gen(function*() {
    const before = attempts()
    const start = yield* Clock.currentTimeMillis
    const deadline = start + max + step
    const ahead = Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      return (yield* sleeps).filter((at) => at > now && at <= deadline)
    })
    /** Waits in real time until the attempt comes or a sleep not in `known` waits on the clock. */
    const settle = (known: ReadonlyArray<number>) =>
      Effect.gen(function*() {
        for (let i = 0; i < 1_000; i++) {
          if (attempts() !== before || (yield* ahead).some((at) => !known.includes(at))) return
          yield* realSleep(3)
        }
      })
    yield* settle([])
    while (attempts() === before) {
      const pending = yield* ahead
      assert.isNotEmpty(pending, `an attempt by ${max} ms`)
      const wake = Math.ceil(Math.min(...pending))
      const early = wake - (yield* Clock.currentTimeMillis) - 1
      if (early > 0) yield* TestClock.adjust(early)
      yield* realSleep(20)
      assert.strictEqual(attempts(), before, `no attempt before ${min} ms`)
      yield* TestClock.adjust(1)
      yield* settle(pending)
    }
    assert.strictEqual(attempts(), before + 1, "one attempt at a time")
    const waited = (yield* Clock.currentTimeMillis) - start
    assert.isAtLeast(waited, min - step, `no attempt before ${min} ms`)
    return waited
  })

/** Asserts that no further attempt comes in `ms` of TestClock time. */
const noMoreAttempts = (attempts: Count, ms: number) =>
  Effect.gen(function*() {
    const before = attempts()
    yield* realSleep(20)
    yield* TestClock.adjust(ms)
    yield* realSleep(50)
    assert.strictEqual(attempts(), before, `no attempt in ${ms} ms`)
  })

/** A jittered delay of `base` ms (80–120 %), measured to `step`; returns it. */
const jittered = (attempts: Count, base: number, step: number) =>
  Effect.gen(function*() {
    const delay = yield* nextAttempt(attempts, base * 0.8, base * 1.2, step)
    assert.isAbove(delay, base * 0.8 - step, `delay ${delay} of ${base} jittered, at least 80 %`)
    assert.isAtMost(delay, base * 1.2 + step, `delay ${delay} of ${base} jittered, at most 120 %`)
    return delay
  })

const requestsTo = (cluster: FakeCluster.Control, method: string, path: string): Count => () =>
  cluster.requests().filter((r) => r.method === method && r.path === path && r.query["watch"] === undefined).length

const cmPath = "/api/v1/namespaces/default/configmaps"

describe("reads: RequestPolicy.defaults.readRetries (3 retries, 200/400/800 ms jittered 80-120 %)", () => {
  it.effect("a GET against 500 is tried 4 times, then fails with the last 500", () =>
    recordingSleeps(Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      cluster.failNext({ status: 500, count: 10 })
      const gets = requestsTo(cluster, "GET", `${cmPath}/a`)
      const fiber = yield* Effect.forkChild(Effect.flip(configMaps.get("a")))
      yield* until(() => gets() === 1, "the first attempt")
      const delays = [yield* jittered(gets, 200, 1), yield* jittered(gets, 400, 1), yield* jittered(gets, 800, 1)]
      // jitter is there: all three exactly on their base delay has a chance of 1 in 80 × 160 × 320
      assert.notDeepEqual(delays, [200, 400, 800])
      const error = yield* Fiber.join(fiber)
      assert.strictEqual(error._tag === "ApiError" ? error.code : error._tag, 500)
      yield* noMoreAttempts(gets, 10_000)
      assert.strictEqual(gets(), 4)
    })).pipe(Effect.provide(FakeCluster.layer(apiServerOnly))))

  it.effect("a GET against 503 without Retry-After: the same schedule; the 4th attempt's answer is returned", () =>
    recordingSleeps(Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      cluster.seed([configMap("a", { k: "v" })])
      cluster.failNext({ status: 503, count: 3 })
      const gets = requestsTo(cluster, "GET", `${cmPath}/a`)
      const fiber = yield* Effect.forkChild(configMaps.get("a"))
      yield* until(() => gets() === 1, "the first attempt")
      yield* jittered(gets, 200, 1)
      yield* jittered(gets, 400, 1)
      yield* jittered(gets, 800, 1)
      const found = yield* Fiber.join(fiber)
      assert.deepStrictEqual(Option.map(found, (c) => c.data), Option.some({ k: "v" }))
      assert.strictEqual(gets(), 4)
    })).pipe(Effect.provide(FakeCluster.layer(apiServerOnly))))

  it.effect("a list stream's page is retried the same way", () =>
    recordingSleeps(Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      cluster.seed([configMap("a")])
      cluster.failNext({ status: 502, count: 2 })
      const lists = requestsTo(cluster, "GET", cmPath)
      const fiber = yield* Effect.forkChild(Stream.runCollect(configMaps.listStream()))
      yield* until(() => lists() === 1, "the first attempt")
      yield* jittered(lists, 200, 1)
      yield* jittered(lists, 400, 1)
      assert.deepStrictEqual(Array.from(yield* Fiber.join(fiber)).map((c) => c.metadata?.name), ["a"])
      assert.strictEqual(lists(), 3)
    })).pipe(Effect.provide(FakeCluster.layer(apiServerOnly))))
})

describe("throttling: throttleRetries 10, 500 ms doubling to 8 s without Retry-After, Retry-After capped at 60 s", () => {
  it.effect("a GET against 429 is sent again 10 times (500, 1000, 2000, 4000, then 8000 ms), then fails (no read retry)", () =>
    recordingSleeps(Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      cluster.failNext({ status: 429, count: 20 })
      const gets = requestsTo(cluster, "GET", `${cmPath}/a`)
      const fiber = yield* Effect.forkChild(Effect.flip(configMaps.get("a")))
      yield* until(() => gets() === 1, "the first attempt")
      const expected = [500, 1000, 2000, 4000, 8000, 8000, 8000, 8000, 8000, 8000]
      const delays: Array<number> = []
      for (const ms of expected) delays.push(yield* nextAttempt(gets, ms, ms))
      assert.deepStrictEqual(delays, expected)
      const error = yield* Fiber.join(fiber)
      assert.strictEqual(error._tag === "ApiError" ? error.code : error._tag, 429)
      yield* noMoreAttempts(gets, 10_000)
      assert.strictEqual(gets(), 11)
    })).pipe(Effect.provide(FakeCluster.layer(apiServerOnly))))

  it.effect("a 503 with Retry-After: 2 waits exactly 2 s each time, and a Retry-After of 120 s waits 60 s", () =>
    recordingSleeps(Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      cluster.failNext({ status: 503, count: 11, retryAfterSeconds: 2 })
      const gets = requestsTo(cluster, "GET", `${cmPath}/a`)
      const fiber = yield* Effect.forkChild(Effect.flip(configMaps.get("a")))
      yield* until(() => gets() === 1, "the first attempt")
      const delays: Array<number> = []
      for (let i = 0; i < 10; i++) delays.push(yield* nextAttempt(gets, 2000, 2000))
      assert.deepStrictEqual(delays, Array.from({ length: 10 }, () => 2000))
      const error = yield* Fiber.join(fiber)
      assert.strictEqual(error._tag === "ApiError" ? `${error.code} ${error.retryAfter}` : error._tag, "503 2")
      yield* noMoreAttempts(gets, 10_000)
      assert.strictEqual(gets(), 11, "a throttled read is not retried as a transient one on top")

      cluster.failNext({ status: 429, count: 1, retryAfterSeconds: 120 })
      cluster.seed([configMap("a")])
      const capped = yield* Effect.forkChild(configMaps.get("a"))
      yield* until(() => gets() === 12, "the throttled attempt")
      assert.strictEqual(yield* nextAttempt(gets, 60_000, 60_000), 60_000)
      assert.isTrue(Option.isSome(yield* Fiber.join(capped)))
    })).pipe(Effect.provide(FakeCluster.layer(apiServerOnly))))

  it.effect("mutations: a POST is never sent again after a 500, but is after a 429 (500/1000/2000 ms)", () =>
    recordingSleeps(Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      const posts = requestsTo(cluster, "POST", cmPath)
      cluster.failNext({ status: 500, count: 10 })
      const failed = yield* Effect.forkChild(Effect.flip(configMaps.create({ metadata: { name: "a" } })))
      yield* until(() => posts() === 1, "the first attempt")
      const error = yield* Fiber.join(failed)
      assert.strictEqual(error._tag === "ApiError" ? error.code : error._tag, 500)
      yield* noMoreAttempts(posts, 10_000)
      cluster.clearFaults()

      cluster.failNext({ status: 429, count: 3 })
      const throttled = yield* Effect.forkChild(configMaps.create({ metadata: { name: "a" } }))
      yield* until(() => posts() === 2, "the first throttled attempt")
      const delays = [
        yield* nextAttempt(posts, 500, 500),
        yield* nextAttempt(posts, 1000, 1000),
        yield* nextAttempt(posts, 2000, 2000)
      ]
      assert.deepStrictEqual(delays, [500, 1000, 2000])
      assert.strictEqual((yield* Fiber.join(throttled)).metadata?.name, "a")
      assert.strictEqual(posts(), 5)
    })).pipe(Effect.provide(FakeCluster.layer(apiServerOnly))))
})

const isWatch = (_method: string, _path: string, query: Readonly<Record<string, string>>) => query["watch"] === "true"

/** Runs a watcher in the background, its events into an array. */
const background = <A, E, R>(stream: Stream.Stream<A, E, R>) =>
  Effect.gen(function*() {
    const events: Array<A> = []
    const fiber = yield* Effect.forkChild(Stream.runForEach(stream, (a) => Effect.sync(() => void events.push(a))))
    return { events, fiber }
  })

const show = (event: Watcher.Event<{ readonly metadata?: { readonly name?: string | undefined } | undefined }>) =>
  "object" in event ? `${event._tag} ${event.object.metadata?.name}` : event._tag

describe("the Watcher: Watcher.defaultBackoff (800 ms doubling to 30 s, jittered 80-120 %)", () => {
  it.effect("failing watches are retried after 800, 1600, ... 25600 ms, then 30 s; the list is not repeated", () =>
    recordingSleeps(Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      cluster.seed([configMap("a")])
      cluster.failNext({ status: 500, count: 8, match: isWatch })
      const watches: Count = () => cluster.requests().filter((r) => r.query["watch"] === "true").length
      const lists = requestsTo(cluster, "GET", cmPath)
      const { events, fiber } = yield* background(configMaps.watcher({ watchList: false }))
      yield* until(() => watches() === 1, "the first watch")
      assert.deepStrictEqual(events.map(show), ["Init", "InitApply a", "InitDone"])
      const bases = [800, 1600, 3200, 6400, 12800, 25600, 30000, 30000]
      const delays: Array<number> = []
      for (const base of bases) delays.push(yield* jittered(watches, base, base / 80))
      // jitter is there: all eight on their base delay (to the step) has a chance of 1 in 32^8
      assert.notDeepEqual(delays, bases)
      yield* until(() => cluster.openWatches() === 1, "the ninth watch is open")
      assert.strictEqual(watches(), 9)
      assert.strictEqual(lists(), 1, "a failed watch resumes watching, it does not list again")
      cluster.update(ref("a"), { data: { n: "1" } })
      yield* until(() => events.length === 4, "the change")
      assert.deepStrictEqual(events.map(show), ["Init", "InitApply a", "InitDone", "Apply a"])
      yield* Fiber.interrupt(fiber)
    })).pipe(Effect.provide(FakeCluster.layer(apiServerOnly))))

  it.effect("a failure within two minutes of the last backoff goes on doubling; after two quiet minutes, 800 ms", () =>
    recordingSleeps(Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      cluster.seed([configMap("a")])
      cluster.failNext({ status: 500, count: 2, match: isWatch })
      const watches: Count = () => cluster.requests().filter((r) => r.query["watch"] === "true").length
      const { events, fiber } = yield* background(configMaps.watcher({ watchList: false }))
      /** The open watch sends one event and ends (no backoff: it sent something); the next watch fails once. */
      const failAfter = (seconds: number, n: number) =>
        Effect.gen(function*() {
          yield* until(() => cluster.openWatches() === 1, "watching")
          cluster.update(ref("a"), { data: { n: String(n) } })
          yield* until(() => events.length === 3 + n, "the change")
          yield* realSleep(20)
          yield* TestClock.adjust(`${seconds} seconds`)
          const before = watches()
          cluster.failNext({ status: 500, count: 1, match: isWatch })
          cluster.dropWatchesAfter(1)
          yield* until(() => watches() === before + 1, "the watch ended, and the one resuming it failed")
          cluster.dropWatchesAfter(undefined)
        })
      yield* until(() => watches() === 1, "the first watch")
      yield* jittered(watches, 800, 10)
      yield* jittered(watches, 1600, 20)
      yield* failAfter(100, 1)
      yield* jittered(watches, 3200, 40)
      yield* failAfter(121, 2)
      yield* jittered(watches, 800, 10)
      yield* until(() => cluster.openWatches() === 1, "watching again")
      yield* Fiber.interrupt(fiber)
    })).pipe(Effect.provide(FakeCluster.layer(apiServerOnly))))

  it.effect("a watch answered 503 or 429 with Retry-After: 5 is tried again after exactly 5 s", () =>
    recordingSleeps(Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      cluster.failNext({ status: 503, count: 1, retryAfterSeconds: 5, match: isWatch })
      cluster.failNext({ status: 429, count: 1, retryAfterSeconds: 5, match: isWatch })
      const watches: Count = () => cluster.requests().filter((r) => r.query["watch"] === "true").length
      const { fiber } = yield* background(configMaps.watcher({ watchList: false }))
      yield* until(() => watches() === 1, "the first watch")
      assert.strictEqual(yield* nextAttempt(watches, 5000, 5000), 5000)
      assert.strictEqual(yield* nextAttempt(watches, 5000, 5000), 5000)
      yield* until(() => cluster.openWatches() === 1, "watching")
      yield* Fiber.interrupt(fiber)
    })).pipe(Effect.provide(FakeCluster.layer(apiServerOnly))))

  it.effect("a failing first list: the read retries (200/400/800 ms) inside, then the watcher's 800 ms", () =>
    recordingSleeps(Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      cluster.seed([configMap("a")])
      cluster.failNext({ status: 500, count: 5, match: (_method, _path, query) => query["watch"] === undefined })
      const lists = requestsTo(cluster, "GET", cmPath)
      const { events, fiber } = yield* background(configMaps.watcher({ watchList: false }))
      yield* until(() => lists() === 1, "the first list")
      yield* jittered(lists, 200, 1)
      yield* jittered(lists, 400, 1)
      yield* jittered(lists, 800, 1)
      // four attempts failed: the request gives up, the watcher backs off
      yield* jittered(lists, 800, 10)
      // the fifth fails, the read is retried once more and that one succeeds
      yield* jittered(lists, 200, 1)
      yield* until(() => events.length === 3, "listed")
      assert.deepStrictEqual(events.map(show), ["Init", "InitApply a", "InitDone"])
      assert.strictEqual(lists(), 6)
      yield* Fiber.interrupt(fiber)
    })).pipe(Effect.provide(FakeCluster.layer(apiServerOnly))))
})

describe("the Controller: errorPolicy default (5 ms doubling to 1000 s per key, no jitter), requeueAfter", () => {
  it.effect("a failing reconcile (its request answered 409) runs again after 5, 10, 20 … 655360 ms, then 1000 s", () =>
    recordingSleeps(Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      const posts = requestsTo(cluster, "POST", cmPath)
      const controller = Controller.make({
        name: "pin/backoff",
        api: configMaps,
        // each reconcile is one request: a create of a name that is taken (409 AlreadyExists)
        reconcile: (object) =>
          object.metadata?.name === "parent"
            ? Effect.as(configMaps.create({ metadata: { name: "taken" } }), Controller.done)
            : Effect.succeed(Controller.done)
      })
      const fiber = yield* Effect.forkChild(Controller.run(controller))
      yield* until(() => posts() === 1, "the first reconcile")
      const expected = [...Array.from({ length: 18 }, (_, i) => 5 * 2 ** i), 1_000_000, 1_000_000]
      const delays: Array<number> = []
      for (const delay of expected) delays.push(yield* nextAttempt(posts, delay, delay))
      assert.deepStrictEqual(delays, expected)
      assert.deepStrictEqual(expected.slice(0, 4), [5, 10, 20, 40])
      assert.strictEqual(expected[17], 655_360)
      yield* Fiber.interrupt(fiber)
    })).pipe(Effect.provide(FakeCluster.layer({ ...apiServerOnly, objects: [configMap("parent"), configMap("taken")] }))),
    // 20 attempts, each waited for in real time between clock steps: 17 s in a loaded CI run, near the default 30
    { timeout: 120_000 })

  it.effect("a reconcile that dies backs off the same way", () =>
    recordingSleeps(Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      const posts = requestsTo(cluster, "POST", cmPath)
      const controller = Controller.make({
        name: "pin/defect",
        api: configMaps,
        reconcile: (object) =>
          object.metadata?.name === "parent"
            ? Effect.flatMap(Effect.exit(configMaps.create({ metadata: { name: "taken" } })), () => Effect.die("boom"))
            : Effect.succeed(Controller.done)
      })
      const fiber = yield* Effect.forkChild(Controller.run(controller))
      yield* until(() => posts() === 1, "the first reconcile")
      const delays = [
        yield* nextAttempt(posts, 5, 5),
        yield* nextAttempt(posts, 10, 10),
        yield* nextAttempt(posts, 20, 20),
        yield* nextAttempt(posts, 40, 40)
      ]
      assert.deepStrictEqual(delays, [5, 10, 20, 40])
      yield* Fiber.interrupt(fiber)
    })).pipe(Effect.provide(FakeCluster.layer({ ...apiServerOnly, objects: [configMap("parent"), configMap("taken")] }))))

  it.effect("requeueAfter runs the key again after exactly its delay, each time", () =>
    recordingSleeps(Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      const posts = requestsTo(cluster, "POST", cmPath)
      const controller = Controller.make({
        name: "pin/requeue",
        api: configMaps,
        reconcile: (object) =>
          object.metadata?.name === "parent"
            ? Effect.as(
              Effect.exit(configMaps.create({ metadata: { name: "taken" } })),
              Controller.requeueAfter("90 seconds")
            )
            : Effect.succeed(Controller.done)
      })
      const fiber = yield* Effect.forkChild(Controller.run(controller))
      yield* until(() => posts() === 1, "the first reconcile")
      const delays = [yield* nextAttempt(posts, 90_000, 90_000), yield* nextAttempt(posts, 90_000, 90_000)]
      assert.deepStrictEqual(delays, [90_000, 90_000])
      yield* Fiber.interrupt(fiber)
    })).pipe(Effect.provide(FakeCluster.layer({ ...apiServerOnly, objects: [configMap("parent"), configMap("taken")] }))))

  it.effect("a custom errorPolicy that ends gives the key up until its next change", () =>
    recordingSleeps(Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      const posts = requestsTo(cluster, "POST", cmPath)
      const controller = Controller.make({
        name: "pin/give-up",
        api: configMaps,
        // two retries, 1 s apart (Schedule.intersect is Schedule.max in Effect 4)
        errorPolicy: Schedule.max([Schedule.spaced("1 second"), Schedule.recurs(2)]),
        reconcile: (object) =>
          object.metadata?.name === "parent"
            ? Effect.as(configMaps.create({ metadata: { name: "taken" } }), Controller.done)
            : Effect.succeed(Controller.done)
      })
      const fiber = yield* Effect.forkChild(Controller.run(controller))
      yield* until(() => posts() === 1, "the first reconcile")
      const delays = [yield* nextAttempt(posts, 1000, 1000), yield* nextAttempt(posts, 1000, 1000)]
      assert.deepStrictEqual(delays, [1000, 1000])
      yield* noMoreAttempts(posts, 60_000)
      assert.strictEqual(posts(), 3)
      cluster.update(ref("parent"), { data: { n: "1" } })
      yield* until(() => posts() === 4, "the change runs it again")
      yield* Fiber.interrupt(fiber)
    })).pipe(Effect.provide(FakeCluster.layer({ ...apiServerOnly, objects: [configMap("parent"), configMap("taken")] }))))
})

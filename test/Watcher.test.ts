import { assert, describe, it } from "@effect/vitest"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/testing/TestClock"
import * as fc from "fast-check"
import { ApiError, ValidationError } from "../packages/effect-kube/src/Errors.js"
import * as Kube from "../packages/effect-kube/src/Kube.js"
import * as NodeKube from "../packages/effect-kube/src/NodeKube.js"
import * as RequestPolicy from "../packages/effect-kube/src/RequestPolicy.js"
import { type Pod, Pods } from "../packages/effect-kube/src/resources/index.js"
import { FakeCluster } from "@effect-kube/testing"
import * as Watcher from "../packages/effect-kube/src/Watcher.js"
import * as Loopback from "./util/loopback.js"
import { pod, podRef as ref } from "./util/pods.js"
import { apiServerOnly } from "./util/apiServerOnly.js"

const pods = Kube.api(Pods, { namespace: "default" })


const show = (event: Watcher.Event<Pod>): string =>
  "object" in event ? `${event._tag} ${event.object.metadata?.name}` : event._tag

const rvOf = (object: { readonly metadata?: { readonly resourceVersion?: string | undefined } | undefined }) =>
  object.metadata?.resourceVersion ?? ""

const realSleep = (ms: number) => Effect.promise(() => new Promise<void>((resolve) => setTimeout(resolve, ms)))

/**
 * The wake-up times of the sleeps in progress, while `recordSleeps` runs (Effect 4's
 * TestClock does not list them): every sleep of the test clock is noted when it starts
 * and struck off when it ends, woken or interrupted.
 */
const SleepLog = Context.Reference<Array<number> | undefined>("test/Watcher/SleepLog", {
  defaultValue: () => undefined
})

const pendingSleeps: Effect.Effect<ReadonlyArray<number>> = Effect.map(
  SleepLog,
  (log) => log ?? assert.fail("recordSleeps is not in use")
)

/** Runs `effect` with a test clock that notes its sleeps in a `SleepLog`. */
const recordSleeps = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.withFiber((fiber) => {
    const clock = fiber.getRef(Clock.Clock) as TestClock.TestClock
    const log: Array<number> = []
    const recording: TestClock.TestClock = {
      ...clock,
      sleep: (duration) =>
        Effect.suspend(() => {
          const wake = clock.currentTimeMillisUnsafe() + Duration.toMillis(duration)
          log.push(wake)
          return Effect.ensuring(clock.sleep(duration), Effect.sync(() => log.splice(log.indexOf(wake), 1)))
        })
    }
    return effect.pipe(Effect.provideService(Clock.Clock, recording), Effect.provideService(SleepLog, log))
  })

/** Runs a stream in the background, its elements going to a queue the test takes from. */
const collect = <A, E, R>(stream: Stream.Stream<A, E, R>) =>
  Effect.gen(function*() {
    const queue = yield* Queue.unbounded<A>()
    const fiber = yield* stream.pipe(Stream.runForEach((a) => Queue.offer(queue, a)), Effect.forkChild)
    return {
      queue,
      fiber,
      take: (n: number): Effect.Effect<ReadonlyArray<A>> => Queue.takeBetween(queue, n, n),
      pending: (): Effect.Effect<ReadonlyArray<A>> => Queue.clear(queue)
    }
  })

const isWatch = (_method: string, _path: string, query: Readonly<Record<string, string>>) => query["watch"] === "true"
const watchRequests = (cluster: FakeCluster.Control) => cluster.requests().filter((r) => r.query["watch"] === "true")
const listRequests = (cluster: FakeCluster.Control) =>
  cluster.requests().filter((r) => r.method === "GET" && r.query["watch"] === undefined)

/** Real-time polling, for a fake that answers on the event loop while the test clock stands still. */
const until = (check: () => boolean, what: string) =>
  Effect.flatMap(Loopback.eventually(check), (ok) => Effect.sync(() => assert.isTrue(ok, what)))

/** Requests are not retried by the request path here, so the watcher's own backoff is what is seen. */
const noRetries = RequestPolicy.layer({ readRetries: Schedule.recurs(0), throttleRetries: 0, timeout: null })
const fake = (options?: FakeCluster.Options) =>
  Layer.merge(FakeCluster.layer({ ...apiServerOnly, ...options }), noRetries)

describe("Watcher", () => {
  it.effect("lists page by page, then watches from the list's resourceVersion", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      cluster.seed(["a", "b", "c", "d", "e"].map((n) => pod(n)))
      const events = yield* collect(pods.watcher({ watchList: false, pageSize: 2, labelSelector: "app=web" }))
      assert.deepStrictEqual((yield* events.take(7)).map(show), [
        "Init",
        "InitApply a",
        "InitApply b",
        "InitApply c",
        "InitApply d",
        "InitApply e",
        "InitDone"
      ])
      const listRv = cluster.resourceVersion()
      cluster.update(ref("a"), { metadata: { labels: { app: "web", n: "1" } } })
      cluster.remove(ref("b"))
      assert.deepStrictEqual((yield* events.take(2)).map(show), ["Apply a", "Delete b"])
      assert.deepStrictEqual(listRequests(cluster).map((r) => r.query["limit"]), ["2", "2", "2"])
      assert.deepStrictEqual(watchRequests(cluster).map((r) => r.query), [{
        watch: "true",
        labelSelector: "app=web",
        resourceVersion: listRv,
        allowWatchBookmarks: "true",
        timeoutSeconds: "290"
      }])
      yield* Fiber.interrupt(events.fiber)
    }).pipe(Effect.provide(fake())))

  it.effect("resumes from the last resourceVersion when a watch ends, losing and repeating nothing", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      cluster.seed([pod("a"), pod("b")])
      const events = yield* collect(pods.watcher({ watchList: false }))
      yield* events.take(4)
      cluster.dropWatchesAfter(1)
      const expected: Array<string> = []
      for (let i = 1; i <= 3; i++) {
        const changed = cluster.update(ref(i % 2 === 0 ? "b" : "a"), { metadata: { labels: { n: String(i) } } })
        expected.push(rvOf(changed as Pod))
        const [event] = yield* events.take(1)
        assert.strictEqual(event?._tag, "Apply")
        assert.strictEqual(rvOf((event as { object: Pod }).object), expected[i - 1])
      }
      yield* until(() => watchRequests(cluster).length === 4, "a fourth watch")
      // each watch started where the previous one's last event left off
      assert.deepStrictEqual(watchRequests(cluster).slice(1).map((r) => r.query["resourceVersion"]), expected)
      assert.strictEqual(listRequests(cluster).length, 1)
      assert.deepStrictEqual(yield* events.pending(), [])
      yield* Fiber.interrupt(events.fiber)
    }).pipe(Effect.provide(fake())))

  it.effect("bookmarks advance the resourceVersion a watch resumes from", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      cluster.seed([pod("a")])
      const events = yield* collect(pods.watcher({ watchList: false }))
      yield* events.take(3)
      yield* until(() => cluster.openWatches() === 1, "watch open")
      cluster.dropWatchesAfter(1)
      cluster.seed([{ ...pod("elsewhere"), metadata: { name: "elsewhere", namespace: "other" } }])
      const bookmarkRv = cluster.resourceVersion()
      cluster.bookmark() // the watch's only event: it ends after it
      yield* until(() => watchRequests(cluster).length === 2, "a second watch")
      cluster.dropWatchesAfter(undefined)
      assert.strictEqual(watchRequests(cluster)[1]?.query["resourceVersion"], bookmarkRv)
      cluster.update(ref("a"), { metadata: { labels: { n: "1" } } })
      assert.deepStrictEqual((yield* events.take(1)).map(show), ["Apply a"])
      yield* Fiber.interrupt(events.fiber)
    }).pipe(Effect.provide(fake())))

  it.effect("410 when resuming re-lists: a fresh Init…InitDone without what was deleted meanwhile", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      cluster.seed([pod("a"), pod("b"), pod("c")])
      const events = yield* collect(pods.watcher({ watchList: false }))
      yield* events.take(5)
      yield* until(() => cluster.openWatches() === 1, "watch open")
      cluster.dropWatchesAfter(1)
      // all in one go: the watch sends the first change and ends, the rest leaves the history
      cluster.update(ref("a"), { metadata: { labels: { n: "1" } } })
      cluster.remove(ref("b"))
      cluster.seed([pod("d")])
      cluster.compact()
      cluster.dropWatchesAfter(undefined)
      assert.deepStrictEqual((yield* events.take(6)).map(show), [
        "Apply a",
        "Init",
        "InitApply a",
        "InitApply c",
        "InitApply d",
        "InitDone"
      ])
      assert.strictEqual(listRequests(cluster).length, 2)
      yield* Fiber.interrupt(events.fiber)
    }).pipe(Effect.provide(fake())))

  // A list is what costs the server: the first re-list in two minutes goes at once, the next one waits on the
  // backoff (before, every 410 re-listed at once, and a server answering 410 had ~200 lists a second).
  it.effect("an ERROR 410 in the middle of a watch re-lists, and so does an HTTP 410 at connect, after a backoff", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      cluster.seed([pod("a")])
      const events = yield* collect(pods.watcher({ watchList: false }))
      yield* events.take(3)
      yield* until(() => cluster.openWatches() === 1, "watch open")
      cluster.expireWatches()
      assert.deepStrictEqual((yield* events.take(3)).map(show), ["Init", "InitApply a", "InitDone"])
      yield* until(() => cluster.openWatches() === 1, "watch open again")

      cluster.failNext({ status: 410, reason: "Expired", match: isWatch })
      cluster.dropWatchesAfter(1)
      cluster.update(ref("a"), { metadata: { labels: { n: "1" } } })
      assert.deepStrictEqual((yield* events.take(1)).map(show), ["Apply a"])
      const relist = yield* backoffDelay
      assert.isTrue(relist.delay >= 640 && relist.delay <= 960, `re-list delay ${relist.delay}`)
      assert.strictEqual(listRequests(cluster).length, 2)
      yield* TestClock.setTime(relist.wake)
      assert.deepStrictEqual((yield* events.take(3)).map(show), ["Init", "InitApply a", "InitDone"])
      assert.strictEqual(listRequests(cluster).length, 3)
      yield* Fiber.interrupt(events.fiber)
    }).pipe(recordSleeps, Effect.provide(fake())))

  /**
   * The delay of the backoff sleep the watcher is in: waits (in real time) until it
   * sleeps, then reads when it wakes. The clock stands where the sleep was started, as
   * every adjustment below ends exactly on a wake-up time.
   */
  const backoffDelay = Effect.gen(function*() {
    for (let i = 0; i < 300; i++) {
      const now = yield* Clock.currentTimeMillis
      const pending = (yield* pendingSleeps).filter((t) => t < now + 60_000)
      if (pending.length === 1) return { delay: pending[0]! - now, wake: pending[0]! }
      yield* realSleep(10)
    }
    return assert.fail("the watcher never went to sleep")
  })

  it.effect("backs off on 5xx by the default schedule (800 ms doubling, jittered), reset after a healthy while", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      cluster.seed([pod("a")])
      cluster.failNext({ status: 500, count: 2, match: isWatch })
      const events = yield* collect(pods.watcher({ watchList: false }))
      yield* events.take(3)
      const watches = () => watchRequests(cluster).length
      yield* until(() => watches() === 1, "first watch (500)")

      const first = yield* backoffDelay
      assert.isTrue(first.delay >= 640 && first.delay <= 960, `first delay ${first.delay}`)
      yield* TestClock.setTime(first.wake - 1)
      yield* realSleep(20)
      assert.strictEqual(watches(), 1)
      yield* TestClock.setTime(first.wake)
      yield* until(() => watches() === 2, "second watch (500)")

      const second = yield* backoffDelay
      assert.isTrue(second.delay >= 1280 && second.delay <= 1920, `second delay ${second.delay}`)
      yield* TestClock.setTime(second.wake)
      yield* until(() => watches() === 3 && cluster.openWatches() === 1, "third watch, open")
      cluster.update(ref("a"), { metadata: { labels: { n: "1" } } })
      assert.deepStrictEqual((yield* events.take(1)).map(show), ["Apply a"])

      // three healthy minutes later the next failure waits about 800 ms again, not 3.2 s
      yield* TestClock.adjust("3 minutes")
      cluster.failNext({ status: 503, match: isWatch })
      cluster.dropWatchesAfter(1) // the open watch has sent one event: it ends now
      yield* until(() => watches() === 4, "fourth watch (503)")
      cluster.dropWatchesAfter(undefined)
      const afterReset = yield* backoffDelay
      assert.isTrue(afterReset.delay >= 640 && afterReset.delay <= 960, `delay after reset ${afterReset.delay}`)
      yield* TestClock.setTime(afterReset.wake)
      yield* until(() => watches() === 5 && cluster.openWatches() === 1, "fifth watch")
      cluster.update(ref("a"), { metadata: { labels: { n: "2" } } })
      assert.deepStrictEqual((yield* events.take(1)).map(show), ["Apply a"])
      yield* Fiber.interrupt(events.fiber)
    }).pipe(recordSleeps, Effect.provide(fake())))

  it.effect("a failure soon after another continues the backoff instead of starting over", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      cluster.seed([pod("a")])
      cluster.failNext({ status: 500, match: isWatch })
      const events = yield* collect(pods.watcher({ watchList: false, backoff: Schedule.exponential("1 second") }))
      yield* events.take(3)
      const first = yield* backoffDelay
      assert.strictEqual(first.delay, 1000)
      yield* TestClock.setTime(first.wake)
      yield* until(() => cluster.openWatches() === 1, "watch open")
      cluster.failNext({ status: 500, match: isWatch })
      cluster.expireWatches() // re-list, then the watch fails again within two minutes
      const second = yield* backoffDelay
      assert.strictEqual(second.delay, 2000)
      yield* Fiber.interrupt(events.fiber)
    }).pipe(recordSleeps, Effect.provide(fake())))

  it.effect("429 waits at least its Retry-After", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      cluster.failNext({ status: 429, retryAfterSeconds: 5, match: isWatch })
      const events = yield* collect(pods.watcher({ watchList: false }))
      yield* events.take(2)
      const watches = () => watchRequests(cluster).length
      yield* until(() => watches() === 1, "first watch (429)")
      yield* realSleep(20)
      yield* TestClock.adjust("4900 millis")
      yield* realSleep(20)
      assert.strictEqual(watches(), 1)
      yield* TestClock.adjust("200 millis")
      yield* until(() => watches() === 2 && cluster.openWatches() === 1, "second watch after Retry-After")
      yield* Fiber.interrupt(events.fiber)
    }).pipe(Effect.provide(fake())))

  it.effect("403 of the collection fails the stream; failOn can make it retried", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      cluster.failNext({ status: 403, message: "pods is forbidden" })
      const error = yield* Effect.flip(pods.watcher({ watchList: false }).pipe(Stream.runDrain))
      assert.isTrue(ApiError.isForbidden(error))

      cluster.failNext({ status: 403, message: "pods is forbidden" })
      const events = yield* collect(pods.watcher({
        watchList: false,
        failOn: (e) => Watcher.defaultFailOn(e) && !ApiError.isForbidden(e),
        backoff: Schedule.spaced("5 seconds")
      }))
      yield* until(() => listRequests(cluster).length === 2, "the refused list")
      yield* realSleep(20)
      yield* TestClock.adjust("5 seconds")
      assert.deepStrictEqual((yield* events.take(2)).map(show), ["Init", "InitDone"])
      yield* Fiber.interrupt(events.fiber)
    }).pipe(Effect.provide(fake())))

  it.effect("a backoff schedule that ends fails the stream with the last failure", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      cluster.failNext({ status: 503, count: 5 })
      const error = yield* Effect.flip(pods.watcher({ watchList: false, backoff: Schedule.recurs(2) }).pipe(Stream.runDrain))
      assert.isTrue(error._tag === "ApiError" && error.code === 503)
      assert.strictEqual(listRequests(cluster).length, 3)
    }).pipe(Effect.provide(fake())))

  it.effect("a watch silent for longer than idleTimeout is taken for dead and resumed", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      cluster.seed([pod("a")])
      // shorter than the fake's bookmark interval (a minute, on the same clock), which would end the silence
      const events = yield* collect(pods.watcher({ watchList: false, idleTimeout: "30 seconds" }))
      yield* events.take(3)
      yield* until(() => cluster.openWatches() === 1, "watch open")
      yield* realSleep(20)
      yield* TestClock.adjust("30 seconds") // the backoff that follows starts now: not yet run
      yield* until(() => cluster.openWatches() === 0, "the silent watch is closed by the client")
      yield* realSleep(20)
      yield* TestClock.adjust("2 seconds") // it sent nothing at all: resumed after a backoff
      yield* until(() => watchRequests(cluster).length === 2 && cluster.openWatches() === 1, "resumed")
      const [before, after] = watchRequests(cluster)
      assert.strictEqual(after?.query["resourceVersion"], before?.query["resourceVersion"])
      cluster.update(ref("a"), { metadata: { labels: { n: "1" } } })
      assert.deepStrictEqual((yield* events.take(1)).map(show), ["Apply a"])
      yield* Fiber.interrupt(events.fiber)
    }).pipe(Effect.provide(fake())))

  it.effect("bad options fail before any request", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      for (const options of [{ pageSize: 0 }, { timeoutSeconds: -5 }]) {
        const error = yield* Effect.flip(pods.watcher(options).pipe(Stream.runDrain))
        assert.instanceOf(error, ValidationError)
      }
      assert.strictEqual(cluster.requests().length, 0)
    }).pipe(Effect.provide(fake())))

  it.live("interrupting a watcher closes its connection", () =>
    Effect.gen(function*() {
      const server = yield* FakeCluster.serve(apiServerOnly)
      const layer = NodeKube.layerFromFile({ path: server.kubeconfigPath }).pipe(Layer.orDie)
      server.control.seed([pod("a")])
      const fiber = yield* pods.watcher({ watchList: false }).pipe(Stream.runDrain, Effect.provide(layer), Effect.forkChild)
      assert.isTrue(yield* Loopback.eventually(() => server.control.openWatches() === 1), "watch open")
      yield* Fiber.interrupt(fiber)
      assert.isTrue(yield* Loopback.eventually(() => server.control.openWatches() === 0), "watch closed")
      assert.isTrue(yield* Loopback.eventually(() => server.openConnections() === 0), "sockets closed")
    }))
})

describe("reflector", () => {
  const storeNames = (store: Watcher.Store<Pod, unknown>) =>
    Effect.map(store.list(), (all) => all.map((p) => p.metadata?.name ?? "").sort())

  const waitForStore = (store: Watcher.Store<Pod, unknown>, expected: ReadonlyArray<string>) =>
    Effect.gen(function*() {
      for (let i = 0; i < 300; i++) {
        if (JSON.stringify(yield* storeNames(store)) === JSON.stringify(expected)) return
        yield* realSleep(5)
      }
      assert.deepStrictEqual(yield* storeNames(store), expected)
    })

  it.effect("keeps a store equal to the cluster, swapping in each listing whole", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      cluster.seed([pod("a"), pod("b")])
      const store = yield* Watcher.reflector(pods, { watchList: false })
      yield* store.ready
      assert.deepStrictEqual(yield* storeNames(store), ["a", "b"])
      assert.strictEqual(Option.getOrUndefined(yield* store.get("a"))?.metadata?.name, "a")
      assert.isTrue(Option.isSome(yield* store.get("a", "default")))
      assert.isTrue(Option.isNone(yield* store.get("a", "other")))

      cluster.seed([pod("c")])
      cluster.remove(ref("a"))
      yield* waitForStore(store, ["b", "c"])

      // deleted while disconnected and compacted away: gone with the next listing
      yield* until(() => cluster.openWatches() === 1, "watch open")
      cluster.dropWatchesAfter(1)
      cluster.update(ref("b"), { metadata: { labels: { n: "1" } } })
      cluster.remove(ref("c"))
      cluster.compact()
      cluster.dropWatchesAfter(undefined)
      yield* waitForStore(store, ["b"])
      assert.strictEqual(Option.getOrUndefined(yield* store.get("b"))?.metadata?.labels?.["n"], "1")
    }).pipe(Effect.provide(fake())))

  it.effect("ready fails when the watcher fails before its first listing", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      cluster.failNext({ status: 404 })
      const store = yield* Watcher.reflector(pods, { watchList: false })
      const exit = yield* Effect.exit(store.ready)
      assert.isTrue(Exit.isFailure(exit))
      const error = yield* Effect.flip(store.ready)
      assert.isTrue(ApiError.isNotFound(error))
    }).pipe(Effect.provide(fake())))

  it.effect("a watcher that fails for good after the first listing leaves a store that says so", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      cluster.seed([pod("a")])
      const store = yield* Watcher.reflector(pods, { watchList: false })
      yield* store.ready
      assert.isTrue(Option.isNone(yield* store.failure))
      yield* until(() => cluster.openWatches() === 1, "watch open")
      // the watch expires (410: list again) and the new listing is forbidden (403: not retried)
      cluster.failNext({ status: 403, message: "RBAC was revoked" })
      cluster.expireWatches()
      const error = yield* Effect.flip(store.stopped)
      assert.isTrue(ApiError.isForbidden(error))
      const failure = yield* store.failure
      assert.isTrue(Option.isSome(failure) && ApiError.isForbidden(failure.value))
      // the store keeps its last state, now known to be stale
      assert.deepStrictEqual(yield* storeNames(store), ["a"])
    }).pipe(Effect.provide(fake())))

  it.effect("reflect writes into any Writer; a read-only Store does not type-check", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      cluster.seed([pod("a")])
      const written: Array<string> = []
      const writer: Watcher.Writer<Pod, Kube.Error> = {
        apply: (event) => written.push(show(event)),
        fail: () => {}
      }
      yield* pods.watcher({ watchList: false }).pipe(Watcher.reflect(writer), Stream.take(3), Stream.runDrain)
      assert.deepStrictEqual(written, ["Init", "InitApply a", "InitDone"])
      const typeOnly = (readOnly: Watcher.Store<Pod, Kube.Error>) =>
        // @ts-expect-error a Store without a writing side cannot be given to reflect
        pods.watcher({ watchList: false }).pipe(Watcher.reflect(readOnly))
      assert.isFunction(typeOnly)
    }).pipe(Effect.provide(fake())))

  it.effect("reflect taps any watcher stream, for a store the caller makes", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      cluster.seed([pod("a"), { ...pod("x"), metadata: { name: "x", namespace: "other" } }])
      const store = yield* Watcher.makeStore<Pod, Kube.Error>()
      const events = yield* collect(Kube.api(Pods).watcher({ watchList: false, allNamespaces: true }).pipe(Watcher.reflect(store)))
      assert.deepStrictEqual((yield* events.take(4)).map(show), ["Init", "InitApply a", "InitApply x", "InitDone"])
      yield* store.ready
      assert.isTrue(Option.isSome(yield* store.get("x", "other")))
      assert.isTrue(Option.isNone(yield* store.get("x")))
      yield* Fiber.interrupt(events.fiber)
    }).pipe(Effect.provide(fake())))
})

type Op =
  | { readonly op: "create" | "update" | "delete"; readonly name: number }
  | { readonly op: "drop"; readonly after: number }
  | { readonly op: "undrop" | "compact" | "expire" | "pause" | "cut" }
  | { readonly op: "fail"; readonly status: number }

const opArbitrary: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      op: fc.constantFrom("create" as const, "update" as const, "delete" as const),
      name: fc.nat(9)
    })
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("drop" as const), after: fc.integer({ min: 1, max: 3 }) }) },
  {
    weight: 1,
    arbitrary: fc.constantFrom({ op: "undrop" as const }, { op: "compact" as const }, { op: "expire" as const })
  },
  { weight: 1, arbitrary: fc.constantFrom({ op: "pause" as const }, { op: "cut" as const }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("fail" as const), status: fc.constantFrom(500, 503, 429) }) }
)

describe("Watcher with WatchList (KEP-3157)", () => {
  const watchListQuery = {
    watch: "true",
    labelSelector: "app=web",
    resourceVersionMatch: "NotOlderThan",
    sendInitialEvents: "true",
    allowWatchBookmarks: "true",
    timeoutSeconds: "290"
  }

  it.effect("by default, one watch with initial events is the listing, and goes on with the live events", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      cluster.seed(["a", "b", "c"].map((n) => pod(n)))
      const events = yield* collect(pods.watcher({ pageSize: 2, labelSelector: "app=web" }))
      assert.deepStrictEqual((yield* events.take(5)).map(show), [
        "Init",
        "InitApply a",
        "InitApply b",
        "InitApply c",
        "InitDone"
      ])
      cluster.update(ref("a"), { metadata: { labels: { app: "web", n: "1" } } })
      cluster.remove(ref("b"))
      assert.deepStrictEqual((yield* events.take(2)).map(show), ["Apply a", "Delete b"])
      // no list at all, and the live events came on the same watch
      assert.deepStrictEqual(listRequests(cluster), [])
      assert.deepStrictEqual(watchRequests(cluster).map((r) => r.query), [watchListQuery])
      yield* Fiber.interrupt(events.fiber)
    }).pipe(Effect.provide(fake())))

  it.effect("an empty collection is Init then InitDone, at the bookmark", () =>
    Effect.gen(function*() {
      const events = yield* collect(pods.watcher())
      assert.deepStrictEqual((yield* events.take(2)).map(show), ["Init", "InitDone"])
      yield* Fiber.interrupt(events.fiber)
    }).pipe(Effect.provide(fake())))

  it.effect("a watch-list that ends resumes as a watch from the last resourceVersion, and a 410 watch-lists again", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      cluster.seed([pod("a")])
      const events = yield* collect(pods.watcher())
      assert.deepStrictEqual((yield* events.take(3)).map(show), ["Init", "InitApply a", "InitDone"])
      // the watch-list ends (it has sent its events): the watch resumes from the bookmark's resourceVersion
      const rv = cluster.resourceVersion()
      cluster.dropWatchesAfter(1)
      yield* until(() => watchRequests(cluster).length === 2, "the resumed watch")
      cluster.dropWatchesAfter(undefined)
      cluster.update(ref("a"), { metadata: { labels: { app: "web", n: "1" } } })
      assert.deepStrictEqual((yield* events.take(1)).map(show), ["Apply a"])
      const resumed = watchRequests(cluster)[1]!.query
      assert.strictEqual(resumed["resourceVersion"], rv)
      assert.strictEqual(resumed["sendInitialEvents"], undefined)
      // a 410: the next listing is a watch-list again, and nothing is lost meanwhile
      cluster.expireWatches()
      cluster.seed([pod("b")])
      // the first watch-list ended within a second without a change: this re-list waits on the backoff
      yield* realSleep(20)
      yield* TestClock.adjust("30 seconds")
      assert.deepStrictEqual((yield* events.take(4)).map(show), ["Init", "InitApply a", "InitApply b", "InitDone"])
      assert.strictEqual(watchRequests(cluster).at(-1)!.query["sendInitialEvents"], "true")
      assert.deepStrictEqual(listRequests(cluster), [])
      yield* Fiber.interrupt(events.fiber)
    }).pipe(Effect.provide(fake())))

  it.effect("a server without WatchList (422) is listed then watched, from then on, with the same events", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      cluster.seed(["a", "b", "c"].map((n) => pod(n)))
      const events = yield* collect(pods.watcher({ pageSize: 2, labelSelector: "app=web" }))
      assert.deepStrictEqual((yield* events.take(5)).map(show), [
        "Init",
        "InitApply a",
        "InitApply b",
        "InitApply c",
        "InitDone"
      ])
      cluster.remove(ref("b"))
      assert.deepStrictEqual((yield* events.take(1)).map(show), ["Delete b"])
      const watches = watchRequests(cluster)
      assert.deepStrictEqual(watches[0]!.query, watchListQuery)
      assert.strictEqual(watches[1]!.query["sendInitialEvents"], undefined)
      assert.deepStrictEqual(listRequests(cluster).map((r) => r.query["limit"]), ["2", "2"])
      // a 410 later lists again without trying a watch-list first
      cluster.compact()
      cluster.seed([pod("d")])
      cluster.compact()
      cluster.expireWatches()
      yield* until(() => listRequests(cluster).length === 4, "the re-list")
      assert.isFalse(watchRequests(cluster).slice(1).some((r) => r.query["sendInitialEvents"] !== undefined))
      yield* Fiber.interrupt(events.fiber)
    }).pipe(Effect.provide(fake({ features: { watchList: false }, compactionWindow: 1 }))))

  it.effect("watchList: true fails on a server without it; false never asks for one", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      const error = yield* Effect.flip(pods.watcher({ watchList: true }).pipe(Stream.runDrain))
      assert.isTrue(error._tag === "ApiError" && error.code === 422, String(error))
      assert.strictEqual(listRequests(cluster).length, 0)
      const events = yield* collect(pods.watcher({ watchList: false }))
      assert.deepStrictEqual((yield* events.take(2)).map(show), ["Init", "InitDone"])
      assert.strictEqual(listRequests(cluster).length, 1)
      yield* Fiber.interrupt(events.fiber)
    }).pipe(Effect.provide(fake({ features: { watchList: false } }))))

  it.effect("a watch-list that ends before its bookmark is followed by a list for that listing", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      cluster.seed(["a", "b", "c"].map((n) => pod(n)))
      cluster.dropWatchesAfter(2)
      const store = yield* Watcher.makeStore<Pod, Kube.Error>({ namespace: "default" })
      const events = yield* collect(pods.watcher().pipe(Watcher.reflect(store)))
      const seen = (yield* events.take(7)).map(show)
      assert.deepStrictEqual(seen, ["Init", "InitApply a", "InitApply b", "Init", "InitApply a", "InitApply b", "InitApply c"])
      cluster.dropWatchesAfter(undefined)
      assert.deepStrictEqual((yield* events.take(1)).map(show), ["InitDone"])
      yield* store.ready
      assert.deepStrictEqual((yield* store.list()).map((p) => p.metadata?.name).sort(), ["a", "b", "c"])
      assert.strictEqual(listRequests(cluster).length, 1)
      assert.strictEqual(watchRequests(cluster)[0]!.query["sendInitialEvents"], "true")
      yield* Fiber.interrupt(events.fiber)
    }).pipe(Effect.provide(fake())))

  it.effect("a reflector on a watch-list is ready at the bookmark and follows deletes", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      cluster.seed(["a", "b"].map((n) => pod(n)))
      const store = yield* Watcher.reflector(pods)
      yield* store.ready
      assert.deepStrictEqual((yield* store.list()).map((p) => p.metadata?.name).sort(), ["a", "b"])
      cluster.remove(ref("a"))
      yield* until(() => Effect.runSync(store.list()).length === 1, "the delete")
      assert.isTrue(Option.isNone(yield* store.get("a")))
      assert.deepStrictEqual(listRequests(cluster), [])
    }).pipe(Effect.scoped, Effect.provide(fake())))
})

describe("watcher under random changes and faults", () => {
  /**
   * One run: a reflector-fed store follows a fake cluster while the test changes
   * objects and injects dropped watches, compaction (410 at resume), mid-stream 410s,
   * cut connections and 5xx/429 answers. Afterwards the store must equal the cluster.
   * Without re-lists, every change must also have arrived as exactly one event, in order.
   */
  const run = (
    scenario: { readonly initial: number; readonly pageSize: number; readonly ops: ReadonlyArray<Op> },
    watchList: boolean
  ) =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      const name = (i: number) => `p${i}`
      const exists = new Set<string>()
      for (let i = 0; i < scenario.initial; i++) {
        cluster.seed([pod(name(i))])
        exists.add(name(i))
      }
      const store = yield* Watcher.makeStore<Pod, Kube.Error>()
      const seen: Array<Watcher.Event<Pod>> = []
      const fiber = yield* pods.watcher({ watchList, pageSize: scenario.pageSize, backoff: Schedule.spaced("1 millis") }).pipe(
        Watcher.reflect(store),
        Stream.runForEach((e) => Effect.sync(() => seen.push(e))),
        Effect.forkChild
      )
      yield* store.ready
      const changes: Array<string> = [] // "name@rv" of every change after the first listing
      for (const op of scenario.ops) {
        switch (op.op) {
          case "create":
          case "update": {
            const n = name(op.name)
            const changed = exists.has(n)
              ? cluster.update(ref(n), { metadata: { labels: { app: "web", v: String(changes.length) } } })
              : cluster.seed([pod(n)])[0]!
            exists.add(n)
            changes.push(`${n}@${rvOf(changed as Pod)}`)
            break
          }
          case "delete": {
            const n = name(op.name)
            if (cluster.remove(ref(n))) {
              exists.delete(n)
              changes.push(`${n}@${cluster.resourceVersion()}`)
            }
            break
          }
          case "drop":
            cluster.dropWatchesAfter(op.after)
            break
          case "undrop":
            cluster.dropWatchesAfter(undefined)
            break
          case "compact":
            cluster.compact()
            break
          case "expire":
            cluster.expireWatches()
            break
          case "cut":
            cluster.resetNext({ match: isWatch, afterBytes: 10 })
            break
          case "fail":
            cluster.failNext({ status: op.status })
            break
          case "pause":
            yield* realSleep(2)
            break
        }
        yield* Effect.promise(() => new Promise((resolve) => setImmediate(resolve)))
      }
      cluster.clearFaults()
      const truth = () =>
        cluster.list("v1", "Pod", "default").map((o) => `${o.metadata.name}@${o.metadata.resourceVersion}`).sort()
      const cached = Effect.map(store.list(), (all) => all.map((p) => `${p.metadata?.name}@${rvOf(p)}`).sort())
      let same = false
      for (let i = 0; i < 500 && !same; i++) {
        same = JSON.stringify(yield* cached) === JSON.stringify(truth())
        if (!same) yield* realSleep(5)
      }
      assert.deepStrictEqual(yield* cached, truth())

      const relisted = seen.filter((e) => e._tag === "Init").length > 1
      const live = seen.filter((e) => e._tag === "Apply" || e._tag === "Delete")
        .map((e) => `${(e as { object: Pod }).object.metadata?.name}@${rvOf((e as { object: Pod }).object)}`)
      if (!relisted) assert.deepStrictEqual(live, changes)
      // events of live changes only move forward
      const rvs = live.map((s) => Number(s.split("@")[1]))
      for (let i = 1; i < rvs.length; i++) {
        if (!relisted) assert.isTrue(rvs[i]! > rvs[i - 1]!, `${live[i - 1]} then ${live[i]}`)
      }
      yield* Fiber.interrupt(fiber)
      return relisted
    })

  it.live.each([false, true])("the store ends equal to the cluster, and no change is lost, over many seeds (watchList %s)", (watchList) =>
    Effect.gen(function*() {
      const scenarios = fc.sample(
        fc.record({
          initial: fc.nat(6),
          pageSize: fc.integer({ min: 1, max: 4 }),
          ops: fc.array(opArbitrary, { minLength: 5, maxLength: 40 }),
          window: fc.constantFrom(undefined, 3, 10)
        }),
        { numRuns: 60, seed: 20240601 }
      )
      let relists = 0
      for (const [i, scenario] of scenarios.entries()) {
        const relisted = yield* run(scenario, watchList).pipe(
          Effect.provide(fake({ compactionWindow: scenario.window })),
          Effect.mapError((e) => new Error(`scenario ${i}: ${String(e)}`))
        )
        if (relisted) relists++
      }
      // both kinds of run happened: with re-lists and without
      assert.isAbove(relists, 5)
      assert.isBelow(relists, scenarios.length - 5)
    }), { timeout: 120_000 })
})

/**
 * Which failures are sent again, how often and after how long. The clock is the
 * TestClock: each wait a request makes is read off the clock's pending sleeps
 * (`recordingSleeps`) and checked to the millisecond, and the clock is moved one millisecond short of it to
 * prove nothing is sent early.
 *
 * - 429, and 503 with Retry-After, say the server did not act: every verb retries them,
 *   waiting what Retry-After asks (capped), `throttleRetries` times, then surfaces the
 *   ApiError with its reason and `retryAfter`.
 * - Other 5xx and transport failures: reads are retried on the `readRetries` schedule;
 *   mutations fail at once, since the server may have acted.
 */
import { afterAll, assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/testing/TestClock"
import { ApiError } from "../../packages/effect-kube/src/Errors.js"
import * as Kube from "../../packages/effect-kube/src/Kube.js"
import * as Patch from "../../packages/effect-kube/src/Patch.js"
import * as RequestPolicy from "../../packages/effect-kube/src/RequestPolicy.js"
import { ConfigMaps, Pods } from "../../packages/effect-kube/src/resources/index.js"
import { FakeCluster } from "@effect-kube/testing"
import {
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
afterAll(() => report("retries", counts))

const cms = Kube.api(ConfigMaps, { namespace: "default" })
const pods = Kube.api(Pods, { namespace: "default" })
const collection = "/api/v1/namespaces/default/configmaps"

const configMap = (name: string) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace: "default", labels: { app: "retry" } },
  data: { v: "0" }
})

interface Verb {
  readonly name: string
  readonly method: string
  readonly path: string
  readonly setup: (control: FakeCluster.Control) => void
  readonly run: Effect.Effect<unknown, Kube.Error, Kube.Requirements>
}

/** One operation of each verb, with the scene it needs. */
const verbs: ReadonlyArray<Verb> = [
  { name: "get", method: "GET", path: `${collection}/a`, setup: seedA, run: cms.get("a") },
  { name: "list", method: "GET", path: collection, setup: seedA, run: cms.list() },
  {
    name: "logs",
    method: "GET",
    path: "/api/v1/namespaces/default/pods/p/log",
    setup: (c) => {
      c.seed([{ apiVersion: "v1", kind: "Pod", metadata: { name: "p" }, spec: { containers: [{ name: "c" }] } }])
      c.appendLog("default", "p", ["one", "two"])
    },
    run: pods.logs("p")
  },
  { name: "create", method: "POST", path: collection, setup: () => {}, run: cms.create({ metadata: { name: "a" } }) },
  {
    name: "replace",
    method: "PUT",
    path: `${collection}/a`,
    setup: seedA,
    run: cms.replace("a", { metadata: { name: "a" }, data: { v: "1" } })
  },
  {
    name: "patch",
    method: "PATCH",
    path: `${collection}/a`,
    setup: seedA,
    run: cms.patch("a", Patch.merge({ data: { v: "2" } }))
  },
  {
    name: "apply",
    method: "PATCH",
    path: `${collection}/a`,
    setup: () => {},
    run: cms.apply({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a" }, data: { v: "3" } }, {
      fieldManager: "retry"
    })
  },
  { name: "delete", method: "DELETE", path: `${collection}/a`, setup: seedA, run: cms.delete("a") },
  {
    name: "deleteAll",
    method: "DELETE",
    path: collection,
    setup: seedA,
    run: cms.deleteAll({ labelSelector: "app=retry" })
  }
]

function seedA(control: FakeCluster.Control): void {
  control.seed([configMap("a")])
}

const mutations = verbs.filter((v) => v.method !== "GET")
const reads = verbs.filter((v) => v.method === "GET")

const matching = (verb: Verb): FakeCluster.RequestMatch => (method, path, query) =>
  method === verb.method && path === verb.path && query["watch"] === undefined

const sent = (control: FakeCluster.Control, verb: Verb) =>
  control.requests().filter((r) => r.method === verb.method && r.path === verb.path).length

/**
 * Runs `effect` in a fiber and checks that it waits exactly `waits` (ms) in turn, and
 * that each wait ends with exactly one more request: none a millisecond early, one
 * right on time. Returns how the fiber ended.
 */
const expectWaits = <A, E, R>(
  effect: Effect.Effect<A, E, R>,
  requests: () => number,
  waits: ReadonlyArray<number>
) =>
  recordingSleeps(Effect.gen(function*() {
    let before = yield* sleeps
    const fiber = yield* Effect.forkChild(effect)
    for (const [i, wait] of waits.entries()) {
      const delay = yield* newSleep(before, fiber)
      assert.deepStrictEqual(delay, Option.some(wait), `wait #${i + 1}`)
      const sent = requests()
      before = yield* sleeps
      yield* TestClock.adjust(wait - 1)
      yield* realSleep(10)
      assert.strictEqual(requests(), sent, `wait #${i + 1}: nothing is sent before ${wait} ms`)
      yield* TestClock.adjust(1)
      for (let n = 0; n < 1_000 && requests() === sent; n++) yield* realSleep(2)
      assert.strictEqual(requests(), sent + 1, `wait #${i + 1}: sent once more after ${wait} ms`)
    }
    const more = yield* newSleep(before, fiber)
    assert.isTrue(Option.isNone(more), "no further wait: it ends")
    return yield* Fiber.await(fiber)
  }))

/** Runs `effect` in a fiber, moving the clock to each sleep it waits on until it ends. */
const drive = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  recordingSleeps(Effect.gen(function*() {
    let before = yield* sleeps
    const fiber = yield* Effect.forkChild(effect)
    let waited = 0
    for (;;) {
      const delay = yield* newSleep(before, fiber)
      if (Option.isNone(delay)) return { exit: yield* Fiber.await(fiber), waited }
      waited += delay.value
      before = yield* sleeps
      yield* TestClock.adjust(delay.value)
    }
  }))

const noTimeout = RequestPolicy.layer({ timeout: null })

/** The in-memory fake and a policy; the test gets the controls. */
const withFake = <A, E>(
  program: (control: FakeCluster.Control) => Effect.Effect<A, E, Kube.Requirements>,
  policy: Layer.Layer<never> = noTimeout
) =>
  Effect.gen(function*() {
    const control = yield* FakeCluster.FakeCluster
    const result = yield* program(control)
    counts.requests += control.requests().length
    return result
  }).pipe(Effect.provide(Layer.merge(FakeCluster.layer(apiServerOnly), policy)))

describe("429 and 503 with Retry-After: every verb retries, honouring Retry-After", () => {
  for (const verb of verbs) {
    for (const status of [429, 503]) {
      it.effect(`${verb.name}: ${status} twice, then success after exactly 7 s and 3 s`, () =>
        withFake((control) =>
          Effect.gen(function*() {
            verb.setup(control)
            control.reset()
            control.failNext({ status, retryAfterSeconds: 7, match: matching(verb) })
            control.failNext({ status, retryAfterSeconds: 3, match: matching(verb) })
            counts.faults += 2
            const exit = yield* expectWaits(verb.run, () => sent(control, verb), [7_000, 3_000])
            assert.strictEqual(exit._tag, "Success", `${verb.name} succeeds on the third try`)
            assert.strictEqual(sent(control, verb), 3)
            if (verb.name === "create") {
              assert.strictEqual(control.list("v1", "ConfigMap", "default").length, 1, "created once")
            }
          })
        ))
    }
  }

  for (const verb of [verbs[0]!, verbs[3]!, verbs[5]!, verbs[7]!]) {
    for (const status of [429, 503]) {
      it.effect(`${verb.name}: a persistent ${status} surfaces after throttleRetries, with reason and retryAfter`, () =>
        withFake(
          (control) =>
            Effect.gen(function*() {
              verb.setup(control)
              control.reset()
              control.failNext({ status, retryAfterSeconds: 4, count: 100, match: matching(verb) })
              counts.faults++
              const exit = yield* expectWaits(verb.run, () => sent(control, verb), [4_000, 4_000])
              const error = yield* failureOf(exit)
              assert.instanceOf(error, ApiError)
              const apiError = error as ApiError
              assert.strictEqual(apiError.code, status)
              assert.strictEqual(apiError.reason, status === 429 ? "TooManyRequests" : "ServiceUnavailable")
              assert.strictEqual(apiError.retryAfter, 4)
              assert.strictEqual(sent(control, verb), 3, "the first try and throttleRetries (2) more")
            }),
          RequestPolicy.layer({ timeout: null, throttleRetries: 2 })
        ))
    }
  }

  it.effect("a Retry-After longer than maxRetryAfter waits maxRetryAfter", () =>
    withFake(
      (control) =>
        Effect.gen(function*() {
          control.failNext({ status: 429, retryAfterSeconds: 3_600, count: 2 })
          counts.faults += 2
          const requests = () => control.requests().length
          const exit = yield* expectWaits(cms.create({ metadata: { name: "capped" } }), requests, [2_000, 2_000])
          assert.strictEqual(exit._tag, "Success")
        }),
      RequestPolicy.layer({ timeout: null, maxRetryAfter: "2 seconds" })
    ))

  it.effect("a 429 without Retry-After backs off 500 ms, then 1 s, then 2 s", () =>
    withFake((control) =>
      Effect.gen(function*() {
        control.failNext({ status: 429, count: 3 })
        counts.faults += 3
        const requests = () => control.requests().length
        const exit = yield* expectWaits(cms.create({ metadata: { name: "backoff" } }), requests, [500, 1_000, 2_000])
        assert.strictEqual(exit._tag, "Success")
      })
    ))

  it.effect("Retry-After: 0 is sent again at once; throttleRetries: 0 never retries", () =>
    Effect.gen(function*() {
      yield* withFake((control) =>
        Effect.gen(function*() {
          control.failNext({ status: 429, retryAfterSeconds: 0 })
          counts.faults++
          const run = yield* drive(cms.create({ metadata: { name: "zero" } }))
          assert.strictEqual(run.exit._tag, "Success")
          assert.strictEqual(run.waited, 0)
          assert.strictEqual(control.requests().length, 2)
        })
      )
      yield* withFake(
        (control) =>
          Effect.gen(function*() {
            control.failNext({ status: 429, retryAfterSeconds: 1 })
            counts.faults++
            const error = yield* failureOf(cms.get("x"))
            assert.isTrue(ApiError.isTooManyRequests(error))
            assert.strictEqual(control.requests().length, 1)
          }),
        RequestPolicy.layer({ timeout: null, throttleRetries: 0 })
      )
    }))

  it.live("over loopback HTTPS, a real Retry-After of 1 s is waited before the request goes again", () =>
    Effect.scoped(Effect.gen(function*() {
      const served = yield* serveTls()
      served.control.failNext({ status: 503, retryAfterSeconds: 1, match: (m) => m === "POST" })
      counts.faults++
      const started = Date.now()
      const created = yield* cms.create({ metadata: { name: "real" } }).pipe(Effect.provide(nodeLayer(served)))
      const elapsed = Date.now() - started
      assert.strictEqual(created.metadata?.name, "real")
      assert.isAtLeast(elapsed, 1_000, "it waited what Retry-After asked")
      assert.strictEqual(served.control.requests().filter((r) => r.method === "POST").length, 2)
      counts.requests += served.control.requests().length
    })))
})

describe("other 5xx and transport failures: reads retry, mutations fail at once", () => {
  for (const status of [500, 502, 503, 504]) {
    for (const verb of reads) {
      it.effect(`${verb.name}: ${status} three times is retried on the readRetries schedule, a fourth surfaces`, () =>
        withFake((control) =>
          Effect.gen(function*() {
            verb.setup(control)
            control.reset()
            control.failNext({ status, count: 3, match: matching(verb) })
            counts.faults += 3
            const first = yield* drive(verb.run)
            assert.strictEqual(first.exit._tag, "Success")
            assert.strictEqual(sent(control, verb), 4)
            // exponential from 200 ms, jittered (80%..120%): 200 + 400 + 800 ms give or take
            assert.isAtLeast(first.waited, 1_120)
            assert.isAtMost(first.waited, 1_680)

            control.reset()
            control.failNext({ status, count: 4, match: matching(verb) })
            counts.faults += 4
            const second = yield* drive(verb.run)
            assert.strictEqual(second.exit._tag, "Failure")
            const error = yield* failureOf(second.exit)
            assert.instanceOf(error, ApiError)
            assert.strictEqual((error as ApiError).code, status)
            assert.strictEqual(sent(control, verb), 4, "the first try and three retries")
          })
        ))
    }
    for (const verb of mutations) {
      it.effect(`${verb.name}: ${status} fails at once, sent once, nothing waited`, () =>
        withFake((control) =>
          Effect.gen(function*() {
            verb.setup(control)
            const before = JSON.stringify(control.list("v1", "ConfigMap", "default"))
            control.reset()
            control.failNext({ status, match: matching(verb) })
            counts.faults++
            const run = yield* drive(verb.run)
            assert.strictEqual(run.waited, 0, "no retry delay")
            const error = yield* failureOf(run.exit)
            assert.instanceOf(error, ApiError)
            assert.strictEqual((error as ApiError).code, status)
            assert.strictEqual(sent(control, verb), 1)
            const after = JSON.stringify(control.list("v1", "ConfigMap", "default"))
            assert.strictEqual(after, before, "the fake did not act")
          })
        ))
    }
  }

  for (const verb of verbs) {
    const retried = verb.method === "GET" ? "retried" : "not retried"
    it.effect(`${verb.name}: a connection reset before the answer is ${retried}`, () =>
      withFake((control) =>
        Effect.gen(function*() {
          verb.setup(control)
          control.reset()
          control.resetNext({ match: matching(verb) })
          counts.faults++
          const run = yield* drive(verb.run)
          if (verb.method === "GET") {
            assert.strictEqual(run.exit._tag, "Success")
            assert.strictEqual(sent(control, verb), 2)
          } else {
            const error = yield* failureOf(run.exit)
            assert.strictEqual(error._tag, "HttpClientError")
            assert.strictEqual(
              error._tag === "HttpClientError" ? error.reason._tag : undefined,
              "TransportError"
            )
            assert.strictEqual(run.waited, 0)
            assert.strictEqual(sent(control, verb), 1)
          }
        })
      ))
  }

  it.effect("a throttle on a read is not retried again by readRetries: throttleRetries is the bound", () =>
    withFake(
      (control) =>
        Effect.gen(function*() {
          control.failNext({ status: 503, retryAfterSeconds: 1, count: 100 })
          counts.faults++
          const run = yield* drive(cms.get("a"))
          const error = yield* failureOf(run.exit)
          assert.instanceOf(error, ApiError)
          assert.strictEqual(control.requests().length, 2, "the first try and throttleRetries (1) more")
          assert.strictEqual(run.waited, 1_000)
        }),
      RequestPolicy.layer({ timeout: null, throttleRetries: 1 })
    ))
})

describe("the watcher and Retry-After", () => {
  it.effect("a throttled watch is resumed no sooner than Retry-After, whatever the backoff", () =>
    withFake((control) =>
      Effect.gen(function*() {
        control.seed([configMap("w")])
        const isWatch: FakeCluster.RequestMatch = (_m, _p, query) => query["watch"] === "true"
        control.failNext({ status: 429, retryAfterSeconds: 5, match: isWatch })
        counts.faults++
        const watches = () => control.requests().filter((r) => r.query["watch"] === "true").length
        const fiber = yield* cms.watcher({ backoff: Schedule.spaced("10 millis") }).pipe(
          Stream.take(4),
          Stream.runCollect,
          Effect.forkChild
        )
        for (let i = 0; i < 1_000 && watches() === 0; i++) yield* realSleep(2)
        assert.strictEqual(watches(), 1)
        yield* TestClock.adjust(4_999)
        yield* realSleep(20)
        assert.strictEqual(watches(), 1, "not resumed before 5 s")
        yield* TestClock.adjust(1)
        for (let i = 0; i < 1_000 && watches() === 1; i++) yield* realSleep(2)
        assert.strictEqual(watches(), 2, "resumed at 5 s")
        control.update({ apiVersion: "v1", kind: "ConfigMap", name: "w" }, { data: { v: "after" } })
        const events = [...(yield* Fiber.join(fiber))]
        assert.deepStrictEqual(events.map((e) => e._tag), ["Init", "InitApply", "InitDone", "Apply"])
        assert.strictEqual((events[3] as { object: { data?: Record<string, string> } }).object.data?.["v"], "after")
        counts.events += events.length
      })
    ))
})

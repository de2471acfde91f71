/**
 * The first examples of docs/testing.md ("A first test, and how time works"), as written there:
 * how time works in a test (`it.effect` runs on the TestClock, `it.live` on the real clock),
 * what `it.layer` shares, and a test of a `waitFor` that times out.
 */
import { assert, it } from "@effect/vitest"
import { Effect, Fiber, Option } from "effect"
import * as TestClock from "effect/testing/TestClock"
import { Condition, Kube, Pods, WaitTimeout } from "../../packages/effect-kube/src/index.js"
import { FakeCluster } from "@effect-kube/testing"

const pods = Kube.api(Pods, { namespace: "default" })
const smoke = { metadata: { name: "smoke" }, spec: { containers: [{ name: "c", image: "busybox" }] } }

it.layer(FakeCluster.layer())((it) => {
  it.effect("a pod that never succeeds times out: the test moves the TestClock", () =>
    Effect.gen(function*() {
      yield* pods.create(smoke)
      const waiting = yield* Effect.forkChild(pods.waitFor("smoke", Condition.podSucceeded, { timeout: "5 seconds" }))
      yield* TestClock.adjust("5 seconds") // it.effect runs on the TestClock: time moves only when the test says
      const error = yield* Effect.flip(Fiber.join(waiting))
      assert.instanceOf(error, WaitTimeout)
      assert.strictEqual(error.message, "timed out after 5s waiting for Pod default/smoke to be Succeeded")
    }))

  it.effect("the next test in the block sees the same fake: the pod is still there", () =>
    Effect.gen(function*() {
      const fake = yield* FakeCluster.FakeCluster
      assert.isTrue(Option.isSome(yield* pods.get("smoke")))
      fake.setPodPhase("default", "smoke", "Succeeded")
      const done = yield* pods.waitFor("smoke", Condition.podSucceeded, { timeout: "5 seconds" })
      assert.strictEqual(Option.getOrThrow(done).status?.phase, "Succeeded")
    }))
})

it.live("it.live runs on the real clock: a timeout passes as time does", () =>
  Effect.gen(function*() {
    yield* pods.create(smoke)
    const error = yield* Effect.flip(pods.waitFor("smoke", Condition.podSucceeded, { timeout: "200 millis" }))
    assert.instanceOf(error, WaitTimeout)
  }).pipe(Effect.provide(FakeCluster.layer())))

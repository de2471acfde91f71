/**
 * `Streams.runForEach` against the fake cluster's real HTTP path and plain streams: every
 * element in order, failures of the stream and of the callback, and the stream's finalizers.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import * as Kube from "../packages/effect-kube/src/Kube.js"
import * as RequestPolicy from "../packages/effect-kube/src/RequestPolicy.js"
import { Pods } from "../packages/effect-kube/src/resources/index.js"
import * as Streams from "../packages/effect-kube/src/Streams.js"
import { FakeCluster } from "@effect-kube/testing"
import { pod } from "./util/pods.js"
import { apiServerOnly } from "./util/apiServerOnly.js"

const noRetries = RequestPolicy.layer({ readRetries: Schedule.recurs(0), throttleRetries: 0, timeout: null })

describe("Streams.runForEach", () => {
  it.effect("hands on every element of every chunk, in order, as Stream.runForEach does", () =>
    Effect.gen(function*() {
      const stream = Stream.fromArrays([1, 2, 3], [], [4], Array.from({ length: 996 }, (_, i) => i + 5))
      const ours: Array<number> = []
      const theirs: Array<number> = []
      yield* Streams.runForEach(stream, (n) => Effect.sync(() => ours.push(n)))
      yield* stream.pipe(Stream.runForEach((n) => Effect.sync(() => theirs.push(n))))
      assert.strictEqual(ours.length, 1000)
      assert.deepStrictEqual(ours, theirs)
    }))

  it.effect("fails with the stream's failure after the elements before it, or with the callback's", () =>
    Effect.gen(function*() {
      const seen: Array<number> = []
      const failing = Stream.concat(Stream.make(1, 2), Stream.fail("broken" as const))
      const error = yield* Effect.flip(Streams.runForEach(failing, (n) => Effect.sync(() => seen.push(n))))
      assert.strictEqual(error, "broken")
      assert.deepStrictEqual(seen, [1, 2])

      const stopped = yield* Effect.flip(
        Stream.range(1, 10).pipe(Streams.runForEach((n) => n === 3 ? Effect.fail(`stopped at ${n}`) : Effect.void))
      )
      assert.strictEqual(stopped, "stopped at 3")
    }))

  it.effect("closes the stream's resources when it ends, fails or is interrupted", () =>
    Effect.gen(function*() {
      const closed: Array<string> = []
      const resource = (name: string, stream: Stream.Stream<number, string>) =>
        Stream.ensuring(stream, Effect.sync(() => closed.push(name)))
      yield* Streams.runForEach(resource("ended", Stream.make(1, 2)), () => Effect.void)
      yield* Effect.exit(Streams.runForEach(resource("failed", Stream.fail("no")), () => Effect.void))
      const fiber = yield* Effect.forkChild(
        Streams.runForEach(resource("interrupted", Stream.never), () => Effect.void)
      )
      yield* Effect.yieldNow
      yield* Fiber.interrupt(fiber)
      const exit = yield* Fiber.await(fiber)
      assert.isTrue(Exit.hasInterrupts(exit))
      assert.deepStrictEqual(closed, ["ended", "failed", "interrupted"])
    }))

  it.effect("runForEachWhile stops at the first false, closing the stream, as Stream.runForEachWhile does", () =>
    Effect.gen(function*() {
      let closed = 0
      const endless = Stream.ensuring(Stream.iterate(1, (n) => n + 1), Effect.sync(() => closed++))
      const ours: Array<number> = []
      const theirs: Array<number> = []
      yield* Streams.runForEachWhile(endless, (n) => Effect.sync(() => ours.push(n) < 1500))
      yield* endless.pipe(Stream.runForEachWhile((n) => Effect.sync(() => theirs.push(n) < 1500)))
      assert.strictEqual(ours.length, 1500)
      assert.deepStrictEqual(ours, theirs)
      assert.strictEqual(closed, 2)

      const failed = yield* Effect.flip(
        Streams.runForEachWhile(Stream.range(1, 10), (n) => n === 4 ? Effect.fail(`failed at ${n}`) : Effect.succeed(true))
      )
      assert.strictEqual(failed, "failed at 4")
      const all: Array<number> = []
      yield* Streams.runForEachWhile(Stream.range(1, 5), (n) => Effect.sync(() => all.push(n) > 0))
      assert.deepStrictEqual(all, [1, 2, 3, 4, 5])
    }))

  it.effect("consumes a watch of the fake cluster over its HTTP path, every event in order", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      const pods = Kube.api(Pods, { namespace: "default" })
      cluster.seed([pod("a"), pod("b")])
      const { metadata } = yield* pods.list()
      yield* pods.delete("a")
      yield* pods.create(pod("c"))
      yield* pods.delete("b")
      const names: Array<string> = []
      yield* pods.watch({ resourceVersion: metadata.resourceVersion }).pipe(
        Stream.take(5),
        Streams.runForEach((event) =>
          Effect.sync(() => names.push(`${event.type} ${event.type === "BOOKMARK" ? "" : event.object.metadata?.name}`))
        )
      )
      // a pod deleted without grace is marked (deletionTimestamp) and then removed, as by the pod registry
      assert.deepStrictEqual(names, ["MODIFIED a", "DELETED a", "ADDED c", "MODIFIED b", "DELETED b"])
    }).pipe(Effect.provide(Layer.merge(FakeCluster.layer(apiServerOnly), noRetries))))
})

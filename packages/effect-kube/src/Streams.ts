/**
 * Consuming the long streams of the client (watches, watchers, followed logs).
 *
 * `Streams.runForEach` and `Streams.runForEachWhile` are Effect's `Stream.runForEach` and
 * `Stream.runForEachWhile`. On Effect 3 they were workarounds: Effect 3's runners wrapped
 * each chunk's effect in a closure that V8 allocated in the old generation, where, once
 * dead, it kept the chunk and its elements alive until the next full collection, so every
 * watch event was promoted out of the young generation (~1.4x the CPU time per watch event,
 * ~1.7x per line of a followed log). Effect 4's runners promote nothing and are as fast as
 * the workaround was, so these names stay only for code written against them.
 *
 * @example
 * ```ts
 * import { Effect, Stream } from "effect"
 * import { Kube, Pods, Streams } from "effect-kube"
 * import { FakeCluster } from "@effect-kube/testing"
 *
 * const pods = Kube.api(Pods, { namespace: "default" })
 *
 * // a watch from no resourceVersion starts with an ADDED event for every pod there is
 * const program = Effect.gen(function*() {
 *   yield* pods.create({ metadata: { name: "web" }, spec: { containers: [{ name: "c", image: "nginx" }] } })
 *   yield* pods.watch().pipe(
 *     Stream.take(1),
 *     Streams.runForEach((event) => Effect.log(event.type))
 *   )
 * })
 *
 * Effect.runPromise(program.pipe(Effect.provide(FakeCluster.layer())))
 * ```
 * @since 0.1.0
 */
import type * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"

/**
 * Runs `f` on every element of the stream, in order, until the stream ends; fails with the
 * first failure of the stream or of `f`. Effect's `Stream.runForEach` (see the module's
 * comment).
 *
 * @example
 * ```ts
 * import { Effect, Stream } from "effect"
 * import { Streams } from "effect-kube"
 *
 * const sum = Effect.gen(function* () {
 *   let total = 0
 *   yield* Streams.runForEach(Stream.range(1, 4), (n) => Effect.sync(() => { total += n }))
 *   return total // 10
 * })
 * ```
 * @since 0.1.0
 */
export const runForEach: {
  <A, X, E2, R2>(
    f: (a: A) => Effect.Effect<X, E2, R2>
  ): <E, R>(self: Stream.Stream<A, E, R>) => Effect.Effect<void, E | E2, R | R2>
  <A, E, R, X, E2, R2>(
    self: Stream.Stream<A, E, R>,
    f: (a: A) => Effect.Effect<X, E2, R2>
  ): Effect.Effect<void, E | E2, R | R2>
} = Stream.runForEach

/**
 * Runs `f` on the elements of the stream, in order, until it returns `false` or the stream
 * ends; the stream is closed then. Effect's `Stream.runForEachWhile` (see the module's
 * comment).
 *
 * @example
 * ```ts
 * import { Effect, Stream } from "effect"
 * import { Streams } from "effect-kube"
 *
 * // the first three elements of an endless stream
 * const firstThree = Effect.gen(function* () {
 *   const seen: Array<number> = []
 *   yield* Streams.runForEachWhile(Stream.iterate(1, (n) => n + 1), (n) =>
 *     Effect.sync(() => seen.push(n) < 3))
 *   return seen // [1, 2, 3]
 * })
 * ```
 * @since 0.1.0
 */
export const runForEachWhile: {
  <A, E2, R2>(
    f: (a: A) => Effect.Effect<boolean, E2, R2>
  ): <E, R>(self: Stream.Stream<A, E, R>) => Effect.Effect<void, E | E2, R | R2>
  <A, E, R, E2, R2>(
    self: Stream.Stream<A, E, R>,
    f: (a: A) => Effect.Effect<boolean, E2, R2>
  ): Effect.Effect<void, E | E2, R | R2>
} = Stream.runForEachWhile

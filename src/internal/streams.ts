/**
 * `Stream.unwrap` and `Stream.unwrapScoped` for the long streams (watches, followed logs).
 * Effect's run the opened stream through `Stream.flatten`, whose channel executor hands on
 * every chunk of the inner stream once more (a child executor per flatten, per chunk);
 * these continue with the inner stream's channel itself (`Channel.unwrap`), so a chunk costs
 * nothing more for having been opened by an effect.
 */
import * as Channel from "effect/Channel"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"

/** The stream `open` makes, run as if it were that stream. */
export const unwrap = <A, E, R, E2, R2>(
  open: Effect.Effect<Stream.Stream<A, E, R>, E2, R2>
): Stream.Stream<A, E | E2, R | R2> => Stream.fromChannel(Channel.unwrap(Effect.map(open, Stream.toChannel)))

/** The stream `open` makes in a scope that is closed, with the stream's exit, when the stream ends. */
export const unwrapScoped = <A, E, R, E2, R2>(
  open: Effect.Effect<Stream.Stream<A, E, R>, E2, R2>
): Stream.Stream<A, E | E2, R | Exclude<R2, Scope.Scope>> =>
  Stream.fromChannel(
    Channel.acquireUseRelease(
      Scope.make(),
      (scope) => Channel.unwrap(Effect.map(Scope.extend(open, scope), Stream.toChannel)),
      (scope, exit) => Scope.close(scope, exit)
    )
  )

/**
 * Pulls the stream's chunks in the calling fiber (`Stream.toPull`), handing each to `onChunk`
 * with the effect that pulls the next: no chunk is wrapped in `Channel.fromEffect`, whose
 * closure V8 keeps in the old generation, and with it the chunk, until the next full collection.
 */
const pullChunks = <A, E, R, E2, R2>(
  self: Stream.Stream<A, E, R>,
  onChunk: (
    chunk: Chunk.Chunk<A>,
    next: Effect.Effect<void, E | E2, R | R2>
  ) => Effect.Effect<void, E | E2, R | R2>
): Effect.Effect<void, E | E2, R | R2> =>
  Effect.scoped(Effect.flatMap(Stream.toPull(self), (pull) => {
    const loop: Effect.Effect<void, E | E2, R | R2> = Effect.matchEffect(pull, {
      onFailure: Option.match({ onNone: () => Effect.void, onSome: Effect.fail }),
      onSuccess: (chunk) => onChunk(chunk, loop)
    })
    return loop
  }))

/** `Stream.runForEach` through `pullChunks`. */
export const runForEach = <A, E, R, X, E2, R2>(
  self: Stream.Stream<A, E, R>,
  f: (a: A) => Effect.Effect<X, E2, R2>
): Effect.Effect<void, E | E2, R | R2> =>
  pullChunks(self, (chunk, next) => Effect.flatMap(Effect.forEach(chunk, f, { discard: true }), () => next))

/** `Stream.runForEachWhile` through `pullChunks`: stops (closing the stream) at the first `false`. */
export const runForEachWhile = <A, E, R, E2, R2>(
  self: Stream.Stream<A, E, R>,
  f: (a: A) => Effect.Effect<boolean, E2, R2>
): Effect.Effect<void, E | E2, R | R2> =>
  pullChunks(self, (chunk, next) => {
    const items = Chunk.toReadonlyArray(chunk)
    const at = (i: number): Effect.Effect<void, E | E2, R | R2> =>
      i === items.length ? next : Effect.flatMap(f(items[i]!), (more) => more ? at(i + 1) : Effect.void)
    return at(0)
  })

/**
 * `Stream.unwrap` and `Stream.unwrapScoped` for the long streams (watches, followed logs).
 * Effect's run the opened stream through `Stream.flatten`, whose channel executor hands on
 * every chunk of the inner stream once more (a child executor per flatten, per chunk);
 * these continue with the inner stream's channel itself (`Channel.unwrap`), so a chunk costs
 * nothing more for having been opened by an effect.
 */
import * as Channel from "effect/Channel"
import * as Effect from "effect/Effect"
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

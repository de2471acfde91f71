/**
 * Objects that do not fit their Schema, under `invalid: "skip"`: dropped from a page or
 * a watch's events, each reported to the Warnings service (a `ValidationError` naming
 * the object), so one odd object neither fails a list nor stops a watcher.
 */
import type { NonEmptyReadonlyArray } from "effect/Array"
import * as Effect from "effect/Effect"
import type * as Pull from "effect/Pull"
import * as Stream from "effect/Stream"
import type * as Kube from "../../Kube.js"
import { isInvalid } from "./codec.js"
import { pathWithQuery, type Spec } from "../request/spec.js"
import * as warnings from "../client/warnings.js"

const report = (spec: Spec, item: { readonly error: Kube.Invalid["error"] }) =>
  warnings.reportInvalid(spec.method, pathWithQuery(spec), item.error)

/** Drops the objects that did not fit their Schema from a page, reporting each. */
export const skipInvalid = <A>(
  spec: Spec,
  result: Kube.ListResult<A>
): Effect.Effect<Kube.ListResult<A>, Kube.Error> => {
  const dropped = (result.items as ReadonlyArray<unknown>).filter(isInvalid)
  if (dropped.length === 0) return Effect.succeed(result)
  return Effect.as(
    Effect.forEach(dropped, (item) => report(spec, item), { discard: true }),
    { ...result, items: result.items.filter((item) => !isInvalid(item)) }
  )
}

/**
 * Each chunk of a stream through `f`, which answers the chunk itself (nothing to do: no
 * Effect is run), or an Effect of what is left of it; a chunk of which nothing is left is
 * not emitted (the next one is pulled).
 */
const throughChunks = <A, E, R, E2, R2>(
  self: Stream.Stream<A, E, R>,
  f: (chunk: NonEmptyReadonlyArray<A>) => NonEmptyReadonlyArray<A> | Effect.Effect<ReadonlyArray<A>, E2, R2>
): Stream.Stream<A, E | E2, R | R2> =>
  Stream.transformPull(self, (pull) => {
    const next: Pull.Pull<NonEmptyReadonlyArray<A>, E | E2, void, R2> = Effect.flatMap(pull, (chunk) => {
      const kept = f(chunk)
      if (!Effect.isEffect(kept)) return Effect.succeed(kept)
      return Effect.flatMap(kept, (rest) => rest.length > 0 ? Effect.succeed(rest as NonEmptyReadonlyArray<A>) : next)
    })
    return Effect.succeed(next)
  })

const isInvalidEvent = <A>(e: Kube.WatchEvent<A>): boolean => e.type !== "BOOKMARK" && isInvalid(e.object)

/** Drops the events whose object did not fit its Schema, reporting each. */
export const skipInvalidEvents = (spec: Spec) =>
<A, R>(
  events: Stream.Stream<Kube.WatchEvent<A>, Kube.Error, R>
): Stream.Stream<Kube.WatchEvent<A>, Kube.Error, R> =>
  throughChunks(events, (chunk) => {
    if (!chunk.some(isInvalidEvent)) return chunk
    const reports = Effect.forEach(
      chunk,
      (e) => e.type !== "BOOKMARK" && isInvalid(e.object) ? report(spec, e.object) : Effect.void,
      { discard: true }
    )
    return Effect.map(reports, () => chunk.filter((e) => !isInvalidEvent(e)))
  })

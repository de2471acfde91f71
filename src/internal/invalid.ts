/**
 * Objects that do not fit their Schema, under `invalid: "skip"`: dropped from a page or
 * a watch's events, each reported to the Warnings service (a `ValidationError` naming
 * the object), so one odd object neither fails a list nor stops a watcher.
 */
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import type * as Kube from "../Kube.js"
import { isInvalid } from "./codec.js"
import { pathWithQuery, type Spec } from "./request/spec.js"
import * as warnings from "./warnings.js"

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

/** Drops the events whose object did not fit its Schema, reporting each. */
export const skipInvalidEvents = (spec: Spec) =>
<A, R>(
  events: Stream.Stream<Kube.WatchEvent<A>, Kube.Error, R>
): Stream.Stream<Kube.WatchEvent<A>, Kube.Error, R> =>
  Stream.mapChunksEffect(events, (chunk) => {
    if (!Chunk.some(chunk, (e) => e.type !== "BOOKMARK" && isInvalid(e.object))) return Effect.succeed(chunk)
    return Effect.forEach(chunk, (e) =>
      e.type !== "BOOKMARK" && isInvalid(e.object)
        ? Effect.as(report(spec, e.object), [] as Array<Kube.WatchEvent<A>>)
        : Effect.succeed([e])).pipe(Effect.map((parts) => Chunk.unsafeFromArray(parts.flat())))
  })

/**
 * The work queue of a controller, with client-go's workqueue guarantees: a key is in
 * the ready queue at most once; a key being processed is not handed out again until it
 * is done, and triggers that arrive meanwhile (or while it waits) coalesce into one
 * more run; delayed adds keep only the earliest time per key.
 *
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as FiberMap from "effect/FiberMap"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"

/** @internal */
export interface WorkQueue {
  /** Adds a key now (synchronous: safe to call from a stream's chunk handler). */
  readonly add: (key: string) => void
  /** Adds a key after a delay, unless an earlier add is already pending for it. */
  readonly addAfter: (key: string, millis: number) => Effect.Effect<void>
  /** Takes the next ready key and marks it processing. */
  readonly take: Effect.Effect<string>
  /** Marks a key done: if it was triggered meanwhile, it is ready again. */
  readonly done: (key: string) => void
  /** Keys waiting (ready or triggered while processing). */
  readonly depth: () => number
  readonly processing: () => ReadonlySet<string>
}

/** @internal */
export const make: Effect.Effect<WorkQueue, never, Scope.Scope> = Effect.gen(function*() {
  const ready = yield* Queue.unbounded<string>()
  const dirty = new Set<string>()
  const processing = new Set<string>()
  const delayedAt = new Map<string, number>()
  const delayed = yield* FiberMap.make<string>()

  const add = (key: string): void => {
    if (dirty.has(key)) return
    dirty.add(key)
    if (!processing.has(key)) Queue.offerUnsafe(ready, key)
  }

  const addAfter = (key: string, millis: number): Effect.Effect<void> =>
    millis <= 0
      ? Effect.sync(() => add(key))
      : Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const at = now + millis
        const pending = delayedAt.get(key)
        if (pending !== undefined && pending <= at) return
        delayedAt.set(key, at)
        yield* FiberMap.run(
          delayed,
          key,
          Effect.sleep(millis).pipe(
            Effect.andThen(Effect.sync(() => {
              delayedAt.delete(key)
              add(key)
            }))
          )
        )
      })

  const take = Effect.map(Queue.take(ready), (key) => {
    dirty.delete(key)
    processing.add(key)
    return key
  })

  const done = (key: string): void => {
    processing.delete(key)
    if (dirty.has(key)) Queue.offerUnsafe(ready, key)
  }

  return { add, addAfter, take, done, depth: () => dirty.size, processing: () => processing }
})

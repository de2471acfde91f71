/**
 * Shared informers: one watcher per (resource, namespace, selectors) for the whole
 * application. The watcher's events are applied to one store and handed to every
 * subscriber's queue in the same synchronous step, so a subscriber that joins late is
 * given a replay of the store (or of the listing in progress) that lines up exactly with
 * the live events that follow it.
 *
 * @internal
 */
import * as Chunk from "effect/Chunk"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Take from "effect/Take"
import type * as Kube from "../../Kube.js"
import { KubeConfig } from "../../KubeConfig.js"
import type * as Watcher from "../../Watcher.js"

/** The namespace/name key of an object. @internal */
export const keyOf = (object: unknown): string => {
  const metadata = typeof object === "object" && object !== null
    ? (object as { readonly metadata?: { readonly name?: unknown; readonly namespace?: unknown } }).metadata
    : undefined
  const namespace = typeof metadata?.namespace === "string" ? metadata.namespace : ""
  const name = typeof metadata?.name === "string" ? metadata.name : ""
  return `${namespace}/${name}`
}

/** What a subscriber gets. @internal */
export interface Subscription<A> {
  readonly store: Watcher.Store<A, Kube.Error>
  readonly events: Stream.Stream<Watcher.Event<A>, Kube.Error>
}

/** The informer options that make up the sharing key. @internal */
export interface InformerOptions extends Kube.Selectors {
  readonly allNamespaces?: boolean | undefined
}

class Shared<A> implements Watcher.Store<A, Kube.Error> {
  current = new Map<string, A>()
  listing: Map<string, A> | undefined = undefined
  /** The watcher has started at least one listing. */
  started = false
  readonly subscribers = new Set<Queue.Queue<Take.Take<Watcher.Event<A>, Kube.Error>>>()
  fiber: Fiber.RuntimeFiber<void> | undefined = undefined
  failedWith: Kube.Error | undefined = undefined
  readonly stoppedDeferred = Deferred.unsafeMake<never, Kube.Error>(FiberId.none)

  constructor(readonly defaultNamespace: string | undefined, readonly readyDeferred: Deferred.Deferred<void, Kube.Error>) {}

  readonly get = (name: string, namespace?: string | undefined): Effect.Effect<Option.Option<A>> =>
    Effect.sync(() => Option.fromNullable(this.current.get(`${namespace ?? this.defaultNamespace ?? ""}/${name}`)))

  readonly list = (): Effect.Effect<ReadonlyArray<A>> => Effect.sync(() => Array.from(this.current.values()))

  get ready(): Effect.Effect<void, Kube.Error> {
    return Deferred.await(this.readyDeferred)
  }

  get failure(): Effect.Effect<Option.Option<Kube.Error>> {
    return Effect.sync(() => Option.fromNullable(this.failedWith))
  }

  get stopped(): Effect.Effect<never, Kube.Error> {
    return Deferred.await(this.stoppedDeferred)
  }

  /** Applies a chunk of events and hands it to every subscriber, in one synchronous step. */
  apply(events: Iterable<Watcher.Event<A>>): void {
    const taken: Array<Watcher.Event<A>> = []
    for (const event of events) {
      switch (event._tag) {
        case "Init":
          this.started = true
          this.listing = new Map()
          break
        case "InitApply":
          ;(this.listing ?? this.current).set(keyOf(event.object), event.object)
          break
        case "InitDone":
          if (this.listing !== undefined) this.current = this.listing
          this.listing = undefined
          Deferred.unsafeDone(this.readyDeferred, Exit.void)
          break
        case "Apply":
          this.current.set(keyOf(event.object), event.object)
          break
        case "Delete":
          this.current.delete(keyOf(event.object))
          break
      }
      taken.push(event)
    }
    if (taken.length === 0) return
    const take = Take.chunk(chunkOf(taken))
    for (const queue of this.subscribers) Queue.unsafeOffer(queue, take)
  }

  fail(error: Kube.Error): void {
    this.failedWith = error
    Deferred.unsafeDone(this.readyDeferred, Exit.fail(error))
    Deferred.unsafeDone(this.stoppedDeferred, Exit.fail(error))
    for (const queue of this.subscribers) Queue.unsafeOffer(queue, Take.fail(error))
  }

  /** What a new subscriber must see first so that the live events that follow make sense. */
  replay(): ReadonlyArray<Watcher.Event<A>> {
    if (!this.started) return []
    const objects = this.listing !== undefined ? this.listing : this.current
    const events: Array<Watcher.Event<A>> = [{ _tag: "Init" }]
    for (const object of objects.values()) events.push({ _tag: "InitApply", object })
    if (this.listing === undefined) events.push({ _tag: "InitDone" })
    return events
  }
}

const chunkOf = <A>(items: Array<A>): Chunk.Chunk<A> => Chunk.unsafeFromArray(items)

/** The informers of one application. @internal */
export interface Service {
  readonly subscribe: <A>(
    api: Kube.Api<A>,
    options?: InformerOptions
  ) => Effect.Effect<Subscription<A>, never, Scope.Scope>
  readonly active: () => number
}

/** Builds the service in a scope that outlives every subscription (a layer's). @internal */
export const make = (
  context: Context.Context<Kube.Requirements>,
  scope: Scope.Scope
): Service => {
  const config = Context.get(context, KubeConfig)
  const entries = new Map<string, Shared<unknown>>()

  const subscribe = <A>(api: Kube.Api<A>, options: InformerOptions = {}) => {
    const namespace = !api.resource.namespaced || options.allNamespaces === true
      ? undefined
      : api.namespace ?? config.namespace
    const key = JSON.stringify([
      api.resource.group,
      api.resource.version,
      api.resource.plural,
      namespace ?? "",
      options.labelSelector ?? "",
      options.fieldSelector ?? ""
    ])
    return Effect.acquireRelease(
      Effect.gen(function*() {
        const queue = yield* Queue.unbounded<Take.Take<Watcher.Event<A>, Kube.Error>>()
        let shared = entries.get(key) as Shared<A> | undefined
        if (shared === undefined) {
          const created = new Shared<A>(namespace, yield* Deferred.make<void, Kube.Error>())
          entries.set(key, created as Shared<unknown>)
          shared = created
          created.subscribers.add(queue)
          created.fiber = yield* api.watcher({ ...options, allNamespaces: options.allNamespaces }).pipe(
            Stream.runForEachChunk((chunk) => Effect.sync(() => created.apply(chunk))),
            Effect.catchAll((error) => Effect.sync(() => created.fail(error))),
            Effect.provide(context),
            // forked from an uninterruptible acquire: the watch itself must stay interruptible
            Effect.interruptible,
            Effect.forkIn(scope)
          )
        } else {
          const replay = shared.replay()
          if (replay.length > 0) Queue.unsafeOffer(queue, Take.chunk(chunkOf([...replay])))
          if (shared.failedWith !== undefined) Queue.unsafeOffer(queue, Take.fail(shared.failedWith))
          shared.subscribers.add(queue)
        }
        return { shared, queue }
      }),
      ({ queue, shared }) =>
        Effect.suspend(() => {
          shared.subscribers.delete(queue)
          if (shared.subscribers.size > 0) return Queue.shutdown(queue)
          entries.delete(key)
          const fiber = shared.fiber
          return Effect.zipRight(Queue.shutdown(queue), fiber === undefined ? Effect.void : Fiber.interrupt(fiber))
        })
    ).pipe(
      Effect.map(({ queue, shared }): Subscription<A> => ({
        store: shared,
        events: Stream.fromQueue(queue).pipe(Stream.flattenTake)
      }))
    )
  }

  return { subscribe, active: () => entries.size }
}

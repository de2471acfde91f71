/**
 * Shared informers: one watcher per (resource, namespace, selectors) for the whole
 * application. The watcher's events are applied to one store and handed to every
 * subscriber's queue in the same synchronous step, so a subscriber that joins late is
 * given a replay of the store (or of the listing in progress) that lines up exactly with
 * the live events that follow it.
 *
 * @internal
 */
import * as Arr from "effect/Array"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Take from "effect/Take"
import type * as Kube from "../../Kube.js"
import { KubeConfig } from "../../KubeConfig.js"
import type * as Watcher from "../../Watcher.js"
import { defectAsFailure, keyOf, makeStoreUnsafe, type StoreImpl, transformEvents, WatcherObserver } from "./reflector.js"

/** The namespace/name key of an object. @internal */
export { keyOf }

/** What a subscriber gets. @internal */
export interface Subscription<A> {
  readonly store: Watcher.Store<A, Kube.Error>
  readonly events: Stream.Stream<Watcher.Event<A>, Kube.Error>
}

/** The informer options that make up the sharing key. @internal */
export interface InformerOptions extends Kube.Selectors {
  readonly allNamespaces?: boolean | undefined
}

/** One shared watch: the store it keeps and the queues of its subscribers. */
class Shared<A> {
  readonly store: StoreImpl<A, Kube.Error>
  readonly subscribers = new Set<Queue.Queue<Take.Take<Watcher.Event<A>, Kube.Error>>>()
  fiber: Fiber.Fiber<void> | undefined = undefined

  constructor(defaultNamespace: string | undefined, indexers: Watcher.Indexers<A> | undefined) {
    this.store = makeStoreUnsafe(defaultNamespace, indexers)
  }

  /** Applies a batch of events and hands it (a Take) to every subscriber, in one synchronous step. */
  apply(events: Arr.NonEmptyReadonlyArray<Watcher.Event<A>>): void {
    for (const event of events) this.store.apply(event)
    for (const queue of this.subscribers) Queue.offerUnsafe(queue, events)
  }

  fail(error: Kube.Error): void {
    this.store.fail(error)
    const take = Exit.fail(error)
    for (const queue of this.subscribers) Queue.offerUnsafe(queue, take)
  }
}

/** The informers of one application. @internal */
export interface Service {
  readonly subscribe: <A>(
    api: Kube.Api<A>,
    options?: InformerOptions & Watcher.StoreOptions<A>
  ) => Effect.Effect<Subscription<A>, never, Scope.Scope>
  readonly active: () => number
}

/** A number per function, for sharing keys: the same function object, the same number. */
const identities = new WeakMap<object, number>()
let nextIdentity = 1
const identity = (fn: object): number => {
  let id = identities.get(fn)
  if (id === undefined) {
    id = nextIdentity++
    identities.set(fn, id)
  }
  return id
}

/** Builds the service in a scope that outlives every subscription (a layer's). @internal */
export const make = (
  context: Context.Context<Kube.Requirements>,
  scope: Scope.Scope
): Service => {
  const config = Context.get(context, KubeConfig)
  const entries = new Map<string, Shared<unknown>>()

  const subscribe = <A>(api: Kube.Api<A>, options: InformerOptions & Watcher.StoreOptions<A> = {}) => {
    const { indexers, transform, ...selectors } = options
    const namespace = !api.resource.namespaced || options.allNamespaces === true
      ? undefined
      : api.namespace ?? config.namespace
    const key = JSON.stringify([
      api.resource.group,
      api.resource.version,
      api.resource.plural,
      namespace ?? "",
      options.labelSelector ?? "",
      options.fieldSelector ?? "",
      // a transform or indexes make another store: shared only by the same functions
      transform === undefined ? 0 : identity(transform),
      Object.entries(indexers ?? {}).map(([name, fn]) => [name, identity(fn)]).sort()
    ])
    return Effect.acquireRelease(
      Effect.gen(function*() {
        const queue = yield* Queue.unbounded<Take.Take<Watcher.Event<A>, Kube.Error>>()
        let shared = entries.get(key) as Shared<A> | undefined
        if (shared === undefined) {
          const created = new Shared<A>(namespace, indexers)
          entries.set(key, created as Shared<unknown>)
          shared = created
          created.subscribers.add(queue)
          const { store } = created
          created.fiber = yield* api.watcher({ ...selectors, allNamespaces: options.allNamespaces }).pipe(
            (stream) => transformEvents(stream, transform),
            // a defect would leave every subscriber waiting: it is a failure they see
            Stream.catchDefect((defect) => Stream.fail(defectAsFailure(api.resource.kind)(defect))),
            Stream.runForEachArray((events) => Effect.sync(() => created.apply(events))),
            Effect.catch((error) => Effect.sync(() => created.fail(error))),
            // the watcher tells the store its backoffs (`stalled`)
            Effect.provideService(WatcherObserver, { stalled: store.stall, resumed: store.resume }),
            Effect.provide(context),
            // forked from an uninterruptible acquire: the watch itself must stay interruptible
            Effect.interruptible,
            Effect.forkIn(scope)
          )
        } else {
          const replay = shared.store.replay()
          if (Arr.isReadonlyArrayNonEmpty(replay)) Queue.offerUnsafe(queue, replay)
          const failed = shared.store.failedWith
          if (Option.isSome(failed)) Queue.offerUnsafe(queue, Exit.fail(failed.value))
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
          return Effect.andThen(Queue.shutdown(queue), fiber === undefined ? Effect.void : Fiber.interrupt(fiber))
        })
    ).pipe(
      Effect.map(({ queue, shared }): Subscription<A> => ({
        store: shared.store,
        events: Stream.fromQueue(queue).pipe(Stream.flattenTake)
      }))
    )
  }

  return { subscribe, active: () => entries.size }
}

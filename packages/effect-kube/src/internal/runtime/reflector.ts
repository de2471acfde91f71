/**
 * The reflector's store: a map of objects keyed by namespace and name, written by a
 * pass-through tap on a watcher stream. A listing (`Init` … `InitDone`) is collected
 * aside and swapped in at `InitDone`, so readers never see a half-listed state and
 * objects deleted while the watch was disconnected vanish with the swap. When the
 * stream fails, the store says so (`ready` before the first listing, `failure` and
 * `stopped` at any time), so a stale store is never taken for a live one; while the
 * watcher waits to retry, `stalled` says why and until when; when the stream ends in any
 * other way (a defect, an interruption, its end), `ready` and `stopped` end with it.
 */
import * as Arr from "effect/Array"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { IndexError, ValidationError } from "../../Errors.js"
import type * as Kube from "../../Kube.js"
import { KubeConfig } from "../../KubeConfig.js"
import type * as Watcher from "../../Watcher.js"

/**
 * Who hears of a watcher's waits: a watcher reads it from its context when it starts and
 * tells it each backoff (the failure, and when the next attempt is due) and each return to
 * work. `reflect` puts a store's here.
 */
export interface Observer {
  readonly stalled: (error: Kube.Error, until: Date) => void
  readonly resumed: () => void
}

/** The observer of the watchers started in this context, if any. */
export const WatcherObserver: Context.Reference<Observer | undefined> = Context.Reference<Observer | undefined>(
  "effect-kube/internal/WatcherObserver",
  { defaultValue: () => undefined }
)

/** The `namespace/name` key of an object in a store. */
export const keyOf = (object: unknown): string => {
  const metadata = typeof object === "object" && object !== null
    ? (object as { readonly metadata?: { readonly name?: unknown; readonly namespace?: unknown } }).metadata
    : undefined
  const namespace = typeof metadata?.namespace === "string" ? metadata.namespace : ""
  const name = typeof metadata?.name === "string" ? metadata.name : ""
  return `${namespace}/${name}`
}

/**
 * One index of a store: for each value its function gives, the keys of the objects that
 * gave it; for each object the values it gave (to take them out again); and the objects
 * the function threw on, with what it threw (lookups fail while there are any).
 */
class Index<A> {
  readonly byValue = new Map<string, Set<string>>()
  readonly valuesOf = new Map<string, ReadonlyArray<string>>()
  readonly failures = new Map<string, unknown>()

  constructor(readonly name: string, readonly fn: Watcher.IndexFunction<A>) {}

  remove(key: string): void {
    this.failures.delete(key)
    const values = this.valuesOf.get(key)
    if (values === undefined) return
    this.valuesOf.delete(key)
    for (const value of values) {
      const keys = this.byValue.get(value)
      if (keys === undefined) continue
      keys.delete(key)
      if (keys.size === 0) this.byValue.delete(value)
    }
  }

  add(key: string, object: A): void {
    let values: ReadonlyArray<string>
    try {
      values = this.fn(object)
    } catch (thrown) {
      // the object stays in the store; only this index cannot answer for it
      this.failures.set(key, thrown)
      return
    }
    const unique = values.length <= 1 ? values : [...new Set(values)]
    this.valuesOf.set(key, unique)
    for (const value of unique) {
      const keys = this.byValue.get(value)
      if (keys === undefined) this.byValue.set(value, new Set([key]))
      else keys.add(key)
    }
  }

  clear(): void {
    this.byValue.clear()
    this.valuesOf.clear()
    this.failures.clear()
  }

  check(): IndexError | undefined {
    if (this.failures.size === 0) return undefined
    const [object, cause] = this.failures.entries().next().value!
    return new IndexError({ index: this.name, reason: "Failed", object, cause })
  }
}

/** The store made by `makeStore`: readable by anyone, written by `reflect` (or an informer). */
export class StoreImpl<A, E> implements Watcher.WritableStore<A, E> {
  private current = new Map<string, A>()
  private readonly indexes: ReadonlyMap<string, Index<A>>
  private listing: Map<string, A> | undefined = undefined
  /** At least one listing has begun. */
  private started = false
  failedWith: Option.Option<E> = Option.none()
  private stalledWith: Option.Option<Watcher.Stalled> = Option.none()

  constructor(
    private readonly defaultNamespace: string | undefined,
    private readonly readyDeferred: Deferred.Deferred<void, E>,
    private readonly stoppedDeferred: Deferred.Deferred<never, E>,
    indexers: Watcher.Indexers<A> | undefined = undefined
  ) {
    this.indexes = new Map(Object.entries(indexers ?? {}).map(([name, fn]) => [name, new Index(name, fn)]))
  }

  readonly byIndex = (index: string, value: string): Effect.Effect<ReadonlyArray<A>, IndexError> =>
    Effect.suspend(() => {
      const found = this.indexes.get(index)
      if (found === undefined) return Effect.fail(new IndexError({ index, reason: "Unknown" }))
      const failed = found.check()
      if (failed !== undefined) return Effect.fail(failed)
      const keys = found.byValue.get(value)
      if (keys === undefined) return Effect.succeed([])
      const objects: Array<A> = []
      for (const key of keys) objects.push(this.current.get(key)!)
      return Effect.succeed(objects)
    })

  readonly indexValues = (index: string): Effect.Effect<ReadonlyArray<string>, IndexError> =>
    Effect.suspend(() => {
      const found = this.indexes.get(index)
      if (found === undefined) return Effect.fail(new IndexError({ index, reason: "Unknown" }))
      const failed = found.check()
      return failed !== undefined ? Effect.fail(failed) : Effect.succeed([...found.byValue.keys()])
    })

  /** Puts an object into `current` and its indexes. */
  private put(key: string, object: A): void {
    this.current.set(key, object)
    for (const index of this.indexes.values()) {
      index.remove(key)
      index.add(key, object)
    }
  }

  private remove(key: string): void {
    this.current.delete(key)
    for (const index of this.indexes.values()) index.remove(key)
  }

  readonly get = (name: string, namespace?: string | undefined): Effect.Effect<Option.Option<A>> =>
    Effect.sync(() => Option.fromNullishOr(this.current.get(`${namespace ?? this.defaultNamespace ?? ""}/${name}`)))

  readonly list = (): Effect.Effect<ReadonlyArray<A>> => Effect.sync(() => Array.from(this.current.values()))

  get ready(): Effect.Effect<void, E> {
    return Deferred.await(this.readyDeferred)
  }

  get failure(): Effect.Effect<Option.Option<E>> {
    return Effect.sync(() => this.failedWith)
  }

  get stopped(): Effect.Effect<never, E> {
    return Deferred.await(this.stoppedDeferred)
  }

  get stalled(): Effect.Effect<Option.Option<Watcher.Stalled>> {
    return Effect.sync(() => this.stalledWith)
  }

  readonly stall = (error: Kube.Error, until: Date): void => {
    this.stalledWith = Option.some({ error, until })
  }

  readonly resume = (): void => {
    this.stalledWith = Option.none()
  }

  readonly apply = (event: Watcher.Event<A>): void => {
    switch (event._tag) {
      case "Init":
        this.started = true
        this.listing = new Map()
        return
      case "InitApply":
        if (this.listing !== undefined) this.listing.set(keyOf(event.object), event.object)
        else this.put(keyOf(event.object), event.object)
        return
      case "InitDone":
        if (this.listing !== undefined) {
          this.current = this.listing
          // the indexes follow the swap: built again from the listing
          for (const index of this.indexes.values()) {
            index.clear()
            for (const [key, object] of this.current) index.add(key, object)
          }
        }
        this.listing = undefined
        Deferred.doneUnsafe(this.readyDeferred, Exit.void)
        return
      case "Apply":
        this.put(keyOf(event.object), event.object)
        return
      case "Delete":
        this.remove(keyOf(event.object))
        return
    }
  }

  readonly fail = (error: E): void => {
    if (Option.isNone(this.failedWith)) this.failedWith = Option.some(error)
    this.stalledWith = Option.none()
    Deferred.doneUnsafe(this.readyDeferred, Exit.fail(error))
    Deferred.doneUnsafe(this.stoppedDeferred, Exit.fail(error))
  }

  /**
   * The stream that writes the store ended: with a failure (as `fail`), or else a defect,
   * an interruption or its end, which `ready` (if still waiting) and `stopped` end with.
   */
  readonly end = (cause: Cause.Cause<E>): void => {
    const failure = Cause.findErrorOption(cause)
    if (Option.isSome(failure)) return this.fail(failure.value)
    this.stalledWith = Option.none()
    const ended = cause.reasons.length === 0 ? Cause.die(new Error("the stream that wrote the store ended")) : cause
    Deferred.doneUnsafe(this.readyDeferred, Exit.failCause(ended))
    Deferred.doneUnsafe(this.stoppedDeferred, Exit.failCause(ended))
  }

  /**
   * The events that bring a newcomer to where this store stands: the listing so far (or the
   * current objects and `InitDone`), so that the live events after them make sense.
   */
  readonly replay = (): ReadonlyArray<Watcher.Event<A>> => {
    if (!this.started) return []
    const objects = this.listing !== undefined ? this.listing : this.current
    const events: Array<Watcher.Event<A>> = [{ _tag: "Init" }]
    for (const object of objects.values()) events.push({ _tag: "InitApply", object })
    if (this.listing === undefined) events.push({ _tag: "InitDone" })
    return events
  }
}

/** A new, empty store, made outside an Effect (an informer's, created when its first subscriber comes). */
export const makeStoreUnsafe = <A, E>(
  namespace: string | undefined,
  indexers?: Watcher.Indexers<A> | undefined
): StoreImpl<A, E> => new StoreImpl<A, E>(namespace, Deferred.makeUnsafe(), Deferred.makeUnsafe(), indexers)

/** A new, empty store. */
export const makeStore = <A, E = never>(
  options?: { readonly namespace?: string | undefined; readonly indexers?: Watcher.Indexers<A> | undefined }
): Effect.Effect<Watcher.WritableStore<A, E>> =>
  Effect.zipWith(
    Deferred.make<void, E>(),
    Deferred.make<never, E>(),
    (ready, stopped) => new StoreImpl<A, E>(options?.namespace, ready, stopped, options?.indexers)
  )

/**
 * Each object of a watcher's events through `transform` (client-go's `SetTransform`), so
 * what is stored and passed on is what the transform made of it.
 */
export const transformEvents = <A, E, R>(
  stream: Stream.Stream<Watcher.Event<A>, E, R>,
  transform: ((object: A) => A) | undefined
): Stream.Stream<Watcher.Event<A>, E, R> =>
  transform === undefined ? stream : Stream.mapArray(stream, (events) =>
    Arr.map(events, (event): Watcher.Event<A> =>
      "object" in event ? { ...event, object: transform(event.object) } as Watcher.Event<A> : event
    ))

/** Drops `metadata.managedFields` (a copy of the object; the input is left as it is). */
export const dropManagedFields = <A>(object: A): A => {
  const metadata = typeof object === "object" && object !== null
    ? (object as { readonly metadata?: { readonly managedFields?: unknown } }).metadata
    : undefined
  if (metadata === undefined || metadata === null || !("managedFields" in metadata)) return object
  const { managedFields: _, ...rest } = metadata as Record<string, unknown>
  return { ...object, metadata: rest } as A
}

const metadataOf = (object: unknown) =>
  typeof object === "object" && object !== null
    ? (object as {
      readonly metadata?: {
        readonly namespace?: unknown
        readonly labels?: Readonly<Record<string, string>>
        readonly ownerReferences?: ReadonlyArray<{ readonly uid?: unknown }>
      }
    }).metadata
    : undefined

/** The object's namespace (`""` for a cluster-scoped one), as client-go's `MetaNamespaceIndexFunc`. */
export const indexByNamespace = (object: unknown): ReadonlyArray<string> => {
  const namespace = metadataOf(object)?.namespace
  return [typeof namespace === "string" ? namespace : ""]
}

/** The UIDs of the object's owners (`metadata.ownerReferences`). */
export const indexByOwner = (object: unknown): ReadonlyArray<string> =>
  (metadataOf(object)?.ownerReferences ?? []).flatMap((owner) => typeof owner.uid === "string" ? [owner.uid] : [])

/** The value of one label, for objects that have it. */
export const indexByLabel = (label: string) => (object: unknown): ReadonlyArray<string> => {
  const value = metadataOf(object)?.labels?.[label]
  return value === undefined ? [] : [value]
}

/**
 * The tap: every event is written into the store before it is passed on; how the stream
 * ends is recorded (a failure with `fail`, anything else with `end` when the store has
 * it), and a watcher in the stream tells the store its waits (`stall`, `resume`).
 */
export const reflect = <A, E, R>(
  stream: Stream.Stream<Watcher.Event<A>, E, R>,
  store: Watcher.Writer<A, E>
): Stream.Stream<Watcher.Event<A>, E, R> => {
  const observed = store.stall !== undefined && store.resume !== undefined
    ? Stream.provideService(stream, WatcherObserver, {
      stalled: (error, until) => store.stall?.(error, until),
      resumed: () => store.resume?.()
    })
    : stream
  return observed.pipe(
    Stream.mapArray((events) => {
      for (const event of events) store.apply(event)
      return events
    }),
    Stream.onExit((exit) =>
      Effect.sync(() => {
        const cause = Exit.isSuccess(exit) ? Cause.empty : exit.cause
        if (store.end !== undefined) return store.end(cause)
        const failure = Cause.findErrorOption(cause)
        if (Option.isSome(failure)) store.fail(failure.value)
      })
    )
  )
}

/**
 * A defect of a watcher (a bug: no answer of a server should cause one) as the failure a
 * store and its readers can see, instead of a fiber that died without a word. Its message
 * names the defect's class only; the defect is its cause.
 */
export const defectAsFailure = (kind: string) => (defect: unknown): ValidationError =>
  new ValidationError({
    subject: `watcher of ${kind}`,
    detail: `stopped on a defect (${defect instanceof Error ? defect.name : typeof defect}); it is the cause`,
    cause: defect
  })

/** A store kept up to date by a watcher running in the background of the scope. */
export const reflector = <A>(
  api: Pick<Kube.Operations<A>, "namespace" | "resource" | "watcher">,
  options: Watcher.ReflectorOptions<A>
): Effect.Effect<Watcher.Store<A, Kube.Error>, never, Kube.Requirements | Scope.Scope> =>
  Effect.gen(function*() {
    const namespace = api.namespace !== undefined
      ? api.namespace
      : api.resource.namespaced && options.allNamespaces !== true
      ? (yield* KubeConfig).namespace
      : undefined
    const { indexers, transform, ...rest } = options
    const store = yield* makeStore<A, Kube.Error>({ namespace, indexers })
    // a store holds objects of the kind: one that does not fit is left out and reported, never stored raw
    const watcherOptions = rest.invalid === "raw" ? { ...rest, invalid: "skip" as const } : rest
    yield* api.watcher(watcherOptions).pipe(
      (stream) => transformEvents(stream, transform),
      Stream.catchDefect((defect) => Stream.fail(defectAsFailure(api.resource.kind)(defect))),
      (stream) => reflect(stream, store),
      Stream.runDrain,
      Effect.forkScoped
    )
    return store
  })

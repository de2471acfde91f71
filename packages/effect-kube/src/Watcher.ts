/**
 * A resilient watch: an endless stream of the changes to a set of objects that never
 * loses one. It lists, then watches from the list's resourceVersion; it resumes after
 * a watch ends, re-lists after 410 Gone, and backs off on transport errors, 5xx and 429.
 *
 * A reflector keeps a `Store` equal to the cluster's state by writing every event of a
 * watcher into it.
 *
 * @example
 * ```ts
 * import { Effect, Stream } from "effect"
 * import { Kube, Pods, Watcher } from "effect-kube"
 *
 * const pods = Kube.api(Pods, { namespace: "default" })
 *
 * // every change, for ever
 * const changes = pods.watcher({ labelSelector: "app=web" }).pipe(
 *   Stream.runForEach((event) => Effect.log(event._tag))
 * )
 *
 * // a cache of the pods, kept up to date while the scope is open
 * const cached = Effect.scoped(Effect.gen(function* () {
 *   const store = yield* Watcher.reflector(pods, { labelSelector: "app=web" })
 *   yield* store.ready
 *   return yield* store.list()
 * }))
 * ```
 * @since 0.1.0
 */
import type * as Cause from "effect/Cause"
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import { dual } from "effect/Function"
import type * as Option from "effect/Option"
import type * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import type * as Stream from "effect/Stream"
import * as reflector_ from "./internal/runtime/reflector.js"
import * as internal from "./internal/runtime/watcher.js"
import type { IndexError } from "./Errors.js"
import type * as Kube from "./Kube.js"

/**
 * What the watcher emits. `Init` … `InitApply`* … `InitDone` frames a full listing
 * (at the start and after every re-list); `Apply` and `Delete` are live changes.
 *
 * @since 0.1.0
 * @category models
 */
export type Event<A> =
  | { readonly _tag: "Init" }
  | { readonly _tag: "InitApply"; readonly object: A }
  | { readonly _tag: "InitDone" }
  | { readonly _tag: "Apply"; readonly object: A }
  | { readonly _tag: "Delete"; readonly object: A }

/**
 * Options of a watcher.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options extends Kube.Selectors {
  readonly allNamespaces?: boolean | undefined
  /** Objects per page of the initial list (default 500). */
  readonly pageSize?: number | undefined
  /** The server-side timeout of each watch request (default 290 s). */
  readonly timeoutSeconds?: number | undefined
  /**
   * How long a watch may stay without receiving an event before it is taken for a
   * connection that died silently and resumed (default `timeoutSeconds` + 30 s). Bytes
   * that make no event (a server trickling a byte a second) do not count. Whatever comes,
   * a watch is resumed once it has been open `timeoutSeconds` + 30 s.
   */
  readonly idleTimeout?: Duration.Input | undefined
  /**
   * The delays between retries (default `Watcher.defaultBackoff`: 800 ms doubling to
   * 30 s, with jitter). Its input is the failure; when it ends, the watcher fails with
   * that failure. It starts again from its first delay after two minutes without one.
   */
  readonly backoff?: Schedule.Schedule<unknown, unknown> | undefined
  /**
   * Which failures end the stream instead of being retried (default
   * `Watcher.defaultFailOn`). 410 Gone is never a failure: it starts a new listing.
   */
  readonly failOn?: ((error: Kube.Error) => boolean) | undefined
  /**
   * An object that does not fit its Schema: `"fail"` (default) ends the watcher with a
   * ValidationError; `"skip"` leaves it out and reports it to the `Warnings` service;
   * `"raw"` delivers it as a `Kube.Invalid` (the raw JSON and the error). The watcher
   * keeps running with `"skip"` and `"raw"`. A reflector stores valid objects only
   * (`"raw"` acts as `"skip"` there).
   */
  readonly invalid?: Kube.InvalidOption | undefined
  /**
   * How a listing is made (the first, and every one after a 410 Gone). `"auto"` (default):
   * one watch with `sendInitialEvents=true` (KEP-3157, WatchList; on by default in
   * kube-apiserver v1.34+), whose initial events end at a bookmark, falling back to
   * list-then-watch as client-go's reflector does: for good once the server refuses the
   * watch-list's query (400, 405, 406, 415, 422 as a server without the feature answers,
   * or 501), and for one listing when a watch-list ends before its initial events do.
   * Other failures of a watch-list are what they would be on a list (a 403 is `failOn`'s). `true`: watch-lists only (a refusal is a failure like any other). `false`:
   * list the pages (`pageSize`), then watch. The events are the same in every mode.
   *
   * @example
   * ```ts
   * import { Effect, Stream } from "effect"
   * import { ConfigMaps, Kube } from "effect-kube"
   * import { FakeCluster } from "@effect-kube/testing"
   *
   * const program = Kube.api(ConfigMaps, { namespace: "default" }).watcher({ watchList: true }).pipe(
   *   Stream.takeUntil((event) => event._tag === "InitDone"),
   *   Stream.map((event) => event._tag),
   *   Stream.runCollect
   * )
   *
   * // ["Init", "InitApply", "InitDone"]: the listing came as one watch with initial events
   * Effect.runPromise(program.pipe(Effect.provide(FakeCluster.layer({
   *   objects: [{ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "settings", namespace: "default" } }]
   * }))))
   * ```
   */
  readonly watchList?: "auto" | boolean | undefined
}

/**
 * The default backoff between retries: 800 ms doubling to 30 s, with jitter, as
 * kube-rs and client-go use.
 *
 * @since 0.1.0
 * @category constructors
 */
export const defaultBackoff: Schedule.Schedule<unknown, unknown> = internal.defaultBackoff

/**
 * The default of `failOn`: failures that retrying cannot fix. Bad input, an object that
 * does not fit its Schema, credentials that cannot be obtained, an invalid URL, and
 * answers 4xx other than 408, 410 and 429 (so 401, 403 and 404 of the collection).
 * Transport failures, 5xx, 408 and 429 are retried.
 *
 * @example
 * ```ts
 * import { ApiError, Kube, Pods, Watcher } from "effect-kube"
 *
 * const pods = Kube.api(Pods, { namespace: "default" })
 * // keep waiting while RBAC for the watcher is being set up
 * const events = pods.watcher({ failOn: (e) => Watcher.defaultFailOn(e) && !ApiError.isForbidden(e) })
 * ```
 * @since 0.1.0
 * @category predicates
 */
export const defaultFailOn: (error: Kube.Error) => boolean = internal.defaultFailOn

/**
 * A watcher waiting to try again: the failure it retries (a 5xx, a 429, a lost
 * connection, a re-list after 410 that came too soon after another) and when the next
 * attempt is due (the backoff, or what `Retry-After` asked, at most `RequestPolicy`'s
 * `maxRetryAfter`).
 *
 * @since 0.2.0
 * @category models
 */
export interface Stalled {
  readonly error: Kube.Error
  readonly until: Date
}

/**
 * A read-only view of the objects a watcher has seen, keyed by namespace and name.
 * `ready` waits until the first complete listing is in (and fails if the stream
 * failed before that). Once the stream that writes it has failed, the store keeps its
 * last state and says so: `failure` is the failure, `stopped` fails with it. While the
 * watcher backs off, `stalled` says why and until when. A stream that ends otherwise (a
 * defect, an interruption, its end) ends `ready` (if it still waits) and `stopped` too.
 *
 * @since 0.1.0
 * @category models
 */
export interface Store<A, E = never> {
  /** The object with this name, in `namespace` or else the store's namespace (none for cluster-scoped kinds). */
  readonly get: (name: string, namespace?: string | undefined) => Effect.Effect<Option.Option<A>>
  /** Every object, in no particular order. */
  readonly list: () => Effect.Effect<ReadonlyArray<A>>
  /** Completes once the first `InitDone` has been written. */
  readonly ready: Effect.Effect<void, E>
  /** The failure that stopped the updates, `None` while they go on: a `Some` means the store is stale. */
  readonly failure: Effect.Effect<Option.Option<E>>
  /**
   * Fails with the failure that stopped the updates, when it comes (and never succeeds):
   * race work against it to stop with the store rather than read a stale one.
   */
  readonly stopped: Effect.Effect<never, E>
  /**
   * `Some` while the watcher waits to retry after a failure (the store may lag behind the
   * cluster until then), `None` once a request has worked again (and after the end).
   */
  readonly stalled: Effect.Effect<Option.Option<Stalled>>
  /**
   * The objects an index (`ReflectorOptions.indexers`) files under `value`, in no
   * particular order. Fails with an `IndexError` when the store has no such index, or
   * while its function has thrown on an object the store holds.
   */
  readonly byIndex: (index: string, value: string) => Effect.Effect<ReadonlyArray<A>, IndexError>
  /** Every value an index files objects under (fails as `byIndex` does). */
  readonly indexValues: (index: string) => Effect.Effect<ReadonlyArray<string>, IndexError>
}

/**
 * An index function (client-go's `IndexFunc`): the values an object is filed under in
 * one index of a store (none, one or several). It should be pure and quick: it runs on
 * every change of every object. One that throws does not stop the store: lookups in its
 * index fail with an `IndexError` naming it and the object.
 *
 * @since 0.2.0
 * @category models
 */
export type IndexFunction<A> = (object: A) => ReadonlyArray<string>

/**
 * Named index functions (client-go's `Indexers`), looked up with `Store.byIndex`.
 *
 * @since 0.2.0
 * @category models
 */
export type Indexers<A> = Readonly<Record<string, IndexFunction<A>>>

/**
 * What a store keeps, beside the objects: `transform` makes each object what is stored
 * (and passed on), as client-go's `SetTransform` (`Watcher.dropManagedFields` drops the
 * field that makes up much of a typical object); `indexers` file the objects under the
 * values of index functions, for `byIndex`.
 *
 * @since 0.2.0
 * @category models
 */
export interface StoreOptions<A> {
  /**
   * Applied to every object of every event before it is stored. It must not change the
   * name or namespace. One that throws stops the store as a defect of its watcher would
   * (a `ValidationError` whose cause is what it threw).
   */
  readonly transform?: ((object: A) => A) | undefined
  readonly indexers?: Indexers<A> | undefined
}

/**
 * The options of a reflector: its watcher's, and what its store keeps.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Kube, type Pod, Pods, Watcher } from "effect-kube"
 * import { FakeCluster } from "@effect-kube/testing"
 *
 * const pods = Kube.api(Pods, { namespace: "default" })
 * const byNode = (pod: Pod) => (pod.spec?.nodeName !== undefined ? [pod.spec.nodeName] : [])
 *
 * const program = Effect.scoped(Effect.gen(function* () {
 *   yield* pods.create({ metadata: { name: "web" }, spec: { nodeName: "node-1", containers: [{ name: "c", image: "nginx" }] } })
 *   const store = yield* pods.reflector({
 *     transform: Watcher.dropManagedFields,
 *     indexers: { byNode, byNamespace: Watcher.indexByNamespace }
 *   })
 *   yield* store.ready
 *   const onNode = yield* store.byIndex("byNode", "node-1")
 *   assert.deepStrictEqual(onNode.map((pod) => pod.metadata?.name), ["web"])
 *   assert.strictEqual(onNode[0]!.metadata?.managedFields, undefined)
 * }))
 *
 * Effect.runPromise(program.pipe(Effect.provide(FakeCluster.layer())))
 * ```
 * @since 0.2.0
 * @category models
 */
export interface ReflectorOptions<A> extends Options, StoreOptions<A> {}

/**
 * A transform for `StoreOptions.transform`: the object without `metadata.managedFields`
 * (server-side apply's bookkeeping, often the largest part of a small object), which a
 * cache rarely needs. The object given is not changed.
 *
 * @since 0.2.0
 * @category combinators
 */
export const dropManagedFields: <A>(object: A) => A = reflector_.dropManagedFields

/**
 * An index function filing each object under its namespace (`""` when cluster-scoped),
 * as client-go's `MetaNamespaceIndexFunc`.
 *
 * @since 0.2.0
 * @category constructors
 */
export const indexByNamespace: (object: unknown) => ReadonlyArray<string> = reflector_.indexByNamespace

/**
 * An index function filing each object under the UIDs of its owners (`ownerReferences`):
 * a ReplicaSet's Pods by `byIndex("byOwner", replicaSet.metadata.uid)`.
 *
 * @since 0.2.0
 * @category constructors
 */
export const indexByOwner: (object: unknown) => ReadonlyArray<string> = reflector_.indexByOwner

/**
 * An index function filing each object under the value of one label (objects without it
 * under none).
 *
 * @since 0.2.0
 * @category constructors
 */
export const indexByLabel: (label: string) => (object: unknown) => ReadonlyArray<string> = reflector_.indexByLabel

/**
 * The writing side of a store: what `reflect` needs. Any value with `apply` and `fail`
 * can be written by `reflect`; the other methods, when there, hear more.
 *
 * @since 0.1.0
 * @category models
 */
export interface Writer<A, E> {
  /** Writes one event. */
  readonly apply: (event: Event<A>) => void
  /** Records the failure that ended the stream. */
  readonly fail: (error: E) => void
  /** Records that the stream ended, however it did (an empty cause: it came to its end). Called instead of `fail`. */
  readonly end?: ((cause: Cause.Cause<E>) => void) | undefined
  /** A watcher in the stream waits to retry after `error`, until `until`. */
  readonly stall?: ((error: Kube.Error, until: Date) => void) | undefined
  /** The watcher works again after a stall. */
  readonly resume?: (() => void) | undefined
}

/**
 * A store with its writing side, as `makeStore` makes it: give it to `reflect`, and
 * read it (or hand it out as a `Store`).
 *
 * @since 0.1.0
 * @category models
 */
export interface WritableStore<A, E = never> extends Store<A, E>, Writer<A, E> {}

/**
 * An empty store to pass to `reflect`. `namespace` is what `get` looks in when it is
 * given none; `indexers` are its indexes (see `StoreOptions`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeStore: <A, E = never>(
  options?: { readonly namespace?: string | undefined; readonly indexers?: Indexers<A> | undefined }
) => Effect.Effect<WritableStore<A, E>> = reflector_.makeStore

/**
 * Writes every event of a watcher stream into a store (any `Writer`, as the one
 * `makeStore` makes) and passes it on. A listing replaces the store's contents at its
 * `InitDone`, so objects deleted while the watch was disconnected vanish from the
 * store. A failure of the stream is recorded in the store (`failure`, `stopped`), and so
 * are the backoffs of the watcher in it (`stalled`).
 *
 * @example
 * ```ts
 * import { Effect, Stream } from "effect"
 * import { Kube, type Pod, Pods, Watcher } from "effect-kube"
 *
 * declare const handle: (event: Watcher.Event<Pod>) => Effect.Effect<void>
 * const pods = Kube.api(Pods, { namespace: "default" })
 *
 * const program = Effect.scoped(Effect.gen(function* () {
 *   const store = yield* Watcher.makeStore<Pod, Kube.Error>({ namespace: "default" })
 *   yield* pods.watcher().pipe(Watcher.reflect(store), Stream.runForEach(handle), Effect.forkScoped)
 *   yield* store.ready
 * }))
 * ```
 * @since 0.1.0
 * @category combinators
 */
export const reflect: {
  <A, E>(store: Writer<A, E>): <R>(stream: Stream.Stream<Event<A>, E, R>) => Stream.Stream<Event<A>, E, R>
  <A, E, R>(stream: Stream.Stream<Event<A>, E, R>, store: Writer<A, E>): Stream.Stream<Event<A>, E, R>
} = dual(2, reflector_.reflect)

/**
 * A store kept equal to the cluster's state by a watcher that runs for as long as the
 * scope is open. `get` without a namespace looks in the api's namespace. The watcher
 * retries what `failOn` allows (while it waits, `stalled` says so); a failure it does not
 * retry fails `ready` when it comes before the first listing, and otherwise stops the
 * updates: the store keeps its last state, `failure` returns the failure and `stopped`
 * fails with it. A defect of the watcher is such a failure too (a `ValidationError` whose
 * cause is the defect), never a silent stop. Use `reflect` on your own stream to handle
 * such failures yourself.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Kube, type Pod, Pods, Watcher } from "effect-kube"
 *
 * declare const reconcileForever: (store: Watcher.Store<Pod, Kube.Error>) => Effect.Effect<never>
 * const pods = Kube.api(Pods, { namespace: "default" })
 *
 * const program = Effect.scoped(Effect.gen(function* () {
 *   const store = yield* Watcher.reflector(pods)
 *   yield* store.ready
 *   const web = yield* store.get("web") // Option<Pod>
 *   // a controller loop that ends with the store's failure instead of reading a stale store
 *   yield* Effect.raceFirst(reconcileForever(store), store.stopped)
 * }))
 * ```
 * @since 0.1.0
 * @category constructors
 */
export const reflector: <A>(
  api: Kube.Api<A>,
  options?: ReflectorOptions<A>
) => Effect.Effect<Store<A, Kube.Error>, never, Kube.Requirements | Scope.Scope> = (api, options) =>
  reflector_.reflector(api, options ?? {})

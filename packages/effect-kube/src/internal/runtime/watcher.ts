/**
 * The resilient watcher: a small explicit state machine unfolded into a stream, as
 * kube-rs's watcher is. Each step runs one request (a page of the initial list, or one
 * watch) and decides the next state from how it ended:
 *
 * - `Empty`: list the first page, emit `Init` and its objects; or, where the server
 *   supports it (KEP-3157, WatchList), one watch with `sendInitialEvents=true` whose
 *   initial events are the listing, up to the bookmark annotated
 *   `k8s.io/initial-events-end`, and whose later events are the live ones;
 * - `Listing`: list the next page (continue token), emit its objects; after the last
 *   page emit `InitDone` and watch from the list's resourceVersion;
 * - `Watching`: watch from a resourceVersion; when the watch ends, watch again from the
 *   last one seen (events and bookmarks advance it); on 410 Gone list again;
 * - `Backoff`: after a retryable failure, wait (the backoff schedule, and at least what
 *   Retry-After asked for, at most `RequestPolicy`'s `maxRetryAfter`), then go on where
 *   the failure happened.
 *
 * As client-go's reflector, it never hammers the API server: a list is costly, so a
 * re-list after 410 goes at once only when nothing went wrong in the last two minutes, and
 * otherwise waits on the backoff; so does a watch that ended within a second without a
 * change (a bookmark alone, or nothing at all: a watch that ends without a byte always
 * waits). Every wait is told to the `WatcherObserver` in context (a reflector's store,
 * which says it is `stalled`, why, and until when).
 *
 * A failure the options call fatal ends the stream with that failure.
 *
 * The WatchList fallback follows client-go's reflector: in `"auto"` mode a server that
 * refuses the watch-list's query (400, 405, 406, 415, 422 such as a server with the
 * WatchList gate off or older than v1.27 answers, or 501) is listed from then on; one whose
 * watch-list ends before the initial-events-end bookmark gets a list for that listing, and
 * a watch-list again at the next. Other failures are what they would be on a list: a 403
 * is `failOn`'s to judge, a 5xx is retried.
 */
import * as Arr from "effect/Array"
import * as Channel from "effect/Channel"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Pull from "effect/Pull"
import * as Result from "effect/Result"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import { ApiError } from "../../Errors.js"
import type * as Kube from "../../Kube.js"
import { type Policy, RequestPolicy } from "../../RequestPolicy.js"
import type * as Watcher from "../../Watcher.js"
import { WatcherObserver } from "./reflector.js"
import * as request from "../request/verbs.js"
import { checkPositive, resolveNamespace, type Target } from "../request/inputChecks.js"
import { defaultIdleTimeout, listPage, watchSpecStream } from "../api/watch.js"

/** 800 ms doubling to 30 s, jittered (so that many clients do not reconnect in step). */
export const defaultBackoff: Schedule.Schedule<unknown, unknown> = Schedule.jittered(
  Schedule.min([Schedule.exponential("800 millis", 2), Schedule.spaced("30 seconds")])
)

/** After this long without a failure, the backoff starts again from its first delay (as kube-rs and client-go do). */
const backoffResetAfter = Duration.toMillis(Duration.minutes(2))

/** A watch that ends sooner than this without a change did not work (client-go's reflector: a "very short watch"). */
const shortWatchMillis = 1000

/** The longest a server's Retry-After (or an ERROR event's `retryAfterSeconds`) makes the watcher wait. */
const retryAfterMillis = (error: Kube.Error, policy: Policy): number =>
  error._tag === "ApiError" && error.retryAfter !== undefined
    ? Math.min(error.retryAfter * 1000, Duration.toMillis(policy.maxRetryAfter))
    : 0

/**
 * Failures that retrying cannot fix: bad input, a response that does not fit its
 * Schema or passes a limit, credentials that cannot be obtained, and client errors (4xx)
 * other than 408, 410 and 429 (401, 403 and 404 of the collection among them).
 */
export const defaultFailOn = (error: Kube.Error): boolean => {
  switch (error._tag) {
    case "ValidationError":
    case "KubeConfigError":
    case "ServerWarning":
    case "LimitExceeded":
      return true
    case "ApiError":
      return error.code >= 400 && error.code < 500 && error.code !== 408 && error.code !== 410 && error.code !== 429
    case "HttpClientError":
      // a request that cannot be sent as built (EncodeError, InvalidUrlError) fails the same way every time
      return error.reason._tag === "EncodeError" || error.reason._tag === "InvalidUrlError"
    case "RequestTimeout":
      return false
  }
}

type State =
  | { readonly _tag: "Empty" }
  | { readonly _tag: "Listing"; readonly continue: string }
  | { readonly _tag: "Watching"; readonly resourceVersion: string }
  | { readonly _tag: "Backoff"; readonly error: Kube.Error; readonly then: State }

const Empty: State = { _tag: "Empty" }

const Init: Watcher.Event<never> = { _tag: "Init" }
const InitDone: Watcher.Event<never> = { _tag: "InitDone" }

/** Where a watcher starts: from scratch, or watching from a resourceVersion already known (waitFor). */
export interface Start {
  readonly resourceVersion: string
}

/** The watcher over a resolved namespace. */
export const make = <A, I>(
  target: Target<A, I>,
  namespace: string | undefined,
  options: Watcher.Options,
  start?: Start | undefined
): Stream.Stream<Watcher.Event<A>, Kube.Error, Kube.Requirements> =>
  Stream.unwrap(Effect.gen(function*() {
    const { resource } = target
    const policy = yield* RequestPolicy
    const observer = yield* WatcherObserver
    const clock = yield* Clock.Clock
    const schedule = options.backoff ?? defaultBackoff
    let step = yield* Schedule.toStep(schedule)
    const failOn = options.failOn ?? defaultFailOn
    const timeoutSeconds = options.timeoutSeconds ?? 290
    const idleTimeout = options.idleTimeout === undefined
      ? defaultIdleTimeout(timeoutSeconds)
      : Duration.fromInputUnsafe(options.idleTimeout)
    const pageSize = options.pageSize ?? 500
    let state: State = start === undefined ? Empty : { _tag: "Watching", resourceVersion: start.resourceVersion }
    // the last backoff, or re-list or re-watch that went at once: trouble within two minutes of it waits
    let lastTroubleAt = Number.NEGATIVE_INFINITY
    let stalled = false
    // "auto": a watch-list until the server refuses one; true: always; false: never
    const watchListMode = options.watchList ?? "auto"
    let watchListRefused = watchListMode === false
    // the last watch-list ended before its initial events did: the next listing is a list
    let listOnce = false

    /** A request worked: a store that said it was stalled is up to date again. */
    const resumed = () => {
      if (stalled) {
        stalled = false
        observer?.resumed()
      }
    }

    /**
     * A re-list (410) or a re-watch (a short watch) that costs the server: at once when it
     * is the first trouble in two minutes, else after the backoff.
     */
    const trouble = (error: Kube.Error, then: State) => {
      const now = clock.currentTimeMillisUnsafe()
      if (now - lastTroubleAt > backoffResetAfter) {
        lastTroubleAt = now
        state = then
      } else {
        state = { _tag: "Backoff", error, then }
      }
    }

    /** Decides what comes after a failure in `current`. */
    const onFailure = (current: State, error: Kube.Error): Stream.Stream<Watcher.Event<A>, Kube.Error> => {
      if (ApiError.isGone(error)) {
        trouble(error, Empty)
        return Stream.empty
      }
      if (failOn(error)) return Stream.fail(error)
      state = { _tag: "Backoff", error, then: current }
      return Stream.empty
    }

    const listing = (current: State & { readonly _tag: "Empty" | "Listing" }) =>
      Stream.fromArrayEffect(Effect.map(
        listPage(target, namespace, {
          labelSelector: options.labelSelector,
          fieldSelector: options.fieldSelector,
          pageSize,
          invalid: options.invalid
        }, current._tag === "Listing" ? current.continue : undefined),
        (page) => {
          resumed()
          const out: Array<Watcher.Event<A>> = []
          if (current._tag === "Empty") out.push(Init)
          for (const object of page.items) out.push({ _tag: "InitApply", object })
          if (page.metadata.continue !== undefined) {
            state = { _tag: "Listing", continue: page.metadata.continue }
          } else {
            out.push(InitDone)
            state = { _tag: "Watching", resourceVersion: page.metadata.resourceVersion }
          }
          return out
        }
      )).pipe(
        Stream.catch((error) => onFailure(current, error))
      )

    const watching = (current: State & { readonly _tag: "Watching" }) =>
      Stream.suspend(() => {
        let resourceVersion = current.resourceVersion
        let sawData = false
        let changes = 0
        const startedAt = clock.currentTimeMillisUnsafe()
        const spec = request.watch(resource, namespace, {
          labelSelector: options.labelSelector,
          fieldSelector: options.fieldSelector,
          resourceVersion,
          allowWatchBookmarks: true,
          timeoutSeconds
        })
        return watchSpecStream(resource, spec, {
          idleTimeout,
          invalid: options.invalid,
          onData: () => {
            sawData = true
            resumed()
          },
          onResourceVersion: (rv) => {
            resourceVersion = rv
          }
        }).pipe(
          mapArrays((events) => {
            const out: Array<Watcher.Event<A>> = []
            for (const event of events) {
              if (event.type === "BOOKMARK") continue
              out.push(event.type === "DELETED"
                ? { _tag: "Delete", object: event.object }
                : { _tag: "Apply", object: event.object })
            }
            changes += out.length
            return out
          }),
          Stream.concat(Stream.suspend(() => {
            const next: State = { _tag: "Watching", resourceVersion }
            // A watch that ends at once without a byte is a misbehaving server or proxy,
            // not a quiet one (bookmarks arrive about every minute): back off, as client-go does.
            if (!sawData) state = { _tag: "Backoff", error: emptyWatch(spec.path), then: next }
            else if (changes === 0 && clock.currentTimeMillisUnsafe() - startedAt < shortWatchMillis) {
              trouble(shortWatch(spec.path), next)
            } else state = next
            return Stream.empty
          })),
          Stream.catch((error) => onFailure({ _tag: "Watching", resourceVersion }, error))
        )
      })

    /**
     * A listing as one watch (WatchList): `Init`, the initial events as `InitApply`, then
     * `InitDone` at the initial-events-end bookmark, and the same watch's later events as
     * `Apply` and `Delete`.
     */
    const watchListing = () =>
      Stream.suspend(() => {
        let resourceVersion = ""
        // the initial-events-end bookmark has come: the events are live ones
        let live = false
        let initSent = false
        let sawData = false
        let changes = 0
        const startedAt = clock.currentTimeMillisUnsafe()
        const spec = request.watch(resource, namespace, {
          labelSelector: options.labelSelector,
          fieldSelector: options.fieldSelector,
          sendInitialEvents: true,
          allowWatchBookmarks: true,
          timeoutSeconds
        })
        return watchSpecStream(resource, spec, {
          idleTimeout,
          invalid: options.invalid,
          onData: () => {
            sawData = true
            resumed()
          },
          onResourceVersion: (rv) => {
            resourceVersion = rv
          }
        }).pipe(
          mapArrays((events) => {
            const out: Array<Watcher.Event<A>> = []
            for (const event of events) {
              if (live) {
                if (event.type === "BOOKMARK") continue
                out.push(event.type === "DELETED"
                  ? { _tag: "Delete", object: event.object }
                  : { _tag: "Apply", object: event.object })
                changes++
                continue
              }
              if (!initSent) {
                initSent = true
                out.push(Init)
              }
              if (event.type === "BOOKMARK") {
                if (event.initialEventsEnd) {
                  live = true
                  out.push(InitDone)
                }
                continue
              }
              // the initial events are a snapshot, ADDED only: a DELETED has nothing to remove from it
              if (event.type !== "DELETED") out.push({ _tag: "InitApply", object: event.object })
            }
            return out
          }),
          Stream.concat(Stream.suspend(() => {
            if (live) {
              const next: State = { _tag: "Watching", resourceVersion }
              if (changes === 0 && clock.currentTimeMillisUnsafe() - startedAt < shortWatchMillis) {
                trouble(shortWatch(spec.path), next)
              } else state = next
              return Stream.empty
            }
            // ended before the initial-events-end bookmark: list this time ("auto"), or watch-list again
            if (watchListMode === "auto") listOnce = true
            const error = sawData ? incompleteWatchList(spec.path) : emptyWatch(spec.path)
            if (!sawData) state = { _tag: "Backoff", error, then: Empty }
            else if (watchListMode === "auto") state = Empty
            else trouble(error, Empty)
            return Stream.empty
          })),
          Stream.catch((error) => {
            if (
              !live && watchListMode === "auto" && error._tag === "ApiError" && refusesWatchList.has(error.code)
            ) {
              // the server does not serve watch-lists (or not to us): list, as client-go's reflector does
              watchListRefused = true
              state = Empty
              return Stream.fromEffectDrain(
                Effect.logDebug(`effect-kube: the server refused a watch-list (${error.message}): listing instead`)
              )
            }
            return onFailure(live ? { _tag: "Watching", resourceVersion } : Empty, error)
          })
        )
      })

    const backoff = (current: State & { readonly _tag: "Backoff" }) =>
      Stream.fromEffectDrain(Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        // a fresh step is the schedule from its first delay
        if (now - lastTroubleAt > backoffResetAfter) step = yield* Schedule.toStep(schedule)
        const retryAfter = retryAfterMillis(current.error, policy)
        const decision = yield* Pull.catchDone(step(now, current.error), () => Effect.undefined)
        if (decision === undefined) return yield* Effect.fail(current.error)
        const delay = Duration.toMillis(decision[1])
        stalled = true
        observer?.stalled(current.error, new Date(now + Math.max(delay, retryAfter)))
        if (delay > 0) yield* Effect.sleep(Duration.millis(delay))
        const waited = (yield* Clock.currentTimeMillis) - now
        if (retryAfter > waited) yield* Effect.sleep(Duration.millis(retryAfter - waited))
        lastTroubleAt = yield* Clock.currentTimeMillis
        state = current.then
      }))

    const next = (): Stream.Stream<Watcher.Event<A>, Kube.Error, Kube.Requirements> => {
      const current = state
      switch (current._tag) {
        case "Empty":
          if (!watchListRefused && !listOnce) return watchListing()
          listOnce = false
          return listing(current)
        case "Listing":
          return listing(current)
        case "Watching":
          return watching(current)
        case "Backoff":
          return backoff(current)
      }
    }

    return Stream.forever(Stream.suspend(next))
  }))

/**
 * `Stream.mapArray` for a function that may leave nothing: an empty result emits
 * nothing (a batch of bookmarks only), one check per batch.
 */
const mapArrays = <A, B>(f: (batch: Arr.NonEmptyReadonlyArray<A>) => ReadonlyArray<B>) =>
<E, R>(self: Stream.Stream<A, E, R>): Stream.Stream<B, E, R> =>
  Stream.fromChannel(Channel.filterMap(Stream.toChannel(self), (batch: Arr.NonEmptyReadonlyArray<A>) => {
    const out = f(batch)
    return Arr.isReadonlyArrayNonEmpty(out) ? Result.succeed(out) : Result.failVoid
  }))

const emptyWatch = (path: string) =>
  new ApiError({
    method: "GET",
    path,
    code: 503,
    reason: "ServiceUnavailable",
    statusMessage: "the watch ended at once without sending anything"
  })

/** The answers of a server that does not serve watch-lists (the query), rather than of a failing one. */
const refusesWatchList: ReadonlySet<number> = new Set([400, 405, 406, 415, 422, 501])

const incompleteWatchList = (path: string) =>
  new ApiError({
    method: "GET",
    path,
    code: 503,
    reason: "ServiceUnavailable",
    statusMessage: "the watch-list ended before its initial-events-end bookmark"
  })

const shortWatch = (path: string) =>
  new ApiError({
    method: "GET",
    path,
    code: 503,
    reason: "ServiceUnavailable",
    statusMessage: "the watch ended within a second without a change"
  })

/** Checks the options of a watcher before any request. */
export const checkOptions = (options: Watcher.Options) =>
  Effect.all([
    checkPositive(options.pageSize, "pageSize"),
    checkPositive(options.timeoutSeconds, "timeoutSeconds")
  ], { discard: true })

/** `watcher` on a bound api. */
export const watcher = <A, I>(
  target: Target<A, I>,
  options: Watcher.Options,
  start?: Start | undefined
): Stream.Stream<Watcher.Event<A>, Kube.Error, Kube.Requirements> =>
  Stream.unwrap(Effect.gen(function*() {
    yield* checkOptions(options)
    const namespace = yield* resolveNamespace(target, options.allNamespaces)
    return make(target, namespace, options, start)
  }))

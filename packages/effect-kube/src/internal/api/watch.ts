/**
 * One watch request as a stream of events, and lists fetched page by page. Both are
 * lazy: a watch connects when the stream is run and its connection closes with the
 * stream's scope; a page is fetched when the consumer pulls past the previous one.
 */
import * as HttpClientError from "effect/http/HttpClientError"
import type * as HttpClientResponse from "effect/http/HttpClientResponse"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import { ApiError, ValidationError } from "../../Errors.js"
import type * as Kube from "../../Kube.js"
import type * as Resource from "../../Resource.js"
import { type Policy, RequestPolicy } from "../../RequestPolicy.js"
import { type BodyDecoder, decodedBody } from "../stream/body.js"
import * as client from "../client/execute.js"
import {
  type InvalidMode,
  InvalidObject,
  isObject,
  type JsonObject,
  malformed,
  type Mismatch,
  objectDecoder,
  reportMismatch,
  resourceVersionOf
} from "../codec/codec.js"
import { skipInvalidEvents } from "../codec/invalid.js"
import { lineTooLong } from "../client/limits.js"
import { LineDecoder } from "../stream/lines.js"
import { redactApiError } from "../client/scrub.js"
import { listIn } from "./operations.js"
import * as request from "../request/verbs.js"
import type { Spec } from "../request/spec.js"
import * as telemetry from "../client/telemetry.js"
import { checkPositive, resolveNamespace, type Target } from "../request/inputChecks.js"

/** Checks the options of a watch before any request. */
export const checkWatchOptions = (options: Kube.WatchOptions): Effect.Effect<void, ValidationError> =>
  Effect.andThen(
    checkPositive(options.timeoutSeconds, "timeoutSeconds"),
    options.sendInitialEvents !== undefined && options.allowWatchBookmarks === false
      ? Effect.fail(
        new ValidationError({
          subject: "sendInitialEvents",
          detail: "needs allowWatchBookmarks (the end of the initial events is announced by a bookmark)"
        })
      )
      : Effect.void
  )

/** What the watcher needs to know of a raw watch as it goes. */
export interface WatchHooks {
  /** Called with the resourceVersion of every event (bookmarks included), in order. */
  readonly onResourceVersion?: ((resourceVersion: string) => void) | undefined
  /** Called when the first bytes arrive: the connection is healthy. */
  readonly onData?: (() => void) | undefined
  /**
   * Ends the watch when no event comes for this long (a connection that died silently, a
   * server trickling bytes that make no event).
   */
  readonly idleTimeout?: Duration.Duration | undefined
  /** Ends the watch once it has been open this long, whatever comes (`lifetimeFor`). */
  readonly maxLifetime?: Duration.Duration | undefined
  /** What to do with an object that does not fit its Schema (default `"fail"`). */
  readonly invalid?: InvalidMode | undefined
}

const truncated = (response: HttpClientResponse.HttpClientResponse, bytes: number) =>
  new HttpClientError.HttpClientError({
    reason: new HttpClientError.DecodeError({
      request: response.request,
      response,
      description: `the watch ended in the middle of an event (${bytes} characters without a newline)`
    })
  })

/** About how many characters of events are parsed into one chunk: a bound on the decoded objects alive at once. */
const batchCharacters = 64 * 1024

/**
 * Turns the body of a watch into events. Bytes are cut into lines as they arrive (lines
 * are cheap slices of the decoded text); lines are parsed and decoded a batch of about
 * `batchCharacters` at a time, when the consumer pulls, so the objects of only one batch
 * are alive at once. An `ERROR` event fails the stream with the ApiError of its Status,
 * after the events before it.
 */
const eventDecoder = <A, I>(
  resource: Resource.Resource<A, I, string>,
  spec: Spec,
  response: HttpClientResponse.HttpClientResponse,
  hooks: WatchHooks,
  policy: Policy,
  onMismatch: (mismatch: Mismatch) => void
) =>
(): BodyDecoder<Kube.WatchEvent<A>, Kube.Error> => {
  const decodeObject = objectDecoder(resource, spec, onMismatch, policy.maxJsonDepth)
  const onResourceVersion = hooks.onResourceVersion
  const onData = hooks.onData
  const tolerant = hooks.invalid !== undefined && hooks.invalid !== "fail"
  const decoder = new LineDecoder(false, policy.maxLineBytes)
  const tooLong = lineTooLong(spec, policy.maxLineBytes, "a watch line")
  const lines: Array<string> = []
  let next = 0
  // characters pushed and not yet taken (about: the last line may still be incomplete)
  let pending = 0
  let seenData = false
  const decodeLine = (line: string, out: Array<Kube.WatchEvent<A>>): Kube.Error | undefined => {
    let event: unknown
    try {
      event = JSON.parse(line)
    } catch {
      return malformed(spec, `sent a line that is not JSON (${line.length} characters)`)
    }
    if (!isObject(event) || !isObject(event["object"])) {
      return malformed(spec, "sent an event without an object")
    }
    const type = event["type"]
    const object = event["object"]
    switch (type) {
      case "ADDED":
      case "MODIFIED":
      case "DELETED": {
        const decoded = decodeObject(object)
        let kept: A
        if (Result.isSuccess(decoded)) kept = decoded.success
        else {
          const error = decoded.failure
          if (!tolerant || error._tag === "LimitExceeded") return error
          // an object that does not fit is kept as it came (raw), or dropped after a report (skip)
          kept = new InvalidObject(object, error) as A
        }
        if (onResourceVersion !== undefined) {
          const rv = resourceVersionOf(object)
          if (rv !== undefined) onResourceVersion(rv)
        }
        out.push({ type, object: kept })
        return undefined
      }
      case "BOOKMARK": {
        const rv = resourceVersionOf(object) ?? ""
        const metadata = object["metadata"] as JsonObject | undefined
        const annotations = metadata !== undefined && isObject(metadata["annotations"])
          ? metadata["annotations"]
          : undefined
        if (onResourceVersion !== undefined && rv !== "") onResourceVersion(rv)
        out.push({
          type: "BOOKMARK",
          resourceVersion: rv,
          initialEventsEnd: annotations !== undefined && annotations["k8s.io/initial-events-end"] === "true"
        })
        return undefined
      }
      case "ERROR":
        return redactApiError(client.apiErrorFromStatus(spec, object), client.secretsFor(response))
      default:
        return malformed(spec, `sent an event of unknown type ${JSON.stringify(type)}`)
    }
  }
  return {
    push: (bytes) => {
      if (!seenData) {
        seenData = true
        onData?.()
      }
      pending += bytes.length
      decoder.push(bytes, lines)
    },
    ready: () => next < lines.length || decoder.overflowed,
    full: () => pending >= batchCharacters || decoder.overflowed,
    take: (out) => {
      let characters = 0
      while (next < lines.length && characters < batchCharacters) {
        const line = lines[next++]!
        characters += line.length + 1
        if (line.length === 0 || (line.length < 3 && line.trim() === "")) continue
        const error = decodeLine(line, out)
        if (error !== undefined) {
          lines.length = 0
          next = 0
          pending = 0
          return error
        }
      }
      pending -= characters
      if (next === lines.length) {
        lines.length = 0
        next = 0
        pending = 0
        // the events before the line that was too long are handed on first
        if (decoder.overflowed) return tooLong()
      }
      return undefined
    },
    end: () => {
      const rest = decoder.end()
      // the error carries the authorized request: scrubbed like every transport error
      return rest === undefined || rest.trim() === "" ? undefined : client.scrub(truncated(response, rest.length))
    }
  }
}

/**
 * Runs a watch Spec: one request, whose connection closes when the stream ends or is
 * interrupted, in one `kube.watch` span that lasts as long as the stream.
 */
export const watchSpecStream = <A, I>(
  resource: Resource.Resource<A, I, string>,
  spec: Spec,
  hooks: WatchHooks = {}
): Stream.Stream<Kube.WatchEvent<A>, Kube.Error, Kube.Requirements> =>
  telemetry.scopedStreamInSpan(
    spec,
    Effect.zipWith(connect(spec, hooks.idleTimeout ?? hooks.maxLifetime), RequestPolicy, (answer, policy: Policy) =>
      Option.match(answer, {
      // no answer at all within the idle timeout: the watch ends, as a silent one does
      onNone: () => Stream.empty,
      onSome: (response) => {
        // objects of a built-in kind kept although they do not fit below the top (see
        // `objectDecoder`): reported before the batch they came in is handed on
        const mismatches: Array<Mismatch> = []
        const onMismatch = (mismatch: Mismatch) => {
          mismatches.push(mismatch)
        }
        const decoder = eventDecoder(resource, spec, response, hooks, policy, onMismatch)
        const events = decodedBody<Kube.WatchEvent<A>, Kube.Error, Kube.Error>(response, decoder, {
          idleTimeout: hooks.idleTimeout,
          maxLifetime: hooks.maxLifetime,
          // body failures carry the authorized request: scrubbed like every transport error
          onError: client.scrub,
          beforeEmit: () =>
            mismatches.length === 0
              ? undefined
              : Effect.forEach(mismatches.splice(0, mismatches.length), (m) => reportMismatch(spec, m), {
                discard: true
              })
        })
        return hooks.invalid === "skip" ? skipInvalidEvents(spec)(events) : events
      }
    }))
  )

/**
 * Sends the watch request. Waiting for the answer counts as idle time too: a request
 * lost on a half-open connection gets no headers, and would otherwise wait for ever.
 */
const connect = (spec: Spec, idleTimeout: Duration.Duration | undefined) =>
  idleTimeout === undefined
    ? Effect.map(client.sendScoped(spec), Option.some)
    : Effect.timeoutOption(client.sendScoped(spec), idleTimeout)

/** `watch` on a bound api. */
export const watch = <A, I>(
  target: Target<A, I>,
  options: Kube.WatchOptions
): Stream.Stream<Kube.WatchEvent<A>, Kube.Error, Kube.Requirements> =>
  Stream.unwrap(
    Effect.gen(function*() {
      yield* checkWatchOptions(options)
      const namespace = yield* resolveNamespace(target, options.allNamespaces)
      return watchSpecStream(target.resource, request.watch(target.resource, namespace, options), {
        invalid: options.invalid,
        maxLifetime: lifetimeFor(options.timeoutSeconds)
      })
    })
  )

/** Options of the pages of a list. */
export interface PageOptions extends Kube.Selectors {
  readonly pageSize?: number | undefined
  readonly invalid?: InvalidMode | undefined
}

/** One page of a list, from a continue token (or the start). */
export const listPage = <A, I>(
  target: Target<A, I>,
  namespace: string | undefined,
  options: PageOptions,
  continueToken: string | undefined
): Effect.Effect<Kube.ListResult<A>, Kube.Error, Kube.Requirements> =>
  listIn(target, namespace, {
    labelSelector: options.labelSelector,
    fieldSelector: options.fieldSelector,
    limit: options.pageSize ?? 500,
    continue: continueToken,
    invalid: options.invalid
  })

/**
 * The pages of a list, each fetched when the previous one has been pulled. Every page
 * carries the list's resourceVersion; the last one has no continue token.
 */
export const pages = <A, I>(
  target: Target<A, I>,
  namespace: string | undefined,
  options: PageOptions
): Stream.Stream<Kube.ListResult<A>, Kube.Error, Kube.Requirements> =>
  Stream.paginate(undefined as string | undefined, (continueToken) =>
    Effect.map(
      listPage(target, namespace, options, continueToken),
      (page) => [[page], Option.fromNullishOr(page.metadata.continue)] as const
    ))

/**
 * How many times in a row a list whose continue token expired (410) goes on without it
 * before the 410 is the stream's failure.
 */
export const maxExpiredContinues = 3

/** Where a paginated list stands: the next page's token, the last object emitted, and the 410s met in a row. */
interface Cursor {
  readonly token: string | undefined
  /** The key (`namespace/name`, the API server's order) of the last object emitted. */
  readonly lastKey: string | undefined
  /** Objects at or before this key were emitted already (the list started again after a 410). */
  readonly skipThrough: string | undefined
  readonly expired: number
}

const keyOf = (item: unknown): string => {
  const object = (item as { readonly _tag?: unknown })._tag === "Invalid" ? (item as Kube.Invalid).raw : item
  const metadata = (object as { readonly metadata?: { readonly namespace?: unknown; readonly name?: unknown } })
    ?.metadata
  return `${typeof metadata?.namespace === "string" ? metadata.namespace : ""}/${
    typeof metadata?.name === "string" ? metadata.name : ""
  }`
}

/**
 * The objects of a list page by page, each page fetched when the previous one has been
 * pulled. A continue token can expire before the last page (etcd compacted past the list's
 * resourceVersion, and the apiserver's cache no longer holds it: 410 Expired); client-go's
 * pager then lists again without it (`FullListIfExpired`). A stream has emitted the first
 * pages already, so it goes on from the object after the last one it emitted: with the
 * token the 410's Status carries (kube-apiserver's continuation at the current state), or,
 * without one, a list from the start that skips what was emitted (objects come in key
 * order). The rest of the list is then as it is now, not as it was at the first page (the
 * Status's message says so: "an inconsistent list"); each object still comes once.
 */
const continuedPages = <A>(
  page: (token: string | undefined) => Effect.Effect<Kube.ListResult<A>, Kube.Error, Kube.Requirements>
): Stream.Stream<A, Kube.Error, Kube.Requirements> => {
  const step = (cursor: Cursor): Effect.Effect<
    readonly [ReadonlyArray<A>, Option.Option<Cursor>],
    Kube.Error,
    Kube.Requirements
  > =>
    Effect.matchEffect(page(cursor.token), {
      onFailure: (error) => {
        if (cursor.token === undefined || !ApiError.isGone(error) || cursor.expired >= maxExpiredContinues) {
          return Effect.fail(error)
        }
        const fresh = error.status?.metadata?.continue
        return step({
          token: fresh !== undefined && fresh !== "" ? fresh : undefined,
          lastKey: cursor.lastKey,
          skipThrough: cursor.lastKey,
          expired: cursor.expired + 1
        })
      },
      onSuccess: (listed) => {
        const skip = cursor.skipThrough
        const items = skip === undefined ? listed.items : listed.items.filter((item) => keyOf(item) > skip)
        const next = listed.metadata.continue
        const lastKey = items.length > 0 ? keyOf(items[items.length - 1]) : cursor.lastKey
        return Effect.succeed(
          [
            items,
            next === undefined || next === ""
              ? Option.none()
              : Option.some({ token: next, lastKey, skipThrough: skip, expired: 0 })
          ] as const
        )
      }
    })
  // a page's items are one chunk of the stream (an empty page is skipped)
  return Stream.paginate<Cursor, A, Kube.Error, Kube.Requirements>(
    { token: undefined, lastKey: undefined, skipThrough: undefined, expired: 0 },
    step
  )
}

/** `listStream` on a bound api. */
export const listStream = <A, I>(
  target: Target<A, I>,
  options: Kube.ListStreamOptions
): Stream.Stream<A, Kube.Error, Kube.Requirements> =>
  Stream.unwrap(
    Effect.gen(function*() {
      yield* checkPositive(options.pageSize, "pageSize")
      const namespace = yield* resolveNamespace(target, options.allNamespaces)
      return continuedPages((token) => listPage(target, namespace, options, token))
    })
  )

/** The default client inactivity limit of a watch with a server timeout of `timeoutSeconds`. */
export const defaultIdleTimeout = (timeoutSeconds: number): Duration.Duration =>
  Duration.seconds(timeoutSeconds + 30)

/** How long past its `timeoutSeconds` a watch is let run before the client ends it (a server's clock, a slow link). */
const lifetimeMarginSeconds = 30

/**
 * The longest a kube-apiserver keeps a watch without `timeoutSeconds`: a random time between
 * `--min-request-timeout` (1,800 s by default) and twice it.
 */
const serverWatchSeconds = 3600

/**
 * How long the client lets a watch run: its `timeoutSeconds` (else the longest a kube-apiserver
 * keeps one) and a margin. Past it the watch ends as if the server had ended it, so that a server
 * that never ends one (a trickle of bytes, a proxy) cannot hold it open for ever.
 */
export const lifetimeFor = (timeoutSeconds: number | undefined): Duration.Duration =>
  Duration.seconds((timeoutSeconds ?? serverWatchSeconds) + lifetimeMarginSeconds)

/**
 * One watch request as a stream of events, and lists fetched page by page. Both are
 * lazy: a watch connects when the stream is run and its connection closes with the
 * stream's scope; a page is fetched when the consumer pulls past the previous one.
 */
import * as HttpClientError from "@effect/platform/HttpClientError"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Chunk from "effect/Chunk"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { type Status, ValidationError } from "../Errors.js"
import type * as Kube from "../Kube.js"
import type * as Resource from "../Resource.js"
import { bodyStream } from "./body.js"
import * as client from "./client.js"
import {
  type InvalidMode,
  InvalidObject,
  isObject,
  type JsonObject,
  malformed,
  objectDecoder,
  resourceVersionOf
} from "./codec.js"
import { skipInvalidEvents } from "./invalid.js"
import { LineDecoder, transformChunks } from "./lines.js"
import { listIn } from "./operations.js"
import * as request from "./request/operations.js"
import type { Spec } from "./request/spec.js"
import * as telemetry from "./telemetry.js"
import { checkPositive, resolveNamespace, type Target } from "./validate.js"

/** Checks the options of a watch before any request. */
export const checkWatchOptions = (options: Kube.WatchOptions): Effect.Effect<void, ValidationError> =>
  Effect.zipRight(
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
  /** Ends the watch when no bytes arrive for this long (a connection that died silently). */
  readonly idleTimeout?: Duration.Duration | undefined
  /** What to do with an object that does not fit its Schema (default `"fail"`). */
  readonly invalid?: InvalidMode | undefined
}

const truncated = (response: HttpClientResponse.HttpClientResponse, bytes: number) =>
  new HttpClientError.ResponseError({
    request: response.request,
    response,
    reason: "Decode",
    description: `the watch ended in the middle of an event (${bytes} characters without a newline)`
  })

/**
 * Turns the body of a watch into events. Lines are parsed and decoded a chunk at a
 * time; an `ERROR` event fails the stream with the ApiError of its Status.
 */
const decodeEvents = <A, I>(
  resource: Resource.Resource<A, I, string>,
  spec: Spec,
  response: HttpClientResponse.HttpClientResponse,
  hooks: WatchHooks
) => {
  const decodeObject = objectDecoder(resource, spec)
  const onResourceVersion = hooks.onResourceVersion
  const tolerant = hooks.invalid !== undefined && hooks.invalid !== "fail"
  return transformChunks<Uint8Array, Kube.WatchEvent<A>, Kube.Error>(() => {
    const lines = new LineDecoder(false)
    const pending: Array<string> = []
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
          if (Either.isLeft(decoded) && !tolerant) return decoded.left
          if (onResourceVersion !== undefined) {
            const rv = resourceVersionOf(object)
            if (rv !== undefined) onResourceVersion(rv)
          }
          // an object that does not fit is kept as it came (raw), or dropped after a report (skip)
          const kept = Either.isLeft(decoded) ? new InvalidObject(object, decoded.left) as A : decoded.right
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
          return client.apiErrorFromStatus(spec, object as Status)
        default:
          return malformed(spec, `sent an event of unknown type ${JSON.stringify(type)}`)
      }
    }
    let seenData = false
    return {
      onChunk: (input, out) => {
        for (const bytes of input) {
          if (bytes.length === 0) continue
          if (!seenData) {
            seenData = true
            hooks.onData?.()
          }
          lines.push(bytes, pending)
        }
        for (let i = 0; i < pending.length; i++) {
          const line = pending[i]!
          if (line.length === 0 || (line.length < 3 && line.trim() === "")) continue
          const error = decodeLine(line, out)
          if (error !== undefined) {
            pending.length = 0
            return error
          }
        }
        pending.length = 0
        return undefined
      },
      onEnd: () => {
        const rest = lines.end()
        return rest === undefined || rest.trim() === "" ? undefined : truncated(response, rest.length)
      }
    }
  })
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
  Stream.unwrapScoped(
    Effect.map(connect(spec, hooks.idleTimeout), Option.match({
      // no answer at all within the idle timeout: the watch ends, as a silent one does
      onNone: () => Stream.empty,
      onSome: (response) => {
        const body = hooks.idleTimeout === undefined
          ? bodyStream(response)
          : Stream.timeout(bodyStream(response), hooks.idleTimeout)
        // body failures carry the authorized request: scrubbed like every transport error
        const events = Stream.mapError(decodeEvents(resource, spec, response, hooks)(body), client.scrub)
        return hooks.invalid === "skip" ? skipInvalidEvents(spec)(events) : events
      }
    }))
  ).pipe(telemetry.withStreamSpan(spec))

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
        invalid: options.invalid
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
  Stream.paginateEffect(undefined as string | undefined, (continueToken) =>
    Effect.map(
      listPage(target, namespace, options, continueToken),
      (page) => [page, Option.fromNullable(page.metadata.continue)] as const
    ))

/** `listStream` on a bound api. */
export const listStream = <A, I>(
  target: Target<A, I>,
  options: Kube.ListStreamOptions
): Stream.Stream<A, Kube.Error, Kube.Requirements> =>
  Stream.unwrap(
    Effect.gen(function*() {
      yield* checkPositive(options.pageSize, "pageSize")
      const namespace = yield* resolveNamespace(target, options.allNamespaces)
      return Stream.mapConcatChunk(
        pages(target, namespace, options),
        (page) => Chunk.unsafeFromArray(page.items)
      )
    })
  )

/** The default client inactivity limit of a watch with a server timeout of `timeoutSeconds`. */
export const defaultIdleTimeout = (timeoutSeconds: number): Duration.Duration =>
  Duration.seconds(timeoutSeconds + 30)

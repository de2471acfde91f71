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
import * as Resource from "../Resource.js"
import { decodeList, describe, inAnswer, listSpec, resolveNamespace, type Target } from "./api.js"
import * as client from "./client.js"
import { codecFor } from "./codec.js"
import { LineDecoder, transformChunks } from "./lines.js"

type JsonObject = Record<string, unknown>

const isObject = (u: unknown): u is JsonObject => typeof u === "object" && u !== null && !Array.isArray(u)

const nonEmpty = (s: string | undefined): s is string => s !== undefined && s.trim() !== ""

/** A positive whole number, or undefined. */
export const checkPositive = (
  value: number | undefined,
  subject: string,
  allowZero = false
): Effect.Effect<void, ValidationError> =>
  value === undefined || (Number.isSafeInteger(value) && (allowZero ? value >= 0 : value > 0))
    ? Effect.void
    : Effect.fail(
      new ValidationError({
        subject,
        detail: `must be a ${allowZero ? "whole number >= 0" : "positive whole number"} (got ${value})`
      })
    )

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

/**
 * The Spec of a watch. `sendInitialEvents` is only accepted by the API together with
 * `resourceVersionMatch=NotOlderThan` and bookmarks, so those are sent with it.
 */
export const watchSpec = (
  resource: Resource.Info,
  namespace: string | undefined,
  options: Kube.WatchOptions
): client.Spec => {
  const initialEvents = options.sendInitialEvents !== undefined
  return {
    method: "GET",
    path: Resource.collectionPath(resource, namespace),
    query: {
      watch: true,
      labelSelector: nonEmpty(options.labelSelector) ? options.labelSelector : undefined,
      fieldSelector: nonEmpty(options.fieldSelector) ? options.fieldSelector : undefined,
      resourceVersion: nonEmpty(options.resourceVersion) ? options.resourceVersion : undefined,
      resourceVersionMatch: initialEvents ? "NotOlderThan" : undefined,
      sendInitialEvents: options.sendInitialEvents,
      allowWatchBookmarks: initialEvents ? true : options.allowWatchBookmarks,
      timeoutSeconds: options.timeoutSeconds
    }
  }
}

/** What the watcher needs to know of a raw watch as it goes. */
export interface WatchHooks {
  /** Called with the resourceVersion of every event (bookmarks included), in order. */
  readonly onResourceVersion?: ((resourceVersion: string) => void) | undefined
  /** Called when the first bytes arrive: the connection is healthy. */
  readonly onData?: (() => void) | undefined
  /** Ends the watch when no bytes arrive for this long (a connection that died silently). */
  readonly idleTimeout?: Duration.Duration | undefined
}

const resourceVersionOf = (object: JsonObject): string | undefined => {
  const metadata = object["metadata"]
  if (!isObject(metadata)) return undefined
  const rv = metadata["resourceVersion"]
  return typeof rv === "string" ? rv : undefined
}

/**
 * Decodes one object of the resource without going through an Effect: this runs once
 * per event. Same checks as `decodeObject` in api.ts.
 */
export const objectDecoder = <A, I>(resource: Resource.Resource<A, I>, spec: client.Spec) => {
  const codec = codecFor(resource.schema)
  return (u: JsonObject): Either.Either<A, ValidationError> => {
    const kind = u["kind"]
    if (kind === undefined) {
      u["kind"] = resource.kind
      if (u["apiVersion"] === undefined) u["apiVersion"] = resource.apiVersion
    } else if (kind !== resource.kind) {
      return Either.left(client.malformed(spec, `expected a ${resource.kind}, got a ${String(kind)}`))
    } else if (u["apiVersion"] === undefined) {
      u["apiVersion"] = resource.apiVersion
    }
    const metadata = isObject(u["metadata"]) ? u["metadata"] : {}
    const subject = describe(
      resource,
      metadata["namespace"] as string | undefined,
      metadata["name"] as string | undefined
    )
    const decoded = codec.decode(u, subject)
    return Either.isRight(decoded) ? decoded : Either.left(inAnswer(spec, decoded.left))
  }
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
  resource: Resource.Resource<A, I>,
  spec: client.Spec,
  response: HttpClientResponse.HttpClientResponse,
  hooks: WatchHooks
) => {
  const decodeObject = objectDecoder(resource, spec)
  const onResourceVersion = hooks.onResourceVersion
  return transformChunks<Uint8Array, Kube.WatchEvent<A>, Kube.Error>(() => {
    const lines = new LineDecoder(false)
    const pending: Array<string> = []
    const decodeLine = (line: string, out: Array<Kube.WatchEvent<A>>): Kube.Error | undefined => {
      let event: unknown
      try {
        event = JSON.parse(line)
      } catch {
        return client.malformed(spec, `sent a line that is not JSON (${line.length} characters)`)
      }
      if (!isObject(event) || !isObject(event["object"])) {
        return client.malformed(spec, "sent an event without an object")
      }
      const type = event["type"]
      const object = event["object"]
      switch (type) {
        case "ADDED":
        case "MODIFIED":
        case "DELETED": {
          const decoded = decodeObject(object)
          if (Either.isLeft(decoded)) return decoded.left
          if (onResourceVersion !== undefined) {
            const rv = resourceVersionOf(object)
            if (rv !== undefined) onResourceVersion(rv)
          }
          out.push({ type, object: decoded.right })
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
          return client.malformed(spec, `sent an event of unknown type ${JSON.stringify(type)}`)
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

/** Runs a watch Spec: one request, whose connection closes when the stream ends or is interrupted. */
export const watchSpecStream = <A, I>(
  resource: Resource.Resource<A, I>,
  spec: client.Spec,
  hooks: WatchHooks = {}
): Stream.Stream<Kube.WatchEvent<A>, Kube.Error, Kube.Requirements> =>
  Stream.unwrapScoped(
    Effect.map(connect(spec, hooks.idleTimeout), Option.match({
      // no answer at all within the idle timeout: the watch ends, as a silent one does
      onNone: () => Stream.empty,
      onSome: (response) => {
        const body = hooks.idleTimeout === undefined
          ? response.stream
          : Stream.timeout(response.stream, hooks.idleTimeout)
        // body failures carry the authorized request: scrubbed like every transport error
        return Stream.mapError(decodeEvents(resource, spec, response, hooks)(body), client.scrub)
      }
    }))
  )

/**
 * Sends the watch request. Waiting for the answer counts as idle time too: a request
 * lost on a half-open connection gets no headers, and would otherwise wait for ever.
 */
const connect = (spec: client.Spec, idleTimeout: Duration.Duration | undefined) =>
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
      return watchSpecStream(target.resource, watchSpec(target.resource, namespace, options))
    })
  )

/** Options of the pages of a list. */
export interface PageOptions extends Kube.Selectors {
  readonly pageSize?: number | undefined
}

/** One page of a list, from a continue token (or the start). */
export const listPage = <A, I>(
  resource: Resource.Resource<A, I>,
  namespace: string | undefined,
  options: PageOptions,
  continueToken: string | undefined
): Effect.Effect<Kube.ListResult<A>, Kube.Error, Kube.Requirements> => {
  const spec = listSpec(resource, namespace, {
    labelSelector: options.labelSelector,
    fieldSelector: options.fieldSelector,
    limit: options.pageSize ?? 500,
    continue: continueToken
  })
  return Effect.flatMap(client.sendJson(spec), (json) => decodeList(resource, json, spec))
}

/**
 * The pages of a list, each fetched when the previous one has been pulled. Every page
 * carries the list's resourceVersion; the last one has no continue token.
 */
export const pages = <A, I>(
  resource: Resource.Resource<A, I>,
  namespace: string | undefined,
  options: PageOptions
): Stream.Stream<Kube.ListResult<A>, Kube.Error, Kube.Requirements> =>
  Stream.paginateEffect(undefined as string | undefined, (continueToken) =>
    Effect.map(
      listPage(resource, namespace, options, continueToken),
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
        pages(target.resource, namespace, options),
        (page) => Chunk.unsafeFromArray(page.items)
      )
    })
  )

/** The default client inactivity limit of a watch with a server timeout of `timeoutSeconds`. */
export const defaultIdleTimeout = (timeoutSeconds: number): Duration.Duration =>
  Duration.seconds(timeoutSeconds + 30)

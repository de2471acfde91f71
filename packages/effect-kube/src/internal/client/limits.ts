/**
 * The limits on what a server can make the client hold (`RequestPolicy`'s
 * `maxResponseBytes`, `maxLineBytes` and `maxJsonDepth`, `NodeKube`'s `maxHeaderBytes`):
 * how a transport or a decoder says that one was crossed (`LimitReached`, the cause of
 * the transport's `HttpClientError`), and how the request path turns that into the
 * `LimitExceeded` that names the request. Each check is a counter compared once per chunk
 * of bytes, where the bytes are counted anyway.
 *
 * @internal
 */
import type * as Effect from "effect/Effect"
import * as HttpClientError from "effect/http/HttpClientError"
import { formatBytes, type Limit, LimitExceeded } from "../../Errors.js"
import { pathWithQuery, type Spec } from "../request/spec.js"

/**
 * A limit crossed, found where no request is known (the transport, a decoder): the cause
 * of the transport's `HttpClientError`, turned into a `LimitExceeded` by the request path.
 * Tagged rather than matched by class, so that two copies of this module agree.
 *
 * @internal
 */
export class LimitReached {
  readonly _tag = "LimitReached"
  constructor(
    readonly limit: Limit,
    readonly value: number,
    /** What crossed it, as the error says it: `the answer`, `a watch line`. */
    readonly subject: string
  ) {}

  get message(): string {
    return `${this.subject} is larger than ${this.limit} (${formatBytes(this.value)})`
  }
}

const isLimitReached = (u: unknown): u is LimitReached =>
  typeof u === "object" && u !== null && (u as { readonly _tag?: unknown })._tag === "LimitReached"

/** The limit a transport failure reports, if it reports one. @internal */
export const reachedIn = (error: unknown): LimitReached | undefined => {
  if (!HttpClientError.isHttpClientError(error)) return undefined
  const cause = error.reason.cause
  return isLimitReached(cause) ? cause : undefined
}

/** The tagged error of a limit crossed by the answer to a request. @internal */
export const exceeded = (
  method: string,
  path: string,
  reached: Pick<LimitReached, "limit" | "value" | "subject">
): LimitExceeded =>
  new LimitExceeded({ method, path, limit: reached.limit, value: reached.value, subject: reached.subject })

/** The failure of a streamed answer whose line passed `maxLineBytes`: `subject` is `a watch line`, `a log line`. @internal */
export const lineTooLong = (
  spec: Pick<Spec, "method" | "path" | "query">,
  maxLineBytes: number,
  subject: string
) =>
(): LimitExceeded => exceeded(spec.method, pathWithQuery(spec), { limit: "maxLineBytes", value: maxLineBytes, subject })

/**
 * A response whose body can be read as text within a number of bytes (after gunzip): the
 * Node transport's, and the fetch transport's for the cluster. The request path reads an
 * error answer's body through it with a smaller bound than a 2xx answer's.
 *
 * @internal
 */
export const readTextWithin: unique symbol = Symbol.for("effect-kube/internal/readTextWithin")

/** @internal */
export interface BoundedText {
  readonly [readTextWithin]: (maxBytes: number) => Effect.Effect<string, HttpClientError.HttpClientError>
}

/** @internal */
export const isBoundedText = (u: unknown): u is BoundedText =>
  typeof (u as { readonly [readTextWithin]?: unknown })[readTextWithin] === "function"

/**
 * The most of an error answer's body that is read: a Status is a few KB. What is past it
 * is not read (the connection is closed) and the `ApiError` says the body was too large.
 *
 * @internal
 */
export const errorBodyBytes = 1024 * 1024

/** What undici fails a request with when the answer's headers pass its `maxHeaderSize`. @internal */
export const isHeadersOverflow = (cause: unknown): boolean =>
  typeof cause === "object" && cause !== null && (cause as { readonly code?: unknown }).code === "UND_ERR_HEADERS_OVERFLOW"

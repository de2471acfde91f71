/**
 * The in-memory `HttpClient`'s answers: an `HttpClientResponse` over the fake's own body,
 * a whole string or the chunks a streaming body (a watch, a followed log) writes. A web
 * `Response` (what `HttpClientResponse.fromWeb` wraps) costs ~130 µs to build and read
 * back through its byte stream, more than the fake takes to answer a GET; these hand the
 * client the string it will decode, or the chunks as they are written.
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Cookies from "effect/http/Cookies"
import * as Headers from "effect/http/Headers"
import * as HttpClientError from "effect/http/HttpClientError"
import type * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as HttpClientResponse from "effect/http/HttpClientResponse"
import * as HttpIncomingMessage from "effect/http/HttpIncomingMessage"
import * as UrlParams from "effect/http/UrlParams"
import * as Inspectable from "effect/Inspectable"
import * as Option from "effect/Option"
import { pipeArguments } from "effect/Pipeable"
import * as Queue from "effect/Queue"
import type * as Schema from "effect/Schema"
import type * as Socket from "effect/socket/Socket"
import * as Stream from "effect/Stream"
import type { Sink, StreamBody } from "./stream.js"

const encoder = new TextEncoder()

class InMemoryClientResponse extends Inspectable.Class implements HttpClientResponse.HttpClientResponse {
  readonly [HttpIncomingMessage.TypeId]: typeof HttpIncomingMessage.TypeId
  readonly [HttpClientResponse.TypeId]: typeof HttpClientResponse.TypeId

  constructor(
    readonly request: HttpClientRequest.HttpClientRequest,
    readonly url: string,
    readonly status: number,
    private readonly rawHeaders: Record<string, string>,
    /** `undefined`: no body at all (a 204), as a web `Response` with a null body. */
    private readonly body: string | StreamSource | undefined
  ) {
    super()
    this[HttpIncomingMessage.TypeId] = HttpIncomingMessage.TypeId
    this[HttpClientResponse.TypeId] = HttpClientResponse.TypeId
  }

  toJSON(): unknown {
    return HttpIncomingMessage.inspect(this, {
      _id: "HttpClientResponse",
      request: this.request.toJSON(),
      status: this.status
    })
  }

  private cachedHeaders?: Headers.Headers
  get headers(): Headers.Headers {
    if (this.cachedHeaders !== undefined) return this.cachedHeaders
    const headers = Headers.fromInput(this.rawHeaders)
    // as a web `Response` made from a string labels it
    return this.cachedHeaders = typeof this.body === "string" && headers["content-type"] === undefined
      ? Headers.set(headers, "content-type", "text/plain;charset=UTF-8")
      : headers
  }

  get cookies(): Cookies.Cookies {
    const header = this.headers["set-cookie"]
    return header === undefined ? Cookies.empty : Cookies.fromSetCookie([header])
  }

  get remoteAddress(): Option.Option<string> {
    return Option.none()
  }

  private decodeError(cause: unknown): HttpClientError.HttpClientError {
    return new HttpClientError.HttpClientError({
      reason: new HttpClientError.DecodeError({ request: this.request, response: this, cause })
    })
  }

  private textBody?: Effect.Effect<string, HttpClientError.HttpClientError>
  get text(): Effect.Effect<string, HttpClientError.HttpClientError> {
    const body = this.body
    if (body === undefined || typeof body === "string") return Effect.succeed(body ?? "")
    // a streaming body read whole: every chunk until it ends, read once
    return this.textBody ??= Effect.runSync(Effect.cached(Effect.map(
      Stream.runCollect(this.stream),
      (chunks) => Buffer.concat(chunks).toString("utf8")
    )))
  }

  get json(): Effect.Effect<Schema.Json, HttpClientError.HttpClientError> {
    return Effect.flatMap(this.text, (text) =>
      Effect.try({
        try: () => (text === "" ? null : JSON.parse(text)),
        catch: (cause) => this.decodeError(cause)
      }))
  }

  get arrayBuffer(): Effect.Effect<ArrayBuffer, HttpClientError.HttpClientError> {
    return Effect.map(this.text, (text) => encoder.encode(text).buffer as ArrayBuffer)
  }

  get urlParamsBody(): Effect.Effect<UrlParams.UrlParams, HttpClientError.HttpClientError> {
    return Effect.flatMap(this.text, (text) =>
      Effect.try({
        try: () => UrlParams.fromInput(new URLSearchParams(text)),
        catch: (cause) => this.decodeError(cause)
      }))
  }

  get formData(): Effect.Effect<FormData, HttpClientError.HttpClientError> {
    return Effect.flatMap(this.text, (text) =>
      Effect.tryPromise({
        try: () => new Response(text, { headers: this.rawHeaders }).formData(),
        catch: (cause) => this.decodeError(cause)
      }))
  }

  get stream(): Stream.Stream<Uint8Array, HttpClientError.HttpClientError> {
    if (this.body === undefined) {
      return Stream.fail(
        new HttpClientError.HttpClientError({
          reason: new HttpClientError.EmptyBodyError({
            request: this.request,
            response: this,
            description: "can not create stream from empty body"
          })
        })
      )
    }
    const body = this.body
    if (typeof body !== "string") return body.stream((cause) => this.decodeError(cause))
    return body === "" ? Stream.empty : Stream.sync(() => encoder.encode(body))
  }

  get upgrade(): Effect.Effect<Socket.Socket, HttpClientError.HttpClientError> {
    return Effect.fail(
      new HttpClientError.HttpClientError({
        reason: new HttpClientError.StatusCodeError({
          request: this.request,
          response: this,
          description: "the in-memory fake cannot hand over the connection of an HTTP upgrade"
        })
      })
    )
  }

  pipe() {
    return pipeArguments(this, arguments)
  }
}

/** A response over a whole string body (`undefined`: none, as for a 204). @internal */
export const textResponse = (
  request: HttpClientRequest.HttpClientRequest,
  url: URL,
  status: number,
  headers: Record<string, string>,
  body: string | undefined
): HttpClientResponse.HttpClientResponse => new InMemoryClientResponse(request, withoutHash(url), status, headers, body)

/**
 * A streaming body, started when the answer is made (as a web `ReadableStream` starts
 * it): the chunks it writes before the client reads are kept, then offered to the
 * reader's queue. The reader going away, or the request being aborted, cancels it.
 */
class StreamSource implements Sink {
  private buffered: Array<Uint8Array> = []
  /** How the body ended before a reader came: `null` cleanly. */
  private ended: Error | null | undefined
  private queue: Queue.Queue<Uint8Array, HttpClientError.HttpClientError | Cause.Done> | undefined
  private finished = false
  private read = false
  private toError: ((cause: unknown) => HttpClientError.HttpClientError) | undefined

  constructor(private readonly body: StreamBody, signal: AbortSignal | undefined) {
    signal?.addEventListener("abort", () => {
      if (this.finished) return
      this.body.cancel()
      this.fail(new Error("aborted"))
    }, { once: true })
    body.start(this)
  }

  write(chunk: string | Uint8Array): void {
    if (this.finished) return
    const bytes = typeof chunk === "string" ? encoder.encode(chunk) : chunk
    if (this.queue !== undefined) Queue.offerUnsafe(this.queue, bytes)
    else this.buffered.push(bytes)
  }

  end(): void {
    if (this.finished) return
    this.finished = true
    if (this.queue !== undefined) Queue.endUnsafe(this.queue)
    else this.ended = null
  }

  fail(error: Error): void {
    if (this.finished) return
    this.finished = true
    if (this.queue !== undefined) Queue.failCauseUnsafe(this.queue, Cause.fail(this.toError!(error)))
    else this.ended = error
  }

  stream(
    toError: (cause: unknown) => HttpClientError.HttpClientError
  ): Stream.Stream<Uint8Array, HttpClientError.HttpClientError> {
    return Stream.callback<Uint8Array, HttpClientError.HttpClientError>((queue) => {
      if (this.read) return Queue.fail(queue, toError(new Error("the body was read already")))
      this.read = true
      this.toError = toError
      this.queue = queue
      for (const bytes of this.buffered) Queue.offerUnsafe(queue, bytes)
      this.buffered = []
      if (this.ended === null) Queue.endUnsafe(queue)
      else if (this.ended !== undefined) Queue.failCauseUnsafe(queue, Cause.fail(toError(this.ended)))
      return Effect.addFinalizer(() =>
        Effect.sync(() => {
          if (this.finished) return
          this.finished = true
          this.body.cancel()
        })
      )
    })
  }
}

/** A response over a streaming body (a watch, a followed log), started now. @internal */
export const streamResponse = (
  request: HttpClientRequest.HttpClientRequest,
  url: URL,
  status: number,
  headers: Record<string, string>,
  body: StreamBody,
  signal: AbortSignal | undefined
): HttpClientResponse.HttpClientResponse =>
  new InMemoryClientResponse(request, withoutHash(url), status, headers, new StreamSource(body, signal))

const withoutHash = (url: URL): string => {
  const href = url.href
  const hash = href.indexOf("#")
  return hash === -1 ? href : href.slice(0, hash)
}

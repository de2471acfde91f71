/**
 * An `HttpClient` over an undici dispatcher: what `@effect/platform-node`'s
 * `NodeHttpClient.makeUndici` builds, without that package (it brings undici 8's entry
 * module, `node:http`/`node:https` and the `node:http` client with it). Requests go
 * through the dispatcher's `request` (undici's parts: `./undici.ts`), or the same call of
 * the HTTP/2 pool (`http2.ts`), whose answer's body is the `Http2Stream` itself (both are an
 * `Undici.Requester`); undici's own timeouts are the dispatcher's
 * (the Node transport turns them off: a quiet watch must not be cut), everything else is
 * timed by Effect.
 *
 * A gzip answer (`Content-Encoding: gzip`, what kube-apiserver sends for large answers to
 * a client that asked for it) is decoded as it arrives: the answer's body is piped through one
 * `zlib.createGunzip()` (`gunzipOptions`), so a list or a watch is never held whole, and
 * `source.body` is the decoded Readable (which `body.ts` reads in flowing mode). The
 * response's headers are those of the decoded body: no `content-encoding`, and no
 * `content-length` (it counted the compressed bytes). A corrupt gzip body fails as an
 * `HttpClientError` (`DecodeError`). Undici's own decompress interceptor is not used: it is
 * marked experimental (it prints a process warning when built) and passes error answers
 * through undecoded by default.
 *
 * No body is read whole past `RequestPolicy`'s `maxResponseBytes` (read from the fiber
 * that sends the request, the application's own requests included): the bytes are counted
 * as they arrive, before and after gunzip, and the body (with its connection) is destroyed
 * at the first chunk past the limit, which fails the read with `LimitReached`. Headers past
 * `maxHeaderBytes` (undici's `maxHeaderSize`, and the HTTP/2 pool's, set on the dispatcher) fail the same way.
 *
 * A request the Kubernetes client sends (`client.ts` sets `currentCredentials` for it) runs
 * in the client's own `kube.<verb>` span, which carries the HTTP attributes and whose trace
 * context (`traceparent`, `b3`) `client.ts` puts on the request: it is sent without
 * `HttpClient.make`'s `http.client` span around it, which per request rebuilt the URL,
 * redacted every request and response header into attributes and registered the response
 * with a FinalizationRegistry. Interruption still aborts the request and a body being read,
 * and the response is the dispatcher's own (`source`), not a wrapper. A request given a
 * `currentDeadline` is aborted by the request path's timer through it. Any other request
 * (the application's own, through the same HttpClient) goes through `HttpClient.make` with
 * its span as before.
 *
 * @internal
 */
import * as NodeStream from "@effect/platform-node-shared/NodeStream"
import * as Effect from "effect/Effect"
import type * as Fiber from "effect/Fiber"
import * as Cookies from "effect/http/Cookies"
import * as Headers from "effect/http/Headers"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientError from "effect/http/HttpClientError"
import type * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as HttpClientResponse from "effect/http/HttpClientResponse"
import * as HttpIncomingMessage from "effect/http/HttpIncomingMessage"
import * as Url from "effect/http/Url"
import * as UrlParams from "effect/http/UrlParams"
import * as Inspectable from "effect/Inspectable"
import * as Option from "effect/Option"
import { pipeArguments } from "effect/Pipeable"
import * as Result from "effect/Result"
import type * as Schema from "effect/Schema"
import type * as Socket from "effect/socket/Socket"
import type * as Stream from "effect/Stream"
import * as StreamModule from "effect/Stream"
import * as NodeStreams from "node:stream"
import * as Zlib from "node:zlib"
// Installs the request API on undici's dispatchers (see undici.ts).
import "./undici.js"
import type * as Undici from "./undici.js"
import { RequestPolicy } from "../../RequestPolicy.js"
import {
  abortRequest,
  currentCredentials,
  currentDeadline,
  headerOf,
  isHeadersOverflow,
  LimitReached,
  readTextWithin,
  type TransportResponse
} from "./contract.js"
import { ByteRuns } from "../stream/lines.js"
import { describedBody, transportReason } from "./transportCause.js"

type Body = Exclude<Undici.Dispatcher.RequestOptions["body"], undefined>

const convertBody = (body: HttpClientRequest.HttpClientRequest["body"]): Effect.Effect<Body> => {
  switch (body._tag) {
    case "Empty":
      return Effect.succeed(null)
    case "Uint8Array":
    case "Raw":
      return Effect.succeed(body.body as Body)
    case "FormData":
      return Effect.succeed(body.formData as unknown as Body)
    case "Stream":
      return NodeStream.toReadable(body.stream) as Effect.Effect<NodeStreams.Readable>
  }
}

const send = (
  dispatcher: Undici.Requester,
  request: HttpClientRequest.HttpClientRequest,
  url: URL,
  headers: Record<string, string>,
  signal: AbortSignal,
  body: Body
): Promise<Undici.Answer> =>
  dispatcher.request({
    signal,
    method: request.method,
    headers,
    origin: url.origin,
    path: url.pathname + url.search + url.hash,
    body
  })

/** Options of `make`. */
export interface Options {
  /** The `maxHeaderSize` the dispatcher was built with, which a `LimitReached` names. */
  readonly maxHeaderBytes?: number | undefined
}

// the message names the cause (`connect ECONNREFUSED ...`), not only `cause` (see transportCause.ts); headers
// past maxHeaderSize are a limit crossed, which the request path turns into a LimitExceeded
const transportError = (request: HttpClientRequest.HttpClientRequest, maxHeaderBytes: number | undefined) =>
(cause: unknown) =>
  new HttpClientError.HttpClientError({
    reason: maxHeaderBytes !== undefined && isHeadersOverflow(cause)
      ? new HttpClientError.TransportError({
        request,
        cause: new LimitReached("maxHeaderBytes", maxHeaderBytes, "the head of the answer (its status line and headers)")
      })
      : transportReason(request, cause)
  })

/**
 * What undici and the HTTP/2 pool need of an abort signal (`aborted`, one `abort` listener):
 * an AbortController builds an EventTarget per request (its `signal`), which costs more than
 * the rest of this module's work on a GET. Both fail an aborted request with undici's
 * `RequestAbortedError`.
 */
class Abort {
  aborted = false
  readonly reason = undefined
  private listener: (() => void) | undefined = undefined
  addEventListener(_type: "abort", listener: () => void): void {
    this.listener = listener
  }
  removeEventListener(_type: "abort", _listener: () => void): void {
    this.listener = undefined
  }
  abort(): void {
    if (this.aborted) return
    this.aborted = true
    const listener = this.listener
    this.listener = undefined
    listener?.()
  }
}

/**
 * The function that aborts a request, made here rather than written where it is stored:
 * V8 allocates a function literal assigned straight to a property in the old generation
 * (its parser takes it for a method), where it keeps what it captures alive until the next
 * full collection (see `test/pretenure.test.ts`).
 */
const abortWith = (controller: Abort) => () => controller.abort()

/**
 * A request of the Kubernetes client: sent under the caller's span (see the module
 * comment). The request is aborted when the fiber is interrupted while the answer is
 * awaited or its body read.
 */
const sendDirect = <A, E>(
  dispatcher: Undici.Requester,
  request: HttpClientRequest.HttpClientRequest,
  fiber: Fiber.Fiber<A, E>,
  maxHeaderBytes: number | undefined
): Effect.Effect<HttpClientResponse.HttpClientResponse, HttpClientError.HttpClientError> => {
  const urlResult = Url.make(request.url, request.urlParams, Option.getOrUndefined(request.hash))
  if (Result.isFailure(urlResult)) {
    return Effect.fail(
      new HttpClientError.HttpClientError({
        reason: new HttpClientError.InvalidUrlError({ request, cause: urlResult.failure })
      })
    )
  }
  const url = urlResult.success
  const deadline = fiber.getRef(currentDeadline)
  if (deadline !== undefined && deadline.expired) {
    return Effect.fail(transportError(request, undefined)(new Error("the request timed out before it was sent")))
  }
  const maxBytes = fiber.getRef(RequestPolicy).maxResponseBytes
  // the request path (client.ts) has put the trace context on the request already
  const headers = request.headers
  const start = (body: Body) =>
    Effect.callback<HttpClientResponse.HttpClientResponse, HttpClientError.HttpClientError>((resume) => {
      const controller = new Abort()
      // the request path's timer aborts the request, and later the reading of its body
      if (deadline !== undefined) deadline.abort = abortWith(controller)
      send(dispatcher, request, url, headers, controller as unknown as AbortSignal, body).then(
        (response) =>
          resume(
            Effect.succeed(
              new ClientResponseImpl(request, url, decoded(request.method, response), controller, maxBytes)
            )
          ),
        (cause) => resume(Effect.fail(transportError(request, maxHeaderBytes)(cause)))
      )
      return Effect.sync(() => controller.abort())
    })
  const { body } = request
  // the bodies the Kubernetes client sends are in memory: no Effect to convert them
  return body._tag === "Empty"
    ? start(null)
    : body._tag === "Uint8Array" || body._tag === "Raw"
    ? start(body.body as Body)
    : Effect.flatMap(convertBody(body), start)
}

/** @internal */
export const make = (dispatcher: Undici.Requester, options: Options = {}): HttpClient.HttpClient => {
  const maxHeaderBytes = options.maxHeaderBytes
  const traced = HttpClient.make((request, url, signal) =>
    Effect.flatMap(convertBody(request.body), (body) =>
      Effect.withFiber((fiber) => {
        const maxBytes = fiber.getRef(RequestPolicy).maxResponseBytes
        return Effect.map(
          Effect.tryPromise({
            try: () => send(dispatcher, request, url, request.headers, signal, body),
            catch: transportError(request, maxHeaderBytes)
          }),
          (response): HttpClientResponse.HttpClientResponse =>
            new ClientResponseImpl(request, url, decoded(request.method, response), undefined, maxBytes)
        )
      }))
  )
  return fromExecute((request) =>
    Effect.withFiber((fiber) =>
      fiber.getRef(currentCredentials) === undefined
        ? traced.execute(request)
        : sendDirect(dispatcher, request, fiber, maxHeaderBytes)
    )
  )
}

/**
 * An HttpClient that sends each request with `execute`. `HttpClient.makeWith(Effect.flatMap(execute),
 * Effect.succeed)` alone would wrap every request in an `Effect.succeed` and a `flatMap` first (two
 * such clients sit on the request path of every operation); its `postprocess` and `preprocess` stay
 * for the clients made from this one (`HttpClient.mapRequest`, `transform`, ...).
 *
 * @internal
 */
export const fromExecute = (
  execute: (
    request: HttpClientRequest.HttpClientRequest
  ) => Effect.Effect<HttpClientResponse.HttpClientResponse, HttpClientError.HttpClientError>
): HttpClient.HttpClient =>
  Object.assign(
    HttpClient.makeWith<never, never, HttpClientError.HttpClientError, never>(Effect.flatMap(execute), Effect.succeed),
    { execute }
  )

const noopErrorHandler = (_: unknown): void => undefined

/**
 * What the response reads: the dispatcher's answer, or, for a gzip answer, the same with the
 * decoded body and the headers that describe it.
 */
interface Source {
  readonly statusCode: number
  readonly headers: Undici.Answer["headers"]
  readonly body: NodeStreams.Readable
  /** Undici's body, the bytes as sent, when `body` is their gunzipped form (what `maxResponseBytes` counts too). */
  readonly sent: NodeStreams.Readable | undefined
}

/** Whether an answer is gzip-encoded with a body to decode. Other encodings are left as they are. */
const isGzip = (method: string, response: Undici.Answer): boolean => {
  const encoding = response.headers["content-encoding"]
  if (encoding === undefined || method === "HEAD") return false
  if (response.statusCode === 204 || response.statusCode === 304) return false
  const value = (typeof encoding === "string" ? encoding : encoding.join(",")).trim().toLowerCase()
  return value === "gzip" || value === "x-gzip"
}

/**
 * The inflater's output buffer. zlib's default (16 KiB) cuts a 2 MB page into ~120 chunks,
 * each a stream event, a slice and an entry of the list joined at the end: the decoding of a
 * gzipped page of 500 pods cost ~9.5 ms of CPU against ~5.5 ms with 128 KiB, which is what
 * one `gunzipSync` of the whole page costs (`.tmp/gunzip-micro.ts`). A chunk is handed on as
 * soon as the input written so far is inflated, whatever this size, so a stream is not
 * delayed by it.
 */
const gunzipOptions: Zlib.ZlibOptions = { chunkSize: 128 * 1024 }

const decoded = (method: string, response: Undici.Answer): Source => {
  if (!isGzip(method, response)) {
    return { statusCode: response.statusCode, headers: response.headers, body: response.body, sent: undefined }
  }
  const { "content-encoding": _encoding, "content-length": _length, ...headers } = response.headers
  // pipeline: a failure of either side destroys both, and destroying the decoder (a consumer
  // that stops reading) destroys the answer's body, which releases its connection (on h2, resets its stream).
  const body = NodeStreams.pipeline(response.body, Zlib.createGunzip(gunzipOptions), noopErrorHandler)
  return { statusCode: response.statusCode, headers, body, sent: response.body }
}

/** The announced length of a body, when there is one to take as a size hint (not for HEAD, 204, 304). */
const contentLength = (method: string, source: Source): number | undefined => {
  if (method === "HEAD" || source.statusCode === 204 || source.statusCode === 304) return undefined
  const value = source.headers["content-length"]
  const length = typeof value === "string" ? Number(value) : NaN
  return Number.isSafeInteger(length) && length > 0 ? length : undefined
}

const asBuffer = (bytes: Uint8Array): Buffer =>
  Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)

/** Above this, an announced length is not allocated up front (a server may announce more than it sends). */
const preallocateAtMost = 64 * 1024 * 1024

const tooLarge = (maxBytes: number) => new LimitReached("maxResponseBytes", maxBytes, "the answer")

/**
 * Every byte of a Readable, read in flowing mode, handed to `done` (not through a promise:
 * see `text`). With a `content-length` the chunks are copied as they arrive into one
 * buffer of that size (no list of chunks kept, no concatenation at the end); without one
 * (a gzip answer, a chunked one) they are kept and joined once. The listeners are removed
 * when the body ends or fails, and the reader lets go of the bytes before it hands them
 * on: undici's body outlives the answer, and undici's own `text()` leaves its listeners
 * on it, and through them its promise and the text.
 *
 * More than `maxBytes` (announced, or counted as they come; for a gunzipped body, those
 * `sent` too) destroys the body, which closes its connection, and fails with `LimitReached`.
 */
const readBody = (
  readable: NodeStreams.Readable,
  length: number | undefined,
  maxBytes: number,
  sent: NodeStreams.Readable | undefined,
  done: (error: unknown, bytes: Buffer | undefined) => void
): void => {
  if (readable.errored !== null) return done(readable.errored, undefined)
  if (readable.readableEnded || readable.destroyed) {
    return done(new Error("the body was already read or closed"), undefined)
  }
  if (length !== undefined && length > maxBytes) {
    readable.destroy()
    return done(tooLarge(maxBytes), undefined)
  }
  let buffer = length !== undefined && length <= preallocateAtMost ? Buffer.allocUnsafe(length) : undefined
  let offset = 0
  let sentBytes = 0
  // without a length, the chunks as they came, small ones coalesced (a body in 1-byte frames costs its bytes)
  let chunks: ByteRuns | undefined
  const overLimit = () => {
    onError(tooLarge(maxBytes))
    readable.destroy()
  }
  const onSent = (chunk: Buffer) => {
    sentBytes += chunk.length
    if (sentBytes > maxBytes) overLimit()
  }
  const onData = (chunk: Buffer) => {
    if (offset + chunk.length > maxBytes) return overLimit()
    if (buffer !== undefined) {
      if (offset + chunk.length <= buffer.length) {
        offset += chunk.copy(buffer, offset)
        return
      }
      // more than announced: what came so far becomes the first chunk
      chunks = new ByteRuns()
      chunks.push(buffer.subarray(0, offset))
      buffer = undefined
    }
    ;(chunks ??= new ByteRuns()).push(chunk)
    offset += chunk.length
  }
  const stop = () => {
    readable.off("data", onData)
    readable.off("end", onEnd)
    readable.off("error", onError)
    readable.off("close", onClose)
    sent?.off("data", onSent)
  }
  const onEnd = () => {
    stop()
    const bytes = buffer !== undefined
      ? buffer.subarray(0, offset)
      : chunks === undefined
      ? Buffer.alloc(0)
      : asBuffer(chunks.take())
    buffer = undefined
    chunks = undefined
    done(undefined, bytes)
  }
  const onError = (error: unknown) => {
    stop()
    buffer = undefined
    chunks = undefined
    done(error, undefined)
  }
  const onClose = () => {
    if (!readable.readableEnded) onError(new Error("the body closed before it ended"))
  }
  sent?.on("data", onSent)
  readable.on("data", onData)
  readable.on("end", onEnd)
  readable.on("error", onError)
  readable.on("close", onClose)
}

/** Every byte of a body within `maxBytes`, as a promise (the bodies read as FormData or ArrayBuffer). */
const readAll = (source: Source, length: number | undefined, maxBytes: number): Promise<Buffer> =>
  new Promise((resolve, reject) =>
    readBody(
      source.body,
      length,
      maxBytes,
      source.sent,
      (error, bytes) => (bytes !== undefined ? resolve(bytes) : reject(error))
    )
  )

/** UTF-8 text, without a byte order mark (as `Response.text()` and undici's `text()` decode it). */
const utf8 = (bytes: Buffer): string =>
  bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf
    ? bytes.toString("utf8", 3)
    : bytes.toString("utf8")

/** The Node transport's response: everything a `TransportResponse` may offer the request path, it offers. */
class ClientResponseImpl extends Inspectable.Class
  implements HttpClientResponse.HttpClientResponse, Required<TransportResponse>
{
  readonly [HttpIncomingMessage.TypeId]: typeof HttpIncomingMessage.TypeId
  readonly [HttpClientResponse.TypeId]: typeof HttpClientResponse.TypeId

  constructor(
    readonly request: HttpClientRequest.HttpClientRequest,
    /** The URL the request was sent to (its hash is not part of the response's `url`). */
    private readonly sentTo: URL,
    readonly source: Source,
    /** Aborts the request: set when this response, not `HttpClient.make`, answers for interruption. */
    private readonly controller: { readonly abort: () => void } | undefined,
    /** The most bytes a whole body may have (`RequestPolicy`'s `maxResponseBytes` when the request was sent). */
    private readonly maxBytes: number
  ) {
    super()
    this[HttpIncomingMessage.TypeId] = HttpIncomingMessage.TypeId
    this[HttpClientResponse.TypeId] = HttpClientResponse.TypeId
    source.body.on("error", noopErrorHandler)
  }

  get status(): number {
    return this.source.statusCode
  }

  /** The URL the request was sent to, without its hash (undici's `request` follows no redirects). */
  get url(): string {
    const href = this.sentTo.href
    const hash = href.indexOf("#")
    return hash === -1 ? href : href.slice(0, hash)
  }

  get statusText(): string | undefined {
    return undefined
  }

  private cachedCookies?: Cookies.Cookies
  get cookies(): Cookies.Cookies {
    if (this.cachedCookies !== undefined) return this.cachedCookies
    const header = this.source.headers["set-cookie"]
    return this.cachedCookies = header === undefined
      ? Cookies.empty
      : Cookies.fromSetCookie(typeof header === "string" ? [header] : header)
  }

  /** Aborts the request and its body (a no-op once the body is read): see `abortRequest`. */
  [abortRequest](): void {
    this.controller?.abort()
  }

  private cachedHeaders?: Headers.Headers
  get headers(): Headers.Headers {
    return this.cachedHeaders ??= Headers.fromInput(this.source.headers as Headers.Input)
  }

  /** One header (see `headerOf`); the dispatchers' names are lowercase already. */
  [headerOf](name: string): string | undefined {
    const value = this.source.headers[name]
    return value === undefined || typeof value === "string" ? value : value.join(", ")
  }

  /** A body read that aborts the request when the fiber reading it is interrupted. */
  private interruptible<A, E>(effect: Effect.Effect<A, E>): Effect.Effect<A, E> {
    const controller = this.controller
    return controller === undefined ? effect : Effect.onInterrupt(effect, () => Effect.sync(() => controller.abort()))
  }

  get remoteAddress(): Option.Option<string> {
    return Option.none()
  }

  private decodeError(cause: unknown): HttpClientError.HttpClientError {
    return new HttpClientError.HttpClientError({
      reason: new HttpClientError.DecodeError(describedBody({ request: this.request, response: this, cause }))
    })
  }

  get stream(): Stream.Stream<Uint8Array, HttpClientError.HttpClientError> {
    const stream = NodeStream.fromReadable<Uint8Array, HttpClientError.HttpClientError>({
      evaluate: () => this.source.body,
      onError: (cause) => this.decodeError(cause)
    })
    const controller = this.controller
    return controller === undefined ? stream : StreamModule.ensuring(stream, Effect.sync(() => controller.abort()))
  }

  get json(): Effect.Effect<Schema.Json, HttpClientError.HttpClientError> {
    return Effect.flatMap(this.text, (text) =>
      Effect.try({
        try: () => text === "" ? null : JSON.parse(text) as Schema.Json,
        catch: (cause) => this.decodeError(cause)
      }))
  }

  private bodyRead = false
  /**
   * The body as text, read once: a second read fails. By the time a large body has
   * arrived, what was made when it started (this response, undici's body, a promise of
   * the text, the reader's closures) has outlived a young-generation collection or two
   * and sits in the old generation, and whatever those point to survives every young
   * collection until the next full one: a list of 10k pods in pages of 500 left ~37 MB of
   * dead page texts there (its peak RSS was 1.7x the floor's). So the text is made when
   * the last byte has come and handed straight to the fiber, kept by nothing made before.
   */
  get text(): Effect.Effect<string, HttpClientError.HttpClientError> {
    return this[readTextWithin](this.maxBytes)
  }

  /** The body as text (see `text`), within `maxBytes`: the request path reads an error answer within less. */
  [readTextWithin](maxBytes: number): Effect.Effect<string, HttpClientError.HttpClientError> {
    const controller = this.controller
    return Effect.callback<string, HttpClientError.HttpClientError>((resume) => {
      if (this.bodyRead) return resume(Effect.fail(this.decodeError(new Error("the body has already been read"))))
      this.bodyRead = true
      const { source } = this
      readBody(source.body, contentLength(this.request.method, source), maxBytes, source.sent, (error, bytes) => {
        if (bytes === undefined) return resume(Effect.fail(this.decodeError(error)))
        let text: string
        try {
          text = utf8(bytes)
        } catch (cause) {
          // longer than a string can be
          return resume(Effect.fail(this.decodeError(cause)))
        }
        resume(Effect.succeed(text))
      })
      // interrupted while the body comes: the request is aborted (as `interruptible` does, without its frame)
      return controller === undefined ? undefined : Effect.sync(() => controller.abort())
    })
  }

  get urlParamsBody(): Effect.Effect<UrlParams.UrlParams, HttpClientError.HttpClientError> {
    return Effect.flatMap(this.text, (text) =>
      Effect.try({
        try: () => UrlParams.fromInput(new URLSearchParams(text)),
        catch: (cause) => this.decodeError(cause)
      }))
  }

  private bytes(): Promise<Buffer> {
    return readAll(this.source, contentLength(this.request.method, this.source), this.maxBytes)
  }

  private formDataBody?: Effect.Effect<FormData, HttpClientError.HttpClientError>
  get formData(): Effect.Effect<FormData, HttpClientError.HttpClientError> {
    return this.interruptible(this.formDataBody ??= Effect.tryPromise({
      try: () =>
        this.bytes().then((bytes) =>
          new Response(new Uint8Array(bytes), { headers: this.headers as Record<string, string> }).formData()
        ),
      catch: (cause) => this.decodeError(cause)
    }).pipe(Effect.cached, Effect.runSync))
  }

  private arrayBufferBody?: Effect.Effect<ArrayBuffer, HttpClientError.HttpClientError>
  get arrayBuffer(): Effect.Effect<ArrayBuffer, HttpClientError.HttpClientError> {
    return this.interruptible(this.arrayBufferBody ??= Effect.tryPromise({
      try: () =>
        this.bytes().then((bytes) =>
          bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer
        ),
      catch: (cause) => this.decodeError(cause)
    }).pipe(Effect.cached, Effect.runSync))
  }

  /** Undici's `request` hands over no connection: every answer, a 101 included, fails as fetch's does. */
  get upgrade(): Effect.Effect<Socket.Socket, HttpClientError.HttpClientError> {
    return Effect.fail(
      new HttpClientError.HttpClientError({
        reason: new HttpClientError.StatusCodeError({
          request: this.request,
          response: this,
          description: "this client cannot hand over the connection of an HTTP upgrade"
        })
      })
    )
  }

  pipe() {
    return pipeArguments(this, arguments)
  }

  toJSON(): unknown {
    return HttpIncomingMessage.inspect(this, {
      _id: "effect/http/HttpClientResponse",
      request: this.request.toJSON(),
      status: this.status
    })
  }
}

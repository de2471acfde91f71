/**
 * An `HttpClient` over an undici dispatcher: what `@effect/platform-node`'s
 * `NodeHttpClient.makeUndici` builds, without loading that entry (it brings undici's
 * entry module, `node:http`/`node:https` and the `node:http` client with it). Requests go
 * through the dispatcher's `request` (undici's parts: `./undici.ts`); undici's own timeouts are the dispatcher's
 * (the Node transport turns them off: a quiet watch must not be cut), everything else is
 * timed by Effect.
 *
 * @internal
 */
import * as Cookies from "@effect/platform/Cookies"
import * as Headers from "@effect/platform/Headers"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientError from "@effect/platform/HttpClientError"
import type * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as HttpIncomingMessage from "@effect/platform/HttpIncomingMessage"
import * as UrlParams from "@effect/platform/UrlParams"
import * as NodeStream from "@effect/platform-node/NodeStream"
import * as Effect from "effect/Effect"
import * as Inspectable from "effect/Inspectable"
import * as Option from "effect/Option"
import type * as Stream from "effect/Stream"
import type { Readable } from "node:stream"
// Installs the request API on undici's dispatchers (see undici.ts).
import "./undici.js"
import type * as Undici from "./undici.js"

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
      return NodeStream.toReadable(body.stream) as Effect.Effect<Readable>
  }
}

/** @internal */
export const make = (dispatcher: Undici.Dispatcher): HttpClient.HttpClient =>
  HttpClient.make((request, url, signal) =>
    Effect.flatMap(convertBody(request.body), (body) =>
      Effect.map(
        Effect.tryPromise({
          try: () =>
            dispatcher.request({
              signal,
              method: request.method,
              headers: request.headers,
              origin: url.origin,
              path: url.pathname + url.search + url.hash,
              body
            }),
          catch: (cause) => new HttpClientError.RequestError({ request, reason: "Transport", cause })
        }),
        (response) => new ClientResponseImpl(request, response)
      ))
  )

const noopErrorHandler = (_: unknown): void => undefined

class ClientResponseImpl extends Inspectable.Class implements HttpClientResponse.HttpClientResponse {
  readonly [HttpIncomingMessage.TypeId]: HttpIncomingMessage.TypeId
  readonly [HttpClientResponse.TypeId]: HttpClientResponse.TypeId

  constructor(
    readonly request: HttpClientRequest.HttpClientRequest,
    readonly source: Undici.Dispatcher.ResponseData
  ) {
    super()
    this[HttpIncomingMessage.TypeId] = HttpIncomingMessage.TypeId
    this[HttpClientResponse.TypeId] = HttpClientResponse.TypeId
    source.body.on("error", noopErrorHandler)
  }

  get status(): number {
    return this.source.statusCode
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
      : Cookies.fromSetCookie(Array.isArray(header) ? header : [header])
  }

  get headers(): Headers.Headers {
    return Headers.fromInput(this.source.headers as Headers.Input)
  }

  get remoteAddress(): Option.Option<string> {
    return Option.none()
  }

  private decodeError(cause: unknown): HttpClientError.ResponseError {
    return new HttpClientError.ResponseError({ request: this.request, response: this, reason: "Decode", cause })
  }

  get stream(): Stream.Stream<Uint8Array, HttpClientError.ResponseError> {
    return NodeStream.fromReadable<HttpClientError.ResponseError, Uint8Array>(
      () => this.source.body,
      (cause) => this.decodeError(cause)
    )
  }

  get json(): Effect.Effect<unknown, HttpClientError.ResponseError> {
    return Effect.tryMap(this.text, {
      try: (text) => text === "" ? null : JSON.parse(text) as unknown,
      catch: (cause) => this.decodeError(cause)
    })
  }

  private textBody?: Effect.Effect<string, HttpClientError.ResponseError>
  get text(): Effect.Effect<string, HttpClientError.ResponseError> {
    return this.textBody ??= Effect.tryPromise({
      try: () => this.source.body.text(),
      catch: (cause) => this.decodeError(cause)
    }).pipe(Effect.cached, Effect.runSync)
  }

  get urlParamsBody(): Effect.Effect<UrlParams.UrlParams, HttpClientError.ResponseError> {
    return Effect.flatMap(this.text, (text) =>
      Effect.try({
        try: () => UrlParams.fromInput(new URLSearchParams(text)),
        catch: (cause) => this.decodeError(cause)
      }))
  }

  private formDataBody?: Effect.Effect<FormData, HttpClientError.ResponseError>
  get formData(): Effect.Effect<FormData, HttpClientError.ResponseError> {
    return this.formDataBody ??= Effect.tryPromise({
      try: () => this.source.body.formData() as Promise<FormData>,
      catch: (cause) => this.decodeError(cause)
    }).pipe(Effect.cached, Effect.runSync)
  }

  private arrayBufferBody?: Effect.Effect<ArrayBuffer, HttpClientError.ResponseError>
  get arrayBuffer(): Effect.Effect<ArrayBuffer, HttpClientError.ResponseError> {
    return this.arrayBufferBody ??= Effect.tryPromise({
      try: () => this.source.body.arrayBuffer(),
      catch: (cause) => this.decodeError(cause)
    }).pipe(Effect.cached, Effect.runSync)
  }

  toJSON(): unknown {
    return HttpIncomingMessage.inspect(this, {
      _id: "@effect/platform/HttpClientResponse",
      request: this.request.toJSON(),
      status: this.status
    })
  }
}

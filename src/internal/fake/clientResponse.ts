/**
 * The in-memory `HttpClient`'s answer to a request whose body is a whole string (every
 * answer but a watch, a followed log or a fault that cuts a body): an `HttpClientResponse`
 * over the string itself. A web `Response` (what `HttpClientResponse.fromWeb` wraps) costs
 * ~130 µs to build and read back through its byte stream, more than the fake takes to
 * answer a GET; this hands the client the string it will decode.
 *
 * @internal
 */
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
import type * as Schema from "effect/Schema"
import type * as Socket from "effect/socket/Socket"
import * as Stream from "effect/Stream"

const encoder = new TextEncoder()

class TextClientResponse extends Inspectable.Class implements HttpClientResponse.HttpClientResponse {
  readonly [HttpIncomingMessage.TypeId]: typeof HttpIncomingMessage.TypeId
  readonly [HttpClientResponse.TypeId]: typeof HttpClientResponse.TypeId

  constructor(
    readonly request: HttpClientRequest.HttpClientRequest,
    readonly url: string,
    readonly status: number,
    private readonly rawHeaders: Record<string, string>,
    /** `undefined`: no body at all (a 204), as a web `Response` with a null body. */
    private readonly body: string | undefined
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
    return this.cachedHeaders = this.body !== undefined && headers["content-type"] === undefined
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

  get text(): Effect.Effect<string, HttpClientError.HttpClientError> {
    return Effect.succeed(this.body ?? "")
  }

  get json(): Effect.Effect<Schema.Json, HttpClientError.HttpClientError> {
    const text = this.body ?? ""
    return Effect.try({
      try: () => (text === "" ? null : JSON.parse(text)),
      catch: (cause) => this.decodeError(cause)
    })
  }

  get arrayBuffer(): Effect.Effect<ArrayBuffer, HttpClientError.HttpClientError> {
    return Effect.sync(() => encoder.encode(this.body ?? "").buffer as ArrayBuffer)
  }

  get urlParamsBody(): Effect.Effect<UrlParams.UrlParams, HttpClientError.HttpClientError> {
    return Effect.try({
      try: () => UrlParams.fromInput(new URLSearchParams(this.body ?? "")),
      catch: (cause) => this.decodeError(cause)
    })
  }

  get formData(): Effect.Effect<FormData, HttpClientError.HttpClientError> {
    return Effect.tryPromise({
      try: () => new Response(this.body ?? "", { headers: this.rawHeaders }).formData(),
      catch: (cause) => this.decodeError(cause)
    })
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
    return this.body === "" ? Stream.empty : Stream.sync(() => encoder.encode(this.body!))
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
    // eslint-disable-next-line prefer-rest-params
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
): HttpClientResponse.HttpClientResponse => {
  const href = url.href
  const hash = href.indexOf("#")
  return new TextClientResponse(request, hash === -1 ? href : href.slice(0, hash), status, headers, body)
}

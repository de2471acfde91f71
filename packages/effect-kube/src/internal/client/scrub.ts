/**
 * What errors, logs and spans may show of a request and its answer: the one place that
 * says it. A query is shown with the values of the Kubernetes API's own parameters only
 * (any other may be a secret given to `Kube.request`); a body that is not a Status is
 * shown by its length and content type, never its text (a proxy that echoes the request
 * would echo the token); a request keeps only the headers known to be harmless and no
 * body. Messages built elsewhere (`ApiError`, `RequestTimeout`, transport errors) take
 * their text from here; so do the server's texts that quote the request's own credentials
 * back, which show `<redacted>` in their place (`redactApiError`, `redactText`).
 *
 * @internal
 */
import * as Base64 from "effect/encoding/Base64"
import * as Headers from "effect/http/Headers"
import * as HttpClientError from "effect/http/HttpClientError"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import type * as HttpClientResponse from "effect/http/HttpClientResponse"
import type * as HttpMethod from "effect/http/HttpMethod"
import * as UrlParams from "effect/http/UrlParams"
import * as Redacted from "effect/Redacted"
import { ApiError, ConnectionFailure, type Status } from "../../Errors.js"
import type { Credentials } from "../../KubeConfig.js"

/**
 * The query parameters of the Kubernetes API (from its OpenAPI spec) whose values errors
 * show: selectors, resource versions, paging, options. `command` (exec) is not one: a
 * command line may hold a secret.
 */
const shownParameters: ReadonlySet<string> = new Set([
  "allowWatchBookmarks",
  "container",
  "continue",
  "dryRun",
  "fieldManager",
  "fieldSelector",
  "fieldValidation",
  "follow",
  "force",
  "gracePeriodSeconds",
  "ignoreStoreReadErrorWithClusterBreakingPotential",
  "insecureSkipTLSVerifyBackend",
  "labelSelector",
  "limit",
  "limitBytes",
  "orphanDependents",
  "path",
  "ports",
  "pretty",
  "previous",
  "propagationPolicy",
  "resourceVersion",
  "resourceVersionMatch",
  "sendInitialEvents",
  "shardSelector",
  "sinceSeconds",
  "sinceTime",
  "stderr",
  "stdin",
  "stdout",
  "stream",
  "tailLines",
  "timeoutSeconds",
  "timestamps",
  "tty",
  "watch"
])

/** What stands for a value errors do not show. */
export const hidden = "<redacted>"

/**
 * A query as errors show it (`?labelSelector=app%3Dweb&token=<redacted>`), from its values
 * or from its text (without the `?`): the values of parameters the API does not define are
 * replaced, and so is the name of one that is not a plain word.
 */
export const shownQuery = (query: Readonly<Record<string, string | number | boolean | undefined>> | string): string => {
  const parts: Array<string> = []
  const add = (key: string, value: string) => {
    // encoded as the request sends it (`URLSearchParams`), so that the path reads as it was sent
    if (shownParameters.has(key)) parts.push(new URLSearchParams([[key, value]]).toString())
    else parts.push(`${/^[A-Za-z0-9_.-]{1,64}$/.test(key) ? key : hidden}=${hidden}`)
  }
  if (typeof query === "string") {
    for (const [key, value] of new URLSearchParams(query)) add(key, value)
  } else {
    for (const key in query) {
      const value = query[key]
      if (value !== undefined) add(key, String(value))
    }
  }
  return parts.length === 0 ? "" : `?${parts.join("&")}`
}

/** A URL as errors show it: its query as `shownQuery` shows it, no fragment, no credentials. */
export const shownUrl = (url: string): string => {
  const redacted = url.includes("@") ? UrlParams.redactUrl(url, []) : url
  const hash = redacted.indexOf("#")
  const withoutHash = hash === -1 ? redacted : redacted.slice(0, hash)
  const start = withoutHash.indexOf("?")
  return start === -1 ? withoutHash : `${withoutHash.slice(0, start)}${shownQuery(withoutHash.slice(start + 1))}`
}

/** `a text/html body of 1,234 bytes`: how a body that is not a Status is named. */
export const bodySummary = (bytes: number, contentType: string | undefined): string => {
  const type = contentType?.split(";")[0]?.trim().toLowerCase()
  const named = type !== undefined && /^[a-z0-9.+-]+\/[a-z0-9.+-]+$/.test(type) ? `${type} ` : ""
  return `a ${named}body of ${bytes.toLocaleString("en-US")} bytes`
}

/** Headers an error may show; any other (Authorization, a header given to `Kube.request`) may hold a secret. */
const shownHeader = (name: string): boolean =>
  name === "accept" || name === "user-agent" || name === "content-type" || name.startsWith("impersonate-")

/** A request as errors show it: only the headers known to be harmless, no body, and its URL as `shownUrl` shows it. */
const shownRequest = (request: HttpClientRequest.HttpClientRequest): HttpClientRequest.HttpClientRequest =>
  HttpClientRequest.make(request.method as HttpMethod.HttpMethod)(shownUrl(request.url), {
    urlParams: UrlParams.fromInput(
      request.urlParams.params.map(([key, value]) => [key, shownParameters.has(key) ? value : hidden] as const)
    ),
    headers: Headers.removeMany(request.headers, Object.keys(request.headers).filter((name) => !shownHeader(name)))
  })

/** The response as errors show it: its status and the shown request, never its body. */
const shownResponse = (
  response: HttpClientResponse.HttpClientResponse,
  request: HttpClientRequest.HttpClientRequest
): HttpClientResponse.HttpClientResponse =>
  Object.create(response, {
    request: { value: request, enumerable: true },
    toJSON: {
      value: () => ({ _id: "effect/http/HttpClientResponse", request: request.toJSON(), status: response.status })
    }
  })

/**
 * Transport errors carry the request they failed on (`error.request`, `error.reason.request`)
 * with its headers and body: `console.log(error)` or an inspection of the cause would show
 * the bearer token and the body (a Secret's data), and their message the query. Every
 * HttpClientError that leaves an operation goes through here, and comes out with the same
 * reason around a request that holds none of them.
 */
export const scrub = <E>(error: E): E => {
  if (!HttpClientError.isHttpClientError(error)) return error
  const { reason } = error
  const request = shownRequest(reason.request)
  const fields = {
    request,
    ...(reason.cause !== undefined ? { cause: reason.cause } : {}),
    ...(reason.description !== undefined ? { description: reason.description } : {})
  }
  return new HttpClientError.HttpClientError({ reason: scrubbedReason(reason, fields) }) as E
}

const scrubbedReason = (
  reason: HttpClientError.HttpClientErrorReason,
  fields: {
    readonly request: HttpClientRequest.HttpClientRequest
    readonly cause?: unknown
    readonly description?: string
  }
): HttpClientError.HttpClientErrorReason => {
  const { request } = fields
  switch (reason._tag) {
    case "TransportError":
      return reason instanceof ConnectionFailure
        ? new ConnectionFailure({
          ...fields,
          description: reason.description,
          problem: reason.problem,
          code: reason.code,
          outcomeUnknown: reason.outcomeUnknown
        })
        : new HttpClientError.TransportError(fields)
    case "EncodeError":
      return new HttpClientError.EncodeError(fields)
    case "InvalidUrlError":
      return new HttpClientError.InvalidUrlError(fields)
    case "StatusCodeError":
      return new HttpClientError.StatusCodeError({ ...fields, response: shownResponse(reason.response, request) })
    case "DecodeError":
      return new HttpClientError.DecodeError({ ...fields, response: shownResponse(reason.response, request) })
    case "EmptyBodyError":
      return new HttpClientError.EmptyBodyError({ ...fields, response: shownResponse(reason.response, request) })
  }
}

/*
 * A server's text that quotes the request's credentials back (a Status `message` of a 401
 * that says which token it refused, a proxy's 500, a `Warning` header, a watch's ERROR
 * event) must not show them: the credentials of the request are known when its answer is
 * read, so each of their secrets is replaced in the server's text by `<redacted>` before
 * that text reaches an error, a warning, a log line or a span.
 */

/** The secrets of a request, as a server may quote them; none for a request without credentials. */
export type Secrets = ReadonlyArray<string>

/** Shorter values are not looked for: replacing every `a` of a message would hide the message, not a secret. */
const shortest = 4

const none: Secrets = []

/** The texts a server may quote of these credentials: the token, the basic password and the basic pair as sent. */
export const secretsOf = (credentials: Credentials): Secrets => {
  const out: Array<string> = []
  if (credentials.token !== undefined) out.push(Redacted.value(credentials.token))
  if (credentials.basic !== undefined) {
    const password = Redacted.value(credentials.basic.password)
    out.push(password, Base64.encode(`${credentials.basic.username}:${password}`))
  }
  const kept = out.filter((secret) => secret.length >= shortest)
  // the longest first: a password inside the basic pair's encoding is not cut out of it first
  return kept.length === 0 ? none : kept.sort((a, b) => b.length - a.length)
}

/** The text with every occurrence of a secret replaced by `<redacted>`. */
export const redactText = (text: string, secrets: Secrets): string => {
  let out = text
  for (const secret of secrets) if (out.includes(secret)) out = out.split(secret).join(hidden)
  return out
}

/** Whether the text quotes one of the secrets. */
const quotes = (text: string | undefined, secrets: Secrets): boolean =>
  text !== undefined && secrets.some((secret) => text.includes(secret))

const redactStatus = (status: Status, secrets: Secrets): Status => {
  const causes = status.details?.causes
  return {
    ...status,
    ...(status.message !== undefined ? { message: redactText(status.message, secrets) } : {}),
    ...(status.details !== undefined
      ? {
        details: {
          ...status.details,
          ...(causes !== undefined
            ? {
              causes: causes.map((cause) =>
                cause.message !== undefined ? { ...cause, message: redactText(cause.message, secrets) } : cause
              )
            }
            : {})
        }
      }
      : {})
  }
}

/** The ApiError with the secrets taken out of the server's text (message, Status, body); itself when none is there. */
export const redactApiError = (error: ApiError, secrets: Secrets): ApiError => {
  if (secrets.length === 0) return error
  const body = (error as { readonly body?: string | undefined }).body
  const status = error.status
  const statusQuotes = status !== undefined && quotes(JSON.stringify(status), secrets)
  if (!quotes(error.statusMessage, secrets) && !statusQuotes && !quotes(body, secrets)) return error
  const { flowSchemaUid, priorityLevelUid, retryAfter } = error
  return new ApiError({
    method: error.method,
    path: error.path,
    code: error.code,
    reason: error.reason,
    statusMessage: redactText(error.statusMessage, secrets),
    ...(status !== undefined ? { status: statusQuotes ? redactStatus(status, secrets) : status } : {}),
    ...(body !== undefined ? { body: redactText(body, secrets) } : {}),
    ...(retryAfter !== undefined ? { retryAfter } : {}),
    ...(flowSchemaUid !== undefined ? { flowSchemaUid } : {}),
    ...(priorityLevelUid !== undefined ? { priorityLevelUid } : {})
  })
}

/**
 * What errors, logs and spans may show of a request and its answer: the one place that
 * says it. A query is shown with the values of the Kubernetes API's own parameters only
 * (any other may be a secret given to `Kube.request`); a body that is not a Status is
 * shown by its length and content type, never its text (a proxy that echoes the request
 * would echo the token); a request keeps only the headers known to be harmless and no
 * body. Messages built elsewhere (`ApiError`, `RequestTimeout`, transport errors) take
 * their text from here.
 *
 * @internal
 */
import * as Headers from "effect/http/Headers"
import * as HttpClientError from "effect/http/HttpClientError"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import type * as HttpClientResponse from "effect/http/HttpClientResponse"
import type * as HttpMethod from "effect/http/HttpMethod"
import * as UrlParams from "effect/http/UrlParams"
import { ConnectionFailure } from "../../Errors.js"

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

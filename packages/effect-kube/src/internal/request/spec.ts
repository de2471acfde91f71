/**
 * What a request to the Kubernetes API is before it is sent: a plain value (method,
 * path, query, body, accept) plus what it does (the verb and the object it acts on, for
 * spans and metrics). Turning it into an `HttpClientRequest` is pure too; the executor
 * (`client.ts`) adds the server's credentials and sends it.
 */
import * as Headers from "effect/http/Headers"
import * as HttpBody from "effect/http/HttpBody"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as UrlParams from "effect/http/UrlParams"
import * as Option from "effect/Option"
import { shownQuery } from "../client/scrub.js"
import { userAgent } from "./userAgent.js"

/** Query values; `undefined` ones are left out. */
export type Query = Readonly<Record<string, string | number | boolean | undefined>>

/**
 * What an operation does, as spans are named (`kube.<verb>`) and metrics are tagged:
 * one of the operations of `Kube.Api`, or a request of discovery and templates.
 */
export type Verb =
  | "get"
  | "list"
  | "create"
  | "replace"
  | "patch"
  | "apply"
  | "delete"
  | "deleteAll"
  | "watch"
  | "logs"
  | "discovery"
  | "process"
  | "request"
  | "table"
  | SubresourceVerb

/** The verbs of the subresource operations (`Kube.SubresourceOperations`), named as they are. */
export type SubresourceVerb =
  | "getStatus"
  | "replaceStatus"
  | "patchStatus"
  | "applyStatus"
  | "getScale"
  | "replaceScale"
  | "patchScale"
  | "evict"
  | "getEphemeralContainers"
  | "patchEphemeralContainers"
  | "replaceEphemeralContainers"
  | "getResize"
  | "patchResize"
  | "replaceResize"
  | "createToken"
  | "proxy"

/** The verb of a request and the object it acts on (never the object's body). */
export interface Operation {
  readonly verb: Verb
  readonly kind?: string | undefined
  readonly namespace?: string | undefined
  readonly name?: string | undefined
}

/** A request to the Kubernetes API, before it knows the server or the credentials. */
export interface Spec {
  readonly method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE"
  readonly path: string
  readonly query?: Query | undefined
  readonly body?: { readonly contentType: string; readonly text: string } | undefined
  /** The accept header, when the answer is not JSON (pod logs); `application/json` otherwise. */
  readonly accept?: string | undefined
  /** Further headers (`Kube.request`); they never replace the accept, user-agent or authorization headers. */
  readonly headers?: Readonly<Record<string, string>> | undefined
  /** What the request does; spans are named after it. */
  readonly operation: Operation
}

/** Renders the query string; values are percent-encoded (`URLSearchParams` rules). */
export const queryString = (query: Query | undefined): string => {
  if (query === undefined) return ""
  const params = new URLSearchParams()
  for (const key in query) {
    const value = query[key]
    if (value !== undefined) params.append(key, String(value))
  }
  const text = params.toString()
  return text === "" ? "" : `?${text}`
}

/**
 * The path with its query, as it appears in errors: the values of parameters the API does
 * not define are `<redacted>` (`shownQuery`).
 */
export const pathWithQuery = (spec: Pick<Spec, "path" | "query">): string =>
  spec.query === undefined ? spec.path : `${spec.path}${shownQuery(spec.query)}`

/** A JSON body. */
export const jsonBody = (value: unknown, contentType = "application/json"): Spec["body"] => ({
  contentType,
  text: JSON.stringify(value)
})

/** The prototype of Effect's `Headers`, for headers made field by field (no copy, no `setPrototypeOf`). */
const headersProto: object = Object.getPrototypeOf(Headers.empty)

/**
 * A pure function from a Spec and a server URL to the request to send, with its
 * `Authorization` header when one is given (the request path adds the credentials' here,
 * so that the headers are made once per request, not made and then copied).
 * Made in one step (`HttpClientRequest.make` with options builds a request per option, and
 * converts the headers again): every operation's request is made here.
 */
export const toHttpRequest = (
  server: string,
  spec: Spec,
  authorization?: string | undefined
): HttpClientRequest.HttpClientRequest => {
  const accept = spec.accept ?? "application/json"
  let headers: Headers.Headers
  if (spec.headers === undefined) {
    const record = Object.create(headersProto) as Record<string, string>
    record["accept"] = accept
    record["user-agent"] = userAgent
    if (authorization !== undefined) record["authorization"] = authorization
    headers = record as Headers.Headers
  } else {
    headers = Headers.fromInput({
      ...spec.headers,
      accept,
      "user-agent": userAgent,
      ...(authorization !== undefined ? { authorization } : {})
    })
  }
  const request = HttpClientRequest.makeWith(
    spec.method,
    // the query as sent: pathWithQuery is the one errors show, with `<redacted>` for the values of parameters the
    // API does not define, and sent those instead of the caller's (Kube.request's `includeObject=None` arrived as
    // `includeObject=<redacted>`)
    `${server}${spec.path}${queryString(spec.query)}`,
    UrlParams.empty,
    Option.none(),
    headers,
    HttpBody.empty
  )
  return spec.body === undefined
    ? request
    : HttpClientRequest.bodyText(request, spec.body.text, spec.body.contentType)
}

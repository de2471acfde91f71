/**
 * The escape hatch's requests (`Kube.request`, `Kube.requestStream`): any method and
 * path of the API server, checked and built without I/O like every other Spec, so the
 * executor sends them with the same credentials, timeouts, retries and errors.
 */
import { ValidationError } from "../../Errors.js"
import type { Query, Spec } from "./spec.js"

/** What a raw request is made of, as `Kube.request` takes it. */
export interface RawOptions {
  readonly method: string
  readonly path: string
  readonly query?: Query | undefined
  /** Sent as JSON; a string is sent as it is. */
  readonly body?: unknown
  /** The body's content type (`application/json` by default; a patch names its kind). */
  readonly contentType?: string | undefined
  readonly accept?: string | undefined
  readonly headers?: Readonly<Record<string, string>> | undefined
}

const methods: ReadonlyArray<Spec["method"]> = ["GET", "POST", "PUT", "PATCH", "DELETE"]

/** Headers the executor sets itself: a caller's would be replaced or would break the request. */
const reserved = new Set(["authorization", "accept", "user-agent", "content-type", "content-length", "host"])

const headerName = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/
const headerValue = /^[\t\x20-\x7e\x80-\xff]*$/

/** Checks a raw request and builds its Spec, or says what is wrong with it. */
export const raw = (options: RawOptions): Spec | ValidationError => {
  const method = typeof options.method === "string" ? options.method.toUpperCase() : ""
  if (!(methods as ReadonlyArray<string>).includes(method)) {
    return new ValidationError({
      subject: "method",
      detail: `must be one of ${methods.join(", ")} (got ${JSON.stringify(options.method)})`
    })
  }
  const path = options.path
  if (typeof path !== "string" || !path.startsWith("/") || path.startsWith("//")) {
    return new ValidationError({
      subject: "path",
      detail: `must be an absolute path on the API server such as /version (got ${JSON.stringify(path)})`
    })
  }
  if (path.includes("?") || path.includes("#") || /[\s\x00-\x1f\x7f]/.test(path) || path.split("/").includes("..")) {
    return new ValidationError({
      subject: "path",
      // what follows `?` or `#` is not shown: a query may hold a token
      detail: `must be a plain path without a query, fragment, spaces or ".." (give the query as \`query\`; got ${
        JSON.stringify(path.split(/[?#]/)[0])
      }${/[?#]/.test(path) ? " and more" : ""})`
    })
  }
  const headers: Record<string, string> = {}
  for (const [name, value] of Object.entries(options.headers ?? {})) {
    if (!headerName.test(name)) {
      // the name is not shown: a name that is not one may be a value, a credential, put in the wrong place
      return new ValidationError({
        subject: "headers",
        detail: `hold a name of ${name.length} characters that is not a valid header name`
      })
    }
    if (reserved.has(name.toLowerCase())) {
      return new ValidationError({
        subject: `header ${name}`,
        detail: "is set by the client (use `accept` and `contentType`; credentials come from the KubeConfig)"
      })
    }
    if (typeof value !== "string" || !headerValue.test(value)) {
      // the value is not shown: it may be a credential
      return new ValidationError({
        subject: `header ${name}`,
        detail: "must be a string without line breaks, control characters or characters beyond Latin-1"
      })
    }
    headers[name] = value
  }
  const contentType = options.contentType ?? "application/json"
  let body: Spec["body"]
  if (options.body !== undefined) {
    if (method === "GET") {
      return new ValidationError({ subject: "body", detail: "a GET request takes no body" })
    }
    let text: string | undefined
    try {
      text = typeof options.body === "string" ? options.body : JSON.stringify(options.body)
    } catch (e) {
      return new ValidationError({ subject: "body", detail: `cannot be written as JSON (${String(e)})`, cause: e })
    }
    if (text === undefined) return new ValidationError({ subject: "body", detail: "cannot be written as JSON" })
    body = { contentType, text }
  }
  return {
    method: method as Spec["method"],
    path,
    query: options.query,
    body,
    accept: options.accept,
    headers: Object.keys(headers).length === 0 ? undefined : headers,
    operation: { verb: "request", name: path }
  }
}

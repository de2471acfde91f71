/**
 * A non-2xx answer as an `ApiError`: the server's own Status when it sent one (read by
 * `serverStatus.ts`), the answer's text otherwise (kept where it does not print), the
 * `Retry-After` it asked for and what API Priority and Fairness said of the request.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type * as Headers from "effect/http/Headers"
import * as HttpClientError from "effect/http/HttpClientError"
import type * as HttpClientResponse from "effect/http/HttpClientResponse"
import {
  ApiError,
  formatBytes,
  reasonFor,
  type Status
} from "../../Errors.js"
import { type Policy, RequestPolicy } from "../../RequestPolicy.js"
import { isBoundedText, reachedIn, readTextWithin } from "../transport/contract.js"
import { errorBodyBytes } from "./limits.js"
import { pathWithQuery, type Spec } from "../request/spec.js"
import { bodySummary, hidden } from "./scrub.js"
import { isSeconds, readStatus, statusOf } from "./serverStatus.js"
import * as telemetry from "./telemetry.js"

/** How much of an error body that is not a Status is kept on the ApiError, where it does not print. */
export const bodyKept = 4096

/**
 * The seconds a Retry-After asks for: a number of seconds, or an HTTP date counted from
 * `now` (the Clock's time, so that TestClock drives it), else the Status's own
 * `retryAfterSeconds`.
 */
export const parseRetryAfter = (header: string | undefined, status: Status | undefined, now: number): number | undefined => {
  if (header !== undefined) {
    const seconds = Number(header)
    if (header.trim() !== "" && isSeconds(seconds)) return seconds
    const date = Date.parse(header)
    if (!Number.isNaN(date)) return Math.max(0, Math.ceil((date - now) / 1000))
  }
  return status?.details?.retryAfterSeconds
}

/** The UTF-8 length of a text, in bytes (without encoding it). */
export const utf8Length = (text: string): number => {
  let bytes = text.length
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c >= 0x80) bytes += c >= 0x800 && (c < 0xd800 || c > 0xdfff) ? 2 : 1
  }
  return bytes
}

/** A request to Secrets (the collection, one of them, or its subresources), in one namespace or all. */
const secretPath = /^\/api\/v1\/(?:namespaces\/[^/]+\/)?secrets(?:\/|$)/

const isSecretPath = (path: string): boolean => secretPath.test(path)

/** Go's `%q` of a value in a field error: `Invalid value: "..."`, with `\"` and `\\` inside. */
const invalidValue = /Invalid value: "(?:[^"\\]|\\.)*"/g

const redactInvalidValues = (text: string | undefined): string | undefined =>
  text === undefined ? undefined : text.replace(invalidValue, `Invalid value: "${hidden}"`)

/**
 * A Status about a Secret without the values its field errors quote. kube-apiserver quotes the value it refused:
 * for a patch that is the patch, or the whole patched object (a Strict patch with an unknown field quotes the
 * Secret with its `data`), so its message and causes would carry Secret data into every error message.
 */
const withoutInvalidValues = (status: Status): Status => ({
  ...status,
  message: redactInvalidValues(status.message),
  ...(status.details === undefined ? {} : {
    details: {
      ...status.details,
      ...(status.details.causes === undefined ? {} : {
        causes: status.details.causes.map((cause) => ({ ...cause, message: redactInvalidValues(cause.message) }))
      })
    }
  })
})

/**
 * Builds the ApiError for an answer from its code, headers and body text. `now` is the
 * time in milliseconds that an HTTP-date Retry-After is counted from. The message keeps a
 * Status's own message; of any other body it says the content type and the length only.
 */
export const apiErrorFrom = (
  spec: Pick<Spec, "method" | "path" | "query">,
  code: number,
  bodyText: string,
  retryAfterHeader?: string | undefined,
  now = 0,
  contentType?: string | undefined,
  flowControl: FlowControl = {}
): ApiError => {
  let parsed: unknown = undefined
  try {
    parsed = bodyText === "" ? undefined : JSON.parse(bodyText)
  } catch {
    parsed = undefined
  }
  const read = readStatus(parsed)
  const status = read !== undefined && isSecretPath(spec.path) ? withoutInvalidValues(read) : read
  const body = status === undefined && bodyText !== "" ? bodyText.slice(0, bodyKept) : undefined
  const statusMessage = status?.message ??
    (body !== undefined ? `${httpText(code)} (${bodySummary(utf8Length(bodyText), contentType)})` : httpText(code))
  return new ApiError({
    method: spec.method,
    path: pathWithQuery(spec),
    code,
    reason: reasonFor(code, status),
    statusMessage,
    status,
    body,
    retryAfter: parseRetryAfter(retryAfterHeader, status, now),
    ...flowControl
  })
}

/** What API Priority and Fairness said of a request: the UIDs of its FlowSchema and PriorityLevelConfiguration. */
export interface FlowControl {
  readonly flowSchemaUid?: string
  readonly priorityLevelUid?: string
}

/**
 * The APF headers of an answer, as ApiError fields and on the span (`kube.apf.flow_schema_uid`,
 * `kube.apf.priority_level_uid`). Read for error answers only: reading a header of every
 * answer would cost each request its headers' conversion (undici's answer is converted lazily).
 */
export const flowControlOf = (headers: Headers.Headers): Effect.Effect<FlowControl> => {
  const flowSchemaUid = headers["x-kubernetes-pf-flowschema-uid"]
  const priorityLevelUid = headers["x-kubernetes-pf-prioritylevel-uid"]
  if (flowSchemaUid === undefined && priorityLevelUid === undefined) return Effect.succeed({})
  const fields: FlowControl = {
    ...(flowSchemaUid !== undefined ? { flowSchemaUid } : {}),
    ...(priorityLevelUid !== undefined ? { priorityLevelUid } : {})
  }
  return Effect.as(
    telemetry.annotate({
      ...(flowSchemaUid !== undefined ? { "kube.apf.flow_schema_uid": flowSchemaUid } : {}),
      ...(priorityLevelUid !== undefined ? { "kube.apf.priority_level_uid": priorityLevelUid } : {})
    }),
    fields
  )
}

/**
 * An ApiError from a Status that arrived inside a 2xx answer (a watch's ERROR event, the
 * status channel of exec), read from whatever value came (see `status.ts`).
 */
export const apiErrorFromStatus = (spec: Pick<Spec, "method" | "path" | "query">, value: unknown): ApiError => {
  const status: Status = statusOf(value)
  const code = status.code ?? 500
  return new ApiError({
    method: spec.method,
    path: pathWithQuery(spec),
    code,
    reason: reasonFor(code, status),
    statusMessage: status.message ?? httpText(code),
    status,
    retryAfter: status.details?.retryAfterSeconds
  })
}

export const httpText = (code: number): string => (code >= 500 ? "server error" : code >= 400 ? "request failed" : "unexpected answer")

/**
 * The body of an error answer as text, within `errorBodyBytes` (a Status is a few KB)
 * where the transport can bound the read; past it the body is not read and its
 * connection is closed.
 */
export const errorBody = (response: HttpClientResponse.HttpClientResponse): Effect.Effect<string, HttpClientError.HttpClientError> =>
  isBoundedText(response)
    ? Effect.flatMap(
      RequestPolicy,
      (policy: Policy) => response[readTextWithin](Math.min(errorBodyBytes, policy.maxResponseBytes))
    )
    : response.text

/**
 * The ApiError of a non-2xx answer. A body that cannot be read (the connection broke
 * while it came, or it was too large to read) is said so in the message, rather than
 * taken for an empty one.
 */
export const failFor = (spec: Spec, response: HttpClientResponse.HttpClientResponse): Effect.Effect<never, ApiError> =>
  Effect.flatMap(
    Effect.result(errorBody(response)),
    (text) =>
      Effect.flatMap(Effect.zip(Clock.currentTimeMillis, flowControlOf(response.headers)), ([now, flowControl]) => {
        const retryAfter = response.headers["retry-after"]
        if (text._tag === "Success") {
          return Effect.fail(
            apiErrorFrom(spec, response.status, text.success, retryAfter, now, response.headers["content-type"], flowControl)
          )
        }
        const error = apiErrorFrom(spec, response.status, "", retryAfter, now, undefined, flowControl)
        const reached = reachedIn(text.failure)
        const why = reached !== undefined
          ? `a body of more than ${formatBytes(reached.value)}, not read`
          : `the body could not be read: ${text.failure.reason.description ?? reasonWord(text.failure.reason)}`
        return Effect.fail(new ApiError({ ...error, statusMessage: `${error.statusMessage} (${why})` }))
      })
  )

/** A failure's reason in one word (`Transport`, `Decode`, ...), as the error's message names it. */
export const reasonWord = (reason: HttpClientError.HttpClientErrorReason): string =>
  reason._tag.endsWith("Error") ? reason._tag.slice(0, -5) : reason._tag

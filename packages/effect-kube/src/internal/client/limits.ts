/**
 * The limits on what a server can make the client hold (`RequestPolicy`'s
 * `maxResponseBytes`, `maxLineBytes` and `maxJsonDepth`, `NodeKube`'s `maxHeaderBytes`):
 * how the request path turns the `LimitReached` a transport or a decoder says was crossed
 * (`transport/contract.ts`, the cause of the transport's `HttpClientError`) into the
 * `LimitExceeded` that names the request. Each check is a counter compared once per chunk
 * of bytes, where the bytes are counted anyway.
 *
 * @internal
 */
import { LimitExceeded } from "../../Errors.js"
import { pathWithQuery, type Spec } from "../request/spec.js"
import type { LimitReached } from "../transport/contract.js"

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
 * The most of an error answer's body that is read: a Status is a few KB. What is past it
 * is not read (the connection is closed) and the `ApiError` says the body was too large.
 *
 * @internal
 */
export const errorBodyBytes = 1024 * 1024

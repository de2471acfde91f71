/**
 * Names the cause of a transport failure in its message. Node's and undici's errors say
 * what went wrong (`connect ECONNREFUSED 127.0.0.1:6443`, `certificate has expired`), but a
 * `TransportError` built from the cause alone prints `Transport error (GET ...)` and keeps
 * the reason in `cause`, where a log line does not show it. Here the system's code is
 * read (through `cause` chains and the `AggregateError` of a name with several addresses)
 * into a `ConnectionProblem`, and its text becomes the description: only the error's
 * message, shortened and with any URL credentials taken out, never a header or a body.
 */
import * as HttpClientError from "effect/http/HttpClientError"
import type * as HttpClientRequest from "effect/http/HttpClientRequest"
import { ConnectionFailure, type ConnectionProblem } from "../../Errors.js"

const problems: Readonly<Record<string, ConnectionProblem>> = {
  ECONNREFUSED: "ConnectionRefused",
  ENOTFOUND: "HostNotFound",
  EAI_AGAIN: "HostNotFound",
  EAI_NONAME: "HostNotFound",
  EAI_FAIL: "HostNotFound",
  EHOSTUNREACH: "HostUnreachable",
  ENETUNREACH: "HostUnreachable",
  ETIMEDOUT: "ConnectTimeout",
  UND_ERR_CONNECT_TIMEOUT: "ConnectTimeout",
  ECONNRESET: "ConnectionReset",
  EPIPE: "ConnectionReset",
  UND_ERR_SOCKET: "ConnectionReset",
  // node:http2 (http2.ts): a stream or the connection under it reset, closed, or given up
  ERR_HTTP2_STREAM_ERROR: "ConnectionReset",
  ERR_HTTP2_STREAM_CANCEL: "ConnectionReset",
  ERR_HTTP2_SESSION_ERROR: "ConnectionReset",
  ERR_HTTP2_GOAWAY_SESSION: "ConnectionReset",
  ERR_HTTP2_INVALID_SESSION: "ConnectionReset",
  ERR_HTTP2_ERROR: "ConnectionReset",
  ERR_HTTP2_PING_TIMEOUT: "ConnectionReset",
  // http2.ts: a stream reset with ENHANCE_YOUR_CALM before its answer, a server that allows no streams
  ERR_HTTP2_ENHANCE_YOUR_CALM: "StreamRefused",
  ERR_HTTP2_NO_STREAMS: "StreamRefused",
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: "CertificateUntrusted",
  UNABLE_TO_GET_ISSUER_CERT: "CertificateUntrusted",
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: "CertificateUntrusted",
  SELF_SIGNED_CERT_IN_CHAIN: "CertificateUntrusted",
  DEPTH_ZERO_SELF_SIGNED_CERT: "CertificateUntrusted",
  CERT_UNTRUSTED: "CertificateUntrusted",
  CERT_SIGNATURE_FAILURE: "CertificateUntrusted",
  CERT_HAS_EXPIRED: "CertificateExpired",
  CERT_NOT_YET_VALID: "CertificateNotYetValid",
  ERR_TLS_CERT_ALTNAME_INVALID: "CertificateNameMismatch",
  EPROTO: "TlsHandshakeFailed"
}

/** What a reader can do about it, after the system's own words. */
const advice: Partial<Record<ConnectionProblem, string>> = {
  CertificateUntrusted: "the server's certificate is not signed by a trusted CA (the kubeconfig's certificate-authority)",
  CertificateExpired: "the server's certificate is past its notAfter (or this machine's clock is wrong)",
  CertificateNotYetValid: "the server's certificate is before its notBefore (or this machine's clock is wrong)",
  CertificateNameMismatch: "the certificate is for another name (tls-server-name sets the name checked)"
}

const maxText = 300

interface Found {
  readonly code: string | undefined
  readonly message: string
  /** The failure says the request never reached the server (http2.ts's `unsent`). */
  readonly unsent?: boolean | undefined
}

const fieldOf = (u: unknown, key: string): unknown =>
  typeof u === "object" && u !== null ? (u as Record<string, unknown>)[key] : undefined

/** The innermost error of a cause chain that has a code (or a message), with what it says. */
const find = (cause: unknown): Found | undefined => {
  let found: Found | undefined
  let current = cause
  for (let depth = 0; depth < 5 && current !== undefined && current !== null; depth++) {
    const code = fieldOf(current, "code")
    const message = fieldOf(current, "message")
    const errors = fieldOf(current, "errors")
    // several addresses of one name, each refused: the first says it, the aggregate's message is empty
    const first = Array.isArray(errors) ? errors[0] : undefined
    const text = typeof message === "string" && message !== ""
      ? message
      : typeof fieldOf(first, "message") === "string"
      ? fieldOf(first, "message") as string
      : ""
    if (typeof code === "string" && code in problems) {
      return { code, message: text, unsent: fieldOf(current, "unsent") === true }
    }
    if (found === undefined && text !== "") found = { code: typeof code === "string" ? code : undefined, message: text }
    current = fieldOf(current, "cause")
  }
  return found
}

/** Error texts are the system's, which name hosts and addresses; a proxy URL could carry credentials. */
const safe = (text: string): string => {
  const clean = text.replace(/\/\/[^/\s@]*@/g, "//<redacted>@")
  return clean.length > maxText ? `${clean.slice(0, maxText)}...` : clean
}

/** The description of a transport failure from its cause, and the problem when it is a known one. */
export const describe = (cause: unknown): {
  readonly description: string | undefined
  readonly problem: ConnectionProblem | undefined
  readonly code: string | undefined
  readonly unsent?: boolean | undefined
} => {
  const found = find(cause)
  if (found === undefined) return { description: undefined, problem: undefined, code: undefined }
  const problem = found.code !== undefined ? problems[found.code] : undefined
  // Node ends some texts with an empty list (`... is not in the cert's list: `)
  const text = safe(found.message).replace(/[\s:]+$/, "")
  const description = problem === "ConnectionReset"
    ? text === "socket hang up" ? text : `socket hang up (${text})`
    : problem !== undefined && advice[problem] !== undefined
    ? `${text}: ${advice[problem]}`
    : text
  return { description: description === "" ? undefined : description, problem, code: found.code, unsent: found.unsent }
}

/** Problems after which a request that was sent may have been carried out: its answer was lost, not refused unread. */
const lostAnswer: ReadonlySet<ConnectionProblem> = new Set(["ConnectionReset", "StreamRefused"])

const isRead = (method: string): boolean => method === "GET" || method === "HEAD" || method === "OPTIONS"

/** What Node's errors say of a body that broke off, where its words alone do not. */
const bodyTexts: Readonly<Record<string, string>> = {
  ERR_HTTP2_TOO_MANY_INVALID_FRAMES: "the server sent more invalid or empty HTTP/2 frames than Node takes (a flood), " +
    "and the connection was closed"
}

/**
 * The description of a body that could not be read, from its cause (an `Error` of the
 * system's; none for anything else): `the body broke off: ...`.
 */
const bodyDescription = (cause: unknown): string | undefined => {
  if (!(cause instanceof Error)) return undefined
  const code = fieldOf(cause, "code")
  const text = typeof code === "string" && code in bodyTexts ? bodyTexts[code] : describe(cause).description
  return text === undefined ? undefined : `the body broke off: ${text}`
}

/** The fields of a body's DecodeError, with a description of its cause when it has one. */
export const describedBody = <F extends { readonly cause: unknown }>(
  fields: F
): F & { readonly description?: string } => {
  const description = bodyDescription(fields.cause)
  return description === undefined ? fields : { ...fields, description }
}

/**
 * The cause as an error holds it: the system's error without the objects it hangs on itself
 * (a TLS error's `cert`, whose `issuerCertificate` is itself for a self-signed root, made
 * `JSON.stringify(error)` throw; undici's `socket`), so that printing or serializing the
 * error always works. Its message, code, syscall, address and stack are kept.
 */
const printable = (cause: unknown): unknown => {
  if (!(cause instanceof Error)) return cause
  const own = cause as unknown as Record<string, unknown>
  const keys = Object.keys(own)
  if (keys.every((key) => typeof own[key] !== "object" || own[key] === null)) return cause
  const copy = new Error(cause.message) as unknown as Record<string, unknown>
  Object.defineProperty(copy, "name", { value: cause.name, enumerable: false, configurable: true, writable: true })
  copy["stack"] = cause.stack
  for (const key of keys) if (typeof own[key] !== "object" || own[key] === null) copy[key] = own[key]
  return copy
}

/**
 * The reason of a request that failed in the transport: a `ConnectionFailure` when the
 * cause is one of the known connection problems, else a `TransportError` described by its
 * cause's message.
 */
export const transportReason = (
  request: HttpClientRequest.HttpClientRequest,
  given: unknown
): HttpClientError.TransportError => {
  const { code, description, problem, unsent } = describe(given)
  const cause = printable(given)
  if (problem !== undefined && description !== undefined) {
    const outcomeUnknown = !isRead(request.method) && lostAnswer.has(problem) && unsent !== true
    return new ConnectionFailure({ request, cause, description, problem, code, outcomeUnknown })
  }
  return new HttpClientError.TransportError(description === undefined ? { request, cause } : { request, cause, description })
}

/** A TransportError made elsewhere (effect/http's fetch client) with its cause only, described. */
export const described = (error: HttpClientError.HttpClientError): HttpClientError.HttpClientError => {
  const { reason } = error
  if (reason._tag !== "TransportError" || reason.description !== undefined || reason.cause === undefined) return error
  return new HttpClientError.HttpClientError({ reason: transportReason(reason.request, reason.cause) })
}

/**
 * Status bodies shaped exactly as the Kubernetes API server writes them (field order
 * included), so clients that compare or decode them see what a real cluster sends.
 *
 * @internal
 */

/** @internal */
export interface StatusCause {
  readonly reason?: string
  readonly message?: string
  readonly field?: string
}

/** @internal */
export interface StatusDetails {
  readonly name?: string
  readonly group?: string
  readonly kind?: string
  readonly uid?: string
  readonly causes?: ReadonlyArray<StatusCause>
  readonly retryAfterSeconds?: number
}

/** A failure answer: HTTP code, Status body and extra headers. @internal */
export class StatusError {
  constructor(
    readonly code: number,
    readonly reason: string,
    readonly message: string,
    readonly details?: StatusDetails | undefined,
    readonly headers?: Readonly<Record<string, string>> | undefined,
    readonly metadata?: Readonly<Record<string, string>> | undefined
  ) {}

  body(): Record<string, unknown> {
    const body: Record<string, unknown> = {
      kind: "Status",
      apiVersion: "v1",
      metadata: this.metadata ?? {},
      status: "Failure",
      message: this.message
    }
    // a plain error (not a Status) reaches a client without a reason, as `StatusReasonUnknown`
    if (this.reason !== "") body.reason = this.reason
    if (this.details !== undefined) body.details = this.details
    body.code = this.code
    return body
  }
}

/** The resource part of a Status: `pods`, `deployments.apps`. @internal */
export interface Target {
  readonly group: string
  readonly plural: string
}

const qualified = (t: Target): string => (t.group === "" ? t.plural : `${t.plural}.${t.group}`)

const details = (t: Target, name?: string, extra?: Partial<StatusDetails>): StatusDetails => ({
  ...(name !== undefined ? { name } : {}),
  ...(t.group !== "" ? { group: t.group } : {}),
  kind: t.plural,
  ...extra
})

/** @internal */
export const notFound = (t: Target, name: string): StatusError =>
  new StatusError(404, "NotFound", `${qualified(t)} "${name}" not found`, details(t, name))

/** The answer for a path that names no resource. @internal */
export const pathNotFound = (): StatusError =>
  new StatusError(404, "NotFound", "the server could not find the requested resource", {})

/** @internal */
export const alreadyExists = (t: Target, name: string): StatusError =>
  new StatusError(409, "AlreadyExists", `${qualified(t)} "${name}" already exists`, details(t, name))

/** @internal */
export const conflict = (t: Target, name: string): StatusError =>
  new StatusError(
    409,
    "Conflict",
    `Operation cannot be fulfilled on ${qualified(t)} "${name}": the object has been modified; ` +
      "please apply your changes to the latest version and try again",
    details(t, name)
  )

/** @internal */
export const preconditionFailed = (t: Target, name: string, message: string): StatusError =>
  new StatusError(
    409,
    "Conflict",
    `Operation cannot be fulfilled on ${qualified(t)} "${name}": ${message}`,
    details(t, name)
  )

/** @internal */
export const badRequest = (message: string): StatusError => new StatusError(400, "BadRequest", message)

/**
 * 422 with the API server's `Kind "name" is invalid: field: message` layout.
 *
 * @internal
 */
export const invalid = (
  t: Target & { readonly kind: string },
  name: string,
  causes: ReadonlyArray<{ readonly reason: string; readonly field: string; readonly message: string }>
): StatusError => {
  const kindName = t.group === "" ? t.kind : `${t.kind}.${t.group}`
  // the aggregate of the errors says each message once; the causes keep every one
  const messages = [...new Set(causes.map((c) => `${c.field}: ${c.message}`))]
  const summary = messages.join(", ")
  const message = `${kindName} "${name}" is invalid: ${messages.length > 1 ? `[${summary}]` : summary}`
  return new StatusError(422, "Invalid", message, {
    // Go's omitempty: a nameless object's Status has no name
    ...(name !== "" ? { name } : {}),
    ...(t.group !== "" ? { group: t.group } : {}),
    kind: t.kind,
    causes: causes.map((c) => ({ reason: c.reason, message: c.message, ...(c.field !== "" ? { field: c.field } : {}) }))
  })
}

/** @internal */
export const unauthorized = (): StatusError => new StatusError(401, "Unauthorized", "Unauthorized")

/** @internal */
export const methodNotAllowed = (): StatusError =>
  new StatusError(405, "MethodNotAllowed", "the server does not allow this method on the requested resource", {})

/** @internal */
export const unsupportedMediaType = (_contentType: string, accepted: ReadonlyArray<string>): StatusError =>
  new StatusError(
    415,
    "UnsupportedMediaType",
    `the body of the request was in an unknown format - accepted media types include: ${accepted.join(", ")}`
  )

/** A watch or continue token older than the compaction window. @internal */
export const expired = (message: string): StatusError => new StatusError(410, "Expired", message)

/** @internal */
export const internalError = (message: string): StatusError =>
  new StatusError(500, "InternalError", `Internal error occurred: ${message}`, { causes: [{ message }] })

/**
 * Any status code with the reason and message the API server uses for it, for fault
 * injection.
 *
 * @internal
 */
/**
 * What API Priority and Fairness puts on a 429 it answers: the fake classifies every request
 * under one FlowSchema and priority level (kube-apiserver's `global-default`), with these UIDs.
 *
 * @internal
 */
export const flowControlHeaders = {
  "x-kubernetes-pf-flowschema-uid": "7f2b4a43-1ee6-4f4e-9f5a-fa4e0c4c3b10",
  "x-kubernetes-pf-prioritylevel-uid": "c5a2d8b7-3e1f-4c9b-8a7d-2b6e9f0a1d24"
}

export const forCode = (
  code: number,
  options: {
    readonly message?: string | undefined
    readonly reason?: string | undefined
    readonly retryAfterSeconds?: number | undefined
  } = {}
): StatusError => {
  const retry = options.retryAfterSeconds
  const headers = {
    ...(retry !== undefined ? { "retry-after": String(retry) } : {}),
    ...(code === 429 ? flowControlHeaders : {})
  }
  const withRetry = (d: StatusDetails): StatusDetails => (retry !== undefined ? { ...d, retryAfterSeconds: retry } : d)
  const known: Record<number, readonly [string, string]> = {
    400: ["BadRequest", "the server rejected our request for an unknown reason"],
    401: ["Unauthorized", "Unauthorized"],
    403: ["Forbidden", "forbidden: the fake cluster was told to refuse this request"],
    404: ["NotFound", "the server could not find the requested resource"],
    405: ["MethodNotAllowed", "the server does not allow this method on the requested resource"],
    409: ["Conflict", "the server reported a conflict"],
    410: ["Expired", "the resource version is too old"],
    415: ["UnsupportedMediaType", "the body of the request was in an unknown format"],
    422: ["Invalid", "the server rejected our request due to an error in our request"],
    429: ["TooManyRequests", "Too many requests, please try again later."],
    500: ["InternalError", "Internal error occurred: injected fault"],
    503: ["ServiceUnavailable", "the server is currently unable to handle the request"],
    504: [
      "Timeout",
      "the server was unable to return a response in the time allotted, but may still be processing the request"
    ]
  }
  const [reason, message] = known[code] ??
    ["", `an error on the server ("injected fault") has prevented the request from succeeding`]
  const d = code === 429 || code === 503 || code === 504 || retry !== undefined ? withRetry({}) : undefined
  return new StatusError(code, options.reason ?? reason, options.message ?? message, d, headers)
}

/** The `Success` Status answered by some deletes. @internal */
export const success = (t: Target, name: string, uid: string | undefined): Record<string, unknown> => ({
  kind: "Status",
  apiVersion: "v1",
  metadata: {},
  status: "Success",
  details: details(t, name, uid !== undefined ? { uid } : {})
})

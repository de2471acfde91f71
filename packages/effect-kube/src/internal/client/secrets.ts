/**
 * A server's text that quotes the request's credentials back (a Status `message` of a 401
 * that says which token it refused, a proxy's 500, a `Warning` header, a watch's ERROR
 * event) must not show them: the credentials of the request are known when its answer is
 * read, so each of their secrets is replaced in the server's text by `<redacted>` before
 * that text reaches an error, a warning, a log line or a span.
 *
 * @internal
 */
import * as Base64 from "effect/encoding/Base64"
import * as Redacted from "effect/Redacted"
import { ApiError, type Status } from "../../Errors.js"
import type { Credentials } from "../../KubeConfig.js"

/** The secrets of a request, as a server may quote them; none for a request without credentials. */
export type Secrets = ReadonlyArray<string>

/** What stands for a secret in a server's text. */
const hidden = "<redacted>"

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

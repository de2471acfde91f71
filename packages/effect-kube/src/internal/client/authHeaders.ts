/**
 * The Authorization header of a request, from the credentials the request path obtained for
 * it (`execute.ts`): a bearer token or basic credentials, refused when Node would throw on it.
 */
import * as Effect from "effect/Effect"
import * as Base64 from "effect/encoding/Base64"
import * as Redacted from "effect/Redacted"
import { KubeConfigError } from "../../Errors.js"
import type { Credentials, Service as KubeConfigService } from "../../KubeConfig.js"

/** What Node refuses in a header value (it throws, which would be a defect): line breaks, controls, beyond Latin-1. */
export const invalidHeaderCharacter = /[^\t\x20-\x7e\x80-\xff]/

/**
 * The `Authorization` header of a request with these credentials (a bearer token, or basic
 * auth), if any: shared by HTTP requests and exec/attach/port-forward dials. A token that
 * cannot be sent in a header fails without naming it.
 */
export const authorizationHeader = (
  credentials: Credentials,
  config: KubeConfigService
): Effect.Effect<string | undefined, KubeConfigError> => {
  const header = authorizationOf(credentials, config)
  return header instanceof KubeConfigError ? Effect.fail(header) : Effect.succeed(header)
}

/** `authorizationHeader` without an Effect, for the request path (it runs for every request). */
export const authorizationOf = (credentials: Credentials, config: KubeConfigService): string | undefined | KubeConfigError => {
  if (credentials.token !== undefined) {
    const token = Redacted.value(credentials.token)
    if (invalidHeaderCharacter.test(token)) {
      return new KubeConfigError({
        source: config.source,
        context: config.context,
        detail: "the bearer token holds a character that cannot be sent in an HTTP header " +
          "(a line break, a control character or one beyond Latin-1)"
      })
    }
    return `Bearer ${token}`
  }
  if (credentials.basic !== undefined) {
    const pair = `${credentials.basic.username}:${Redacted.value(credentials.basic.password)}`
    return `Basic ${Base64.encode(pair)}`
  }
  return undefined
}

/**
 * Impersonation (`as`, `as-uid`, `as-groups`, `as-user-extra` in a user entry): read from
 * the kubeconfig, and turned into the `Impersonate-*` headers as client-go does.
 *
 * @internal
 */
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as Effect from "effect/Effect"
import type { KubeConfigError } from "../../Errors.js"
import type { Impersonation } from "../../KubeConfig.js"
import type { Mapping, Where } from "./fields.js"
import * as F from "./fields.js"

/** What Node refuses in a header value (it would throw): line breaks, controls, beyond Latin-1. */
const invalidHeaderCharacter = /[^\t\x20-\x7e\x80-\xff]/

const checkValue = (where: Where, field: string, value: string): Effect.Effect<string, KubeConfigError> =>
  invalidHeaderCharacter.test(value)
    ? Effect.fail(
      F.fail(
        where,
        field,
        "holds a character that cannot be sent in an HTTP header (a line break or a control character)"
      )
    )
    : Effect.succeed(value)

const stringList = (
  where: Where,
  field: string,
  list: ReadonlyArray<unknown>
): Effect.Effect<ReadonlyArray<string>, KubeConfigError> =>
  Effect.forEach(list, (item, i) =>
    typeof item === "string"
      ? checkValue(where, `${field}[${i}]`, item)
      : Effect.fail(F.fail(where, `${field}[${i}]`, "must be a string")))

/**
 * Reads the impersonation fields of a user entry. `undefined` when none asks for anything:
 * an empty `as-user-extra: {}` or `as-groups: []` (minikube writes them) is not
 * impersonation. Groups, a uid or extras without `as` are refused, as the API server
 * would refuse every request: it impersonates a user, never groups alone.
 *
 * @internal
 */
export const read = (
  where: Where,
  body: Mapping,
  field: string
): Effect.Effect<Impersonation | undefined, KubeConfigError> =>
  Effect.gen(function*() {
    const user = yield* F.optionalString(where, body, "as", field)
    const uid = yield* F.optionalString(where, body, "as-uid", field)
    const groups = yield* stringList(
      where,
      `${field}.as-groups`,
      yield* F.optionalList(where, body, "as-groups", field)
    )
    const extraBody = (yield* F.optionalRecord(where, body, "as-user-extra", field)) ?? {}
    const extra: Record<string, ReadonlyArray<string>> = {}
    for (const key of Object.keys(extraBody)) {
      const f = `${field}.as-user-extra[${key}]`
      if (key === "") return yield* Effect.fail(F.fail(where, `${field}.as-user-extra`, "has an empty key"))
      const value = extraBody[key]
      if (value === null || value === undefined) continue
      if (!Array.isArray(value)) return yield* Effect.fail(F.fail(where, f, "must be a list of strings"))
      const values = yield* stringList(where, f, value)
      if (values.length > 0) extra[key] = values
    }
    const hasExtra = Object.keys(extra).length > 0
    if (user === undefined) {
      const without = uid !== undefined
        ? "as-uid"
        : groups.length > 0
        ? "as-groups"
        : hasExtra
        ? "as-user-extra"
        : undefined
      if (without === undefined) return undefined
      return yield* Effect.fail(
        F.fail(
          where,
          `${field}.as`,
          `is required with ${without}: the API server impersonates a user, not ${without} alone`
        )
      )
    }
    yield* checkValue(where, `${field}.as`, user)
    if (uid !== undefined) yield* checkValue(where, `${field}.as-uid`, uid)
    return { user, uid, groups, extra }
  })

/** Bytes allowed unescaped in a header name (RFC 7230 tchar), except `%`, which client-go escapes. */
const tchar = /^[!#$&'*+\-.^_`|~0-9A-Za-z]$/

/**
 * An `as-user-extra` key as it appears in a header name: percent-encoded byte by byte
 * (UTF-8) where the byte is not a token character, or is `%`, as client-go's
 * `headerKeyEscape` does; the API server decodes it.
 *
 * @internal
 */
export const escapeExtraKey = (key: string): string => {
  let out = ""
  for (const byte of new TextEncoder().encode(key)) {
    const char = String.fromCharCode(byte)
    out += byte < 0x80 && tchar.test(char) ? char : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`
  }
  return out
}

/**
 * The headers to send, one entry per header name. A name that must be sent once per value
 * (`Impersonate-Group`, `Impersonate-Extra-*` with several values) maps to the list of
 * its values: the API server reads each line as one value and never splits on commas, so
 * the values must not be joined.
 *
 * @internal
 */
export const headers = (impersonation: Impersonation): ReadonlyArray<readonly [string, ReadonlyArray<string>]> => {
  const out: Array<readonly [string, ReadonlyArray<string>]> = [["impersonate-user", [impersonation.user]]]
  if (impersonation.uid !== undefined) out.push(["impersonate-uid", [impersonation.uid]])
  if (impersonation.groups.length > 0) out.push(["impersonate-group", impersonation.groups])
  for (const key of Object.keys(impersonation.extra)) {
    const values = impersonation.extra[key]!
    if (values.length > 0) out.push([`impersonate-extra-${escapeExtraKey(key)}`, values])
  }
  return out
}

/**
 * Adds the impersonation headers to a request. A header with several values is carried
 * as a list in the header record: the Node transport (undici) sends a list as one line
 * per value, which is what the API server needs; a transport that cannot (fetch joins
 * values with commas) must refuse it rather than impersonate the wrong group.
 *
 * @internal
 */
export const apply = (
  request: HttpClientRequest.HttpClientRequest,
  impersonation: Impersonation | undefined
): HttpClientRequest.HttpClientRequest => {
  if (impersonation === undefined) return request
  let out = request
  for (const [name, values] of headers(impersonation)) {
    // setHeader keeps a list as it is (setHeaders would join it with commas).
    out = HttpClientRequest.setHeader(out, name, values.length === 1 ? values[0]! : (values as unknown as string))
  }
  return out
}

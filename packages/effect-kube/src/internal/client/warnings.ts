/**
 * Server warnings on the request path: the `Warning` headers of an answer (RFC 7234
 * form, `299 - "text"`, several joined by commas) are handed to the `Warnings` service
 * in context, or logged when there is none. Only code 299 is reported, as client-go does.
 * So are the objects a list or watch left out (`invalid: "skip"`) and the objects of a
 * built-in kind kept although they do not fit their Schema (`codec.ts`).
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { RequestTimeout, type ValidationError } from "../../Errors.js"
import * as Warnings from "../../Warnings.js"
import { pathWithQuery, type Spec } from "../request/spec.js"
import type { Deadline } from "../transport/contract.js"
import type { RequestError } from "./requestError.js"

const warningPattern = /(\d{3})\s+(\S+)\s+"((?:[^"\\]|\\.)*)"(?:\s+"[^"]*")?/g

/** The texts of the 299 warnings in a `Warning` header value. */
export const parseWarningHeader = (value: string): ReadonlyArray<string> => {
  const out: Array<string> = []
  for (const match of value.matchAll(warningPattern)) {
    if (match[1] !== "299") continue
    out.push(match[3]!.replace(/\\(.)/g, "$1"))
  }
  return out
}

/** Hands one warning to the service in context, or logs it. */
export const report = (warning: Warnings.Warning): Effect.Effect<void, Warnings.Failure> =>
  Effect.flatMap(
    Effect.serviceOption(Warnings.Warnings),
    Option.match({ onNone: () => Warnings.log(warning), onSome: (service) => service.report(warning) })
  )

/** Reports the warnings of an answer's headers. */
export const reportHeader = (
  method: string,
  path: string,
  header: string | undefined
): Effect.Effect<void, Warnings.Failure> => {
  if (header === undefined || header === "") return Effect.void
  const texts = parseWarningHeader(header)
  if (texts.length === 0) return Effect.void
  return Effect.forEach(texts, (text) => report({ _tag: "HeaderWarning", method, path, text }), { discard: true })
}

/** Reports an object left out because it did not fit its Schema (`invalid: "skip"`). */
export const reportInvalid = (
  method: string,
  path: string,
  error: ValidationError
): Effect.Effect<void, Warnings.Failure> =>
  report({ _tag: "InvalidObject", method, path, text: `left out: ${error.message}`, error })

/**
 * Reports an object of a built-in kind kept as the server sent it although it does not
 * fit its Schema (a newer server's). The error names the object and the paths, not the
 * values found there.
 */
export const reportMismatch = (
  method: string,
  path: string,
  error: ValidationError
): Effect.Effect<void, Warnings.Failure> =>
  report({ _tag: "MismatchedObject", method, path, text: `kept as the server sent it: ${error.message}`, error })

/**
 * Reports an answer's warnings. Under a transport-enforced deadline nothing interrupts the
 * report, so a `Warnings` service that takes too long is cut at the deadline here.
 */
export const reportWarnings = (
  spec: Spec,
  header: string,
  deadline: Deadline | undefined
): Effect.Effect<void, RequestError> =>
  Effect.suspend(() => {
    const report = reportHeader(spec.method, pathWithQuery(spec), header)
    return deadline === undefined ? report : Effect.timeoutOrElse(report, {
      duration: Duration.millis(Math.max(0, deadline.expiresAt - Date.now())),
      orElse: () => {
        deadline.expired = true
        return Effect.fail(new RequestTimeout({ method: spec.method, path: pathWithQuery(spec), timeout: "" }))
      }
    })
  })

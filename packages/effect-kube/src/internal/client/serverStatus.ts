/**
 * Reading a `Status` the server sent, whatever JSON it is: every field is kept only when
 * it has the type the API gives it, so that code reading an `ApiError` (a cause's
 * `reason`, `retryAfterSeconds`, the message) never meets a value of another type, and
 * nothing of unbounded depth is kept (a message that is an array 10,000 levels deep would
 * overflow the stack when the error is printed).
 *
 * @internal
 */
import type { Status } from "../../Errors.js"

type Mutable<T> = { -readonly [K in keyof T]: T[K] }
type Details = NonNullable<Status["details"]>
type StatusCause = NonNullable<Details["causes"]>[number]

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/** Copies the string fields `names` of `from` that are strings. */
const strings = <K extends string>(from: Record<string, unknown>, names: ReadonlyArray<K>): Partial<Record<K, string>> => {
  const out: Partial<Record<K, string>> = {}
  for (const name of names) {
    const value = from[name]
    if (typeof value === "string") out[name] = value
  }
  return out
}

/** The most causes kept of one Status (a 422 names one per invalid field). */
const maxCauses = 1000

/** A count of seconds a server may ask for: finite and not negative. */
export const isSeconds = (u: unknown): u is number => typeof u === "number" && Number.isFinite(u) && u >= 0

/**
 * The Status in a value, if it is one (`kind: "Status"`), with only the fields of the
 * types the API gives them.
 *
 * @internal
 */
export const readStatus = (u: unknown): Status | undefined => {
  if (!isRecord(u) || u["kind"] !== "Status") return undefined
  return statusOf(u)
}

/**
 * A Status from an object that stands for one even without its `kind` (a watch's ERROR
 * event, the status channel of exec), read as `readStatus` reads one.
 *
 * @internal
 */
export const statusOf = (u: unknown): Status => {
  if (!isRecord(u)) return { kind: "Status" }
  const status: Mutable<Status> = { kind: "Status", ...strings(u, ["apiVersion", "status", "message", "reason"]) }
  const code = u["code"]
  if (typeof code === "number" && Number.isSafeInteger(code)) status.code = code
  const metadata = u["metadata"]
  if (isRecord(metadata)) status.metadata = strings(metadata, ["resourceVersion", "continue"])
  const details = u["details"]
  if (isRecord(details)) {
    const read: Mutable<Details> = strings(details, ["name", "group", "kind", "uid"])
    const retryAfter = details["retryAfterSeconds"]
    if (isSeconds(retryAfter)) read.retryAfterSeconds = retryAfter
    const causes = details["causes"]
    if (Array.isArray(causes)) {
      const kept: Array<StatusCause> = []
      for (let i = 0; i < causes.length && kept.length < maxCauses; i++) {
        const cause = causes[i]
        if (isRecord(cause)) kept.push(strings(cause, ["reason", "message", "field"]))
      }
      read.causes = kept
    }
    status.details = read
  }
  return status
}

/**
 * `MicroTime`: the Kubernetes API's timestamp with microseconds, used by Lease
 * `acquireTime` / `renewTime` and events.k8s.io `eventTime` / `series.lastObservedTime`.
 * On the wire it is RFC 3339 in UTC with exactly six fractional digits
 * (`2024-05-01T12:00:00.123456Z`). The API server refuses anything else with a 400, so
 * JavaScript's `toISOString()` (three digits) must never be written there.
 *
 * @example
 * ```ts
 * import { Option } from "effect"
 * import { MicroTime } from "effect-kube"
 *
 * assert.strictEqual(MicroTime.format(new Date(0)), "1970-01-01T00:00:00.000000Z")
 * const parsed = MicroTime.parse("2024-05-01T12:00:00.123456Z")
 * assert.deepStrictEqual(parsed, Option.some(new Date("2024-05-01T12:00:00.123Z"))) // a Date keeps milliseconds
 * ```
 * @since 0.1.0
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"

/**
 * What a MicroTime looks like: a date, a time, exactly six fractional digits and a zone
 * (`Z` or `±hh:mm`), as Go's `time.RFC3339Micro` layout parses it.
 *
 * @since 0.1.0
 * @category constants
 */
export const pattern: RegExp = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})\.(\d{6})(Z|[+-]\d{2}:\d{2})$/

/**
 * Whether a string is a well-formed MicroTime (six fractional digits, a valid date).
 *
 * @since 0.1.0
 * @category predicates
 */
export const isMicroTime = (value: string): boolean => Option.isSome(parse(value))

/**
 * Formats an instant (a Date or epoch milliseconds) as a MicroTime in UTC. JavaScript
 * time has millisecond precision, so the last three digits are zero.
 *
 * @since 0.1.0
 * @category formatting
 */
export const format = (instant: Date | number): string => {
  const date = typeof instant === "number" ? new Date(instant) : instant
  const iso = date.toISOString() // 2024-05-01T12:00:00.123Z, always UTC and three digits
  return `${iso.slice(0, 23)}000Z`
}

/**
 * Reads a MicroTime; `Option.none()` when the string is not one (three digits, no
 * fraction, a bad date). Digits below the millisecond are dropped.
 *
 * @since 0.1.0
 * @category parsing
 */
export const parse = (value: string): Option.Option<Date> => {
  const match = pattern.exec(value)
  if (match === null) return Option.none()
  const [, y, mo, d, h, mi, s] = match
  const month = Number(mo)
  const day = Number(d)
  if (month < 1 || month > 12 || day < 1 || day > 31 || Number(h) > 23 || Number(mi) > 59 || Number(s) > 60) {
    return Option.none()
  }
  const ms = Date.parse(`${y}-${mo}-${d}T${h}:${mi}:${s}.${match[7]!.slice(0, 3)}${match[8]}`)
  if (Number.isNaN(ms)) return Option.none()
  const date = new Date(ms)
  // Date.parse rolls 2024-02-31 over to March: refuse what does not round-trip
  if (match[8] === "Z" && date.getUTCDate() !== day) return Option.none()
  return Option.some(date)
}

/**
 * The current time of the Effect `Clock` as a MicroTime (so `TestClock` controls it).
 *
 * @since 0.1.0
 * @category constructors
 */
export const now: Effect.Effect<string> = Effect.map(Clock.currentTimeMillis, format)

/**
 * A Schema for MicroTime fields: a string that must be a well-formed MicroTime.
 *
 * @since 0.1.0
 * @category schemas
 */
export const MicroTime: Schema.Codec<string> = Schema.String.check(
  // the message says what was expected, never the value found (as every ValidationError of the library)
  Schema.makeFilter((s) => isMicroTime(s) || "expected an RFC 3339 time with six fractional digits")
).annotate({ identifier: "MicroTime" })

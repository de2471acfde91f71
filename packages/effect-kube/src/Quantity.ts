/**
 * Resource quantities (`"500m"`, `"1.5Gi"`, `"2e3"`) as Kubernetes' `resource.Quantity`
 * reads and writes them. Objects keep quantities as the strings the server sent; this
 * module parses one into an exact value (a count of nano-units, a `bigint`, never a
 * float), compares and adds values, and formats a value back in the canonical form the
 * API server would write.
 *
 * The rules: a signed decimal number followed by a binary suffix (`Ki Mi Gi Ti Pi Ei`,
 * powers of 1024), a decimal suffix (`n u m` nothing `k M G T P E`) or a decimal exponent
 * (`e3`, `E-2`). Precision below 1n is rounded up. The canonical form keeps the kind of
 * suffix the quantity was written with and uses the largest suffix that keeps the number
 * an integer: `1.5` is `"1500m"`, `2048Ki` is `"2Mi"`, `2000` is `"2k"`, `1000e3` is
 * `"1e6"`; a binary quantity below 1024 or not a whole number is written in decimal.
 *
 * @example
 * ```ts
 * import { Result } from "effect"
 * import { Quantity } from "effect-kube"
 *
 * const total = Result.all([Quantity.parse("500m"), Quantity.parse("1.5")]).pipe(
 *   Result.map(([a, b]) => Quantity.format(Quantity.add(a, b)))
 * )
 * assert.deepStrictEqual(total, Result.succeed("2"))
 * ```
 * @since 0.1.0
 */
import * as order from "effect/Order"
import * as Result from "effect/Result"
import { ValidationError } from "./Errors.js"

/**
 * How a quantity was written, which decides how it is formatted back.
 *
 * @since 0.1.0
 * @category models
 */
export type Format = "BinarySI" | "DecimalSI" | "DecimalExponent"

/**
 * An exact quantity: `nanos` counts units of 10^-9 (`"1"` is 1_000_000_000n), `format`
 * is how it is written back.
 *
 * @since 0.1.0
 * @category models
 */
export interface Quantity {
  readonly nanos: bigint
  readonly format: Format
}

const NANO = 1_000_000_000n

const binary: Record<string, bigint> = { Ki: 10n, Mi: 20n, Gi: 30n, Ti: 40n, Pi: 50n, Ei: 60n }
const decimal: Record<string, number> = { n: -9, u: -6, m: -3, "": 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 }
const decimalSuffix = new Map(Object.entries(decimal).map(([suffix, exponent]) => [exponent, suffix]))
const binarySuffix = new Map(Object.entries(binary).map(([suffix, exponent]) => [exponent, suffix]))

const pattern = /^([+-]?)(\d+(?:\.\d*)?|\.\d+)(Ki|Mi|Gi|Ti|Pi|Ei|[eE][+-]?\d+|[numkMGTPE])?$/

/** Exponents this far from zero are refused: `1e1000000` would take the process's memory. */
const maxExponent = 1000

const pow10 = (n: number): bigint => 10n ** BigInt(n)

/** `a / b` rounded away from zero, as Kubernetes rounds what lies below 1n. */
const divideUp = (a: bigint, b: bigint): bigint => {
  const q = a / b
  return q * b === a ? q : a < 0n ? q - 1n : q + 1n
}

const invalid = (input: string, why: string): ValidationError =>
  new ValidationError({ subject: `quantity ${JSON.stringify(input)}`, detail: why })

/**
 * Parses a quantity. Anything that is not one (`"1.2.3"`, `"5 Gi"`, `"1Kb"`, `""`) is a
 * `ValidationError` naming the input.
 *
 * @since 0.1.0
 * @category parsing
 */
export const parse = (input: string): Result.Result<Quantity, ValidationError> => {
  const m = pattern.exec(input)
  if (m === null) {
    return Result.fail(
      invalid(input, "is not a quantity: a number with an optional suffix (Ki Mi Gi Ti Pi Ei, n u m k M G T P E, or e<exponent>)")
    )
  }
  const [, sign, number, suffix = ""] = m as unknown as [string, string, string, string | undefined]
  const dot = number.indexOf(".")
  const fraction = dot === -1 ? "" : number.slice(dot + 1)
  const digits = BigInt((dot === -1 ? number : number.slice(0, dot) + fraction) || "0")
  const signed = sign === "-" ? -digits : digits
  // value = signed * 10^-fraction.length * multiplier, in nanos
  let format: Format = "DecimalSI"
  let scale = 9 - fraction.length
  let factor = 1n
  if (suffix in binary) {
    format = "BinarySI"
    factor = 1n << binary[suffix]!
  } else if (/^[eE]./.test(suffix)) {
    format = "DecimalExponent"
    const exponent = Number(suffix.slice(1))
    if (Math.abs(exponent) > maxExponent) return Result.fail(invalid(input, `has an exponent beyond ±${maxExponent}`))
    scale += exponent
  } else {
    scale += decimal[suffix]!
  }
  const scaled = signed * factor
  const nanos = scale >= 0 ? scaled * pow10(scale) : divideUp(scaled, pow10(-scale))
  return Result.succeed({ nanos, format })
}

/**
 * Parses a quantity, throwing the `ValidationError` when it is not one. For literals in code.
 *
 * @since 0.1.0
 * @category parsing
 */
export const unsafeParse = (input: string): Quantity => Result.getOrThrowWith(parse(input), (e) => e)

/**
 * A quantity from a number of nano-units and a format.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (nanos: bigint, format: Format = "DecimalSI"): Quantity => ({ nanos, format })

const formatDecimal = (nanos: bigint, exponentForm: boolean): string => {
  if (nanos === 0n) return "0"
  let mantissa = nanos
  let exponent = -9
  while (mantissa % 1000n === 0n) {
    mantissa /= 1000n
    exponent += 3
  }
  if (exponentForm || !decimalSuffix.has(exponent)) return exponent === 0 ? `${mantissa}` : `${mantissa}e${exponent}`
  return `${mantissa}${decimalSuffix.get(exponent)!}`
}

/**
 * The canonical string of a quantity, as the API server writes it back.
 *
 * @since 0.1.0
 * @category formatting
 */
export const format = (q: Quantity): string => {
  if (q.format === "BinarySI") {
    const whole = q.nanos % NANO === 0n
    const bytes = q.nanos / NANO
    if (whole && (bytes >= 1024n || bytes <= -1024n)) {
      let mantissa = bytes
      let exponent = 0n
      while (exponent < 60n && mantissa % 1024n === 0n) {
        mantissa /= 1024n
        exponent += 10n
      }
      return `${mantissa}${binarySuffix.get(exponent) ?? ""}`
    }
    return formatDecimal(q.nanos, false)
  }
  return formatDecimal(q.nanos, q.format === "DecimalExponent")
}

/**
 * Parses and formats back: the canonical form of a quantity string (`"1.5Gi"` is `"1536Mi"`).
 *
 * @since 0.1.0
 * @category formatting
 */
export const canonicalize = (input: string): Result.Result<string, ValidationError> => Result.map(parse(input), format)

/**
 * Orders quantities by value (their format aside).
 *
 * @since 0.1.0
 * @category instances
 */
export const Order: order.Order<Quantity> = (a, b) => (a.nanos < b.nanos ? -1 : a.nanos > b.nanos ? 1 : 0)

/**
 * `-1`, `0` or `1` as `a` is less than, equal to or greater than `b`.
 *
 * @since 0.1.0
 * @category comparisons
 */
export const compare = (a: Quantity, b: Quantity): -1 | 0 | 1 => Order(a, b)

/**
 * Whether two quantities have the same value (`"1Ki"` and `"1024"` do).
 *
 * @since 0.1.0
 * @category comparisons
 */
export const equals = (a: Quantity, b: Quantity): boolean => a.nanos === b.nanos

/**
 * The sum, written in the format of the first (of the second when the first is zero), as
 * Kubernetes adds quantities.
 *
 * @since 0.1.0
 * @category math
 */
export const add = (a: Quantity, b: Quantity): Quantity => ({
  nanos: a.nanos + b.nanos,
  format: a.nanos === 0n ? b.format : a.format
})

/**
 * The difference `a - b`, in the format of `a`.
 *
 * @since 0.1.0
 * @category math
 */
export const subtract = (a: Quantity, b: Quantity): Quantity => ({ nanos: a.nanos - b.nanos, format: a.format })

/**
 * The value as a JavaScript number (approximate for very large or very precise values):
 * `"500m"` is `0.5`, `"1Ki"` is `1024`.
 *
 * @since 0.1.0
 * @category conversions
 */
export const toNumber = (q: Quantity): number => {
  const whole = q.nanos / NANO
  const rest = q.nanos - whole * NANO
  return Number(whole) + Number(rest) / 1e9
}

/**
 * The value in thousandths, rounded up (CPU in millicores: `"1.5"` is `1500n`).
 *
 * @since 0.1.0
 * @category conversions
 */
export const toMillis = (q: Quantity): bigint => divideUp(q.nanos, 1_000_000n)

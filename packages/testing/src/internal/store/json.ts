/**
 * Plain-JSON helpers for the fake API server. Objects in the store are plain JSON
 * (what came over the wire); their copies are what a JSON round trip would make.
 *
 * @internal
 */

/** @internal */
export type Json = null | boolean | number | string | ReadonlyArray<Json> | { readonly [key: string]: Json }

/** @internal */
export type JsonObject = Record<string, unknown>

/** @internal */
export const isObject = (u: unknown): u is JsonObject => typeof u === "object" && u !== null && !Array.isArray(u)

/**
 * A deep copy as a JSON round trip makes it (keys holding `undefined` dropped, `undefined`
 * in arrays and non-finite numbers `null`, a `Date` its string), walking plain objects and
 * arrays directly: 4-5 times faster than the round trip on a pod. Anything else is copied
 * by the round trip. `shared`, where it is found, is kept as it is instead of copied (a
 * part the caller knows is never changed in place).
 *
 * @internal
 */
export const clone = <A>(value: A, shared?: object): A =>
  value === undefined ? value : copyJson(value, shared) as A

const copyJson = (value: unknown, shared: object | undefined): unknown => {
  if (typeof value !== "object") {
    return typeof value === "number" && !Number.isFinite(value) ? null : value
  }
  if (value === null || value === shared) return value
  if (Array.isArray(value)) {
    const n = value.length
    const out = new Array(n)
    for (let i = 0; i < n; i++) {
      const v = value[i]
      out[i] = v === undefined || typeof v === "function" || typeof v === "symbol" ? null : copyJson(v, shared)
    }
    return out
  }
  const proto = Object.getPrototypeOf(value)
  if ((proto !== Object.prototype && proto !== null) || "toJSON" in value) return JSON.parse(JSON.stringify(value))
  const out: JsonObject = {}
  const from = value as JsonObject
  for (const k in from) {
    const v = from[k]
    if (v === undefined || typeof v === "function" || typeof v === "symbol") continue
    const copied = typeof v === "object" || typeof v === "number" ? copyJson(v, shared) : v
    if (k === "__proto__") Object.defineProperty(out, k, { value: copied, enumerable: true, writable: true, configurable: true })
    else out[k] = copied
  }
  return out
}

/** @internal */
export const deepEqual = (a: unknown, b: unknown): boolean => {
  if (a === b) return true
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false
    for (let i = 0; i < a.length; i++) if (!deepEqual(a[i], b[i])) return false
    return true
  }
  if (Array.isArray(b)) return false
  const x = a as JsonObject
  const y = b as JsonObject
  // keys holding `undefined` count as absent, as in JSON
  let defined = 0
  for (const k in x) {
    const v = x[k]
    if (v === undefined) continue
    defined++
    if (!deepEqual(v, y[k])) return false
  }
  for (const k in y) if (y[k] !== undefined) defined--
  return defined === 0
}

/** Reads `obj.a.b.c`, `undefined` when any step is missing. @internal */
export const getPath = (obj: unknown, path: ReadonlyArray<string>): unknown => {
  let node: unknown = obj
  for (const key of path) {
    if (!isObject(node)) return undefined
    node = node[key]
  }
  return node
}

/** The object at `obj[key]`, created when absent. @internal */
export const child = (obj: JsonObject, key: string): JsonObject => {
  const existing = obj[key]
  if (isObject(existing)) return existing
  const created: JsonObject = {}
  obj[key] = created
  return created
}

/** @internal */
export const metadataOf = (obj: JsonObject): JsonObject => child(obj, "metadata")

/** @internal */
export const stringAt = (obj: unknown, ...path: ReadonlyArray<string>): string | undefined => {
  const value = getPath(obj, path)
  return typeof value === "string" ? value : undefined
}

/** @internal */
export const now = (): string => new Date().toISOString().replace(/\.\d{3}Z$/, "Z")

const suffixAlphabet = "bcdfghjklmnpqrstvwxz2456789"

/** The 5-character suffix the API server appends for `generateName`. @internal */
export const randomSuffix = (length = 5): string => {
  let out = ""
  for (let i = 0; i < length; i++) out += suffixAlphabet[Math.floor(Math.random() * suffixAlphabet.length)]
  return out
}

/**
 * Removes a field by setting it to `undefined`: JSON leaves it out, and the object
 * keeps its fast shape (a `delete` turns a V8 object into a slow dictionary, which
 * makes every later `JSON.stringify` of it slower).
 *
 * @internal
 */
export const drop = (obj: JsonObject, key: string): void => {
  if (obj[key] !== undefined) obj[key] = undefined
}

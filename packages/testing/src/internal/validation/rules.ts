/**
 * The small rule engine the kinds' validations are written in: a `Rule` reads the value
 * at a path of the object and runs checks on it; checks push field errors. Most of a
 * kind's rules are rows of a table (`at("spec.replicas", nonNegative)`); what relates
 * several fields is a plain function of the same shape.
 *
 * @internal
 */
import { deepEqual, isObject, type JsonObject } from "../store/json.js"
import * as Field from "./field.js"
import * as Names from "./names.js"

/** Where errors go. @internal */
export type Errors = Array<Field.FieldError>

/** A check of one value at a path. @internal */
export type Check = (value: unknown, path: string, errors: Errors) => void

/** A rule of a whole object (the new one, and the stored one on update). @internal */
export type Rule = (obj: JsonObject, errors: Errors, old: JsonObject | undefined) => void

/** The path of a child field. @internal */
export const child = (path: string, key: string): string => (path === "" ? key : `${path}.${key}`)

/** The path of a list element. @internal */
export const index = (path: string, i: number): string => `${path}[${i}]`

/** The path of a map entry (`requests[cpu]`). @internal */
export const key = (path: string, k: string): string => `${path}[${k}]`

/** The value at a dotted path, `undefined` when a step is missing. @internal */
export const valueAt = (obj: unknown, path: string): unknown => {
  let node = obj
  for (const step of path.split(".")) {
    if (!isObject(node)) return undefined
    node = node[step]
  }
  return node
}

/** Go's zero value test of a JSON value: absent, null, "", 0, false, [] or {}. @internal */
export const isEmpty = (value: unknown): boolean =>
  value === undefined || value === null || value === "" || value === 0 || value === false ||
  (Array.isArray(value) && value.length === 0) || (isObject(value) && Object.keys(value).length === 0)

/** Runs checks on the value at a path of the object. @internal */
export const at = (path: string, ...checks: ReadonlyArray<Check>): Rule => (obj, errors) => {
  const value = valueAt(obj, path)
  for (const check of checks) check(value, path, errors)
}

/** Runs checks on the value only when it is set. @internal */
export const ifSet = (...checks: ReadonlyArray<Check>): Check => (value, path, errors) => {
  if (value === undefined || value === null) return
  for (const check of checks) check(value, path, errors)
}

/** `Required value` (with an optional detail) when unset or empty. @internal */
export const required = (detail = ""): Check => (value, path, errors) => {
  if (isEmpty(value)) errors.push(Field.required(path, detail))
}

/** @internal */
export const nonNegative: Check = (value, path, errors) => {
  if (typeof value === "number" && value < 0) errors.push(Field.invalid(path, value, Names.isNegativeErrorMsg))
}

/** @internal */
export const positive: Check = (value, path, errors) => {
  if (typeof value === "number" && value <= 0) errors.push(Field.invalid(path, value, "must be greater than 0"))
}

/** @internal */
export const inRange = (lo: number, hi: number): Check => (value, path, errors) => {
  if (typeof value === "number" && (value < lo || value > hi)) {
    errors.push(Field.invalid(path, value, Names.inclusiveRangeError(lo, hi)))
  }
}

/** `Unsupported value` when set to anything else; `Required value` when unset and `whenEmpty` says so. @internal */
export const oneOf = (values: ReadonlyArray<string>, whenEmpty: "required" | "skip" | "unsupported" = "skip"): Check =>
(value, path, errors) => {
  if (value === undefined || value === null || value === "") {
    if (whenEmpty === "required") errors.push(Field.required(path, ""))
    else if (whenEmpty === "unsupported") errors.push(Field.notSupported(path, value ?? "", values))
    return
  }
  if (typeof value !== "string" || !values.includes(value)) errors.push(Field.notSupported(path, value, values))
}

/** `Invalid value` with each message a string rule gives. @internal */
export const matches = (rule: (s: string) => ReadonlyArray<string>): Check => (value, path, errors) => {
  if (typeof value !== "string") return
  for (const msg of rule(value)) errors.push(Field.invalid(path, value, msg))
}

/** Runs a check on each element of a list. @internal */
export const each = (check: Check): Check => (value, path, errors) => {
  if (!Array.isArray(value)) return
  value.forEach((item, i) => check(item, index(path, i), errors))
}

/** Runs checks on fields of an object value (by field name). @internal */
export const fields = (checks: Readonly<Record<string, Check | ReadonlyArray<Check>>>): Check =>
(value, path, errors) => {
  if (!isObject(value)) return
  for (const name of Object.keys(checks)) {
    const c = checks[name]!
    for (const check of Array.isArray(c) ? c : [c as Check]) check(value[name], child(path, name), errors)
  }
}

/** `Duplicate value` for list elements whose `field` repeats. @internal */
export const uniqueBy = (field: string): Check => (value, path, errors) => {
  if (!Array.isArray(value)) return
  const seen = new Set<unknown>()
  value.forEach((item, i) => {
    const k = isObject(item) ? item[field] : undefined
    if (k === undefined || k === "") return
    if (seen.has(k)) errors.push(Field.duplicate(child(index(path, i), field), k))
    else seen.add(k)
  })
}

/** `field is immutable` when the value at a path changed from the stored object's. @internal */
export const immutableAt = (path: string, print: (v: unknown) => unknown = (v) => v ?? ""): Rule =>
(obj, errors, old) => {
  if (old === undefined) return
  const now = valueAt(obj, path)
  if (!deepEqual(now, valueAt(old, path))) errors.push(Field.immutable(path, print(now)))
}

/** Runs rules in order, collecting their errors. @internal */
export const run = (rules: ReadonlyArray<Rule>, obj: JsonObject, old: JsonObject | undefined): Errors => {
  const errors: Errors = []
  for (const rule of rules) rule(obj, errors, old)
  return errors
}

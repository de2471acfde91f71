/**
 * Field errors as the API server reports them (k8s.io/apimachinery `field.Error`): a
 * type, the field's path, the bad value and a detail, printed `path: Type: value:
 * detail`, and gathered into a 422 Invalid Status whose causes name each field.
 *
 * Values are printed as Go prints them (`%q` for strings, `%v` for numbers, `%#v` for
 * the rest): the few composite values the rules report (label maps, selectors, role
 * references) are given as `GoValue`s already printed.
 *
 * @internal
 */
import * as Status from "../serve/statusBodies.js"

/** @internal */
export type ErrorType =
  | "FieldValueNotFound"
  | "FieldValueRequired"
  | "FieldValueDuplicate"
  | "FieldValueInvalid"
  | "FieldValueNotSupported"
  | "FieldValueForbidden"
  | "FieldValueTooLong"
  | "FieldValueTooMany"
  | "FieldValueTypeInvalid"
  | "InternalError"

const typeText: Record<ErrorType, string> = {
  FieldValueNotFound: "Not found",
  FieldValueRequired: "Required value",
  FieldValueDuplicate: "Duplicate value",
  FieldValueInvalid: "Invalid value",
  FieldValueNotSupported: "Unsupported value",
  FieldValueForbidden: "Forbidden",
  FieldValueTooLong: "Too long",
  FieldValueTooMany: "Too many",
  FieldValueTypeInvalid: "Invalid value",
  InternalError: "Internal error"
}

/** A value printed the way Go's `%#v` (or a `String()` method) prints it. @internal */
export class GoValue {
  constructor(readonly text: string) {}
}

/** What `field.Error` carries; `value` is left out of the message when `omit`. @internal */
export interface FieldError {
  readonly type: ErrorType
  readonly field: string
  readonly value: unknown
  readonly detail: string
  readonly omit?: boolean | undefined
}

/** Go's `strconv.Quote` for the strings the rules print (JSON's escapes are Go's for printable text). */
export const quote = (s: string): string => JSON.stringify(s)

const printValue = (value: unknown): string => {
  if (value instanceof GoValue) return value.text
  if (value === null || value === undefined) return "null"
  if (typeof value === "string") return quote(value)
  if (typeof value === "number" || typeof value === "boolean") return String(value)
  return goValue(value).text
}

/** The message of an error without its field (`ErrorBody`), as the Status causes carry it. @internal */
export const body = (e: FieldError): string => {
  const plain = e.omit === true || e.type === "FieldValueRequired" || e.type === "FieldValueForbidden" ||
    e.type === "FieldValueTooLong" || e.type === "InternalError"
  let s = plain ? typeText[e.type] : `${typeText[e.type]}: ${printValue(e.value)}`
  if (e.detail !== "") s += `: ${e.detail}`
  return s
}

/** `path: body`. @internal */
export const message = (e: FieldError): string => `${e.field}: ${body(e)}`

/** @internal */
export const required = (field: string, detail = ""): FieldError => ({ type: "FieldValueRequired", field, value: "", detail })

/** @internal */
export const invalid = (field: string, value: unknown, detail: string): FieldError => ({
  type: "FieldValueInvalid",
  field,
  value,
  detail
})

/** @internal */
export const typeInvalid = (field: string, value: unknown, detail: string): FieldError => ({
  type: "FieldValueTypeInvalid",
  field,
  value,
  detail
})

/** @internal */
export const notSupported = (field: string, value: unknown, valid: ReadonlyArray<string>): FieldError => ({
  type: "FieldValueNotSupported",
  field,
  value,
  detail: valid.length > 0 ? `supported values: ${valid.map(quote).join(", ")}` : ""
})

/** @internal */
export const forbidden = (field: string, detail: string): FieldError => ({
  type: "FieldValueForbidden",
  field,
  value: "",
  detail
})

/** @internal */
export const duplicate = (field: string, value: unknown): FieldError => ({
  type: "FieldValueDuplicate",
  field,
  value,
  detail: ""
})

/** @internal */
export const notFound = (field: string, value: unknown): FieldError => ({
  type: "FieldValueNotFound",
  field,
  value,
  detail: ""
})

/** `Too long: may not be more than N bytes` (the value is never printed). @internal */
export const tooLong = (field: string, max: number): FieldError => ({
  type: "FieldValueTooLong",
  field,
  value: "",
  detail: max >= 0 ? `may not be more than ${max} bytes` : "value is too long"
})

/** @internal */
export const tooMany = (field: string, actual: number, max: number): FieldError => ({
  type: "FieldValueTooMany",
  field,
  value: actual,
  detail: max >= 0 ? `must have at most ${max} items` : "too many items",
  omit: actual < 0
})

/** The message every immutable field gets. @internal */
export const immutableMessage = "field is immutable"

/** `Invalid value: <new>: field is immutable` when a field changed. @internal */
export const immutable = (field: string, value: unknown): FieldError => invalid(field, value, immutableMessage)

/** A Go `%#v` of a plain JSON value: `map[string]string{"a":"b"}`, `[]string{"a"}`, `"x"`, `1`. @internal */
export const goValue = (value: unknown): GoValue => {
  if (value instanceof GoValue) return value
  if (value === null || value === undefined) return new GoValue("<nil>")
  if (typeof value === "string") return new GoValue(quote(value))
  if (typeof value === "number" || typeof value === "boolean") return new GoValue(String(value))
  if (Array.isArray(value)) {
    if (value.every((v) => typeof v === "string")) return new GoValue(`[]string{${value.map(quote).join(", ")}}`)
    return new GoValue(`[]interface {}{${value.map((v) => goValue(v).text).join(", ")}}`)
  }
  const record = value as Record<string, unknown>
  const keys = Object.keys(record).filter((k) => record[k] !== undefined).sort()
  const strings = keys.every((k) => typeof record[k] === "string")
  const entries = keys.map((k) => `${quote(k)}:${goValue(record[k]).text}`).join(", ")
  return new GoValue(strings ? `map[string]string{${entries}}` : `map[string]interface {}{${entries}}`)
}

/** A Go struct printed by `%#v`: `pkg.Type{A:"x", B:1}` with the fields given in order. @internal */
export const goStruct = (type: string, fields: ReadonlyArray<readonly [string, GoValue]>): GoValue =>
  new GoValue(`${type}{${fields.map(([k, v]) => `${k}:${v.text}`).join(", ")}}`)

/** A label map (`map[string]string{...}`, `map[string]string(nil)` when absent). @internal */
export const goLabels = (labels: unknown): GoValue =>
  labels === undefined || labels === null || typeof labels !== "object"
    ? new GoValue("map[string]string(nil)")
    : goValue(labels)

/** A `*metav1.LabelSelector` as `%#v` prints it (`v1.LabelSelector{MatchLabels:..., MatchExpressions:...}`). @internal */
export const goSelector = (selector: unknown): GoValue => {
  if (selector === undefined || selector === null || typeof selector !== "object") return new GoValue("<nil>")
  const s = selector as Record<string, unknown>
  const expressions = Array.isArray(s.matchExpressions)
    ? new GoValue(
      `[]v1.LabelSelectorRequirement{${
        s.matchExpressions.map((e) => {
          const r = (e ?? {}) as Record<string, unknown>
          const values = Array.isArray(r.values) ? goValue(r.values).text : "[]string(nil)"
          return `v1.LabelSelectorRequirement{Key:${quote(String(r.key ?? ""))}, Operator:${
            quote(String(r.operator ?? ""))
          }, Values:${values}}`
        }).join(", ")
      }}`
    )
    : new GoValue("[]v1.LabelSelectorRequirement(nil)")
  return goStruct("v1.LabelSelector", [["MatchLabels", goLabels(s.matchLabels)], ["MatchExpressions", expressions]])
}

/** What a kind's errors are reported against: its group and kind (the Status' `Kind.group "name" is invalid`). @internal */
export interface Target {
  readonly group: string
  readonly kind: string
  readonly plural: string
}

/**
 * The 422 Invalid Status of a list of errors, as `apierrors.NewInvalid` builds it: every
 * error a cause, the message the errors' aggregate (repeated messages once).
 *
 * @internal
 */
export const toStatus = (target: Target, name: string, errors: ReadonlyArray<FieldError>): Status.StatusError =>
  Status.invalid(
    target,
    name,
    errors.map((e) => ({ reason: e.type, field: e.field, message: body(e) }))
  )

/** Fails with the 422 when there are errors. @internal */
export const throwIfAny = (target: Target, name: string, errors: ReadonlyArray<FieldError>): void => {
  if (errors.length > 0) throw toStatus(target, name, errors)
}

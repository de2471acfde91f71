/**
 * JSON values as CEL sees them under a structural schema, as the API server converts them
 * (apiextensions-apiserver's `UnstructuredToVal`): `integer` fields are CEL ints, `number` fields doubles,
 * strings of format `date-time` timestamps, `duration` durations and `byte` bytes; objects with properties
 * are reached by field (names that are not CEL identifiers escaped: `-` as `__dash__`, `.` as `__dot__`, ...),
 * objects with `additionalProperties` are maps, and where the schema says nothing (int-or-string,
 * preserve-unknown-fields) a number is an int when it is whole, else a double.
 *
 * @internal
 */
import type { JSONSchemaProps } from "../../resources/generated.js"
import type { Library } from "./library.js"

const keywords = new Set([
  "true",
  "false",
  "null",
  "in",
  "as",
  "break",
  "const",
  "continue",
  "else",
  "for",
  "function",
  "if",
  "import",
  "let",
  "loop",
  "package",
  "namespace",
  "return",
  "var",
  "void",
  "while"
])

/** A property's name in CEL, or undefined when it cannot be written (such a field is not visible to rules). */
export const escapeName = (name: string): string | undefined => {
  if (keywords.has(name)) return `__${name}__`
  if (!/^[a-zA-Z_][a-zA-Z0-9_./-]*$/.test(name)) return undefined
  return name.replace(/__/g, "__underscores__").replace(/\./g, "__dot__").replace(/-/g, "__dash__").replace(
    /\//g,
    "__slash__"
  )
}

const untyped = (lib: Library, value: unknown): unknown => {
  if (typeof value === "number") return Number.isInteger(value) ? BigInt(value) : value
  if (Array.isArray(value)) return value.map((v) => untyped(lib, v))
  if (typeof value === "object" && value !== null) {
    const out: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(value)) out[k] = untyped(lib, v)
    return out
  }
  return value
}

const base64 = (text: string): Uint8Array => Uint8Array.from(atob(text), (c) => c.charCodeAt(0))

/** A JSON value under its schema, as a CEL value. @internal */
export const toCel = (lib: Library, value: unknown, schema: JSONSchemaProps | undefined): unknown => {
  if (value === null || value === undefined) return null
  if (schema === undefined || schema.type === undefined) return untyped(lib, value)
  switch (schema.type) {
    case "integer":
      return typeof value === "number" && Number.isInteger(value) ? BigInt(value) : untyped(lib, value)
    case "number":
      return value
    case "string":
      if (typeof value !== "string") return untyped(lib, value)
      if (schema.format === "date-time" || schema.format === "datetime" || schema.format === "date") {
        const date = new Date(value)
        return Number.isNaN(date.getTime()) ? value : lib.timestamp(date)
      }
      if (schema.format === "duration") {
        try {
          return lib.duration(value)
        } catch {
          return value
        }
      }
      if (schema.format === "byte") {
        try {
          return base64(value)
        } catch {
          return value
        }
      }
      return value
    case "array": {
      if (!Array.isArray(value)) return untyped(lib, value)
      const items = schema.items as JSONSchemaProps | undefined
      return value.map((v) => toCel(lib, v, items))
    }
    case "object": {
      if (typeof value !== "object" || Array.isArray(value)) return untyped(lib, value)
      const out: Record<string, unknown> = {}
      const properties = schema.properties
      const additional = typeof schema.additionalProperties === "object"
        ? (schema.additionalProperties as JSONSchemaProps)
        : undefined
      for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
        const field = properties?.[k]
        if (field !== undefined) {
          const name = escapeName(k)
          if (name !== undefined) out[name] = toCel(lib, v, field)
        } else if (additional !== undefined) {
          out[k] = toCel(lib, v, additional)
        } else if (schema["x-kubernetes-preserve-unknown-fields"] === true || properties === undefined) {
          out[k] = untyped(lib, v)
        }
      }
      return out
    }
    default:
      return untyped(lib, value)
  }
}

const clone = (value: unknown): unknown => (value === undefined ? undefined : JSON.parse(JSON.stringify(value)))

/**
 * A value with the schema's `default`s filled in where fields are left out (or null where the field is not
 * nullable), as the API server defaults an object before validating it: rules are written against defaulted
 * objects (Gateway API's `self.group == ...` reads a field that has a default). The value is not changed.
 *
 * @internal
 */
export const withDefaults = (schema: JSONSchemaProps | undefined, value: unknown): unknown => {
  if (schema === undefined || value === null || value === undefined) return value
  if (Array.isArray(value)) {
    const items = schema.items as JSONSchemaProps | undefined
    return items === undefined ? value : value.map((v) => withDefaults(items, v))
  }
  if (typeof value !== "object") return value
  const out: Record<string, unknown> = { ...(value as Record<string, unknown>) }
  for (const [key, property] of Object.entries(schema.properties ?? {})) {
    const present = out[key]
    if (property.default !== undefined && (present === undefined || (present === null && property.nullable !== true))) {
      out[key] = withDefaults(property, clone(property.default))
    } else if (present !== undefined) {
      out[key] = withDefaults(property, present)
    }
  }
  const additional = typeof schema.additionalProperties === "object"
    ? (schema.additionalProperties as JSONSchemaProps)
    : undefined
  if (additional !== undefined) {
    for (const [key, v] of Object.entries(out)) if (schema.properties?.[key] === undefined) out[key] = withDefaults(additional, v)
  }
  return out
}

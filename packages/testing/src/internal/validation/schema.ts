/**
 * Custom resources against their CRD's structural schema (`openAPIV3Schema`), as
 * apiextensions-apiserver treats them: unknown fields pruned (unless
 * `x-kubernetes-preserve-unknown-fields`), `default`s applied (and non-nullable nulls
 * without one dropped), then validated (types, `x-kubernetes-int-or-string`, nullable,
 * required, enum, pattern, lengths, bounds, item and property counts, list types), each
 * problem a field error worded as kube-openapi words it (`spec.replicas in body must be
 * of type integer: "string"`).
 *
 * @internal
 */
import { clone, deepEqual, isObject, type JsonObject } from "../store/json.js"
import * as Field from "./field.js"
import type { Errors } from "./rules.js"

/** A node of a structural schema: what the rules here read of a JSONSchemaProps. @internal */
export type Schema = JsonObject

const props = (s: Schema): JsonObject | undefined => (isObject(s.properties) ? s.properties : undefined)
const additional = (s: Schema): Schema | undefined =>
  isObject(s.additionalProperties) ? s.additionalProperties : undefined
const items = (s: Schema): Schema | undefined => (isObject(s.items) ? s.items : undefined)
const preserves = (s: Schema): boolean => s["x-kubernetes-preserve-unknown-fields"] === true
const embedded = (s: Schema): boolean => s["x-kubernetes-embedded-resource"] === true

const objectMetaFields = new Set([
  "name", "generateName", "namespace", "selfLink", "uid", "resourceVersion", "generation", "creationTimestamp",
  "deletionTimestamp", "deletionGracePeriodSeconds", "labels", "annotations", "ownerReferences", "finalizers",
  "managedFields"
])

const fieldPath = (path: string, key: string): string => (path === "" ? key : `${path}.${key}`)

/** Drops what ObjectMeta does not know from an embedded or root `metadata`. */
const pruneMeta = (metadata: unknown, path: string, pruned: Array<string>): void => {
  if (!isObject(metadata)) return
  for (const k of Object.keys(metadata)) {
    if (metadata[k] !== undefined && !objectMetaFields.has(k)) {
      pruned.push(fieldPath(path, k))
      delete metadata[k]
    }
  }
}

/**
 * Removes, in place, the fields of `value` its schema does not declare, answering their
 * paths (`spec.foo`, `spec.items[0].bar`). At the root and in embedded resources
 * `apiVersion`, `kind` and `metadata` are always kept.
 *
 * @internal
 */
export const prune = (value: unknown, schema: Schema | undefined, path = "", root = true): Array<string> => {
  const pruned: Array<string> = []
  pruneInto(value, schema, path, root, pruned)
  return pruned
}

const pruneInto = (value: unknown, schema: Schema | undefined, path: string, root: boolean, pruned: Array<string>): void => {
  if (schema === undefined) return
  if (Array.isArray(value)) {
    const element = items(schema)
    value.forEach((v, i) => pruneInto(v, element, `${path}[${i}]`, false, pruned))
    return
  }
  if (!isObject(value)) return
  const known = props(schema)
  const extra = additional(schema)
  const keepsMeta = root || embedded(schema)
  for (const k of Object.keys(value)) {
    const at = fieldPath(path, k)
    if (keepsMeta && (k === "apiVersion" || k === "kind")) continue
    if (keepsMeta && k === "metadata") {
      pruneMeta(value.metadata, at, pruned)
      continue
    }
    const sub = known?.[k]
    if (isObject(sub)) pruneInto(value[k], sub, at, false, pruned)
    else if (extra !== undefined) pruneInto(value[k], extra, at, false, pruned)
    else if (!preserves(schema) && schema.additionalProperties !== true && value[k] !== undefined) {
      pruned.push(at)
      delete value[k]
    }
  }
}

/**
 * Applies `default`s in place: a declared property missing from an object gets a copy of
 * its default (and the defaults inside it); a `null` where the schema is not nullable is
 * replaced by the default, or dropped when there is none.
 *
 * @internal
 */
export const applyDefaults = (value: unknown, schema: Schema | undefined): void => {
  if (schema === undefined) return
  if (Array.isArray(value)) {
    const element = items(schema)
    if (element !== undefined) value.forEach((v) => applyDefaults(v, element))
    return
  }
  if (!isObject(value)) return
  const known = props(schema)
  if (known !== undefined) {
    for (const [k, sub] of Object.entries(known)) {
      if (!isObject(sub)) continue
      const current = value[k]
      if (current === null && sub.nullable !== true) {
        if (sub.default !== undefined) value[k] = clone(sub.default)
        else delete value[k]
      } else if (current === undefined && sub.default !== undefined) {
        value[k] = clone(sub.default)
      }
    }
  }
  const extra = additional(schema)
  for (const k of Object.keys(value)) {
    const sub = known !== undefined && isObject(known[k]) ? (known[k] as Schema) : extra
    if (sub === undefined) continue
    if (value[k] === null && sub.nullable !== true && known?.[k] === undefined) {
      delete value[k]
      continue
    }
    applyDefaults(value[k], sub)
  }
}

const jsonType = (v: unknown): string => {
  if (v === null) return "null"
  if (Array.isArray(v)) return "array"
  if (typeof v === "number") return Number.isInteger(v) ? "integer" : "number"
  return typeof v === "object" ? "object" : typeof v
}

const typeMatches = (type: unknown, v: unknown): boolean => {
  const actual = jsonType(v)
  switch (type) {
    case "object":
    case "array":
    case "string":
    case "boolean":
    case "integer":
      return actual === type
    case "number":
      return actual === "number" || actual === "integer"
    default:
      return true
  }
}

/** A number as Go's `%v` prints a float64 (`10`, `1.5`, `1e+21`). */
const goNumber = (n: number): string => {
  if (Number.isInteger(n) && Math.abs(n) < 1e21) return String(n)
  return String(n).replace(/e\+?(\d)$/, "e+0$1").replace(/e([+-])(\d)$/, "e$10$2")
}

const listKeyOf = (item: unknown, keys: ReadonlyArray<string>): string =>
  JSON.stringify(keys.map((k) => (isObject(item) ? item[k] : undefined)))

/**
 * Validates a value against its schema, pushing field errors with paths from the
 * object's root (`spec.replicas`), as kube-openapi reports them through the API server.
 *
 * @internal
 */
export const validate = (value: unknown, schema: Schema | undefined, path: string, errors: Errors): void => {
  if (schema === undefined) return
  if (value === null) {
    if (schema.nullable === true) return
    if (schema.type !== undefined) {
      errors.push(Field.typeInvalid(path, "null", `${path} in body must be of type ${String(schema.type)}: "null"`))
    }
    return
  }
  if (schema["x-kubernetes-int-or-string"] === true) {
    const t = jsonType(value)
    if (t !== "integer" && t !== "string") {
      errors.push(Field.typeInvalid(path, t, `${path} in body must be of type integer,string: ${Field.quote(t)}`))
      return
    }
  } else if (schema.type !== undefined && !typeMatches(schema.type, value)) {
    const t = jsonType(value)
    errors.push(Field.typeInvalid(path, t, `${path} in body must be of type ${String(schema.type)}: ${Field.quote(t)}`))
    return
  }
  if (Array.isArray(schema.enum) && !schema.enum.some((e) => deepEqual(e, value))) {
    errors.push(Field.notSupported(
      path,
      value,
      schema.enum.map((e) => (typeof e === "string" ? e : JSON.stringify(e)))
    ))
  }
  if (typeof value === "string") validateString(value, schema, path, errors)
  else if (typeof value === "number") validateNumber(value, schema, path, errors)
  else if (Array.isArray(value)) validateArray(value, schema, path, errors)
  else if (isObject(value)) validateObject(value, schema, path, errors)
}

const validateString = (value: string, schema: Schema, path: string, errors: Errors): void => {
  const length = [...value].length
  if (typeof schema.maxLength === "number" && length > schema.maxLength) errors.push(Field.tooLong(path, schema.maxLength))
  if (typeof schema.minLength === "number" && length < schema.minLength) {
    errors.push(Field.invalid(path, value, `${path} in body should be at least ${schema.minLength} chars long`))
  }
  if (typeof schema.pattern === "string") {
    let re: RegExp | undefined
    try {
      re = new RegExp(schema.pattern, "u")
    } catch {
      re = undefined
    }
    if (re !== undefined && !re.test(value)) {
      errors.push(Field.invalid(path, value, `${path} in body should match '${schema.pattern}'`))
    }
  }
}

const validateNumber = (value: number, schema: Schema, path: string, errors: Errors): void => {
  if (typeof schema.maximum === "number") {
    const exclusive = schema.exclusiveMaximum === true
    if (exclusive ? value >= schema.maximum : value > schema.maximum) {
      const word = exclusive ? "less than" : "less than or equal to"
      errors.push(Field.invalid(path, value, `${path} in body should be ${word} ${goNumber(schema.maximum)}`))
    }
  }
  if (typeof schema.minimum === "number") {
    const exclusive = schema.exclusiveMinimum === true
    if (exclusive ? value <= schema.minimum : value < schema.minimum) {
      const word = exclusive ? "greater than" : "greater than or equal to"
      errors.push(Field.invalid(path, value, `${path} in body should be ${word} ${goNumber(schema.minimum)}`))
    }
  }
  if (typeof schema.multipleOf === "number" && schema.multipleOf > 0) {
    const q = value / schema.multipleOf
    if (Math.abs(q - Math.round(q)) > 1e-9) {
      errors.push(Field.invalid(path, value, `${path} in body should be a multiple of ${goNumber(schema.multipleOf)}`))
    }
  }
}

const validateArray = (value: Array<unknown>, schema: Schema, path: string, errors: Errors): void => {
  if (typeof schema.maxItems === "number" && value.length > schema.maxItems) {
    errors.push(Field.tooMany(path, value.length, schema.maxItems))
  }
  if (typeof schema.minItems === "number" && value.length < schema.minItems) {
    errors.push(Field.invalid(path, value.length, `${path} in body should have at least ${schema.minItems} items`))
  }
  const element = items(schema)
  value.forEach((v, i) => validate(v, element, `${path}[${i}]`, errors))
  const listType = schema["x-kubernetes-list-type"]
  if (listType === "set") {
    const seen: Array<unknown> = []
    value.forEach((v, i) => {
      if (seen.some((s) => deepEqual(s, v))) errors.push(Field.duplicate(`${path}[${i}]`, v))
      else seen.push(v)
    })
  } else if (listType === "map" && Array.isArray(schema["x-kubernetes-list-map-keys"])) {
    const keys = (schema["x-kubernetes-list-map-keys"] as Array<unknown>).filter((k): k is string => typeof k === "string")
    const seen = new Set<string>()
    value.forEach((v, i) => {
      const k = listKeyOf(v, keys)
      if (seen.has(k)) {
        const fields: JsonObject = {}
        for (const name of keys) if (isObject(v)) fields[name] = v[name]
        errors.push(Field.duplicate(`${path}[${i}]`, Field.goValue(fields)))
      } else seen.add(k)
    })
  }
}

const validateObject = (value: JsonObject, schema: Schema, path: string, errors: Errors): void => {
  const count = Object.keys(value).filter((k) => value[k] !== undefined).length
  if (typeof schema.maxProperties === "number" && count > schema.maxProperties) {
    errors.push(Field.tooMany(path, count, schema.maxProperties))
  }
  if (typeof schema.minProperties === "number" && count < schema.minProperties) {
    errors.push(Field.invalid(path, count, `${path} in body should have at least ${schema.minProperties} properties`))
  }
  if (Array.isArray(schema.required)) {
    for (const k of schema.required) {
      if (typeof k === "string" && value[k] === undefined) errors.push(Field.required(fieldPath(path, k), ""))
    }
  }
  const known = props(schema)
  const extra = additional(schema)
  const root = path === ""
  for (const k of Object.keys(value)) {
    if (value[k] === undefined) continue
    if ((root || embedded(schema)) && (k === "metadata" || k === "apiVersion" || k === "kind")) continue
    const sub = known !== undefined && isObject(known[k]) ? (known[k] as Schema) : extra
    validate(value[k], sub, fieldPath(path, k), errors)
  }
}

/** The schema of one served version of a CRD object, if it has one. @internal */
export const schemaOf = (crd: JsonObject, version: string): Schema | undefined => {
  const spec = isObject(crd.spec) ? crd.spec : {}
  const versions = Array.isArray(spec.versions) ? spec.versions : []
  const v = versions.find((x) => isObject(x) && x.name === version)
  const schema = isObject(v) && isObject(v.schema) ? v.schema.openAPIV3Schema : undefined
  return isObject(schema) ? schema : undefined
}

/** Object keys sorted at every level, as Go serializes the maps a custom resource is made of. @internal */
export const sortKeys = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(sortKeys)
  if (!isObject(value)) return value
  const out: JsonObject = {}
  for (const k of Object.keys(value).sort()) if (value[k] !== undefined) out[k] = sortKeys(value[k])
  return out
}

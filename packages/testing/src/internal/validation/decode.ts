/**
 * The typed decode of a built-in object, as kube-apiserver's JSON decoder (sigs.k8s.io/json
 * into the kind's Go struct) meets it: a value of the wrong JSON type, a fraction or an
 * out-of-range number for an integer, a malformed Quantity or base64 string fail the
 * request with the decoder's own words (`json: cannot unmarshal string into Go struct
 * field DeploymentSpec.spec.replicas of type int32`), and the fields the struct does not
 * know are found (and pruned) at every depth. One walk over the JSON does all of it, along
 * a type table generated from the OpenAPI spec (../store/generatedTypes.ts) and compiled
 * into linked nodes once per definition, on first use.
 *
 * @internal
 */
import { Quantity } from "effect-kube"
import * as Result from "effect/Result"
import { definitions, kindDefinitions } from "../store/generatedTypes.js"
import { drop, isObject, type JsonObject } from "../store/json.js"

/** A compiled type: a struct (its Go name, its fields), a list or map of a type, or a leaf code. @internal */
export type Node =
  | {
    readonly tag: "struct"
    readonly go: string
    readonly name: string
    readonly fields: Map<string, Node>
    /** The fields Go writes when zero (no omitempty, or a struct that is no pointer): their zero value. */
    readonly required: Set<string>
    /** The pointers without omitempty: written as `null` when unset. */
    readonly nullable: Set<string>
  }
  | { readonly tag: "list" | "map"; readonly go: string; elem: Node }
  | { readonly tag: "leaf"; readonly go: string; readonly code: string }

const leafGo: Record<string, string> = {
  s: "string", y: "[]uint8", i: "int32", l: "int64", d: "float64", b: "bool", q: "resource.Quantity",
  o: "intstr.IntOrString", r: "runtime.RawExtension", t: "v1.Time", m: "v1.MicroTime", j: "v1.JSON", f: "v1.FieldsV1",
  B: "v1.JSONSchemaPropsOrBool", A: "v1.JSONSchemaPropsOrArray", S: "v1.JSONSchemaPropsOrStringArray"
}

const leaves = new Map<string, Node>()
const structs = new Map<string, Node>()

const compile = (code: string): Node => {
  const c = code.charCodeAt(0)
  if (c === 91 /* [ */ || c === 123 /* { */) {
    const node: { tag: "list" | "map"; go: string; elem: Node } = { tag: c === 91 ? "list" : "map", go: "", elem: undefined! }
    node.elem = compile(code.slice(1))
    node.go = c === 91 ? `[]${node.elem.go}` : `map[string]${node.elem.go}`
    return node
  }
  if (c === 35 /* # */) return struct(code.slice(1))
  let leaf = leaves.get(code)
  if (leaf === undefined) leaves.set(code, leaf = { tag: "leaf", go: leafGo[code] ?? "interface {}", code })
  return leaf
}

/** A definition's node; its fields are compiled after it is remembered, so that cycles (JSONSchemaProps) close. */
const struct = (key: string): Node => {
  const known = structs.get(key)
  if (known !== undefined) return known
  const def = definitions[key]
  if (def === undefined) return compile("j")
  const [go, fields] = def
  const node: Node = { tag: "struct", go, name: go.slice(go.indexOf(".") + 1), fields: new Map(), required: new Set(), nullable: new Set() }
  structs.set(key, node)
  for (const name in fields) {
    const code = fields[name]!
    const mark = code.charCodeAt(0)
    if (mark === 33 /* ! */) node.required.add(name)
    else if (mark === 63 /* ? */) node.nullable.add(name)
    node.fields.set(name, compile(mark === 33 || mark === 63 ? code.slice(1) : code))
  }
  return node
}

/** The node of a built-in kind's version (`apps`, `v1`, `Deployment`), or undefined for a kind the spec lacks. @internal */
export const kindNode = (group: string, version: string, kind: string): Node | undefined => {
  const key = kindDefinitions[`${group}/${version}/${kind}`]
  return key === undefined ? undefined : struct(key)
}

/** What the decoder found: its error (the first, as Go reports it), and the unknown fields' paths. @internal */
export interface Decoded {
  error: string | undefined
  /** An error a custom decoder (Quantity, IntOrString) returned: it stops the decode, and wins over a saved one. */
  fatal: boolean
  readonly unknown: Array<string>
  readonly prune: boolean
}

const jsonKind = (v: unknown): string =>
  Array.isArray(v) ? "array" : typeof v === "object" ? "object" : typeof v === "boolean" ? "bool" : typeof v

/** Go's type error for a value the type cannot hold (`number 1.5`, `string`), in the field's context. */
const typeMessage = (what: string, struct: string, stack: string, go: string): string =>
  stack === ""
    ? `json: cannot unmarshal ${what} into Go value of type ${go}`
    : `json: cannot unmarshal ${what} into Go struct field ${struct}.${stack} of type ${go}`

/** A type error the decoder saves and goes on past: the first one is reported. */
const typeError = (d: Decoded, what: string, struct: string, stack: string, go: string): void => {
  if (d.error === undefined) d.error = typeMessage(what, struct, stack, go)
}

/** An error a type's own UnmarshalJSON returns: the decode stops there. */
const fatal = (d: Decoded, message: string): void => {
  if (d.fatal) return
  d.error = message
  d.fatal = true
}

// resource.ParseQuantity: a signed decimal, then a binary or decimal SI suffix or a decimal exponent
const quantityPattern = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[KMGTPE]i|[numkMGTPE]|[eE][+-]?\d+)?$/
const quantityError = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
const base64Pattern = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/

/** Where the first byte base64 refuses is, as Go's `illegal base64 data at input byte N` counts. */
const illegalBase64At = (s: string): number => {
  for (let i = 0; i < s.length; i++) {
    if (!/[A-Za-z0-9+/=]/.test(s[i]!)) return i
  }
  return Math.max(0, s.length - (s.length % 4 === 0 ? 1 : s.length % 4))
}

const int32Min = -(2 ** 31)
const int32Max = 2 ** 31 - 1

const leaf = (d: Decoded, code: string, go: string, value: unknown, struct: string, stack: string): void => {
  switch (code) {
    case "s":
    case "t":
    case "m":
      // Time and MicroTime read their text as a string first
      if (typeof value !== "string") typeError(d, jsonKind(value), struct, stack, "string")
      return
    case "y":
      if (typeof value !== "string") typeError(d, jsonKind(value), struct, stack, go)
      else if (!base64Pattern.test(value) && d.error === undefined) d.error = `illegal base64 data at input byte ${illegalBase64At(value)}`
      return
    case "b":
      if (typeof value !== "boolean") typeError(d, jsonKind(value), struct, stack, go)
      return
    case "d":
      if (typeof value !== "number") typeError(d, jsonKind(value), struct, stack, go)
      return
    case "i":
    case "l":
      if (typeof value !== "number") typeError(d, jsonKind(value), struct, stack, go)
      else if (!Number.isInteger(value) || (code === "i" && (value < int32Min || value > int32Max)) || !Number.isSafeInteger(value)) {
        typeError(d, `number ${value}`, struct, stack, go)
      }
      return
    case "o":
      // IntOrString: a JSON string is its string; anything else is read as an int32, in the field's context
      if (typeof value === "string") return
      if (typeof value !== "number") fatal(d, typeMessage(jsonKind(value), struct, stack, "int32"))
      else if (!Number.isInteger(value) || value < int32Min || value > int32Max) {
        fatal(d, typeMessage(`number ${value}`, struct, stack, "int32"))
      }
      return
    case "q":
      // Quantity parses the JSON text of a number or the content of a string
      if (typeof value === "number") return
      if (typeof value !== "string" || !quantityPattern.test(value.trim())) fatal(d, quantityError)
      return
    default:
      // RawExtension, JSON, FieldsV1 and the JSONSchemaProps unions keep what they are given
      return
  }
}

const sortInPlace = (obj: JsonObject): void => {
  const keys = Object.keys(obj)
  let sorted = true
  for (let i = 1; i < keys.length; i++) {
    if (keys[i - 1]! > keys[i]!) {
      sorted = false
      break
    }
  }
  if (sorted) return
  const entries = keys.sort().map((k) => [k, obj[k]] as const)
  for (const k of keys) delete obj[k]
  for (const [k, v] of entries) obj[k] = v
}

/**
 * The value Go writes for a type's zero value: `""`, `0`, `false`, a struct with its
 * required fields' zero values, `null` for a nil list, map or pointer-like type.
 */
const zero = (node: Node, depth = 0): unknown => {
  switch (node.tag) {
    case "list":
    case "map":
      return null
    case "struct": {
      const out: JsonObject = {}
      // a struct in a struct is no pointer: Go's types have no such cycle, the bound is a guard
      if (depth < 16) {
        for (const name of node.fields.keys()) {
          if (node.required.has(name)) out[name] = zero(node.fields.get(name)!, depth + 1)
          else if (node.nullable.has(name)) out[name] = null
        }
      }
      return out
    }
    case "leaf":
      switch (node.code) {
        case "s":
          return ""
        case "i":
        case "l":
        case "d":
        case "o":
          return 0
        case "b":
          return false
        case "q":
          return "0"
        default:
          return null
      }
  }
}

const isEmpty = (value: unknown): boolean => {
  if (Array.isArray(value)) return value.length === 0
  if (!isObject(value)) return false
  for (const _ in value) return false
  return true
}

/**
 * Walks `value` as `node`: `path` is the field path a strict decoding error prints
 * (`spec.containers[0].foo`), `struct` and `stack` the Go struct and field stack a type
 * error prints (`Container`, `spec.template.spec.containers.image`).
 */
const walk = (d: Decoded, node: Node, value: unknown, path: string, struct: string, stack: string): void => {
  if (value === null || value === undefined || d.fatal) return
  switch (node.tag) {
    case "leaf":
      leaf(d, node.code, node.go, value, struct, stack)
      return
    case "list": {
      if (!Array.isArray(value)) return typeError(d, jsonKind(value), struct, stack, node.go)
      for (let i = 0; i < value.length; i++) {
        if (value[i] === null && d.prune) value[i] = zero(node.elem)
        walk(d, node.elem, value[i], `${path}[${i}]`, struct, stack)
      }
      return
    }
    case "map": {
      if (!isObject(value)) return typeError(d, jsonKind(value), struct, stack, node.go)
      if (d.prune) sortInPlace(value)
      for (const key in value) {
        if (value[key] === null && d.prune) value[key] = zero(node.elem)
        walk(d, node.elem, value[key], path === "" ? key : `${path}.${key}`, struct, stack)
        if (d.prune) asWritten(node.elem, value, key)
      }
      return
    }
    case "struct": {
      if (!isObject(value)) return typeError(d, jsonKind(value), struct, stack, node.go)
      for (const key in value) {
        // strategic merge patch directives ($patch, $retainKeys, $setElementOrder/...)
        if (key.charCodeAt(0) === 36 /* $ */) continue
        const at = path === "" ? key : `${path}.${key}`
        const field = node.fields.get(key)
        if (field === undefined) {
          if (value[key] === undefined) continue
          d.unknown.push(at)
          if (d.prune) drop(value, key)
        } else {
          walk(d, field, value[key], at, node.name, stack === "" ? key : `${stack}.${key}`)
          if (d.prune) {
            asWritten(field, value, key)
            normalise(node, field, value, key)
          }
        }
      }
      if (d.prune && (node.required.size > 0 || node.nullable.size > 0)) materialise(node, value)
      return
    }
  }
}

/** A Quantity sent as a JSON number is written back as its string (`7` is `"7"`, `1.5` is `"1500m"`). */
const asWritten = (field: Node, obj: JsonObject, key: string): void => {
  const value = obj[key]
  if (typeof value !== "number" || field.tag !== "leaf" || field.code !== "q") return
  const canonical = Quantity.canonicalize(String(value))
  obj[key] = Result.isSuccess(canonical) ? canonical.success : String(value)
}

/**
 * What the stored object holds of a field after Go's decode and encode: a null or an
 * empty list or map is left out (omitempty), or, for a required field, written as its
 * zero value (a nil list or map as `null`).
 */
const normalise = (owner: Node & { tag: "struct" }, field: Node, obj: JsonObject, key: string): void => {
  const value = obj[key]
  if (value === null) {
    if (owner.required.has(key)) obj[key] = zero(field)
    else if (!owner.nullable.has(key)) drop(obj, key)
  } else if ((field.tag === "list" || field.tag === "map") && isEmpty(value)) {
    if (owner.required.has(key) || owner.nullable.has(key)) obj[key] = null
    else drop(obj, key)
  }
}

/** The fields Go writes whatever the JSON said, where the JSON left them out: their zero value, or `null`. */
const materialise = (node: Node & { tag: "struct" }, obj: JsonObject): void => {
  for (const [name, field] of node.fields) {
    if (obj[name] !== undefined) continue
    if (node.required.has(name)) obj[name] = zero(field)
    else if (node.nullable.has(name)) obj[name] = null
  }
}

/**
 * Decodes `value` as `node`: the decoder's error (undefined when it decodes), and the
 * paths of the fields the types do not know (`spec.foo`), pruned from `value` with
 * `prune` (and its maps' keys put in order, as Go writes a map).
 *
 * @internal
 */
export const decode = (node: Node, value: unknown, prune: boolean): Decoded => {
  const d: Decoded = { error: undefined, fatal: false, unknown: [], prune }
  walk(d, node, value, "", "", "")
  return d
}

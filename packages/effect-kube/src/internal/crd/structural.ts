/**
 * An Effect Schema made into the structural `openAPIV3Schema` of a CustomResourceDefinition, as
 * kube-apiserver v1.35 requires it: every node has a `type` (or is `x-kubernetes-int-or-string` or
 * `x-kubernetes-preserve-unknown-fields`), objects have `properties` or `additionalProperties`, never both,
 * arrays have `items`, and nothing refers to anything else (no `$ref`, no recursion).
 *
 * The CRD describes the JSON form of an object, so a Schema that transforms is read from its encoded side
 * (`SchemaAST.toEncoded`), with the annotations written on it: a `Schema.DateTimeUtcFromString` field is the
 * string it is sent as, and a `Schema.withDecodingDefault` field may be left out. What the Schema says beyond types
 * becomes the schema's own words: checks (`isInt`, `isGreaterThanOrEqualTo`, `isMinLength`, `isPattern`, ...)
 * their OpenAPI constraints, literals an `enum`, `NullOr` `nullable`, a union of a number and a string
 * `x-kubernetes-int-or-string`, `Schema.Unknown` and records of unknown values
 * `x-kubernetes-preserve-unknown-fields`, and the annotations `description`, `format`, `default`, and any
 * `x-kubernetes-*` key (`x-kubernetes-list-type`, `x-kubernetes-validations`, ...) are copied as they are.
 *
 * Whatever cannot be said structurally (a union of objects, a tuple, a recursive Schema, a bigint) fails with a
 * ValidationError naming the field, so the CRD never reaches a server that would refuse it.
 *
 * @internal
 */
import * as Result from "effect/Result"
import * as SchemaAST from "effect/SchemaAST"
import { ValidationError } from "../../Errors.js"
import type { JSONSchemaProps } from "../../resources/generated.js"

type Props = { -readonly [K in keyof JSONSchemaProps]: JSONSchemaProps[K] }

/** A node that cannot be made structural, at a path such as `spec.ports[*].name`. */
class NotStructural {
  constructor(readonly path: string, readonly detail: string) {}
}

const extensionPrefix = "x-kubernetes-"

/** The annotations a node carries into its schema: documentation and the Kubernetes extensions. */
const copyAnnotations = (
  annotations: SchemaAST.AST["annotations"] | SchemaAST.Context["annotations"],
  props: Props
): void => {
  if (annotations === undefined) return
  for (const [key, value] of Object.entries(annotations)) {
    if (value === undefined) continue
    if (key === "description" || key === "format" || key === "default" || key === "title") {
      ;(props as Record<string, unknown>)[key] = value
    } else if (key.startsWith(extensionPrefix)) {
      ;(props as Record<string, unknown>)[key] = value
    }
  }
}

/** What a check says in OpenAPI v3.0 terms (`exclusiveMinimum` is a boolean there), on a node of `type`. */
const applyCheck = (check: SchemaAST.Check<unknown>, props: Props): void => {
  if (check._tag === "FilterGroup") {
    for (const inner of check.checks) applyCheck(inner, props)
    return
  }
  // `.check(...).annotate(...)` annotates the last check
  copyAnnotations(check.annotations, props)
  const representation = check.annotations?.representation as
    | { readonly id?: string; readonly payload?: Record<string, unknown> | null }
    | undefined
  const payload = representation?.payload ?? {}
  const array = props.type === "array"
  const object = props.type === "object"
  switch (representation?.id) {
    case "effect/schema/isInt":
      if (props.type === "number") props.type = "integer"
      return
    case "effect/schema/isInt32":
      if (props.type === "number") props.type = "integer"
      props.format = "int32"
      return
    case "effect/schema/isGreaterThanOrEqualTo":
      props.minimum = payload.minimum as number
      return
    case "effect/schema/isGreaterThan":
      props.minimum = payload.exclusiveMinimum as number
      props.exclusiveMinimum = true
      return
    case "effect/schema/isLessThanOrEqualTo":
      props.maximum = payload.maximum as number
      return
    case "effect/schema/isLessThan":
      props.maximum = payload.exclusiveMaximum as number
      props.exclusiveMaximum = true
      return
    case "effect/schema/isBetween":
      props.minimum = payload.minimum as number
      props.maximum = payload.maximum as number
      if (payload.exclusiveMinimum === true) props.exclusiveMinimum = true
      if (payload.exclusiveMaximum === true) props.exclusiveMaximum = true
      return
    case "effect/schema/isMultipleOf":
      props.multipleOf = payload.divisor as number
      return
    case "effect/schema/isMinLength":
      if (array) props.minItems = payload.minLength as number
      else if (object) props.minProperties = payload.minLength as number
      else props.minLength = payload.minLength as number
      return
    case "effect/schema/isMaxLength":
      if (array) props.maxItems = payload.maxLength as number
      else if (object) props.maxProperties = payload.maxLength as number
      else props.maxLength = payload.maxLength as number
      return
    case "effect/schema/isBetweenLength":
      if (array) {
        props.minItems = payload.minimum as number
        props.maxItems = payload.maximum as number
      } else {
        props.minLength = payload.minimum as number
        props.maxLength = payload.maximum as number
      }
      return
    case "effect/schema/isMinProperties":
      props.minProperties = payload.minProperties as number
      return
    case "effect/schema/isMaxProperties":
      props.maxProperties = payload.maxProperties as number
      return
    case "effect/schema/isMinSize":
      props.minItems = payload.minSize as number
      return
    case "effect/schema/isMaxSize":
      props.maxItems = payload.maxSize as number
      return
    case "effect/schema/isUnique":
      // a list of unique scalars is what the API server calls a set
      props["x-kubernetes-list-type"] ??= "set"
      return
    case "effect/schema/isPattern":
      props.pattern = payload.source as string
      return
    case "effect/schema/isUUID":
      props.format = "uuid"
      return
    case "effect/schema/isBase64":
      props.format = "byte"
      return
    case "effect/schema/isStartingWith":
      props.pattern = `^${escapeRegExp(payload.startsWith as string)}`
      return
    case "effect/schema/isEndingWith":
      props.pattern = `${escapeRegExp(payload.endsWith as string)}$`
      return
    default:
      // a check the schema language cannot say (a predicate of the user's own) is enforced by the client only
      return
  }
}

const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

const child = (path: string, key: string): string =>
  path === "" ? key : /^[A-Za-z_][A-Za-z0-9_]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`

const describe = (ast: SchemaAST.AST): string => {
  switch (ast._tag) {
    case "Objects":
      return "object"
    case "Arrays":
      return ast.rest.length === 0 ? "tuple" : "array"
    case "Literal":
      return `literal ${JSON.stringify(String(ast.literal))}`
    default:
      return ast._tag.toLowerCase()
  }
}

const literalType = (value: unknown): string | undefined =>
  typeof value === "string"
    ? "string"
    : typeof value === "boolean"
    ? "boolean"
    : typeof value === "number"
    ? Number.isInteger(value) ? "integer" : "number"
    : undefined

/** The schema of one node. `visiting` holds the suspended Schemas being walked (and where), to find recursion. */
const walk = (ast: SchemaAST.AST, path: string, visiting: Map<SchemaAST.AST, string>): Props => {
  // a transformation is described by what it is sent as, with the documentation written on it
  const sent = encodedOf(ast)
  const props = node(sent, path, visiting)
  copyAnnotations(sent.annotations, props)
  if (sent.checks !== undefined) for (const check of sent.checks) applyCheck(check, props)
  if (sent !== ast) copyAnnotations(ast.annotations, props)
  return props
}

const encodedOf = (ast: SchemaAST.AST): SchemaAST.AST => (ast.encoding === undefined ? ast : SchemaAST.toEncoded(ast))

const node = (ast: SchemaAST.AST, path: string, visiting: Map<SchemaAST.AST, string>): Props => {
  switch (ast._tag) {
    case "String":
    case "TemplateLiteral":
      return { type: "string" }
    case "Number":
      return { type: "number" }
    case "Boolean":
      return { type: "boolean" }
    case "Unknown":
    case "Any":
      return { "x-kubernetes-preserve-unknown-fields": true }
    case "ObjectKeyword":
      return { type: "object", "x-kubernetes-preserve-unknown-fields": true }
    case "Literal": {
      const type = literalType(ast.literal)
      if (type === undefined) throw new NotStructural(path, `a ${typeof ast.literal} literal has no JSON form`)
      return { type, enum: [ast.literal] }
    }
    case "Enum": {
      const values = ast.enums.map(([, value]) => value)
      const types = new Set(values.map(literalType))
      if (types.size !== 1) throw new NotStructural(path, "an enum of strings and numbers has no single type")
      return { type: [...types][0]!, enum: values }
    }
    case "Arrays": {
      if (ast.elements.length > 0 || ast.rest.length !== 1) {
        throw new NotStructural(path, "a tuple cannot be made structural: use an array of one element type")
      }
      return { type: "array", items: walk(ast.rest[0]!, `${path}[*]`, visiting) }
    }
    case "Objects":
      return objectNode(ast, path, visiting)
    case "Union":
      return unionNode(ast, path, visiting)
    case "Suspend": {
      const first = visiting.get(ast)
      if (first !== undefined) {
        throw new NotStructural(
          first,
          "a recursive Schema cannot be made structural (a CRD schema has no references): " +
            "annotate the field with \"x-kubernetes-preserve-unknown-fields\": true, or bound its depth"
        )
      }
      visiting.set(ast, path)
      try {
        return walk(ast.thunk(), path, visiting)
      } finally {
        visiting.delete(ast)
      }
    }
    case "Declaration":
      throw new NotStructural(
        path,
        `${SchemaAST.resolveDescription(ast) ?? "a declared type"} has no JSON form: use a Schema that encodes to JSON`
      )
    default:
      throw new NotStructural(path, `a ${describe(ast)} has no JSON form`)
  }
}

const objectNode = (ast: SchemaAST.Objects, path: string, visiting: Map<SchemaAST.AST, string>): Props => {
  const props: Props = { type: "object" }
  if (ast.indexSignatures.length > 1) {
    throw new NotStructural(path, "an object with several index signatures cannot be made structural")
  }
  const index = ast.indexSignatures[0]
  if (index !== undefined) {
    if (index.parameter._tag !== "String") {
      throw new NotStructural(path, "a record's keys must be strings (JSON object keys)")
    }
    const value = index.type
    if (value._tag === "Unknown" || value._tag === "Any") {
      // an open record: whatever it holds is kept as sent
      props["x-kubernetes-preserve-unknown-fields"] = true
    } else if (ast.propertySignatures.length > 0) {
      throw new NotStructural(
        path,
        "an object with both named fields and a record of typed values cannot be made structural " +
          "(properties and additionalProperties are exclusive)"
      )
    } else {
      props.additionalProperties = walk(value, `${path}[*]`, visiting)
      return props
    }
  }
  if (ast.propertySignatures.length === 0) return props
  const properties: Record<string, JSONSchemaProps> = {}
  const required: Array<string> = []
  for (const signature of ast.propertySignatures) {
    if (typeof signature.name !== "string") {
      throw new NotStructural(path, `the key ${String(signature.name)} is not a string`)
    }
    const at = child(path, signature.name)
    const field = walk(signature.type, at, visiting)
    copyAnnotations(signature.type.context?.annotations, field)
    properties[signature.name] = field
    const sent = encodedOf(signature.type)
    if (!SchemaAST.isOptional(sent) && !acceptsUndefined(sent)) required.push(signature.name)
  }
  props.properties = properties
  if (required.length > 0) props.required = required
  return props
}

/** Whether a field of this Schema may be left out (`Schema.optional`, `Schema.UndefinedOr`). @internal */
export const acceptsUndefined = (ast: SchemaAST.AST): boolean =>
  ast._tag === "Undefined" || ast._tag === "Void" || (ast._tag === "Union" && ast.types.some(acceptsUndefined))

/** Members of nested unions, flattened, without `undefined` (an optional field's). */
const members = (ast: SchemaAST.Union): Array<SchemaAST.AST> =>
  ast.types.flatMap((t) =>
    t._tag === "Union" && t.annotations === undefined && t.checks === undefined
      ? members(t)
      : t._tag === "Undefined" || t._tag === "Void"
      ? []
      : [t]
  )

const isNumberish = (ast: SchemaAST.AST): boolean => ast._tag === "Number"
const isStringish = (ast: SchemaAST.AST): boolean => ast._tag === "String" || ast._tag === "TemplateLiteral"

const unionNode = (ast: SchemaAST.Union, path: string, visiting: Map<SchemaAST.AST, string>): Props => {
  const all = members(ast)
  const nullable = all.some((t) => t._tag === "Null")
  const types = all.filter((t) => t._tag !== "Null")
  const result = ((): Props => {
    if (types.length === 0) throw new NotStructural(path, "null alone has no type")
    if (types.length === 1) return walk(types[0]!, path, visiting)
    if (types.every((t) => t._tag === "Literal" || t._tag === "Enum")) {
      const values = types.flatMap((t) =>
        t._tag === "Literal" ? [t.literal] : (t as SchemaAST.Enum).enums.map(([, v]) => v)
      )
      const kinds = new Set(values.map(literalType).map((k) => (k === "integer" ? "number" : k)))
      if (kinds.size !== 1 || kinds.has(undefined)) {
        throw new NotStructural(path, "a union of literals of different JSON types cannot be made structural")
      }
      const numeric = [...kinds][0] === "number"
      return { type: numeric ? (values.every(Number.isInteger) ? "integer" : "number") : [...kinds][0]!, enum: values }
    }
    if (types.length === 2 && types.some(isNumberish) && types.some(isStringish)) {
      const number = types.find(isNumberish)!
      const string = types.find(isStringish)!
      // the API's IntOrString: the number must be an integer, and the types are told apart by value
      const props: Props = { "x-kubernetes-int-or-string": true }
      const numberSchema = walk(number, path, visiting)
      const stringSchema = walk(string, path, visiting)
      if (numberSchema.type !== "integer") {
        // `Schema.Union([Schema.Number, Schema.String])` is how IntOrString is written; the server takes integers
        numberSchema.type = "integer"
      }
      const constraints = (s: Props) =>
        Object.keys(s).some((k) => k !== "type" && k !== "description" && k !== "format")
      if (constraints(numberSchema) || constraints(stringSchema)) {
        props.anyOf = [numberSchema, stringSchema]
      }
      return props
    }
    const described = types.map(describe)
    throw new NotStructural(
      path,
      `a union of ${[...new Set(described)].join(", ")} cannot be made structural: ` +
        "a CRD field has one type (only an integer or a string may share a field, as int-or-string)"
    )
  })()
  if (nullable) result.nullable = true
  return result
}

/**
 * The structural schema of a Schema's JSON form, or a ValidationError naming the first field that cannot be one.
 * `root` is the path the fields are named from (`spec`, `status`).
 *
 * @internal
 */
export const structuralSchema = (
  ast: SchemaAST.AST,
  root: string,
  subject: string
): Result.Result<JSONSchemaProps, ValidationError> => {
  try {
    return Result.succeed(walk(ast, root, new Map()))
  } catch (e) {
    if (e instanceof NotStructural) {
      return Result.fail(new ValidationError({ subject, detail: `${e.path}: ${e.detail}` }))
    }
    throw e
  }
}

/**
 * The schema at a JSON path (`.spec.replicas`, `.status.labelSelector`) of a structural schema, or undefined
 * when the path names no field of it. Paths go through properties only, as the API server's scale and
 * selectable-field paths do.
 *
 * @internal
 */
export const schemaAt = (schema: JSONSchemaProps, jsonPath: string): JSONSchemaProps | undefined => {
  if (!jsonPath.startsWith(".")) return undefined
  let at: JSONSchemaProps | undefined = schema
  for (const key of jsonPath.slice(1).split(".")) {
    at = at?.properties?.[key]
    if (at === undefined) return undefined
  }
  return at
}

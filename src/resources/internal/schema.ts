/**
 * Building blocks shared by the built-in Schemas. Not part of the public API.
 *
 * Every Schema built from these has the same decoded and encoded type: no
 * transformations, so an object decoded from the server can be sent back as it is.
 */
import { type Pipeable, pipeArguments } from "effect/Pipeable"
import * as Schema from "effect/Schema"
import * as SchemaAST from "effect/SchemaAST"

/**
 * An RFC 3339 timestamp, kept as the string the server sent (parsing it into a Date
 * would make the encoded and decoded forms differ).
 */
export const Time = Schema.String

/**
 * A timestamp the API serializes from a non-pointer `metav1.Time`: its zero value is
 * sent as `null` (`creationTimestamp: null`, `lastProbeTime: null`, `eventTime: null`).
 */
export const NullableTime = Schema.NullOr(Schema.String)

/**
 * A sub-object that is large and rarely read (affinity, probes, volume sources):
 * checked to be an object, its contents kept as they are.
 */
export const LooseObject = Schema.Record({ key: Schema.String, value: Schema.Unknown })

/** Labels, annotations, selectors, ConfigMap and Secret data. */
export const StringMap = Schema.Record({ key: Schema.String, value: Schema.String })

/**
 * A string field whose well-known values the type suggests while any string decodes:
 * the API adds values over time (`restartPolicy`, `type`, `protocol`), and an older
 * client must not reject an object because of a value it does not know yet.
 */
export const openEnum = <const Values extends ReadonlyArray<string>>(
  ...values: Values
): Schema.Schema<Values[number] | (string & {})> =>
  Schema.String.annotations({
    description: `one of ${values.join(", ")} (other strings are accepted)`
  }) as unknown as Schema.Schema<Values[number] | (string & {})>

/** The building blocks the generated Schemas are written with (short names keep the generated files small). */
export const S = Schema.String
/** A number (the API's int32, int64 and double). */
export const N = Schema.Number
/** A boolean. */
export const B = Schema.Boolean
/** Any JSON value (`JSON`, `JSONSchemaPropsOrBool`, ...). */
export const U = Schema.Unknown
/** An object kept as it is (`RawExtension`, `FieldsV1`, objects the spec leaves open). */
export const O = LooseObject
/** A resource quantity (`"500m"`, `"1Gi"`): a string; see the `Quantity` module to read one. */
export const Q = Schema.String
/** A timestamp that may be `null` (see `NullableTime`). */
export const NT = NullableTime
/** An int-or-string field (`targetPort`, `maxSurge`): `8080` or `"http"`, `"25%"`. */
export const IntOrString = Schema.Union(Schema.Number, Schema.String).annotations({ identifier: "IntOrString" })
/** The `kind` of a `Status`, which tells a watch's `ERROR` event from an object event. */
export const StatusKind = Schema.Literal("Status")

type AnySchema = Schema.Schema.Any
type Base = AnySchema | (() => AnySchema)

/**
 * A field of a generated struct: a Schema (required), or `[base, modifiers]` where the
 * modifiers are applied in order: `[]` an array of, `{}` a string-keyed record of, `?`
 * optional. A function as base is a reference to a definition not yet defined (a cycle),
 * read through `Schema.suspend`.
 */
export type Field = AnySchema | readonly [Base, string]

const isSchema = (u: unknown): u is AnySchema => Schema.isSchema(u)

// The ASTs are built directly: a Schema class per field (`Schema.optional`, `Schema.Array`)
// costs far more at import time, and the nodes are the same ones those would make.
const fieldType = (f: Field): { readonly type: SchemaAST.AST; readonly optional: boolean } => {
  if (isSchema(f)) return { type: f.ast, optional: false }
  const [base, mods] = f as readonly [Base, string]
  let type: SchemaAST.AST = isSchema(base)
    ? base.ast
    : new SchemaAST.Suspend(() => (base as () => AnySchema)().ast)
  let i = 0
  while (i < mods.length) {
    const m = mods.slice(i, i + 2)
    if (m === "[]") {
      type = new SchemaAST.TupleType([], [new SchemaAST.Type(type)], true)
      i += 2
    } else if (m === "{}") {
      type = new SchemaAST.TypeLiteral([], [new SchemaAST.IndexSignature(SchemaAST.stringKeyword, type, true)])
      i += 2
    } else if (mods[i] === "?") {
      return { type: SchemaAST.Union.make([type, SchemaAST.undefinedKeyword]), optional: true }
    } else {
      throw new Error(`unknown field modifier ${mods}`)
    }
  }
  return { type, optional: false }
}

const build = (identifier: string, fields: Readonly<Record<string, Field>>): SchemaAST.TypeLiteral => {
  const signatures: Array<SchemaAST.PropertySignature> = []
  for (const key of Object.keys(fields)) {
    const { optional, type } = fieldType(fields[key]!)
    signatures.push(new SchemaAST.PropertySignature(key, type, optional, true))
  }
  return new SchemaAST.TypeLiteral(signatures, [], { [SchemaAST.IdentifierAnnotationId]: identifier })
}

const variance = { _A: (_: never) => _, _I: (_: never) => _, _R: (_: never) => _ }

/**
 * A Schema whose AST is built the first time it is read. The package defines about 750
 * structs and a program uses a few: building them all (a `TypeLiteral` and a Schema class
 * each) cost ~30 ms of every cold start. Reading `ast` builds this struct and the structs
 * it refers to, and gives the same nodes every time after; the rest of the Schema
 * interface (`annotations`, `pipe`, the variance) is what `Schema.make` gives.
 */
class LazyStruct<A> implements Schema.Schema<A> {
  declare readonly Type: A
  declare readonly Encoded: A
  declare readonly Context: never
  declare readonly [Schema.TypeId]: Schema.Schema.Variance<A, A, never>[typeof Schema.TypeId]
  declare readonly pipe: Pipeable["pipe"]
  readonly #identifier: string
  #fields: Readonly<Record<string, Field>> | undefined
  #ast: SchemaAST.AST | undefined

  constructor(identifier: string, fields: Readonly<Record<string, Field>>) {
    this.#identifier = identifier
    this.#fields = fields
  }

  get ast(): SchemaAST.AST {
    if (this.#ast === undefined) {
      this.#ast = build(this.#identifier, this.#fields!)
      this.#fields = undefined
    }
    return this.#ast
  }

  annotations(annotations: Schema.Annotations.GenericSchema<A>): Schema.Schema<A> {
    return Schema.make<A>(this.ast).annotations(annotations)
  }

  toString(): string {
    return String(this.ast)
  }
}

Object.assign(LazyStruct.prototype, {
  [Schema.TypeId]: variance,
  pipe(this: unknown) {
    return pipeArguments(this, arguments)
  }
})

/**
 * A generated struct: its fields from compact descriptions, its type the declared
 * interface `A` (so the inferred Struct types never reach tsc or the .d.ts files). Pure:
 * its arguments are literals, so a bundler drops it when unused. Its AST is built when
 * first read (see `LazyStruct`).
 */
export const struct = <A>(identifier: string, fields: Readonly<Record<string, Field>>): Schema.Schema<A> =>
  new LazyStruct<A>(identifier, fields)

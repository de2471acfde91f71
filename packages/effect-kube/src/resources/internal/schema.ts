/**
 * Building blocks shared by the built-in Schemas. Not part of the public API.
 *
 * Every Schema built from these has the same decoded and encoded type: no
 * transformations, so an object decoded from the server can be sent back as it is.
 */
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
export const LooseObject = Schema.Record(Schema.String, Schema.Unknown)

/** Labels, annotations, selectors, ConfigMap and Secret data. */
export const StringMap = Schema.Record(Schema.String, Schema.String)

/**
 * A string field whose well-known values the type suggests while any string decodes:
 * the API adds values over time (`restartPolicy`, `type`, `protocol`), and an older
 * client must not reject an object because of a value it does not know yet.
 */
export const openEnum = <const Values extends ReadonlyArray<string>>(
  ...values: Values
): Schema.Codec<Values[number] | (string & {})> =>
  // the type is narrower than the runtime check on purpose: every string is accepted
  Schema.String.annotate({
    description: `one of ${values.join(", ")} (other strings are accepted)`
  }) as Schema.Codec<string> as Schema.Codec<Values[number] | (string & {})>

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
export const IntOrString = Schema.Union([Schema.Number, Schema.String]).annotate({ identifier: "IntOrString" })
/** The `kind` of a `Status`, which tells a watch's `ERROR` event from an object event. */
export const StatusKind = Schema.Literal("Status")

type AnySchema = { readonly ast: SchemaAST.AST }
type Base = AnySchema | (() => AnySchema)

/**
 * A field of a generated struct: a Schema (required), or `[base, modifiers]` where the
 * modifiers are applied in order: `[]` an array of, `{}` a string-keyed record of, `?`
 * optional. A function as base is a reference to a definition not yet defined (a cycle),
 * read through a `Suspend` node.
 */
export type Field = AnySchema | readonly [Base, string]

// The context of an optional key (`Schema.optional`): one shared instance, it is immutable.
const optionalKey = new SchemaAST.Context(true, false)

// The ASTs are built directly: a Schema per field (`Schema.optional`, `Schema.Array`)
// costs more at import time, and the nodes are the same ones those would make.
const fieldType = (f: Field): SchemaAST.AST => {
  if (!Array.isArray(f)) return (f as AnySchema).ast
  const [base, mods] = f as readonly [Base, string]
  // a Schema of effect/Schema is itself a function: a reference to a later definition is the function that is not one
  let type: SchemaAST.AST = Schema.isSchema(base)
    ? base.ast
    : new SchemaAST.Suspend(() => (base as () => AnySchema)().ast)
  let i = 0
  while (i < mods.length) {
    const m = mods.slice(i, i + 2)
    if (m === "[]") {
      type = new SchemaAST.Arrays(false, [], [type])
      i += 2
    } else if (m === "{}") {
      type = new SchemaAST.Objects([], [new SchemaAST.IndexSignature(SchemaAST.string, type)])
      i += 2
    } else if (mods[i] === "?") {
      // what `Schema.optional` makes: `X | undefined`, the key optional
      return new SchemaAST.Union([type, SchemaAST.undefined], undefined, undefined, undefined, undefined, optionalKey)
    } else {
      throw new Error(`unknown field modifier ${mods}`)
    }
  }
  return type
}

/** The structs built here: the generated definitions (`isGeneratedStruct`). */
const generated = new WeakSet<SchemaAST.AST>()

/**
 * Whether an AST is a generated definition's struct (`Pod`, `PodSpec`, ...), as built
 * from the Kubernetes spec, not annotated or otherwise rebuilt since.
 */
export const isGeneratedStruct = (ast: SchemaAST.AST): boolean => generated.has(ast)

const build = (identifier: string, fields: Readonly<Record<string, Field>>): SchemaAST.Objects => {
  const signatures: Array<SchemaAST.PropertySignature> = []
  for (const key of Object.keys(fields)) {
    signatures.push(new SchemaAST.PropertySignature(key, fieldType(fields[key]!)))
  }
  const ast = new SchemaAST.Objects(signatures, [], { identifier })
  generated.add(ast)
  return ast
}

/**
 * A Schema whose AST is built the first time it is read. The package defines about 750
 * structs and a program uses a few: building them all at import costs ~8 ms more CPU of
 * every cold start (measured on Effect 4; `Schema.Struct` for each, ~80 ms). Reading
 * `ast` builds this struct and the structs it refers to, and gives the same nodes every
 * time after. The rest of the Schema interface (`annotate`, `check`, `rebuild`, `make`,
 * `pipe`, the type id) is inherited from the prototype every Schema of `effect/Schema`
 * has, and works from `ast`.
 */
class LazyStruct {
  readonly #identifier: string
  #fields: Readonly<Record<string, Field>> | undefined
  #ast: SchemaAST.Objects | undefined

  constructor(identifier: string, fields: Readonly<Record<string, Field>>) {
    this.#identifier = identifier
    this.#fields = fields
  }

  get ast(): SchemaAST.Objects {
    if (this.#ast === undefined) {
      this.#ast = build(this.#identifier, this.#fields!)
      this.#fields = undefined
    }
    return this.#ast
  }

  /** The definition's name (`"Pod"`), as a v3 struct printed its identifier. */
  toString(): string {
    return this.#identifier
  }
}

// `Schema.make`'s prototype: the Schema type id, `pipe`, `annotate`, `annotateKey`, `check`,
// `rebuild` and the lazily built `make` / `makeOption` / `makeEffect`, all of them read `this.ast`.
Object.setPrototypeOf(LazyStruct.prototype, Object.getPrototypeOf(Schema.Unknown))

/**
 * A generated struct: its fields from compact descriptions, its type the declared
 * interface `A` (so the inferred Struct types never reach tsc or the .d.ts files). Pure:
 * its arguments are literals, so a bundler drops it when unused. Its AST is built when
 * first read (see `LazyStruct`).
 */
export const struct = <A>(identifier: string, fields: Readonly<Record<string, Field>>): Schema.Codec<A> =>
  // a LazyStruct is a Schema by its prototype (see above); its decoded and encoded types are `A`
  new LazyStruct(identifier, fields) as unknown as Schema.Codec<A>

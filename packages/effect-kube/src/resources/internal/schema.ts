/**
 * Building blocks shared by the built-in Schemas, and what those Schemas let through. Not
 * part of the public API.
 *
 * Every Schema built from these has the same decoded and encoded type: no
 * transformations, so an object decoded from the server can be sent back as it is.
 *
 * What they let through is the same on every path: the client's own reads
 * (`internal/codec.ts`) and every `effect/Schema` call on the exported Schemas
 * (`Schema.decodeUnknown*`, `Schema.encode*`, `Schema.is`, `Schema.asserts`, `make`, and a
 * generated Schema inside a user's own Struct). One implementation for both:
 *
 * - **Fields a Schema does not name are kept**, at every depth: a generated struct is
 *   installed in effect/Schema's compiler registry (`SchemaCompiler.set`) with a decoder that
 *   checks the value with the compiled validator and gives the value itself back, never a
 *   copy: nothing is dropped, key order included. Encoding is the same (the built-in Schemas
 *   transform nothing, so the flipped AST is the same AST).
 * - **A newer server's object is kept**: an object of a kind whose apiVersion, kind and
 *   metadata fit, and whose other mismatches are all of the kind a server newer than the
 *   spec gives (a field the spec calls required left out, a value of a JSON shape the spec
 *   does not have there, `null` included: `Found.newerShape`), decodes as it is. A scalar of
 *   another type (a number where the spec has a string) still fails. The client reports such
 *   an object as a `Warnings.MismatchedObject` warning; `effect/Schema` has nowhere to.
 *   The Schemas of nested definitions (`PodSpec`, ...) are strict about their own fields.
 * - **Strict on request**: `onExcessProperty: "error"` decodes with effect/Schema's own
 *   interpreter: a field the Schema does not name fails, and so does every mismatch.
 *
 * The detailed walk that names what did not fit is effect/Schema's interpreter, run on a
 * copy of the kind's struct with no node in the registry (`strictAst`), so that it says
 * what the registered decoders forgave.
 */
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as SchemaCompiler from "effect/schema/SchemaCompiler"
import * as SchemaAST from "effect/SchemaAST"
import * as SchemaIssue from "effect/SchemaIssue"
import * as SchemaParser from "effect/SchemaParser"
import { type Check, compile } from "../../internal/codec/validator.js"

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

/** The generated structs that hold a `Suspend` at some depth (`JSONSchemaProps` and the structs holding it). */
const suspending = new WeakSet<SchemaAST.AST>()

/** Whether a field's type holds a `Suspend`, directly or through a generated struct. */
const holdsSuspend = (ast: SchemaAST.AST): boolean => {
  switch (ast._tag) {
    case "Suspend":
      return true
    case "Objects":
      return generated.has(ast) ? suspending.has(ast) : ast.indexSignatures.some((is) => holdsSuspend(is.type))
    case "Arrays":
      return ast.rest.some(holdsSuspend)
    case "Union":
      return ast.types.some(holdsSuspend)
    default:
      return false
  }
}

const build = (identifier: string, fields: Readonly<Record<string, Field>>, kind: boolean): SchemaAST.Objects => {
  const signatures: Array<SchemaAST.PropertySignature> = []
  let suspends = false
  for (const key of Object.keys(fields)) {
    const type = fieldType(fields[key]!)
    suspends ||= holdsSuspend(type)
    signatures.push(new SchemaAST.PropertySignature(key, type))
  }
  const ast = new SchemaAST.Objects(signatures, [], { identifier })
  generated.add(ast)
  // `SchemaAST.flip` and `toType` give a struct that holds no `Suspend` back as it is, and rebuild one that
  // does (a `Suspend` is always rebuilt): those copies get the same decoder, so that encoding and `Schema.is`
  // find it too
  let copies: ReadonlyArray<SchemaAST.AST> = []
  if (suspends) {
    suspending.add(ast)
    copies = [SchemaAST.flip(ast), SchemaAST.toType(ast), SchemaAST.toEncoded(ast)]
  }
  install(ast, kind, copies)
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
  readonly #kind: boolean
  #fields: Readonly<Record<string, Field>> | undefined
  #ast: SchemaAST.Objects | undefined

  constructor(identifier: string, fields: Readonly<Record<string, Field>>, kind: boolean) {
    this.#identifier = identifier
    this.#fields = fields
    this.#kind = kind
  }

  get ast(): SchemaAST.Objects {
    if (this.#ast === undefined) {
      this.#ast = build(this.#identifier, this.#fields!, this.#kind)
      this.#fields = undefined
    }
    return this.#ast
  }

  /**
   * What `annotate` and `annotateKey` give (and `check`, which effect/Schema then runs itself): a
   * Schema of the new AST. An annotated copy keeps what it does not name, as this struct does.
   */
  rebuild(ast: SchemaAST.AST): Schema.Top {
    share(this.ast, ast)
    return Schema.make(ast)
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
  new LazyStruct(identifier, fields, false) as unknown as Schema.Codec<A>

/**
 * The struct of a kind (a definition with a group, version and kind, and `metadata`): as
 * `struct`, and it also takes a newer server's object (see the header of this module).
 */
export const kind = <A>(identifier: string, fields: Readonly<Record<string, Field>>): Schema.Codec<A> =>
  new LazyStruct(identifier, fields, true) as unknown as Schema.Codec<A>

// ---------------------------------------------------------------------------------------------------------------------
// Messages
// ---------------------------------------------------------------------------------------------------------------------

/** One leaf of an issue: where, what was expected there, and whether a newer server may explain it. */
export interface Found {
  readonly path: ReadonlyArray<PropertyKey>
  readonly expected: string
  /**
   * A required key left out, or a value whose JSON shape (object, array, scalar, null) is not one the Schema takes
   * there: what a field the spec calls required, or an alpha field of a new shape, gives. A scalar of another scalar
   * type (a number where a string is expected) is not.
   */
  readonly newerShape: boolean
}

// A required key that is absent reads "is missing", as it always has here.
const standard = SchemaIssue.makeFormatterStandardSchemaV1({
  leafHook: (issue) => issue._tag === "MissingKey" ? "is missing" : SchemaIssue.defaultLeafHook(issue)
})

/** A path in the `.spec.containers[0].name` form (`(root)` for the empty one). */
export const pathText = (path: ReadonlyArray<PropertyKey>): string =>
  path.length === 0
    ? "(root)"
    : path.map((key) => typeof key === "number" ? `[${key}]` : `.${String(key)}`).join("")

const segment = (key: PropertyKey | { readonly key: PropertyKey }): PropertyKey =>
  typeof key === "object" ? key.key : key

/** The value at `path` in `root`, or undefined. */
const at = (root: unknown, path: ReadonlyArray<PropertyKey>): unknown => {
  let value = root
  for (const key of path) {
    if (typeof value !== "object" || value === null) return undefined
    value = (value as Record<PropertyKey, unknown>)[key]
  }
  return value
}

/**
 * The JSON shape of a value. `null` is a shape of its own: what Go writes for a nil pointer, slice or map that is
 * not `omitempty`, so what a newer server sends for a field whose Go type changed (a string that became `[]byte`).
 */
type Shape = "object" | "array" | "scalar" | "null"

const shapeOf = (u: unknown): Shape =>
  u === null ? "null" : Array.isArray(u) ? "array" : typeof u === "object" ? "object" : "scalar"

/** The JSON shapes a node takes (all of them for what it does not constrain). */
const shapesOf = (ast: SchemaAST.AST, out: Set<Shape>, seen: Set<SchemaAST.AST> = new Set()): Set<Shape> => {
  if (seen.has(ast)) return out
  seen.add(ast)
  switch (ast._tag) {
    case "Suspend":
      return shapesOf(ast.thunk(), out, seen)
    case "Union":
      for (const member of ast.types) shapesOf(member, out, seen)
      return out
    case "Objects":
      out.add("object")
      // an empty struct takes any value but null and undefined
      if (ast.propertySignatures.length === 0 && ast.indexSignatures.length === 0) out.add("array").add("scalar")
      return out
    case "Arrays":
      return out.add("array")
    case "Undefined":
    case "Void":
    case "Never":
      return out
    case "String":
    case "Number":
    case "Boolean":
    case "BigInt":
    case "Symbol":
    case "Literal":
    case "UniqueSymbol":
    case "Enum":
    case "TemplateLiteral":
      return out.add("scalar")
    case "Null":
      return out.add("null")
    default:
      return out.add("object").add("array").add("scalar").add("null")
  }
}

const newerShape = (expected: SchemaAST.AST, found: unknown): boolean =>
  !shapesOf(expected, new Set()).has(shapeOf(found))

/**
 * What an issue says, where: one entry per leaf, its path in the `.spec.containers[0].name` form. `root` is the value
 * that was decoded: it tells the shape of what was found (never written into a message).
 */
export const collect = (
  issue: SchemaIssue.Issue,
  path: ReadonlyArray<PropertyKey>,
  root: unknown,
  out: Array<Found>
): void => {
  switch (issue._tag) {
    case "Pointer":
      return collect(issue.issue, [...path, ...issue.path], root, out)
    case "Composite":
      for (const inner of issue.issues) collect(inner, path, root, out)
      return
    case "AnyOf": {
      if (issue.issues.length > 0) {
        for (const inner of issue.issues) collect(inner, path, root, out)
        return
      }
      // No member could take the value. An optional field is `X | undefined`: say what X is.
      const defined = issue.ast.types.filter((member) => member._tag !== "Undefined")
      if (defined.length > 0 && defined.length < issue.ast.types.length) {
        const expected = defined.length === 1 ? defined[0]! : new SchemaAST.Union(defined)
        return collect(new SchemaIssue.InvalidType(expected), path, root, out)
      }
      break
    }
  }
  const shape = issue._tag === "MissingKey" ||
    ((issue._tag === "InvalidType" || issue._tag === "AnyOf") && newerShape(issue.ast, at(root, path)))
  for (const found of standard(issue).issues) {
    const where = [...path, ...(found.path ?? []).map(segment)]
    out.push({ path: where, expected: valueFree(found.message, at(root, where)), newerShape: shape })
  }
}

/**
 * A message that does not quote the value found. Effect's own never do (issues are made without the input:
 * `reportInput` is off); a message of the user's own (a filter's, a transformation's) might.
 */
const valueFree = (message: string, found: unknown): string => {
  const text = typeof found === "string" ? found : typeof found === "number" ? String(found) : undefined
  return text !== undefined && text.length >= 4 && message.includes(text) ? "is not a valid value here" : message
}

/** A ValidationError's detail: what failed (`what`), then where and what was expected, for the first five leaves. */
export const detailOf = (found: ReadonlyArray<Found>, what: string): string =>
  `${what}: ${found.slice(0, 5).map((f) => `${pathText(f.path)} ${f.expected}`).join("; ")}`

// ---------------------------------------------------------------------------------------------------------------------
// A newer server's object
// ---------------------------------------------------------------------------------------------------------------------

/** A JSON object (not null, not an array). */
const isObject = (u: unknown): u is Record<string, unknown> =>
  typeof u === "object" && u !== null && !Array.isArray(u)

const topLevel = ["apiVersion", "kind", "metadata"] as const

const soundTops = new WeakMap<SchemaAST.AST, ((u: Record<string, unknown>) => boolean) | null>()

/**
 * Whether an object of a built-in kind that does not fit its Schema is sound at the top:
 * a JSON object whose apiVersion, kind and metadata fit (the parts every operation reads).
 * `undefined` for a Schema whose top-level fields are not plain structs.
 */
const soundTopFor = (ast: SchemaAST.Objects): ((u: Record<string, unknown>) => boolean) | undefined => {
  const known = soundTops.get(ast)
  if (known !== undefined) return known ?? undefined
  const checks: Array<readonly [string, boolean, Check]> = []
  let plain = true
  for (const name of topLevel) {
    const ps = ast.propertySignatures.find((p) => p.name === name)
    if (ps === undefined) continue
    const check = compile(ps.type)
    if (check === undefined) plain = false
    else checks.push([name, ps.type.context?.isOptional === true, check])
  }
  const tolerance = plain
    ? (u: Record<string, unknown>) => {
      for (const [name, optional, check] of checks) {
        if (!Object.hasOwn(u, name)) {
          if (optional) continue
          return false
        }
        if (!check(u[name])) return false
      }
      return true
    }
    : null
  soundTops.set(ast, tolerance)
  return tolerance ?? undefined
}

/** The kinds' structs (see `install`). */
const kinds = new WeakSet<SchemaAST.AST>()

const unregisteredCopies = new WeakMap<SchemaAST.AST, SchemaAST.AST>()

/**
 * The same AST, rebuilt node by node, so that none of it is in the compiler registry: what effect/Schema's own
 * interpreter says of a value, with no tolerance of this module's anywhere in it (a StatefulSet's
 * `volumeClaimTemplates` are kinds of their own). Built once per node, on the first value that does not fit.
 */
const unregistered = (ast: SchemaAST.AST): SchemaAST.AST => {
  const known = unregisteredCopies.get(ast)
  if (known !== undefined) return known
  let out: SchemaAST.AST
  switch (ast._tag) {
    case "Objects":
      out = new SchemaAST.Objects(
        ast.propertySignatures.map((ps) => new SchemaAST.PropertySignature(ps.name, unregistered(ps.type))),
        ast.indexSignatures.map((is) => new SchemaAST.IndexSignature(is.parameter, unregistered(is.type))),
        ast.annotations,
        ast.checks,
        ast.encoding,
        ast.context,
        ast.encodingChecks
      )
      break
    case "Arrays":
      out = new SchemaAST.Arrays(
        ast.isMutable,
        ast.elements.map(unregistered),
        ast.rest.map(unregistered),
        ast.annotations,
        ast.checks,
        ast.encoding,
        ast.context,
        ast.encodingChecks
      )
      break
    case "Union":
      out = new SchemaAST.Union(
        ast.types.map(unregistered),
        ast.options,
        ast.annotations,
        ast.checks,
        ast.encoding,
        ast.context,
        ast.encodingChecks
      )
      break
    case "Suspend": {
      const thunk = ast.thunk
      out = new SchemaAST.Suspend(() => unregistered(thunk()), ast.annotations, ast.checks, ast.encoding, ast.context)
      break
    }
    default:
      // a leaf: nothing of this module's is ever installed for one
      return ast
  }
  unregisteredCopies.set(ast, out)
  return out
}

/**
 * The AST to ask effect/Schema's parser what does not fit a kind's Schema: for a kind's
 * struct, a copy of it in which no node is in the compiler registry (so that no tolerance
 * answers, its own or a nested kind's); any other AST as it is.
 */
export const strictAst = (ast: SchemaAST.AST): SchemaAST.AST => kinds.has(ast) ? unregistered(ast) : ast

const allErrors: SchemaAST.ParseOptions = { errors: "all" }

const describers = new WeakMap<SchemaAST.AST, (u: unknown) => Result.Result<unknown, SchemaIssue.Issue>>()

/**
 * What does not fit in an object of a kind that does not fit its Schema, every leaf of it,
 * if the object is sound at the top (else `undefined`, as when the walk runs out of stack:
 * a `maxJsonDepth` raised past what the stack holds, which Effect wraps). Empty when the
 * walk finds nothing, which only a check that throws could make it (the compiled check and
 * the interpreter agree otherwise).
 */
export const mismatchesOf = (ast: SchemaAST.AST, u: Record<string, unknown>): ReadonlyArray<Found> | undefined => {
  const top = ast._tag === "Objects" ? soundTopFor(ast) : undefined
  if (top === undefined || !top(u)) return undefined
  let describe = describers.get(ast)
  if (describe === undefined) {
    describe = SchemaParser.decodeUnknownResult(Schema.make<Schema.Codec<unknown>>(strictAst(ast)), allErrors)
    describers.set(ast, describe)
  }
  let all: Result.Result<unknown, SchemaIssue.Issue>
  try {
    all = describe(u)
  } catch {
    return undefined
  }
  if (Result.isSuccess(all)) return []
  const found: Array<Found> = []
  collect(all.failure, [], u, found)
  return found
}

/** Whether mismatches (`mismatchesOf`) are all of the kind a newer server gives: the object is kept. */
export const newerServers = (found: ReadonlyArray<Found> | undefined): boolean =>
  found !== undefined && found.every((f) => f.newerShape)

// ---------------------------------------------------------------------------------------------------------------------
// The decoder in effect/Schema's compiler registry
// ---------------------------------------------------------------------------------------------------------------------

const registered = new WeakMap<SchemaAST.AST, SchemaCompiler.CompiledDecoder>()

/** Whether an AST is a built-in struct with the decoder of this module installed (the struct, or a copy of it). */
export const isInstalled = (ast: SchemaAST.AST): boolean => registered.has(ast)

/**
 * Installs the decoder of a generated struct (`kind`: of a served kind, tolerant of a newer
 * server's object) for its AST and for the copies of it effect/Schema makes (`copies`: the
 * flipped and type-side ASTs of a struct that holds a `Suspend`, which `SchemaAST.flip` and
 * `toType` rebuild; every other struct is its own flip and type). The value is checked with
 * the compiled validator, compiled on first use, and given back itself.
 */
const install = (ast: SchemaAST.Objects, kind: boolean, copies: ReadonlyArray<SchemaAST.AST>): void => {
  const strict = new SchemaAST.Objects(ast.propertySignatures, ast.indexSignatures, ast.annotations)
  let check: Check | undefined
  // the validator compiles every generated struct; the parser on the unregistered copy is only a fallback
  const fits = (u: unknown): boolean =>
    (check ??= compile(ast) ?? SchemaParser.is(Schema.make<Schema.Codec<unknown>>(strict)))(u)
  let accepts = fits
  if (kind) {
    kinds.add(ast)
    accepts = (u) => fits(u) || (isObject(u) && newerServers(mismatchesOf(ast, u)))
  }
  // `decodeEffect` is left out: for an entry without one the registry runs its interpreter on the AST, the
  // detailed walk wanted after `decode` answers `invalid` (and for an absent key). `onExcessProperty: "error"`
  // asks for that walk too: it fails on every key the Schema does not name, and on every mismatch.
  // `make` (`Pod.make`, `makeUnsafe`) is the same: a generated struct has no defaults and no constructor to run.
  const decode = (u: unknown, options: SchemaAST.ParseOptions) =>
    options.onExcessProperty !== "error" && accepts(u) ? u : SchemaCompiler.invalid
  const decoder = { is: (u: unknown) => accepts(u), decode, make: decode } as unknown as SchemaCompiler.CompiledDecoder
  registered.set(ast, decoder)
  SchemaCompiler.set(ast, decoder)
  for (const copy of copies) share(ast, copy)
}

/**
 * Installs the decoder of a built-in struct for a copy of it with the same fields (an
 * annotated one, a flipped one), so that it keeps what it does not name as the original does.
 * A copy with checks or a transformation is left to effect/Schema.
 */
const share = (original: SchemaAST.AST, copy: SchemaAST.AST): void => {
  const decoder = registered.get(original)
  if (decoder === undefined || copy === original || registered.has(copy)) return
  if (copy._tag !== "Objects" || copy.checks !== undefined || copy.encoding !== undefined) return
  registered.set(copy, decoder)
  SchemaCompiler.set(copy, decoder)
}

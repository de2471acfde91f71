/**
 * Decoding and encoding of objects with a Resource's Schema. Objects must survive a
 * round trip unchanged (fields the Schema does not name included), so every parse
 * preserves excess properties. A Schema whose decoded and encoded forms are the same
 * (no transformations, as the built-in ones) is checked in place instead of rebuilt,
 * which halves the cost of decoding large lists.
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as SchemaAST from "effect/SchemaAST"
import { ValidationError } from "../Errors.js"
import { compile } from "./validator.js"

const parseOptions: SchemaAST.ParseOptions = { onExcessProperty: "preserve", errors: "first" }

/** Turns a value into the decoded form, or says what is wrong with it. */
export interface Codec<A, I> {
  readonly decode: (u: unknown, subject: string) => Either.Either<A, ValidationError>
  readonly encode: (a: A, subject: string) => Either.Either<I, ValidationError>
}

const codecs = new WeakMap<SchemaAST.AST, Codec<unknown, unknown>>()

const isIdentity = (ast: SchemaAST.AST): boolean =>
  (SchemaAST.encodedAST(ast) === ast && SchemaAST.typeAST(ast) === ast) || plainJson(ast, new Set())

/**
 * A recursive Schema (a `Suspend`, as `JSONSchemaProps`) is rebuilt by `typeAST` even when
 * it transforms nothing, so those are walked: plain JSON shapes all the way down.
 */
const plainJson = (ast: SchemaAST.AST, seen: Set<SchemaAST.AST>): boolean => {
  if (seen.has(ast)) return true
  seen.add(ast)
  switch (ast._tag) {
    case "TypeLiteral":
      return ast.propertySignatures.every((ps) => plainJson(ps.type, seen)) &&
        ast.indexSignatures.every((is) => plainJson(is.type, seen))
    case "TupleType":
      return ast.elements.every((e) => plainJson(e.type, seen)) && ast.rest.every((r) => plainJson(r.type, seen))
    case "Union":
      return ast.types.every((t) => plainJson(t, seen))
    case "Suspend":
      return plainJson(ast.f(), seen)
    case "StringKeyword":
    case "NumberKeyword":
    case "BooleanKeyword":
    case "UnknownKeyword":
    case "UndefinedKeyword":
    case "Literal":
      return true
    default:
      return false
  }
}

/**
 * Says where and what was expected, never what was found: the value at fault may be
 * Secret data, so neither the message nor a cause carries it.
 */
const failure = (subject: string, error: ParseResult.ParseError, what: string): ValidationError => {
  const issues = ParseResult.ArrayFormatter.formatErrorSync(error).map((issue) => ({
    path: issue.path.length === 0
      ? "(root)"
      : issue.path.map((key) => typeof key === "number" ? `[${key}]` : `.${String(key)}`).join(""),
    expected: issue.message.replace(/,\s*actual[\s\S]*$/, "")
  }))
  // An optional field reports both its own problem and "Expected undefined": keep the first.
  const useful = issues.filter((issue) => issue.expected !== "Expected undefined")
  const shown = (useful.length > 0 ? useful : issues).slice(0, 5).map((issue) => `${issue.path} ${issue.expected}`)
  return new ValidationError({ subject, detail: `${what}: ${shown.join("; ")}` })
}

/** The codec of a schema, built once per schema. */
export const codecFor = <A, I>(schema: Schema.Schema<A, I>): Codec<A, I> => {
  const cached = codecs.get(schema.ast)
  if (cached !== undefined) return cached as Codec<A, I>
  const codec = isIdentity(schema.ast) ? identityCodec(schema) : transformingCodec(schema)
  codecs.set(schema.ast, codec as Codec<unknown, unknown>)
  return codec
}

const identityCodec = <A, I>(schema: Schema.Schema<A, I>): Codec<A, I> => {
  const is = (compile(schema.ast) ?? Schema.is(schema)) as (u: unknown) => u is A
  const validate = Schema.validateEither(schema, parseOptions)
  const check = (u: unknown, subject: string, what: string): Either.Either<A, ValidationError> => {
    if (is(u)) return Either.right(u)
    return Either.mapLeft(validate(u), (e) => failure(subject, e, what))
  }
  return {
    decode: (u, subject) => check(u, subject, "does not match its schema"),
    encode: (a, subject) => check(a, subject, "does not match its schema") as unknown as Either.Either<I, ValidationError>
  }
}

const transformingCodec = <A, I>(schema: Schema.Schema<A, I>): Codec<A, I> => {
  const decode = Schema.decodeUnknownEither(schema, parseOptions)
  const encode = Schema.encodeEither(schema, parseOptions)
  return {
    decode: (u, subject) => Either.mapLeft(decode(u), (e) => failure(subject, e, "does not match its schema")),
    encode: (a, subject) => Either.mapLeft(encode(a), (e) => failure(subject, e, "cannot be encoded"))
  }
}

/** Decodes as an Effect. */
export const decode = <A, I>(schema: Schema.Schema<A, I>, u: unknown, subject: string): Effect.Effect<A, ValidationError> =>
  codecFor(schema).decode(u, subject)

/** Encodes as an Effect. */
export const encode = <A, I>(schema: Schema.Schema<A, I>, a: A, subject: string): Effect.Effect<I, ValidationError> =>
  codecFor(schema).encode(a, subject)

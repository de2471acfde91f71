/**
 * Decoding and encoding of objects with a Resource's Schema. Objects must survive a
 * round trip unchanged (fields the Schema does not name included), so every parse
 * preserves excess properties. A Schema whose decoded and encoded forms are the same
 * (no transformations, as the built-in ones) is checked in place instead of rebuilt,
 * which halves the cost of decoding large lists.
 *
 * Objects the server sends are decoded here and nowhere else (`objectDecoder`, with the
 * kind and Status checks), and objects the user gives are encoded and checked here
 * (`prepareObject`).
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as SchemaAST from "effect/SchemaAST"
import { ValidationError } from "../Errors.js"
import type * as Kube from "../Kube.js"
import type * as Resource from "../Resource.js"
import { pathWithQuery, type Spec } from "./request/spec.js"
import { isMetadataView } from "./request/view.js"
import { checkName } from "./validate.js"
import { compile } from "./validator.js"

const parseOptions: SchemaAST.ParseOptions = { onExcessProperty: "preserve", errors: "first" }

/** Turns a value into the decoded form, or says what is wrong with it. */
export interface Codec<A, I> {
  readonly decode: (u: unknown, subject: string) => Either.Either<A, ValidationError>
  readonly encode: (a: A, subject: string) => Either.Either<I, ValidationError>
}

const codecs = new WeakMap<SchemaAST.AST, Codec<unknown, unknown>>()

// The walk over plain JSON shapes first: it allocates nothing, where `encodedAST` and `typeAST`
// rebuild a recursive Schema (a cold process pays ~10 ms for the Pod's).
const isIdentity = (ast: SchemaAST.AST): boolean =>
  plainJson(ast, new Set()) || (SchemaAST.encodedAST(ast) === ast && SchemaAST.typeAST(ast) === ast)

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
  // Only a value that fails `is` needs Effect's parser, to say what is wrong: it is built then
  // (building it walks the whole Schema: ~30 ms of a cold process's first list of pods).
  let validate: ((u: unknown) => Either.Either<A, ParseResult.ParseError>) | undefined
  const check = (u: unknown, subject: string, what: string): Either.Either<A, ValidationError> => {
    if (is(u)) return Either.right(u)
    validate ??= Schema.validateEither(schema, parseOptions)
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

// ---------------------------------------------------------------------------------------------------------------------
// JSON helpers
// ---------------------------------------------------------------------------------------------------------------------

/** A JSON object (not null, not an array). */
export type JsonObject = Record<string, unknown>

/** Whether a value is a JSON object (not null, not an array). */
export const isObject = (u: unknown): u is JsonObject => typeof u === "object" && u !== null && !Array.isArray(u)

/** The `metadata` of an object, or `{}`. */
export const metadataOf = (u: unknown): JsonObject => {
  const metadata = isObject(u) ? u["metadata"] : undefined
  return isObject(metadata) ? metadata : {}
}

/** The non-empty `metadata.resourceVersion` of an object, if it has one. */
export const resourceVersionOf = (u: unknown): string | undefined => {
  const rv = metadataOf(u)["resourceVersion"]
  return typeof rv === "string" && rv !== "" ? rv : undefined
}

/** How a value is named in messages, never its content: `null`, `an array`, `string`. */
export const describeJson = (u: unknown): string => (u === null ? "null" : Array.isArray(u) ? "an array" : typeof u)

// ---------------------------------------------------------------------------------------------------------------------
// Objects of a resource
// ---------------------------------------------------------------------------------------------------------------------

/** `Pod default/web`, `Namespace prod`: how objects are named in messages. */
export const describe = (resource: Pick<Resource.Info, "kind">, namespace: string | undefined, name?: string) =>
  `${resource.kind} ${namespace === undefined ? "" : `${namespace}/`}${name ?? "<unnamed>"}`

/** A 2xx answer that cannot be what was asked for. */
export const malformed = (spec: Pick<Spec, "method" | "path" | "query">, detail: string): ValidationError =>
  new ValidationError({ subject: `answer to ${spec.method} ${pathWithQuery(spec)}`, detail })

/** Says that an object failing its Schema came from the server, in the answer to which request. */
export const inAnswer = (spec: Pick<Spec, "method" | "path" | "query">, error: ValidationError): ValidationError =>
  new ValidationError({
    subject: `answer to ${spec.method} ${pathWithQuery(spec)}: ${error.subject}`,
    detail: error.detail
  })

/**
 * The decoder of the objects of a resource in the answers to one request: a Status or
 * an object of another kind is refused, apiVersion and kind are filled in when absent
 * (list items and watch events arrive without them, and a get-then-replace must
 * round-trip), and the object is decoded with the resource's Schema. No Effect is run:
 * this runs once per item of a list and once per watch event. The request is named
 * only on failure.
 */
export const objectDecoder = <A, I>(
  resource: Pick<Resource.Resource<A, I>, "kind" | "apiVersion" | "schema">,
  spec: Pick<Spec, "method" | "path" | "query">
) => {
  const codec = codecFor(resource.schema)
  return (u: unknown): Either.Either<A, ValidationError> => {
    if (!isObject(u)) return Either.left(malformed(spec, `expected a ${resource.kind}, got ${describeJson(u)}`))
    const kind = u["kind"]
    if (kind === "Status") return Either.left(malformed(spec, `expected a ${resource.kind}, got a Status`))
    // a metadata view (Kube.metadata) takes PartialObjectMetadata, or the whole object from a
    // server that ignored the Accept
    const partial = kind === "PartialObjectMetadata" && isMetadataView(resource)
    if (kind !== undefined && kind !== resource.kind && !partial) {
      const got = typeof kind === "string" ? `a ${kind}` : `a kind that is ${describeJson(kind)}`
      return Either.left(malformed(spec, `expected a ${resource.kind}, got ${got}`))
    }
    if (u["apiVersion"] === undefined) u["apiVersion"] = resource.apiVersion
    if (kind === undefined) u["kind"] = resource.kind
    const metadata = metadataOf(u)
    const subject = describe(resource, metadata["namespace"] as string | undefined, metadata["name"] as string | undefined)
    const decoded = codec.decode(u, subject)
    return Either.isRight(decoded) ? decoded : Either.left(inAnswer(spec, decoded.left))
  }
}

/** Decodes one object the server sent (see `objectDecoder`). */
export const decodeObject = <A, I>(
  resource: Pick<Resource.Resource<A, I>, "kind" | "apiVersion" | "schema">,
  u: unknown,
  spec: Pick<Spec, "method" | "path" | "query">
): Either.Either<A, ValidationError> => objectDecoder(resource, spec)(u)

/**
 * An object that did not fit its Schema, kept as the server sent it (`invalid: "raw"`
 * or `"skip"`, which drops it after reporting it).
 */
export class InvalidObject {
  readonly _tag = "Invalid"
  constructor(readonly raw: unknown, readonly error: ValidationError) {}
}

/** Whether an item is an object kept because it did not fit its Schema. */
export const isInvalid = (u: unknown): u is InvalidObject => u instanceof InvalidObject

/** What to do with an object that does not fit its Schema. */
export type InvalidMode = "fail" | "skip" | "raw"

/**
 * Decodes a list answer, item by item, into a ListResult. Unless `invalid` is `"fail"`,
 * an item that does not fit its Schema is kept as an `InvalidObject` in its place.
 */
export const decodeList = <A, I>(
  resource: Pick<Resource.Resource<A, I>, "kind" | "apiVersion" | "schema">,
  json: unknown,
  spec: Pick<Spec, "method" | "path" | "query">,
  invalid: InvalidMode = "fail"
): Either.Either<Kube.ListResult<A>, ValidationError> => {
  if (!isObject(json) || !Array.isArray(json["items"])) {
    const got = isObject(json) ? `a ${String(json["kind"])}` : describeJson(json)
    return Either.left(malformed(spec, `expected a ${resource.kind}List, got ${got}`))
  }
  const decode = objectDecoder(resource, spec)
  const rawItems = json["items"] as Array<unknown>
  const items: Array<A> = new Array(rawItems.length)
  for (let i = 0; i < rawItems.length; i++) {
    const raw = rawItems[i]
    const decoded = decode(raw)
    if (Either.isLeft(decoded)) {
      if (invalid === "fail" || !isObject(raw)) return Either.left(decoded.left)
      items[i] = new InvalidObject(raw, decoded.left) as A
      continue
    }
    items[i] = decoded.right
  }
  const metadata = metadataOf(json)
  const continueToken = metadata["continue"]
  const remaining = metadata["remainingItemCount"]
  return Either.right({
    items,
    metadata: {
      resourceVersion: typeof metadata["resourceVersion"] === "string" ? metadata["resourceVersion"] : "",
      ...(typeof continueToken === "string" && continueToken !== "" ? { continue: continueToken } : {}),
      ...(typeof remaining === "number" ? { remainingItemCount: remaining } : {})
    }
  })
}

/**
 * Encodes an object the user gave and checks it: its kind and apiVersion (filled when
 * absent), its name (unless `generateName` is allowed), its namespace (filled, or equal
 * to the target's).
 */
export const prepareObject = <A, I>(
  resource: Resource.Resource<A, I, string>,
  namespace: string | undefined,
  object: A,
  options: { readonly name?: string | undefined; readonly allowGenerateName?: boolean | undefined }
): Effect.Effect<JsonObject, ValidationError> =>
  Effect.gen(function*() {
    const given = metadataOf(object)
    const subject = describe(resource, namespace, (given["name"] as string | undefined) ?? options.name)
    const encoded = yield* codecFor(resource.schema).encode(object, subject)
    if (!isObject(encoded)) {
      return yield* new ValidationError({ subject, detail: `must be a JSON object, got ${describeJson(encoded)}` })
    }
    if (encoded["apiVersion"] !== undefined && encoded["apiVersion"] !== resource.apiVersion) {
      return yield* new ValidationError({
        subject,
        detail: `apiVersion is ${JSON.stringify(encoded["apiVersion"])} but this api serves ${resource.apiVersion}`
      })
    }
    if (encoded["kind"] !== undefined && encoded["kind"] !== resource.kind) {
      return yield* new ValidationError({
        subject,
        detail: `kind is ${JSON.stringify(encoded["kind"])} but this api serves ${resource.kind}`
      })
    }
    const metadata = { ...metadataOf(encoded) }
    const name = metadata["name"]
    if (options.name !== undefined) {
      if (name !== undefined && name !== options.name) {
        return yield* new ValidationError({
          subject,
          detail: `metadata.name is ${JSON.stringify(name)} but the name given is ${JSON.stringify(options.name)}`
        })
      }
      metadata["name"] = options.name
    } else if (name === undefined && options.allowGenerateName === true && metadata["generateName"] !== undefined) {
      yield* checkName(`${String(metadata["generateName"])}x`, `${subject}: metadata.generateName`)
    } else {
      yield* checkName(name, `${subject}: metadata.name`)
    }
    if (resource.namespaced) {
      const own = metadata["namespace"]
      if (own !== undefined && own !== "" && own !== namespace) {
        return yield* new ValidationError({
          subject,
          detail: `metadata.namespace is ${JSON.stringify(own)} but the operation acts in namespace ${JSON.stringify(namespace)}`
        })
      }
      metadata["namespace"] = namespace
    } else if (metadata["namespace"] !== undefined && metadata["namespace"] !== "") {
      return yield* new ValidationError({
        subject,
        detail: `${resource.kind} is cluster-scoped, so metadata.namespace must not be set`
      })
    }
    return { ...encoded, apiVersion: resource.apiVersion, kind: resource.kind, metadata }
  })

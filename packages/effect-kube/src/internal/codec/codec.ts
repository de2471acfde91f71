/**
 * Decoding and encoding of objects with a Resource's Schema. Objects must survive a
 * round trip unchanged, fields the Schema does not name included. A Schema whose decoded
 * and encoded forms are the same (no transformations, as the built-in ones) is checked in
 * place, and the object is kept as it came; a Schema that transforms is run by
 * `effect/Schema`, through a copy of it whose structs keep the keys they do not declare
 * (`keepingUndeclared`: effect/Schema 4 drops them otherwise).
 *
 * Objects the server sends are decoded here and nowhere else (`objectDecoder`, with the
 * kind and Status checks), and objects the user gives are encoded and checked here
 * (`prepareObject`). An object of a built-in kind whose apiVersion, kind and metadata fit
 * but whose other fields do not the way a newer server's do (a field the spec calls
 * required left out, a value of a JSON shape the spec does not have there, `null` included) is
 * kept as the server sent it and its mismatch reported as a warning (`Mismatch`), never
 * failed. A scalar of another type (a number where the spec has a string) still fails. The
 * exported Schemas take the same objects, by the same code (`resources/internal/schema.ts`).
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as SchemaAST from "effect/SchemaAST"
import * as SchemaIssue from "effect/SchemaIssue"
import * as SchemaParser from "effect/SchemaParser"
import * as Schema from "effect/Schema"
import { type LimitExceeded, type ServerWarning, ValidationError } from "../../Errors.js"
import type * as Kube from "../../Kube.js"
import type * as Resource from "../../Resource.js"
import { defaults as policyDefaults, RequestPolicy } from "../../RequestPolicy.js"
import {
  collect,
  detailOf,
  type Found,
  isGeneratedStruct,
  isInstalled,
  mismatchesOf,
  newerServers,
  strictAst
} from "../../resources/internal/schema.js"
import { exceeded } from "../client/limits.js"
import { pathWithQuery, type Spec } from "../request/spec.js"
import { isMetadataView } from "../request/view.js"
import { checkName } from "../request/inputChecks.js"
import { compile } from "./validator.js"
import * as warnings from "../client/warnings.js"

/** Turns a value into the decoded form, or says what is wrong with it. */
export interface Codec<A, I> {
  readonly decode: (u: unknown, subject: string) => Result.Result<A, ValidationError>
  readonly encode: (a: A, subject: string) => Result.Result<I, ValidationError>
}

const codecs = new WeakMap<SchemaAST.AST, Codec<unknown, unknown>>()

// The walk over plain JSON shapes first: it allocates nothing, where `toEncoded` and `toType`
// rebuild a recursive Schema (a cold process pays for the Pod's).
const isIdentity = (ast: SchemaAST.AST): boolean =>
  plainJson(ast, new Set()) || (SchemaAST.toEncoded(ast) === ast && SchemaAST.toType(ast) === ast)

/**
 * A recursive Schema (a `Suspend`, as `JSONSchemaProps`) is rebuilt by `toType` even when
 * it transforms nothing, so those are walked: plain JSON shapes all the way down, no
 * encoding on any node (checks are fine: they do not change the value).
 */
const plainJson = (ast: SchemaAST.AST, seen: Set<SchemaAST.AST>): boolean => {
  if (seen.has(ast)) return true
  seen.add(ast)
  if (ast.encoding !== undefined) return false
  switch (ast._tag) {
    case "Objects":
      return ast.propertySignatures.every((ps) => plainJson(ps.type, seen)) &&
        ast.indexSignatures.every((is) => plainJson(is.parameter, seen) && plainJson(is.type, seen))
    case "Arrays":
      return ast.elements.every((e) => plainJson(e, seen)) && ast.rest.every((r) => plainJson(r, seen))
    case "Union":
      return ast.types.every((t) => plainJson(t, seen))
    case "Suspend":
      return plainJson(ast.thunk(), seen)
    case "String":
    case "Number":
    case "Boolean":
    case "Unknown":
    case "Undefined":
    case "Null":
    case "Literal":
      return true
    default:
      return false
  }
}

// ---------------------------------------------------------------------------------------------------------------------
// Messages
// ---------------------------------------------------------------------------------------------------------------------

/**
 * Says where and what was expected, never what was found: the value at fault may be
 * Secret data, so neither the message nor a cause carries it.
 */
const failure = (subject: string, issue: SchemaIssue.Issue, what: string, root: unknown): ValidationError => {
  const found: Array<Found> = []
  collect(issue, [], root, found)
  return new ValidationError({ subject, detail: detailOf(found, what) })
}

// ---------------------------------------------------------------------------------------------------------------------
// Codecs
// ---------------------------------------------------------------------------------------------------------------------

/** The codec of a schema, built once per schema. */
export const codecFor = <A, I>(schema: Schema.Codec<A, I>): Codec<A, I> => {
  const cached = codecs.get(schema.ast)
  if (cached !== undefined) return cached as Codec<A, I>
  const codec = isIdentity(schema.ast) ? identityCodec(schema) : transformingCodec(schema)
  codecs.set(schema.ast, codec as Codec<unknown, unknown>)
  return codec
}

const firstError: SchemaAST.ParseOptions = { errors: "first" }

const identityCodec = <A, I>(schema: Schema.Codec<A, I>): Codec<A, I> => {
  // a kind's Schema is checked strictly here: what it lets through is `objectDecoder`'s to say (with a warning)
  const strict = Schema.make<Schema.Codec<A, I>>(strictAst(schema.ast))
  const is = (compile(schema.ast) ?? SchemaParser.is(strict)) as (u: unknown) => u is A
  // Only a value that fails `is` needs Effect's parser, to say what is wrong: it is built then
  // (building it walks the whole Schema: time of a cold process's first list of pods).
  let validate: ((u: unknown) => Result.Result<A, SchemaIssue.Issue>) | undefined
  const check = (u: unknown, subject: string): Result.Result<A, ValidationError> =>
    withinStack(subject, () => {
      if (is(u)) return Result.succeed(u)
      validate ??= SchemaParser.decodeUnknownResult(strict, firstError)
      const result = validate(u)
      // `is` and the parser disagree only if a check of the user's throws: the parser's word then
      return Result.isSuccess(result)
        ? Result.succeed(u as A)
        : Result.fail(failure(subject, result.failure, matchText, u))
    })
  return {
    decode: check,
    // decoded and encoded are the same here: A is I
    encode: (a, subject) =>
      check(a, subject) as Result.Result<unknown, ValidationError> as Result.Result<I, ValidationError>
  }
}

const matchText = "does not match its schema"

const transformingCodec = <A, I>(schema: Schema.Codec<A, I>): Codec<A, I> => {
  const keeping = Schema.make<Schema.Codec<A, I>>(keepingUndeclared(schema.ast))
  const decode = SchemaParser.decodeUnknownResult(keeping, firstError)
  const encode = SchemaParser.encodeUnknownResult(keeping, firstError)
  return {
    decode: (u, subject) =>
      withinStack(subject, () => {
        const result = decode(u)
        return Result.isSuccess(result)
          ? Result.succeed(result.success)
          : Result.fail(failure(subject, result.failure, matchText, u))
      }),
    encode: (a, subject) =>
      withinStack(subject, () => {
        const result = encode(a)
        return Result.isSuccess(result)
          ? Result.succeed(result.success)
          : Result.fail(failure(subject, result.failure, "cannot be encoded", a))
      })
  }
}

/**
 * Runs a check that recurses as deep as the value nests (a recursive Schema's): a value
 * too deep for the stack fails it, rather than overflow into a defect. `objectDecoder`
 * refuses such values before (`maxJsonDepth`); this is what is left for a limit raised past
 * what the stack holds, and for the objects the user gives.
 */
const withinStack = <A>(
  subject: string,
  check: () => Result.Result<A, ValidationError>
): Result.Result<A, ValidationError> => {
  try {
    return check()
  } catch (e) {
    if (!(e instanceof RangeError)) throw e
    return Result.fail(new ValidationError({ subject, detail: "is nested too deeply to be checked (the stack ran out)" }))
  }
}

// ---------------------------------------------------------------------------------------------------------------------
// Nesting
// ---------------------------------------------------------------------------------------------------------------------

const recursion = new WeakMap<SchemaAST.AST, boolean>()

/** The nodes an AST refers to, its encoding's included. */
const childrenOf = (ast: SchemaAST.AST): ReadonlyArray<SchemaAST.AST> => {
  const out: Array<SchemaAST.AST> = []
  switch (ast._tag) {
    case "Suspend":
      out.push(ast.thunk())
      break
    case "Objects":
      for (const ps of ast.propertySignatures) out.push(ps.type)
      for (const is of ast.indexSignatures) out.push(is.parameter, is.type)
      break
    case "Arrays":
      out.push(...ast.elements, ...ast.rest)
      break
    case "Union":
      out.push(...ast.types)
      break
    case "Declaration":
      out.push(...ast.typeParameters)
      break
  }
  if (ast.encoding !== undefined) for (const link of ast.encoding) out.push(link.to)
  return out
}

/**
 * Whether a Schema refers to itself (a CRD's `JSONSchemaProps`, a user's `Schema.suspend`
 * of itself): only then can checking a value recurse as deep as the value nests, so only
 * then is its depth measured. A `Suspend` alone is not a cycle (the generated kinds use
 * one for a definition written later). Found once per Schema, by a walk that meets a node
 * again while it is still inside it.
 */
export const isRecursive = (ast: SchemaAST.AST): boolean => {
  const known = recursion.get(ast)
  if (known !== undefined) return known
  const inside = new Set<SchemaAST.AST>()
  const clear = new Set<SchemaAST.AST>()
  const visit = (node: SchemaAST.AST): boolean => {
    if (clear.has(node)) return false
    if (inside.has(node)) return true
    inside.add(node)
    for (const child of childrenOf(node)) if (visit(child)) return true
    inside.delete(node)
    clear.add(node)
    return false
  }
  const found = visit(ast)
  recursion.set(ast, found)
  return found
}

/** Whether a JSON value nests deeper than `max` levels of objects and arrays. Walked without recursion. */
export const deeperThan = (root: unknown, max: number): boolean => {
  if (typeof root !== "object" || root === null) return false
  const values: Array<object> = [root]
  const depths: Array<number> = [1]
  while (values.length > 0) {
    const value = values.pop()! as Record<string, unknown>
    const depth = depths.pop()!
    if (depth > max) return true
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) {
        const item: unknown = value[i]
        if (typeof item === "object" && item !== null) {
          values.push(item)
          depths.push(depth + 1)
        }
      }
    } else {
      for (const key in value) {
        const item = value[key]
        if (typeof item === "object" && item !== null) {
          values.push(item)
          depths.push(depth + 1)
        }
      }
    }
  }
  return false
}

// ---------------------------------------------------------------------------------------------------------------------
// Keys a struct does not declare
// ---------------------------------------------------------------------------------------------------------------------

const keepRest = new SchemaAST.IndexSignature(SchemaAST.string, SchemaAST.unknown)

const rebuilt = new WeakMap<SchemaAST.AST, SchemaAST.AST>()

const sameArray = <A>(a: ReadonlyArray<A>, b: ReadonlyArray<A>): boolean =>
  a.length === b.length && a.every((x, i) => x === b[i])

/**
 * The same Schema, except that every struct in it (inside transformations, unions,
 * arrays, suspended and declared parts too) also takes the string keys it does not
 * declare, as they are (`[key: string]: unknown` next to its fields). effect/Schema 4's
 * decoding and encoding drop such keys, where 3's kept them with
 * `onExcessProperty: "preserve"`: with this, a transformation sees them (a decode that
 * spreads its input passes them on, a Class instance gets them as own properties) and
 * encoding writes them back, so an object of the user's own Schema loses no field the
 * server sent, on the way in or back. An empty struct (which takes any value but
 * `null`/`undefined`, kept whole) and a struct with a string index already are left as
 * they are. Built once per Schema.
 */
export const keepingUndeclared = (ast: SchemaAST.AST): SchemaAST.AST => {
  // a built-in struct keeps them itself (its decoder gives the value back as it is): see `resources/internal/schema.ts`
  if (isInstalled(ast)) return ast
  const known = rebuilt.get(ast)
  if (known !== undefined) return known
  if (ast._tag === "Suspend") {
    const out = new SchemaAST.Suspend(
      () => keepingUndeclared(ast.thunk()),
      ast.annotations,
      undefined,
      encodingOf(ast),
      ast.context
    )
    rebuilt.set(ast, out)
    return out
  }
  // a cycle goes through a Suspend (above), so a node is never met again before it is built
  const encoding = encodingOf(ast)
  let out: SchemaAST.AST
  switch (ast._tag) {
    case "Objects": {
      const properties = ast.propertySignatures.map((ps) => {
        const type = keepingUndeclared(ps.type)
        return type === ps.type ? ps : new SchemaAST.PropertySignature(ps.name, type)
      })
      const indexes = ast.indexSignatures.map((is) => {
        const type = keepingUndeclared(is.type)
        return type === is.type ? is : new SchemaAST.IndexSignature(is.parameter, type)
      })
      const empty = properties.length === 0 && indexes.length === 0
      const open = ast.indexSignatures.some((is) => is.parameter._tag === "String")
      const withRest = empty || open ? indexes : [...indexes, keepRest]
      out = sameArray(properties, ast.propertySignatures) && sameArray(withRest, ast.indexSignatures) &&
          encoding === ast.encoding
        ? ast
        : new SchemaAST.Objects(
          properties,
          withRest,
          ast.annotations,
          ast.checks,
          encoding,
          ast.context,
          ast.encodingChecks
        )
      break
    }
    case "Arrays": {
      const elements = ast.elements.map(keepingUndeclared)
      const rest = ast.rest.map(keepingUndeclared)
      out = sameArray(elements, ast.elements) && sameArray(rest, ast.rest) && encoding === ast.encoding
        ? ast
        : new SchemaAST.Arrays(
          ast.isMutable,
          elements,
          rest,
          ast.annotations,
          ast.checks,
          encoding,
          ast.context,
          ast.encodingChecks
        )
      break
    }
    case "Union": {
      const types = ast.types.map(keepingUndeclared)
      out = sameArray(types, ast.types) && encoding === ast.encoding
        ? ast
        : new SchemaAST.Union(
          types,
          ast.options,
          ast.annotations,
          ast.checks,
          encoding,
          ast.context,
          ast.encodingChecks
        )
      break
    }
    case "Declaration": {
      const parameters = ast.typeParameters.map(keepingUndeclared)
      out = sameArray(parameters, ast.typeParameters) && encoding === ast.encoding
        ? ast
        : new SchemaAST.Declaration(
          parameters,
          ast.run,
          ast.annotations,
          ast.checks,
          encoding,
          ast.context,
          ast.encodingChecks,
          ast.encodingRun
        )
      break
    }
    default:
      // a leaf: only its encoding can lead to a struct (a value decoded from an object); the node is the same
      // otherwise, so it is copied with the new encoding (its fields are plain properties)
      out = encoding === ast.encoding
        ? ast
        : Object.assign(Object.create(Object.getPrototypeOf(ast)), ast, { encoding })
  }
  rebuilt.set(ast, out)
  return out
}

/** A node's encoding with every step's target keeping undeclared keys (the same array when nothing changes). */
const encodingOf = (ast: SchemaAST.AST): SchemaAST.Encoding | undefined => {
  const encoding = ast.encoding
  if (encoding === undefined) return undefined
  const links = encoding.map((link) => {
    const to = keepingUndeclared(link.to)
    return to === link.to ? link : new SchemaAST.Link(to, link.transformation)
  })
  return sameArray(links, encoding) ? encoding : links as unknown as SchemaAST.Encoding
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
 * An object of a built-in kind kept as the server sent it although it does not fit the
 * kind's Schema: the object, and the ValidationError naming what did not fit (reported
 * as a warning, never failed).
 */
export interface Mismatch {
  readonly object: JsonObject
  readonly error: ValidationError
}

/**
 * The decoder of the objects of a resource in the answers to one request: a Status or
 * an object of another kind is refused, apiVersion and kind are filled in when absent
 * (list items and watch events arrive without them, and a get-then-replace must
 * round-trip), and the object is decoded with the resource's Schema. No Effect is run:
 * this runs once per item of a list and once per watch event. The request is named
 * only on failure. An object of a built-in kind that fits at the top but not below (see
 * `resources/internal/schema.ts`) is kept, typed as the kind, and handed to `onMismatch` to be reported.
 */
export const objectDecoder = <A, I>(
  resource: Pick<Resource.Resource<A, I>, "kind" | "apiVersion" | "schema">,
  spec: Pick<Spec, "method" | "path" | "query">,
  onMismatch?: ((mismatch: Mismatch) => void) | undefined,
  maxJsonDepth: number = policyDefaults.maxJsonDepth
) => {
  const codec = codecFor(resource.schema)
  // only a recursive Schema walks a value as deep as it nests
  const maxDepth = isRecursive(resource.schema.ast) ? maxJsonDepth : Number.POSITIVE_INFINITY
  // only a built-in kind's Schema takes a newer server's object (a user's own Schema is theirs to say what fits)
  const tolerant = isGeneratedStruct(resource.schema.ast)
  return (u: unknown): Result.Result<A, ValidationError | LimitExceeded> => {
    if (!isObject(u)) return Result.fail(malformed(spec, `expected a ${resource.kind}, got ${describeJson(u)}`))
    const kind = u["kind"]
    if (kind === "Status") return Result.fail(malformed(spec, `expected a ${resource.kind}, got a Status`))
    // a metadata view (Kube.metadata) takes PartialObjectMetadata, or the whole object from a
    // server that ignored the Accept
    const partial = kind === "PartialObjectMetadata" && isMetadataView(resource)
    if (kind !== undefined && kind !== resource.kind && !partial) {
      const got = typeof kind === "string" ? `a ${kind}` : `a kind that is ${describeJson(kind)}`
      return Result.fail(malformed(spec, `expected a ${resource.kind}, got ${got}`))
    }
    if (u["apiVersion"] === undefined) u["apiVersion"] = resource.apiVersion
    if (kind === undefined) u["kind"] = resource.kind
    const metadata = metadataOf(u)
    const name = metadata["name"] as string | undefined
    const subject = describe(resource, metadata["namespace"] as string | undefined, name)
    if (maxDepth !== Number.POSITIVE_INFINITY && deeperThan(u, maxDepth)) {
      return Result.fail(exceeded(spec.method, pathWithQuery(spec), { limit: "maxJsonDepth", value: maxDepth, subject }))
    }
    const decoded = codec.decode(u, subject)
    if (Result.isSuccess(decoded)) return decoded
    // sound at the top (see `resources/internal/schema.ts`): every mismatch below is looked at (the first one only
    // says what the parser met first); when the walk ran out of stack or found nothing, the first issue is said
    const found = tolerant ? mismatchesOf(resource.schema.ast, u) : undefined
    if (found === undefined || found.length === 0) return Result.fail(inAnswer(spec, decoded.failure))
    if (!newerServers(found)) {
      const wrong = found.filter((f) => !f.newerShape)
      return Result.fail(inAnswer(spec, new ValidationError({ subject, detail: detailOf(wrong, matchText) })))
    }
    const error = new ValidationError({ subject, detail: detailOf(found, matchText) })
    onMismatch?.({ object: u, error: inAnswer(spec, error) })
    return Result.succeed(u as A)
  }
}

/** Reports a Mismatch to the Warnings service (or logs it), as a skipped object is reported. */
export const reportMismatch = (
  spec: Pick<Spec, "method" | "path" | "query">,
  mismatch: Mismatch
): Effect.Effect<void, ValidationError | ServerWarning> =>
  warnings.reportMismatch(spec.method, pathWithQuery(spec), mismatch.error)

/**
 * Runs `f` with the policy's `maxJsonDepth` when the Schema is recursive (the only case it
 * matters), else at once: a kind that does not nest pays no read of the policy.
 */
const withDepth = <A, E, R>(
  schema: Schema.Top,
  f: (maxJsonDepth: number | undefined) => Effect.Effect<A, E, R>
): Effect.Effect<A, E, R> =>
  isRecursive(schema.ast) ? Effect.flatMap(RequestPolicy, (policy) => f(policy.maxJsonDepth)) : f(undefined)

/** Decodes one object the server sent (see `objectDecoder`), reporting a tolerated mismatch. */
export const decodeObject = <A, I>(
  resource: Pick<Resource.Resource<A, I>, "kind" | "apiVersion" | "schema">,
  u: unknown,
  spec: Pick<Spec, "method" | "path" | "query">
): Effect.Effect<A, ValidationError | ServerWarning | LimitExceeded> =>
  withDepth(resource.schema, (maxJsonDepth): Effect.Effect<A, ValidationError | ServerWarning | LimitExceeded> => {
    let found: Mismatch | undefined
    const decoded = objectDecoder(resource, spec, (mismatch) => {
      found = mismatch
    }, maxJsonDepth)(u)
    if (Result.isFailure(decoded)) return Effect.fail(decoded.failure)
    return found === undefined
      ? Effect.succeed(decoded.success)
      : Effect.as(reportMismatch(spec, found), decoded.success)
  })

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
 * an item that does not fit its Schema is kept as an `InvalidObject` in its place. Items
 * of a built-in kind kept although they do not fit below the top are reported, in order.
 */
export const decodeList = <A, I>(
  resource: Pick<Resource.Resource<A, I>, "kind" | "apiVersion" | "schema">,
  json: unknown,
  spec: Pick<Spec, "method" | "path" | "query">,
  invalid: InvalidMode = "fail"
): Effect.Effect<Kube.ListResult<A>, ValidationError | ServerWarning | LimitExceeded> =>
  withDepth(resource.schema, (maxJsonDepth) => decodeListWith(resource, json, spec, invalid, maxJsonDepth))

const decodeListWith = <A, I>(
  resource: Pick<Resource.Resource<A, I>, "kind" | "apiVersion" | "schema">,
  json: unknown,
  spec: Pick<Spec, "method" | "path" | "query">,
  invalid: InvalidMode,
  maxJsonDepth: number | undefined
): Effect.Effect<Kube.ListResult<A>, ValidationError | ServerWarning | LimitExceeded> => {
  if (!isObject(json) || !Array.isArray(json["items"])) {
    const got = isObject(json) ? `a ${String(json["kind"])}` : describeJson(json)
    return Effect.fail(malformed(spec, `expected a ${resource.kind}List, got ${got}`))
  }
  let mismatches: Array<Mismatch> | undefined
  const decode = objectDecoder(resource, spec, (mismatch) => {
    ;(mismatches ??= []).push(mismatch)
  }, maxJsonDepth)
  const rawItems = json["items"] as Array<unknown>
  const items: Array<A> = new Array(rawItems.length)
  for (let i = 0; i < rawItems.length; i++) {
    const raw = rawItems[i]
    const decoded = decode(raw)
    if (Result.isFailure(decoded)) {
      const error = decoded.failure
      if (invalid === "fail" || !isObject(raw) || error._tag === "LimitExceeded") return Effect.fail(error)
      items[i] = new InvalidObject(raw, error) as A
      continue
    }
    items[i] = decoded.success
  }
  const metadata = metadataOf(json)
  const continueToken = metadata["continue"]
  const remaining = metadata["remainingItemCount"]
  const result: Kube.ListResult<A> = {
    items,
    metadata: {
      resourceVersion: typeof metadata["resourceVersion"] === "string" ? metadata["resourceVersion"] : "",
      ...(typeof continueToken === "string" && continueToken !== "" ? { continue: continueToken } : {}),
      ...(typeof remaining === "number" ? { remainingItemCount: remaining } : {})
    }
  }
  if (mismatches === undefined) return Effect.succeed(result)
  return Effect.as(Effect.forEach(mismatches, (mismatch) => reportMismatch(spec, mismatch), { discard: true }), result)
}

/**
 * The review kinds: create-only virtual resources (their REST storage answers the request
 * and stores nothing, never validating its metadata), so a create needs no name. Binding,
 * also create-only, names the pod it binds and needs one.
 */
const namelessKinds = new Set([
  "authentication.k8s.io/TokenReview",
  "authentication.k8s.io/SelfSubjectReview",
  "authorization.k8s.io/SubjectAccessReview",
  "authorization.k8s.io/LocalSubjectAccessReview",
  "authorization.k8s.io/SelfSubjectAccessReview",
  "authorization.k8s.io/SelfSubjectRulesReview"
])

/** What `checkEnvelope` needs to check: the name a verb gives, and whether `generateName` may stand for it. */
interface EnvelopeOptions {
  readonly name?: string | undefined
  readonly allowGenerateName?: boolean | undefined
}

const subjectOf = (
  resource: Pick<Resource.Info, "kind">,
  namespace: string | undefined,
  object: unknown,
  options: EnvelopeOptions
) => {
  const given = metadataOf(object)["name"]
  return describe(resource, namespace, typeof given === "string" ? given : options.name)
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
  options: EnvelopeOptions
): Effect.Effect<JsonObject, ValidationError> =>
  Effect.flatMap(
    Effect.fromResult(codecFor(resource.schema).encode(object, subjectOf(resource, namespace, object, options))),
    (encoded) => checkEnvelope(resource, namespace, encoded, options)
  )

/**
 * Checks an apply configuration: a partial object, so it is not checked against the
 * Schema (its required fields may be left out, and it is JSON already: a Schema that
 * transforms takes it in its encoded form); its envelope (apiVersion, kind, name and
 * namespace) is checked as `prepareObject` checks a whole object's.
 */
export const prepareApplyConfiguration = (
  resource: Resource.Info,
  namespace: string | undefined,
  configuration: unknown
): Effect.Effect<JsonObject, ValidationError> => checkEnvelope(resource, namespace, configuration, {})

const isNameless = (resource: Resource.Info): boolean => namelessKinds.has(`${resource.group}/${resource.kind}`)

const checkEnvelope = (
  resource: Resource.Info,
  namespace: string | undefined,
  encoded: unknown,
  options: EnvelopeOptions
): Effect.Effect<JsonObject, ValidationError> =>
  Effect.gen(function*() {
    const subject = subjectOf(resource, namespace, encoded, options)
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
    } else if (!(name === undefined && options.allowGenerateName === true && isNameless(resource))) {
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

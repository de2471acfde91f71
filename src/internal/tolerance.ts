/**
 * What the Schema of a built-in kind lets through, on every path: the client's own reads
 * (`codec.ts`) and every `effect/Schema` call on the exported Schemas (`Schema.decodeUnknown*`,
 * `Schema.encode*`, `Schema.is`, `Schema.asserts`, and a generated Schema inside a user's own
 * Struct). One implementation for both.
 *
 * - **Fields a Schema does not name are kept**, at every depth: a generated struct is
 *   installed in effect/Schema's compiler registry (`SchemaCompiler.set`) with a decoder that
 *   checks the value with the compiled validator and gives the value itself back, never a
 *   copy: nothing is dropped, key order included. Encoding is the same (the built-in Schemas
 *   transform nothing, so the flipped AST is the same AST).
 * - **A newer server's object is kept**: an object of a kind whose apiVersion, kind and
 *   metadata fit, and whose other mismatches are all of the kind a server newer than the
 *   spec gives (a field the spec calls required left out, a value of a JSON shape the spec
 *   does not have there, `null` included: `Found.newerShape`), decodes as it is. A scalar of another type (a
 *   number where the spec has a string) still fails. The client reports such an object as a
 *   `Warnings.MismatchedObject` warning; `effect/Schema` has nowhere to report it.
 * - **Strict on request**: `onExcessProperty: "error"` decodes with effect/Schema's own
 *   interpreter: a field the Schema does not name fails, and so does every mismatch.
 *
 * The detailed walk that names what did not fit is effect/Schema's interpreter, run on an
 * unregistered copy of the kind's struct (`strictAst`), so that it says what the registered
 * decoder forgave.
 */
import * as Schema from "effect/Schema"
import * as SchemaCompiler from "effect/schema/SchemaCompiler"
import * as SchemaAST from "effect/SchemaAST"
import * as SchemaIssue from "effect/SchemaIssue"
import * as SchemaParser from "effect/SchemaParser"
import * as Result from "effect/Result"
import { type Check, compile } from "./validator.js"

// ---------------------------------------------------------------------------------------------------------------------
// Messages
// ---------------------------------------------------------------------------------------------------------------------

/** One leaf of an issue: where, what was expected there, and whether a newer server may explain it. */
export interface Found {
  readonly path: ReadonlyArray<PropertyKey>
  readonly expected: string
  /**
   * A required key left out, or a value whose JSON shape (object, array, or a scalar) is not one the Schema takes
   * there: what a field the spec calls required, or an alpha field of a new shape, gives. A scalar of another scalar
   * type (a number where a string is expected) is not.
   */
  readonly newerShape: boolean
}

// A required key that is absent reads "is missing", as it always has here.
const standard = SchemaIssue.makeFormatterStandardSchemaV1({
  leafHook: (issue) => issue._tag === "MissingKey" ? "is missing" : SchemaIssue.defaultLeafHook(issue)
})

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

const copies = new WeakMap<SchemaAST.AST, SchemaAST.AST>()

/**
 * The same AST, rebuilt node by node, so that none of it is in the compiler registry: what effect/Schema's own
 * interpreter says of a value, with no tolerance of this module's anywhere in it (a StatefulSet's
 * `volumeClaimTemplates` are kinds of their own). Built once per node, on the first value that does not fit.
 */
const unregistered = (ast: SchemaAST.AST): SchemaAST.AST => {
  const known = copies.get(ast)
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
  copies.set(ast, out)
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
export const install = (ast: SchemaAST.Objects, kind: boolean, copies: ReadonlyArray<SchemaAST.AST>): void => {
  const strict = new SchemaAST.Objects(ast.propertySignatures, ast.indexSignatures, ast.annotations)
  let check: Check | undefined
  // the validator compiles every generated struct; the parser on the unregistered copy is only a fallback
  const fits = (u: unknown): boolean => (check ??= compile(ast) ?? SchemaParser.is(Schema.make<Schema.Codec<unknown>>(strict)))(u)
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
export const share = (original: SchemaAST.AST, copy: SchemaAST.AST): void => {
  const decoder = registered.get(original)
  if (decoder === undefined || copy === original || registered.has(copy)) return
  if (copy._tag !== "Objects" || copy.checks !== undefined || copy.encoding !== undefined) return
  registered.set(copy, decoder)
  SchemaCompiler.set(copy, decoder)
}

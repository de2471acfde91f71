/**
 * A compiled type check for Schemas made of plain JSON shapes (structs, records,
 * arrays, unions, literals, primitives), as every built-in kind is. It answers exactly
 * what `Schema.is` answers, but walks the value with closures built once per Schema
 * instead of the general parser, which allocates a result per node: on realistic pods
 * that is several times faster, and it is on the hot path of every list, watch event
 * and get. Anything it does not know (refinements, transformations, declarations,
 * template literals, ...) makes it decline, and the caller falls back to `Schema.is`.
 */
import type * as SchemaAST from "effect/SchemaAST"

/** A predicate on a decoded value. */
export type Check = (u: unknown) => boolean

class Unsupported {
  readonly _tag = "Unsupported"
}

const accept: Check = () => true

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

const hasOwn = Object.prototype.hasOwnProperty

const compileNode = (ast: SchemaAST.AST, seen: Map<SchemaAST.AST, Check>): Check => {
  const known = seen.get(ast)
  if (known !== undefined) return known
  switch (ast._tag) {
    case "StringKeyword":
      return (u) => typeof u === "string"
    case "NumberKeyword":
      return (u) => typeof u === "number"
    case "BooleanKeyword":
      return (u) => typeof u === "boolean"
    case "UndefinedKeyword":
    case "VoidKeyword":
      return (u) => u === undefined
    case "UnknownKeyword":
    case "AnyKeyword":
      return accept
    case "Literal": {
      const literal = ast.literal
      return (u) => u === literal
    }
    case "Union": {
      const members = ast.types.map((member) => compileNode(member, seen))
      if (members.length === 2) {
        const [first, second] = members as [Check, Check]
        return (u) => first(u) || second(u)
      }
      return (u) => {
        for (let i = 0; i < members.length; i++) if (members[i]!(u)) return true
        return false
      }
    }
    case "TupleType": {
      if (ast.elements.length !== 0 || ast.rest.length > 1) throw new Unsupported()
      const rest = ast.rest[0]
      if (rest === undefined) return (u) => Array.isArray(u) && u.length === 0
      const item = compileNode(rest.type, seen)
      return (u) => {
        if (!Array.isArray(u)) return false
        for (let i = 0; i < u.length; i++) if (!item(u[i])) return false
        return true
      }
    }
    case "TypeLiteral": {
      if (ast.propertySignatures.length === 0 && ast.indexSignatures.length === 0) {
        return (u) => u !== null && u !== undefined
      }
      const names: Array<string> = []
      const checks: Array<Check> = []
      const optional: Array<boolean> = []
      for (const ps of ast.propertySignatures) {
        if (typeof ps.name !== "string") throw new Unsupported()
        names.push(ps.name)
        checks.push(compileNode(ps.type, seen))
        optional.push(ps.isOptional)
      }
      const indexChecks: Array<Check> = []
      for (const signature of ast.indexSignatures) {
        if (signature.parameter._tag !== "StringKeyword") throw new Unsupported()
        indexChecks.push(compileNode(signature.type, seen))
      }
      const count = names.length
      return (u) => {
        if (!isRecord(u)) return false
        for (let i = 0; i < count; i++) {
          const name = names[i]!
          // `Schema.is` is exact: a required key must be present, an optional one may be absent.
          if (!hasOwn.call(u, name)) {
            if (optional[i]) continue
            return false
          }
          if (!checks[i]!(u[name])) return false
        }
        if (indexChecks.length > 0) {
          for (const key of Object.keys(u)) {
            const value = u[key]
            for (let i = 0; i < indexChecks.length; i++) if (!indexChecks[i]!(value)) return false
          }
        }
        return true
      }
    }
    case "Suspend": {
      let resolved: Check | undefined
      const lazy: Check = (u) => (resolved ??= compileNode(ast.f(), seen))(u)
      seen.set(ast, lazy)
      return lazy
    }
    default:
      throw new Unsupported()
  }
}

/** The compiled check of a type-side AST, or `undefined` when it has parts this does not know. */
export const compile = (ast: SchemaAST.AST): Check | undefined => {
  try {
    return compileNode(ast, new Map())
  } catch (e) {
    if (e instanceof Unsupported) return undefined
    throw e
  }
}

/**
 * Server-side field validation (`fieldValidation=Strict|Warn|Ignore` on create, update
 * and patch): the fields of a written object that the kind's schema does not know. The
 * schema is the generated one of the built-in kind (its AST walked alongside the JSON);
 * custom resources are not checked. Strict answers 400 `strict decoding error: unknown
 * field "spec.foo"`, Warn a `Warning: 299 - "unknown field \"spec.foo\""` header per
 * field, as the API server does.
 *
 * @internal
 */
import type * as Schema from "effect/Schema"
import * as SchemaAST from "effect/SchemaAST"
import type { RawResponse } from "./http.js"
import { isObject } from "./json.js"
import { apiVersionOf } from "./kinds.js"
import type { Route } from "./state.js"
import * as Status from "./status.js"

type Schemas = ReadonlyMap<string, SchemaAST.AST>

let schemas: Promise<Schemas> | undefined

/** The generated Schemas of the built-in kinds by `apiVersion/kind`, loaded on first use (they are large). */
const loadSchemas = (): Promise<Schemas> =>
  schemas ??= import("../../resources/generated.js").then((mod) => {
    const byKind = new Map<string, SchemaAST.AST>()
    for (const value of Object.values(mod)) {
      if (!isObject(value)) continue
      const r = value as { apiVersion?: unknown; kind?: unknown; plural?: unknown; schema?: Schema.Top }
      if (typeof r.apiVersion === "string" && typeof r.kind === "string" && typeof r.plural === "string" && r.schema) {
        byKind.set(`${r.apiVersion}/${r.kind}`, r.schema.ast)
      }
    }
    return byKind
  })

/**
 * The member of a union that can describe `value` (an object or an array), or undefined.
 * Checks sit on the nodes they check, and the built-in kinds transform nothing, so the
 * nodes are read as they are.
 */
const shapeFor = (ast: SchemaAST.AST, value: unknown): SchemaAST.AST | undefined => {
  switch (ast._tag) {
    case "Suspend":
      return shapeFor(ast.thunk(), value)
    case "Union":
      for (const member of ast.types) {
        const shape = shapeFor(member, value)
        if (shape !== undefined) return shape
      }
      return undefined
    case "Objects":
      return isObject(value) ? ast : undefined
    case "Arrays":
      return Array.isArray(value) ? ast : undefined
    default:
      return undefined
  }
}

/** The paths (`spec.foo`, `spec.containers[0].bar`) of the fields of `value` that `ast` does not know. */
export const unknownFields = (ast: SchemaAST.AST, value: unknown, path = ""): Array<string> => {
  const shape = shapeFor(ast, value)
  if (shape === undefined) return []
  const out: Array<string> = []
  if (shape._tag === "Arrays") {
    const element = shape.rest[0]
    if (element === undefined) return out
    ;(value as Array<unknown>).forEach((item, i) => out.push(...unknownFields(element, item, `${path}[${i}]`)))
    return out
  }
  if (shape._tag !== "Objects") return out
  const known = new Map(shape.propertySignatures.map((p) => [p.name, p.type]))
  const index = shape.indexSignatures[0]?.type
  for (const [key, field] of Object.entries(value as Record<string, unknown>)) {
    // strategic merge patch directives ($patch, $retainKeys, $setElementOrder/...)
    if (key.startsWith("$")) continue
    const at = path === "" ? key : `${path}.${key}`
    const type = known.get(key) ?? index
    if (type === undefined) out.push(at)
    else out.push(...unknownFields(type, field, at))
  }
  return out
}

/**
 * Checks a written object as `fieldValidation` asks: throws 400 for Strict, answers the
 * warnings for Warn (the server's default is Warn), nothing for Ignore or a custom kind.
 *
 * @internal
 */
export const check = async (
  route: Route,
  query: Record<string, string>,
  obj: unknown
): Promise<ReadonlyArray<string>> => {
  const mode = query.fieldValidation ?? "Warn"
  if (mode !== "Strict" && mode !== "Warn" && mode !== "Ignore") {
    throw Status.badRequest(`fieldValidation ${JSON.stringify(mode)} is invalid: must be one of Ignore, Warn, Strict`)
  }
  if (mode === "Ignore" || route.kind.custom) return []
  const ast = (await loadSchemas()).get(`${apiVersionOf(route.kind.group, route.version)}/${route.kind.kind}`)
  if (ast === undefined) return []
  const unknown = unknownFields(ast, obj)
  if (unknown.length === 0) return []
  const messages = unknown.map((f) => `unknown field ${JSON.stringify(f)}`)
  if (mode === "Strict") throw Status.badRequest(`strict decoding error: ${messages.join(", ")}`)
  return messages
}

/** The answer with one `Warning: 299` per message (joined as HTTP joins repeated headers). @internal */
export const withWarnings = (response: RawResponse, warnings: ReadonlyArray<string>): RawResponse =>
  warnings.length === 0
    ? response
    : {
      ...response,
      headers: { ...response.headers, warning: warnings.map((w) => `299 - ${JSON.stringify(w)}`).join(", ") }
    }

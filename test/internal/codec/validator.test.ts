import { describe, expect, it } from "@effect/vitest"
import * as Arbitrary from "effect/Arbitrary"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as SchemaAST from "effect/SchemaAST"
import fc from "fast-check"
import * as Resources from "../../../packages/effect-kube/src/resources/index.js"
import { compile, compileClosures } from "../../../packages/effect-kube/src/internal/codec/validator.js"

/** A copy of an AST of plain JSON shapes that is in no compiler registry: what effect/Schema's interpreter answers. */
const interpreted = (ast: SchemaAST.AST, seen = new Map<SchemaAST.AST, SchemaAST.AST>()): SchemaAST.AST => {
  const known = seen.get(ast)
  if (known !== undefined) return known
  let out: SchemaAST.AST
  switch (ast._tag) {
    case "Objects":
      out = new SchemaAST.Objects(
        ast.propertySignatures.map((ps) => new SchemaAST.PropertySignature(ps.name, interpreted(ps.type, seen))),
        ast.indexSignatures.map((is) => new SchemaAST.IndexSignature(is.parameter, interpreted(is.type, seen))),
        ast.annotations,
        undefined,
        undefined,
        ast.context
      )
      break
    case "Arrays":
      out = new SchemaAST.Arrays(
        ast.isMutable,
        ast.elements.map((e) => interpreted(e, seen)),
        ast.rest.map((r) => interpreted(r, seen)),
        ast.annotations,
        undefined,
        undefined,
        ast.context
      )
      break
    case "Union":
      out = new SchemaAST.Union(
        ast.types.map((t) => interpreted(t, seen)),
        ast.options,
        ast.annotations,
        undefined,
        undefined,
        ast.context
      )
      break
    case "Suspend": {
      const suspended = ast
      out = new SchemaAST.Suspend(
        () => interpreted(suspended.thunk(), seen),
        ast.annotations,
        undefined,
        undefined,
        ast.context
      )
      break
    }
    default:
      return ast
  }
  seen.set(ast, out)
  return out
}

const objectSchemas: ReadonlyArray<readonly [string, Schema.Schema<unknown>]> = Object.entries(Resources)
  .filter(([, value]) => Schema.isSchema(value))
  .map(([name, value]) => [name, value as unknown as Schema.Schema<unknown>] as const)

// Every generated definition is here, fully typed and deeply nested: at the default size one generated
// object of some kinds runs to gigabytes, so the generated objects are kept small. They come from
// effect/Arbitrary (derived from the Schema); fast-check picks the mutations.
const generated = (schema: Schema.Schema<unknown>, count: number): Array<unknown> => [
  ...Effect.runSync(Arbitrary.sampleEffect(Arbitrary.schema(schema), { count, size: 10 }))
]

/** Replaces one node of a JSON-like value (chosen by `pick`) with `replacement`. */
const mutate = (value: unknown, pick: number, replacement: unknown): unknown => {
  let counter = 0
  const go = (u: unknown): unknown => {
    if (counter++ === pick) return replacement
    if (Array.isArray(u)) return u.map(go)
    if (typeof u === "object" && u !== null) return Object.fromEntries(Object.entries(u).map(([k, v]) => [k, go(v)]))
    return u
  }
  return go(value)
}

describe("compiled validator", () => {
  it("compiles every built-in Schema (so the fast path is taken)", () => {
    expect(objectSchemas.length).toBeGreaterThan(40)
    for (const [name, schema] of objectSchemas) {
      expect(compile(schema.ast), name).toBeTypeOf("function")
    }
  })

  it("declines what it does not know, so the caller falls back to Schema.is", () => {
    expect(compile(Schema.String.check(Schema.isMinLength(1)).ast)).toBeUndefined()
    expect(compile(Schema.Struct({ a: Schema.Date }).ast)).toBeUndefined()
    expect(compile(Schema.Struct({ a: Schema.Tuple([Schema.String, Schema.Number]) }).ast)).toBeUndefined()
    // v4 has no parse options on a node; what a node can carry instead: a check of the whole struct, a
    // `oneOf` union (exactly one member may match), a transformation
    const checked = Schema.Struct({
      inner: Schema.Struct({ a: Schema.String }).check(Schema.makeFilter((o) => o.a !== ""))
    })
    expect(compile(checked.ast)).toBeUndefined()
    expect(compile(Schema.Struct({ a: Schema.Union([Schema.String, Schema.String], { mode: "oneOf" }) }).ast))
      .toBeUndefined()
    expect(compile(Schema.Struct({ a: Schema.NumberFromString }).ast)).toBeUndefined()
  })

  it("agrees with Schema.is on generated objects and on every one-node mutation of them", () => {
    const replacements = fc.oneof(
      fc.constant(undefined),
      fc.constant(null),
      fc.string(),
      fc.integer(),
      fc.boolean(),
      fc.constant([]),
      fc.constant({}),
      fc.constant(["x"]),
      fc.constant({ name: 1 })
    )
    for (const [name, schema] of objectSchemas) {
      // effect/Schema's own answer, from its interpreter: a kind's exported Schema also takes a newer server's
      // object (see resources/internal/schema.ts), and a list's items are kinds
      const is = Schema.is(Schema.make<Schema.Codec<unknown>>(interpreted(schema.ast)))
      const samples = generated(schema, 10)
      for (const [how, check] of [["generated", compile(schema.ast)!], ["closures", compileClosures(schema.ast)!]] as const) {
        fc.assert(
          fc.property(fc.constantFrom(...samples), fc.nat(60), replacements, (value, pick, replacement) => {
            expect(check(value), `${name} (${how}) generated`).toBe(is(value))
            const mutated = mutate(value, pick, replacement)
            expect(check(mutated), `${name} (${how}) mutated`).toBe(is(mutated))
          }),
          { numRuns: 10 }
        )
        const odd = [null, undefined, 1, "s", [], {}, { metadata: null }, { metadata: { labels: { a: 1 } } }]
        for (const value of odd) expect(check(value), `${name} (${how}) ${JSON.stringify(value)}`).toBe(is(value))
      }
    }
  })

  it("reads only own properties, also for names Object.prototype has", () => {
    const schema = Schema.Struct({ constructor: Schema.optional(Schema.String), toString: Schema.String })
    for (const check of [compile(schema.ast)!, compileClosures(schema.ast)!]) {
      expect(check({ toString: "x" })).toBe(true)
      expect(check({})).toBe(false)
      expect(check({ toString: "x", constructor: 1 })).toBe(false)
      expect(check({ toString: "x", constructor: "ok" })).toBe(true)
    }
  })
})

/**
 * The differential fuzzer's cases: a valid object of one kind (./kinds.ts) changed by one to three mutations drawn by
 * fast-check (a wrong type, an out-of-range number, a bad enum string, an unknown field, a duplicated list element, a
 * field removed or nulled, an invalid string), written to both servers; a difference is shrunk to the fewest mutations
 * that still show it.
 */
import * as fc from "fast-check"
import { type Kind, kinds } from "./kinds.js"

export type Mutation =
  | { readonly op: "set"; readonly path: ReadonlyArray<string | number>; readonly value: unknown; readonly what: string }
  | { readonly op: "remove"; readonly path: ReadonlyArray<string | number>; readonly what: string }
  | { readonly op: "duplicate"; readonly path: ReadonlyArray<string | number>; readonly what: string }

export interface Case {
  readonly kind: Kind
  readonly mutations: ReadonlyArray<Mutation>
  readonly fieldValidation: "Strict" | "Warn" | "Ignore"
  /** Written as an update of a valid object (immutable fields, update validation), else as a create. */
  readonly update: boolean
}

type Path = ReadonlyArray<string | number>

/** Every path in a value (objects' keys, arrays' indexes), with the value there. */
const paths = (value: unknown, at: Path = []): Array<[Path, unknown]> => {
  const out: Array<[Path, unknown]> = at.length > 0 ? [[at, value]] : []
  if (Array.isArray(value)) value.forEach((v, i) => out.push(...paths(v, [...at, i])))
  else if (value !== null && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) out.push(...paths(v, [...at, k]))
  }
  return out
}

const wrongTypes = (v: unknown): Array<[unknown, string]> =>
  typeof v === "string"
    ? [[7, "a number for a string"], [true, "a boolean for a string"], [["x"], "a list for a string"], [{ a: "b" }, "an object for a string"]]
    : typeof v === "number"
    ? [["7", "a string for a number"], [1.5, "a fraction for an integer"], [-1, "a negative number"], [2 ** 40, "a number out of range"], [true, "a boolean for a number"]]
    : typeof v === "boolean"
    ? [["true", "a string for a boolean"], [1, "a number for a boolean"]]
    : Array.isArray(v)
    ? [[{}, "an object for a list"], ["x", "a string for a list"], [[], "an empty list"]]
    : v !== null && typeof v === "object"
    ? [[[], "a list for an object"], ["x", "a string for an object"], [{}, "an empty object"]]
    : []

const badStrings: ReadonlyArray<[string, string]> = [
  ["", "an empty string"],
  ["Bogus", "a value outside the enum"],
  ["UPPER_case!", "an invalid string"],
  ["x".repeat(300), "a 300-character string"]
]

/** The mutations one kind's valid object offers (metadata's name and namespace excepted: the case needs them). */
const mutationsOf = (k: Kind): ReadonlyArray<Mutation> => {
  const base = k.object("fz")
  const out: Array<Mutation> = []
  for (const [path, value] of paths(base)) {
    const at = path.join(".")
    if (at === "metadata" || at === "metadata.name") continue
    for (const [v, what] of wrongTypes(value)) out.push({ op: "set", path, value: v, what: `${at}: ${what}` })
    if (typeof value === "string") {
      for (const [v, what] of badStrings) out.push({ op: "set", path, value: v, what: `${at}: ${what}` })
    }
    out.push({ op: "remove", path, what: `${at}: removed` })
    out.push({ op: "set", path, value: null, what: `${at}: null` })
    if (Array.isArray(value) && value.length > 0) out.push({ op: "duplicate", path, what: `${at}: an element twice` })
    if (value !== null && typeof value === "object" && !Array.isArray(value)) {
      out.push({ op: "set", path: [...path, "bogusField"], value: 1, what: `${at}: an unknown field` })
    }
  }
  out.push({ op: "set", path: ["bogusTopLevel"], value: { a: 1 }, what: "an unknown top-level field" })
  return out
}

const table = kinds.map((k) => ({ kind: k, mutations: mutationsOf(k) }))

/** Cases: a kind, one to three of its mutations, a field validation mode. */
export const cases: fc.Arbitrary<Case> = fc.integer({ min: 0, max: table.length - 1 }).chain((i) => {
  const { kind, mutations } = table[i]!
  return fc.record({
    kind: fc.constant(kind),
    mutations: fc.uniqueArray(fc.integer({ min: 0, max: mutations.length - 1 }), { minLength: 1, maxLength: 3 })
      .map((is) => is.map((j) => mutations[j]!)),
    fieldValidation: fc.constantFrom("Strict" as const, "Warn" as const, "Ignore" as const),
    update: fc.boolean()
  })
})

const clone = <A>(a: A): A => JSON.parse(JSON.stringify(a)) as A

/** The object a case writes: the kind's valid object named `name`, mutated. */
export const objectOf = (c: Case, name: string): Record<string, unknown> => {
  const o = clone({ apiVersion: c.kind.apiVersion, kind: c.kind.kind, ...c.kind.object(name) })
  for (const m of c.mutations) {
    let parent: any = o
    for (const p of m.path.slice(0, -1)) {
      if (parent === null || typeof parent !== "object") break
      parent = parent[p]
    }
    if (parent === null || typeof parent !== "object") continue
    const last = m.path[m.path.length - 1]!
    if (m.op === "remove") {
      if (Array.isArray(parent)) parent.splice(Number(last), 1)
      else delete parent[last]
    } else if (m.op === "duplicate") {
      const list = parent[last]
      if (Array.isArray(list) && list.length > 0) list.push(clone(list[0]))
    } else parent[last] = clone(m.value)
  }
  return o
}

/** How a case reads: its kind and mutations. */
export const describeCase = (c: Case): string =>
  `${c.kind.kind} ${c.update ? "update" : "create"} [${c.fieldValidation}] ${c.mutations.map((m) => m.what).join("; ")}`

/**
 * The JSONPath that a CRD's `additionalPrinterColumns` use, as client-go's `jsonpath`
 * reads it with missing keys allowed: fields (`.spec.replicas`, `['a.b/c']`), indexes
 * (`[0]`, `[-1]`), wildcards (`[*]`, `.*`) and filters
 * (`[?(@.type=="Ready")]`, `[?(@.ready)]`). A path is compiled once per column.
 *
 * @internal
 */
import { isObject } from "../store/json.js"

type Step =
  | { readonly _tag: "Field"; readonly name: string }
  | { readonly _tag: "Index"; readonly index: number }
  | { readonly _tag: "Wildcard" }
  | {
    readonly _tag: "Filter"
    readonly path: ReadonlyArray<string>
    readonly op: "exists" | "==" | "!=" | "<" | ">" | "<=" | ">="
    readonly literal: string | number | undefined
  }

/** A compiled path: the values it finds in a document, in order. @internal */
export type JsonPath = (document: unknown) => ReadonlyArray<unknown>

const fieldName = /^[^.[\]]+/

const parseLiteral = (text: string): string | number | undefined => {
  const t = text.trim()
  if ((t.startsWith("\"") && t.endsWith("\"")) || (t.startsWith("'") && t.endsWith("'"))) return t.slice(1, -1)
  const n = Number(t)
  return t !== "" && Number.isFinite(n) ? n : undefined
}

const parseFilter = (body: string): Step | undefined => {
  const m = /^@((?:\.[^.\s=!<>]+)+)\s*(?:(==|!=|<=|>=|<|>)\s*(.+))?$/.exec(body.trim())
  if (m === null) return undefined
  const path = m[1]!.slice(1).split(".")
  if (m[2] === undefined) return { _tag: "Filter", path, op: "exists", literal: undefined }
  const literal = parseLiteral(m[3]!)
  if (literal === undefined) return undefined
  return { _tag: "Filter", path, op: m[2] as "==", literal }
}

const parseBracket = (body: string): Step | undefined => {
  const t = body.trim()
  if (t === "*") return { _tag: "Wildcard" }
  if (t.startsWith("?(") && t.endsWith(")")) return parseFilter(t.slice(2, -1))
  if (/^-?\d+$/.test(t)) return { _tag: "Index", index: Number(t) }
  const literal = parseLiteral(t)
  return typeof literal === "string" ? { _tag: "Field", name: literal } : undefined
}

/** The steps of a path (`.a.b[0]`, with or without the enclosing `{}`), `undefined` when it is not one this reads. */
const parse = (text: string): ReadonlyArray<Step> | undefined => {
  let rest = text.trim()
  if (rest.startsWith("{") && rest.endsWith("}")) rest = rest.slice(1, -1).trim()
  const steps: Array<Step> = []
  while (rest !== "") {
    if (rest.startsWith("..")) return undefined
    if (rest.startsWith(".")) {
      rest = rest.slice(1)
      if (rest === "") break
      if (rest.startsWith("*")) {
        steps.push({ _tag: "Wildcard" })
        rest = rest.slice(1)
        continue
      }
      if (rest.startsWith("[")) continue
      const m = fieldName.exec(rest)
      if (m === null) return undefined
      steps.push({ _tag: "Field", name: m[0] })
      rest = rest.slice(m[0].length)
      continue
    }
    if (rest.startsWith("[")) {
      const close = closingBracket(rest)
      if (close === -1) return undefined
      const step = parseBracket(rest.slice(1, close))
      if (step === undefined) return undefined
      steps.push(step)
      rest = rest.slice(close + 1)
      continue
    }
    return undefined
  }
  return steps
}

/** The index of the `]` closing the bracket that `text` opens with, quotes and parentheses respected. */
const closingBracket = (text: string): number => {
  let quote: string | undefined
  let depth = 0
  for (let i = 1; i < text.length; i++) {
    const c = text[i]!
    if (quote !== undefined) {
      if (c === quote) quote = undefined
    } else if (c === "'" || c === "\"") quote = c
    else if (c === "(") depth++
    else if (c === ")") depth--
    else if (c === "]" && depth === 0) return i
  }
  return -1
}

const at = (value: unknown, path: ReadonlyArray<string>): unknown => {
  let node = value
  for (const key of path) {
    if (!isObject(node)) return undefined
    node = node[key]
  }
  return node
}

const compare = (a: unknown, op: string, b: string | number | undefined): boolean => {
  if (op === "exists") return a !== undefined
  if (op === "==") return a === b
  if (op === "!=") return a !== b
  if (typeof a !== "number" || typeof b !== "number") return false
  return op === "<" ? a < b : op === ">" ? a > b : op === "<=" ? a <= b : a >= b
}

const children = (value: unknown): ReadonlyArray<unknown> =>
  Array.isArray(value) ? value : isObject(value) ? Object.values(value) : []

const apply = (values: ReadonlyArray<unknown>, step: Step): Array<unknown> => {
  const out: Array<unknown> = []
  for (const value of values) {
    switch (step._tag) {
      case "Field":
        if (isObject(value) && value[step.name] !== undefined) out.push(value[step.name])
        break
      case "Index":
        if (Array.isArray(value)) {
          const i = step.index < 0 ? value.length + step.index : step.index
          if (i >= 0 && i < value.length) out.push(value[i])
        }
        break
      case "Wildcard":
        out.push(...children(value))
        break
      case "Filter":
        for (const item of children(value)) {
          if (compare(at(item, step.path), step.op, step.literal)) out.push(item)
        }
        break
    }
  }
  return out
}

/** Compiles a column's path; `undefined` when the path is not one this reads (the column then stays empty). @internal */
export const compile = (text: string): JsonPath | undefined => {
  const steps = parse(text)
  if (steps === undefined) return undefined
  return (document) => steps.reduce<ReadonlyArray<unknown>>((values, step) => apply(values, step), [document])
}

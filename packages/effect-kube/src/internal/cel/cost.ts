/**
 * The cost of CEL rules as kube-apiserver counts it, which `@bufbuild/cel` does not: the static estimate
 * a CRD is refused for at create (cel-go's `checker/cost.go` over the sizes Kubernetes derives from the
 * schema, `k8s.io/apiserver/pkg/cel/common/schemas.go`) and the runtime cost each validation spends
 * against its budgets (`PerCallLimit` per rule, `RuntimeCELCostBudget` per object).
 *
 * Both walk the parsed expression with cel-go's cost model: identifiers and field selections on objects
 * 1, literals 0, calls 1 plus their arguments, string comparisons and `startsWith` a tenth of the length,
 * `contains` the product of both tenths, `matches` a tenth of the string times a quarter of the pattern,
 * `in` on a list its size, list, map and message literals 10, 30 and 40, and a comprehension its range's
 * size times its step and condition. The static estimate takes sizes from the schema (`maxLength` x 4
 * bytes, `maxItems`, `maxProperties`, else what fits in a 3 MiB request); the runtime cost takes them from
 * the object.
 *
 * What is approximated: the runtime cost is this same model over the actual sizes, not cel-go's counter of
 * the evaluation steps — `&&`, `||` and `?:` are counted as if both sides ran (an upper bound where
 * cel-go short-circuits), and functions of the Kubernetes libraries other than those named above cost 1
 * plus a tenth of their string arguments or their list's size.
 *
 * @internal
 */
import type { JSONSchemaProps } from "../../resources/generated.js"
import { escapeName as escape } from "./values.js"

/** kube-apiserver's limits (`k8s.io/apiserver/pkg/apis/cel/config.go`, apiextensions' validation.go). @internal */
export const limits = {
  /** The runtime cost one rule may spend on one value. */
  perCallLimit: 1_000_000,
  /** The runtime cost every rule of one object may spend together. */
  runtimeBudget: 10_000_000,
  /** A rule's estimated cost, times how many times it may run, that a CRD may declare. */
  staticEstimatedCostLimit: 10_000_000,
  /** The estimated cost of all the rules of one version's schema. */
  staticEstimatedCrdCostLimit: 100_000_000,
  maxRequestSizeBytes: 3 * 1024 * 1024
} as const

/** cel-go counts in uint64 and saturates there. */
const MAX = 18446744073709551615

const sat = (n: number): number => (n > MAX ? MAX : n)
const mul = (a: number, b: number): number => (a === 0 || b === 0 ? 0 : sat(a * b))
const factor = (size: number, f: number): number => sat(Math.ceil(size * f))

/** A value's CEL type as the estimator needs it: kind, how many elements at most, the smallest it serializes. */
export type Shape =
  | { readonly kind: "string" | "bytes"; readonly max: number; readonly minSize: number }
  | { readonly kind: "int" | "double" | "bool" | "timestamp" | "duration" | "dyn"; readonly max: number; readonly minSize: number }
  | { readonly kind: "list"; readonly items: Shape; readonly max: number; readonly minSize: number }
  | { readonly kind: "map"; readonly values: Shape; readonly max: number; readonly minSize: number }
  | { readonly kind: "object"; readonly fields: ReadonlyMap<string, Shape>; readonly max: number; readonly minSize: number }

const requestString = limits.maxRequestSizeBytes - 2

const stringMax = (schema: JSONSchemaProps): number => {
  switch (schema.format) {
    case "duration":
      return 32
    case "date":
      return 12
    case "date-time":
      return 32
    default:
      return requestString
  }
}

/** A root schema as rules see it: `apiVersion`, `kind` and the `metadata` names every object has. @internal */
export const withTypeAndObjectMeta = (schema: JSONSchemaProps): JSONSchemaProps => ({
  ...schema,
  properties: {
    ...schema.properties,
    apiVersion: { type: "string" },
    kind: { type: "string" },
    metadata: { type: "object", properties: { name: { type: "string" }, generateName: { type: "string" } } }
  }
})

/** A schema's CEL shape, as `SchemaDeclType` declares it (the root of a resource gains its type and name). @internal */
export const shapeOf = (schema: JSONSchemaProps, root: boolean): Shape => {
  if (schema["x-kubernetes-int-or-string"] === true) {
    return { kind: "dyn", max: schema.maxLength !== undefined ? Math.max(0, schema.maxLength) * 4 : requestString, minSize: 1 }
  }
  const s = root ? withTypeAndObjectMeta(schema) : schema
  switch (s.type) {
    case "array": {
      const itemSchema = s.items as JSONSchemaProps | undefined
      const items = itemSchema === undefined
        ? { kind: "dyn" as const, max: 0, minSize: 1 }
        : shapeOf(itemSchema, itemSchema["x-kubernetes-embedded-resource"] === true)
      const max = s.maxItems !== undefined ? Math.max(0, s.maxItems) : Math.floor(requestString / (items.minSize + 1))
      return { kind: "list", items, max, minSize: 2 }
    }
    case "object": {
      const additional = typeof s.additionalProperties === "object" ? (s.additionalProperties as JSONSchemaProps) : undefined
      if (additional !== undefined) {
        const values = shapeOf(additional, additional["x-kubernetes-embedded-resource"] === true)
        const max = s.maxProperties !== undefined ? Math.max(0, s.maxProperties) : Math.floor(requestString / (values.minSize + 6))
        return { kind: "map", values, max, minSize: 2 }
      }
      const fields = new Map<string, Shape>()
      const required = new Set(s.required ?? [])
      let minSize = 2
      for (const [name, property] of Object.entries(s.properties ?? {})) {
        const field = shapeOf(property, property["x-kubernetes-embedded-resource"] === true)
        const escaped = escape(name)
        if (escaped !== undefined) fields.set(escaped, field)
        if (required.has(name) && property.default === undefined) minSize += name.length + field.minSize + 4
      }
      return { kind: "object", fields, max: 0, minSize }
    }
    case "string": {
      switch (s.format) {
        case "byte":
          return { kind: "bytes", max: s.maxLength !== undefined ? Math.max(0, s.maxLength) : requestString, minSize: 2 }
        case "duration":
          return { kind: "duration", max: 32, minSize: 3 }
        case "date":
          return { kind: "timestamp", max: 12, minSize: 12 }
        case "date-time":
          return { kind: "timestamp", max: 32, minSize: 21 }
      }
      const max = s.maxLength !== undefined
        ? Math.max(0, s.maxLength) * 4
        : Array.isArray(s.enum) && s.enum.length > 0
        ? Math.max(0, ...s.enum.map((v) => (typeof v === "string" ? v.length : 0)))
        : stringMax(s)
      return { kind: "string", max, minSize: 2 }
    }
    case "boolean":
      return { kind: "bool", max: 0, minSize: 4 }
    case "number":
      return { kind: "double", max: 0, minSize: 1 }
    case "integer":
      return { kind: "int", max: 0, minSize: 1 }
    default:
      return { kind: "dyn", max: 0, minSize: 1 }
  }
}

/**
 * How many times a rule may run: `MaxRequestSizeBytes / (minSize + 1)` of its value, as apiextensions'
 * `maxCardinality` assumes for a rule under a list or map without a bound. @internal
 */
export const maxCardinality = (minSize: number): number => Math.floor(limits.maxRequestSizeBytes / (minSize + 1))

// ---------------------------------------------------------------------------------------------------------------------
// the walk

/** The parts of `@bufbuild/cel`'s parsed `Expr` the walk reads. */
interface Expr {
  readonly exprKind:
    | { readonly case: "constExpr"; readonly value: { readonly constantKind: { readonly case?: string | undefined; readonly value?: unknown } } }
    | { readonly case: "identExpr"; readonly value: { readonly name: string } }
    | { readonly case: "selectExpr"; readonly value: { readonly operand?: Expr | undefined; readonly field: string; readonly testOnly: boolean } }
    | { readonly case: "callExpr"; readonly value: { readonly target?: Expr | undefined; readonly function: string; readonly args: ReadonlyArray<Expr> } }
    | { readonly case: "listExpr"; readonly value: { readonly elements: ReadonlyArray<Expr> } }
    | { readonly case: "structExpr"; readonly value: { readonly messageName: string; readonly entries: ReadonlyArray<{ readonly keyKind: { readonly case?: string | undefined; readonly value?: unknown }; readonly value?: Expr | undefined }> } }
    | {
      readonly case: "comprehensionExpr"
      readonly value: {
        readonly iterVar: string
        readonly iterVar2?: string | undefined
        readonly iterRange?: Expr | undefined
        readonly accuVar: string
        readonly accuInit?: Expr | undefined
        readonly loopCondition?: Expr | undefined
        readonly loopStep?: Expr | undefined
        readonly result?: Expr | undefined
      }
    }
    | { readonly case: undefined; readonly value?: undefined }
}

/** A value the walk knows: its shape (static) and, at runtime, the JSON value itself. */
interface Known {
  readonly shape: Shape | undefined
  /** The JSON value at runtime; `undefined` where only the shape is known. */
  readonly value?: unknown
  /** The size in elements (string length, list or map size), when known. */
  readonly size?: number | undefined
}

interface Node extends Known {
  readonly cost: number
}

const unknownSize = MAX

const sizeOfValue = (value: unknown): number | undefined =>
  typeof value === "string" ? value.length : Array.isArray(value) ? value.length :
  typeof value === "object" && value !== null ? Object.keys(value).length : undefined

const sizeOf = (known: Known): number => {
  if (known.size !== undefined) return known.size
  if (known.value !== undefined) return sizeOfValue(known.value) ?? 0
  const shape = known.shape
  if (shape === undefined) return unknownSize
  switch (shape.kind) {
    case "string":
    case "bytes":
    case "list":
    case "map":
    case "dyn":
      return shape.max
    default:
      return 0
  }
}

const fieldOf = (known: Known, field: string): Known => {
  const shape = known.shape
  const sub = shape?.kind === "object" ? shape.fields.get(field) : shape?.kind === "map" ? shape.values : undefined
  if (known.value !== undefined && typeof known.value === "object" && known.value !== null && !Array.isArray(known.value)) {
    const raw = (known.value as Record<string, unknown>)[unescape(field)]
    return raw === undefined || raw === null ? { shape: sub, size: 0 } : { shape: sub, value: raw }
  }
  return { shape: sub }
}

const unescape = (name: string): string =>
  name.startsWith("__") && name.endsWith("__") && !name.slice(2, -2).includes("__")
    ? name.slice(2, -2).replace(/^underscores$/, "__").replace(/^dot$/, ".").replace(/^dash$/, "-").replace(/^slash$/, "/")
    : name.replace(/__underscores__/g, "__").replace(/__dot__/g, ".").replace(/__dash__/g, "-").replace(/__slash__/g, "/")

/** The elements of a list (its items) or a map (its keys, as comprehensions range over). */
const elementsOf = (known: Known): { readonly shape: Shape | undefined; readonly values: ReadonlyArray<unknown> | undefined } => {
  const shape = known.shape
  const elementShape: Shape | undefined = shape?.kind === "list"
    ? shape.items
    : shape?.kind === "map" || shape?.kind === "object"
    // a map's keys are the plain StringType, whose MaxElements is 0: the server estimates them as empty
    ? { kind: "string", max: 0, minSize: 2 }
    : undefined
  if (Array.isArray(known.value)) return { shape: elementShape, values: known.value }
  if (typeof known.value === "object" && known.value !== null) return { shape: elementShape, values: Object.keys(known.value) }
  return { shape: elementShape, values: undefined }
}

type Scope = ReadonlyMap<string, Known>

const stringFunctions = new Set([
  "lowerAscii",
  "upperAscii",
  "trim",
  "replace",
  "split",
  "substring",
  "indexOf",
  "lastIndexOf",
  "charAt",
  "join",
  "reverse",
  "format",
  "quote",
  "find",
  "findAll",
  "url",
  "isURL",
  "ip",
  "isIP",
  "cidr",
  "isCIDR",
  "quantity",
  "isQuantity",
  "semver",
  "isSemver",
  "validate",
  "string",
  "bytes"
])
const listFunctions = new Set(["isSorted", "sum", "min", "max", "indexOf", "lastIndexOf", "join", "contains", "containsAll", "containsAny", "intersects", "equivalent"])

const isStringy = (known: Known): boolean =>
  typeof known.value === "string" || known.shape?.kind === "string" || known.shape?.kind === "bytes"

const walk = (e: Expr | undefined, scope: Scope): Node => {
  if (e === undefined) return { cost: 0, shape: undefined }
  const kind = e.exprKind
  switch (kind.case) {
    case "constExpr": {
      const c = kind.value.constantKind
      if (c.case === "stringValue") return { cost: 0, shape: { kind: "string", max: 0, minSize: 2 }, value: c.value }
      if (c.case === "bytesValue") return { cost: 0, shape: { kind: "bytes", max: 0, minSize: 2 }, size: (c.value as Uint8Array).length }
      return { cost: 0, shape: undefined, size: 0 }
    }
    case "identExpr": {
      const known = scope.get(kind.value.name)
      return { cost: 1, ...(known ?? { shape: undefined }) }
    }
    case "selectExpr": {
      const operand = walk(kind.value.operand, scope)
      if (kind.value.testOnly) return { cost: sat(operand.cost + 1), shape: { kind: "bool", max: 0, minSize: 4 }, size: 0 }
      const kindOf = operand.shape?.kind
      const selectCost = kindOf === "object" || kindOf === "map" || kindOf === "dyn" || kindOf === undefined ? 1 : 0
      return { cost: sat(operand.cost + selectCost), ...fieldOf(operand, kind.value.field) }
    }
    case "listExpr": {
      const elements = kind.value.elements.map((x) => walk(x, scope))
      const cost = elements.reduce((sum, x) => sat(sum + x.cost), 10)
      return { cost, shape: { kind: "list", items: elements[0]?.shape ?? { kind: "dyn", max: 0, minSize: 1 }, max: elements.length, minSize: 2 }, size: elements.length }
    }
    case "structExpr": {
      const entries = kind.value.entries.map((x) => walk(x.value, scope))
      const base = kind.value.messageName === "" ? 30 : 40
      return { cost: entries.reduce((sum, x) => sat(sum + x.cost), base), shape: undefined, size: entries.length }
    }
    case "comprehensionExpr":
      return comprehension(kind.value, scope)
    case "callExpr":
      return call(kind.value, scope)
    default:
      return { cost: 0, shape: undefined }
  }
}

const comprehension = (c: Extract<Expr["exprKind"], { case: "comprehensionExpr" }>["value"], scope: Scope): Node => {
  const range = walk(c.iterRange, scope)
  const init = walk(c.accuInit, scope)
  const elements = elementsOf(range)
  const accu: Known = { shape: init.shape?.kind === "list" ? { kind: "list", items: { kind: "dyn", max: 0, minSize: 1 }, max: sizeOf(range), minSize: 2 } : init.shape }
  const stepAt = (element: Known): number => {
    const inner = new Map(scope)
    inner.set(c.accuVar, accu)
    inner.set(c.iterVar, element)
    return sat(walk(c.loopStep, inner).cost + walk(c.loopCondition, inner).cost)
  }
  let loop: number
  if (elements.values !== undefined) {
    // at runtime: each element's own step, as the evaluation spends it
    loop = 0
    // a scalar element weighs only by its size in this model: each size is walked once
    const bySize = new Map<string, number>()
    for (const value of elements.values) {
      const key = typeof value === "object" && value !== null ? undefined : `${typeof value}:${sizeOfValue(value) ?? 0}`
      let step = key === undefined ? undefined : bySize.get(key)
      if (step === undefined) {
        step = stepAt({ shape: elements.shape, value })
        if (key !== undefined) bySize.set(key, step)
      }
      loop = sat(loop + step)
      // far past every budget: the rest would not change the answer, only how long it takes to give it
      if (loop > limits.runtimeBudget * 10) break
    }
  } else {
    loop = mul(sizeOf(range), stepAt({ shape: elements.shape }))
  }
  const resultScope = new Map(scope)
  resultScope.set(c.accuVar, accu)
  const result = walk(c.result, resultScope)
  const isList = init.shape?.kind === "list"
  return {
    cost: sat(range.cost + init.cost + loop + result.cost),
    shape: isList ? accu.shape : result.shape ?? init.shape,
    ...(isList ? { size: sizeOf(range) } : {})
  }
}

const call = (c: Extract<Expr["exprKind"], { case: "callExpr" }>["value"], scope: Scope): Node => {
  const target = c.target === undefined ? undefined : walk(c.target, scope)
  const args = c.args.map((a) => walk(a, scope))
  const argSum = args.reduce((sum, a) => sat(sum + a.cost), target?.cost ?? 0)
  const bool: Shape = { kind: "bool", max: 0, minSize: 4 }
  switch (c.function) {
    case "_&&_":
    case "_||_":
      return { cost: argSum, shape: bool, size: 0 }
    case "_?_:_": {
      const [cond, yes, no] = args
      return {
        cost: sat((cond?.cost ?? 0) + Math.max(yes?.cost ?? 0, no?.cost ?? 0)),
        shape: yes?.shape ?? no?.shape,
        size: Math.max(yes === undefined ? 0 : sizeOf(yes), no === undefined ? 0 : sizeOf(no))
      }
    }
    case "_==_":
    case "_!=_":
    case "_<_":
    case "_<=_":
    case "_>_":
    case "_>=_": {
      const [l, r] = args
      if (l === undefined || r === undefined) return { cost: sat(argSum + 1), shape: bool }
      // values of the Kubernetes types (a quantity, a URL, ...) compare at a fixed cost, as the API server's
      // estimator has it; those of unknown shape here are such results of calls
      const sized = l.shape !== undefined && r.shape !== undefined
      const stringy = sized && (c.function === "_==_" || c.function === "_!=_" || (isStringy(l) && isStringy(r)))
      if (!stringy) return { cost: sat(argSum + 1), shape: bool, size: 0 }
      const smallest = Math.min(sizeOf(l), sizeOf(r))
      return { cost: sat(argSum + Math.max(factor(smallest, 0.1), smallest > 0 ? 1 : 0)), shape: bool, size: 0 }
    }
    case "@in": {
      const list = args[1]
      return { cost: sat(argSum + (list === undefined ? 1 : sizeOf(list))), shape: bool, size: 0 }
    }
    case "_+_": {
      const [l, r] = args
      if (l === undefined || r === undefined) return { cost: sat(argSum + 1), shape: undefined }
      const size = sat(sizeOf(l) + sizeOf(r))
      if (l.shape?.kind === "list" || r.shape?.kind === "list") {
        const items = (l.shape?.kind === "list" ? l.shape.items : r.shape?.kind === "list" ? r.shape.items : undefined) ?? { kind: "dyn" as const, max: 0, minSize: 1 }
        return { cost: sat(argSum + 1), shape: { kind: "list", items, max: size, minSize: 2 }, size }
      }
      if (isStringy(l) || isStringy(r)) return { cost: sat(argSum + factor(size, 0.1)), shape: { kind: "string", max: size, minSize: 2 }, size }
      return { cost: sat(argSum + 1), shape: l.shape }
    }
    case "matches": {
      const str = target ?? args[0]
      const pattern = target !== undefined ? args[0] : args[1]
      if (str === undefined || pattern === undefined) return { cost: sat(argSum + 1), shape: bool }
      return { cost: sat(argSum + mul(factor(sat(sizeOf(str) + 1), 0.1), factor(sizeOf(pattern), 0.25))), shape: bool, size: 0 }
    }
    case "contains":
      if (target !== undefined && args[0] !== undefined && isStringy(target)) {
        return { cost: sat(argSum + mul(factor(sizeOf(target), 0.1), factor(sizeOf(args[0]), 0.1))), shape: bool, size: 0 }
      }
      break
    case "startsWith":
    case "endsWith":
      if (args[0] !== undefined) return { cost: sat(argSum + factor(sizeOf(args[0]), 0.1)), shape: bool, size: 0 }
      break
    case "size":
      return { cost: sat(argSum + 1), shape: { kind: "int", max: 0, minSize: 1 }, size: 0 }
  }
  // the Kubernetes libraries, approximated: a string function traverses its string, a list function its list
  const subject = target ?? args[0]
  if (subject !== undefined && subject.shape?.kind === "list" && listFunctions.has(c.function)) {
    return { cost: sat(argSum + Math.max(1, sizeOf(subject))), shape: undefined }
  }
  if (subject !== undefined && isStringy(subject) && stringFunctions.has(c.function)) {
    return { cost: sat(argSum + Math.max(1, factor(sizeOf(subject), 0.1))), shape: undefined }
  }
  return { cost: sat(argSum + 1), shape: undefined }
}

/**
 * A parsed expression's worst-case cost for values of `self`'s shape (and `oldSelf`'s, the same). @internal
 */
export const estimate = (expr: unknown, self: Shape): number => {
  const scope = new Map<string, Known>([["self", { shape: self }], ["oldSelf", { shape: self }]])
  return walk((expr as { readonly expr: Expr }).expr, scope).cost
}

/** A parsed expression's cost on these values (JSON, before conversion to CEL). @internal */
export const actual = (expr: unknown, self: Shape, value: unknown, old: unknown): number => {
  const scope = new Map<string, Known>([
    ["self", value === undefined || value === null ? { shape: self, size: 0 } : { shape: self, value }],
    ["oldSelf", old === undefined || old === null ? { shape: self, size: 0 } : { shape: self, value: old }]
  ])
  return walk((expr as { readonly expr: Expr }).expr, scope).cost
}

/** How Go prints the factor a cost exceeds its limit by, as apiextensions' `getCostErrorMessage` does. @internal */
export const costErrorMessage = (costName: string, cost: number, limit: number): string => {
  const exceed = cost / limit
  const text = exceed > 100 ? "more than 100x" : exceed < 1.5 ? `${exceed.toFixed(6)}x` : `${exceed.toFixed(1)}x`
  return `${costName} exceeds budget by factor of ${text} (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)`
}

/**
 * The columns of a custom resource's Table (what `kubectl get` prints): its CRD version's
 * `additionalPrinterColumns`, each cell the first value its JSON path finds, as the API server's table
 * convertor does. The paths are the simple ones CRDs use: `.a.b`, `['a.b']`, `[0]`, `[*]` and filters
 * `[?(@.type=="Ready")]`.
 *
 * @internal
 */
import { isObject, type JsonObject } from "./json.js"
import type { FakeState, Route } from "./state.js"
import { keyOf } from "./store.js"

/** One printer column of a CRD version. @internal */
export interface Column {
  readonly name: string
  readonly type: string
  readonly format: string
  readonly description: string
  readonly priority: number
  readonly jsonPath: string
}

/** The printer columns of the CRD version a route reads, or undefined (a built-in kind, or none defined). @internal */
export const of = (state: FakeState, route: Route): ReadonlyArray<Column> | undefined => {
  if (!route.kind.custom) return undefined
  const crdKind = state.registry.byResource("apiextensions.k8s.io", "v1", "customresourcedefinitions")
  if (crdKind === undefined) return undefined
  const crd = state.store.existing(crdKind)?.entries.get(keyOf("", `${route.kind.plural}.${route.kind.group}`))?.obj
  const spec = isObject(crd?.spec) ? crd.spec : {}
  const versions = Array.isArray(spec.versions) ? spec.versions : []
  const version = versions.find((v) => isObject(v) && v.name === route.version)
  const columns = isObject(version) && Array.isArray(version.additionalPrinterColumns)
    ? version.additionalPrinterColumns.filter(isObject)
    : []
  if (columns.length === 0) return undefined
  return columns.map((c) => ({
    name: String(c.name),
    type: String(c.type ?? "string"),
    format: typeof c.format === "string" ? c.format : "",
    description: typeof c.description === "string" ? c.description : "",
    priority: typeof c.priority === "number" ? c.priority : 0,
    jsonPath: String(c.jsonPath)
  }))
}

type Step =
  | { readonly _tag: "Key"; readonly key: string }
  | { readonly _tag: "Index"; readonly index: number }
  | { readonly _tag: "All" }
  | { readonly _tag: "Filter"; readonly path: ReadonlyArray<string>; readonly op: "==" | "!="; readonly value: unknown }

const parse = (path: string): ReadonlyArray<Step> | undefined => {
  const steps: Array<Step> = []
  let rest = path.trim().replace(/^\{(.*)\}$/, "$1")
  while (rest !== "") {
    let m: RegExpExecArray | null
    if ((m = /^\.([^.[]+)/.exec(rest)) !== null) steps.push({ _tag: "Key", key: m[1]! })
    else if ((m = /^\[['"]([^'"]*)['"]\]/.exec(rest)) !== null) steps.push({ _tag: "Key", key: m[1]! })
    else if ((m = /^\[(\d+)\]/.exec(rest)) !== null) steps.push({ _tag: "Index", index: Number(m[1]) })
    else if ((m = /^\[\*\]/.exec(rest)) !== null) steps.push({ _tag: "All" })
    else if ((m = /^\[\?\(@((?:\.[^.=!)\s]+)+)\s*(==|!=)\s*("[^"]*"|'[^']*'|[^)\s]+)\s*\)\]/.exec(rest)) !== null) {
      const literal = m[3]!
      const value = /^["']/.test(literal)
        ? literal.slice(1, -1)
        : literal === "true" || literal === "false"
        ? literal === "true"
        : Number(literal)
      steps.push({ _tag: "Filter", path: m[1]!.slice(1).split("."), op: m[2] as "==" | "!=", value })
    } else return undefined
    rest = rest.slice(m[0].length)
  }
  return steps
}

const walk = (values: ReadonlyArray<unknown>, step: Step): Array<unknown> =>
  values.flatMap((v): Array<unknown> => {
    switch (step._tag) {
      case "Key":
        return isObject(v) && v[step.key] !== undefined ? [v[step.key]] : []
      case "Index":
        return Array.isArray(v) && step.index < v.length ? [v[step.index]] : []
      case "All":
        return Array.isArray(v) ? v : isObject(v) ? Object.values(v) : []
      case "Filter":
        return (Array.isArray(v) ? v : []).filter((item) => {
          let at: unknown = item
          for (const k of step.path) at = isObject(at) ? at[k] : undefined
          return step.op === "==" ? at === step.value : at !== step.value
        })
    }
  })

/** The cell a column shows for an object: the first value its path finds, or null. @internal */
export const cell = (obj: JsonObject, column: Column): unknown => {
  const steps = parse(column.jsonPath)
  if (steps === undefined) return null
  const found = steps.reduce<Array<unknown>>((values, step) => walk(values, step), [obj])[0]
  if (found === undefined || found === null) return null
  if (column.type !== "string") return found
  return typeof found === "string" ? found : typeof found === "object" ? JSON.stringify(found) : String(found)
}

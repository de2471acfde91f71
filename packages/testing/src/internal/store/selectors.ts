/**
 * Label and field selectors, parsed the way the API server parses them, compiled to
 * predicates over stored objects.
 *
 * @internal
 */
import { isObject, type JsonObject } from "./json.js"
import * as Status from "../serve/statusBodies.js"

/** @internal */
export type Matcher = (obj: JsonObject) => boolean

/** @internal */
export const matchAll: Matcher = () => true

const namePart = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/
const prefixPart = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/

const validKey = (key: string): boolean => {
  const slash = key.indexOf("/")
  const name = slash === -1 ? key : key.slice(slash + 1)
  if (slash !== -1) {
    const prefix = key.slice(0, slash)
    if (prefix.length === 0 || prefix.length > 253 || !prefixPart.test(prefix)) return false
  }
  return name.length > 0 && name.length <= 63 && namePart.test(name)
}

const validValue = (value: string): boolean => value === "" || (value.length <= 63 && namePart.test(value))

const splitTopLevel = (text: string): Array<string> => {
  const parts: Array<string> = []
  let depth = 0
  let start = 0
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    if (c === "(") depth++
    else if (c === ")") depth--
    else if (c === "," && depth === 0) {
      parts.push(text.slice(start, i))
      start = i + 1
    }
  }
  parts.push(text.slice(start))
  return parts
}

const labelsOf = (obj: JsonObject): Record<string, unknown> => {
  const metadata = obj.metadata
  if (!isObject(metadata)) return {}
  const labels = metadata.labels
  return isObject(labels) ? labels : {}
}

const bad = (selector: string, detail: string): Status.StatusError =>
  Status.badRequest(`unable to parse requirement: ${detail} (in label selector "${selector}")`)

const parseRequirement = (selector: string, raw: string): Matcher => {
  const text = raw.trim()
  if (text === "") throw bad(selector, "empty requirement")
  const setMatch = /^(\S+)\s+(in|notin)\s*\((.*)\)$/.exec(text)
  if (setMatch !== null) {
    const key = setMatch[1]!
    const op = setMatch[2]!
    const values = setMatch[3]!.split(",").map((v) => v.trim())
    if (!validKey(key)) throw bad(selector, `invalid label key "${key}"`)
    for (const v of values) if (!validValue(v)) throw bad(selector, `invalid label value "${v}"`)
    const set = new Set(values)
    return op === "in"
      ? (obj) => {
        const v = labelsOf(obj)[key]
        return typeof v === "string" && set.has(v)
      }
      : (obj) => {
        const v = labelsOf(obj)[key]
        return typeof v !== "string" || !set.has(v)
      }
  }
  if (text.startsWith("!")) {
    const key = text.slice(1).trim()
    if (!validKey(key)) throw bad(selector, `invalid label key "${key}"`)
    return (obj) => labelsOf(obj)[key] === undefined
  }
  const opMatch = /^([^=!<>\s]+)\s*(==|=|!=|<|>)\s*(.*)$/.exec(text)
  if (opMatch !== null) {
    const key = opMatch[1]!
    const op = opMatch[2]!
    const value = opMatch[3]!.trim()
    if (!validKey(key)) throw bad(selector, `invalid label key "${key}"`)
    if (op === "<" || op === ">") {
      const bound = Number(value)
      if (value === "" || !Number.isInteger(bound)) {
        throw bad(selector, `for 'Gt', 'Lt' operators, the value must be an integer`)
      }
      return (obj) => {
        const v = labelsOf(obj)[key]
        if (typeof v !== "string" || !/^-?\d+$/.test(v)) return false
        return op === "<" ? Number(v) < bound : Number(v) > bound
      }
    }
    if (!validValue(value)) throw bad(selector, `invalid label value "${value}"`)
    return op === "!="
      ? (obj) => labelsOf(obj)[key] !== value
      : (obj) => labelsOf(obj)[key] === value
  }
  if (!validKey(text)) throw bad(selector, `invalid label key "${text}"`)
  return (obj) => labelsOf(obj)[text] !== undefined
}

const and = (matchers: ReadonlyArray<Matcher>): Matcher => {
  if (matchers.length === 0) return matchAll
  if (matchers.length === 1) return matchers[0]!
  return (obj) => {
    for (const m of matchers) if (!m(obj)) return false
    return true
  }
}

/** Throws a 400 `StatusError` for a selector the API server would refuse. @internal */
export const parseLabelSelector = (selector: string | null | undefined): Matcher => {
  if (selector === null || selector === undefined || selector.trim() === "") return matchAll
  return and(splitTopLevel(selector).map((part) => parseRequirement(selector, part)))
}

/** Splits on unescaped `sep`, keeping escapes for the value parser. */
const splitUnescaped = (text: string, sep: string): Array<string> => {
  const parts: Array<string> = []
  let current = ""
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!
    if (c === "\\" && i + 1 < text.length) {
      current += c + text[i + 1]
      i++
    } else if (c === sep) {
      parts.push(current)
      current = ""
    } else {
      current += c
    }
  }
  parts.push(current)
  return parts
}

const unescapeValue = (value: string): string => value.replace(/\\(.)/g, "$1")

const booleanFields = new Set(["spec.hostNetwork", "spec.unschedulable"])

const fieldValue = (obj: JsonObject, field: string): string => {
  // an Event's source is its reporting component when it names none (EventToSelectableFields)
  if (field === "source") {
    const component = isObject(obj.source) ? obj.source.component : undefined
    if (typeof component === "string" && component !== "") return component
    return typeof obj.reportingComponent === "string" ? obj.reportingComponent : ""
  }
  let node: unknown = obj
  for (const key of field.split(".")) {
    if (!isObject(node)) {
      node = undefined
      break
    }
    node = node[key]
  }
  if (node === undefined || node === null) return booleanFields.has(field) ? "false" : ""
  if (typeof node === "string") return node
  if (typeof node === "number" || typeof node === "boolean") return String(node)
  return ""
}

/**
 * Field selectors support `metadata.name`, `metadata.namespace` and the kind's own
 * fields; anything else is a 400, as on a real server. `labels` maps a served version's
 * labels onto the stored objects' fields (a kind stored as another).
 *
 * @internal
 */
export const parseFieldSelector = (
  selector: string | null | undefined,
  supported: ReadonlyArray<string>,
  labels?: Readonly<Record<string, string>> | undefined
): Matcher => {
  if (selector === null || selector === undefined || selector.trim() === "") return matchAll
  const matchers: Array<Matcher> = []
  for (const raw of splitUnescaped(selector, ",")) {
    const text = raw.trim()
    if (text === "") continue
    const m = /^([^=!]+?)\s*(==|=|!=)\s*(.*)$/s.exec(text)
    if (m === null) throw Status.badRequest(`invalid selector: '${selector}'; can't understand '${text}'`)
    const label = m[1]!.trim()
    const op = m[2]!
    const value = unescapeValue(m[3]!)
    if (label !== "metadata.name" && label !== "metadata.namespace" && !supported.includes(label)) {
      throw Status.badRequest(`field label not supported: ${label}`)
    }
    const field = labels?.[label] ?? label
    matchers.push(op === "!=" ? (obj) => fieldValue(obj, field) !== value : (obj) => fieldValue(obj, field) === value)
  }
  return and(matchers)
}

/**
 * A CRD's `x-kubernetes-validations`, checked as kube-apiserver v1.35 checks them on create and update, on
 * the object with its schema's defaults filled in (as the server validates a defaulted object): each rule on the value of the field it sits on (`self`), transition rules (those naming `oldSelf`) only
 * where an old value correlates (object fields by name, maps by key, `map` lists by their keys), a false rule
 * reported as `<field>: Invalid value: "<type>": <message>` (or Required, Forbidden, Duplicate by `reason`,
 * under `fieldPath`), the message from `messageExpression` when it evaluates to a string, and errors of rules
 * whose value did not change ratcheted to warnings. An error while evaluating reads
 * `<error> evaluating rule: <rule>`, as the server's does.
 *
 * @internal
 */
import type { CelResult } from "@bufbuild/cel"
import type { JSONSchemaProps, ValidationRule } from "../../resources/generated.js"
import * as Cost from "./cost.js"
import { type Library, library } from "./library.js"
import { toCel, withDefaults } from "./values.js"

/** One field error, as a Status cause. @internal */
export interface FieldError {
  readonly reason: string
  readonly field: string
  readonly message: string
}

/** What checking an object found: errors to refuse it with, warnings to send with the answer. @internal */
export interface Findings {
  readonly errors: Array<FieldError>
  readonly warnings: Array<string>
  /** The runtime cost the rules spent. */
  cost: number
  /** Set when a rule went over a cost limit and validation stopped there. */
  exceeded?: CostExceeded | undefined
}

/** The rule a validation stopped at for its cost, and which limit it went over. @internal */
export interface CostExceeded {
  readonly rule: string
  readonly field: string
  /** The rule's runtime cost (as `cost.ts` counts it). */
  readonly cost: number
  /** `perCall`: the rule alone went over `PerCallLimit`; `budget`: the object's `RuntimeCELCostBudget` ran out. */
  readonly limit: "perCall" | "budget"
  /** What was left of the object's budget when the rule ran. */
  readonly remaining: number
}

/** The object's runtime budget, spent rule by rule, as `RuntimeCELCostBudget` is. */
interface Budget {
  remaining: number
}

/** A planned CEL expression. @internal */
export type Program = (bindings: Record<string, unknown>) => CelResult

/** A rule as the fake holds it: compiled, or why it is not evaluated. */
interface Compiled {
  readonly rule: ValidationRule
  readonly program: Program | undefined
  readonly message: Program | undefined
  readonly usesOldSelf: boolean
  /** The parsed rule, for its runtime cost. */
  readonly parsed: unknown
  /** Set when the rule is valid CEL that this evaluator cannot run (optional syntax, two-variable macros). */
  readonly unsupported: string | undefined
}

/** The schema tree, kept only where rules are, with the rules compiled. */
interface Validator {
  readonly schema: JSONSchemaProps
  readonly rules: ReadonlyArray<Compiled>
  readonly properties: ReadonlyMap<string, Validator>
  readonly items: Validator | undefined
  readonly additional: Validator | undefined
  readonly root: boolean
  /** The CEL shape of the value its rules see, for their cost. */
  readonly shape: Cost.Shape
}

/** A rule that does not parse, as the API server refuses the CRD that carries it. @internal */
export interface CompileError {
  readonly field: string
  readonly rule: ValidationRule
  readonly detail: string
}

const unsupportedSyntax = (rule: string): string | undefined =>
  /\.\?[A-Za-z_]|\[\?|\{\s*\?/.test(rule)
    ? "optional field and index syntax (.? [? {?)"
    : /\.(all|exists|existsOne|exists_one|transformList|transformMap|transformMapEntry)\(\s*[A-Za-z_]\w*\s*,\s*[A-Za-z_]\w*\s*,/
        .test(rule)
    ? "two-variable comprehensions"
    : undefined

const envOf = (lib: Library) =>
  lib.runtime.cel.celEnv({ funcs: [...lib.funcs], registry: lib.registry, re2: lib.re2 })

let env: ReturnType<typeof envOf> | undefined

/** Parses and plans an expression in the Kubernetes environment; throws the parser's message. @internal */
export const program = (lib: Library, source: string): Program => planned(lib, lib.runtime.cel.parse(source))

const planned = (lib: Library, parsed: ReturnType<Library["runtime"]["cel"]["parse"]>): Program => {
  env ??= envOf(lib)
  return lib.runtime.cel.plan(env, parsed) as Program
}

/** A rule's estimated cost at CRD create, with the field of the CRD it is reported at. @internal */
export interface CostError {
  readonly field: string
  readonly message: string
}

/** What the static estimate of one version's rules adds up to. */
interface Costs {
  total: number
  mostExpensive: Array<{ readonly field: string; readonly cost: number }>
  readonly errors: Array<CostError>
}

const observe = (costs: Costs, field: string, cost: number): void => {
  costs.total = Math.min(costs.total + cost, 18446744073709551615)
  if (cost < Cost.limits.staticEstimatedCrdCostLimit / 100) return
  costs.mostExpensive.push({ field, cost })
  costs.mostExpensive.sort((a, b) => b.cost - a.cost)
  if (costs.mostExpensive.length > 4) costs.mostExpensive.length = 4
}

const compileRule = (
  lib: Library,
  rule: ValidationRule,
  field: string,
  errors: Array<CompileError>,
  shape: Cost.Shape,
  cardinality: number | undefined,
  costs: Costs
): Compiled => {
  const usesOldSelf = /\boldSelf\b/.test(rule.rule)
  const unsupported = unsupportedSyntax(rule.rule) ??
    (rule.messageExpression !== undefined ? unsupportedSyntax(rule.messageExpression) : undefined)
  if (unsupported !== undefined) {
    return { rule, program: undefined, message: undefined, usesOldSelf, parsed: undefined, unsupported }
  }
  let rulePlan: Program | undefined
  let message: Program | undefined
  let parsed: unknown
  try {
    const ast = lib.runtime.cel.parse(rule.rule)
    parsed = ast
    rulePlan = planned(lib, ast)
    // cost × how many times it may run, as apiextensions' getExpressionCost
    const cost = Cost.estimate(ast, shape)
    const times = cardinality ?? Cost.maxCardinality(shape.minSize)
    const total = cost === 0 ? 0 : Math.min(cost * times, 18446744073709551615)
    if (total > Cost.limits.staticEstimatedCostLimit) {
      costs.errors.push({ field: `${field}.rule`, message: Cost.costErrorMessage("estimated rule cost", total, Cost.limits.staticEstimatedCostLimit) })
    }
    observe(costs, `${field}.rule`, total)
  } catch (e) {
    errors.push({ field: `${field}.rule`, rule, detail: `compilation failed: ERROR: ${(e as Error).message}` })
  }
  if (rule.messageExpression !== undefined && rule.messageExpression !== "") {
    try {
      const ast = lib.runtime.cel.parse(rule.messageExpression)
      message = planned(lib, ast)
      const cost = Cost.estimate(ast, shape)
      if (cost > Cost.limits.staticEstimatedCostLimit) {
        costs.errors.push({
          field: `${field}.messageExpression`,
          message: Cost.costErrorMessage("estimated messageExpression cost", cost, Cost.limits.staticEstimatedCostLimit)
        })
      }
      observe(costs, `${field}.messageExpression`, cost)
    } catch (e) {
      errors.push({
        field: `${field}.messageExpression`,
        rule,
        detail: `messageExpression compilation failed: ERROR: ${(e as Error).message}`
      })
    }
  }
  return { rule, program: rulePlan, message, usesOldSelf, parsed, unsupported: undefined }
}

const hasRules = (schema: JSONSchemaProps | undefined): boolean => {
  if (schema === undefined || typeof schema !== "object") return false
  if (Array.isArray(schema["x-kubernetes-validations"]) && schema["x-kubernetes-validations"].length > 0) return true
  return Object.values(schema.properties ?? {}).some(hasRules) ||
    hasRules(schema.items as JSONSchemaProps | undefined) ||
    (typeof schema.additionalProperties === "object" && hasRules(schema.additionalProperties as JSONSchemaProps))
}

const build = (
  lib: Library,
  schema: JSONSchemaProps,
  field: string,
  root: boolean,
  errors: Array<CompileError>,
  unsupported: Array<string>,
  cardinality: number | undefined,
  costs: Costs
): Validator | undefined => {
  if (!hasRules(schema)) return undefined
  const shape = Cost.shapeOf(schema, root)
  const rules = (schema["x-kubernetes-validations"] ?? []).map((rule, i) => {
    const compiled = compileRule(lib, rule, `${field}.x-kubernetes-validations[${i}]`, errors, shape, cardinality, costs)
    if (compiled.unsupported !== undefined) {
      unsupported.push(`rule ${JSON.stringify(rule.rule)} is not evaluated by effect-kube's CEL engine: ${compiled.unsupported}`)
    }
    return compiled
  })
  const properties = new Map<string, Validator>()
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    const v = build(lib, property, `${field}.properties[${name}]`, property["x-kubernetes-embedded-resource"] === true, errors, unsupported, cardinality, costs)
    if (v !== undefined) properties.set(name, v)
  }
  const itemSchema = schema.items as JSONSchemaProps | undefined
  const additionalSchema = typeof schema.additionalProperties === "object"
    ? (schema.additionalProperties as JSONSchemaProps)
    : undefined
  return {
    schema,
    rules,
    properties,
    items: itemSchema === undefined
      ? undefined
      : build(lib, itemSchema, `${field}.items`, itemSchema["x-kubernetes-embedded-resource"] === true, errors, unsupported, times(cardinality, schema.maxItems), costs),
    additional: additionalSchema === undefined
      ? undefined
      : build(lib, additionalSchema, `${field}.additionalProperties`, false, errors, unsupported, times(cardinality, schema.maxProperties), costs),
    root,
    shape
  }
}

/** A child's cardinality: the parent's times its list's or map's bound; unbounded (undefined) without one. */
const times = (cardinality: number | undefined, bound: number | undefined): number | undefined =>
  cardinality === undefined || bound === undefined ? undefined : Math.min(cardinality * Math.max(0, bound), 18446744073709551615)

/** The rules of one version's schema, compiled. @internal */
export interface VersionRules {
  readonly validator: Validator | undefined
  /** Rules that do not parse, each with the field of the CRD that holds it. */
  readonly errors: ReadonlyArray<CompileError>
  /** Rules valid in Kubernetes that this evaluator skips, as warnings to give when the CRD is written. */
  readonly unsupported: ReadonlyArray<string>
  /**
   * Rules whose estimated cost the API server refuses the CRD for (Forbidden causes, in its order: each rule
   * over the per-expression limit, then, when the total is over the CRD's limit, the most expensive rules and
   * the schema itself).
   */
  readonly costErrors: ReadonlyArray<CostError>
  /** The estimated cost of all the rules, as the API server adds it up. */
  readonly totalCost: number
}

/** Compiles the rules of a version's `openAPIV3Schema`; `field` names where it sits in the CRD. @internal */
export const compile = (schema: JSONSchemaProps, field: string): VersionRules => {
  if (!hasRules(schema)) return { validator: undefined, errors: [], unsupported: [], costErrors: [], totalCost: 0 }
  const lib = library()
  const errors: Array<CompileError> = []
  const unsupported: Array<string> = []
  const costs: Costs = { total: 0, mostExpensive: [], errors: [] }
  const validator = build(lib, schema, field, true, errors, unsupported, 1, costs)
  const costErrors = [...costs.errors]
  if (costs.total > Cost.limits.staticEstimatedCrdCostLimit) {
    for (const expensive of costs.mostExpensive) {
      costErrors.push({ field: expensive.field, message: "contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema" })
    }
    costErrors.push({
      field,
      message: Cost.costErrorMessage(
        "x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema",
        costs.total,
        Cost.limits.staticEstimatedCrdCostLimit
      )
    })
  }
  return { validator, errors, unsupported, costErrors, totalCost: costs.total }
}

/** Whether a schema holds any rule: a CRD without one never loads the evaluator. @internal */
export const anyRules = hasRules

// ---------------------------------------------------------------------------------------------------------------------
// evaluation

const deepEqual = (a: unknown, b: unknown): boolean => {
  if (a === b) return true
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false
  if (Array.isArray(a) !== Array.isArray(b)) return false
  const ka = Object.keys(a)
  const kb = Object.keys(b)
  return ka.length === kb.length &&
    ka.every((k) => deepEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]))
}

const errorText = (error: { readonly message: string }): string =>
  error.message
    .replace(/^field not found: /, "no such key: ")
    .replace(/^int divide by zero$/, "division by zero")
    .replace(/^key not found: /, "no such key: ")

/** Runs a planned expression: its value, or its error in the words cel-go would use. @internal */
export const evaluateExpression = (
  lib: Library,
  p: Program,
  bindings: Record<string, unknown>
): { readonly _tag: "Value"; readonly value: unknown } | { readonly _tag: "Error"; readonly message: string } => {
  const result = p(bindings)
  return lib.runtime.cel.isCelError(result)
    ? { _tag: "Error", message: errorText(result) }
    : { _tag: "Value", value: result }
}

const isOverloadError = (message: string): boolean =>
  message.startsWith("found no matching overload") || message.startsWith("no such overload") ||
  message.startsWith("unbound function")

const ruleText = (rule: ValidationRule): string =>
  rule.message !== undefined && rule.message.trim() !== "" ? rule.message.trim() : rule.rule.trim()

const typeOf = (schema: JSONSchemaProps): string => schema.type ?? ""

/**
 * A value as Go's field errors print it (`field.Error.ErrorBody`): strings quoted, numbers and booleans
 * as they are, objects and lists left out (the API server passes `field.OmitValueType` for them).
 */
const goValue = (value: unknown, schema: JSONSchemaProps): string | undefined => {
  if (schema.type === "object" || schema.type === "array") return undefined
  if (typeof value === "string") return JSON.stringify(value)
  if (typeof value === "number" || typeof value === "boolean") return String(value)
  if (value === null) return "null"
  return undefined
}

/**
 * A field error as the API server words it. A false rule reports the value itself (`bad`); an error of
 * evaluation or of cost reports the schema's type in its place (`sts.Type`), as the server does.
 */
const fieldError = (
  path: string,
  schema: JSONSchemaProps,
  detail: string,
  reason: string | undefined,
  bad?: { readonly value: unknown }
): FieldError => {
  const value = bad === undefined ? JSON.stringify(typeOf(schema)) : goValue(bad.value, schema)
  switch (reason) {
    case "FieldValueRequired":
      return { reason, field: path, message: `Required value: ${detail}` }
    case "FieldValueForbidden":
      return { reason, field: path, message: `Forbidden: ${detail}` }
    case "FieldValueDuplicate":
      return { reason, field: path, message: value === undefined ? "Duplicate value" : `Duplicate value: ${value}` }
    default:
      return {
        reason: "FieldValueInvalid",
        field: path,
        message: value === undefined ? `Invalid value: ${detail}` : `Invalid value: ${value}: ${detail}`
      }
  }
}

/** The message of a false rule: its messageExpression's string when that works, else message, else the rule. */
const messageOf = (lib: Library, compiled: Compiled, bindings: Record<string, unknown>): string => {
  if (compiled.message !== undefined) {
    const value = compiled.message(bindings)
    if (typeof value === "string" && value.trim() !== "" && !value.includes("\n")) return value.trim()
    void lib
  }
  return compiled.rule.message !== undefined && compiled.rule.message.trim() !== ""
    ? compiled.rule.message.trim()
    : `failed rule: ${ruleText(compiled.rule)}`
}

/** The value a rule at the resource's root sees: apiVersion, kind, metadata.name and generateName, the rest. */
const rootView = (obj: Record<string, unknown>): Record<string, unknown> => {
  const metadata = (obj.metadata ?? {}) as Record<string, unknown>
  return {
    ...obj,
    metadata: {
      ...(metadata.name !== undefined ? { name: metadata.name } : {}),
      ...(metadata.generateName !== undefined ? { generateName: metadata.generateName } : {})
    }
  }
}

const child = (path: string, name: string): string => (path === "" ? name : `${path}.${name}`)

const pathText = (path: string): string => (path === "" ? "<nil>" : path)

const budgetMessage = "validation failed due to running out of cost budget, no further validation rules will be run"

const evaluate = (
  lib: Library,
  v: Validator,
  path: string,
  value: unknown,
  old: unknown,
  findings: Findings,
  budget: Budget
): void => {
  if (value === null || value === undefined || findings.exceeded !== undefined) return
  if (v.rules.some((r) => r.program !== undefined)) {
    if (budget.remaining <= 0) {
      findings.errors.push(fieldError(pathText(path), v.schema, budgetMessage, undefined))
      findings.exceeded = { rule: "", field: pathText(path), cost: 0, limit: "budget", remaining: budget.remaining }
      return
    }
    const schema = v.root ? Cost.withTypeAndObjectMeta(v.schema) : v.schema
    const self = toCel(lib, v.root && typeof value === "object" ? rootView(value as Record<string, unknown>) : value, schema)
    const hasOld = old !== null && old !== undefined
    let oldSelf: unknown
    for (const compiled of v.rules) {
      if (compiled.program === undefined) continue
      const optionalOld = compiled.rule.optionalOldSelf === true
      if (compiled.usesOldSelf && !hasOld && !optionalOld) continue
      if (compiled.usesOldSelf && hasOld && oldSelf === undefined) {
        oldSelf = toCel(lib, v.root && typeof old === "object" ? rootView(old as Record<string, unknown>) : old, schema)
      }
      // the runtime cost, checked as the API server checks evalDetails.ActualCost: over what is left of the
      // object's budget stops everything; over the per-call limit (where cel-go interrupts the evaluation) too
      const viewed = v.root && typeof value === "object" ? rootView(value as Record<string, unknown>) : value
      const viewedOld = compiled.usesOldSelf && hasOld
        ? v.root && typeof old === "object" ? rootView(old as Record<string, unknown>) : old
        : undefined
      const cost = Cost.actual(compiled.parsed, v.shape, viewed, viewedOld)
      const spent = cost > Cost.limits.perCallLimit ? Cost.limits.perCallLimit + 1 : cost
      if (spent > budget.remaining) {
        findings.errors.push(fieldError(pathText(path), v.schema, budgetMessage, undefined))
        findings.exceeded = { rule: compiled.rule.rule, field: pathText(path), cost, limit: "budget", remaining: budget.remaining }
        budget.remaining = -1
        return
      }
      if (cost > Cost.limits.perCallLimit) {
        findings.errors.push(fieldError(
          pathText(path),
          v.schema,
          `'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: ${ruleText(compiled.rule)}`,
          undefined
        ))
        findings.exceeded = { rule: compiled.rule.rule, field: pathText(path), cost, limit: "perCall", remaining: budget.remaining }
        budget.remaining = -1
        return
      }
      budget.remaining -= spent
      findings.cost += spent
      const bindings: Record<string, unknown> = { self }
      if (compiled.usesOldSelf) {
        bindings.oldSelf = optionalOld
          ? hasOld ? lib.optional.make("some", { present: true, value: oldSelf as never }) : lib.optional.make("none", { present: false, value: null })
          : oldSelf
      }
      const result = compiled.program(bindings)
      if (result === true) continue
      // an unchanged value's errors are warnings (ratcheting), unless the rule compares with the old value
      const ratchet = !compiled.usesOldSelf && hasOld && deepEqual(value, old)
      let error: FieldError
      if (lib.runtime.cel.isCelError(result)) {
        const text = errorText(result)
        error = isOverloadError(text)
          ? fieldError(pathText(path), v.schema, `'no such overload': call arguments did not match a supported operator, function or macro signature for rule: ${ruleText(compiled.rule)}`, undefined)
          : fieldError(pathText(path), v.schema, `${text} evaluating rule: ${ruleText(compiled.rule)}`, undefined)
      } else if (result !== false) {
        error = fieldError(pathText(path), v.schema, `rule did not evaluate to a bool: ${ruleText(compiled.rule)}`, undefined)
      } else {
        const fieldPath = compiled.rule.fieldPath?.replace(/^\./, "")
        const at = fieldPath !== undefined && fieldPath !== "" ? child(path, fieldPath) : path
        error = fieldError(pathText(at), v.schema, messageOf(lib, compiled, bindings), compiled.rule.reason, { value })
      }
      if (ratchet) findings.warnings.push(`${error.field}: ${error.message}`)
      else findings.errors.push(error)
    }
  }
  if (Array.isArray(value)) {
    if (v.items === undefined) return
    const keys = v.schema["x-kubernetes-list-type"] === "map" ? v.schema["x-kubernetes-list-map-keys"] ?? [] : undefined
    const olds = Array.isArray(old) ? old : []
    value.forEach((item, i) => {
      const previous = keys !== undefined && keys.length > 0
        ? olds.find((o) => keys.every((k) => deepEqual((o as Record<string, unknown>)?.[k], (item as Record<string, unknown>)?.[k])))
        : undefined
      evaluate(lib, v.items!, `${path}[${i}]`, item, previous, findings, budget)
    })
    return
  }
  if (typeof value !== "object") return
  const oldObject = typeof old === "object" && old !== null && !Array.isArray(old) ? (old as Record<string, unknown>) : undefined
  const correlated = v.schema["x-kubernetes-map-type"] !== "atomic"
  for (const [key, field] of Object.entries(value as Record<string, unknown>)) {
    const property = v.properties.get(key)
    const previous = correlated ? oldObject?.[key] : undefined
    if (property !== undefined) evaluate(lib, property, child(path, key), field, previous, findings, budget)
    else if (v.additional !== undefined && v.schema.properties?.[key] === undefined) {
      evaluate(lib, v.additional, `${path}[${key}]`, field, previous, findings, budget)
    }
  }
}

/**
 * Checks an object (and, on update, its previous version) against a version's compiled rules.
 *
 * @internal
 */
export const check = (rules: VersionRules, obj: unknown, old: unknown): Findings => {
  const findings: Findings = { errors: [], warnings: [], cost: 0 }
  const v = rules.validator
  if (v !== undefined) {
    evaluate(library(), v, "", withDefaults(v.schema, obj), withDefaults(v.schema, old), findings, {
      remaining: Cost.limits.runtimeBudget
    })
  }
  return findings
}

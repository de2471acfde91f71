/**
 * ValidatingAdmissionPolicy and ValidatingAdmissionPolicyBinding (admissionregistration.k8s.io/v1), enforced
 * by the fake cluster on the writes they match, as kube-apiserver v1.35's admission plugin does: the policy's
 * `matchConstraints` and the binding's `matchResources` (resource rules with operations, scope, resource names
 * and exclusions, namespace and object selectors), `matchConditions`, `paramKind` with the binding's
 * `paramRef` (by name or selector, in the request's namespace when none is given, `parameterNotFoundAction`),
 * `variables`, and each validation's `expression`, `message`, `messageExpression` and `reason`. A failed
 * validation is acted on by the binding's `validationActions`: `Deny` refuses the write
 * (`<resource> "<name>" is forbidden: ValidatingAdmissionPolicy '<p>' with binding '<b>' denied request: ...`,
 * 422 Invalid unless the validation names another reason), `Warn` sends a warning, `Audit` records an audit
 * annotation. An expression that fails to evaluate is decided by the policy's `failurePolicy` (Fail by
 * default). Create and update are checked (DELETE and CONNECT are not), dry runs included; `authorizer` is
 * not available to expressions.
 *
 * @internal
 */
import { isObject, type JsonObject } from "../store/json.js"
import { apiVersionOf, type KindInfo } from "../store/kinds.js"
import type { AdmissionRequest, FakeState } from "../store/state.js"
import * as Status from "../serve/statusBodies.js"
import { type Entry, keyOf } from "../store/store.js"
import type { AuditAnnotation } from "../types.js"
import {
  type CelLibrary as Library,
  celLibrary as library,
  celEvaluate as evaluateExpression,
  type CelProgram as Program,
  celProgram as program,
  toCel
} from "effect-kube/internal/testing"

const group = "admissionregistration.k8s.io"

const objects = (state: FakeState, plural: string): ReadonlyArray<Entry> => {
  const kind = state.registry.byResource(group, "v1", plural)
  const collection = kind === undefined ? undefined : state.store.existing(kind)
  return collection === undefined ? [] : [...collection.entries.values()]
}

const strings = (u: unknown): ReadonlyArray<string> =>
  Array.isArray(u) ? u.filter((s): s is string => typeof s === "string") : []

const labelsOf = (obj: JsonObject | undefined): Record<string, string> =>
  (isObject(obj?.metadata) && isObject(obj.metadata.labels) ? obj.metadata.labels : {}) as Record<string, string>

/** A LabelSelector object (`matchLabels`, `matchExpressions`) on a set of labels; absent selects everything. */
const selects = (selector: unknown, labels: Record<string, string>): boolean => {
  if (!isObject(selector)) return true
  const matchLabels = isObject(selector.matchLabels) ? selector.matchLabels : {}
  for (const [k, v] of Object.entries(matchLabels)) if (labels[k] !== v) return false
  for (const e of Array.isArray(selector.matchExpressions) ? selector.matchExpressions : []) {
    if (!isObject(e) || typeof e.key !== "string") continue
    const value = labels[e.key]
    const values = strings(e.values)
    switch (e.operator) {
      case "In":
        if (value === undefined || !values.includes(value)) return false
        break
      case "NotIn":
        if (value !== undefined && values.includes(value)) return false
        break
      case "Exists":
        if (value === undefined) return false
        break
      case "DoesNotExist":
        if (value !== undefined) return false
        break
    }
  }
  return true
}

const wild = (list: ReadonlyArray<string>, value: string): boolean => list.includes("*") || list.includes(value)

/** Whether a resource rule (`apiGroups`, `apiVersions`, `resources`, `operations`, `scope`) covers the request. */
const ruleCovers = (rule: JsonObject, request: AdmissionRequest): boolean => {
  const { route } = request
  if (!wild(strings(rule.apiGroups), route.kind.group)) return false
  if (!wild(strings(rule.apiVersions), route.version)) return false
  if (!wild(strings(rule.operations), request.operation)) return false
  const resource = route.subresource === undefined ? route.kind.plural : `${route.kind.plural}/${route.subresource}`
  const resources = strings(rule.resources)
  const covered = resources.some((r) =>
    r === "*" ? route.subresource === undefined
    : r === "*/*" ? true
    : r === resource || (r.endsWith("/*") && route.subresource !== undefined && r.slice(0, -2) === route.kind.plural) ||
      (r.startsWith("*/") && route.subresource !== undefined && r.slice(2) === route.subresource)
  )
  if (!covered) return false
  const scope = typeof rule.scope === "string" ? rule.scope : "*"
  if (scope === "Cluster" && route.kind.namespaced) return false
  if (scope === "Namespaced" && !route.kind.namespaced) return false
  const names = strings(rule.resourceNames)
  return names.length === 0 || (route.name !== undefined && names.includes(route.name))
}

/** Whether `matchConstraints` / `matchResources` select the request (absent selects everything). */
const matchesResources = (
  state: FakeState,
  match: unknown,
  request: AdmissionRequest,
  requireRules: boolean
): boolean => {
  if (!isObject(match)) return !requireRules
  const rules = Array.isArray(match.resourceRules) ? match.resourceRules.filter(isObject) : []
  if (rules.length > 0 ? !rules.some((r) => ruleCovers(r, request)) : requireRules) return false
  const excluded = Array.isArray(match.excludeResourceRules) ? match.excludeResourceRules.filter(isObject) : []
  if (excluded.some((r) => ruleCovers(r, request))) return false
  const kind = request.route.kind
  if (kind.group === "" && kind.kind === "Namespace") {
    if (!selects(match.namespaceSelector, labelsOf(request.object))) return false
  } else if (kind.namespaced) {
    if (!selects(match.namespaceSelector, labelsOf(namespaceOf(state, request)))) return false
  }
  return selects(match.objectSelector, labelsOf(request.object)) ||
    (request.oldObject !== undefined && selects(match.objectSelector, labelsOf(request.oldObject)))
}

const namespaceOf = (state: FakeState, request: AdmissionRequest): JsonObject | undefined => {
  if (!request.route.kind.namespaced || request.route.namespace === undefined) return undefined
  const kind = state.registry.byResource("", "v1", "namespaces")!
  return state.store.existing(kind)?.entries.get(keyOf("", request.route.namespace))?.obj
}

/** The `request` variable of an admission expression. */
const requestVariable = (request: AdmissionRequest) => {
  const { route } = request
  const kind = { group: route.kind.group, version: route.version, kind: route.kind.kind }
  const resource = { group: route.kind.group, version: route.version, resource: route.kind.plural }
  return {
    uid: crypto.randomUUID(),
    kind,
    resource,
    ...(route.subresource !== undefined ? { subResource: route.subresource } : {}),
    requestKind: kind,
    requestResource: resource,
    name: route.name ?? "",
    namespace: route.namespace ?? "",
    operation: request.operation,
    userInfo: { username: "system:admin", groups: ["system:masters", "system:authenticated"] },
    dryRun: request.dryRun
  }
}

/** The parameter objects a binding names, or `undefined` when the policy takes none. */
const paramsOf = (
  state: FakeState,
  policy: JsonObject,
  binding: JsonObject,
  request: AdmissionRequest
): { readonly params: ReadonlyArray<JsonObject | null>; readonly notFound: string | undefined } => {
  const spec = policy.spec as JsonObject
  const paramKind = isObject(spec.paramKind) ? spec.paramKind : undefined
  const ref = isObject((binding.spec as JsonObject).paramRef) ? (binding.spec as JsonObject).paramRef as JsonObject : undefined
  if (paramKind === undefined) return { params: [null], notFound: undefined }
  if (ref === undefined) return { params: [], notFound: "paramRef is required when the policy has a paramKind" }
  const kind = typeof paramKind.apiVersion === "string" && typeof paramKind.kind === "string"
    ? state.registry.lookup(paramKind.apiVersion, paramKind.kind)
    : undefined
  if (kind === undefined) {
    return { params: [], notFound: `paramKind kind \`${String(paramKind.kind)}\` not known` }
  }
  const namespace = typeof ref.namespace === "string" && ref.namespace !== ""
    ? ref.namespace
    : kind.namespaced ? request.route.namespace ?? "" : ""
  const collection = state.store.existing(kind)
  const found = typeof ref.name === "string" && ref.name !== ""
    ? [collection?.entries.get(keyOf(kind.namespaced ? namespace : "", ref.name))?.obj].filter((o): o is JsonObject => o !== undefined)
    : [...(collection?.entries.values() ?? [])].map((e) => e.obj).filter((o) =>
      (!kind.namespaced || (o.metadata as JsonObject).namespace === namespace) && selects(ref.selector, labelsOf(o))
    )
  if (found.length > 0) return { params: found, notFound: undefined }
  return ref.parameterNotFoundAction === "Allow"
    ? { params: [], notFound: undefined }
    : { params: [], notFound: "no params found for policy binding with `Deny` parameterNotFoundAction" }
}

/** Compiled expressions, by their text (a policy's are compiled once however many writes it sees). */
const compiled = new Map<string, Program | string>()

const compileExpression = (lib: Library, source: string): Program | string => {
  let found = compiled.get(source)
  if (found === undefined) {
    try {
      found = program(lib, source)
    } catch (e) {
      found = `compilation failed: ERROR: ${(e as Error).message}`
    }
    if (compiled.size > 10_000) compiled.clear()
    compiled.set(source, found)
  }
  return found
}

type Outcome =
  | { readonly _tag: "Value"; readonly value: unknown }
  | { readonly _tag: "Error"; readonly message: string }

const run = (lib: Library, source: string, bindings: Record<string, unknown>): Outcome => {
  const p = compileExpression(lib, source)
  if (typeof p === "string") return { _tag: "Error", message: p }
  const result = evaluateExpression(lib, p, bindings)
  return result._tag === "Error" ? result : { _tag: "Value", value: result.value }
}

interface Decision {
  readonly message: string
  readonly reason: string | undefined
  readonly index: number
}

/** One binding's decisions on one request: the failures to act on, or a configuration error. */
const decide = (
  state: FakeState,
  lib: Library,
  policy: JsonObject,
  binding: JsonObject,
  request: AdmissionRequest
): { readonly failures: Array<Decision>; readonly audits: Array<readonly [string, string]> } => {
  const spec = policy.spec as JsonObject
  const failClosed = spec.failurePolicy !== "Ignore"
  const failures: Array<Decision> = []
  const audits: Array<readonly [string, string]> = []
  const { params, notFound } = paramsOf(state, policy, binding, request)
  if (notFound !== undefined) {
    if (failClosed) failures.push({ message: `failed to configure binding: ${notFound}`, reason: undefined, index: -1 })
    return { failures, audits }
  }
  const base = {
    object: toCel(lib, request.object, undefined),
    oldObject: request.oldObject === undefined ? null : toCel(lib, request.oldObject, undefined),
    request: toCel(lib, requestVariable(request), undefined),
    namespaceObject: toCel(lib, namespaceOf(state, request) ?? null, undefined)
  }
  for (const param of params) {
    const bindings: Record<string, unknown> = { ...base, params: toCel(lib, param, undefined) }
    // matchConditions: all must hold; one that fails to evaluate is decided by the failure policy
    let matched = true
    for (const condition of Array.isArray(spec.matchConditions) ? spec.matchConditions.filter(isObject) : []) {
      const outcome = run(lib, String(condition.expression), bindings)
      if (outcome._tag === "Error") {
        if (failClosed) failures.push({ message: `failed to evaluate matchCondition ${String(condition.name)}: ${outcome.message}`, reason: undefined, index: -1 })
        matched = false
        break
      }
      if (outcome.value !== true) {
        matched = false
        break
      }
    }
    if (!matched) continue
    const variables: Record<string, unknown> = {}
    bindings.variables = variables
    for (const variable of Array.isArray(spec.variables) ? spec.variables.filter(isObject) : []) {
      const outcome = run(lib, String(variable.expression), bindings)
      if (outcome._tag === "Value") variables[String(variable.name)] = outcome.value
    }
    const validations = Array.isArray(spec.validations) ? spec.validations.filter(isObject) : []
    validations.forEach((validation, index) => {
      const expression = String(validation.expression)
      const outcome = run(lib, expression, bindings)
      const reason = typeof validation.reason === "string" ? validation.reason : undefined
      if (outcome._tag === "Error") {
        if (failClosed) {
          failures.push({ message: `expression '${expression}' resulted in error: ${outcome.message}`, reason, index })
        }
        return
      }
      if (outcome.value === true) return
      let message = typeof validation.message === "string" && validation.message !== ""
        ? validation.message
        : `failed expression: ${expression}`
      if (typeof validation.messageExpression === "string" && validation.messageExpression !== "") {
        const m = run(lib, validation.messageExpression, bindings)
        if (m._tag === "Value" && typeof m.value === "string" && m.value.trim() !== "" && !m.value.includes("\n")) {
          message = m.value.trim()
        }
      }
      failures.push({ message, reason, index })
    })
    for (const annotation of Array.isArray(spec.auditAnnotations) ? spec.auditAnnotations.filter(isObject) : []) {
      const outcome = run(lib, String(annotation.valueExpression), bindings)
      if (outcome._tag === "Value" && typeof outcome.value === "string") {
        audits.push([`${String((policy.metadata as JsonObject).name)}/${String(annotation.key)}`, outcome.value])
      }
    }
  }
  return { failures, audits }
}

const codeOf = (reason: string): number =>
  reason === "Unauthorized" ? 401 : reason === "Forbidden" ? 403 : reason === "RequestEntityTooLarge" ? 413 : 422

const forbidden = (kind: KindInfo, name: string, reason: string, message: string): Status.StatusError => {
  const qualified = kind.group === "" ? kind.plural : `${kind.plural}.${kind.group}`
  return new Status.StatusError(codeOf(reason), reason, `${qualified} "${name}" is forbidden: ${message}`, {
    name,
    ...(kind.group !== "" ? { group: kind.group } : {}),
    kind: kind.plural,
    causes: [{ message }]
  })
}

/** Enforces the stored policies on a write: throws to deny it, answers the warnings. @internal */
const admit = (state: FakeState, request: AdmissionRequest): ReadonlyArray<string> => {
  const bindings = objects(state, "validatingadmissionpolicybindings")
  if (bindings.length === 0) return []
  const policies = new Map(objects(state, "validatingadmissionpolicies").map((e) => [e.name, e.obj]))
  const lib = library()
  const warnings: Array<string> = []
  let denied: { readonly policy: string; readonly binding: string; readonly decision: Decision } | undefined
  for (const entry of bindings) {
    const binding = entry.obj
    const spec = isObject(binding.spec) ? binding.spec : {}
    const policy = typeof spec.policyName === "string" ? policies.get(spec.policyName) : undefined
    if (policy === undefined || !isObject(policy.spec)) continue
    if (!matchesResources(state, policy.spec.matchConstraints, request, true)) continue
    if (!matchesResources(state, spec.matchResources, request, false)) continue
    const actions = strings(spec.validationActions)
    const { failures, audits } = decide(state, lib, policy, binding, request)
    const policyName = String((policy.metadata as JsonObject).name)
    const where = {
      policy: policyName,
      binding: entry.name,
      operation: request.operation,
      apiVersion: apiVersionOf(request.route.kind.group, request.route.version),
      resource: request.route.kind.plural,
      namespace: request.route.namespace,
      name: request.route.name
    }
    const audit: Array<AuditAnnotation> = audits.map(([key, value]) => ({ ...where, key, value }))
    for (const failure of failures) {
      if (actions.includes("Deny") && denied === undefined) {
        denied = { policy: policyName, binding: entry.name, decision: failure }
      }
      if (actions.includes("Warn")) {
        warnings.push(`Validation failed for ValidatingAdmissionPolicy '${policyName}' with binding '${entry.name}': ${failure.message}`)
      }
      if (actions.includes("Audit")) {
        audit.push({
          key: "validation.policy.admission.k8s.io/validation_failure",
          value: JSON.stringify([{
            message: failure.message,
            policy: policyName,
            binding: entry.name,
            expressionIndex: failure.index,
            validationActions: actions
          }]),
          ...where
        })
      }
    }
    state.audit.push(...audit)
  }
  if (denied !== undefined) {
    const message = `ValidatingAdmissionPolicy '${denied.policy}' with binding '${denied.binding}' denied request: ${denied.decision.message}`
    throw forbidden(request.route.kind, request.route.name ?? "", denied.decision.reason ?? "Invalid", message)
  }
  return warnings
}

/** Enforces ValidatingAdmissionPolicies on the writes their bindings match. @internal */
export const install = (state: FakeState): void => {
  state.onAdmit((request) => admit(state, request))
}

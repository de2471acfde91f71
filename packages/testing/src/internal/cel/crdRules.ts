/**
 * The fake cluster's side of CRD validation rules (the engine is effect-kube's, shared with
 * `CustomResource.validate`): a CRD whose rules do not parse, or whose estimated cost is over the API
 * server's limits, is refused as the API server refuses it (422 on the rule's field), and every create and update of a custom resource is checked
 * against the rules of the version it is written in. The evaluator is loaded only once a CRD with a rule is
 * written.
 *
 * @internal
 */
import type { JSONSchemaProps } from "effect-kube"
import { isObject, type JsonObject } from "../store/json.js"
import type { KindInfo } from "../store/kinds.js"
import type { AdmissionRequest, FakeState } from "../store/state.js"
import * as Status from "../serve/statusBodies.js"
import { type Entry, keyOf } from "../store/store.js"
import {
  celAnyRules as anyRules,
  celCheck as check,
  celCompile as compile,
  type CelVersionRules as VersionRules
} from "effect-kube/internal/testing"

const crdGroup = "apiextensions.k8s.io"

const isCrdKind = (kind: KindInfo): boolean => kind.group === crdGroup && kind.plural === "customresourcedefinitions"

/** Each version's `openAPIV3Schema` with the field of the CRD it sits at. */
const versionSchemas = (crd: JsonObject): Array<{ name: string; field: string; schema: JSONSchemaProps }> => {
  const spec = isObject(crd.spec) ? crd.spec : {}
  const versions = Array.isArray(spec.versions) ? spec.versions : []
  const out: Array<{ name: string; field: string; schema: JSONSchemaProps }> = []
  const schemaOf = (v: unknown) => isObject(v) && isObject(v.schema) && isObject(v.schema.openAPIV3Schema) ? v.schema.openAPIV3Schema : undefined
  // the API server validates the internal CRD, where versions of one schema share spec.validation: its
  // errors name that field then, and a version's own field only when the versions' schemas differ
  const first = JSON.stringify(schemaOf(versions[0]))
  const shared = versions.every((v) => JSON.stringify(schemaOf(v)) === first)
  versions.forEach((v, i) => {
    if (!isObject(v) || typeof v.name !== "string") return
    const schema = schemaOf(v)
    if (schema !== undefined) {
      const field = shared ? "spec.validation.openAPIV3Schema" : `spec.versions[${i}].schema.openAPIV3Schema`
      out.push({ name: v.name, field, schema: schema as JSONSchemaProps })
    }
  })
  return out
}

/** How Go prints a ValidationRule in an Invalid value, as the API server's CRD validation does. */
const goRule = (rule: { readonly rule: string; readonly message?: string | undefined; readonly messageExpression?: string | undefined; readonly fieldPath?: string | undefined }): string =>
  `apiextensions.ValidationRule{Rule:${JSON.stringify(rule.rule)}, Message:${JSON.stringify(rule.message ?? "")}, ` +
  `MessageExpression:${JSON.stringify(rule.messageExpression ?? "")}, Reason:(*apiextensions.FieldValueErrorReason)(nil), ` +
  `FieldPath:${JSON.stringify(rule.fieldPath ?? "")}, OptionalOldSelf:(*bool)(nil)}`

/** A CRD being written: its rules must parse; rules this evaluator cannot run are named in warnings. */
const admitCrd = (request: AdmissionRequest): ReadonlyArray<string> => {
  const schemas = versionSchemas(request.object).filter((v) => anyRules(v.schema))
  if (schemas.length === 0) return []
  const causes: Array<{ reason: string; field: string; message: string }> = []
  const warnings: Array<string> = []
  for (const { field, schema } of schemas) {
    const compiled = compile(schema, field)
    for (const error of compiled.errors) {
      causes.push({ reason: "FieldValueInvalid", field: error.field, message: `Invalid value: ${JSON.stringify(goRule(error.rule))}: ${error.detail}` })
    }
    for (const error of compiled.costErrors) causes.push({ reason: "FieldValueForbidden", field: error.field, message: `Forbidden: ${error.message}` })
    warnings.push(...compiled.unsupported)
  }
  if (causes.length > 0) {
    const metadata = isObject(request.object.metadata) ? request.object.metadata : {}
    throw Status.invalid(
      { group: crdGroup, plural: "customresourcedefinitions", kind: "CustomResourceDefinition" },
      String(metadata.name ?? ""),
      causes
    )
  }
  return [...new Set(warnings)]
}

/** The compiled rules of each stored CRD, by version; dropped with the stored version they were read from. */
const compiled = new WeakMap<Entry, Map<string, VersionRules>>()

const rulesFor = (state: FakeState, kind: KindInfo, version: string): VersionRules | undefined => {
  const crdKind = state.registry.byResource(crdGroup, "v1", "customresourcedefinitions")
  if (crdKind === undefined) return undefined
  const entry = state.store.existing(crdKind)?.entries.get(keyOf("", `${kind.plural}.${kind.group}`))
  if (entry === undefined) return undefined
  let byVersion = compiled.get(entry)
  if (byVersion === undefined) {
    byVersion = new Map()
    for (const v of versionSchemas(entry.obj)) {
      byVersion.set(v.name, anyRules(v.schema) ? compile(v.schema, v.field) : { validator: undefined, errors: [], unsupported: [], costErrors: [], totalCost: 0 })
    }
    compiled.set(entry, byVersion)
  }
  return byVersion.get(version)
}

const admitCustom = (state: FakeState, request: AdmissionRequest): ReadonlyArray<string> => {
  const { route } = request
  const rules = rulesFor(state, route.kind, route.version)
  if (rules === undefined || rules.validator === undefined) return []
  const findings = check(rules, request.object, request.oldObject)
  if (findings.errors.length > 0) throw Status.invalid(route.kind, route.name ?? "", findings.errors)
  return findings.warnings
}

/** Checks CRDs' rules when they are written and custom resources against them. @internal */
export const install = (state: FakeState): void => {
  state.onAdmit((request) => {
    if (isCrdKind(request.route.kind)) return admitCrd(request)
    if (request.route.kind.custom) return admitCustom(state, request)
    return []
  })
}

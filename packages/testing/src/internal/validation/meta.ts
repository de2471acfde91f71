/**
 * What every object's metadata must satisfy (`ValidateObjectMeta`, `ValidateObjectMetaUpdate`),
 * and the pieces other rules share: labels, annotations, label selectors (and whether one
 * matches a set of labels).
 *
 * @internal
 */
import { isObject, type JsonObject } from "../store/json.js"
import * as Field from "./field.js"
import * as Names from "./names.js"
import { child, type Errors, index, key } from "./rules.js"

/** How a kind's names are checked (`prefix`: a generateName, whose trailing dash is fine). @internal */
export type NameRule = (name: string, prefix: boolean) => ReadonlyArray<string>

const masked = (name: string, prefix: boolean): string => (prefix && name.endsWith("-") ? `${name.slice(0, -1)}a` : name)

/** @internal */
export const subdomainName: NameRule = (name, prefix) => Names.isDns1123Subdomain(masked(name, prefix))

/** @internal */
export const labelName: NameRule = (name, prefix) => Names.isDns1123Label(masked(name, prefix))

/** Service names (RFC 1035). @internal */
export const dns1035Name: NameRule = (name, prefix) => Names.isDns1035Label(masked(name, prefix))

/** RBAC names: anything a path segment may be. @internal */
export const pathSegmentName: NameRule = (name) => Names.isValidPathSegmentName(name)

/** `ValidateLabels`: every key a qualified name, every value a label value. @internal */
export const validateLabels = (labels: unknown, path: string, errors: Errors): void => {
  if (!isObject(labels)) return
  for (const k of Object.keys(labels)) {
    const v = labels[k]
    if (v === undefined) continue
    for (const msg of Names.isQualifiedName(k)) errors.push(Field.invalid(path, k, msg))
    if (typeof v === "string") for (const msg of Names.isValidLabelValue(v)) errors.push(Field.invalid(path, v, msg))
  }
}

const totalAnnotationSizeLimit = 256 * 1024

/** `ValidateAnnotations`: keys qualified names (compared lower-case), 256 KiB in all. @internal */
export const validateAnnotations = (annotations: unknown, path: string, errors: Errors): void => {
  if (!isObject(annotations)) return
  let size = 0
  for (const k of Object.keys(annotations)) {
    const v = annotations[k]
    if (v === undefined) continue
    for (const msg of Names.isQualifiedName(k.toLowerCase())) errors.push(Field.invalid(path, k, msg))
    size += k.length + (typeof v === "string" ? Buffer.byteLength(v) : 0)
  }
  if (size > totalAnnotationSizeLimit) errors.push(Field.tooLong(path, totalAnnotationSizeLimit))
}

/** `ValidateLabelSelector`: matchLabels as labels, each requirement's operator, key and values. @internal */
export const validateLabelSelector = (selector: unknown, path: string, errors: Errors): void => {
  if (!isObject(selector)) return
  validateLabels(selector.matchLabels, child(path, "matchLabels"), errors)
  const expressions = Array.isArray(selector.matchExpressions) ? selector.matchExpressions : []
  expressions.forEach((e, i) => {
    const at = index(child(path, "matchExpressions"), i)
    const r = isObject(e) ? e : {}
    const values = Array.isArray(r.values) ? r.values : []
    switch (r.operator) {
      case "In":
      case "NotIn":
        if (values.length === 0) {
          errors.push(Field.required(child(at, "values"), "must be specified when `operator` is 'In' or 'NotIn'"))
        }
        break
      case "Exists":
      case "DoesNotExist":
        if (values.length > 0) {
          errors.push(
            Field.forbidden(child(at, "values"), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'")
          )
        }
        break
      default:
        errors.push(Field.invalid(child(at, "operator"), r.operator ?? "", "not a valid selector operator"))
    }
    for (const msg of Names.isQualifiedName(String(r.key ?? ""))) {
      errors.push(Field.invalid(child(at, "key"), r.key ?? "", msg))
    }
    values.forEach((v, j) => {
      if (typeof v === "string") {
        for (const msg of Names.isValidLabelValue(v)) errors.push(Field.invalid(index(child(at, "values"), j), v, msg))
      }
    })
  })
}

/** Whether a `LabelSelector` has no requirement at all (it selects everything). @internal */
export const isEmptySelector = (selector: unknown): boolean =>
  !isObject(selector) ||
  ((!isObject(selector.matchLabels) || Object.keys(selector.matchLabels).length === 0) &&
    (!Array.isArray(selector.matchExpressions) || selector.matchExpressions.length === 0))

/** Whether a `LabelSelector` selects a set of labels. @internal */
export const selectorMatches = (selector: unknown, labels: unknown): boolean => {
  if (!isObject(selector)) return false
  const set = isObject(labels) ? labels : {}
  if (isObject(selector.matchLabels)) {
    for (const [k, v] of Object.entries(selector.matchLabels)) if (set[k] !== v) return false
  }
  const expressions = Array.isArray(selector.matchExpressions) ? selector.matchExpressions : []
  for (const e of expressions) {
    if (!isObject(e) || typeof e.key !== "string") return false
    const values = Array.isArray(e.values) ? e.values : []
    const has = typeof set[e.key] === "string"
    switch (e.operator) {
      case "In":
        if (!has || !values.includes(set[e.key])) return false
        break
      case "NotIn":
        if (has && values.includes(set[e.key])) return false
        break
      case "Exists":
        if (!has) return false
        break
      case "DoesNotExist":
        if (has) return false
        break
      default:
        return false
    }
  }
  return true
}

const ownerReferences = (refs: unknown, path: string, errors: Errors): void => {
  if (!Array.isArray(refs)) return
  let controllers = 0
  for (const r of refs) {
    const ref = isObject(r) ? r : {}
    const apiVersion = typeof ref.apiVersion === "string" ? ref.apiVersion : ""
    const version = apiVersion.includes("/") ? apiVersion.slice(apiVersion.indexOf("/") + 1) : apiVersion
    if (version === "") errors.push(Field.invalid(child(path, "apiVersion"), apiVersion, "version must not be empty"))
    if (typeof ref.kind !== "string" || ref.kind === "") {
      errors.push(Field.invalid(child(path, "kind"), ref.kind ?? "", "kind must not be empty"))
    }
    if (typeof ref.name !== "string" || ref.name === "") {
      errors.push(Field.invalid(child(path, "name"), ref.name ?? "", "name must not be empty"))
    }
    if (typeof ref.uid !== "string" || ref.uid === "") {
      errors.push(Field.invalid(child(path, "uid"), ref.uid ?? "", "uid must not be empty"))
    }
    if (ref.controller === true) controllers++
  }
  if (controllers > 1) {
    errors.push(Field.invalid(path, new Field.GoValue("[]v1.OwnerReference{...}"), "Only one reference can have Controller set to true"))
  }
}

const finalizers = (list: unknown, path: string, errors: Errors): void => {
  if (!Array.isArray(list)) return
  for (const f of list) {
    if (typeof f !== "string") continue
    for (const msg of Names.isQualifiedName(f)) errors.push(Field.invalid(path, f, msg))
  }
}

/** `ValidateObjectMeta` of a new object (name, generateName, labels, annotations, owners, finalizers). @internal */
export const validateObjectMeta = (metadata: unknown, nameRule: NameRule, errors: Errors, path = "metadata"): void => {
  const meta = isObject(metadata) ? metadata : {}
  const generateName = typeof meta.generateName === "string" ? meta.generateName : ""
  if (generateName !== "") {
    for (const msg of nameRule(generateName, true)) {
      errors.push(Field.invalid(child(path, "generateName"), generateName, msg))
    }
  }
  const name = typeof meta.name === "string" ? meta.name : ""
  if (name === "") errors.push(Field.required(child(path, "name"), "name or generateName is required"))
  else for (const msg of nameRule(name, false)) errors.push(Field.invalid(child(path, "name"), name, msg))
  validateLabels(meta.labels, child(path, "labels"), errors)
  validateAnnotations(meta.annotations, child(path, "annotations"), errors)
  ownerReferences(meta.ownerReferences, child(path, "ownerReferences"), errors)
  finalizers(meta.finalizers, child(path, "finalizers"), errors)
}

/** `ValidateObjectMetaUpdate`: what changed of the stored metadata, and the new labels and annotations. @internal */
export const validateObjectMetaUpdate = (metadata: unknown, oldMetadata: unknown, errors: Errors): void => {
  const meta = isObject(metadata) ? metadata : {}
  const old = isObject(oldMetadata) ? oldMetadata : {}
  if (old.deletionTimestamp !== undefined && old.deletionTimestamp !== null) {
    const before = new Set(Array.isArray(old.finalizers) ? old.finalizers : [])
    const added = (Array.isArray(meta.finalizers) ? meta.finalizers : []).filter((f) => !before.has(f))
    if (added.length > 0) {
      errors.push(Field.forbidden(
        "metadata.finalizers",
        `no new finalizers can be added if the object is being deleted, found new finalizers ${
          Field.goValue(added).text
        }`
      ))
    }
  }
  validateLabels(meta.labels, "metadata.labels", errors)
  validateAnnotations(meta.annotations, "metadata.annotations", errors)
  ownerReferences(meta.ownerReferences, "metadata.ownerReferences", errors)
  finalizers(meta.finalizers, "metadata.finalizers", errors)
}

/** The labels and annotations of a template's metadata (a pod template, a job template). @internal */
export const validateTemplateMeta = (metadata: unknown, path: string, errors: Errors): void => {
  const meta = isObject(metadata) ? metadata : {}
  validateLabels(meta.labels, child(path, "labels"), errors)
  validateAnnotations(meta.annotations, child(path, "annotations"), errors)
}

/** Every key of a string map checked by a rule (data keys), each bad key reported under `path[key]`. @internal */
export const validateKeys = (
  map: unknown,
  path: string,
  rule: (k: string) => ReadonlyArray<string>,
  errors: Errors
): void => {
  if (!isObject(map)) return
  for (const k of Object.keys(map)) {
    if (map[k] === undefined) continue
    for (const msg of rule(k)) errors.push(Field.invalid(key(path, k), k, msg))
  }
}

/** The metadata of an object, as a record. @internal */
export const metaOf = (obj: JsonObject): JsonObject => (isObject(obj.metadata) ? obj.metadata : {})

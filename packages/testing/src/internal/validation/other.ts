/**
 * RBAC (roles and their bindings), Leases, events.k8s.io Events, PodDisruptionBudgets,
 * Ingresses and CustomResourceDefinitions, as their API groups' validation checks them.
 *
 * @internal
 */
import { deepEqual, isObject, type JsonObject } from "../store/json.js"
import { intOrPercent } from "./apps.js"
import { eventStrings } from "./core.js"
import * as Field from "./field.js"
import * as Meta from "./meta.js"
import * as Names from "./names.js"
import { at, child, type Errors, index, nonNegative, oneOf, positive, type Rule, valueAt } from "./rules.js"

const objectAt = (obj: unknown, path: string): JsonObject => {
  const v = valueAt(obj, path)
  return isObject(v) ? v : {}
}
const str = (v: unknown): string => (typeof v === "string" ? v : "")

const rbacGroup = "rbac.authorization.k8s.io"

const policyRules = (namespaced: boolean): Rule => (obj, errors) => {
  const rules = Array.isArray(obj.rules) ? obj.rules : []
  rules.forEach((r, i) => {
    const rule = isObject(r) ? r : {}
    const path = index("rules", i)
    const list = (k: string) => (Array.isArray(rule[k]) ? (rule[k] as Array<unknown>) : [])
    if (list("verbs").length === 0) errors.push(Field.required(child(path, "verbs"), "verbs must contain at least one value"))
    if (list("nonResourceURLs").length > 0) {
      if (namespaced) {
        errors.push(Field.invalid(
          child(path, "nonResourceURLs"),
          Field.goValue(rule.nonResourceURLs),
          "namespaced rules cannot apply to non-resource URLs"
        ))
      }
      if (list("apiGroups").length > 0 || list("resources").length > 0 || list("resourceNames").length > 0) {
        errors.push(Field.invalid(
          child(path, "nonResourceURLs"),
          Field.goValue(rule.nonResourceURLs),
          "rules cannot apply to both regular resources and non-resource URLs"
        ))
      }
      return
    }
    if (list("apiGroups").length === 0) {
      errors.push(Field.required(child(path, "apiGroups"), "resource rules must supply at least one api group"))
    }
    if (list("resources").length === 0) {
      errors.push(Field.required(child(path, "resources"), "resource rules must supply at least one resource"))
    }
  })
}

/** @internal */
export const role: ReadonlyArray<Rule> = [policyRules(true)]

/** @internal */
export const clusterRole: ReadonlyArray<Rule> = [policyRules(false)]

const goRoleRef = (ref: unknown): Field.GoValue => {
  const r = isObject(ref) ? ref : {}
  return Field.goStruct("rbac.RoleRef", [
    ["APIGroup", Field.goValue(str(r.apiGroup))],
    ["Kind", Field.goValue(str(r.kind))],
    ["Name", Field.goValue(str(r.name))]
  ])
}

const binding = (namespaced: boolean): Rule => (obj, errors) => {
  const ref = objectAt(obj, "roleRef")
  if (ref.apiGroup !== rbacGroup) errors.push(Field.notSupported("roleRef.apiGroup", str(ref.apiGroup), [rbacGroup]))
  const kinds = namespaced ? ["Role", "ClusterRole"] : ["ClusterRole"]
  if (typeof ref.kind !== "string" || !kinds.includes(ref.kind)) errors.push(Field.notSupported("roleRef.kind", str(ref.kind), kinds))
  const name = str(ref.name)
  if (name === "") errors.push(Field.required("roleRef.name", ""))
  else for (const msg of Names.isValidPathSegmentName(name)) errors.push(Field.invalid("roleRef.name", name, msg))
  const subjects = Array.isArray(obj.subjects) ? obj.subjects : []
  subjects.forEach((s, i) => {
    const subject = isObject(s) ? s : {}
    const path = index("subjects", i)
    const subjectName = str(subject.name)
    if (subjectName === "") errors.push(Field.required(child(path, "name"), ""))
    switch (subject.kind) {
      case "ServiceAccount":
        if (subjectName !== "") {
          for (const msg of Names.isDns1123Subdomain(subjectName)) errors.push(Field.invalid(child(path, "name"), subjectName, msg))
        }
        if (str(subject.apiGroup) !== "") errors.push(Field.notSupported(child(path, "apiGroup"), subject.apiGroup, [""]))
        if (!namespaced && str(subject.namespace) === "") errors.push(Field.required(child(path, "namespace"), ""))
        break
      case "User":
      case "Group":
        if (subject.apiGroup !== rbacGroup) errors.push(Field.notSupported(child(path, "apiGroup"), str(subject.apiGroup), [rbacGroup]))
        break
      default:
        errors.push(Field.notSupported(child(path, "kind"), str(subject.kind), ["ServiceAccount", "User", "Group"]))
    }
  })
}

const roleRefImmutable: Rule = (obj, errors, old) => {
  if (old !== undefined && !deepEqual(obj.roleRef, old.roleRef)) {
    errors.push(Field.invalid("roleRef", goRoleRef(obj.roleRef), "cannot change roleRef"))
  }
}

/** @internal */
export const roleBinding: ReadonlyArray<Rule> = [binding(true), roleRefImmutable]

/** @internal */
export const clusterRoleBinding: ReadonlyArray<Rule> = [binding(false), roleRefImmutable]

/** @internal */
export const lease: ReadonlyArray<Rule> = [
  at("spec.leaseDurationSeconds", positive),
  at("spec.leaseTransitions", nonNegative),
  (obj, errors) => {
    const spec = objectAt(obj, "spec")
    if (str(spec.preferredHolder) !== "" && str(spec.strategy) === "") {
      errors.push(Field.forbidden("spec.preferredHolder", "may only be specified if `strategy` is defined"))
    }
  }
]

/**
 * A CRD's versions as `field.Invalid` prints them (`%#v` of the internal
 * `[]apiextensions.CustomResourceDefinitionVersion`). A pointer that is set prints as its address
 * (`(*apiextensions.CustomResourceValidation)(0xc000...)`), which no one can know: the fake writes
 * the same made-up address for each.
 */
const goVersions = (versions: unknown): Field.GoValue => {
  const type = "apiextensions.CustomResourceDefinitionVersion"
  if (!Array.isArray(versions)) return new Field.GoValue(`[]${type}(nil)`)
  const pointer = (t: string, v: unknown) =>
    new Field.GoValue(`(*${t})(${v === undefined || v === null ? "nil" : "0xc000a3c000"})`)
  const list = (t: string, items: unknown, print: (item: JsonObject) => Field.GoValue) =>
    new Field.GoValue(
      Array.isArray(items) ? `[]${t}{${items.map((i) => print(isObject(i) ? i : {}).text).join(", ")}}` : `[]${t}(nil)`
    )
  const columnType = "apiextensions.CustomResourceColumnDefinition"
  const column = (c: JsonObject) =>
    Field.goStruct(columnType, [
      ["Name", Field.goValue(str(c.name))],
      ["Type", Field.goValue(str(c.type))],
      ["Format", Field.goValue(str(c.format))],
      ["Description", Field.goValue(str(c.description))],
      ["Priority", Field.goValue(typeof c.priority === "number" ? c.priority : 0)],
      ["JSONPath", Field.goValue(str(c.jsonPath))]
    ])
  const selectable = (f: JsonObject) =>
    Field.goStruct("apiextensions.SelectableField", [["JSONPath", Field.goValue(str(f.jsonPath))]])
  const items = versions.map((raw) => {
    const v = isObject(raw) ? raw : {}
    return Field.goStruct(type, [
      ["Name", Field.goValue(str(v.name))],
      ["Served", Field.goValue(v.served === true)],
      ["Storage", Field.goValue(v.storage === true)],
      ["Deprecated", Field.goValue(v.deprecated === true)],
      ["DeprecationWarning", pointer("string", v.deprecationWarning)],
      ["Schema", pointer("apiextensions.CustomResourceValidation", v.schema)],
      ["Subresources", pointer("apiextensions.CustomResourceSubresources", v.subresources)],
      ["AdditionalPrinterColumns", list(columnType, v.additionalPrinterColumns, column)],
      ["SelectableFields", list("apiextensions.SelectableField", v.selectableFields, selectable)]
    ]).text
  })
  return new Field.GoValue(`[]${type}{${items.join(", ")}}`)
}

/** A time as Go's `time.Time.String` writes it in UTC (`2026-12-01 09:00:00.5 +0000 UTC`); the zero time when unset. */
const goTime = (value: unknown): string => {
  const m = typeof value === "string" ? /^(\d{4}-\d\d-\d\d)T(\d\d:\d\d:\d\d)(?:\.(\d+))?Z$/.exec(value) : null
  if (m === null) return "0001-01-01 00:00:00 +0000 UTC"
  const fraction = (m[3] ?? "").replace(/0+$/, "")
  return `${m[1]} ${m[2]}${fraction === "" ? "" : `.${fraction}`} +0000 UTC`
}

/** A time as Go's `%#v` writes one inside a struct (`time.Time`'s GoString). */
const goTimeLiteral = (value: unknown): string => {
  const m = typeof value === "string" ? /^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.(\d+))?Z$/.exec(value) : null
  if (m === null) return "time.Date(1, time.January, 1, 0, 0, 0, 0, time.UTC)"
  const months = "January February March April May June July August September October November December".split(" ")
  const nanos = Number((m[7] ?? "").padEnd(9, "0").slice(0, 9))
  const [y, mo, d, h, mi, sec] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number]
  return `time.Date(${y}, time.${months[mo - 1]}, ${d}, ${h}, ${mi}, ${sec}, ${nanos}, time.UTC)`
}

/**
 * The new value of an Event's field that may not change, as `field.Invalid` prints it: a string
 * quoted, a time by its String method, a struct (the internal core types) by `%#v`, a nil pointer
 * as "null".
 */
const goEventValue = (field: string, value: unknown): Field.GoValue | string | number => {
  const ref = (r: JsonObject) =>
    Field.goStruct("core.ObjectReference", [
      ["Kind", Field.goValue(str(r.kind))],
      ["Namespace", Field.goValue(str(r.namespace))],
      ["Name", Field.goValue(str(r.name))],
      ["UID", Field.goValue(str(r.uid))],
      ["APIVersion", Field.goValue(str(r.apiVersion))],
      ["ResourceVersion", Field.goValue(str(r.resourceVersion))],
      ["FieldPath", Field.goValue(str(r.fieldPath))]
    ])
  switch (field) {
    case "regarding":
      return ref(isObject(value) ? value : {})
    case "related":
      return isObject(value) ? ref(value) : "null"
    case "deprecatedSource": {
      const source = isObject(value) ? value : {}
      return Field.goStruct("core.EventSource", [
        ["Component", Field.goValue(str(source.component))],
        ["Host", Field.goValue(str(source.host))]
      ])
    }
    case "series":
      if (!isObject(value)) return "null"
      return Field.goStruct("core.EventSeries", [
        ["Count", Field.goValue(typeof value.count === "number" ? value.count : 0)],
        ["LastObservedTime", new Field.GoValue(`v1.MicroTime{Time:${goTimeLiteral(value.lastObservedTime)}}`)]
      ])
    case "eventTime":
    case "deprecatedFirstTimestamp":
    case "deprecatedLastTimestamp":
      return new Field.GoValue(goTime(value))
    case "deprecatedCount":
      return typeof value === "number" ? value : 0
    default:
      return typeof value === "string" ? value : ""
  }
}

/** `validateV1EventSeries`. */
const eventSeries = (obj: JsonObject, errors: Errors): void => {
  const series = obj.series
  if (!isObject(series)) return
  if (typeof series.count !== "number" || series.count < 2) {
    errors.push(Field.invalid("series.count", "", "should be at least 2"))
  }
  if (series.lastObservedTime === undefined || series.lastObservedTime === null) {
    errors.push(Field.required("series.lastObservedTime", ""))
  }
}

/** A MicroTime cut to whole microseconds and read as an instant (`Truncate(time.Microsecond).UTC()`). */
const microInstant = (value: unknown): string => {
  if (typeof value !== "string") return ""
  const m = /^(.*T\d\d:\d\d:\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)$/.exec(value)
  if (m === null) return value
  const millis = Date.parse(`${m[1]}${m[3]}`)
  return Number.isNaN(millis) ? value : `${millis}.${(m[2] ?? "").padEnd(6, "0").slice(0, 6)}`
}

/** The fields an events.k8s.io Event keeps, by their internal (core) names, in `ValidateEventUpdate`'s order. */
const immutableEventFields: ReadonlyArray<readonly [string, string]> = [
  ["regarding", "involvedObject"],
  ["reason", "reason"],
  ["note", "message"],
  ["deprecatedSource", "source"],
  ["deprecatedFirstTimestamp", "firstTimestamp"],
  ["deprecatedLastTimestamp", "lastTimestamp"],
  ["deprecatedCount", "count"],
  // the API server checks the reason twice
  ["reason", "reason"],
  ["type", "type"],
  ["eventTime", "eventTime"],
  ["action", "action"],
  ["related", "related"],
  ["reportingController", "reportingController"],
  ["reportingInstance", "reportingInstance"]
]

/**
 * events.k8s.io/v1 Events: the legacy checks every version makes, then on create the strict
 * ones (`ValidateEventCreate`), on update a changed series and the fields that never change
 * (`ValidateEventUpdate`).
 *
 * @internal
 */
export const event: ReadonlyArray<Rule> = [
  (obj, errors, old) => {
    const namespace = str(valueAt(obj, "metadata.namespace"))
    const regardingNs = str(valueAt(obj, "regarding.namespace"))
    const eventTime = obj.eventTime
    const hasTime = eventTime !== undefined && eventTime !== null
    if (!hasTime) {
      if (regardingNs === "" ? namespace !== "" && namespace !== "default" : namespace !== regardingNs) {
        errors.push(Field.invalid("involvedObject.namespace", regardingNs, "does not match event.namespace"))
      }
    } else {
      if (regardingNs === "" && namespace !== "default" && namespace !== "kube-system") {
        errors.push(Field.invalid("involvedObject.namespace", regardingNs, "does not match event.namespace"))
      }
      eventStrings(obj.reportingController, obj.reportingInstance, obj.action, obj.reason, obj.note, errors)
    }
    if (old !== undefined) {
      if (!deepEqual(obj.series, old.series)) eventSeries(obj, errors)
      for (const [f, path] of immutableEventFields) {
        const same = f === "eventTime" ? microInstant(obj[f]) === microInstant(old[f]) : deepEqual(obj[f], old[f])
        if (!same) errors.push(Field.immutable(path, goEventValue(f, obj[f])))
      }
      return
    }
    eventSeries(obj, errors)
    if (!hasTime) errors.push(Field.required("eventTime", ""))
    if (obj.type !== "Normal" && obj.type !== "Warning") {
      errors.push(Field.invalid("type", "", `has invalid value: ${str(obj.type)}`))
    }
    for (const [f, path] of [["deprecatedFirstTimestamp", "firstTimestamp"], ["deprecatedLastTimestamp", "lastTimestamp"]]) {
      if (obj[f!] !== undefined && obj[f!] !== null) errors.push(Field.invalid(path!, "", "needs to be unset"))
    }
    if (typeof obj.deprecatedCount === "number" && obj.deprecatedCount !== 0) {
      errors.push(Field.invalid("count", "", "needs to be unset"))
    }
    const source = objectAt(obj, "deprecatedSource")
    if (str(source.component) !== "" || str(source.host) !== "") errors.push(Field.invalid("source", "", "needs to be unset"))
  }
]

/** @internal */
export const podDisruptionBudget: ReadonlyArray<Rule> = [
  (obj, errors) => {
    const spec = objectAt(obj, "spec")
    if (spec.minAvailable !== undefined && spec.maxUnavailable !== undefined) {
      errors.push(Field.invalid(
        "spec",
        new Field.GoValue("policy.PodDisruptionBudgetSpec{...}"),
        "minAvailable and maxUnavailable cannot be both set"
      ))
    }
    intOrPercent(spec.minAvailable, "spec.minAvailable", errors)
    intOrPercent(spec.maxUnavailable, "spec.maxUnavailable", errors)
    Meta.validateLabelSelector(spec.selector, "spec.selector", errors)
    oneOf(["AlwaysAllow", "IfHealthyBudget"])(spec.unhealthyPodEvictionPolicy, "spec.unhealthyPodEvictionPolicy", errors)
  }
]

const ingressBackend = (backend: unknown, path: string, errors: Errors): void => {
  const b = isObject(backend) ? backend : {}
  const hasResource = b.resource !== undefined && b.resource !== null
  const hasService = isObject(b.service)
  if (hasResource && hasService) {
    errors.push(Field.invalid(path, "", "cannot set both resource and service backends"))
    return
  }
  if (hasResource) return
  if (!hasService) {
    errors.push(Field.invalid(path, "", "resource or service backend is required"))
    return
  }
  const service = b.service as JsonObject
  const name = str(service.name)
  if (name === "") errors.push(Field.required(child(path, "service.name"), ""))
  else for (const msg of Names.isDns1035Label(name)) errors.push(Field.invalid(child(path, "service.name"), name, msg))
  const port = isObject(service.port) ? service.port : {}
  const portName = str(port.name)
  const portNumber = typeof port.number === "number" ? port.number : 0
  if (portName !== "" && portNumber !== 0) errors.push(Field.invalid(path, "", "cannot set both port name & port number"))
  else if (portName !== "") {
    for (const msg of Names.isValidPortName(portName)) errors.push(Field.invalid(child(path, "service.port.name"), portName, msg))
  } else if (portNumber !== 0) {
    for (const msg of Names.isValidPortNum(portNumber)) {
      errors.push(Field.invalid(child(path, "service.port.number"), portNumber, msg))
    }
  } else errors.push(Field.required(path, "port name or number is required"))
}

const pathTypes = ["Exact", "ImplementationSpecific", "Prefix"]

/** @internal */
export const ingress: ReadonlyArray<Rule> = [
  (obj, errors) => {
    const spec = objectAt(obj, "spec")
    const rules = Array.isArray(spec.rules) ? spec.rules : []
    if (rules.length === 0 && spec.defaultBackend === undefined) {
      errors.push(Field.invalid(
        "spec",
        new Field.GoValue("[]networking.IngressRule(nil)"),
        "either `defaultBackend` or `rules` must be specified"
      ))
    }
    if (spec.defaultBackend !== undefined) ingressBackend(spec.defaultBackend, "spec.defaultBackend", errors)
    rules.forEach((r, i) => {
      const rule = isObject(r) ? r : {}
      const path = index("spec.rules", i)
      const host = str(rule.host)
      if (host !== "") {
        const plain = host.startsWith("*.") ? host.slice(2) : host
        for (const msg of Names.isDns1123Subdomain(plain)) errors.push(Field.invalid(child(path, "host"), host, msg))
      }
      const paths = Array.isArray(valueAt(rule, "http.paths")) ? (valueAt(rule, "http.paths") as Array<unknown>) : []
      paths.forEach((p, j) => {
        const httpPath = isObject(p) ? p : {}
        const at = index(child(path, "http.paths"), j)
        const type = httpPath.pathType
        const value = str(httpPath.path)
        if (type === undefined) {
          errors.push(Field.required(child(at, "pathType"), "pathType must be specified"))
          return
        }
        if (type === "Exact" || type === "Prefix") {
          if (!value.startsWith("/")) errors.push(Field.invalid(child(at, "path"), value, "must be an absolute path"))
          for (const seq of ["//", "/./", "/../", "%2f", "%2F"]) {
            if (value.includes(seq)) errors.push(Field.invalid(child(at, "path"), value, `must not contain '${seq}'`))
          }
          for (const suffix of ["/..", "/."]) {
            if (value.endsWith(suffix)) errors.push(Field.invalid(child(at, "path"), value, `cannot end with '${suffix}'`))
          }
        } else if (type === "ImplementationSpecific") {
          if (value !== "" && !value.startsWith("/")) {
            errors.push(Field.invalid(child(at, "path"), value, "must be an absolute path"))
          }
        } else {
          errors.push(Field.notSupported(child(at, "pathType"), type, pathTypes))
        }
        ingressBackend(httpPath.backend, child(at, "backend"), errors)
      })
    })
    const className = spec.ingressClassName
    if (typeof className === "string" && className !== "") {
      for (const msg of Names.isDns1123Subdomain(className)) errors.push(Field.invalid("spec.ingressClassName", className, msg))
    }
  }
]

const dns1035 = (value: string, path: string, errors: Errors, prefix = ""): void => {
  const msgs = Names.isDns1035Label(value)
  if (msgs.length > 0) errors.push(Field.invalid(path, value, `${prefix}${msgs.join(",")}`))
}

/** Where a structural schema breaks the rules, as `schema.openAPIV3Schema.<path>` errors. */
const structural = (schema: unknown, path: string, errors: Errors, root: boolean): void => {
  if (!isObject(schema)) return
  const intOrString = schema["x-kubernetes-int-or-string"] === true
  const preserve = schema["x-kubernetes-preserve-unknown-fields"] === true
  const type = schema.type
  if ((type === undefined || type === "") && !intOrString && !preserve) {
    errors.push(Field.required(child(path, "type"), root ? "must not be empty at the root" : "must not be empty for specified object fields"))
  }
  if (root && type !== undefined && type !== "object") {
    errors.push(Field.invalid(child(path, "type"), type, "must be object at the root"))
  }
  if (type === "array" && !isObject(schema.items)) errors.push(Field.required(child(path, "items"), "must be specified"))
  if (isObject(schema.properties)) {
    for (const [name, sub] of Object.entries(schema.properties)) {
      const at = `${child(path, "properties")}[${name}]`
      if (root && name === "metadata" && isObject(sub)) {
        const keys = Object.keys(sub).filter((k) => k !== "type" && k !== "properties")
        const props = isObject(sub.properties) ? Object.keys(sub.properties) : []
        if (keys.length > 0 || props.some((p) => p !== "name" && p !== "generateName")) {
          errors.push(Field.forbidden(
            at,
            "must not specify anything other than name and generateName, but metadata is implicitly specified"
          ))
        }
        continue
      }
      structural(sub, at, errors, false)
    }
  }
  if (isObject(schema.items)) structural(schema.items, child(path, "items"), errors, false)
  if (isObject(schema.additionalProperties)) structural(schema.additionalProperties, child(path, "additionalProperties"), errors, false)
}

/** @internal */
export const customResourceDefinition: ReadonlyArray<Rule> = [
  (obj, errors) => {
    const spec = objectAt(obj, "spec")
    const names = objectAt(spec, "names")
    const name = str(valueAt(obj, "metadata.name"))
    const required = `${str(names.plural)}.${str(spec.group)}`
    if (name !== "" && name !== required) {
      errors.push(Field.invalid("metadata.name", name, "must be spec.names.plural+\".\"+spec.group"))
    }
    const group = str(spec.group)
    if (group === "") errors.push(Field.required("spec.group", ""))
    else {
      const msgs = Names.isDns1123Subdomain(group)
      if (msgs.length > 0) errors.push(Field.invalid("spec.group", group, msgs.join(",")))
      else if (group.split(".").length < 2) errors.push(Field.invalid("spec.group", group, "should be a domain with at least one dot"))
    }
    oneOf(["Cluster", "Namespaced"], "required")(spec.scope, "spec.scope", errors)
    const versions = Array.isArray(spec.versions) ? spec.versions : []
    if (versions.length === 0) {
      const message = "must have exactly one version marked as storage version"
      errors.push(Field.invalid("spec.versions", goVersions(spec.versions), message))
    }
    let storage = 0
    const seen = new Set<string>()
    let unique = true
    versions.forEach((v, i) => {
      const version = isObject(v) ? v : {}
      const at = index("spec.versions", i)
      if (version.storage === true) storage++
      const vName = str(version.name)
      if (seen.has(vName)) unique = false
      seen.add(vName)
      dns1035(vName, child(at, "name"), errors)
      const schema = valueAt(version, "schema.openAPIV3Schema")
      if (!isObject(schema)) errors.push(Field.required(child(at, "schema.openAPIV3Schema"), "schemas are required"))
      else structural(schema, child(at, "schema.openAPIV3Schema"), errors, true)
    })
    if (!unique) {
      errors.push(Field.invalid("spec.versions", goVersions(versions), "must contain unique version names"))
    }
    if (versions.length > 0 && storage !== 1) {
      errors.push(Field.invalid(
        "spec.versions",
        goVersions(versions),
        "must have exactly one version marked as storage version"
      ))
    }
    for (const f of ["plural", "singular", "kind", "listKind"]) {
      if (str(names[f]) === "") errors.push(Field.required(child("spec.names", f), ""))
    }
    if (str(names.plural) !== "") dns1035(str(names.plural), "spec.names.plural", errors)
    if (str(names.singular) !== "") dns1035(str(names.singular), "spec.names.singular", errors)
    for (const f of ["kind", "listKind"]) {
      const value = str(names[f])
      if (value === "") continue
      const msgs = Names.isDns1035Label(value.toLowerCase())
      if (msgs.length > 0) {
        errors.push(Field.invalid(child("spec.names", f), value, `may have mixed case, but should otherwise match: ${msgs.join(",")}`))
      }
    }
    const shortNames = Array.isArray(names.shortNames) ? names.shortNames : []
    shortNames.forEach((s, i) => dns1035(str(s), index("spec.names.shortNames", i), errors))
    if (str(names.kind) !== "" && names.kind === names.listKind) {
      errors.push(Field.invalid("spec.names.listKind", names.listKind, "kind and listKind may not be the same"))
    }
    const categories = Array.isArray(names.categories) ? names.categories : []
    categories.forEach((c, i) => dns1035(str(c), index("spec.names.categories", i), errors))
  },
  (obj, errors, old) => {
    if (old === undefined) return
    const conditions = valueAt(old, "status.conditions")
    const established = Array.isArray(conditions) &&
      conditions.some((c) => isObject(c) && c.type === "Established" && c.status === "True")
    // what storage depends on, once established; what the CRD's name is made of, always
    const immutable = established
      ? ["spec.scope", "spec.names.kind", "spec.group", "spec.names.plural"]
      : ["spec.group", "spec.names.plural"]
    for (const path of immutable) {
      const now = valueAt(obj, path)
      if (now !== valueAt(old, path)) errors.push(Field.immutable(path, now ?? ""))
    }
    const stored = valueAt(obj, "status.storedVersions")
    const versions = valueAt(obj, "spec.versions")
    if (Array.isArray(stored) && Array.isArray(versions)) {
      stored.forEach((s, i) => {
        if (!versions.some((v) => isObject(v) && v.name === s)) {
          errors.push(Field.invalid(index("status.storedVersions", i), s, "must appear in spec.versions"))
        }
      })
    }
  }
]

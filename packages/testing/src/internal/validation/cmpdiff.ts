/**
 * The `cmp.Diff(old, new)` that kube-apiserver appends to an immutability message (a pod's or
 * a claim's spec), written as go-cmp's reporter writes it: the root type, one record per Go
 * field in struct order, a changed leaf as a `-` and a `+` record, a changed struct or slice
 * descended into, runs of equal records cut to two records of context around each change and
 * the rest counted (`... // 28 identical fields`), single-line records' keys aligned, equal
 * values in Go syntax without their types and without zero fields.
 *
 * The Go layout comes from the protobuf schema of the v1 types (their Go field order, types,
 * pointers), named as the internal types (`core.PodSpec`). What cannot be matched byte for
 * byte: go-cmp writes each line's prefix with a regular or a non-breaking space chosen at random
 * per process, on purpose, so that nobody depends on its output; the internal types' layout
 * differs from v1's in a few places (a PodSpec's host namespaces sit in its security context),
 * which changes the counts of identical fields there; values of types with their own equality
 * (Quantity) are written from what the JSON holds.
 *
 * @internal
 */
import { isObject, type JsonObject } from "../store/json.js"
import { schema } from "../protocols/protobuf/schema.js"

/** One Go field: its JSON name, Go name, type (`s`, `i`, `b`, `f`, `y`, a struct, `{type}` a map) and flags. */
interface GoField {
  readonly json: string
  readonly name: string
  readonly type: string
  readonly pointer: boolean
  readonly repeated: boolean
  /** Embedded (`json:",inline"`, as a Volume's VolumeSource): its fields are the parent's. */
  readonly inline: boolean
}

/** A field's value in its parent's JSON (the parent itself for an embedded struct). */
const valueIn = (parent: JsonObject, f: GoField): unknown => (f.inline ? parent : parent[f.json])

/** Leading words Go writes in capitals (`apiVersion` -> `APIVersion`, `dnsPolicy` -> `DNSPolicy`). */
const initialisms = new Set([
  ..."api uid dns os tty http tcp grpc ip url cidr tls fs se nfs iscsi rbd csi fc gce aws".split(" ")
])

/** The Go name of a JSON field (`image` -> `Image`; the few renamed ones by name). */
const goName = (json: string): string => {
  if (json === "serviceAccount") return "DeprecatedServiceAccount"
  const lead = /^[a-z]+/.exec(json)?.[0] ?? ""
  if (initialisms.has(lead)) return lead.toUpperCase() + json.slice(lead.length)
  return json.charAt(0).toUpperCase() + json.slice(1)
}

/** The pod's host namespaces: v1 fields of PodSpec that the internal type keeps in its PodSecurityContext. */
const podHostFields = ["hostNetwork", "hostPID", "hostIPC", "shareProcessNamespace", "hostUsers"]

/**
 * Where an internal type's layout differs from its v1 one: the internal PodSpec has neither the
 * deprecated `serviceAccount` nor the host namespaces, which open its PodSecurityContext.
 */
const internalLayouts: Readonly<Record<string, string>> = {
  "core/v1.PodSpec": schema["core/v1.PodSpec"]!.split(" ")
    .filter((f) => ![...podHostFields, "serviceAccount"].includes(f.split(":")[0]!))
    .join(" ")
    .replace("core/v1.PodSecurityContext", "internal.PodSecurityContext"),
  "internal.PodSecurityContext": `hostNetwork:0:b:o hostPID:0:b:o hostIPC:0:b:o shareProcessNamespace:0:b:po ` +
    `hostUsers:0:b:po ${schema["core/v1.PodSecurityContext"]}`
}

/** A v1 PodSpec as the internal type holds it: its host namespaces in its security context. */
const internalPodSpec = (spec: JsonObject): JsonObject => {
  const out: JsonObject = {}
  const securityContext: JsonObject = {}
  for (const f of podHostFields) if (spec[f] !== undefined) securityContext[f] = spec[f]
  Object.assign(securityContext, isObject(spec.securityContext) ? spec.securityContext : {})
  for (const [k, v] of Object.entries(spec)) if (!podHostFields.includes(k)) out[k] = v
  out.securityContext = securityContext
  return out
}

const fieldsCache = new Map<string, ReadonlyArray<GoField>>()

/** A struct's fields in Go order, from the protobuf schema. */
const fieldsOf = (type: string): ReadonlyArray<GoField> | undefined => {
  const cached = fieldsCache.get(type)
  if (cached !== undefined) return cached
  const text = internalLayouts[type] ?? schema[type]
  if (text === undefined) return undefined
  const fields = text.split(" ").filter((f) => f !== "").map((spec) => {
    const [json, , fieldType, flags] = spec.split(":") as [string, string, string, string]
    const inline = json === "undefined"
    const name = inline ? fieldType.slice(fieldType.indexOf(".") + 1) : goName(json)
    return { json, name, type: fieldType, pointer: flags.includes("p"), repeated: flags.includes("r"), inline }
  })
  fieldsCache.set(type, fields)
  return fields
}

/** The internal type's name: `core/v1.Container` -> `core.Container`, `meta/v1.LabelSelector` -> `v1.LabelSelector`. */
const goTypeName = (type: string): string => {
  if (type.startsWith("internal.")) return `core.${type.slice("internal.".length)}`
  const m = /^([a-z0-9]+)\/v[0-9a-z]+\.(\w+)$/.exec(type)
  if (m === null) return type
  return m[1] === "meta" ? `v1.${m[2]}` : `${m[1]}.${m[2]}`
}

const scalarType: Readonly<Record<string, string>> = { s: "string", i: "int64", b: "bool", f: "float64", y: "[]uint8" }

/** The named string types of slices in the specs whose diffs are printed (the schema knows them as strings). */
const namedElements: Readonly<Record<string, string>> = {
  accessModes: "core.PersistentVolumeAccessMode",
  add: "core.Capability",
  drop: "core.Capability"
}

/** The Go type of a field's value, as cmp prints it before a composite value. */
const typeOf = (f: GoField): string => {
  if (f.type === "{resource.Quantity}") return `${f.repeated ? "[]" : ""}core.ResourceList`
  const named = f.repeated && f.type === "s" ? namedElements[f.json] : undefined
  if (named !== undefined) return `[]${named}`
  const element = f.type.startsWith("{")
    ? `map[string]${typeOf({ ...f, type: f.type.slice(1, -1), repeated: false, pointer: false })}`
    : scalarType[f.type] ?? goTypeName(f.type)
  return `${f.repeated ? "[]" : ""}${f.pointer ? "*" : ""}${element}`
}

/** cmp's name of several records: `fields`, `elements`, `entries`. */
const plural = (name: string, count: number): string =>
  count === 1 ? name : name.endsWith("y") ? `${name.slice(0, -1)}ies` : `${name}s`

const isMap = (f: GoField): boolean => f.type.startsWith("{")
const isStruct = (f: GoField): boolean => fieldsOf(f.type) !== undefined
const isNil = (v: unknown): boolean => v === undefined || v === null

/** Whether a value is Go's zero value of its field (`value.IsZero`): nil, `""`, 0, false, a struct of zeros. */
const isZero = (v: unknown, f: GoField): boolean => {
  if (isNil(v)) return true
  if (f.repeated || isMap(f) || f.pointer) return false
  if (isStruct(f)) return isObject(v) && fieldsOf(f.type)!.every((g) => isZero(valueIn(v, g), g))
  return v === "" || v === 0 || v === false
}

/** Go equality of two values of a field (`apiequality.Semantic.DeepEqual`, absent as zero). */
const equal = (a: unknown, b: unknown, f: GoField): boolean => {
  if (isNil(a) || isNil(b)) {
    return (f.repeated || isMap(f) || f.pointer) ? isNil(a) && isNil(b) : isZero(a, f) && isZero(b, f)
  }
  if (f.repeated) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false
    const one = { ...f, repeated: false }
    return a.every((x, i) => equal(x, b[i], one))
  }
  if (isMap(f)) {
    if (!isObject(a) || !isObject(b)) return a === b
    const keys = new Set([...Object.keys(a), ...Object.keys(b)])
    const value = { ...f, type: f.type.slice(1, -1), pointer: false }
    return [...keys].every((k) => k in a && k in b && equal(a[k], b[k], value))
  }
  const fields = fieldsOf(f.type)
  if (fields !== undefined) {
    if (!isObject(a) || !isObject(b)) return false
    return fields.every((g) => equal(valueIn(a, g), valueIn(b, g), g))
  }
  return JSON.stringify(a) === JSON.stringify(b)
}

const quote = (s: string): string => JSON.stringify(s)

/** A Quantity as cmp prints one (its unexported amount elided, its cached string, its format). */
const quantity = (v: unknown): string => {
  const s = String(v)
  const format = /[KMGTPE]i$/.test(s)
    ? "BinarySI"
    : /e/i.test(s.replace(/[KMGTPE]i?$/, ""))
    ? "DecimalExponent"
    : "DecimalSI"
  return `{i: {...}, s: ${quote(s)}, Format: ${quote(format)}}`
}

/**
 * A value in Go syntax, on one line, as cmp prints an equal (or wholly removed or inserted)
 * value: nil, `&` before a pointer's target, zero fields left out, the type only where `typed`.
 */
const formatValue = (v: unknown, f: GoField, typed: boolean): string => {
  if (isNil(v)) {
    if (f.repeated || isMap(f) || f.pointer) return "nil"
    if (isStruct(f)) return typed ? `${typeOf(f)}{}` : "{}"
    return f.type === "s" ? `""` : f.type === "b" ? "false" : "0"
  }
  if (f.repeated) {
    const one = { ...f, repeated: false }
    const items = Array.isArray(v) ? v.map((x) => formatValue(x, one, false)).join(", ") : ""
    return `${typed ? typeOf(f) : ""}{${items}}`
  }
  if (isMap(f)) {
    const value = { ...f, type: f.type.slice(1, -1), pointer: false }
    const resourceNames = f.type === "{resource.Quantity}"
    const entries = isObject(v)
      ? Object.keys(v).sort().map((k) => `${resourceNames ? "s" : ""}${quote(k)}: ${formatValue(v[k], value, false)}`)
      : []
    return `${typed ? typeOf(f) : ""}{${entries.join(", ")}}`
  }
  const pointer = f.pointer ? "&" : ""
  const fields = fieldsOf(f.type)
  if (fields !== undefined) {
    const record = isObject(v) ? v : {}
    const body = fields.filter((g) => !isZero(valueIn(record, g), g))
      .map((g) => `${g.name}: ${formatValue(valueIn(record, g), g, false)}`)
    return `${pointer}${typed ? goTypeName(f.type) : ""}{${body.join(", ")}}`
  }
  if (f.type === "resource.Quantity") return quantity(v)
  if (f.type === "intstr.IntOrString") {
    return typeof v === "number" ? `{IntVal: ${v}}` : `{Type: 1, StrVal: ${quote(String(v))}}`
  }
  return `${pointer}${typeof v === "string" ? quote(v) : String(v)}`
}

/** One record of a list: a line (`key: value`), a nested list, or the count of elided equal records. */
type DiffRecord =
  | { readonly _tag: "Line"; readonly diff: " " | "-" | "+"; readonly key: string; readonly value: string }
  | {
    readonly _tag: "Nested"
    readonly key: string
    readonly open: string
    readonly records: ReadonlyArray<DiffRecord>
  }
  | { readonly _tag: "Ellipsis"; readonly count: number; readonly name: string }

/** One record to compare: its key (a Go field name, none for an element), the old and new values, their field. */
interface DiffItem {
  readonly key: string
  readonly a: unknown
  readonly b: unknown
  readonly field: GoField
}

/** The records of a struct's fields. */
const fieldItems = (fields: ReadonlyArray<GoField>, a: JsonObject, b: JsonObject): Array<DiffItem> =>
  fields.map((g) => ({ key: g.name, a: valueIn(a, g), b: valueIn(b, g), field: g }))

/** An element only one side of a slice has. */
const element = (diff: "-" | "+", value: unknown, f: GoField): DiffRecord => ({
  _tag: "Line",
  diff,
  key: "",
  value: formatValue(value, f, false)
})

/** The records of one struct, slice or map: equal runs cut to two records of context, changes shown. */
const diffList = (items: ReadonlyArray<DiffItem>, name: string): Array<DiffRecord> => {
  const out: Array<DiffRecord> = []
  const same = items.map((it) => equal(it.a, it.b, it.field))
  // runs of equal and of changed records, as coalesceAdjacentRecords groups them
  const groups: Array<{ readonly equal: boolean; readonly from: number; to: number }> = []
  for (let i = 0; i < items.length; i++) {
    const last = groups[groups.length - 1]
    if (last !== undefined && last.equal === same[i]) last.to = i + 1
    else groups.push({ equal: same[i]!, from: i, to: i + 1 })
  }
  groups.forEach((group, g) => {
    if (group.equal) {
      const count = group.to - group.from
      let lo = g === 0 ? 0 : Math.min(2, count)
      let hi = g === groups.length - 1 ? 0 : Math.min(2, count - lo)
      if (count - (lo + hi) === 1) hi++ // no ellipsis for a single record
      for (let i = group.from; i < group.from + lo; i++) out.push(equalLine(items[i]!))
      if (count > lo + hi) out.push({ _tag: "Ellipsis", count: count - lo - hi, name })
      for (let i = group.to - hi; i < group.to; i++) out.push(equalLine(items[i]!))
      return
    }
    for (let i = group.from; i < group.to; i++) out.push(...changed(items[i]!))
  })
  return out
}

const equalLine = (it: DiffItem): DiffRecord => ({
  _tag: "Line",
  diff: " ",
  key: it.key,
  value: formatValue(it.b, it.field, false)
})

/**
 * A changed record: descended into, as cmp does unless the change is a single chain (a value
 * against nil, one field of a one-field struct, an empty slice against one element); else the
 * old value removed and the new one inserted, typed.
 */
const changed = (it: DiffItem): Array<DiffRecord> => {
  const f = it.field
  const fields = fieldsOf(f.type)
  const { a, b } = it
  if (!f.repeated && !isMap(f) && fields !== undefined && fields.length > 1 && isObject(a) && isObject(b)) {
    const records = diffList(fieldItems(fields, a, b), "field")
    const open = `${f.pointer ? "&" : ""}${it.key === "" ? "" : goTypeName(f.type)}{`
    return [{ _tag: "Nested", key: it.key, open, records }]
  }
  if (f.repeated && Array.isArray(a) && Array.isArray(b) && a.length + b.length > 1) {
    const one = { ...f, repeated: false }
    const records: Array<DiffRecord> = []
    const paired = Math.min(a.length, b.length)
    records.push(...diffList(a.slice(0, paired).map((x, i) => ({ key: "", a: x, b: b[i], field: one })), "element"))
    for (const x of a.slice(paired)) records.push(element("-", x, one))
    for (const y of b.slice(paired)) records.push(element("+", y, one))
    return [{ _tag: "Nested", key: it.key, open: `${it.key === "" ? "" : typeOf(f)}{`, records }]
  }
  // both sides are there (a field), nil or not: `- Limits: nil,` then `+ Limits: core.ResourceList{...},`
  const typed = it.key !== ""
  return [
    { _tag: "Line", diff: "-", key: it.key, value: formatValue(a, f, typed) },
    { _tag: "Line", diff: "+", key: it.key, value: formatValue(b, f, typed) }
  ]
}

/** Writes records as go-cmp's textList writes them expanded: a line each, keys aligned within runs of lines. */
const render = (records: ReadonlyArray<DiffRecord>, depth: number, lines: Array<string>): void => {
  const indent = "\t".repeat(depth)
  // the key width of each run of consecutive keyed single-line records
  const widths: Array<number> = []
  for (let i = 0; i < records.length;) {
    let j = i
    while (j < records.length && records[j]!._tag === "Line" && (records[j] as { key: string }).key !== "") j++
    const width = Math.max(0, ...records.slice(i, j).map((r) => (r as { key: string }).key.length))
    for (let k = i; k < j; k++) widths[k] = width
    if (j === i) widths[i++] = 0
    else i = j
  }
  records.forEach((r, i) => {
    if (r._tag === "Ellipsis") {
      lines.push(`  ${indent}... // ${r.count} identical ${plural(r.name, r.count)}`)
      return
    }
    if (r._tag === "Line") {
      const key = r.key === "" ? "" : `${r.key}: ${" ".repeat(widths[i]! - r.key.length)}`
      lines.push(`${r.diff} ${indent}${key}${r.value},`)
      return
    }
    lines.push(`  ${indent}${r.key === "" ? "" : `${r.key}: `}${r.open}`)
    render(r.records, depth + 1, lines)
    lines.push(`  ${indent}},`)
  })
}

/**
 * `cmp.Diff(old, now)` of two objects of a v1 struct type (`core/v1.PodSpec`), under its
 * internal type's name, ending in a newline as cmp's output does.
 *
 * @internal
 */
export const cmpDiff = (type: string, before: JsonObject, after: JsonObject): string => {
  const [old, now] = type === "core/v1.PodSpec" ? [internalPodSpec(before), internalPodSpec(after)] : [before, after]
  const fields = fieldsOf(type) ?? []
  const records = diffList(fieldItems(fields, old, now), "field")
  const lines = [`  ${goTypeName(type)}{`]
  render(records, 1, lines)
  lines.push("  }")
  return `${lines.join("\n")}\n`
}

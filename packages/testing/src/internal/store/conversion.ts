/**
 * Resources served in one group-version and stored as another's objects, with the
 * conversion between the two, as kube-apiserver serves events.k8s.io/v1 Events out of the
 * core v1 Events' storage (one key space, `/registry/events/<ns>/<name>`): the same
 * objects, resourceVersions and uids through either API, each field mapped as
 * pkg/apis/events/v1's conversion maps it, and each version's field selector labels
 * mapped onto the stored kind's.
 *
 * An object the API server converts has been through its Go struct: a field without
 * `omitempty` comes back as its zero value (`"reportingComponent": ""`), a struct as `{}`
 * and an unset time as `null`, in the struct's field order. Events written through either
 * API are put in that form before they are validated and stored.
 *
 * @internal
 */
import type { JsonObject } from "./json.js"

/** How a Go field without a value is written: left out (`omitempty` scalars, pointers), `{}`, `null` or `""`. */
type Zero = "omit" | "object" | "null" | "string"

/** One version's fields of a kind, in its Go struct's order, each with how its zero value is written. */
type GoFields = ReadonlyArray<readonly [string, Zero]>

/** A conversion between a served form and the stored one. @internal */
export interface Conversion {
  /** The stored object as the served version shows it. */
  readonly fromStorage: (obj: JsonObject, apiVersion: string) => JsonObject
  /** The served form as it is stored. */
  readonly toStorage: (obj: JsonObject) => JsonObject
  /** Puts an object of the served form in its Go form, in place. */
  readonly normalize: (obj: JsonObject) => void
  /** Served field selector label -> the stored kind's label; the served version supports these and no others. */
  readonly fieldLabels: Readonly<Record<string, string>>
}

const goValue = (value: unknown, zero: Zero): unknown => {
  const empty = value === undefined || value === null || (zero === "omit" && (value === "" || value === 0))
  if (!empty) return value
  return zero === "object" ? {} : zero === "null" ? null : zero === "string" ? "" : undefined
}

/** `from` written with `fields` (each read from `from[source(field)]`), after apiVersion, kind and metadata. */
const build = (
  from: JsonObject,
  apiVersion: string,
  fields: GoFields,
  source: (field: string) => string
): JsonObject => {
  const out: JsonObject = { apiVersion, kind: from.kind }
  if (from.metadata !== undefined) out.metadata = from.metadata
  for (const [field, zero] of fields) {
    const value = goValue(from[source(field)], zero)
    if (value !== undefined) out[field] = value
  }
  return out
}

/** Rewrites `obj` in place as `build` would write it with its own field names; fields it does not know stay last. */
const normalizeAs = (obj: JsonObject, fields: GoFields): void => {
  const known = new Set(["apiVersion", "kind", "metadata", ...fields.map(([f]) => f)])
  const next = build(obj, obj.apiVersion as string, fields, (f) => f)
  const rest: JsonObject = {}
  for (const k of Object.keys(obj)) {
    if (!known.has(k)) rest[k] = obj[k]
    delete obj[k]
  }
  Object.assign(obj, next, rest)
}

/** core/v1 Event (k8s.io/api/core/v1 types.go). */
const coreEventFields: GoFields = [
  ["involvedObject", "object"],
  ["reason", "omit"],
  ["message", "omit"],
  ["source", "object"],
  ["firstTimestamp", "null"],
  ["lastTimestamp", "null"],
  ["count", "omit"],
  ["type", "omit"],
  ["eventTime", "null"],
  ["series", "omit"],
  ["action", "omit"],
  ["related", "omit"],
  ["reportingComponent", "string"],
  ["reportingInstance", "string"]
]

/** events.k8s.io/v1 Event (k8s.io/api/events/v1 types.go). */
const eventsEventFields: GoFields = [
  ["eventTime", "null"],
  ["series", "omit"],
  ["reportingController", "omit"],
  ["reportingInstance", "omit"],
  ["action", "omit"],
  ["reason", "omit"],
  ["regarding", "object"],
  ["related", "omit"],
  ["note", "omit"],
  ["type", "omit"],
  ["deprecatedSource", "object"],
  ["deprecatedFirstTimestamp", "null"],
  ["deprecatedLastTimestamp", "null"],
  ["deprecatedCount", "omit"]
]

/** events.k8s.io field -> core field, where the names differ (Convert_v1_Event_To_core_Event). */
const eventsToCore: Readonly<Record<string, string>> = {
  regarding: "involvedObject",
  note: "message",
  reportingController: "reportingComponent",
  deprecatedSource: "source",
  deprecatedFirstTimestamp: "firstTimestamp",
  deprecatedLastTimestamp: "lastTimestamp",
  deprecatedCount: "count"
}

const coreToEvents: Readonly<Record<string, string>> = Object.fromEntries(
  Object.entries(eventsToCore).map(([events, core]) => [core, events])
)

/**
 * events.k8s.io/v1 Events stored as core v1 Events; the field labels of
 * `AddFieldLabelConversionsForEvent`.
 *
 * @internal
 */
export const eventsEvent: Conversion = {
  fromStorage: (obj, apiVersion) => build(obj, apiVersion, eventsEventFields, (f) => eventsToCore[f] ?? f),
  toStorage: (obj) => build(obj, "v1", coreEventFields, (f) => coreToEvents[f] ?? f),
  normalize: (obj) => normalizeAs(obj, eventsEventFields),
  fieldLabels: {
    "regarding.kind": "involvedObject.kind",
    "regarding.namespace": "involvedObject.namespace",
    "regarding.name": "involvedObject.name",
    "regarding.uid": "involvedObject.uid",
    "regarding.apiVersion": "involvedObject.apiVersion",
    "regarding.resourceVersion": "involvedObject.resourceVersion",
    "regarding.fieldPath": "involvedObject.fieldPath",
    reason: "reason",
    reportingController: "reportingComponent",
    source: "source",
    type: "type"
  }
}

/** Puts a core v1 Event in its Go form, in place (what the API server stores and answers). @internal */
export const normalizeCoreEvent = (obj: JsonObject): void => normalizeAs(obj, coreEventFields)

/** Whether an object is in the form of the group its `apiVersion` names. @internal */
export const inGroup = (obj: JsonObject, group: string): boolean => {
  const apiVersion = obj.apiVersion
  if (typeof apiVersion !== "string") return false
  const slash = apiVersion.indexOf("/")
  return group === "" ? slash === -1 : slash === group.length && apiVersion.startsWith(group)
}

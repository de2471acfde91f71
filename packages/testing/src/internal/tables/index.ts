/**
 * The Table form of answers (`Accept: application/json;as=Table;g=meta.k8s.io;v=v1`), as
 * the API server's `asTable` builds it: the kind's printer (a CRD's columns for custom
 * resources), the list's or the object's resourceVersion, and each row's object as
 * `includeObject` asks (PartialObjectMetadata by default, the whole object, or none).
 * A watch answers one Table per event, with the column definitions in the first only.
 *
 * @internal
 */
import { isObject, type JsonObject } from "../store/json.js"
import { apiVersionOf, type KindInfo } from "../store/kinds.js"
import type { FakeState } from "../store/state.js"
import * as Status from "../serve/statusBodies.js"
import { type Entry, keyOf } from "../store/store.js"
import { customPrinter } from "./custom.js"
import { defaultPrinter, type Printer, printers } from "./printers.js"

/** What a Table request asks for. @internal */
export interface TableRequest {
  /** `v1` or `v1beta1` of meta.k8s.io. */
  readonly version: string
  readonly includeObject: "Metadata" | "Object" | "None"
}

/** The `includeObject` query parameter, 400 for a value the server does not know. @internal */
export const tableRequest = (version: string, query: Record<string, string>): TableRequest => {
  const value = query.includeObject ?? ""
  if (value === "" || value === "Metadata") return { version, includeObject: "Metadata" }
  if (value === "Object" || value === "None") return { version, includeObject: value }
  throw Status.badRequest(`unrecognized includeObject value: ${JSON.stringify(value)}`)
}

const compiled = new WeakMap<Entry, Map<string, Printer>>()

/** A custom kind's CRD, as stored (none for kinds registered by options). */
const crdOf = (state: FakeState, kind: KindInfo): Entry | undefined => {
  const crds = state.registry.byResource("apiextensions.k8s.io", "v1", "customresourcedefinitions")
  if (crds === undefined) return undefined
  return state.store.existing(crds)?.entries.get(keyOf("", `${kind.plural}.${kind.group}`))
}

const printerFor = (state: FakeState, kind: KindInfo, version: string): Printer => {
  if (!kind.custom) return printers[`${kind.group}/${kind.plural}`] ?? defaultPrinter
  const crd = crdOf(state, kind)
  if (crd === undefined) return customPrinter(undefined, version)
  // compiled once per stored version of the CRD (a new write is a new entry)
  let byVersion = compiled.get(crd)
  if (byVersion === undefined) compiled.set(crd, byVersion = new Map())
  let printer = byVersion.get(version)
  if (printer === undefined) byVersion.set(version, printer = customPrinter(crd.obj, version))
  return printer
}

const rowJson = (printer: Printer, item: JsonObject, request: TableRequest, now: number): string => {
  const row = printer.row(item, now)
  let out = `{"cells":${JSON.stringify(row.cells)}`
  if (row.conditions !== undefined) out += `,"conditions":${JSON.stringify(row.conditions)}`
  if (request.includeObject === "Object") out += `,"object":${JSON.stringify(item)}`
  // RawExtension's nil object is encoded as null, not left out
  else if (request.includeObject === "None") out += `,"object":null`
  else if (request.includeObject === "Metadata") {
    out += `,"object":{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/${request.version}","metadata":${
      JSON.stringify(isObject(item.metadata) ? item.metadata : {})
    }}`
  }
  return `${out}}`
}

const tableJson = (
  printer: Printer,
  items: ReadonlyArray<JsonObject>,
  metadata: JsonObject,
  request: TableRequest,
  headers: boolean,
  now: number
): string =>
  `{"kind":"Table","apiVersion":"meta.k8s.io/${request.version}","metadata":${JSON.stringify(metadata)},` +
  `"columnDefinitions":${headers ? JSON.stringify(printer.columns) : "null"},` +
  `"rows":[${items.map((item) => rowJson(printer, item, request, now)).join(",")}]}`

const objectMetadata = (obj: JsonObject): JsonObject => {
  const rv = isObject(obj.metadata) ? obj.metadata.resourceVersion : undefined
  return typeof rv === "string" && rv !== "" ? { resourceVersion: rv } : {}
}

/**
 * A list answer (its items and list metadata) or one object as a Table of the kind, at
 * the fake's time `now` (ms).
 *
 * @internal
 */
export const table = (
  state: FakeState,
  kind: KindInfo,
  version: string,
  body: JsonObject,
  request: TableRequest,
  now: number
): string => {
  const printer = printerFor(state, kind, version)
  if (body.kind === kind.listKind && Array.isArray(body.items)) {
    const metadata = isObject(body.metadata) ? body.metadata : {}
    // a row's object is converted to the served version, so it names its kind as the list's items do not
    const typeMeta = { apiVersion: apiVersionOf(kind.group, version), kind: kind.kind }
    const items = body.items.filter(isObject).map((item) => item.kind === undefined ? { ...typeMeta, ...item } : item)
    return tableJson(printer, items, metadata, request, true, now)
  }
  return tableJson(printer, [body], objectMetadata(body), request, true, now)
}

/**
 * Turns watch event lines into Table events: each event's object becomes a one-row
 * Table, the column definitions only in the first; ERROR events (a Status) pass as they are.
 *
 * @internal
 */
export const tableEvents = (
  state: FakeState,
  kind: KindInfo,
  version: string,
  request: TableRequest,
  now: () => number
): (line: string) => string => {
  let headers = true
  return (line) => {
    const event = JSON.parse(line) as { readonly type: string; readonly object: JsonObject }
    if (event.type === "ERROR") return line
    const printer = printerFor(state, kind, version)
    const out = tableJson(printer, [event.object], objectMetadata(event.object), request, headers, now())
    headers = false
    return `{"type":"${event.type}","object":${out}}\n`
  }
}

/**
 * Field ownership for server-side apply: which manager owns which fields of an
 * object, kept as sets of paths in the structured-merge-diff encoding (`f:spec`,
 * `k:{"name":"web"}`, `v:"x"`), rendered as `metadata.managedFields` (`FieldsV1`).
 *
 * A simplification of the real thing: ownership is by leaf and by list element, lists
 * with a known merge key are associative, all other lists are atomic.
 *
 * @internal
 */
import { clone, deepEqual, isObject, type JsonObject } from "../store/json.js"
import { mergeKeyFor } from "./patch.js"

/** @internal */
export interface ManagerEntry {
  readonly manager: string
  readonly operation: "Apply" | "Update"
  readonly apiVersion: string
  readonly time: string
  readonly fields: ReadonlySet<string>
  /** The subresource the manager wrote through (`status`, `scale`, ...); the object itself when absent. */
  readonly subresource?: string | undefined
}

/** Whether an entry is the one a manager's operation through a subresource (or the object) keeps. */
const isEntryOf = (
  e: ManagerEntry,
  manager: string,
  operation: ManagerEntry["operation"],
  subresource: string | undefined
): boolean => e.manager === manager && e.operation === operation && e.subresource === subresource

/** Which part of an object a write owns fields in: `.status` through the status subresource, the rest otherwise. */
export type Domain = "main" | "status"

/** The part of the object a write through a subresource (or the object itself) changes. @internal */
export const domainOf = (subresource: string | undefined): Domain => (subresource === "status" ? "status" : "main")

/** Whether a path lies in a domain (`f:status...` in the status one). @internal */
export const inDomain = (path: string, domain: Domain): boolean =>
  (path === "f:status" || path.startsWith("f:status\n")) === (domain === "status")

/** A field another manager owns with a different value. @internal */
export interface Conflict {
  readonly entry: ManagerEntry
  readonly path: string
}

const SEP = "\n"

const serverMetadata = new Set([
  "name",
  "namespace",
  "uid",
  "resourceVersion",
  "generation",
  "creationTimestamp",
  "managedFields",
  "deletionTimestamp",
  "deletionGracePeriodSeconds",
  "selfLink",
  "generateName"
])

const setLists = new Set(["finalizers"])

const isScalar = (u: unknown): boolean => u === null || typeof u !== "object"

/**
 * The maps and lists whose own node an Update owns besides their members (structured-merge-diff's `.` entry): what
 * the zero value of the Go type does not have, so a write adds it. Without the built-in kinds' schemas (which say
 * which fields are omitempty) this is the maps every object has (labels, annotations, ConfigMap and Secret data) and
 * finalizers.
 */
const ownsNode = (path: string, field: string): boolean =>
  ((field === "labels" || field === "annotations") && path.endsWith(`f:metadata${SEP}f:${field}`)) ||
  path === "f:data" || path === "f:binaryData"

const walk = (value: unknown, path: string, field: string, out: Set<string>, nodes?: Set<string>): void => {
  if (isObject(value)) {
    const keys = Object.keys(value)
    if (keys.length === 0 && path !== "") out.add(path)
    else if (nodes !== undefined && ownsNode(path, field) && keys.some((k) => value[k] !== undefined && value[k] !== null)) {
      out.add(path)
      nodes.add(path)
    }
    for (const k of keys) {
      const v = value[k]
      if (v === undefined || v === null) continue
      walk(v, path === "" ? `f:${k}` : `${path}${SEP}f:${k}`, k, out, nodes)
    }
    return
  }
  if (Array.isArray(value)) {
    const key = mergeKeyFor(field, value)
    if (key !== undefined && value.length > 0 && value.every((item) => isObject(item) && item[key] !== undefined)) {
      for (const item of value as Array<JsonObject>) {
        const element = `${path}${SEP}k:${JSON.stringify({ [key]: item[key] })}`
        out.add(element)
        for (const k of Object.keys(item)) {
          if (item[k] === undefined || item[k] === null) continue
          walk(item[k], `${element}${SEP}f:${k}`, k, out, nodes)
        }
      }
      return
    }
    if (setLists.has(field) && value.length > 0 && value.every(isScalar)) {
      if (nodes !== undefined) {
        out.add(path)
        nodes.add(path)
      }
      for (const item of value) out.add(`${path}${SEP}v:${JSON.stringify(item)}`)
      return
    }
  }
  out.add(path)
}

/**
 * The owned paths an object sets in a domain: leaves and list elements, without server
 * fields; the main domain leaves `.status` out, the status domain is `.status` alone.
 *
 * @internal
 */
export const fieldPaths = (obj: JsonObject, domain: Domain = "main", nodes?: Set<string>): Set<string> => {
  const out = new Set<string>()
  if (domain === "status") {
    const status = obj.status
    if (status !== undefined && status !== null) walk(status, "f:status", "status", out, nodes)
    return out
  }
  for (const k of Object.keys(obj)) {
    if (k === "apiVersion" || k === "kind" || k === "status") continue
    const v = obj[k]
    if (v === undefined || v === null) continue
    if (k === "metadata" && isObject(v)) {
      for (const mk of Object.keys(v)) {
        if (serverMetadata.has(mk) || v[mk] === undefined || v[mk] === null) continue
        walk(v[mk], `f:metadata${SEP}f:${mk}`, mk, out, nodes)
      }
      continue
    }
    walk(v, `f:${k}`, k, out, nodes)
  }
  return out
}

const findElement = (list: unknown, segment: string): number => {
  if (!Array.isArray(list)) return -1
  if (segment.startsWith("k:")) {
    const key = JSON.parse(segment.slice(2)) as JsonObject
    const name = Object.keys(key)[0]!
    return list.findIndex((item) => isObject(item) && deepEqual(item[name], key[name]))
  }
  const wanted = JSON.parse(segment.slice(2))
  return list.findIndex((item) => deepEqual(item, wanted))
}

/** The value at a path, or `undefined`. @internal */
export const valueAt = (obj: unknown, path: string): unknown => {
  let node = obj
  for (const segment of path.split(SEP)) {
    if (segment.startsWith("f:")) {
      if (!isObject(node)) return undefined
      node = node[segment.slice(2)]
    } else {
      const index = findElement(node, segment)
      if (index === -1) return undefined
      node = (node as Array<unknown>)[index]
    }
  }
  return node
}

/** Removes the field or list element at a path, when present. @internal */
export const removeAt = (obj: JsonObject, path: string): void => {
  const segments = path.split(SEP)
  let node: unknown = obj
  for (let i = 0; i < segments.length - 1; i++) {
    const segment = segments[i]!
    if (segment.startsWith("f:")) {
      if (!isObject(node)) return
      node = node[segment.slice(2)]
    } else {
      const index = findElement(node, segment)
      if (index === -1) return
      node = (node as Array<unknown>)[index]
    }
  }
  const last = segments[segments.length - 1]!
  if (last.startsWith("f:")) {
    if (isObject(node)) delete node[last.slice(2)]
  } else if (Array.isArray(node)) {
    const index = findElement(node, last)
    if (index !== -1) node.splice(index, 1)
  }
}

/** `.spec.containers[name="web"].image`, as structured-merge-diff prints a path. @internal */
export const formatPath = (path: string): string =>
  path.split(SEP).map((segment) => {
    if (segment.startsWith("f:")) return `.${segment.slice(2)}`
    if (segment.startsWith("k:")) {
      const key = JSON.parse(segment.slice(2)) as JsonObject
      return `[${Object.entries(key).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(",")}]`
    }
    return `[=${segment.slice(2)}]`
  }).join("")

/** Paths that may not sort segment by segment as whole strings: a segment holding a character below the separator. */
const unsortable = /[\u0000-\u0009]/

/** A fieldsV1 tree with its members in the order structured-merge-diff writes them (`.` first, then sorted). */
const sortTree = (tree: JsonObject): JsonObject => {
  const out: JsonObject = {}
  for (const k of Object.keys(tree).sort()) out[k] = sortTree(tree[k] as JsonObject)
  return out
}

/**
 * The `fieldsV1` tree of a set of paths. The paths are sorted first, so that each member
 * is added in the order structured-merge-diff writes it (a parent before its children,
 * `.` before the fields of a list element) and the tree needs no second, sorting pass.
 */
const fieldsTree = (fields: ReadonlySet<string>): JsonObject => {
  const paths = [...fields].sort()
  const tree: JsonObject = {}
  for (let i = 0; i < paths.length; i++) {
    const path = paths[i]!
    // a path owned itself whose members follow (they sort right after it): its `.` entry comes first
    const owned = paths[i + 1]?.startsWith(`${path}${SEP}`) === true
    let node = tree
    let start = 0
    for (;;) {
      const end = path.indexOf(SEP, start)
      const segment = end === -1 ? path.slice(start) : path.slice(start, end)
      const last = end === -1
      let next = node[segment] as JsonObject | undefined
      // a list element's own path comes before its fields' paths
      if (next === undefined) next = node[segment] = last && (owned || segment.startsWith("k:")) ? { ".": {} } : {}
      node = next
      if (last) break
      start = end + 1
    }
  }
  return paths.some((path) => unsortable.test(path)) ? sortTree(tree) : tree
}

/** Each entry's rendering: entries are never changed, and a write keeps the ones it does not touch. */
const renderedEntries = new WeakMap<ManagerEntry, JsonObject>()

/**
 * `metadata.managedFields` for the entries (shared between the stored versions that keep an
 * entry: stored objects are read-only). @internal
 */
export const render = (entries: ReadonlyArray<ManagerEntry>): Array<JsonObject> =>
  entries.map((entry) => {
    const cached = renderedEntries.get(entry)
    if (cached !== undefined) return cached
    const rendered: JsonObject = {
      manager: entry.manager,
      operation: entry.operation,
      apiVersion: entry.apiVersion,
      time: entry.time,
      fieldsType: "FieldsV1",
      fieldsV1: fieldsTree(entry.fields)
    }
    if (entry.subresource !== undefined) rendered.subresource = entry.subresource
    renderedEntries.set(entry, rendered)
    return rendered
  })

const pathsOf = (tree: JsonObject, prefix: string, out: Set<string>): void => {
  for (const k of Object.keys(tree)) {
    if (k === ".") continue
    const path = prefix === "" ? k : `${prefix}${SEP}${k}`
    const node = isObject(tree[k]) ? (tree[k] as JsonObject) : {}
    const children = Object.keys(node)
    if (children.length === 0 || node["."] !== undefined) out.add(path)
    pathsOf(node, path, out)
  }
}

/**
 * The entries a client wrote into `metadata.managedFields` (a PUT or a patch may set
 * them), or undefined when they do not decode: each needs an `Apply` or `Update`
 * operation and FieldsV1. `[{}]` decodes to no entry at all: the documented way to clear
 * them.
 *
 * @internal
 */
export const parse = (managedFields: unknown, time: string): Array<ManagerEntry> | undefined => {
  if (!Array.isArray(managedFields)) return undefined
  const out: Array<ManagerEntry> = []
  for (const raw of managedFields) {
    if (!isObject(raw)) return undefined
    if (Object.keys(raw).length === 0) continue
    const { apiVersion, fieldsType, fieldsV1, manager, operation, subresource } = raw
    if (operation !== "Apply" && operation !== "Update") return undefined
    if (fieldsType !== undefined && fieldsType !== "FieldsV1") return undefined
    const fields = new Set<string>()
    if (isObject(fieldsV1)) pathsOf(fieldsV1, "", fields)
    if (fields.size === 0) continue
    out.push({
      manager: typeof manager === "string" ? manager : "",
      operation,
      apiVersion: typeof apiVersion === "string" ? apiVersion : "",
      time: typeof raw.time === "string" ? raw.time : time,
      fields,
      subresource: typeof subresource === "string" && subresource !== "" ? subresource : undefined
    })
  }
  return out
}

const sameFields = (a: ReadonlySet<string>, b: ReadonlySet<string>): boolean => {
  if (a.size !== b.size) return false
  for (const x of a) if (!b.has(x)) return false
  return true
}

const upsert = (
  entries: ReadonlyArray<ManagerEntry>,
  manager: string,
  operation: ManagerEntry["operation"],
  apiVersion: string,
  fields: ReadonlySet<string>,
  subresource: string | undefined,
  time: string
): Array<ManagerEntry> => {
  const next: Array<ManagerEntry> = []
  let placed = false
  for (const e of entries) {
    if (isEntryOf(e, manager, operation, subresource)) {
      placed = true
      // an entry whose fields did not change keeps its time: the write changed nothing of it
      if (fields.size > 0) {
        next.push(
          e.apiVersion === apiVersion && sameFields(e.fields, fields)
            ? e
            : { manager, operation, apiVersion, time, fields, subresource }
        )
      }
    } else if (e.fields.size > 0) {
      next.push(e)
    }
  }
  if (!placed && fields.size > 0) next.push({ manager, operation, apiVersion, time, fields, subresource })
  return next
}

/**
 * Ownership after a create, replace or patch (an `Update`), or a write through a
 * subresource: the writer takes every field of the domain it changed away from the
 * other managers; removed fields belong to nobody. Entries that lose nothing are kept as
 * they are, in their place, so that a write that changes nothing leaves them equal.
 *
 * @internal
 */
export const recordUpdate = (
  entries: ReadonlyArray<ManagerEntry>,
  manager: string,
  apiVersion: string,
  before: JsonObject | undefined,
  after: JsonObject,
  time: string,
  subresource?: string | undefined
): Array<ManagerEntry> => {
  const domain = domainOf(subresource)
  const nodes = new Set<string>()
  const afterPaths = fieldPaths(after, domain, nodes)
  const changed = new Set<string>()
  for (const p of afterPaths) {
    // a map or list node is the writer's when the write adds it, not when it changes a member
    const isChanged = nodes.has(p)
      ? before === undefined || valueAt(before, p) === undefined
      : before === undefined || !deepEqual(valueAt(before, p), valueAt(after, p))
    if (isChanged) changed.add(p)
  }
  const next: Array<ManagerEntry> = []
  let ownIndex = -1
  let own: ManagerEntry | undefined
  for (const e of entries) {
    if (isEntryOf(e, manager, "Update", subresource)) {
      own = e
      ownIndex = next.length
      continue
    }
    const fields = new Set<string>()
    for (const p of e.fields) if (!inDomain(p, domain) || (afterPaths.has(p) && !changed.has(p))) fields.add(p)
    if (fields.size > 0) next.push(fields.size === e.fields.size ? e : { ...e, fields })
  }
  const ownFields = new Set<string>(changed)
  if (own !== undefined) {
    for (const p of own.fields) if (!inDomain(p, domain) || afterPaths.has(p)) ownFields.add(p)
  }
  if (ownFields.size === 0) return next
  const entry: ManagerEntry = own !== undefined && sameFields(own.fields, ownFields) && own.apiVersion === apiVersion
    ? own
    : { manager, operation: "Update", apiVersion, time, fields: ownFields, subresource }
  if (own !== undefined) next.splice(ownIndex, 0, entry)
  else next.push(entry)
  return next
}

const difference = (a: ReadonlySet<string>, b: ReadonlySet<string>): Set<string> => {
  const out = new Set<string>()
  for (const x of a) if (!b.has(x)) out.add(x)
  return out
}

/** Merges an applied configuration into the live object: maps recursively, keyed lists by element. */
const applyMerge = (live: unknown, config: unknown, field: string): unknown => {
  if (isObject(config)) {
    const result: JsonObject = isObject(live) ? { ...live } : {}
    for (const k of Object.keys(config)) {
      const v = config[k]
      if (v === undefined || v === null) continue
      result[k] = applyMerge(result[k], v, k)
    }
    return result
  }
  if (Array.isArray(config)) {
    const key = mergeKeyFor(field, config)
    if (
      key !== undefined && Array.isArray(live) &&
      config.every((item) => isObject(item) && item[key] !== undefined)
    ) {
      const out = live.slice()
      for (const item of config as Array<JsonObject>) {
        const index = out.findIndex((e) => isObject(e) && deepEqual(e[key], item[key]))
        if (index === -1) out.push(clone(item))
        else out[index] = applyMerge(out[index], item, field)
      }
      return out
    }
    if (setLists.has(field) && Array.isArray(live)) {
      const out = live.slice()
      for (const v of config) if (!out.some((e) => deepEqual(e, v))) out.push(v)
      return out
    }
  }
  return clone(config)
}

const isMapValue = (value: unknown): boolean => typeof value === "object" && value !== null && !Array.isArray(value)

/** @internal */
export type ApplyResult =
  | { readonly _tag: "Applied"; readonly object: JsonObject; readonly entries: Array<ManagerEntry> }
  | { readonly _tag: "Conflicts"; readonly conflicts: ReadonlyArray<Conflict> }

/**
 * Server-side apply of `config` by `manager` onto `live` (absent: a create).
 * A leaf that another manager owns with a different value is a conflict unless
 * `force`, which moves its ownership to `manager`. Fields `manager` applied before
 * and no longer sends are removed when no other manager owns them.
 *
 * @internal
 */
export const apply = (options: {
  readonly live: JsonObject | undefined
  readonly config: JsonObject
  readonly manager: string
  readonly apiVersion: string
  readonly force: boolean
  readonly entries: ReadonlyArray<ManagerEntry>
  /** `status` for an apply through the status subresource: its fields are the domain. */
  readonly subresource?: string | undefined
  /** When the apply happens (the fake's clock), for an entry that changes. */
  readonly time: string
}): ApplyResult => {
  const { config, entries, force, live, manager, subresource } = options
  const domain = domainOf(subresource)
  const applied = fieldPaths(config, domain)
  const conflicts: Array<Conflict> = []
  if (live !== undefined) {
    for (const entry of entries) {
      if (isEntryOf(entry, manager, "Apply", subresource)) continue
      for (const path of applied) {
        if (!entry.fields.has(path)) continue
        const last = path.slice(path.lastIndexOf(SEP) + 1)
        if (!last.startsWith("f:")) continue
        const current = valueAt(live, path)
        const wanted = valueAt(config, path)
        // a map or struct merges into the live one (its owner's "." entry is its existence): only its leaves conflict
        if (isMapValue(current) && isMapValue(wanted)) continue
        if (current !== undefined && !deepEqual(current, wanted)) conflicts.push({ entry, path })
      }
    }
  }
  if (conflicts.length > 0 && !force) return { _tag: "Conflicts", conflicts }
  const taken = new Set(conflicts.map((c) => c.path))
  const others = entries.map((e) =>
    isEntryOf(e, manager, "Apply", subresource) || taken.size === 0 ? e : { ...e, fields: difference(e.fields, taken) }
  )
  const object = applyMerge(live, config, "") as JsonObject
  const previous = entries.find((e) => isEntryOf(e, manager, "Apply", subresource))
  if (previous !== undefined) {
    const stillOwned = new Set<string>()
    for (const e of others) if (e !== previous) for (const p of e.fields) stillOwned.add(p)
    // shortest first: a removed list element takes its fields with it, and its key
    // fields are still there to find it by
    // a map's own node (its "." entry, taken over from an Update) goes only with the last of its members
    const kept = (p: string): boolean => {
      const prefix = `${p}${SEP}`
      for (const q of applied) if (q.startsWith(prefix)) return true
      for (const q of stillOwned) if (q.startsWith(prefix)) return true
      return false
    }
    const dropped = [...previous.fields].filter((p) =>
      inDomain(p, domain) && !applied.has(p) && !stillOwned.has(p) && !kept(p)
    )
    dropped.sort((a, b) => a.length - b.length)
    for (const p of dropped) removeAt(object, p)
  }
  return {
    _tag: "Applied",
    object,
    entries: upsert(others, manager, "Apply", options.apiVersion, applied, subresource, options.time)
  }
}

/** The 409 message of a failed apply, worded as the API server words it. @internal */
export const conflictMessage = (conflicts: ReadonlyArray<Conflict>): string => {
  if (conflicts.length === 1) {
    const c = conflicts[0]!
    return `Apply failed with 1 conflict: conflict with ${printManager(c.entry)}: ${formatPath(c.path)}`
  }
  const byManager = new Map<string, Array<string>>()
  for (const c of conflicts) {
    const name = printManager(c.entry)
    const list = byManager.get(name) ?? []
    list.push(formatPath(c.path))
    byManager.set(name, list)
  }
  const lines: Array<string> = []
  for (const name of [...byManager.keys()].sort()) {
    lines.push(`conflicts with ${name}:`)
    for (const p of byManager.get(name)!) lines.push(`- ${p}`)
  }
  return `Apply failed with ${conflicts.length} conflicts: ${lines.join("\n")}`
}

/** @internal */
export const printManager = (entry: ManagerEntry): string =>
  entry.operation === "Update"
    ? `${JSON.stringify(entry.manager)} using ${entry.apiVersion} at ${entry.time}`
    : JSON.stringify(entry.manager)

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
import { clone, deepEqual, isObject, type JsonObject, now } from "./json.js"
import { mergeKeyFor } from "./patch.js"

/** @internal */
export interface ManagerEntry {
  readonly manager: string
  readonly operation: "Apply" | "Update"
  readonly apiVersion: string
  readonly time: string
  readonly fields: ReadonlySet<string>
}

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

const walk = (value: unknown, path: string, field: string, out: Set<string>): void => {
  if (isObject(value)) {
    const keys = Object.keys(value)
    if (keys.length === 0 && path !== "") out.add(path)
    for (const k of keys) {
      const v = value[k]
      if (v === undefined || v === null) continue
      walk(v, path === "" ? `f:${k}` : `${path}${SEP}f:${k}`, k, out)
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
          walk(item[k], `${element}${SEP}f:${k}`, k, out)
        }
      }
      return
    }
    if (setLists.has(field) && value.length > 0 && value.every(isScalar)) {
      for (const item of value) out.add(`${path}${SEP}v:${JSON.stringify(item)}`)
      return
    }
  }
  out.add(path)
}

/** The owned paths an object sets: leaves and list elements, without server fields. @internal */
export const fieldPaths = (obj: JsonObject): Set<string> => {
  const out = new Set<string>()
  for (const k of Object.keys(obj)) {
    if (k === "apiVersion" || k === "kind" || k === "status") continue
    const v = obj[k]
    if (v === undefined || v === null) continue
    if (k === "metadata" && isObject(v)) {
      for (const mk of Object.keys(v)) {
        if (serverMetadata.has(mk) || v[mk] === undefined || v[mk] === null) continue
        walk(v[mk], `f:metadata${SEP}f:${mk}`, mk, out)
      }
      continue
    }
    walk(v, `f:${k}`, k, out)
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

/** `metadata.managedFields` for the entries. @internal */
export const render = (entries: ReadonlyArray<ManagerEntry>): Array<JsonObject> =>
  entries.map((entry) => {
    const tree: JsonObject = {}
    for (const path of entry.fields) {
      let node = tree
      const segments = path.split(SEP)
      for (const segment of segments) {
        const next = node[segment]
        if (isObject(next)) node = next
        else {
          const created: JsonObject = {}
          node[segment] = created
          node = created
        }
      }
      if (segments[segments.length - 1]!.startsWith("k:")) node["."] = {}
    }
    return {
      manager: entry.manager,
      operation: entry.operation,
      apiVersion: entry.apiVersion,
      time: entry.time,
      fieldsType: "FieldsV1",
      fieldsV1: tree
    }
  })

const upsert = (
  entries: ReadonlyArray<ManagerEntry>,
  manager: string,
  operation: ManagerEntry["operation"],
  apiVersion: string,
  fields: ReadonlySet<string>
): Array<ManagerEntry> => {
  const next: Array<ManagerEntry> = []
  let placed = false
  for (const e of entries) {
    if (e.manager === manager && e.operation === operation) {
      placed = true
      if (fields.size > 0) next.push({ manager, operation, apiVersion, time: now(), fields })
    } else if (e.fields.size > 0) {
      next.push(e)
    }
  }
  if (!placed && fields.size > 0) next.push({ manager, operation, apiVersion, time: now(), fields })
  return next
}

/**
 * Ownership after a create, replace or patch (an `Update`): the writer takes every
 * field it changed away from the other managers; removed fields belong to nobody.
 *
 * @internal
 */
export const recordUpdate = (
  entries: ReadonlyArray<ManagerEntry>,
  manager: string,
  apiVersion: string,
  before: JsonObject | undefined,
  after: JsonObject
): Array<ManagerEntry> => {
  const afterPaths = fieldPaths(after)
  const changed = new Set<string>()
  for (const p of afterPaths) {
    if (before === undefined || !deepEqual(valueAt(before, p), valueAt(after, p))) changed.add(p)
  }
  const next: Array<ManagerEntry> = []
  let own: ManagerEntry | undefined
  for (const e of entries) {
    if (e.manager === manager && e.operation === "Update") {
      own = e
      continue
    }
    const fields = new Set<string>()
    for (const p of e.fields) if (afterPaths.has(p) && !changed.has(p)) fields.add(p)
    if (fields.size > 0) next.push(fields.size === e.fields.size ? e : { ...e, fields })
  }
  const ownFields = new Set<string>(changed)
  if (own !== undefined) for (const p of own.fields) if (afterPaths.has(p)) ownFields.add(p)
  if (ownFields.size === 0) return next
  if (own !== undefined && changed.size === 0 && ownFields.size === own.fields.size) {
    next.push(own)
    return next
  }
  next.push({ manager, operation: "Update", apiVersion, time: now(), fields: ownFields })
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
}): ApplyResult => {
  const { config, entries, force, live, manager } = options
  const applied = fieldPaths(config)
  const conflicts: Array<Conflict> = []
  if (live !== undefined) {
    for (const entry of entries) {
      if (entry.manager === manager && entry.operation === "Apply") continue
      for (const path of applied) {
        if (!entry.fields.has(path)) continue
        const last = path.slice(path.lastIndexOf(SEP) + 1)
        if (!last.startsWith("f:")) continue
        const current = valueAt(live, path)
        if (current !== undefined && !deepEqual(current, valueAt(config, path))) conflicts.push({ entry, path })
      }
    }
  }
  if (conflicts.length > 0 && !force) return { _tag: "Conflicts", conflicts }
  const taken = new Set(conflicts.map((c) => c.path))
  const others = entries
    .filter((e) => !(e.manager === manager && e.operation === "Apply"))
    .map((e) => (taken.size > 0 ? { ...e, fields: difference(e.fields, taken) } : e))
  const object = applyMerge(live, config, "") as JsonObject
  const previous = entries.find((e) => e.manager === manager && e.operation === "Apply")
  if (previous !== undefined) {
    const stillOwned = new Set<string>()
    for (const e of others) for (const p of e.fields) stillOwned.add(p)
    // shortest first: a removed list element takes its fields with it, and its key
    // fields are still there to find it by
    const dropped = [...previous.fields].filter((p) => !applied.has(p) && !stillOwned.has(p))
    dropped.sort((a, b) => a.length - b.length)
    for (const p of dropped) removeAt(object, p)
  }
  return { _tag: "Applied", object, entries: upsert(others, manager, "Apply", options.apiVersion, applied) }
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

/**
 * The patch formats the API server accepts: JSON merge patch (RFC 7386), JSON patch
 * (RFC 6902) and strategic merge patch (lists of known fields merged by their key).
 *
 * @internal
 */
import { clone, deepEqual, isObject, type JsonObject } from "../store/json.js"

/** A patch that could not be applied (a 422 on a real server). @internal */
export class PatchError extends Error {}

/** RFC 7386: objects merge recursively, `null` removes, anything else replaces. @internal */
export const mergePatch = (target: unknown, patch: unknown): unknown => {
  if (!isObject(patch)) return clone(patch)
  const result: JsonObject = isObject(target) ? { ...target } : {}
  for (const key of Object.keys(patch)) {
    const value = patch[key]
    result[key] = value === null ? undefined : mergePatch(result[key], value)
  }
  return result
}

const unescapePointer = (segment: string): string => segment.replace(/~1/g, "/").replace(/~0/g, "~")

const parsePointer = (pointer: unknown): Array<string> => {
  if (typeof pointer !== "string") throw new PatchError("missing or invalid path")
  if (pointer === "") return []
  if (!pointer.startsWith("/")) throw new PatchError(`JSON pointer must start with "/": ${pointer}`)
  return pointer.slice(1).split("/").map(unescapePointer)
}

const arrayIndex = (segment: string, length: number, forInsert: boolean): number => {
  if (segment === "-" && forInsert) return length
  if (!/^(0|[1-9]\d*)$/.test(segment)) throw new PatchError(`invalid array index: ${segment}`)
  const index = Number(segment)
  if (index > length || (!forInsert && index === length)) throw new PatchError(`array index out of bounds: ${segment}`)
  return index
}

const parentOf = (doc: unknown, path: ReadonlyArray<string>, pointer: string): unknown => {
  let node = doc
  for (let i = 0; i < path.length - 1; i++) {
    const segment = path[i]!
    if (Array.isArray(node)) node = node[arrayIndex(segment, node.length, false)]
    else if (isObject(node) && segment in node) node = node[segment]
    else throw new PatchError(`doc is missing path: "${pointer}"`)
  }
  return node
}

const getAt = (doc: unknown, pointer: string): unknown => {
  const path = parsePointer(pointer)
  let node = doc
  for (const segment of path) {
    if (Array.isArray(node)) node = node[arrayIndex(segment, node.length, false)]
    else if (isObject(node) && segment in node) node = node[segment]
    else throw new PatchError(`doc is missing path: "${pointer}"`)
  }
  return node
}

const addAt = (doc: unknown, pointer: string, value: unknown): unknown => {
  const path = parsePointer(pointer)
  if (path.length === 0) return value
  const parent = parentOf(doc, path, pointer)
  const last = path[path.length - 1]!
  if (Array.isArray(parent)) parent.splice(arrayIndex(last, parent.length, true), 0, value)
  else if (isObject(parent)) parent[last] = value
  else throw new PatchError(`doc is missing path: "${pointer}"`)
  return doc
}

const removeAt = (doc: unknown, pointer: string): unknown => {
  const path = parsePointer(pointer)
  if (path.length === 0) throw new PatchError("cannot remove the whole document")
  const parent = parentOf(doc, path, pointer)
  const last = path[path.length - 1]!
  if (Array.isArray(parent)) parent.splice(arrayIndex(last, parent.length, false), 1)
  else if (isObject(parent) && last in parent) delete parent[last]
  else throw new PatchError(`unable to remove nonexistent key: ${last}: missing value`)
  return doc
}

/** RFC 6902, including `test`; the document is copied first. @internal */
export const jsonPatch = (document: unknown, operations: unknown): unknown => {
  if (!Array.isArray(operations)) throw new PatchError("a JSON patch must be an array of operations")
  let doc = clone(document)
  for (const op of operations) {
    if (!isObject(op)) throw new PatchError("a JSON patch operation must be an object")
    const path = op.path
    switch (op.op) {
      case "add":
        if (!("value" in op)) throw new PatchError(`missing value for add at ${String(path)}`)
        doc = addAt(doc, path as string, clone(op.value))
        break
      case "remove":
        doc = removeAt(doc, path as string)
        break
      case "replace": {
        if (!("value" in op)) throw new PatchError(`missing value for replace at ${String(path)}`)
        const segments = parsePointer(path)
        const parent = segments.length === 0 ? undefined : parentOf(doc, segments, path as string)
        // json-patch v4 (kube-apiserver's) replaces a missing key of an object as if it were there: a Scale's
        // omitted `replicas: 0` can be replaced
        if (isObject(parent) && !(segments[segments.length - 1]! in parent)) {
          parent[segments[segments.length - 1]!] = clone(op.value)
          break
        }
        getAt(doc, path as string)
        if (segments.length === 0) {
          doc = clone(op.value)
        } else {
          doc = removeAt(doc, path as string)
          doc = addAt(doc, path as string, clone(op.value))
        }
        break
      }
      case "move": {
        const value = getAt(doc, op.from as string)
        doc = removeAt(doc, op.from as string)
        doc = addAt(doc, path as string, value)
        break
      }
      case "copy":
        doc = addAt(doc, path as string, clone(getAt(doc, op.from as string)))
        break
      case "test": {
        const actual = getAt(doc, path as string)
        if (!deepEqual(actual, op.value)) throw new PatchError(`testing value ${String(path)} failed: test failed`)
        break
      }
      default:
        throw new PatchError(`Unexpected kind: ${String(op.op)}`)
    }
  }
  return doc
}

/** Merge keys of the list fields of built-in kinds, by field name. @internal */
export const mergeKeyFor = (field: string, items: ReadonlyArray<unknown>): string | undefined => {
  switch (field) {
    case "containers":
    case "initContainers":
    case "ephemeralContainers":
    case "env":
    case "volumes":
    case "imagePullSecrets":
    case "resourceClaims":
      return "name"
    case "volumeMounts":
      return "mountPath"
    case "volumeDevices":
      return "devicePath"
    case "conditions":
      return "type"
    case "hostAliases":
      return "ip"
    case "ownerReferences":
      return "uid"
    case "readinessGates":
      return "conditionType"
    case "topologySpreadConstraints":
      return "topologyKey"
    case "ports":
      return items.some((item) => isObject(item) && "containerPort" in item) ? "containerPort" : "port"
    default:
      return undefined
  }
}

/** Lists of scalars that strategic merge treats as sets. */
const primitiveMergeLists = new Set(["finalizers"])

const directive = (key: string): boolean =>
  key === "$patch" || key === "$retainKeys" || key.startsWith("$setElementOrder/") ||
  key.startsWith("$deleteFromPrimitiveList/")

const mergeList = (original: unknown, patch: ReadonlyArray<unknown>, key: string): Array<unknown> => {
  if (patch.some((item) => isObject(item) && item.$patch === "replace")) {
    return patch
      .filter((item) => !(isObject(item) && item.$patch === "replace"))
      .map((item) => strategicMerge(undefined, item))
  }
  const out: Array<unknown> = Array.isArray(original) ? original.slice() : []
  for (const item of patch) {
    if (!isObject(item) || item[key] === undefined) {
      out.push(clone(item))
      continue
    }
    const index = out.findIndex((existing) => isObject(existing) && deepEqual(existing[key], item[key]))
    if (item.$patch === "delete") {
      if (index !== -1) out.splice(index, 1)
    } else if (index === -1) {
      out.push(strategicMerge(undefined, item))
    } else {
      out[index] = strategicMerge(out[index], item)
    }
  }
  return out
}

/**
 * Strategic merge patch: like a merge patch, but lists with a known merge key merge
 * element by element, `$patch: delete` / `$patch: replace` and
 * `$deleteFromPrimitiveList` directives are honoured, and `$setElementOrder` is
 * accepted (and ignored).
 *
 * @internal
 */
export const strategicMerge = (original: unknown, patch: unknown): unknown => {
  if (!isObject(patch)) return clone(patch)
  if (patch.$patch === "delete") return undefined
  if (patch.$patch === "replace") {
    const replaced: JsonObject = {}
    for (const k of Object.keys(patch)) if (!directive(k)) replaced[k] = clone(patch[k])
    return replaced
  }
  const result: JsonObject = isObject(original) ? { ...original } : {}
  for (const k of Object.keys(patch)) {
    const value = patch[k]
    if (k.startsWith("$deleteFromPrimitiveList/")) {
      const field = k.slice("$deleteFromPrimitiveList/".length)
      const current = result[field]
      if (Array.isArray(current) && Array.isArray(value)) {
        result[field] = current.filter((v) => !value.some((d) => deepEqual(d, v)))
      }
      continue
    }
    if (directive(k)) continue
    if (value === null) {
      result[k] = undefined
    } else if (Array.isArray(value)) {
      const key = mergeKeyFor(k, [...value, ...(Array.isArray(result[k]) ? (result[k] as Array<unknown>) : [])])
      if (key !== undefined) {
        result[k] = mergeList(result[k], value, key)
      } else if (primitiveMergeLists.has(k)) {
        const current = Array.isArray(result[k]) ? (result[k] as Array<unknown>).slice() : []
        for (const v of value) if (!current.some((c) => deepEqual(c, v))) current.push(v)
        result[k] = current
      } else {
        result[k] = clone(value)
      }
    } else if (isObject(value)) {
      result[k] = strategicMerge(result[k], value)
    } else {
      result[k] = value
    }
  }
  const retain = patch.$retainKeys
  if (Array.isArray(retain)) {
    for (const k of Object.keys(result)) if (!retain.includes(k)) result[k] = undefined
  }
  return result
}

/**
 * Server-side field validation (`fieldValidation=Strict|Warn|Ignore`, default Warn) and
 * the pruning that goes with decoding: the fields of a written object its kind's schema
 * does not know are dropped (a built-in kind's by the typed decode of ./decode.ts; a
 * custom resource's by its structural schema), and fields a JSON body repeats are found
 * in its text. Strict answers 400 (`Deployment in version "v1" cannot be handled
 * as a Deployment: strict decoding error: unknown field "spec.foo"`, without the prefix
 * for patches), Warn a `Warning: 299 - "unknown field \"spec.foo\""` header per field;
 * an unsupported value is a 422 on the request's options, as the API server answers.
 *
 * @internal
 */
import * as YAML from "yaml"
import { warningHeader } from "../serve/faults.js"
import { mediaType, type RawRequest, type RawResponse, readBody } from "../serve/http.js"
import type { JsonObject } from "../store/json.js"
import type { Route } from "../store/state.js"
import * as Status from "../serve/statusBodies.js"
import * as Field from "./field.js"

/** @internal */
export type Mode = "Strict" | "Warn" | "Ignore"

/**
 * The request's `fieldValidation` (Warn when absent), or the 422 the API server gives an
 * unsupported one on the request's options (`CreateOptions`, `UpdateOptions`, `PatchOptions`).
 *
 * @internal
 */
export const modeOf = (query: Record<string, string>, options: "CreateOptions" | "UpdateOptions" | "PatchOptions"): Mode => {
  const mode = query.fieldValidation ?? ""
  if (mode === "") return "Warn"
  if (mode === "Strict" || mode === "Warn" || mode === "Ignore") return mode
  throw Field.toStatus({ group: "meta.k8s.io", kind: options, plural: options.toLowerCase() }, "", [
    Field.notSupported("fieldValidation", mode, ["", "Ignore", "Strict", "Warn"])
  ])
}

const isSpace = (c: number): boolean => c === 32 || c === 10 || c === 13 || c === 9

/** How many object keys a JSON text has (a string followed by `:`). */
const countKeys = (text: string): number => {
  let keys = 0
  const n = text.length
  for (let i = 0; i < n; i++) {
    if (text.charCodeAt(i) !== 34) continue
    i++
    while (i < n) {
      const c = text.charCodeAt(i)
      if (c === 92) i += 2
      else if (c === 34) break
      else i++
    }
    let j = i + 1
    while (j < n && isSpace(text.charCodeAt(j))) j++
    if (text.charCodeAt(j) === 58) keys++
  }
  return keys
}

const countParsed = (value: unknown): number => {
  if (Array.isArray(value)) {
    let n = 0
    for (const v of value) n += countParsed(v)
    return n
  }
  if (value === null || typeof value !== "object") return 0
  let n = 0
  for (const k in value as JsonObject) n += 1 + countParsed((value as JsonObject)[k])
  return n
}

/** A repeated field of a body: its path, the line it is on (1-based) and where in the text. @internal */
export interface Duplicate {
  readonly path: string
  readonly line: number
  readonly offset: number
}

interface Frame {
  readonly path: string
  readonly array: boolean
  index: number
  readonly keys: Set<string> | undefined
  pendingKey: string | undefined
}

/**
 * The paths of the fields a JSON text repeats within one object, in document order; with
 * `firstSeen`, where each field of the text first is, by path.
 */
const findDuplicates = (text: string, firstSeen?: Map<string, number>): Array<Duplicate> => {
  const out: Array<Duplicate> = []
  const stack: Array<Frame> = []
  let line = 1
  let lastKey: string | undefined
  const valuePath = (): string => {
    const top = stack[stack.length - 1]
    if (top === undefined) return ""
    if (top.array) return `${top.path}[${top.index}]`
    const key = top.pendingKey ?? ""
    return top.path === "" ? key : `${top.path}.${key}`
  }
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === 10) line++
    else if (c === 123 /* { */ || c === 91 /* [ */) {
      const path = valuePath()
      stack.push({ path, array: c === 91, index: 0, keys: c === 123 ? new Set() : undefined, pendingKey: undefined })
    } else if (c === 125 || c === 93) {
      stack.pop()
    } else if (c === 44 /* , */) {
      const top = stack[stack.length - 1]
      if (top?.array === true) top.index++
    } else if (c === 34) {
      const start = i + 1
      i++
      let escaped = false
      while (i < text.length) {
        const d = text.charCodeAt(i)
        if (d === 92) {
          escaped = true
          i += 2
        } else if (d === 34) break
        else i++
      }
      let j = i + 1
      while (j < text.length && isSpace(text.charCodeAt(j))) j++
      const top = stack[stack.length - 1]
      if (text.charCodeAt(j) === 58 && top !== undefined && !top.array) {
        const raw = text.slice(start, i)
        lastKey = escaped ? (JSON.parse(`"${raw}"`) as string) : raw
        const path = top.path === "" ? lastKey : `${top.path}.${lastKey}`
        if (top.keys!.has(lastKey)) out.push({ path, line, offset: start })
        else {
          top.keys!.add(lastKey)
          firstSeen?.set(path, start)
        }
        top.pendingKey = lastKey
      }
    }
  }
  return out
}

/** A write's body, read once: its text, the value it parses to, and whether it was YAML. @internal */
export interface Body {
  readonly text: string
  readonly body: unknown
  readonly yaml: boolean
}

/** A body's repeated fields, as its decoder reports them (YAML's go-yaml way, JSON's field paths). @internal */
export interface Duplicates {
  readonly yaml: boolean
  readonly fields: ReadonlyArray<Duplicate>
}

const noDuplicates: Duplicates = { yaml: false, fields: [] }

/** The keys a YAML text repeats within one mapping, with their lines, in document order. */
const yamlDuplicates = (text: string): Array<Duplicate> => {
  const lines = new YAML.LineCounter()
  const out: Array<Duplicate> = []
  for (const doc of YAML.parseAllDocuments(text, { lineCounter: lines, uniqueKeys: false })) {
    if (!("contents" in doc)) continue
    YAML.visit(doc, {
      Map(_, map) {
        const seen = new Set<unknown>()
        for (const pair of map.items) {
          const key = YAML.isScalar(pair.key) ? pair.key.value : pair.key
          if (!seen.has(key)) {
            seen.add(key)
            continue
          }
          const range = YAML.isNode(pair.key) ? pair.key.range : undefined
          const offset = range !== undefined && range !== null ? range[0] : 0
          out.push({ path: String(key), line: lines.linePos(offset).line, offset })
        }
      }
    })
  }
  return out
}

/**
 * The fields a body repeats under a field validation that reports them (nothing for
 * Ignore). A JSON text is scanned only when it has more keys than its value (next to no
 * work when it repeats none); YAML, rare in requests, is read again for its key lines.
 *
 * @internal
 */
export const duplicatesOf = (mode: Mode, read: Body): Duplicates => {
  if (mode === "Ignore") return noDuplicates
  if (read.yaml) return { yaml: true, fields: yamlDuplicates(read.text) }
  if (countKeys(read.text) === countParsed(read.body)) return noDuplicates
  return { yaml: false, fields: findDuplicates(read.text) }
}

/** A write's body, read once (JSON, or YAML by its content type). @internal */
export const readText = async (request: RawRequest): Promise<Body> => {
  const text = await request.text()
  const trimmed = text.trimStart()
  // JSON sent as an apply configuration: the YAML reader would refuse its repeated fields
  if (trimmed.startsWith("{")) {
    try {
      return { text, body: JSON.parse(text), yaml: false }
    } catch {
      // the reader below reports it
    }
  }
  const type = mediaType(request.header("content-type"))
  const yaml = type === "application/yaml" || type === "application/apply-patch+yaml"
  return { text, body: await readBody({ ...request, text: () => Promise.resolve(text) }), yaml }
}

/** go-yaml's strict error for repeated keys (`yaml: unmarshal errors:` and a line per key). */
const yamlUnmarshalErrors = (fields: ReadonlyArray<Duplicate>): string => {
  const lines = fields.map((d) => {
    const key = d.path.slice(d.path.lastIndexOf(".") + 1)
    return `  line ${d.line}: key ${JSON.stringify(key)} already set in map`
  })
  return `yaml: unmarshal errors:\n${lines.join("\n")}`
}

/**
 * The strict decoding errors of a body in the order the API server finds them: go-yaml's
 * first for YAML; for a built-in object sent whole as JSON (`inOrder`), repeated and
 * unknown fields as the typed decoder meets them in the text; else (a patch, read into a
 * map before the patched object is decoded; a custom resource, pruned after decoding)
 * the repeated fields first.
 */
const strictErrors = (text: string, duplicates: Duplicates, unknown: ReadonlyArray<string>, inOrder: boolean) => {
  const unknownMessages = unknown.map((f) => `unknown field ${JSON.stringify(f)}`)
  if (duplicates.fields.length === 0) return unknownMessages
  if (duplicates.yaml) return [yamlUnmarshalErrors(duplicates.fields), ...unknownMessages]
  const duplicateMessages = duplicates.fields.map((d) => `duplicate field ${JSON.stringify(d.path)}`)
  if (unknown.length === 0 || !inOrder) return [...duplicateMessages, ...unknownMessages]
  const firstSeen = new Map<string, number>()
  findDuplicates(text, firstSeen)
  return [
    ...duplicates.fields.map((d, i) => ({ at: d.offset, message: duplicateMessages[i]! })),
    ...unknown.map((f, i) => ({ at: firstSeen.get(f) ?? Infinity, message: unknownMessages[i]! }))
  ].sort((a, b) => a.at - b.at).map((e) => e.message)
}

/**
 * What field validation makes of a write's problems: nothing for Ignore, the warnings
 * for Warn, a 400 for Strict (`prefixed` for creates and updates, which the API server
 * reports as a failure to decode the kind).
 *
 * @internal
 */
export const report = (
  route: Route,
  mode: Mode,
  read: Body,
  duplicates: Duplicates,
  unknown: ReadonlyArray<string>,
  prefixed: boolean,
  patched?: () => string
): ReadonlyArray<string> => {
  if (mode === "Ignore" || (duplicates.fields.length === 0 && unknown.length === 0)) return []
  const messages = strictErrors(read.text, duplicates, unknown, prefixed && !route.kind.custom)
  if (mode === "Warn") return messages
  const strict = `strict decoding error: ${messages.join(", ")}`
  // a patch's strict errors come from decoding what it made, which the patch handler reports as one invalid value of
  // the field "patch" (in a Status without a kind: ` "" is invalid: patch: …`)
  if (patched !== undefined) {
    const cause = `Invalid value: ${JSON.stringify(patched())}: ${strict}`
    throw new Status.StatusError(422, "Invalid", ` "" is invalid: patch: ${cause}`, {
      causes: [{ reason: "FieldValueInvalid", message: cause, field: "patch" }]
    })
  }
  const kind = route.kind.kind
  throw Status.badRequest(prefixed ? `${kind} in version ${JSON.stringify(route.version)} cannot be handled as a ${kind}: ${strict}` : strict)
}

const sortedKeys = (o: JsonObject): JsonObject =>
  Object.fromEntries(Object.keys(o).sort().map((k) => [k, o[k]])) as JsonObject

const isJsonObject = (v: unknown): v is JsonObject => v !== null && typeof v === "object" && !Array.isArray(v)

/**
 * A merge patch's result as the patch handler quotes it: json-patch re-encodes the maps the patch merged into (their
 * keys sorted, as Go's encoder writes a map) and keeps the stored object's encoding of the rest.
 *
 * @internal
 */
export const mergePatchedText = (patched: unknown, patch: unknown): string => {
  const along = (value: unknown, by: unknown): unknown => {
    if (!isJsonObject(value) || !isJsonObject(by)) return value
    const out = sortedKeys(value)
    for (const k of Object.keys(out)) if (k in by) out[k] = along(out[k], by[k]) as JsonObject[string]
    return out
  }
  const top = along(patched, patch)
  // the stored object's metadata as Go encodes ObjectMeta (in its fields' order), unless the patch merged into it
  if (isJsonObject(top) && isJsonObject(top.metadata) && !(isJsonObject(patch) && "metadata" in patch)) {
    const metadata = inOrder(top.metadata, objectMetaOrder)
    const entries: unknown = metadata.managedFields
    if (Array.isArray(entries)) {
      metadata.managedFields = entries.map((e: unknown) => isJsonObject(e) ? inOrder(e, managedFieldsOrder) : e) as JsonObject[string]
    }
    top.metadata = metadata
  }
  return JSON.stringify(top)
}

const objectMetaOrder = [
  "name", "generateName", "namespace", "selfLink", "uid", "resourceVersion", "generation", "creationTimestamp",
  "deletionTimestamp", "deletionGracePeriodSeconds", "labels", "annotations", "ownerReferences", "finalizers",
  "managedFields"
]
const managedFieldsOrder = ["manager", "operation", "apiVersion", "time", "fieldsType", "fieldsV1", "subresource"]

const inOrder = (o: JsonObject, order: ReadonlyArray<string>): JsonObject => {
  const rank = (k: string) => {
    const i = order.indexOf(k)
    return i < 0 ? order.length : i
  }
  return Object.fromEntries(Object.keys(o).sort((a, b) => rank(a) - rank(b)).map((k) => [k, o[k]])) as JsonObject
}

/**
 * A JSON patch's result as the patch handler quotes it: the top-level map and the containers an operation went
 * through re-encoded (keys sorted), the rest as stored.
 *
 * @internal
 */
export const jsonPatchedText = (patched: unknown, patch: unknown): string => {
  const paths = Array.isArray(patch)
    ? patch.flatMap((op) => isJsonObject(op) && typeof op.path === "string" ? [op.path.split("/").slice(1, -1)] : [])
    : []
  const tree: Record<string, unknown> = {}
  for (const p of paths) {
    let at = tree
    for (const seg of p) at = (at[seg.replace(/~1/g, "/").replace(/~0/g, "~")] ??= {}) as Record<string, unknown>
  }
  return mergePatchedText(patched, tree)
}

/** A value as Go's `%+v` prints what json decoding made of it (`map[a:1 b:[x y]]`). */
const goValue = (v: unknown): string =>
  v === null || v === undefined
    ? "<nil>"
    : Array.isArray(v)
    ? `[${v.map(goValue).join(" ")}]`
    : typeof v === "object"
    ? `map[${Object.keys(v).sort().map((k) => `${k}:${goValue((v as Record<string, unknown>)[k])}`).join(" ")}]`
    : typeof v === "number"
    ? goNumber(v)
    : String(v)

/** Integers as int64, others as float64's `%v` (`%g` with the shortest digits, Go's exponent form). */
const goNumber = (n: number): string => {
  if (Number.isInteger(n) && Math.abs(n) < 2 ** 63) return BigInt(n).toString()
  const exp = Math.floor(Math.log10(Math.abs(n)))
  if (exp < -4 || exp >= 21) {
    const [m, e] = n.toExponential().split("e")
    const x = Number(e)
    return `${m}e${x < 0 ? "-" : "+"}${String(Math.abs(x)).padStart(2, "0")}`
  }
  return String(n)
}

/**
 * A strategic merge patch as the patch handler quotes it: the patch itself, decoded, printed with `%+v`.
 *
 * @internal
 */
export const strategicPatchText = (patch: unknown): string => goValue(patch)

/**
 * An apply configuration's repeated fields, as the YAML decoder reports them: a 400 for
 * Strict, warnings for Warn.
 *
 * @internal
 */
export const reportApplyDuplicates = (mode: Mode, duplicates: Duplicates): ReadonlyArray<string> => {
  if (mode === "Ignore" || duplicates.fields.length === 0) return []
  const message = `error converting YAML to JSON: ${yamlUnmarshalErrors(duplicates.fields)}`
  if (mode === "Strict") throw Status.badRequest(`error strict decoding YAML: ${message}`)
  return [message]
}

/** The answer with one `Warning: 299` per message (joined as HTTP joins repeated headers). @internal */
export const withWarnings = (response: RawResponse, warnings: ReadonlyArray<string>): RawResponse =>
  warnings.length === 0
    ? response
    : {
      ...response,
      headers: { ...response.headers, warning: warnings.map(warningHeader).join(", ") }
    }

/**
 * Runs the rest of a write whose body had field validation warnings: a failure after the
 * decode (a 422, a 409) still carries them, as kube-apiserver sends its warnings with
 * whatever it answers.
 *
 * @internal
 */
export const keepWarnings = async (
  warnings: ReadonlyArray<string>,
  rest: () => RawResponse | Promise<RawResponse>
): Promise<RawResponse> => {
  if (warnings.length === 0) return rest()
  try {
    return await rest()
  } catch (e) {
    if (!(e instanceof Status.StatusError) || e.headers?.warning !== undefined) throw e
    throw new Status.StatusError(e.code, e.reason, e.message, e.details, {
      ...e.headers,
      warning: warnings.map(warningHeader).join(", ")
    }, e.metadata)
  }
}

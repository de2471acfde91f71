/**
 * Request bodies in the Kubernetes protobuf encoding (`application/vnd.kubernetes.protobuf`,
 * what kubectl's typed commands send since 1.32), decoded into the JSON the API server would
 * have read: the `k8s\0` magic, a `runtime.Unknown` envelope (apiVersion, kind, the object's
 * bytes), then the object by its Go type's layout (`schema.ts`). Field by field as Go would
 * marshal the decoded struct back to JSON: omitempty zero values dropped unless the field is
 * a pointer, times as RFC 3339, quantities and int-or-strings as their JSON forms.
 *
 * @internal
 */
import { isObject, type JsonObject } from "../../store/json.js"
import * as Status from "../../serve/statusBodies.js"
import { schema } from "./schema.js"

/** The media type of the encoding. @internal */
export const mediaType = "application/vnd.kubernetes.protobuf"

interface Field {
  readonly json: string
  readonly number: number
  readonly type: string
  readonly pointer: boolean
  readonly repeated: boolean
  readonly omitempty: boolean
  readonly omitzero: boolean
}

const layouts = new Map<string, ReadonlyMap<number, Field>>()

const layoutOf = (ref: string): ReadonlyMap<number, Field> | undefined => {
  let layout = layouts.get(ref)
  if (layout !== undefined) return layout
  const text = schema[ref]
  if (text === undefined) return undefined
  const fields = new Map<number, Field>()
  for (const entry of text.split(" ").filter((e) => e !== "")) {
    const [json, number, type, flags = ""] = entry.split(":") as [string, string, string, string]
    fields.set(Number(number), {
      json,
      number: Number(number),
      type,
      pointer: flags.includes("p"),
      repeated: flags.includes("r"),
      omitempty: flags.includes("o"),
      omitzero: flags.includes("z")
    })
  }
  layouts.set(ref, layout = fields)
  return layout
}

class DecodeError extends Error {}

/** The fields of one message, in order: number, wire type, and the value (a number, or the bytes). */
const readFields = (bytes: Uint8Array): Array<{ number: number; wire: number; value: bigint | Uint8Array }> => {
  const out: Array<{ number: number; wire: number; value: bigint | Uint8Array }> = []
  let offset = 0
  const varint = (): bigint => {
    let result = 0n
    let shift = 0n
    for (;;) {
      if (offset >= bytes.length) throw new DecodeError("a varint runs past the end")
      const b = bytes[offset++]!
      result |= BigInt(b & 0x7f) << shift
      if ((b & 0x80) === 0) return result
      shift += 7n
      if (shift > 63n) throw new DecodeError("a varint is too long")
    }
  }
  const take = (n: number): Uint8Array => {
    if (offset + n > bytes.length) throw new DecodeError("a field runs past the end")
    const slice = bytes.subarray(offset, offset + n)
    offset += n
    return slice
  }
  while (offset < bytes.length) {
    const key = Number(varint())
    const number = key >>> 3
    const wire = key & 7
    switch (wire) {
      case 0:
        out.push({ number, wire, value: varint() })
        break
      case 1:
        out.push({ number, wire, value: take(8) })
        break
      case 2:
        out.push({ number, wire, value: take(Number(varint())) })
        break
      case 5:
        out.push({ number, wire, value: take(4) })
        break
      default:
        throw new DecodeError(`wire type ${wire} is not one Kubernetes uses`)
    }
  }
  return out
}

const utf8 = new TextDecoder("utf-8", { fatal: false })
const int64 = (v: bigint): number => Number(BigInt.asIntN(64, v))

const scalar = (type: string, wire: number, value: bigint | Uint8Array): unknown => {
  switch (type) {
    case "s":
      return utf8.decode(value as Uint8Array)
    case "i":
      return int64(value as bigint)
    case "b":
      return value !== 0n
    case "f": {
      const b = value as Uint8Array
      const view = new DataView(b.buffer, b.byteOffset, b.byteLength)
      return wire === 5 ? view.getFloat32(0, true) : view.getFloat64(0, true)
    }
    case "y":
      return Buffer.from(value as Uint8Array).toString("base64")
  }
  throw new DecodeError(`unknown scalar type ${type}`)
}

/** Go's zero time (0001-01-01T00:00:00Z) in Unix seconds. */
const zeroTime = -62135596800

const fieldsOf = (bytes: Uint8Array): Map<number, bigint | Uint8Array> => {
  const out = new Map<number, bigint | Uint8Array>()
  for (const f of readFields(bytes)) out.set(f.number, f.value)
  return out
}

const timeOf = (bytes: Uint8Array, micro: boolean): string | null => {
  const f = fieldsOf(bytes)
  const seconds = f.has(1) ? int64(f.get(1) as bigint) : 0
  const nanos = f.has(2) ? int64(f.get(2) as bigint) : 0
  if (seconds === zeroTime && nanos === 0) return null
  const iso = new Date(seconds * 1000).toISOString().slice(0, 19)
  return micro ? `${iso}.${String(Math.floor(nanos / 1000)).padStart(6, "0")}Z` : `${iso}Z`
}

/** Go's `time.Duration.String()`: `1h2m3s`, `1.5s`, `250ms`, `0s`. */
const durationOf = (nanos: number): string => {
  if (nanos === 0) return "0s"
  const sign = nanos < 0 ? "-" : ""
  let n = Math.abs(nanos)
  if (n < 1e9) {
    const [unit, size] = n < 1e3 ? ["ns", 1] : n < 1e6 ? ["µs", 1e3] : ["ms", 1e6]
    return `${sign}${String(n / (size as number))}${unit as string}`
  }
  const hours = Math.floor(n / 3.6e12)
  n -= hours * 3.6e12
  const minutes = Math.floor(n / 6e10)
  n -= minutes * 6e10
  const seconds = String(n / 1e9)
  return `${sign}${hours > 0 ? `${hours}h` : ""}${hours > 0 || minutes > 0 ? `${minutes}m` : ""}${seconds}s`
}

/** The types apimachinery lays out itself. */
const specials: Readonly<Record<string, (bytes: Uint8Array) => unknown>> = {
  "meta/v1.Time": (b) => timeOf(b, false),
  "meta/v1.MicroTime": (b) => timeOf(b, true),
  "meta/v1.Duration": (b) => durationOf(int64((fieldsOf(b).get(1) as bigint | undefined) ?? 0n)),
  "meta/v1.FieldsV1": (b) => rawJson((fieldsOf(b).get(1) as Uint8Array | undefined) ?? new Uint8Array(0)),
  "runtime.RawExtension": (b) => rawJson((fieldsOf(b).get(1) as Uint8Array | undefined) ?? new Uint8Array(0)),
  "resource.Quantity": (b) => utf8.decode((fieldsOf(b).get(1) as Uint8Array | undefined) ?? new Uint8Array(0)),
  "intstr.IntOrString": (b) => {
    const f = fieldsOf(b)
    return f.has(1) && int64(f.get(1) as bigint) === 1
      ? utf8.decode((f.get(3) as Uint8Array | undefined) ?? new Uint8Array(0))
      : int64((f.get(2) as bigint | undefined) ?? 0n)
  }
}

const rawJson = (bytes: Uint8Array): unknown => {
  if (bytes.length === 0) return null
  try {
    return JSON.parse(utf8.decode(bytes))
  } catch {
    throw new DecodeError("an embedded object is not JSON")
  }
}

/** One value of a field: a scalar, a special type, or a message by its layout. */
const valueOf = (type: string, wire: number, value: bigint | Uint8Array): unknown => {
  if (type.length === 1) return scalar(type, wire, value)
  const special = specials[type]
  if (special !== undefined) return special(value as Uint8Array)
  return message(type, value as Uint8Array)
}

const isZero = (v: unknown): boolean => v === 0 || v === "" || v === false

const message = (ref: string, bytes: Uint8Array): JsonObject => {
  const layout = layoutOf(ref)
  if (layout === undefined) throw new DecodeError(`no protobuf layout for ${ref}`)
  const out: JsonObject = {}
  for (const { number, wire, value } of readFields(bytes)) {
    const field = layout.get(number)
    if (field === undefined) continue
    if (field.type.startsWith("{")) {
      // a map entry: key 1, value 2
      const inner = field.type.slice(1, -1)
      const list = inner.endsWith("[]")
      const entry = readFields(value as Uint8Array)
      const key = entry.find((e) => e.number === 1)
      const val = entry.find((e) => e.number === 2)
      const map = (isObject(out[field.json]) ? out[field.json] : (out[field.json] = {})) as JsonObject
      const k = key === undefined ? "" : utf8.decode(key.value as Uint8Array)
      map[k] = val === undefined
        ? (list ? [] : valueOf(inner, 2, new Uint8Array(0)))
        : list
        ? (message(inner.slice(0, -2), val.value as Uint8Array) as JsonObject)
        : valueOf(inner, val.wire, val.value)
      continue
    }
    if (field.repeated) {
      const list = (Array.isArray(out[field.json]) ? out[field.json] : (out[field.json] = [])) as Array<unknown>
      // a packed list of scalars comes as one length-delimited field
      if (wire === 2 && (field.type === "i" || field.type === "b" || field.type === "f")) {
        for (const v of unpack(field.type, value as Uint8Array)) list.push(v)
      } else list.push(valueOf(field.type, wire, value))
      continue
    }
    out[field.json] = valueOf(field.type, wire, value)
  }
  // as Go marshals the struct: zero values of omitempty non-pointer fields, and zero times marked omitzero, are left out
  for (const field of layout.values()) {
    const v = out[field.json]
    if (v === undefined) continue
    if (field.omitempty && !field.pointer && isZero(v)) delete out[field.json]
    else if (field.omitzero && v === null) delete out[field.json]
  }
  return out
}

const unpack = (type: string, bytes: Uint8Array): Array<unknown> => {
  const out: Array<unknown> = []
  if (type === "f") {
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
    for (let i = 0; i + 8 <= bytes.length; i += 8) out.push(view.getFloat64(i, true))
    return out
  }
  // a run of varints: read them as the fields of a message whose keys are all field 0
  let offset = 0
  while (offset < bytes.length) {
    let result = 0n
    let shift = 0n
    for (;;) {
      const b = bytes[offset++]!
      result |= BigInt(b & 0x7f) << shift
      if ((b & 0x80) === 0 || offset >= bytes.length) break
      shift += 7n
    }
    out.push(type === "b" ? result !== 0n : int64(result))
  }
  return out
}

/** The Go package of a group's types (`rbac.authorization.k8s.io` -> `rbac`). */
const packageOf = (apiVersion: string): string => {
  const slash = apiVersion.indexOf("/")
  if (slash === -1) return `core/${apiVersion}`
  return `${apiVersion.slice(0, slash).split(".")[0]}/${apiVersion.slice(slash + 1)}`
}

/**
 * A protobuf request body as the JSON object it encodes (apiVersion and kind first); a
 * 400 Status when it is not one, or is of a kind whose layout the fake lacks (415).
 *
 * @internal
 */
export const decode = (bytes: Uint8Array): JsonObject => {
  if (bytes.length < 4 || bytes[0] !== 0x6b || bytes[1] !== 0x38 || bytes[2] !== 0x73 || bytes[3] !== 0x00) {
    throw Status.badRequest("the body of the request is not a Kubernetes protobuf object (no k8s magic)")
  }
  try {
    const envelope = fieldsOf(bytes.subarray(4))
    const typeMeta = fieldsOf((envelope.get(1) as Uint8Array | undefined) ?? new Uint8Array(0))
    const apiVersion = utf8.decode((typeMeta.get(1) as Uint8Array | undefined) ?? new Uint8Array(0))
    const kind = utf8.decode((typeMeta.get(2) as Uint8Array | undefined) ?? new Uint8Array(0))
    const ref = `${packageOf(apiVersion)}.${kind}`
    if (layoutOf(ref) === undefined) {
      throw Status.unsupportedMediaType(mediaType, ["application/json", "application/yaml"])
    }
    const object = message(ref, (envelope.get(2) as Uint8Array | undefined) ?? new Uint8Array(0))
    return { apiVersion, kind, ...object }
  } catch (e) {
    if (e instanceof DecodeError) throw Status.badRequest(`the body of the request cannot be decoded: ${e.message}`)
    throw e
  }
}

/**
 * The CEL environment of kube-apiserver v1.35 (k8s.io/apiserver/pkg/cel/environment): the standard
 * library and the string extensions `@bufbuild/cel` has, plus the Kubernetes libraries rules use —
 * lists (`isSorted`, `sum`, `min`, `max`, `indexOf`, `lastIndexOf`), regex (`find`, `findAll`), URLs
 * (`url`, `isURL`, `getHost`, ...), quantities (`quantity`, `isQuantity`, `isGreaterThan`, `add`, ...),
 * IP addresses and CIDRs (`ip`, `isIP`, `cidr`, `containsIP`, ...), named formats
 * (`format.dns1123Label().validate(s)`), semantic versions (`semver`), the `sets` extension, and
 * optional values (`optional.of`, `optional.none`, `hasValue`, `value`, `orValue`, `or`).
 *
 * Kubernetes' own types (a Quantity, a URL, an IP, ...) are opaque CEL objects here: messages of one
 * string field (their canonical text, so `==` compares what the API server compares) whose parsed
 * value is kept beside them. Cost limits are not enforced.
 *
 * @internal
 */
import type { CelFunc, CelList, CelMap, CelObjectType, CelValue } from "@bufbuild/cel"
import type { DescMessage, Message } from "@bufbuild/protobuf"
import type { ReflectMessage } from "@bufbuild/protobuf/reflect"
import * as Result from "effect/Result"
import * as QuantityModule from "../../Quantity.js"
import { type Runtime, runtime } from "./runtime.js"

/** A Kubernetes type as an opaque CEL object: its canonical text is its identity, its parsed value beside it. */
export interface Opaque<T> {
  readonly type: CelObjectType
  readonly make: (repr: string, value: T) => ReflectMessage
  readonly is: (value: CelValue) => value is ReflectMessage
  readonly get: (value: CelValue) => T
}

const opaqueNames = ["Quantity", "URL", "IP", "CIDR", "Semver", "Format", "Optional"] as const

/** The CEL environment and the opaque types, built once per process. @internal */
export interface Library {
  readonly runtime: Runtime
  readonly funcs: ReadonlyArray<CelFunc>
  readonly registry: ReturnType<Runtime["protobuf"]["createRegistry"]>
  readonly optional: Opaque<{ readonly present: boolean; readonly value: CelValue }>
  readonly timestamp: (date: Date) => unknown
  readonly duration: (text: string) => unknown
  /** The regular expression engine for `matches`, RE2 with compiled patterns kept. */
  readonly re2: { readonly compile: (pattern: string) => { readonly test: (s: string) => boolean } }
}

let built: Library | undefined

const opaqueTypes = (rt: Runtime): Record<(typeof opaqueNames)[number], DescMessage> => {
  const { protobuf, wkt } = rt
  const file = protobuf.create(wkt.FileDescriptorProtoSchema, {
    name: "effect-kube/kubernetes-cel.proto",
    package: "kubernetes",
    syntax: "proto3",
    messageType: opaqueNames.map((name) => ({
      name,
      field: [{ name: "repr", jsonName: "repr", number: 1, type: 9, label: 1 }]
    }))
  })
  const registry = protobuf.createFileRegistry(file, () => undefined)
  return Object.fromEntries(opaqueNames.map((n) => [n, registry.getMessage(`kubernetes.${n}`)!])) as Record<
    (typeof opaqueNames)[number],
    DescMessage
  >
}

const makeOpaque = <T>(rt: Runtime, desc: DescMessage): Opaque<T> => {
  const values = new WeakMap<Message, T>()
  const type = rt.cel.objectType(desc)
  const is = (value: CelValue): value is ReflectMessage =>
    typeof value === "object" && value !== null && "desc" in value && (value as ReflectMessage).desc === desc
  return {
    type,
    is,
    make: (repr, value) => {
      const message = rt.protobuf.create(desc, { repr } as never)
      values.set(message, value)
      return rt.reflect.reflect(desc, message)
    },
    get: (value) => values.get((value as ReflectMessage).message)!
  }
}

// ---------------------------------------------------------------------------------------------------------------------
// values

const isList = (rt: Runtime, v: CelValue): v is CelList => rt.cel.isCelList(v)

const nanosOf = (v: CelValue): bigint | undefined => {
  if (typeof v !== "object" || v === null || !("desc" in v)) return undefined
  const message = (v as ReflectMessage).message as unknown as { seconds?: bigint; nanos?: number }
  const name = (v as ReflectMessage).desc.typeName
  if (name !== "google.protobuf.Timestamp" && name !== "google.protobuf.Duration") return undefined
  return (message.seconds ?? 0n) * 1_000_000_000n + BigInt(message.nanos ?? 0)
}

/** The order CEL's `<` gives values of one type (numbers of any kind compare with each other). */
const compare = (a: CelValue, b: CelValue): number => {
  if (typeof a === "bigint" || typeof a === "number") {
    if (typeof b === "bigint" || typeof b === "number") return a < b ? -1 : a > b ? 1 : 0
  }
  if (typeof a === "string" && typeof b === "string") return a < b ? -1 : a > b ? 1 : 0
  if (typeof a === "boolean" && typeof b === "boolean") return Number(a) - Number(b)
  const an = nanosOf(a)
  const bn = nanosOf(b)
  if (an !== undefined && bn !== undefined) return an < bn ? -1 : an > bn ? 1 : 0
  if (isUint(a) && isUint(b)) return a.value < b.value ? -1 : a.value > b.value ? 1 : 0
  throw new Error("no such overload")
}

const isUint = (v: CelValue): v is CelValue & { readonly value: bigint } =>
  typeof v === "object" && v !== null && "value" in v && typeof (v as { value: unknown }).value === "bigint" &&
  !("desc" in v)

/** CEL equality of the values rules meet: numbers across types, lists and maps by content. */
export const celEquals = (rt: Runtime, a: CelValue, b: CelValue): boolean => {
  if ((typeof a === "bigint" || typeof a === "number") && (typeof b === "bigint" || typeof b === "number")) {
    return a == b
  }
  if (isList(rt, a) && isList(rt, b)) {
    if (a.size !== b.size) return false
    for (let i = 0; i < a.size; i++) if (!celEquals(rt, a.get(i)!, b.get(i)!)) return false
    return true
  }
  if (rt.cel.isCelMap(a) && rt.cel.isCelMap(b)) {
    if (a.size !== b.size) return false
    for (const [k, v] of a) {
      const other = (b as CelMap).get(k)
      if (other === undefined || !celEquals(rt, v, other)) return false
    }
    return true
  }
  const an = nanosOf(a)
  if (an !== undefined) return an === nanosOf(b)
  if (typeof a === "object" && a !== null && "desc" in a && typeof b === "object" && b !== null && "desc" in b) {
    return rt.protobuf.equals((a as ReflectMessage).desc, (a as ReflectMessage).message, (b as ReflectMessage).message)
  }
  if (isUint(a) && isUint(b)) return a.value === b.value
  return a === b
}

// ---------------------------------------------------------------------------------------------------------------------
// regular expressions: RE2, as the API server's

const patterns = new Map<string, { test: (s: string) => boolean }>()
const jsPatterns = new Map<string, RegExp>()

/**
 * A JavaScript RegExp for an RE2 pattern, for `find` and `findAll` (RE2's matcher here only tests):
 * the RE2 forms JavaScript spells otherwise are translated (leading flags, `(?P<name>`, `\A`, `\z`).
 */
const toJsRegExp = (pattern: string): RegExp => {
  let found = jsPatterns.get(pattern)
  if (found === undefined) {
    let source = pattern
    let flags = "gu"
    const leading = /^\(\?([imsU]+)\)/.exec(source)
    if (leading !== null) {
      source = source.slice(leading[0].length)
      for (const f of leading[1]!) if (f !== "U" && !flags.includes(f)) flags += f
    }
    source = source.replace(/\(\?P</g, "(?<").replace(/\\A/g, "^").replace(/\\z/g, "$")
    found = new RegExp(source, flags)
    if (jsPatterns.size > 1000) jsPatterns.clear()
    jsPatterns.set(pattern, found)
  }
  found.lastIndex = 0
  return found
}

// ---------------------------------------------------------------------------------------------------------------------
// URLs, as Go's url.ParseRequestURI reads them

interface ParsedUrl {
  readonly scheme: string
  readonly host: string
  readonly hostname: string
  readonly port: string
  readonly escapedPath: string
  readonly query: ReadonlyMap<string, ReadonlyArray<string>>
}

const parseUrl = (text: string): ParsedUrl | undefined => {
  // an absolute URI (scheme:...) or an absolute path, no fragment
  if (text.includes("#")) return undefined
  if (text.startsWith("/")) {
    const [path, query = ""] = text.split("?", 2) as [string, string?]
    return { scheme: "", host: "", hostname: "", port: "", escapedPath: path, query: parseQuery(query) }
  }
  const scheme = /^([a-zA-Z][a-zA-Z0-9+.-]*):/.exec(text)
  if (scheme === null) return undefined
  let url: URL
  try {
    url = new URL(text)
  } catch {
    return undefined
  }
  const authority = /^[a-zA-Z][a-zA-Z0-9+.-]*:\/\/([^/?#]*)/.exec(text)?.[1] ?? ""
  const host = authority.includes("@") ? authority.slice(authority.lastIndexOf("@") + 1) : authority
  const bracketed = /^\[([^\]]*)\](?::(\d*))?$/.exec(host)
  const hostname = bracketed !== null ? bracketed[1]! : host.split(":")[0]!
  const port = bracketed !== null ? bracketed[2] ?? "" : host.includes(":") ? host.split(":")[1]! : ""
  const rawPath = text.slice(scheme[0].length + (text.slice(scheme[0].length).startsWith("//") ? 2 + authority.length : 0))
  const escapedPath = rawPath.split("?")[0]!
  return { scheme: scheme[1]!, host, hostname, port, escapedPath, query: parseQuery(url.search.slice(1)) }
}

const parseQuery = (query: string): ReadonlyMap<string, ReadonlyArray<string>> => {
  const out = new Map<string, Array<string>>()
  if (query === "") return out
  for (const [k, v] of new URLSearchParams(query)) out.set(k, [...(out.get(k) ?? []), v])
  return out
}

// ---------------------------------------------------------------------------------------------------------------------
// IP addresses and CIDRs, as the API server's netip-based library reads them (no zones, no IPv4-mapped IPv6)

interface Ip {
  readonly family: 4 | 6
  /** The address as a number of 32 or 128 bits. */
  readonly bits: bigint
}

const parseIpv4 = (text: string): bigint | undefined => {
  const parts = text.split(".")
  if (parts.length !== 4) return undefined
  let bits = 0n
  for (const part of parts) {
    // leading zeros are refused, as netip refuses them
    if (!/^(0|[1-9]\d{0,2})$/.test(part) || Number(part) > 255) return undefined
    bits = (bits << 8n) | BigInt(part)
  }
  return bits
}

const parseIpv6 = (text: string): bigint | undefined => {
  if (text.includes("%")) return undefined
  const halves = text.split("::")
  if (halves.length > 2) return undefined
  const groups = (s: string): Array<string> | undefined => (s === "" ? [] : s.split(":"))
  const head = groups(halves[0]!)
  const tail = halves.length === 2 ? groups(halves[1]!) : []
  if (head === undefined || tail === undefined) return undefined
  const words: Array<bigint> = []
  const push = (group: string, last: boolean): boolean => {
    if (last && group.includes(".")) {
      const v4 = parseIpv4(group)
      if (v4 === undefined) return false
      words.push(v4 >> 16n, v4 & 0xffffn)
      return true
    }
    if (!/^[0-9a-fA-F]{1,4}$/.test(group)) return false
    words.push(BigInt(`0x${group}`))
    return true
  }
  const all = [...head, ...tail]
  const lastIndex = all.length - 1
  const headWords: Array<bigint> = []
  for (let i = 0; i < head.length; i++) if (!push(head[i]!, i === lastIndex && tail.length === 0)) return undefined
  headWords.push(...words.splice(0))
  for (let i = 0; i < tail.length; i++) if (!push(tail[i]!, i === tail.length - 1)) return undefined
  const tailWords = words.splice(0)
  const missing = 8 - headWords.length - tailWords.length
  if (halves.length === 2 ? missing < 1 : missing !== 0) return undefined
  let bits = 0n
  for (const w of [...headWords, ...Array<bigint>(missing).fill(0n), ...tailWords]) bits = (bits << 16n) | w
  return bits
}

const parseIp = (text: string): Ip | undefined => {
  if (text.includes(":")) {
    const bits = parseIpv6(text)
    if (bits === undefined) return undefined
    // IPv4-mapped IPv6 addresses are refused by the API server's library
    if (bits >> 32n === 0xffffn) return undefined
    return { family: 6, bits }
  }
  const bits = parseIpv4(text)
  return bits === undefined ? undefined : { family: 4, bits }
}

const formatIp = (ip: Ip): string => {
  if (ip.family === 4) return [24n, 16n, 8n, 0n].map((s) => String((ip.bits >> s) & 0xffn)).join(".")
  const words = Array.from({ length: 8 }, (_, i) => Number((ip.bits >> BigInt((7 - i) * 16)) & 0xffffn))
  // RFC 5952: the longest run of two or more zero words becomes ::
  let best = -1
  let bestLength = 1
  for (let i = 0; i < 8;) {
    if (words[i] !== 0) {
      i++
      continue
    }
    let j = i
    while (j < 8 && words[j] === 0) j++
    if (j - i > bestLength) {
      best = i
      bestLength = j - i
    }
    i = j
  }
  const hex = words.map((w) => w.toString(16))
  if (best === -1) return hex.join(":")
  return `${hex.slice(0, best).join(":")}::${hex.slice(best + bestLength).join(":")}`
}

interface Cidr {
  readonly ip: Ip
  readonly prefix: number
}

const parseCidr = (text: string): Cidr | undefined => {
  const slash = text.indexOf("/")
  if (slash === -1) return undefined
  const ip = parseIp(text.slice(0, slash))
  const prefixText = text.slice(slash + 1)
  if (ip === undefined || !/^(0|[1-9]\d*)$/.test(prefixText)) return undefined
  const prefix = Number(prefixText)
  if (prefix > (ip.family === 4 ? 32 : 128)) return undefined
  return { ip, prefix }
}

const width = (ip: Ip): bigint => (ip.family === 4 ? 32n : 128n)

const maskedIp = (cidr: Cidr): Ip => {
  const host = width(cidr.ip) - BigInt(cidr.prefix)
  return { family: cidr.ip.family, bits: (cidr.ip.bits >> host) << host }
}

const cidrContains = (cidr: Cidr, ip: Ip): boolean =>
  ip.family === cidr.ip.family && maskedIp({ ip, prefix: cidr.prefix }).bits === maskedIp(cidr).bits

// ---------------------------------------------------------------------------------------------------------------------
// semantic versions (strict: MAJOR.MINOR.PATCH[-pre][+build])

interface Semver {
  readonly major: bigint
  readonly minor: bigint
  readonly patch: bigint
  readonly pre: ReadonlyArray<string>
}

const semverPattern =
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$/

const parseSemver = (text: string, normalize: boolean): Semver | undefined => {
  let input = text
  if (normalize) {
    input = input.replace(/^v/, "")
    const core = /^(\d+)(?:\.(\d+))?(?:\.(\d+))?(.*)$/.exec(input)
    if (core !== null) {
      input = `${String(Number(core[1]))}.${String(Number(core[2] ?? 0))}.${String(Number(core[3] ?? 0))}${core[4]}`
    }
  }
  const m = semverPattern.exec(input)
  if (m === null) return undefined
  return { major: BigInt(m[1]!), minor: BigInt(m[2]!), patch: BigInt(m[3]!), pre: m[4] === undefined ? [] : m[4].split(".") }
}

const compareSemver = (a: Semver, b: Semver): number => {
  for (const k of ["major", "minor", "patch"] as const) if (a[k] !== b[k]) return a[k] < b[k] ? -1 : 1
  if (a.pre.length === 0 || b.pre.length === 0) return b.pre.length - a.pre.length
  for (let i = 0; i < Math.min(a.pre.length, b.pre.length); i++) {
    const x = a.pre[i]!
    const y = b.pre[i]!
    if (x === y) continue
    const nx = /^\d+$/.test(x)
    const ny = /^\d+$/.test(y)
    if (nx && ny) return Number(x) < Number(y) ? -1 : 1
    if (nx !== ny) return nx ? -1 : 1
    return x < y ? -1 : 1
  }
  return a.pre.length - b.pre.length
}

// ---------------------------------------------------------------------------------------------------------------------
// named formats (format.dns1123Label() ...), with the API server's messages

const dns1123LabelPattern = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/
const dns1123SubdomainPattern = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/
const dns1035LabelPattern = /^[a-z]([-a-z0-9]*[a-z0-9])?$/
const qualifiedNamePattern = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/
const labelValuePattern = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/

const dns1123LabelErrors = (s: string): Array<string> => [
  ...(s.length > 63 ? ["must be no more than 63 characters"] : []),
  ...(!dns1123LabelPattern.test(s)
    ? [
      "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end " +
      "with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is " +
      "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
    ]
    : [])
]

const dns1123SubdomainErrors = (s: string): Array<string> => [
  ...(s.length > 253 ? ["must be no more than 253 characters"] : []),
  ...(!dns1123SubdomainPattern.test(s)
    ? [
      "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start " +
      "and end with an alphanumeric character (e.g. 'example.com', regex used for validation is " +
      "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
    ]
    : [])
]

const dns1035LabelErrors = (s: string): Array<string> => [
  ...(s.length > 63 ? ["must be no more than 63 characters"] : []),
  ...(!dns1035LabelPattern.test(s)
    ? [
      "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic " +
      "character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation " +
      "is '[a-z]([-a-z0-9]*[a-z0-9])?')"
    ]
    : [])
]

/** A name prefix (`generateName`) is checked with a letter put after it, as the API server does. */
const prefixed = (check: (s: string) => Array<string>) => (s: string) => check(`${s}a`)

const qualifiedNameErrors = (s: string): Array<string> => {
  const parts = s.split("/")
  const name = parts.length === 2 ? parts[1]! : parts[0]!
  const out: Array<string> = []
  if (parts.length > 2) {
    return [
      "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an " +
      "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is " +
      "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. " +
      "'example.com/MyName')"
    ]
  }
  if (parts.length === 2) {
    if (parts[0] === "") out.push("prefix part must be non-empty")
    else out.push(...dns1123SubdomainErrors(parts[0]!).map((e) => `prefix part ${e}`))
  }
  if (name === "") out.push("name part must be non-empty")
  else if (name.length > 63) out.push("name part must be no more than 63 characters")
  if (name !== "" && !qualifiedNamePattern.test(name)) {
    out.push(
      "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an " +
        "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is " +
        "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
    )
  }
  return out
}

const formats: Record<string, (s: string) => Array<string>> = {
  dns1123Label: dns1123LabelErrors,
  dns1123Subdomain: dns1123SubdomainErrors,
  dns1035Label: dns1035LabelErrors,
  qualifiedName: qualifiedNameErrors,
  dns1123LabelPrefix: prefixed(dns1123LabelErrors),
  dns1123SubdomainPrefix: prefixed(dns1123SubdomainErrors),
  dns1035LabelPrefix: prefixed(dns1035LabelErrors),
  labelValue: (s) => [
    ...(s.length > 63 ? ["must be no more than 63 characters"] : []),
    ...(!labelValuePattern.test(s)
      ? [
        "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start " +
        "and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for " +
        "validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
      ]
      : [])
  ],
  uri: (s) => (parseUrl(s) === undefined ? [`parse ${JSON.stringify(s)}: invalid URI for request`] : []),
  uuid: (s) =>
    /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i.test(s)
      ? []
      : ["does not match the UUID format"],
  byte: (s) => (/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(s) ? [] : ["invalid base64"]),
  date: (s) => (/^\d{4}-\d{2}-\d{2}$/.test(s) && !Number.isNaN(Date.parse(s)) ? [] : ["invalid date"]),
  datetime: (s) =>
    /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/.test(s) && !Number.isNaN(Date.parse(s))
      ? []
      : ["invalid datetime"]
}

// ---------------------------------------------------------------------------------------------------------------------
// the environment

const build = (): Library => {
  const rt = runtime()
  const { cel } = rt
  const { celFunc, celMethod, CelScalar: T, listType, mapType } = cel
  const descs = opaqueTypes(rt)
  const quantity = makeOpaque<QuantityModule.Quantity>(rt, descs.Quantity)
  const url = makeOpaque<ParsedUrl>(rt, descs.URL)
  const ipType = makeOpaque<Ip>(rt, descs.IP)
  const cidrType = makeOpaque<Cidr>(rt, descs.CIDR)
  const semver = makeOpaque<Semver>(rt, descs.Semver)
  const format = makeOpaque<(s: string) => Array<string>>(rt, descs.Format)
  const optional = makeOpaque<{ readonly present: boolean; readonly value: CelValue }>(rt, descs.Optional)
  const DYN_LIST = listType(T.DYN)
  const STRING_LIST = listType(T.STRING)

  const some = (value: CelValue) => optional.make("some", { present: true, value })
  const none = optional.make("none", { present: false, value: null })

  const toQuantity = (text: string) => {
    const parsed = QuantityModule.parse(text)
    if (Result.isFailure(parsed)) throw new Error(`quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`)
    return quantity.make(QuantityModule.format(parsed.success), parsed.success)
  }
  const fromNanos = (nanos: bigint, like: QuantityModule.Quantity) => {
    const q = QuantityModule.make(nanos, like.format)
    return quantity.make(QuantityModule.format(q), q)
  }
  const wholeUnits = (nanos: bigint): bigint => nanos / 1_000_000_000n
  const toIp = (text: string) => {
    const parsed = parseIp(text)
    if (parsed === undefined) throw new Error(`IP Address ${JSON.stringify(text)} parse error during conversion from string: ParseAddr(${JSON.stringify(text)}): unable to parse IP`)
    return ipType.make(formatIp(parsed), parsed)
  }
  const toCidr = (text: string) => {
    const parsed = parseCidr(text)
    if (parsed === undefined) throw new Error(`network address parse error during conversion from string: netip.ParsePrefix(${JSON.stringify(text)}): bad prefix`)
    return cidrType.make(`${formatIp(parsed.ip)}/${parsed.prefix}`, parsed)
  }
  const toSemver = (text: string, normalize: boolean) => {
    const parsed = parseSemver(text, normalize)
    if (parsed === undefined) throw new Error(`Semver parse error: ${text}`)
    return semver.make(text, parsed)
  }
  const list = (l: CelList): Array<CelValue> => [...l]
  const sum = (l: CelList): CelValue => {
    const items = list(l)
    if (items.length === 0) return 0n
    let total: CelValue = items[0]!
    for (const v of items.slice(1)) {
      if (typeof total === "bigint" && typeof v === "bigint") total = total + v
      else if (typeof total === "number" && typeof v === "number") total = total + v
      else throw new Error("no such overload")
    }
    return total
  }
  const extreme = (name: string, sign: number) => (l: CelList): CelValue => {
    const items = list(l)
    if (items.length === 0) throw new Error(`${name} called on empty list`)
    return items.reduce((best, v) => (compare(v, best) * sign > 0 ? v : best))
  }
  const indexOf = (l: CelList, v: CelValue, last: boolean): bigint => {
    const items = list(l)
    for (let n = 0; n < items.length; n++) {
      const i = last ? items.length - 1 - n : n
      if (celEquals(rt, items[i]!, v)) return BigInt(i)
    }
    return -1n
  }
  const stringList = (l: CelList): Array<CelValue> => list(l)
  const contains = (a: CelList, b: CelList) => stringList(b).every((x) => stringList(a).some((y) => celEquals(rt, x, y)))

  const regexFind = (s: string, pattern: string, limit: bigint): Array<string> => {
    if (limit === 0n) return []
    compileRe2(rt, pattern) // RE2 syntax, with RE2's own error for a bad pattern
    const re = toJsRegExp(pattern)
    const out: Array<string> = []
    for (const m of s.matchAll(re)) {
      out.push(m[0])
      if (limit > 0n && BigInt(out.length) >= limit) break
    }
    return out
  }

  const funcs: Array<CelFunc> = [
    ...rt.ext.strings,
    // lists
    celMethod("isSorted", DYN_LIST, [], T.BOOL, function() {
      const items = list(this)
      return items.every((v, i) => i === 0 || compare(items[i - 1]!, v) <= 0)
    }),
    celMethod("sum", DYN_LIST, [], T.DYN, function() {
      return sum(this) as never
    }),
    celMethod("min", DYN_LIST, [], T.DYN, function() {
      return extreme("min", -1)(this) as never
    }),
    celMethod("max", DYN_LIST, [], T.DYN, function() {
      return extreme("max", 1)(this) as never
    }),
    celMethod("indexOf", DYN_LIST, [T.DYN], T.INT, function(v) {
      return indexOf(this, v, false)
    }),
    celMethod("lastIndexOf", DYN_LIST, [T.DYN], T.INT, function(v) {
      return indexOf(this, v, true)
    }),
    // regex: the function form of `matches`, which the standard library has and the evaluator lacks
    celFunc("matches", [T.STRING, T.STRING], T.BOOL, (s, p) => compileRe2(rt, p).test(s)),
    celMethod("find", T.STRING, [T.STRING], T.STRING, function(p) {
      return regexFind(this, p, 1n)[0] ?? ""
    }),
    celMethod("findAll", T.STRING, [T.STRING], STRING_LIST, function(p) {
      return regexFind(this, p, -1n)
    }),
    celMethod("findAll", T.STRING, [T.STRING, T.INT], STRING_LIST, function(p, n) {
      return regexFind(this, p, n)
    }),
    // URLs
    celFunc("url", [T.STRING], url.type, (s) => {
      const parsed = parseUrl(s)
      if (parsed === undefined) throw new Error(`URL parse error during conversion from string: parse ${JSON.stringify(s)}: invalid URI for request`)
      return url.make(s, parsed)
    }),
    celFunc("isURL", [T.STRING], T.BOOL, (s) => parseUrl(s) !== undefined),
    celMethod("getScheme", url.type, [], T.STRING, function() {
      return url.get(this).scheme
    }),
    celMethod("getHost", url.type, [], T.STRING, function() {
      return url.get(this).host
    }),
    celMethod("getHostname", url.type, [], T.STRING, function() {
      return url.get(this).hostname
    }),
    celMethod("getPort", url.type, [], T.STRING, function() {
      return url.get(this).port
    }),
    celMethod("getEscapedPath", url.type, [], T.STRING, function() {
      return url.get(this).escapedPath
    }),
    celMethod("getQuery", url.type, [], mapType(T.STRING, STRING_LIST), function() {
      return new Map([...url.get(this).query].map(([k, v]) => [k, [...v]]))
    }),
    // quantities
    celFunc("quantity", [T.STRING], quantity.type, (s) => toQuantity(s)),
    celFunc("isQuantity", [T.STRING], T.BOOL, (s) => Result.isSuccess(QuantityModule.parse(s))),
    celMethod("sign", quantity.type, [], T.INT, function() {
      const n = quantity.get(this).nanos
      return n > 0n ? 1n : n < 0n ? -1n : 0n
    }),
    celMethod("isInteger", quantity.type, [], T.BOOL, function() {
      return quantity.get(this).nanos % 1_000_000_000n === 0n
    }),
    celMethod("asInteger", quantity.type, [], T.INT, function() {
      const n = quantity.get(this).nanos
      if (n % 1_000_000_000n !== 0n) throw new Error("cannot convert value to integer")
      const units = wholeUnits(n)
      if (units > 9223372036854775807n || units < -9223372036854775808n) throw new Error("integer overflow")
      return units
    }),
    celMethod("asApproximateFloat", quantity.type, [], T.DOUBLE, function() {
      return QuantityModule.toNumber(quantity.get(this))
    }),
    ...([["add", 1n], ["sub", -1n]] as const).flatMap(([name, sign]) => [
      celMethod(name, quantity.type, [quantity.type], quantity.type, function(other) {
        const q = quantity.get(this)
        return fromNanos(q.nanos + sign * quantity.get(other).nanos, q)
      }),
      celMethod(name, quantity.type, [T.INT], quantity.type, function(n) {
        const q = quantity.get(this)
        return fromNanos(q.nanos + sign * n * 1_000_000_000n, q)
      })
    ]),
    celMethod("isGreaterThan", quantity.type, [quantity.type], T.BOOL, function(o) {
      return quantity.get(this).nanos > quantity.get(o).nanos
    }),
    celMethod("isLessThan", quantity.type, [quantity.type], T.BOOL, function(o) {
      return quantity.get(this).nanos < quantity.get(o).nanos
    }),
    celMethod("compareTo", quantity.type, [quantity.type], T.INT, function(o) {
      return BigInt(QuantityModule.compare(quantity.get(this), quantity.get(o)))
    }),
    // IP addresses and CIDRs
    celFunc("ip", [T.STRING], ipType.type, (s) => toIp(s)),
    celFunc("isIP", [T.STRING], T.BOOL, (s) => parseIp(s) !== undefined),
    celFunc("ip.isCanonical", [T.STRING], T.BOOL, (s) => {
      const parsed = parseIp(s)
      if (parsed === undefined) throw new Error(`IP Address ${JSON.stringify(s)} parse error during conversion from string`)
      return formatIp(parsed) === s
    }),
    celMethod("family", ipType.type, [], T.INT, function() {
      return BigInt(ipType.get(this).family)
    }),
    celMethod("isUnspecified", ipType.type, [], T.BOOL, function() {
      return ipType.get(this).bits === 0n
    }),
    celMethod("isLoopback", ipType.type, [], T.BOOL, function() {
      const ip = ipType.get(this)
      return ip.family === 4 ? ip.bits >> 24n === 127n : ip.bits === 1n
    }),
    celMethod("isLinkLocalMulticast", ipType.type, [], T.BOOL, function() {
      const ip = ipType.get(this)
      return ip.family === 4 ? ip.bits >> 8n === 0xe00000n : ip.bits >> 112n === 0xff02n
    }),
    celMethod("isLinkLocalUnicast", ipType.type, [], T.BOOL, function() {
      const ip = ipType.get(this)
      return ip.family === 4 ? ip.bits >> 16n === 0xa9fen : ip.bits >> 118n === 0x3fan
    }),
    celMethod("isGlobalUnicast", ipType.type, [], T.BOOL, function() {
      const ip = ipType.get(this)
      if (ip.bits === 0n) return false
      if (ip.family === 4) {
        const first = ip.bits >> 24n
        return ip.bits !== 0xffffffffn && first !== 127n && first < 224n && ip.bits >> 16n !== 0xa9fen
      }
      return ip.bits !== 1n && ip.bits >> 120n !== 0xffn && ip.bits >> 118n !== 0x3fan
    }),
    celFunc("string", [ipType.type], T.STRING, (v) => formatIp(ipType.get(v))),
    celFunc("cidr", [T.STRING], cidrType.type, (s) => toCidr(s)),
    celFunc("isCIDR", [T.STRING], T.BOOL, (s) => parseCidr(s) !== undefined),
    celMethod("containsIP", cidrType.type, [ipType.type], T.BOOL, function(ip) {
      return cidrContains(cidrType.get(this), ipType.get(ip))
    }),
    celMethod("containsIP", cidrType.type, [T.STRING], T.BOOL, function(s) {
      return cidrContains(cidrType.get(this), ipType.get(toIp(s)))
    }),
    celMethod("containsCIDR", cidrType.type, [cidrType.type], T.BOOL, function(other) {
      const outer = cidrType.get(this)
      const inner = cidrType.get(other)
      return inner.prefix >= outer.prefix && cidrContains(outer, inner.ip)
    }),
    celMethod("containsCIDR", cidrType.type, [T.STRING], T.BOOL, function(s) {
      const outer = cidrType.get(this)
      const inner = cidrType.get(toCidr(s))
      return inner.prefix >= outer.prefix && cidrContains(outer, inner.ip)
    }),
    celMethod("ip", cidrType.type, [], ipType.type, function() {
      const ip = cidrType.get(this).ip
      return ipType.make(formatIp(ip), ip)
    }),
    celMethod("masked", cidrType.type, [], cidrType.type, function() {
      const c = cidrType.get(this)
      const masked = { ip: maskedIp(c), prefix: c.prefix }
      return cidrType.make(`${formatIp(masked.ip)}/${c.prefix}`, masked)
    }),
    celMethod("prefixLength", cidrType.type, [], T.INT, function() {
      return BigInt(cidrType.get(this).prefix)
    }),
    celFunc("string", [cidrType.type], T.STRING, (v) => {
      const c = cidrType.get(v)
      return `${formatIp(c.ip)}/${c.prefix}`
    }),
    // semantic versions
    celFunc("semver", [T.STRING], semver.type, (s) => toSemver(s, false)),
    celFunc("semver", [T.STRING, T.BOOL], semver.type, (s, normalize) => toSemver(s, normalize)),
    celFunc("isSemver", [T.STRING], T.BOOL, (s) => parseSemver(s, false) !== undefined),
    celFunc("isSemver", [T.STRING, T.BOOL], T.BOOL, (s, normalize) => parseSemver(s, normalize) !== undefined),
    ...(["major", "minor", "patch"] as const).map((part) =>
      celMethod(part, semver.type, [], T.INT, function() {
        return semver.get(this)[part]
      })
    ),
    celMethod("isGreaterThan", semver.type, [semver.type], T.BOOL, function(o) {
      return compareSemver(semver.get(this), semver.get(o)) > 0
    }),
    celMethod("isLessThan", semver.type, [semver.type], T.BOOL, function(o) {
      return compareSemver(semver.get(this), semver.get(o)) < 0
    }),
    celMethod("compareTo", semver.type, [semver.type], T.INT, function(o) {
      return BigInt(Math.sign(compareSemver(semver.get(this), semver.get(o))))
    }),
    // named formats
    ...Object.entries(formats).map(([name, check]) =>
      celFunc(`format.${name}`, [], format.type, () => format.make(name, check))
    ),
    celFunc("format.named", [T.STRING], optional.type, (name) => {
      const check = formats[name]
      return check === undefined ? none : some(format.make(name, check))
    }),
    celMethod("validate", format.type, [T.STRING], optional.type, function(s) {
      const errors = format.get(this)(s)
      return errors.length === 0 ? none : some(errors as never)
    }),
    // sets
    celFunc("sets.contains", [DYN_LIST, DYN_LIST], T.BOOL, (a, b) => contains(a, b)),
    celFunc("sets.equivalent", [DYN_LIST, DYN_LIST], T.BOOL, (a, b) => contains(a, b) && contains(b, a)),
    celFunc(
      "sets.intersects",
      [DYN_LIST, DYN_LIST],
      T.BOOL,
      (a, b) => stringList(a).some((x) => stringList(b).some((y) => celEquals(rt, x, y)))
    ),
    // optional values (the optional syntax itself, `.?` and `[?`, the parser does not read)
    celFunc("optional.of", [T.DYN], optional.type, (v) => some(v)),
    celFunc("optional.none", [], optional.type, () => none),
    celFunc("optional.ofNonZeroValue", [T.DYN], optional.type, (v) => (isZero(rt, v) ? none : some(v))),
    celMethod("hasValue", optional.type, [], T.BOOL, function() {
      return optional.get(this).present
    }),
    celMethod("value", optional.type, [], T.DYN, function() {
      const o = optional.get(this)
      if (!o.present) throw new Error("optional.none() dereference")
      return o.value as never
    }),
    celMethod("orValue", optional.type, [T.DYN], T.DYN, function(v) {
      const o = optional.get(this)
      return (o.present ? o.value : v) as never
    }),
    celMethod("or", optional.type, [optional.type], optional.type, function(other) {
      return optional.get(this).present ? this : other
    })
  ]
  const registry = rt.protobuf.createRegistry(...Object.values(descs))
  return {
    runtime: rt,
    funcs,
    registry,
    optional,
    timestamp: (date) => rt.wkt.timestampFromDate(date),
    duration: (text) => {
      const value = rt.cel.run("duration(d)", { d: text })
      if (rt.cel.isCelError(value)) throw value
      return value
    },
    re2: { compile: (pattern) => compileRe2(rt, pattern) }
  }
}

/**
 * An RE2 pattern, compiled once: `matches` compiles its pattern on every call otherwise (~200 µs a rule).
 * A bad pattern throws RE2's own message (`error parsing regexp: missing closing ]: ...`), as Go's does.
 */
const compileRe2 = (rt: Runtime, pattern: string): { readonly test: (s: string) => boolean } => {
  let found = patterns.get(pattern)
  if (found === undefined) {
    found = rt.re2.RE2JS.compile(pattern)
    if (patterns.size > 1000) patterns.clear()
    patterns.set(pattern, found)
  }
  return found
}

const isZero = (rt: Runtime, v: CelValue): boolean =>
  v === null || v === false || v === 0n || v === 0 || v === "" ||
  (rt.cel.isCelList(v) && v.size === 0) || (rt.cel.isCelMap(v) && v.size === 0)

/** The Kubernetes CEL environment's functions and types, built on first use. @internal */
export const library = (): Library => (built ??= build())

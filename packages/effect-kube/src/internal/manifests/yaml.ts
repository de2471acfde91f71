/**
 * YAML read as kubectl reads it, for manifests and kubeconfigs.
 *
 * kubectl (through sigs.k8s.io/yaml) parses YAML with go-yaml v2, whose rules are mostly
 * YAML 1.1, and then turns the result into JSON. The `yaml` package parses the text (its
 * failsafe schema keeps every scalar as written); this module gives the scalars, anchors,
 * merge keys and map keys the meaning go-yaml v2 and sigs.k8s.io/yaml give them:
 *
 * - booleans: `y Y yes Yes YES true True TRUE on On ON` and `n N no No NO false False
 *   FALSE off Off OFF`; null: `~ null Null NULL` and the empty scalar;
 * - integers as Go's `strconv.ParseInt(s, 0, 64)` reads them once `_` is removed: `0755`
 *   (octal, 493), `0o755`, `0x1F`, `0b101`, `1_000`, with a sign; sexagesimal `1:20` and
 *   timestamps stay strings; `08` and `1e3` are floats (8, 1000);
 * - `.inf`, `.nan` are floats that JSON cannot hold: kubectl refuses them, and so do we;
 * - merge keys `<<` take a map or a list of maps (earlier maps win) and, as in go-yaml v2,
 *   also override the keys written before them in the same map;
 * - a duplicate key keeps its last value; a key that is not a string becomes one as
 *   sigs.k8s.io/yaml writes it (`yes` -> `"true"`, `0755` -> `"493"`, `1e6` -> `"1e+06"`);
 *   a null key, a list or map as a key, and an integer key above 2^63 are refused;
 * - `!!str`, `!!int`, `!!float`, `!!bool`, `!!null`, `!!timestamp` are applied (and a value
 *   that does not fit its tag is refused); `!!binary` is decoded; other tags are ignored.
 * - the escape `\/` in a double-quoted string (YAML 1.2, JSON) is refused, as go-yaml v2 does.
 *
 * Integers above 2^53 lose precision (JavaScript numbers), where kubectl keeps an int64.
 * Errors give a line and column, never the text, which may be Secret data.
 *
 * A stream is read a document at a time, and reading stops at the first document that is
 * wrong: the `yaml` parser's time and memory grow with every error and every document
 * (5 MB of `---` lines ran a 1 GB heap out; a run of `{` or `[` a few thousand deep made it
 * run out of stack, which V8 can take down the process for), so a stream may hold at most
 * `maxDocuments` documents, nest at most `maxDepth` collections and hold at most
 * `maxNodes` scalars, list items and collections, checked as the parser goes (a compare
 * per token), before anything deeper or more is built: the parser's nodes cost about
 * 150 bytes and 20 µs each, so a million of them (a few MB of `k: v` lines) is ~300 MB and
 * 10 s of CPU.
 *
 * @internal
 */
import * as Base64 from "effect/encoding/Base64"
import * as Result from "effect/Result"
import * as Yaml from "yaml"

/** What is wrong with a document, and where (1-based line and column), without quoting it. @internal */
export interface Problem {
  readonly detail: string
  readonly line?: number | undefined
  readonly column?: number | undefined
}

/** One document of a stream: its value (`undefined` when it is empty or null) or what is wrong with it. @internal */
export type Document = Result.Result<unknown, Problem>

// ---------------------------------------------------------------------------------------------------------------------
// text
// ---------------------------------------------------------------------------------------------------------------------

const utf8 = new TextDecoder("utf-8")

/**
 * Text from the bytes of a file, as kubectl's file reader does (`unicode.BOMOverride`): a
 * UTF-16 BOM (LE or BE, as Windows PowerShell writes) selects UTF-16, a UTF-8 BOM is
 * dropped, anything else is UTF-8. A string keeps its text, without a leading BOM.
 *
 * @internal
 */
export const decodeText = (input: string | Uint8Array): string => {
  if (typeof input === "string") return input.charCodeAt(0) === 0xfeff ? input.slice(1) : input
  if (input.length >= 2 && input[0] === 0xff && input[1] === 0xfe) {
    return new TextDecoder("utf-16le").decode(input.subarray(2))
  }
  if (input.length >= 2 && input[0] === 0xfe && input[1] === 0xff) {
    return new TextDecoder("utf-16be").decode(input.subarray(2))
  }
  // TextDecoder drops a UTF-8 BOM by default.
  return utf8.decode(input)
}

/**
 * Says when text looks like UTF-16 that was read as UTF-8 (the BOM turned into two U+FFFD,
 * or every other character NUL), so a message can tell the caller to pass the bytes.
 *
 * @internal
 */
export const looksLikeMisreadUtf16 = (text: string): boolean =>
  text.startsWith("\ufffd\ufffd") || /^(?:[^\0]\0){4}|^(?:\0[^\0]){4}/.test(text)

// ---------------------------------------------------------------------------------------------------------------------
// scalars, as go-yaml v2's resolve()
// ---------------------------------------------------------------------------------------------------------------------

const strTag = "tag:yaml.org,2002:str"
const boolTag = "tag:yaml.org,2002:bool"
const intTag = "tag:yaml.org,2002:int"
const floatTag = "tag:yaml.org,2002:float"
const nullTag = "tag:yaml.org,2002:null"
const timestampTag = "tag:yaml.org,2002:timestamp"
const binaryTag = "tag:yaml.org,2002:binary"
const mergeTag = "tag:yaml.org,2002:merge"

/** A resolved scalar: Go's types matter for map keys, so integers keep their exact digits. */
type Scalar =
  | { readonly _tag: "str"; readonly value: string }
  | { readonly _tag: "bool"; readonly value: boolean }
  | { readonly _tag: "null" }
  | { readonly _tag: "int"; readonly value: bigint }
  | { readonly _tag: "uint"; readonly value: bigint }
  | { readonly _tag: "float"; readonly value: number }

const str = (value: string): Scalar => ({ _tag: "str", value })

const lookup = new Map<string, Scalar>()
for (const word of ["y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"]) {
  lookup.set(word, { _tag: "bool", value: true })
}
for (const word of ["n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"]) {
  lookup.set(word, { _tag: "bool", value: false })
}
for (const word of ["", "~", "null", "Null", "NULL"]) lookup.set(word, { _tag: "null" })
for (const word of [".nan", ".NaN", ".NAN"]) lookup.set(word, { _tag: "float", value: Number.NaN })
for (const word of [".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"]) {
  lookup.set(word, { _tag: "float", value: Number.POSITIVE_INFINITY })
}
for (const word of ["-.inf", "-.Inf", "-.INF"]) lookup.set(word, { _tag: "float", value: Number.NEGATIVE_INFINITY })

/** go-yaml's hint from the first character: only these may be anything but a string. */
const hintOf = (text: string): "M" | "." | "D" | undefined => {
  if (text === "") return "M"
  const c = text[0]!
  if (c === "+" || c === "-" || (c >= "0" && c <= "9")) return "D"
  if ("yYnNtTfFoO~".includes(c)) return "M"
  return c === "." ? "." : undefined
}

const int64Min = -(2n ** 63n)
const int64Max = 2n ** 63n - 1n
const uint64Max = 2n ** 64n - 1n

const digitsFor = { 2: /^[01]+$/, 8: /^[0-7]+$/, 10: /^[0-9]+$/, 16: /^[0-9a-fA-F]+$/ } as const

/** Go's `strconv.ParseInt(s, 0, 64)` (signed) or `ParseUint(s, 0, 64)` (unsigned), underscores already removed. */
const parseGoInt = (s: string, signed: boolean): bigint | undefined => {
  let negative = false
  let rest = s
  if (signed && (rest[0] === "+" || rest[0] === "-")) {
    negative = rest[0] === "-"
    rest = rest.slice(1)
  }
  let base: 2 | 8 | 10 | 16 = 10
  let digits = rest
  if (rest[0] === "0" && rest.length > 1) {
    const prefix = rest[1]!.toLowerCase()
    if (prefix === "b" || prefix === "o" || prefix === "x") {
      base = prefix === "b" ? 2 : prefix === "o" ? 8 : 16
      digits = rest.slice(2)
    } else {
      base = 8
      digits = rest.slice(1)
    }
  }
  if (!digitsFor[base].test(digits)) return undefined
  const magnitude = base === 10 ? BigInt(digits) : BigInt((base === 2 ? "0b" : base === 8 ? "0o" : "0x") + digits)
  const value = negative ? -magnitude : magnitude
  if (signed) return value >= int64Min && value <= int64Max ? value : undefined
  return value <= uint64Max ? value : undefined
}

/** go-yaml's `yamlStyleFloat`, then Go's ParseFloat, which refuses what overflows. */
const yamlStyleFloat = /^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/
const parseGoFloat = (s: string): number | undefined => {
  const value = Number(s)
  return Number.isFinite(value) ? value : undefined
}
/** A float starting with `.`, as Go's ParseFloat reads it (underscores only between digits). */
const dotFloat = /^\.[0-9]+(_[0-9]+)*([eE][-+]?[0-9]+(_[0-9]+)*)?$/

/** The timestamps go-yaml v2 reads (`2006-1-2`, with a time): they stay strings, as written. */
const time = "[0-9]{1,2}:[0-9]{1,2}:[0-9]{1,2}(?:\\.[0-9]+)?"
const timestamp = new RegExp(`^[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:[Tt]${time}(?:Z|[-+][0-9]{2}:[0-9]{2})| ${time})?$`)

/** Resolves a plain scalar (or one with a standard tag) as go-yaml v2 does. */
const resolvePlain = (text: string): Scalar => {
  const hint = hintOf(text)
  if (hint === undefined) return str(text)
  const known = lookup.get(text)
  if (known !== undefined) return known
  if (hint === ".") {
    const value = dotFloat.test(text) ? parseGoFloat(text.replace(/_/g, "")) : undefined
    return value === undefined ? str(text) : { _tag: "float", value }
  }
  if (hint === "D") {
    // A timestamp (4 digits, then "-") never reads as a number: go-yaml keeps its text.
    const plain = text.replace(/_/g, "")
    const signed = parseGoInt(plain, true)
    if (signed !== undefined) return { _tag: "int", value: signed }
    const unsigned = parseGoInt(plain, false)
    if (unsigned !== undefined) return { _tag: "uint", value: unsigned }
    if (yamlStyleFloat.test(plain)) {
      const value = parseGoFloat(plain)
      if (value !== undefined) return { _tag: "float", value }
    }
  }
  return str(text)
}

const shortTag = (tag: string) => tag.replace("tag:yaml.org,2002:", "!!")

/** The value a scalar node holds, as go-yaml v2's decoder gives it to an `interface{}`. */
const resolveScalar = (node: Yaml.Scalar): Result.Result<Scalar, string> => {
  const text = String(node.source ?? node.value ?? "")
  const tag = node.tag ?? ""
  const plain = node.type === "PLAIN" || node.type === undefined
  if (tag === "") return Result.succeed(plain ? resolvePlain(text) : str(text))
  if (tag === strTag || (tag === timestampTag && timestamp.test(text))) return Result.succeed(str(text))
  if (tag === binaryTag) {
    const decoded = Base64.decode(text.replace(/[\r\n]/g, ""))
    return Result.isSuccess(decoded)
      ? Result.succeed(str(utf8.decode(decoded.success)))
      : Result.fail("is not valid base64 for its !!binary tag")
  }
  if (tag === boolTag || tag === intTag || tag === floatTag || tag === nullTag || tag === timestampTag) {
    const resolved = resolvePlain(text)
    const got = resolved._tag === "uint" ? "int" : resolved._tag
    if (`tag:yaml.org,2002:${got}` === tag) return Result.succeed(resolved)
    // go-yaml turns an int64 into a float for !!float, but not a uint64.
    if (tag === floatTag && resolved._tag === "int") {
      return Result.succeed({ _tag: "float", value: Number(resolved.value) })
    }
    return Result.fail(`cannot be read as ${shortTag(tag)}`)
  }
  // Any other tag (`!foo`, `!`, `!!set`...) is ignored by go-yaml: the text is a string.
  return Result.succeed(str(text))
}

const scalarValue = (scalar: Scalar): unknown => {
  switch (scalar._tag) {
    case "null":
      return null
    case "int":
    case "uint":
      return Number(scalar.value)
    default:
      return scalar.value
  }
}

// ---------------------------------------------------------------------------------------------------------------------
// map keys, as sigs.k8s.io/yaml writes them
// ---------------------------------------------------------------------------------------------------------------------

/** The exact decimal digits of a finite, non-zero double, and the exponent of the first one. */
const exactDigits = (value: number): { readonly digits: string; readonly exponent: number } => {
  const view = new DataView(new ArrayBuffer(8))
  view.setFloat64(0, Math.abs(value))
  const bits = view.getBigUint64(0)
  const biased = Number(bits >> 52n)
  const fraction = bits & ((1n << 52n) - 1n)
  const mantissa = biased === 0 ? fraction : fraction | (1n << 52n)
  const power = (biased === 0 ? 1 : biased) - 1075
  // value = mantissa * 2^power = digits * 10^-scale
  const [integer, scale] = power >= 0 ? [mantissa << BigInt(power), 0] : [mantissa * 5n ** BigInt(-power), -power]
  const text = integer.toString()
  const trimmed = text.replace(/0+$/, "")
  return { digits: trimmed, exponent: text.length - 1 - scale }
}

/** Rounds a digit string to `precision` digits, half to even, as Go's shortest formatting does on a tie. */
const roundDigits = (digits: string, precision: number): { readonly digits: string; readonly carry: boolean } => {
  if (digits.length <= precision) return { digits, carry: false }
  const kept = digits.slice(0, precision)
  const rest = digits.slice(precision)
  const half = rest[0]! > "5" || (rest[0] === "5" && (/[1-9]/.test(rest.slice(1)) || Number(kept.at(-1)) % 2 === 1))
  if (!half) return { digits: kept, carry: false }
  const up = (BigInt(kept) + 1n).toString()
  return up.length > kept.length ? { digits: up.slice(0, precision), carry: true } : { digits: up, carry: false }
}

/** Go's `strconv.FormatFloat(f, 'g', -1, 32)`: the shortest float32 digits, `e` notation from 1e6 or below 1e-4. */
const formatFloat32 = (value: number): string => {
  const f = Math.fround(value)
  if (Number.isNaN(f)) return ".nan"
  if (f === Number.POSITIVE_INFINITY) return ".inf"
  if (f === Number.NEGATIVE_INFINITY) return "-.inf"
  if (f === 0) return Object.is(f, -0) ? "-0" : "0"
  const exact = exactDigits(f)
  let significant = exact.digits
  let exponent = exact.exponent
  for (let precision = 1; precision <= 9; precision++) {
    const rounded = roundDigits(exact.digits, precision)
    const e = exact.exponent + (rounded.carry ? 1 : 0)
    if (Math.abs(Math.fround(Number(`${rounded.digits}e${e - rounded.digits.length + 1}`))) === Math.abs(f)) {
      significant = rounded.digits.replace(/0+$/, "") || "0"
      exponent = e
      break
    }
  }
  const sign = f < 0 ? "-" : ""
  if (exponent < -4 || exponent >= 6) {
    const rest = significant.length > 1 ? `${significant[0]}.${significant.slice(1)}` : significant
    const e = Math.abs(exponent)
    return `${sign}${rest}e${exponent < 0 ? "-" : "+"}${e < 10 ? "0" : ""}${e}`
  }
  if (exponent < 0) return `${sign}0.${"0".repeat(-exponent - 1)}${significant}`
  if (significant.length <= exponent + 1) return `${sign}${significant}${"0".repeat(exponent + 1 - significant.length)}`
  return `${sign}${significant.slice(0, exponent + 1)}.${significant.slice(exponent + 1)}`
}

const keyString = (scalar: Scalar): Result.Result<string, string> => {
  switch (scalar._tag) {
    case "str":
      return Result.succeed(scalar.value)
    case "bool":
      return Result.succeed(scalar.value ? "true" : "false")
    case "int":
      return Result.succeed(scalar.value.toString())
    case "float":
      return Result.succeed(formatFloat32(scalar.value))
    case "null":
      return Result.fail("is a null map key, which JSON cannot hold")
    case "uint":
      return Result.fail("is an integer map key above 2^63, which kubectl cannot read")
  }
}

// ---------------------------------------------------------------------------------------------------------------------
// documents, as go-yaml v2's decoder then sigs.k8s.io/yaml's JSON conversion
// ---------------------------------------------------------------------------------------------------------------------

class Failure {
  constructor(readonly detail: string, readonly node: Yaml.Node | undefined) {}
}

/** Sets a key as JSON.parse does: `__proto__` is an own property, never the prototype. */
const setKey = (object: Record<string, unknown>, key: string, value: unknown) => {
  if (key === "__proto__") {
    Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true })
  } else {
    object[key] = value
  }
}

/** go-yaml v2's limit on alias expansion (a "billion laughs" document). */
const allowedAliasRatio = (decodeCount: number): number =>
  decodeCount <= 400_000 ? 0.99 : decodeCount >= 4_000_000 ? 0.1 : 0.99 - 0.89 * ((decodeCount - 400_000) / 3_600_000)

/** Finds what each alias refers to: the latest anchor of that name before it, as go-yaml's parser does. */
const bindAliases = (root: unknown): Map<Yaml.Alias, Yaml.Node | undefined> => {
  const anchors = new Map<string, Yaml.Node>()
  const bound = new Map<Yaml.Alias, Yaml.Node | undefined>()
  const walk = (node: unknown): void => {
    if (Yaml.isAlias(node)) {
      bound.set(node, anchors.get(node.source))
      return
    }
    if (Yaml.isPair(node)) {
      walk(node.key)
      walk(node.value)
      return
    }
    if (!Yaml.isNode(node)) return
    if (node.anchor !== undefined) anchors.set(node.anchor, node)
    if (Yaml.isMap(node)) {
      for (const pair of node.items) {
        walk(pair.key)
        walk(pair.value)
      }
    } else if (Yaml.isSeq(node)) {
      for (const item of node.items) walk(item)
    }
  }
  walk(root)
  return bound
}

const isMergeKey = (key: unknown): boolean =>
  Yaml.isScalar(key) && String(key.source ?? key.value) === "<<" &&
  ((key.tag === undefined && key.type === "PLAIN") || key.tag === mergeTag)

/** How strict to be beyond kubectl's reading. @internal */
export interface Options {
  /**
   * Refuse a key written twice in one map, as kubectl's client-side validation does
   * (go-yaml itself keeps the last value, as client-go does for a kubeconfig).
   */
  readonly uniqueKeys?: boolean | undefined
  /** The most documents read; one more is a failure (default `defaultMaxDocuments`). */
  readonly maxDocuments?: number | undefined
  /** The deepest nesting of collections (aliases expanded); deeper is a failure (default `defaultMaxDepth`). */
  readonly maxDepth?: number | undefined
  /** The most scalars, list items and collections in the stream; more is a failure (default `defaultMaxNodes`). */
  readonly maxNodes?: number | undefined
}

/**
 * The default `maxNodes`: a 16 MB `kubectl get -o yaml` dump holds about 600,000, a 10 MB
 * bundle of CRDs about 200,000.
 *
 * @internal
 */
export const defaultMaxNodes = 1_000_000

/**
 * Whether a lexeme of the `yaml` lexer starts a node: a scalar (plain ones come after the
 * `\x1f` marker, quoted ones are one lexeme), a flow collection, a list item or an alias.
 */
const startsNode = (lexeme: string): boolean => {
  switch (lexeme.charCodeAt(0)) {
    case 0x1f: // the scalar marker
    case 0x22: // "
    case 0x27: // '
    case 0x7b: // {
    case 0x5b: // [
    case 0x2a: // * (an alias)
      return true
    case 0x2d: // -
      return lexeme.length === 1
    default:
      return false
  }
}

/**
 * The default `maxDocuments`: a rendered chart or kustomization holds hundreds of
 * documents; a stream of more is not written by hand, and costs the parser seconds.
 *
 * @internal
 */
export const defaultMaxDocuments = 10_000

/**
 * The default `maxDepth`: real manifests and kubeconfigs nest a few dozen levels (a CRD's
 * schema the most); the `yaml` parser's recursion runs out of stack at 500 to 1,500 levels
 * depending on the construct.
 *
 * @internal
 */
export const defaultMaxDepth = 256

/** `\/` in a double-quoted scalar: a YAML 1.2 (and JSON) escape that go-yaml v2 refuses. */
const slashEscape = /(?:^|[^\\])(?:\\\\)*\\\//

const convertDocument = (root: Yaml.Node | null, text: string, options: Options, maxDepth: number): unknown => {
  const aliases = bindAliases(root)
  const expanding = new Set<Yaml.Alias>()
  let decodeCount = 0
  let aliasCount = 0
  let aliasDepth = 0
  // the nesting of the value being built: an alias can nest its anchor's value deeper than the text does
  let depth = 0
  const enter = (node: Yaml.Node) => {
    if (++depth > maxDepth) throw new Failure(`nests collections more than ${maxDepth} deep (maxDepth)`, node)
  }

  const follow = (alias: Yaml.Alias): Yaml.Node => {
    const target = aliases.get(alias)
    // the anchor's name is not repeated: in a mangled file it may be a piece of a secret value
    if (target === undefined) throw new Failure("refers to an anchor not defined before it", alias)
    if (expanding.has(alias)) throw new Failure(`refers to an anchor whose value contains itself`, alias)
    if (aliasCount > 100 && decodeCount > 1000 && aliasCount / decodeCount > allowedAliasRatio(decodeCount)) {
      throw new Failure("the document contains excessive aliasing", alias)
    }
    return target
  }

  const withAlias = <A>(alias: Yaml.Alias, f: (target: Yaml.Node) => A): A => {
    const target = follow(alias)
    expanding.add(alias)
    aliasDepth++
    try {
      return f(target)
    } finally {
      aliasDepth--
      expanding.delete(alias)
    }
  }

  /**
   * The text of a plain key glued to a `:` that ends a flow entry (`[a:, x]`, `{a:}`): in
   * YAML 1.2 an empty value, for go-yaml v2 part of the scalar, `a:`. Undefined otherwise.
   */
  const gluedColon = (pair: Yaml.Pair): string | undefined => {
    const key = pair.key
    if (!Yaml.isScalar(key) || key.type !== "PLAIN" || key.tag !== undefined || !key.range) return undefined
    const end = key.range[1]
    if (text[end] !== ":" || !",]}".includes(text[end + 1] ?? " ")) return undefined
    const value = pair.value
    if (value !== null && !(Yaml.isScalar(value) && value.source === "" && value.tag === undefined)) return undefined
    return `${String(key.source)}:`
  }

  const scalar = (node: Yaml.Scalar): Scalar => {
    if (node.type === "QUOTE_DOUBLE" && node.range !== undefined && node.range !== null) {
      if (slashEscape.test(text.slice(node.range[0], node.range[1]))) {
        throw new Failure("uses the escape \\/ in a double-quoted string, which kubectl's YAML 1.1 refuses", node)
      }
    }
    const resolved = resolveScalar(node)
    if (Result.isFailure(resolved)) throw new Failure(resolved.failure, node)
    return resolved.success
  }

  const value = (node: unknown): unknown => {
    decodeCount++
    if (aliasDepth > 0) aliasCount++
    if (node === null || node === undefined) return null
    if (Yaml.isAlias(node)) return withAlias(node, value)
    if (Yaml.isScalar(node)) {
      const resolved = scalar(node)
      if (resolved._tag === "float" && !Number.isFinite(resolved.value)) {
        throw new Failure("is .inf or .nan, which JSON cannot hold", node)
      }
      return scalarValue(resolved)
    }
    if (Yaml.isSeq(node)) {
      enter(node)
      const items = node.items.map((item) => value(item))
      depth--
      return items
    }
    if (Yaml.isPair(node)) {
      // `[a: b]`: a single-pair map inside a flow list.
      const object: Record<string, unknown> = {}
      decodeCount++
      setKey(object, keyOf(node.key), value(node.value))
      return object
    }
    if (Yaml.isMap(node)) {
      // `[a:, x]`: go-yaml reads the item as the string `a:`, not as a map.
      const only = node.items.length === 1 ? node.items[0]! : undefined
      if (only !== undefined && node.flow === true && node.range && text[node.range[0]] !== "{") {
        const glued = gluedColon(only)
        if (glued !== undefined) return scalarValue(resolvePlain(glued))
      }
      const object: Record<string, unknown> = {}
      enter(node)
      into(node, object)
      depth--
      return object
    }
    throw new Failure("holds a node that is not a scalar, list or map", undefined)
  }

  /** Decodes a map's pairs into `object`: go-yaml v2 writes merged maps into the same map, in order. */
  const into = (node: Yaml.YAMLMap, object: Record<string, unknown>): void => {
    const written = options.uniqueKeys === true ? new Set<string>() : undefined
    for (const pair of node.items) {
      if (isMergeKey(pair.key)) {
        merge(pair.value, object, pair.key as Yaml.Node)
        continue
      }
      decodeCount++
      const glued = node.flow === true ? gluedColon(pair) : undefined
      const key = glued !== undefined ? keyText(resolvePlain(glued), pair.key as Yaml.Node) : keyOf(pair.key)
      if (written !== undefined) {
        if (written.has(key)) {
          // the key is not quoted: in a mangled file it may be a piece of a secret value
          throw new Failure("has a key twice in one map", pair.key as Yaml.Node)
        }
        written.add(key)
      }
      setKey(object, key, value(pair.value))
    }
  }

  const keyText = (resolved: Scalar, node: Yaml.Node): string => {
    const key = keyString(resolved)
    if (Result.isFailure(key)) throw new Failure(key.failure, node)
    return key.success
  }

  const keyOf = (node: unknown): string => {
    if (Yaml.isAlias(node)) return withAlias(node, keyOf)
    if (node === null || node === undefined) throw new Failure("is a null map key, which JSON cannot hold", undefined)
    if (!Yaml.isScalar(node)) throw new Failure("is a list or map used as a map key", node as Yaml.Node)
    return keyText(scalar(node), node)
  }

  const mergeOne = (node: unknown, object: Record<string, unknown>, at: Yaml.Node): void => {
    if (Yaml.isAlias(node)) return withAlias(node, (target) => mergeOne(target, object, at))
    if (!Yaml.isMap(node)) throw new Failure("has a merge key (<<) whose value is not a map or a list of maps", at)
    decodeCount++
    into(node, object)
  }

  const merge = (node: unknown, object: Record<string, unknown>, at: Yaml.Node): void => {
    if (Yaml.isSeq(node)) {
      // Earlier maps win: go-yaml merges them from the last to the first.
      for (let i = node.items.length - 1; i >= 0; i--) {
        const item = node.items[i]
        if (Yaml.isSeq(item)) {
          throw new Failure("has a merge key (<<) whose value is not a map or a list of maps", at)
        }
        mergeOne(item, object, at)
      }
      return
    }
    mergeOne(node, object, at)
  }

  return value(root)
}

const position = (text: string, offset: number | undefined): Pick<Problem, "line" | "column"> => {
  if (offset === undefined) return {}
  const before = text.slice(0, Math.max(0, offset))
  const lastBreak = before.lastIndexOf("\n")
  return { line: before.split("\n").length, column: offset - lastBreak }
}

/**
 * What the `yaml` parser says is wrong, without the text it quotes (`: "..."`), which may
 * be a piece of a secret value.
 */
const parserProblem = (error: Yaml.YAMLError, text: string): Problem => {
  const message = error.message.split("\n")[0]!.split(" at line")[0]!
  const quote = message.indexOf(': "')
  return {
    detail: `is not valid YAML: ${quote === -1 ? message : message.slice(0, quote)} (${error.code})`,
    ...position(text, error.pos[0])
  }
}

const composeOptions = {
  schema: "failsafe",
  version: "1.1",
  uniqueKeys: false,
  // off: the pretty form quotes the offending source line, which may be Secret data
  prettyErrors: false,
  strict: false
} as const

/**
 * Parses the documents of a YAML stream as kubectl does, up to and with the first that is
 * wrong (a later one is not read: callers stop at the first failure), or only the first
 * with `first`. An empty document, one of comments only, and `null` give `undefined`.
 * The parser is driven a token at a time, so that a stream nested past `maxDepth` or
 * longer than `maxDocuments` stops there, and a document is converted as soon as it is
 * composed (its `yaml` nodes are then let go).
 */
const parseDocuments = (text: string, options: Options, first: boolean): ReadonlyArray<Document> => {
  const maxDocuments = options.maxDocuments ?? defaultMaxDocuments
  const maxDepth = options.maxDepth ?? defaultMaxDepth
  const maxNodes = options.maxNodes ?? defaultMaxNodes
  let nodes = 0
  const out: Array<Document> = []
  let done = false
  const take = (document: Yaml.Document.Parsed) => {
    if (done) return
    if (out.length >= maxDocuments) {
      out.push(Result.fail({
        detail: `is one document more than maxDocuments (${maxDocuments.toLocaleString("en-US")})`,
        ...position(text, document.range[0])
      }))
      done = true
      return
    }
    const error = document.errors[0]
    if (error !== undefined) {
      out.push(Result.fail(parserProblem(error, text)))
      done = true
      return
    }
    try {
      const value = convertDocument(document.contents, text, options, maxDepth)
      out.push(Result.succeed(value === null ? undefined : value))
      if (first) done = true
    } catch (e) {
      if (!(e instanceof Failure)) throw e
      const offset = e.node?.range?.[0]
      out.push(Result.fail({ detail: e.detail, ...position(text, offset) }))
      done = true
    }
  }
  const parser = new Yaml.Parser()
  const composer = new Yaml.Composer(composeOptions)
  const compose = (token: Yaml.CST.Token) => {
    for (const document of composer.next(token)) take(document)
    // an error outside any document's content (text after a flow collection, `{}{}`): the
    // document it ends carries it, and nothing after it is read
    if (token.type === "error" && !done) for (const document of composer.end()) take(document)
    if (token.type === "error") done = true
  }
  for (const lexeme of new Yaml.Lexer().lex(text)) {
    if (startsNode(lexeme) && ++nodes > maxNodes) {
      const at = position(text, parser.offset)
      out.push(Result.fail({ detail: `holds more than maxNodes (${maxNodes.toLocaleString("en-US")}) values`, ...at }))
      return out
    }
    for (const token of parser.next(lexeme)) {
      compose(token)
      if (done) return out
    }
    // the tokens being built: the document and each collection open around this point
    if (parser.stack.length - 1 > maxDepth) {
      const at = position(text, parser.offset)
      out.push(Result.fail({ detail: `nests collections more than ${maxDepth} deep (maxDepth)`, ...at }))
      return out
    }
  }
  for (const token of parser.end()) {
    compose(token)
    if (done) return out
  }
  for (const document of composer.end()) take(document)
  return out
}

/**
 * Parses every document of a YAML stream as kubectl does, up to the first that is wrong
 * (the last one given then). An empty document, one of comments only, and `null` give
 * `undefined`.
 *
 * @internal
 */
export const parseAll = (text: string, options: Options = {}): ReadonlyArray<Document> =>
  parseDocuments(text, options, false)

/**
 * The first document only, as client-go reads a kubeconfig (`undefined` when empty); the
 * rest is not read.
 *
 * @internal
 */
export const parseFirst = (text: string, options: Options = {}): Document =>
  parseDocuments(text, options, true)[0] ?? Result.succeed(undefined)

/** `line 3, column 5`, or nothing when the position is unknown. @internal */
export const formatPosition = (problem: Problem): string =>
  problem.line === undefined ? "" : `line ${problem.line}, column ${problem.column}`

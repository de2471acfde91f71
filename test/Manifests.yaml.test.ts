/**
 * How Manifests.parse reads YAML, rule by rule, without kubectl: each expectation here is
 * what `kubectl create --dry-run=client -o json` printed for the same text (kubectl v1.32;
 * test/YamlKubectl.test.ts checks the fixtures against kubectl itself when it is present).
 */
import { assert, describe, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import fc from "fast-check"
import { ValidationError } from "../packages/effect-kube/src/Errors.js"
import * as Manifests from "../packages/effect-kube/src/Manifests.js"

const header = "apiVersion: yaml.test/v1\nkind: Probe\nmetadata: {name: p}\n"

/** The `spec` of a one-object manifest whose spec is `body`. */
const spec = (body: string) =>
  Effect.map(Manifests.parse(`${header}spec:\n${body}`), (objects) => {
    assert.strictEqual(objects.length, 1)
    return objects[0]!["spec"] as Record<string, unknown>
  })

const refused = (text: string | Uint8Array) =>
  Effect.flip(Manifests.parse(text)).pipe(Effect.tap((e) => Effect.sync(() => assert.instanceOf(e, ValidationError))))

describe("Manifests.parse reads YAML as kubectl does", () => {
  it.effect("numbers: 0755 is octal, Go's prefixes and underscores count, 08 and 1e3 are floats", () =>
    Effect.gen(function*() {
      const s = yield* spec(`
  defaultMode: 0755
  mode: 0400
  modes: [0o644, 0O17, -0755, +0755, 00]
  hex: [0x1F, 0X1f, -0x10, 0x_ff]
  binary: [0b101, -0b1]
  underscores: [1_000, 1__0, 1_, 1_000.5]
  floats: [08, 09.5, 1e3, 1E3, 1., .5, +.5, -.5e-3]
  strings: [0o8, 0x, 0b2, _1, 1e400, "0755"]
  big: [9223372036854775807, 18446744073709551615, 99999999999999999999999]
`)
      assert.strictEqual(s["defaultMode"], 493)
      assert.strictEqual(s["mode"], 256)
      assert.deepStrictEqual(s["modes"], [420, 15, -493, 493, 0])
      assert.deepStrictEqual(s["hex"], [31, 31, -16, 255])
      assert.deepStrictEqual(s["binary"], [5, -1])
      assert.deepStrictEqual(s["underscores"], [1000, 10, 1, 1000.5])
      assert.deepStrictEqual(s["floats"], [8, 9.5, 1000, 1000, 1, 0.5, 0.5, -0.0005])
      // Go's ParseFloat refuses what overflows, so go-yaml keeps `1e400` a string.
      assert.deepStrictEqual(s["strings"], ["0o8", "0x", "0b2", "_1", "1e400", "0755"])
      assert.deepStrictEqual(s["big"], [9223372036854775807, 18446744073709551615, 1e23])
    }))

  it.effect("sexagesimal 1:20 and timestamps stay strings (go-yaml v2 drops YAML 1.1's base 60)", () =>
    Effect.gen(function*() {
      const s = yield* spec(`
  times: [1:20, 1:20:30, 190:20:30.15, -1:20]
  dates: [2001-12-14, 2001-12-14t21:59:43.10-05:00, 2001-12-14 21:59:43.10]
`)
      assert.deepStrictEqual(s["times"], ["1:20", "1:20:30", "190:20:30.15", "-1:20"])
      assert.deepStrictEqual(s["dates"], ["2001-12-14", "2001-12-14t21:59:43.10-05:00", "2001-12-14 21:59:43.10"])
    }))

  it.effect("booleans: y, yes, on, true (three casings each) and their negatives; other casings are strings", () =>
    Effect.gen(function*() {
      const s = yield* spec(`
  yes: [y, Y, yes, Yes, YES, true, True, TRUE, on, On, ON]
  no: [n, N, no, No, NO, false, False, FALSE, off, Off, OFF]
  strings: [yES, tRUE, oN, nO, "yes", 'on', !!str off, Yes.]
`)
      // The keys `yes` and `no` are booleans too, which kubectl writes as "true" and "false".
      assert.deepStrictEqual(s["true"], Array(11).fill(true))
      assert.deepStrictEqual(s["false"], Array(11).fill(false))
      assert.deepStrictEqual(s["strings"], ["yES", "tRUE", "oN", "nO", "yes", "on", "off", "Yes."])
    }))

  it.effect("null: ~, null, Null, NULL and nothing; other casings are strings", () =>
    Effect.gen(function*() {
      const s = yield* spec(`
  nulls: [~, null, Null, NULL, !!null '']
  empty:
  strings: [nULL, "~", '']
`)
      assert.deepStrictEqual(s, { nulls: [null, null, null, null, null], empty: null, strings: ["nULL", "~", ""] })
    }))

  it.effect("anchors and merge keys: a merge overrides keys written before it, and earlier maps in a list win", () =>
    Effect.gen(function*() {
      const s = yield* spec(`
  base: &base {cpu: 100m, memory: 128Mi}
  after: {<<: *base, memory: 1Gi}
  before: {cpu: 1, <<: *base}
  list: {<<: [{a: 1}, {a: 2, b: 2}], b: 0}
  quoted: {"<<": {a: 1}}
  aliases: [*base, *base]
`)
      assert.deepStrictEqual(s["after"], { cpu: "100m", memory: "1Gi" })
      // YAML says `cpu: 1` wins; go-yaml v2 (kubectl) lets the merge override it.
      assert.deepStrictEqual(s["before"], { cpu: "100m", memory: "128Mi" })
      assert.deepStrictEqual(s["list"], { a: 1, b: 0 })
      assert.deepStrictEqual(s["quoted"], { "<<": { a: 1 } })
      const aliases = s["aliases"] as Array<Record<string, unknown>>
      assert.deepStrictEqual(aliases, [{ cpu: "100m", memory: "128Mi" }, { cpu: "100m", memory: "128Mi" }])
      // Copies, not one object shared: changing one leaves the others alone.
      assert.notStrictEqual(aliases[0], aliases[1])
    }))

  it.effect("multi-line strings: literal, folded, chomping, quoted; CRLF ends read as LF", () =>
    Effect.gen(function*() {
      const text = `
  literal: |
    one
    two
  keep: |+
    kept

  strip: |-
    stripped
  folded: >
    a
    b

    c
  quoted: "x
    y"
`
      const expected = { literal: "one\ntwo\n", keep: "kept\n\n", strip: "stripped", folded: "a b\nc\n", quoted: "x y" }
      assert.deepStrictEqual(yield* spec(text), expected)
      assert.deepStrictEqual(yield* spec(text.replace(/\n/g, "\r\n")), expected)
    }))

  it.effect("empty documents, comments only and null are skipped; indexes still count them", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* Manifests.parse("# nothing\n---\n# here either\n"), [])
      assert.deepStrictEqual(yield* Manifests.parse("---\n---\nnull\n---\n~\n...\n"), [])
      const objects = yield* Manifests.parse(`---\n---\n${header}---\n# c\n---\n${header}`)
      assert.strictEqual(objects.length, 2)
      const e = yield* refused(`---\n# c\n---\n${header}---\n${header}spec: {a: .inf}\n`)
      assert.strictEqual(e.subject, "document[2]")
      assert.match(e.detail, /line 11, column \d+/)
    }))

  it.effect("a plain scalar glued to a colon in a flow list or map keeps the colon, as go-yaml v2 reads it", () =>
    Effect.gen(function*() {
      const s = yield* spec("  list: [a:, b: , c:d, 1:]\n  map: {e:, f: 1}\n")
      assert.deepStrictEqual(s, { list: ["a:", { b: null }, "c:d", "1:"], map: { "e:": null, f: 1 } })
    }))

  it.effect("lists: any object with items is a list of them, whatever its kind; null or [] items give nothing", () =>
    Effect.gen(function*() {
      const objects = yield* Manifests.parse(`
apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}
---
apiVersion: yaml.test/v1
kind: Probe
metadata: {name: not-itself}
items: [{apiVersion: v1, kind: ConfigMap, metadata: {name: b}}]
---
apiVersion: v1
kind: List
items:
---
apiVersion: v1
kind: ConfigMapList
items: []
`)
      assert.deepStrictEqual(objects.map((o) => o.metadata?.name), ["a", "b"])
      const e = yield* refused("apiVersion: v1\nkind: List\nitems: {a: 1}\n")
      assert.strictEqual(e.subject, "document[0]")
      assert.match(e.detail, /items/)
    }))

  it.effect("tags: !!str, !!int, !!float, !!bool, !!null apply, !!binary is decoded, other tags are ignored", () =>
    Effect.gen(function*() {
      const s = yield* spec(`
  a: [!!str 0755, !!int "12", !!float 1, !!bool yes, !!null ~, !!binary aGVsbG8=, !foo 0755, !bar {x: 1}]
`)
      assert.deepStrictEqual(s["a"], ["0755", 12, 1, true, null, "hello", "0755", { x: 1 }])
      const e = yield* refused(`${header}spec:\n  count: !!int twelve\n`)
      assert.match(e.detail, /!!int.*line 5, column 16/)
    }))

  it.effect("keys that are not strings become strings as kubectl writes them", () =>
    Effect.gen(function*() {
      const s = yield* spec(`
  keys: {1: a, 0755: b, 0x10: c, 1.5: d, 1e6: e, 1e-5: f, 3.14159265358979: g, .inf: h, yes: i, off: j, 1:20: k}
`)
      assert.deepStrictEqual(Object.keys(s["keys"] as object).sort(), [
        "1",
        "1.5",
        "1:20",
        "1e+06",
        "1e-05",
        "16",
        "3.1415927",
        "493",
        ".inf",
        "false",
        "true"
      ].sort())
      // Float keys are written with float32 precision, a tie rounding to even, as Go's FormatFloat(f, 'g', -1, 32).
      const floats = yield* spec("  k: {177195.6251621122: a, 16777217.0: b, 1.4e-45: c, 1e39: d, 0.3: e}\n")
      assert.deepStrictEqual(Object.keys(floats["k"] as object).sort(), [
        "0.3",
        "1.6777216e+07",
        "177195.62",
        "1e-45",
        ".inf"
      ].sort())
      for (const key of ["~", "null", "18446744073709551615", "[a, b]", "{a: 1}"]) {
        const e = yield* refused(`${header}spec: {${key}: x}\n`)
        assert.strictEqual(e.subject, "document[0]")
        assert.match(e.detail, /key/)
      }
    }))

  it.effect("a key written twice is refused, as kubectl's validation does (also y and on, both \"true\")", () =>
    Effect.gen(function*() {
      // the key is named by its place only: in a mangled file a "key" may be a piece of a secret value
      const e = yield* refused("apiVersion: v1\nkind: ConfigMap\nkind: Secret\n")
      assert.strictEqual(e.detail, "has a key twice in one map (line 3, column 1)")
      const twice = yield* refused(`${header}spec: {y: 1, on: 2}\n`)
      assert.match(twice.detail, /^has a key twice in one map \(line 4, column \d+\)$/)
      // A merge is not a duplicate.
      assert.deepStrictEqual(yield* spec("  m: {<<: {a: 1}, a: 2}\n"), { m: { a: 2 } })
    }))

  it.effect(".inf, .nan, a self-referencing alias, an unknown alias and \\/ in double quotes are refused", () =>
    Effect.gen(function*() {
      for (const body of ["{a: .inf}", "{a: [-.Inf]}", "{a: .NaN}", "&x {a: *x}", "{a: *nowhere}", `{a: "a\\/b"}`]) {
        const e = yield* refused(`${header}spec: ${body}\n`)
        assert.strictEqual(e.subject, "document[0]")
        assert.match(e.detail, /line 4, column \d+/)
      }
      // `\\/` is a backslash and a slash, fine; `\/` in single quotes is no escape at all.
      assert.deepStrictEqual(yield* spec(`  a: "a\\\\/b"\n  b: 'a\\/b'\n`), { a: "a\\/b", b: "a\\/b" })
    }))

  it.effect("encodings: a BOM, UTF-16 LE and BE bytes with a BOM; UTF-16 read as UTF-8 gets a clear message", () =>
    Effect.gen(function*() {
      const text = `${header}spec: {mode: 0644, note: "café ✓"}\n`
      const expected = [
        { apiVersion: "yaml.test/v1", kind: "Probe", metadata: { name: "p" }, spec: { mode: 420, note: "café ✓" } }
      ]
      const units = new Uint16Array([...text].map((c) => c.charCodeAt(0)))
      const le = new Uint8Array([0xff, 0xfe, ...new Uint8Array(units.buffer)])
      const be = new Uint8Array(le.length)
      for (let i = 0; i < le.length; i += 2) [be[i], be[i + 1]] = [le[i + 1]!, le[i]!]
      assert.deepStrictEqual(yield* Manifests.parse(`\ufeff${text}`), expected)
      const utf8Bom = new Uint8Array([0xef, 0xbb, 0xbf, ...new TextEncoder().encode(text)])
      assert.deepStrictEqual(yield* Manifests.parse(utf8Bom), expected)
      assert.deepStrictEqual(yield* Manifests.parse(le), expected)
      assert.deepStrictEqual(yield* Manifests.parse(be), expected)
      const misread = yield* refused(new TextDecoder().decode(le))
      assert.match(misread.detail, /UTF-16.*Uint8Array/)
      const noBom = yield* refused(le.subarray(2))
      assert.match(noBom.detail, /UTF-16 without a byte order mark/)
    }))

  it.effect("JSON: one value, objects one after another, arrays; numbers JSON cannot hold are refused", () =>
    Effect.gen(function*() {
      const cm = (name: string) => JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name } })
      const names = (objects: ReadonlyArray<Manifests.Manifest>) => objects.map((o) => o.metadata?.name)
      assert.deepStrictEqual(names(yield* Manifests.parse(`${cm("a")}\n${cm("b")} ${cm("c")}`)), ["a", "b", "c"])
      assert.deepStrictEqual(names(yield* Manifests.parse(`[${cm("a")}, ${cm("b")}]`)), ["a", "b"])
      const e = yield* refused(`${cm("a")}\n{"apiVersion": "v1", "kind": "ConfigMap", "data": {"n": 1e400}}`)
      assert.strictEqual(e.subject, "document[1]")
      // `__proto__` is a plain key, in JSON and in YAML, never the object's prototype.
      const json = `{"apiVersion": "v1", "kind": "X", "__proto__": {"polluted": 1}}`
      for (const text of [json, `${header}__proto__: {polluted: 1}\n`]) {
        const [object] = yield* Manifests.parse(text)
        assert.isTrue(Object.hasOwn(object!, "__proto__"))
        assert.isUndefined((object as Record<string, unknown>)["polluted"])
      }
    }))

  it.effect("errors name the document and line, and never quote the text", () =>
    Effect.gen(function*() {
      const e = yield* refused(`${header}---\n${header}stringData:\n  password: "s3cr3t-value\n`)
      assert.strictEqual(e.subject, "document[1]")
      assert.match(e.detail, /not valid YAML.*line \d+, column \d+/)
      assert.notInclude(JSON.stringify(e) + e.message, "s3cr3t-value")
      // an alias is named by its position only: in a mangled file its name may be a piece of a secret
      const alias = yield* refused(`${header}data: {password: *hunter2-s3cr3t}\n`)
      assert.match(alias.detail, /anchor not defined before it.*line 4, column \d+/)
      assert.notInclude(JSON.stringify(alias) + alias.message, "hunter2-s3cr3t")
    }))

  it("any text or bytes give objects or a ValidationError, never a defect", () => {
    const pieces = ["a", ":", " ", "\n", "- ", "[", "]", "{", "}", ",", "&x", "*x", "<<", "!!int", "\"", "'", "#"]
    const more = ["---", "|", ">", "0755", "yes", "~", "\t", "\r\n", "items", "\ufeff", "\\/", ".inf", "1e400"]
    const yamlish = fc.array(fc.constantFrom(...pieces, ...more), { maxLength: 40 }).map((parts) => parts.join(""))
    fc.assert(
      fc.property(fc.oneof(yamlish, fc.string(), fc.uint8Array({ maxLength: 64 })), (input) => {
        const exit = Effect.runSyncExit(Manifests.parse(input))
        if (Exit.isFailure(exit)) {
          assert.isFalse(Cause.hasDies(exit.cause), Cause.pretty(exit.cause))
          const error = Cause.findErrorOption(exit.cause)
          assert.isTrue(error._tag === "Some" && error.value instanceof ValidationError)
        }
      }),
      { numRuns: 500 }
    )
  })
})

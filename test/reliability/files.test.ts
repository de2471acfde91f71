/**
 * Hostile local files: manifests and kubeconfigs written to cost the parser time, memory
 * or stack (millions of `---`, a run of `{`, values nested 100,000 deep, a 50 MB scalar, a
 * kubeconfig of concatenated JSON objects), and kubeconfig fields that name `/dev/zero`.
 * Each ends in a tagged error naming the limit (or a result), never a defect, in bounded
 * time, with the growth of the RSS while it ran checked and printed for the README.
 */
import { afterAll, assert, describe, layer } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { KubeConfigError, ValidationError } from "../../packages/effect-kube/src/Errors.js"
import * as KubeConfig from "../../packages/effect-kube/src/KubeConfig.js"
import * as Manifests from "../../packages/effect-kube/src/Manifests.js"
import * as NodeKube from "../../packages/effect-kube/src/NodeKube.js"
import { pki } from "../util/pki.js"
import { measure } from "../util/peak.js"
import { makeCounts, report } from "../util/reliability.js"

const counts = makeCounts()
const figures: Array<string> = []
afterAll(() => {
  report("files", counts)
  for (const figure of figures) console.log(`reliability (files): ${figure}`)
})

const MiB = 1024 * 1024

/** Runs `effect` and checks its time and the peak RSS growth while it ran, printed for the README. */
const measured = <A, E, R>(name: string, maxMs: number, maxGrowth: number, effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    counts.badInputs++
    const { exit, ms, peakGrowthBytes } = yield* measure(effect)
    figures.push(`${name}: ${ms.toFixed(0)} ms, peak RSS +${(Math.max(0, peakGrowthBytes) / MiB).toFixed(0)} MB`)
    assert.isBelow(ms, maxMs, `${name} took ${ms.toFixed(0)} ms`)
    assert.isBelow(peakGrowthBytes, maxGrowth, `${name} grew the RSS by ${(peakGrowthBytes / MiB).toFixed(0)} MB`)
    if (Exit.isFailure(exit)) assert.isFalse(Cause.hasDies(exit.cause), Cause.pretty(exit.cause))
    return exit
  })

const refusal = <A, E>(exit: Exit.Exit<A, E>): E => {
  assert.isTrue(Exit.isFailure(exit), "expected a failure")
  const error = Exit.isFailure(exit) ? Cause.findErrorOption(exit.cause) : undefined
  assert.isTrue(error?._tag === "Some", "expected a typed failure")
  return (error as { readonly value: E }).value
}

const parsed = (name: string, text: string | Uint8Array, options?: Manifests.ParseOptions) =>
  Effect.map(
    measured(name, 10_000, 400 * MiB, Manifests.parse(text, options)),
    (exit) => refusal(exit) as ValidationError
  )

describe("hostile manifests", () => {
  layer(NodeKube.layerPlatform)((it) => {
    it.effect("5 MB of `---` lines stop at maxDocuments (it ran a 1 GB heap out after 75 s)", () =>
      Effect.gen(function*() {
        const e = yield* parsed("5 MB of --- lines", "---\n".repeat(1_300_000))
        assert.instanceOf(e, ValidationError)
        assert.strictEqual(e.subject, "document[10000]")
        assert.match(e.detail, /^is one document more than maxDocuments \(10,000\) \(line 10001, column 1\)$/)
        // raised, a longer stream is read
        const configMaps = "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n".repeat(12_000)
        assert.isTrue(Exit.isFailure(yield* Effect.exit(Manifests.parse(configMaps))))
        const raised = yield* Manifests.parse(configMaps, { maxDocuments: 12_000 })
        assert.strictEqual(raised.length, 12_000)
      }))

    it.effect("runs of `{` and `[` and values nested past maxDepth fail, never overflow the stack", () =>
      Effect.gen(function*() {
        for (
          const [name, text] of [
            ["5 MB of {", "{".repeat(5 * MiB)],
            ["5 MB of [", "[".repeat(5 * MiB)],
            ["7,500 nested flow lists", "a: " + "[".repeat(7_500) + "]".repeat(7_500)],
            ["2,000 nested block maps", Array.from({ length: 2_000 }, (_, i) => `${" ".repeat(i)}k:\n`).join("")],
            ["JSON nested 100,000 deep", `{"a":${"[".repeat(100_000)}${"]".repeat(100_000)}}`]
          ] as const
        ) {
          const e = yield* parsed(name, text)
          assert.instanceOf(e, ValidationError, name)
          assert.match(e.detail, /nests collections more than 256 deep \(maxDepth\)/, name)
        }
        // 256 levels are read
        const ok = yield* Manifests.parse(`{"kind":"K","apiVersion":"v1","a":${"[".repeat(250)}${"]".repeat(250)}}`)
        assert.strictEqual(ok.length, 1)
      }))

    it.effect("an alias cannot nest its anchor past maxDepth", () =>
      Effect.gen(function*() {
        const levels = Array.from({ length: 20 }, (_, i) => `l${i + 1}: &l${i + 1} [*l${i}, *l${i}]`).join("\n")
        const e = yield* parsed("aliases nested 20 x 20", `l0: &l0 [a]\n${levels}\n`, { maxDepth: 10 })
        assert.match(e.detail, /more than 10 deep|aliases/)
      }))

    it.effect("input past maxBytes is refused before it is parsed; too many nodes stop at maxNodes", () =>
      Effect.gen(function*() {
        const quoted = `a: "${"x".repeat(50 * MiB)}"\n`
        const big = yield* parsed("a 50 MB quoted scalar", quoted)
        assert.strictEqual(big.subject, "manifests")
        assert.match(big.detail, /^are 52,428,806 characters, more than maxBytes \(16 MiB\)$/)
        const bytes = yield* parsed("50 MB of bytes", new TextEncoder().encode(quoted))
        assert.match(bytes.detail, /bytes, more than maxBytes \(16 MiB\)$/)
        const keys = Array.from({ length: 20_000 }, (_, i) => `k${i}: v`).join("\n")
        const nodes = yield* parsed("20,000 keys over maxNodes 10,000", keys, { maxNodes: 10_000 })
        assert.match(nodes.detail, /^holds more than maxNodes \(10,000\) values \(line \d+, column \d+\)$/)
      }))
  })
})

describe("hostile kubeconfigs", () => {
  layer(NodeKube.layerPlatform)((it) => {
    const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "effect-kube-files-"))
    afterAll(() => Fs.rmSync(dir, { recursive: true, force: true }))
    const certs = pki()
    const write = (name: string, text: string | Uint8Array) => {
      const path = Path.join(dir, name)
      Fs.writeFileSync(path, text)
      return path
    }
    const config = (cluster: string, user: string) =>
      "apiVersion: v1\nkind: Config\ncurrent-context: c\n" +
      `clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"${cluster}}}]\n` +
      `users: [{name: u, user: {${user}}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\n`
    const load = (name: string, path: string) =>
      measured(name, 10_000, 200 * MiB, Effect.flatMap(KubeConfig.fromFile({ path }), (s) => s.auth.credentials))

    it.effect("a file naming /dev/zero (CA, client key, token file) stops at 16 MiB", () =>
      Effect.gen(function*() {
        const cert = write("client.crt", certs.client.cert)
        for (
          const [field, path] of [
            ["certificate-authority", write("ca.yaml", config(", certificate-authority: /dev/zero", "token: t"))],
            ["client-key", write("key.yaml", config("", `client-certificate: ${cert}, client-key: /dev/zero`))],
            ["tokenFile", write("token.yaml", config("", "tokenFile: /dev/zero"))]
          ] as const
        ) {
          const e = refusal(yield* load(`${field}: /dev/zero`, path))
          assert.instanceOf(e, KubeConfigError, field)
          assert.match(e.message, /\/dev\/zero.*holds more than 16 MiB/, field)
        }
      }))

    it.effect("a kubeconfig over 16 MiB is not read; one of concatenated JSON objects reads the first", () =>
      Effect.gen(function*() {
        const huge = refusal(yield* load("a 17 MiB kubeconfig", write("huge.yaml", "#".repeat(17 * MiB))))
        assert.instanceOf(huge, KubeConfigError)
        assert.match(huge.message, /the file holds more than 16 MiB/)
        const object = JSON.stringify({
          apiVersion: "v1",
          kind: "Config",
          "current-context": "c",
          clusters: [{ name: "c", cluster: { server: "https://127.0.0.1:1" } }],
          users: [{ name: "u", user: { token: "t" } }],
          contexts: [{ name: "c", context: { cluster: "c", user: "u" } }]
        })
        const path = write("json.yaml", object.repeat(Math.ceil(5 * MiB / object.length)))
        const exit = yield* load("5 MB of concatenated JSON objects", path)
        // refused, as before, but now in bounded time (kubectl's decoder takes the first object: a difference kept,
        // since YAML allows nothing after a flow collection's end)
        assert.instanceOf(refusal(exit), KubeConfigError)
      }))
  })
})

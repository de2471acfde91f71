/**
 * Kubeconfig files as Windows tools write them, read from disk and used for real requests
 * against FakeCluster.serve over HTTPS with a token: UTF-16 LE and BE with a BOM (Windows
 * PowerShell's `>`), UTF-8 with a BOM, CRLF line ends; and YAML 1.1 values read as kubectl
 * reads them.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Kube from "../packages/effect-kube/src/Kube.js"
import * as KubeConfig from "../packages/effect-kube/src/KubeConfig.js"
import * as NodeKube from "../packages/effect-kube/src/NodeKube.js"
import { ConfigMaps } from "../packages/effect-kube/src/resources/index.js"
import { FakeCluster } from "@effect-kube/testing"
import { pki } from "./util/pki.js"
import { apiServerOnly } from "./util/apiServerOnly.js"

const utf16le = (text: string) => {
  const bytes = new Uint8Array(2 + text.length * 2)
  bytes[0] = 0xff
  bytes[1] = 0xfe
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    bytes[2 + 2 * i] = code & 0xff
    bytes[3 + 2 * i] = code >> 8
  }
  return bytes
}

const utf16be = (text: string) => {
  const le = utf16le(text)
  const bytes = new Uint8Array(le.length)
  for (let i = 0; i < le.length; i += 2) {
    bytes[i] = le[i + 1]!
    bytes[i + 1] = le[i]!
  }
  return bytes
}

const utf8 = (text: string) => new TextEncoder().encode(text)
const withBom = (bytes: Uint8Array) => new Uint8Array([0xef, 0xbb, 0xbf, ...bytes])
const crlf = (text: string) => text.replace(/\r?\n/g, "\r\n")

/** A served fake (HTTPS, token) and a directory for kubeconfig files, both removed at the end. */
const setup = Effect.gen(function*() {
  const { ca, server } = pki()
  const served = yield* FakeCluster.serve({
  ...apiServerOnly,
    token: "encoding-token",
    namespace: "windows",
    namespaces: ["windows"],
    objects: [{ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "seen", namespace: "windows" } }],
    tls: { cert: server.cert, key: server.key, ca: ca.cert }
  })
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "effect-kube-encoding-"))
  yield* Effect.addFinalizer(() => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true })))
  return { served, dir }
})

/** Loads the file as kubectl would and sends a request with what it says (server, CA, token, namespace). */
const listWith = (path: string) =>
  Effect.gen(function*() {
    const config = yield* KubeConfig.KubeConfig
    const list = yield* Kube.api(ConfigMaps).list()
    return { namespace: config.namespace, items: list.items.map((c) => c.metadata?.name) }
  }).pipe(Effect.provide(NodeKube.layerFromFile({ path })))

layer(NodeKube.layerPlatform)("kubeconfig encodings", (it) => {
  const encodings: ReadonlyArray<readonly [string, (text: string) => Uint8Array]> = [
    ["UTF-16 LE with a BOM and CRLF (Windows PowerShell 5 `>`)", (text) => utf16le(crlf(text))],
    ["UTF-16 BE with a BOM", utf16be],
    ["UTF-8 with a BOM", (text) => withBom(utf8(text))],
    ["UTF-8 with CRLF line ends", (text) => utf8(crlf(text))]
  ]
  for (const [name, encode] of encodings) {
    it.effect(`a kubeconfig in ${name} is read and used`, () =>
      Effect.gen(function*() {
        const { dir, served } = yield* setup
        const path = Path.join(dir, "config")
        Fs.writeFileSync(path, encode(served.kubeconfig))
        const result = yield* listWith(path)
        assert.deepStrictEqual(result, { namespace: "windows", items: ["seen"] })
        // The request carried the token the file holds: the fake answers 401 without it.
        assert.isTrue(served.control.requests().some((r) => r.method === "GET" && r.path.endsWith("/configmaps")))
      }))
  }

  it.effect("UTF-16 text that was read as UTF-8 gets a message saying so, not \"not a mapping\"", () =>
    Effect.gen(function*() {
      const { served } = yield* setup
      const misread = new TextDecoder("utf-8").decode(utf16le(served.kubeconfig))
      const error = yield* Effect.flip(KubeConfig.fromString(misread))
      assert.strictEqual(error._tag, "KubeConfigError")
      assert.match(error.message, /UTF-16/)
      assert.notInclude(error.message, "encoding-token")
    }))

  it.effect("values are read with kubectl's YAML 1.1 rules: `yes` is true, an unquoted `no` is not a string", () =>
    Effect.gen(function*() {
      const { dir, served } = yield* setup
      const path = Path.join(dir, "config")
      // `insecure-skip-tls-verify: yes` is true for kubectl; with no CA the TLS check is then skipped.
      const insecure = served.kubeconfig
        .replace(/certificate-authority-data: .*\n/, "insecure-skip-tls-verify: yes\n")
      assert.notStrictEqual(insecure, served.kubeconfig)
      Fs.writeFileSync(path, insecure)
      assert.deepStrictEqual((yield* listWith(path)).items, ["seen"])

      // kubectl refuses `namespace: no` (a boolean where a string belongs); so do we, naming the field.
      Fs.writeFileSync(path, served.kubeconfig.replace(/namespace: windows/, "namespace: no"))
      const error = yield* Effect.flip(KubeConfig.fromFile({ path }))
      assert.strictEqual(error._tag, "KubeConfigError")
      assert.include(error.message, "namespace")
      Fs.writeFileSync(path, served.kubeconfig.replace(/namespace: windows/, `namespace: "no"`))
      assert.strictEqual((yield* KubeConfig.fromFile({ path })).namespace, "no")
    }))
})

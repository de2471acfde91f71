/**
 * The run's temp directory (test/setup/privateTmp.ts): every test writes under it, the PKI
 * leaves nothing there once made, and the end-of-run check finds a key in any file.
 */
import { assert, describe, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { pki } from "../util/pki.js"
import { keyFiles } from "./privateTmp.js"

describe("the run's temp directory", () => {
  it("is this worker's os.tmpdir()", () => {
    assert.isString(process.env["EFFECT_KUBE_TEST_TMPDIR"])
    assert.strictEqual(os.tmpdir(), process.env["EFFECT_KUBE_TEST_TMPDIR"])
  })

  it("holds no PKI folder, nor any key, once the PKI is made", () => {
    const { ca, client } = pki()
    assert.include(ca.key, "PRIVATE KEY")
    assert.include(client.key, "PRIVATE KEY")
    assert.deepStrictEqual(fs.readdirSync(os.tmpdir()).filter((name) => name.startsWith("effect-kube-pki-")), [])
  })

  it("finds a key by its name or its PEM block, wherever it is", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "keys-check-"))
    try {
      fs.mkdirSync(path.join(dir, "deep/er"), { recursive: true })
      fs.writeFileSync(path.join(dir, "a.key"), "anything")
      fs.writeFileSync(path.join(dir, "deep/er/kubeconfig"), `client-key: |\n  ${pki().client.key.split("\n").join("\n  ")}`)
      fs.writeFileSync(path.join(dir, "deep/ca.crt"), pki().ca.cert)
      // a cache of compiled sources holds the repository's text, not a key a test wrote
      fs.mkdirSync(path.join(dir, "node-compile-cache/v22"), { recursive: true })
      fs.writeFileSync(path.join(dir, "node-compile-cache/v22/abc"), "-----BEGIN EC PRIVATE KEY-----")
      assert.deepStrictEqual(
        keyFiles(dir).map((file) => path.relative(dir, file)).sort(),
        ["a.key", "deep/er/kubeconfig"]
      )
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })
})

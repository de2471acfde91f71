/**
 * scripts/check-node.mjs, which `npm test`, `npm run demo` and the examples run first: on a Node
 * older than the engines field it prints one line saying what is needed and how to get it, and
 * exits 1 before anything else runs; on a recent one it says nothing.
 */
import { assert, describe, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..")
const script = path.join(root, "scripts/check-node.mjs")
const engines = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")).engines.node as string

const check = (node: string, version?: string) => {
  const env = { ...process.env }
  delete env.EFFECT_KUBE_NODE_VERSION
  if (version !== undefined) env.EFFECT_KUBE_NODE_VERSION = version
  const result = spawnSync(node, [script], { env, encoding: "utf8" })
  return { status: result.status, stdout: result.stdout, stderr: result.stderr }
}

describe("scripts/check-node.mjs", () => {
  it("says nothing and exits 0 on this Node", () => {
    assert.deepStrictEqual(check(process.execPath), { status: 0, stdout: "", stderr: "" })
  })

  it("refuses a Node older than the engines field in one line: what is needed and how to get it", () => {
    assert.strictEqual(engines, ">=22.19.0")
    for (const version of ["20.20.2", "22.18.9", "v18.0.0"]) {
      const { status, stderr } = check(process.execPath, version)
      assert.strictEqual(status, 1, version)
      assert.strictEqual(stderr.trim().split("\n").length, 1, stderr)
      assert.include(stderr, `needs Node.js 22.19.0 or later`)
      assert.include(stderr, `this is Node.js ${version}`)
      assert.include(stderr, "nvm install 22")
    }
    for (const version of ["22.19.0", "22.20.1", "24.0.0"]) assert.strictEqual(check(process.execPath, version).status, 0)
  })

  it("parses and refuses under an old Node itself (the machine's /usr/bin/node, when older)", (ctx) => {
    const old = "/usr/bin/node"
    const version = fs.existsSync(old) ? spawnSync(old, ["--version"], { encoding: "utf8" }).stdout.trim() : ""
    if (!/^v(1\d|2[01])\./.test(version)) return ctx.skip()
    const { status, stderr } = check(old)
    assert.strictEqual(status, 1)
    assert.include(stderr, `this is Node.js ${version.slice(1)} (${old})`)
  })

  it("runs before anything else in npm test, the demo and the examples", () => {
    const scripts = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")).scripts as Record<string, string>
    for (const name of ["test", "test:e2e", "demo", ...Object.keys(scripts).filter((n) => n.startsWith("example:"))]) {
      assert.match(scripts[name]!, /^node scripts\/check-node\.mjs && /, name)
    }
  })
})

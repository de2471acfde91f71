/**
 * The `effect-kube` bin as a user runs it (a process, its exit code and output): help for the
 * bin and for every subcommand, and `crd-gen` reading a directory's sub-folders with
 * `--recursive` and saying which it skipped without (issue 41.7).
 */
import { assert, describe, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..")
const bin = path.join(root, "packages/effect-kube/src/bin/effect-kube.ts")
const keda = path.join(root, "test/fixtures/crds/keda")

const run = (...args: ReadonlyArray<string>) => {
  const result = spawnSync(process.execPath, ["--import", "tsx", bin, ...args], { cwd: root, encoding: "utf8" })
  return { status: result.status, stdout: result.stdout, stderr: result.stderr }
}

describe("effect-kube (the bin)", () => {
  it("prints help for itself and for every subcommand, and exits 0", () => {
    const top = run("--help")
    assert.strictEqual(top.status, 0)
    assert.match(top.stdout, /^usage: effect-kube <command>/)
    assert.include(top.stdout, "crd-gen")
    for (const args of [["crd-gen", "--help"], ["crd-gen", "-h"], ["help", "crd-gen"], ["crd-gen", "x.yaml", "--help"]]) {
      const { status, stdout, stderr } = run(...args)
      assert.strictEqual(status, 0, args.join(" "))
      assert.strictEqual(stderr, "")
      assert.match(stdout, /^usage:\n  effect-kube crd-gen <file or directory>\.\.\. \[--recursive\]/)
    }
  }, 60_000)

  it("names a wrong option once, points at --help, and exits 1", () => {
    const { status, stderr } = run("crd-gen", "--bogus")
    assert.strictEqual(status, 1)
    assert.match(stderr, /^effect-kube crd-gen: unknown option --bogus \(--help lists them\)\n/)
    assert.notInclude(stderr, "crd-gen: crd-gen")
    assert.strictEqual(run("frobnicate").status, 2)
  }, 60_000)

  it("crd-gen reads sub-folders with --recursive, and says which it skipped without", () => {
    const out = fs.mkdtempSync(path.join(os.tmpdir(), "crd-gen-bin-"))
    const tree = fs.mkdtempSync(path.join(os.tmpdir(), "crd-gen-tree-"))
    try {
      // the CRDs one folder down, nothing at the top
      fs.cpSync(keda, path.join(tree, "vendor", "keda"), { recursive: true })
      const flat = run("crd-gen", tree, "--out", out)
      assert.strictEqual(flat.status, 1)
      assert.include(flat.stderr, "found no CustomResourceDefinition; skipped 1 sub-folder")
      assert.include(flat.stderr, "pass --recursive to read them too")

      const deep = run("crd-gen", tree, "--recursive", "--out", out)
      assert.strictEqual(deep.status, 0, deep.stderr)
      const written = fs.readdirSync(out).sort()
      assert.isAbove(written.length, 0)
      assert.deepStrictEqual(
        deep.stdout.trim().split("\n").map((line) => path.basename(line.replace(/^wrote /, ""))).sort(),
        written
      )
      assert.strictEqual(run("crd-gen", tree, "-R", "--out", out).status, 0)
    } finally {
      fs.rmSync(out, { recursive: true, force: true })
      fs.rmSync(tree, { recursive: true, force: true })
    }
  }, 90_000)
})

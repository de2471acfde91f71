/**
 * The published shape: both module systems load the client's root and the fake's package
 * (`@effect-kube/testing`) from the build output through package.json `exports` (there is one
 * build, ES modules: `require` loads it through Node 22's require(esm)), and internals stay
 * private. Builds first when a package's dist/ is missing or older than its src/, so `npm test`
 * alone passes.
 */
import { describe, expect, it } from "@effect/vitest"
import { execFileSync } from "node:child_process"
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { fileURLToPath } from "node:url"

const root = resolve(fileURLToPath(new URL("../..", import.meta.url)))
/** The packages of the workspace: the client and the fake. */
const client = join(root, "packages", "effect-kube")
const testing = join(root, "packages", "testing")

const newest = (dir: string): number =>
  readdirSync(dir, { withFileTypes: true }).reduce((latest, entry) => {
    const path = join(dir, entry.name)
    return Math.max(latest, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs)
  }, 0)

const builtAt = (dir: string): number => {
  try {
    return statSync(join(dir, "dist/esm/index.js")).mtimeMs
  } catch {
    return 0
  }
}

const ensureBuilt = () => {
  if ([client, testing].some((dir) => builtAt(dir) < newest(join(dir, "src")))) {
    execFileSync(process.execPath, [join(root, "scripts/build.mjs")], { cwd: root, stdio: "pipe" })
  }
}

/** A consumer project whose node_modules/effect-kube and node_modules/@effect-kube/testing are the packages. */
const consumer = () => {
  const dir = mkdtempSync(join(tmpdir(), "effect-kube-consumer-"))
  mkdirSync(join(dir, "node_modules", "@effect-kube"), { recursive: true })
  symlinkSync(client, join(dir, "node_modules", "effect-kube"), "dir")
  symlinkSync(testing, join(dir, "node_modules", "@effect-kube", "testing"), "dir")
  return dir
}

const run = (dir: string, file: string, source: string) => {
  const path = join(dir, file)
  writeFileSync(path, source)
  return execFileSync(process.execPath, [path], { cwd: dir, encoding: "utf8" }).trim()
}

describe("package", () => {
  it("loads with require and with import, the client's root and the fake's package", { timeout: 120_000 }, () => {
    ensureBuilt()
    const dir = consumer()
    const cjs = run(
      dir,
      "check.cjs",
      `const k = require("effect-kube"); const t = require("@effect-kube/testing");
       console.log([typeof k.Kube.api, typeof k.Pods.plural, typeof k.ApiError, typeof t.FakeCluster.layer].join(","))`
    )
    expect(cjs).toBe("function,string,function,function")
    const esm = run(
      dir,
      "check.mjs",
      `import { Kube, Pods, ApiError } from "effect-kube"; import { FakeCluster } from "@effect-kube/testing";
       console.log([typeof Kube.api, Pods.plural, typeof ApiError, typeof FakeCluster.layer].join(","))`
    )
    expect(esm).toBe("function,pods,function,function")
  })

  it("the bun and deno entries load through exports, each in its runtime", { timeout: 120_000 }, () => {
    ensureBuilt()
    const dir = consumer()
    writeFileSync(
      join(dir, "bun.mjs"),
      `import { BunKube } from "effect-kube/bun"; import { Kube } from "effect-kube";
       console.log([typeof BunKube.layerFromFile, typeof Kube.api].join(","))`
    )
    const bun = execFileSync(join(root, "node_modules/.bin/bun"), [join(dir, "bun.mjs")], { cwd: dir, encoding: "utf8" })
    expect(bun.trim()).toBe("function,function")
    // Deno resolves bare names through node_modules when a package.json asks for them.
    writeFileSync(join(dir, "package.json"), JSON.stringify({ type: "module", dependencies: { "effect-kube": "*" } }))
    writeFileSync(
      join(dir, "deno.mjs"),
      `import { DenoKube } from "effect-kube/deno"; import { Kube } from "effect-kube";
       console.log([typeof DenoKube.layerFromFile, typeof Kube.api].join(","))`
    )
    const deno = execFileSync(join(root, "node_modules/.bin/deno"), ["run", "-A", "--no-lock", join(dir, "deno.mjs")], {
      cwd: dir,
      encoding: "utf8"
    })
    expect(deno.trim()).toBe("function,function")
  })

  it("each packed tarball holds the license and the ES build (the client's also the README), and nothing of the repository's own", {
    timeout: 120_000
  }, () => {
    ensureBuilt()
    for (const [dir, own] of [[client, ["README.md"]], [testing, []]] as const) {
      const [packed] = JSON.parse(
        execFileSync("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], { cwd: dir, encoding: "utf8" })
      ) as ReadonlyArray<{ readonly files: ReadonlyArray<{ readonly path: string }> }>
      const files = new Set(packed!.files.map((file) => file.path))
      for (const name of ["LICENSE", ...own, "package.json", "dist/esm/index.js", "dist/esm/index.d.ts"]) {
        expect(files.has(name), `${dir}: ${name}`).toBe(true)
      }
      // no CommonJS build any more: effect 4 is ES modules only
      expect([...files].filter((path) => path.startsWith("dist/cjs/"))).toEqual([])
      const repositoryOnly = [...files].filter((path) => /^(spec|test|bench|scripts|examples)\//.test(path))
      expect(repositoryOnly).toEqual([])
    }
    expect(readFileSync(join(root, "LICENSE"), "utf8")).toMatch(/^MIT License/)
  })

  it("the client's bin is built executable and its dependencies carry none of the fake's", { timeout: 120_000 }, () => {
    ensureBuilt()
    expect(statSync(join(client, "dist/esm/bin/effect-kube.js")).mode & 0o777).toBe(0o755)
    const manifest = JSON.parse(readFileSync(join(client, "package.json"), "utf8"))
    const optional = new Set(Object.keys(manifest.peerDependenciesMeta ?? {}))
    const installed = Object.keys({ ...manifest.dependencies, ...manifest.peerDependencies })
      .filter((name) => !optional.has(name))
    const fake = JSON.parse(readFileSync(join(root, "packages/testing/package.json"), "utf8"))
    // what the fake needs (its CEL, protobuf and RE2; fast-check for Explore) stays out of the client's install:
    // the CEL packages are the client's optional peers, for CustomResource.validate
    const fakeOnly = Object.keys(fake.dependencies).filter((name) => !["effect-kube", "ws", "yaml"].includes(name))
    expect(installed.filter((name) => fakeOnly.includes(name))).toEqual([])
    expect([...optional].sort()).toEqual(["@bufbuild/cel", "@bufbuild/protobuf", "@bufbuild/re2"])
    // the CEL engine is the client's (CustomResource.validate), loaded on its first call: only internal/cel loads it
    const celUsers = readdirSync(join(client, "dist/esm"), { recursive: true, encoding: "utf8" }).filter((path) =>
      path.endsWith(".js") && /(?:from|import\(|require\()\s*["']@bufbuild\//.test(readFileSync(join(client, "dist/esm", path), "utf8"))
    )
    expect(celUsers.length > 0 && celUsers.every((path) => path.startsWith("internal/cel/")), celUsers.join(", ")).toBe(true)
  })

  it("does not expose internals", { timeout: 120_000 }, () => {
    ensureBuilt()
    const dir = consumer()
    const out = run(
      dir,
      "internal.cjs",
      `try { require("effect-kube/internal/client.js"); console.log("exposed") } catch (e) { console.log(e.code) }`
    )
    expect(out).toBe("ERR_PACKAGE_PATH_NOT_EXPORTED")
  })
})

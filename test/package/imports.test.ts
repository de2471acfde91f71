/**
 * Start-up cost is paid by every short-lived program (scripts, kubectl plugins, CI steps):
 * the `effect` barrel loads every module of Effect, each of its directory barrels
 * (`effect/http`, `effect/process`, ...) every module of that directory, and
 * `@effect/platform-node-shared`'s barrel every module of that package. Modules of the
 * package use deep imports (`effect/Effect`, `effect/http/HttpClient`) only.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Fs from "node:fs"
import * as Path from "node:path"

const root = Path.join(import.meta.dirname, "../..")
/** The sources of both packages of the workspace: the client's and the fake's. */
const packages = Path.join(root, "packages")
const sources = (): Array<string> => ["effect-kube", "testing"].flatMap((name) => sourceFiles(Path.join(packages, name, "src")))
/** `effect` and its directory barrels, as its package.json exports them (`effect/http` is `dist/http/index.js`). */
const effectBarrels = (): Array<string> => {
  const manifest = JSON.parse(Fs.readFileSync(Path.join(root, "node_modules", "effect", "package.json"), "utf8"))
  return Object.entries(manifest.exports as Record<string, unknown>)
    .filter(([, target]) => typeof target === "string" && /(?:^|\/)index\.js$/.test(target))
    .map(([entry]) => entry === "." ? "effect" : `effect/${entry.slice(2)}`)
}
const barrels = new Set([...effectBarrels(), "@effect/platform-node-shared", "@effect/platform-node"])
// Entries that load far more than the package uses: undici's (fetch, WebSocket, caches, mocks; the
// transport loads undici's dispatcher files, see packages/effect-kube/src/internal/transport/undici.ts) and NodeHttpClient (undici's
// entry and the node:http client).
const heavy = new Set(["undici", "@effect/platform-node/NodeHttpClient"])
const typeOnly = /\b(?:import|export)\s+type\b[^;]*?\bfrom\s*["'][^"']+["']/g

const sourceFiles = (dir: string): Array<string> =>
  Fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? sourceFiles(Path.join(dir, entry.name))
      : entry.name.endsWith(".ts")
      ? [Path.join(dir, entry.name)]
      : []
  )

/** The module specifiers of a file's static and dynamic imports and re-exports, comments left out. */
export const importedSpecifiers = (text: string): Array<string> => {
  const code = text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "")
  const found: Array<string> = []
  for (const match of code.matchAll(/(?:\bfrom\s*|\bimport\s*\(?\s*)["']([^"']+)["']/g)) found.push(match[1]!)
  return found
}

describe("imports", () => {
  it("finds specifiers in import, export and dynamic import forms, not in comments", () => {
    const text = [
      `import * as Effect from "effect/Effect"`,
      `import { Schema } from "effect"`,
      `export * as Kube from "./Kube.js"`,
      `const lazy = () => import("yaml")`,
      `/** import { Effect } from "effect" */`,
      `// import { Stream } from "effect"`
    ].join("\n")
    assert.deepStrictEqual(importedSpecifiers(text), ["effect/Effect", "effect", "./Kube.js", "yaml"])
  })

  it("no module of the package imports a barrel", () => {
    // the list is read from effect's exports: it must find the barrels it is meant to refuse
    for (const barrel of ["effect", "effect/http", "effect/process", "effect/encoding", "effect/testing"]) {
      assert.isTrue(barrels.has(barrel), barrel)
    }
    assert.isFalse(barrels.has("effect/Effect"))
    const offenders = sources().flatMap((file) =>
      importedSpecifiers(Fs.readFileSync(file, "utf8"))
        .filter((specifier) => barrels.has(specifier))
        .map((specifier) => `${Path.relative(packages, file)} imports "${specifier}"`)
    )
    assert.deepStrictEqual(offenders, [])
  })

  it("no module of the package loads undici's entry module or NodeHttpClient (types are free)", () => {
    const offenders = sources().flatMap((file) =>
      importedSpecifiers(Fs.readFileSync(file, "utf8").replace(typeOnly, ""))
        .filter((specifier) => heavy.has(specifier))
        .map((specifier) => `${Path.relative(packages, file)} imports "${specifier}"`)
    )
    assert.deepStrictEqual(offenders, [])
  })
})

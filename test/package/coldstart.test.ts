/**
 * Cold start (issue 15): what a fresh process pays for `import("effect-kube")`. The generated
 * structs build their AST when first read, they are one module, and what few programs use
 * (`ws` for exec) is loaded when first used; the last two are checked in a fresh Node process.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as SchemaAST from "effect/SchemaAST"
import { execFileSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Url from "node:url"
import { Container, ObjectMeta, Pod, PodSpec } from "../../packages/effect-kube/src/resources/index.js"

const root = Path.join(import.meta.dirname, "../..")

describe("generated structs, built when first read", () => {
  it("are Schemas whose AST is the same node on every read, with the fields the spec gives", () => {
    assert.isTrue(Schema.isSchema(Pod))
    const ast = Pod.ast
    assert.strictEqual(Pod.ast, ast)
    assert.isTrue(SchemaAST.isObjects(ast))
    assert.strictEqual(SchemaAST.resolveIdentifier(ast), "Pod")
    const names = (ast as SchemaAST.Objects).propertySignatures.map((p) => p.name)
    assert.deepStrictEqual(names, ["apiVersion", "kind", "metadata", "spec", "status"])
    // a field refers to the AST of the struct it names, built once
    const metadata = (ast as SchemaAST.Objects).propertySignatures.find((p) => p.name === "metadata")!
    assert.isTrue(SchemaAST.isUnion(metadata.type))
    assert.strictEqual((metadata.type as SchemaAST.Union).types[0], ObjectMeta.ast)
    assert.strictEqual(String(Pod), "Pod")
  })

  it("decode, encode, annotate and pipe as the Schema.make classes they replace", () => {
    const pod = { apiVersion: "v1", kind: "Pod", metadata: { name: "a" }, spec: { containers: [{ name: "c" }] } }
    assert.deepStrictEqual(Schema.decodeUnknownSync(Pod)(pod), pod)
    assert.deepStrictEqual(Schema.encodeSync(Pod)(pod), pod)
    assert.isTrue(Result.isFailure(Schema.decodeUnknownResult(PodSpec)({ containers: [{ image: "no name" }] })))
    const described = Pod.annotate({ description: "a pod" })
    assert.strictEqual(SchemaAST.resolveDescription(described.ast), "a pod")
    assert.isTrue(Schema.is(Schema.Array(Container))([{ name: "c" }]))
    assert.strictEqual(Container.pipe((s) => s), Container)
  })
})

/** The URLs of the modules a fresh Node process loads to import the package root (its sources, through tsx). */
const loadedByRootImport = (): Array<string> => {
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "effect-kube-cold-"))
  try {
    const out = Path.join(dir, "loaded.txt")
    Fs.writeFileSync(
      Path.join(dir, "hooks.mjs"),
      [
        `import { appendFileSync } from "node:fs"`,
        `export async function load(url, context, next) {`,
        `  appendFileSync(${JSON.stringify(out)}, url + "\\n")`,
        `  return next(url, context)`,
        `}`
      ].join("\n")
    )
    Fs.writeFileSync(
      Path.join(dir, "register.mjs"),
      `import { register } from "node:module"\n` +
        `register(${JSON.stringify(Url.pathToFileURL(Path.join(dir, "hooks.mjs")).href)})\n`
    )
    execFileSync(
      process.execPath,
      [
        "--import",
        "tsx",
        "--import",
        Url.pathToFileURL(Path.join(dir, "register.mjs")).href,
        "--input-type=module",
        "-e",
        `await import(${JSON.stringify(Url.pathToFileURL(Path.join(root, "packages", "effect-kube", "src", "index.ts")).href)})`
      ],
      { cwd: root, encoding: "utf8" }
    )
    return [...new Set(Fs.readFileSync(out, "utf8").trim().split("\n"))]
  } finally {
    Fs.rmSync(dir, { recursive: true, force: true })
  }
}

describe("import of the package root, in a fresh process", () => {
  it("loads few modules of its own, and neither ws nor the kinds one file per group version", () => {
    const loaded = loadedByRootImport()
    const src = Url.pathToFileURL(Path.join(root, "packages", "effect-kube", "src")).href + "/"
    const own = loaded.filter((url) => url.startsWith(src)).map((url) => url.slice(src.length))
    const packages = new Set(loaded.map((url) => /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url)?.[1]))
    assert.isTrue(packages.has("undici"), "the check sees the packages that are loaded")
    assert.isTrue(own.includes("index.ts") && own.includes("resources/generated.ts"), own.join(" "))
    assert.isFalse(packages.has("ws"), "ws is loaded by the first exec, not by the import")
    // the generated kinds are one module: a file per group version cost ~20 ms of every cold start
    assert.deepStrictEqual(
      own.filter((file) => file.startsWith("resources/")).sort(),
      ["resources/Meta.ts", "resources/generated.ts", "resources/index.ts", "resources/internal/schema.ts"]
    )
    // each module costs a fresh process ~0.5 ms to load: raise this with care (79 when it was written; 92 with
    // the limits, the scrubbing of error text and the total Status reader of issue 22 in modules of their own;
    // 93 with the HTTP/2 dispatcher, which every https cluster uses from its first request; 98 with the
    // executor split by concern, issue 34: authHeaders, statusMapping, retry, rateLimit and deadlines; 100 with the
    // Drain and Copy facades, whose implementations load on their first call; 101 with Kube.api's table and proxy
    // calls, issue 39; 102 with Manifests.explain, which waitReady's NotReady uses, issue 40)
    assert.isAtMost(own.length, 102, `${own.length} modules of the package are loaded by its root`)
  })
})

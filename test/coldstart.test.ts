/**
 * Cold start (issue 15): what a fresh process pays for `import("effect-kube")`. The generated
 * structs build their AST when first read, and what few programs use (`ws` for exec) is
 * loaded when first used; these tests check both, the second in a fresh Node process.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as SchemaAST from "effect/SchemaAST"
import { execFileSync } from "node:child_process"
import * as Path from "node:path"
import { Container, ObjectMeta, Pod, PodSpec } from "../src/resources/index.js"

const root = Path.join(import.meta.dirname, "..")

describe("generated structs, built when first read", () => {
  it("are Schemas whose AST is the same node on every read, with the fields the spec gives", () => {
    assert.isTrue(Schema.isSchema(Pod))
    const ast = Pod.ast
    assert.strictEqual(Pod.ast, ast)
    assert.isTrue(SchemaAST.isTypeLiteral(ast))
    assert.strictEqual(SchemaAST.getIdentifierAnnotation(ast).pipe((o) => o._tag === "Some" ? o.value : ""), "Pod")
    const names = (ast as SchemaAST.TypeLiteral).propertySignatures.map((p) => p.name)
    assert.deepStrictEqual(names, ["apiVersion", "kind", "metadata", "spec", "status"])
    // a field refers to the AST of the struct it names, built once
    const metadata = (ast as SchemaAST.TypeLiteral).propertySignatures.find((p) => p.name === "metadata")!
    assert.isTrue(SchemaAST.isUnion(metadata.type))
    assert.strictEqual((metadata.type as SchemaAST.Union).types[0], ObjectMeta.ast)
    assert.strictEqual(String(Pod), "Pod")
  })

  it("decode, encode, annotate and pipe as the Schema.make classes they replace", () => {
    const pod = { apiVersion: "v1", kind: "Pod", metadata: { name: "a" }, spec: { containers: [{ name: "c" }] } }
    assert.deepStrictEqual(Schema.decodeUnknownSync(Pod)(pod), pod)
    assert.deepStrictEqual(Schema.encodeSync(Pod)(pod), pod)
    assert.isTrue(Either.isLeft(Schema.decodeUnknownEither(PodSpec)({ containers: [{ image: "no name" }] })))
    const described = Pod.annotations({ description: "a pod" })
    assert.strictEqual(SchemaAST.getDescriptionAnnotation(described.ast).pipe((o) => o._tag === "Some" && o.value), "a pod")
    assert.isTrue(Schema.is(Schema.Array(Container))([{ name: "c" }]))
    assert.strictEqual(Container.pipe((s) => s), Container)
  })
})

describe("import of the package root, in a fresh process", () => {
  it("does not load ws: exec loads it on its first dial", () => {
    // node: the package's sources through tsx, the CommonJS files loaded so far read from the require cache
    const script = [
      `const { createRequire } = await import("node:module")`,
      `const require = createRequire(${JSON.stringify(Path.join(root, "package.json"))})`,
      `await import(${JSON.stringify(Path.join(root, "src", "index.ts"))})`,
      `process.stdout.write(JSON.stringify(Object.keys(require.cache)))`
    ].join("\n")
    const loaded = JSON.parse(
      execFileSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
        cwd: root,
        encoding: "utf8"
      })
    ) as Array<string>
    const packages = new Set(loaded.map((file) => /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(file)?.[1]))
    assert.isTrue(packages.has("undici"), "the check sees the CommonJS packages that are loaded")
    assert.isFalse(packages.has("ws"), "ws is loaded by the first exec, not by the import")
  })
})

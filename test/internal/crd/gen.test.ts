/**
 * `effect-kube crd-gen` on published CRDs (cert-manager, prometheus-operator, Argo CD, KEDA, Gateway API:
 * test/fixtures/crds, with their origin and license): the command writes a module per CRD, the modules
 * type-check, and the example objects each project publishes round-trip through the generated Resources
 * against FakeCluster serving those CRDs (their CEL rules checked on the way). `--from-cluster` reads the
 * CRDs from a cluster (FakeCluster.serve) and writes the same modules.
 */
import { afterAll, assert, describe, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { execFile } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { pathToFileURL } from "node:url"
import { CustomResourceDefinitions, Kube, Manifests, type Resource } from "../../../packages/effect-kube/src/index.js"
import { generate } from "../../../packages/effect-kube/src/internal/crd/gen.js"
import { FakeCluster } from "@effect-kube/testing"

const root = Path.resolve(import.meta.dirname, "../../..")
const fixtures = Path.join(root, "test/fixtures/crds")
const projects = Fs.readdirSync(fixtures).filter((p) => Fs.statSync(Path.join(fixtures, p)).isDirectory()).sort()
const out = Path.join(root, ".tmp", `crd-gen-${process.pid}`)
const tsx = Path.join(root, "node_modules/.bin/tsx")

const run = (command: string, args: ReadonlyArray<string>, env: Record<string, string> = {}) =>
  Effect.callback<{ code: number; stdout: string; stderr: string }>((resume) => {
    const child = execFile(command, args, { cwd: root, env: { ...process.env, ...env }, timeout: 280_000, maxBuffer: 64 << 20 }, (error, stdout, stderr) =>
      resume(Effect.succeed({ code: error === null ? 0 : typeof error.code === "number" ? error.code : 1, stdout, stderr })))
    return Effect.sync(() => child.kill())
  })

const readYaml = (file: string) => Effect.runSync(Manifests.parse(Fs.readFileSync(file))) as ReadonlyArray<Record<string, any>>

const crdsOf = (project: string): ReadonlyArray<Record<string, any>> =>
  Fs.readdirSync(Path.join(fixtures, project, "crds")).flatMap((f) => readYaml(Path.join(fixtures, project, "crds", f)))
    .filter((o) => o.kind === "CustomResourceDefinition")

const examplesOf = (project: string): ReadonlyArray<Record<string, any>> =>
  Fs.readdirSync(Path.join(fixtures, project, "examples")).flatMap((f) => readYaml(Path.join(fixtures, project, "examples", f)))

const allCrds = projects.flatMap(crdsOf)

/** The CLI run over every fixture directory, once for the file (the tests below read what it wrote). */
let generation: Promise<{ code: number; stdout: string; stderr: string }> | undefined
const generateAll = Effect.promise(() =>
  generation ??= Effect.runPromise(Effect.suspend(() => {
    Fs.rmSync(out, { recursive: true, force: true })
    const dirs = projects.map((p) => Path.join("test/fixtures/crds", p, "crds"))
    return run(tsx, ["packages/effect-kube/src/bin/effect-kube.ts", "crd-gen", ...dirs, "--out", out, "--import", "../../packages/effect-kube/src/index.js"])
  }))
)

/**
 * Where `sent` differs from `got` (undefined when every field sent came back as sent): the server adds its
 * own fields (uid, resourceVersion, defaults), so what came back may hold more, never less or other.
 */
const difference = (sent: unknown, got: unknown, path = ""): string | undefined => {
  if (Array.isArray(sent)) {
    if (!Array.isArray(got) || got.length !== sent.length) return `${path}: ${JSON.stringify(got)} is not ${JSON.stringify(sent)}`
    for (let i = 0; i < sent.length; i++) {
      const d = difference(sent[i], got[i], `${path}[${i}]`)
      if (d !== undefined) return d
    }
    return undefined
  }
  if (typeof sent === "object" && sent !== null) {
    if (typeof got !== "object" || got === null) return `${path}: ${JSON.stringify(got)} is not an object`
    for (const [k, v] of Object.entries(sent)) {
      const d = difference(v, (got as Record<string, unknown>)[k], `${path}.${k}`)
      if (d !== undefined) return d
    }
    return undefined
  }
  return sent === got ? undefined : `${path}: ${JSON.stringify(got)} is not ${JSON.stringify(sent)}`
}

describe("crd-gen", () => {
  afterAll(() => Fs.rmSync(out, { recursive: true, force: true }))

  it.effect("writes one module per published CRD from files and directories", () =>
    Effect.gen(function*() {
      const result = yield* generateAll
      assert.strictEqual(result.code, 0, result.stderr)
      const written = result.stdout.trim().split("\n")
      assert.strictEqual(written.length, allCrds.length)
      for (const crd of allCrds) {
        assert.isTrue(Fs.existsSync(Path.join(out, `${crd.metadata.name}.ts`)), `${crd.metadata.name} was generated`)
      }
      const bad = yield* run(tsx, ["packages/effect-kube/src/bin/effect-kube.ts", "crd-gen", "--out", out])
      assert.strictEqual(bad.code, 1)
      assert.include(bad.stderr, "give CRD files or directories, or --from-cluster")
    }), { timeout: 120_000 })

  it.effect("the generated modules type-check", () =>
    Effect.gen(function*() {
      yield* generateAll
      Fs.writeFileSync(
        Path.join(out, "tsconfig.json"),
        JSON.stringify({ extends: "../../tsconfig.base.json", compilerOptions: { noEmit: true }, include: ["*.ts"] })
      )
      const result = yield* run(process.execPath, [Path.join(root, "node_modules/typescript/bin/tsc"), "-p", Path.join(out, "tsconfig.json")])
      assert.strictEqual(result.code, 0, `${result.stdout}${result.stderr}`)
    }), { timeout: 300_000 })

  for (const project of projects) {
    it.effect(`${project}: the published examples round-trip through the generated Resources on FakeCluster`, () =>
      Effect.gen(function*() {
        yield* generateAll
        for (const crd of crdsOf(project)) yield* Kube.api(CustomResourceDefinitions).create(crd as never)
        const checked: Array<string> = []
        for (const example of examplesOf(project)) {
          const crd = allCrds.find((c) => c.spec.group === example.apiVersion.split("/")[0] && c.spec.names.kind === example.kind)
          if (crd === undefined) continue // a built-in kind in the same file (a Deployment, a Service)
          const module = yield* Effect.promise(() => import(pathToFileURL(Path.join(out, `${crd.metadata.name}.ts`)).href))
          const version = example.apiVersion.split("/")[1]
          const resource = Object.values(module).find((v: any) =>
            typeof v === "object" && v !== null && v.apiVersion === example.apiVersion && v.kind === example.kind && "plural" in v
          ) as Resource.Resource<any, any, any> | undefined
          assert.isDefined(resource, `a Resource for ${example.apiVersion} ${example.kind}`)
          // the Schema takes the example as it is
          Schema.decodeUnknownSync(resource!.schema)(example)
          const api = Kube.api(resource!, resource!.namespaced ? { namespace: example.metadata.namespace ?? "default" } : {})
          // two examples may share a name
          yield* api.delete(example.metadata.name).pipe(Effect.ignore)
          const created = yield* api.create(example)
          const hasStatus = crd.spec.versions.some((v: any) => v.name === version && v.subresources?.status !== undefined)
          const { status: _status, ...sent } = example
          assert.isUndefined(difference(hasStatus ? sent : example, created), `${example.kind} ${example.metadata.name}`)
          const read = yield* api.get(example.metadata.name)
          assert.isUndefined(difference(hasStatus ? sent : example, read._tag === "Some" ? read.value : undefined))
          checked.push(`${example.kind}/${example.metadata.name}`)
        }
        assert.isAbove(checked.length, 0)
        if (project === "gateway-api") {
          // the published rules are enforced, not skipped: a path that breaks one is refused with its message
          const bad = { ...examplesOf(project).find((e) => e.kind === "HTTPRoute")! }
          const route = {
            ...bad,
            metadata: { name: "bad-path" },
            spec: { ...bad.spec, rules: [{ matches: [{ path: { type: "PathPrefix", value: "no-slash" } }] }] }
          }
          const module = yield* Effect.promise(() =>
            import(pathToFileURL(Path.join(out, "httproutes.gateway.networking.k8s.io.ts")).href)
          )
          const routes = Kube.api(module.HTTPRoutes as Resource.Resource<any, any, any>, { namespace: "default" })
          const error = yield* Effect.flip(routes.create(route))
          assert.include((error as { message: string }).message, `spec.rules[0].matches[0].path: Invalid value: value must be an absolute path and start with '/' when type one of ['Exact', 'PathPrefix']`)
        }
      // the published examples name namespaces of their own (argocd, infra-ns, ...) that no one creates first
      }).pipe(Effect.provide(FakeCluster.layer({ autoCreateNamespaces: true }))), { timeout: 120_000 })
  }

  it.effect("--from-cluster reads the CRDs a cluster serves and writes the same modules", () =>
    Effect.gen(function*() {
      yield* generateAll
      const served = yield* FakeCluster.serve({ objects: crdsOf("keda") })
      const fromCluster = Path.join(out, "from-cluster")
      const result = yield* run(tsx, [
        "packages/effect-kube/src/bin/effect-kube.ts", "crd-gen", "--from-cluster", "--kubeconfig", served.kubeconfigPath,
        "--only", "scaledobjects.keda.sh", "--out", fromCluster, "--import", "../../../packages/effect-kube/src/index.js"
      ])
      assert.strictEqual(result.code, 0, result.stderr)
      assert.deepStrictEqual(Fs.readdirSync(fromCluster), ["scaledobjects.keda.sh.ts"])
      const fromFile = generate(crdsOf("keda").filter((c) => c.metadata.name === "scaledobjects.keda.sh"), { importFrom: "../../../packages/effect-kube/src/index.js", command: "--from-cluster" })
      assert.strictEqual(Fs.readFileSync(Path.join(fromCluster, "scaledobjects.keda.sh.ts"), "utf8"), fromFile[0]!.source)
    }).pipe(Effect.scoped), { timeout: 120_000 })

  it("maps a CRD's schema as the built-in kinds are mapped", () => {
    const [module] = generate([{
      apiVersion: "apiextensions.k8s.io/v1",
      kind: "CustomResourceDefinition",
      metadata: { name: "widgets.example.com" },
      spec: {
        group: "example.com",
        scope: "Namespaced",
        names: { kind: "Widget", plural: "widgets" },
        versions: [
          { name: "v1alpha1", served: true, storage: false, deprecated: true, schema: { openAPIV3Schema: { type: "object", properties: { spec: { type: "object", properties: { a: { type: "string" } } } } } } },
          {
            name: "v1",
            served: true,
            storage: true,
            subresources: { status: {} },
            schema: {
              openAPIV3Schema: {
                type: "object",
                properties: {
                  spec: {
                    type: "object",
                    description: "What the widget should be.",
                    required: ["size", "mode"],
                    properties: {
                      size: { type: "integer", description: "How big.", default: 3 },
                      mode: { type: "string", enum: ["Fast", "Slow"] },
                      port: { "x-kubernetes-int-or-string": true },
                      extra: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
                      labels: { type: "object", additionalProperties: { type: "string" } },
                      note: { type: "string", nullable: true },
                      "dashed-key": { type: "boolean" }
                    }
                  },
                  status: { type: "object", properties: { ready: { type: "boolean" } } }
                }
              }
            }
          },
          { name: "v0", served: false, storage: false }
        ]
      }
    }])
    const source = module!.source
    assert.strictEqual(module!.file, "widgets.example.com.ts")
    assert.include(source, "export interface WidgetSpec {")
    assert.include(source, "  /**\n   * How big.\n   *\n   * @defaultValue `3` (filled in by the API server when left out)\n   */\n  readonly size?: number | undefined")
    assert.include(source, `readonly mode: "Fast" | "Slow" | (string & {})`)
    assert.include(source, `mode: CustomResource.openEnum("Fast", "Slow")`)
    assert.include(source, "readonly port?: IntOrString | undefined")
    assert.include(source, "readonly extra?: { readonly [key: string]: unknown } | undefined")
    assert.include(source, "labels: Schema.optional(Schema.Record(Schema.String, Schema.String))")
    assert.include(source, "readonly note?: string | null | undefined")
    assert.include(source, `readonly "dashed-key"?: boolean | undefined`)
    assert.include(source, "export const Widgets = Resource.make({")
    assert.include(source, `  subresources: ["status"],`)
    assert.include(source, "export const WidgetsV1alpha1 = Resource.make({")
    assert.include(source, "@deprecated example.com/v1alpha1 Widget is deprecated")
    assert.notInclude(source, "v0")
  })
})

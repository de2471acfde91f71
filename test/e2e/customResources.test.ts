/**
 * A custom resource from an Effect Schema, installed as a CRD on the real control plane: the server serves it once
 * Established, validates it by the structural schema and the CEL rule derived from the Schema, prunes unknown fields,
 * applies defaults, serves its status and scale subresources and selectable fields, and refuses strategic merge.
 */
import { assert, it } from "@effect/vitest"
import { Effect, Fiber, Layer, Option, Schedule, Schema, Stream } from "effect"
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { promisify } from "node:util"
import {
  ApiError,
  cliEntry,
  ConfigMaps,
  CustomResource,
  CustomResourceDefinitions,
  Kube,
  libraryEntry,
  Patch,
  Resource,
  ValidatingAdmissionPolicies,
  ValidatingAdmissionPolicyBindings,
  Warnings
} from "./lib.js"
import { kubeconfigPath, layer, testNamespace, uniqueName } from "./support.js"

const run = promisify(execFile)
const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "../..")

// a group of its own per run: a CRD is cluster-wide, and a run must not meet a CRD another run is deleting
const group = `${uniqueName("e2e")}.effect-kube.dev`

const Backends = CustomResource.make({
  group,
  version: "v1",
  kind: "Backend",
  scope: "Namespaced",
  spec: Schema.Struct({
    image: Schema.String.annotate({ description: "The image to run." }),
    replicas: Schema.optional(Schema.Number.check(Schema.isInt(), Schema.isGreaterThanOrEqualTo(0)).annotate({ default: 1 })),
    tier: Schema.Literals(["frontend", "backend"])
  }).annotate({
    "x-kubernetes-validations": [{ rule: "self.replicas <= 10", message: "at most 10 replicas" }]
  }),
  status: Schema.Struct({
    replicas: Schema.optional(Schema.Number.check(Schema.isInt())),
    selector: Schema.optional(Schema.String)
  }),
  shortNames: [uniqueName("be")],
  printerColumns: [{ name: "Replicas", type: "integer", jsonPath: ".spec.replicas" }],
  scale: { specReplicasPath: ".spec.replicas", statusReplicasPath: ".status.replicas", labelSelectorPath: ".status.selector" },
  selectableFields: [".spec.tier"]
})

/** The same kind as raw JSON, to send what the typed api would refuse before sending. */
const RawBackends = Resource.make({ apiVersion: `${group}/v1`, kind: "Backend", plural: "backends", namespaced: true, schema: Schema.Unknown })

const crds = Kube.api(CustomResourceDefinitions)

/**
 * The CRD applied, established, and deleted when the file's tests are done: once per file, for a CRD deleted on a
 * real server stays terminating while its objects are removed, and could not be installed again at once.
 */
const installed = Layer.effectDiscard(Effect.acquireRelease(
  Effect.gen(function*() {
    const definition = yield* Backends.crd()
    const applied = yield* crds.apply(definition, { fieldManager: "e2e", force: true })
    yield* crds.waitFor(
      applied.metadata?.name ?? "",
      (crd) => crd?.status?.conditions?.some((c) => c.type === "Established" && c.status === "True") === true,
      { timeout: "30 seconds" }
    )
    return applied
  }),
  (crd) => Effect.ignore(crds.delete(crd.metadata?.name ?? ""))
))

it.layer(layer, { excludeTestServices: true, timeout: "60 seconds" })("custom resources", (it) => {
  it.layer(installed, { timeout: "60 seconds" })((it) => {
    it.effect("a CRD from a Schema is accepted as written and its kind served", () =>
      Effect.gen(function*() {
        const served = Option.getOrThrow(yield* crds.get(`backends.${group}`))
        assert.isTrue(served.status?.conditions?.some((c) => c.type === "NamesAccepted" && c.status === "True"))
        assert.deepStrictEqual(served.status?.acceptedNames?.kind, "Backend")
        const version = served.spec.versions[0]
        assert.strictEqual(version?.name, "v1")
        assert.deepStrictEqual(version?.selectableFields, [{ jsonPath: ".spec.tier" }])
        assert.deepStrictEqual(version?.subresources?.status, {})
        assert.strictEqual(version?.subresources?.scale?.specReplicasPath, ".spec.replicas")
        const rules = version?.schema?.openAPIV3Schema?.properties?.["spec"]?.["x-kubernetes-validations"]
        assert.deepStrictEqual(rules?.map((r) => r.rule), ["self.replicas <= 10"])
      }), 60_000)

    it.effect("objects are validated by the schema and the CEL rule, pruned and defaulted by the server", () =>
      Effect.gen(function*() {
        const ns = yield* testNamespace("cr")
        const backends = Kube.api(Backends, { namespace: ns })
        const created = yield* backends.create({ metadata: { name: "web" }, spec: { image: "nginx:1.27", tier: "frontend" } })
        // defaulted from the Schema's default annotation
        assert.strictEqual(created.spec.replicas, 1)
        assert.strictEqual(created.apiVersion, `${group}/v1`)
        assert.strictEqual(created.kind, "Backend")

        // the CEL rule, enforced by kube-apiserver
        const tooMany = yield* Effect.flip(
          backends.create({ metadata: { name: "big" }, spec: { image: "nginx", tier: "backend", replicas: 11 } })
        )
        assert.isTrue(ApiError.isInvalid(tooMany), tooMany.message)
        assert.include(tooMany.message, "at most 10 replicas")
        assert.strictEqual((tooMany as ApiError).status?.details?.causes?.[0]?.field, "spec")
        // the typed api refuses what its Schema refuses before sending; the raw one lets the server judge
        const local = yield* Effect.flip(
          backends.create({ metadata: { name: "odd" }, spec: { image: "nginx", tier: "middle" as "frontend" } })
        )
        assert.strictEqual(local._tag, "ValidationError")
        const raw = Kube.api(RawBackends, { namespace: ns })
        // the enum and the minimum of the structural schema
        const badTier = yield* Effect.flip(
          raw.create({ apiVersion: `${group}/v1`, kind: "Backend", metadata: { name: "odd" }, spec: { image: "nginx", tier: "middle" } })
        )
        assert.isTrue(ApiError.isInvalid(badTier), badTier.message)
        assert.include(badTier.message, `spec.tier: Unsupported value: "middle"`)
        const negative = yield* Effect.flip(
          raw.create({ apiVersion: `${group}/v1`, kind: "Backend", metadata: { name: "neg" }, spec: { image: "nginx", tier: "backend", replicas: -1 } })
        )
        assert.isTrue(ApiError.isInvalid(negative), negative.message)
        assert.include(negative.message, "spec.replicas")

        // an unknown field is pruned (and warned of, the default field validation being Warn)
        const warnings = yield* Effect.gen(function*() {
          const collected = yield* Warnings.Collected
          yield* backends.create({
            metadata: { name: "extra" },
            spec: { image: "nginx", tier: "backend", extra: "dropped" } as never
          })
          return yield* collected.warnings
        }).pipe(Effect.provide(Warnings.layerCollect))
        assert.isTrue(warnings.some((w) => w._tag === "HeaderWarning" && w.text.includes(`unknown field "spec.extra"`)), JSON.stringify(warnings))
        const extra = Option.getOrThrow(yield* backends.get("extra"))
        assert.isUndefined((extra.spec as Record<string, unknown>)["extra"])

        // selectable fields: a field selector on spec.tier
        const frontends = yield* backends.list({ fieldSelector: "spec.tier=frontend" })
        assert.deepStrictEqual(frontends.items.map((b) => b.metadata?.name), ["web"])
        const unselectable = yield* Effect.flip(backends.list({ fieldSelector: "spec.image=nginx" }))
        assert.isTrue(ApiError.is(unselectable) && unselectable.code === 400, unselectable.message)

        // strategic merge is not served for custom resources
        const strategic = yield* Effect.flip(backends.patch("web", Patch.strategic({ spec: { replicas: 2 } })))
        assert.isTrue(ApiError.is(strategic) && strategic.code === 415, strategic.message)
        const merged = yield* backends.patch("web", Patch.merge({ spec: { replicas: 2 } }))
        assert.strictEqual(merged.spec.replicas, 2)
        const applied = yield* backends.apply(
          { apiVersion: `${group}/v1`, kind: "Backend", metadata: { name: "web" }, spec: { replicas: 3 } },
          { fieldManager: "scaler", force: true }
        )
        assert.strictEqual(applied.spec.replicas, 3)
        assert.strictEqual(applied.spec.image, "nginx:1.27")
      }), 60_000)

    it.effect("crd-gen --from-cluster: the CRD as the server stores it becomes a typed Resource that round-trips", () =>
      Effect.gen(function*() {
        const ns = yield* testNamespace("crd-gen")
        const out = path.join(root, ".tmp", uniqueName("e2e-crd-gen"))
        yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(out, { recursive: true, force: true })))
        const { stdout } = yield* Effect.promise(() =>
          run(process.execPath, [
            "--import",
            "tsx",
            cliEntry,
            "crd-gen",
            "--from-cluster",
            "--kubeconfig",
            kubeconfigPath(),
            "--only",
            `backends.${group}`,
            "--import",
            libraryEntry,
            "--out",
            out
          ], { timeout: 60_000 })
        )
        const file = path.join(out, `backends.${group}.ts`)
        assert.include(stdout, path.basename(file))
        const source = fs.readFileSync(file, "utf8")
        assert.include(source, "The image to run.")
        assert.match(source, /"frontend" \| "backend"/)
        const generated = (yield* Effect.promise(() => import(file))) as { readonly Backends: typeof RawBackends }
        const backends = Kube.api(generated.Backends, { namespace: ns })
        yield* backends.create({
          apiVersion: `${group}/v1`,
          kind: "Backend",
          metadata: { name: "gen" },
          spec: { image: "nginx", tier: "backend" }
        })
        const read = Option.getOrThrow(yield* backends.get("gen")) as { spec?: { replicas?: number } }
        assert.strictEqual(read.spec?.replicas, 1)
      }), 90_000)

    it.effect("status and scale subresources; watches of the kind", () =>
      Effect.gen(function*() {
        const ns = yield* testNamespace("cr-sub")
        const backends = Kube.api(Backends, { namespace: ns })
        const events = yield* Effect.forkChild(
          backends.watch({}).pipe(Stream.take(3), Stream.runCollect)
        )
        yield* Effect.sleep("200 millis")
        yield* backends.create({ metadata: { name: "web" }, spec: { image: "nginx", tier: "frontend", replicas: 2 } })
        // a status in the create is dropped: the status subresource owns it
        const withStatus = yield* backends.patchStatus("web", Patch.merge({ status: { replicas: 2, selector: "app=web" } }))
        assert.strictEqual(withStatus.status?.replicas, 2)
        // a write of the object keeps the status
        const rewritten = yield* backends.update("web", (b) => ({ ...b, status: { replicas: 0 } }))
        assert.strictEqual(rewritten.status?.replicas, 2)
        const scale = Option.getOrThrow(yield* backends.getScale("web"))
        assert.strictEqual(scale.spec?.replicas, 2)
        assert.strictEqual(scale.status?.replicas, 2)
        assert.strictEqual(scale.status?.selector, "app=web")
        const rescaled = yield* backends.patchScale("web", Patch.merge({ spec: { replicas: 4 } }))
        assert.strictEqual(rescaled.spec?.replicas, 4)
        assert.strictEqual(Option.getOrThrow(yield* backends.get("web")).spec.replicas, 4)
        // the scale subresource is checked by the CEL rule too
        const tooMany = yield* Effect.flip(backends.patchScale("web", Patch.merge({ spec: { replicas: 12 } })))
        assert.isTrue(ApiError.isInvalid(tooMany), tooMany.message)
        const seen = yield* Fiber.join(events)
        assert.deepStrictEqual(seen.map((e) => e.type), ["ADDED", "MODIFIED", "MODIFIED"])
      }), 60_000)
  })

  it.effect("a ValidatingAdmissionPolicy's CEL refuses what it should, as kube-apiserver refuses it", () =>
    Effect.gen(function*() {
      const ns = yield* testNamespace("vap")
      const name = uniqueName("e2e-no-forbidden-key")
      const policies = Kube.api(ValidatingAdmissionPolicies)
      const bindings = Kube.api(ValidatingAdmissionPolicyBindings)
      yield* Effect.addFinalizer(() => Effect.ignore(Effect.all([bindings.delete(name), policies.delete(name)])))
      yield* policies.create({
        metadata: { name },
        spec: {
          failurePolicy: "Fail",
          matchConstraints: {
            resourceRules: [{ apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE", "UPDATE"], resources: ["configmaps"] }]
          },
          validations: [{
            expression: "!has(object.data) || !('forbidden' in object.data)",
            message: "the key forbidden is not allowed"
          }]
        }
      })
      yield* bindings.create({
        metadata: { name },
        spec: {
          policyName: name,
          validationActions: ["Deny"],
          matchResources: { namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": ns } } }
        }
      })
      const cms = Kube.api(ConfigMaps, { namespace: ns })
      // the policy counts once the server's admission plugin has seen it and its binding
      const refused = yield* Effect.suspend(() =>
        cms.create({ metadata: { name: uniqueName("probe") }, data: { forbidden: "x" } })
      ).pipe(
        Effect.flatMap(() => Effect.fail("admitted" as const)),
        Effect.retry({ schedule: Schedule.spaced("250 millis"), times: 40, while: (e) => e === "admitted" }),
        Effect.flip
      )
      assert.isTrue(ApiError.isInvalid(refused), String(refused))
      assert.include(
        (refused as ApiError).message,
        `ValidatingAdmissionPolicy '${name}' with binding '${name}' denied request: the key forbidden is not allowed`
      )
      yield* cms.create({ metadata: { name: "allowed" }, data: { fine: "x" } })
    }), 60_000)
})

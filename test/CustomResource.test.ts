/**
 * CustomResource: the CRD derived from a Schema (its structural openAPIV3Schema, names, subresources,
 * columns, several versions), applied to FakeCluster and to `kubectl apply --dry-run=server` against
 * `FakeCluster.serve`, and the typed Resource used against the kind it serves.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Option, Schema } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { CustomResource, CustomResourceDefinitions, Kube, ValidationError } from "../packages/effect-kube/src/index.js"
import { FakeCluster } from "@effect-kube/testing"
import { failureOf } from "./util/failure.js"
import { hasKubectl, ok, serveWithToken, session, suiteName } from "./util/kubectl.js"

const Port = Schema.Struct({
  name: Schema.String.check(Schema.isMinLength(1)),
  port: Schema.Number.check(Schema.isInt(), Schema.isBetween({ minimum: 1, maximum: 65535 })),
  protocol: Schema.optional(Schema.Literals(["TCP", "UDP"]).annotate({ default: "TCP" }))
})

const BackendSpec = Schema.Struct({
  image: Schema.String.annotate({ description: "The image to run." }),
  replicas: Schema.Number.check(Schema.isInt(), Schema.isGreaterThanOrEqualTo(0)).annotate({ default: 1 }),
  tier: Schema.Literals(["frontend", "backend"]),
  weight: Schema.optional(Schema.NullOr(Schema.Number)),
  targetPort: Schema.optional(Schema.Union([Schema.Number, Schema.String])),
  ports: Schema.optional(
    Schema.Array(Port).annotate({ "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"] })
  ),
  tags: Schema.optional(Schema.Array(Schema.String).check(Schema.isUnique())),
  labels: Schema.optional(Schema.Record(Schema.String, Schema.String)),
  extra: Schema.optional(Schema.Record(Schema.String, Schema.Unknown)),
  raw: Schema.optional(Schema.Unknown),
  startedAt: Schema.optional(Schema.DateTimeUtcFromString.annotate({ format: "date-time" })),
  name: Schema.optional(Schema.String.check(Schema.isPattern(/^[a-z]+$/), Schema.isMaxLength(20)))
}).annotate({
  "x-kubernetes-validations": [{ rule: "self.replicas <= 10", message: "at most 10 replicas" }]
})

const BackendStatus = Schema.Struct({
  replicas: Schema.optional(Schema.Number.check(Schema.isInt())),
  selector: Schema.optional(Schema.String)
})

const Backends = CustomResource.make({
  group: "example.com",
  version: "v1",
  kind: "Backend",
  scope: "Namespaced",
  spec: BackendSpec,
  status: BackendStatus,
  shortNames: ["be"],
  categories: ["all"],
  printerColumns: [
    { name: "Replicas", type: "integer", jsonPath: ".spec.replicas" },
    { name: "Tier", type: "string", jsonPath: ".spec.tier", priority: 1 }
  ],
  scale: { specReplicasPath: ".spec.replicas", statusReplicasPath: ".status.replicas", labelSelectorPath: ".status.selector" },
  selectableFields: [".spec.tier"],
  validations: [{ rule: "self.metadata.name.size() <= 40", message: "name too long" }]
})

const backend = {
  metadata: { name: "web", namespace: "default" },
  spec: { image: "nginx:1.27", replicas: 2, tier: "frontend" as const, ports: [{ name: "http", port: 80 }] }
}

describe("CustomResource.make", () => {
  it("names the kind and its paths as the CRD does, and types its subresources", () => {
    assert.strictEqual(Backends.apiVersion, "example.com/v1")
    assert.strictEqual(Backends.plural, "backends")
    assert.strictEqual(Backends.singular, "backend")
    assert.strictEqual(Backends.namespaced, true)
    assert.deepStrictEqual(Backends.subresources, ["status", "scale"])
    assert.strictEqual(CustomResource.make({ group: "a.io", version: "v1", kind: "Policy", scope: "Cluster", spec: Schema.Struct({}) }).plural, "policies")
    assert.strictEqual(CustomResource.make({ group: "a.io", version: "v1", kind: "Ingress", scope: "Cluster", spec: Schema.Struct({}) }).plural, "ingresses")
    assert.isTrue(CustomResource.isCustomResource(Backends))
  })

  it.effect("derives a structural openAPIV3Schema from the Schema", () =>
    Effect.gen(function*() {
      const crd = yield* Backends.crd()
      assert.strictEqual(crd.metadata?.name, "backends.example.com")
      assert.deepStrictEqual(crd.spec.names, {
        kind: "Backend",
        listKind: "BackendList",
        plural: "backends",
        singular: "backend",
        shortNames: ["be"],
        categories: ["all"]
      })
      assert.strictEqual(crd.spec.scope, "Namespaced")
      const [version] = crd.spec.versions
      assert.strictEqual(version!.name, "v1")
      assert.isTrue(version!.storage)
      assert.isTrue(version!.served)
      const root = version!.schema!.openAPIV3Schema!
      assert.deepStrictEqual(root.required, ["spec"])
      assert.deepStrictEqual(root["x-kubernetes-validations"], [{ rule: "self.metadata.name.size() <= 40", message: "name too long" }])
      assert.deepStrictEqual(root.properties!.metadata, { type: "object" })
      const spec = root.properties!.spec!
      assert.strictEqual(spec.type, "object")
      assert.deepStrictEqual(spec.required, ["image", "replicas", "tier"])
      assert.deepStrictEqual(spec["x-kubernetes-validations"], [{ rule: "self.replicas <= 10", message: "at most 10 replicas" }])
      const p = spec.properties!
      assert.deepStrictEqual(p.image, { type: "string", description: "The image to run." })
      assert.deepStrictEqual(p.replicas, { type: "integer", minimum: 0, default: 1 })
      assert.deepStrictEqual(p.tier, { type: "string", enum: ["frontend", "backend"] })
      assert.deepStrictEqual(p.weight, { type: "number", nullable: true })
      assert.deepStrictEqual(p.targetPort, { "x-kubernetes-int-or-string": true })
      assert.deepStrictEqual(p.ports, {
        type: "array",
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["name"],
        items: {
          type: "object",
          required: ["name", "port"],
          properties: {
            name: { type: "string", minLength: 1 },
            port: { type: "integer", minimum: 1, maximum: 65535 },
            protocol: { type: "string", enum: ["TCP", "UDP"], default: "TCP" }
          }
        }
      })
      assert.deepStrictEqual(p.tags, { type: "array", items: { type: "string" }, "x-kubernetes-list-type": "set" })
      assert.deepStrictEqual(p.labels, { type: "object", additionalProperties: { type: "string" } })
      assert.deepStrictEqual(p.extra, { type: "object", "x-kubernetes-preserve-unknown-fields": true })
      assert.deepStrictEqual(p.raw, { "x-kubernetes-preserve-unknown-fields": true })
      // a transforming Schema is described by what it is sent as
      assert.deepStrictEqual(p.startedAt, { type: "string", format: "date-time" })
      assert.deepStrictEqual(p.name, { type: "string", pattern: "^[a-z]+$", maxLength: 20 })
      assert.deepStrictEqual(root.properties!.status, {
        type: "object",
        properties: { replicas: { type: "integer" }, selector: { type: "string" } }
      })
      assert.deepStrictEqual(version!.subresources, {
        status: {},
        scale: { specReplicasPath: ".spec.replicas", statusReplicasPath: ".status.replicas", labelSelectorPath: ".status.selector" }
      })
      assert.deepStrictEqual(version!.additionalPrinterColumns, [
        { name: "Replicas", type: "integer", jsonPath: ".spec.replicas" },
        { name: "Tier", type: "string", jsonPath: ".spec.tier", priority: 1 }
      ])
      assert.deepStrictEqual(version!.selectableFields, [{ jsonPath: ".spec.tier" }])
    }))

  const notStructural = (spec: Schema.Codec<any, any>) =>
    Effect.gen(function*() {
      const error = yield* failureOf(
        CustomResource.make({ group: "example.com", version: "v1", kind: "Thing", scope: "Namespaced", spec }).crd()
      )
      assert.instanceOf(error, ValidationError)
      return error.message
    })

  it.effect("a Schema that cannot be made structural fails with a ValidationError naming the field", () =>
    Effect.gen(function*() {
      assert.match(
        yield* notStructural(Schema.Struct({ source: Schema.Union([Schema.Struct({ a: Schema.String }), Schema.String]) })),
        /^CustomResource things\.example\.com\/v1: spec\.source: a union of object, string cannot be made structural/
      )
      assert.match(
        yield* notStructural(Schema.Struct({ pair: Schema.Tuple([Schema.String, Schema.Number]) })),
        /spec\.pair: a tuple cannot be made structural/
      )
      interface Tree { readonly children: ReadonlyArray<Tree> }
      const Tree: Schema.Codec<Tree> = Schema.Struct({ children: Schema.Array(Schema.suspend(() => Tree)) })
      assert.match(yield* notStructural(Schema.Struct({ tree: Tree })), /spec\.tree\.children\[\*\]: a recursive Schema/)
      assert.match(
        yield* notStructural(Schema.Struct({ items: Schema.Array(Schema.Struct({ "my-key": Schema.BigInt })) })),
        /spec\.items\[\*\]\["my-key"\]: a bigint has no JSON form/
      )
      assert.match(
        yield* notStructural(Schema.Struct({ rest: Schema.StructWithRest(Schema.Struct({ a: Schema.String }), [Schema.Record(Schema.String, Schema.Number)]) })),
        /spec\.rest: an object with both named fields and a record of typed values/
      )
    }))

  it.effect("bad names, scale paths and selectable fields fail before anything is sent", () =>
    Effect.gen(function*() {
      const base = { version: "v1", kind: "Thing", scope: "Namespaced" as const, spec: Schema.Struct({ n: Schema.String }) }
      const fails = (resource: CustomResource.CustomResource<any, any, any>) =>
        Effect.map(failureOf(resource.crd()), (error) => error.detail)
      assert.match(yield* fails(CustomResource.make({ ...base, group: "nodots" })), /at least one dot/)
      assert.match(yield* fails(CustomResource.make({ ...base, group: "a.io", version: "V1" })), /DNS-1035/)
      assert.match(
        yield* fails(CustomResource.make({ ...base, group: "a.io", scale: { specReplicasPath: ".spec.n", statusReplicasPath: ".status.n" } })),
        /specReplicasPath \.spec\.n must be a field of type integer, not string/
      )
      assert.match(
        yield* fails(CustomResource.make({ ...base, group: "a.io", selectableFields: [".spec.missing"] })),
        /selectable field \.spec\.missing names no field/
      )
    }))

  it.effect("joins several versions of one kind, one of them stored", () =>
    Effect.gen(function*() {
      const common = { group: "example.com", kind: "Widget", scope: "Namespaced" as const }
      const v1alpha1 = CustomResource.make({ ...common, version: "v1alpha1", spec: Schema.Struct({ size: Schema.String }), deprecated: "use v1" })
      const v1 = CustomResource.make({ ...common, version: "v1", spec: Schema.Struct({ size: Schema.String, color: Schema.optional(Schema.String) }), storage: true })
      const crd = yield* CustomResource.crd([v1alpha1, v1])
      assert.deepStrictEqual(crd.spec.versions.map((v) => [v.name, v.served, v.storage, v.deprecated, v.deprecationWarning]), [
        ["v1alpha1", true, false, true, "use v1"],
        ["v1", true, true, undefined, undefined]
      ])
      const unmarked = yield* failureOf(CustomResource.crd([v1alpha1, CustomResource.make({ ...common, version: "v1", spec: Schema.Struct({}) })]))
      assert.match(unmarked.detail, /storage: true/)
      const otherKind = CustomResource.make({ ...common, kind: "Gadget", version: "v2", spec: Schema.Struct({}) })
      assert.match((yield* failureOf(CustomResource.crd([v1, otherKind]))).detail, /not of the same group, kind/)
    }))
})

describe("CustomResource on FakeCluster", () => {
  it.effect("the CRD applies, serves the kind, and the typed Resource works with its subresources", () =>
    Effect.gen(function*() {
      const crd = yield* Backends.crd()
      yield* Kube.api(CustomResourceDefinitions).apply(crd, { fieldManager: "test", force: true })
      const backends = Kube.api(Backends, { namespace: "default" })
      const created = yield* backends.create(backend)
      assert.strictEqual(created.spec.replicas, 2)
      yield* backends.patchStatus("web", { _tag: "Merge", body: { status: { replicas: 2 } } })
      const found = yield* backends.get("web")
      assert.strictEqual(Option.getOrThrow(found).status?.replicas, 2)
      const listed = yield* Kube.api(Backends).list({ allNamespaces: true })
      assert.deepStrictEqual(listed.items.map((b) => b.metadata?.name), ["web"])
      // an apply configuration of the kind names only the fields its manager owns; the CRD's CEL rule holds
      const scaler = (replicas: number) =>
        backends.apply(
          { apiVersion: "example.com/v1", kind: "Backend", metadata: { name: "web" }, spec: { replicas } },
          { fieldManager: "scaler", force: true }
        )
      assert.strictEqual((yield* scaler(3)).spec.replicas, 3)
      const refused = yield* Effect.flip(scaler(11))
      assert.include(refused.message, "spec: Invalid value: at most 10 replicas")
    }).pipe(Effect.provide(FakeCluster.layer())))

  it.effect("the CRD's selectable fields are what field selectors may name", () =>
    Effect.gen(function*() {
      yield* Kube.api(CustomResourceDefinitions).apply(yield* Backends.crd(), { fieldManager: "test", force: true })
      const backends = Kube.api(Backends, { namespace: "default" })
      yield* backends.create(backend)
      yield* backends.create({ metadata: { name: "db" }, spec: { ...backend.spec, tier: "backend" } })
      const names = (fieldSelector: string) =>
        Effect.map(backends.list({ fieldSelector }), (list) => list.items.map((b) => b.metadata?.name))
      assert.deepStrictEqual(yield* names("spec.tier=backend"), ["db"])
      assert.deepStrictEqual(yield* names("spec.tier!=backend,metadata.name=web"), ["web"])
      const refused = yield* Effect.flip(backends.list({ fieldSelector: "spec.image=nginx:1.27" }))
      assert.strictEqual(refused._tag, "ApiError")
      if (refused._tag === "ApiError") {
        assert.strictEqual(refused.code, 400)
        assert.strictEqual(refused.statusMessage, "field label not supported: spec.image")
      }
    }).pipe(Effect.provide(FakeCluster.layer())))
})

/** A kind whose replicas and selector live elsewhere than a Deployment's: its CRD's scale paths say where. */
const Pools = CustomResource.make({
  group: "example.com",
  version: "v1",
  kind: "Pool",
  scope: "Namespaced",
  spec: Schema.Struct({ size: Schema.optional(Schema.Number.check(Schema.isInt())) }),
  status: Schema.Struct({
    ready: Schema.optional(Schema.Number.check(Schema.isInt())),
    podSelector: Schema.optional(Schema.String)
  }),
  scale: { specReplicasPath: ".spec.size", statusReplicasPath: ".status.ready", labelSelectorPath: ".status.podSelector" }
})

describe("the scale subresource of a custom resource, by its CRD's paths", () => {
  it.effect("getScale reads specReplicasPath, statusReplicasPath and labelSelectorPath; a scale writes specReplicasPath", () =>
    Effect.gen(function*() {
      yield* Kube.api(CustomResourceDefinitions).apply(yield* Pools.crd(), { fieldManager: "test", force: true })
      const pools = Kube.api(Pools, { namespace: "default" })
      yield* pools.create({ metadata: { name: "web" }, spec: { size: 2 } })
      // nothing at the status paths yet: 0 replicas, and no selector (the API server's empty string, omitted)
      const fresh = Option.getOrThrow(yield* pools.getScale("web"))
      assert.strictEqual(fresh.spec?.replicas, 2)
      assert.strictEqual(fresh.status?.replicas, 0)
      assert.isUndefined(fresh.status?.selector)
      yield* pools.patchStatus("web", { _tag: "Merge", body: { status: { ready: 2, podSelector: "app=web,tier in (a,b)" } } })
      const ready = Option.getOrThrow(yield* pools.getScale("web"))
      assert.strictEqual(ready.status?.replicas, 2)
      assert.strictEqual(ready.status?.selector, "app=web,tier in (a,b)")

      const scaled = yield* pools.patchScale("web", { _tag: "Merge", body: { spec: { replicas: 5 } } })
      assert.strictEqual(scaled.spec?.replicas, 5)
      const pool = Option.getOrThrow(yield* pools.get("web"))
      assert.deepStrictEqual(pool.spec, { size: 5 })

      // a selector that is not a string is the API server's 400, not a Scale
      const control = yield* FakeCluster.FakeCluster
      control.update({ apiVersion: "example.com/v1", kind: "Pool", namespace: "default", name: "web" }, (obj) => {
        ;(obj.status as Record<string, unknown>).podSelector = { matchLabels: { app: "web" } }
      })
      const refused = yield* Effect.flip(pools.getScale("web"))
      assert.strictEqual(refused._tag, "ApiError")
      if (refused._tag === "ApiError") {
        assert.strictEqual(refused.code, 400)
        assert.strictEqual(
          refused.statusMessage,
          ".status.podSelector accessor error: map[matchLabels:map[app:web]] is of the type map[string]interface {}, " +
            "expected string"
        )
      }
    }).pipe(Effect.provide(FakeCluster.layer())))

  it.effect.skipIf(!hasKubectl)("kubectl scale and kubectl get --subresource=scale use the same paths", () =>
    Effect.gen(function*() {
      const served = yield* serveWithToken()
      const { dir, run } = yield* session(served.kubeconfigPath, "crd-scale")
      const file = Path.join(dir, "crd.json")
      Fs.writeFileSync(file, JSON.stringify(yield* Pools.crd()))
      ok(yield* run("apply", "--server-side", "-f", file))
      ok(yield* run("wait", "--for", "condition=established", "crd/pools.example.com", "--timeout=10s"))
      const pool = Path.join(dir, "pool.json")
      Fs.writeFileSync(pool, JSON.stringify({ apiVersion: "example.com/v1", kind: "Pool", metadata: { name: "db" }, spec: { size: 1 } }))
      ok(yield* run("create", "-f", pool))
      assert.match(ok(yield* run("scale", "pool/db", "--replicas=4")), /pool\.example\.com\/db scaled/)
      assert.strictEqual(ok(yield* run("get", "pool/db", "-o", "jsonpath={.spec.size}")), "4")
      ok(yield* run(
        "patch", "pool/db", "--subresource=status", "--type=merge", "-p",
        JSON.stringify({ status: { ready: 4, podSelector: "app=db" } })
      ))
      const scale = JSON.parse(ok(yield* run("get", "pool/db", "--subresource=scale", "-o", "json")))
      assert.deepStrictEqual([scale.kind, scale.spec, scale.status], ["Scale", { replicas: 4 }, { replicas: 4, selector: "app=db" }])
    }).pipe(Effect.scoped))
})

describe(suiteName("CustomResource with kubectl against FakeCluster.serve"), () => {
  it.effect.skipIf(!hasKubectl)("kubectl apply --dry-run=server takes the derived CRD, then serves the kind", () =>
    Effect.gen(function*() {
      const served = yield* serveWithToken()
      const { dir, run } = yield* session(served.kubeconfigPath, "crd")
      const file = Path.join(dir, "crd.json")
      Fs.writeFileSync(file, JSON.stringify(yield* Backends.crd()))
      assert.match(ok(yield* run("apply", "--dry-run=server", "-f", file)), /backends\.example\.com created \(server dry run\)/)
      assert.isUndefined(served.control.get({ apiVersion: "apiextensions.k8s.io/v1", kind: "CustomResourceDefinition", name: "backends.example.com" }))
      assert.match(ok(yield* run("apply", "--server-side", "-f", file)), /backends\.example\.com serverside-applied/)
      const objectFile = Path.join(dir, "web.json")
      Fs.writeFileSync(objectFile, JSON.stringify({ apiVersion: "example.com/v1", kind: "Backend", ...backend }))
      ok(yield* run("apply", "--server-side", "-f", objectFile))
      assert.match(ok(yield* run("get", "be", "web", "-o", "jsonpath={.spec.image}")), /^nginx:1\.27$/)
      // the CRD's category: kubectl get all lists the kind
      assert.include(ok(yield* run("get", "all", "-o", "name")).split("\n"), "backend.example.com/web")
    }).pipe(Effect.scoped))
})

it("the exit of a failed crd() is a failure, not a defect", () => {
  const exit = Effect.runSyncExit(
    CustomResource.make({ group: "example.com", version: "v1", kind: "Thing", scope: "Cluster", spec: Schema.Struct({ t: Schema.Tuple([]) }) }).crd()
  )
  assert.isTrue(Exit.isFailure(exit))
})

import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import * as Discovery from "../packages/effect-kube/src/Discovery.js"
import { ApiError, ValidationError } from "../packages/effect-kube/src/Errors.js"
import * as Kube from "../packages/effect-kube/src/Kube.js"
import * as Manifests from "../packages/effect-kube/src/Manifests.js"
import * as RequestPolicy from "../packages/effect-kube/src/RequestPolicy.js"
import { FakeCluster } from "@effect-kube/testing"

/** A server without aggregated discovery (before kube-apiserver 1.30's default): one document per group version. */
const withoutAggregated: FakeCluster.Options = { features: { aggregatedDiscovery: false } }

const fake = (options: FakeCluster.Options = withoutAggregated) => {
  const cluster = FakeCluster.layer({ ...options })
  return Layer.merge(cluster, Discovery.layer.pipe(Layer.provide(cluster)))
}

/** The discovery documents the fake was asked for, in order. */
const discoveryReads = (cluster: FakeCluster.Service) =>
  cluster.requests().filter((r) => r.method === "GET" && /^\/apis?(\/[^/]+)?(\/[^/]+)?$/.test(r.path)).map((r) => r.path)

const crontabs = {
  apiVersion: "stable.example.com/v1",
  kind: "CronTab",
  plural: "crontabs",
  namespaced: true
} as const

const crontabCrd = {
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: "crontabs.stable.example.com" },
  spec: {
    group: "stable.example.com",
    scope: "Namespaced",
    names: { plural: "crontabs", singular: "crontab", kind: "CronTab" },
    versions: [{
      name: "v1",
      served: true,
      storage: true,
      // an undeclared field would be pruned (or refused by server-side apply): the CronTabs' spec is free-form
      schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } }
    }]
  }
}

describe("Discovery on a server without aggregated discovery: the legacy index, then one document per group version", () => {
  it.effect("resolves core and group kinds from their group version's document", () =>
    Effect.gen(function*() {
      const discovery = yield* Discovery.Discovery
      const pods = yield* discovery.resolve("v1", "Pod")
      assert.deepInclude(pods, { apiVersion: "v1", group: "", version: "v1", kind: "Pod", plural: "pods", namespaced: true })
      const namespaces = yield* discovery.resolve("v1", "Namespace")
      assert.deepInclude(namespaces, { plural: "namespaces", namespaced: false })
      const deployments = yield* discovery.resolve("apps/v1", "Deployment")
      assert.deepInclude(deployments, { group: "apps", version: "v1", plural: "deployments", namespaced: true })
      const cluster = yield* FakeCluster.FakeCluster
      // the aggregated Accept on /api and /apis is answered by the legacy index: each group version is then read
      assert.deepStrictEqual(discoveryReads(cluster), ["/api", "/api/v1", "/apis", "/apis/apps/v1"])
    }).pipe(Effect.provide(fake())))

  it.effect("a resolved Resource works with Kube.api as a raw-JSON client", () =>
    Effect.gen(function*() {
      const discovery = yield* Discovery.Discovery
      const configMaps = yield* discovery.resolve("v1", "ConfigMap")
      const api = Kube.api(configMaps, { namespace: "default" })
      yield* api.create({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "raw" }, data: { a: "b" } })
      const { items } = yield* api.list()
      // beside the namespace's kube-root-ca.crt, which kube-controller-manager publishes in every namespace
      assert.deepStrictEqual(items.map((o) => (o as { metadata: { name: string } }).metadata.name), [
        "kube-root-ca.crt",
        "raw"
      ])
    }).pipe(Effect.provide(fake())))

  it.effect("subresources (pods/log, deployments/scale) are not kinds", () =>
    Effect.gen(function*() {
      const discovery = yield* Discovery.Discovery
      const pods = yield* discovery.resolve("v1", "Pod")
      assert.strictEqual(pods.plural, "pods")
      const scale = yield* Effect.flip(discovery.resolve("apps/v1", "Scale"))
      assert.instanceOf(scale, ValidationError)
      assert.match(scale.message, /apps\/v1 Scale: the server serves no kind Scale in apps\/v1/)
    }).pipe(Effect.provide(fake())))

  it.effect("keeps each document for the life of the layer; concurrent first uses share one fetch", () =>
    Effect.gen(function*() {
      const discovery = yield* Discovery.Discovery
      const cluster = yield* FakeCluster.FakeCluster
      const resolved = yield* Effect.all(
        [
          discovery.resolve("v1", "Pod"),
          discovery.resolve("v1", "Secret"),
          discovery.resolve("v1", "Service"),
          discovery.resolve("apps/v1", "Deployment"),
          discovery.resolve("apps/v1", "Deployment"),
          discovery.resolve("v1", "ConfigMap")
        ],
        { concurrency: "unbounded" }
      )
      assert.deepStrictEqual(resolved.map((r) => r.plural), ["pods", "secrets", "services", "deployments", "deployments", "configmaps"])
      assert.deepStrictEqual([...discoveryReads(cluster)].sort(), ["/api", "/api/v1", "/apis", "/apis/apps/v1"])
      yield* discovery.resolve("v1", "Pod")
      yield* discovery.resolve("apps/v1", "Deployment")
      assert.deepStrictEqual([...discoveryReads(cluster)].sort(), ["/api", "/api/v1", "/apis", "/apis/apps/v1"])
    }).pipe(Effect.provide(fake())))

  it.effect("when the caller fetching for others is interrupted, a waiting caller fetches for itself", () =>
    Effect.gen(function*() {
      const discovery = yield* Discovery.Discovery
      const cluster = yield* FakeCluster.FakeCluster
      const turn = Effect.promise(() => new Promise<void>((resolve) => setImmediate(resolve)))
      cluster.stallNext({ match: (_method, path) => path === "/api/v1" })
      const owner = yield* Effect.forkChild(discovery.resolve("v1", "Pod"))
      while (discoveryReads(cluster).length < 2) yield* turn
      const waiter = yield* Effect.forkChild(discovery.resolve("v1", "Secret"))
      for (let i = 0; i < 5; i++) yield* turn
      yield* Fiber.interrupt(owner)
      const secrets = yield* Fiber.join(waiter)
      assert.strictEqual(secrets.plural, "secrets")
      assert.deepStrictEqual(discoveryReads(cluster), ["/api", "/api/v1", "/api/v1"])
    }).pipe(Effect.provide(fake())))

  it.effect("an unknown kind is refetched once (not when the document was just fetched) and named in the error", () =>
    Effect.gen(function*() {
      const discovery = yield* Discovery.Discovery
      const cluster = yield* FakeCluster.FakeCluster
      const fresh = yield* Effect.flip(discovery.resolve("v1", "Gizmo"))
      assert.instanceOf(fresh, ValidationError)
      assert.strictEqual(fresh.subject, "v1 Gizmo")
      assert.deepStrictEqual(discoveryReads(cluster), ["/api", "/api/v1"])
      const cached = yield* Effect.flip(discovery.resolve("v1", "Gizmo"))
      assert.include(cached.message, "Gizmo")
      assert.deepStrictEqual(discoveryReads(cluster), ["/api", "/api/v1", "/api/v1"])
      const group = yield* Effect.flip(discovery.resolve("nothing.example.com/v1", "Thing"))
      assert.match(group.message, /nothing\.example\.com\/v1 Thing: the server does not serve nothing\.example\.com\/v1/)
    }).pipe(Effect.provide(fake())))

  it.effect("finds a custom resource registered after the document was cached", () =>
    Effect.gen(function*() {
      const discovery = yield* Discovery.Discovery
      const cluster = yield* FakeCluster.FakeCluster
      const before = yield* Effect.flip(discovery.resolve("stable.example.com/v1", "CronTab"))
      assert.instanceOf(before, ValidationError)
      cluster.registerResource(crontabs)
      const after = yield* discovery.resolve("stable.example.com/v1", "CronTab")
      assert.deepInclude(after, { plural: "crontabs", namespaced: true, group: "stable.example.com" })
      assert.deepStrictEqual(discoveryReads(cluster), ["/apis", "/apis/stable.example.com/v1", "/apis/stable.example.com/v1"])
      // And another kind of the same group, added later still, is found the same way.
      cluster.registerResource({ apiVersion: "stable.example.com/v1", kind: "AtTab", plural: "attabs", namespaced: false })
      assert.deepInclude(yield* discovery.resolve("stable.example.com/v1", "AtTab"), { plural: "attabs", namespaced: false })
    }).pipe(Effect.provide(fake())))

  it.effect("a set applies a CRD and its custom resources together; a later apply finds the kind by discovery", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      const crontab = { apiVersion: "stable.example.com/v1", kind: "CronTab", metadata: { name: "nightly" }, spec: { cron: "0 3 * * *" } }
      // The kind is not served yet: it is taken from the CRD of the set, its object applied once the CRD is established
      // (test/e2e/manifests.test.ts shows it against kube-apiserver, which establishes a CRD a moment after its create).
      const [, first] = yield* Manifests.apply([crontabCrd, crontab], { clusterScoped: true })
      assert.strictEqual(first!.uid, cluster.get({ apiVersion: "stable.example.com/v1", kind: "CronTab", name: "nightly" })?.metadata.uid)
      // A kind no CRD of the set serves is still refused before anything is applied.
      const mutations = cluster.mutations()
      const unknown = yield* Effect.flip(Manifests.apply([{ ...crontab, kind: "Gizmo" }], { clusterScoped: true }))
      assert.instanceOf(unknown, ValidationError)
      assert.strictEqual(cluster.mutations(), mutations)
      const [ref] = yield* Manifests.apply([crontab])
      assert.strictEqual(ref!.uid, first!.uid)
    }).pipe(Effect.provide(fake())))

  it.effect("Manifests use the Discovery in context, else one per operation", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      const objects: ReadonlyArray<Manifests.Manifest> = [{ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a" } }]
      yield* Manifests.apply(objects)
      yield* Manifests.get(objects)
      yield* Manifests.delete(objects)
      assert.deepStrictEqual(discoveryReads(cluster), ["/api", "/api/v1", "/api", "/api/v1", "/api", "/api/v1"])
      cluster.reset()
      yield* Effect.gen(function*() {
        yield* Manifests.apply(objects)
        yield* Manifests.get(objects)
        yield* Manifests.delete(objects)
      }).pipe(Effect.provide(Discovery.layer))
      assert.deepStrictEqual(discoveryReads(cluster), ["/api", "/api/v1"])
    }).pipe(Effect.provide(FakeCluster.layer(withoutAggregated))))

  it.effect("a failed fetch is not cached: the next call fetches again", () =>
    Effect.gen(function*() {
      const discovery = yield* Discovery.Discovery
      const cluster = yield* FakeCluster.FakeCluster
      cluster.failNext({ status: 500, message: "etcd is down", match: (_method, path) => path === "/api/v1" })
      const error = yield* Effect.flip(discovery.resolve("v1", "Pod"))
      assert.isTrue(ApiError.is(error))
      assert.strictEqual((error as ApiError).code, 500)
      assert.strictEqual((yield* discovery.resolve("v1", "Pod")).plural, "pods")
      assert.deepStrictEqual(discoveryReads(cluster), ["/api", "/api/v1", "/api/v1"])
    }).pipe(
      Effect.provide(fake()),
      // No read retries here, so that the first call sees the failure.
      Effect.provide(RequestPolicy.layer({ readRetries: Schedule.recurs(0) }))
    ))

  it.effect("refuses malformed apiVersions and kinds without a request", () =>
    Effect.gen(function*() {
      const discovery = yield* Discovery.Discovery
      const cluster = yield* FakeCluster.FakeCluster
      const cases: ReadonlyArray<readonly [string, string, RegExp]> = [
        ["", "Pod", /apiVersion of kind Pod: must not be empty/],
        ["apps/v1/x", "Deployment", /must be "<version>" or "<group>\/<version>"/],
        ["../v1", "Pod", /group that is not a DNS subdomain/],
        ["apps/V1", "Deployment", /version that is not a DNS label/],
        ["v1", "", /kind \(v1\): must not be empty/],
        ["v1", "pods/log", /must be letters and digits/]
      ]
      for (const [apiVersion, kind, message] of cases) {
        const error = yield* Effect.flip(discovery.resolve(apiVersion, kind))
        assert.instanceOf(error, ValidationError)
        assert.match(error.message, message)
      }
      assert.deepStrictEqual(cluster.requests(), [])
    }).pipe(Effect.provide(fake())))
})

describe("Discovery with aggregated discovery (apidiscovery.k8s.io/v2, kube-apiserver 1.30+)", () => {
  const aggregated = () => fake({})

  it.effect("resolves every kind of the core group from /api and of the named groups from /apis, one request each", () =>
    Effect.gen(function*() {
      const discovery = yield* Discovery.Discovery
      const cluster = yield* FakeCluster.FakeCluster
      const resolved = yield* Effect.all(
        [
          discovery.resolve("v1", "Pod"),
          discovery.resolve("v1", "Namespace"),
          discovery.resolve("apps/v1", "Deployment"),
          discovery.resolve("batch/v1", "Job"),
          discovery.resolve("rbac.authorization.k8s.io/v1", "ClusterRole")
        ],
        { concurrency: "unbounded" }
      )
      assert.deepStrictEqual(resolved.map((r) => [r.plural, r.namespaced]), [
        ["pods", true],
        ["namespaces", false],
        ["deployments", true],
        ["jobs", true],
        ["clusterroles", false]
      ])
      assert.deepStrictEqual([...discoveryReads(cluster)].sort(), ["/api", "/apis"])
      yield* discovery.resolve("networking.k8s.io/v1", "Ingress")
      assert.deepStrictEqual([...discoveryReads(cluster)].sort(), ["/api", "/apis"])
    }).pipe(Effect.provide(aggregated())))

  it.effect("a CRD installed after /apis was cached is found by reading /apis once more; an unknown kind says so", () =>
    Effect.gen(function*() {
      const discovery = yield* Discovery.Discovery
      const cluster = yield* FakeCluster.FakeCluster
      yield* discovery.resolve("apps/v1", "Deployment")
      cluster.registerResource(crontabs)
      const found = yield* discovery.resolve("stable.example.com/v1", "CronTab")
      assert.deepInclude(found, { plural: "crontabs", namespaced: true, group: "stable.example.com" })
      assert.deepStrictEqual(discoveryReads(cluster), ["/apis", "/apis"])
      const unknown = yield* Effect.flip(discovery.resolve("stable.example.com/v1", "CronTob"))
      assert.instanceOf(unknown, ValidationError)
      assert.match(unknown.message, /serves no kind CronTob in stable\.example\.com\/v1: did you mean CronTab\?/)
      const missing = yield* Effect.flip(discovery.resolve("nothing.example.com/v1", "Thing"))
      assert.match(missing.message, /the server does not serve nothing\.example\.com\/v1/)
    }).pipe(Effect.provide(aggregated())))

  it.effect("resources() is the two aggregated documents: the same resources as the per-group-version documents", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      const discovery = yield* Discovery.Discovery
      const fromAggregated = yield* discovery.resources()
      assert.deepStrictEqual([...discoveryReads(cluster)].sort(), ["/api", "/apis"])
      const legacy = yield* Effect.provide(
        Effect.flatMap(Discovery.make, (d) => d.resources()),
        FakeCluster.layer(withoutAggregated)
      )
      const key = (r: Discovery.ApiResource) => `${r.apiVersion} ${r.plural}`
      const byKey = (list: ReadonlyArray<Discovery.ApiResource>) =>
        new Map(list.map((r) => [key(r), { ...r, subresources: [...r.subresources].sort() }]))
      assert.deepStrictEqual(byKey(fromAggregated.resources), byKey(legacy.resources))
      assert.deepStrictEqual(fromAggregated.groups, legacy.groups)
      assert.deepStrictEqual(fromAggregated.failed, [])
    }).pipe(Effect.provide(aggregated())))

  it.effect("the fake answers the Accept as kube-apiserver 1.35: v2 when asked, the legacy index otherwise, 406 for v2 alone when off", () =>
    Effect.gen(function*() {
      const v2 = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
      const list = (yield* Kube.request({ method: "GET", path: "/apis", accept: v2 })) as {
        kind: string
        apiVersion: string
        items: ReadonlyArray<{ metadata: { name?: string }; versions: ReadonlyArray<{ version: string; freshness: string }> }>
      }
      assert.strictEqual(list.kind, "APIGroupDiscoveryList")
      assert.strictEqual(list.apiVersion, "apidiscovery.k8s.io/v2")
      assert.isTrue(list.items.some((g) => g.metadata.name === "apps" && g.versions[0]?.freshness === "Current"))
      const core = (yield* Kube.request({ method: "GET", path: "/api", accept: v2 })) as {
        items: ReadonlyArray<{ metadata: object; versions: ReadonlyArray<{ resources: ReadonlyArray<{ resource: string; scope: string; responseKind: object; subresources?: ReadonlyArray<{ subresource: string }> }> }> }>
      }
      assert.deepStrictEqual(core.items[0]!.metadata, {})
      const pods = core.items[0]!.versions[0]!.resources.find((r) => r.resource === "pods")!
      assert.strictEqual(pods.scope, "Namespaced")
      assert.deepStrictEqual(pods.responseKind, { group: "", version: "", kind: "Pod" })
      // v2beta1 is no longer served by 1.35: the legacy index answers
      const beta = (yield* Kube.request({ method: "GET", path: "/apis", accept: v2.replace("v=v2", "v=v2beta1") })) as { kind: string }
      assert.strictEqual(beta.kind, "APIGroupList")
      assert.strictEqual(((yield* Kube.request({ method: "GET", path: "/apis" })) as { kind: string }).kind, "APIGroupList")
      const off = yield* Effect.flip(
        Effect.provide(Kube.request({ method: "GET", path: "/apis", accept: v2 }), FakeCluster.layer(withoutAggregated))
      )
      assert.strictEqual(off._tag === "ApiError" ? off.code : 0, 406)
    }).pipe(Effect.provide(aggregated())))
})

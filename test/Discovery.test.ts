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

const fake = (options?: FakeCluster.Options) => {
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

describe("Discovery", () => {
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
      assert.deepStrictEqual(discoveryReads(cluster), ["/api/v1", "/apis/apps/v1"])
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
      assert.deepStrictEqual([...discoveryReads(cluster)].sort(), ["/api/v1", "/apis/apps/v1"])
      yield* discovery.resolve("v1", "Pod")
      yield* discovery.resolve("apps/v1", "Deployment")
      assert.deepStrictEqual([...discoveryReads(cluster)].sort(), ["/api/v1", "/apis/apps/v1"])
    }).pipe(Effect.provide(fake())))

  it.effect("when the caller fetching for others is interrupted, a waiting caller fetches for itself", () =>
    Effect.gen(function*() {
      const discovery = yield* Discovery.Discovery
      const cluster = yield* FakeCluster.FakeCluster
      const turn = Effect.promise(() => new Promise<void>((resolve) => setImmediate(resolve)))
      cluster.stallNext({ match: (_method, path) => path === "/api/v1" })
      const owner = yield* Effect.forkChild(discovery.resolve("v1", "Pod"))
      while (discoveryReads(cluster).length === 0) yield* turn
      const waiter = yield* Effect.forkChild(discovery.resolve("v1", "Secret"))
      for (let i = 0; i < 5; i++) yield* turn
      yield* Fiber.interrupt(owner)
      const secrets = yield* Fiber.join(waiter)
      assert.strictEqual(secrets.plural, "secrets")
      assert.deepStrictEqual(discoveryReads(cluster), ["/api/v1", "/api/v1"])
    }).pipe(Effect.provide(fake())))

  it.effect("an unknown kind is refetched once (not when the document was just fetched) and named in the error", () =>
    Effect.gen(function*() {
      const discovery = yield* Discovery.Discovery
      const cluster = yield* FakeCluster.FakeCluster
      const fresh = yield* Effect.flip(discovery.resolve("v1", "Gizmo"))
      assert.instanceOf(fresh, ValidationError)
      assert.strictEqual(fresh.subject, "v1 Gizmo")
      assert.deepStrictEqual(discoveryReads(cluster), ["/api/v1"])
      const cached = yield* Effect.flip(discovery.resolve("v1", "Gizmo"))
      assert.include(cached.message, "Gizmo")
      assert.deepStrictEqual(discoveryReads(cluster), ["/api/v1", "/api/v1"])
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
      assert.deepStrictEqual(discoveryReads(cluster), ["/apis/stable.example.com/v1", "/apis/stable.example.com/v1"])
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
      assert.deepStrictEqual(discoveryReads(cluster), ["/api/v1", "/api/v1", "/api/v1"])
      cluster.reset()
      yield* Effect.gen(function*() {
        yield* Manifests.apply(objects)
        yield* Manifests.get(objects)
        yield* Manifests.delete(objects)
      }).pipe(Effect.provide(Discovery.layer))
      assert.deepStrictEqual(discoveryReads(cluster), ["/api/v1"])
    }).pipe(Effect.provide(FakeCluster.layer())))

  it.effect("a failed fetch is not cached: the next call fetches again", () =>
    Effect.gen(function*() {
      const discovery = yield* Discovery.Discovery
      const cluster = yield* FakeCluster.FakeCluster
      cluster.failNext({ status: 500, message: "etcd is down", match: (_method, path) => path === "/api/v1" })
      const error = yield* Effect.flip(discovery.resolve("v1", "Pod"))
      assert.isTrue(ApiError.is(error))
      assert.strictEqual((error as ApiError).code, 500)
      assert.strictEqual((yield* discovery.resolve("v1", "Pod")).plural, "pods")
      assert.deepStrictEqual(discoveryReads(cluster), ["/api/v1", "/api/v1"])
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

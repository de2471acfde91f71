/**
 * Aggregated discovery (`apidiscovery.k8s.io/v2`) against the real kube-apiserver v1.35: `Discovery` reads `/api`
 * and `/apis` once each and nothing per group version, what it finds is what the per-group-version documents say,
 * and the fake's aggregated documents are the server's for the kinds both serve (a CRD's included).
 */
import { assert, it } from "@effect/vitest"
import { Effect, Layer, Schedule } from "effect"
import * as HttpClient from "effect/http/HttpClient"
import { FakeCluster } from "@effect-kube/testing"
import { CustomResourceDefinitions, Discovery, Kube } from "./lib.js"
import { layer, uniqueName } from "./support.js"

const v2 = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"

interface AggregatedResource {
  readonly resource: string
  readonly responseKind: { readonly group: string; readonly version: string; readonly kind: string }
  readonly scope: string
  readonly singularResource: string
  readonly verbs: ReadonlyArray<string>
  readonly shortNames?: ReadonlyArray<string>
  readonly categories?: ReadonlyArray<string>
  readonly subresources?: ReadonlyArray<{ readonly subresource: string; readonly responseKind: object; readonly verbs: ReadonlyArray<string> }>
}
interface AggregatedList {
  readonly kind: string
  readonly apiVersion: string
  readonly items: ReadonlyArray<{
    readonly metadata: { readonly name?: string }
    readonly versions: ReadonlyArray<{ readonly version: string; readonly freshness: string; readonly resources: ReadonlyArray<AggregatedResource> }>
  }>
}

const aggregated = (path: "/api" | "/apis") =>
  Effect.map(Kube.request({ method: "GET", path, accept: v2 }), (json) => json as AggregatedList)

/** The paths of the discovery requests a program sends, recorded below the library. */
const discoveryPaths = <A, E, R>(log: Array<string>, effect: Effect.Effect<A, E, R>) =>
  Effect.updateService(effect, HttpClient.HttpClient, (client) =>
    HttpClient.tapRequest(client, (request) =>
      Effect.sync(() => {
        const path = new URL(request.url).pathname
        if (/^\/apis?(\/[^/]+)?(\/[^/]+)?$/.test(path)) log.push(path)
      })))

const crd = (group: string) => ({
  apiVersion: "apiextensions.k8s.io/v1" as const,
  kind: "CustomResourceDefinition" as const,
  metadata: { name: `widgets.${group}` },
  spec: {
    group,
    scope: "Namespaced" as const,
    names: { plural: "widgets", singular: "widget", kind: "Widget", shortNames: ["wdg"], categories: ["all"] },
    versions: [{
      name: "v1",
      served: true,
      storage: true,
      schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
      subresources: { status: {}, scale: { specReplicasPath: ".spec.replicas", statusReplicasPath: ".status.replicas" } }
    }]
  }
})

it.layer(layer, { excludeTestServices: true, timeout: "90 seconds" })("aggregated discovery", (it) => {
  it.effect("resolve and resources() read /api and /apis once each; they agree with the per-group-version documents", () =>
    Effect.gen(function*() {
      const paths: Array<string> = []
      const { resolved, all } = yield* discoveryPaths(
        paths,
        Effect.gen(function*() {
          const discovery = yield* Discovery.make
          const resolved = yield* Effect.all([
            discovery.resolve("v1", "Pod"),
            discovery.resolve("v1", "Namespace"),
            discovery.resolve("apps/v1", "Deployment"),
            discovery.resolve("batch/v1", "CronJob"),
            discovery.resolve("coordination.k8s.io/v1", "Lease"),
            discovery.resolve("rbac.authorization.k8s.io/v1", "ClusterRole")
          ], { concurrency: "unbounded" })
          return { resolved, all: yield* discovery.resources() }
        })
      )
      assert.deepStrictEqual(resolved.map((r) => `${r.plural} ${r.namespaced}`), [
        "pods true",
        "namespaces false",
        "deployments true",
        "cronjobs true",
        "leases true",
        "clusterroles false"
      ])
      // two for resolve, two afresh for resources(): never a group version's own document
      assert.deepStrictEqual([...paths].sort(), ["/api", "/api", "/apis", "/apis"])
      assert.deepStrictEqual(all.failed, [])
      // every group version's own document lists the same resources, kinds, scopes and verbs
      for (const group of all.groups) {
        for (const version of group.versions) {
          const apiVersion = group.name === "" ? version : `${group.name}/${version}`
          const own = (yield* Kube.request({
            method: "GET",
            path: group.name === "" ? `/api/${version}` : `/apis/${apiVersion}`
          })) as { resources: ReadonlyArray<{ name: string; kind: string; namespaced: boolean; verbs: ReadonlyArray<string> }> }
          const expected = own.resources.filter((r) => !r.name.includes("/"))
            .map((r) => `${r.name} ${r.kind} ${r.namespaced} ${[...r.verbs].sort().join(",")}`).sort()
          const found = all.resources.filter((r) => r.apiVersion === apiVersion)
            .map((r) => `${r.plural} ${r.kind} ${r.namespaced} ${[...r.verbs].sort().join(",")}`).sort()
          assert.deepStrictEqual(found, expected, apiVersion)
          const subresources = own.resources.filter((r) => r.name.includes("/")).map((r) => r.name).sort()
          assert.deepStrictEqual(
            all.resources.filter((r) => r.apiVersion === apiVersion).flatMap((r) => r.subresources.map((s) => `${r.plural}/${s}`)).sort(),
            subresources,
            apiVersion
          )
          assert.strictEqual(
            all.resources.filter((r) => r.apiVersion === apiVersion).every((r) => r.preferred === (group.preferredVersion === version)),
            true
          )
        }
      }
    }), 60_000)

  it.effect("the fake's aggregated documents are the server's, for the built-in kinds both serve and for a CRD", () =>
    Effect.gen(function*() {
      const group = `${uniqueName("agg")}.example.com`
      const crds = Kube.api(CustomResourceDefinitions)
      yield* Effect.acquireRelease(crds.create(crd(group)), () => Effect.ignore(crds.delete(`widgets.${group}`)))
      const realCore = yield* aggregated("/api")
      // a CRD is in the aggregated document a moment after its create
      const realNamed = yield* aggregated("/apis").pipe(
        Effect.filterOrFail((list) => list.items.some((g) => g.metadata.name === group), () => "not yet"),
        Effect.retry({ schedule: Schedule.spaced("200 millis"), times: 50 })
      )
      const fake = FakeCluster.layer()
      const [fakeCore, fakeNamed] = yield* Effect.gen(function*() {
        yield* Kube.api(CustomResourceDefinitions).create(crd(group))
        return [yield* aggregated("/api"), yield* aggregated("/apis")] as const
      }).pipe(Effect.provide(Layer.fresh(fake)))
      assert.strictEqual(fakeCore.apiVersion, realCore.apiVersion)
      assert.strictEqual(fakeNamed.kind, realNamed.kind)
      assert.deepStrictEqual(fakeCore.items[0]!.metadata, realCore.items[0]!.metadata)

      /** A resource as both would show it: the fake serves fewer subresources (exec, attach, proxy, binding). */
      const compare = (apiVersion: string, real: AggregatedResource, ours: AggregatedResource) => {
        const { subresources: realSubs, ...realRest } = real
        const { subresources: ourSubs, ...ourRest } = ours
        assert.deepStrictEqual(ourRest, realRest, `${apiVersion} ${real.resource}`)
        for (const sub of ourSubs ?? []) {
          assert.deepStrictEqual(sub, realSubs?.find((s) => s.subresource === sub.subresource), `${apiVersion} ${real.resource}/${sub.subresource}`)
        }
      }
      const byName = (list: AggregatedList) => new Map(list.items.map((g) => [g.metadata.name ?? "", g]))
      const realGroups = new Map([...byName(realCore), ...byName(realNamed)])
      let compared = 0
      for (const [name, ours] of [...byName(fakeCore), ...byName(fakeNamed)]) {
        const real = realGroups.get(name)
        if (real === undefined) continue // a group the fake serves and this server does not (OpenShift's)
        for (const version of ours.versions) {
          const theirs = real.versions.find((v) => v.version === version.version)
          if (theirs === undefined) continue
          assert.strictEqual(version.freshness, theirs.freshness)
          for (const resource of version.resources) {
            const counterpart = theirs.resources.find((r) => r.resource === resource.resource)
            if (counterpart === undefined) continue
            compare(`${name}/${version.version}`, counterpart, resource)
            compared++
          }
        }
      }
      assert.isAtLeast(compared, 40)
      const widgets = realGroups.get(group)!.versions[0]!.resources[0]!
      compare(group, widgets, byName(fakeNamed).get(group)!.versions[0]!.resources[0]!)
      assert.deepStrictEqual(
        byName(fakeNamed).get(group)!.versions[0]!.resources[0]!.subresources?.map((s) => s.subresource),
        widgets.subresources?.map((s) => s.subresource)
      )
    }), 60_000)
})

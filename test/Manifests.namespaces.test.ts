/**
 * `Manifests.apply` takes a file as `kubectl apply -f` does (issue 41.1): an object's own
 * namespace wins, the default namespace (the kubeconfig's, or `namespace`) fills in the
 * others, a `namespace` given explicitly conflicts, as `--namespace` does, and Namespaces and
 * other cluster-scoped objects go first. test/e2e/manifests-namespaces.test.ts compares the
 * same file with kubectl on a real control plane.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { Kube, Manifests, Namespaces, ValidationError } from "effect-kube"
import { FakeCluster } from "@effect-kube/testing"

/** The file: a Namespace and objects that name it, the Namespace last so that order matters. */
const shopYaml = `
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: shop
data:
  CURRENCY: EUR
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
spec:
  selector: { matchLabels: { app: web } }
  template:
    metadata: { labels: { app: web } }
    spec: { containers: [{ name: web, image: nginx }] }
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: no-namespace
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: shop-reader
rules: [{ apiGroups: [""], resources: [configmaps], verbs: [get] }]
---
apiVersion: v1
kind: Namespace
metadata:
  name: shop
`

const writes = (fake: FakeCluster.Service) =>
  fake.requests().filter((r) => r.method !== "GET").map((r) => `${r.method} ${r.path}`)

const located = (refs: ReadonlyArray<{ readonly kind: string; readonly namespace?: string | undefined; readonly name: string }>) =>
  refs.map((r) => `${r.kind} ${r.namespace ?? "-"}/${r.name}`)

describe("Manifests.apply: namespaces as kubectl apply -f", () => {
  it.effect("applies a file with its own Namespace with default options: Namespace first, each object in its namespace", () =>
    Effect.gen(function*() {
      const fake = yield* FakeCluster.FakeCluster
      const objects = yield* Manifests.parse(shopYaml)
      const applied = yield* Manifests.apply(objects)
      assert.deepStrictEqual(located(applied), [
        "Namespace -/shop",
        "ClusterRole -/shop-reader",
        "ConfigMap shop/settings",
        "Deployment shop/web",
        "ConfigMap default/no-namespace" // no namespace of its own: the kubeconfig's
      ])
      assert.deepStrictEqual(writes(fake).filter((w) => w.startsWith("PATCH")), [
        "PATCH /api/v1/namespaces/shop",
        "PATCH /apis/rbac.authorization.k8s.io/v1/clusterroles/shop-reader",
        "PATCH /api/v1/namespaces/shop/configmaps/settings",
        "PATCH /apis/apps/v1/namespaces/shop/deployments/web",
        "PATCH /api/v1/namespaces/default/configmaps/no-namespace"
      ])
      const live = yield* Manifests.get(applied)
      assert.deepStrictEqual(live.map((o) => o.metadata?.namespace), [undefined, undefined, "shop", "shop", "default"])

      // delete goes the other way: the Namespace last
      const deleted = yield* Manifests.delete(objects)
      assert.deepStrictEqual(located(deleted), [
        "ConfigMap default/no-namespace",
        "Deployment shop/web",
        "ConfigMap shop/settings",
        "ClusterRole -/shop-reader",
        "Namespace -/shop"
      ])
    }).pipe(Effect.provide(FakeCluster.layer())))

  it.effect("a namespace given explicitly fills in the others and conflicts, as --namespace does, before any write", () =>
    Effect.gen(function*() {
      const fake = yield* FakeCluster.FakeCluster
      const objects = yield* Manifests.parse(shopYaml)
      const refused = yield* Effect.flip(Manifests.apply(objects, { namespace: "other" }))
      assert.instanceOf(refused, ValidationError)
      assert.strictEqual(
        refused.message,
        `objects[0] (ConfigMap shop/settings): metadata.namespace is "shop" but the namespace option is "other" ` +
          `(as kubectl refuses with --namespace): pass namespace: "shop", or leave namespace out to apply each ` +
          `object in the namespace it names`
      )
      // refused after discovery (which tells a namespaced kind from a cluster-scoped one), before any write
      assert.deepStrictEqual(writes(fake), [])
      // a cluster-scoped object's namespace does not conflict, as with kubectl's --namespace
      const [ref] = yield* Manifests.apply([
        { apiVersion: "v1", kind: "Namespace", metadata: { name: "team-y", namespace: "default" } }
      ], { namespace: "other" })
      assert.deepStrictEqual(located([ref!]), ["Namespace -/team-y"])

      // the namespace they name, given explicitly: the one without a namespace goes there too
      const applied = yield* Manifests.apply(objects, { namespace: "shop" })
      assert.deepStrictEqual(located(applied).at(-1), "ConfigMap shop/no-namespace")

      // enforceNamespace: false: the option is a default only
      const loose = yield* Manifests.apply(objects, { namespace: "kube-public", enforceNamespace: false })
      assert.deepStrictEqual(located(loose).slice(2), [
        "ConfigMap shop/settings",
        "Deployment shop/web",
        "ConfigMap kube-public/no-namespace"
      ])
    }).pipe(Effect.provide(FakeCluster.layer())))

  it.effect("the strict check is explicit: enforceNamespace: true holds the set to the kubeconfig's namespace", () =>
    Effect.gen(function*() {
      const fake = yield* FakeCluster.FakeCluster
      const objects = yield* Manifests.parse(shopYaml)
      const refused = yield* Effect.flip(Manifests.apply(objects, { enforceNamespace: true }))
      assert.instanceOf(refused, ValidationError)
      assert.include(
        refused.message,
        `metadata.namespace is "shop" but enforceNamespace: true holds the set to the kubeconfig's namespace ` +
          `"default": pass namespace: "shop", or leave enforceNamespace out`
      )
      const noCluster = yield* Effect.flip(Manifests.apply(objects, { clusterScoped: false }))
      assert.include(noCluster.message, "objects[3] (ClusterRole shop-reader): ClusterRole is cluster-scoped and clusterScoped is false")
      assert.deepStrictEqual(writes(fake), [])
    }).pipe(Effect.provide(FakeCluster.layer())))

  it.effect("a cluster-scoped object's metadata.namespace is dropped, as the API server does", () =>
    Effect.gen(function*() {
      const [ref] = yield* Manifests.apply([
        { apiVersion: "v1", kind: "Namespace", metadata: { name: "team-x", namespace: "default" } }
      ])
      assert.deepStrictEqual(located([ref!]), ["Namespace -/team-x"])
      const live = yield* Kube.api(Namespaces).get("team-x")
      assert.isTrue(live._tag === "Some" && live.value.metadata?.namespace === undefined)
    }).pipe(Effect.provide(FakeCluster.layer())))

  it.effect("an ApplySet of such a file records the members' namespaces and prunes there", () =>
    Effect.gen(function*() {
      const fake = yield* FakeCluster.FakeCluster
      const objects = yield* Manifests.parse(shopYaml)
      const options = { applySet: { name: "shop" }, prune: true } as const
      const first = yield* Manifests.apply(objects, options)
      assert.deepStrictEqual(first.created.length, 5)
      const withoutSettings = objects.filter((o) => o.metadata?.name !== "settings")
      const second = yield* Manifests.apply(withoutSettings, options)
      assert.deepStrictEqual(located(second.pruned), ["ConfigMap shop/settings"])
      assert.isUndefined(fake.get({ apiVersion: "v1", kind: "ConfigMap", namespace: "shop", name: "settings" }))
    }).pipe(Effect.provide(FakeCluster.layer())))
})

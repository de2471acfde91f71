/**
 * Manifests.apply with an ApplySet, against the fake cluster: the parent's labels and
 * annotations as kubectl writes them, members labelled, pruning of what the manifests no
 * longer hold (in reverse dependency order, with uid preconditions, never anything outside
 * the set), dry runs that report and change nothing, and the parent checks that refuse
 * another tool's or a tampered set before anything is sent.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as HttpClient from "effect/http/HttpClient"
import * as Layer from "effect/Layer"
import { ApplyFailed, ApplySetError, PruneFailed, ValidationError } from "../packages/effect-kube/src/Errors.js"
import type * as Kube from "../packages/effect-kube/src/Kube.js"
import * as KubeConfig from "../packages/effect-kube/src/KubeConfig.js"
import * as Manifests from "../packages/effect-kube/src/Manifests.js"
import { FakeCluster } from "@effect-kube/testing"
import { failureOf } from "./util/failure.js"
import { configMap, deployment, service, withCluster, writes } from "./util/manifests.js"
import { apiServerOnly } from "./util/apiServerOnly.js"

/** What kubectl 1.32 labels the members of `kubectl apply -n default --prune --applyset=myset` with. */
const kubectlId = "applyset-51uXdjs_k8zt9KVdAtPaWnW_O9B-EVzd2Bkztfa9DSA-v1"

const parentRef = { apiVersion: "v1", kind: "Secret", name: "myset", namespace: "default" }
const setOptions = { namespace: "default", applySet: { name: "myset" } } as const

const names = (refs: ReadonlyArray<{ readonly kind: string; readonly name: string }>) =>
  refs.map((r) => `${r.kind}/${r.name}`)

const crontabCrd = (parentType: boolean, scope: "Namespaced" | "Cluster" = "Namespaced") => ({
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: {
    name: "crontabs.stable.example.com",
    ...(parentType ? { labels: { "applyset.kubernetes.io/is-parent-type": "true" } } : {})
  },
  spec: {
    group: "stable.example.com",
    scope,
    names: { plural: "crontabs", singular: "crontab", kind: "CronTab" },
    versions: [{
      name: "v1",
      served: true,
      storage: true,
      // an undeclared field would be pruned (or refused by server-side apply): the CronTabs' spec is free-form
      schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } }
    }]
  }
})

const crontab = (name: string): Manifests.Manifest => ({
  apiVersion: "stable.example.com/v1",
  kind: "CronTab",
  metadata: { name },
  spec: { cronSpec: "* * * * */5" }
})

describe("Manifests.apply with an ApplySet", () => {
  it.effect("writes the parent as kubectl does, labels every member and reports what it created", () =>
    withCluster((cluster) =>
      Effect.gen(function*() {
        const result = yield* Manifests.apply([configMap("a"), deployment("web")], setOptions)
        assert.strictEqual(result.id, kubectlId)
        assert.strictEqual(
          yield* Manifests.applySetId({ name: "myset", namespace: "default", kind: "Secret", group: "" }),
          kubectlId
        )
        const parent = cluster.get(parentRef)!
        assert.deepStrictEqual(parent.metadata.labels, { "applyset.kubernetes.io/id": kubectlId })
        assert.deepStrictEqual(parent.metadata.annotations, {
          "applyset.kubernetes.io/tooling": "effect-kube/0.2.0",
          "applyset.kubernetes.io/contains-group-kinds": "ConfigMap,Deployment.apps",
          "applyset.kubernetes.io/additional-namespaces": ""
        })
        assert.strictEqual(result.parent.uid, parent.metadata.uid)
        for (const ref of result.applied) {
          assert.strictEqual(cluster.get(ref)!.metadata.labels!["applyset.kubernetes.io/part-of"], kubectlId)
        }
        assert.deepStrictEqual(names(result.created), ["ConfigMap/a", "Deployment/web"])
        assert.deepStrictEqual([result.changed, result.unchanged, result.pruned], [[], [], []])
        // the parent is written before and after nothing else: once (no prune), before the members
        assert.deepStrictEqual(writes(cluster), [
          "PATCH /api/v1/namespaces/default/secrets/myset",
          "PATCH /api/v1/namespaces/default/configmaps/a",
          "PATCH /apis/apps/v1/namespaces/default/deployments/web"
        ])
        const parentPatch = cluster.requests().find((r) => r.path.endsWith("/secrets/myset") && r.method === "PATCH")!
        assert.deepStrictEqual(parentPatch.query, { fieldManager: "effect-kube-applyset", force: "true" })
      })
    ))

  it.effect("tells changed from unchanged objects, and prunes only what the manifests dropped", () =>
    withCluster((cluster) =>
      Effect.gen(function*() {
        yield* Manifests.apply([configMap("a"), configMap("b"), deployment("web")], setOptions)
        // outside the set: same kind, same namespace, no label; and a member of another set
        cluster.seed([
          { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "bystander", namespace: "default" } },
          {
            apiVersion: "v1",
            kind: "ConfigMap",
            metadata: {
              name: "other-set",
              namespace: "default",
              labels: { "applyset.kubernetes.io/part-of": "applyset-someoneelse-v1" }
            }
          }
        ])
        const before = cluster.get({ apiVersion: "v1", kind: "ConfigMap", name: "a", namespace: "default" })!
        const result = yield* Manifests.apply([configMap("a"), configMap("b", { key: "new" })], {
          ...setOptions,
          prune: true
        })
        assert.deepStrictEqual(names(result.unchanged), ["ConfigMap/a"])
        assert.deepStrictEqual(names(result.changed), ["ConfigMap/b"])
        assert.deepStrictEqual(names(result.pruned), ["Deployment/web"])
        const after = cluster.get({ apiVersion: "v1", kind: "ConfigMap", name: "a", namespace: "default" })!
        assert.strictEqual(after.metadata.resourceVersion, before.metadata.resourceVersion)
        assert.isUndefined(cluster.get({ apiVersion: "apps/v1", kind: "Deployment", name: "web", namespace: "default" }))
        assert.isDefined(cluster.get({ apiVersion: "v1", kind: "ConfigMap", name: "bystander", namespace: "default" }))
        assert.isDefined(cluster.get({ apiVersion: "v1", kind: "ConfigMap", name: "other-set", namespace: "default" }))
        // narrowed to the new set once pruning succeeded
        assert.strictEqual(
          cluster.get(parentRef)!.metadata.annotations!["applyset.kubernetes.io/contains-group-kinds"],
          "ConfigMap"
        )
      })
    ))

  it.effect("prunes in reverse dependency order: custom resources, workloads, services, then configuration", () =>
    withCluster((cluster) =>
      Effect.gen(function*() {
        yield* Manifests.apply([configMap("settings"), service("web"), deployment("web"), crontab("nightly")], setOptions)
        cluster.reset()
        const result = yield* Manifests.apply([configMap("other")], { ...setOptions, prune: true })
        assert.deepStrictEqual(
          names(result.pruned),
          ["CronTab/nightly", "Deployment/web", "Service/web", "ConfigMap/settings"]
        )
        assert.deepStrictEqual(writes(cluster).filter((w) => w.startsWith("DELETE")), [
          "DELETE /apis/stable.example.com/v1/namespaces/default/crontabs/nightly",
          "DELETE /apis/apps/v1/namespaces/default/deployments/web",
          "DELETE /api/v1/namespaces/default/services/web",
          "DELETE /api/v1/namespaces/default/configmaps/settings"
        ])
      }), { objects: [crontabCrd(false)] }))

  it.effect("a member replaced after the listing is left alone: the delete carries the listed uid", () =>
    Effect.gen(function*() {
      const server = FakeCluster.makeServer(apiServerOnly)
      const replaced = { apiVersion: "v1", kind: "ConfigMap", name: "b", namespace: "default" }
      let replacement: string | undefined
      // Between the listing and the delete, someone deletes b and creates it anew, labelled as a member.
      const racing: FakeCluster.Server = {
        ...server,
        handle: (request) => {
          if (request.method === "DELETE" && new URL(request.url).pathname.endsWith("/configmaps/b")) {
            server.control.remove(replaced)
            replacement = server.control.seed([{
              apiVersion: "v1",
              kind: "ConfigMap",
              metadata: { name: "b", namespace: "default", labels: { "applyset.kubernetes.io/part-of": kubectlId } }
            }])[0]!.metadata.uid
          }
          return server.handle(request)
        }
      }
      const layer = Layer.merge(
        KubeConfig.layerFrom({ server: "http://fake-cluster.local", namespace: "default" }),
        Layer.succeed(HttpClient.HttpClient, FakeCluster.httpClient(racing))
      )
      const run = <A, E>(effect: Effect.Effect<A, E, Kube.Requirements>) => Effect.provide(effect, layer)
      yield* run(Manifests.apply([configMap("a"), configMap("b")], setOptions))
      const failure = yield* failureOf(run(Manifests.apply([configMap("a")], { ...setOptions, prune: true })))
      assert.instanceOf(failure, PruneFailed)
      const pruneFailed = failure as PruneFailed
      assert.deepStrictEqual(names(pruneFailed.failures.map((f) => f.ref)), ["ConfigMap/b"])
      assert.match(pruneFailed.failures[0]!.error.message, /409 Conflict: .*the UID in the precondition \(.*\) does not match the UID in record/)
      assert.strictEqual(server.control.get(replaced)!.metadata.uid, replacement)
      // the parent keeps listing every kind, for the next apply
      assert.strictEqual(
        server.control.get(parentRef)!.metadata.annotations!["applyset.kubernetes.io/contains-group-kinds"],
        "ConfigMap"
      )
      server.close()
    }))

  it.effect("a dry run reports what would be created, changed and pruned, and changes nothing", () =>
    withCluster((cluster) =>
      Effect.gen(function*() {
        yield* Manifests.apply([configMap("a"), configMap("b"), deployment("web")], setOptions)
        const version = cluster.resourceVersion()
        cluster.reset()
        const result = yield* Manifests.apply(
          [configMap("a"), configMap("b", { key: "new" }), service("web")],
          { ...setOptions, prune: true, dryRun: true }
        )
        assert.deepStrictEqual(names(result.created), ["Service/web"])
        assert.deepStrictEqual(names(result.changed), ["ConfigMap/b"])
        assert.deepStrictEqual(names(result.unchanged), ["ConfigMap/a"])
        assert.deepStrictEqual(names(result.pruned), ["Deployment/web"])
        assert.strictEqual(cluster.resourceVersion(), version)
        // PATCHes say so in the query; the DELETE in its DeleteOptions body (and the store is unchanged)
        for (const request of cluster.requests().filter((r) => r.method === "PATCH")) {
          assert.strictEqual(request.query["dryRun"], "All", `${request.method} ${request.path}`)
        }
        assert.isDefined(cluster.get({ apiVersion: "apps/v1", kind: "Deployment", name: "web", namespace: "default" }))
      })
    ))

  it.effect("a dry run of a new set creates no parent and reports every object as created", () =>
    withCluster((cluster) =>
      Effect.gen(function*() {
        const result = yield* Manifests.apply([configMap("a")], { ...setOptions, prune: true, dryRun: true })
        assert.deepStrictEqual(names(result.created), ["ConfigMap/a"])
        assert.isUndefined(result.parent.uid)
        assert.isUndefined(cluster.get(parentRef))
      })
    ))

  it.effect("refuses another tool's parent, a tampered one and an object that is no parent, before any write", () =>
    withCluster((cluster) =>
      Effect.gen(function*() {
        const id = (labels: Record<string, string>, annotations: Record<string, string>) => ({
          apiVersion: "v1",
          kind: "Secret",
          metadata: { name: "myset", namespace: "default", labels, annotations }
        })
        const cases: ReadonlyArray<readonly [unknown, ApplySetError["reason"], RegExp]> = [
          [
            id({ "applyset.kubernetes.io/id": kubectlId }, {
              "applyset.kubernetes.io/tooling": "kubectl/v1.32.4",
              "applyset.kubernetes.io/contains-group-kinds": "ConfigMap"
            }),
            "ForeignTooling",
            /managed by "kubectl".*applySet\.tooling: "kubectl\/v1\.32\.4"/
          ],
          [
            id({ "applyset.kubernetes.io/id": "applyset-copied-v1" }, {
              "applyset.kubernetes.io/tooling": "effect-kube/0.1.0",
              "applyset.kubernetes.io/contains-group-kinds": "ConfigMap"
            }),
            "WrongId",
            /applyset-copied-v1/
          ],
          [id({}, {}), "NotAParent", /is not an ApplySet parent/],
          [
            id({ "applyset.kubernetes.io/id": kubectlId }, { "applyset.kubernetes.io/tooling": "effect-kube/0.2.0" }),
            "NoKinds",
            /contains-group-kinds/
          ]
        ]
        for (const [parent, reason, message] of cases) {
          cluster.remove(parentRef)
          cluster.seed([parent])
          cluster.reset()
          const error = yield* failureOf(Manifests.apply([configMap("a")], { ...setOptions, prune: true }))
          assert.instanceOf(error, ApplySetError)
          assert.strictEqual((error as ApplySetError).reason, reason)
          assert.match(error.message, message)
          assert.include(error.message, "Secret default/myset")
          assert.deepStrictEqual(writes(cluster), [], reason)
        }
      })
    ))

  it.effect("refuses manifests labelled for another set, the parent as a member, and prune without a set", () =>
    withCluster((cluster) =>
      Effect.gen(function*() {
        const labelled: Manifests.Manifest = {
          ...configMap("a"),
          metadata: { name: "a", labels: { "applyset.kubernetes.io/part-of": "applyset-other-v1" } }
        }
        const other = yield* failureOf(Manifests.apply([labelled], setOptions))
        assert.instanceOf(other, ValidationError)
        assert.match(other.message, /belongs to another ApplySet/)
        const itself = yield* failureOf(Manifests.apply([{ apiVersion: "v1", kind: "Secret", metadata: { name: "myset" } }], setOptions))
        assert.match(itself.message, /the ApplySet's parent itself/)
        const noSet = yield* failureOf(
          Manifests.apply([configMap("a")], { prune: true } as unknown as Manifests.ApplyOptions)
        )
        assert.match(noSet.message, /^prune: needs an applySet/)
        const empty = yield* failureOf(Manifests.apply([], { ...setOptions, prune: true }))
        assert.match(empty.message, /^objects: is empty: an apply with prune needs at least one object/)
        const tooling = yield* failureOf(Manifests.apply([configMap("a")], { applySet: { name: "s", tooling: "kubectl" } }))
        assert.match(tooling.message, /applySet\.tooling: must be <tool>\/<version>/)
        assert.deepStrictEqual(writes(cluster), [])
        // a label with the set's own id is fine (an object read back from the cluster)
        const again = yield* Manifests.apply(
          [{ ...configMap("a"), metadata: { name: "a", labels: { "applyset.kubernetes.io/part-of": kubectlId } } }],
          setOptions
        )
        assert.deepStrictEqual(names(again.created), ["ConfigMap/a"])
      })
    ))

  it.effect("a cluster-scoped member is pruned only with clusterScoped: true", () =>
    withCluster((cluster) =>
      Effect.gen(function*() {
        const role = { apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRole", metadata: { name: "reader" }, rules: [] }
        yield* Manifests.apply([configMap("a"), role], { ...setOptions, clusterScoped: true })
        cluster.reset()
        const refused = yield* failureOf(Manifests.apply([configMap("a")], { ...setOptions, prune: true }))
        assert.instanceOf(refused, ValidationError)
        assert.match(refused.message, /ClusterRole reader is a cluster-scoped member .* clusterScoped: true/)
        assert.deepStrictEqual(writes(cluster), [])
        const result = yield* Manifests.apply([configMap("a")], { ...setOptions, prune: true, clusterScoped: true })
        assert.deepStrictEqual(names(result.pruned), ["ClusterRole/reader"])
      })
    ))

  it.effect("a member owned by another object is not pruned, and the failure says why", () =>
    withCluster((cluster) =>
      Effect.gen(function*() {
        yield* Manifests.apply([configMap("a"), configMap("b")], setOptions)
        cluster.update({ apiVersion: "v1", kind: "ConfigMap", name: "b", namespace: "default" }, {
          metadata: { ownerReferences: [{ apiVersion: "apps/v1", kind: "Deployment", name: "web", uid: "u-1" }] }
        })
        const failure = yield* failureOf(Manifests.apply([configMap("a")], { ...setOptions, prune: true }))
        assert.instanceOf(failure, PruneFailed)
        assert.match(failure.message, /ConfigMap default\/b: .*owned by Deployment web/)
        assert.isDefined(cluster.get({ apiVersion: "v1", kind: "ConfigMap", name: "b", namespace: "default" }))
      })
    ))

  it.effect("an apply that stops half-way prunes nothing and leaves the parent listing old and new kinds", () =>
    withCluster((cluster) =>
      Effect.gen(function*() {
        yield* Manifests.apply([deployment("web")], setOptions)
        cluster.failNext({ status: 500, match: (method, path) => method === "PATCH" && path.endsWith("/services/web") })
        const failure = yield* failureOf(Manifests.apply([configMap("a"), service("web")], { ...setOptions, prune: true }))
        assert.instanceOf(failure, ApplyFailed)
        assert.isDefined(cluster.get({ apiVersion: "apps/v1", kind: "Deployment", name: "web", namespace: "default" }))
        assert.strictEqual(
          cluster.get(parentRef)!.metadata.annotations!["applyset.kubernetes.io/contains-group-kinds"],
          "ConfigMap,Deployment.apps,Service"
        )
        const done = yield* Manifests.apply([configMap("a"), service("web")], { ...setOptions, prune: true })
        assert.deepStrictEqual(names(done.pruned), ["Deployment/web"])
        assert.strictEqual(
          cluster.get(parentRef)!.metadata.annotations!["applyset.kubernetes.io/contains-group-kinds"],
          "ConfigMap,Service"
        )
      })
    ))

  it.effect("a ConfigMap parent in another namespace records the members' namespace as additional", () =>
    withCluster((cluster) =>
      Effect.gen(function*() {
        const options = { namespace: "apps", applySet: { name: "sets", kind: "ConfigMap", namespace: "inventory" } }
        const result = yield* Manifests.apply([configMap("a"), configMap("b")], options)
        const parent = cluster.get({ apiVersion: "v1", kind: "ConfigMap", name: "sets", namespace: "inventory" })!
        assert.strictEqual(parent.metadata.labels!["applyset.kubernetes.io/id"], result.id)
        assert.strictEqual(parent.metadata.annotations!["applyset.kubernetes.io/additional-namespaces"], "apps")
        assert.strictEqual(
          result.id,
          yield* Manifests.applySetId({ name: "sets", namespace: "inventory", kind: "ConfigMap", group: "" })
        )
        const pruned = yield* Manifests.apply([configMap("a")], { ...options, prune: true })
        assert.deepStrictEqual(names(pruned.pruned), ["ConfigMap/b"])
      })
    ))

  it.effect("a custom resource parent must be allowed by its CRD and exist; then it records the set", () =>
    withCluster((cluster) =>
      Effect.gen(function*() {
        const options = {
          namespace: "apps",
          applySet: { name: "shop", kind: "CronTab", apiVersion: "stable.example.com/v1" }
        }
        const notAllowed = yield* failureOf(Manifests.apply([configMap("a")], options))
        assert.strictEqual((notAllowed as ApplySetError).reason, "ParentNotAllowed")
        assert.match(notAllowed.message, /applyset\.kubernetes\.io\/is-parent-type/)
        cluster.remove({ apiVersion: "apiextensions.k8s.io/v1", kind: "CustomResourceDefinition", name: "crontabs.stable.example.com" })
        cluster.seed([crontabCrd(true, "Cluster")])
        const missing = yield* failureOf(Manifests.apply([configMap("a")], options))
        assert.strictEqual((missing as ApplySetError).reason, "ParentNotFound")
        assert.deepStrictEqual(writes(cluster), [])
        // as with kubectl, a custom parent is made by its owner, with the set's id and tooling
        const id = yield* Manifests.applySetId({ name: "shop", kind: "CronTab", group: "stable.example.com" })
        cluster.seed([{ apiVersion: "stable.example.com/v1", kind: "CronTab", metadata: { name: "shop" } }])
        const bare = yield* failureOf(Manifests.apply([configMap("a")], options))
        assert.strictEqual((bare as ApplySetError).reason, "NotAParent")
        cluster.update({ apiVersion: "stable.example.com/v1", kind: "CronTab", name: "shop" }, {
          metadata: {
            labels: { "applyset.kubernetes.io/id": id },
            annotations: {
              "applyset.kubernetes.io/tooling": "effect-kube/0.2.0",
              "applyset.kubernetes.io/contains-group-kinds": ""
            }
          }
        })
        const result = yield* Manifests.apply([configMap("a")], options)
        assert.strictEqual(result.id, id)
        const parent = cluster.get({ apiVersion: "stable.example.com/v1", kind: "CronTab", name: "shop" })!
        assert.deepStrictEqual(parent.metadata.annotations, {
          "applyset.kubernetes.io/tooling": "effect-kube/0.2.0",
          "applyset.kubernetes.io/contains-group-kinds": "ConfigMap",
          "applyset.kubernetes.io/additional-namespaces": "apps"
        })
        const namespaced = yield* failureOf(Manifests.apply([configMap("a")], {
          ...options,
          applySet: { ...options.applySet, namespace: "apps" }
        }))
        assert.match(namespaced.message, /cluster-scoped: a parent of that kind has no namespace/)
      }), { objects: [crontabCrd(false)] }))
})

/**
 * Manifests.diff against the fake cluster: per object create / change (with the changed
 * field paths and a unified YAML diff) / unchanged / prune, Secret values masked, and
 * nothing written but dry runs.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { changedPaths } from "../../../packages/effect-kube/src/internal/manifests/diff.js"
import * as Manifests from "../../../packages/effect-kube/src/Manifests.js"
import { configMap, deployment, secret, secretValue, service, withCluster } from "../../util/manifests.js"

const setOptions = { namespace: "default", applySet: { name: "myset" } } as const

describe("Manifests.diff", () => {
  it.effect("says what would be created, changed (which fields) or left unchanged, and writes nothing", () =>
    withCluster((cluster) =>
      Effect.gen(function*() {
        yield* Manifests.apply([configMap("a"), deployment("web")], { namespace: "default" })
        const version = cluster.resourceVersion()
        cluster.reset()
        const scaled: Manifests.Manifest = {
          ...deployment("web"),
          metadata: { name: "web", labels: { app: "web", "app.kubernetes.io/version": "2" } },
          spec: { ...(deployment("web")["spec"] as object), replicas: 3 }
        }
        const diffs = yield* Manifests.diff([configMap("a"), scaled, service("web")], { namespace: "default" })
        assert.deepStrictEqual(diffs.map((d) => [d.ref.kind, d.action]), [
          ["ConfigMap", "unchanged"],
          ["Deployment", "change"],
          ["Service", "create"]
        ])
        assert.deepStrictEqual(diffs[1]!.paths, ["metadata.labels[\"app.kubernetes.io/version\"]", "spec.replicas"])
        assert.strictEqual(diffs[0]!.diff, "")
        assert.include(
          diffs[1]!.diff,
          "--- live/apps.v1.Deployment.default.web\n+++ merged/apps.v1.Deployment.default.web\n"
        )
        assert.include(diffs[1]!.diff, "\n-  replicas: 1\n+  replicas: 3\n")
        assert.notInclude(diffs[1]!.diff, "resourceVersion")
        assert.notInclude(diffs[1]!.diff, "managedFields")
        assert.match(
          diffs[2]!.diff,
          /^--- live\/v1\.Service\.default\.web\n\+\+\+ merged\/v1\.Service\.default\.web\n@@ -0,0 \+1,\d+ @@\n\+apiVersion: v1\n/
        )
        assert.strictEqual(cluster.resourceVersion(), version)
        for (const request of cluster.requests().filter((r) => r.method === "PATCH")) {
          assert.strictEqual(request.query["dryRun"], "All")
        }
      })
    ))

  it.effect("masks Secret values: a changed value shows as *** (before) / *** (after), and only its key is named", () =>
    withCluster(() =>
      Effect.gen(function*() {
        yield* Manifests.apply([secret("credentials")], { namespace: "default" })
        const changed: Manifests.Manifest = {
          ...secret("credentials"),
          stringData: { password: "another-TOPSECRET", user: "admin-TOPSECRET" }
        }
        const [d] = yield* Manifests.diff([changed], { namespace: "default" })
        assert.strictEqual(d!.action, "change")
        assert.deepStrictEqual(d!.paths, ["data.password", "data.user"])
        assert.include(d!.diff, "-  password: \"*** (before)\"\n+  password: \"*** (after)\"\n+  user: \"***\"\n")
        assert.notInclude(d!.diff, "TOPSECRET")
        assert.notInclude(d!.diff, Buffer.from(secretValue).toString("base64"))
        assert.notInclude(JSON.stringify(d), "TOPSECRET")
      })
    ))

  it.effect("with an ApplySet and prune, lists the members that would be pruned, and the label joins the paths", () =>
    withCluster(() =>
      Effect.gen(function*() {
        yield* Manifests.apply([configMap("a"), deployment("web")], setOptions)
        const diffs = yield* Manifests.diff([configMap("a"), configMap("b")], { ...setOptions, prune: true })
        assert.deepStrictEqual(diffs.map((d) => `${d.action} ${d.ref.kind}/${d.ref.name}`), [
          "unchanged ConfigMap/a",
          "create ConfigMap/b",
          "prune Deployment/web"
        ])
        assert.include(diffs[1]!.diff, "applyset.kubernetes.io/part-of: applyset-")
        assert.match(diffs[2]!.diff, /@@ -1,\d+ \+0,0 @@\n-apiVersion: apps\/v1\n/)
        // without prune, nothing is listed for pruning; an object not yet in the set gains the label
        const adopt = yield* Manifests.diff([configMap("a")], { namespace: "default", applySet: { name: "other" } })
        assert.deepStrictEqual(adopt.map((d) => d.action), ["change"])
        assert.deepStrictEqual(adopt[0]!.paths, ["metadata.labels[\"applyset.kubernetes.io/part-of\"]"])
      })
    ))

  it("changedPaths names added, removed and changed fields, list items by index", () => {
    const before = { spec: { containers: [{ name: "a", image: "x:1" }, { name: "b" }], paused: true }, data: { k: "1" } }
    const after = { spec: { containers: [{ name: "a", image: "x:2" }] }, data: { k: "1", "a.b": "2" } }
    assert.deepStrictEqual(changedPaths(before, after), [
      "data[\"a.b\"]",
      "spec.containers[0].image",
      "spec.containers[1]",
      "spec.paused"
    ])
    assert.deepStrictEqual(changedPaths(before, structuredClone(before)), [])
  })
})

/**
 * ApplySets shared with kubectl 1.32 (`KUBECTL_APPLYSET=true kubectl apply --prune
 * --applyset=...`) against the served fake, both ways: kubectl prunes what we applied and
 * we prune what kubectl applied, with the same id, labels and annotations; each refuses a
 * set the other tool wrote under its own tooling. And `kubectl diff --server-side` is the
 * oracle for which objects Manifests.diff says would change.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { ApplySetError } from "../../packages/effect-kube/src/Errors.js"
import type * as Kube from "../../packages/effect-kube/src/Kube.js"
import * as Manifests from "../../packages/effect-kube/src/Manifests.js"
import * as NodeKube from "../../packages/effect-kube/src/NodeKube.js"
import { FakeCluster } from "@effect-kube/testing"
import { failureOf } from "../util/failure.js"
import { hasKubectl, ok, type Session, session, suiteName } from "../util/kubectl.js"
import { configMap, deployment, service } from "../util/manifests.js"

const suite = suiteName("ApplySets shared with kubectl against FakeCluster.serve")

const kubectlTooling = "kubectl/v1.32.0"

const writeManifests = (kubectl: Session, file: string, objects: ReadonlyArray<Manifests.Manifest>) => {
  const path = Path.join(kubectl.dir, file)
  Fs.writeFileSync(path, objects.map((o) => JSON.stringify(o)).join("\n"))
  return path
}

const exists = (served: FakeCluster.Served, apiVersion: string, kind: string, name: string) =>
  served.control.get({ apiVersion, kind, name, namespace: "default" }) !== undefined

/** The fake served, kubectl bound to it, and our client on the same kubeconfig. */
const setup = Effect.gen(function*() {
  const served = yield* FakeCluster.serve()
  // kubectl's ApplySet support is alpha: on only with this variable
  const kubectl = yield* session(served.kubeconfigPath, "applyset", { KUBECTL_APPLYSET: "true" })
  const ours = <A, E>(effect: Effect.Effect<A, E, Kube.Requirements>) =>
    Effect.provide(effect, NodeKube.layerFromFile({ path: served.kubeconfigPath }).pipe(Layer.orDie))
  return { served, kubectl, ours }
})

describe(suite, () => {
  it.live.skipIf(!hasKubectl)("kubectl prunes what we applied, into the set we recorded", () =>
    Effect.scoped(Effect.gen(function*() {
      const { kubectl, ours, served } = yield* setup
      const result = yield* ours(Manifests.apply([configMap("a"), deployment("web"), service("web")], {
        namespace: "default",
        fieldManager: "kubectl",
        applySet: { name: "myset", tooling: kubectlTooling }
      }))
      const file = writeManifests(kubectl, "set.json", [configMap("a")])
      const out = ok(yield* kubectl.run("apply", "-n", "default", "--server-side", "--prune", "--applyset=myset", "-f", file))
      assert.match(out, /^deployment\.apps\/web pruned$/m)
      assert.match(out, /^service\/web pruned$/m)
      assert.isTrue(exists(served, "v1", "ConfigMap", "a"))
      assert.isFalse(exists(served, "apps/v1", "Deployment", "web"))
      assert.isFalse(exists(served, "v1", "Service", "web"))
      const parent = served.control.get({ apiVersion: "v1", kind: "Secret", name: "myset", namespace: "default" })!
      assert.strictEqual(parent.metadata.labels!["applyset.kubernetes.io/id"], result.id)
      assert.strictEqual(parent.metadata.annotations!["applyset.kubernetes.io/contains-group-kinds"], "ConfigMap")
    })))

  it.live.skipIf(!hasKubectl)("we prune what kubectl applied, and kubectl carries on with the set afterwards", () =>
    Effect.scoped(Effect.gen(function*() {
      const { kubectl, ours, served } = yield* setup
      const file = writeManifests(kubectl, "set.json", [configMap("a"), configMap("b"), deployment("web")])
      ok(yield* kubectl.run("apply", "-n", "default", "--server-side", "--prune", "--applyset=myset", "-f", file))
      const parent = served.control.get({ apiVersion: "v1", kind: "Secret", name: "myset", namespace: "default" })!
      const tooling = parent.metadata.annotations!["applyset.kubernetes.io/tooling"]!
      assert.match(tooling, /^kubectl\//)

      // our default tooling is another tool's: refused, nothing changed
      const refused = yield* failureOf(ours(Manifests.apply([configMap("a")], {
        namespace: "default",
        applySet: { name: "myset" },
        prune: true
      })))
      assert.strictEqual((refused as ApplySetError).reason, "ForeignTooling")
      assert.isTrue(exists(served, "v1", "ConfigMap", "b"))

      const result = yield* ours(Manifests.apply([configMap("a")], {
        namespace: "default",
        fieldManager: "kubectl",
        applySet: { name: "myset", tooling },
        prune: true
      }))
      assert.strictEqual(result.id, parent.metadata.labels!["applyset.kubernetes.io/id"])
      assert.deepStrictEqual(result.pruned.map((r) => `${r.kind}/${r.name}`), ["Deployment/web", "ConfigMap/b"])
      assert.deepStrictEqual(result.unchanged.map((r) => r.name), ["a"])
      assert.isFalse(exists(served, "v1", "ConfigMap", "b"))
      assert.isFalse(exists(served, "apps/v1", "Deployment", "web"))

      // kubectl reads the parent we narrowed, and applies on top of it
      const again = writeManifests(kubectl, "again.json", [configMap("a"), service("web")])
      const out = ok(yield* kubectl.run("apply", "-n", "default", "--server-side", "--prune", "--applyset=myset", "-f", again))
      assert.match(out, /^service\/web serverside-applied$/m)
      assert.strictEqual(
        served.control.get({ apiVersion: "v1", kind: "Secret", name: "myset", namespace: "default" })!.metadata
          .annotations!["applyset.kubernetes.io/contains-group-kinds"],
        "ConfigMap,Service"
      )
    })))

  it.live.skipIf(!hasKubectl)("kubectl refuses a set we wrote under our own tooling", () =>
    Effect.scoped(Effect.gen(function*() {
      const { kubectl, ours, served } = yield* setup
      yield* ours(Manifests.apply([configMap("a"), configMap("b")], { namespace: "default", applySet: { name: "myset" } }))
      const file = writeManifests(kubectl, "set.json", [configMap("a")])
      const run = yield* kubectl.run("apply", "-n", "default", "--server-side", "--prune", "--applyset=myset", "-f", file)
      assert.notStrictEqual(run.code, 0)
      assert.include(run.stderr, "effect-kube")
      assert.isTrue(exists(served, "v1", "ConfigMap", "b"))
    })))

  it.live.skipIf(!hasKubectl)("kubectl diff --server-side agrees on which objects would change", () =>
    Effect.scoped(Effect.gen(function*() {
      const { kubectl, ours } = yield* setup
      yield* ours(Manifests.apply([configMap("a"), configMap("b"), deployment("web")], {
        namespace: "default",
        fieldManager: "kubectl"
      }))
      const next: ReadonlyArray<Manifests.Manifest> = [
        configMap("a"),
        configMap("b", { key: "changed" }),
        { ...deployment("web"), spec: { ...(deployment("web")["spec"] as object), replicas: 2 } },
        service("web")
      ]
      const file = writeManifests(kubectl, "next.json", next)
      const run = yield* kubectl.run("diff", "-n", "default", "--server-side", "--field-manager=kubectl", "-f", file)
      assert.strictEqual(run.code, 1, run.stderr)
      const differing = [...run.stdout.matchAll(/^diff -u -N \S+\/LIVE-\d+\/(\S+) /gm)].map((m) => m[1]!).sort()
      const diffs = yield* ours(Manifests.diff(next, { namespace: "default", fieldManager: "kubectl" }))
      const ourDiffering = diffs
        .filter((d) => d.action !== "unchanged")
        .map((d) => d.diff.match(/^--- live\/(\S+)/)![1]!)
        .sort()
      assert.deepStrictEqual(ourDiffering, differing)
      assert.deepStrictEqual(
        differing,
        ["apps.v1.Deployment.default.web", "v1.ConfigMap.default.b", "v1.Service.default.web"]
      )
      // and where kubectl sees no difference, neither do we
      const same = writeManifests(kubectl, "same.json", [configMap("a")])
      const none = yield* kubectl.run("diff", "-n", "default", "--server-side", "--field-manager=kubectl", "-f", same)
      assert.strictEqual(none.code, 0, none.stdout + none.stderr)
      const [unchanged] = yield* ours(Manifests.diff([configMap("a")], { namespace: "default", fieldManager: "kubectl" }))
      assert.strictEqual(unchanged!.action, "unchanged")
    })))
})

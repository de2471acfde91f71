/**
 * kubectl drain, cordon and uncordon against FakeCluster served on loopback, beside `Drain` on the same fake: the
 * same pods refused for the same reasons, kubectl's drain evicts through the fake's Eviction API and waits, and the
 * fake's scheduler leaves the replacements pending on the cordoned node.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as Drain from "../../packages/effect-kube/src/Drain.js"
import * as KubeConfig from "../../packages/effect-kube/src/KubeConfig.js"
import * as NodeKube from "../../packages/effect-kube/src/NodeKube.js"
import { hasKubectl, ok, serveWithToken, session, suiteName } from "../util/kubectl.js"

const suite = suiteName("kubectl drain against FakeCluster")

describe(suite, () => {
  it.live.skipIf(!hasKubectl)("refuses an unowned pod as Drain.plan does, drains with --force, uncordons", () =>
    Effect.gen(function*() {
      const served = yield* serveWithToken()
      const { run } = yield* session(served.kubeconfigPath, "kubectl-drain")
      const client = NodeKube.layerFromKubeConfig(KubeConfig.layerFromFile({ path: served.kubeconfigPath })).pipe(Layer.orDie)
      ok(yield* run("create", "deployment", "web", "--image=nginx", "--replicas=2"))
      ok(yield* run("run", "lonely", "--image=busybox", "--command", "--", "sleep", "3600"))
      ok(yield* run("rollout", "status", "deployment/web", "--timeout=20s"))
      ok(yield* run("wait", "--for=condition=Ready", "pod/lonely", "--timeout=20s"))

      const refused = yield* run("drain", "fake-node", "--timeout=20s")
      assert.notStrictEqual(refused.code, 0)
      assert.include(refused.stderr, "cannot delete Pods that declare no controller (use --force to override): default/lonely")
      // kubectl cordons before it sorts the pods, so its refusal leaves the node cordoned; Drain refuses first
      assert.include(refused.stdout, "node/fake-node cordoned")
      assert.isTrue(yield* Drain.uncordon("fake-node").pipe(Effect.provide(client)))
      const plan = yield* Drain.plan("fake-node").pipe(Effect.provide(client))
      assert.deepStrictEqual(plan.blocking.map((p) => `${p.namespace}/${p.name}: ${p.reason}`), [
        "default/lonely: declares no controller (use force to override)"
      ])

      const drained = yield* run("drain", "fake-node", "--force", "--grace-period=0", "--timeout=30s")
      assert.strictEqual(drained.code, 0, drained.stderr)
      assert.include(drained.stdout, "node/fake-node cordoned")
      assert.include(drained.stdout, "pod/lonely evicted")
      assert.include(drained.stdout, "node/fake-node drained")
      // what kubectl cordoned, Drain reads as cordoned; the ReplicaSet's replacements wait
      const node = served.control.get({ apiVersion: "v1", kind: "Node", name: "fake-node" }) as { spec?: { unschedulable?: boolean } }
      assert.isTrue(node.spec?.unschedulable)
      const pending = ok(yield* run("get", "pods", "-l", "app=web", "-o", "jsonpath={.items[*].status.phase}"))
      assert.match(pending, /^(Pending ?)+$/)
      assert.isFalse(yield* Drain.cordon("fake-node").pipe(Effect.provide(client)))
      assert.include(ok(yield* run("uncordon", "fake-node")), "node/fake-node uncordoned")
      ok(yield* run("rollout", "status", "deployment/web", "--timeout=20s"))
    }))
})

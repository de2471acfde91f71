/**
 * The e2e cluster itself: the library reaches its apiserver with the admin kubeconfig,
 * its one node is Ready, and a pod runs on it (the node stand-in runs `sh -c 'echo ...'`
 * for real and serves its log), and a piece can be killed and restarted alone.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { Kube, NodeKube, Nodes } from "effect-kube"
import { inject } from "vitest"
import { kubeconfigPath, kubectl, pieces, restartPiece } from "./cluster.js"

describe("e2e cluster", () => {
  it.live("serves /version and lists one Ready node through the library", () =>
    Effect.gen(function*() {
      const version = yield* Kube.request({ method: "GET", path: "/version" })
      assert.isObject(version)
      assert.match(String((version as { gitVersion?: unknown }).gitVersion), /^v1\.35\./)

      const nodes = yield* Kube.api(Nodes).list()
      assert.strictEqual(nodes.items.length, 1)
      const ready = nodes.items[0]?.status?.conditions?.find((c) => c.type === "Ready")
      assert.strictEqual(ready?.status, "True")
    }).pipe(Effect.provide(NodeKube.layerFromFile({ path: kubeconfigPath() }))))

  it("runs a pod to completion and serves its log, through kubectl", async () => {
    const name = `e2e-smoke-${Date.now().toString(36)}`
    await kubectl([
      "run",
      name,
      "--image=busybox:1.36",
      "--restart=Never",
      "--command",
      "--",
      "sh",
      "-c",
      "echo hello from the e2e cluster"
    ])
    try {
      await kubectl(["wait", `pod/${name}`, "--for=jsonpath={.status.phase}=Succeeded", "--timeout=60s"])
      const log = await kubectl(["logs", name])
      assert.strictEqual(log, "hello from the e2e cluster\n")
    } finally {
      await kubectl(["delete", "pod", name, "--wait=false"])
    }
  }, 90_000)

  // an outside cluster (EFFECT_KUBE_E2E_KUBECONFIG) has no pieces of ours to kill
  it.skipIf(inject("clusterControl") === undefined)("restarts etcd and the apiserver alone after a SIGKILL, and serves again", async () => {
    const before = await pieces()
    assert.isTrue(before.apiserver.running && before.etcd.running && before.nodes.running)
    await restartPiece("etcd", "KILL")
    await restartPiece("apiserver", "KILL")
    const after = await pieces()
    assert.notStrictEqual(after.apiserver.pid, before.apiserver.pid)
    assert.notStrictEqual(after.etcd.pid, before.etcd.pid)
    assert.strictEqual(after.nodes.pid, before.nodes.pid)
    assert.include(await kubectl(["get", "nodes", "-o", "name"]), "node/effect-kube-node")
  }, 90_000)
})

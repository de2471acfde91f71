/**
 * The README's demo as a user runs it against a "real" cluster: examples/smoke.ts in
 * its own process, given only a kubeconfig, talking HTTPS with a bearer token to the
 * fake served on loopback.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { execFile } from "node:child_process"
import { promisify } from "node:util"
import { FakeCluster } from "@effect-kube/testing"
import { pki } from "../util/pki.js"

const run = promisify(execFile)

describe("examples/smoke.ts", () => {
  // the served fake's kubelet runs on the Effect Clock: the live one here, as the example waits for Succeeded
  it.live("runs the whole flow over HTTPS against a served cluster given --kubeconfig", () =>
    Effect.gen(function*() {
      const { ca, server } = pki()
      const served = yield* FakeCluster.serve({
        tls: { cert: server.cert, key: server.key, ca: ca.cert },
        token: "smoke-token",
        simulate: true
      })
      const { stdout } = yield* Effect.promise(() =>
        run(process.execPath, ["--import", "tsx", "examples/smoke.ts", "--kubeconfig", served.kubeconfigPath], {
          env: { ...process.env, KUBECONFIG: "" },
          timeout: 60_000
        })
      )
      assert.include(stdout, `against ${served.kubeconfigPath}`)
      assert.match(stdout, /created {2}pod\/effect-kube-smoke \(uid [0-9a-f-]{36}\)/)
      assert.include(stdout, "list     app=smoke: effect-kube-smoke")
      // The simulated pod may finish before the watch opens: then it arrives as ADDED, already Succeeded.
      assert.match(stdout, /watch {4}(ADDED|MODIFIED) phase=Succeeded/)
      assert.include(stdout, "hello from effect-kube")
      assert.include(stdout, "deleted  1 pod(s) with app=smoke")
      assert.include(stdout, "smoke test passed")
      const authorized = served.control.requests().filter((r) => r.path.startsWith("/api/v1/namespaces/default/pods"))
      assert.isAtLeast(authorized.length, 5)
      assert.strictEqual(served.control.list("v1", "Pod", "default").length, 0)
    }), { timeout: 90_000 })
})

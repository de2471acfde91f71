/**
 * examples/operator.ts end to end: its scripted tour on the embedded FakeCluster (as `npm run
 * example:operator` runs it), and the operator against FakeCluster.serve driven by kubectl, as a user
 * would: the CRD derived from the ConfigMirror Schemas applies, its CEL rule refuses a bad mirror with the
 * API server's message, the status subresource carries the conditions, and `kubectl get` prints the
 * printer columns.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber, Layer } from "effect"
import { execFile } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { promisify } from "node:util"
import { ConfigMirrors, operator } from "../../examples/operator.js"
import { NodeKube } from "../../packages/effect-kube/src/index.js"
import { hasKubectl, ok, serveWithToken, session, suiteName } from "../util/kubectl.js"

const run = promisify(execFile)

describe("examples/operator.ts", () => {
  it.effect("the tour on the embedded fake cluster runs through, the CEL rule refusing the bad mirror", () =>
    Effect.gen(function*() {
      const { stdout } = yield* Effect.promise(() =>
        run(process.execPath, ["--import", "tsx", "examples/operator.ts"], { timeout: 90_000 })
      )
      assert.include(stdout, "CRD configmirrors.mirror.example.com installed, derived from the ConfigMirror Schemas")
      assert.include(stdout, "✓ status Ready=True")
      assert.include(
        stdout,
        `✓ ConfigMirror.mirror.example.com "loop" is invalid: spec: Invalid value: a ConfigMap cannot be mirrored into its own namespace`
      )
      assert.include(stdout, "✓ the mirror and its copies are gone")
      // the least-privilege RBAC of the operator's own requests (it ran as its service account)
      const yaml = stdout.slice(stdout.indexOf("the RBAC the operator used"))
      assert.include(yaml, "kind: ClusterRole\n")
      assert.include(yaml, "      - configmirrors/status\n    verbs:\n      - patch\n")
      assert.include(yaml, "      - leases\n    resourceNames:\n      - config-mirror\n    verbs:\n      - get\n      - update\n")
      assert.notInclude(yaml, "customresourcedefinitions", "the tour's own requests (the CRD) are not the operator's")
      assert.match(stdout, /done\s*$/)
    }), { timeout: 120_000 })
})

describe(suiteName("examples/operator.ts with kubectl against FakeCluster.serve"), () => {
  it.live.skipIf(!hasKubectl)("kubectl applies the derived CRD and a mirror; the operator reconciles; get prints the columns", () =>
    Effect.gen(function*() {
      const served = yield* serveWithToken()
      const { dir, run: kubectl } = yield* session(served.kubeconfigPath, "operator")
      const crdFile = Path.join(dir, "crd.json")
      Fs.writeFileSync(crdFile, JSON.stringify(yield* ConfigMirrors.crd()))
      ok(yield* kubectl("apply", "-f", crdFile))
      ok(yield* kubectl("create", "configmap", "settings", "--from-literal=color=blue"))
      ok(yield* kubectl("create", "namespace", "team-a"))
      const running = yield* Effect.forkChild(
        operator("default").pipe(Effect.provide(Layer.fresh(NodeKube.layerFromFile({ path: served.kubeconfigPath }))))
      )
      const mirror = (name: string, targets: ReadonlyArray<string>) => {
        const file = Path.join(dir, `${name}.json`)
        Fs.writeFileSync(file, JSON.stringify({
          apiVersion: "mirror.example.com/v1",
          kind: "ConfigMirror",
          metadata: { name },
          spec: { source: { namespace: "default", name: "settings" }, targetNamespaces: targets }
        }))
        return file
      }
      const refused = yield* kubectl("apply", "-f", mirror("loop", ["default"]))
      assert.notStrictEqual(refused.code, 0)
      assert.include(
        refused.stderr,
        `The ConfigMirror "loop" is invalid: spec: Invalid value: a ConfigMap cannot be mirrored into its own namespace`
      )
      ok(yield* kubectl("apply", "-f", mirror("settings", ["team-a"])))
      const ready = () => {
        const m = served.control.get({ apiVersion: "mirror.example.com/v1", kind: "ConfigMirror", name: "settings" })
        const conditions = (m?.status as { conditions?: ReadonlyArray<{ type: string; status: string }> } | undefined)?.conditions
        return conditions?.some((c) => c.type === "Ready" && c.status === "True") ?? false
      }
      for (let i = 0; i < 200 && !ready(); i++) yield* Effect.sleep("50 millis")
      assert.isTrue(ready(), "the operator set Ready=True through the status subresource")
      assert.deepStrictEqual(
        served.control.get({ apiVersion: "v1", kind: "ConfigMap", name: "settings", namespace: "team-a" })?.data,
        { color: "blue" }
      )
      const table = ok(yield* kubectl("get", "cmir")).split("\n").map((l) => l.trim().split(/\s+/))
      assert.deepStrictEqual(table[0], ["NAME", "SOURCE", "READY", "AGE"])
      assert.deepStrictEqual(table[1]!.slice(0, 3), ["settings", "settings", "True"])
      yield* Fiber.interrupt(running)
    }).pipe(Effect.scoped), { timeout: 120_000 })
})

/**
 * The README's `npm run example:*` scripts as a user runs them: each example in its own
 * process against the embedded fake, which must end as the README says (exit 0, its last
 * line). The fake behaves as a cluster does (namespaces must exist, controllers roll out),
 * so an example that leans on what a cluster would refuse fails here first.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { execFile } from "node:child_process"
import { promisify } from "node:util"

const run = promisify(execFile)

const example = (file: string, args: ReadonlyArray<string> = []) =>
  Effect.promise(() =>
    run(process.execPath, ["--import", "tsx", `examples/${file}`, ...args], {
      env: { ...process.env, KUBECONFIG: "" },
      timeout: 90_000
    })
  )

describe("examples against the embedded fake", () => {
  it.live("deploy.ts: two releases rolled out, the second prunes the Job", () =>
    Effect.gen(function*() {
      const { stdout } = yield* example("deploy.ts")
      assert.include(stdout, "applied: 5 created, 0 changed, 0 unchanged, 0 pruned (none)")
      assert.include(stdout, "Deployment demo/demo: Current (Deployment is available: 2 replica(s))")
      assert.include(stdout, "applied: 0 created, 0 changed, 4 unchanged, 1 pruned (Job demo/demo-migrate)")
      assert.match(stdout, /\ndeployed\n$/)
    }), { timeout: 120_000 })

  it.live("template.ts: processed, applied and deleted in its namespace", () =>
    Effect.gen(function*() {
      const { stdout } = yield* example("template.ts")
      assert.match(stdout, /refused {2}Template templates\/batch-run: parameter TOKEN/)
      assert.match(stdout, /applied {2}Job batch\/nightly-2024-06-01 \(uid [0-9a-f-]{36}\)/)
      assert.include(stdout, "deleted  Secret batch/nightly-2024-06-01-token")
      assert.match(stdout, /\ndone\n$/)
    }), { timeout: 120_000 })

  it.live("apply.ts: a manifest set applied and deleted in reverse order", () =>
    Effect.gen(function*() {
      const { stdout } = yield* example("apply.ts")
      assert.include(stdout, "deleted  ConfigMap default/demo-settings (v1)")
      assert.match(stdout, /\ndone\n$/)
    }), { timeout: 120_000 })

  it.live("apply.ts on a file with its own Namespace: the Namespace first, each object in its namespace", () =>
    Effect.gen(function*() {
      const { stdout } = yield* example("apply.ts", ["examples/manifests/shop.yaml"])
      const applied = stdout.split("\n").filter((line) => line.startsWith("applied"))
      assert.deepStrictEqual(applied.map((line) => line.replace(/ \(.*$/, "")), [
        "applied  Namespace shop",
        "applied  ConfigMap shop/shop-settings",
        "applied  Deployment shop/shop-web"
      ])
      assert.include(stdout, "deleted  Namespace shop (v1)")
      assert.match(stdout, /\ndone\n$/)
    }), { timeout: 120_000 })

  it.live("logs.ts and exec.ts: a followed log ends with its container; exec and port-forward answer", () =>
    Effect.gen(function*() {
      const logs = yield* example("logs.ts")
      assert.include(logs.stdout, "the container ended, so did the stream")
      const exec = yield* example("exec.ts")
      assert.include(exec.stdout, "hello from port 8080 of the fake")
      assert.include(exec.stdout, "exec example passed")
    }), { timeout: 120_000 })
})

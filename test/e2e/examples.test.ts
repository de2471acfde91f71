/**
 * The README's quick start and `npm run example:*` scripts against the real control plane,
 * each in its own process given `--kubeconfig`, as a user runs them against a cluster.
 * `examples/template.ts` renders its Template here (`Template.render`) on a cluster, which
 * does not serve OpenShift's template API; `examples/observability.ts` exports to an
 * in-process OpenTelemetry collector and has no cluster flag, so it runs on the fake only.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { execFile, spawn } from "node:child_process"
import { promisify } from "node:util"
import { kubeconfigPath, kubectl } from "./setup/cluster.js"

const run = promisify(execFile)

const example = (file: string, args: ReadonlyArray<string> = []) =>
  Effect.promise(() =>
    run(process.execPath, ["--import", "tsx", `examples/${file}`, "--kubeconfig", kubeconfigPath(), ...args], {
      timeout: 150_000,
      maxBuffer: 16 << 20
    })
  )

const namespaceFor = (name: string) =>
  Effect.promise(async () => {
    const namespace = `${name}-${Date.now().toString(36)}`
    await kubectl(["create", "namespace", namespace])
    return namespace
  })

describe("examples against the real control plane", () => {
  it.live("npm run demo -- --kubeconfig: the smoke flow ends with its pod deleted", () =>
    Effect.gen(function*() {
      const { stdout } = yield* example("smoke.ts")
      assert.include(stdout, "watch    MODIFIED phase=Succeeded")
      assert.include(stdout, "deleted  1 pod(s) with app=smoke")
      assert.match(stdout, /smoke test passed\n$/)
    }), { timeout: 180_000 })

  it.live("apply.ts: a manifest set applied and deleted in reverse order", () =>
    Effect.gen(function*() {
      const namespace = yield* namespaceFor("apply")
      const { stdout } = yield* example("apply.ts", ["--namespace", namespace])
      assert.include(stdout, `deleted  ConfigMap ${namespace}/demo-settings (v1)`)
      assert.match(stdout, /\ndone\n$/)
    }), { timeout: 180_000 })

  it.live("deploy.ts: the real controllers roll both releases out, the second prunes the Job", () =>
    Effect.gen(function*() {
      const namespace = yield* namespaceFor("deploy")
      const { stdout } = yield* example("deploy.ts", ["--namespace", namespace])
      assert.include(stdout, `Deployment ${namespace}/demo: Current (Deployment is available: 2 replica(s))`)
      assert.include(stdout, `1 pruned (Job ${namespace}/demo-migrate)`)
      assert.match(stdout, /\ndeployed\n$/)
    }), { timeout: 180_000 })

  it.live("template.ts: rendered here, applied and deleted as a set on a cluster without OpenShift's API", () =>
    Effect.gen(function*() {
      const namespace = yield* namespaceFor("batch")
      const { stdout } = yield* example("template.ts", ["--namespace", namespace])
      assert.match(stdout, new RegExp(`applied {2}Job ${namespace}/nightly-2024-06-01 \\(uid [0-9a-f-]{36}\\)`))
      assert.include(stdout, `deleted  Secret ${namespace}/nightly-2024-06-01-token`)
      assert.match(stdout, /\ndone\n$/)
    }), { timeout: 180_000 })

  it.live("exec.ts: exec with stdin, exit codes and a port forward through the apiserver", () =>
    Effect.gen(function*() {
      const { stdout } = yield* example("exec.ts")
      assert.include(stdout, "exec cat stdin -> \"piped through cat\\n\"")
      assert.include(stdout, "exited with code 2")
      assert.include(stdout, "\"HTTP/1.1 200 OK\"")
      assert.match(stdout, /exec example passed\n$/)
    }), { timeout: 180_000 })

  it.live("logs.ts --pod: follows a pod's log until its container ends", () =>
    Effect.gen(function*() {
      const namespace = yield* namespaceFor("logs")
      yield* Effect.promise(() =>
        kubectl([
          "-n",
          namespace,
          "run",
          "counter",
          "--image=busybox",
          "--restart=Never",
          "--",
          "sh",
          "-c",
          "for i in 1 2 3; do echo tick $i; sleep 0.2; done"
        ])
      )
      const { stdout } = yield* example("logs.ts", ["--pod", "counter", "--namespace", namespace])
      assert.deepStrictEqual(stdout.trim().split("\n"), ["counter | tick 1", "counter | tick 2", "counter | tick 3"])
    }), { timeout: 180_000 })

  it.live("operator.ts: installs its CRD, mirrors a ConfigMap, and stops on SIGTERM", () =>
    Effect.gen(function*() {
      const source = yield* namespaceFor("mirror-src")
      const target = yield* namespaceFor("mirror-dst")
      yield* Effect.promise(() => kubectl(["-n", source, "create", "configmap", "settings", "--from-literal=color=blue"]))
      const operator = spawn(process.execPath, ["--import", "tsx", "examples/operator.ts", "--kubeconfig", kubeconfigPath()], {
        stdio: ["ignore", "pipe", "pipe"]
      })
      let output = ""
      operator.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()))
      operator.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()))
      const exited = new Promise<number | null>((resolve) => operator.on("exit", (code) => resolve(code)))
      try {
        yield* Effect.promise(() => until(() => output.includes("running (Ctrl-C to stop)"), 90_000, () => output))
        const mirror = {
          apiVersion: "mirror.example.com/v1",
          kind: "ConfigMirror",
          metadata: { name: `settings-${source}` },
          spec: { source: { namespace: source, name: "settings" }, targetNamespaces: [target] }
        }
        yield* Effect.promise(() => kubectl(["apply", "-f", "-"], { input: JSON.stringify(mirror) }))
        const copy = yield* Effect.promise(() =>
          untilValue(async () => {
            const found = await kubectl(["-n", target, "get", "configmap", "settings", "-o", "json", "--ignore-not-found"])
            return found.trim() === "" ? undefined : JSON.parse(found) as { data?: Record<string, string> }
          }, 60_000)
        )
        assert.deepStrictEqual(copy.data, { color: "blue" })
      } finally {
        operator.kill("SIGTERM")
      }
      const code = yield* Effect.promise(() => exited)
      assert.notStrictEqual(code, null, `the operator did not exit on SIGTERM:\n${output}`)
    }), { timeout: 240_000 })
})

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const until = async (done: () => boolean, ms: number, describe: () => string): Promise<void> => {
  const deadline = Date.now() + ms
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms:\n${describe()}`)
    await sleep(200)
  }
}

const untilValue = async <A>(read: () => Promise<A | undefined>, ms: number): Promise<A> => {
  const deadline = Date.now() + ms
  for (;;) {
    const value = await read()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms`)
    await sleep(500)
  }
}

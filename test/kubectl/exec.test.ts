/**
 * kubectl's exec against the fake served over HTTPS with a token: kubectl speaks the
 * WebSocket channel protocol (v5) by default, so this checks that the fake's exec is
 * the protocol a real client expects: output, stdin byte for byte, exit codes.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { FakeCluster } from "@effect-kube/testing"
import { pki } from "../util/pki.js"
import { hasKubectl, kubectlPath, session } from "../util/kubectl.js"

const suite = hasKubectl
  ? "kubectl exec against FakeCluster.serve"
  : `kubectl exec against FakeCluster.serve (skipped: no working kubectl at ${kubectlPath})`

describe(suite, () => {
  it.effect.skipIf(!hasKubectl)("echo, cat of a binary file byte for byte, and exit codes", () =>
    Effect.gen(function*() {
      const { ca, server } = pki()
      const seen: Array<string> = []
      const served = yield* FakeCluster.serve({
        token: "kubectl-exec-token",
        tls: { cert: server.cert, key: server.key, ca: ca.cert },
        objects: [{
          apiVersion: "v1",
          kind: "Pod",
          metadata: { name: "web", namespace: "default" },
          spec: { containers: [{ name: "main", image: "busybox" }] },
          status: { phase: "Running" }
        }],
        exec: (_pod, _container, command) => {
          seen.push(command.join(" "))
          return undefined
        }
      })
      const { dir, runWithInput: run } = yield* session(served.kubeconfigPath, "kubectl-exec")

      const hi = yield* run(["exec", "web", "--", "echo", "hi"])
      assert.strictEqual(hi.code, 0, hi.stderr)
      assert.strictEqual(hi.stdout, "hi\n")

      const file = Path.join(dir, "input.bin")
      const input = Buffer.alloc(3 * 1024 * 1024 + 17)
      for (let i = 0; i < input.length; i++) input[i] = (i * 7919 + (i >> 11)) & 0xff
      Fs.writeFileSync(file, input)
      const cat = yield* run(["exec", "-i", "web", "--", "cat"], file)
      assert.strictEqual(cat.code, 0, cat.stderr)
      assert.strictEqual(cat.stdoutBytes.length, input.length)
      assert.isTrue(cat.stdoutBytes.equals(input), "byte for byte")

      const exit = yield* run(["exec", "web", "--", "sh", "-c", "exit 42"])
      assert.strictEqual(exit.code, 42)
      assert.include(exit.stderr, "command terminated with exit code 42")

      const missing = yield* run(["exec", "nope", "--", "echo"])
      assert.strictEqual(missing.code, 1)
      assert.include(missing.stderr, `pods "nope" not found`)

      assert.deepStrictEqual(seen, ["echo hi", "cat", "sh -c exit 42"])
    }), 60_000)
})

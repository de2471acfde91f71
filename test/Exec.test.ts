/**
 * exec, attach and port-forward over WebSocket against the fake served on loopback
 * HTTPS with a bearer token (the real `ws` dialer, TLS from the kubeconfig), and against
 * `FakeCluster.layer` (the in-memory dialer).
 */
import { assert, describe, it } from "@effect/vitest"
import { Chunk, Effect, Exit, Fiber, Layer, Option, Stream } from "effect"
import * as Net from "node:net"
import { ApiError } from "../src/Errors.js"
import * as Exec from "../src/Exec.js"
import * as Kube from "../src/Kube.js"
import * as NodeKube from "../src/NodeKube.js"
import { ConfigMaps, Pods } from "../src/resources/index.js"
import * as FakeCluster from "../src/testing/FakeCluster.js"
import { eventually } from "./util/loopback.js"
import { pki } from "./util/pki.js"

const pods = Kube.api(Pods, { namespace: "default" })

const pod = (name: string, containers: ReadonlyArray<string> = ["main"], phase = "Running") => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name, namespace: "default" },
  spec: { containers: containers.map((c) => ({ name: c, image: "busybox", env: [{ name: "GREETING", value: "hi" }] })) },
  status: { phase }
})

const token = "exec-test-token"

const served = (options: FakeCluster.Options = {}) =>
  Effect.gen(function*() {
    const { ca, server } = pki()
    const fake = yield* FakeCluster.serve({
      token,
      tls: { cert: server.cert, key: server.key, ca: ca.cert },
      objects: [pod("web"), pod("two", ["a", "b"]), pod("done", ["main"], "Succeeded"), pod("pending", ["main"], "Pending")],
      ...options
    })
    const layer = NodeKube.layerFromFile({ path: fake.kubeconfigPath }).pipe(Layer.orDie)
    return { fake, layer }
  })

const text = (s: Stream.Stream<Uint8Array, Kube.Error>) => s.pipe(Stream.decodeText(), Stream.mkString)

const bytes = (n: number): Uint8Array => {
  const out = new Uint8Array(n)
  let x = 12345
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) >>> 0
    out[i] = x >>> 24
  }
  return out
}

describe("Exec over loopback HTTPS with a token", () => {
  it.scopedLive("separates stdout and stderr, returns exit codes 0, 1 and 42, agrees on v5", () =>
    Effect.gen(function*() {
      const { layer } = yield* served()
      const run = (command: ReadonlyArray<string>) => Exec.exec(pods, "web", command).pipe(Effect.provide(layer))
      const both = yield* run(["sh", "-c", "echo out; echo err >&2; exit 0"])
      assert.strictEqual(both.stdout, "out\n")
      assert.strictEqual(both.stderr, "err\n")
      assert.strictEqual(both.exitCode, 0)
      assert.strictEqual(both.protocol, "v5.channel.k8s.io")
      assert.strictEqual((yield* run(["false"])).exitCode, 1)
      assert.strictEqual((yield* run(["sh", "-c", "exit 42"])).exitCode, 42)
      const env = yield* run(["env"])
      assert.include(env.stdout, "GREETING=hi\n")
      const failed = yield* Effect.flip(Exec.execOrFail(pods, "web", ["sh", "-c", "echo boom >&2; exit 3"]).pipe(Effect.provide(layer)))
      assert.strictEqual(failed._tag, "ExecFailed")
      if (failed._tag === "ExecFailed") {
        assert.strictEqual(failed.exitCode, 3)
        assert.strictEqual(failed.stderrTail, "boom\n")
        assert.include(failed.message, "exited with code 3: boom")
      }
    }))

  it.scopedLive("sends 10 MB of binary stdin through cat byte for byte, and closing stdin (v5) ends cat", () =>
    Effect.gen(function*() {
      const { layer } = yield* served()
      const input = bytes(10 * 1024 * 1024)
      const result = yield* Exec.exec(pods, "web", ["cat"], { stdin: input }).pipe(Effect.provide(layer))
      assert.strictEqual(result.exitCode, 0)
      assert.strictEqual(result.stdoutBytes.length, input.length)
      assert.isTrue(Buffer.from(result.stdoutBytes).equals(Buffer.from(input)), "byte for byte")
    }), 30_000)
})

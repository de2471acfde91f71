/**
 * exec and attach against FakeCluster.serve over WebSocket (the Kubernetes channel
 * protocol, v5 and v4): with kubectl, unmodified, over HTTPS with a token, and with a
 * plain `ws` client for what kubectl does not show (the protocol agreed, the final
 * Status frame, refusals answered in HTTP).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Stream } from "effect"
import * as Crypto from "node:crypto"
import * as Fs from "node:fs"
import * as Path from "node:path"
import WebSocket from "ws"
import { FakeCluster } from "@effect-kube/testing"
import { pki } from "../util/pki.js"
import { hasKubectl, kubectlPath, session } from "../util/kubectl.js"

const pod = (name: string, containers: ReadonlyArray<string> = ["main"]) => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name },
  spec: {
    containers: containers.map((c) => ({ name: c, image: "busybox:1.36", env: [{ name: "GREETING", value: "hi" }] }))
  }
})

const suite = hasKubectl
  ? "kubectl exec against FakeCluster.serve"
  : `kubectl exec against FakeCluster.serve (skipped: no working kubectl at ${kubectlPath})`

describe(suite, () => {
  it.effect.skipIf(!hasKubectl)(
    "echo, cat of a binary file byte for byte, env, exit codes, a test-supplied command, refusals",
    () =>
      Effect.gen(function*() {
        const { ca, server } = pki()
        const calls: Array<string> = []
        const served = yield* FakeCluster.serve({
          token: "exec-token",
          tls: { cert: server.cert, key: server.key, ca: ca.cert },
          objects: [pod("web"), pod("two", ["a", "b"])],
          exec: (pod, container, command, io) => {
            calls.push(`${pod.metadata.name}/${container}: ${command.join(" ")}`)
            if (command[0] !== "date") return undefined
            return Effect.andThen(
              io.stdout("Mon Jan  1 00:00:00 UTC 2024\n"),
              Effect.as(io.stderr("from date\n"), 0)
            )
          }
        })
        const { dir, runWithInput: run } = yield* session(served.kubeconfigPath, "exec")

        const echo = yield* run(["exec", "web", "--", "echo", "hi"])
        assert.strictEqual(echo.code, 0, echo.stderr)
        assert.strictEqual(echo.stdout, "hi\n")

        // 1 MiB of random bytes through cat: stdin is closed at its end (v5), cat ends
        const input = Path.join(dir, "input.bin")
        const bytes = Crypto.randomBytes(1024 * 1024)
        Fs.writeFileSync(input, bytes)
        const cat = yield* run(["exec", "-i", "web", "--", "cat"], input)
        assert.strictEqual(cat.code, 0, cat.stderr)
        assert.strictEqual(cat.stdoutBytes.length, bytes.length)
        assert.isTrue(cat.stdoutBytes.equals(bytes), "cat returned other bytes")

        const env = yield* run(["exec", "web", "--", "env"])
        assert.include(env.stdout, "GREETING=hi\n")
        assert.include(env.stdout, "HOSTNAME=web\n")

        const three = yield* run(["exec", "web", "--", "sh", "-c", "exit 3"])
        assert.strictEqual(three.code, 3)
        assert.include(three.stderr, "command terminated with exit code 3")
        // the runtime cannot start it: an internal error (through the API server's v5 translator), no exit code
        const missing = yield* run(["exec", "web", "--", "no-such-tool"])
        assert.strictEqual(missing.code, 1)
        assert.match(
          missing.stderr,
          /^error: Internal error occurred: Internal error occurred: error executing command in container: failed to exec in container: failed to start exec "[0-9a-f]{64}": OCI runtime exec failed: exec failed: unable to start container process: exec: "no-such-tool": executable file not found in \$PATH: unknown\n$/
        )

        const date = yield* run(["exec", "two", "-c", "b", "--", "date"])
        assert.strictEqual(date.code, 0, date.stderr)
        assert.strictEqual(date.stdout, "Mon Jan  1 00:00:00 UTC 2024\n")
        assert.include(date.stderr, "from date")
        assert.include(calls, "two/b: date")

        const noPod = yield* run(["exec", "nowhere", "--", "echo"])
        assert.notStrictEqual(noPod.code, 0)
        assert.include(noPod.stderr, `pods "nowhere" not found`)
        const noContainer = yield* run(["exec", "two", "-c", "zzz", "--", "echo"])
        assert.notStrictEqual(noContainer.code, 0)
        assert.include(noContainer.stderr, "container zzz is not valid for pod two")

        const execs = served.control.requests().filter((r) => r.path.endsWith("/exec"))
        assert.isAtLeast(execs.length, 7)
      }),
    120_000
  )
})

// ---------------------------------------------------------------------------
// A plain WebSocket client: the protocol as it is on the wire
// ---------------------------------------------------------------------------

interface Client {
  readonly protocol: string
  readonly frames: ReadonlyArray<{ readonly channel: number; readonly data: Buffer }>
  readonly closeCode: number
}

/** Opens an exec socket, sends `stdin` frames, collects every frame until the close. */
const open = (
  url: string,
  protocols: ReadonlyArray<string>,
  token: string,
  send: ReadonlyArray<Uint8Array> = []
): Promise<Client | { readonly refused: number; readonly body: string }> =>
  new Promise((resolve, reject) => {
    const ws = new WebSocket(url, [...protocols], { headers: { authorization: `Bearer ${token}` } })
    const frames: Array<{ channel: number; data: Buffer }> = []
    ws.on("open", () => {
      for (const f of send) ws.send(f)
    })
    ws.on("message", (raw) => {
      const data = raw as Buffer
      frames.push({ channel: data[0]!, data: data.subarray(1) })
    })
    ws.on("close", (code) => resolve({ protocol: ws.protocol, frames, closeCode: code }))
    ws.on("unexpected-response", (_req, res) => {
      let body = ""
      res.on("data", (c: Buffer) => (body += c.toString()))
      res.on("end", () => resolve({ refused: res.statusCode ?? 0, body }))
    })
    ws.on("error", (e) => reject(e))
  })

const frame = (channel: number, text: string) => Buffer.concat([Buffer.from([channel]), Buffer.from(text)])

describe("exec over a WebSocket client", () => {
  it.effect("v4 only: agreed v4, stdout and stderr apart, a NonZeroExitCode Status with the exit code", () =>
    Effect.gen(function*() {
      const served = yield* FakeCluster.serve({
        token: "t",
        objects: [pod("web")],
        exec: (_pod, _container, _command, io) =>
          Effect.andThen(io.stdout("out\n"), Effect.as(io.stderr("err\n"), 42))
      })
      const ws = served.url.replace(/^http/, "ws")
      const client = yield* Effect.promise(() =>
        open(`${ws}/api/v1/namespaces/default/pods/web/exec?command=anything&stdout=true&stderr=true`, [
          "v4.channel.k8s.io"
        ], "t")
      )
      assert.isTrue("frames" in client)
      const { closeCode, frames, protocol } = client as Client
      assert.strictEqual(protocol, "v4.channel.k8s.io")
      const on = (c: number) => Buffer.concat(frames.filter((f) => f.channel === c).map((f) => f.data)).toString()
      assert.strictEqual(on(1), "out\n")
      assert.strictEqual(on(2), "err\n")
      const status = JSON.parse(on(3))
      assert.strictEqual(status.status, "Failure")
      assert.strictEqual(status.reason, "NonZeroExitCode")
      assert.deepStrictEqual(status.details.causes, [{ reason: "ExitCode", message: "42" }])
      assert.strictEqual(closeCode, 1000)
    }))

  // the API server takes the first offered subprotocol it speaks (the client's order), as kubectl offers v5 first
  it.effect("v5 offered first: agreed v5, stdin closed with the 255 frame ends cat", () =>
    Effect.gen(function*() {
      const served = yield* FakeCluster.serve({ objects: [pod("web")] })
      const ws = served.url.replace(/^http/, "ws")
      const client = yield* Effect.promise(() =>
        open(
          `${ws}/api/v1/namespaces/default/pods/web/exec?command=cat&stdin=true&stdout=true`,
          ["v5.channel.k8s.io", "v4.channel.k8s.io"],
          "",
          [frame(0, "one "), frame(0, "two"), Buffer.from([255, 0])]
        )
      )
      const { frames, protocol } = client as Client
      assert.strictEqual(protocol, "v5.channel.k8s.io")
      const stdout = Buffer.concat(frames.filter((f) => f.channel === 1).map((f) => f.data)).toString()
      assert.strictEqual(stdout, "one two")
      const status = JSON.parse(frames.find((f) => f.channel === 3)!.data.toString())
      assert.strictEqual(status.status, "Success")
    }))

  it.effect("attach: the attach handler sees the container's main command (cat without one) and the tty; the built-in cat copies stdin to stdout", () =>
    Effect.gen(function*() {
      const seen: Array<string> = []
      const served = yield* FakeCluster.serve({
        objects: [pod("web")],
        attach: (_pod, container, command, io) => {
          seen.push(`attach ${container} [${command.join(" ")}] tty=${io.tty}`)
          return undefined
        }
      })
      const ws = served.url.replace(/^http/, "ws")
      const client = yield* Effect.promise(() =>
        open(
          `${ws}/api/v1/namespaces/default/pods/web/attach?stdin=true&stdout=true&tty=true`,
          ["v5.channel.k8s.io"],
          "",
          [frame(0, "typed"), frame(4, JSON.stringify({ Width: 80, Height: 24 })), Buffer.from([255, 0])]
        )
      )
      const { frames } = client as Client
      assert.strictEqual(Buffer.concat(frames.filter((f) => f.channel === 1).map((f) => f.data)).toString(), "typed")
      assert.deepStrictEqual(seen, ["attach main [cat] tty=true"])
    }))

  it.effect("refusals are HTTP answers: a wrong token, a missing pod (Status), no spoken subprotocol (403)", () =>
    Effect.gen(function*() {
      const served = yield* FakeCluster.serve({ token: "right", objects: [pod("web")] })
      const ws = served.url.replace(/^http/, "ws")
      const path = "/api/v1/namespaces/default/pods/web/exec?command=echo"
      const wrongToken = yield* Effect.promise(() => open(`${ws}${path}`, ["v5.channel.k8s.io"], "wrong"))
      assert.deepInclude(wrongToken, { refused: 401 })
      const missing = yield* Effect.promise(() =>
        open(`${ws}/api/v1/namespaces/default/pods/gone/exec?command=echo`, ["v5.channel.k8s.io"], "right")
      )
      assert.deepInclude(missing, { refused: 404 })
      assert.strictEqual(JSON.parse((missing as { body: string }).body).reason, "NotFound")
      // a subprotocol the kubelet does not speak fails its WebSocket handshake: 403, no body
      const old = yield* Effect.promise(() => open(`${ws}${path}&stdout=true`, ["v3.channel.k8s.io"], "right"))
      assert.deepStrictEqual(old, { refused: 403, body: "" })
    }))
})

describe("port-forward over a WebSocket client", () => {
  it.effect("two ports at once: each announces its port, one echoes, one runs the handler and reports its error", () =>
    Effect.gen(function*() {
      const served = yield* FakeCluster.serve({
        objects: [pod("web")],
        portForward: (pod, port, connection) =>
          port !== 9090
            ? Stream.runForEach(connection.read, connection.write)
            : Effect.andThen(
              connection.write(`hello from ${pod.metadata.name}:${port}`),
              Effect.fail(new Error("connection refused by the test"))
            )
      })
      const ws = served.url.replace(/^http/, "ws")
      const frames = yield* Effect.promise(() =>
          new Promise<Array<{ channel: number; data: Buffer }>>((resolve, reject) => {
            const socket = new WebSocket(
              `${ws}/api/v1/namespaces/default/pods/web/portforward?ports=8080&ports=9090`,
              ["v4.channel.k8s.io"]
            )
            const got: Array<{ channel: number; data: Buffer }> = []
            socket.on("open", () => socket.send(frame(0, "ping")))
            socket.on("message", (raw) => {
              const data = raw as Buffer
              got.push({ channel: data[0]!, data: data.subarray(1) })
              const text = (c: number) =>
                Buffer.concat(got.filter((f) => f.channel === c).slice(1).map((f) => f.data)).toString()
              if (text(0) === "ping" && text(3) !== "") socket.close()
            })
            socket.on("close", () => resolve(got))
            socket.on("error", reject)
          })
      )
      const first = (c: number) => frames.find((f) => f.channel === c)!.data
      assert.deepStrictEqual([...first(0)], [0x90, 0x1f])
      assert.deepStrictEqual([...first(1)], [0x90, 0x1f])
      assert.deepStrictEqual([...first(2)], [0x82, 0x23])
      assert.deepStrictEqual([...first(3)], [0x82, 0x23])
      const rest = (c: number) =>
        Buffer.concat(frames.filter((f) => f.channel === c).slice(1).map((f) => f.data)).toString()
      assert.strictEqual(rest(0), "ping")
      assert.strictEqual(rest(1), "")
      assert.strictEqual(rest(2), "hello from web:9090")
      // the message only, as the container runtime reports a failed forward: no stack trace
      assert.match(rest(3), /^error forwarding port 9090 to pod [0-9a-f]{64}, uid : connection refused by the test$/)
    }))

  it.effect("a port outside 1-65535 is refused in HTTP before the upgrade", () =>
    Effect.gen(function*() {
      const served = yield* FakeCluster.serve({ objects: [pod("web")] })
      const ws = served.url.replace(/^http/, "ws")
      const refused = yield* Effect.promise(() =>
        open(`${ws}/api/v1/namespaces/default/pods/web/portforward?ports=70000`, ["v4.channel.k8s.io"], "")
      )
      // the kubelet's own plain-text answer
      assert.deepStrictEqual(refused, {
        refused: 400,
        body: `unable to parse "70000" as a port: strconv.ParseUint: parsing "70000": value out of range`
      })
    }))
})

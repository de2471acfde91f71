/**
 * exec, attach and port-forward over WebSocket against the fake served on loopback
 * HTTPS with a bearer token (the real `ws` dialer, TLS from the kubeconfig), and against
 * `FakeCluster.layer` (the in-memory dialer).
 */
import { assert, describe, it } from "@effect/vitest"
import { Cause, Effect, Exit, Fiber, Layer, Option, Stream } from "effect"
import * as Net from "node:net"
import { ApiError } from "../packages/effect-kube/src/Errors.js"
import * as Exec from "../packages/effect-kube/src/Exec.js"
import * as Kube from "../packages/effect-kube/src/Kube.js"
import * as NodeKube from "../packages/effect-kube/src/NodeKube.js"
import { ConfigMaps, Pods } from "../packages/effect-kube/src/resources/index.js"
import { FakeCluster } from "@effect-kube/testing"
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
  it.live("separates stdout and stderr, returns exit codes 0, 1 and 42, agrees on v5", () =>
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

  it.live("sends 10 MB of binary stdin through cat byte for byte, and closing stdin (v5) ends cat", () =>
    Effect.gen(function*() {
      const { layer } = yield* served()
      const input = bytes(10 * 1024 * 1024)
      const result = yield* Exec.exec(pods, "web", ["cat"], { stdin: input }).pipe(Effect.provide(layer))
      assert.strictEqual(result.exitCode, 0)
      assert.strictEqual(result.stdoutBytes.length, input.length)
      assert.isTrue(Buffer.from(result.stdoutBytes).equals(Buffer.from(input)), "byte for byte")
    }), 30_000)
})

describe("Exec: stdout at the reader's pace", () => {
  it.live("an unread stdout stops the server's writes; reading resumes them, nothing lost", () =>
    Effect.gen(function*() {
      let written = 0
      const total = 400
      const chunk = new Uint8Array(64 * 1024).fill(7)
      const { layer } = yield* served({
        exec: (_pod, _container, command, io) =>
          command[0] === "flood"
            ? Effect.as(Effect.forEach(Array.from({ length: total }), () => Effect.map(io.stdout(chunk), () => written++), { discard: true }), 0)
            : undefined
      })
      const received = yield* Effect.scoped(Effect.gen(function*() {
        const s = yield* Exec.execStream(pods, "web", ["flood"], { stdin: false })
        yield* Effect.sleep("1 second")
        const first = written
        yield* Effect.sleep("500 millis")
        assert.isBelow(written, total, `the server stopped writing (${written} of ${total} written)`)
        assert.strictEqual(written, first, "and does not go on")
        const bytes = yield* Stream.runFold(s.stdout, () => 0, (n, c) => n + c.length)
        assert.strictEqual(yield* s.exit, 0)
        return bytes
      })).pipe(Effect.provide(layer))
      assert.strictEqual(received, total * chunk.length)
    }), 30_000)
})

describe("Exec: fallback, tty, attach, refusals", () => {
  it.live("falls back to v4 against a server that offers only v4", () =>
    Effect.gen(function*() {
      const { layer } = yield* served({ execProtocols: ["v4.channel.k8s.io"] })
      const result = yield* Exec.exec(pods, "web", ["echo", "old", "server"]).pipe(Effect.provide(layer))
      assert.strictEqual(result.protocol, "v4.channel.k8s.io")
      assert.strictEqual(result.stdout, "old server\n")
      assert.strictEqual(result.exitCode, 0)
    }))

  it.live("tty: resizes reach the command, stderr is merged into stdout", () =>
    Effect.gen(function*() {
      const { layer } = yield* served({
        exec: (_pod, _container, command, io) =>
          command[0] === "stty"
            ? io.resizes.pipe(
              Stream.take(2),
              Stream.runForEach((size) => io.stdout(`${size.columns}x${size.rows}\n`)),
              Effect.andThen(io.stderr("done\n")),
              Effect.as(0)
            )
            : undefined
      })
      const out = yield* Effect.scoped(Effect.gen(function*() {
        const tty = yield* Exec.execStream(pods, "web", ["stty"], { tty: true })
        yield* tty.resize(80, 24)
        yield* tty.resize(120, 40)
        const [stdout, stderr, exit] = yield* Effect.all([text(tty.stdout), text(tty.stderr), tty.exit], {
          concurrency: "unbounded"
        })
        return { stdout, stderr, exit }
      })).pipe(Effect.provide(layer))
      // a terminal ends its lines with CRLF, as a pty does
      assert.deepStrictEqual(out, { stdout: "80x24\r\n120x40\r\ndone\r\n", stderr: "", exit: 0 })
      const notTty = yield* Effect.scoped(Effect.flatMap(
        Exec.execStream(pods, "web", ["cat"]),
        (s) => Effect.flip(s.resize(80, 24))
      )).pipe(Effect.provide(layer))
      assert.strictEqual(notTty._tag, "ValidationError")
    }))

  it.live("attach reaches the main process; closing stdin ends it, and the attach ends with a success", () =>
    Effect.gen(function*() {
      const { layer } = yield* served({
        attach: (_pod, container, _command, io) =>
          Effect.andThen(
            io.stdout(`attached to ${container}\n`),
            Effect.as(Stream.runForEach(io.stdin, (chunk) => io.stdout(chunk)), 7)
          )
      })
      const out = yield* Effect.scoped(Effect.gen(function*() {
        const session = yield* Exec.attach(pods, "two", { container: "b" })
        yield* session.write("typed\n")
        yield* session.end
        const [stdout, exit] = yield* Effect.all([text(session.stdout), session.exit], { concurrency: "unbounded" })
        return { stdout, exit }
      })).pipe(Effect.provide(layer))
      // the kubelet reports an attach that ended as a success: the process's exit code is the pod's status
      assert.deepStrictEqual(out, { stdout: "attached to b\ntyped\n", exit: 0 })
    }))

  it.live("every refusal is a typed error, and no error shows the token", () =>
    Effect.gen(function*() {
      const { fake, layer } = yield* served()
      const refusal = (name: string, command: ReadonlyArray<string>, container?: string) =>
        Effect.flip(Exec.exec(pods, name, command, { container })).pipe(Effect.provide(layer))
      const missing = yield* refusal("nope", ["echo"])
      assert.isTrue(ApiError.isNotFound(missing), String(missing))
      const badContainer = yield* refusal("web", ["echo"], "other")
      assert.strictEqual(badContainer._tag === "ApiError" && badContainer.code, 400)
      assert.include(badContainer.message, "container other is not valid for pod web")
      const noContainer = yield* refusal("two", ["echo"])
      assert.include(noContainer.message, "a container name must be specified for pod two, choose one of: [a b]")
      const completed = yield* refusal("done", ["echo"])
      assert.strictEqual(completed._tag === "ApiError" && completed.code, 400)
      const pending = yield* refusal("pending", ["echo"])
      assert.include(pending.message, "is not running")
      fake.control.failNext({ status: 403, message: "exec is not allowed" })
      const forbidden = yield* refusal("web", ["echo"])
      assert.isTrue(ApiError.isForbidden(forbidden), String(forbidden))
      // a connection reset before the upgrade is answered: a transport error, not a hang
      fake.control.resetNext({ match: (_method, path) => path.endsWith("/exec") })
      const reset = yield* refusal("web", ["echo"])
      assert.strictEqual(reset._tag, "HttpClientError", String(reset))
      if (reset._tag === "HttpClientError") assert.strictEqual(reset.reason._tag, "TransportError")
      fake.control.setToken("another-token")
      const unauthorized = yield* refusal("web", ["echo"])
      assert.isTrue(ApiError.isUnauthorized(unauthorized), String(unauthorized))
      fake.control.setToken(token)
      // bad input: no connection is made at all
      const before = fake.control.requests().length
      const invalid = [
        yield* refusal("web", []),
        yield* refusal("web", [""]),
        yield* refusal("web", ["echo"], "Bad_Container"),
        yield* refusal("a/b", ["echo"]),
        yield* Effect.flip(Exec.exec(Kube.api(ConfigMaps), "web", ["echo"])).pipe(Effect.provide(layer)),
        yield* Effect.scoped(Effect.flip(Exec.portForward(pods, "web", [0]))).pipe(Effect.provide(layer)),
        yield* Effect.scoped(Effect.flip(Exec.portForward(pods, "web", [65536]))).pipe(Effect.provide(layer)),
        yield* Effect.scoped(Effect.flip(Exec.portForwardListen(pods, "web", { port: 1.5 }))).pipe(Effect.provide(layer))
      ]
      for (const error of invalid) assert.strictEqual(error._tag, "ValidationError", String(error))
      assert.strictEqual(fake.control.requests().length, before, "no request for bad input")
      for (const error of [missing, badContainer, forbidden, unauthorized, ...invalid]) {
        assert.notInclude(JSON.stringify(error), token)
        assert.notInclude(String(error), token)
      }
    }))
})

describe("Exec: connections end with their scope", () => {
  it.live("interrupting exec, execStream, attach and port-forward closes each socket", () =>
    Effect.gen(function*() {
      const { fake, layer } = yield* served()
      yield* eventually(() => fake.openConnections() === 0)
      const cases: ReadonlyArray<Effect.Effect<unknown, unknown, Kube.Requirements>> = [
        Exec.exec(pods, "web", ["cat"], { stdin: Stream.never }),
        Effect.scoped(Effect.flatMap(Exec.execStream(pods, "web", ["cat"]), (s) => Stream.runDrain(s.stdout))),
        Effect.scoped(Effect.flatMap(Exec.attach(pods, "web"), (s) => s.exit)),
        Effect.scoped(Effect.flatMap(Exec.portForward(pods, "web", [80]), ([p]) => Stream.runDrain(p!.read)))
      ]
      for (const [i, effect] of cases.entries()) {
        const fiber = yield* Effect.forkChild(Effect.provide(effect, layer))
        assert.isTrue(yield* eventually(() => fake.openConnections() === 1), `case ${i}: connection open`)
        yield* Effect.sleep("50 millis")
        assert.isTrue(fiber.pollUnsafe() === undefined, `case ${i}: still running`)
        yield* Fiber.interrupt(fiber)
        assert.isTrue(yield* eventually(() => fake.openConnections() === 0), `case ${i}: socket closed`)
      }
      // interrupted during the handshake: the socket that opens afterwards is closed too
      fake.control.delayNext({ ms: 300 })
      const dialing = yield* Effect.forkChild(Effect.provide(Exec.exec(pods, "web", ["cat"], { stdin: Stream.never }), layer))
      yield* Effect.sleep("100 millis")
      yield* Fiber.interrupt(dialing)
      yield* Effect.sleep("400 millis")
      assert.isTrue(yield* eventually(() => fake.openConnections() === 0), "socket opened after interruption is closed")
    }))

  it.live("a server that drops the connection mid-stream fails with a transport error", () =>
    Effect.gen(function*() {
      const { fake, layer } = yield* served()
      const fiber = yield* Effect.forkChild(
        Effect.scoped(Effect.gen(function*() {
          const s = yield* Exec.execStream(pods, "web", ["cat"])
          yield* s.write("first")
          return yield* Effect.all([Stream.runCollect(s.stdout), s.exit], { concurrency: "unbounded" })
        })).pipe(Effect.provide(layer))
      )
      assert.isTrue(yield* eventually(() => fake.openConnections() === 1))
      yield* Effect.sleep("50 millis")
      yield* Effect.promise(() => fake.close())
      const exit = yield* Fiber.await(fiber)
      assert.isTrue(Exit.isFailure(exit))
      if (Exit.isFailure(exit)) {
        const error = Option.getOrThrow(Cause.findErrorOption(exit.cause))
        assert.strictEqual(error._tag, "HttpClientError")
        if (error._tag === "HttpClientError") assert.strictEqual(error.reason._tag, "TransportError")
        assert.include(error.message, "connection")
        assert.notInclude(JSON.stringify(error), token)
      }
    }))
})

describe("Port-forward", () => {
  it.live("forwards two ports over one connection", () =>
    Effect.gen(function*() {
      const { fake, layer } = yield* served({
        portForward: (_pod, port, connection) =>
          Stream.runForEach(connection.read, (chunk) =>
            connection.write(`${port}:${new TextDecoder().decode(chunk)}`))
      })
      const answers = yield* Effect.scoped(Effect.gen(function*() {
        const [a, b] = yield* Exec.portForward(pods, "web", [80, 8443])
        assert.strictEqual(fake.openConnections(), 1)
        yield* a!.write("hello")
        yield* b!.write("world")
        return yield* Effect.all([
          a!.read.pipe(Stream.decodeText(), Stream.take(1), Stream.mkString),
          b!.read.pipe(Stream.decodeText(), Stream.take(1), Stream.mkString)
        ], { concurrency: "unbounded" })
      })).pipe(Effect.provide(layer))
      assert.deepStrictEqual(answers, ["80:hello", "8443:world"])
    }))

  it.live("a handler's failure reaches that port's read stream as an error", () =>
    Effect.gen(function*() {
      const { layer } = yield* served({ portForward: () => Effect.fail("connection refused") })
      const error = yield* Effect.scoped(Effect.flatMap(
        Exec.portForward(pods, "web", [5432]),
        ([p]) => Effect.flip(Stream.runDrain(p!.read))
      )).pipe(Effect.provide(layer))
      assert.include(String(error), "port 5432")
      assert.include(String(error), "connection refused")
    }))

  it.live("a listener forwards 100 sequential connections and survives a failing one", () =>
    Effect.gen(function*() {
      let calls = 0
      const { fake, layer } = yield* served({
        portForward: (_pod, _port, connection) =>
          ++calls === 50 ? Effect.fail("boom") : Stream.runForEach(connection.read, connection.write)
      })
      const listener = yield* Exec.portForwardListen(pods, "web", { port: 80 }).pipe(Effect.provide(layer))
      assert.strictEqual(listener.address, "127.0.0.1")
      const roundTrip = (i: number) =>
        Effect.callback<string>((resume) => {
          const socket = Net.connect(listener.port, listener.address)
          let got = ""
          socket.on("connect", () => socket.write(`ping ${i}`))
          socket.on("data", (d) => {
            got += d.toString()
            if (got.length >= `ping ${i}`.length) socket.end()
          })
          socket.on("close", () => resume(Effect.succeed(got)))
          socket.on("error", () => undefined)
        })
      for (let i = 0; i < 100; i++) {
        const got = yield* roundTrip(i)
        if (i !== 49) assert.strictEqual(got, `ping ${i}`)
      }
      assert.isTrue(yield* eventually(() => fake.openConnections() === 0), "every forwarded socket closed")
    }), 30_000)
})

describe("Exec against FakeCluster.layer (in memory)", () => {
  it.effect("runs commands, feeds stdin, forwards ports without a socket", () =>
    Effect.gen(function*() {
      const fake = yield* FakeCluster.FakeCluster
      fake.seed([pod("web")])
      const echo = yield* pods.exec("web", ["echo", "hi"])
      // only kinds that serve "exec" get it
      // @ts-expect-error ConfigMaps have no exec subresource
      assert.isUndefined(Kube.api(ConfigMaps).exec)
      assert.deepStrictEqual([echo.stdout, echo.exitCode, echo.protocol], ["hi\n", 0, "v5.channel.k8s.io"])
      const cat = yield* Exec.exec(pods, "web", ["cat"], { stdin: Stream.make("a", "b", "c").pipe(Stream.encodeText) })
      assert.strictEqual(cat.stdout, "abc")
      const custom = yield* Exec.exec(pods, "web", ["whoami"])
      assert.deepStrictEqual([custom.stdout, custom.exitCode], ["root\n", 0])
      const missing = yield* Effect.flip(Exec.exec(pods, "nope", ["echo"]))
      assert.isTrue(ApiError.isNotFound(missing))
      const echoed = yield* Effect.scoped(Effect.gen(function*() {
        const [p] = yield* Exec.portForward(pods, "web", [80])
        yield* p!.write("ping")
        return yield* p!.read.pipe(Stream.decodeText(), Stream.take(1), Stream.mkString)
      }))
      assert.strictEqual(echoed, "ping")
    }).pipe(Effect.provide(FakeCluster.layer({
      exec: (_pod, _container, command, io) => command[0] === "whoami" ? Effect.as(io.stdout("root\n"), 0) : undefined
    }))))
})

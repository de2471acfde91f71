/**
 * exec, a streamed shell, stdin, exit codes and port-forward against a pod.
 *
 *   npm run example:exec                          # the embedded fake cluster
 *   npm run example:exec -- --kubeconfig ~/.kube/config [--context name]
 *
 * Creates pod effect-kube-exec (busybox: a small web server on 8080), waits until it
 * runs, then runs commands in it, forwards a local port to it and deletes it.
 */
import { Console, Effect, Layer, Stream } from "effect"
import * as Net from "node:net"
import { Condition, Exec, Kube, NodeKube, type Pod, Pods } from "effect-kube"
import { FakeCluster } from "@effect-kube/testing"

const flag = (name: string): string | undefined => {
  const at = process.argv.indexOf(name)
  return at === -1 ? undefined : process.argv[at + 1]
}

const kubeconfig = flag("--kubeconfig")
const context = flag("--context")

// The fake's container: the built-in commands, and an HTTP answer on its ports.
const fake = FakeCluster.layer({
  simulate: { podStartMs: 20, completePods: false },
  portForward: (_pod, port, connection) =>
    Stream.runHead(connection.read).pipe(
      Effect.andThen(connection.write(`HTTP/1.0 200 OK\r\n\r\nhello from port ${port} of the fake\n`))
    )
})

const cluster: Layer.Layer<Kube.Requirements, unknown> = kubeconfig !== undefined
  ? NodeKube.layerFromFile({ path: kubeconfig, context })
  : fake

const pod: Pod = {
  metadata: { name: "effect-kube-exec", labels: { app: "effect-kube-exec" } },
  spec: {
    containers: [{
      name: "main",
      image: "busybox:1.36",
      command: ["sh", "-c", "mkdir -p /www && echo hello from busybox > /www/index.html && httpd -f -p 8080 -h /www"],
      env: [{ name: "GREETING", value: "hi" }]
    }]
  }
}

const pods = Kube.api(Pods)

/** One HTTP/1.0 request through the local end of a port-forward. */
const httpGet = (port: number) =>
  Effect.callback<string, Error>((resume) => {
    const socket = Net.connect(port, "127.0.0.1", () => socket.write("GET / HTTP/1.0\r\n\r\n"))
    let answer = ""
    socket.on("data", (d) => (answer += d.toString()))
    socket.on("close", () => resume(Effect.succeed(answer)))
    socket.on("error", (e) => resume(Effect.fail(e)))
  })

const program = Effect.gen(function*() {
  yield* Console.log(`effect-kube exec example against ${kubeconfig ?? "the embedded fake cluster"}`)
  yield* pods.create(pod)
  yield* pods.waitFor("effect-kube-exec", Condition.podRunning, { timeout: "2 minutes" })

  const echo = yield* pods.exec("effect-kube-exec", ["echo", "hello", "world"])
  yield* Console.log(`exec echo      -> ${JSON.stringify(echo.stdout)} exit ${echo.exitCode} (${echo.protocol})`)

  const both = yield* pods.exec("effect-kube-exec", ["sh", "-c", "echo out; echo err >&2; exit 3"])
  yield* Console.log(`exec sh        -> stdout ${JSON.stringify(both.stdout)} stderr ${JSON.stringify(both.stderr)} exit ${both.exitCode}`)

  const copy = yield* pods.exec("effect-kube-exec", ["cat"], { stdin: "piped through cat\n" })
  yield* Console.log(`exec cat stdin -> ${JSON.stringify(copy.stdout)}`)

  const failed = yield* Effect.flip(pods.execOrFail("effect-kube-exec", ["sh", "-c", "echo no such thing >&2; exit 2"]))
  yield* Console.log(`execOrFail     -> ${failed._tag}: ${failed.message}`)

  const streamed = yield* Effect.scoped(Effect.gen(function*() {
    const shell = yield* pods.execStream("effect-kube-exec", ["cat"])
    yield* shell.write("line 1\n")
    yield* shell.write("line 2\n")
    yield* shell.end
    const lines = yield* shell.stdout.pipe(Stream.decodeText(), Stream.splitLines, Stream.runCollect)
    return { lines: [...lines], exit: yield* shell.exit }
  }))
  yield* Console.log(`execStream cat -> ${JSON.stringify(streamed.lines)} exit ${streamed.exit}`)

  const answer = yield* Effect.scoped(Effect.gen(function*() {
    const listener = yield* pods.portForwardListen("effect-kube-exec", { port: 8080 })
    yield* Console.log(`port-forward   -> listening on ${listener.address}:${listener.port}`)
    return yield* httpGet(listener.port)
  }))
  yield* Console.log(`port-forward   -> ${JSON.stringify(answer.split("\r\n")[0])} ${JSON.stringify(answer.split("\r\n\r\n")[1] ?? "")}`)
}).pipe(Effect.ensuring(Effect.ignore(pods.delete("effect-kube-exec", { gracePeriodSeconds: 0 }))))

Effect.runPromise(program.pipe(Effect.provide(cluster))).then(
  () => console.log("exec example passed"),
  (error) => {
    console.error(`exec example failed: ${error instanceof Error ? error.message : String(error)}`)
    process.exit(1)
  }
)

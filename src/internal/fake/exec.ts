/**
 * `exec`, `attach` and `portforward` over WebSocket, as the API server relays them from the kubelet:
 * the Kubernetes channel protocol (`v5.channel.k8s.io`, else `v4.channel.k8s.io`),
 * where each binary message starts with its channel (0 stdin, 1 stdout, 2 stderr,
 * 3 the final Status, 4 terminal resize, 255 close a channel, v5 only). The command
 * runs in a test-supplied handler or in the built-ins (`echo`, `cat`, `env`, `true`,
 * `false`, `exit N`, `sh -c "<one of those>"`). A port-forward gives each port a data
 * and an error channel, served by a test-supplied handler or an echo.
 *
 * Transport-free like the rest of the fake: `resolve` checks an upgrade request and
 * `run` drives an accepted socket; `node.ts` does the WebSocket handshake (with `ws`).
 *
 * @internal
 */
import { firstValues, type RawRequest, type RawResponse, statusResponse } from "./http.js"
import { isObject, type JsonObject } from "./json.js"
import type { FakeState } from "./state.js"
import * as Status from "./status.js"
import { keyOf } from "./store.js"
import { containerNames } from "./subresources.js"
import type { ExecCall, ExecHandler, PortForwardCall, PortForwardHandler } from "./types.js"

/** The subprotocols served, preferred first. @internal */
export const protocols = ["v5.channel.k8s.io", "v4.channel.k8s.io"] as const

/** An accepted exec, attach or port-forward, before the handshake. @internal */
export interface Target {
  readonly kind: "exec" | "attach" | "portforward"
  readonly namespace: string
  readonly pod: string
  readonly container: string
  readonly command: ReadonlyArray<string>
  readonly stdin: boolean
  readonly tty: boolean
  readonly env: Readonly<Record<string, string>>
  /** The ports of a port-forward. */
  readonly ports: ReadonlyArray<number>
  /** The subprotocol agreed. */
  readonly protocol: string
}

const streamPath = /^\/api\/v1\/namespaces\/([^/]+)\/pods\/([^/]+)\/(exec|attach|portforward)$/

/** Whether a request path is one `resolve` answers. @internal */
export const isStreamPath = (path: string): boolean => streamPath.test(path)

const isTrue = (v: string | null): boolean => v === "true" || v === "1"

/**
 * Checks an upgrade request as the API server would (token, pod, container, command,
 * subprotocol): the target to serve, or the HTTP answer that refuses it.
 *
 * @internal
 */
export const resolve = (state: FakeState, request: RawRequest): Target | RawResponse => {
  const url = new URL(request.url, "http://fake")
  const method = request.method.toUpperCase()
  state.record({
    method,
    path: url.pathname,
    query: firstValues(url.searchParams),
    contentType: request.header("content-type"),
    userAgent: request.header("user-agent")
  })
  if (state.token !== undefined && request.header("authorization") !== `Bearer ${state.token}`) {
    return statusResponse(Status.unauthorized())
  }
  const match = streamPath.exec(url.pathname)
  if (match === null) return statusResponse(Status.pathNotFound())
  const [, namespace, pod, kind] = match as unknown as [string, string, string, Target["kind"]]
  const podKind = state.registry.byResource("", "v1", "pods")!
  const entry = state.collectionOf(podKind).entries.get(keyOf(namespace, pod))
  if (entry === undefined) return statusResponse(Status.notFound(podKind, pod))
  const ports = url.searchParams.getAll("ports").flatMap((p) => p.split(",")).map((p) => p.trim())
  if (kind === "portforward") {
    if (ports.length === 0) return statusResponse(Status.badRequest("at least 1 port must be specified"))
    const bad = ports.find((p) => !/^\d+$/.test(p) || Number(p) < 1 || Number(p) > 65535)
    if (bad !== undefined) return statusResponse(Status.badRequest(`invalid port "${bad}": must be 1-65535`))
  }
  const names = containerNames(entry.obj)
  let container = url.searchParams.get("container") ?? ""
  // a port-forward reaches the pod, not a container
  if (kind !== "portforward" && container === "") {
    if (names.length > 1) {
      return statusResponse(
        Status.badRequest(`a container name must be specified for pod ${pod}, choose one of: [${names.join(" ")}]`)
      )
    }
    container = names[0] ?? ""
  } else if (kind !== "portforward" && !names.includes(container)) {
    return statusResponse(Status.badRequest(`container ${container} is not valid for pod ${pod}`))
  }
  const command = url.searchParams.getAll("command")
  if (kind === "exec" && command.length === 0) {
    return statusResponse(Status.badRequest("you must specify at least 1 command"))
  }
  const offered = (request.header("sec-websocket-protocol") ?? "").split(",").map((p) => p.trim())
  const protocol = protocols.find((p) => offered.includes(p))
  if (protocol === undefined) {
    return statusResponse(
      Status.badRequest(`unable to upgrade: the subprotocols offered (${offered.join(", ")}) are not served`)
    )
  }
  return {
    kind,
    namespace,
    pod,
    container,
    command,
    stdin: isTrue(url.searchParams.get("stdin")),
    tty: isTrue(url.searchParams.get("tty")),
    env: envOf(entry.obj, container, pod),
    ports: ports.map(Number),
    protocol
  }
}

const envOf = (pod: JsonObject, container: string, name: string): Record<string, string> => {
  const spec = isObject(pod.spec) ? pod.spec : {}
  const containers = Array.isArray(spec.containers) ? spec.containers : []
  const c = containers.find((x): x is JsonObject => isObject(x) && x.name === container)
  const env: Record<string, string> = { HOSTNAME: name }
  for (const v of Array.isArray(c?.env) ? c.env : []) {
    if (isObject(v) && typeof v.name === "string" && typeof v.value === "string") env[v.name] = v.value
  }
  return env
}

/** The part of a `ws` WebSocket the fake uses. @internal */
export interface Socket {
  readonly readyState: number
  send(data: Uint8Array): void
  close(code?: number, reason?: string): void
  on(event: "message", listener: (data: Uint8Array | ReadonlyArray<Uint8Array> | ArrayBuffer) => void): void
  on(event: "close", listener: () => void): void
  on(event: "error", listener: (error: Error) => void): void
}

/** Bytes arriving on stdin, read as an async iterable until the end. */
class Inbox implements AsyncIterable<Uint8Array> {
  private readonly chunks: Array<Uint8Array> = []
  private waiting: (() => void) | undefined
  private ended = false

  push(chunk: Uint8Array): void {
    if (this.ended || chunk.length === 0) return
    this.chunks.push(chunk)
    this.wake()
  }

  end(): void {
    this.ended = true
    this.wake()
  }

  private wake(): void {
    const w = this.waiting
    this.waiting = undefined
    w?.()
  }

  async *[Symbol.asyncIterator](): AsyncIterator<Uint8Array> {
    while (true) {
      const chunk = this.chunks.shift()
      if (chunk !== undefined) {
        yield chunk
        continue
      }
      if (this.ended) return
      await new Promise<void>((resolve) => (this.waiting = resolve))
    }
  }
}

const encoder = new TextEncoder()

const frame = (channel: number, chunk: string | Uint8Array): Uint8Array => {
  const data = typeof chunk === "string" ? encoder.encode(chunk) : chunk
  const out = new Uint8Array(data.length + 1)
  out[0] = channel
  out.set(data, 1)
  return out
}

const OPEN = 1

const bytesOf = (raw: Uint8Array | ReadonlyArray<Uint8Array> | ArrayBuffer): Uint8Array =>
  raw instanceof ArrayBuffer ? new Uint8Array(raw) : raw instanceof Uint8Array ? raw : Buffer.concat(raw)

/**
 * Serves one accepted exec or attach on its socket: stdin in, stdout and stderr out,
 * then the final Status on channel 3 (Success, or Failure with reason
 * `NonZeroExitCode` and the exit code in its causes) and a normal close.
 *
 * @internal
 */
export const run = (
  socket: Socket,
  target: Target,
  handler: ExecHandler | undefined,
  forward: PortForwardHandler | undefined
): void => {
  if (target.kind === "portforward") return runPortForward(socket, target, forward)
  const v5 = target.protocol === "v5.channel.k8s.io"
  const stdin = new Inbox()
  if (!target.stdin) stdin.end()
  const abort = new AbortController()
  socket.on("message", (raw) => {
    const data = bytesOf(raw)
    if (data.length === 0) return
    const channel = data[0]
    if (channel === 0) stdin.push(data.slice(1))
    else if (channel === 255 && v5 && data[1] === 0) stdin.end()
    // channel 4 (resize) is accepted and ignored: the fake has no terminal
  })
  socket.on("close", () => {
    stdin.end()
    abort.abort()
  })
  socket.on("error", () => {
    stdin.end()
    abort.abort()
  })
  const send = (channel: number, chunk: string | Uint8Array) => {
    if (socket.readyState === OPEN && !abort.signal.aborted) socket.send(frame(channel, chunk))
  }
  const call: ExecCall = {
    kind: target.kind === "attach" ? "attach" : "exec",
    namespace: target.namespace,
    pod: target.pod,
    container: target.container,
    command: target.kind === "attach" ? [] : target.command,
    tty: target.tty,
    env: target.env,
    stdin,
    stdout: (chunk) => send(1, chunk),
    stderr: (chunk) => send(2, chunk),
    signal: abort.signal
  }
  const finish = (status: JsonObject) => {
    send(3, JSON.stringify(status))
    if (socket.readyState === OPEN) socket.close(1000)
  }
  Promise.resolve()
    .then(() => handler?.(call))
    .then((code) => (code === undefined ? builtin(call) : code))
    .then(
      (code) => finish(exitStatus(target, code)),
      (error: unknown) =>
        finish({
          metadata: {},
          status: "Failure",
          message: error instanceof Error ? error.message : String(error),
          reason: "InternalError",
          code: 500
        })
    )
}

const exitStatus = (target: Target, code: number): JsonObject =>
  code === 0
    ? { metadata: {}, status: "Success" }
    : {
      metadata: {},
      status: "Failure",
      message: `command terminated with non-zero exit code: error executing command [${
        target.command.join(" ")
      }], exit code ${code}`,
      reason: "NonZeroExitCode",
      details: { causes: [{ reason: "ExitCode", message: String(code) }] }
    }

const unquote = (word: string): string => word.replace(/^(["'])(.*)\1$/, "$2")

/** The built-in commands; `attach` copies stdin to stdout, like a shell reading its input. */
const builtin = async (call: ExecCall): Promise<number> => {
  let argv = call.command
  if (argv.length === 0) {
    for await (const chunk of call.stdin) call.stdout(chunk)
    return 0
  }
  const shell = argv[0]!.split("/").pop()
  if ((shell === "sh" || shell === "bash") && argv[1] === "-c" && argv[2] !== undefined) {
    argv = argv[2].trim().split(/\s+/).map(unquote)
  }
  const [program = "", ...args] = argv
  switch (program.split("/").pop()) {
    case "echo":
      call.stdout(`${args.join(" ")}\n`)
      return 0
    case "cat":
      for await (const chunk of call.stdin) call.stdout(chunk)
      return 0
    case "env":
      for (const [k, v] of Object.entries(call.env)) call.stdout(`${k}=${v}\n`)
      return 0
    case "true":
      return 0
    case "false":
      return 1
    case "exit": {
      const code = Number(args[0] ?? "0")
      return Number.isInteger(code) && code >= 0 ? code % 256 : 2
    }
    default:
      call.stderr(`exec: "${program}": executable file not found in $PATH\n`)
      return 127
  }
}

/**
 * Serves a port-forward: for the i-th port, channel 2i carries data and 2i+1 errors;
 * the first frame the server sends on each carries the port (two bytes, little endian).
 * Each port runs the handler, or echoes. The socket closes when every port is done or
 * the client goes away.
 */
const runPortForward = (socket: Socket, target: Target, forward: PortForwardHandler | undefined): void => {
  const abort = new AbortController()
  const inputs = target.ports.map(() => new Inbox())
  const end = () => {
    for (const input of inputs) input.end()
    abort.abort()
  }
  socket.on("close", end)
  socket.on("error", end)
  socket.on("message", (raw) => {
    const data = bytesOf(raw)
    const channel = data[0]
    if (channel === undefined || channel % 2 !== 0) return
    inputs[channel / 2]?.push(data.slice(1))
  })
  const send = (channel: number, chunk: string | Uint8Array) => {
    if (socket.readyState === OPEN && !abort.signal.aborted) socket.send(frame(channel, chunk))
  }
  const done = target.ports.map((port, i) => {
    const portBytes = new Uint8Array([port & 0xff, port >> 8])
    send(2 * i, portBytes)
    send(2 * i + 1, portBytes)
    const call: PortForwardCall = {
      namespace: target.namespace,
      pod: target.pod,
      port,
      input: inputs[i]!,
      write: (chunk) => send(2 * i, chunk),
      signal: abort.signal
    }
    return Promise.resolve()
      .then(() => forward?.(call) ?? echo(call))
      .catch((error: unknown) => send(2 * i + 1, error instanceof Error ? error.message : String(error)))
  })
  Promise.all(done).then(() => {
    if (socket.readyState === OPEN) socket.close(1000)
  })
}

const echo = async (call: PortForwardCall): Promise<void> => {
  for await (const chunk of call.input) call.write(chunk)
}

/**
 * The fake's side of exec, attach and port-forward: the API server's checks before the
 * upgrade (auth, pod, container, phase, command, ports: refused as HTTP with a Status
 * body), subprotocol agreement (v5 or v4 channel protocol), and the sessions that run a
 * test-supplied behaviour (or the built-in commands) over the channels. Transport-free:
 * `node.ts` attaches sessions to `ws` connections; `inMemoryDialer` connects clients of
 * `FakeCluster.layer` to them without a socket.
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"
import type * as Http from "node:http"
import type * as Net from "node:net"
import { WebSocketServer } from "ws"
import type { Dialer, DialFailure, Handlers, Socket } from "../exec/dialer.js"
import * as Protocol from "../exec/protocol.js"
import { firstValues } from "./http.js"
import type { FakeState } from "./state.js"
import * as Status from "./status.js"
import { keyOf } from "./store.js"
import type { ExecIo, FakeObject, Options, PortConnection, PortForwardHandler } from "./types.js"

/**
 * What exec needs of the fake server: its check of an upgrade request. Declared here, so
 * that server.ts (which imports this module) is not imported back.
 */
interface Upgrader {
  readonly upgrade: (
    request: { readonly url: string; readonly header: (name: string) => string | undefined }
  ) => Promise<Decision>
}

/** The far end of one connection. @internal */
export interface Peer {
  readonly send: (data: Uint8Array) => Promise<void>
  readonly close: () => void
}

/** What the transport feeds a session. @internal */
export interface Session {
  readonly receive: (data: Uint8Array) => void
  readonly closed: () => void
}

/** @internal */
export type Decision =
  | { readonly _tag: "Refuse"; readonly status: number; readonly body: string }
  | { readonly _tag: "Accept"; readonly protocol: string; readonly start: (peer: Peer) => Session }
  /** An injected fault: the connection is cut (`resetNext`) or never answered (`stallNext`). */
  | { readonly _tag: "Reset" }
  | { readonly _tag: "Stall" }

const encoder = new TextEncoder()
const decoder = new TextDecoder()
const bytes = (data: Uint8Array | string): Uint8Array => (typeof data === "string" ? encoder.encode(data) : data)

const refuse = (error: Status.StatusError): Decision => ({
  _tag: "Refuse",
  status: error.code,
  body: JSON.stringify(error.body())
})

const streamPath = /^\/api\/v1\/namespaces\/([^/]+)\/pods\/([^/]+)\/(exec|attach|portforward)$/

type JsonObject = Record<string, unknown>
const isObject = (u: unknown): u is JsonObject => typeof u === "object" && u !== null && !Array.isArray(u)

interface ContainerSpec {
  readonly name: string
  readonly command: ReadonlyArray<string>
  readonly env: Record<string, string>
}

const containersOf = (pod: FakeObject): ReadonlyArray<ContainerSpec> => {
  const spec = isObject(pod.spec) ? pod.spec : {}
  const all = [spec.containers, spec.initContainers, spec.ephemeralContainers].flatMap((list) =>
    Array.isArray(list) ? list.filter(isObject) : []
  )
  return all.map((c) => {
    const env: Record<string, string> = {}
    for (const e of Array.isArray(c.env) ? c.env.filter(isObject) : []) {
      if (typeof e.name === "string" && typeof e.value === "string") env[e.name] = e.value
    }
    const words = (u: unknown) => (Array.isArray(u) ? u.filter((w): w is string => typeof w === "string") : [])
    return { name: String(c.name), command: [...words(c.command), ...words(c.args)], env }
  })
}

/**
 * Decides on an upgrade request as the API server does before it upgrades: the path,
 * the token and the pod (by reading it through the fake's own request path, so 401 and
 * 404 answer exactly as a GET would), the container, the phase, the command or ports,
 * and the subprotocol.
 *
 * @internal
 */
export const decide = async (
  state: FakeState,
  options: Options,
  request: { readonly url: string; readonly header: (name: string) => string | undefined }
): Promise<Decision> => {
  const url = new URL(request.url, "http://fake")
  const query = firstValues(url.searchParams)
  // recorded as the request it is (GET with the upgrade), before any check, as the router records
  state.record({
    method: "GET",
    path: url.pathname,
    query,
    contentType: request.header("content-type"),
    userAgent: request.header("user-agent")
  })
  if (state.token !== undefined && request.header("authorization") !== `Bearer ${state.token}`) {
    return refuse(Status.unauthorized())
  }
  // injected faults apply to upgrades as to any request, after the token check as in the router
  const fault = state.faults.take("GET", url.pathname, query)
  if (fault?.kind === "fail") return refuse(fault.status!)
  if (fault?.kind === "reset") return { _tag: "Reset" }
  if (fault?.kind === "stall") return { _tag: "Stall" }
  if (fault?.kind === "delay") await new Promise((resolve) => setTimeout(resolve, fault.ms!))
  const match = streamPath.exec(url.pathname)
  if (match === null) return refuse(Status.pathNotFound())
  const [, namespace, name, what] = match as unknown as [string, string, string, "exec" | "attach" | "portforward"]
  const podKind = state.registry.byResource("", "v1", "pods")!
  const entry = state.collectionOf(podKind).entries.get(keyOf(decodeURIComponent(namespace), decodeURIComponent(name)))
  if (entry === undefined) return refuse(Status.notFound(podKind, decodeURIComponent(name)))
  // a copy: a handler cannot change the stored pod
  const pod = JSON.parse(JSON.stringify(entry.obj)) as FakeObject
  const podName = decodeURIComponent(name)
  const offered = (request.header("sec-websocket-protocol") ?? "").split(",").map((p) => p.trim()).filter((p) => p !== "")
  const phase = isObject(pod.status) ? pod.status.phase : undefined
  if (phase !== undefined && phase !== "Running") {
    return refuse(
      Status.badRequest(
        phase === "Succeeded" || phase === "Failed"
          ? `cannot ${what} into a container in a completed pod; current phase is ${phase}`
          : `pod ${podName} is not running (phase ${String(phase)})`
      )
    )
  }

  if (what === "portforward") {
    const ports = url.searchParams.getAll("ports").flatMap((p) => p.split(",")).map((p) => p.trim())
    if (ports.length === 0) return refuse(Status.badRequest("at least 1 port must be specified"))
    const numbers: Array<number> = []
    for (const p of ports) {
      const n = Number(p)
      if (!/^\d+$/.test(p) || n < 1 || n > 65535) {
        return refuse(Status.badRequest(`invalid port ${JSON.stringify(p)}: must be between 1 and 65535`))
      }
      numbers.push(n)
    }
    const protocol = offered.find((p) => Protocol.portForwardProtocols.includes(p))
    if (protocol === undefined) return refuse(Status.badRequest(noProtocol(offered, Protocol.portForwardProtocols)))
    return { _tag: "Accept", protocol, start: (peer) => portForwardSession(pod, numbers, options, peer) }
  }

  const containers = containersOf(pod)
  const wanted = url.searchParams.get("container") ?? undefined
  let container: ContainerSpec
  if (wanted === undefined || wanted === "") {
    const regular = Array.isArray((pod.spec as JsonObject | undefined)?.containers)
      ? ((pod.spec as JsonObject).containers as Array<unknown>).length
      : 0
    if (regular !== 1) {
      return refuse(
        Status.badRequest(
          regular === 0
            ? `pod ${podName} has no containers`
            : `a container name must be specified for pod ${podName}, choose one of: [${
              containers.slice(0, regular).map((c) => c.name).join(" ")
            }]`
        )
      )
    }
    container = containers[0]!
  } else {
    const found = containers.find((c) => c.name === wanted)
    if (found === undefined) return refuse(Status.badRequest(`container ${wanted} is not valid for pod ${podName}`))
    container = found
  }
  const command = url.searchParams.getAll("command")
  if (what === "exec" && command.length === 0) return refuse(Status.badRequest("you must specify at least 1 command"))
  const flag = (key: string) => url.searchParams.get(key) === "true" || url.searchParams.get(key) === "1"
  const supported = options.execProtocols ?? Protocol.execProtocols
  const protocol = offered.find((p) => supported.includes(p))
  if (protocol === undefined) return refuse(Status.badRequest(noProtocol(offered, supported)))
  const env = { HOSTNAME: podName, ...container.env }
  const tty = flag("tty")
  const handler = what === "exec" ? options.exec : options.attach
  const run = (io: ExecIo): Effect.Effect<number, unknown> => {
    const attached = what === "exec" ? command : container.command.length > 0 ? container.command : ["cat"]
    return handler?.(pod, container.name, attached, io) ?? builtin(attached, io)
  }
  return {
    _tag: "Accept",
    protocol,
    start: (peer) =>
      execSession({ protocol, tty, stdin: flag("stdin"), stderr: flag("stderr"), env, command, run }, peer)
  }
}

const noProtocol = (offered: ReadonlyArray<string>, supported: ReadonlyArray<string>): string =>
  `none of the requested subprotocols [${offered.join(", ")}] is supported; the server speaks [${supported.join(", ")}]`

// ---------------------------------------------------------------------------
// Built-in commands
// ---------------------------------------------------------------------------

const shell = (script: string, io: ExecIo): Effect.Effect<number> =>
  Effect.gen(function*() {
    for (const statement of script.split(/;|&&|\n/).map((s) => s.trim()).filter((s) => s !== "")) {
      const exit = /^exit(?:\s+(\d+))?$/.exec(statement)
      if (exit !== null) return Number(exit[1] ?? 0)
      const echo = /^echo(?:\s+(.*?))?(\s*1?>&2)?$/.exec(statement)
      if (echo !== null) {
        const text = `${(echo[1] ?? "").replace(/^(['"])(.*)\1$/, "$2")}\n`
        yield* (echo[2] !== undefined ? io.stderr(text) : io.stdout(text))
        continue
      }
      const code = yield* builtin(statement.split(/\s+/), io)
      if (code !== 0) return code
    }
    return 0
  })

/** The commands every fake container has. @internal */
export const builtin = (command: ReadonlyArray<string>, io: ExecIo): Effect.Effect<number> => {
  const [name, ...args] = command
  switch (name) {
    case "echo":
      return Effect.as(io.stdout(`${args.join(" ")}\n`), 0)
    case "cat":
      return Effect.as(Stream.runForEach(io.stdin, io.stdout), 0)
    case "env":
      return Effect.as(io.stdout(Object.entries(io.env).map(([k, v]) => `${k}=${v}\n`).join("")), 0)
    case "true":
      return Effect.succeed(0)
    case "false":
      return Effect.succeed(1)
    case "exit":
      return Effect.succeed(Number(args[0] ?? 0) & 0xff)
    case "sleep":
      return Effect.as(Effect.sleep(Duration.seconds(Number(args[0] ?? 0))), 0)
    case "sh":
    case "/bin/sh":
    case "bash":
      if (args[0] === "-c" && args[1] !== undefined) return shell(args[1], io)
      return Effect.as(io.stderr(`${name}: only "-c <script>" is supported by the fake cluster\n`), 2)
    default:
      return Effect.as(
        io.stderr(`exec: "${name ?? ""}": executable file not found in $PATH\n`),
        127
      )
  }
}

// ---------------------------------------------------------------------------
// Sessions
// ---------------------------------------------------------------------------

const messageOf = (u: unknown): string => (u instanceof Error ? u.message : String(u))

const execSession = (
  session: {
    readonly protocol: string
    readonly tty: boolean
    readonly stdin: boolean
    readonly stderr: boolean
    readonly env: Readonly<Record<string, string>>
    readonly command: ReadonlyArray<string>
    readonly run: (io: ExecIo) => Effect.Effect<number, unknown>
  },
  peer: Peer
): Session => {
  const stdin = Effect.runSync(Queue.unbounded<Uint8Array, Cause.Done>())
  const resizes = Effect.runSync(Queue.unbounded<{ readonly columns: number; readonly rows: number }, Cause.Done>())
  if (!session.stdin) Queue.endUnsafe(stdin)
  const send = (channel: number) => (data: Uint8Array | string) =>
    Effect.promise(() => peer.send(Protocol.frame(channel, bytes(data))).catch(() => undefined))
  const io: ExecIo = {
    stdin: Stream.fromQueue(stdin),
    stdout: send(Protocol.Channel.stdout),
    // under a tty the terminal merges stderr into stdout; without a stderr stream it is dropped
    stderr: session.tty ? send(Protocol.Channel.stdout) : session.stderr ? send(Protocol.Channel.stderr) : () => Effect.void,
    tty: session.tty,
    resizes: Stream.fromQueue(resizes),
    env: session.env
  }
  const fiber = Effect.runFork(session.run(io))
  let gone = false
  fiber.addObserver((exit) => {
    if (gone) return
    const status = Exit.isSuccess(exit)
      ? Protocol.statusFor(exit.value, session.command)
      : Status.internalError(`error executing command in container: ${messageOf(Cause.squash(exit.cause))}`).body()
    peer.send(Protocol.frame(Protocol.Channel.status, encoder.encode(JSON.stringify(status))))
      .catch(() => undefined)
      .finally(() => peer.close())
  })
  return {
    receive: (data) => {
      if (data.length === 0) return
      const payload = data.subarray(1)
      switch (data[0]) {
        case Protocol.Channel.stdin:
          if (payload.length > 0) Queue.offerUnsafe(stdin, payload)
          return
        case Protocol.Channel.resize: {
          try {
            const size = JSON.parse(decoder.decode(payload)) as { Width?: number; Height?: number }
            Queue.offerUnsafe(resizes, { columns: Number(size.Width), rows: Number(size.Height) })
          } catch {
            // a malformed resize is ignored, as the kubelet does
          }
          return
        }
        case Protocol.Channel.close:
          if (session.protocol === Protocol.v5 && payload[0] === Protocol.Channel.stdin) {
            Queue.endUnsafe(stdin)
          }
          return
      }
    },
    closed: () => {
      gone = true
      Queue.endUnsafe(stdin)
      Effect.runFork(Fiber.interrupt(fiber))
    }
  }
}

const echo: PortForwardHandler = (_pod, _port, connection) => Stream.runForEach(connection.read, connection.write)

const portForwardSession = (
  pod: FakeObject,
  ports: ReadonlyArray<number>,
  options: Options,
  peer: Peer
): Session => {
  const handler = options.portForward ?? echo
  const inputs = ports.map(() => Effect.runSync(Queue.unbounded<Uint8Array, Cause.Done>()))
  const fibers = ports.map((port, i) => {
    const dataChannel = 2 * i
    const errorChannel = 2 * i + 1
    const opening = Promise.all([
      peer.send(Protocol.frame(dataChannel, Protocol.portPrefix(port))),
      peer.send(Protocol.frame(errorChannel, Protocol.portPrefix(port)))
    ]).catch(() => undefined)
    const connection: PortConnection = {
      read: Stream.fromQueue(inputs[i]!),
      write: (data) => Effect.promise(() => peer.send(Protocol.frame(dataChannel, bytes(data))).catch(() => undefined))
    }
    return Effect.runFork(
      Effect.andThen(
        Effect.promise(() => opening),
        handler(pod, port, connection).pipe(
          Effect.catchCause((cause) =>
            Effect.promise(() =>
              peer.send(Protocol.frame(errorChannel, encoder.encode(`error forwarding port ${port}: ${messageOf(Cause.squash(cause))}`)))
                .catch(() => undefined)
            )
          )
        )
      )
    )
  })
  let gone = false
  // the connection ends when every port's handler is done, as a kubelet's does
  Effect.runFork(Fiber.joinAll(fibers)).addObserver(() => {
    if (!gone) peer.close()
  })
  return {
    receive: (data) => {
      if (data.length === 0) return
      const index = data[0]! / 2
      if (Number.isInteger(index) && index < inputs.length && data.length > 1) {
        Queue.offerUnsafe(inputs[index]!, data.subarray(1))
      }
    },
    closed: () => {
      gone = true
      for (const input of inputs) Queue.endUnsafe(input)
      for (const fiber of fibers) Effect.runFork(Fiber.interrupt(fiber))
    }
  }
}

// ---------------------------------------------------------------------------
// Transports
// ---------------------------------------------------------------------------

const reasonPhrase: Record<number, string> = {
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  500: "Internal Server Error"
}

/**
 * Handles an HTTP `upgrade` event of the loopback server: refusals answer as HTTP with
 * their Status body; accepted requests are upgraded with `ws`.
 *
 * @internal
 */
export const makeUpgradeHandler = (server: Upgrader) => {
  const chosen = new WeakMap<Http.IncomingMessage, string>()
  const wss = new WebSocketServer({
    noServer: true,
    perMessageDeflate: false,
    maxPayload: 256 * 1024 * 1024,
    handleProtocols: (_offered, req) => chosen.get(req) ?? false
  })
  return (req: Http.IncomingMessage, socket: Net.Socket, head: Buffer): void => {
    socket.on("error", () => socket.destroy())
    server.upgrade({
      url: req.url ?? "/",
      header: (name) => {
        const v = req.headers[name.toLowerCase()]
        return Array.isArray(v) ? v.join(", ") : v
      }
    }).then((decision) => {
      // a stalled upgrade is never answered: the client gives up, or the server's close cuts it
      if (decision._tag === "Stall") return
      if (decision._tag === "Reset") return socket.destroy()
      if (decision._tag === "Refuse") {
        socket.end(
          `HTTP/1.1 ${decision.status} ${reasonPhrase[decision.status] ?? "Error"}\r\n` +
            "Content-Type: application/json\r\n" +
            `Content-Length: ${Buffer.byteLength(decision.body)}\r\n` +
            "Connection: close\r\n\r\n" + decision.body
        )
        return
      }
      chosen.set(req, decision.protocol)
      wss.handleUpgrade(req, socket, head, (ws) => {
        const session = decision.start({
          send: (data) =>
            new Promise<void>((resolve, reject) => {
              if (ws.readyState !== ws.OPEN) return reject(new Error("closed"))
              ws.send(data, { binary: true }, (error) => (error ? reject(error) : resolve()))
            }),
          close: () => ws.close(1000)
        })
        ws.on("message", (data: Buffer) => session.receive(data))
        ws.on("close", () => session.closed())
        ws.on("error", () => ws.terminate())
      })
    }, () => socket.destroy())
  }
}

/**
 * A dialer that reaches the fake's sessions in memory, for `FakeCluster.layer`: the
 * same checks and sessions as over loopback, without a socket.
 *
 * @internal
 */
export const inMemoryDialer = (server: Upgrader): Dialer => ({
  dial: async (request, handlers: Handlers): Promise<Socket> => {
    const url = new URL(request.url)
    const headers: Record<string, string> = {}
    for (const [k, v] of Object.entries(request.headers)) {
      headers[k.toLowerCase()] = typeof v === "string" ? v : v.join(", ")
    }
    headers["sec-websocket-protocol"] = request.protocols.join(", ")
    const decision = await server.upgrade({ url: url.pathname + url.search, header: (name) => headers[name.toLowerCase()] })
    if (decision._tag === "Refuse") {
      throw { _tag: "Refused", status: decision.status, body: decision.body } satisfies DialFailure
    }
    if (decision._tag === "Reset") throw { _tag: "Unreachable", detail: "connection reset" } satisfies DialFailure
    // never answered: the dial waits until it is interrupted
    if (decision._tag === "Stall") return new Promise<never>(() => undefined)
    // `open` turns false once the close has crossed: what was sent before it arrives first
    let open = true
    let closing = false
    const shut = () => {
      if (closing) return
      closing = true
      setImmediate(() => {
        open = false
        session.closed()
        handlers.onClose(true, "closed")
      })
    }
    // messages cross on the next turn, in order, as they would over a socket
    const session = decision.start({
      send: (data) =>
        !closing
          ? new Promise<void>((resolve) =>
            setImmediate(() => {
              if (open) handlers.onMessage(data.slice())
              resolve()
            })
          )
          : Promise.reject(new Error("closed")),
      close: shut
    })
    return {
      protocol: decision.protocol,
      send: (data) =>
        !closing
          ? new Promise<void>((resolve) =>
            setImmediate(() => {
              if (open) session.receive(data.slice())
              resolve()
            })
          )
          : Promise.reject(new Error("the connection is closed")),
      close: shut,
      // in memory the fake's sends already wait for delivery
      pause: () => undefined,
      resume: () => undefined
    }
  }
})

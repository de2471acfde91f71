/**
 * The fake's side of exec, attach and port-forward, as kube-apiserver and the kubelet's
 * streaming server answer them:
 *
 * - the checks before the upgrade (auth, pod, container, command, streams, ports), a
 *   refusal answered in HTTP (a Status, or the kubelet's plain text), and a request that
 *   is no upgrade answered 400 `Upgrade request required`;
 * - the subprotocol: `v5.channel.k8s.io` wherever the client offers it (the API server
 *   translates it), else the kubelet's pick in the client's order among `channel.k8s.io`,
 *   `base64.channel.k8s.io`, `v4.channel.k8s.io`, `v4.base64.channel.k8s.io` (none offered:
 *   the plain channel protocol), and for port-forward the SPDY/3.1 tunnel
 *   (`SPDY/3.1+portforward.k8s.io`) or a plain `Upgrade: SPDY/3.1`;
 * - the sessions that run a test-supplied behaviour (or the built-in commands) over the
 *   channels: an empty first message on the lowest output channel, a terminal's output
 *   with CRLF, resizes read as the kubelet reads them, and the final status in each
 *   protocol's own form and text.
 *
 * Transport-free: `node.ts` attaches sessions to `ws` connections and upgraded sockets;
 * `inMemoryDialer` connects clients of `FakeCluster.layer` to them without a socket.
 *
 * @internal
 */
import * as Authz from "../authz/index.js"
import * as Cause from "effect/Cause"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"
import * as Crypto from "node:crypto"
import type * as Http from "node:http"
import type * as Net from "node:net"
import { WebSocketServer } from "ws"
import type { Dialer, DialFailure, Handlers, Socket } from "effect-kube/internal/testing"
import { type Codec, codecOf, type Peer, type Session } from "./channels.js"
import { firstValues } from "../serve/http.js"
import * as PortForward from "./portforward.js"
import type { FakeState } from "../store/state.js"
import * as Status from "../serve/statusBodies.js"
import { keyOf } from "../store/store.js"
import { authenticates } from "../serve/tokens.js"
import type { ExecIo, FakeObject, Options } from "../types.js"

export type { Peer, Session } from "./channels.js"

/** An upgrade request as the transports see it. @internal */
export interface UpgradeRequest {
  /** GET for a WebSocket; kubectl's SPDY upgrades are POSTs. */
  readonly method?: string | undefined
  readonly url: string
  readonly header: (name: string) => string | undefined
}

/**
 * How a request arrived: a WebSocket upgrade, a plain `Upgrade: SPDY/3.1`, or no upgrade
 * at all (a GET or POST through the router).
 *
 * @internal
 */
export type Transport = "websocket" | "spdy" | "none"

/** @internal */
export type Decision =
  | {
    readonly _tag: "Refuse"
    readonly status: number
    readonly body: string
    readonly contentType: string
    readonly headers?: Readonly<Record<string, string>> | undefined
  }
  /** `protocol` is the subprotocol agreed, `""` for none. */
  | { readonly _tag: "Accept"; readonly protocol: string; readonly start: (peer: Peer) => Session }
  /** An injected fault: the connection is cut (`resetNext`) or never answered (`stallNext`). */
  | { readonly _tag: "Reset" }
  | { readonly _tag: "Stall" }

/** What exec needs of the fake server. Declared here, so that server.ts (which imports this module) is not imported back. */
interface Upgrader {
  readonly upgrade: (request: UpgradeRequest, transport: Transport) => Promise<Decision>
}

const encoder = new TextEncoder()
const bytes = (data: Uint8Array | string): Uint8Array => (typeof data === "string" ? encoder.encode(data) : data)

const refuse = (error: Status.StatusError): Decision => ({
  _tag: "Refuse",
  status: error.code,
  body: JSON.stringify(error.body()),
  contentType: "application/json"
})

/** The kubelet's refusals are plain text. */
const refuseText = (status: number, body: string, headers?: Readonly<Record<string, string>>): Decision => ({
  _tag: "Refuse",
  status,
  body,
  contentType: "text/plain; charset=utf-8",
  headers
})

const streamPath = /^\/api\/v1\/namespaces\/([^/]+)\/pods\/([^/]+)\/(exec|attach|portforward)$/

/** Whether a path is one of a pod's streaming subresources. @internal */
export const isStreamPath = (path: string): boolean => streamPath.test(path)

type JsonObject = Record<string, unknown>
const isObject = (u: unknown): u is JsonObject => typeof u === "object" && u !== null && !Array.isArray(u)

interface ContainerSpec {
  readonly name: string
  readonly command: ReadonlyArray<string>
  readonly env: Record<string, string>
}

const containersOf = (list: unknown): Array<ContainerSpec> =>
  (Array.isArray(list) ? list.filter(isObject) : []).map((c) => {
    const env: Record<string, string> = {}
    for (const e of Array.isArray(c.env) ? c.env.filter(isObject) : []) {
      if (typeof e.name === "string" && typeof e.value === "string") env[e.name] = e.value
    }
    const words = (u: unknown) => (Array.isArray(u) ? u.filter((w): w is string => typeof w === "string") : [])
    return { name: String(c.name), command: [...words(c.command), ...words(c.args)], env }
  })

const v5 = "v5.channel.k8s.io"
const tunnelPrefix = "SPDY/3.1+"
const portForwardProtocol = "portforward.k8s.io"

/** What the kubelet negotiates for exec and attach over WebSocket (v5 binary goes to the API server's translator). */
const kubeletProtocols = [
  "",
  "channel.k8s.io",
  "base64.channel.k8s.io",
  "v4.channel.k8s.io",
  "v4.base64.channel.k8s.io",
  "v5.base64.channel.k8s.io"
]

/** The kubelet's port-forward subprotocols over WebSocket. */
const portForwardProtocols = ["", "v4.channel.k8s.io", "v4.base64.channel.k8s.io"]

/** `wsstream`'s handshake: the first offered protocol it speaks, in the client's order; none offered is `""`. */
const pick = (offered: ReadonlyArray<string>, spoken: ReadonlyArray<string>): string | undefined =>
  (offered.length === 0 ? [""] : offered).find((p) => spoken.includes(p))

const upgradeRequired = refuse(Status.badRequest("Upgrade request required"))

/** A failed WebSocket handshake: the kubelet's websocket server answers 403 with no body. */
const noProtocol = refuseText(403, "")

/**
 * The kubelet's port list (`port` query parameters, the API server's `ports`): every
 * value, comma-separated ports in one value too.
 */
const parsePorts = (values: ReadonlyArray<string>): ReadonlyArray<number> | string => {
  if (values.length === 0) return `query parameter "port" is required`
  const ports: Array<number> = []
  for (const value of values) {
    if (value === "") return `query parameter "port" cannot be empty`
    for (const p of value.split(",")) {
      if (!/^\d+$/.test(p)) return `unable to parse "${value}" as a port: strconv.ParseUint: parsing "${p}": invalid syntax`
      const port = Number(p)
      if (port > 65535) return `unable to parse "${value}" as a port: strconv.ParseUint: parsing "${p}": value out of range`
      if (port < 1) return `port "${value}" must be > 0`
      ports.push(port)
    }
  }
  return ports
}

/** The protocol a SPDY upgrade asks for (`X-Stream-Protocol-Version`), as `httpstream.Handshake` agrees it. */
const spdyHandshake = (request: UpgradeRequest, spoken: ReadonlyArray<string>): string | Decision => {
  const offered = (request.header("x-stream-protocol-version") ?? "").split(",").map((p) => p.trim()).filter((p) =>
    p !== ""
  )
  if (offered.length === 0) return refuseText(400, "unable to upgrade: X-Stream-Protocol-Version is required")
  const agreed = offered.find((p) => spoken.includes(p))
  if (agreed !== undefined) return agreed
  return refuseText(
    403,
    `unable to upgrade: unable to negotiate protocol: client supports [${offered.join(" ")}], server accepts [${
      spoken.join(" ")
    }]\n`,
    { "x-accepted-stream-protocol-versions": spoken.join(", ") }
  )
}

/**
 * Decides on a streaming request as the API server and the kubelet do before an upgrade:
 * the path, the token and the pod, the container, the command and streams or the ports,
 * and the subprotocol. `recorded`: the router already logged the request.
 *
 * @internal
 */
export const decide = async (
  state: FakeState,
  options: Options,
  request: UpgradeRequest,
  transport: Transport,
  recorded = false
): Promise<Decision> => {
  const url = new URL(request.url, "http://fake")
  const query = firstValues(url.searchParams)
  // recorded as the request it is (GET with the upgrade), before any check, as the router records
  if (!recorded) {
    state.record({
      method: request.method ?? "GET",
      path: url.pathname,
      query,
      contentType: request.header("content-type"),
      userAgent: request.header("user-agent")
    })
    if (!authenticates(state, request.header("authorization"))) {
      return refuse(Status.unauthorized())
    }
    const requester = Authz.authorizeRequest(state, request.method ?? "GET", url.pathname, query, request.header)
    if (requester instanceof Status.StatusError) return refuse(requester)
    // injected faults apply to upgrades as to any request, after the token check as in the router
    const fault = state.faults.take(request.method ?? "GET", url.pathname, query)
    if (fault?.kind === "fail") return refuse(fault.status!)
    if (fault?.kind === "reset") return { _tag: "Reset" }
    if (fault?.kind === "stall") return { _tag: "Stall" }
    // on the fake's clock, as its other timers
    if (fault?.kind === "delay") await new Promise<void>((resolve) => state.later(fault.ms!, resolve))
  }
  const match = streamPath.exec(url.pathname)
  if (match === null) return refuse(Status.pathNotFound())
  const [, namespace, name, what] = match as unknown as [string, string, string, "exec" | "attach" | "portforward"]
  const podKind = state.registry.byResource("", "v1", "pods")!
  const podName = decodeURIComponent(name)
  const entry = state.collectionOf(podKind).entries.get(keyOf(decodeURIComponent(namespace), podName))
  if (entry === undefined) return refuse(Status.notFound(podKind, podName))
  // a copy: a handler cannot change the stored pod
  const pod = JSON.parse(JSON.stringify(entry.obj)) as FakeObject
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
  if (what === "portforward") return decidePortForward(pod, options, request, transport, url, offered)

  const spec = isObject(pod.spec) ? pod.spec : {}
  const regular = containersOf(spec.containers)
  const init = containersOf(spec.initContainers)
  const containers = [...regular, ...init, ...containersOf(spec.ephemeralContainers)]
  const wanted = url.searchParams.get("container") ?? ""
  let container: ContainerSpec
  if (wanted === "") {
    if (regular.length !== 1) {
      if (regular.length === 0) return refuse(Status.badRequest(`a container name must be specified for pod ${podName}`))
      const initNames = init.length > 0 ? ` or one of the init containers: [${init.map((c) => c.name).join(" ")}]` : ""
      return refuse(
        Status.badRequest(
          `a container name must be specified for pod ${podName}, choose one of: [${
            regular.map((c) => c.name).join(" ")
          }]${initNames}`
        )
      )
    }
    container = regular[0]!
  } else {
    const found = containers.find((c) => c.name === wanted)
    if (found === undefined) return refuse(Status.badRequest(`container ${wanted} is not valid for pod ${podName}`))
    container = found
  }
  const command = url.searchParams.getAll("command")
  if (what === "exec" && command.length === 0) return refuse(Status.badRequest("you must specify at least 1 command"))
  if (transport === "none") return upgradeRequired
  const flag = (key: string) => url.searchParams.get(key) === "true" || url.searchParams.get(key) === "1"
  const tty = flag("tty")
  const streams = { stdin: flag("stdin"), stdout: flag("stdout"), stderr: flag("stderr") && !tty }
  if (!streams.stdin && !streams.stdout && !flag("stderr")) {
    return refuseText(400, "you must specify at least 1 of stdin, stdout, stderr")
  }
  if (transport === "spdy") {
    return refuse(Status.badRequest(`the fake cluster serves ${what} over WebSocket only, not SPDY/3.1`))
  }
  const spoken = options.execProtocols ?? [v5, ...kubeletProtocols]
  // the API server translates v5 itself wherever it is offered; anything else is the kubelet's to agree
  const protocol = spoken.includes(v5) && offered.includes(v5) ? v5 : pick(offered, spoken.filter((p) => p !== v5))
  if (protocol === undefined) return noProtocol
  const env = { HOSTNAME: podName, ...container.env }
  const handler = what === "exec" ? options.exec : options.attach
  const attached = what === "exec" ? command : container.command.length > 0 ? container.command : ["cat"]
  const run = (io: ExecIo): Effect.Effect<number, unknown> =>
    handler?.(pod, container.name, attached, io) ?? builtin(attached, io)
  return {
    _tag: "Accept",
    protocol,
    start: (peer) => execSession({ what, protocol, tty, ...streams, env, command, run }, peer)
  }
}

const decidePortForward = (
  pod: FakeObject,
  options: Options,
  request: UpgradeRequest,
  transport: Transport,
  url: URL,
  offered: ReadonlyArray<string>
): Decision => {
  if (transport === "none") return upgradeRequired
  if (transport === "spdy") {
    const agreed = spdyHandshake(request, [portForwardProtocol])
    if (typeof agreed !== "string") return agreed
    return { _tag: "Accept", protocol: agreed, start: (peer) => PortForward.spdySession(pod, options.portForward, peer) }
  }
  // the API server tunnels SPDY through the WebSocket for the subprotocols it names
  const tunnelled = offered.filter((p) => p.startsWith(tunnelPrefix) && p.endsWith(".k8s.io"))
    .map((p) => p.slice(tunnelPrefix.length))
  if (tunnelled.length > 0) {
    if (!tunnelled.includes(portForwardProtocol)) {
      return refuseText(
        403,
        `unable to upgrade: unable to negotiate protocol: client supports [${tunnelled.join(" ")}], server accepts [${portForwardProtocol}]\n`
      )
    }
    return {
      _tag: "Accept",
      protocol: tunnelPrefix + portForwardProtocol,
      start: (peer) => PortForward.spdySession(pod, options.portForward, peer)
    }
  }
  const ports = parsePorts(url.searchParams.getAll("ports"))
  if (typeof ports === "string") return refuseText(400, ports)
  const protocol = pick(offered, portForwardProtocols)
  if (protocol === undefined) return noProtocol
  return {
    _tag: "Accept",
    protocol,
    start: (peer) => PortForward.websocketSession(pod, ports, options.portForward, codecOf(protocol), peer)
  }
}

// ---------------------------------------------------------------------------
// Built-in commands
// ---------------------------------------------------------------------------

/**
 * The runtime could not start the command (an executable that is not there): the
 * kubelet reports it as an internal error, not an exit code.
 *
 * @internal
 */
export class ExecFailure extends Error {}

const executableNotFound = (name: string): ExecFailure =>
  new ExecFailure(
    `failed to exec in container: failed to start exec "${Crypto.randomBytes(32).toString("hex")}": ` +
      `OCI runtime exec failed: exec failed: unable to start container process: exec: "${name}": ` +
      "executable file not found in $PATH: unknown"
  )

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
      const words = statement.split(/\s+/)
      // a shell reports a command it cannot find itself, and exits 127
      const code = yield* builtin(words, io).pipe(
        Effect.catch(() => Effect.as(io.stderr(`sh: ${words[0]}: not found\n`), 127))
      )
      if (code !== 0) return code
    }
    return 0
  })

/** The commands every fake container has; anything else is not found, as the runtime reports it. @internal */
export const builtin = (command: ReadonlyArray<string>, io: ExecIo): Effect.Effect<number, ExecFailure> => {
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
      return Effect.fail(executableNotFound(name ?? ""))
  }
}

// ---------------------------------------------------------------------------
// Exec and attach sessions
// ---------------------------------------------------------------------------

const messageOf = (u: unknown): string => (u instanceof Error ? u.message : String(u))

const Channel = { stdin: 0, stdout: 1, stderr: 2, status: 3, resize: 4, close: 255 } as const

/** How a protocol reports the end: the API server's translator (v5), the kubelet's Status (v4), plain text (before v4). */
type StatusForm = "translator" | "kubelet" | "text"

const statusFormOf = (protocol: string): StatusForm =>
  protocol === v5 ? "translator" : protocol.startsWith("v4.") || protocol.startsWith("v5.") ? "kubelet" : "text"

interface Outcome {
  readonly status: JsonObject
  /** What a protocol before v4 writes for it (nothing for success). */
  readonly text: string
}

const success: Outcome = { status: { metadata: {}, status: "Success" }, text: "" }

const internalError = (message: string): Outcome => {
  const status = {
    metadata: {},
    status: "Failure",
    message: `Internal error occurred: ${message}`,
    reason: "InternalError",
    details: { causes: [{ message }] },
    code: 500
  }
  return { status, text: status.message }
}

const exitStatus = (message: string, code: number): Outcome => ({
  status: {
    metadata: {},
    status: "Failure",
    message,
    reason: "NonZeroExitCode",
    details: { causes: [{ reason: "ExitCode", message: String(code) }] }
  },
  text: message
})

/**
 * How the session ended, as the client reads it in its protocol. The kubelet (with the
 * container runtime's texts) writes the exit code or the failure; the API server's v5
 * translator reads that through SPDY and writes it again, in its own words.
 */
const outcomeOf = (
  what: "exec" | "attach",
  form: StatusForm,
  command: ReadonlyArray<string>,
  exit: Exit.Exit<number, unknown>
): Outcome => {
  if (Exit.isFailure(exit)) {
    const failure = `error ${what === "exec" ? "executing command in" : "attaching to"} container: ${
      messageOf(Cause.squash(exit.cause))
    }`
    const kubelet = internalError(failure)
    return form === "translator" ? internalError(kubelet.status.message as string) : kubelet
  }
  // the kubelet reports an attach that ended as a success: the process's exit is the pod's status
  if (exit.value === 0 || what === "attach") return success
  const code = exit.value
  return form === "translator"
    ? exitStatus(`command terminated with non-zero exit code: command terminated with exit code ${code}`, code)
    : exitStatus(
      `command terminated with non-zero exit code: error executing command [${command.join(" ")}], exit code ${code}`,
      code
    )
}

/** A terminal's output: every LF becomes CRLF (the pty's ONLCR). */
const onlcr = (data: Uint8Array): Uint8Array => {
  let lines = 0
  for (const b of data) if (b === 0x0a) lines++
  if (lines === 0) return data
  const out = new Uint8Array(data.length + lines)
  let j = 0
  for (const b of data) {
    if (b === 0x0a) out[j++] = 0x0d
    out[j++] = b
  }
  return out
}

/**
 * The kubelet's reading of the resize channel: a stream of JSON objects whose keys match
 * `Width` and `Height` in any case; the first value that is not a size stops the resizes.
 */
const resizeReader = (offer: (size: { readonly columns: number; readonly rows: number }) => void) => {
  let pending = ""
  let stopped = false
  const fieldOf = (size: JsonObject, name: string): unknown => {
    if (name in size) return size[name]
    const key = Object.keys(size).find((k) => k.toLowerCase() === name.toLowerCase())
    return key === undefined ? undefined : size[key]
  }
  const dimension = (u: unknown): number | undefined =>
    u === undefined ? 0 : typeof u === "number" && Number.isInteger(u) && u >= 0 && u <= 65535 ? u : undefined
  return (data: Uint8Array) => {
    if (stopped) return
    pending += new TextDecoder().decode(data)
    for (;;) {
      pending = pending.trimStart()
      if (pending === "") return
      const end = jsonEnd(pending)
      if (end === undefined) return
      let value: unknown
      try {
        value = JSON.parse(pending.slice(0, end))
      } catch {
        stopped = true
        return
      }
      pending = pending.slice(end)
      const columns = isObject(value) ? dimension(fieldOf(value, "Width")) : undefined
      const rows = isObject(value) ? dimension(fieldOf(value, "Height")) : undefined
      if (columns === undefined || rows === undefined) {
        stopped = true
        return
      }
      offer({ columns, rows })
    }
  }
}

/** Where the first JSON value of `text` ends (an object, array or scalar), `undefined` while it is incomplete. */
const jsonEnd = (text: string): number | undefined => {
  const first = text[0]
  if (first !== "{" && first !== "[") {
    const m = /^(?:"(?:[^"\\]|\\.)*"|[^\s{}[\],"]+)/.exec(text)
    return m === null || m[0].length === text.length ? undefined : m[0].length
  }
  let depth = 0
  let quoted = false
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!
    if (quoted) {
      if (c === "\\") i++
      else if (c === "\"") quoted = false
    } else if (c === "\"") quoted = true
    else if (c === "{" || c === "[") depth++
    else if (c === "}" || c === "]") {
      depth--
      if (depth === 0) return i + 1
    }
  }
  return undefined
}

const execSession = (
  session: {
    readonly what: "exec" | "attach"
    readonly protocol: string
    readonly tty: boolean
    readonly stdin: boolean
    readonly stdout: boolean
    readonly stderr: boolean
    readonly env: Readonly<Record<string, string>>
    readonly command: ReadonlyArray<string>
    readonly run: (io: ExecIo) => Effect.Effect<number, unknown>
  },
  peer: Peer
): Session => {
  const codec: Codec = codecOf(session.protocol)
  const form = statusFormOf(session.protocol)
  const stdin = Effect.runSync(Queue.unbounded<Uint8Array, Cause.Done>())
  const resizes = Effect.runSync(Queue.unbounded<{ readonly columns: number; readonly rows: number }, Cause.Done>())
  if (!session.stdin) Queue.endUnsafe(stdin)
  const sendNow = (channel: number, data: Uint8Array) => peer.send(codec.encode(channel, data)).catch(() => undefined)
  const writer = (channel: number) => (data: Uint8Array | string) =>
    Effect.promise(() => sendNow(channel, session.tty ? onlcr(bytes(data)) : bytes(data)))
  const drop = () => Effect.void
  // the streams opened: an empty message on the lowest one the client reads
  const opened = sendNow(session.stdout ? Channel.stdout : session.stderr ? Channel.stderr : Channel.status, new Uint8Array(0))
  const io: ExecIo = {
    stdin: Stream.fromQueue(stdin),
    stdout: session.stdout ? writer(Channel.stdout) : drop,
    // under a tty the terminal merges stderr into stdout; without a stderr stream it is dropped
    stderr: session.tty
      ? (session.stdout ? writer(Channel.stdout) : drop)
      : session.stderr
      ? writer(Channel.stderr)
      : drop,
    tty: session.tty,
    resizes: Stream.fromQueue(resizes),
    env: session.env
  }
  const fiber = Effect.runFork(Effect.andThen(Effect.promise(() => opened), session.run(io)))
  let gone = false
  fiber.addObserver((exit) => {
    if (gone) return
    const outcome = outcomeOf(session.what, form, session.command, exit)
    const report = form !== "text"
      ? sendNow(Channel.status, encoder.encode(JSON.stringify(outcome.status)))
      : outcome.text === ""
      ? Promise.resolve()
      : sendNow(Channel.status, encoder.encode(outcome.text))
    report.finally(() => peer.close())
  })
  const resize = resizeReader((size) => Queue.offerUnsafe(resizes, size))
  return {
    receive: (message) => {
      const frame = codec.decode(message)
      if (frame === undefined) return
      switch (frame.channel) {
        case Channel.stdin:
          if (frame.data.length > 0) Queue.offerUnsafe(stdin, frame.data)
          return
        case Channel.resize:
          if (session.tty) resize(frame.data)
          return
        case Channel.close:
          if (session.protocol === v5 && frame.data[0] === Channel.stdin) Queue.endUnsafe(stdin)
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

// ---------------------------------------------------------------------------
// Transports
// ---------------------------------------------------------------------------

const reasonPhrase: Record<number, string> = {
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  429: "Too Many Requests",
  500: "Internal Server Error",
  503: "Service Unavailable"
}

const answer = (status: number, headers: Readonly<Record<string, string>>, body: string): string =>
  `HTTP/1.1 ${status} ${reasonPhrase[status] ?? (status === 101 ? "Switching Protocols" : "Error")}\r\n` +
  Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join("") +
  (status === 101 ? "" : `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n`) +
  "\r\n" + body

/** A byte peer over an upgraded socket (the plain SPDY upgrade). */
const socketPeer = (socket: Net.Socket): Peer => ({
  send: (data) =>
    new Promise<void>((resolve, reject) => {
      if (socket.destroyed) return reject(new Error("closed"))
      socket.write(data, (error) => (error ? reject(error) : resolve()))
    }),
  close: () => socket.end()
})

/**
 * Handles an HTTP `upgrade` event of the loopback server: WebSocket upgrades (exec,
 * attach, port-forward, the SPDY tunnel) through `ws`, plain `Upgrade: SPDY/3.1` on the
 * socket itself; refusals are HTTP answers.
 *
 * @internal
 */
export const makeUpgradeHandler = (server: Upgrader) => {
  const chosen = new WeakMap<Http.IncomingMessage, string>()
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, maxPayload: 256 * 1024 * 1024 })
  // the subprotocol agreed is answered here: `ws` refuses offers that are no HTTP token
  // (`SPDY/3.1+portforward.k8s.io`, which the Go servers accept), so it never sees them
  wss.on("headers", (headers, req) => {
    const protocol = chosen.get(req)
    if (protocol !== undefined && protocol !== "") headers.push(`Sec-WebSocket-Protocol: ${protocol}`)
  })
  return (req: Http.IncomingMessage, socket: Net.Socket, head: Buffer): void => {
    socket.on("error", () => socket.destroy())
    const kind = (req.headers.upgrade ?? "").toLowerCase()
    const transport: Transport = kind === "websocket" ? "websocket" : kind.startsWith("spdy/") ? "spdy" : "none"
    server.upgrade({
      method: req.method,
      url: req.url ?? "/",
      header: (name) => {
        const v = req.headers[name.toLowerCase()]
        return Array.isArray(v) ? v.join(", ") : v
      }
    }, transport).then((decision) => {
      // a stalled upgrade is never answered: the client gives up, or the server's close cuts it
      if (decision._tag === "Stall") return
      if (decision._tag === "Reset") return socket.destroy()
      if (decision._tag === "Refuse") {
        socket.end(answer(decision.status, { "Content-Type": decision.contentType, ...decision.headers }, decision.body))
        return
      }
      if (transport === "spdy") {
        socket.setNoDelay(true)
        socket.write(answer(101, {
          Connection: "Upgrade",
          Upgrade: "SPDY/3.1",
          "X-Stream-Protocol-Version": decision.protocol
        }, ""))
        const session = decision.start(socketPeer(socket))
        if (head.length > 0) session.receive(new Uint8Array(head))
        socket.on("data", (data: Buffer) => session.receive(new Uint8Array(data)))
        socket.on("close", () => session.closed())
        return
      }
      chosen.set(req, decision.protocol)
      delete req.headers["sec-websocket-protocol"]
      wss.handleUpgrade(req, socket, head, (ws) => {
        const session = decision.start({
          send: (data) =>
            new Promise<void>((resolve, reject) => {
              if (ws.readyState !== ws.OPEN) return reject(new Error("closed"))
              ws.send(data, { binary: typeof data !== "string" }, (error) => (error ? reject(error) : resolve()))
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
    const decision = await server.upgrade(
      { url: url.pathname + url.search, header: (name) => headers[name.toLowerCase()] },
      "websocket"
    )
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
              if (open) handlers.onMessage(typeof data === "string" ? encoder.encode(data) : data.slice())
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

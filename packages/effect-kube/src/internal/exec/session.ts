/**
 * The client side of exec, attach and port-forward: checks the input, opens the
 * WebSocket with the KubeConfig's server, credentials and TLS material (once more after
 * a 401 when the auth provider has fresh credentials), and routes the channels into
 * queues. A refused upgrade is the server's ApiError; a connection that cannot be made
 * or is lost is an `HttpClientError` (reason `TransportError`) whose request carries no
 * header.
 *
 * @internal
 */
import * as NodeStream from "@effect/platform-node-shared/NodeStream"
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberSet from "effect/FiberSet"
import * as HttpClientError from "effect/http/HttpClientError"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Redacted from "effect/Redacted"
import type * as Scope from "effect/Scope"
import * as Sink from "effect/Sink"
import * as Stream from "effect/Stream"
import * as Net from "node:net"
import { KubeConfigError, type Status, ValidationError } from "../../Errors.js"
import type * as Exec from "../../Exec.js"
import type * as Kube from "../../Kube.js"
import { type Credentials, KubeConfig, type ProxyOptions, type Service as KubeConfigService } from "../../KubeConfig.js"
import { concatBytes } from "../stream/lines.js"
import { apiErrorFrom, apiErrorFromStatus, authorizationHeader } from "../client/execute.js"
import * as Impersonate from "../kubeconfig/impersonate.js"
import { clusterProxy } from "../transport/proxyEnvironment.js"
import { checkName, checkNamespace, namespaceProblem } from "../request/inputChecks.js"
import { userAgent } from "../request/userAgent.js"
import { type DialFailure, type DialRequest, type Handlers, type Socket, WebSocketDialer, wsDialer } from "./dialer.js"
import * as Protocol from "./protocol.js"

type Error = Kube.Error

// ---------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------

const transport = (url: string, description: string, cause?: unknown): HttpClientError.HttpClientError =>
  new HttpClientError.HttpClientError({
    reason: new HttpClientError.TransportError({
      request: HttpClientRequest.get(url),
      description,
      ...(cause !== undefined ? { cause } : {})
    })
  })

// ---------------------------------------------------------------------------
// Input checks
// ---------------------------------------------------------------------------

const checkTarget = (target: Exec.Target, subresource: string): Effect.Effect<void, ValidationError> =>
  target.resource.kind === "Pod" && target.resource.apiVersion === "v1" &&
    target.resource.subresources.includes(subresource)
    ? Effect.void
    : Effect.fail(
      new ValidationError({
        subject: subresource,
        detail: `${target.resource.kind} does not serve the "${subresource}" subresource (only Pods do)`
      })
    )

const checkContainer = (container: string | undefined): Effect.Effect<void, ValidationError> => {
  if (container === undefined) return Effect.void
  const problem = namespaceProblem(container)
  return problem === undefined
    ? Effect.void
    : Effect.fail(new ValidationError({ subject: "container", detail: problem }))
}

const checkCommand = (command: ReadonlyArray<string>): Effect.Effect<void, ValidationError> => {
  if (!Array.isArray(command) || command.length === 0) {
    return Effect.fail(new ValidationError({ subject: "command", detail: "must name a program (got an empty command)" }))
  }
  if (command.some((word) => typeof word !== "string")) {
    return Effect.fail(new ValidationError({ subject: "command", detail: "every word must be a string" }))
  }
  if (command[0] === "") {
    return Effect.fail(new ValidationError({ subject: "command", detail: "the program name must not be empty" }))
  }
  return Effect.void
}

const checkPort = (port: number, subject = "port"): Effect.Effect<number, ValidationError> =>
  Number.isInteger(port) && port >= 1 && port <= 65535
    ? Effect.succeed(port)
    : Effect.fail(new ValidationError({ subject, detail: `must be an integer from 1 to 65535 (got ${String(port)})` }))

// ---------------------------------------------------------------------------
// Connecting
// ---------------------------------------------------------------------------

const headersFor = (
  credentials: Credentials,
  config: KubeConfigService
): Effect.Effect<Record<string, string | ReadonlyArray<string>>, KubeConfigError> => {
  const headers: Record<string, string | ReadonlyArray<string>> = { "user-agent": userAgent }
  // as the request path does (`Impersonate.apply`): a list is sent as one header line per value
  if (config.impersonate !== undefined) {
    for (const [name, values] of Impersonate.headers(config.impersonate)) {
      headers[name] = values.length === 1 ? values[0]! : values
    }
  }
  return Effect.map(authorizationHeader(credentials, config), (authorization) => {
    if (authorization !== undefined) headers.authorization = authorization
    return headers
  })
}

/** Where a connection goes, as errors show it (no query: a command may hold anything). */
interface Where {
  readonly path: string
  /** `https://host/path`, for transport errors. */
  readonly shownUrl: string
}

const dialOnce = (
  config: KubeConfigService,
  url: string,
  protocols: ReadonlyArray<string>,
  handlers: Handlers,
  proxy: ProxyOptions | undefined
): Effect.Effect<Socket | DialFailure, KubeConfigError> =>
  Effect.gen(function*() {
    const credentials = yield* config.auth.credentials
    const headers = yield* headersFor(credentials, config)
    const dialer = Option.getOrElse(yield* Effect.serviceOption(WebSocketDialer), () => wsDialer)
    const request: DialRequest = {
      url,
      protocols,
      headers,
      tls: {
        rejectUnauthorized: !config.tls.insecureSkipTlsVerify,
        ca: config.tls.ca,
        servername: config.tls.serverName,
        cert: credentials.clientCertificate?.cert,
        key: credentials.clientCertificate === undefined ? undefined : Redacted.value(credentials.clientCertificate.key)
      },
      proxy
    }
    // interrupted while dialing: a socket that opens afterwards is closed at once
    return yield* Effect.callback<Socket | DialFailure>((resume) => {
      let cancelled = false
      dialer.dial(request, handlers).then(
        (socket) => (cancelled ? socket.close() : resume(Effect.succeed(socket))),
        (failure: unknown) =>
          resume(Effect.succeed(
            typeof failure === "object" && failure !== null && "_tag" in failure
              ? failure as DialFailure
              : { _tag: "Unreachable", detail: failure instanceof globalThis.Error ? failure.message : "dial failed" }
          ))
      )
      return Effect.sync(() => {
        cancelled = true
      })
    })
  })

const isSocket = (u: Socket | DialFailure): u is Socket => !("_tag" in u)

/**
 * Opens a connection for the scope's lifetime. A 401 makes the auth provider refresh,
 * and the dial is tried once more when fresh credentials may differ.
 */
const connect = (
  namespace: string,
  name: string,
  subresource: "exec" | "attach" | "portforward",
  query: string,
  protocols: ReadonlyArray<string>,
  handlers: Handlers
): Effect.Effect<Socket, Error, KubeConfig | Scope.Scope> =>
  Effect.gen(function*() {
    const config = yield* KubeConfig
    const path = `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods/${encodeURIComponent(name)}/${subresource}`
    const where: Where = { path, shownUrl: `${config.server}${path}` }
    const url = `${config.server.replace(/^http/i, "ws")}${path}?${query}`
    // only the default dialer goes over the network (FakeCluster.layer's stays in memory)
    let proxy: ProxyOptions | undefined
    if (Option.isNone(yield* Effect.serviceOption(WebSocketDialer))) {
      // as the request path picks it; a proxy variable that cannot be used fails rather than dial around it
      const found = yield* clusterProxy(config)
      if (found.problem !== undefined) {
        return yield* Effect.fail(
          transport(where.shownUrl, `cannot open a WebSocket for ${subresource}: ${found.problem}`)
        )
      }
      proxy = found.proxy
    }
    // the socket's finalizer is added in the same uninterruptible step that receives it
    const dial = Effect.uninterruptibleMask((restore) =>
      Effect.tap(
        restore(dialOnce(config, url, protocols, handlers, proxy)),
        (result) => isSocket(result) ? Effect.addFinalizer(() => Effect.sync(() => result.close())) : Effect.void
      )
    )
    let result = yield* dial
    if (!isSocket(result) && result._tag === "Refused" && result.status === 401 && (yield* config.auth.invalidate)) {
      result = yield* dial
    }
    if (isSocket(result)) return result
    return yield* Effect.fail(
      result._tag === "Refused"
        ? apiErrorFrom({ method: "GET", path }, result.status, result.body, result.retryAfter)
        : transport(where.shownUrl, `cannot open a WebSocket for ${subresource}: ${result.detail}`)
    )
  })

const resolveNamespace = (target: Exec.Target): Effect.Effect<string, ValidationError, KubeConfig> =>
  Effect.flatMap(KubeConfig, (config) => checkNamespace(target.namespace ?? config.namespace))

// ---------------------------------------------------------------------------
// exec and attach
// ---------------------------------------------------------------------------

const encoder = new TextEncoder()
const decoder = new TextDecoder()
const bytesOf = (data: Uint8Array | string): Uint8Array => (typeof data === "string" ? encoder.encode(data) : data)

/** Messages are kept at most this large; bigger writes are split. */
const maxMessage = 256 * 1024

/** Unread stdout messages before the socket stops reading. */
const highWater = 64

const session = (
  target: Exec.Target,
  name: string,
  subresource: "exec" | "attach",
  command: ReadonlyArray<string> | undefined,
  options: Exec.StreamOptions
): Effect.Effect<Exec.ExecStream, Error, KubeConfig | Scope.Scope> =>
  Effect.gen(function*() {
    yield* checkTarget(target, subresource)
    yield* checkName(name, "pod name")
    if (command !== undefined) yield* checkCommand(command)
    yield* checkContainer(options.container)
    const namespace = yield* resolveNamespace(target)
    const config = yield* KubeConfig
    const shownUrl = `${config.server}/api/v1/namespaces/${namespace}/pods/${name}/${subresource}`
    const tty = options.tty ?? false
    const wantStdin = options.stdin ?? true

    // the queues carry their own end (`Cause.Done`) or failure, after the messages still in them
    const stdout = yield* Queue.unbounded<Uint8Array, Error | Cause.Done>()
    const stderr = yield* Queue.unbounded<Uint8Array, Error | Cause.Done>()
    const exit = yield* Deferred.make<number, Error>()
    let ended = false
    let statusArrived = false
    const endStreams = (failure: Error | undefined) => {
      if (ended) return
      ended = true
      if (failure === undefined) {
        Queue.endUnsafe(stdout)
        Queue.endUnsafe(stderr)
      } else {
        Queue.failCauseUnsafe(stdout, Cause.fail(failure))
        Queue.failCauseUnsafe(stderr, Cause.fail(failure))
      }
    }
    const handlers: Handlers = {
      onMessage: (data) => {
        if (data.length === 0) return
        switch (data[0]) {
          case Protocol.Channel.stdout:
            if (!ended && data.length > 1) {
              Queue.offerUnsafe(stdout, data.subarray(1))
              if (!paused && backlog() > highWater && socket !== undefined) {
                paused = true
                socket.pause()
              }
            }
            return
          case Protocol.Channel.stderr:
            if (!ended && data.length > 1) Queue.offerUnsafe(stderr, data.subarray(1))
            return
          case Protocol.Channel.status: {
            const outcome = Protocol.parseStatus(decoder.decode(data.subarray(1)))
            statusArrived = true
            Deferred.doneUnsafe(
              exit,
              outcome._tag === "Exited"
                ? Exit.succeed(outcome.exitCode)
                : Exit.fail(apiErrorFromStatus({ method: "GET", path: shownPath(shownUrl) }, statusWithCode(outcome.status)))
            )
            return
          }
        }
      },
      onClose: (clean, detail) => {
        const lost = transport(shownUrl, `the ${subresource} connection ended before the exit status arrived: ${detail}`)
        // a clean close after the status ends the output; anything else loses it
        endStreams(clean || statusArrived ? undefined : lost)
        Deferred.doneUnsafe(exit, Exit.fail(lost))
      }
    }
    // stdout is read at the consumer's pace: past `highWater` unread messages the socket
    // stops reading (the server then stops sending), and reads again below half of it.
    // stderr is not counted, so a caller that never reads it cannot stall stdout.
    let socket: Socket | undefined
    let paused = false
    const backlog = () => Queue.sizeUnsafe(stdout)
    const resumeIfDrained = Effect.sync(() => {
      if (paused && backlog() <= highWater / 2) {
        paused = false
        socket?.resume()
      }
    })
    socket = yield* connect(
      namespace,
      name,
      subresource,
      Protocol.streamQuery({
        command,
        container: options.container,
        stdin: wantStdin,
        stdout: true,
        stderr: true,
        tty
      }),
      Protocol.execProtocols,
      handlers
    )
    const open = socket
    const protocol = open.protocol as Protocol.Protocol
    const send = (message: Uint8Array): Effect.Effect<void, Error> =>
      Effect.tryPromise({
        try: () => open.send(message),
        catch: (cause) => transport(shownUrl, `cannot write to the ${subresource} connection`, cause)
      })
    const write = (data: Uint8Array | string): Effect.Effect<void, Error> => {
      const bytes = bytesOf(data)
      if (bytes.length <= maxMessage) return send(Protocol.frame(Protocol.Channel.stdin, bytes))
      return Effect.forEach(
        Array.from({ length: Math.ceil(bytes.length / maxMessage) }, (_, i) => bytes.subarray(i * maxMessage, (i + 1) * maxMessage)),
        (part) => send(Protocol.frame(Protocol.Channel.stdin, part)),
        { discard: true }
      )
    }
    let stdinClosed = false
    const end: Effect.Effect<void, Error> = Effect.suspend(() => {
      if (stdinClosed || protocol !== Protocol.v5) return Effect.void
      stdinClosed = true
      return send(Protocol.closeFrame(Protocol.Channel.stdin))
    })
    const resize = (columns: number, rows: number): Effect.Effect<void, Error> =>
      Effect.gen(function*() {
        yield* checkSize(columns, "columns")
        yield* checkSize(rows, "rows")
        if (!tty) {
          return yield* Effect.fail(new ValidationError({ subject: "resize", detail: "needs a tty (tty: true)" }))
        }
        yield* send(Protocol.resizeFrame(columns, rows))
      })
    return {
      protocol,
      stdout: Stream.fromQueue(stdout).pipe(Stream.tap(() => resumeIfDrained)),
      stderr: Stream.fromQueue(stderr),
      write,
      end,
      stdin: Sink.forEach(write).pipe(Sink.mapEffect(() => end)),
      resize,
      exit: Deferred.await(exit)
    }
  })

const checkSize = (value: number, subject: string): Effect.Effect<void, ValidationError> =>
  Number.isInteger(value) && value > 0 && value <= 65535
    ? Effect.void
    : Effect.fail(new ValidationError({ subject, detail: `must be an integer from 1 to 65535 (got ${String(value)})` }))

const shownPath = (url: string): string => new URL(url).pathname

/** A Status from the status channel has no HTTP code of its own: a failure is a 500 unless it says. */
const statusWithCode = (status: Status): Status => (status.code === undefined ? { ...status, code: 500 } : status)

/** @internal */
export const execStream = (
  target: Exec.Target,
  name: string,
  command: ReadonlyArray<string>,
  options: Exec.StreamOptions = {}
) => session(target, name, "exec", command, options)

/** @internal */
export const attach = (target: Exec.Target, name: string, options: Exec.StreamOptions = {}) =>
  session(target, name, "attach", undefined, options)

const stdinStream = (stdin: NonNullable<Exec.ExecOptions["stdin"]>): Stream.Stream<Uint8Array> =>
  typeof stdin === "string" || stdin instanceof Uint8Array ? Stream.make(bytesOf(stdin)) : stdin

/** @internal */
export const exec = (
  target: Exec.Target,
  name: string,
  command: ReadonlyArray<string>,
  options: Exec.ExecOptions = {}
): Effect.Effect<Exec.ExecResult, Error, KubeConfig> =>
  Effect.scoped(
    Effect.gen(function*() {
      const stream = yield* session(target, name, "exec", command, {
        container: options.container,
        tty: options.tty,
        stdin: options.stdin !== undefined
      })
      // stdin is fed beside the output: a command may answer before it has read it all, and
      // a write that fails because the command has ended is not the command's failure
      const feed = options.stdin === undefined
        ? Effect.void
        : Effect.ignore(Stream.run(stdinStream(options.stdin), stream.stdin))
      const [out, err, exitCode] = yield* Effect.all(
        [Stream.runCollect(stream.stdout), Stream.runCollect(stream.stderr), stream.exit, feed],
        { concurrency: "unbounded" }
      )
      const stdoutBytes = concatBytes(out)
      const stderrBytes = concatBytes(err)
      return {
        exitCode,
        stdout: decoder.decode(stdoutBytes),
        stderr: decoder.decode(stderrBytes),
        stdoutBytes,
        stderrBytes,
        protocol: stream.protocol
      }
    })
  )

// ---------------------------------------------------------------------------
// port-forward
// ---------------------------------------------------------------------------

/** @internal */
export const portForward = (
  target: Exec.Target,
  name: string,
  ports: ReadonlyArray<number>
): Effect.Effect<ReadonlyArray<Exec.PortForward>, Error, KubeConfig | Scope.Scope> =>
  Effect.gen(function*() {
    yield* checkTarget(target, "portforward")
    yield* checkName(name, "pod name")
    if (ports.length === 0) {
      return yield* Effect.fail(new ValidationError({ subject: "ports", detail: "at least one port is needed" }))
    }
    yield* Effect.forEach(ports, (port) => checkPort(port))
    const namespace = yield* resolveNamespace(target)
    const config = yield* KubeConfig
    const shownUrl = `${config.server}/api/v1/namespaces/${namespace}/pods/${name}/portforward`
    const reads = yield* Effect.forEach(ports, () => Queue.unbounded<Uint8Array, Error | Cause.Done>())
    const opened = ports.map(() => [false, false])
    const errors = ports.map(() => "")
    let ended = false
    const handlers: Handlers = {
      onMessage: (data) => {
        if (data.length === 0 || ended) return
        const index = Math.floor(data[0]! / 2)
        const isError = data[0]! % 2 === 1
        if (index >= ports.length) return
        let payload = data.subarray(1)
        const seen = opened[index]!
        if (!seen[isError ? 1 : 0]) {
          // the first frame of each channel opens with its port number
          seen[isError ? 1 : 0] = true
          payload = payload.subarray(2)
        }
        if (payload.length === 0) return
        if (isError) errors[index] += decoder.decode(payload)
        else Queue.offerUnsafe(reads[index]!, payload)
      },
      onClose: (clean, detail) => {
        ended = true
        ports.forEach((port, i) => {
          const error = errors[i]!
          if (error === "" && clean) {
            Queue.endUnsafe(reads[i]!)
            return
          }
          Queue.failCauseUnsafe(
            reads[i]!,
            Cause.fail(
              error !== ""
                ? transport(shownUrl, `port ${port}: ${error}`)
                : transport(shownUrl, `the port-forward connection to port ${port} was lost: ${detail}`)
            )
          )
        })
      }
    }
    const query = new URLSearchParams(ports.map((p) => ["ports", String(p)])).toString()
    const socket = yield* connect(namespace, name, "portforward", query, Protocol.portForwardProtocols, handlers)
    return ports.map((port, i): Exec.PortForward => {
      const write = (data: Uint8Array | string): Effect.Effect<void, Error> =>
        Effect.tryPromise({
          try: () => socket.send(Protocol.frame(2 * i, bytesOf(data))),
          catch: (cause) => transport(shownUrl, `cannot write to port ${port}`, cause)
        })
      return {
        port,
        read: Stream.fromQueue(reads[i]!),
        write,
        sink: Sink.forEach(write)
      }
    })
  })

/** What a local socket receives, read as the stream pulls (the socket waits while the stream is behind). */
const fromSocket = (local: Net.Socket): Stream.Stream<Uint8Array, Error> =>
  NodeStream.fromReadable<Uint8Array, Error>({
    evaluate: () => local,
    onError: (cause) => transport(`tcp://${local.localAddress}`, "the local connection failed", cause),
    // the connection's own finalizer destroys it, after both directions are done
    closeOnDone: false
  })

/** @internal */
export const portForwardListen = (
  target: Exec.Target,
  name: string,
  options: Exec.ListenOptions
): Effect.Effect<Exec.Listener, Error, KubeConfig | Scope.Scope> =>
  Effect.gen(function*() {
    yield* checkTarget(target, "portforward")
    yield* checkName(name, "pod name")
    const port = yield* checkPort(options.port)
    if (options.localPort !== undefined && options.localPort !== 0) yield* checkPort(options.localPort, "localPort")
    yield* resolveNamespace(target)
    const run = yield* FiberSet.makeRuntime<KubeConfig>()
    const address = options.address ?? "127.0.0.1"
    const sockets = new Set<Net.Socket>()
    const forward = (local: Net.Socket) =>
      Effect.scoped(
        Effect.gen(function*() {
          const [remote] = yield* portForward(target, name, [port])
          const toLocal = Stream.runForEach(remote!.read, (chunk) =>
            Effect.callback<void>((resume) => {
              local.write(chunk, () => resume(Effect.void))
            }))
          const toRemote = Stream.runForEach(fromSocket(local), (chunk) => remote!.write(chunk))
          yield* Effect.raceFirst(toLocal, toRemote)
        })
      ).pipe(
        // one connection's failure is that connection's: the listener goes on
        Effect.catchCause((cause) => Effect.logDebug("port-forward connection ended", cause)),
        Effect.ensuring(Effect.sync(() => local.destroy()))
      )
    const server = Net.createServer((local) => {
      sockets.add(local)
      local.setNoDelay(true)
      local.on("close", () => sockets.delete(local))
      local.on("error", () => local.destroy())
      run(forward(local))
    })
    const bound = yield* Effect.callback<Net.AddressInfo, Error>((resume) => {
      server.once("error", (error) => resume(Effect.fail(transport(`tcp://${address}`, `cannot listen: ${error.message}`))))
      server.listen(options.localPort ?? 0, address, () => resume(Effect.succeed(server.address() as Net.AddressInfo)))
    })
    yield* Effect.addFinalizer(() =>
      Effect.callback<void>((resume) => {
        for (const s of sockets) s.destroy()
        server.close(() => resume(Effect.void))
      })
    )
    return { address: bound.address, port: bound.port }
  })

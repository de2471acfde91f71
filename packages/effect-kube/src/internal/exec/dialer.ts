/**
 * How a WebSocket to the API server is opened. The default dials with the `ws` package
 * (TLS material from the KubeConfig, given per connection); `FakeCluster.layer` provides
 * an in-memory dialer that reaches the fake's exec handler directly, so exec works
 * against the in-memory fake too. The dialer is looked up with `Effect.serviceOption`,
 * so operations keep requiring only `KubeConfig | HttpClient`.
 *
 * @internal
 */
import * as Context from "effect/Context"
import type * as Net from "node:net"
import type WebSocketClass from "ws"
import type { ProxyOptions } from "../../KubeConfig.js"

/** What to dial. The headers hold the Authorization header: never show them. @internal */
export interface DialRequest {
  /** `wss://host:port/path?query` (or `ws://`). */
  readonly url: string
  readonly protocols: ReadonlyArray<string>
  /** A list is sent as one header line per value (`Impersonate-Group`). */
  readonly headers: Readonly<Record<string, string | ReadonlyArray<string>>>
  readonly tls: {
    readonly ca?: string | undefined
    readonly cert?: string | undefined
    readonly key?: string | undefined
    readonly servername?: string | undefined
    readonly rejectUnauthorized: boolean
  }
  /** The proxy to tunnel through (CONNECT, or SOCKS5) before the server's TLS. */
  readonly proxy?: ProxyOptions | undefined
}

/** What the connection reports, once it is open. @internal */
export interface Handlers {
  readonly onMessage: (data: Uint8Array) => void
  /** `clean`: the peer closed with a close frame (1000); otherwise the connection was lost. */
  readonly onClose: (clean: boolean, detail: string) => void
}

/** An open connection. @internal */
export interface Socket {
  /** The agreed subprotocol. */
  readonly protocol: string
  /** Resolves once the message has been handed to the network (backpressure). */
  readonly send: (data: Uint8Array) => Promise<void>
  /** An orderly close (a close frame, then the connection is cut if the peer does not answer). */
  readonly close: () => void
  /** Stops reading from the network until `resume` (backpressure towards the server). */
  readonly pause: () => void
  readonly resume: () => void
}

/** Why a dial failed: the server answered HTTP instead of upgrading, or could not be reached. @internal */
export type DialFailure =
  | {
    readonly _tag: "Refused"
    readonly status: number
    readonly body: string
    readonly retryAfter?: string | undefined
  }
  | { readonly _tag: "Unreachable"; readonly detail: string }

/** @internal */
export interface Dialer {
  /** Rejects with a `DialFailure`. */
  readonly dial: (request: DialRequest, handlers: Handlers) => Promise<Socket>
}

/** @internal */
export class WebSocketDialer
  extends Context.Service<WebSocketDialer, Dialer>()("effect-kube/internal/WebSocketDialer")
{}

const maxRefusalBody = 64 * 1024

/** Bytes a connection may have queued before a write waits for them to reach the network. */
const maxBuffered = 1024 * 1024

/**
 * `ws` (about 15 files, ~35 ms of a cold start) is loaded on the first dial, not when the
 * package is imported: most programs never exec.
 */
let loading: Promise<typeof WebSocketClass> | undefined
const loadWebSocket = (): Promise<typeof WebSocketClass> => (loading ??= import("ws").then((module) => module.default))

/** The default dialer, over `ws`. @internal */
export const wsDialer: Dialer = {
  dial: (request, handlers) =>
    loadWebSocket().then(
      (WebSocket) =>
        request.proxy === undefined
          ? dialWith(WebSocket, request, handlers, undefined)
          : throughProxy(request.proxy, request).then((tunnel) => dialWith(WebSocket, request, handlers, tunnel)),
      (error: unknown) =>
        Promise.reject<Socket>({
          _tag: "Unreachable",
          detail: `the ws package could not be loaded: ${error instanceof Error ? error.message : String(error)}`
        } satisfies DialFailure)
    )
}

/** The tunnel, loaded (with node:net and node:tls) on the first dial through a proxy. */
const throughProxy = (proxy: ProxyOptions, request: DialRequest): Promise<Net.Socket> => {
  const url = new URL(request.url)
  const secure = url.protocol === "wss:"
  const target = { host: url.hostname.replace(/^\[|\]$/g, ""), port: url.port === "" ? (secure ? 443 : 80) : Number(url.port) }
  return import("./tunnel.js").then(
    (Tunnel) =>
      Tunnel.open(proxy, target, request.tls.ca).then(
        (socket) => (secure ? Tunnel.secure(socket, target.host, request.tls) : socket),
        (error: Error) => Promise.reject<Net.Socket>({ _tag: "Unreachable", detail: error.message } satisfies DialFailure)
      )
  )
}

const dialWith = (
  WebSocket: typeof WebSocketClass,
  request: DialRequest,
  handlers: Handlers,
  tunnel: Net.Socket | undefined
): Promise<Socket> =>
  new Promise<Socket>((resolve, reject) => {
    let opened = false
    let settled = false
    const fail = (failure: DialFailure) => {
      if (settled) return
      settled = true
      reject(failure)
    }
    const ws = new WebSocket(request.url, [...request.protocols], {
      // Node's request sends a list as one line per value; ws passes the headers through as they are
      headers: { ...request.headers } as Record<string, string>,
      perMessageDeflate: false,
      handshakeTimeout: 30_000,
      maxPayload: 256 * 1024 * 1024,
      // through a proxy: the tunnel (with the server's TLS inside it) is the connection
      ...(tunnel !== undefined ? { createConnection: () => tunnel } : {}),
      rejectUnauthorized: request.tls.rejectUnauthorized,
      ...(request.tls.ca !== undefined ? { ca: request.tls.ca } : {}),
      ...(request.tls.cert !== undefined ? { cert: request.tls.cert } : {}),
      ...(request.tls.key !== undefined ? { key: request.tls.key } : {}),
      ...(request.tls.servername !== undefined ? { servername: request.tls.servername } : {})
    })
    ws.binaryType = "nodebuffer"
    ws.on("unexpected-response", (req, res) => {
      const chunks: Array<Buffer> = []
      let size = 0
      res.on("data", (chunk: Buffer) => {
        if (size < maxRefusalBody) chunks.push(chunk)
        size += chunk.length
      })
      const done = () => {
        const retryAfter = res.headers["retry-after"]
        fail({
          _tag: "Refused",
          status: res.statusCode ?? 0,
          body: Buffer.concat(chunks).toString("utf8").slice(0, maxRefusalBody),
          retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : retryAfter
        })
        req.destroy()
      }
      res.on("end", done)
      res.on("error", done)
    })
    ws.on("open", () => {
      opened = true
      settled = true
      resolve({
        protocol: ws.protocol,
        // a write waits for the network only when more than `maxBuffered` bytes are queued:
        // waiting on every message costs a turn of the event loop (and a syscall) each
        send: (data) =>
          new Promise<void>((done, failed) => {
            if (ws.readyState !== WebSocket.OPEN) return failed(new Error("the connection is closed"))
            if (ws.bufferedAmount + data.length <= maxBuffered) {
              ws.send(data, { binary: true })
              return done()
            }
            ws.send(data, { binary: true }, (error) => (error ? failed(error) : done()))
          }),
        close: () => {
          if (ws.readyState === WebSocket.CLOSED) return
          ws.close(1000)
          // a peer that does not answer the close frame does not keep the socket open
          setTimeout(() => ws.terminate(), 1000).unref()
        },
        pause: () => ws.pause(),
        resume: () => ws.resume()
      })
    })
    ws.on("message", (data: Buffer) => handlers.onMessage(data))
    ws.on("error", (error) => {
      // only the message: an error object may hold the request it failed on
      if (!opened) fail({ _tag: "Unreachable", detail: error.message })
    })
    ws.on("close", (code, reason) => {
      if (!opened) return fail({ _tag: "Unreachable", detail: `closed during the handshake (${code})` })
      handlers.onClose(
        code === 1000,
        code === 1006 ? "the connection was lost" : `closed with code ${code}${reason.length > 0 ? `: ${reason}` : ""}`
      )
    })
  })

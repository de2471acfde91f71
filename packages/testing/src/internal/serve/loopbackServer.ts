/**
 * Serves a `FakeServer` on a loopback `node:http` or `node:https` server and writes a
 * kubeconfig for it, so that kubectl and other clients talk to it unmodified. With TLS it
 * is a `node:http2` secure server offering HTTP/2 by ALPN with HTTP/1.1 beside it
 * (`allowHTTP1`), as kube-apiserver does: HTTP/2 requests arrive through the same handler
 * (Node's compatibility API), HTTP/1.1 ones and the WebSocket upgrades of exec, attach and
 * port-forward as before. A reset fault cuts an HTTP/2 request's stream (RST_STREAM), the
 * connection's other streams going on; an HTTP/1.1 request's connection, as before.
 *
 * @internal
 */
import * as Fs from "node:fs"
import * as Http from "node:http"
import * as Http2 from "node:http2"
import * as Https from "node:https"
import type * as Net from "node:net"
import type * as Tls from "node:tls"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Zlib from "node:zlib"
import { selfSigned } from "./certificate.js"
import { makeUpgradeHandler } from "../kubelet/exec.js"
import { ConnectionReset, type RawResponse } from "./http.js"
import type { FakeServer } from "./server.js"
import { cutAfter, type Sink } from "./stream.js"
import type { Listening, ListenOptions } from "../types.js"

/** The token an https kubeconfig carries when the server takes any (it has no token of its own). */
const anyToken = "effect-kube-fake-cluster"

const kubeconfigText = (
  url: string,
  namespace: string,
  token: string | undefined,
  ca: string | undefined,
  insecure: boolean
): string => {
  const cluster = [
    `    server: ${url}`,
    ...(ca !== undefined ? [`    certificate-authority-data: ${Buffer.from(ca).toString("base64")}`] : []),
    ...(insecure ? ["    insecure-skip-tls-verify: true"] : [])
  ]
  // kubectl asks a terminal for a username when an https cluster's user has no credentials at all: without a token of
  // its own the fake accepts any, so the kubeconfig carries one that names it (plain http is never asked)
  const tls = url.startsWith("https:")
  const user = token !== undefined
    ? [`    token: ${JSON.stringify(token)}`]
    : tls
    ? [`    token: ${JSON.stringify(anyToken)}`]
    : ["    {}"]
  return [
    "apiVersion: v1",
    "kind: Config",
    "clusters:",
    "- name: fake-cluster",
    "  cluster:",
    ...cluster,
    "users:",
    "- name: fake-user",
    "  user:",
    ...user,
    "contexts:",
    "- name: fake-cluster",
    "  context:",
    "    cluster: fake-cluster",
    "    user: fake-user",
    `    namespace: ${namespace}`,
    "current-context: fake-cluster",
    ""
  ].join("\n")
}

const readBytes = (req: Http.IncomingMessage): Promise<Buffer> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => resolve(Buffer.concat(chunks)))
    req.on("error", reject)
  })

const readText = (req: Http.IncomingMessage): Promise<string> => readBytes(req).then((b) => b.toString("utf8"))

/** kube-apiserver's threshold: answers smaller than this are sent as they are. */
const gzipThreshold = 128 * 1024

/** Whether an `Accept-Encoding` header accepts gzip (a `q=0` refuses it). */
const acceptsGzip = (header: string | undefined): boolean => {
  if (header === undefined) return false
  for (const part of header.split(",")) {
    const [coding, ...params] = part.split(";")
    if (coding!.trim().toLowerCase() !== "gzip") continue
    const q = params.map((p) => p.trim().toLowerCase()).find((p) => p.startsWith("q="))
    return q === undefined || Number(q.slice(2)) > 0
  }
  return false
}

/**
 * Cuts one request: its stream on HTTP/2 (the connection's other streams go on), its
 * connection on HTTP/1.1.
 */
const resetRequest = (req: Http.IncomingMessage): void => {
  const stream = (req as unknown as { readonly stream?: Http2.ServerHttp2Stream }).stream
  if (stream !== undefined) stream.close(Http2.constants.NGHTTP2_INTERNAL_ERROR)
  else req.socket.destroy()
}

const respond = (
  req: Http.IncomingMessage,
  res: Http.ServerResponse,
  raw: RawResponse,
  abort: AbortController,
  gzipped: (() => void) | undefined
): void => {
  if (raw.reset !== undefined && raw.reset.afterBytes === undefined) {
    if (raw.body !== undefined && typeof raw.body !== "string") raw.body.cancel()
    resetRequest(req)
    return
  }
  const body = raw.body
  if (raw.reset === undefined && (body === undefined || typeof body === "string")) {
    const payload = body ?? ""
    if (
      gzipped !== undefined && payload.length >= gzipThreshold / 4 && req.method !== "HEAD" &&
      Buffer.byteLength(payload) > gzipThreshold && acceptsGzip(req.headers["accept-encoding"])
    ) {
      // as kube-apiserver: gzip level 1, for one-shot answers only (never a watch or a log follow)
      Zlib.gzip(payload, { level: 1 }, (error, compressed) => {
        if (error !== null) {
          res.writeHead(500, { "content-type": "text/plain" })
          res.end(String(error))
          return
        }
        gzipped()
        res.writeHead(raw.status, {
          ...raw.headers,
          "content-encoding": "gzip",
          vary: "Accept-Encoding",
          "content-length": compressed.length
        })
        res.end(compressed)
      })
      return
    }
    res.writeHead(raw.status, { ...raw.headers, "content-length": Buffer.byteLength(payload) })
    res.end(payload)
    return
  }
  if (body === undefined || typeof body === "string") {
    // a reset part way through a one-shot answer: announce the whole length, send less
    const payload = Buffer.from(body ?? "")
    res.writeHead(raw.status, { ...raw.headers, "content-length": payload.length })
    res.flushHeaders()
    const cut = Math.min(raw.reset!.afterBytes!, payload.length)
    if (cut > 0) res.write(payload.subarray(0, cut))
    setImmediate(() => resetRequest(req))
    return
  }
  res.writeHead(raw.status, raw.headers)
  res.flushHeaders()
  let finished = false
  let sink: Sink = {
    write(chunk) {
      if (!finished) res.write(chunk)
    },
    end() {
      if (finished) return
      finished = true
      res.end()
    },
    fail() {
      if (finished) return
      finished = true
      // let what was written reach the client, then cut the connection
      setImmediate(() => resetRequest(req))
    }
  }
  if (raw.reset !== undefined) sink = cutAfter(sink, raw.reset.afterBytes!, () => body.cancel())
  res.on("close", () => {
    if (!finished) {
      finished = true
      body.cancel()
    }
    abort.abort()
  })
  body.start(sink)
}

/**
 * What the fake announces by default. Not kube-apiserver's: 1.35 announces 100 unless its
 * `--http2-max-streams-per-connection` says otherwise (the flag's 0 means 100, the e2e suite checks it).
 */
const defaultMaxConcurrentStreams = 1000

/**
 * The TLS server offering h2 and HTTP/1.1 by ALPN. It is typed as the `node:http` server it
 * stands in for: the compatibility API's requests and responses have what the handler uses,
 * and HTTP/1.1 connections (upgrades included) are Node's own `node:http` ones.
 */
const h2Server = (
  tls: { readonly cert: string; readonly key: string },
  maxConcurrentStreams: number,
  handler: (req: Http.IncomingMessage, res: Http.ServerResponse) => void,
  sessions: Set<Http2.ServerHttp2Session>
): Http.Server => {
  const server = Http2.createSecureServer(
    { cert: tls.cert, key: tls.key, allowHTTP1: true, settings: { maxConcurrentStreams } },
    handler as unknown as (req: Http2.Http2ServerRequest, res: Http2.Http2ServerResponse) => void
  )
  server.on("session", (session: Http2.ServerHttp2Session) => {
    sessions.add(session)
    session.on("close", () => sessions.delete(session))
    // a client that goes away or a cut stream is not the server's error
    session.on("error", () => undefined)
  })
  return server as unknown as Http.Server
}

/** Writes the kubeconfig into `dir`, or a new temporary directory removed again on failure. */
const writeKubeconfig = (
  given: string | undefined,
  text: string
): { readonly dir: string; readonly path: string } => {
  const dir = given ?? Fs.mkdtempSync(Path.join(Os.tmpdir(), "effect-kube-fake-"))
  const path = Path.join(dir, "kubeconfig")
  try {
    Fs.writeFileSync(path, text, { mode: 0o600 })
  } catch (e) {
    if (given === undefined) Fs.rmSync(dir, { recursive: true, force: true })
    throw e
  }
  return { dir, path }
}

/**
 * Why serving failed: the server could not be created from the TLS options, could not
 * bind its address, or its kubeconfig could not be written. Nothing is left open.
 *
 * @internal
 */
export class ServeFailure extends Error {
  constructor(
    readonly reason: "Tls" | "Listen" | "Kubeconfig",
    readonly address: string,
    override readonly cause: unknown
  ) {
    super(`${reason} failed for ${address}`)
    this.name = "ServeFailure"
  }
}

/** @internal */
export const listen = async (server: FakeServer, options: ListenOptions = {}): Promise<Listening> => {
  const sockets = new Set<Net.Socket>()
  let connectionsOpened = 0
  let gzippedAnswers = 0
  const gzipped = options.compression === false ? undefined : () => {
    gzippedAnswers++
  }
  const handler = (req: Http.IncomingMessage, res: Http.ServerResponse) => {
    const abort = new AbortController()
    // A request closes once its body has been read, which is not the client going away:
    // only an incomplete one is. (Aborting on every close cut delayNext short for any
    // request with a body.) A client that goes away later closes the response.
    req.on("close", () => {
      if (!req.complete && !res.writableFinished && res.headersSent === false) abort.abort()
    })
    res.on("close", () => abort.abort())
    server.handleRaw({
      method: req.method ?? "GET",
      url: req.url ?? "/",
      header: (name) => {
        const v = req.headers[name.toLowerCase()]
        return Array.isArray(v) ? v.join(", ") : v
      },
      text: () => readText(req),
      bytes: () => readBytes(req),
      signal: abort.signal
    }).then(
      (raw) => respond(req, res, raw, abort, gzipped),
      (error) => {
        if (error instanceof ConnectionReset || abort.signal.aborted) {
          resetRequest(req)
          return
        }
        res.writeHead(500, { "content-type": "text/plain" })
        res.end(String(error))
      }
    )
  }
  const host = options.host ?? "127.0.0.1"
  const tls = options.tls === "self-signed" ? selfSigned(host) : options.tls
  const port = options.port ?? 0
  const address = `${host.includes(":") ? `[${host}]` : host}:${port}`
  let http: Http.Server
  const sessions = new Set<Http2.ServerHttp2Session>()
  try {
    http = tls === undefined
      ? Http.createServer({ keepAlive: true }, handler)
      : options.http2 === false
      ? Https.createServer({ cert: tls.cert, key: tls.key, keepAlive: true }, handler)
      : h2Server(tls, options.maxConcurrentStreams ?? defaultMaxConcurrentStreams, handler, sessions)
  } catch (cause) {
    throw new ServeFailure("Tls", address, cause)
  }
  // exec, attach and port-forward arrive as WebSocket upgrades
  http.on("upgrade", makeUpgradeHandler(server))
  http.keepAliveTimeout = 65_000
  http.headersTimeout = 66_000
  http.requestTimeout = 0
  http.on(tls !== undefined ? "secureConnection" : "connection", (socket: Net.Socket) => {
    socket.setNoDelay(true)
    connectionsOpened++
    sockets.add(socket)
    socket.on("close", () => sockets.delete(socket))
  })
  await new Promise<void>((resolve, reject) => {
    const failed = (cause: unknown) => reject(new ServeFailure("Listen", address, cause))
    http.once("error", failed)
    try {
      http.listen(port, host, () => {
        http.off("error", failed)
        resolve()
      })
    } catch (cause) {
      // an invalid port or host is thrown rather than emitted
      http.off("error", failed)
      failed(cause)
    }
  })
  const bound = http.address() as Net.AddressInfo
  const url = `${tls !== undefined ? "https" : "http"}://${host.includes(":") ? `[${host}]` : host}:${bound.port}`
  const ownsDir = options.kubeconfigDir === undefined
  const kubeconfig = kubeconfigText(
    url,
    server.defaultNamespace,
    server.options.token,
    tls?.ca,
    tls !== undefined && tls.ca === undefined
  )
  let files: { readonly dir: string; readonly path: string }
  try {
    files = writeKubeconfig(options.kubeconfigDir, kubeconfig)
  } catch (cause) {
    // nothing is left behind: the port is released
    await new Promise<void>((done) => http.close(() => done()))
    throw new ServeFailure("Kubeconfig", url, cause)
  }
  const { dir, path: kubeconfigPath } = files
  let closing: Promise<void> | undefined
  return {
    url,
    kubeconfigPath,
    kubeconfig,
    openConnections: () => sockets.size,
    connectionsOpened: () => connectionsOpened,
    http2Connections: () => [...sockets].filter((socket) => (socket as Tls.TLSSocket).alpnProtocol === "h2").length,
    resetConnections: (filter = () => true) => {
      const chosen = [...sockets].filter((_, index) => filter(index))
      for (const socket of chosen) socket.destroy()
      return chosen.length
    },
    goAway: () => {
      for (const session of sessions) session.close()
      return sessions.size
    },
    gzippedAnswers: () => gzippedAnswers,
    close: () =>
      (closing ??= new Promise<void>((resolve) => {
        const pending = [...sockets].map((s) => new Promise<void>((done) => s.once("close", () => done())))
        const stopped = new Promise<void>((done) => http.close(() => done()))
        for (const s of sockets) s.destroy()
        http.closeAllConnections?.()
        if (ownsDir) Fs.rmSync(dir, { recursive: true, force: true })
        else Fs.rmSync(kubeconfigPath, { force: true })
        Promise.all([stopped, ...pending]).then(() => resolve())
      }))
  }
}

/**
 * Small proxies on loopback for transport tests: an HTTP CONNECT proxy (optionally
 * itself over TLS) and a SOCKS5 proxy, each optionally requiring credentials. Both count
 * the tunnels they opened and record where to, and resolve names through a table first
 * (so that a cluster can be named by a host the client itself cannot resolve).
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as Http from "node:http"
import * as Https from "node:https"
import * as Net from "node:net"

export interface TestProxy {
  /** `http://127.0.0.1:port`, `https://...` or `socks5://...`, without credentials. */
  readonly url: string
  readonly port: number
  /** Tunnels opened so far. */
  readonly tunnels: () => number
  /** `host:port` of every tunnel asked for (granted or not). */
  readonly targets: ReadonlyArray<string>
  /** The Proxy-Authorization header (or SOCKS5 `user:password`) of every attempt, `undefined` when none. */
  readonly authorizations: ReadonlyArray<string | undefined>
}

export interface ProxyOptions {
  /** Required credentials: anything else gets 407 (CONNECT) or an authentication failure (SOCKS5). */
  readonly credentials?: { readonly username: string; readonly password: string } | undefined
  /** Names the proxy resolves itself, e.g. `{ "kube.internal.test": "127.0.0.1" }`. */
  readonly hosts?: Readonly<Record<string, string>> | undefined
  /** Serve the proxy itself over TLS (an https:// proxy). */
  readonly tls?: { readonly cert: string; readonly key: string } | undefined
}

const lifecycle = <S extends Net.Server>(
  server: S,
  scheme: string,
  state: Omit<TestProxy, "url" | "port">
): Effect.Effect<TestProxy, never, Scope.Scope> => {
  const sockets = new Set<Net.Socket>()
  const track = (socket: Net.Socket) => {
    sockets.add(socket)
    socket.on("close", () => sockets.delete(socket))
    socket.on("error", () => undefined)
  }
  server.on("connection", track)
  return Effect.acquireRelease(
    Effect.callback<TestProxy>((resume) => {
      server.listen(0, "127.0.0.1", () => {
        const port = (server.address() as Net.AddressInfo).port
        resume(Effect.succeed({ ...state, url: `${scheme}://127.0.0.1:${port}`, port }))
      })
    }),
    () =>
      Effect.callback<void>((resume) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resume(Effect.void))
      })
  )
}

/** Joins two sockets once the upstream one is connected. */
const splice = (client: Net.Socket, upstream: Net.Socket, head: Buffer) => {
  if (head.length > 0) upstream.write(head)
  client.pipe(upstream)
  upstream.pipe(client)
  client.on("close", () => upstream.destroy())
  upstream.on("close", () => client.destroy())
}

/** An HTTP CONNECT proxy (plain, or over TLS with `tls`). */
export const connectProxy = (options: ProxyOptions = {}): Effect.Effect<TestProxy, never, Scope.Scope> => {
  let tunnels = 0
  const targets: Array<string> = []
  const authorizations: Array<string | undefined> = []
  const expected = options.credentials === undefined
    ? undefined
    : `Basic ${Buffer.from(`${options.credentials.username}:${options.credentials.password}`).toString("base64")}`
  const refuse = (_req: Http.IncomingMessage, res: Http.ServerResponse) => {
    res.statusCode = 405
    res.end("this proxy only tunnels (CONNECT)")
  }
  const server = options.tls === undefined
    ? Http.createServer(refuse)
    : Https.createServer({ cert: options.tls.cert, key: options.tls.key }, refuse)
  server.on("connect", (req: Http.IncomingMessage, client: Net.Socket, head: Buffer) => {
    client.on("error", () => undefined)
    const target = req.url ?? ""
    targets.push(target)
    const authorization = req.headers["proxy-authorization"]
    authorizations.push(authorization)
    if (expected !== undefined && authorization !== expected) {
      client.end("HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm=\"test\"\r\n\r\n")
      return
    }
    const colon = target.lastIndexOf(":")
    const host = target.slice(0, colon).replace(/^\[|\]$/g, "")
    const port = Number(target.slice(colon + 1))
    const upstream = Net.connect(port, options.hosts?.[host] ?? host)
    upstream.on("error", () => client.end("HTTP/1.1 502 Bad Gateway\r\n\r\n"))
    upstream.on("connect", () => {
      tunnels++
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n")
      splice(client, upstream, head)
    })
  })
  return lifecycle(server, options.tls === undefined ? "http" : "https", {
    tunnels: () => tunnels,
    targets,
    authorizations
  })
}

/** A SOCKS5 proxy (RFC 1928, CONNECT only), with username/password (RFC 1929) when `credentials` are given. */
export const socks5Proxy = (options: ProxyOptions = {}): Effect.Effect<TestProxy, never, Scope.Scope> => {
  let tunnels = 0
  const targets: Array<string> = []
  const authorizations: Array<string | undefined> = []
  const server = Net.createServer((client) => {
    client.on("error", () => undefined)
    let buffer = Buffer.alloc(0)
    let stage: "greeting" | "auth" | "request" | "done" = "greeting"
    const onData = (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk])
      for (;;) {
        if (stage === "greeting") {
          if (buffer.length < 2 || buffer.length < 2 + buffer[1]!) return
          const methods = [...buffer.subarray(2, 2 + buffer[1]!)]
          buffer = buffer.subarray(2 + buffer[1]!)
          const wanted = options.credentials === undefined ? 0x00 : 0x02
          if (!methods.includes(wanted)) {
            if (options.credentials !== undefined) authorizations.push(undefined)
            client.end(Buffer.from([0x05, 0xff]))
            stage = "done"
            return
          }
          client.write(Buffer.from([0x05, wanted]))
          stage = wanted === 0x02 ? "auth" : "request"
          continue
        }
        if (stage === "auth") {
          if (buffer.length < 2) return
          const ulen = buffer[1]!
          if (buffer.length < 3 + ulen) return
          const plen = buffer[2 + ulen]!
          if (buffer.length < 3 + ulen + plen) return
          const username = buffer.subarray(2, 2 + ulen).toString("utf8")
          const password = buffer.subarray(3 + ulen, 3 + ulen + plen).toString("utf8")
          buffer = buffer.subarray(3 + ulen + plen)
          authorizations.push(`${username}:${password}`)
          const ok = username === options.credentials!.username && password === options.credentials!.password
          if (!ok) {
            client.end(Buffer.from([0x01, 0x01]))
            stage = "done"
            return
          }
          client.write(Buffer.from([0x01, 0x00]))
          stage = "request"
          continue
        }
        if (stage === "request") {
          if (buffer.length < 5) return
          const type = buffer[3]!
          const addressLength = type === 0x01 ? 4 : type === 0x04 ? 16 : type === 0x03 ? 1 + buffer[4]! : -1
          if (addressLength < 0) {
            client.end(Buffer.from([0x05, 0x08, 0x00, 0x01, 0, 0, 0, 0, 0, 0]))
            stage = "done"
            return
          }
          if (buffer.length < 4 + addressLength + 2) return
          const address = buffer.subarray(4, 4 + addressLength)
          const host = type === 0x01
            ? [...address].join(".")
            : type === 0x03
            ? address.subarray(1).toString("utf8")
            : (address.toString("hex").match(/.{4}/g) ?? []).join(":")
          const port = buffer.readUInt16BE(4 + addressLength)
          const head = buffer.subarray(4 + addressLength + 2)
          stage = "done"
          client.off("data", onData)
          targets.push(`${host}:${port}`)
          const upstream = Net.connect(port, options.hosts?.[host] ?? host)
          upstream.on("error", () => client.end(Buffer.from([0x05, 0x05, 0x00, 0x01, 0, 0, 0, 0, 0, 0])))
          upstream.on("connect", () => {
            tunnels++
            client.write(Buffer.from([0x05, 0x00, 0x00, 0x01, 127, 0, 0, 1, 0, 0]))
            splice(client, upstream, head)
          })
          return
        }
        return
      }
    }
    client.on("data", onData)
  })
  return lifecycle(server, "socks5", { tunnels: () => tunnels, targets, authorizations })
}

/**
 * A tunnel to the API server through a proxy, for the WebSocket of exec, attach and
 * port-forward (the request path's proxies are undici's agents): an HTTP CONNECT through
 * an http or https proxy (client-go's `proxy.go` dialer, with `Proxy-Authorization: Basic`
 * for a URL's credentials), or SOCKS5 (RFC 1928, with RFC 1929 username/password). The
 * server's own TLS is made inside the tunnel by the caller. Failures name the proxy by
 * its printable URL (`scheme://host:port`), never its credentials.
 *
 * @internal
 */
import * as Net from "node:net"
import * as Tls from "node:tls"
import * as Redacted from "effect/Redacted"
import type { ProxyOptions } from "../../KubeConfig.js"

/** How long the proxy may take to open the tunnel. */
const tunnelTimeoutMs = 30_000

/** @internal */
export class TunnelError extends Error {}

const hostAndPort = (url: URL, defaultPort: number) => ({
  host: url.hostname.replace(/^\[|\]$/g, ""),
  port: url.port === "" ? defaultPort : Number(url.port)
})

/** Resolves with the first `length` bytes (or up to the end of the headers) the proxy sends. */
const reader = (socket: Net.Socket | Tls.TLSSocket) => {
  let buffer = Buffer.alloc(0)
  let waiting: { readonly done: (b: Buffer | undefined) => void; readonly want: (b: Buffer) => number } | undefined
  const check = () => {
    if (waiting === undefined) return
    const n = waiting.want(buffer)
    if (n < 0) return
    const taken = buffer.subarray(0, n)
    buffer = buffer.subarray(n)
    const { done } = waiting
    waiting = undefined
    done(taken)
  }
  const onData = (chunk: Buffer) => {
    buffer = Buffer.concat([buffer, chunk])
    check()
  }
  const onEnd = () => {
    const w = waiting
    waiting = undefined
    w?.done(undefined)
  }
  socket.on("data", onData)
  socket.on("end", onEnd)
  socket.on("close", onEnd)
  return {
    /** `want` answers how many bytes make the message, or -1 while there are not enough. */
    read: (want: (b: Buffer) => number): Promise<Buffer | undefined> =>
      new Promise((done) => {
        waiting = { done, want }
        check()
      }),
    /** Stops reading; what came after the proxy's answer (the server's first bytes) is put back. */
    release: () => {
      socket.off("data", onData)
      socket.off("end", onEnd)
      socket.off("close", onEnd)
      if (buffer.length > 0) socket.unshift(buffer)
    }
  }
}

const connected = (socket: Net.Socket | Tls.TLSSocket, event: "connect" | "secureConnect") =>
  new Promise<void>((resolve, reject) => {
    socket.once(event, () => resolve())
    socket.once("error", reject)
  })

const connectTunnel = async (
  proxy: ProxyOptions,
  socket: Net.Socket | Tls.TLSSocket,
  target: string
): Promise<void> => {
  const lines = [`CONNECT ${target} HTTP/1.1`, `Host: ${target}`]
  if (proxy.credentials !== undefined) {
    const { username, password } = Redacted.value(proxy.credentials)
    lines.push(`Proxy-Authorization: Basic ${Buffer.from(`${username}:${password}`).toString("base64")}`)
  }
  socket.write(`${lines.join("\r\n")}\r\n\r\n`)
  const read = reader(socket)
  const head = await read.read((b) => {
    const end = b.indexOf("\r\n\r\n")
    return end === -1 ? (b.length > 64 * 1024 ? b.length : -1) : end + 4
  })
  read.release()
  if (head === undefined) throw new TunnelError(`the proxy ${proxy.url} closed the connection before answering CONNECT`)
  const status = head.toString("latin1").split("\r\n")[0] ?? ""
  const match = /^HTTP\/1\.[01] (\d{3})(?: (.*))?$/.exec(status)
  if (match === null) throw new TunnelError(`the proxy ${proxy.url} did not answer CONNECT in HTTP`)
  if (match[1] !== "200") {
    throw new TunnelError(`the proxy ${proxy.url} refused to tunnel to ${target}: ${match[1]} ${match[2] ?? ""}`.trimEnd())
  }
}

const socksReplies: Record<number, string> = {
  1: "general failure",
  2: "connection not allowed by its rules",
  3: "network unreachable",
  4: "host unreachable",
  5: "connection refused",
  6: "TTL expired",
  7: "command not supported",
  8: "address type not supported"
}

const socksTunnel = async (proxy: ProxyOptions, socket: Net.Socket, host: string, port: number): Promise<void> => {
  const read = reader(socket)
  const credentials = proxy.credentials === undefined ? undefined : Redacted.value(proxy.credentials)
  const refused = (why: string) => new TunnelError(`the SOCKS5 proxy ${proxy.url} refused to tunnel to ${host}:${port}: ${why}`)
  socket.write(Buffer.from(credentials === undefined ? [5, 1, 0] : [5, 2, 0, 2]))
  const choice = await read.read((b) => (b.length >= 2 ? 2 : -1))
  if (choice === undefined || choice[0] !== 5) throw refused("it did not answer in SOCKS5")
  if (choice[1] === 2 && credentials !== undefined) {
    const user = Buffer.from(credentials.username)
    const pass = Buffer.from(credentials.password)
    socket.write(Buffer.concat([Buffer.from([1, user.length]), user, Buffer.from([pass.length]), pass]))
    const auth = await read.read((b) => (b.length >= 2 ? 2 : -1))
    if (auth === undefined || auth[1] !== 0) throw refused("the credentials were not accepted")
  } else if (choice[1] !== 0) {
    throw refused(credentials === undefined ? "it requires authentication" : "no authentication method in common")
  }
  const ipv4 = Net.isIPv4(host)
  const ipv6 = Net.isIPv6(host)
  const address = ipv4
    ? Buffer.from([1, ...host.split(".").map(Number)])
    : ipv6
    ? Buffer.concat([Buffer.from([4]), ipv6Bytes(host)])
    : Buffer.concat([Buffer.from([3, Buffer.byteLength(host)]), Buffer.from(host)])
  const portBytes = Buffer.from([port >> 8, port & 0xff])
  socket.write(Buffer.concat([Buffer.from([5, 1, 0]), address, portBytes]))
  const reply = await read.read((b) => {
    if (b.length < 5) return -1
    const length = b[3] === 1 ? 4 : b[3] === 4 ? 16 : b[3] === 3 ? 1 + b[4]! : 0
    return b.length >= 4 + length + 2 ? 4 + length + 2 : -1
  })
  read.release()
  if (reply === undefined) throw refused("it closed the connection")
  if (reply[1] !== 0) throw refused(socksReplies[reply[1]!] ?? `reply ${reply[1]}`)
}

const ipv6Bytes = (host: string): Buffer => {
  const [head = "", tail = ""] = host.split("::")
  const parts = (s: string) => (s === "" ? [] : s.split(":"))
  const groups = [...parts(head), ...Array(8 - parts(head).length - parts(tail).length).fill("0"), ...parts(tail)]
  return Buffer.from(groups.flatMap((g) => [parseInt(g, 16) >> 8, parseInt(g, 16) & 0xff]))
}

/**
 * Opens a socket to `target` (the API server's host and port) through the proxy. An https
 * proxy is verified against the platform's roots and the cluster's CA, as the request
 * path's proxy agent does; it never sees the client certificate.
 *
 * @internal
 */
export const open = async (
  proxy: ProxyOptions,
  target: { readonly host: string; readonly port: number },
  clusterCa: string | undefined
): Promise<Net.Socket> => {
  const url = new URL(proxy.url)
  const socks = url.protocol === "socks5:"
  const tls = url.protocol === "https:"
  const where = hostAndPort(url, socks ? 1080 : tls ? 443 : 80)
  const socket: Net.Socket = tls
    ? Tls.connect({
      host: where.host,
      port: where.port,
      servername: Net.isIP(where.host) === 0 ? where.host : undefined,
      ALPNProtocols: ["http/1.1"],
      ...(clusterCa !== undefined ? { ca: [...Tls.rootCertificates, clusterCa] } : {})
    })
    : Net.connect({ host: where.host, port: where.port })
  socket.setTimeout(tunnelTimeoutMs, () => socket.destroy(new TunnelError(`the proxy ${proxy.url} did not answer within 30s`)))
  try {
    await connected(socket, tls ? "secureConnect" : "connect").catch((error: Error) => {
      throw new TunnelError(`cannot reach the proxy ${proxy.url}: ${error.message}`)
    })
    const hostPort = Net.isIPv6(target.host) ? `[${target.host}]:${target.port}` : `${target.host}:${target.port}`
    if (socks) await socksTunnel(proxy, socket, target.host, target.port)
    else await connectTunnel(proxy, socket, hostPort)
  } catch (error) {
    socket.destroy()
    throw error instanceof TunnelError ? error : new TunnelError(`the proxy ${proxy.url}: ${(error as Error).message}`)
  }
  socket.setTimeout(0)
  socket.removeAllListeners("error")
  return socket
}

/**
 * The server's TLS inside the tunnel, with the kubeconfig's material, as the direct dial
 * makes it.
 *
 * @internal
 */
export const secure = (
  socket: Net.Socket,
  host: string,
  tls: {
    readonly ca?: string | undefined
    readonly cert?: string | undefined
    readonly key?: string | undefined
    readonly servername?: string | undefined
    readonly rejectUnauthorized: boolean
  }
): Tls.TLSSocket =>
  Tls.connect({
    socket,
    ALPNProtocols: ["http/1.1"],
    rejectUnauthorized: tls.rejectUnauthorized,
    servername: tls.servername ?? (Net.isIP(host) === 0 ? host : undefined),
    ...(tls.ca !== undefined ? { ca: tls.ca } : {}),
    ...(tls.cert !== undefined ? { cert: tls.cert } : {}),
    ...(tls.key !== undefined ? { key: tls.key } : {})
  })

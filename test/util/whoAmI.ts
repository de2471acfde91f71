/**
 * A loopback "who am I" server: every request is answered with what the server saw of the client (its
 * certificate's CN, the SNI name, the path), for the tests of the Node transport and the credentials.
 */
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as Http from "node:http"
import * as Https from "node:https"
import type * as Net from "node:net"
import type * as Tls from "node:tls"
import { pki } from "./pki.js"

export interface Seen {
  readonly cn: string | null
  readonly servername: string | null
  readonly path: string
}

export interface Server {
  readonly url: string
  /** TCP connections accepted so far. */
  readonly connections: () => number
  /** Resolves when every connection accepted so far has been closed. */
  readonly allClosed: Effect.Effect<void>
}

/** A loopback server answering every request with what it saw of the client. */
export const serve = (options: Https.ServerOptions | "http"): Effect.Effect<Server, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.callback<{ server: Http.Server; sockets: Set<Net.Socket>; count: { n: number }; url: string }>((resume) => {
      const handler: Http.RequestListener = (req, res) => {
        const socket = req.socket as Tls.TLSSocket
        const peer = typeof socket.getPeerCertificate === "function" ? socket.getPeerCertificate() : undefined
        const servername = (socket as { servername?: string | false }).servername
        const seen: Seen = {
          cn: typeof peer?.subject?.CN === "string" ? peer.subject.CN : null,
          servername: typeof servername === "string" ? servername : null,
          path: req.url ?? ""
        }
        res.setHeader("content-type", "application/json")
        res.end(JSON.stringify(seen))
      }
      const server = options === "http" ? Http.createServer(handler) : Https.createServer(options, handler)
      // Only the client may close a connection here, so that the test of the layer's
      // finalizer cannot pass by the server's idle timeout.
      server.keepAliveTimeout = 10 * 60_000
      const sockets = new Set<Net.Socket>()
      const count = { n: 0 }
      server.on("connection", (socket: Net.Socket) => {
        count.n++
        sockets.add(socket)
        socket.on("close", () => sockets.delete(socket))
      })
      server.listen(0, "127.0.0.1", () => {
        const port = (server.address() as Net.AddressInfo).port
        resume(Effect.succeed({
          server,
          sockets,
          count,
          url: `${options === "http" ? "http" : "https"}://127.0.0.1:${port}`
        }))
      })
    }),
    ({ server }) =>
      Effect.callback<void>((resume) => {
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      })
  ).pipe(Effect.map(({ count, sockets, url }) => ({
    url,
    connections: () => count.n,
    allClosed: Effect.callback<void>((resume) => {
      let open = sockets.size
      if (open === 0) return resume(Effect.void)
      for (const socket of sockets) {
        socket.once("close", () => {
          if (--open === 0) resume(Effect.void)
        })
      }
    })
  })))

export const getSeen = (url: string) =>
  Effect.flatMap(HttpClient.HttpClient, (client) =>
    client.execute(HttpClientRequest.get(url)).pipe(
      Effect.flatMap((response) => response.json),
      Effect.map((body) => body as unknown as Seen)
    ))

export const serverTls = (): Https.ServerOptions => ({ key: pki().server.key, cert: pki().server.cert })

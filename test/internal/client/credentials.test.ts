/**
 * The request path (internal/client/execute.ts) over the Node transport: what it asks the auth
 * provider for, request by request. Moved out of NodeKube.test.ts, which tests the public module.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as Scope from "effect/Scope"
import * as Http from "node:http"
import * as Https from "node:https"
import type * as Net from "node:net"
import type * as Tls from "node:tls"
import * as Client from "../../../packages/effect-kube/src/internal/client/execute.js"
import * as KubeConfig from "../../../packages/effect-kube/src/KubeConfig.js"
import * as NodeKube from "../../../packages/effect-kube/src/NodeKube.js"
import { pki } from "../../util/pki.js"

interface Seen {
  readonly cn: string | null
  readonly servername: string | null
  readonly path: string
}

interface Server {
  readonly url: string
  /** TCP connections accepted so far. */
  readonly connections: () => number
  /** Resolves when every connection accepted so far has been closed. */
  readonly allClosed: Effect.Effect<void>
}

/** A loopback server answering every request with what it saw of the client. */
const serve = (options: Https.ServerOptions | "http"): Effect.Effect<Server, never, Scope.Scope> =>
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

const serverTls = (): Https.ServerOptions => ({ key: pki().server.key, cert: pki().server.cert })

const explicit = (options: KubeConfig.MakeOptions) => NodeKube.layerFromKubeConfig(KubeConfig.layerFrom(options))

describe("NodeKube", () => {
  describe("credentials", () => {
    it.effect("are obtained once per request: the transport takes the client certificate the request path got", () =>
      Effect.gen(function*() {
        const { ca, client } = pki()
        const server = yield* serve({ ...serverTls(), ca: ca.cert, requestCert: true, rejectUnauthorized: true })
        let asked = 0
        const auth: KubeConfig.AuthProvider = {
          kind: "counting",
          credentials: Effect.sync(() => {
            asked++
            return {
              token: Redacted.make("t"),
              clientCertificate: { cert: client.cert, key: Redacted.make(client.key) }
            }
          }),
          invalidate: Effect.succeed(false)
        }
        const seen = yield* Effect.forEach([1, 2, 3], () => Client.sendJson({ method: "GET", path: "/me", operation: { verb: "get" } })).pipe(
          Effect.provide(explicit({ server: server.url, tls: { ca: ca.cert }, auth }))
        )
        assert.deepStrictEqual(seen.map((s) => (s as Seen).cn), ["test-user", "test-user", "test-user"])
        assert.strictEqual(asked, 3)
      }))
  })
})

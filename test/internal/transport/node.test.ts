/**
 * The Node transport's connections (internal/transport/node.ts), and the clients that enforce the
 * request path's deadline themselves (`enforcesDeadline`, internal/transport/contract.ts). Moved out
 * of NodeKube.test.ts, which tests the public module.
 */
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import { assert, describe, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import * as Http from "node:http"
import * as Https from "node:https"
import type * as Net from "node:net"
import type * as Tls from "node:tls"
import { enforcesDeadline } from "../../../packages/effect-kube/src/internal/transport/contract.js"
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

const getSeen = (url: string) =>
  Effect.flatMap(HttpClient.HttpClient, (client) =>
    client.execute(HttpClientRequest.get(url)).pipe(
      Effect.flatMap((response) => response.json),
      Effect.map((body) => body as unknown as Seen)
    ))

const serverTls = (): Https.ServerOptions => ({ key: pki().server.key, cert: pki().server.cert })

const explicit = (options: KubeConfig.MakeOptions) => NodeKube.layerFromKubeConfig(KubeConfig.layerFrom(options))

describe("NodeKube", () => {
  describe("connections", () => {
    // Undici may open a second connection when a request is sent while the previous one is
    // still being handed back to the pool; after that, every request reuses one of the two.
    it.effect("keep-alive: sequential requests reuse their TLS connections", () =>
      Effect.gen(function*() {
        const server = yield* serve(serverTls())
        yield* Effect.provide(
          Effect.gen(function*() {
            for (let i = 0; i < 30; i++) assert.strictEqual((yield* getSeen(`${server.url}/n/${i}`)).path, `/n/${i}`)
          }),
          explicit({ server: server.url, tls: { ca: pki().ca.cert } })
        )
        assert.isAtMost(server.connections(), 2)
      }))

    it.effect("keep-alive over plain http too", () =>
      Effect.gen(function*() {
        const server = yield* serve("http")
        yield* Effect.provide(
          Effect.gen(function*() {
            for (let i = 0; i < 30; i++) yield* getSeen(`${server.url}/plain/${i}`)
          }),
          explicit({ server: server.url })
        )
        assert.isAtMost(server.connections(), 2)
      }))

    // Else the request path forks every request to time it out (a fiber and its interruption per GET).
    it.effect("the client of a layer given options enforces the request path's deadline, as the default one does", () =>
      Effect.gen(function*() {
        const kubeConfig = KubeConfig.layerFrom({ server: "https://127.0.0.1:1" })
        for (const layer of [NodeKube.layerFromKubeConfig(kubeConfig), NodeKube.layerFromKubeConfig(kubeConfig, {})]) {
          const client = yield* Effect.provide(Effect.service(HttpClient.HttpClient), layer)
          assert.isTrue(enforcesDeadline.has(client))
        }
        const withOptions = NodeKube.layerFromKubeConfig(kubeConfig, { http2: false, maxConnections: 4 })
        assert.isTrue(enforcesDeadline.has(yield* Effect.provide(Effect.service(HttpClient.HttpClient), withOptions)))
      }))

    it.effect("closing the layer's scope closes its connections", () =>
      Effect.gen(function*() {
        const server = yield* serve(serverTls())
        const scope = yield* Scope.make()
        const context = yield* Layer.buildWithScope(explicit({ server: server.url, tls: { ca: pki().ca.cert } }), scope)
        yield* Effect.provide(getSeen(`${server.url}/x`), context)
        const closed = yield* Deferred.make<void>()
        yield* Effect.forkChild(Effect.andThen(server.allClosed, Deferred.succeed(closed, undefined)))
        assert.isFalse(yield* Deferred.isDone(closed), "kept alive while the layer is open")
        yield* Scope.close(scope, Exit.void)
        yield* Deferred.await(closed)
        assert.strictEqual(server.connections(), 1)
      }))
  })
})

/**
 * A tiny loopback HTTP server whose handler the test writes, for the few cases where a
 * test needs byte-level control of a response (a character split between two writes)
 * that a fake API server does not give. Requests go through the real Node transport.
 */
import type * as HttpClient from "effect/http/HttpClient"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as Http from "node:http"
import type * as Net from "node:net"
import * as KubeConfig from "../../packages/effect-kube/src/KubeConfig.js"
import * as NodeKube from "../../packages/effect-kube/src/NodeKube.js"

export interface Loopback {
  readonly url: string
  /** Requests whose response has not been closed yet (finished or aborted). */
  readonly openResponses: () => number
  /** Every request seen, as `METHOD /path?query`. */
  readonly requests: ReadonlyArray<string>
}

/** Starts a server for the scope; `handler` answers every request. */
export const serve = (handler: Http.RequestListener): Effect.Effect<Loopback, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.callback<{ server: Http.Server; sockets: Set<Net.Socket>; loopback: Loopback }>((resume) => {
      const requests: Array<string> = []
      let open = 0
      const server = Http.createServer((req, res) => {
        requests.push(`${req.method} ${req.url}`)
        open++
        res.on("close", () => {
          open--
        })
        handler(req, res)
      })
      const sockets = new Set<Net.Socket>()
      server.on("connection", (socket: Net.Socket) => {
        sockets.add(socket)
        socket.on("close", () => sockets.delete(socket))
      })
      server.listen(0, "127.0.0.1", () => {
        const address = server.address() as Net.AddressInfo
        resume(Effect.succeed({
          server,
          sockets,
          loopback: { url: `http://127.0.0.1:${address.port}`, openResponses: () => open, requests }
        }))
      })
    }),
    ({ server, sockets }) =>
      Effect.callback<void>((resume) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resume(Effect.void))
      })
  ).pipe(Effect.map(({ loopback }) => loopback))

/** KubeConfig (namespace `default`, no credentials) and the Node HttpClient for a loopback server. */
export const layer = (url: string): Layer.Layer<KubeConfig.KubeConfig | HttpClient.HttpClient> =>
  NodeKube.layerFromKubeConfig(KubeConfig.layerFrom({ server: url, namespace: "default" })).pipe(Layer.orDie)

/** Waits (polling the real server) until `check` holds, for at most `attempts` × 10 ms. */
export const eventually = (check: () => boolean, attempts = 300): Effect.Effect<boolean> =>
  Effect.gen(function*() {
    for (let i = 0; i < attempts; i++) {
      if (check()) return true
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 10)))
    }
    return check()
  })

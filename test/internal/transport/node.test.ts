/**
 * The Node transport's connections (internal/transport/node.ts), and the clients that enforce the
 * request path's deadline themselves (`enforcesDeadline`, internal/transport/contract.ts). Moved out
 * of NodeKube.test.ts, which tests the public module.
 */
import * as HttpClient from "effect/http/HttpClient"
import { assert, describe, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import { enforcesDeadline } from "../../../packages/effect-kube/src/internal/transport/contract.js"
import * as KubeConfig from "../../../packages/effect-kube/src/KubeConfig.js"
import * as NodeKube from "../../../packages/effect-kube/src/NodeKube.js"
import { pki } from "../../util/pki.js"
import { getSeen, serve, serverTls } from "../../util/whoAmI.js"


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

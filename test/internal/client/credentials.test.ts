/**
 * The request path (internal/client/execute.ts) over the Node transport: what it asks the auth
 * provider for, request by request. Moved out of NodeKube.test.ts, which tests the public module.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as Client from "../../../packages/effect-kube/src/internal/client/execute.js"
import * as KubeConfig from "../../../packages/effect-kube/src/KubeConfig.js"
import * as NodeKube from "../../../packages/effect-kube/src/NodeKube.js"
import { pki } from "../../util/pki.js"
import { type Seen, serve, serverTls } from "../../util/whoAmI.js"


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

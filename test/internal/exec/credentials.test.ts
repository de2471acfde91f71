/**
 * The exec connection's credentials and TLS come from the KubeConfig as the HTTP
 * layer's do: client certificate and `tls-server-name` (checked by a loopback HTTPS
 * server that answers the upgrade with what it saw), and one retry after a 401 when the
 * auth provider has fresh credentials. Plus the pure channel protocol.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import * as Http from "node:http"
import * as Https from "node:https"
import type * as Net from "node:net"
import type * as Tls from "node:tls"
import * as Exec from "../../../packages/effect-kube/src/Exec.js"
import * as Kube from "../../../packages/effect-kube/src/Kube.js"
import * as KubeConfig from "../../../packages/effect-kube/src/KubeConfig.js"
import * as NodeKube from "../../../packages/effect-kube/src/NodeKube.js"
import * as Protocol from "../../../packages/effect-kube/src/internal/exec/protocol.js"
import { Pods } from "../../../packages/effect-kube/src/resources/index.js"
import { FakeCluster } from "@effect-kube/testing"
import { pki } from "../../util/pki.js"

const pods = Kube.api(Pods, { namespace: "default" })


/** Listens on a loopback port for the scope's lifetime; the port. */
const listen = (server: Net.Server & { closeAllConnections(): void }) =>
  Effect.acquireRelease(
    Effect.promise(() => new Promise<number>((resolve) => {
      server.listen(0, "127.0.0.1", () => resolve((server.address() as Net.AddressInfo).port))
    })),
    () =>
      Effect.promise(() =>
        new Promise<void>((resolve) => {
          server.closeAllConnections()
          server.close(() => resolve())
        })
      )
  )

describe("Exec credentials and TLS", () => {
  it.live("presents the client certificate, checks the server as tls-server-name, sends no token it lacks", () =>
    Effect.gen(function*() {
      const { ca, client, namedServer, serverName } = pki()
      const server = Https.createServer({ cert: namedServer.cert, key: namedServer.key, ca: ca.cert, requestCert: true })
      server.on("upgrade", (req, socket: Net.Socket) => {
        const peer = (socket as Tls.TLSSocket).getPeerCertificate()
        const body = JSON.stringify({
          kind: "Status",
          status: "Failure",
          code: 403,
          reason: "Forbidden",
          message: `seen: cn=${peer.subject?.CN} servername=${(socket as Tls.TLSSocket & { servername?: string }).servername} ` +
            `auth=${req.headers.authorization ?? "none"} protocols=${req.headers["sec-websocket-protocol"]}`
        })
        socket.end(`HTTP/1.1 403 Forbidden\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`)
      })
      const port = yield* listen(server)
      const layer = NodeKube.layerFromKubeConfig(KubeConfig.layerFrom({
        server: `https://127.0.0.1:${port}`,
        tls: { ca: ca.cert, serverName },
        clientCertificate: { cert: client.cert, key: client.key }
      })).pipe(Layer.orDie)
      const error = yield* Effect.flip(Exec.exec(pods, "web", ["echo"]).pipe(Effect.provide(layer)))
      assert.strictEqual(error._tag, "ApiError")
      assert.include(error.message, "403")
      assert.include(
        error.message,
        `seen: cn=test-user servername=${serverName} auth=none protocols=v5.channel.k8s.io,v4.channel.k8s.io`
      )
      assert.notInclude(JSON.stringify(error), "PRIVATE KEY")
    }))

  it.live("after a 401, fresh credentials are fetched and the upgrade is tried once more", () =>
    Effect.gen(function*() {
      const fake = yield* FakeCluster.serve({
        token: "fresh-token",
        objects: [{ apiVersion: "v1", kind: "Pod", metadata: { name: "web" }, spec: { containers: [{ name: "m" }] } }]
      })
      let current = "stale-token"
      let invalidated = 0
      const layer = NodeKube.layerFromKubeConfig(KubeConfig.layerFrom({
        server: fake.url,
        auth: {
          kind: "rotating",
          credentials: Effect.sync(() => ({ token: Redacted.make(current) })),
          invalidate: Effect.sync(() => {
            invalidated++
            current = "fresh-token"
            return true
          })
        }
      })).pipe(Layer.orDie)
      const result = yield* Exec.exec(pods, "web", ["echo", "ok"]).pipe(Effect.provide(layer))
      assert.strictEqual(result.stdout, "ok\n")
      assert.strictEqual(invalidated, 1)
      // static credentials that stay wrong: one 401, no loop
      fake.control.setToken("another")
      const error = yield* Effect.flip(Exec.exec(pods, "web", ["echo"]).pipe(Effect.provide(layer)))
      assert.strictEqual(error._tag === "ApiError" && error.code, 401)
      assert.strictEqual(invalidated, 2)
      assert.notInclude(JSON.stringify(error), "fresh-token")
    }))
})

describe("Exec impersonation", () => {
  it.live("impersonation headers reach the upgrade as the request path sends them: one line per group", () =>
    Effect.gen(function*() {
      const server = Http.createServer()
      server.on("upgrade", (req, socket: Net.Socket) => {
        const seen: Array<string> = []
        for (let i = 0; i < req.rawHeaders.length; i += 2) {
          const name = req.rawHeaders[i]!
          if (name.toLowerCase().startsWith("impersonate-")) seen.push(`${name}=${req.rawHeaders[i + 1]}`)
        }
        const body = JSON.stringify({ kind: "Status", status: "Failure", code: 403, message: `seen: ${seen.join(" ")}` })
        socket.end(`HTTP/1.1 403 Forbidden\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`)
      })
      const port = yield* listen(server)
      const layer = NodeKube.layerFromKubeConfig(KubeConfig.layerFrom({
        server: `http://127.0.0.1:${port}`,
        token: "t",
        impersonate: { user: "jane", groups: ["dev", "ops"], extra: { "scopes.example.com/x": ["a"] } }
      })).pipe(Layer.orDie)
      const error = yield* Effect.flip(Exec.exec(pods, "web", ["echo"]).pipe(Effect.provide(layer)))
      assert.include(
        error.message,
        "seen: impersonate-user=jane impersonate-group=dev impersonate-group=ops " +
          "impersonate-extra-scopes.example.com%2Fx=a"
      )
    }))
})

describe("channel protocol", () => {
  it("frames, closes, resizes and port prefixes", () => {
    assert.deepStrictEqual([...Protocol.frame(1, Uint8Array.of(7, 8))], [1, 7, 8])
    assert.deepStrictEqual([...Protocol.closeFrame(0)], [255, 0])
    assert.strictEqual(new TextDecoder().decode(Protocol.resizeFrame(80, 24).subarray(1)), `{"Width":80,"Height":24}`)
    assert.strictEqual(Protocol.resizeFrame(80, 24)[0], 4)
    assert.deepStrictEqual([...Protocol.portPrefix(8080)], [0x90, 0x1f])
    assert.strictEqual(Protocol.readPort(Protocol.portPrefix(65535)), 65535)
    assert.strictEqual(Protocol.readPort(Uint8Array.of(1)), undefined)
  })

  it("reads exit codes from the status channel", () => {
    assert.deepStrictEqual(Protocol.parseStatus(`{"metadata":{},"status":"Success"}`), { _tag: "Exited", exitCode: 0 })
    assert.deepStrictEqual(
      Protocol.parseStatus(JSON.stringify(Protocol.statusFor(42, ["sh", "-c", "exit 42"]))),
      { _tag: "Exited", exitCode: 42 }
    )
    const other = Protocol.parseStatus(`{"status":"Failure","reason":"InternalError","message":"boom"}`)
    assert.strictEqual(other._tag, "Failed")
    assert.strictEqual(Protocol.parseStatus("not json")._tag, "Failed")
    assert.strictEqual(
      Protocol.streamQuery({ command: ["sh", "-c", "a b"], container: "c", stdin: true, stdout: true, stderr: true, tty: true }),
      "command=sh&command=-c&command=a+b&container=c&stdin=true&stdout=true&stderr=false&tty=true"
    )
  })
})

/**
 * A request that cannot reach the server fails with a transport error whose message names
 * the cause and whose `problem` says which: one test per cause, each against a real
 * loopback server (or a real port, or a name that cannot resolve) through the Node
 * transport. None of them shows the bearer token or the body sent (a Secret's data).
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as HttpClientError from "effect/http/HttpClientError"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as Http from "node:http"
import * as Https from "node:https"
import * as Net from "node:net"
import { ConnectionFailure, type ConnectionProblem, connectionProblem } from "../packages/effect-kube/src/Errors.js"
import * as Kube from "../packages/effect-kube/src/Kube.js"
import * as KubeConfig from "../packages/effect-kube/src/KubeConfig.js"
import * as NodeKube from "../packages/effect-kube/src/NodeKube.js"
import { Secrets } from "../packages/effect-kube/src/resources/index.js"
import { type KeyPair, pki } from "./util/pki.js"

const token = "sekret-bearer-token-4f1c"
const password = "hunter2-in-a-secret"

/** Listens on loopback for the scope; closes every connection at the end. */
const listen = <S extends Net.Server>(server: S): Effect.Effect<number, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.callback<number>((resume) => {
      const sockets = new Set<Net.Socket>()
      server.on("connection", (socket: Net.Socket) => {
        sockets.add(socket)
        socket.on("close", () => sockets.delete(socket))
      })
      ;(server as unknown as { sockets: Set<Net.Socket> }).sockets = sockets
      server.listen(0, "127.0.0.1", () => resume(Effect.succeed((server.address() as Net.AddressInfo).port)))
    }),
    () =>
      Effect.callback<void>((resume) => {
        for (const socket of (server as unknown as { sockets: Set<Net.Socket> }).sockets) socket.destroy()
        server.close(() => resume(Effect.void))
      })
  )

/** An HTTPS server presenting `certificate`, answering 200 to whatever reaches it. */
const tlsServer = (certificate: KeyPair) =>
  listen(Https.createServer({ key: certificate.key, cert: certificate.cert }, (_req, res) => res.end("{}")))

/** A port nothing listens on: bound, then closed. */
const closedPort = Effect.callback<number>((resume) => {
  const server = Net.createServer()
  server.listen(0, "127.0.0.1", () => {
    const port = (server.address() as Net.AddressInfo).port
    server.close(() => resume(Effect.succeed(port)))
  })
})

/** Creates a Secret (a mutation: sent once, never retried) against `server`, trusting the test CA. */
const createSecret = (server: string) =>
  Kube.api(Secrets, { namespace: "default" }).create({ metadata: { name: "creds" }, stringData: { password } }).pipe(
    Effect.flip,
    Effect.provide(
      NodeKube.layerFromKubeConfig(KubeConfig.layerFrom({ server, token, tls: { ca: pki().ca.cert } })).pipe(Layer.orDie)
    )
  )

/** The failure is a ConnectionFailure for `problem` and `code`, its message names `text`, and shows no secret. */
const expectFailure = (error: unknown, problem: ConnectionProblem, code: string, text: string): ConnectionFailure => {
  assert.isTrue(HttpClientError.isHttpClientError(error), String(error))
  const reason = (error as HttpClientError.HttpClientError).reason
  assert.strictEqual(reason._tag, "TransportError")
  assert.instanceOf(reason, ConnectionFailure)
  const failure = reason as ConnectionFailure
  assert.strictEqual(failure.problem, problem)
  assert.strictEqual(failure.code, code)
  assert.strictEqual(connectionProblem(error), problem)
  const message = (error as HttpClientError.HttpClientError).message
  assert.include(message, text)
  assert.match(message, /^Transport: .+ \(POST https?:\/\/[^ ]+\/api\/v1\/namespaces\/default\/secrets\)$/)
  for (const shown of [message, String(error), JSON.stringify(error)]) {
    assert.notInclude(shown, token)
    assert.notInclude(shown, password)
    assert.notInclude(shown, Buffer.from(password).toString("base64"))
  }
  return failure
}

describe("transport errors name their cause", () => {
  it.effect("a refused port: connect ECONNREFUSED", () =>
    Effect.gen(function*() {
      const port = yield* closedPort
      const error = yield* createSecret(`https://127.0.0.1:${port}`)
      expectFailure(error, "ConnectionRefused", "ECONNREFUSED", `connect ECONNREFUSED 127.0.0.1:${port}`)
    }))

  it.effect("a name that does not resolve: getaddrinfo ENOTFOUND", () =>
    Effect.gen(function*() {
      const error = yield* createSecret("https://api.cluster.invalid:6443")
      expectFailure(error, "HostNotFound", "ENOTFOUND", "getaddrinfo ENOTFOUND api.cluster.invalid")
    }))

  it.effect("a certificate signed by another CA: unable to verify the first certificate", () =>
    Effect.gen(function*() {
      const port = yield* tlsServer(pki().otherServer)
      const error = yield* createSecret(`https://127.0.0.1:${port}`)
      const failure = expectFailure(
        error,
        "CertificateUntrusted",
        "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
        "unable to verify the first certificate"
      )
      assert.include(failure.description, "certificate-authority")
    }))

  it.effect("an expired certificate: certificate has expired", () =>
    Effect.gen(function*() {
      const port = yield* tlsServer(pki().expiredServer)
      const error = yield* createSecret(`https://127.0.0.1:${port}`)
      expectFailure(error, "CertificateExpired", "CERT_HAS_EXPIRED", "certificate has expired")
    }))

  it.effect("a certificate for another name: Hostname/IP does not match certificate's altnames", () =>
    Effect.gen(function*() {
      const port = yield* tlsServer(pki().namedServer)
      const error = yield* createSecret(`https://127.0.0.1:${port}`)
      const failure = expectFailure(
        error,
        "CertificateNameMismatch",
        "ERR_TLS_CERT_ALTNAME_INVALID",
        "Hostname/IP does not match certificate's altnames"
      )
      assert.include(failure.description, "tls-server-name")
    }))

  it.effect("a server that closes the connection before answering: socket hang up", () =>
    Effect.gen(function*() {
      const port = yield* listen(Http.createServer((req) => req.socket.destroy()))
      const error = yield* createSecret(`http://127.0.0.1:${port}`)
      expectFailure(error, "ConnectionReset", "UND_ERR_SOCKET", "socket hang up")
    }))

  it.effect("a server that resets the connection: socket hang up (read ECONNRESET)", () =>
    Effect.gen(function*() {
      const port = yield* listen(Net.createServer((socket) => socket.once("data", () => socket.resetAndDestroy())))
      const error = yield* createSecret(`http://127.0.0.1:${port}`)
      expectFailure(error, "ConnectionReset", "ECONNRESET", "socket hang up (read ECONNRESET)")
    }))

  it.effect("other failures are not connection problems", () =>
    Effect.gen(function*() {
      assert.isUndefined(connectionProblem(new Error("not a transport error")))
      assert.isUndefined(connectionProblem(undefined))
    }))
})

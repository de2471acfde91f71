import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Https from "node:https"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Yaml from "yaml"
import * as KubeConfig from "../packages/effect-kube/src/KubeConfig.js"
import * as NodeKube from "../packages/effect-kube/src/NodeKube.js"
import { runs, writeExecPlugin } from "./util/execPlugin.js"
import { pki } from "./util/pki.js"
import { getSeen, type Seen, serve, serverTls } from "./util/whoAmI.js"

const tempDir = Effect.acquireRelease(
  Effect.sync(() => Fs.mkdtempSync(Path.join(Os.tmpdir(), "effect-kube-node-"))),
  (dir) => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true }))
)


const explicit = (options: KubeConfig.MakeOptions) => NodeKube.layerFromKubeConfig(KubeConfig.layerFrom(options))

describe("NodeKube", () => {
  describe("TLS verification", () => {
    it.effect("a server certificate signed by the kubeconfig's CA is accepted", () =>
      Effect.gen(function*() {
        const server = yield* serve(serverTls())
        const seen = yield* getSeen(`${server.url}/api`).pipe(
          Effect.provide(explicit({ server: server.url, tls: { ca: pki().ca.cert } }))
        )
        assert.strictEqual(seen.path, "/api")
      }))

    it.effect("without the CA, or with another CA, the connection is refused", () =>
      Effect.gen(function*() {
        const server = yield* serve(serverTls())
        for (const ca of [undefined, pki().otherCa.cert]) {
          const error = yield* Effect.flip(
            getSeen(`${server.url}/api`).pipe(Effect.provide(explicit({ server: server.url, tls: { ca } })))
          )
          assert.strictEqual(error._tag, "HttpClientError")
          if (error._tag === "HttpClientError") assert.strictEqual(error.reason._tag, "TransportError")
        }
      }))

    it.effect("insecure-skip-tls-verify accepts any certificate", () =>
      Effect.gen(function*() {
        const server = yield* serve(serverTls())
        const text = Yaml.stringify({
          "current-context": "x",
          clusters: [{ name: "c", cluster: { server: server.url, "insecure-skip-tls-verify": true } }],
          contexts: [{ name: "x", context: { cluster: "c" } }]
        })
        const seen = yield* getSeen(`${server.url}/insecure`).pipe(
          Effect.provide(NodeKube.layerFromKubeConfig(KubeConfig.layerFromString(text)))
        )
        assert.strictEqual(seen.path, "/insecure")
      }))

    it.effect("tls-server-name is sent as SNI and checked against the certificate", () =>
      Effect.gen(function*() {
        const { namedServer, serverName, ca } = pki()
        const server = yield* serve({ key: namedServer.key, cert: namedServer.cert })
        const seen = yield* getSeen(`${server.url}/named`).pipe(
          Effect.provide(explicit({ server: server.url, tls: { ca: ca.cert, serverName } }))
        )
        assert.strictEqual(seen.servername, serverName)

        // The certificate does not name 127.0.0.1: without tls-server-name it must fail.
        const error = yield* Effect.flip(
          getSeen(`${server.url}/named`).pipe(Effect.provide(explicit({ server: server.url, tls: { ca: ca.cert } })))
        )
        assert.strictEqual(error._tag, "HttpClientError")
        if (error._tag === "HttpClientError") assert.strictEqual(error.reason._tag, "TransportError")
      }))
  })

  describe("client certificates", () => {
    const mutualTls = (): Https.ServerOptions => ({
      ...serverTls(),
      ca: pki().ca.cert,
      requestCert: true,
      rejectUnauthorized: true
    })

    it.effect("a static client certificate from the kubeconfig is presented", () =>
      Effect.gen(function*() {
        const { ca, client } = pki()
        const server = yield* serve(mutualTls())
        const b64 = (s: string) => Buffer.from(s).toString("base64")
        const text = Yaml.stringify({
          "current-context": "x",
          clusters: [{ name: "c", cluster: { server: server.url, "certificate-authority-data": b64(ca.cert) } }],
          users: [{
            name: "u",
            user: { "client-certificate-data": b64(client.cert), "client-key-data": b64(client.key) }
          }],
          contexts: [{ name: "x", context: { cluster: "c", user: "u" } }]
        })
        const seen = yield* getSeen(`${server.url}/me`).pipe(
          Effect.provide(NodeKube.layerFromKubeConfig(KubeConfig.layerFromString(text)))
        )
        assert.strictEqual(seen.cn, "test-user")

        const refused = yield* Effect.flip(
          getSeen(`${server.url}/me`).pipe(Effect.provide(explicit({ server: server.url, tls: { ca: ca.cert } })))
        )
        assert.strictEqual(refused._tag, "HttpClientError")
        if (refused._tag === "HttpClientError") assert.strictEqual(refused.reason._tag, "TransportError")
      }))

    it.effect("an exec plugin's certificate is used, and a fresh one after invalidate gets a fresh connection", () =>
      Effect.gen(function*() {
        const certs = pki()
        const dir = yield* tempDir
        const server = yield* serve(mutualTls())
        writeExecPlugin(Path.join(dir, "plugin"))
        const certFile = Path.join(dir, "current.crt")
        const keyFile = Path.join(dir, "current.key")
        Fs.writeFileSync(certFile, certs.client.cert)
        Fs.writeFileSync(keyFile, certs.client.key)
        Fs.writeFileSync(Path.join(dir, "ca.crt"), certs.ca.cert)
        const kubeconfig = Path.join(dir, "kubeconfig")
        Fs.writeFileSync(kubeconfig, Yaml.stringify({
          "current-context": "x",
          clusters: [{ name: "c", cluster: { server: server.url, "certificate-authority": Path.join(dir, "ca.crt") } }],
          users: [{
            name: "u",
            user: {
              exec: {
                apiVersion: "client.authentication.k8s.io/v1",
                command: "./plugin",
                interactiveMode: "Never",
                env: [
                  { name: "PLUGIN_STATE_DIR", value: dir },
                  { name: "PLUGIN_CERT_FILE", value: certFile },
                  { name: "PLUGIN_KEY_FILE", value: keyFile }
                ]
              }
            }
          }],
          contexts: [{ name: "x", context: { cluster: "c", user: "u" } }]
        }))
        const program = Effect.gen(function*() {
          const config = yield* KubeConfig.KubeConfig
          const first = yield* getSeen(`${server.url}/a`)
          const again = yield* getSeen(`${server.url}/b`)
          assert.strictEqual(first.cn, "test-user")
          assert.strictEqual(again.cn, "test-user")
          const before = server.connections()
          assert.isAtMost(before, 2)

          // What the request path does after a 401: invalidate, then ask again.
          Fs.writeFileSync(certFile, certs.client2.cert)
          Fs.writeFileSync(keyFile, certs.client2.key)
          assert.isTrue(yield* config.auth.invalidate)
          const rotated = yield* getSeen(`${server.url}/c`)
          assert.strictEqual(rotated.cn, "test-user-2")
          assert.strictEqual(server.connections(), before + 1, "a new certificate needs a new TLS session")
          assert.strictEqual(runs(dir), 2)
        })
        yield* Effect.provide(program, NodeKube.layerFromFile({ path: kubeconfig }))
      }))
  })

  describe("other origins", () => {
    const mutualTlsKubeconfig = (dir: string, url: string, cluster: object = {}) => {
      const { ca, client } = pki()
      const b64 = (text: string) => Buffer.from(text).toString("base64")
      const path = Path.join(dir, "kubeconfig")
      Fs.writeFileSync(path, Yaml.stringify({
        "current-context": "x",
        clusters: [{ name: "c", cluster: { server: url, "certificate-authority-data": b64(ca.cert), ...cluster } }],
        users: [{
          name: "u",
          user: { "client-certificate-data": b64(client.cert), "client-key-data": b64(client.key) }
        }],
        contexts: [{ name: "x", context: { cluster: "c", user: "u" } }]
      }))
      return path
    }
    /** Another HTTPS service: asks for a client certificate but takes none, and says what it was offered. */
    const thirdParty = (pair: { readonly cert: string; readonly key: string }) =>
      serve({ key: pair.key, cert: pair.cert, requestCert: true, rejectUnauthorized: false })

    it.effect("the cluster's CA and insecure-skip-tls-verify do not make another origin trusted", () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        const cluster = yield* serve({ ...serverTls(), ca: pki().ca.cert, requestCert: true, rejectUnauthorized: true })
        // Signed by the cluster's CA: only a leak of that CA would let the client accept it.
        const other = yield* thirdParty(pki().server)
        // Signed by a CA nobody trusts: only a leak of insecure-skip-tls-verify would accept it.
        const untrusted = yield* thirdParty(pki().otherServer)
        const program = Effect.gen(function*() {
          assert.strictEqual((yield* getSeen(`${cluster.url}/api`)).cn, "test-user")
          const error = yield* Effect.flip(getSeen(`${other.url}/elsewhere`))
          assert.strictEqual(error._tag, "HttpClientError")
          if (error._tag === "HttpClientError") assert.strictEqual(error.reason._tag, "TransportError")
          assert.strictEqual(other.connections(), 1, "the handshake was tried, and refused by the client")
        })
        yield* Effect.provide(program, NodeKube.layerFromFile({ path: mutualTlsKubeconfig(dir, cluster.url) }))

        const insecure = mutualTlsKubeconfig(Path.join(dir), cluster.url, { "insecure-skip-tls-verify": true })
        const refused = yield* Effect.flip(
          Effect.provide(getSeen(`${untrusted.url}/elsewhere`), NodeKube.layerFromFile({ path: insecure }))
        )
        assert.strictEqual(refused._tag, "HttpClientError")
        if (refused._tag === "HttpClientError") assert.strictEqual(refused.reason._tag, "TransportError")
      }))

    it.effect("another origin gets the platform's trust and never the cluster's client certificate", () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        const cluster = yield* serve({ ...serverTls(), ca: pki().ca.cert, requestCert: true, rejectUnauthorized: true })
        const other = yield* thirdParty(pki().otherServer)
        const kubeconfig = mutualTlsKubeconfig(dir, cluster.url)
        const otherCa = Path.join(dir, "other-ca.crt")
        Fs.writeFileSync(otherCa, pki().otherCa.cert)
        // The platform trusts the other CA in the child process only, as it would a system root.
        const output = yield* Effect.callback<string, Error>((resume) => {
          ChildProcess.execFile(
            process.execPath,
            ["--import", "tsx", "test/util/otherOrigin.ts", kubeconfig, `${cluster.url}/api`, `${other.url}/x`],
            { env: { ...process.env, NODE_EXTRA_CA_CERTS: otherCa }, timeout: 60_000 },
            (error, stdout, stderr) =>
              resume(error ? Effect.fail(new Error(`${error.message}\n${stderr}`)) : Effect.succeed(stdout))
          )
        })
        const result = JSON.parse(output) as {
          readonly cluster: { readonly ok: boolean; readonly seen?: Seen }
          readonly other: { readonly ok: boolean; readonly seen?: Seen; readonly error?: string }
        }
        assert.isTrue(result.cluster.ok)
        assert.strictEqual(result.cluster.seen?.cn, "test-user")
        assert.isTrue(result.other.ok, result.other.error)
        assert.strictEqual(result.other.seen?.path, "/x")
        assert.isNull(result.other.seen?.cn ?? null, "the cluster's client certificate went to a third party")
      }), { timeout: 60_000 })
  })

})

import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Redacted from "effect/Redacted"
import * as TestClock from "effect/testing/TestClock"
import * as Path from "node:path"
import * as Util from "node:util"
import * as Yaml from "yaml"
import { KubeConfigError } from "../packages/effect-kube/src/Errors.js"
import * as KubeConfig from "../packages/effect-kube/src/KubeConfig.js"
import * as Kube from "../packages/effect-kube/src/Kube.js"
import * as NodeKube from "../packages/effect-kube/src/NodeKube.js"
import { Pods } from "../packages/effect-kube/src/resources/index.js"
import { FakeCluster } from "@effect-kube/testing"
import { call, runs, writeExecPlugin } from "./util/execPlugin.js"
import { pki } from "./util/pki.js"
import { single, tempDir, token, write } from "./util/kubeconfigFiles.js"

const b64 = (text: string) => Buffer.from(text, "utf8").toString("base64")

layer(NodeKube.layerPlatform)("KubeConfig", (it) => {
  describe("paths relative to the kubeconfig file", () => {
    it.effect("certificate-authority, client-certificate, client-key and tokenFile", () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        const certs = pki()
        write(Path.join(dir, "pki", "ca.crt"), certs.ca.cert)
        write(Path.join(dir, "conf", "certs", "client.crt"), certs.client.cert)
        write(Path.join(dir, "conf", "certs", "client.key"), certs.client.key)
        write(Path.join(dir, "conf", "token"), "file-token\n")
        const path = write(
          Path.join(dir, "conf", "kubeconfig"),
          single(
            { "client-certificate": "certs/client.crt", "client-key": "certs/client.key", tokenFile: "token" },
            { server: "https://127.0.0.1:6443", "certificate-authority": "../pki/ca.crt" }
          )
        )
        const service = yield* KubeConfig.fromFile({ path })
        assert.strictEqual(service.tls.ca, certs.ca.cert)
        assert.isFalse(service.tls.insecureSkipTlsVerify)
        const credentials = yield* service.auth.credentials
        assert.strictEqual(credentials.token && Redacted.value(credentials.token), "file-token")
        assert.strictEqual(credentials.clientCertificate?.cert, certs.client.cert)
        const key = credentials.clientCertificate?.key
        assert.strictEqual(key && Redacted.value(key), certs.client.key)
      }))

    it.effect("the -data forms are decoded from base64", () =>
      Effect.gen(function*() {
        const certs = pki()
        const text = Yaml.stringify(single(
          { "client-certificate-data": b64(certs.client.cert), "client-key-data": b64(certs.client.key) },
          {
            server: "https://127.0.0.1:6443",
            "certificate-authority-data": b64(certs.ca.cert),
            "tls-server-name": "kube.internal.test"
          }
        ))
        const service = yield* KubeConfig.fromString(text)
        assert.strictEqual(service.tls.ca, certs.ca.cert)
        assert.strictEqual(service.tls.serverName, "kube.internal.test")
        assert.strictEqual(service.auth.kind, "clientCertificate")
        const credentials = yield* service.auth.credentials
        assert.strictEqual(credentials.clientCertificate?.cert, certs.client.cert)
        assert.isUndefined(credentials.token)
      }))

    it.effect("layerFromString resolves relative paths against basePath", () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        write(Path.join(dir, "tok"), "based-token")
        const text = Yaml.stringify(single({ tokenFile: "tok" }))
        const layer = KubeConfig.layerFromString(text, { basePath: dir })
        const service = yield* Effect.provide(KubeConfig.KubeConfig, layer)
        assert.strictEqual(yield* token(service), "based-token")
        assert.strictEqual(service.source, "<string>")
      }))

    it.effect("a missing CA file names the file, context and field", () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        const path = write(
          Path.join(dir, "kubeconfig"),
          single({}, { server: "https://127.0.0.1:6443", "certificate-authority": "nope/ca.crt" })
        )
        const error = yield* Effect.flip(KubeConfig.fromFile({ path }))
        assert.strictEqual(error.source, path)
        assert.strictEqual(error.context, "ctx")
        assert.strictEqual(error.field, "clusters[c].cluster.certificate-authority")
        assert.include(error.message, Path.join(dir, "nope", "ca.crt"))
        assert.include(error.message, "ENOENT")
      }))
  })

  describe("contexts", () => {
    const text = Yaml.stringify({
      "current-context": "dev",
      clusters: [{ name: "c", cluster: { server: "https://k8s.example:443/prefix/" } }],
      users: [{ name: "u", user: { username: "admin", password: "hunter2" } }],
      contexts: [
        { name: "dev", context: { cluster: "c", user: "u", namespace: "dev-ns" } },
        { name: "bare", context: { cluster: "c" } },
        { name: "lost", context: { cluster: "nowhere" } },
        { name: "nobody", context: { cluster: "c", user: "ghost" } }
      ]
    })

    it.effect("the current context, or the one asked for; namespace defaults to default", () =>
      Effect.gen(function*() {
        const dev = yield* KubeConfig.fromString(text)
        assert.strictEqual(dev.context, "dev")
        assert.strictEqual(dev.namespace, "dev-ns")
        assert.strictEqual(dev.server, "https://k8s.example/prefix", "default port and trailing slash dropped")
        const credentials = yield* dev.auth.credentials
        assert.strictEqual(credentials.basic?.username, "admin")
        assert.strictEqual(credentials.basic && Redacted.value(credentials.basic.password), "hunter2")
        assert.isFalse(yield* dev.auth.invalidate, "static credentials: a retry would not help")

        const bare = yield* KubeConfig.fromString(text, { context: "bare" })
        assert.strictEqual(bare.namespace, "default")
        assert.strictEqual(bare.auth.kind, "none")
      }))

    it.effect("a missing context, cluster or user is a KubeConfigError naming it", () =>
      Effect.gen(function*() {
        const missing = yield* Effect.flip(KubeConfig.fromString(text, { context: "prod" }))
        assert.strictEqual(missing._tag, "KubeConfigError")
        assert.strictEqual(missing.context, "prod")
        assert.include(missing.message, `context "prod" not found`)

        const lost = yield* Effect.flip(KubeConfig.fromString(text, { context: "lost" }))
        assert.strictEqual(lost.field, "contexts[lost].context.cluster")
        assert.include(lost.message, `cluster "nowhere" not found`)

        const nobody = yield* Effect.flip(KubeConfig.fromString(text, { context: "nobody" }))
        assert.strictEqual(nobody.field, "contexts[nobody].context.user")

        const none = yield* Effect.flip(KubeConfig.fromString(Yaml.stringify({ clusters: [] })))
        assert.strictEqual(none.field, "current-context")
      }))
  })

  describe("exec plugins", () => {
    const execConfig = (dir: string, exec: object, cluster: object = {}) =>
      single(
        {
          exec: {
            apiVersion: "client.authentication.k8s.io/v1",
            command: "./bin/plugin",
            args: ["--flag", "value"],
            interactiveMode: "Never",
            ...exec,
            env: [{ name: "PLUGIN_STATE_DIR", value: dir }, ...((exec as { env?: Array<object> }).env ?? [])]
          }
        },
        { server: "https://127.0.0.1:6443", ...cluster }
      )

    it.effect("runs the command relative to the kubeconfig, passes KUBERNETES_EXEC_INFO, caches until expiry", () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        writeExecPlugin(Path.join(dir, "bin", "plugin"))
        const ca = pki().ca.cert
        const path = write(
          Path.join(dir, "kubeconfig"),
          execConfig(dir, {
            provideClusterInfo: true,
            env: [{ name: "PLUGIN_EXPIRES", value: "1970-01-01T01:00:00Z" }]
          }, {
            "certificate-authority-data": b64(ca),
            "tls-server-name": "kube.internal.test",
            "proxy-url": "http://proxy.example:3128"
          })
        )
        const service = yield* KubeConfig.fromFile({ path })
        assert.strictEqual(service.auth.kind, "exec")
        assert.strictEqual(runs(dir), 0, "the plugin runs on demand, not at load")

        assert.strictEqual(yield* token(service), "exec-token-1")
        const first = call(dir, 1)
        assert.deepStrictEqual(first.args, ["--flag", "value"])
        assert.strictEqual(first.info.apiVersion, "client.authentication.k8s.io/v1")
        assert.strictEqual(first.info.kind, "ExecCredential")
        assert.strictEqual(first.info.spec.interactive, false)
        assert.strictEqual(first.info.spec.cluster.server, "https://127.0.0.1:6443")
        assert.strictEqual(first.info.spec.cluster["tls-server-name"], "kube.internal.test")
        assert.strictEqual(first.info.spec.cluster["proxy-url"], "http://proxy.example:3128")
        assert.strictEqual(Buffer.from(first.info.spec.cluster["certificate-authority-data"], "base64").toString(), ca)

        // Cached: the TestClock stands at 1970-01-01T00:00:00Z, before the expiry.
        assert.strictEqual(yield* token(service), "exec-token-1")
        yield* TestClock.adjust("59 minutes")
        assert.strictEqual(yield* token(service), "exec-token-1")
        assert.strictEqual(runs(dir), 1)

        yield* TestClock.adjust("2 minutes")
        assert.strictEqual(yield* token(service), "exec-token-2", "expired: run again")
        assert.strictEqual(runs(dir), 2)
      }))

    // before: Date.parse read "1" as 2001 (so the plugin ran on every request) and "...-3333" as the year 3333
    it.effect("expirationTimestamp is read as RFC 3339 strictly, as client-go does; anything else fails", () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        writeExecPlugin(Path.join(dir, "bin", "plugin"))
        const expiringAt = (value: string) =>
          Effect.flatMap(
            KubeConfig.fromFile({
              path: write(Path.join(dir, "kubeconfig"), execConfig(dir, { env: [{ name: "PLUGIN_EXPIRES", value }] }))
            }),
            token
          )
        for (const value of ["1", "2001", "1970-01-01", "1970-01-01 01:00:00Z", "1970-04-31T00:00:00Z", "-3333"]) {
          const error = yield* Effect.flip(expiringAt(value))
          assert.instanceOf(error, KubeConfigError, value)
          assert.match(error.message, /expirationTimestamp that is not a RFC 3339 time/, value)
        }
        for (const value of ["1970-01-01T01:00:00Z", "1970-01-01T01:00:00.123456789+01:00"]) {
          assert.match((yield* expiringAt(value)) ?? "", /^exec-token-\d+$/, value)
        }
      }))

    it.effect("without an expiry the output is cached until invalidate (after a 401)", () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        writeExecPlugin(Path.join(dir, "bin", "plugin"))
        const path = write(
          Path.join(dir, "kubeconfig"),
          execConfig(dir, { apiVersion: "client.authentication.k8s.io/v1beta1" })
        )
        const service = yield* KubeConfig.fromFile({ path })
        const both = yield* Effect.all([token(service), token(service), token(service)], { concurrency: "unbounded" })
        assert.deepStrictEqual(both, ["exec-token-1", "exec-token-1", "exec-token-1"])
        assert.strictEqual(runs(dir), 1, "concurrent requests run the plugin once")
        assert.isUndefined(call(dir, 1).info.spec.cluster, "no cluster info unless provideClusterInfo")
        assert.strictEqual(call(dir, 1).info.apiVersion, "client.authentication.k8s.io/v1beta1")

        assert.isTrue(yield* service.auth.invalidate)
        assert.strictEqual(yield* token(service), "exec-token-2")
        assert.strictEqual(yield* token(service), "exec-token-2")
        assert.strictEqual(runs(dir), 2)
      }))

    it.effect("a client certificate from the plugin", () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        const certs = pki()
        writeExecPlugin(Path.join(dir, "bin", "plugin"))
        // the plugin's files, in the test's own temp directory (removed with it)
        const certFile = write(Path.join(dir, "certs", "client.crt"), certs.client.cert)
        const keyFile = write(Path.join(dir, "certs", "client.key"), certs.client.key)
        const path = write(
          Path.join(dir, "kubeconfig"),
          execConfig(dir, {
            env: [
              { name: "PLUGIN_CERT_FILE", value: certFile },
              { name: "PLUGIN_KEY_FILE", value: keyFile }
            ]
          })
        )
        const credentials = yield* Effect.flatMap(KubeConfig.fromFile({ path }), (s) => s.auth.credentials)
        assert.isUndefined(credentials.token)
        assert.strictEqual(credentials.clientCertificate?.cert, certs.client.cert)
        const key = credentials.clientCertificate?.key
        assert.strictEqual(key && Redacted.value(key), certs.client.key)
      }))

    it.effect("failures name the command and exit code", () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        writeExecPlugin(Path.join(dir, "bin", "plugin"))
        const failing = yield* KubeConfig.fromFile({
          path: write(Path.join(dir, "k1"), execConfig(dir, { env: [{ name: "PLUGIN_EXIT", value: "3" }] }))
        })
        const exit = yield* Effect.flip(failing.auth.credentials)
        assert.strictEqual(exit.field, "users[u].user.exec")
        assert.strictEqual(exit.context, "ctx")
        assert.include(exit.message, "./bin/plugin exited with code 3")

        const missing = yield* KubeConfig.fromFile({
          path: write(
            Path.join(dir, "k2"),
            execConfig(dir, { command: "effect-kube-no-such-plugin", installHint: "install it from example.com" })
          )
        })
        const notFound = yield* Effect.flip(missing.auth.credentials)
        assert.include(notFound.message, "effect-kube-no-such-plugin was not found")
        assert.include(notFound.message, "install it from example.com")

        const garbage = yield* KubeConfig.fromFile({
          path: write(Path.join(dir, "k3"), execConfig(dir, { env: [{ name: "PLUGIN_PRINT", value: "nope" }] }))
        })
        assert.include((yield* Effect.flip(garbage.auth.credentials)).message, "not JSON")

        const oldApi = yield* Effect.flip(KubeConfig.fromFile({
          path: write(Path.join(dir, "k4"), execConfig(dir, { apiVersion: "client.authentication.k8s.io/v1alpha1" }))
        }))
        assert.strictEqual(oldApi.field, "users[u].user.exec.apiVersion")
      }))
  })

  describe("unsupported and invalid settings", () => {
    it.effect("an auth-provider other than oidc is a KubeConfigError naming file, context and field", () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        const path = write(
          Path.join(dir, "kubeconfig"),
          single({ "auth-provider": { name: "gcp", config: { "access-token": "gcp-secret" } } })
        )
        const error = yield* Effect.flip(KubeConfig.fromFile({ path }))
        assert.strictEqual(error.source, path)
        assert.strictEqual(error.context, "ctx")
        assert.strictEqual(error.field, "users[u].user.auth-provider.name")
        assert.include(error.message, "auth-provider gcp is not supported")
        assert.include(error.message, path)
      }))

    it.effect("an oidc id-token is used as a bearer token", () =>
      Effect.gen(function*() {
        const service = yield* KubeConfig.fromString(
          Yaml.stringify(single({ "auth-provider": { name: "oidc", config: { "id-token": "oidc-id" } } }))
        )
        assert.strictEqual(service.auth.kind, "oidc")
        assert.strictEqual(yield* token(service), "oidc-id")
      }))

    it.effect("unsupported proxies and conflicting credentials are refused", () =>
      Effect.gen(function*() {
        const fields = yield* Effect.forEach([
          single({ token: "t" }, { server: "https://x", "proxy-url": "socks4://proxy:1080" }),
          single({ token: "t", username: "a", password: "b" }),
          single({ username: "a" }),
          single({ "client-certificate-data": b64(pki().client.cert) }),
          single({}, { server: "ftp://x" })
        ], (config) => Effect.map(Effect.flip(KubeConfig.fromString(Yaml.stringify(config))), (e) => e.field))
        assert.deepStrictEqual(fields, [
          "clusters[c].cluster.proxy-url",
          "users[u].user",
          "users[u].user",
          "users[u].user.client-key",
          "clusters[c].cluster.server"
        ])
      }))

    it.effect("a CA that is not PEM is refused for an https server and ignored for an http one, as kubectl does", () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        const placeholder = b64("not a certificate")
        const garbage = write(Path.join(dir, "ca.txt"), "not a certificate either")
        const refused = yield* Effect.flip(
          KubeConfig.fromString(Yaml.stringify(single({}, { server: "https://h:6443", "certificate-authority-data": placeholder })))
        )
        assert.strictEqual(refused.field, "clusters[c].cluster.certificate-authority-data")
        assert.include(refused.message, "is not PEM")
        // an http:// server uses no CA: the context loads and its requests are sent
        const served = yield* FakeCluster.serve()
        const plain = Yaml.stringify(single({ token: "t" }, { server: served.url, "certificate-authority-data": placeholder }))
        const service = yield* KubeConfig.fromString(plain)
        assert.strictEqual(service.server, served.url)
        const pods = yield* Kube.api(Pods, { namespace: "default" }).list().pipe(
          Effect.provide(NodeKube.layerFromKubeConfig(KubeConfig.layerFromString(plain)))
        )
        assert.deepStrictEqual(pods.items, [])
        const fromFile = write(Path.join(dir, "kubeconfig"), single({}, { server: "http://h", "certificate-authority": garbage }))
        assert.strictEqual((yield* KubeConfig.fromFile({ path: fromFile })).server, "http://h")
        // what kubectl refuses there too: data that is not base64, a file that is not there
        const notBase64 = yield* Effect.flip(
          KubeConfig.fromString(Yaml.stringify(single({}, { server: "http://h", "certificate-authority-data": "!!" })))
        )
        assert.include(notBase64.message, "is not valid base64")
        const missing = write(Path.join(dir, "missing"), single({}, { server: "http://h", "certificate-authority": "nope.crt" }))
        assert.strictEqual((yield* Effect.flip(KubeConfig.fromFile({ path: missing }))).field, "clusters[c].cluster.certificate-authority")
      }))

    it.effect("make checks explicit values", () =>
      Effect.gen(function*() {
        const service = yield* KubeConfig.make({ server: "https://h:6443/", token: "explicit", namespace: "x" })
        assert.strictEqual(service.server, "https://h:6443")
        assert.strictEqual(service.source, "<explicit>")
        assert.strictEqual(yield* token(service), "explicit")
        const bad = yield* Effect.result(KubeConfig.make({ server: "h:6443:nope" }))
        assert.isTrue(Result.isFailure(bad))
        const both = yield* Effect.flip(
          KubeConfig.make({ server: "https://h", token: "a", username: "u", password: "p" })
        )
        assert.include(both.message, "more than one way")
        const layered = yield* Effect.provide(KubeConfig.KubeConfig, KubeConfig.layerFrom({ server: "http://h" }))
        assert.strictEqual(layered.auth.kind, "none")
        assert.strictEqual(layered.namespace, "default")
      }))
  })

  describe("secrets never appear in errors", () => {
    const secrets = ["s3cr3t-token-value", "p4ssw0rd-value", "k3y-material-value", "4815162342"]

    const leaks = (error: KubeConfigError): ReadonlyArray<string> => {
      const texts = [error.message, String(error), JSON.stringify(error), Util.inspect(error, { depth: 10 })]
      return secrets.filter((secret) => texts.some((text) => text.includes(secret)))
    }

    it.effect("in parse, validation, file and exec failures", () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        writeExecPlugin(Path.join(dir, "bin", "plugin"))
        write(Path.join(dir, "key.pem"), "k3y-material-value, not PEM")
        const credential = JSON.stringify({
          apiVersion: "client.authentication.k8s.io/v1alpha1",
          kind: "ExecCredential",
          status: { token: "s3cr3t-token-value" }
        })
        const exec = (env: Array<object>) => ({
          exec: {
            apiVersion: "client.authentication.k8s.io/v1",
            command: "./bin/plugin",
            args: ["--token", "s3cr3t-token-value", "--password", "p4ssw0rd-value"],
            env: [{ name: "PLUGIN_STATE_DIR", value: dir }, { name: "SECRET", value: "k3y-material-value" }, ...env]
          }
        })
        const cert = b64(pki().client.cert)
        const texts: ReadonlyArray<string> = [
          // the YAML parser's own message would quote this line
          `users:\n- name: u\n  user:\n    token: "s3cr3t-token-value\n  password: [p4ssw0rd-value\n`,
          Yaml.stringify(single({ token: "s3cr3t-token-value", username: "u", password: "p4ssw0rd-value" })),
          Yaml.stringify(single({
            "auth-provider": { name: "azure", config: { "access-token": "s3cr3t-token-value" } }
          })),
          Yaml.stringify(single({ username: "u", password: 4815162342 })),
          Yaml.stringify(single({ "client-certificate-data": cert, "client-key-data": "k3y-material-value!" })),
          Yaml.stringify(single({ "client-certificate-data": cert, "client-key": "key.pem" })),
          Yaml.stringify(single({ "client-certificate-data": cert, "client-key-data": b64("k3y-material-value") })),
          Yaml.stringify(single(exec([
            { name: "PLUGIN_PRINT", value: "s3cr3t-token-value" },
            { name: "PLUGIN_EXIT", value: "1" }
          ]))),
          Yaml.stringify(single(exec([{ name: "PLUGIN_PRINT", value: "{ token: s3cr3t-token-value" }]))),
          Yaml.stringify(single(exec([{ name: "PLUGIN_PRINT", value: credential }]))),
          Yaml.stringify(single(exec([{ name: "PLUGIN_API_VERSION", value: "s3cr3t-token-value" }])))
        ]
        const errors: Array<KubeConfigError> = []
        for (const text of texts) {
          const result = yield* Effect.result(
            Effect.flatMap(KubeConfig.fromString(text, { basePath: dir }), (service) => service.auth.credentials)
          )
          assert.isTrue(Result.isFailure(result), `expected a failure for:\n${text}`)
          if (Result.isFailure(result)) errors.push(result.failure)
        }
        assert.strictEqual(errors.length, texts.length)
        for (const error of errors) {
          assert.instanceOf(error, KubeConfigError)
          assert.deepStrictEqual(leaks(error), [], `leak in: ${error.message}`)
        }
      }))

    it.effect("credentials print as <redacted>", () =>
      Effect.gen(function*() {
        const service = yield* KubeConfig.fromString(
          Yaml.stringify(single({ token: "s3cr3t-token-value" }))
        )
        const credentials = yield* service.auth.credentials
        assert.notInclude(Util.inspect(credentials), "s3cr3t-token-value")
        assert.notInclude(JSON.stringify(credentials), "s3cr3t-token-value")
        assert.notInclude(JSON.stringify(service), "s3cr3t-token-value")
      }))
  })
})

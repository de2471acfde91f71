/**
 * Reaching the cluster through a proxy: a kubeconfig's `proxy-url` (http, https and
 * socks5 proxies, with credentials) and `HTTPS_PROXY` / `NO_PROXY` from the environment
 * as client-go reads them. Real proxies on loopback (test/util/proxy.ts) count the
 * tunnels they open; the cluster is a FakeCluster served over HTTPS under a name only the
 * proxies can resolve (`kube.internal.test`), so a request that succeeds went through one.
 */
import * as HttpClient from "effect/http/HttpClient"
import { assert, describe, layer } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Util from "node:util"
import * as Yaml from "yaml"
import { noProxyMatchers, useProxy } from "../../../packages/effect-kube/src/internal/transport/proxyEnvironment.js"
import * as Kube from "../../../packages/effect-kube/src/Kube.js"
import * as KubeConfig from "../../../packages/effect-kube/src/KubeConfig.js"
import * as NodeKube from "../../../packages/effect-kube/src/NodeKube.js"
import * as RequestPolicy from "../../../packages/effect-kube/src/RequestPolicy.js"
import { Pods } from "../../../packages/effect-kube/src/resources/index.js"
import { FakeCluster } from "@effect-kube/testing"
import { serve as serveHttp } from "../../util/loopback.js"
import { pki } from "../../util/pki.js"
import { connectProxy, socks5Proxy, type TestProxy } from "../../util/proxy.js"

const hostName = pki().serverName
const PASSWORD = "pr0xy-s3cret"
const TOKEN = "cluster-token"

const tempDir = Effect.acquireRelease(
  Effect.sync(() => Fs.mkdtempSync(Path.join(Os.tmpdir(), "effect-kube-proxy-"))),
  (dir) => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true }))
)

/** A FakeCluster over HTTPS with a certificate for `kube.internal.test` only. */
const cluster = Effect.gen(function*() {
  const { namedServer, ca } = pki()
  const served = yield* FakeCluster.serve({
    token: TOKEN,
    tls: { cert: namedServer.cert, key: namedServer.key, ca: ca.cert }
  })
  return { served, port: Number(new URL(served.url).port) }
})

/** A kubeconfig for the cluster under its name, with the given cluster fields. */
const kubeconfig = (port: number, cluster: object = {}, server = `https://${hostName}:${port}`) =>
  Yaml.stringify({
    "current-context": "ctx",
    clusters: [{
      name: "c",
      cluster: { server, "certificate-authority-data": Buffer.from(pki().ca.cert).toString("base64"), ...cluster }
    }],
    users: [{ name: "u", user: { token: TOKEN } }],
    contexts: [{ name: "ctx", context: { cluster: "c", user: "u", namespace: "default" } }]
  })

const withEnvironment = (env: Record<string, string>) =>
  ConfigProvider.layer(ConfigProvider.fromEnvRecord(env))

/** The Node layers for a kubeconfig, in an environment; reads are not retried, so that a refusal shows at once. */
const layerFor = (text: string, env: Record<string, string> = {}) =>
  Layer.merge(
    NodeKube.layerFromKubeConfig(KubeConfig.layerFromString(text)).pipe(Layer.provide(withEnvironment(env))),
    RequestPolicy.layer({ readRetries: Schedule.recurs(0) })
  )

const pods = Kube.api(Pods, { namespace: "default" })

/** A few operations over the real request path: create, get, list. */
const someRequests = Effect.gen(function*() {
  yield* pods.create({ metadata: { name: "through" }, spec: { containers: [{ name: "c", image: "busybox" }] } })
  const found = yield* pods.get("through")
  assert.isTrue(Option.isSome(found))
  const list = yield* pods.list()
  assert.deepStrictEqual(list.items.map((p) => p.metadata?.name), ["through"])
})

/** Everything a user could print of a failure. */
const printed = (exit: Exit.Exit<unknown, unknown>): string => {
  if (Exit.isSuccess(exit)) return ""
  const error = Cause.squash(exit.cause)
  return [
    Cause.pretty(exit.cause),
    String(error),
    (error as { message?: string }).message ?? "",
    JSON.stringify(error),
    Util.inspect(error, { depth: 10 }),
    JSON.stringify(exit)
  ].join("\n")
}

const assertNoSecret = (text: string) => {
  assert.notInclude(text, PASSWORD)
  assert.notInclude(text, Buffer.from(`user:${PASSWORD}`).toString("base64"))
  assert.notInclude(text, encodeURIComponent(PASSWORD))
}

const withCredentials = (proxy: TestProxy, password = PASSWORD) =>
  proxy.url.replace("://", `://user:${encodeURIComponent(password)}@`)

layer(NodeKube.layerPlatform)("Proxy", (it) => {
  describe("proxy-url", () => {
    it.effect("an http proxy: every request goes through one kept-alive CONNECT tunnel", () =>
      Effect.gen(function*() {
        const { port } = yield* cluster
        const proxy = yield* connectProxy({ hosts: { [hostName]: "127.0.0.1" } })
        yield* Effect.provide(someRequests, layerFor(kubeconfig(port, { "proxy-url": proxy.url })))
        assert.isAtLeast(proxy.tunnels(), 1)
        assert.isAtMost(proxy.tunnels(), 2)
        assert.deepStrictEqual([...new Set(proxy.targets)], [`${hostName}:${port}`])
      }))

    it.effect("an https proxy (verified with the cluster's CA) and tls-server-name inside the tunnel", () =>
      Effect.gen(function*() {
        const { port } = yield* cluster
        const proxy = yield* connectProxy({ tls: pki().server })
        // The server is named by its address; the proxy connects to it, and TLS inside the
        // tunnel checks the certificate against tls-server-name.
        const text = kubeconfig(
          port,
          { "proxy-url": proxy.url, "tls-server-name": hostName },
          `https://127.0.0.1:${port}`
        )
        yield* Effect.provide(someRequests, layerFor(text))
        assert.isAtLeast(proxy.tunnels(), 1)
        assert.deepStrictEqual([...new Set(proxy.targets)], [`127.0.0.1:${port}`])
      }))

    it.effect("a socks5 proxy, with and without credentials", () =>
      Effect.gen(function*() {
        const { port } = yield* cluster
        const open = yield* socks5Proxy({ hosts: { [hostName]: "127.0.0.1" } })
        yield* Effect.provide(someRequests, layerFor(kubeconfig(port, { "proxy-url": open.url })))
        assert.isAtLeast(open.tunnels(), 1)
        assert.deepStrictEqual([...new Set(open.targets)], [`${hostName}:${port}`])

        const guarded = yield* socks5Proxy({
          hosts: { [hostName]: "127.0.0.1" },
          credentials: { username: "user", password: PASSWORD }
        })
        yield* Effect.provide(
          pods.get("through"),
          layerFor(kubeconfig(port, { "proxy-url": withCredentials(guarded) }))
        )
        assert.strictEqual(guarded.tunnels(), 1)
        assert.deepStrictEqual(guarded.authorizations, [`user:${PASSWORD}`])

        const refused = yield* Effect.exit(Effect.provide(
          pods.get("through"),
          layerFor(kubeconfig(port, { "proxy-url": withCredentials(guarded, "wrong") }))
        ))
        assert.isTrue(Exit.isFailure(refused))
        assert.strictEqual(guarded.tunnels(), 1)
        assert.include(printed(refused), "Authentication failed")
        assertNoSecret(printed(refused))
      }))

    it.effect("proxy credentials are sent as Proxy-Authorization and never printed", () =>
      Effect.gen(function*() {
        const { port } = yield* cluster
        const proxy = yield* connectProxy({
          hosts: { [hostName]: "127.0.0.1" },
          credentials: { username: "user", password: PASSWORD }
        })
        const text = kubeconfig(port, { "proxy-url": withCredentials(proxy) })
        yield* Effect.provide(pods.get("through"), layerFor(text))
        assert.strictEqual(proxy.tunnels(), 1)
        assert.deepStrictEqual(proxy.authorizations, [`Basic ${Buffer.from(`user:${PASSWORD}`).toString("base64")}`])

        // The loaded configuration shows where the proxy is, not how to log in to it.
        const service = yield* KubeConfig.fromString(text)
        assert.strictEqual(service.proxy?.url, proxy.url)
        assertNoSecret(JSON.stringify(service))
        assertNoSecret(Util.inspect(service, { depth: 10 }))
        assertNoSecret(String(service.proxy?.credentials))

        // A proxy that refuses the credentials (407): the failure says so without them.
        const refused = yield* Effect.exit(
          Effect.provide(pods.get("through"), layerFor(kubeconfig(port, { "proxy-url": withCredentials(proxy, "no") })))
        )
        assert.isTrue(Exit.isFailure(refused))
        assert.strictEqual(proxy.tunnels(), 1)
        assert.include(printed(refused), "407")
        assertNoSecret(printed(refused))
        const withRightOnes = yield* Effect.exit(Effect.provide(
          Effect.flatMap(HttpClient.HttpClient, (client) => client.get(`https://127.0.0.1:1/`)),
          layerFor(text)
        ))
        assertNoSecret(printed(withRightOnes))
      }))

    it.effect("other origins do not go through the cluster's proxy", () =>
      Effect.gen(function*() {
        const { port } = yield* cluster
        const proxy = yield* connectProxy({ hosts: { [hostName]: "127.0.0.1" } })
        const other = yield* serveHttp((_req, res) => res.end("elsewhere"))
        const text = yield* Effect.provide(
          Effect.gen(function*() {
            yield* pods.get("x")
            const client = yield* HttpClient.HttpClient
            return yield* Effect.flatMap(client.get(`${other.url}/direct`), (response) => response.text)
          }),
          layerFor(kubeconfig(port, { "proxy-url": proxy.url }))
        )
        assert.strictEqual(text, "elsewhere")
        assert.deepStrictEqual(other.requests, ["GET /direct"])
        assert.deepStrictEqual([...new Set(proxy.targets)], [`${hostName}:${port}`])
      }))

    it.effect("a proxy-url that cannot be used is refused, naming file, context and field but not the URL", () =>
      Effect.gen(function*() {
        const urls = [`ftp://user:${PASSWORD}@proxy:21`, `not a url ${PASSWORD}`, `http://user:%zz${PASSWORD}@proxy`]
        for (const url of urls) {
          const error = yield* Effect.flip(KubeConfig.fromString(kubeconfig(1, { "proxy-url": url })))
          assert.strictEqual(error._tag, "KubeConfigError")
          assert.strictEqual(error.field, "clusters[c].cluster.proxy-url")
          assert.strictEqual(error.context, "ctx")
          assert.strictEqual(error.source, "<string>")
          assertNoSecret(`${error.message}\n${String(error)}\n${JSON.stringify(error)}`)
        }
        const explicit = yield* Effect.flip(KubeConfig.make({ server: "https://h", proxy: `socks4://u:${PASSWORD}@h` }))
        assert.strictEqual(explicit.field, "proxy")
        assertNoSecret(explicit.message)
      }))

    it.effect("KubeConfig.make takes a proxy too", () =>
      Effect.gen(function*() {
        const service = yield* KubeConfig.make({ server: "https://h", proxy: "socks5://user:pw@10.0.0.1" })
        assert.strictEqual(service.proxy?.url, "socks5://10.0.0.1:1080")
      }))
  })

  describe("HTTPS_PROXY and NO_PROXY from the environment", () => {
    it.effect("HTTPS_PROXY (or https_proxy) is used when the kubeconfig sets no proxy-url", () =>
      Effect.gen(function*() {
        const { port } = yield* cluster
        const proxy = yield* connectProxy({ hosts: { [hostName]: "127.0.0.1" } })
        yield* Effect.provide(someRequests, layerFor(kubeconfig(port), { HTTPS_PROXY: proxy.url }))
        const upper = proxy.tunnels()
        assert.isAtLeast(upper, 1)
        // Without a scheme, as people often write it: an http proxy.
        yield* Effect.provide(
          pods.get("through"),
          layerFor(kubeconfig(port), { https_proxy: `127.0.0.1:${proxy.port}` })
        )
        assert.strictEqual(proxy.tunnels(), upper + 1)
        // HTTP_PROXY is for http servers only.
        const direct = yield* Effect.exit(
          Effect.provide(pods.get("through"), layerFor(kubeconfig(port), { HTTP_PROXY: proxy.url }))
        )
        assert.isTrue(Exit.isFailure(direct), "without a proxy the name does not resolve")
        assert.strictEqual(proxy.tunnels(), upper + 1)
      }))

    it.effect("proxy-url wins over HTTPS_PROXY", () =>
      Effect.gen(function*() {
        const { port } = yield* cluster
        const chosen = yield* connectProxy({ hosts: { [hostName]: "127.0.0.1" } })
        const ignored = yield* connectProxy({ hosts: { [hostName]: "127.0.0.1" } })
        yield* Effect.provide(
          pods.get("x"),
          layerFor(kubeconfig(port, { "proxy-url": chosen.url }), { HTTPS_PROXY: ignored.url })
        )
        assert.strictEqual(chosen.tunnels(), 1)
        assert.strictEqual(ignored.tunnels(), 0)
      }))

    it.effect("NO_PROXY by domain, leading dot, port and *: the request goes direct", () =>
      Effect.gen(function*() {
        const { port } = yield* cluster
        const proxy = yield* connectProxy({ hosts: { [hostName]: "127.0.0.1" } })
        const run = (noProxy: string) =>
          Effect.exit(
            Effect.provide(pods.get("x"), layerFor(kubeconfig(port), { HTTPS_PROXY: proxy.url, NO_PROXY: noProxy }))
          )
        // Direct: the name does not resolve without the proxy, and the proxy saw nothing.
        const bypassing = [
          hostName,
          ".internal.test",
          "internal.test",
          "*.internal.test",
          `${hostName}:${port}`,
          "*",
          " other.test , *"
        ]
        for (const noProxy of bypassing) {
          const exit = yield* run(noProxy)
          assert.isTrue(Exit.isFailure(exit), noProxy)
          assert.strictEqual(proxy.tunnels(), 0, noProxy)
        }
        // Not matching: through the proxy.
        for (const noProxy of ["other.test", `${hostName}:1`, ".kube.internal.test", "10.0.0.0/8", ""]) {
          const before = proxy.tunnels()
          const exit = yield* run(noProxy)
          assert.isTrue(Exit.isSuccess(exit), noProxy)
          assert.strictEqual(proxy.tunnels(), before + 1, noProxy)
        }
        // The lower-case name is read too.
        assert.isTrue(Exit.isFailure(yield* Effect.exit(
          Effect.provide(pods.get("x"), layerFor(kubeconfig(port), { HTTPS_PROXY: proxy.url, no_proxy: hostName }))
        )))
      }))

    // Loopback is never proxied (client-go's rule), so an address rule needs a server on another interface.
    const outward = Object.values(Os.networkInterfaces()).flat().find((i) => i?.family === "IPv4" && !i.internal)
    it.effect.skipIf(outward === undefined)("NO_PROXY by CIDR and by address: a server on a non-loopback address", () =>
      Effect.gen(function*() {
        const address = outward!.address
        const { server, ca } = pki()
        const served = yield* FakeCluster.serve({
          token: TOKEN,
          host: address,
          tls: { cert: server.cert, key: server.key, ca: ca.cert }
        })
        const port = Number(new URL(served.url).port)
        const proxy = yield* connectProxy()
        // The certificate names localhost, not this address.
        const text = kubeconfig(port, { "tls-server-name": "localhost" }, `https://${address}:${port}`)
        const run = (noProxy: string) =>
          Effect.provide(pods.get("x"), layerFor(text, { HTTPS_PROXY: proxy.url, NO_PROXY: noProxy }))
        yield* run("")
        assert.strictEqual(proxy.tunnels(), 1)
        assert.deepStrictEqual(proxy.targets, [`${address}:${port}`])
        const prefix = address.split(".").slice(0, 2).join(".")
        for (const noProxy of [`${prefix}.0.0/16`, address, `${address}:${port}`, `example.com,${address}/32`]) {
          yield* run(noProxy)
          assert.strictEqual(proxy.tunnels(), 1, noProxy)
        }
        yield* run(`${address}:1`)
        assert.strictEqual(proxy.tunnels(), 2)
      }))

    it.effect("an HTTPS_PROXY that is not a URL fails the cluster's requests, naming the variable, not its value", () =>
      Effect.gen(function*() {
        const { port } = yield* cluster
        const exit = yield* Effect.exit(
          Effect.provide(pods.get("x"), layerFor(kubeconfig(port), { HTTPS_PROXY: `ftp://user:${PASSWORD}@proxy` }))
        )
        const text = printed(exit)
        assert.include(text, "HTTPS_PROXY")
        assertNoSecret(text)
      }))

    it("NO_PROXY rules as client-go's (golang.org/x/net/http/httpproxy)", () => {
      const cases: ReadonlyArray<readonly [noProxy: string, host: string, port: string, proxied: boolean]> = [
        ["", "example.com", "443", true],
        ["", "localhost", "443", false],
        ["", "127.0.0.1", "443", false],
        ["", "127.1.2.3", "443", false],
        ["", "[::1]", "443", false],
        ["*", "example.com", "443", false],
        ["example.com", "example.com", "443", false],
        ["example.com", "www.example.com", "443", false],
        ["example.com", "notexample.com", "443", true],
        [".example.com", "example.com", "443", true],
        [".example.com", "www.example.com", "443", false],
        ["*.example.com", "example.com", "443", true],
        ["*.example.com", "a.b.example.com", "443", false],
        ["example.com:443", "example.com", "443", false],
        ["example.com:443", "example.com", "6443", true],
        ["EXAMPLE.com", "Example.COM", "443", false],
        ["10.0.0.0/8", "10.1.2.3", "443", false],
        ["10.0.0.0/8", "11.1.2.3", "443", true],
        ["10.0.0.0/8", "example.com", "443", true],
        ["fd00::/8", "[fd00::1]", "443", false],
        ["10.1.2.3", "10.1.2.3", "443", false],
        ["10.1.2.3:6443", "10.1.2.3", "443", true],
        ["10.1.2.3:6443", "10.1.2.3", "6443", false],
        ["[fd00::1]:443", "[fd00::1]", "443", false],
        ["fd00::1", "[fd00:0::1]", "443", false],
        [" a.test , b.test ", "b.test", "443", false],
        ["a.test,,:80", "c.test", "80", true]
      ]
      for (const [noProxy, host, port, proxied] of cases) {
        assert.strictEqual(useProxy(noProxy, host, port), proxied, `NO_PROXY=${noProxy} ${host}:${port}`)
      }
      assert.isUndefined(noProxyMatchers("a.test,*"))
    })
  })
})

/**
 * Exec, attach and port-forward through a proxy, as the request path goes: an HTTP CONNECT proxy (plain, with
 * credentials, or itself over TLS) and a SOCKS5 one on loopback in front of `FakeCluster.serve` over TLS, named by a
 * host only the proxy can resolve (so a dial around the proxy cannot reach it). The kubeconfig's `proxy-url`, and
 * HTTPS_PROXY with NO_PROXY. A proxy that refuses is a TransportError naming it, without its credentials.
 */
import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Effect, Layer, Stream } from "effect"
import * as Yaml from "yaml"
import * as Exec from "../../../packages/effect-kube/src/Exec.js"
import * as Kube from "../../../packages/effect-kube/src/Kube.js"
import * as KubeConfig from "../../../packages/effect-kube/src/KubeConfig.js"
import * as NodeKube from "../../../packages/effect-kube/src/NodeKube.js"
import { Pods } from "../../../packages/effect-kube/src/resources/index.js"
import { FakeCluster } from "@effect-kube/testing"
import { pki } from "../../util/pki.js"
import { connectProxy, socks5Proxy, type TestProxy } from "../../util/proxy.js"

const pods = Kube.api(Pods, { namespace: "default" })
const token = "cluster-token"
const credentials = { username: "kube", password: "proxy-secret" }

const kubeconfig = (port: number, proxyUrl: string | undefined) =>
  Yaml.stringify({
    "current-context": "ctx",
    clusters: [{
      name: "c",
      cluster: {
        server: `https://${pki().serverName}:${port}`,
        "certificate-authority-data": Buffer.from(pki().ca.cert).toString("base64"),
        ...(proxyUrl !== undefined ? { "proxy-url": proxyUrl } : {})
      }
    }],
    users: [{ name: "u", user: { token } }],
    contexts: [{ name: "ctx", context: { cluster: "c", user: "u", namespace: "default" } }]
  })

const served = FakeCluster.serve({
  token,
  tls: { cert: pki().namedServer.cert, key: pki().namedServer.key, ca: pki().ca.cert },
  portForward: (_pod, port, connection) => Stream.runForEach(connection.read, (bytes) => connection.write(`${port}:${new TextDecoder().decode(bytes)}`))
}).pipe(Effect.orDie)

const layerFor = (port: number, proxyUrl: string | undefined, env: Record<string, string> = {}) =>
  NodeKube.layerFromKubeConfig(KubeConfig.layerFromString(kubeconfig(port, proxyUrl))).pipe(
    Layer.provideMerge(ConfigProvider.layer(ConfigProvider.fromEnvRecord(env))),
    Layer.orDie
  )

const withCredentials = (url: string) => url.replace("://", `://${credentials.username}:${credentials.password}@`)

/** Exec with stdin, attach and a port-forward round trip: all three WebSockets. */
const everyUpgrade = Effect.gen(function*() {
  yield* pods.create({ metadata: { name: "web" }, spec: { containers: [{ name: "c", image: "busybox", command: ["cat"] }] } })
  yield* pods.waitFor("web", (p) => p?.status?.phase === "Running", { timeout: "10 seconds" })
  const result = yield* Exec.exec(pods, "web", ["cat"], { stdin: "through the proxy" })
  assert.strictEqual(result.stdout, "through the proxy")
  const attached = yield* Effect.scoped(Effect.gen(function*() {
    const session = yield* Exec.attach(pods, "web", { stdin: true })
    yield* session.write("attached\n")
    yield* session.end
    return yield* session.stdout.pipe(Stream.decodeText(), Stream.mkString)
  }))
  assert.strictEqual(attached, "attached\n")
  const echoed = yield* Effect.scoped(Effect.gen(function*() {
    const [forward] = yield* Exec.portForward(pods, "web", [8080])
    yield* forward!.write("ping")
    return yield* forward!.read.pipe(Stream.decodeText(), Stream.take(1), Stream.mkString)
  }))
  assert.strictEqual(echoed, "8080:ping")
})

const upgradesThrough = (proxy: TestProxy, port: number) =>
  proxy.targets.filter((t) => t === `${pki().serverName}:${port}`).length

describe("exec, attach and port-forward through a proxy", () => {
  const cases: ReadonlyArray<readonly [string, Effect.Effect<TestProxy, never, import("effect/Scope").Scope>, boolean]> = [
    ["CONNECT", connectProxy({ hosts: { [pki().serverName]: "127.0.0.1" } }), false],
    ["CONNECT with credentials", connectProxy({ hosts: { [pki().serverName]: "127.0.0.1" }, credentials }), true],
    ["CONNECT over TLS", connectProxy({ hosts: { [pki().serverName]: "127.0.0.1" }, tls: { cert: pki().server.cert, key: pki().server.key } }), false],
    ["SOCKS5", socks5Proxy({ hosts: { [pki().serverName]: "127.0.0.1" } }), false],
    ["SOCKS5 with credentials", socks5Proxy({ hosts: { [pki().serverName]: "127.0.0.1" }, credentials }), true]
  ]
  for (const [name, makeProxy, authenticated] of cases) {
    it.live(`proxy-url, ${name}: every upgrade goes through the tunnel`, () =>
      Effect.gen(function*() {
        const cluster = yield* served
        const port = Number(new URL(cluster.url).port)
        const proxy = yield* makeProxy
        const url = authenticated ? withCredentials(proxy.url) : proxy.url
        yield* everyUpgrade.pipe(Effect.provide(layerFor(port, url)))
        // the API requests (create, get) and the three upgrades, each through the proxy
        assert.isAtLeast(upgradesThrough(proxy, port), 4)
        if (authenticated) {
          const expected = name.startsWith("SOCKS5")
            ? `${credentials.username}:${credentials.password}`
            : `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`).toString("base64")}`
          assert.isTrue(proxy.authorizations.every((a) => a === expected))
        }
      }))
  }

  it.live("HTTPS_PROXY is followed unless NO_PROXY names the server", () =>
    Effect.gen(function*() {
      const cluster = yield* served
      const port = Number(new URL(cluster.url).port)
      const proxy = yield* connectProxy({ hosts: { [pki().serverName]: "127.0.0.1" } })
      yield* everyUpgrade.pipe(Effect.provide(layerFor(port, undefined, { HTTPS_PROXY: proxy.url })))
      assert.isAtLeast(upgradesThrough(proxy, port), 4)
      const before = proxy.targets.length
      // excluded: dialled directly, where the name does not resolve
      const direct = yield* Effect.flip(
        Exec.exec(pods, "web", ["true"]).pipe(
          Effect.provide(layerFor(port, undefined, { HTTPS_PROXY: proxy.url, NO_PROXY: pki().serverName }))
        )
      )
      assert.strictEqual(direct._tag, "HttpClientError")
      assert.strictEqual(proxy.targets.length, before)
    }))

  it.live("a proxy that refuses the tunnel is a TransportError naming it, never its credentials", () =>
    Effect.gen(function*() {
      const cluster = yield* served
      const port = Number(new URL(cluster.url).port)
      const guarded = yield* connectProxy({ hosts: { [pki().serverName]: "127.0.0.1" }, credentials })
      const socks = yield* socks5Proxy({ hosts: { [pki().serverName]: "127.0.0.1" }, credentials })
      for (const [proxy, expected] of [[guarded, "refused to tunnel to kube.internal.test"], [socks, "the credentials were not accepted"]] as const) {
        const wrong = proxy.url.replace("://", "://kube:wrong-secret@")
        const error = yield* Effect.flip(Exec.exec(pods, "web", ["true"]).pipe(Effect.provide(layerFor(port, wrong))))
        assert.strictEqual(error._tag, "HttpClientError")
        if (error._tag === "HttpClientError") assert.strictEqual(error.reason._tag, "TransportError")
        assert.include(error.message, proxy.url)
        assert.include(error.message, expected)
        assert.notInclude(JSON.stringify(error) + String(error) + error.message, "wrong-secret")
      }
      const anonymous = yield* Effect.flip(Exec.exec(pods, "web", ["true"]).pipe(Effect.provide(layerFor(port, guarded.url))))
      assert.include(anonymous.message, `the proxy ${guarded.url} refused to tunnel to kube.internal.test:${port}: 407 Proxy Authentication Required`)
    }))
})

/**
 * Connections under load, over the real Node transport against FakeCluster served on
 * loopback HTTPS: short requests share a capped pool (`NodeKube.Options.maxConnections`),
 * watches and log follows have a pool of their own, so open streams never starve a GET,
 * and an interrupted watch still closes its connection. The cap holds through CONNECT and
 * SOCKS5 proxies too. Connections are counted by the server (or the proxy), never guessed.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as Yaml from "yaml"
import { ValidationError } from "../../../packages/effect-kube/src/Errors.js"
import { defaultMaxConnections, isLongRunning } from "../../../packages/effect-kube/src/internal/transport/node.js"
import * as Kube from "../../../packages/effect-kube/src/Kube.js"
import * as KubeConfig from "../../../packages/effect-kube/src/KubeConfig.js"
import * as NodeKube from "../../../packages/effect-kube/src/NodeKube.js"
import { ConfigMaps, Pods } from "../../../packages/effect-kube/src/resources/index.js"
import { FakeCluster } from "@effect-kube/testing"
import { burst } from "../../util/bursts.js"
import { pki } from "../../util/pki.js"
import { connectProxy, socks5Proxy } from "../../util/proxy.js"
import { eventually, serveTls } from "../../util/reliability.js"
import { pod } from "../../util/pods.js"

const cms = Kube.api(ConfigMaps, { namespace: "default" })
const pods = Kube.api(Pods, { namespace: "default" })

const configMap = (name: string) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace: "default", labels: { app: "conn" } },
  data: { name }
})

/** The Node layers for a served fake, with transport options. */
const layerWith = (served: FakeCluster.Served, options?: NodeKube.Options) => {
  const kubeConfig = KubeConfig.layerFromFile({ path: served.kubeconfigPath })
  return (options === undefined
    ? NodeKube.layerFromKubeConfig(kubeConfig)
    : NodeKube.layerFromKubeConfig(kubeConfig, options)).pipe(Layer.orDie)
}

/** A bound on how long a request that must complete may take, so that a starved one fails rather than hangs. */
const completes = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.timeoutOrElse(effect, { duration: Duration.seconds(20), orElse: () => Effect.fail(new Error("starved")) })

describe("connections for short requests", () => {
  it.live("200 concurrent GETs use at most the default cap of connections, and all succeed", () =>
    Effect.gen(function*() {
      const served = yield* serveTls({ http2: false })
      served.control.seed(Array.from({ length: 20 }, (_, i) => configMap(`cm-${i}`)))
      yield* burst(200).pipe(Effect.provide(layerWith(served)))
      const gets = served.control.requests().filter((r) => r.method === "GET").length
      assert.strictEqual(gets, 200, "each sent once")
      assert.isAtLeast(served.connectionsOpened(), 1)
      assert.isAtMost(served.connectionsOpened(), defaultMaxConnections)
    }))

  it.live("with maxConnections: 4, 200 concurrent GETs open at most 4 connections, reused by a second burst", () =>
    Effect.gen(function*() {
      const served = yield* serveTls({ http2: false })
      served.control.seed(Array.from({ length: 20 }, (_, i) => configMap(`cm-${i}`)))
      yield* Effect.gen(function*() {
        yield* burst(200)
        assert.isAtMost(served.connectionsOpened(), 4)
        const first = served.connectionsOpened()
        yield* burst(200)
        assert.strictEqual(served.connectionsOpened(), first, "the second burst reuses the kept-alive connections")
      }).pipe(Effect.provide(layerWith(served, { maxConnections: 4 })))
      assert.strictEqual(served.control.requests().length, 400)
    }))

  it.live("maxConnections: Infinity lifts the cap", () =>
    Effect.gen(function*() {
      const served = yield* serveTls({ http2: false })
      served.control.seed(Array.from({ length: 20 }, (_, i) => configMap(`cm-${i}`)))
      yield* burst(200).pipe(Effect.provide(layerWith(served, { maxConnections: Infinity })))
      assert.isAbove(served.connectionsOpened(), 4, "more connections than a small cap would allow")
    }))

  it.live("an invalid maxConnections fails the layer with a ValidationError, before any request", () =>
    Effect.gen(function*() {
      const served = yield* serveTls({ http2: false })
      for (const maxConnections of [0, -1, 1.5, Number.NaN]) {
        const exit = yield* Effect.exit(cms.list().pipe(Effect.provide(layerWith(served, { maxConnections }))))
        assert.isTrue(Exit.isFailure(exit))
        const error = Exit.isFailure(exit) ? Cause.squash(exit.cause) : undefined
        assert.instanceOf(error, ValidationError)
        assert.include((error as ValidationError).message, "maxConnections")
      }
      assert.strictEqual(served.control.requests().length, 0)
      assert.strictEqual(served.connectionsOpened(), 0)
    }))
})

describe("streams on their own pool", () => {
  it.live("with more open watches and log follows than the cap, GETs still complete", () =>
    Effect.gen(function*() {
      const served = yield* serveTls({ http2: false })
      const control = served.control
      control.seed(Array.from({ length: 20 }, (_, i) => configMap(`cm-${i}`)))
      control.seed([pod("busy")])
      yield* Effect.gen(function*() {
        const cap = 3
        const watches = yield* Effect.forEach(
          Array.from({ length: cap + 3 }),
          () => cms.watch({ labelSelector: "app=conn" }).pipe(Stream.runDrain, Effect.forkChild)
        )
        const follows = yield* Effect.forEach(
          Array.from({ length: cap }),
          () => pods.logStream("busy").pipe(Stream.runDrain, Effect.forkChild)
        )
        assert.isTrue(yield* eventually(() => control.openWatches() === cap + 3), "the watches are open")
        assert.isTrue(yield* eventually(() => control.openLogStreams() === cap), "the follows are open")

        yield* completes(burst(50))
        const found = yield* completes(cms.get("cm-1"))
        assert.isTrue(Option.isSome(found))
        // 2 * cap + 3 streams, each on its own connection, and at most `cap` for the GETs
        assert.isAtMost(served.connectionsOpened(), 2 * cap + 3 + cap)

        // interrupted, every stream lets go of its connection; the GETs' kept-alive ones stay
        yield* Fiber.interruptAll([...watches, ...follows])
        assert.isTrue(yield* eventually(() => control.openWatches() === 0), "the server saw every watch go")
        assert.isTrue(yield* eventually(() => control.openLogStreams() === 0), "and every follow")
        assert.isTrue(
          yield* eventually(() => served.openConnections() <= cap),
          `the streams' connections closed (${served.openConnections()} open)`
        )
        yield* completes(burst(20))
      }).pipe(Effect.provide(layerWith(served, { maxConnections: 3 })))
      assert.isTrue(yield* eventually(() => served.openConnections() === 0), "none left after the layer closed")
    }))

  it.live("a watch on a capped pool is interruptible and closes its connection", () =>
    Effect.gen(function*() {
      const served = yield* serveTls({ http2: false })
      yield* Effect.gen(function*() {
        const fiber = yield* cms.watch().pipe(Stream.runDrain, Effect.forkChild)
        assert.isTrue(yield* eventually(() => served.control.openWatches() === 1), "watch open")
        assert.strictEqual(served.openConnections(), 1)
        yield* Fiber.interrupt(fiber)
        assert.isTrue(yield* eventually(() => served.control.openWatches() === 0), "watch closed")
        assert.isTrue(yield* eventually(() => served.openConnections() === 0), "socket closed")
      }).pipe(Effect.provide(layerWith(served, { maxConnections: 1 })))
    }))
})

describe("the cap through a proxy", () => {
  const hostName = pki().serverName
  const token = "cluster-token"
  const kubeconfig = (port: number, proxyUrl: string) =>
    Yaml.stringify({
      "current-context": "ctx",
      clusters: [{
        name: "c",
        cluster: {
          server: `https://${hostName}:${port}`,
          "certificate-authority-data": Buffer.from(pki().ca.cert).toString("base64"),
          "proxy-url": proxyUrl
        }
      }],
      users: [{ name: "u", user: { token } }],
      contexts: [{ name: "ctx", context: { cluster: "c", user: "u", namespace: "default" } }]
    })

  for (const [kind, makeProxy] of [["CONNECT", connectProxy], ["SOCKS5", socks5Proxy]] as const) {
    it.live(`${kind}: 100 concurrent GETs open at most the cap's tunnels, a watch one more`, () =>
      Effect.gen(function*() {
        const { ca, namedServer } = pki()
        const served = yield* FakeCluster.serve({
          token,
          tls: { cert: namedServer.cert, key: namedServer.key, ca: ca.cert }
        }).pipe(Effect.orDie)
        served.control.seed(Array.from({ length: 20 }, (_, i) => configMap(`cm-${i}`)))
        const proxy = yield* makeProxy({ hosts: { [hostName]: "127.0.0.1" } })
        const layer = NodeKube.layerFromKubeConfig(
          KubeConfig.layerFromString(kubeconfig(Number(new URL(served.url).port), proxy.url)),
          { maxConnections: 2 }
        ).pipe(Layer.provide(ConfigProvider.layer(ConfigProvider.fromEnvRecord({}))), Layer.orDie)
        yield* Effect.gen(function*() {
          const watch = yield* cms.watch().pipe(Stream.runDrain, Effect.forkChild)
          assert.isTrue(yield* eventually(() => served.control.openWatches() === 1), "watch open")
          yield* completes(burst(100))
          assert.isAtMost(proxy.tunnels(), 3)
          assert.isAtMost(served.connectionsOpened(), 3)
          yield* Fiber.interrupt(watch)
        }).pipe(Effect.provide(layer))
      }))
  }
})

describe("isLongRunning", () => {
  it("tells streams (by query or path) from short requests", () => {
    const long = [
      "/api/v1/namespaces/default/pods?watch=true",
      "/api/v1/pods?labelSelector=a%3Db&watch=1",
      "/apis/apps/v1/namespaces/x/deployments?resourceVersion=5&watch=true&timeoutSeconds=30",
      "/api/v1/watch/namespaces/default/pods",
      "/api/v1/namespaces/default/pods/web/log?follow=true&container=app",
      "/api/v1/namespaces/default/pods/web/log",
      "/api/v1/namespaces/default/pods/web/exec?command=sh",
      "/api/v1/namespaces/default/pods/web/attach",
      "/api/v1/namespaces/default/pods/web/portforward?ports=80",
      "/api/v1/namespaces/default/services/web:80/proxy/metrics",
      "/api/v1/nodes/n1/proxy"
    ]
    const short = [
      "/api/v1/namespaces/default/pods",
      "/api/v1/namespaces/default/pods/web",
      "/api/v1/namespaces/default/pods?watch=false",
      "/api/v1/namespaces/default/pods?labelSelector=watch%3Dtrue",
      "/apis/apps/v1/namespaces/default/deployments/web/scale",
      "/api/v1/namespaces/default/pods/web/status",
      "/api/v1/namespaces/default/pods/web/eviction"
    ]
    for (const path of long) assert.isTrue(isLongRunning(path), path)
    for (const path of short) assert.isFalse(isLongRunning(path), path)
    // the server URL's own path is not looked at
    assert.isFalse(isLongRunning("/proxy/k8s/api/v1/namespaces/default/pods", "/proxy/k8s".length))
    assert.isTrue(isLongRunning("/proxy/k8s/api/v1/namespaces/default/pods?watch=true", "/proxy/k8s".length))
  })
})

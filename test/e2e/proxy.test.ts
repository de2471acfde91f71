/**
 * Exec, attach and port-forward through a proxy in front of the real control plane: the test's kubeconfig is the
 * cluster's with a `proxy-url` added, pointing at an HTTP CONNECT proxy or a SOCKS5 one on loopback (test/util/proxy.ts).
 * Every upgrade must show up at the proxy as a tunnel to the API server.
 */
import { assert, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as Fs from "node:fs"
import * as Yaml from "yaml"
import { connectProxy, socks5Proxy, type TestProxy } from "../util/proxy.js"
import { Condition, Kube, KubeConfig, NodeKube, Pods } from "./lib.js"
import { allText, kubeconfigPath, layer, testNamespace, textUntil } from "./support.js"

const credentials = { username: "e2e", password: "proxy-secret" }

/** The cluster's kubeconfig with every cluster sent through `proxyUrl`. */
const throughProxy = (proxyUrl: string) => {
  const config = Yaml.parse(Fs.readFileSync(kubeconfigPath(), "utf8")) as {
    clusters: Array<{ cluster: Record<string, unknown> }>
  }
  for (const entry of config.clusters) entry.cluster["proxy-url"] = proxyUrl
  return NodeKube.layerFromKubeConfig(KubeConfig.layerFromString(Yaml.stringify(config))).pipe(Layer.orDie)
}

const upgrades = (proxy: TestProxy) => proxy.targets.length

it.layer(layer, { excludeTestServices: true, timeout: "90 seconds" })("proxy", (it) => {
  for (const [name, makeProxy] of [["CONNECT", connectProxy], ["SOCKS5", socks5Proxy]] as const) {
    it.effect(`${name}: exec, attach and port-forward reach the pod through the proxy`, () =>
      Effect.gen(function*() {
        const ns = yield* testNamespace("proxy")
        const pods = Kube.api(Pods, { namespace: ns })
        yield* pods.create({
          metadata: { name: "box" },
          spec: {
            terminationGracePeriodSeconds: 0,
            containers: [{
              name: "c",
              image: "busybox:1.36",
              command: ["sh", "-c", "while read line; do echo got-$line; done"],
              stdin: true,
              ports: [{ containerPort: 8080 }]
            }]
          }
        })
        yield* pods.waitFor("box", Condition.podReady, { timeout: "60 seconds" })
        const proxy = yield* makeProxy({ credentials })
        const url = proxy.url.replace("://", `://${credentials.username}:${credentials.password}@`)
        yield* Effect.gen(function*() {
          const before = upgrades(proxy)
          const result = yield* pods.exec("box", ["sh", "-c", "cat; echo done"], { stdin: "via proxy\n" })
          assert.strictEqual(result.stdout, "via proxy\ndone\n")
          const seen = yield* Effect.scoped(Effect.gen(function*() {
            const main = yield* pods.attach("box", { stdin: true })
            yield* main.write("hello\n")
            return yield* textUntil(main.stdout, "got-hello\n")
          }))
          assert.include(seen, "got-hello")
          const answer = yield* Effect.scoped(Effect.gen(function*() {
            const [conn] = yield* pods.portForward("box", [8080])
            yield* conn!.write("GET /through-proxy HTTP/1.1\r\nHost: box\r\nConnection: close\r\n\r\n")
            return yield* allText(conn!.read)
          }))
          assert.match(answer, /^HTTP\/1\.1 200 OK\r\n/)
          assert.include(answer, "port 8080: GET /through-proxy")
          // three upgrades, three tunnels (the request path's own may add more)
          assert.isAtLeast(upgrades(proxy) - before, 3)
        }).pipe(Effect.provide(throughProxy(url)))

        // wrong credentials: a TransportError naming the proxy, not the secret
        const refused = yield* Effect.flip(
          pods.exec("box", ["true"]).pipe(Effect.provide(throughProxy(proxy.url.replace("://", "://e2e:wrong-secret@"))))
        )
        assert.strictEqual(refused._tag, "HttpClientError")
        assert.include(refused.message, proxy.url)
        assert.notInclude(refused.message + JSON.stringify(refused), "wrong-secret")
      }))
  }
})

/**
 * The smoke flow on other runtimes: Bun (BunKube) and Deno (DenoKube), each in its own
 * process, given only a kubeconfig, talking HTTPS with a bearer token to the fake served
 * on loopback. Each also asks a second HTTPS origin through the same HttpClient, which
 * must fail: that origin's certificate is signed by the cluster's CA, so it would verify
 * only if the cluster's TLS material leaked beyond the cluster's origin.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { execFile } from "node:child_process"
import * as Fs from "node:fs"
import * as Https from "node:https"
import type * as Net from "node:net"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import * as Yaml from "yaml"
import { FakeCluster } from "@effect-kube/testing"
import { runs, writeExecPlugin } from "../util/execPlugin.js"
import { pki } from "../util/pki.js"
import { connectProxy, socks5Proxy } from "../util/proxy.js"

const root = Path.resolve(fileURLToPath(new URL("../..", import.meta.url)))
const bin = (name: string) => Path.join(root, "node_modules", ".bin", name)

const run = (command: string, args: ReadonlyArray<string>) =>
  Effect.callback<{ readonly code: number | null; readonly stdout: string; readonly stderr: string }>((resume) => {
    const options = { cwd: root, timeout: 25_000, env: { ...process.env, KUBECONFIG: "" } }
    const child = execFile(command, [...args], options, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === "number" ? error.code : null
      resume(Effect.succeed({ code, stdout, stderr }))
    })
    return Effect.sync(() => child.kill())
  })

/** The smoke flow under Bun, then under Deno (sloppy imports: the sources import `.js` names of `.ts` files). */
const onBun = (...args: ReadonlyArray<string>) => run(bin("bun"), ["test/runtimes/bun.ts", ...args])
const onDeno = (...args: ReadonlyArray<string>) =>
  run(bin("deno"), ["run", "-A", "--sloppy-imports", "--no-lock", "test/runtimes/deno.ts", ...args])

/** A second HTTPS origin, with a certificate the cluster's CA signed; counts the requests it answered. */
const otherOrigin = Effect.acquireRelease(
  Effect.callback<{ readonly server: Https.Server; readonly url: string; readonly answered: { n: number } }>((resume) => {
    const { server: pair } = pki()
    const answered = { n: 0 }
    const server = Https.createServer({ cert: pair.cert, key: pair.key }, (_req, res) => {
      answered.n++
      res.end("{}")
    })
    server.listen(0, "127.0.0.1", () =>
      resume(Effect.succeed({
        server,
        url: `https://127.0.0.1:${(server.address() as Net.AddressInfo).port}/`,
        answered
      })))
  }),
  ({ server }) => Effect.callback<void>((resume) => {
    server.closeAllConnections()
    server.close(() => resume(Effect.void))
  })
)

describe("other runtimes", () => {
  // the served fake's kubelet runs on the Effect Clock: these tests let it run on the live one
  it.live("the smoke flow runs on Bun and on Deno over HTTPS against a served cluster", () =>
    Effect.gen(function*() {
      const { ca, server } = pki()
      const served = yield* FakeCluster.serve({
        tls: { cert: server.cert, key: server.key, ca: ca.cert },
        token: "smoke-token",
        simulate: true
      })
      const other = yield* otherOrigin
      const [bun, deno] = yield* Effect.all([
        onBun(served.kubeconfigPath, other.url),
        onDeno(served.kubeconfigPath, other.url)
      ], { concurrency: 2 })
      for (const [name, result] of [["bun", bun!], ["deno", deno!]] as const) {
        const output = `${name} exited ${result.code}\n${result.stdout}\n${result.stderr}`
        assert.strictEqual(result.code, 0, output)
        assert.match(result.stdout, new RegExp(`created  pod/smoke-${name} \\(uid [0-9a-f-]{36}\\)`), output)
        assert.include(result.stdout, `list     app=smoke-${name}: smoke-${name}`, output)
        assert.include(result.stdout, "watch    phase=Succeeded", output)
        assert.include(result.stdout, "hello from effect-kube", output)
        assert.include(result.stdout, "deleted  1", output)
        assert.include(result.stdout, "other    failed (TransportError)", output)
        assert.include(result.stdout, `smoke passed on ${name}`, output)
      }
      assert.strictEqual(other.answered.n, 0, "the other origin was not trusted with the cluster's CA")
      const pods = served.control.requests().filter((r) => r.path.startsWith("/api/v1/namespaces/default/pods"))
      assert.isAtLeast(pods.length, 10)
      assert.strictEqual(served.control.list("v1", "Pod", "default").length, 0)
    }), { timeout: 40_000 })

  it.live("tls-server-name: Bun checks it, Deno (which cannot) refuses it; fetch refuses two groups", () =>
    Effect.gen(function*() {
      const { ca, namedServer, serverName } = pki()
      const served = yield* FakeCluster.serve({
        tls: { cert: namedServer.cert, key: namedServer.key, ca: ca.cert },
        token: "smoke-token",
        simulate: true
      })
      const config = Yaml.parse(served.kubeconfig)
      config.clusters[0].cluster["tls-server-name"] = serverName
      const path = `${served.kubeconfigPath}.named`
      Fs.writeFileSync(path, Yaml.stringify(config))
      // fetch joins a repeated header with commas: impersonating two groups must fail, not
      // impersonate the group "a, b".
      config.users[0].user["as"] = "jane"
      config.users[0].user["as-groups"] = ["a", "b"]
      const groupsPath = `${served.kubeconfigPath}.groups`
      Fs.writeFileSync(groupsPath, Yaml.stringify(config))
      yield* Effect.addFinalizer(() =>
        Effect.sync(() => [path, groupsPath].forEach((p) => Fs.rmSync(p, { force: true })))
      )
      const [bun, deno, groups] = yield* Effect.all([
        onBun(path),
        onDeno(path),
        onBun(groupsPath)
      ], { concurrency: 2 })
      assert.strictEqual(groups!.code, 1, `${groups!.stdout}\n${groups!.stderr}`)
      assert.include(groups!.stderr, "impersonate-group header must be sent once per value")
      assert.strictEqual(bun!.code, 0, `${bun!.stdout}\n${bun!.stderr}`)
      assert.include(bun!.stdout, "smoke passed on bun")
      assert.strictEqual(deno!.code, 1, `${deno!.stdout}\n${deno!.stderr}`)
      assert.include(deno!.stderr, "tls-server-name")
      assert.include(deno!.stderr, "not supported on Deno")
      assert.notInclude(deno!.stderr, "smoke-token")
    }), { timeout: 40_000 })

  it.live("exec plugins, named relative to the kubeconfig, run on Bun and Deno (node-shared ChildProcessSpawner)", () =>
    Effect.gen(function*() {
      const { ca, server } = pki()
      const served = yield* FakeCluster.serve({
        tls: { cert: server.cert, key: server.key, ca: ca.cert },
        token: "exec-token-1",
        simulate: true
      })
      const dir = Fs.mkdtempSync(Path.join(Path.dirname(served.kubeconfigPath), "exec-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true })))
      writeExecPlugin(Path.join(dir, "bin", "plugin"))
      const files = ["bun", "deno"].map((name) => {
        const config = Yaml.parse(served.kubeconfig)
        const state = Path.join(dir, `state-${name}`)
        Fs.mkdirSync(state, { recursive: true })
        config.users[0].user = {
          exec: {
            apiVersion: "client.authentication.k8s.io/v1",
            command: "./bin/plugin",
            env: [{ name: "PLUGIN_STATE_DIR", value: state }],
            interactiveMode: "Never"
          }
        }
        const path = Path.join(dir, `kubeconfig-${name}`)
        Fs.writeFileSync(path, Yaml.stringify(config))
        return { path, state }
      })
      const [bun, deno] = yield* Effect.all([
        onBun(files[0]!.path),
        onDeno(files[1]!.path)
      ], { concurrency: 2 })
      assert.include(bun!.stdout, "smoke passed on bun", `${bun!.stdout}\n${bun!.stderr}`)
      assert.include(deno!.stdout, "smoke passed on deno", `${deno!.stdout}\n${deno!.stderr}`)
      assert.strictEqual(runs(files[0]!.state), 1, "the plugin ran once on Bun, its token cached")
      assert.strictEqual(runs(files[1]!.state), 1, "the plugin ran once on Deno, its token cached")
    }), { timeout: 40_000 })

  // The cluster is named by a host only the proxy resolves: the smoke flow passes only through it.
  it.live("proxy-url: Bun and Deno reach the cluster through a CONNECT proxy with credentials, and SOCKS5", () =>
    Effect.gen(function*() {
      const { ca, namedServer, serverName } = pki()
      const served = yield* FakeCluster.serve({
        tls: { cert: namedServer.cert, key: namedServer.key, ca: ca.cert },
        token: "smoke-token",
        simulate: true
      })
      const credentials = { username: "proxy-user", password: "pr0xy:secret@1" }
      const hosts = { [serverName]: "127.0.0.1" }
      const connect = yield* connectProxy({ credentials, hosts })
      const socks = yield* socks5Proxy({ credentials, hosts })
      const kubeconfigThrough = (name: string, proxyUrl: string) => {
        const config = Yaml.parse(served.kubeconfig)
        config.clusters[0].cluster.server = `https://${serverName}:${new URL(served.url).port}`
        const url = new URL(proxyUrl)
        url.username = encodeURIComponent(credentials.username)
        url.password = encodeURIComponent(credentials.password)
        config.clusters[0].cluster["proxy-url"] = url.href
        const path = `${served.kubeconfigPath}.${name}`
        Fs.writeFileSync(path, Yaml.stringify(config))
        return path
      }
      const paths = [kubeconfigThrough("connect", connect.url), kubeconfigThrough("socks", socks.url)]
      yield* Effect.addFinalizer(() => Effect.sync(() => paths.forEach((p) => Fs.rmSync(p, { force: true }))))
      const expected = `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`).toString("base64")}`
      const [bun, deno] = yield* Effect.all([onBun(paths[0]!), onDeno(paths[0]!)], { concurrency: 2 })
      for (const [name, result] of [["bun", bun!], ["deno", deno!]] as const) {
        assert.include(result.stdout, `smoke passed on ${name}`, `${name}: ${result.stdout}\n${result.stderr}`)
      }
      assert.isAtLeast(connect.tunnels(), 2)
      assert.deepStrictEqual([...new Set(connect.targets)], [`${serverName}:${new URL(served.url).port}`])
      assert.deepStrictEqual([...new Set(connect.authorizations)], [expected])
      const [bunSocks, denoSocks] = yield* Effect.all([onBun(paths[1]!), onDeno(paths[1]!)], { concurrency: 2 })
      assert.include(denoSocks!.stdout, "smoke passed on deno", `${denoSocks!.stdout}\n${denoSocks!.stderr}`)
      assert.isAtLeast(socks.tunnels(), 1)
      assert.deepStrictEqual([...new Set(socks.authorizations)], [`${credentials.username}:${credentials.password}`])
      // Bun's fetch speaks no SOCKS: a clear failure naming the proxy (and the name resolves only through it)
      assert.strictEqual(bunSocks!.code, 1, `${bunSocks!.stdout}\n${bunSocks!.stderr}`)
      assert.include(bunSocks!.stdout + bunSocks!.stderr, `proxy ${socks.url} is SOCKS5, which Bun's fetch cannot use`)
      for (const result of [bun!, deno!, bunSocks!, denoSocks!]) {
        assert.notInclude(result.stdout + result.stderr, credentials.password)
      }
    }), { timeout: 60_000 })
})

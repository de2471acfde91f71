/**
 * FakeCluster's failures are typed: a fake that cannot be served fails with a
 * `FakeClusterError` naming why and leaves nothing open; `httpClient` answers for any
 * `Server`, not only the values `makeServer` returned.
 */
import { assert, describe, it } from "@effect/vitest"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import { Effect, Stream } from "effect"
import { execFileSync, spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Yaml from "yaml"
import * as Kube from "../../packages/effect-kube/src/Kube.js"
import * as NodeKube from "../../packages/effect-kube/src/NodeKube.js"
import { ConfigMaps } from "../../packages/effect-kube/src/resources/index.js"
import { FakeCluster } from "@effect-kube/testing"
import { hasKubectl, kubectl, kubectlPath } from "../util/kubectl.js"

/** Whether script(1), which runs a command on a terminal of its own, is there. */
const hasScript: boolean = (() => {
  try {
    execFileSync("script", ["-qec", "true", "/dev/null"], { stdio: "ignore", timeout: 10_000 })
    return true
  } catch {
    return false
  }
})()

const portOf = (url: string): number => Number(new URL(url).port)

describe("FakeCluster.serve failures", () => {
  it.effect("a port in use fails with FakeClusterError Listen, and the fake already there keeps answering", () =>
    Effect.gen(function*() {
      const first = yield* FakeCluster.serve()
      const port = portOf(first.url)
      const error = yield* Effect.flip(FakeCluster.serve({ port }))
      assert.strictEqual(error._tag, "FakeClusterError")
      assert.strictEqual(error.reason, "Listen")
      assert.strictEqual(error.address, `127.0.0.1:${port}`)
      assert.include(error.message, `listen on 127.0.0.1:${port}`)
      assert.include(error.message, "EADDRINUSE")
      const answer = yield* Effect.promise(() => fetch(`${first.url}/version`))
      assert.strictEqual(answer.status, 200)
    }))

  it.effect("a kubeconfig that cannot be written fails with Kubeconfig and releases the port", () =>
    Effect.gen(function*() {
      const missing = Path.join(Os.tmpdir(), `effect-kube-missing-${process.pid}-${Date.now()}`, "nested")
      const error = yield* Effect.flip(Effect.scoped(FakeCluster.serve({ kubeconfigDir: missing })))
      assert.strictEqual(error.reason, "Kubeconfig")
      assert.match(error.address, /^http:\/\/127\.0\.0\.1:\d+$/)
      assert.include(error.message, "ENOENT")
      assert.isFalse(Fs.existsSync(missing))
      // the port it had bound is free again
      yield* Effect.scoped(Effect.flatMap(FakeCluster.serve({ port: portOf(error.address) }), (served) =>
        Effect.promise(() => fetch(`${served.url}/healthz`).then((r) => assert.strictEqual(r.status, 200)))))
    }))

  it.effect("a certificate that is not PEM fails with Tls, without the key in the message", () =>
    Effect.gen(function*() {
      const key = "-----BEGIN PRIVATE KEY-----\nc2VjcmV0LWtleS1tYXRlcmlhbA==\n-----END PRIVATE KEY-----\n"
      const error = yield* Effect.flip(Effect.scoped(FakeCluster.serve({ tls: { cert: "not a certificate", key } })))
      assert.strictEqual(error.reason, "Tls")
      assert.notInclude(error.message, "c2VjcmV0")
    }))

  it.effect("an address not on this machine fails with Listen", () =>
    Effect.gen(function*() {
      // TEST-NET-1 (RFC 5737): never assigned to a local interface
      const error = yield* Effect.flip(Effect.scoped(FakeCluster.serve({ host: "192.0.2.1" })))
      assert.strictEqual(error.reason, "Listen")
      assert.include(error.message, "192.0.2.1:0")
      assert.include(error.message, "EADDRNOTAVAIL")
    }))

  it("listen (no Effect) rejects with FakeClusterError too", async () => {
    const server = FakeCluster.makeServer()
    const listening = await FakeCluster.listen(server)
    try {
      const error = await FakeCluster.listen(server, { port: portOf(listening.url) }).then(
        () => undefined,
        (e: unknown) => e
      )
      assert.instanceOf(error, FakeCluster.FakeClusterError)
      assert.strictEqual((error as FakeCluster.FakeClusterError).reason, "Listen")
      const foreign = await FakeCluster.listen({ ...server }).then(() => undefined, (e: unknown) => e)
      assert.instanceOf(foreign, FakeCluster.FakeClusterError)
      assert.strictEqual((foreign as FakeCluster.FakeClusterError).reason, "UnknownServer")
    } finally {
      await listening.close()
      server.close()
    }
  })
})

describe("FakeCluster.httpClient", () => {
  it.effect("answers for a Server that makeServer did not return (a wrapper), streams included", () =>
    Effect.gen(function*() {
      const server = yield* Effect.acquireRelease(
        Effect.sync(() => FakeCluster.makeServer()),
        (s) => Effect.sync(() => s.close())
      )
      const seen: Array<string> = []
      const wrapper: FakeCluster.Server = {
        handle: (request) => {
          seen.push(`${request.method} ${new URL(request.url).pathname}`)
          return server.handle(request)
        },
        control: server.control,
        close: server.close
      }
      const client = FakeCluster.httpClient(wrapper)
      const base = "http://fake-cluster.local/api/v1/namespaces/default/configmaps"
      const created = yield* client.execute(
        HttpClientRequest.post(base).pipe(
          HttpClientRequest.bodyJsonUnsafe({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "via-wrapper" } })
        )
      )
      assert.strictEqual(created.status, 201)
      const listed = (yield* client.execute(HttpClientRequest.get(base)).pipe(
        Effect.flatMap((r) => r.json),
        Effect.scoped
      )) as { readonly items: ReadonlyArray<{ readonly metadata: { readonly name: string } }> }
      // the root CA publisher's ConfigMap is in every namespace, as on a cluster
      assert.deepStrictEqual(listed.items.map((i) => i.metadata.name), ["kube-root-ca.crt", "via-wrapper"])
      const watch = yield* client.execute(HttpClientRequest.get(`${base}?watch=true&resourceVersion=0`))
      const events = yield* watch.stream.pipe(
        Stream.decodeText(),
        Stream.splitLines,
        Stream.take(1),
        Stream.runCollect
      )
      assert.strictEqual(JSON.parse(events[0]!).object.metadata.name, "kube-root-ca.crt")
      assert.deepStrictEqual(seen.slice(0, 2), [
        "POST /api/v1/namespaces/default/configmaps",
        "GET /api/v1/namespaces/default/configmaps"
      ])
      const stored = server.control.get({ apiVersion: "v1", kind: "ConfigMap", name: "via-wrapper" })
      assert.strictEqual(stored?.kind, "ConfigMap")
    }))
})

describe("FakeCluster.serve({ tls: \"self-signed\" })", () => {
  it.effect("serves HTTPS with a CA of its own, written into the kubeconfig, that clients verify", () =>
    Effect.gen(function*() {
      const served = yield* FakeCluster.serve({ tls: "self-signed" })
      assert.match(served.url, /^https:\/\/127\.0\.0\.1:\d+$/)
      const config = Yaml.parse(served.kubeconfig) as {
        readonly clusters: ReadonlyArray<{ readonly cluster: Record<string, unknown> }>
      }
      const cluster = config.clusters[0]!.cluster
      assert.isUndefined(cluster["insecure-skip-tls-verify"])
      const ca = Buffer.from(String(cluster["certificate-authority-data"]), "base64").toString("utf8")
      assert.include(ca, "-----BEGIN CERTIFICATE-----")
      // this library, through the Node transport, verifying the certificate against the kubeconfig's CA
      served.control.seed([{ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a", namespace: "default" } }])
      const listed = yield* Kube.api(ConfigMaps, { namespace: "default" }).list().pipe(
        Effect.provide(NodeKube.layerFromFile({ path: served.kubeconfigPath }))
      )
      assert.deepStrictEqual(listed.items.map((c) => c.metadata?.name), ["a", "kube-root-ca.crt"])
      // a client that does not trust that CA is refused: the certificate is really checked
      const untrusted = yield* Effect.flip(Effect.tryPromise(() => fetch(`${served.url}/version`)))
      assert.include(String((untrusted.cause as Error).cause), "certificate")
      // each server gets a CA of its own
      const other = yield* FakeCluster.serve({ tls: "self-signed" })
      assert.notStrictEqual(other.kubeconfig, served.kubeconfig)
    }))

  it.effect("its kubeconfig without a token works with kubectl on a terminal (no \"Please enter Username\")", () =>
    Effect.gen(function*() {
      if (!hasKubectl || !hasScript) return
      const served = yield* FakeCluster.serve({ tls: "self-signed" })
      const cache = Fs.mkdtempSync(Path.join(Os.tmpdir(), "effect-kube-kubectl-"))
      // script(1) gives kubectl a terminal, where it would prompt for credentials
      const run = yield* Effect.promise(() =>
        new Promise<{ code: number | null; out: string }>((resolve) => {
          const command = [kubectlPath, "--kubeconfig", served.kubeconfigPath, "--cache-dir", cache,
            "--request-timeout", "20s", "get", "--raw", "/version"].map((a) => `'${a}'`).join(" ")
          const child = spawn("script", ["-qec", command, "/dev/null"], { stdio: ["ignore", "pipe", "pipe"] })
          let out = ""
          child.stdout.on("data", (d: Buffer) => out += d.toString())
          child.stderr.on("data", (d: Buffer) => out += d.toString())
          child.on("close", (code) => resolve({ code, out }))
        })
      )
      Fs.rmSync(cache, { recursive: true, force: true })
      assert.notInclude(run.out, "Username")
      assert.strictEqual(run.code, 0, run.out)
      assert.include(run.out, "gitVersion")
    }))

  it.effect("kubectl verifies it as a real cluster's", () =>
    Effect.gen(function*() {
      if (!hasKubectl) return
      // with a token: kubectl asks for a username on a terminal when an https cluster's user has no credentials
      const served = yield* FakeCluster.serve({ tls: "self-signed", token: "kubectl-token" })
      const cache = Fs.mkdtempSync(Path.join(Os.tmpdir(), "effect-kube-kubectl-"))
      const run = yield* kubectl(served.kubeconfigPath, cache, ["get", "--raw", "/version"])
      Fs.rmSync(cache, { recursive: true, force: true })
      assert.strictEqual(run.code, 0, run.stderr)
      assert.include(run.stdout, "gitVersion")
    }))
})

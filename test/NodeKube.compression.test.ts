/**
 * Compression as a real cluster serves it: the Node transport asks for gzip
 * (`Accept-Encoding: gzip`) unless the kubeconfig says `disable-compression: true`, and
 * decodes gzip answers as they arrive; FakeCluster.serve gzips one-shot answers over
 * 128 KiB, as kube-apiserver does, and never a watch stream.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as Fs from "node:fs"
import * as Zlib from "node:zlib"
import * as Kube from "../packages/effect-kube/src/Kube.js"
import * as KubeConfig from "../packages/effect-kube/src/KubeConfig.js"
import * as NodeKube from "../packages/effect-kube/src/NodeKube.js"
import { Pods } from "../packages/effect-kube/src/resources/index.js"
import { FakeCluster } from "@effect-kube/testing"
import * as Loopback from "./util/loopback.js"
import { pki } from "./util/pki.js"
import { hasKubectl, ok, session } from "./util/kubectl.js"
import { pod } from "./util/pods.js"

const pods = Kube.api(Pods, { namespace: "default" })

/** The error of an exit that failed with exactly one typed failure (no defect, no interruption), else `undefined`. */
const onlyFailure = (exit: Exit.Exit<unknown, unknown>): unknown =>
  Exit.isFailure(exit) && exit.cause.reasons.length === 1 && Cause.isFailReason(exit.cause.reasons[0]!)
    ? exit.cause.reasons[0].error
    : undefined

/** 300 pods of about 1 KiB each: a list of them is well over the 128 KiB threshold. */
const bigPods = Array.from({ length: 300 }, (_, i) => ({
  ...pod(`p${String(i).padStart(3, "0")}`),
  metadata: {
    name: `p${String(i).padStart(3, "0")}`,
    namespace: "default",
    labels: { app: "web" },
    annotations: { note: "x".repeat(1000) }
  }
}))

const servedOverHttps = (options: { readonly compression?: boolean } = {}) =>
  Effect.gen(function*() {
    const { ca, server } = pki()
    return yield* FakeCluster.serve({
      token: "tok",
      tls: { cert: server.cert, key: server.key, ca: ca.cert },
      objects: bigPods,
      ...options
    })
  })

const listRequests = (control: FakeCluster.Control) =>
  control.requests().filter((r) => r.method === "GET" && r.path === "/api/v1/namespaces/default/pods" && !r.query["watch"])

const withDisabledCompression = (kubeconfig: string): string =>
  kubeconfig.replace(/(\n    server: [^\n]+\n)/, "$1    disable-compression: true\n")

describe("compression against FakeCluster.serve over HTTPS", () => {
  it.live("a list over 128 KiB is asked for and answered gzipped, and decodes to every object", () =>
    Effect.gen(function*() {
      const served = yield* servedOverHttps()
      const layer = NodeKube.layerFromFile({ path: served.kubeconfigPath }).pipe(Layer.orDie)
      const list = yield* pods.list().pipe(Effect.provide(layer))
      assert.deepStrictEqual(list.items.map((p) => p.metadata?.name), bigPods.map((p) => p.metadata.name))
      assert.strictEqual(list.items[299]!.metadata?.annotations?.["note"], "x".repeat(1000))
      const [request] = listRequests(served.control)
      assert.strictEqual(request?.acceptEncoding, "gzip")
      assert.strictEqual(served.gzippedAnswers(), 1)
      // a small answer is sent as it is, though gzip was asked for
      const one = yield* pods.get("p000").pipe(Effect.provide(layer))
      assert.strictEqual(one._tag, "Some")
      assert.strictEqual(served.gzippedAnswers(), 1)
    }))

  it.live("disable-compression: true sends no Accept-Encoding and gets the answer as it is", () =>
    Effect.gen(function*() {
      const served = yield* servedOverHttps()
      const text = withDisabledCompression(served.kubeconfig)
      assert.include(text, "disable-compression: true")
      const config = KubeConfig.layerFromString(text)
      const service = yield* KubeConfig.fromString(text).pipe(Effect.provide(NodeKube.layerPlatform), Effect.orDie)
      assert.strictEqual(service.disableCompression, true)
      const layer = NodeKube.layerFromKubeConfig(config).pipe(Layer.orDie)
      const list = yield* pods.list().pipe(Effect.provide(layer))
      assert.strictEqual(list.items.length, 300)
      const [request] = listRequests(served.control)
      assert.isDefined(request)
      assert.isUndefined(request!.acceptEncoding)
      assert.strictEqual(served.gzippedAnswers(), 0)
    }))

  it.live("serve with compression: false answers identity even when gzip is asked for", () =>
    Effect.gen(function*() {
      const served = yield* servedOverHttps({ compression: false })
      const layer = NodeKube.layerFromFile({ path: served.kubeconfigPath }).pipe(Layer.orDie)
      const list = yield* pods.list().pipe(Effect.provide(layer))
      assert.strictEqual(list.items.length, 300)
      assert.strictEqual(listRequests(served.control)[0]?.acceptEncoding, "gzip")
      assert.strictEqual(served.gzippedAnswers(), 0)
    }))

  it.live("a watch is not compressed, as kube-apiserver's watches are not, and streams every event", () =>
    Effect.gen(function*() {
      const served = yield* servedOverHttps()
      const layer = NodeKube.layerFromFile({ path: served.kubeconfigPath }).pipe(Layer.orDie)
      const events = yield* pods.watch({ timeoutSeconds: 60 }).pipe(Stream.take(300), Stream.runCollect, Effect.provide(layer))
      assert.deepStrictEqual(
        events.map((e) => e.type === "BOOKMARK" ? "" : e.object.metadata?.name),
        bigPods.map((p) => p.metadata.name)
      )
      assert.strictEqual(served.control.requests().find((r) => r.query["watch"] === "true")?.acceptEncoding, "gzip")
      assert.strictEqual(served.gzippedAnswers(), 0)
    }))

  it.effect("KubeConfig.make carries disableCompression; a disable-compression that is not a boolean is refused", () =>
    Effect.gen(function*() {
      const made = yield* KubeConfig.make({ server: "https://10.0.0.1:6443", disableCompression: true })
      assert.strictEqual(made.disableCompression, true)
      const plain = yield* KubeConfig.make({ server: "https://10.0.0.1:6443" })
      assert.isUndefined(plain.disableCompression)
      const bad = [
        "apiVersion: v1",
        "kind: Config",
        "clusters:",
        "- name: c",
        "  cluster:",
        "    server: https://10.0.0.1:6443",
        "    disable-compression: sometimes",
        "contexts:",
        "- name: x",
        "  context: { cluster: c }",
        "current-context: x",
        ""
      ].join("\n")
      const error = yield* Effect.flip(KubeConfig.fromString(bad))
      assert.strictEqual(error._tag, "KubeConfigError")
      assert.include(error.message, "disable-compression")
    }).pipe(Effect.provide(NodeKube.layerPlatform)))
})

describe("gzip answers over a loopback connection", () => {
  it.live("a gzipped watch is decoded as it arrives: an event is seen before the next one is sent", () =>
    Effect.gen(function*() {
      const seen: Array<string | undefined> = []
      let next: (() => void) | undefined
      const released = new Promise<void>((resolve) => {
        next = resolve
      })
      const server = yield* Loopback.serve((req, res) => {
        seen.push(req.headers["accept-encoding"])
        res.writeHead(200, { "content-type": "application/json", "content-encoding": "gzip" })
        const gzip = Zlib.createGzip()
        gzip.pipe(res)
        const event = (name: string) => JSON.stringify({ type: "ADDED", object: pod(name) }) + "\n"
        gzip.write(event("first"))
        gzip.flush(Zlib.constants.Z_SYNC_FLUSH)
        // the second event only once the client has decoded the first
        released.then(() => {
          gzip.write(event("second"))
          gzip.end()
        })
      })
      const names = yield* pods.watch().pipe(
        Stream.tap((e) => Effect.sync(() => e.type === "ADDED" && e.object.metadata?.name === "first" && next!())),
        Stream.map((e) => e.type === "BOOKMARK" ? "" : e.object.metadata?.name),
        Stream.runCollect,
        Effect.provide(Loopback.layer(server.url)),
        Effect.timeout("10 seconds")
      )
      assert.deepStrictEqual(names, ["first", "second"])
      assert.deepStrictEqual(seen, ["gzip"])
    }))

  it.live("a corrupt gzip body fails with a tagged error, never a defect", () =>
    Effect.gen(function*() {
      const server = yield* Loopback.serve((_req, res) => {
        const good = Zlib.gzipSync(JSON.stringify({ kind: "PodList", apiVersion: "v1", metadata: {}, items: [] }))
        // the header is a gzip header; what follows is garbage
        const corrupt = Buffer.concat([good.subarray(0, 10), Buffer.from("not deflate data at all, not at all")])
        res.writeHead(200, { "content-type": "application/json", "content-encoding": "gzip" })
        res.end(corrupt)
      })
      const layer = Loopback.layer(server.url)
      const listed = yield* Effect.exit(pods.list().pipe(Effect.provide(layer)))
      assert.isTrue(onlyFailure(listed) !== undefined, String(listed))
      const watched = yield* Effect.exit(pods.watch().pipe(Stream.runDrain, Effect.provide(layer)))
      assert.isTrue(onlyFailure(watched) !== undefined, String(watched))
      for (const exit of [listed, watched] as ReadonlyArray<Exit.Exit<unknown, unknown>>) {
        const error = onlyFailure(exit) as { readonly _tag: string; readonly reason?: { readonly _tag: string } }
        assert.strictEqual(error._tag, "HttpClientError")
        assert.strictEqual(error.reason?._tag, "DecodeError")
      }
    }))
})

describe.skipIf(!hasKubectl)("kubectl against the served fake with compression on", () => {
  it.live("kubectl get pods reads the gzipped list", () =>
    Effect.gen(function*() {
      const served = yield* servedOverHttps()
      const { run } = yield* session(served.kubeconfigPath, "gzip-kubectl")
      const out = ok(yield* run("get", "pods", "-o", "name"))
      assert.strictEqual(out.trim().split("\n").length, 300)
      assert.isAtLeast(served.gzippedAnswers(), 1)
      assert.isTrue(Fs.existsSync(served.kubeconfigPath))
    }))
})

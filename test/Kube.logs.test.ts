import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Stream from "effect/Stream"
import type * as Http from "node:http"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import { ApiError, ValidationError } from "../packages/effect-kube/src/Errors.js"
import * as Kube from "../packages/effect-kube/src/Kube.js"
import * as NodeKube from "../packages/effect-kube/src/NodeKube.js"
import { FakeCluster } from "@effect-kube/testing"
import { Pods } from "../packages/effect-kube/src/resources/index.js"
import type * as Resource from "../packages/effect-kube/src/Resource.js"
import { type Service, Services } from "../packages/effect-kube/src/resources/index.js"
import * as Loopback from "./util/loopback.js"

const pods = Kube.api(Pods, { namespace: "default" })

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Writes the pieces one by one with a pause between them, so they leave as separate packets. */
const writeSlowly = async (res: Http.ServerResponse, pieces: ReadonlyArray<Uint8Array>, end: boolean) => {
  res.writeHead(200, { "content-type": "text/plain" })
  for (const piece of pieces) {
    res.write(piece)
    await sleep(15)
  }
  if (end) res.end()
}

const utf8 = (s: string) => new TextEncoder().encode(s)

describe("logStream over a real connection", () => {
  it.live("handles lines and a UTF-8 character split across packets, and a last line without newline", () =>
    Effect.gen(function*() {
      const server = yield* Loopback.serve((_req, res) => {
        const whole = utf8("first line\nhé")
        const rest = utf8("llo\r\nthird ")
        void writeSlowly(res, [
          whole.subarray(0, whole.length - 1), // ends in the middle of "é"
          whole.subarray(whole.length - 1),
          rest,
          utf8("part\nlast")
        ], true)
      })
      const lines = yield* pods.logStream("web", { container: "app", tailLines: 10, timestamps: true }).pipe(
        Stream.runCollect,
        Effect.provide(Loopback.layer(server.url))
      )
      assert.deepStrictEqual(lines, ["first line", "héllo", "third part", "last"])
      assert.deepStrictEqual(server.requests, [
        "GET /api/v1/namespaces/default/pods/web/log?container=app&follow=true&tailLines=10&timestamps=true"
      ])
    }))

  it.live("closes the connection when the consumer stops early or is interrupted", () =>
    Effect.gen(function*() {
      const server = yield* Loopback.serve((_req, res) => {
        res.writeHead(200, { "content-type": "text/plain" })
        res.write("one\ntwo\n")
        // never ends: a container that keeps running
      })
      const layer = Loopback.layer(server.url)
      const firstTwo = yield* pods.logStream("web").pipe(Stream.take(2), Stream.runCollect, Effect.provide(layer))
      assert.deepStrictEqual(firstTwo, ["one", "two"])
      assert.isTrue(yield* Loopback.eventually(() => server.openResponses() === 0), "closed after take(2)")

      const fiber = yield* pods.logStream("web").pipe(Stream.runDrain, Effect.provide(layer), Effect.forkChild)
      assert.isTrue(yield* Loopback.eventually(() => server.openResponses() === 1), "follow is open")
      yield* Fiber.interrupt(fiber)
      assert.isTrue(yield* Loopback.eventually(() => server.openResponses() === 0), "closed after interrupt")
    }))
})

describe("logBytes", () => {
  it.live("hands on every byte as it arrives, characters split across packets included, and closes early", () =>
    Effect.gen(function*() {
      const whole = utf8("first line\nhé\r\nthird part\nlast")
      const server = yield* Loopback.serve((_req, res) => {
        void writeSlowly(res, [whole.subarray(0, 13), whole.subarray(13, 20), whole.subarray(20)], true)
      })
      const layer = Loopback.layer(server.url)
      const chunks = yield* pods.logBytes("web", { container: "app" }).pipe(Stream.runCollect, Effect.provide(layer))
      const joined = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0))
      chunks.reduce((offset, c) => {
        joined.set(c, offset)
        return offset + c.length
      }, 0)
      assert.deepStrictEqual(joined, whole)
      assert.isAbove(chunks.length, 1, "arrives in pieces, not buffered whole")
      assert.deepStrictEqual(server.requests, ["GET /api/v1/namespaces/default/pods/web/log?container=app&follow=true"])

      const open = yield* Loopback.serve((_req, res) => {
        res.writeHead(200, { "content-type": "text/plain" })
        res.write("one\n")
      })
      const first = yield* pods.logBytes("web").pipe(
        Stream.take(1),
        Stream.runCollect,
        Effect.provide(Loopback.layer(open.url))
      )
      assert.strictEqual(new TextDecoder().decode(first[0]!), "one\n")
      assert.isTrue(yield* Loopback.eventually(() => open.openResponses() === 0), "closed after take(1)")
    }))

  it.effect("a pod whose log is gone has no bytes, one that does not exist fails; bad options fail before any request", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      cluster.seed([twoContainers])
      cluster.failNext({ status: 404, message: kubeletNotFound, match: isLogRequest })
      assert.strictEqual((yield* pods.logBytes("web", { container: "app" }).pipe(Stream.runCollect)).length, 0)
      const missing = yield* Effect.flip(pods.logBytes("ghost").pipe(Stream.runDrain))
      assert.isTrue(ApiError.isNotFound(missing))
      assert.include(missing.message, "pods \"ghost\" not found")
      const error = yield* Effect.flip(pods.logBytes("web", { tailLines: -1 }).pipe(Stream.runDrain))
      assert.instanceOf(error, ValidationError)
      assert.strictEqual(logRequests(cluster).length, 2)
    }).pipe(Effect.provide(FakeCluster.layer())))
})

const twoContainers = {
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name: "web", namespace: "default" },
  spec: { containers: [{ name: "app", image: "busybox" }, { name: "sidecar", image: "busybox" }] }
}

const logRequests = (cluster: FakeCluster.Control) => cluster.requests().filter((r) => r.path.endsWith("/log"))

const isLogRequest = (_method: string, path: string) => path.endsWith("/log")

/**
 * What the API server answers when the pod is there but the kubelet has no log for it (its
 * containers removed from the node): the kubelet's 404 relayed for `pods/log`, not the pod's own
 * NotFound.
 */
const kubeletNotFound = "the server could not find the requested resource ( pods/log web)"

describe("logs", () => {
  it.effect("reads a container's log with its options; a log that is gone is empty", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      cluster.seed([twoContainers])
      cluster.appendLog("default", "web", ["one", "two", "three"], { container: "app" })
      cluster.appendLog("default", "web", "partial", { container: "app" })
      cluster.appendLog("default", "web", ["sidecar line"], { container: "sidecar" })
      assert.strictEqual(yield* pods.logs("web", { container: "app" }), "one\ntwo\nthree\npartial")
      assert.strictEqual(yield* pods.logs("web", { container: "app", tailLines: 2 }), "three\npartial")
      assert.strictEqual(yield* pods.logs("web", { container: "sidecar" }), "sidecar line\n")
      const since = new Date(Date.UTC(2024, 0, 2, 3, 4, 5))
      yield* pods.logs("web", { container: "app", sinceTime: since, timestamps: true, limitBytes: 100 })
      yield* pods.logs("web", { container: "app", sinceSeconds: 60, previous: false })
      assert.deepStrictEqual(logRequests(cluster).map((r) => r.query).slice(3), [
        { container: "app", sinceTime: "2024-01-02T03:04:05.000Z", timestamps: "true", limitBytes: "100" },
        { container: "app", sinceSeconds: "60" }
      ])
      cluster.failNext({ status: 404, message: kubeletNotFound, match: isLogRequest })
      assert.strictEqual(yield* pods.logs("web", { container: "app" }), "")
    }).pipe(Effect.provide(FakeCluster.layer())))

  it.effect("a pod that does not exist fails with ApiError NotFound naming it, never an empty log", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      const missing = yield* Effect.flip(pods.logs("wbe"))
      assert.isTrue(ApiError.isNotFound(missing))
      assert.strictEqual(
        missing.message,
        "k8s: GET /api/v1/namespaces/default/pods/wbe/log: 404 NotFound: pods \"wbe\" not found"
      )
      // deleted is the same to the server: the pod is not there
      cluster.seed([twoContainers])
      yield* pods.delete("web")
      assert.isTrue(ApiError.isNotFound(yield* Effect.flip(pods.logs("web", { container: "app" }))))
    }).pipe(Effect.provide(FakeCluster.layer())))

  it.effect("bad options fail with ValidationError before any request", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      const bad: ReadonlyArray<Kube.LogOptions> = [
        { sinceSeconds: 10, sinceTime: "2024-01-02T03:04:05Z" },
        { sinceSeconds: 0 },
        { tailLines: -1 },
        { tailLines: 1.5 },
        { limitBytes: 0 },
        { sinceTime: "yesterday" },
        { sinceTime: new Date(Number.NaN) },
        { container: "a/b" }
      ]
      for (const options of bad) {
        const error = yield* Effect.flip(pods.logs("web", options))
        assert.instanceOf(error, ValidationError, JSON.stringify(options))
        const streamError = yield* Effect.flip(pods.logStream("web", options).pipe(Stream.runDrain))
        assert.instanceOf(streamError, ValidationError, JSON.stringify(options))
      }
      const sinceBoth = yield* Effect.flip(pods.logs("web", { sinceSeconds: 10, sinceTime: new Date() }))
      assert.include(sinceBoth.message, "sinceTime")
      // @ts-expect-error Services serve no log subresource: a compile error ...
      Kube.api(Services, { namespace: "default" }).logs
      // ... and a runtime one for a resource whose subresources are not known at compile time
      const services: Resource.Resource<Service, unknown, string> = Services as Resource.Resource<Service, unknown, string>
      const notPods = yield* Effect.flip(Kube.api(services, { namespace: "default" }).logs("web"))
      assert.instanceOf(notPods, ValidationError)
      assert.strictEqual(cluster.requests().length, 0)
    }).pipe(Effect.provide(FakeCluster.layer())))
})

describe("logStream", () => {
  it.effect("follows the log as lines, joining partial lines, until the container ends", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      cluster.seed([twoContainers])
      cluster.appendLog("default", "web", ["before"], { container: "app" })
      const queue = yield* Queue.unbounded<string>()
      const fiber = yield* pods.logStream("web", { container: "app" }).pipe(
        Stream.runForEach((line) => Queue.offer(queue, line)),
        Effect.forkChild
      )
      assert.deepStrictEqual(yield* Queue.takeBetween(queue, 1, 1), ["before"])
      cluster.appendLog("default", "web", "hal", { container: "app" })
      cluster.appendLog("default", "web", "f a line\nwhole\nand a tail", { container: "app" })
      assert.deepStrictEqual(yield* Queue.takeBetween(queue, 2, 2), ["half a line", "whole"])
      cluster.endContainer("default", "web", { container: "app" })
      yield* Fiber.join(fiber)
      assert.deepStrictEqual(yield* Queue.clear(queue), ["and a tail"])
      assert.deepStrictEqual(logRequests(cluster)[0]?.query, { container: "app", follow: "true" })
      assert.strictEqual(cluster.openLogStreams(), 0)
    }).pipe(Effect.provide(FakeCluster.layer())))

  it.effect("a log that is gone has no lines; a pod deleted while followed ends the stream; a missing pod fails", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      cluster.seed([twoContainers])
      cluster.failNext({ status: 404, message: kubeletNotFound, match: isLogRequest })
      assert.strictEqual((yield* pods.logStream("web", { container: "app" }).pipe(Stream.runCollect)).length, 0)
      cluster.appendLog("default", "web", ["last words"], { container: "app" })
      const queue = yield* Queue.unbounded<string>()
      const fiber = yield* pods.logStream("web", { container: "app" }).pipe(
        Stream.runForEach((line) => Queue.offer(queue, line)),
        Effect.forkChild
      )
      assert.deepStrictEqual(yield* Queue.takeBetween(queue, 1, 1), ["last words"])
      yield* pods.delete("web")
      yield* Fiber.join(fiber)
      const missing = yield* Effect.flip(pods.logStream("ghost").pipe(Stream.runDrain))
      assert.include(missing.message, "pods \"ghost\" not found")
    }).pipe(Effect.provide(FakeCluster.layer())))

  it.live("interrupting a follow of the served fake closes its connection", () =>
    Effect.gen(function*() {
      const server = yield* FakeCluster.serve()
      const layer = NodeKube.layerFromFile({ path: server.kubeconfigPath }).pipe(Layer.orDie)
      server.control.seed([twoContainers])
      const fiber = yield* pods.logStream("web", { container: "app" }).pipe(
        Stream.runDrain,
        Effect.provide(layer),
        Effect.forkChild
      )
      assert.isTrue(yield* Loopback.eventually(() => server.control.openLogStreams() === 1), "follow open")
      yield* Fiber.interrupt(fiber)
      assert.isTrue(yield* Loopback.eventually(() => server.control.openLogStreams() === 0), "follow closed")
      assert.isTrue(yield* Loopback.eventually(() => server.openConnections() === 0), "socket closed")
    }))
})

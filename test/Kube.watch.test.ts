import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/testing/TestClock"
import { ApiError, ValidationError } from "../packages/effect-kube/src/Errors.js"
import * as Kube from "../packages/effect-kube/src/Kube.js"
import * as NodeKube from "../packages/effect-kube/src/NodeKube.js"
import { type Pod, Pods } from "../packages/effect-kube/src/resources/index.js"
import { FakeCluster } from "@effect-kube/testing"
import * as Loopback from "./util/loopback.js"
import { pod, podRef as ref } from "./util/pods.js"
import { apiServerOnly } from "./util/apiServerOnly.js"

const pods = Kube.api(Pods, { namespace: "default" })

const nameOf = (event: Kube.WatchEvent<Pod>) =>
  event.type === "BOOKMARK" ? `BOOKMARK ${event.resourceVersion}` : `${event.type} ${event.object.metadata?.name}`

/** Runs a stream in the background, its events going to a queue the test takes from. */
const collect = <A, E, R>(stream: Stream.Stream<A, E, R>) =>
  Effect.gen(function*() {
    const queue = yield* Queue.unbounded<A>()
    const fiber = yield* stream.pipe(Stream.runForEach((a) => Queue.offer(queue, a)), Effect.forkChild)
    return { queue, fiber, take: (n: number) => Queue.takeBetween(queue, n, n) }
  })

const watchRequests = (cluster: FakeCluster.Control) => cluster.requests().filter((r) => r.query["watch"] === "true")

describe("watch", () => {
  it.effect("sends the existing objects, then every change, decoded by the Pod schema", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      cluster.seed([pod("a"), pod("b"), pod("other", { app: "db" })])
      const events = yield* collect(pods.watch({ labelSelector: "app=web", timeoutSeconds: 60 }))
      assert.deepStrictEqual((yield* events.take(2)).map(nameOf), ["ADDED a", "ADDED b"])
      cluster.update(ref("a"), { metadata: { labels: { app: "web", tier: "front" } } })
      cluster.remove(ref("b"))
      cluster.seed([pod("c")])
      const live = yield* events.take(3)
      assert.deepStrictEqual(live.map(nameOf), ["MODIFIED a", "DELETED b", "ADDED c"])
      const modified = live[0]!
      assert.strictEqual(modified.type === "MODIFIED" && modified.object.metadata?.labels?.["tier"], "front")
      assert.strictEqual(modified.type === "MODIFIED" && modified.object.kind, "Pod")
      const [request] = watchRequests(cluster)
      assert.deepStrictEqual(request?.query, { watch: "true", labelSelector: "app=web", timeoutSeconds: "60" })
      assert.strictEqual(request?.path, "/api/v1/namespaces/default/pods")
      yield* Fiber.interrupt(events.fiber)
    }).pipe(Effect.provide(FakeCluster.layer(apiServerOnly))))

  it.effect("watches from a resourceVersion and turns bookmarks into resourceVersions", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      cluster.seed([pod("a")])
      const from = cluster.resourceVersion()
      cluster.update(ref("a"), { metadata: { labels: { app: "web", n: "1" } } })
      const events = yield* collect(pods.watch({ resourceVersion: from, allowWatchBookmarks: true }))
      assert.deepStrictEqual((yield* events.take(1)).map(nameOf), ["MODIFIED a"])
      cluster.bookmark()
      const [bookmark] = yield* events.take(1)
      assert.deepStrictEqual(bookmark, {
        type: "BOOKMARK",
        resourceVersion: cluster.resourceVersion(),
        initialEventsEnd: false
      })
      assert.deepStrictEqual(watchRequests(cluster)[0]?.query, {
        watch: "true",
        resourceVersion: from,
        allowWatchBookmarks: "true"
      })
      yield* Fiber.interrupt(events.fiber)
    }).pipe(Effect.provide(FakeCluster.layer(apiServerOnly))))

  it.effect("sendInitialEvents asks with resourceVersionMatch=NotOlderThan and marks the end of initial events", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      cluster.seed([pod("a")])
      const events = yield* collect(pods.watch({ sendInitialEvents: true }))
      const initial = yield* events.take(2)
      assert.deepStrictEqual(initial.map((e) => e.type), ["ADDED", "BOOKMARK"])
      assert.isTrue(initial[1]?.type === "BOOKMARK" && initial[1].initialEventsEnd)
      assert.deepStrictEqual(watchRequests(cluster)[0]?.query, {
        watch: "true",
        resourceVersionMatch: "NotOlderThan",
        sendInitialEvents: "true",
        allowWatchBookmarks: "true"
      })
      yield* Fiber.interrupt(events.fiber)
    }).pipe(Effect.provide(FakeCluster.layer(apiServerOnly))))

  it.effect("an ERROR event fails the stream with the ApiError of its Status (410 is Gone)", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      cluster.seed([pod("a")])
      const old = cluster.resourceVersion()
      cluster.update(ref("a"), { metadata: { labels: { n: "1" } } })
      cluster.compact()
      const atConnect = yield* Effect.flip(pods.watch({ resourceVersion: old }).pipe(Stream.runDrain))
      assert.isTrue(ApiError.isGone(atConnect), String(atConnect))
      assert.strictEqual(atConnect._tag === "ApiError" && atConnect.code, 410)

      const events = yield* collect(pods.watch({ resourceVersion: cluster.resourceVersion() }))
      cluster.update(ref("a"), { metadata: { labels: { n: "2" } } })
      assert.deepStrictEqual((yield* events.take(1)).map(nameOf), ["MODIFIED a"])
      cluster.expireWatches()
      const exit = yield* Fiber.await(events.fiber)
      assert.isTrue(exit._tag === "Failure")
      const midStream = yield* Effect.flip(Fiber.join(events.fiber))
      assert.isTrue(ApiError.isGone(midStream), String(midStream))
    }).pipe(Effect.provide(FakeCluster.layer(apiServerOnly))))

  it.effect("a non-2xx answer at connect fails with ApiError", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      cluster.failNext({ status: 403, message: "pods is forbidden" })
      const error = yield* Effect.flip(pods.watch().pipe(Stream.runDrain))
      assert.isTrue(ApiError.isForbidden(error))
      assert.include(error.message, "pods is forbidden")
    }).pipe(Effect.provide(FakeCluster.layer(apiServerOnly))))

  it.effect("bad options fail before any request", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      const bad: ReadonlyArray<Kube.WatchOptions> = [
        { timeoutSeconds: 0 },
        { timeoutSeconds: 1.5 },
        { sendInitialEvents: true, allowWatchBookmarks: false }
      ]
      for (const options of bad) {
        const error = yield* Effect.flip(pods.watch(options).pipe(Stream.runDrain))
        assert.instanceOf(error, ValidationError, JSON.stringify(options))
      }
      const elsewhere = Kube.api(Pods, { namespace: "Not_A_Namespace" })
      const badNamespace = yield* Effect.flip(elsewhere.watch().pipe(Stream.runDrain))
      assert.instanceOf(badNamespace, ValidationError)
      assert.strictEqual(cluster.requests().length, 0)
    }).pipe(Effect.provide(FakeCluster.layer(apiServerOnly))))

  it.effect("no client-side timeout cuts off a quiet watch", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      const events = yield* collect(pods.watch())
      // let the request reach the fake, then an hour passes without an event
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 20)))
      yield* TestClock.adjust("1 hour")
      cluster.seed([pod("late")])
      assert.deepStrictEqual((yield* events.take(1)).map(nameOf), ["ADDED late"])
      assert.strictEqual(cluster.openWatches(), 1)
      yield* Fiber.interrupt(events.fiber)
    }).pipe(Effect.provide(FakeCluster.layer(apiServerOnly))))
})

describe("watch over a real connection", () => {
  const served = Effect.gen(function*() {
    const server = yield* FakeCluster.serve(apiServerOnly)
    return { server, layer: NodeKube.layerFromFile({ path: server.kubeconfigPath }).pipe(Layer.orDie) }
  })

  it.live("interrupting the stream closes the connection", () =>
    Effect.gen(function*() {
      const { layer, server } = yield* served
      server.control.seed([pod("a")])
      const fiber = yield* pods.watch().pipe(Stream.runDrain, Effect.provide(layer), Effect.forkChild)
      assert.isTrue(yield* Loopback.eventually(() => server.control.openWatches() === 1), "watch open")
      assert.strictEqual(server.openConnections(), 1)
      yield* Fiber.interrupt(fiber)
      assert.isTrue(yield* Loopback.eventually(() => server.control.openWatches() === 0), "watch closed")
      assert.isTrue(yield* Loopback.eventually(() => server.openConnections() === 0), "socket closed")
    }))

  it.live("a consumer that stops early closes the connection", () =>
    Effect.gen(function*() {
      const { layer, server } = yield* served
      server.control.seed([pod("a"), pod("b"), pod("c")])
      const first = yield* pods.watch().pipe(Stream.take(1), Stream.runCollect, Effect.provide(layer))
      assert.strictEqual(first.length, 1)
      assert.isTrue(yield* Loopback.eventually(() => server.control.openWatches() === 0), "watch closed")
      assert.isTrue(yield* Loopback.eventually(() => server.openConnections() === 0), "socket closed")
    }))

  it.live("events split across packets, in the middle of a line and of a UTF-8 character", () =>
    Effect.gen(function*() {
      const objects = ["é", "日本", "🙂"].map((label, i) => ({
        type: i === 2 ? "DELETED" : "ADDED",
        object: { ...pod(`p${i}`), metadata: { name: `p${i}`, namespace: "default", annotations: { note: label } } }
      }))
      const body = new TextEncoder().encode(objects.map((e) => JSON.stringify(e)).join("\n") + "\n")
      const cuts = [body.indexOf(0xc3) + 1, body.indexOf(0xe6) + 2, body.indexOf(0xf0) + 3]
      const server = yield* Loopback.serve((_req, res) => {
        res.writeHead(200, { "content-type": "application/json" })
        const write = async () => {
          let start = 0
          for (const cut of [...cuts, body.length]) {
            res.write(body.subarray(start, cut))
            start = cut
            await new Promise((resolve) => setTimeout(resolve, 15))
          }
          res.end()
        }
        void write()
      })
      const events = yield* pods.watch().pipe(Stream.runCollect, Effect.provide(Loopback.layer(server.url)))
      assert.deepStrictEqual(
        events.map((e) =>
          e.type === "BOOKMARK" ? e.type : `${e.type} ${e.object.metadata?.annotations?.["note"]}`
        ),
        ["ADDED é", "ADDED 日本", "DELETED 🙂"]
      )
    }))

  it.live("a body cut in the middle of an event is a transport failure, after the events before it", () =>
    Effect.gen(function*() {
      const server = yield* Loopback.serve((_req, res) => {
        res.writeHead(200, { "content-type": "application/json" })
        res.end(`${JSON.stringify({ type: "ADDED", object: pod("whole") })}\n{"type":"ADDED","obj`)
      })
      const seen: Array<string> = []
      const result = yield* pods.watch().pipe(
        Stream.runForEach((e) => Effect.sync(() => seen.push(nameOf(e)))),
        Effect.result,
        Effect.provide(Loopback.layer(server.url))
      )
      assert.deepStrictEqual(seen, ["ADDED whole"])
      assert.isTrue(
        Result.isFailure(result) && result.failure._tag === "HttpClientError" &&
          result.failure.reason._tag === "DecodeError",
        String(result)
      )
    }))
})

describe("listStream", () => {
  it.effect("fetches a page only when the consumer pulls past the previous one", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      cluster.seed(Array.from({ length: 25 }, (_, i) => pod(`p${String(i).padStart(2, "0")}`)))
      const lists = () => cluster.requests().filter((r) => r.method === "GET" && r.query["watch"] === undefined)

      const firstFive = yield* pods.listStream({ pageSize: 10 }).pipe(Stream.take(5), Stream.runCollect)
      assert.strictEqual(firstFive.length, 5)
      assert.strictEqual(lists().length, 1)

      cluster.reset()
      const all = yield* pods.listStream({ pageSize: 10, labelSelector: "app=web" }).pipe(Stream.runCollect)
      assert.deepStrictEqual(
        all.map((p) => p.metadata?.name),
        Array.from({ length: 25 }, (_, i) => `p${String(i).padStart(2, "0")}`)
      )
      const requests = lists()
      assert.strictEqual(requests.length, 3)
      assert.deepStrictEqual(requests[0]?.query, { labelSelector: "app=web", limit: "10" })
      assert.strictEqual(requests[1]?.query["limit"], "10")
      assert.isString(requests[1]?.query["continue"])
    }).pipe(Effect.provide(FakeCluster.layer(apiServerOnly))))

  // client-go's pager lists again when a continue token expires (FullListIfExpired); a stream has emitted its first
  // pages, so it goes on after the last object it emitted, with the token kube-apiserver's 410 carries
  it.effect("an expired continue token: the stream goes on with the 410's fresh token, each object once, as it is now", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      cluster.seed(Array.from({ length: 5 }, (_, i) => pod(`p${i}`)))
      const names = yield* pods.listStream({ pageSize: 2 }).pipe(
        Stream.tap((p) =>
          Effect.sync(() => {
            if (p.metadata?.name === "p1") {
              // the list's resourceVersion leaves the history before the next page is asked for
              cluster.update(ref("p4"), { metadata: { labels: { app: "web", n: "1" } } })
              cluster.remove(ref("p2"))
              cluster.seed([pod("p5")])
              cluster.compact()
            }
          })
        ),
        Stream.map((p) => `${p.metadata?.name}${p.metadata?.labels?.["n"] === "1" ? "*" : ""}`),
        Stream.runCollect
      )
      assert.deepStrictEqual(names, ["p0", "p1", "p3", "p4*", "p5"])
      const lists = cluster.requests().filter((r) => r.method === "GET")
      assert.strictEqual(lists.length, 4, "the first page, the expired continue (410), then the fresh token's two pages")
      const expired = lists[1]!.query["continue"]
      assert.isString(lists[2]!.query["continue"])
      assert.notStrictEqual(lists[2]!.query["continue"], expired, "the 410's own token, not the expired one")
    }).pipe(Effect.provide(FakeCluster.layer(apiServerOnly))))

  it.effect("a 410 without a fresh token: the list starts again and skips what was emitted; a 410 at the start fails", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      cluster.seed(Array.from({ length: 5 }, (_, i) => pod(`p${i}`)))
      const continued = (_method: string, _path: string, query: Readonly<Record<string, string>>) =>
        query["continue"] !== undefined
      cluster.failNext({ status: 410, reason: "Expired", message: "continue expired", match: continued })
      const names = yield* pods.listStream({ pageSize: 2 }).pipe(Stream.map((p) => p.metadata?.name), Stream.runCollect)
      assert.deepStrictEqual(names, ["p0", "p1", "p2", "p3", "p4"])
      const lists = cluster.requests().filter((r) => r.method === "GET")
      assert.deepStrictEqual(
        lists.map((r) => r.query["continue"] === undefined ? "start" : "continue"),
        ["start", "continue", "start", "continue", "continue"]
      )

      // expired again and again: the 410 is the answer after maxExpiredContinues lists without it
      cluster.reset()
      cluster.failNext({ status: 410, reason: "Expired", message: "continue expired", match: continued, count: Infinity })
      cluster.failNext({ status: 410, reason: "Expired", message: "continue expired", match: (m, p, q) => !continued(m, p, q), count: Infinity })
      const again = yield* pods.listStream({ pageSize: 2 }).pipe(Stream.runCollect, Effect.flip)
      assert.isTrue(ApiError.isGone(again), String(again))
      cluster.clearFaults()

      // a 410 on the first page (no continue token yet) is the stream's failure
      cluster.reset()
      cluster.failNext({ status: 410, reason: "Expired", message: "expired" })
      const first = yield* pods.listStream({ pageSize: 2 }).pipe(Stream.runCollect, Effect.flip)
      assert.isTrue(ApiError.isGone(first), String(first))
      assert.strictEqual(cluster.requests().length, 1)

      cluster.reset()
      const bad = yield* Effect.flip(pods.listStream({ pageSize: 0 }).pipe(Stream.runDrain))
      assert.instanceOf(bad, ValidationError)
      assert.strictEqual(cluster.requests().length, 0)
    }).pipe(Effect.provide(FakeCluster.layer(apiServerOnly))))

  it.effect("list with an expired continue token fails ApiError Gone carrying the server's fresh token", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      cluster.seed(Array.from({ length: 5 }, (_, i) => pod(`p${i}`)))
      const first = yield* pods.list({ limit: 2 })
      // a write, then the history compacted past the list's resourceVersion
      cluster.seed([pod("p5")])
      cluster.compact()
      const error = yield* Effect.flip(pods.list({ limit: 2, continue: first.metadata.continue }))
      assert.isTrue(ApiError.isGone(error) && error.reason === "Expired", String(error))
      const fresh = ApiError.is(error) ? error.status?.metadata?.continue : undefined
      assert.isString(fresh)
      const rest = yield* pods.list({ limit: 10, continue: fresh })
      assert.deepStrictEqual(rest.items.map((p) => p.metadata?.name), ["p2", "p3", "p4", "p5"])
    }).pipe(Effect.provide(FakeCluster.layer(apiServerOnly))))

  it.effect("lists across namespaces with allNamespaces", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      cluster.seed([pod("a"), { ...pod("b"), metadata: { name: "b", namespace: "other" } }])
      const all = yield* pods.listStream({ allNamespaces: true }).pipe(Stream.runCollect)
      assert.deepStrictEqual(
        all.map((p) => `${p.metadata?.namespace}/${p.metadata?.name}`).sort(),
        ["default/a", "other/b"]
      )
      assert.strictEqual(cluster.requests()[0]?.path, "/api/v1/pods")
    }).pipe(Effect.provide(FakeCluster.layer(apiServerOnly))))
})

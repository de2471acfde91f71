/**
 * Load on one NodeKube layer against the fake served on loopback HTTPS: a thousand
 * concurrent GETs and fifty concurrent watches (and twenty log follows) all complete
 * with the right answers, interrupted streams close their connections on the server,
 * and once the layer's scope closes the server holds no socket from it.
 */
import { afterAll, assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as Kube from "../../packages/effect-kube/src/Kube.js"
import { ConfigMaps, Pods } from "../../packages/effect-kube/src/resources/index.js"
import { eventually, makeCounts, nodeLayer, report, serveTls } from "../util/reliability.js"
import { pod } from "../util/pods.js"

const counts = makeCounts()
afterAll(() => report("load", counts))

const cms = Kube.api(ConfigMaps, { namespace: "default" })
const pods = Kube.api(Pods, { namespace: "default" })

const configMap = (name: string, labels: Record<string, string> = { app: "load" }) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace: "default", labels },
  data: { name, pad: "p".repeat(500) }
})

describe("load on one layer", () => {
  it.live("1,000 concurrent GETs all complete, each sent once; no socket is left once the layer closes", () =>
    Effect.scoped(Effect.gen(function*() {
      const served = yield* serveTls()
      const control = served.control
      control.seed(Array.from({ length: 100 }, (_, i) => configMap(`cm-${i}`)))
      const baseline = served.openConnections()
      assert.strictEqual(baseline, 0)

      let peak = 0
      yield* Effect.gen(function*() {
        const results = yield* Effect.forEach(
          Array.from({ length: 1_000 }, (_, i) => i),
          (i) =>
            Effect.map(cms.get(`cm-${i % 100}`), (found) => {
              peak = Math.max(peak, served.openConnections())
              return Option.getOrThrow(found).data?.["name"]
            }),
          { concurrency: "unbounded" }
        )
        results.forEach((name, i) => assert.strictEqual(name, `cm-${i % 100}`))
        const gets = control.requests().filter((r) => r.method === "GET").length
        assert.strictEqual(gets, 1_000, "no retries, nothing lost")
        const afterBurst = served.openConnections()
        assert.isAbove(afterBurst, 0, "connections are kept alive for reuse")

        // the pool is reused: a second burst opens no more than the first left open
        yield* Effect.forEach(Array.from({ length: 200 }, (_, i) => i), (i) => cms.get(`cm-${i % 100}`), {
          concurrency: 10
        })
        assert.isAtMost(served.openConnections(), afterBurst)
      }).pipe(Effect.provide(nodeLayer(served)))

      assert.isTrue(
        yield* eventually(() => served.openConnections() === baseline),
        `back to ${baseline} sockets after the layer closed (${served.openConnections()} open, ${peak} at peak)`
      )
      counts.requests += control.requests().length
    })))

  it.live("50 concurrent watches get every event, in order; interrupted, their sockets close", () =>
    Effect.scoped(Effect.gen(function*() {
      // HTTP/1.1: a socket a watch (on HTTP/2 they are streams on one connection: Http2.test.ts)
      const served = yield* serveTls({ http2: false })
      const control = served.control
      yield* Effect.gen(function*() {
        // a read first, so that the pool holds a kept-alive connection that must survive
        assert.strictEqual((yield* cms.list()).items.length, 0)
        const before = served.openConnections()
        const start = control.resourceVersion()
        const seen: Array<Array<string>> = Array.from({ length: 50 }, () => [])
        const fibers = yield* Effect.forEach(seen, (into) =>
          cms.watch({ resourceVersion: start, labelSelector: "app=load" }).pipe(
            Stream.runForEach((event) =>
              Effect.sync(() => {
                if (event.type !== "BOOKMARK") into.push(`${event.type} ${event.object.metadata?.resourceVersion}`)
              })
            ),
            Effect.forkChild
          ))
        assert.isTrue(yield* eventually(() => control.openWatches() === 50), "50 watches open on the server")
        assert.isAtLeast(served.openConnections(), before + 50 - 1, "a connection each")

        const expected: Array<string> = []
        for (let i = 0; i < 40; i++) {
          const name = `w-${i % 10}`
          const ref = { apiVersion: "v1", kind: "ConfigMap", namespace: "default", name }
          if (control.get(ref) === undefined) {
            expected.push(`ADDED ${control.seed([configMap(name)])[0]!.metadata.resourceVersion as string}`)
          } else {
            const updated = control.update(ref, { data: { i: String(i) } })
            expected.push(`MODIFIED ${updated.metadata.resourceVersion as string}`)
          }
        }
        assert.isTrue(yield* eventually(() => seen.every((s) => s.length >= expected.length), 10_000))
        for (const [i, s] of seen.entries()) assert.deepStrictEqual(s, expected, `watch ${i}`)
        counts.events += seen.reduce((n, s) => n + s.length, 0)

        // reads keep working beside 50 open watches
        const list = yield* cms.list({ labelSelector: "app=load" })
        assert.strictEqual(list.items.length, 10)

        yield* Fiber.interruptAll(fibers)
        assert.isTrue(yield* eventually(() => control.openWatches() === 0), "the server saw every watch go")
        assert.isTrue(
          yield* eventually(() => served.openConnections() <= before + 1),
          `the watches' sockets closed (${served.openConnections()} open, ${before} before)`
        )
      }).pipe(Effect.provide(nodeLayer(served)))
      assert.isTrue(yield* eventually(() => served.openConnections() === 0), "none left after the layer closed")
      counts.requests += control.requests().length
    })))

  it.live("20 concurrent log follows get every line; interrupted, the server drops its followers", () =>
    Effect.scoped(Effect.gen(function*() {
      const served = yield* serveTls()
      const control = served.control
      control.seed([pod("busy")])
      yield* Effect.gen(function*() {
        const seen: Array<Array<string>> = Array.from({ length: 20 }, () => [])
        const fibers = yield* Effect.forEach(seen, (into) =>
          pods.logStream("busy").pipe(
            Stream.runForEach((line) => Effect.sync(() => void into.push(line))),
            Effect.forkChild
          ))
        assert.isTrue(yield* eventually(() => control.openLogStreams() === 20))
        const lines = Array.from({ length: 500 }, (_, i) => `line ${i}`)
        for (let i = 0; i < lines.length; i += 50) control.appendLog("default", "busy", lines.slice(i, i + 50))
        assert.isTrue(yield* eventually(() => seen.every((s) => s.length >= lines.length), 10_000))
        for (const s of seen) assert.deepStrictEqual(s, lines)
        counts.events += seen.reduce((n, s) => n + s.length, 0)
        yield* Fiber.interruptAll(fibers)
        assert.isTrue(yield* eventually(() => control.openLogStreams() === 0), "no follower left")
        assert.isTrue(yield* eventually(() => served.openConnections() <= 1), "their sockets closed")
      }).pipe(Effect.provide(nodeLayer(served)))
      assert.isTrue(yield* eventually(() => served.openConnections() === 0))
      counts.requests += control.requests().length
    })))
})

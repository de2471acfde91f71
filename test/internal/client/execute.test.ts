/**
 * The executor (internal/client.ts) over real HTTP: what it says about answers it could
 * not read, Retry-After driven by the Clock, and the span and metrics of every operation.
 */
import * as HttpClient from "effect/http/HttpClient"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/testing/TestClock"
import * as Tracer from "effect/Tracer"
import type * as Http from "node:http"
import { ApiError } from "../../../packages/effect-kube/src/Errors.js"
import * as client from "../../../packages/effect-kube/src/internal/client/execute.js"
import * as telemetry from "../../../packages/effect-kube/src/internal/client/telemetry.js"
import * as Kube from "../../../packages/effect-kube/src/Kube.js"
import * as Patch from "../../../packages/effect-kube/src/Patch.js"
import * as RequestPolicy from "../../../packages/effect-kube/src/RequestPolicy.js"
import * as Warnings from "../../../packages/effect-kube/src/Warnings.js"
import { ConfigMaps } from "../../../packages/effect-kube/src/resources/index.js"
import { Pods } from "../../../packages/effect-kube/src/resources/index.js"
import { FakeCluster } from "@effect-kube/testing"
import { recordingTracer } from "../../util/tracing.js"
import * as Loopback from "../../util/loopback.js"
import { pod } from "../../util/pods.js"

const noRetries = RequestPolicy.layer({ readRetries: Schedule.recurs(0), throttleRetries: 0, timeout: null })
const configMaps = Kube.api(ConfigMaps, { namespace: "default" })
const configMap = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "cfg", namespace: "default" }, data: {} } as const

const realSleep = (ms: number) => Effect.promise(() => new Promise<void>((resolve) => setTimeout(resolve, ms)))

describe("answers the executor could not read", () => {
  it.effect("a non-2xx answer whose body broke off says so in the ApiError", () =>
    Effect.gen(function*() {
      const server = yield* Loopback.serve((_req, res) => {
        res.writeHead(500, { "content-type": "application/json", "content-length": "1000" })
        res.write("{\"kind\":\"Sta")
        setTimeout(() => res.socket?.destroy(), 20)
      })
      const error = yield* Effect.flip(configMaps.get("cfg").pipe(Effect.provide(Layer.merge(Loopback.layer(server.url), noRetries))))
      assert.instanceOf(error, ApiError)
      const apiError = error as ApiError
      assert.strictEqual(apiError.code, 500)
      assert.include(apiError.message, "the body could not be read")
      assert.isTrue(apiError.message.startsWith("k8s: GET /api/v1/namespaces/default/configmaps/cfg: 500 InternalError: "))
    }))
})

const requestCount = (verb: string, method: string, code: string) =>
  Metric.value(Metric.withAttributes(telemetry.requests, { verb, method, code })).pipe(
    Effect.map((state) => state.count)
  )

describe("Retry-After", () => {
  it.effect("an HTTP-date Retry-After is counted from the Clock (TestClock drives it)", () =>
    Effect.gen(function*() {
      let calls = 0
      const server = yield* Loopback.serve((_req, res) => {
        calls++
        if (calls === 1) {
          // five seconds after the TestClock's start (the epoch)
          res.writeHead(429, { "content-type": "application/json", "retry-after": new Date(5000).toUTCString() })
          res.end(JSON.stringify({ kind: "Status", code: 429, reason: "TooManyRequests", message: "slow down" }))
        } else {
          res.writeHead(200, { "content-type": "application/json" })
          res.end(JSON.stringify(configMap))
        }
      })
      const throttledBefore = yield* requestCount("get", "GET", "429")
      const okBefore = yield* requestCount("get", "GET", "200")
      const policy = RequestPolicy.layer({ readRetries: Schedule.recurs(0), throttleRetries: 1, timeout: null })
      const fiber = yield* Effect.forkChild(
        configMaps.get("cfg").pipe(Effect.provide(Layer.merge(Loopback.layer(server.url), policy)))
      )
      assert.isTrue(yield* Loopback.eventually(() => calls === 1))
      yield* realSleep(50)
      yield* TestClock.adjust("4 seconds")
      yield* realSleep(50)
      assert.strictEqual(calls, 1, "not sent again before the date")
      yield* TestClock.adjust("1 second")
      const found = yield* Fiber.join(fiber)
      assert.strictEqual(calls, 2)
      assert.strictEqual(Option.getOrUndefined(found)?.metadata?.name, "cfg")
      // each request sent is counted, by its code
      assert.strictEqual((yield* requestCount("get", "GET", "429")) - throttledBefore, 1)
      assert.strictEqual((yield* requestCount("get", "GET", "200")) - okBefore, 1)
    }))
})

describe("telemetry", () => {
  it.effect("every operation is one span named for what it does, with Kubernetes attributes", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      const spans: Array<Tracer.Span> = []
      const tracer = yield* recordingTracer(spans)
      const pods = Kube.api(Pods, { namespace: "default" })
      cluster.seed([pod("web")])
      cluster.appendLog("default", "web", "hello\n")
      yield* Effect.gen(function*() {
        yield* configMaps.create({ metadata: { name: "cfg" }, data: { a: "1" } })
        yield* configMaps.get("cfg")
        yield* configMaps.get("missing")
        yield* configMaps.list({ labelSelector: "app=x" })
        yield* configMaps.replace("cfg", configMap)
        yield* configMaps.patch("cfg", Patch.merge({ data: { b: "2" } }))
        yield* configMaps.apply(configMap, { fieldManager: "me" })
        yield* configMaps.watch({ timeoutSeconds: 1 }).pipe(Stream.take(1), Stream.runDrain)
        yield* pods.logs("web")
        yield* configMaps.delete("cfg")
        yield* configMaps.deleteAll({ labelSelector: "app=x" })
      }).pipe(Effect.withTracer(tracer))
      const kube = spans.filter((s) => s.name.startsWith("kube."))
      assert.deepStrictEqual(kube.map((s) => s.name), [
        "kube.create",
        "kube.get",
        "kube.get",
        "kube.list",
        "kube.replace",
        "kube.patch",
        "kube.apply",
        "kube.watch",
        "kube.logs",
        "kube.delete",
        "kube.deleteAll"
      ])
      for (const span of kube) assert.strictEqual(span.status._tag, "Ended", span.name)
      const [, get, missing] = kube
      assert.deepStrictEqual(Object.fromEntries(get!.attributes), {
        "kube.verb": "get",
        "kube.kind": "ConfigMap",
        "kube.namespace": "default",
        "kube.name": "cfg",
        "http.request.method": "GET",
        "url.full": "http://fake-cluster.local/api/v1/namespaces/default/configmaps/cfg",
        "url.path": "/api/v1/namespaces/default/configmaps/cfg",
        "http.response.status_code": 200
      })
      assert.strictEqual(missing!.attributes.get("http.response.status_code"), 404)
      assert.strictEqual(kube[6]!.attributes.get("kube.verb"), "apply")
      assert.strictEqual(kube[7]!.attributes.get("http.response.status_code"), 200)
      assert.strictEqual(kube[8]!.attributes.get("kube.name"), "web")
      assert.strictEqual(kube.filter((s) => s.kind !== "client").length, 0)
    }).pipe(Effect.provide(Layer.merge(FakeCluster.layer(), noRetries))))

  it.effect("a stream's span lasts as long as the stream, parents its request, and ends with its exit", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      const spans: Array<Tracer.Span> = []
      const tracer = yield* recordingTracer(spans)
      cluster.seed([pod("web")])
      const events = yield* Kube.api(Pods, { namespace: "default" }).watch().pipe(
        Stream.take(1),
        Stream.runCollect,
        Effect.withSpan("caller"),
        Effect.withTracer(tracer)
      )
      assert.strictEqual(events.length, 1)
      const [caller] = spans.filter((s) => s.name === "caller")
      const [watch] = spans.filter((s) => s.name === "kube.watch")
      assert.strictEqual(watch!.parent._tag === "Some" && watch!.parent.value.spanId, caller!.spanId)
      assert.strictEqual(watch!.status._tag, "Ended")
      assert.strictEqual(watch!.attributes.get("http.response.status_code"), 200)

      cluster.failNext({ status: 500 })
      const failed = yield* Kube.api(Pods, { namespace: "default" }).watch().pipe(
        Stream.runDrain,
        Effect.flip,
        Effect.withTracer(tracer)
      )
      assert.instanceOf(failed, ApiError)
      const last = spans.filter((s) => s.name === "kube.watch")[1]!
      assert.strictEqual(last.status._tag === "Ended" && last.status.exit._tag, "Failure")
      assert.strictEqual(last.attributes.get("http.response.status_code"), 500)
    }).pipe(Effect.provide(Layer.merge(FakeCluster.layer(), noRetries))))

  it.effect("a metric per request: count by verb, method and code; latency by verb", () =>
    Effect.gen(function*() {
      const latency = Metric.withAttributes(telemetry.duration, { verb: "list" })
      const before = yield* Metric.value(latency)
      const ok = yield* requestCount("list", "GET", "200")
      const failed = yield* requestCount("get", "GET", "500")
      const cluster = yield* FakeCluster.FakeCluster
      yield* configMaps.list()
      yield* configMaps.list()
      cluster.failNext({ status: 500 })
      yield* Effect.flip(configMaps.get("cfg"))
      assert.strictEqual((yield* requestCount("list", "GET", "200")) - ok, 2)
      assert.strictEqual((yield* requestCount("get", "GET", "500")) - failed, 1)
      assert.strictEqual((yield* Metric.value(latency)).count - before.count, 2)

      // attributes the application adds (Metric.CurrentMetricAttributes) are kept
      yield* configMaps.list().pipe(Effect.provideService(Metric.CurrentMetricAttributes, { cluster: "blue" }))
      const tagged = yield* Metric.value(
        Metric.withAttributes(telemetry.requests, { cluster: "blue", verb: "list", method: "GET", code: "200" })
      )
      assert.strictEqual(tagged.count, 1)
    }).pipe(Effect.provide(Layer.merge(FakeCluster.layer(), noRetries))))
})

describe("the Node transport's request path", () => {
  /** Answers every request with the ConfigMap, except those `stall` picks, which it never answers. */
  const serveStalling = (stall: (req: Http.IncomingMessage) => boolean, seen: Array<Http.IncomingHttpHeaders> = []) =>
    Loopback.serve((req, res) => {
      seen.push(req.headers)
      if (stall(req)) return
      res.writeHead(200, { "content-type": "application/json" })
      res.end(JSON.stringify(configMap))
    })

  it.live("under the live Clock the timeout ends a stalled read (retried) and a stalled write (sent once)", () =>
    Effect.gen(function*() {
      const server = yield* serveStalling((req) => req.url?.endsWith("/stalled") === true || req.method === "POST")
      const policy = RequestPolicy.layer({ timeout: "200 millis", readRetries: Schedule.recurs(1), throttleRetries: 0 })
      // one layer for the whole test: its connections outlive each request
      yield* Effect.gen(function*() {
        // answered in time: the timer is cleared and the answer is the request's
        const found = yield* configMaps.get("cfg")
        assert.strictEqual(Option.getOrUndefined(found)?.metadata?.name, "cfg")

        const read = yield* Effect.flip(configMaps.get("stalled"))
        assert.strictEqual(read._tag, "RequestTimeout")
        assert.strictEqual(
          read.message,
          "k8s: GET /api/v1/namespaces/default/configmaps/stalled: no complete answer within 200ms (request timeout)"
        )
        assert.strictEqual(server.requests.filter((r) => r.endsWith("/stalled")).length, 2, "sent once more")

        const write = yield* Effect.flip(configMaps.create({ metadata: { name: "x" } }))
        assert.strictEqual(write._tag, "RequestTimeout")
        assert.strictEqual(server.requests.filter((r) => r.startsWith("POST")).length, 1, "a write is never sent again")
        assert.isTrue(
          yield* Loopback.eventually(() => server.openResponses() === 0),
          "the connections of the abandoned requests are closed"
        )
        // and the layer still works
        assert.isTrue(Option.isSome(yield* configMaps.get("cfg")))
      }).pipe(Effect.provide(Layer.merge(Loopback.layer(server.url), policy)))
    }))

  it.live("under the live Clock a client that does not take a deadline (in memory) is timed out by interruption", () =>
    Effect.gen(function*() {
      const control = yield* FakeCluster.FakeCluster
      control.stallNext({ match: (m) => m === "POST" })
      const error = yield* Effect.flip(configMaps.create({ metadata: { name: "x" } }))
      assert.strictEqual(error._tag, "RequestTimeout")
      assert.strictEqual(control.requests().length, 1)
      // answered in time: the answer is the request's
      assert.isTrue(Option.isNone(yield* configMaps.get("missing")))
    }).pipe(Effect.provide(Layer.merge(FakeCluster.layer(), RequestPolicy.layer({ timeout: "200 millis" })))))

  it.live("interrupting a request in flight, or while its body comes, closes its connection", () =>
    Effect.gen(function*() {
      let headersSent = 0
      const server = yield* Loopback.serve((req, res) => {
        if (!req.url?.endsWith("/half")) return
        res.writeHead(200, { "content-type": "application/json", "content-length": "1000" })
        res.write("{\"kind\":\"Conf")
        headersSent++
      })
      yield* Effect.gen(function*() {
        for (const name of ["cfg", "half"]) {
          const fiber = yield* Effect.forkChild(configMaps.get(name))
          assert.isTrue(yield* Loopback.eventually(() => server.openResponses() === 1))
          if (name === "half") assert.isTrue(yield* Loopback.eventually(() => headersSent === 1))
          yield* Fiber.interrupt(fiber)
          assert.isTrue(yield* Loopback.eventually(() => server.openResponses() === 0), name)
        }
      }).pipe(Effect.provide(Loopback.layer(server.url)))
    }))

  it.live("a streamed answer's connection is closed with the scope of its request, even if its body was never read", () =>
    Effect.gen(function*() {
      const server = yield* Loopback.serve((_req, res) => {
        res.writeHead(200, { "content-type": "application/json" })
        res.write("{\"type\":\"ADDED\"")
      })
      yield* Effect.gen(function*() {
        const response = yield* Effect.scoped(
          client.sendScoped({ method: "GET", path: "/api/v1/configmaps", query: { watch: true }, operation: { verb: "watch" } })
        )
        assert.strictEqual(response.status, 200)
        assert.isTrue(yield* Loopback.eventually(() => server.openResponses() === 0))
      }).pipe(Effect.provide(Loopback.layer(server.url)))
    }))

  it.effect("the trace context of the kube.<verb> span reaches the server; the application's requests keep their span", () =>
    Effect.gen(function*() {
      const seen: Array<Http.IncomingHttpHeaders> = []
      const server = yield* serveStalling(() => false, seen)
      const spans: Array<Tracer.Span> = []
      const tracer = yield* recordingTracer(spans)
      yield* Effect.gen(function*() {
        yield* configMaps.get("cfg")
        // the application's own request through the same HttpClient
        const client = yield* HttpClient.HttpClient
        yield* Effect.scoped(client.get(`${server.url}/healthz`))
        // propagation turned off the platform's way
        yield* Effect.provideService(configMaps.get("cfg"), HttpClient.TracerPropagationEnabled, false)
      }).pipe(Effect.withTracer(tracer), Effect.provide(Layer.merge(Loopback.layer(server.url), noRetries)))
      const [get] = spans.filter((s) => s.name === "kube.get")
      assert.strictEqual(seen[0]!.traceparent, `00-${get!.traceId}-${get!.spanId}-01`)
      assert.strictEqual(seen[0]!.b3, `${get!.traceId}-${get!.spanId}-1`)
      assert.isUndefined(seen[2]!.traceparent)
      assert.isUndefined(seen[0]!.authorization, "no credentials configured, none sent")
      // Effect's own client span (named for the method in Effect 4, "http.client GET" in Effect 3): the
      // application's request has one, the Kubernetes requests none
      const effectClientSpans = spans.filter((s) => s.kind === "client" && !s.name.startsWith("kube."))
      assert.deepStrictEqual(effectClientSpans.map((s) => [s.name, s.attributes.get("url.path")]), [["GET", "/healthz"]])
    }))

  it.effect("without a tracer no kube.<verb> span is made: the caller's trace context is sent, its span untouched", () =>
    Effect.gen(function*() {
      const seen: Array<Http.IncomingHttpHeaders> = []
      const server = yield* serveStalling(() => false, seen)
      const caller = yield* Effect.gen(function*() {
        yield* configMaps.get("cfg")
        return yield* Effect.currentSpan
      }).pipe(Effect.withSpan("caller"), Effect.provide(Layer.merge(Loopback.layer(server.url), noRetries)))
      // the native tracer's span of the caller, not one of the request's own
      assert.strictEqual(seen[0]!.traceparent, `00-${caller.traceId}-${caller.spanId}-01`)
      assert.isFalse(caller.attributes.has("http.response.status_code"))
      assert.isFalse(caller.attributes.has("kube.verb"))
      // and none at all outside a span
      yield* configMaps.get("cfg").pipe(Effect.provide(Layer.merge(Loopback.layer(server.url), noRetries)))
      assert.isUndefined(seen[1]!.traceparent)
    }))

  it.live("under the transport's deadline a Warnings service that does not return is cut at the request's timeout", () =>
    Effect.gen(function*() {
      const server = yield* Loopback.serve((_req, res) => {
        res.setHeader("warning", '299 - "slow to report"')
        res.writeHead(200, { "content-type": "application/json" })
        res.end(JSON.stringify(configMap))
      })
      const policy = RequestPolicy.layer({ timeout: "200 millis", readRetries: Schedule.recurs(0) })
      const error = yield* Effect.flip(configMaps.get("cfg")).pipe(
        Effect.provide(Layer.mergeAll(Loopback.layer(server.url), policy, Warnings.layer(() => Effect.never)))
      )
      assert.strictEqual(error._tag, "RequestTimeout")
    }))

  it.effect("a Warning header sent twice reaches the Warnings service as two warnings", () =>
    Effect.gen(function*() {
      const server = yield* Loopback.serve((_req, res) => {
        res.setHeader("warning", ['299 - "first"', '299 - "second"'])
        res.writeHead(200, { "content-type": "application/json" })
        res.end(JSON.stringify(configMap))
      })
      const collected = yield* Warnings.Collected
      yield* configMaps.get("cfg").pipe(Effect.provide(Layer.merge(Loopback.layer(server.url), noRetries)))
      assert.deepStrictEqual((yield* collected.warnings).map((w) => w.text), ["first", "second"])
    }).pipe(Effect.provide(Warnings.layerCollect)))
})

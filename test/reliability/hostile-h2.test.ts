/**
 * HTTP/2 and chunking under a hostile or overloaded server (issue 42), on the real request
 * path: a raw HTTP/2 server on loopback TLS that writes its frames by hand (`util/rawH2.ts`)
 * where `node:http2` cannot misbehave enough, `node:http` where HTTP/1.1 is the case, and
 * `FakeCluster.serve` for uploads queued on one connection. Bodies in 1-byte frames and
 * chunks are decoded and bounded by their limits; a stream the server refuses is never
 * taken for a head too large, and a mutation whose answer was lost says the write may have
 * happened; a watch ends or resumes within its bound however the server trickles; no text
 * a server echoes shows the token or the password. Memory and CPU of the same cases are
 * measured by `bench/hostile-h2.ts`.
 */
import { afterAll, assert, describe, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import type * as HttpClient from "effect/http/HttpClient"
import * as HttpClientError from "effect/http/HttpClientError"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/testing/TestClock"
import type * as Tracer from "effect/Tracer"
import type * as Http from "node:http"
import * as NodeHttp2 from "node:http2"
import * as Util from "node:util"
import { ApiError, ConnectionFailure, LimitExceeded } from "../../packages/effect-kube/src/Errors.js"
import * as Kube from "../../packages/effect-kube/src/Kube.js"
import * as KubeConfig from "../../packages/effect-kube/src/KubeConfig.js"
import * as NodeKube from "../../packages/effect-kube/src/NodeKube.js"
import * as RequestPolicy from "../../packages/effect-kube/src/RequestPolicy.js"
import { ConfigMaps } from "../../packages/effect-kube/src/resources/index.js"
import { FakeCluster } from "@effect-kube/testing"
import * as Warnings from "../../packages/effect-kube/src/Warnings.js"
import { pki } from "../util/pki.js"
import { headerBlock, type RawStream, serveRawH2 } from "../util/rawH2.js"
import {
  eventually,
  makeCounts,
  type RawServer,
  rawLayer,
  rawServer,
  realSleep,
  renderings,
  report
} from "../util/reliability.js"
import { recordingTracer } from "../util/tracing.js"

const counts = makeCounts()
afterAll(() => report("hostile-h2", counts))

const KiB = 1024
const cms = Kube.api(ConfigMaps, { namespace: "default" })
const token = "h2-hostile-token-5f0c1e7a9b"

/** KubeConfig (a bearer token, the test CA) and the Node transport for a raw h2 server. */
const h2Layer = (url: string): Layer.Layer<KubeConfig.KubeConfig | HttpClient.HttpClient> =>
  NodeKube.layerFromKubeConfig(
    KubeConfig.layerFrom({ server: url, namespace: "default", tls: { ca: pki().ca.cert }, token })
  ).pipe(Layer.orDie)

/** Runs `program` against a raw h2 server whose streams `onStream` answers, with `policy` over the defaults. */
const againstH2 = <A, E>(
  onStream: (stream: RawStream, index: number) => void,
  program: (server: { readonly requests: () => number }) => Effect.Effect<A, E, Kube.Requirements | Scope.Scope>,
  policy: RequestPolicy.Options = {},
  settings?: ReadonlyArray<readonly [number, number]>
) =>
  Effect.scoped(Effect.gen(function*() {
    const server = yield* serveRawH2(onStream, { settings })
    const result = yield* program(server).pipe(
      Effect.provide(Layer.merge(h2Layer(server.url), RequestPolicy.layer(policy)))
    )
    counts.requests += server.requests()
    return result
  }))

/** Runs `program` against a raw HTTP/1.1 server, with `policy` over the defaults. */
const againstHttp1 = <A, E>(
  program: (raw: RawServer) => Effect.Effect<A, E, Kube.Requirements | Scope.Scope>,
  policy: RequestPolicy.Options = {},
  layer: (url: string) => Layer.Layer<KubeConfig.KubeConfig | HttpClient.HttpClient> = (url) => rawLayer(url, token)
) =>
  Effect.scoped(Effect.gen(function*() {
    const raw = yield* rawServer
    const result = yield* program(raw).pipe(Effect.provide(Layer.merge(layer(raw.url), RequestPolicy.layer(policy))))
    counts.requests += raw.requests.length
    return result
  }))

const json = { "content-type": "application/json" }

const configMap = (name: string, data: Record<string, string> = { a: "b" }) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace: "default", resourceVersion: "1" },
  data
})

const event = (name: string, size: number) =>
  `${JSON.stringify({ type: "ADDED", object: configMap(name, { pad: "x".repeat(size) }) })}\n`

const list = (items: number) =>
  JSON.stringify({
    apiVersion: "v1",
    kind: "ConfigMapList",
    metadata: { resourceVersion: "7" },
    items: Array.from({ length: items }, (_, i) => configMap(`cm-${i}`, { pad: "x".repeat(100) }))
  })

/** The typed failure of an exit; a defect or a success fails the test. */
const failureOf = <A, E>(exit: Exit.Exit<A, E>): E => {
  if (Exit.isSuccess(exit)) return assert.fail("expected a failure, got a success")
  assert.isFalse(Cause.hasDies(exit.cause), Cause.pretty(exit.cause))
  const error = Cause.findErrorOption(exit.cause)
  return Option.isSome(error) ? error.value : assert.fail(Cause.pretty(exit.cause))
}

const nameOf = (event: Kube.WatchEvent<{ readonly metadata?: { readonly name?: string | undefined } | undefined }>) =>
  event.type === "BOOKMARK" ? "bookmark" : event.object.metadata?.name ?? ""

const limitOf = (error: unknown): string | undefined => error instanceof LimitExceeded ? error.limit : undefined

const connectionFailureOf = (error: unknown): ConnectionFailure | undefined =>
  HttpClientError.isHttpClientError(error) && error.reason instanceof ConnectionFailure ? error.reason : undefined

describe("a body in 1-byte pieces is decoded, and bounded by its limit", () => {
  it.live("a watch in 1-byte HTTP/2 DATA frames: a 40 KiB event arrives whole, a line past maxLineBytes fails", () =>
    againstH2(
      (stream) => {
        stream.respond(200, json)
        void stream.send(Buffer.from(event("whole", 40 * KiB) + "y".repeat(100 * KiB)), 1)
      },
      () =>
        Effect.gen(function*() {
          const seen: Array<string> = []
          const exit = yield* Effect.exit(
            cms.watch().pipe(Stream.runForEach((e) => Effect.sync(() => seen.push(nameOf(e)))))
          )
          counts.faults++
          counts.events += seen.length
          assert.deepStrictEqual(seen, ["whole"], "the event before the long line, decoded from 1-byte frames")
          const error = failureOf(exit)
          assert.strictEqual(limitOf(error), "maxLineBytes", String(error))
        }),
      { maxLineBytes: 64 * KiB }
    ), 60_000)

  it.live("a list in 1-byte DATA frames, no length: read whole; past maxResponseBytes, LimitExceeded", () =>
    againstH2(
      (stream) => {
        stream.respond(200, json)
        void stream.send(Buffer.from(list(200)), 1).then(() => stream.end())
      },
      (server) =>
        Effect.gen(function*() {
          const page = yield* cms.list()
          assert.strictEqual(page.items.length, 200)
          assert.strictEqual(page.items[199]!.metadata?.name, "cm-199")
          counts.faults++
          const error = failureOf(yield* Effect.exit(cms.list().pipe(Effect.provide(RequestPolicy.layer({
            maxResponseBytes: 16 * KiB
          })))))
          assert.strictEqual(limitOf(error), "maxResponseBytes", String(error))
          assert.strictEqual(server.requests(), 2, "a limit is not transient: not sent again")
        })
    ), 60_000)

  it.live("a watch in 1-byte HTTP/1.1 chunks: the event arrives whole, a line past maxLineBytes fails", () =>
    againstHttp1(
      (raw) =>
        Effect.gen(function*() {
          raw.answer = (_req, res) => {
            res.writeHead(200, json)
            const bytes = Buffer.from(event("chunked", 20 * KiB) + "y".repeat(80 * KiB))
            let offset = 0
            const next = () => {
              if (res.destroyed) return
              // a write per byte, a chunk of the chunked encoding each; the socket's buffer drained between runs
              for (let i = 0; i < 4096 && offset < bytes.length; i++) res.write(bytes.subarray(offset, ++offset))
              if (offset < bytes.length) setImmediate(next)
            }
            next()
          }
          const seen: Array<string> = []
          const exit = yield* Effect.exit(
            cms.watch().pipe(Stream.runForEach((e) => Effect.sync(() => seen.push(nameOf(e)))))
          )
          counts.faults++
          assert.deepStrictEqual(seen, ["chunked"])
          assert.strictEqual(limitOf(failureOf(exit)), "maxLineBytes")
        }),
      { maxLineBytes: 64 * KiB }
    ), 60_000)
})

describe("a stream the server refuses is not a head too large", () => {
  it.live("RST_STREAM(ENHANCE_YOUR_CALM): a read is retried, a write fails saying it may have happened", () =>
    againstH2(
      (stream, index) => {
        // the first two GETs and the POST (the fourth stream) are refused; the third GET is answered
        if (index === 2) {
          stream.respond(200, json)
          void stream.send(Buffer.from(JSON.stringify(configMap("calm"))), 16 * KiB).then(() => stream.end())
          return
        }
        stream.reset(NodeHttp2.constants.NGHTTP2_ENHANCE_YOUR_CALM)
      },
      (server) =>
        Effect.gen(function*() {
          const got = yield* cms.get("calm")
          assert.strictEqual(Option.getOrThrow(got).metadata?.name, "calm", "a read goes again after the refusal")
          assert.strictEqual(server.requests(), 3)
          counts.faults += 3
          const error = failureOf(yield* Effect.exit(cms.create(configMap("refused"))))
          assert.notInstanceOf(error, LimitExceeded)
          const failure = connectionFailureOf(error)
          assert.isDefined(failure, String(error))
          assert.strictEqual(failure!.problem, "StreamRefused")
          assert.isTrue(failure!.outcomeUnknown)
          assert.match(String(error), /ENHANCE_YOUR_CALM/)
          assert.match(String(error), /the POST may have been carried out by the server/)
          assert.notMatch(String(error), /headers|maxHeaderBytes/)
          assert.strictEqual(server.requests(), 4, "a write is not sent again")
        }),
      { readRetries: Schedule.recurs(3) }
    ), 30_000)

  it.live("a connection lost after a write was sent: the write may have happened; a GET's error does not say so", () =>
    againstH2(
      (stream) => {
        // the connection is cut under the stream, before any answer
        stream.raw(0x7, 0, Buffer.from([0, 0, 0, 0, 0, 0, 0, 2]))
        stream.reset(NodeHttp2.constants.NGHTTP2_INTERNAL_ERROR)
      },
      () =>
        Effect.gen(function*() {
          counts.faults += 2
          const write = connectionFailureOf(failureOf(yield* Effect.exit(cms.create(configMap("lost")))))
          assert.isDefined(write)
          assert.isTrue(write!.outcomeUnknown)
          const read = connectionFailureOf(failureOf(yield* Effect.exit(cms.get("lost"))))
          assert.isDefined(read)
          assert.isFalse(read!.outcomeUnknown)
          assert.notMatch(read!.message, /may have been carried out/)
        }),
      { readRetries: Schedule.recurs(0) }
    ), 30_000)

  it.live("16 uploads of 0.9 MB queued on one connection beside 40 GETs: every one succeeds, as over HTTP/1.1", () =>
    Effect.gen(function*() {
      const { ca, server } = pki()
      const served = yield* FakeCluster.serve({ tls: { cert: server.cert, key: server.key, ca: ca.cert } }).pipe(
        Effect.orDie
      )
      served.control.seed(Array.from({ length: 40 }, (_, i) => configMap(`get-${i}`)))
      const big = "x".repeat(900 * KiB)
      const results = yield* Effect.all(
        [
          ...Array.from({ length: 16 }, (_, i) =>
            Effect.exit(Effect.asVoid(cms.create(configMap(`up-${i}`, { big }))))),
          ...Array.from({ length: 40 }, (_, i) => Effect.exit(Effect.asVoid(cms.get(`get-${i}`))))
        ],
        { concurrency: "unbounded" }
      ).pipe(
        Effect.provide(NodeKube.layerFromKubeConfig(KubeConfig.layerFromFile({ path: served.kubeconfigPath })).pipe(
          Layer.orDie
        ))
      )
      counts.requests += results.length
      const failed = results.filter(Exit.isFailure).map((exit) => String(exit.cause))
      assert.deepStrictEqual(failed, [], "no answer is refused")
      assert.strictEqual(served.http2Connections(), 1, "over h2, on one connection")
      const stored = served.control.list("v1", "ConfigMap", "default")
      assert.strictEqual(stored.filter((o) => String(o.metadata?.name).startsWith("up-")).length, 16, "all stored")
    }), 120_000)

  it.live("a head in more CONTINUATION frames than nghttp2 takes (8 MB) is LimitExceeded, not a reset retried", () =>
    againstH2(
      (stream) => {
        const block = headerBlock([
          [":status", "200"],
          ...Array.from({ length: 16_000 }, (_, i) => [`x-filler-${i}`, "x".repeat(500)] as const)
        ])
        const frame = 16 * KiB
        stream.raw(0x1, 0, block.subarray(0, frame))
        for (let offset = frame; offset < block.length; offset += frame) {
          stream.raw(0x9, offset + frame >= block.length ? 0x4 : 0, block.subarray(offset, offset + frame))
        }
      },
      (server) =>
        Effect.gen(function*() {
          counts.faults++
          const error = failureOf(yield* Effect.exit(cms.get("x")))
          assert.strictEqual(limitOf(error), "maxHeaderBytes", String(error))
          assert.strictEqual(server.requests(), 1, "not retried")
        })
    ), 30_000)

  it.live("an endless run of empty DATA frames: a DecodeError that says why", () =>
    againstH2(
      (stream) => {
        stream.respond(200, json)
        const timer = setInterval(() => {
          if (stream.closed()) return clearInterval(timer)
          for (let i = 0; i < 200; i++) stream.raw(0x0, 0, Buffer.alloc(0))
        }, 1)
      },
      () =>
        Effect.gen(function*() {
          counts.faults++
          const error = failureOf(yield* Effect.exit(cms.get("x")))
          assert.isTrue(HttpClientError.isHttpClientError(error), String(error))
          const reason = (error as HttpClientError.HttpClientError).reason
          assert.strictEqual(reason._tag, "DecodeError")
          assert.match(reason.description ?? "", /invalid or empty HTTP\/2 frames/)
        }),
      { readRetries: Schedule.recurs(0) }
    ), 30_000)
})

describe("a server that allows no streams", () => {
  it.live("SETTINGS_MAX_CONCURRENT_STREAMS = 0: a watch and a read fail at once, saying so; a write was not sent", () =>
    againstH2(
      () => assert.fail("no stream may be opened"),
      (server) =>
        Effect.gen(function*() {
          const started = Date.now()
          const watch = failureOf(yield* Effect.exit(cms.watch().pipe(Stream.runDrain)))
          const read = failureOf(yield* Effect.exit(cms.get("x")))
          const write = failureOf(yield* Effect.exit(cms.create(configMap("never"))))
          counts.faults += 3
          for (const error of [watch, read, write]) {
            const failure = connectionFailureOf(error)
            assert.isDefined(failure, String(error))
            assert.strictEqual(failure!.problem, "StreamRefused")
            assert.match(failure!.message, /allows no HTTP\/2 streams/)
          }
          assert.isFalse(connectionFailureOf(write)!.outcomeUnknown, "the write is known not to have been sent")
          assert.isBelow(Date.now() - started, 10_000, "fast, not after every attempt's timeout")
          assert.strictEqual(server.requests(), 0)
        }),
      { readRetries: Schedule.recurs(2) },
      [[0x3, 0]]
    ), 30_000)
})

/** A watch answer trickled a byte every `everyMs`: a line that never ends. */
const trickle = (everyMs: number): Http.RequestListener => (req, res) => {
  if (!(req.url ?? "").includes("watch=true")) {
    res.writeHead(200, json)
    const empty = { apiVersion: "v1", kind: "ConfigMapList", metadata: { resourceVersion: "5" }, items: [] }
    return res.end(JSON.stringify(empty))
  }
  res.writeHead(200, json)
  res.write("{")
  const timer = setInterval(() => (res.destroyed ? clearInterval(timer) : res.write(" ")), everyMs)
  res.on("close", () => clearInterval(timer))
}

describe("a watch a server trickles ends or resumes within its bound", () => {
  it.live("the watcher counts idle time in events: a byte every 50 ms of no event resumes it after idleTimeout", () =>
    againstHttp1(
      (raw) =>
        Effect.gen(function*() {
          raw.answer = trickle(50)
          const watcher = yield* cms.watcher({ idleTimeout: "1 second", timeoutSeconds: 60 }).pipe(
            Stream.runDrain,
            Effect.forkChild
          )
          const watches = () => raw.requests.filter((r) => r.includes("watch=true")).length
          assert.isTrue(yield* eventually(() => watches() >= 1, 5_000))
          const first = Date.now()
          assert.isTrue(yield* eventually(() => watches() >= 3, 10_000), "resumed twice")
          counts.faults += watches()
          // two idle timeouts of 1 s (and a backoff of at most 1.6 s), not the trickle's for ever
          assert.isBelow(Date.now() - first, 8_000)
          yield* Fiber.interrupt(watcher)
        })
    ), 30_000)

  it.effect("a plain watch that trickles ends 30 s past its timeoutSeconds, as if the server had ended it", () =>
    againstHttp1((raw) =>
      Effect.gen(function*() {
        raw.answer = trickle(20)
        const watch = yield* cms.watch({ timeoutSeconds: 5 }).pipe(Stream.runCollect, Effect.forkChild)
        assert.isTrue(yield* eventually(() => raw.requests.length === 1, 5_000))
        yield* realSleep(200)
        yield* TestClock.adjust("34 seconds")
        yield* realSleep(100)
        assert.isUndefined(watch.pollUnsafe(), "still open before its bound")
        yield* TestClock.adjust("2 seconds")
        const exit = yield* Fiber.await(watch).pipe(Effect.timeout("5 seconds"))
        counts.faults++
        assert.isTrue(Exit.isSuccess(exit), "it ends, with what it had (nothing)")
      })
    ), 30_000)
})

/** A Status that quotes what the client sent, as a misconfigured proxy or webhook does. */
const echoStatus = (code: number, reason: string, quoted: string) =>
  JSON.stringify({ kind: "Status", apiVersion: "v1", status: "Failure", code, reason, message: `refused: ${quoted}` })

describe("no text a server echoes shows the secrets the client holds", () => {
  const refusals = [
    [401, "Unauthorized"],
    [403, "Forbidden"],
    [500, "InternalError"],
    [429, "TooManyRequests"]
  ] as const
  for (const [code, reason] of refusals) {
    it.live(`a ${code} Status quoting the bearer token: not in the error, its renderings or the span`, () =>
      againstHttp1(
        (raw) =>
          Effect.gen(function*() {
            raw.answer = (req, res) => {
              res.writeHead(code, json)
              res.end(echoStatus(code, reason, `Authorization: ${req.headers.authorization}`))
            }
            const spans: Array<Tracer.Span> = []
            const tracer = yield* recordingTracer(spans)
            const error = failureOf(yield* Effect.exit(cms.get("x").pipe(Effect.withTracer(tracer))))
            counts.faults++
            assert.instanceOf(error, ApiError)
            assert.include((error as ApiError).statusMessage, "refused: Authorization: Bearer <redacted>")
            for (const text of renderings(error)) assert.notInclude(text, token)
            const shown = spans.map((span) => Util.inspect(span.status, { depth: 8 })).join("\n")
            assert.notInclude(shown, token)
          }),
        { readRetries: Schedule.recurs(0), throttleRetries: 0 }
      ), 30_000)
  }

  it.live("a watch ERROR event and a Warning header quoting the token: redacted in the error and the warning", () =>
    againstHttp1(
      (raw) =>
        Effect.gen(function*() {
          raw.answer = (req, res) => {
            const quoted = String(req.headers.authorization)
            res.writeHead(200, { ...json, warning: `299 - "deprecated, and your ${quoted} is showing"` })
            const status = JSON.parse(echoStatus(500, "InternalError", quoted)) as object
            res.end(`${JSON.stringify({ type: "ERROR", object: status })}\n`)
          }
          const error = failureOf(yield* Effect.exit(cms.watch().pipe(Stream.runDrain)))
          counts.faults += 2
          assert.instanceOf(error, ApiError)
          for (const text of renderings(error)) assert.notInclude(text, token)
          const warnings = yield* (yield* Warnings.Collected).warnings
          assert.strictEqual(warnings.length, 1)
          assert.include(warnings[0]!.text, "your Bearer <redacted> is showing")
        }).pipe(Effect.provide(Warnings.layerCollect))
    ), 30_000)

  it.live("basic auth: the password and the pair as sent are redacted", () =>
    againstHttp1(
      (raw) =>
        Effect.gen(function*() {
          raw.answer = (req, res) => {
            res.writeHead(401, json)
            res.end(echoStatus(401, "Unauthorized", `${req.headers.authorization} (password hunter2-basic-pass)`))
          }
          const error = failureOf(yield* Effect.exit(cms.get("x")))
          counts.faults++
          const encoded = Buffer.from("alice:hunter2-basic-pass").toString("base64")
          for (const text of renderings(error)) {
            assert.notInclude(text, "hunter2-basic-pass")
            assert.notInclude(text, encoded)
          }
          assert.include((error as ApiError).statusMessage, "Basic <redacted> (password <redacted>)")
        }),
      { readRetries: Schedule.recurs(0) },
      (url) =>
        NodeKube.layerFromKubeConfig(
          KubeConfig.layerFrom({ server: url, namespace: "default", username: "alice", password: "hunter2-basic-pass" })
        ).pipe(Layer.orDie)
    ), 30_000)
})

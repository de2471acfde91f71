/**
 * Servers written to misbehave, on loopback (`node:http`, through the real Node transport):
 * endless and gzip-bombed bodies, watch lines without end, huge headers, Retry-After of
 * days, 410 and bookmark-and-close loops, Status answers of the wrong shape, and proxies
 * echoing the request with its token. Each ends in a tagged error naming the limit (never
 * a defect), with the connection closed, the RSS growth bounded, and the requests counted;
 * the figures are printed for the README.
 */
import { afterAll, assert, describe, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as HttpClient from "effect/http/HttpClient"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as Http from "node:http"
import * as Zlib from "node:zlib"
import { ApiError, LimitExceeded } from "../../packages/effect-kube/src/Errors.js"
import * as Kube from "../../packages/effect-kube/src/Kube.js"
import * as NodeKube from "../../packages/effect-kube/src/NodeKube.js"
import * as KubeConfig from "../../packages/effect-kube/src/KubeConfig.js"
import * as RequestPolicy from "../../packages/effect-kube/src/RequestPolicy.js"
import { ConfigMaps, CustomResourceDefinitions } from "../../packages/effect-kube/src/resources/index.js"
import * as Watcher from "../../packages/effect-kube/src/Watcher.js"
import { measure } from "../util/peak.js"
import {
  eventually,
  makeCounts,
  type RawServer,
  rawLayer,
  rawServer,
  realSleep,
  renderings,
  report,
  servedToken
} from "../util/reliability.js"

const counts = makeCounts()
const figures: Array<string> = []
afterAll(() => {
  report("hostile", counts)
  for (const figure of figures) console.log(`reliability (hostile): ${figure}`)
})

const MiB = 1024 * 1024
const cms = Kube.api(ConfigMaps, { namespace: "default" })

/** Runs `program` against a raw server, with `policy` over the defaults. */
const against = <A, E>(
  program: (raw: RawServer) => Effect.Effect<A, E, Kube.Requirements | Scope.Scope>,
  policy: RequestPolicy.Options = {},
  layer: (url: string) => Layer.Layer<KubeConfig.KubeConfig | HttpClient.HttpClient> = rawLayer
) =>
  Effect.scoped(Effect.gen(function*() {
    const raw = yield* rawServer
    const result = yield* program(raw).pipe(Effect.provide(Layer.merge(layer(raw.url), RequestPolicy.layer(policy))))
    counts.requests += raw.requests.length
    return result
  }))

/** The typed failure of an exit; a defect or a success fails the test. */
const failureOf = <A, E>(exit: Exit.Exit<A, E>): E => {
  if (Exit.isSuccess(exit)) return assert.fail("expected a failure, got a success")
  assert.isFalse(Cause.hasDies(exit.cause), Cause.pretty(exit.cause))
  const error = Cause.findErrorOption(exit.cause)
  return Option.isSome(error) ? error.value : assert.fail(Cause.pretty(exit.cause))
}

/** Writes `chunk` for ever (until the client goes away), minding backpressure. */
const endless = (res: Http.ServerResponse, chunk: Buffer) => {
  const write = () => {
    while (!res.destroyed && res.write(chunk));
    if (!res.destroyed) res.once("drain", write)
  }
  write()
}

const zeros = Buffer.alloc(64 * 1024, "a")

/** `ms`, and how far the RSS rose while it ran, checked against `maxGrowth` and recorded. */
const bounded = <A, E, R>(name: string, maxGrowth: number, effect: Effect.Effect<A, E, R>) =>
  Effect.map(measure(effect), ({ exit, ms, peakGrowthBytes }) => {
    counts.faults++
    figures.push(`${name}: ${ms.toFixed(0)} ms, peak RSS +${(Math.max(0, peakGrowthBytes) / MiB).toFixed(0)} MB`)
    assert.isBelow(peakGrowthBytes, maxGrowth, `${name}: RSS grew by ${(peakGrowthBytes / MiB).toFixed(0)} MB`)
    return exit
  })

const exceeded = (error: unknown, limit: string) => {
  assert.instanceOf(error, LimitExceeded, String(error))
  assert.strictEqual((error as LimitExceeded).limit, limit)
  return error as LimitExceeded
}

const list = `{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"1"},"items":[]}`
const isWatch = (req: Http.IncomingMessage) => (req.url ?? "").includes("watch=true")
const lists = (raw: RawServer) => raw.requests.filter((r) => !r.includes("watch=true")).length
const watches = (raw: RawServer) => raw.requests.filter((r) => r.includes("watch=true")).length

/** A server whose lists are empty and whose watches answer `watch`. */
const watchServer = (watch: Http.RequestListener): Http.RequestListener => (req, res) => {
  if (isWatch(req)) return watch(req, res)
  res.writeHead(200, { "content-type": "application/json" })
  res.end(list)
}

describe("what an answer can make the client hold", () => {
  it.live("a gzip bomb (1 MB that inflates to 1 GiB) stops at maxResponseBytes after gunzip", () =>
    Effect.gen(function*() {
      // gzip members one after another inflate to their texts one after another
      const member = Zlib.gzipSync(Buffer.alloc(16 * MiB, " "))
      const bomb = Buffer.concat(Array.from({ length: 64 }, () => member))
      assert.isBelow(bomb.length, 2 * MiB)
      yield* against((raw) =>
        Effect.gen(function*() {
          raw.answer = (_req, res) => {
            res.writeHead(200, { "content-type": "application/json", "content-encoding": "gzip" })
            res.end(bomb)
          }
          const error = failureOf(
            yield* bounded(`gzip bomb of ${(bomb.length / 1024).toFixed(0)} KB, default limit`, 700 * MiB, cms.list())
          )
          assert.strictEqual(exceeded(error, "maxResponseBytes").value, 256 * MiB)
          assert.isTrue(yield* eventually(() => raw.openConnections() === 0), "the connection is closed")
        })
      )
    }))

  it.live("an endless 2xx body stops at maxResponseBytes, its connection closed (default and lowered)", () =>
    against((raw) =>
      Effect.gen(function*() {
        raw.answer = (_req, res) => {
          res.writeHead(200, { "content-type": "application/json" })
          endless(res, zeros)
        }
        const lowered = failureOf(
          yield* bounded(
            "endless body, maxResponseBytes 8 MiB",
            64 * MiB,
            cms.get("a").pipe(Effect.provide(RequestPolicy.layer({ maxResponseBytes: 8 * MiB })))
          )
        )
        const e = exceeded(lowered, "maxResponseBytes")
        assert.strictEqual(e.value, 8 * MiB)
        assert.strictEqual(e.message, `k8s: GET /api/v1/namespaces/default/configmaps/a: the answer is larger than ` +
          `maxResponseBytes (8 MiB); the connection was closed`)
        assert.isTrue(yield* eventually(() => raw.openConnections() === 0), "the connection is closed")
        assert.strictEqual(raw.requests.length, 1, "not retried")
        const byDefault = failureOf(yield* bounded("endless body, default 256 MiB", 700 * MiB, cms.get("a")))
        assert.strictEqual(exceeded(byDefault, "maxResponseBytes").value, 256 * MiB)
        assert.isTrue(yield* eventually(() => raw.openConnections() === 0), "the connection is closed")
      })
    ))

  it.live("an endless error body is read up to 1 MiB and left out of the ApiError; retries are counted", () =>
    against((raw) =>
      Effect.gen(function*() {
        raw.answer = (_req, res) => {
          res.writeHead(500, { "content-type": "text/plain" })
          endless(res, zeros)
        }
        const error = failureOf(yield* bounded("endless 500 body, 4 attempts", 64 * MiB, cms.get("a")))
        assert.instanceOf(error, ApiError)
        assert.strictEqual((error as ApiError).code, 500)
        assert.notInclude((error as ApiError).message, "aaaa")
        assert.strictEqual(raw.requests.length, 4, "1 + readRetries (3)")
        assert.isTrue(yield* eventually(() => raw.openConnections() === 0), "the connections are closed")
      }), { readRetries: Schedule.recurs(3) }))

  it.live("a watch line without a newline stops at maxLineBytes; the watcher fails with it", () =>
    against((raw) =>
      Effect.gen(function*() {
        raw.answer = watchServer((_req, res) => {
          res.writeHead(200, { "content-type": "application/json" })
          endless(res, zeros)
        })
        const error = failureOf(
          yield* bounded("endless watch line, maxLineBytes 4 MiB", 64 * MiB, Stream.runDrain(cms.watcher()))
        )
        assert.strictEqual(exceeded(error, "maxLineBytes").subject, "a watch line")
        assert.isTrue(yield* eventually(() => raw.openConnections() === 0), "the connection is closed")
      }), { maxLineBytes: 4 * MiB }))

  it.live("headers past maxHeaderBytes fail with LimitExceeded; raised, they are read", () =>
    Effect.gen(function*() {
      const answer: Http.RequestListener = (_req, res) => {
        const headers: Record<string, string> = { "content-type": "application/json" }
        for (let i = 0; i < 200; i++) headers[`x-filler-${i}`] = "x".repeat(500)
        res.writeHead(200, headers)
        res.end(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}}`)
      }
      const withHeaders = (maxHeaderBytes: number | undefined) => (url: string) =>
        Layer.provideMerge(
          NodeKube.httpClientLayerWith({ maxHeaderBytes }),
          KubeConfig.layerFrom({ server: url, namespace: "default", token: servedToken })
        ).pipe(Layer.orDie)
      const error = yield* against((raw) => {
        raw.answer = answer
        return Effect.flip(cms.get("a"))
      }, {}, withHeaders(undefined))
      assert.strictEqual(exceeded(error, "maxHeaderBytes").value, 64 * 1024)
      const object = yield* against((raw) => {
        raw.answer = answer
        return cms.get("a")
      }, {}, withHeaders(256 * 1024))
      assert.strictEqual(Option.getOrThrow(object).metadata?.name, "a")
    }))
})

describe("objects nested past maxJsonDepth", () => {
  // before: a CRD's openAPIV3Schema ~2,000 levels deep overflowed the stack in decoding (a defect)
  it.live("a CRD whose schema nests 1,500 levels fails with LimitExceeded; raised, it is read, or fails typed", () =>
    against((raw) =>
      Effect.gen(function*() {
        let levels = 1_500
        raw.answer = (_req, res) => {
          const schema = `{"type":"object","properties":{"a":`.repeat(levels) + `{"type":"string"}` + "}}".repeat(levels)
          res.writeHead(200, { "content-type": "application/json" })
          res.end(
            `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"xs.e.io"},` +
              `"spec":{"group":"e.io","scope":"Namespaced","names":{"plural":"xs","kind":"X"},"versions":[{"name":"v1",` +
              `"served":true,"storage":true,"schema":{"openAPIV3Schema":${schema}}}]}}`
          )
        }
        const crds = Kube.api(CustomResourceDefinitions)
        const raisedTo = (maxJsonDepth: number) => Effect.provide(RequestPolicy.layer({ maxJsonDepth }))
        counts.faults += 3
        const e = exceeded(failureOf(yield* Effect.exit(crds.get("xs.e.io"))), "maxJsonDepth")
        assert.strictEqual(e.value, 1_000)
        assert.match(e.message, /is nested deeper than maxJsonDepth \(1,000 levels\)$/)
        assert.isTrue(Option.isSome(yield* crds.get("xs.e.io").pipe(raisedTo(4_000))))
        // raised past what the stack holds: a ValidationError, never a defect
        levels = 20_000
        const tooDeep = failureOf(yield* Effect.exit(crds.get("xs.e.io").pipe(raisedTo(1_000_000))))
        assert.strictEqual((tooDeep as { readonly _tag: string })._tag, "ValidationError")
      })
    ))
})

describe("Status answers of any shape are read totally", () => {
  const throttled = (details: string): Http.RequestListener => (_req, res) => {
    res.writeHead(429, { "content-type": "application/json" })
    res.end(`{"kind":"Status","apiVersion":"v1","status":"Failure","code":429,"reason":"TooManyRequests",` +
      `"message":"slow down","details":${details}}`)
  }
  for (
    const details of [
      `{"causes":"not an array","retryAfterSeconds":0}`,
      `{"causes":[1,null,{"field":7}],"retryAfterSeconds":"soon"}`,
      `"details"`,
      `{"causes":${"[".repeat(7_500)}${"]".repeat(7_500)}}`
    ]
  ) {
    it.live(`a 429 whose details are ${details.slice(0, 40)}: an ApiError on get, list and the watcher`, () =>
      against((raw) =>
        Effect.gen(function*() {
          raw.answer = throttled(details)
          for (const run of [cms.get("a"), cms.list(), Stream.runDrain(cms.watcher({ backoff: Schedule.recurs(0) }))]) {
            counts.faults++
            const error = failureOf(yield* Effect.exit(run))
            assert.instanceOf(error, ApiError)
            assert.strictEqual((error as ApiError).reason, "TooManyRequests")
            assert.strictEqual((error as ApiError).statusMessage, "slow down")
          }
        }), { throttleRetries: 0 }))
  }
})

describe("the watcher waits, within bounds, and says so", () => {
  // before: 1,941 lists in 10 s for ERROR 410, 2,596 for HTTP 410, 2,038 watches for bookmark-and-close
  const gone = `{"kind":"Status","apiVersion":"v1","status":"Failure","code":410,"reason":"Expired","message":"too old"}`
  const loops: ReadonlyArray<readonly [string, Http.RequestListener, (raw: RawServer) => number]> = [
    ["an ERROR 410 event on every watch", (_req, res) => {
      res.writeHead(200, { "content-type": "application/json" })
      res.end(`{"type":"ERROR","object":${gone}}\n`)
    }, lists],
    ["HTTP 410 on every watch", (_req, res) => {
      res.writeHead(410, { "content-type": "application/json" })
      res.end(gone)
    }, lists],
    ["a watch that sends one bookmark and ends", (_req, res) => {
      res.writeHead(200, { "content-type": "application/json" })
      res.end(
        `{"type":"BOOKMARK","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"resourceVersion":"2"}}}\n`
      )
    }, watches]
  ]
  for (const [name, watch, counted] of loops) {
    it.live(`${name}: re-lists and re-watches back off (requests in 4 s counted)`, () =>
      against((raw) =>
        Effect.gen(function*() {
          raw.answer = watchServer(watch)
          const store = yield* Watcher.reflector(cms, { watchList: false })
          yield* store.ready
          yield* realSleep(4_000)
          const n = counted(raw)
          counts.faults++
          figures.push(`${name}: ${n} requests of the kind that loops in 4 s (${raw.requests.length} in all)`)
          // 800 ms doubling, jittered: about five in 4 s
          assert.isAtMost(n, 10, `${n} requests in 4 s`)
          assert.isAtLeast(n, 2, "it does try again")
        })
      ))
  }

  for (
    const [name, watch] of [
      ["Retry-After: 999999 on the watch", (_req: Http.IncomingMessage, res: Http.ServerResponse) => {
        res.writeHead(429, { "content-type": "application/json", "retry-after": "999999" })
        res.end(`{"kind":"Status","apiVersion":"v1","status":"Failure","code":429,"reason":"TooManyRequests"}`)
      }],
      ["an ERROR event asking for 10^9 seconds", (_req: Http.IncomingMessage, res: Http.ServerResponse) => {
        res.writeHead(200, { "content-type": "application/json" })
        res.end(`{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","status":"Failure","code":429,` +
          `"reason":"TooManyRequests","details":{"retryAfterSeconds":1000000000}}}\n`)
      }]
    ] as const
  ) {
    it.live(`${name}: the wait is capped at maxRetryAfter and the store reports it as stalled`, () =>
      against((raw) =>
        Effect.gen(function*() {
          raw.answer = watchServer(watch)
          const store = yield* Watcher.reflector(cms, { watchList: false })
          yield* store.ready
          let stalled = Option.none<Watcher.Stalled>()
          for (let i = 0; i < 500 && Option.isNone(stalled); i++) {
            yield* realSleep(10)
            stalled = yield* store.stalled
          }
          counts.faults++
          assert.isTrue(Option.isSome(stalled), "the store says the watcher waits")
          const wait = Option.getOrThrow(stalled).until.getTime() - Date.now()
          assert.isAtMost(wait, 1_100, `waits ${wait} ms, maxRetryAfter is 1 s`)
          assert.instanceOf(Option.getOrThrow(stalled).error, ApiError)
          assert.isTrue(Option.isNone(yield* store.failure), "a wait is not a failure")
          const before = watches(raw)
          yield* realSleep(2_500)
          assert.isAtLeast(watches(raw) - before, 1, "it watches again once the capped wait is over")
        }), { maxRetryAfter: Duration.seconds(1) }))
  }
})

describe("a store always learns how its stream ended", () => {
  // before: a defect left `ready` waiting and `failure` None for ever
  it.live("a watcher stream that dies, or ends, ends `ready` and `stopped` of the store it writes", () =>
    Effect.gen(function*() {
      for (
        const [name, stream] of [
          ["a defect", Stream.die(new TypeError("boom"))],
          ["the end", Stream.empty]
        ] as const
      ) {
        const store = yield* Watcher.makeStore<unknown, Kube.Error>()
        yield* Stream.runDrain(stream.pipe(Watcher.reflect(store))).pipe(Effect.exit)
        const ready = yield* Effect.exit(Effect.timeout(store.ready, "1 second"))
        const stopped = yield* Effect.exit(Effect.timeout(store.stopped, "1 second"))
        for (const exit of [ready, stopped]) {
          assert.isTrue(Exit.isFailure(exit) && Cause.hasDies(exit.cause), `${name}: ${String(exit)}`)
        }
      }
    }))
})

describe("one budget of retries per read", () => {
  it.live("Retry-After: 999999 on a GET: 1 + throttleRetries attempts, each wait capped", () =>
    against((raw) =>
      Effect.gen(function*() {
        raw.answer = (_req, res) => {
          res.writeHead(429, { "content-type": "application/json", "retry-after": "999999" })
          res.end(`{"kind":"Status","apiVersion":"v1","status":"Failure","code":429,"reason":"TooManyRequests"}`)
        }
        const start = Date.now()
        const error = failureOf(yield* Effect.exit(cms.get("a")))
        counts.faults++
        assert.instanceOf(error, ApiError)
        // 1 + the default throttleRetries (10)
        assert.strictEqual(raw.requests.length, 11)
        // ten waits of 100 ms (the cap) and the requests, on a loaded machine; uncapped it would be days
        assert.isBelow(Date.now() - start, 6_000)
      }), { maxRetryAfter: Duration.millis(100) }))

  it.live("429s and 503s in turn add up to one budget (1 + 3 + 3 attempts), not 4 × 4", () =>
    against((raw) =>
      Effect.gen(function*() {
        raw.answer = (_req, res) => {
          const code = raw.requests.length % 2 === 1 ? 429 : 503
          res.writeHead(code, { "content-type": "application/json", "retry-after": "0" })
          res.end(`{"kind":"Status","apiVersion":"v1","status":"Failure","code":${code}}`)
        }
        failureOf(yield* Effect.exit(cms.get("a")))
        counts.faults++
        assert.isAtMost(raw.requests.length, 7)
      }), { readRetries: Schedule.recurs(3), throttleRetries: 3, maxRetryAfter: Duration.millis(10) }))
})

describe("error text never quotes what a server or a query holds", () => {
  it.live("a proxy echoing the request (token included) into a 502: the ApiError names type and length", () =>
    against((raw) =>
      Effect.gen(function*() {
        raw.answer = (req, res) => {
          const echo = `<html>bad gateway: ${JSON.stringify(req.headers)} ${req.url}</html>`
          res.writeHead(502, { "content-type": "text/html" })
          res.end(echo)
        }
        for (
          const run of [
            cms.get("a"),
            Kube.request({ method: "GET", path: "/api/v1/namespaces/default/configmaps", query: { secret: "q-s3cr3t" } })
          ]
        ) {
          counts.faults++
          const error = failureOf(yield* Effect.exit(run))
          assert.instanceOf(error, ApiError)
          for (const text of renderings(error)) {
            assert.notInclude(text, servedToken)
            assert.notInclude(text, "q-s3cr3t")
          }
          assert.match((error as ApiError).statusMessage, /a text\/html body of [\d,]+ bytes/)
          // the body is there for a person who looks on purpose, the token the client sent taken out of it
          assert.include((error as ApiError).body ?? "", "bad gateway")
          assert.notInclude((error as ApiError).body ?? "", servedToken)
        }
      }), { readRetries: Schedule.recurs(0) }))
})

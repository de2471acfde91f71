/**
 * Malformed answers, from a real loopback `node:http` server that sends whatever each
 * case says (through `KubeConfig.layerFrom` and the Node transport): bodies that are
 * not JSON, JSON cut short, a Status or another kind where an object was expected,
 * lists without items, watch streams with broken lines. Every one ends in a tagged
 * error that names the request (`answer to GET /api/v1/...`), is not retried (the
 * server answered), and never is a defect or a hang.
 */
import { afterAll, assert, describe, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import type * as Http from "node:http"
import { ApiError } from "../../packages/effect-kube/src/Errors.js"
import * as Kube from "../../packages/effect-kube/src/Kube.js"
import * as Patch from "../../packages/effect-kube/src/Patch.js"
import * as RequestPolicy from "../../packages/effect-kube/src/RequestPolicy.js"
import { ConfigMaps } from "../../packages/effect-kube/src/resources/index.js"
import { makeCounts, type RawServer, rawLayer, rawServer, report } from "../util/reliability.js"

const counts = makeCounts()
afterAll(() => report("malformed", counts))

const cms = Kube.api(ConfigMaps, { namespace: "default" })
const collection = "/api/v1/namespaces/default/configmaps"

/** A complete HTTP answer: the body is all there, whatever it holds. */
const answer =
  (status: number, body: string, contentType = "application/json"): Http.RequestListener => (_req, res) => {
    res.writeHead(status, { "content-type": contentType, "content-length": Buffer.byteLength(body) })
    res.end(body)
  }

/** A streamed (chunked) 200 answer of watch lines. */
const lines = (text: string): Http.RequestListener => (_req, res) => {
  res.writeHead(200, { "content-type": "application/json" })
  res.end(text)
}

const deep = "[".repeat(50_000) + "]".repeat(50_000)

/** Answers that cannot be an object of the kind asked for. */
const notAnObject: ReadonlyArray<readonly [string, Http.RequestListener]> = [
  ["an HTML page", answer(200, "<html><body>502 Bad Gateway</body></html>", "text/html")],
  ["JSON cut short", answer(200, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namesp`)],
  ["an empty body", answer(200, "")],
  ["JSON nested 50,000 deep", answer(200, deep)],
  ["a Status", answer(200, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"boom","code":500}`)],
  ["a Pod", answer(200, `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a"}}`)],
  ["null", answer(200, "null")],
  ["a number", answer(200, "42")],
  ["a string", answer(200, `"ConfigMap"`)],
  ["an array", answer(200, `[{"kind":"ConfigMap","metadata":{"name":"a"}}]`)],
  ["metadata that is a string", answer(200, `{"apiVersion":"v1","kind":"ConfigMap","metadata":"oops"}`)],
  ["a name that is a number", answer(200, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":5}}`)],
  // (an array where `data` is a map is delivered, with a MismatchedObject warning: a newer server's shape)
  [
    "data with a number value",
    answer(200, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{"a":1}}`)
  ],
  ["a kind that is an object", answer(200, `{"apiVersion":"v1","kind":{"k":"ConfigMap"},"metadata":{"name":"a"}}`)]
]

/** Answers that cannot be a list of the kind asked for. */
const notAList: ReadonlyArray<readonly [string, Http.RequestListener]> = [
  ...notAnObject.filter(([name]) => !["a name that is a number", "data with a number value"].includes(name)),
  ["a list without items", answer(200, `{"kind":"ConfigMapList","metadata":{"resourceVersion":"1"}}`)],
  ["items that are an object", answer(200, `{"kind":"ConfigMapList","items":{"a":{}},"metadata":{}}`)],
  ["a null item", answer(200, `{"kind":"ConfigMapList","items":[null],"metadata":{}}`)],
  ["an item of another kind", answer(200, `{"kind":"ConfigMapList","items":[{"kind":"Pod"}],"metadata":{}}`)],
  ["an item with bad metadata", answer(200, `{"kind":"ConfigMapList","items":[{"metadata":7}],"metadata":{}}`)],
  ["a Status item", answer(200, `{"kind":"ConfigMapList","items":[{"kind":"Status","code":500}],"metadata":{}}`)]
]

interface Operation {
  readonly name: string
  readonly method: string
  readonly path: string
  readonly run: Effect.Effect<unknown, Kube.Error, Kube.Requirements>
}

const objectOperations: ReadonlyArray<Operation> = [
  { name: "get", method: "GET", path: `${collection}/a`, run: cms.get("a") },
  { name: "create", method: "POST", path: collection, run: cms.create({ metadata: { name: "a" } }) },
  { name: "replace", method: "PUT", path: `${collection}/a`, run: cms.replace("a", { metadata: { name: "a" } }) },
  { name: "patch", method: "PATCH", path: `${collection}/a`, run: cms.patch("a", Patch.merge({ data: { k: "v" } })) },
  {
    name: "apply",
    method: "PATCH",
    path: `${collection}/a`,
    run: cms.apply({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a" } }, { fieldManager: "malformed" })
  }
]

const listOperations: ReadonlyArray<Operation> = [
  { name: "list", method: "GET", path: collection, run: cms.list() },
  { name: "listStream", method: "GET", path: collection, run: Stream.runCollect(cms.listStream()) },
  {
    name: "watcher",
    method: "GET",
    path: collection,
    run: Stream.runCollect(Stream.take(cms.watcher({ watchList: false, backoff: Schedule.recurs(0) }), 1))
  }
]

type Outcome<E> = { readonly _tag: "Success" } | { readonly _tag: "Failure"; readonly error: E }

/** An error's tag, with the reason of an HttpClientError (`HttpClientError/DecodeError`). */
const tagOf = (error: { readonly _tag: string }): string =>
  error._tag === "HttpClientError"
    ? `HttpClientError/${(error as unknown as { readonly reason: { readonly _tag: string } }).reason._tag}`
    : error._tag

/** How an effect ended: a success, a tagged failure, or something that must never happen. */
const outcome = <A, E extends { readonly _tag: string }, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.map(Effect.exit(effect), (exit): Outcome<E> => {
    if (Exit.isSuccess(exit)) return { _tag: "Success" }
    const failure = Cause.findErrorOption(exit.cause)
    if (Option.isSome(failure) && !Cause.hasDies(exit.cause)) return { _tag: "Failure", error: failure.value }
    throw new Error(`not a tagged failure: ${Cause.pretty(exit.cause)}`)
  })

const policy = RequestPolicy.layer({ timeout: "5 seconds", readRetries: Schedule.recurs(3) })

/** Forgets the requests seen so far, counting them. */
const clear = (raw: RawServer) => {
  counts.requests += raw.requests.length
  raw.requests.length = 0
}

/** A raw server for the test and the layer for it. */
const withRaw = <A, E>(program: (raw: RawServer) => Effect.Effect<A, E, Kube.Requirements>) =>
  Effect.scoped(Effect.gen(function*() {
    const raw = yield* rawServer
    const result = yield* program(raw).pipe(Effect.provide(Layer.merge(rawLayer(raw.url), policy)))
    counts.requests += raw.requests.length
    return result
  }))

/** Sends each case through the operation and checks the ValidationError that names the request. */
const expectValidationErrors = (operation: Operation, cases: ReadonlyArray<readonly [string, Http.RequestListener]>) =>
  withRaw((raw) =>
    Effect.gen(function*() {
      for (const [name, listener] of cases) {
        clear(raw)
        raw.answer = listener
        counts.faults++
        const result = yield* outcome(operation.run)
        const where = `${operation.name} answered with ${name}`
        assert.strictEqual(result._tag, "Failure", where)
        if (result._tag !== "Failure") continue
        const got = `${where}: ${result.error._tag} ${result.error.message}`
        assert.strictEqual(result.error._tag, "ValidationError", got)
        assert.include(result.error.message, `answer to ${operation.method} ${operation.path}`, where)
        assert.strictEqual(raw.requests.length, 1, `${where}: not sent again, the server did answer`)
      }
    })
  )

describe("an object where the answer is not one: ValidationError naming the request, sent once", () => {
  for (const operation of objectOperations) {
    it.live(operation.name, () => expectValidationErrors(operation, notAnObject))
  }
  for (const operation of listOperations) {
    it.live(operation.name, () => expectValidationErrors(operation, notAList))
  }

  it.live("delete and deleteAll: a body that is not JSON, and a deleteAll answer that is not a list", () =>
    Effect.gen(function*() {
      const nonJson = notAnObject.slice(0, 3)
      yield* expectValidationErrors(
        { name: "delete", method: "DELETE", path: `${collection}/a`, run: cms.delete("a") },
        nonJson
      )
      yield* expectValidationErrors(
        {
          name: "deleteAll",
          method: "DELETE",
          path: `${collection}?labelSelector=app%3Dx`,
          run: cms.deleteAll({ labelSelector: "app=x" })
        },
        [...nonJson, ["a list without items", answer(200, `{"kind":"ConfigMapList","metadata":{}}`)]]
      )
    }))
})

describe("broken watch streams", () => {
  const valid = `{"type":"ADDED","object":{"kind":"ConfigMap","metadata":{"name":"ok","resourceVersion":"5"}}}\n`
  const cases: ReadonlyArray<readonly [string, string, string]> = [
    ["a line that is not JSON", "this is not json\n", "ValidationError"],
    ["an event without an object", `{"type":"ADDED"}\n`, "ValidationError"],
    ["an event whose object is a string", `{"type":"MODIFIED","object":"x"}\n`, "ValidationError"],
    ["an event of an unknown type", `{"type":"RENAMED","object":{}}\n`, "ValidationError"],
    ["an object of another kind", `{"type":"ADDED","object":{"kind":"Pod"}}\n`, "ValidationError"],
    ["an object with bad metadata", `{"type":"ADDED","object":{"metadata":[]}}\n`, "ValidationError"],
    ["a line that is an array", "[1,2,3]\n", "ValidationError"],
    ["a line that is null", "null\n", "ValidationError"],
    ["JSON nested 50,000 deep", `${deep}\n`, "ValidationError"],
    [
      "an event cut short at the end",
      `{"type":"ADDED","object":{"kind":"ConfigMap","meta`,
      "HttpClientError/DecodeError"
    ],
    ["an ERROR event", `{"type":"ERROR","object":{"kind":"Status","code":500,"message":"etcd is down"}}\n`, "ApiError"]
  ]
  it.live("each ends the watch with a tagged error after the valid events before it", () =>
    withRaw((raw) =>
      Effect.gen(function*() {
        for (const [name, line, tag] of cases) {
          clear(raw)
          raw.answer = lines(valid + line + (tag === "HttpClientError/DecodeError" ? "" : valid))
          counts.faults++
          const seen: Array<string> = []
          const result = yield* outcome(
            cms.watch().pipe(Stream.runForEach((e) => Effect.sync(() => void seen.push(e.type))))
          )
          assert.strictEqual(result._tag, "Failure", name)
          if (result._tag !== "Failure") continue
          assert.strictEqual(tagOf(result.error), tag, `${name}: ${result.error.message}`)
          assert.deepStrictEqual(seen, ["ADDED"], `${name}: the event before it arrived, none after`)
          if (tag === "ValidationError") assert.include(result.error.message, `answer to GET ${collection}?watch=true`)
          counts.events += seen.length
        }
      })
    ))

  it.live("the watcher fails with the ValidationError of a broken event (retrying cannot fix it)", () =>
    withRaw((raw) =>
      Effect.gen(function*() {
        raw.answer = (req, res) =>
          req.url?.includes("watch=true")
            ? lines(valid + "garbage\n")(req, res)
            : answer(200, `{"kind":"ConfigMapList","items":[],"metadata":{"resourceVersion":"4"}}`)(req, res)
        counts.faults++
        const tags: Array<string> = []
        const result = yield* outcome(
          cms.watcher({ watchList: false }).pipe(Stream.runForEach((e) => Effect.sync(() => void tags.push(e._tag))))
        )
        assert.strictEqual(result._tag, "Failure")
        if (result._tag === "Failure") assert.strictEqual(result.error._tag, "ValidationError")
        assert.deepStrictEqual(tags, ["Init", "InitDone", "Apply"])
        assert.deepStrictEqual(raw.requests, [
          `GET ${collection}?limit=500`,
          `GET ${collection}?watch=true&resourceVersion=4&allowWatchBookmarks=true&timeoutSeconds=290`
        ])
      })
    ))
})

describe("odd failure answers are ApiErrors", () => {
  it.live("an HTML 500, a plain-text 409, a JSON 400 that is not a Status, an unparseable Retry-After", () =>
    withRaw((raw) =>
      Effect.gen(function*() {
        raw.answer = answer(500, "<html><h1>Internal Server Error</h1></html>", "text/html")
        counts.faults++
        const html = yield* outcome(cms.create({ metadata: { name: "a" } }))
        assert.strictEqual(html._tag, "Failure")
        if (html._tag === "Failure") {
          assert.instanceOf(html.error, ApiError)
          const e = html.error as ApiError
          assert.strictEqual(e.code, 500)
          assert.strictEqual(e.reason, "InternalError")
          // the body is named by its type and length, never quoted (a proxy may echo the token); it is kept unprinted
          assert.include(e.message, "server error (a text/html body of 43 bytes)")
          assert.notInclude(e.message, "Internal Server Error")
          assert.include(e.body, "Internal Server Error")
          assert.strictEqual(e.status, undefined)
        }

        raw.answer = answer(409, "conflict: try later", "text/plain")
        counts.faults++
        const text = yield* outcome(cms.replace("a", { metadata: { name: "a" } }))
        assert.isTrue(text._tag === "Failure" && ApiError.isConflict(text.error))

        raw.answer = answer(400, `{"error":"bad","kind":"NotAStatus"}`)
        counts.faults++
        const json = yield* outcome(cms.patch("a", Patch.merge({})))
        assert.isTrue(json._tag === "Failure" && json.error._tag === "ApiError" && json.error.reason === "BadRequest")

        clear(raw)
        raw.answer = (_req, res) => {
          res.writeHead(429, { "retry-after": "whenever you like", "content-type": "text/plain" })
          res.end("slow down")
        }
        counts.faults++
        const throttled = yield* outcome(
          cms.get("a").pipe(Effect.provide(RequestPolicy.layer({ throttleRetries: 0 })))
        )
        assert.isTrue(throttled._tag === "Failure" && ApiError.isTooManyRequests(throttled.error))
        if (throttled._tag === "Failure") assert.strictEqual((throttled.error as ApiError).retryAfter, undefined)
        assert.strictEqual(raw.requests.length, 1)

        raw.answer = answer(404, "<html>no such thing</html>", "text/html")
        counts.faults++
        const missing = yield* cms.get("a")
        assert.isTrue(Option.isNone(missing), "a 404 of any shape is absence")
      })
    ))
})

describe("never a hang", () => {
  it.live("headers and half a body, then silence: the timeout ends it, tagged", () =>
    withRaw((raw) =>
      Effect.gen(function*() {
        raw.answer = (_req, res) => {
          res.writeHead(200, { "content-type": "application/json", "content-length": 1_000 })
          res.write(`{"apiVersion":"v1","kind":"ConfigMap",`)
        }
        counts.faults++
        const fast = RequestPolicy.layer({ timeout: "300 millis", readRetries: Schedule.recurs(0) })
        const operations: ReadonlyArray<Effect.Effect<unknown, Kube.Error, Kube.Requirements>> = [
          cms.get("a"),
          cms.create({ metadata: { name: "a" } }),
          cms.list()
        ]
        for (const operation of operations) {
          const result = yield* outcome(Effect.provide(operation, fast))
          assert.strictEqual(result._tag, "Failure")
          if (result._tag === "Failure") {
            assert.strictEqual(result.error._tag, "RequestTimeout")
            assert.include(result.error.message, "request timeout")
          }
        }
        assert.strictEqual(raw.requests.length, 3)
      })
    ))

  it.live("an answer cut before its announced length is a transport error; a GET is sent again, a POST is not", () =>
    withRaw((raw) =>
      Effect.gen(function*() {
        raw.answer = (req, res) => {
          res.writeHead(200, { "content-type": "application/json", "content-length": 500 })
          res.write(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}`)
          setImmediate(() => req.socket.destroy())
        }
        counts.faults += 2
        const get = yield* outcome(cms.get("a"))
        assert.isTrue(get._tag === "Failure" && tagOf(get.error) === "HttpClientError/DecodeError")
        assert.strictEqual(raw.requests.length, 4, "the first try and three retries")
        clear(raw)
        const post = yield* outcome(cms.create({ metadata: { name: "a" } }))
        assert.isTrue(post._tag === "Failure" && tagOf(post.error) === "HttpClientError/DecodeError")
        assert.strictEqual(raw.requests.length, 1)
      })
    ))
})

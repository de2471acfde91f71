/**
 * Connections reset in the middle of an answer, against the fake cluster served on
 * loopback HTTPS and the Node transport: reads are sent again and return exactly what
 * an undisturbed read returns; one-shot mutations fail with a tagged transport error
 * and are never sent twice (the server acted); a raw watch and a followed log end with
 * a tagged error after delivering only whole events and lines; the watcher resumes
 * from its last resourceVersion and delivers every change exactly once.
 */
import { afterAll, assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import * as Kube from "../../packages/effect-kube/src/Kube.js"
import * as Manifests from "../../packages/effect-kube/src/Manifests.js"
import * as Patch from "../../packages/effect-kube/src/Patch.js"
import * as RequestPolicy from "../../packages/effect-kube/src/RequestPolicy.js"
import { type ConfigMap, ConfigMaps, Pods, Secrets } from "../../packages/effect-kube/src/resources/index.js"
import { type FakeCluster } from "@effect-kube/testing"
import * as Watcher from "../../packages/effect-kube/src/Watcher.js"
import {
  eventually,
  failureOf,
  makeCounts,
  nodeLayer,
  realSleep,
  renderings,
  report,
  servedToken,
  serveTls
} from "../util/reliability.js"

const counts = makeCounts()
afterAll(() => report("resets", counts))

const cms = Kube.api(ConfigMaps, { namespace: "default" })
const pods = Kube.api(Pods, { namespace: "default" })

/** Read retries without waiting: the faults here are one-off, so the delay proves nothing. */
const quickRetries = RequestPolicy.layer({ readRetries: Schedule.recurs(3) })

const isWatch: FakeCluster.RequestMatch = (method, _path, query) => method === "GET" && query["watch"] === "true"
const isList: FakeCluster.RequestMatch = (method, path, query) =>
  method === "GET" && path.endsWith("/configmaps") && query["watch"] !== "true"
const isFollow: FakeCluster.RequestMatch = (_method, path, query) => path.endsWith("/log") && query["follow"] === "true"

/** A ConfigMap with a few KB of data, so that cuts land inside the body. */
const configMap = (name: string, size = 4_000, labels: Record<string, string> = { app: "rel" }) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace: "default", labels },
  data: { blob: "x".repeat(size), name }
})

/** Clears the fake's request log, counting what it held. */
const clear = (control: FakeCluster.Control) => {
  counts.requests += control.requests().length
  control.reset()
}

const requestsTo = (control: FakeCluster.Control, method: string, path: string) =>
  control.requests().filter((r) => r.method === method && r.path === path).length

/** Runs a program against a freshly served fake with a NodeKube layer over its kubeconfig. */
const withServed = <A, E>(
  program: (served: FakeCluster.Served) => Effect.Effect<A, E, Kube.Requirements>,
  policy: Layer.Layer<never> = quickRetries
) =>
  Effect.scoped(Effect.gen(function*() {
    const served = yield* serveTls()
    const result = yield* program(served).pipe(Effect.provide(Layer.merge(nodeLayer(served), policy)))
    counts.requests += served.control.requests().length
    return result
  }))

describe("reads recover from a reset in the middle of the answer", () => {
  it.live("get returns the same object after a cut at any byte of the body (and before the answer)", () =>
    withServed((served) =>
      Effect.gen(function*() {
        const control = served.control
        control.seed([configMap("big")])
        const path = "/api/v1/namespaces/default/configmaps/big"
        const expected = Option.getOrThrow(yield* cms.get("big"))
        for (const afterBytes of [undefined, 0, 1, 17, 100, 1_000, 2_500, 4_000]) {
          clear(control)
          control.resetNext({ afterBytes })
          counts.faults++
          const got = yield* cms.get("big")
          assert.deepStrictEqual(Option.getOrThrow(got), expected, `cut after ${afterBytes} bytes`)
          assert.strictEqual(requestsTo(control, "GET", path), 2, `cut after ${afterBytes}: sent once more, no more`)
        }
      })
    ))

  it.live("list returns every item exactly once after cuts, and so does a paged listStream", () =>
    withServed((served) =>
      Effect.gen(function*() {
        const control = served.control
        control.seed(Array.from({ length: 30 }, (_, i) => configMap(`cm-${String(i).padStart(2, "0")}`, 600)))
        const names = (items: ReadonlyArray<ConfigMap>) => items.map((c) => c.metadata?.name)
        const expected = names((yield* cms.list()).items)
        assert.strictEqual(expected.length, 30)
        for (const afterBytes of [0, 5, 4_096, 20_000]) {
          control.resetNext({ afterBytes, match: isList })
          counts.faults++
          assert.deepStrictEqual(names((yield* cms.list()).items), expected)
        }
        // cuts on two of the later pages of a paged read (each page after a cut is sent again)
        clear(control)
        let page = 0
        control.resetNext({
          afterBytes: 1_500,
          count: 2,
          match: (method, path, query) =>
            isList(method, path, query) && query["continue"] !== undefined && ++page % 2 === 1
        })
        counts.faults += 2
        const streamed = yield* cms.listStream({ pageSize: 7 }).pipe(Stream.runCollect)
        assert.deepStrictEqual(names([...streamed]), expected)
        const pageRequests = control.requests().filter((r) => r.path.endsWith("/configmaps")).length
        assert.strictEqual(pageRequests, 5 + 2, "five pages, two of them sent twice")
      })
    ))

  it.live("with the default policy (jittered delays) a GET survives three resets in a row", () =>
    withServed(
      (served) =>
        Effect.gen(function*() {
          const control = served.control
          control.seed([configMap("big")])
          control.resetNext({ afterBytes: 300, count: 3 })
          counts.faults += 3
          const got = yield* cms.get("big")
          assert.strictEqual(Option.getOrThrow(got).data?.["name"], "big")
          assert.strictEqual(requestsTo(control, "GET", "/api/v1/namespaces/default/configmaps/big"), 4)
          // a fourth reset is one too many: the transport error surfaces, tagged
          clear(control)
          control.resetNext({ afterBytes: 300, count: 4 })
          counts.faults += 4
          const error = yield* failureOf(cms.get("big"))
          assert.strictEqual(error._tag, "HttpClientError")
          assert.strictEqual(requestsTo(control, "GET", "/api/v1/namespaces/default/configmaps/big"), 4)
        }),
      RequestPolicy.layer({})
    ))

  it.live("logs (not followed) returns the whole log after a cut", () =>
    withServed((served) =>
      Effect.gen(function*() {
        const control = served.control
        control.seed([podObject("logger")])
        const lines = logLines(500)
        control.appendLog("default", "logger", lines)
        control.resetNext({ afterBytes: 2_000, match: (_m, path) => path.endsWith("/log") })
        counts.faults++
        const text = yield* pods.logs("logger")
        assert.strictEqual(text, `${lines.join("\n")}\n`)
        assert.strictEqual(requestsTo(control, "GET", "/api/v1/namespaces/default/pods/logger/log"), 2)
      })
    ))
})

const podObject = (name: string) => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name, namespace: "default" },
  spec: { containers: [{ name: "main", image: "busybox" }] },
  status: { phase: "Running" }
})

/** Lines of varying length, some with multi-byte characters, so that cuts split characters too. */
const logLines = (n: number) =>
  Array.from({ length: n }, (_, i) => `line ${i} ${"é✓".repeat(i % 7)}${"-".repeat((i * 37) % 90)}`)

describe("mutations fail with a tagged error after a reset, and are sent once", () => {
  type Mutation = {
    readonly name: string
    readonly method: string
    readonly path: string
    /** Sets the scene (the object to change exists, except for create). */
    readonly setup: (control: FakeCluster.Control) => void
    readonly run: Effect.Effect<unknown, Kube.Error, Kube.Requirements>
    /** The server acted: what a later read shows. */
    readonly acted: (control: FakeCluster.Control) => boolean
  }
  const ref = (name: string) => ({ apiVersion: "v1", kind: "ConfigMap", namespace: "default", name })
  const collection = "/api/v1/namespaces/default/configmaps"
  const dataOf = (c: FakeCluster.Control) =>
    (c.get(ref("target")) as { data?: Record<string, string> } | undefined)?.data
  const mutations: ReadonlyArray<Mutation> = [
    {
      name: "create",
      method: "POST",
      path: collection,
      setup: () => {},
      run: cms.create({ metadata: { name: "target" }, data: { v: "created".repeat(300) } }),
      acted: (c) => c.get(ref("target"))?.data !== undefined
    },
    {
      name: "replace",
      method: "PUT",
      path: `${collection}/target`,
      setup: (c) => void c.seed([configMap("target")]),
      run: cms.replace("target", { metadata: { name: "target" }, data: { v: "replaced".repeat(300) } }),
      acted: (c) => dataOf(c)?.["v"]?.startsWith("replaced") === true
    },
    {
      name: "patch",
      method: "PATCH",
      path: `${collection}/target`,
      setup: (c) => void c.seed([configMap("target")]),
      run: cms.patch("target", Patch.merge({ data: { v: "patched" } })),
      acted: (c) => dataOf(c)?.["v"] === "patched"
    },
    {
      name: "apply",
      method: "PATCH",
      path: `${collection}/target`,
      setup: () => {},
      run: cms.apply({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "target" }, data: { v: "applied" } }, {
        fieldManager: "rel"
      }),
      acted: (c) => dataOf(c)?.["v"] === "applied"
    },
    {
      name: "delete",
      method: "DELETE",
      path: `${collection}/target`,
      setup: (c) => void c.seed([configMap("target")]),
      run: cms.delete("target"),
      acted: (c) => c.get(ref("target")) === undefined
    },
    {
      name: "deleteAll",
      method: "DELETE",
      path: collection,
      setup: (c) => void c.seed([configMap("target"), configMap("target-2")]),
      run: cms.deleteAll({ labelSelector: "app=rel" }),
      acted: (c) => c.list("v1", "ConfigMap", "default").length === 0
    }
  ]

  for (const mutation of mutations) {
    it.live(`${mutation.name}: before the answer and part way through it`, () =>
      withServed((served) =>
        Effect.gen(function*() {
          const control = served.control
          for (const afterBytes of [undefined, 0, 1, 40]) {
            for (const o of control.list("v1", "ConfigMap", "default")) control.remove(ref(o.metadata.name as string))
            mutation.setup(control)
            clear(control)
            control.resetNext({ afterBytes, match: (method) => method === mutation.method })
            counts.faults++
            const where = `${mutation.name}, cut after ${afterBytes} bytes`
            const error = yield* failureOf(mutation.run)
            assert.strictEqual(error._tag, "HttpClientError", where)
            assert.strictEqual(requestsTo(control, mutation.method, mutation.path), 1, `${where}: sent exactly once`)
            assert.strictEqual(control.requests().length, 1, `${where}: nothing else was sent`)
            assert.isTrue(mutation.acted(control), `${where}: the server acted`)
          }
        })
      ))
  }
})

describe("transport errors show neither the token nor the body", () => {
  it.live("resets, timeouts and cut streams: no rendering of the error holds the token or Secret data", () =>
    withServed(
      (served) =>
        Effect.gen(function*() {
          const control = served.control
          const secretData = Buffer.from("s3cr3t-password-value").toString("base64")
          const secrets = Kube.api(Secrets, { namespace: "default" })
          control.seed([podObject("p"), configMap("big")])
          control.appendLog("default", "p", logLines(200))
          const errors: Array<unknown> = []
          const collect = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
            Effect.flatMap(failureOf(effect), (error) => Effect.sync(() => void errors.push(error)))
          for (const afterBytes of [undefined, 10]) {
            control.resetNext({ afterBytes, match: (m) => m === "POST" })
            yield* collect(secrets.create({ metadata: { name: `s-${afterBytes}` }, data: { password: secretData } }))
            control.resetNext({ afterBytes, count: 4, match: (m) => m === "GET" })
            yield* collect(cms.get("big"))
          }
          control.resetNext({ afterBytes: 100, match: isWatch })
          yield* collect(Stream.runDrain(cms.watch({ resourceVersion: "1" })))
          control.resetNext({ afterBytes: 100, match: isFollow })
          yield* collect(Stream.runDrain(pods.logStream("p")))
          control.stallNext({ match: (m) => m === "PUT" })
          yield* collect(
            secrets.replace("s-undefined", { metadata: { name: "s-undefined" }, data: { password: secretData } }).pipe(
              Effect.provide(RequestPolicy.layer({ timeout: "200 millis" }))
            )
          )
          // a set applied with Manifests: the reset apply is not sent again, and ApplyFailed shows nothing secret
          const set = [
            { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "first" }, data: { a: "1" } },
            { apiVersion: "v1", kind: "Secret", metadata: { name: "second" }, data: { password: secretData } },
            { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "third" } }
          ]
          clear(control)
          control.resetNext({ afterBytes: 5, match: (m, path) => m === "PATCH" && path.endsWith("/secrets/second") })
          const applyFailed = yield* failureOf(Manifests.apply(set, { namespace: "default" }))
          assert.strictEqual(applyFailed._tag, "ApplyFailed")
          if (applyFailed._tag === "ApplyFailed") {
            assert.deepStrictEqual(applyFailed.applied.map((r) => r.name), ["first"])
            assert.strictEqual(applyFailed.failed.ref.name, "second")
            assert.strictEqual(applyFailed.failed.error._tag, "HttpClientError")
          }
          const patches = control.requests().filter((r) => r.method === "PATCH").length
          assert.strictEqual(patches, 2, "first and second, once each")
          assert.isDefined(control.get({ apiVersion: "v1", kind: "Secret", name: "second" }), "the server acted")
          errors.push(applyFailed)
          counts.faults += 8
          assert.strictEqual(errors.length, 8)
          for (const error of errors) {
            // the stalled PUT ran past its timeout: a RequestTimeout of its own, not a transport error
            assert.oneOf((error as { _tag: string })._tag, ["HttpClientError", "ApplyFailed", "RequestTimeout"])
            for (const text of renderings(error)) {
              assert.notInclude(text, servedToken, "the bearer token")
              assert.notInclude(text, secretData, "the Secret's data")
            }
          }
        })
    ))
})

describe("streams under resets", () => {
  it.live("a raw watch delivers exactly the events before the cut", () =>
    withServed((served) =>
      Effect.gen(function*() {
        const control = served.control
        const start = control.resourceVersion()
        const written: Array<string> = []
        for (let i = 0; i < 40; i++) {
          const [object] = control.seed([configMap(`p-${i}`, 200, { app: "p" })])
          written.push(object!.metadata.resourceVersion as string)
        }
        for (const afterBytes of [1, 250, 3_000, 9_999]) {
          control.resetNext({ afterBytes, match: isWatch })
          counts.faults++
          const delivered: Array<string> = []
          const result = yield* cms.watch({ resourceVersion: start, labelSelector: "app=p" }).pipe(
            Stream.runForEach((event) =>
              Effect.sync(() => {
                if (event.type !== "BOOKMARK") delivered.push(event.object.metadata?.resourceVersion as string)
              })
            ),
            Effect.result
          )
          assert.strictEqual(result._tag, "Failure", `cut after ${afterBytes}: the watch fails`)
          if (result._tag === "Failure") assert.strictEqual(result.failure._tag, "HttpClientError")
          assert.isBelow(delivered.length, written.length, `cut after ${afterBytes}: not everything arrived`)
          assert.deepStrictEqual(delivered, written.slice(0, delivered.length), "a prefix, in order, none twice")
          counts.events += delivered.length
        }
      })
    ))

  it.live("a followed log ends with a tagged error after whole lines only: exactly those before the cut", () =>
    withServed((served) =>
      Effect.gen(function*() {
        const control = served.control
        control.seed([podObject("follow")])
        const lines = logLines(2_000)
        control.appendLog("default", "follow", lines)
        const body = Buffer.from(`${lines.join("\n")}\n`)
        for (const afterBytes of [0, 1, 333, 4_096, 50_001]) {
          control.resetNext({ afterBytes, match: isFollow })
          counts.faults++
          const delivered: Array<string> = []
          const result = yield* pods.logStream("follow").pipe(
            Stream.runForEach((line) => Effect.sync(() => void delivered.push(line))),
            Effect.result
          )
          assert.strictEqual(result._tag, "Failure", `cut after ${afterBytes}: the follow fails`)
          if (result._tag === "Failure") assert.strictEqual(result.failure._tag, "HttpClientError")
          const whole = body.subarray(0, afterBytes).toString("utf8").split("\n").length - 1
          assert.strictEqual(delivered.length, whole, `cut after ${afterBytes}: every whole line, no partial one`)
          assert.deepStrictEqual(delivered, lines.slice(0, whole))
          counts.events += delivered.length
        }
        assert.isTrue(yield* eventually(() => control.openLogStreams() === 0), "no follower left on the server")
      })
    ))

  it.live("the watcher resumes after resets at any byte and delivers every change exactly once", () =>
    withServed((served) =>
      Effect.gen(function*() {
        const control = served.control
        control.seed(Array.from({ length: 20 }, (_, i) => configMap(`cm-${i}`, 300)))
        // the initial list is cut too: it is a read, sent again
        control.resetNext({ afterBytes: 2_000, match: isList })
        const cuts = [1, 64, 333, 700, 1_024, 1_500, 2_900, 4_096, 5_000, 12_345]
        for (const afterBytes of cuts) control.resetNext({ afterBytes, match: isWatch })
        counts.faults += cuts.length + 1

        const events: Array<Watcher.Event<ConfigMap>> = []
        const store = yield* Watcher.makeStore<ConfigMap, Kube.Error>({ namespace: "default" })
        const fiber = yield* cms.watcher({ watchList: false, labelSelector: "app=rel", backoff: Schedule.spaced("5 millis") }).pipe(
          Watcher.reflect(store),
          Stream.runForEach((event) => Effect.sync(() => void events.push(event))),
          Effect.forkChild
        )
        yield* store.ready

        // 300 changes: updates, deletes and creates, each with the resourceVersion it made
        const expected: Array<string> = []
        const live = new Set(Array.from({ length: 20 }, (_, i) => `cm-${i}`))
        for (let i = 0; i < 300; i++) {
          const name = `cm-${(i * 7) % 26}`
          if (!live.has(name)) {
            const [object] = control.seed([configMap(name, 300)])
            live.add(name)
            expected.push(`Apply ${name} ${object!.metadata.resourceVersion as string}`)
          } else if (i % 5 === 4) {
            control.remove({ apiVersion: "v1", kind: "ConfigMap", namespace: "default", name })
            live.delete(name)
            expected.push(`Delete ${name} ${control.resourceVersion()}`)
          } else {
            const object = control.update(
              { apiVersion: "v1", kind: "ConfigMap", namespace: "default", name },
              { data: { step: String(i) } }
            )
            expected.push(`Apply ${name} ${object.metadata.resourceVersion as string}`)
          }
          if (i % 10 === 0) yield* realSleep(1)
        }

        const changes = () =>
          events.filter((e) => e._tag === "Apply" || e._tag === "Delete").map((e) =>
            `${e._tag} ${(e as { object: ConfigMap }).object.metadata?.name} ${
              (e as { object: ConfigMap }).object.metadata?.resourceVersion
            }`
          )
        assert.isTrue(yield* eventually(() => changes().length >= expected.length, 15_000), "every change arrives")
        yield* realSleep(50)
        yield* Fiber.interrupt(fiber)

        assert.deepStrictEqual(changes(), expected, "every change once, in order")
        assert.strictEqual(events.filter((e) => e._tag === "Init").length, 1, "no re-list was needed")
        const watches = control.requests().filter((r) => r.query["watch"] === "true").length
        assert.isAtLeast(watches, cuts.length + 1, "every cut was met and the watch resumed after each")
        const inStore = (yield* store.list()).map((c) => `${c.metadata?.name} ${c.metadata?.resourceVersion}`).sort()
        const inCluster = control.list("v1", "ConfigMap", "default").map((c) =>
          `${c.metadata.name as string} ${c.metadata.resourceVersion as string}`
        ).sort()
        assert.deepStrictEqual(inStore, inCluster, "the store is the cluster")
        counts.events += events.length
      })
    ))

  it.live("the reflector's store equals the cluster after resets, dropped watches, expiry and compaction", () =>
    withServed((served) =>
      Effect.gen(function*() {
        const control = served.control
        control.seed(Array.from({ length: 10 }, (_, i) => configMap(`s-${i}`, 100)))
        const store = yield* Watcher.makeStore<ConfigMap, Kube.Error>({ namespace: "default" })
        let seen = 0
        const fiber = yield* cms.watcher({ labelSelector: "app=rel", backoff: Schedule.spaced("5 millis") }).pipe(
          Watcher.reflect(store),
          Stream.runForEach(() => Effect.sync(() => void seen++)),
          Effect.forkChild
        )
        yield* store.ready
        const faults: ReadonlyArray<(round: number) => void> = [
          () => control.resetNext({ afterBytes: 150, match: isWatch }),
          () => control.dropWatchesAfter(3),
          () => control.expireWatches(),
          () => control.compact(),
          () => control.resetNext({ match: isList }),
          () => control.resetNext({ match: isWatch })
        ]
        for (let round = 0; round < 30; round++) {
          faults[round % faults.length]!(round)
          counts.faults++
          for (let i = 0; i < 8; i++) {
            const name = `s-${(round * 3 + i) % 14}`
            const ref = { apiVersion: "v1", kind: "ConfigMap", namespace: "default", name }
            if (control.get(ref) === undefined) control.seed([configMap(name, 100)])
            else if ((round + i) % 6 === 0) control.remove(ref)
            else control.update(ref, { data: { round: String(round), i: String(i) } })
          }
          if (round % faults.length === 1) control.dropWatchesAfter(undefined)
          yield* realSleep(3)
        }
        control.clearFaults()
        const inCluster = () =>
          control.list("v1", "ConfigMap", "default").map((c) =>
            `${c.metadata.name as string} ${c.metadata.resourceVersion as string}`
          ).sort().join(",")
        const inStore = Effect.map(
          store.list(),
          (items) => items.map((c) => `${c.metadata?.name} ${c.metadata?.resourceVersion}`).sort().join(",")
        )
        let last = ""
        const converged = yield* eventually(() => {
          last = Effect.runSync(inStore)
          return last === inCluster()
        }, 15_000)
        assert.strictEqual(last, inCluster(), `the store converged (${converged})`)
        yield* Fiber.interrupt(fiber)
        counts.events += seen
      })
    ))
})

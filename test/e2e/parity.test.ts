/**
 * What client-go users expect, against the real kube-apiserver v1.35 of the e2e run, and
 * the fake answering alike: WatchList (KEP-3157) as the watcher's default listing.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber, Option, Queue, Stream } from "effect"
import * as HttpClient from "effect/http/HttpClient"
import * as UrlParams from "effect/http/UrlParams"
import { type ConfigMap, ConfigMaps, Kube, Namespaces, NodeKube, Patch, Watcher } from "effect-kube"
import { FakeCluster } from "@effect-kube/testing"
import { kubeconfigPath } from "./setup/cluster.js"

const real = () => NodeKube.layerFromFile({ path: kubeconfigPath() })

const suffix = () => `${Date.now().toString(36)}${Math.floor(Math.random() * 1296).toString(36)}`

/** The requests the program sends, as `verb` (list or watch) and query, recorded below the library. */
const recording = <A, E, R>(log: Array<Record<string, string>>, effect: Effect.Effect<A, E, R>) =>
  Effect.updateService(effect, HttpClient.HttpClient, (client) =>
    HttpClient.tapRequest(client, (request) =>
      Effect.sync(() => {
        if (request.method !== "GET" || !request.url.includes("/configmaps")) return
        const query: Record<string, string> = {}
        new URL(request.url).searchParams.forEach((value, key) => {
          query[key] = value
        })
        for (const [key, value] of Object.entries(UrlParams.toRecord(request.urlParams))) {
          query[key] = Array.isArray(value) ? value.join(",") : String(value)
        }
        log.push(query)
      })))

/** A namespace for the test, deleted at the end of the scope. */
const namespace = (prefix: string) =>
  Effect.acquireRelease(
    Effect.map(Kube.api(Namespaces).create({ metadata: { name: `${prefix}-${suffix()}` } }), (n) => n.metadata!.name!),
    (name) => Effect.ignore(Kube.api(Namespaces).delete(name))
  )

const show = (event: Watcher.Event<ConfigMap>): string =>
  "object" in event ? `${event._tag} ${event.object.metadata?.name}` : event._tag

/** The events of a watcher, collected in the background. */
const collect = (stream: Stream.Stream<Watcher.Event<ConfigMap>, Kube.Error, Kube.Requirements>) =>
  Effect.gen(function*() {
    const queue = yield* Queue.unbounded<Watcher.Event<ConfigMap>>()
    const fiber = yield* stream.pipe(Stream.runForEach((e) => Queue.offer(queue, e)), Effect.forkScoped)
    return { fiber, take: (n: number) => Effect.map(Queue.takeBetween(queue, n, n), (es) => es.map(show)) }
  })

/** Init, the objects in name order, InitDone: a listing whatever order the server sent it in. */
const sortedListing = (events: ReadonlyArray<string>) =>
  [events[0], ...events.slice(1, -1).sort(), events.at(-1)]

describe("e2e parity: WatchList", () => {
  it.live("the watcher lists by one watch-list, with the same events as list-then-watch, and loses nothing", () =>
    Effect.gen(function*() {
      const ns = yield* namespace("parity-wl")
      const cms = Kube.api(ConfigMaps, { namespace: ns })
      const names = Array.from({ length: 30 }, (_, i) => `cm-${String(i).padStart(2, "0")}`)
      yield* Effect.forEach(names, (name) => cms.create({ metadata: { name, labels: { app: "parity" } } }), {
        concurrency: 5,
        discard: true
      })
      const byWatchList: Array<Record<string, string>> = []
      const byList: Array<Record<string, string>> = []
      const auto = yield* recording(byWatchList, collect(cms.watcher({ labelSelector: "app=parity" })))
      const listed = yield* recording(byList, collect(cms.watcher({ labelSelector: "app=parity", watchList: false })))
      const expected = ["Init", ...names.map((n) => `InitApply ${n}`), "InitDone"]
      assert.deepStrictEqual(sortedListing(yield* auto.take(32)), expected)
      assert.deepStrictEqual(sortedListing(yield* listed.take(32)), expected)

      // live changes: the same events, in the same order, on both
      yield* cms.create({ metadata: { name: "new", labels: { app: "parity" } } })
      yield* cms.patch("cm-03", Patch.merge({ data: { k: "v" } }))
      yield* cms.delete("cm-04")
      const live = ["Apply new", "Apply cm-03", "Delete cm-04"]
      assert.deepStrictEqual(yield* auto.take(3), live)
      assert.deepStrictEqual(yield* listed.take(3), live)

      // the watch-list: one watch, no list; list-then-watch: a list, then a watch
      assert.deepStrictEqual(byWatchList, [{
        watch: "true",
        labelSelector: "app=parity",
        resourceVersionMatch: "NotOlderThan",
        sendInitialEvents: "true",
        allowWatchBookmarks: "true",
        timeoutSeconds: "290"
      }])
      assert.deepStrictEqual(byList.map((q) => q["watch"] ?? "list"), ["list", "true"])
      yield* Fiber.interrupt(auto.fiber)
      yield* Fiber.interrupt(listed.fiber)
    }).pipe(Effect.scoped, Effect.provide(real())), 90_000)

  it.live("a reflector and watchList: true work on v1.35", () =>
    Effect.gen(function*() {
      const ns = yield* namespace("parity-wl")
      const cms = Kube.api(ConfigMaps, { namespace: ns })
      yield* cms.create({ metadata: { name: "a", labels: { app: "parity" } } })
      const store = yield* cms.reflector({ watchList: true, labelSelector: "app=parity" })
      yield* store.ready
      assert.deepStrictEqual((yield* store.list()).map((c) => c.metadata?.name), ["a"])
      yield* cms.delete("a")
      for (let i = 0; i < 100 && (yield* store.list()).length > 0; i++) yield* Effect.sleep("50 millis")
      assert.isTrue(Option.isNone(yield* store.get("a")))
    }).pipe(Effect.scoped, Effect.provide(real())), 60_000)

  /** The raw lines of a watch-list of one ConfigMap: event types and the bookmark's metadata. */
  const watchListShape = (ns: string) =>
    Effect.gen(function*() {
      yield* Kube.api(ConfigMaps, { namespace: ns }).create({ metadata: { name: "one", labels: { app: "parity" } } })
      const lines = yield* Kube.requestStream({
        method: "GET",
        path: `/api/v1/namespaces/${ns}/configmaps`,
        query: {
          watch: true,
          labelSelector: "app=parity",
          sendInitialEvents: true, resourceVersionMatch: "NotOlderThan",
          allowWatchBookmarks: true
        }
      }).pipe(Stream.take(2), Stream.runCollect)
      return lines.map((line) => {
        const event = JSON.parse(line) as {
          type: string
          object: { kind?: string; apiVersion?: string; metadata: { name?: string; annotations?: object } }
        }
        return {
          type: event.type,
          kind: event.object.kind,
          apiVersion: event.object.apiVersion,
          name: event.object.metadata.name,
          annotations: event.type === "BOOKMARK" ? event.object.metadata.annotations : undefined
        }
      })
    })

  it.live("the fake's watch-list has the real one's shape", () =>
    Effect.gen(function*() {
      const onReal = yield* Effect.scoped(Effect.flatMap(namespace("parity-wl"), watchListShape)).pipe(
        Effect.provide(real())
      )
      const onFake = yield* watchListShape("parity").pipe(
        Effect.provide(FakeCluster.layer({ namespaces: ["parity"] }))
      )
      assert.deepStrictEqual(onFake, onReal)
      assert.deepStrictEqual(onReal[1]!.annotations, { "k8s.io/initial-events-end": "true" })
    }), 60_000)
})

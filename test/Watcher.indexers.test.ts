/**
 * A reflector's and an informer's store with a transform (client-go's SetTransform) and indexes (client-go's
 * Indexers), against FakeCluster over the real request path: what is stored is what the transform made, lookups by
 * index follow creates, updates, deletes and relistings, and an index function that throws is an IndexError naming
 * the index and the object, while the store and its other indexes go on.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { IndexError, ValidationError } from "../packages/effect-kube/src/Errors.js"
import * as Informers from "../packages/effect-kube/src/Informers.js"
import * as Kube from "../packages/effect-kube/src/Kube.js"
import { type Pod, Pods } from "../packages/effect-kube/src/resources/index.js"
import * as Patch from "../packages/effect-kube/src/Patch.js"
import * as Watcher from "../packages/effect-kube/src/Watcher.js"
import { FakeCluster } from "@effect-kube/testing"
import { failureOf } from "./util/failure.js"

const pods = Kube.api(Pods, { namespace: "default" })
const pod = (name: string, node: string, owner?: string) => ({
  metadata: {
    name,
    labels: { app: name.split("-")[0]! },
    ...(owner !== undefined
      ? { ownerReferences: [{ apiVersion: "apps/v1", kind: "ReplicaSet", name: "rs", uid: owner, controller: true }] }
      : {})
  },
  spec: { nodeName: node, containers: [{ name: "c", image: "nginx" }] }
})
const names = (objects: ReadonlyArray<Pod>) => objects.map((p) => p.metadata?.name).sort()
const until = <A, E>(read: Effect.Effect<A, E>, check: (a: A) => boolean, what: string) =>
  Effect.gen(function*() {
    for (let i = 0; i < 300; i++) {
      if (check(yield* read)) return
      yield* Effect.sleep("10 millis")
    }
    assert.fail(what)
  })

const byNode = (p: Pod): ReadonlyArray<string> => (p.spec?.nodeName !== undefined ? [p.spec.nodeName] : [])
const indexers = { byNode, byNamespace: Watcher.indexByNamespace, byOwner: Watcher.indexByOwner, byApp: Watcher.indexByLabel("app") }

describe("a reflector's transform and indexes", () => {
  it.live("lookups by namespace, owner, label and a field of the user's follow creates, updates, deletes", () =>
    Effect.gen(function*() {
      yield* pods.create(pod("web-1", "node-a", "uid-rs"))
      yield* pods.create(pod("web-2", "node-b", "uid-rs"))
      yield* Kube.api(Pods, { namespace: "other" }).create(pod("db-1", "node-a"))
      const store = yield* Kube.api(Pods).reflector({ allNamespaces: true, indexers })
      yield* store.ready
      assert.deepStrictEqual(names(yield* store.byIndex("byNode", "node-a")), ["db-1", "web-1"])
      assert.deepStrictEqual(names(yield* store.byIndex("byNamespace", "default")), ["web-1", "web-2"])
      assert.deepStrictEqual(names(yield* store.byIndex("byOwner", "uid-rs")), ["web-1", "web-2"])
      assert.deepStrictEqual(names(yield* store.byIndex("byApp", "db")), ["db-1"])
      assert.deepStrictEqual([...(yield* store.indexValues("byNode"))].sort(), ["node-a", "node-b"])
      assert.deepStrictEqual(yield* store.byIndex("byNode", "node-z"), [])
      // an update moves the object to its new values; a delete takes it out of every index
      yield* pods.patch("web-2", Patch.merge({ metadata: { labels: { app: "db" } } }))
      yield* until(store.byIndex("byApp", "db"), (found) => found.length === 2, "web-2 filed under app=db")
      assert.deepStrictEqual(names(yield* store.byIndex("byApp", "web")), ["web-1"])
      yield* pods.delete("web-1", { gracePeriodSeconds: 0 })
      yield* until(store.byIndex("byOwner", "uid-rs"), (found) => found.length === 1, "web-1 out of byOwner")
      assert.deepStrictEqual(names(yield* store.byIndex("byNode", "node-a")), ["db-1"])
      assert.deepStrictEqual([...(yield* store.indexValues("byApp"))], ["db"])
      const unknown = yield* failureOf(store.byIndex("byColour", "red"))
      assert.instanceOf(unknown, IndexError)
      assert.strictEqual(unknown.reason, "Unknown")
      assert.match(unknown.message, /the store has no index "byColour"/)
    }).pipe(Effect.scoped, Effect.provide(FakeCluster.layer({ namespaces: ["other"] }))))

  it.live("a relisting (after 410 Gone) rebuilds the indexes: an object deleted meanwhile leaves them", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      yield* pods.create(pod("web-1", "node-a"))
      yield* pods.create(pod("web-2", "node-a"))
      const store = yield* pods.reflector({ indexers })
      yield* store.ready
      assert.deepStrictEqual(names(yield* store.byIndex("byNode", "node-a")), ["web-1", "web-2"])
      cluster.expireWatches()
      yield* pods.delete("web-2", { gracePeriodSeconds: 0 })
      yield* until(store.byIndex("byNode", "node-a"), (found) => found.length === 1, "web-2 out of the index")
      assert.deepStrictEqual(names(yield* store.list()), ["web-1"])
    }).pipe(Effect.scoped, Effect.provide(FakeCluster.layer())))

  it.live("the transform makes what is stored: dropManagedFields leaves no managedFields in the store", () =>
    Effect.gen(function*() {
      yield* pods.apply(
        { apiVersion: "v1", kind: "Pod", metadata: { name: "web-1" }, spec: { containers: [{ name: "c", image: "nginx" }] } },
        { fieldManager: "test" }
      )
      const served = Option.getOrThrow(yield* pods.get("web-1"))
      assert.isAbove(served.metadata?.managedFields?.length ?? 0, 0, "the server keeps managedFields")
      const store = yield* pods.reflector({ transform: Watcher.dropManagedFields })
      yield* store.ready
      const stored = Option.getOrThrow(yield* store.get("web-1"))
      assert.isUndefined(stored.metadata?.managedFields)
      assert.strictEqual(stored.metadata?.uid, served.metadata?.uid)
      yield* pods.patch("web-1", Patch.merge({ metadata: { labels: { v: "2" } } }))
      yield* until(store.get("web-1"), (p) => Option.getOrThrow(p).metadata?.labels?.["v"] === "2", "the update stored")
      assert.isUndefined(Option.getOrThrow(yield* store.get("web-1")).metadata?.managedFields)
      // the object given to the transform is left as it is
      const dropped = Watcher.dropManagedFields(served)
      assert.isUndefined(dropped.metadata?.managedFields)
      assert.isAbove(served.metadata?.managedFields?.length ?? 0, 0)
    }).pipe(Effect.scoped, Effect.provide(FakeCluster.layer())))

  it.live("an index function that throws is an IndexError naming the index and the object; the store goes on", () =>
    Effect.gen(function*() {
      const byImage = (p: Pod): ReadonlyArray<string> => {
        const image = p.spec?.containers[0]?.image
        if (image === "bad") throw new Error("no tag in the image")
        return image === undefined ? [] : [image]
      }
      yield* pods.create(pod("web-1", "node-a"))
      const store = yield* pods.reflector({ indexers: { byImage, byNode } })
      yield* store.ready
      assert.deepStrictEqual(names(yield* store.byIndex("byImage", "nginx")), ["web-1"])
      yield* pods.create({ ...pod("web-2", "node-a"), spec: { nodeName: "node-a", containers: [{ name: "c", image: "bad" }] } })
      yield* until(store.list(), (all) => all.length === 2, "web-2 stored")
      const failed = yield* failureOf(store.byIndex("byImage", "nginx"))
      assert.instanceOf(failed, IndexError)
      assert.deepInclude(failed, { index: "byImage", reason: "Failed", object: "default/web-2" })
      assert.match(failed.message, /index "byImage" failed on default\/web-2: the index function threw: no tag in the image/)
      assert.strictEqual((yield* failureOf(store.indexValues("byImage")))._tag, "IndexError")
      // the other index and the store itself answer; the watcher runs on
      assert.deepStrictEqual(names(yield* store.byIndex("byNode", "node-a")), ["web-1", "web-2"])
      assert.isTrue(Option.isNone(yield* store.failure))
      yield* pods.create(pod("web-3", "node-b"))
      yield* until(store.byIndex("byNode", "node-b"), (found) => found.length === 1, "web-3 indexed")
      // once the object it threw on is gone, the index answers again
      yield* pods.delete("web-2", { gracePeriodSeconds: 0 })
      yield* until(
        Effect.result(store.byIndex("byImage", "nginx")),
        (r) => r._tag === "Success" && r.success.length === 2,
        "byImage answers again"
      )
    }).pipe(Effect.scoped, Effect.provide(FakeCluster.layer())))

  it.live("a transform that throws stops the store with a ValidationError, not a dead fiber", () =>
    Effect.gen(function*() {
      yield* pods.create(pod("web-1", "node-a"))
      const store = yield* pods.reflector({
        transform: () => {
          throw new Error("transform broke")
        }
      })
      const error = yield* failureOf(store.ready)
      assert.instanceOf(error, ValidationError)
      assert.strictEqual((error as ValidationError).subject, "watcher of Pod")
    }).pipe(Effect.scoped, Effect.provide(FakeCluster.layer())))
})

describe("an informer's transform and indexes", () => {
  it.live("subscribers with the same functions share one store; another transform is another informer", () =>
    Effect.gen(function*() {
      const informers = yield* Informers.Informers
      yield* pods.create(pod("web-1", "node-a", "uid-rs"))
      const a = yield* informers.subscribe(pods, { transform: Watcher.dropManagedFields, indexers })
      const b = yield* informers.subscribe(pods, { transform: Watcher.dropManagedFields, indexers })
      assert.strictEqual(a.store, b.store)
      assert.strictEqual(informers.active(), 1)
      yield* a.store.ready
      assert.deepStrictEqual(names(yield* a.store.byIndex("byOwner", "uid-rs")), ["web-1"])
      const [event] = yield* b.events.pipe(Stream.filter((e) => e._tag === "InitApply"), Stream.take(1), Stream.runCollect)
      assert.isUndefined(event !== undefined && "object" in event ? event.object.metadata?.managedFields : "none")
      const plain = yield* informers.subscribe(pods)
      yield* plain.store.ready
      assert.notStrictEqual(plain.store, a.store)
      assert.strictEqual(informers.active(), 2)
      assert.strictEqual((yield* failureOf(plain.store.byIndex("byOwner", "uid-rs")))._tag, "IndexError")
    }).pipe(Effect.scoped, Effect.provide(Informers.layer.pipe(Layer.provideMerge(FakeCluster.layer())))))
})

import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Informers from "../packages/effect-kube/src/Informers.js"
import * as Kube from "../packages/effect-kube/src/Kube.js"
import { ConfigMaps } from "../packages/effect-kube/src/resources/index.js"
import { FakeCluster } from "@effect-kube/testing"
import * as Watcher from "../packages/effect-kube/src/Watcher.js"
import * as Loopback from "./util/loopback.js"

const configMaps = Kube.api(ConfigMaps, { namespace: "default" })
const cm = (name: string, app = "web") => ({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, labels: { app } } })
const watches = (cluster: FakeCluster.Control) => cluster.requests().filter((r) => r.query["watch"] === "true").length
const until = (check: () => boolean, what: string) =>
  Effect.flatMap(Loopback.eventually(check), (ok) => Effect.sync(() => assert.isTrue(ok, what)))
const show = (e: Watcher.Event<{ readonly metadata?: { readonly name?: string | undefined } | undefined }>) =>
  "object" in e ? `${e._tag} ${e.object.metadata?.name}` : e._tag

const layer = Informers.layer.pipe(Layer.provideMerge(FakeCluster.layer({ objects: [cm("a"), cm("b", "db")] })))

describe("Informers", () => {
  it.live("subscribers of the same resource, namespace and selectors share one watch, which stops with the last", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      const informers = yield* Informers.Informers
      const first = yield* Scope.make()
      const second = yield* Scope.make()
      const a = yield* informers.subscribe(configMaps, { labelSelector: "app=web" }).pipe(Scope.provide(first))
      yield* a.store.ready
      const b = yield* informers.subscribe(configMaps, { labelSelector: "app=web" }).pipe(Scope.provide(second))
      yield* b.store.ready
      assert.strictEqual(a.store, b.store)
      assert.strictEqual(informers.active(), 1)
      yield* until(() => cluster.openWatches() === 1, "one watch open")
      assert.strictEqual(watches(cluster), 1)
      // a late subscriber is given what the store holds, framed as a listing, then live changes
      const late = yield* b.events.pipe(Stream.take(3), Stream.runCollect)
      assert.deepStrictEqual(late.map(show), ["Init", "InitApply a", "InitDone"])
      // other selectors are another informer
      const dbScope = yield* Scope.make()
      const db = yield* informers.subscribe(configMaps, { labelSelector: "app=db" }).pipe(Scope.provide(dbScope))
      yield* db.store.ready
      assert.deepStrictEqual((yield* db.store.list()).map((o) => o.metadata?.name), ["b"])
      assert.strictEqual(informers.active(), 2)
      // its own watch follows its listing (a sync point: the watch request goes out a scheduler turn after `ready`)
      yield* until(() => watches(cluster) === 2, "the db informer watches too")
      yield* Scope.close(dbScope, Exit.void)
      // changes reach every subscriber and the store
      cluster.seed([cm("c")])
      yield* until(() => true, "")
      const live = yield* a.events.pipe(Stream.filter((e) => e._tag === "Apply"), Stream.take(1), Stream.runCollect)
      assert.deepStrictEqual(live.map(show), ["Apply c"])
      yield* until(() => Effect.runSync(a.store.list()).length === 2, "store has a and c")
      yield* Scope.close(first, Exit.void)
      assert.strictEqual(informers.active(), 1)
      yield* Scope.close(second, Exit.void)
      assert.strictEqual(informers.active(), 0)
      yield* until(() => cluster.openWatches() === 0, "the watch stopped with the last subscriber")
      assert.strictEqual(watches(cluster), 2)
    }).pipe(Effect.provide(layer)))
})

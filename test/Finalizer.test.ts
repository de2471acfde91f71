import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Finalizer from "../packages/effect-kube/src/Finalizer.js"
import * as Kube from "../packages/effect-kube/src/Kube.js"
import { ConfigMaps } from "../packages/effect-kube/src/resources/index.js"
import { FakeCluster } from "@effect-kube/testing"

const configMaps = Kube.api(ConfigMaps, { namespace: "default" })
const ref = { apiVersion: "v1", kind: "ConfigMap", name: "web" }
const finalizersOf = (cluster: FakeCluster.Control) =>
  (cluster.get(ref)?.metadata as { finalizers?: Array<string> } | undefined)?.finalizers

describe("Finalizer", () => {
  it.live("adds before apply, cleans up once on deletion, keeps other finalizers, survives concurrent writers", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      cluster.seed([{ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "web", finalizers: ["other.io/keep"] } }])
      const applied: Array<ReadonlyArray<string> | undefined> = []
      let cleanups = 0
      const handlers = {
        apply: (cm: typeof ConfigMaps.schema.Type) => Effect.sync(() => applied.push(cm.metadata?.finalizers)),
        cleanup: () => Effect.sync(() => cleanups++)
      }
      const stale = Option.getOrThrow(yield* configMaps.get("web"))
      // another writer changes the object after our read: the add is re-read and retried
      cluster.update(ref, { data: { x: "1" } })
      const result = yield* Finalizer.reconcile(configMaps, "example.com/f", stale, handlers)
      assert.isTrue(Option.isSome(result))
      assert.deepStrictEqual(applied, [["other.io/keep", "example.com/f"]])
      assert.deepStrictEqual(finalizersOf(cluster), ["other.io/keep", "example.com/f"])
      assert.deepStrictEqual((cluster.get(ref)?.data as Record<string, string>), { x: "1" })

      yield* configMaps.delete("web")
      const deleting = Option.getOrThrow(yield* configMaps.get("web"))
      assert.isTrue(Finalizer.isDeleting(deleting))
      assert.isTrue(Option.isNone(yield* Finalizer.reconcile(configMaps, "example.com/f", deleting, handlers)))
      assert.strictEqual(cleanups, 1)
      assert.deepStrictEqual(finalizersOf(cluster), ["other.io/keep"])
      // a stale copy that still lists the finalizer does not run cleanup again
      yield* Finalizer.reconcile(configMaps, "example.com/f", deleting, handlers)
      assert.strictEqual(cleanups, 1)
      assert.strictEqual(applied.length, 1)
      // the last finalizer removed: the server deletes the object
      yield* Finalizer.remove(configMaps, Option.getOrThrow(yield* configMaps.get("web")), "other.io/keep")
      assert.isUndefined(cluster.get(ref))
    }).pipe(Effect.provide(FakeCluster.layer())))
})

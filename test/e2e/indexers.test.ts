/**
 * A reflector's transform and indexes against the real kube-apiserver v1.35: managedFields (which the server writes
 * on every create) are not stored with `dropManagedFields`, and lookups by namespace, owner and a field of the user's
 * follow the server's changes, a ReplicaSet's pods found by its UID as the controller-manager makes them.
 */
import { assert, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { IndexError, Kube, type Pod, Pods, ReplicaSets, Watcher } from "./lib.js"
import { layer, testNamespace } from "./support.js"

const until = <A, E, R>(read: Effect.Effect<A, E, R>, check: (a: A) => boolean, what: string) =>
  Effect.gen(function*() {
    for (let i = 0; i < 300; i++) {
      if (check(yield* read)) return
      yield* Effect.sleep("100 millis")
    }
    assert.fail(what)
  })

const byImage = (pod: Pod): ReadonlyArray<string> => pod.spec?.containers.map((c) => c.image ?? "") ?? []
const indexers = { byImage, byOwner: Watcher.indexByOwner, byNamespace: Watcher.indexByNamespace }

it.layer(layer, { excludeTestServices: true, timeout: "90 seconds" })("reflector transform and indexes", (it) => {
  it.effect("dropManagedFields and lookups by owner, image and namespace on the server's objects", () =>
    Effect.gen(function*() {
      const ns = yield* testNamespace("indexers")
      const pods = Kube.api(Pods, { namespace: ns })
      const store = yield* pods.reflector({ transform: Watcher.dropManagedFields, indexers })
      yield* store.ready
      const replicaSet = yield* Kube.api(ReplicaSets, { namespace: ns }).create({
        metadata: { name: "web" },
        spec: {
          replicas: 2,
          selector: { matchLabels: { app: "web" } },
          template: { metadata: { labels: { app: "web" } }, spec: { containers: [{ name: "c", image: "busybox:1.36" }] } }
        }
      })
      yield* pods.create({ metadata: { name: "lone" }, spec: { containers: [{ name: "c", image: "nginx:1.27" }] } })
      // the three pods' events come in any order: wait for all of them before reading the indexes
      yield* until(store.byIndex("byNamespace", ns), (found) => found.length === 3, "the namespace's three pods")
      assert.strictEqual((yield* store.byIndex("byOwner", replicaSet.metadata!.uid!)).length, 2)
      assert.deepStrictEqual((yield* store.byIndex("byImage", "nginx:1.27")).map((p) => p.metadata?.name), ["lone"])
      const served = Option.getOrThrow(yield* pods.get("lone"))
      assert.isAbove(served.metadata?.managedFields?.length ?? 0, 0, "the server writes managedFields")
      for (const pod of yield* store.list()) assert.isUndefined(pod.metadata?.managedFields, pod.metadata?.name)
      yield* pods.delete("lone", { gracePeriodSeconds: 0 })
      yield* until(store.byIndex("byImage", "nginx:1.27"), (found) => found.length === 0, "lone out of byImage")
      const unknown = yield* Effect.flip(store.byIndex("byNode", "x"))
      assert.instanceOf(unknown, IndexError)
    }), 60_000)
})

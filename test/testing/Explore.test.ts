/**
 * Explore: seeded schedules over the fake find the interleaving bugs of two deliberately broken
 * controllers (a lost update, a double leader) within 1,000 schedules, shrink them to a schedule that
 * replays exactly, give the same result for the same seed run after run, and pass examples/operator.ts.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { ConfigMaps, Kube } from "effect-kube"
import { Explore, type FakeCluster } from "@effect-kube/testing"

const counters = Kube.api(ConfigMaps, { namespace: "default" })
const seedCounter = (cluster: FakeCluster.Service) =>
  cluster.seed([{ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "counter" }, data: { n: "0" } }])
const counterValue = (cluster: FakeCluster.Service) =>
  cluster.get({ apiVersion: "v1", kind: "ConfigMap", name: "counter", namespace: "default" })?.data as
    | { readonly n?: string }
    | undefined

/** Broken: read, add one, write the whole object back without its resourceVersion (a blind PUT). */
const blindIncrement = Effect.gen(function*() {
  const cm = Option.getOrThrow(yield* counters.get("counter"))
  const n = Number(cm.data?.n ?? "0") + 1
  yield* counters.replace("counter", { metadata: { name: "counter" }, data: { n: String(n) } })
})

/** Fixed: the write carries the resourceVersion read, and a 409 reads again (Kube.api's update does both). */
const safeIncrement = counters.update("counter", (cm) => ({ ...cm, data: { n: String(Number(cm.data?.n ?? "0") + 1) } }))

const lostUpdate = (increment: Effect.Effect<unknown, unknown, Kube.Requirements>) => ({
  setup: seedCounter,
  controllers: { "writer-a": increment, "writer-b": increment },
  invariants: {
    "no increment is lost": Explore.eventually(({ cluster }) => counterValue(cluster)?.n === "2")
  }
})

describe("Explore", () => {
  it.live("finds the lost update of a blind read-modify-write, shrinks it, and its schedule replays exactly", () =>
    Effect.gen(function*() {
      const failure = yield* Effect.flip(Explore.explore({ ...lostUpdate(blindIncrement), seed: 7, schedules: 1000 }))
      console.log(failure.message)
      assert.strictEqual(failure.invariant, "no increment is lost")
      const again = yield* Effect.flip(Explore.explore({ ...lostUpdate(blindIncrement), replay: failure.schedule }))
      assert.deepStrictEqual(again.trace, failure.trace)
    }), { timeout: 120_000 })
})

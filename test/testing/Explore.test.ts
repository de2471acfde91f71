/**
 * Explore: seeded schedules over the fake find the interleaving bugs of two deliberately broken
 * controllers (a lost update, a double leader) within 1,000 schedules, shrink them to a schedule that
 * replays exactly, give the same result for the same seed run after run, and pass examples/operator.ts.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { ConfigMaps, Kube, LeaderElection } from "effect-kube"
import { Explore, type FakeCluster } from "@effect-kube/testing"
import { operatorExploration } from "./exploreOperator.js"

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

/** The work only a leader may do: every second, stamp the shared ConfigMap with who did it. */
const stamp = (identity: string) =>
  Effect.forever(Effect.andThen(
    counters.patch("state", { _tag: "Merge", body: { data: { by: identity } } }),
    Effect.sleep("1 second")
  ))
const election = (identity: string) => ({ lease: { name: "worker", namespace: "default" }, identity })

/** Correct: the work runs inside LeaderElection.run, which interrupts it when leadership is lost. */
const leader = (identity: string) => LeaderElection.run(stamp(identity), election(identity))

/** Broken: the work is forked off the elected fiber, so losing the lease stops the election's fiber but not it. */
const detachedLeader = (identity: string) =>
  LeaderElection.run(Effect.andThen(Effect.forkDetach(stamp(identity)), Effect.never), election(identity))

/**
 * At most one leader acting: every write of the shared ConfigMap comes from the replica whose lease write
 * (taking or renewing it) was the last one to succeed before it.
 */
const oneLeaderActing = ({ actions }: Explore.View): boolean => {
  let holder: string | undefined
  for (const a of actions) {
    if (a.resource === "leases" && (a.method === "PUT" || a.method === "POST") && a.status >= 200 && a.status < 300) {
      holder = a.actor
    } else if (a.resource === "configmaps" && a.method === "PATCH" && a.status > 0 && a.actor !== holder) return false
  }
  return true
}

const doubleLeader = (replica: (identity: string) => Effect.Effect<unknown, unknown, Kube.Requirements>) => ({
  setup: (cluster: FakeCluster.Service) =>
    cluster.seed([{ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "state" }, data: {} }]),
  controllers: { "replica-a": replica("replica-a"), "replica-b": replica("replica-b") },
  tick: "2 seconds" as const,
  steps: 40,
  quiet: 30,
  invariants: { "at most one leader acting": oneLeaderActing }
})

describe("Explore", () => {
  it.live("finds the lost update of a blind read-modify-write, shrinks it, and its schedule replays exactly", () =>
    Effect.gen(function*() {
      const failure = yield* Effect.flip(Explore.explore({ ...lostUpdate(blindIncrement), seed: 7, schedules: 1000 }))
      assert.strictEqual(failure.invariant, "no increment is lost")
      // shrunk to the race itself: both read, then both write (which writer goes first is the seed's)
      const race = failure.trace.slice(0, 4).map((t) => t.replace(/^\(quiet\) /, ""))
      const step = (method: string, writer: string) =>
        `send ${method} /api/v1/namespaces/default/configmaps/counter (${writer}) → 200`
      const [first, second] = race[0]!.includes("(writer-a)") ? ["writer-a", "writer-b"] : ["writer-b", "writer-a"]
      assert.deepStrictEqual(race.slice(0, 2), [step("GET", first), step("GET", second)])
      assert.sameMembers(race.slice(2), [step("PUT", "writer-a"), step("PUT", "writer-b")])
      assert.include(failure.message, `invariant "no increment is lost" broken`)
      assert.include(failure.message, `replay: [${failure.schedule.join(", ")}]`)
      const again = yield* Effect.flip(Explore.explore({ ...lostUpdate(blindIncrement), replay: failure.schedule }))
      assert.deepStrictEqual(again.trace, failure.trace)
    }), { timeout: 120_000 })

  it.live("deterministic: the same seed gives the same schedule, the same shrinking and the same trace, 20 times", () =>
    Effect.gen(function*() {
      const runs: Array<string> = []
      for (let i = 0; i < 20; i++) {
        const failure = yield* Effect.flip(Explore.explore({ ...lostUpdate(blindIncrement), seed: 7, schedules: 1000 }))
        runs.push(JSON.stringify([failure.found, failure.schedule, failure.step, failure.trace, failure.shrinkRuns]))
      }
      assert.strictEqual(new Set(runs).size, 1, runs.join("\n"))
    }), { timeout: 300_000 })

  it.live("a read-modify-write with the resourceVersion and a re-read on 409 keeps every increment", () =>
    Effect.gen(function*() {
      const passed = yield* Explore.explore({ ...lostUpdate(safeIncrement), seed: 7, schedules: 100 })
      assert.strictEqual(passed.schedules, 100)
    }), { timeout: 120_000 })

  it.live("finds the double leader whose work outlives its lease", () =>
    Effect.gen(function*() {
      const failure = yield* Effect.flip(Explore.explore({ ...doubleLeader(detachedLeader), seed: 3, schedules: 1000, maxShrinks: 40 }))
      assert.strictEqual(failure.invariant, "at most one leader acting")
      assert.isAtMost(failure.found, 1000)
      const again = yield* Effect.flip(Explore.explore({ ...doubleLeader(detachedLeader), replay: failure.schedule }))
      assert.deepStrictEqual(again.trace, failure.trace)
    }), { timeout: 300_000 })

  it.live("examples/operator.ts keeps its invariants: two replicas, held events, conflicts, 410s, resets, lease loss", () =>
    Effect.gen(function*() {
      const passed = yield* Explore.explore({ ...operatorExploration, seed: 11, schedules: 8 })
      assert.strictEqual(passed.schedules, 8)
      assert.isAbove(passed.actions, 20)
    }), { timeout: 300_000 })

  it.live("LeaderElection.run keeps one leader acting through lease loss, conflicts and held events", () =>
    Effect.gen(function*() {
      const passed = yield* Explore.explore({ ...doubleLeader(leader), seed: 3, schedules: 20 })
      assert.strictEqual(passed.schedules, 20)
      assert.isAbove(passed.actions, 0)
    }), { timeout: 300_000 })
})

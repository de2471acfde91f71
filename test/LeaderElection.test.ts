import * as HttpClient from "effect/http/HttpClient"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import * as Controller from "../packages/effect-kube/src/Controller.js"
import * as Informers from "../packages/effect-kube/src/Informers.js"
import { Leases } from "../packages/effect-kube/src/resources/index.js"
import { type ConfigMap, ConfigMaps } from "../packages/effect-kube/src/resources/index.js"
import * as Kube from "../packages/effect-kube/src/Kube.js"
import * as LeaderElection from "../packages/effect-kube/src/LeaderElection.js"
import * as RequestPolicy from "../packages/effect-kube/src/RequestPolicy.js"
import { FakeCluster } from "@effect-kube/testing"
import * as Loopback from "./util/loopback.js"
import { apiServerOnly } from "./util/apiServerOnly.js"

const leases = Kube.api(Leases, { namespace: "default" })
const microTime = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/
const until = (check: () => boolean, what: string) =>
  Effect.flatMap(Loopback.eventually(check, 500), (ok) => Effect.sync(() => assert.isTrue(ok, what)))
const realSleep = (ms: number) => Effect.promise(() => new Promise<void>((resolve) => setTimeout(resolve, ms)))
const fake = Layer.merge(
  FakeCluster.layer(apiServerOnly),
  RequestPolicy.layer({ readRetries: Schedule.recurs(0), throttleRetries: 0, timeout: null })
)

const LD = 1000
const RD = 500
const RP = 200
const timing = { leaseDuration: LD, renewDeadline: RD, retryPeriod: RP }

describe("LeaderElection", () => {
  it.live("three replicas: one leads at a time; a partitioned leader steps down before another leads; release hands over at once", () =>
    Effect.gen(function*() {
      const base = yield* HttpClient.HttpClient
      const log: Array<{ readonly replica: number; readonly event: "start" | "stop"; readonly at: number }> = []
      let leading: number | undefined = undefined
      let doubleLeaders = 0
      const blocked = [false, false, false]
      const replica = (i: number) => {
        // a network partition of this replica alone: its requests are never answered
        const client = HttpClient.transform(base, (effect) => Effect.suspend(() => (blocked[i] ? Effect.never : effect)))
        const work = Effect.gen(function*() {
          if (leading !== undefined) doubleLeaders++
          leading = i
          log.push({ replica: i, event: "start", at: Date.now() })
          return yield* Effect.never
        }).pipe(Effect.onInterrupt(() =>
          Effect.sync(() => {
            if (leading === i) leading = undefined
            log.push({ replica: i, event: "stop", at: Date.now() })
          })
        ))
        return LeaderElection.run(work, { lease: { name: "my-controller" }, identity: `replica-${i}`, ...timing }).pipe(
          Effect.provideService(HttpClient.HttpClient, client),
          Effect.forkChild
        )
      }
      const history: Array<{ holder: string; acquireTime: string; renewTime: string; transitions: number }> = []
      const watching = yield* leases.watcher().pipe(
        Stream.runForEach((e) =>
          Effect.sync(() => {
            if (e._tag !== "Apply" && e._tag !== "InitApply") return
            const spec = e.object.spec!
            history.push({
              holder: spec.holderIdentity ?? "",
              acquireTime: spec.acquireTime ?? "",
              renewTime: spec.renewTime ?? "",
              transitions: spec.leaseTransitions ?? 0
            })
          })
        ),
        Effect.forkChild
      )
      const fibers = [yield* replica(0), yield* replica(1), yield* replica(2)]
      yield* until(() => leading !== undefined, "someone leads")
      yield* realSleep(LD + 2 * RP)
      const first = leading!
      assert.strictEqual(log.filter((e) => e.event === "start").length, 1, "the leader keeps the lease by renewing it")

      // the leader is partitioned: it steps down, another takes over, in that order
      const partitionedAt = Date.now()
      blocked[first] = true
      yield* until(() => leading !== undefined && leading !== first, "another replica leads")
      const second = leading!
      const stopFirst = log.find((e) => e.replica === first && e.event === "stop")!
      const startSecond = log.find((e) => e.replica === second && e.event === "start")!
      assert.isBelow(stopFirst.at, startSecond.at, "the old leader stopped before the new one started")
      assert.isAtMost(startSecond.at - partitionedAt, LD + 2 * RP * 1.2 + 400, "took over within leaseDuration + retry")
      assert.isAtLeast(startSecond.at - partitionedAt, LD - RP * 1.2 - 50, "not before the lease expired")

      // the old leader comes back: it does not lead while the new one renews
      blocked[first] = false
      yield* realSleep(LD + 2 * RP)
      assert.strictEqual(leading, second)

      // the leader shuts down: it releases the lease and a successor takes over at once
      const stoppedAt = Date.now()
      yield* Fiber.interrupt(fibers[second]!)
      yield* until(() => leading !== undefined && leading !== second, "a successor leads")
      const third = leading!
      const startThird = log.filter((e) => e.replica === third && e.event === "start").at(-1)!
      assert.isBelow(startThird.at - stoppedAt, RP * 1.2 + 300, "handed over without waiting for expiry")

      assert.strictEqual(doubleLeaders, 0, "never two leaders at once")
      yield* until(() => history.at(-1)?.holder === `replica-${third}`, "the watch saw the last acquisition")
      yield* Effect.forEach(fibers, Fiber.interrupt)
      yield* Fiber.interrupt(watching)

      // the lease history: holders in the order they led, MicroTimes on the wire
      const holders = history.map((h) => h.holder).filter((h, i, all) => h !== "" && h !== all[i - 1])
      const leaders = log.filter((e) => e.event === "start").map((e) => `replica-${e.replica}`)
      assert.deepStrictEqual(holders.filter((h, i, all) => h !== all[i - 1]), leaders)
      for (const h of history) {
        assert.match(h.acquireTime, microTime)
        assert.match(h.renewTime, microTime)
      }
      const transitions = history.map((h) => h.transitions)
      assert.deepStrictEqual([...transitions].sort((a, b) => a - b), transitions, "leaseTransitions never decreases")
      assert.isAtLeast(transitions.at(-1)!, 2)
    }).pipe(Effect.provide(fake)))

  it.effect("inconsistent durations are a ValidationError before any request", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      const error = yield* LeaderElection.run(Effect.void, {
        lease: { name: "x" },
        identity: "a",
        leaseDuration: "5 seconds",
        renewDeadline: "10 seconds"
      }).pipe(Effect.flip)
      assert.strictEqual(error._tag, "ValidationError")
      assert.include(error.message, "renewDeadline")
      assert.strictEqual(cluster.requests().length, 0)
    }).pipe(Effect.provide(fake)))

  it.live("the protected effect's result is returned and the lease released", () =>
    Effect.gen(function*() {
      const result = yield* LeaderElection.run(Effect.succeed(42), { lease: { name: "once" }, identity: "solo", ...timing })
      assert.strictEqual(result, 42)
      const lease = yield* leases.get("once")
      assert.strictEqual(lease._tag === "Some" && lease.value.spec?.holderIdentity, "")
    }).pipe(Effect.provide(fake)))

  it.live("shards: 3 replicas split 300 objects, each reconciled by exactly one; a replica that goes away is taken over", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      const names = Array.from({ length: 300 }, (_, i) => `cm-${i}`)
      cluster.seed(names.map((name) => ({ apiVersion: "v1", kind: "ConfigMap", metadata: { name } })))
      const reconciledBy = new Map<string, Set<number>>()
      const replica = (i: number) =>
        LeaderElection.shards(
          (shard) =>
            Controller.run(Controller.make({
              name: `test/shards-${i}`,
              api: Kube.api(ConfigMaps, { namespace: "default" }),
              shard,
              concurrency: 4,
              reconcile: (cm: ConfigMap) =>
                Effect.sync(() => {
                  const key = cm.metadata!.name!
                  reconciledBy.set(key, (reconciledBy.get(key) ?? new Set()).add(i))
                  return Controller.done
                })
            })),
          { lease: { name: "sharded" }, identity: `replica-${i}`, shards: 3, home: i, ...timing }
        ).pipe(Effect.provide(Informers.layer), Effect.forkChild)
      const fibers = [yield* replica(0), yield* replica(1), yield* replica(2)]
      yield* until(() => reconciledBy.size === 300, "every object reconciled")
      yield* realSleep(LD + 2 * RP)
      for (const name of names) assert.strictEqual(reconciledBy.get(name)!.size, 1, `${name} by exactly one replica`)
      const perReplica = [0, 1, 2].map((i) => names.filter((n) => reconciledBy.get(n)!.has(i)).length)
      for (const n of perReplica) assert.isAbove(n, 50, `the work is spread: ${perReplica}`)
      for (const name of names) {
        const shard = Controller.shardOf({ namespace: "default", name }, 3)
        assert.isTrue(reconciledBy.get(name)!.has(shard), `${name} reconciled by its shard's home replica`)
      }
      // replica 0 goes away: its shard is taken over and its objects reconciled again by another replica
      yield* Fiber.interrupt(fibers[0]!)
      const orphaned = names.filter((n) => reconciledBy.get(n)!.has(0))
      yield* until(() => orphaned.every((n) => reconciledBy.get(n)!.size === 2), "shard 0 taken over")
      for (const n of orphaned) assert.isFalse(reconciledBy.get(n)!.has(0) && reconciledBy.get(n)!.size !== 2)
      yield* Effect.forEach(fibers, Fiber.interrupt)
    }).pipe(Effect.provide(fake)))
})

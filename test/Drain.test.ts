/**
 * Drain, cordon and uncordon over the real request path (FakeCluster's layer answering real HTTP requests, its
 * scheduler, kubelet, ReplicaSet, disruption and garbage collection controllers running on the live clock).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber, Option, Schedule } from "effect"
import * as Drain from "../packages/effect-kube/src/Drain.js"
import { ValidationError } from "../packages/effect-kube/src/Errors.js"
import * as Kube from "../packages/effect-kube/src/Kube.js"
import {
  DaemonSets,
  Deployments,
  Nodes,
  PodDisruptionBudgets,
  type Pod,
  Pods
} from "../packages/effect-kube/src/resources/index.js"
import { FakeCluster } from "@effect-kube/testing"
import { failureOf } from "./util/failure.js"

const node = "fake-node"
const pods = Kube.api(Pods, { namespace: "default" })
const nodes = Kube.api(Nodes)
const fast = { pollInterval: "20 millis", retryInterval: "50 millis" } as const

const container = { name: "c", image: "busybox:1.36" }

const deployment = (name: string, replicas: number) => ({
  metadata: { name },
  spec: {
    replicas,
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [container], terminationGracePeriodSeconds: 0 } }
  }
})

/** The pods of `app` once `count` of them run on the node. */
const running = (app: string, count: number) =>
  pods.list({ labelSelector: `app=${app}` }).pipe(
    Effect.map((list) => list.items.filter((p) => p.status?.phase === "Running" && p.spec?.nodeName === node)),
    Effect.repeat({ schedule: Schedule.spaced("20 millis"), until: (found) => found.length === count }),
    Effect.timeout("10 seconds")
  )

const names = (refs: ReadonlyArray<Drain.PodRef>) => refs.map((p) => p.name).sort()

const isCordoned = nodes.getOrFail(node).pipe(Effect.map(Drain.isCordoned))

describe("Drain", () => {
  it.live("cordons, evicts the node's pods and waits until they are gone; replacements stay pending until uncordon", () =>
    Effect.gen(function*() {
      yield* Kube.api(Deployments, { namespace: "default" }).create(deployment("web", 2))
      const before = yield* running("web", 2)
      const result = yield* Drain.drain(node, { ...fast, timeout: "20 seconds" })
      assert.isTrue(result.cordoned)
      assert.deepStrictEqual(names(result.evicted), names(before.map((p) => ({ namespace: "default", name: p.metadata!.name! }))))
      assert.isTrue(yield* isCordoned)
      // the pods drained are gone (uid-checked): what is left are the ReplicaSet's replacements, not bound
      const after = (yield* pods.list({ labelSelector: "app=web" })).items
      const oldUids = new Set(before.map((p) => p.metadata?.uid))
      assert.isTrue(after.every((p) => !oldUids.has(p.metadata?.uid)))
      const pending = yield* pods.list({ labelSelector: "app=web" }).pipe(
        Effect.map((list) => list.items),
        Effect.repeat({ schedule: Schedule.spaced("20 millis"), until: (items) => items.length === 2 }),
        Effect.timeout("10 seconds")
      )
      assert.isTrue(pending.every((p) => p.spec?.nodeName === undefined && p.status?.phase === "Pending"))
      const scheduled = pending[0]!.status?.conditions?.find((c) => c.type === "PodScheduled")
      assert.strictEqual(scheduled?.reason, "Unschedulable")
      // a second cordon changes nothing; uncordon lets the replacements be scheduled
      assert.isFalse(yield* Drain.cordon(node))
      assert.isTrue(yield* Drain.uncordon(node))
      assert.isFalse(yield* isCordoned)
      assert.isUndefined((yield* nodes.getOrFail(node)).spec?.unschedulable)
      assert.strictEqual((yield* running("web", 2)).length, 2)
      assert.isFalse(yield* Drain.uncordon(node))
    }).pipe(Effect.provide(FakeCluster.layer())))

  it.live("refuses before writing anything while unowned, emptyDir or DaemonSet pods are there, naming each", () =>
    Effect.gen(function*() {
      const control = yield* FakeCluster.FakeCluster
      const daemonSet = yield* Kube.api(DaemonSets, { namespace: "default" }).create({
        metadata: { name: "agent" },
        spec: {
          selector: { matchLabels: { app: "agent" } },
          template: { metadata: { labels: { app: "agent" } }, spec: { containers: [container] } }
        }
      })
      const owned: Pod = {
        metadata: {
          name: "agent-x",
          labels: { app: "agent" },
          ownerReferences: [{ apiVersion: "apps/v1", kind: "DaemonSet", name: "agent", uid: daemonSet.metadata!.uid!, controller: true }]
        },
        spec: { containers: [container], terminationGracePeriodSeconds: 0 }
      }
      yield* pods.create(owned)
      yield* pods.create({ metadata: { name: "lonely" }, spec: { containers: [container], terminationGracePeriodSeconds: 0 } })
      yield* pods.create({
        metadata: { name: "scratch" },
        spec: { containers: [container], volumes: [{ name: "tmp", emptyDir: {} }], terminationGracePeriodSeconds: 0 }
      })
      // a mirror pod: the kubelet's copy of a static pod, left alone
      yield* pods.create({
        metadata: { name: "static-x", annotations: { "kubernetes.io/config.mirror": "abc" } },
        spec: { containers: [container], nodeName: node }
      })
      yield* running("agent", 1)
      control.reset()
      const refused = yield* failureOf(Drain.drain(node, { ...fast, timeout: "10 seconds" }))
      assert.instanceOf(refused, Drain.DrainFailed)
      const failed = refused as Drain.DrainFailed
      assert.strictEqual(failed.reason, "Unevictable")
      assert.deepStrictEqual(
        failed.pods.map((p) => `${p.name}: ${p.reason}`).sort(),
        [
          "agent-x: DaemonSet-managed (use ignoreDaemonSets to leave it)",
          "lonely: declares no controller (use force to override)",
          "scratch: has local storage (use deleteEmptyDirData to override)"
        ]
      )
      assert.include(failed.message, "drain node fake-node: cannot evict 3 pods: default/agent-x (DaemonSet-managed")
      // nothing written: the node is schedulable and only reads were sent
      assert.isFalse(yield* isCordoned)
      assert.deepStrictEqual(control.requests().filter((r) => r.method !== "GET"), [])

      // the plan shows the same; with emptyDir data allowed, scratch still needs force (it has no controller)
      const plan = yield* Drain.plan(node, { deleteEmptyDirData: true, ignoreDaemonSets: true })
      assert.deepStrictEqual(plan.blocking.map((p) => p.name).sort(), ["lonely", "scratch"])
      assert.deepStrictEqual(names(plan.skipped), ["agent-x", "static-x"])

      const result = yield* Drain.drain(node, {
        ...fast,
        force: true,
        ignoreDaemonSets: true,
        deleteEmptyDirData: true,
        timeout: "10 seconds"
      })
      assert.deepStrictEqual(names(result.evicted), ["lonely", "scratch"])
      assert.deepStrictEqual(names(result.skipped), ["agent-x", "static-x"])
      assert.deepStrictEqual(
        result.warnings.map((w) => `${w.name}: ${w.reason}`).sort(),
        [
          "agent-x: DaemonSet-managed: left on the node",
          "lonely: declares no controller: nothing brings it back",
          // each rule's warning (kubectl prints only the last)
          "scratch: declares no controller: nothing brings it back",
          "scratch: has local storage: its emptyDir data is lost"
        ]
      )
      assert.isTrue(Option.isNone(yield* pods.get("lonely")))
      assert.isTrue(Option.isSome(yield* pods.get("agent-x")))
      assert.isTrue(Option.isSome(yield* pods.get("static-x")))
      // every pod went through the Eviction API
      assert.deepStrictEqual(
        control.requests().filter((r) => r.method === "POST").map((r) => r.path).sort(),
        ["/api/v1/namespaces/default/pods/lonely/eviction", "/api/v1/namespaces/default/pods/scratch/eviction"]
      )
    }).pipe(Effect.provide(FakeCluster.layer())))

  it.live("an eviction a budget refuses is retried until it opens, or until the timeout names the pod and the budget", () =>
    Effect.gen(function*() {
      const control = yield* FakeCluster.FakeCluster
      const budgets = Kube.api(PodDisruptionBudgets, { namespace: "default" })
      yield* Kube.api(Deployments, { namespace: "default" }).create(deployment("db", 1))
      yield* budgets.create({ metadata: { name: "db-pdb" }, spec: { minAvailable: 1, selector: { matchLabels: { app: "db" } } } })
      const [db] = yield* running("db", 1)
      // the budget's status is written by its controller: until it is, the eviction is refused too
      control.reset()
      const timedOut = yield* failureOf(Drain.drain(node, { ...fast, timeout: "1 second" }))
      assert.instanceOf(timedOut, Drain.DrainFailed)
      const failed = timedOut as Drain.DrainFailed
      assert.strictEqual(failed.reason, "Timeout")
      assert.strictEqual(failed.timeout, "1s")
      assert.deepStrictEqual(failed.pods.map((p) => p.name), [db!.metadata!.name])
      assert.include(failed.pods[0]!.reason, "eviction refused: Cannot evict pod as it would violate the pod's disruption budget.")
      assert.include(failed.message, `not done within 1s; still there: default/${db!.metadata!.name}`)
      const evictions = control.requests().filter((r) => r.path.endsWith("/eviction")).length
      assert.isAbove(evictions, 3)
      // the node stays cordoned, as kubectl leaves it, and the pod is still there
      assert.isTrue(yield* isCordoned)
      assert.isTrue(Option.isSome(yield* pods.get(db!.metadata!.name!)))

      // the budget goes while the drain retries: the drain finishes
      const drained = yield* Effect.forkChild(Drain.drain(node, { ...fast, timeout: "20 seconds" }))
      yield* Effect.sleep("300 millis")
      yield* budgets.delete("db-pdb")
      const result = yield* Fiber.join(drained)
      assert.isFalse(result.cordoned)
      assert.deepStrictEqual(names(result.evicted), [db!.metadata!.name!])
      const left = (yield* pods.list({ labelSelector: "app=db" })).items
      assert.isTrue(left.every((p) => p.metadata?.uid !== db!.metadata?.uid))
    }).pipe(Effect.provide(FakeCluster.layer())))

  it.live("bad options are a ValidationError before any request; a missing node is the server's 404", () =>
    Effect.gen(function*() {
      const control = yield* FakeCluster.FakeCluster
      control.reset()
      const grace = yield* failureOf(Drain.drain(node, { gracePeriodSeconds: -1 }))
      assert.instanceOf(grace, ValidationError)
      assert.strictEqual((grace as ValidationError).subject, "drain node fake-node: gracePeriodSeconds")
      const timeout = yield* failureOf(Drain.plan(node, { timeout: "soon" as never }))
      assert.instanceOf(timeout, ValidationError)
      assert.deepStrictEqual(control.requests(), [])
      const missing = yield* failureOf(Drain.cordon("no-such-node"))
      assert.strictEqual((missing as { readonly code?: number }).code, 404)
    }).pipe(Effect.provide(FakeCluster.layer())))
})

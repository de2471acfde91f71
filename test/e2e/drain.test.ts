/**
 * Drain, cordon and uncordon against the real control plane, on a Node of the test's own that no kubelet runs (so
 * the cluster's one node keeps serving the other tests): its pods are bound to it by `spec.nodeName` (a ReplicaSet's,
 * an unowned one, a mirror pod) or by the scheduler (the DaemonSet's, which tolerates the node's not-ready taint).
 * The test writes the pods' Running status itself, as their kubelet would, so a PodDisruptionBudget counts them.
 */
import { assert, it } from "@effect/vitest"
import { Effect, Fiber, Option, Schedule } from "effect"
import {
  DaemonSets,
  Drain,
  Kube,
  Nodes,
  Patch,
  PodDisruptionBudgets,
  type Pod,
  Pods,
  ReplicaSets
} from "./lib.js"
import { layer, testNamespace, uniqueName } from "./support.js"

const nodes = Kube.api(Nodes)
const fast = { pollInterval: "100 millis", retryInterval: "200 millis", gracePeriodSeconds: 0 } as const

/** A Node object with no kubelet behind it, deleted when the scope closes. */
const testNode = Effect.acquireRelease(
  Effect.gen(function*() {
    const name = uniqueName("e2e-drain")
    // room for pods, as a kubelet registers its node: else the scheduler finds "Too many pods"
    const room = { pods: "10", cpu: "2", memory: "2Gi" }
    yield* nodes.create({
      metadata: { name, labels: { "kubernetes.io/hostname": name, "effect-kube.dev/e2e": "true" } },
      status: { capacity: room, allocatable: room }
    })
    return name
  }),
  (name) => Effect.ignore(nodes.delete(name))
)

const sleeper = (node: string) => ({
  containers: [{ name: "c", image: "busybox:1.36" }],
  nodeName: node,
  terminationGracePeriodSeconds: 0
})

const until = <A>(effect: Effect.Effect<A, unknown, Kube.Requirements>, done: (a: A) => boolean) =>
  effect.pipe(
    Effect.repeat({ schedule: Schedule.spaced("200 millis"), until: done }),
    Effect.timeout("30 seconds")
  )

/** What the pod's kubelet would write: Running and Ready. */
const markRunning = (ns: string, pod: Pod) =>
  Kube.api(Pods, { namespace: ns }).patchStatus(
    pod.metadata!.name!,
    Patch.merge({
      status: {
        phase: "Running",
        conditions: [{ type: "Ready", status: "True", lastTransitionTime: new Date().toISOString() }]
      }
    })
  )

const names = (refs: ReadonlyArray<Drain.PodRef>) => refs.map((p) => p.name).sort()

it.layer(layer, { excludeTestServices: true, timeout: "90 seconds" })("drain", (it) => {
  it.effect("refuses while unowned, emptyDir and DaemonSet pods are there, then drains with force, leaving mirror and DaemonSet pods", () =>
    Effect.gen(function*() {
      const ns = yield* testNamespace("drain")
      const node = yield* testNode
      const pods = Kube.api(Pods, { namespace: ns })
      yield* Kube.api(DaemonSets, { namespace: ns }).create({
        metadata: { name: "agent" },
        spec: {
          selector: { matchLabels: { app: "agent" } },
          template: {
            metadata: { labels: { app: "agent" } },
            spec: {
              containers: [{ name: "c", image: "busybox:1.36" }],
              nodeSelector: { "kubernetes.io/hostname": node },
              tolerations: [{ operator: "Exists" }]
            }
          }
        }
      })
      yield* pods.create({ metadata: { name: "lonely" }, spec: sleeper(node) })
      yield* pods.create({ metadata: { name: "scratch" }, spec: { ...sleeper(node), volumes: [{ name: "tmp", emptyDir: {} }] } })
      yield* pods.create({
        metadata: { name: "static-x", annotations: { "kubernetes.io/config.mirror": "e2e" } },
        spec: sleeper(node)
      })
      // the DaemonSet's pod, bound to the node by the scheduler
      const agents = yield* until(
        pods.list({ labelSelector: "app=agent" }).pipe(Effect.map((l) => l.items.filter((p) => p.spec?.nodeName === node))),
        (items) => items.length === 1
      )
      const agent = agents[0]!.metadata!.name!

      const refused = yield* Effect.flip(Drain.drain(node, { ...fast, timeout: "20 seconds" }))
      assert.instanceOf(refused, Drain.DrainFailed)
      const failed = refused as Drain.DrainFailed
      assert.strictEqual(failed.reason, "Unevictable")
      assert.deepStrictEqual(
        failed.pods.map((p) => `${p.name}: ${p.reason}`).sort(),
        [
          `${agent}: DaemonSet-managed (use ignoreDaemonSets to leave it)`,
          "lonely: declares no controller (use force to override)",
          "scratch: has local storage (use deleteEmptyDirData to override)"
        ]
      )
      // nothing written
      assert.isFalse(Drain.isCordoned(yield* nodes.getOrFail(node)))

      const result = yield* Drain.drain(node, {
        ...fast,
        force: true,
        ignoreDaemonSets: true,
        deleteEmptyDirData: true,
        timeout: "20 seconds"
      })
      assert.isTrue(result.cordoned)
      assert.deepStrictEqual(names(result.evicted), ["lonely", "scratch"])
      assert.deepStrictEqual(names(result.skipped), [agent, "static-x"].sort())
      assert.isTrue(Option.isNone(yield* pods.get("lonely")))
      assert.isTrue(Option.isNone(yield* pods.get("scratch")))
      assert.isTrue(Option.isSome(yield* pods.get(agent)))
      assert.isTrue(Option.isSome(yield* pods.get("static-x")))
      const cordoned = yield* nodes.getOrFail(node)
      assert.isTrue(Drain.isCordoned(cordoned))
      // kubectl cordon's node: unschedulable, and its controller's taint follows
      assert.isFalse(yield* Drain.cordon(node))
      assert.isTrue(yield* Drain.uncordon(node))
      assert.isUndefined((yield* nodes.getOrFail(node)).spec?.unschedulable)
    }))

  it.effect("evictions a disruption budget refuses are retried: until the timeout, or until the budget lets them", () =>
    Effect.gen(function*() {
      const ns = yield* testNamespace("drain-pdb")
      const node = yield* testNode
      const pods = Kube.api(Pods, { namespace: ns })
      const budgets = Kube.api(PodDisruptionBudgets, { namespace: ns })
      yield* Kube.api(ReplicaSets, { namespace: ns }).create({
        metadata: { name: "web" },
        spec: {
          replicas: 2,
          selector: { matchLabels: { app: "web" } },
          template: { metadata: { labels: { app: "web" } }, spec: sleeper(node) }
        }
      })
      const created = yield* until(
        pods.list({ labelSelector: "app=web" }).pipe(Effect.map((l) => l.items)),
        (items) => items.length === 2
      )
      for (const pod of created) yield* markRunning(ns, pod)
      yield* budgets.create({ metadata: { name: "web-pdb" }, spec: { minAvailable: 2, selector: { matchLabels: { app: "web" } } } })
      yield* until(
        budgets.getOrFail("web-pdb").pipe(Effect.map((b) => b.status?.currentHealthy)),
        (healthy) => healthy === 2
      )

      const timedOut = yield* Effect.flip(Drain.drain(node, { ...fast, timeout: "2 seconds" }))
      assert.instanceOf(timedOut, Drain.DrainFailed)
      const failed = timedOut as Drain.DrainFailed
      assert.strictEqual(failed.reason, "Timeout")
      assert.deepStrictEqual(names(failed.pods), names(created.map((p) => ({ namespace: ns, name: p.metadata!.name! }))))
      for (const pod of failed.pods) {
        // the server's own words
        assert.include(pod.reason, "eviction refused: Cannot evict pod as it would violate the pod's disruption budget.")
      }
      assert.include(failed.message, `drain node ${node}: not done within 2s; still there: `)
      assert.isTrue(Drain.isCordoned(yield* nodes.getOrFail(node)))
      for (const pod of created) assert.isTrue(Option.isSome(yield* pods.get(pod.metadata!.name!)))

      // the budget goes while the drain retries: it finishes, each original pod gone (its replacement has a new uid)
      const drained = yield* Effect.forkChild(Drain.drain(node, { ...fast, timeout: "30 seconds" }))
      yield* Effect.sleep("1 second")
      yield* budgets.delete("web-pdb")
      const result = yield* Fiber.join(drained)
      assert.isFalse(result.cordoned)
      assert.deepStrictEqual(names(result.evicted), names(failed.pods))
      const uids = new Set(created.map((p) => p.metadata?.uid))
      const left = (yield* pods.list({ labelSelector: "app=web" })).items
      assert.isTrue(left.every((p) => !uids.has(p.metadata?.uid)))
    }))
})

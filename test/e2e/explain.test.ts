/**
 * `Manifests.explain` against the real control plane's controllers, scheduler and node, and the same scenario on
 * the fake in the same test: an unschedulable pod (the scheduler's FailedScheduling), a quota exceeded (the
 * ReplicaSet controller's FailedCreate) and a container that keeps exiting (CrashLoopBackOff). The two renderings,
 * normalised (generated names, ages, counts, back-off times), are the same text, and the one test/util/explain.ts
 * expects. The node simulation pulls no image and runs no probe (cluster/pods.go): an image that does not exist
 * runs as a stand-in and a failing readiness probe leaves the container Ready, so neither can be shown here.
 */
import { assert, it } from "@effect/vitest"
import { Effect } from "effect"
import { FakeCluster } from "@effect-kube/testing"
import { expected, explainWhenReached, normalise, type Scenario, scenarios } from "../util/explain.js"
import { Manifests } from "./lib.js"
import { layer, testNamespace } from "./support.js"

/** The scenario on the fake (live clock, as here), rendered and normalised. */
const onTheFake = (scenario: Scenario, options: FakeCluster.Options = {}) =>
  Effect.gen(function*() {
    yield* Manifests.apply([{ apiVersion: "v1", kind: "Namespace", metadata: { name: "shop" } }])
    yield* Manifests.apply(scenario.objects, { namespace: "shop", fieldManager: "e2e" })
    const explanation = yield* explainWhenReached(scenario, "shop", Effect.sleep("200 millis"))
    return normalise(Manifests.renderExplanation(explanation), "shop")
  }).pipe(Effect.provide(FakeCluster.layer(options)))

const onTheServer = (scenario: Scenario, prefix: string) =>
  Effect.gen(function*() {
    const ns = yield* testNamespace(prefix)
    yield* Manifests.apply(scenario.objects, { namespace: ns, fieldManager: "e2e" })
    const explanation = yield* explainWhenReached(scenario, ns, Effect.sleep("1 second"), 90)
    return { text: Manifests.renderExplanation(explanation), normalised: normalise(Manifests.renderExplanation(explanation), ns) }
  })

it.layer(layer, { excludeTestServices: true, timeout: "120 seconds" })("explain", (it) => {
  it.effect("an unschedulable pod: the same explanation from the scheduler and from the fake", () =>
    Effect.gen(function*() {
      const real = yield* onTheServer(scenarios.unschedulable, "explain-sched")
      assert.strictEqual(real.normalised, expected.unschedulable)
      assert.notInclude(real.text, "hunter2")
      assert.strictEqual(yield* onTheFake(scenarios.unschedulable), real.normalised)
    }), 120_000)

  it.effect("a quota exceeded: the same explanation from the ReplicaSet controller and from the fake", () =>
    Effect.gen(function*() {
      const real = yield* onTheServer(scenarios.quota, "explain-quota")
      assert.strictEqual(real.normalised, expected.quota)
      assert.strictEqual(yield* onTheFake(scenarios.quota), real.normalised)
    }), 120_000)

  it.effect("a container that keeps exiting: the same CrashLoopBackOff from the node and from the fake", () =>
    Effect.gen(function*() {
      const real = yield* onTheServer(scenarios.crash, "explain-crash")
      assert.strictEqual(real.normalised, expected.crash)
      assert.notInclude(real.text, "hunter2")
      assert.strictEqual(yield* onTheFake(scenarios.crash, { simulate: { completePods: true } }), real.normalised)
    }), 120_000)

  it.effect("waitReady's NotReady on the real server says why", () =>
    Effect.gen(function*() {
      const ns = yield* testNamespace("explain-wait")
      yield* Manifests.apply(scenarios.unschedulable.objects, { namespace: ns, fieldManager: "e2e" })
      const error = yield* Effect.flip(Manifests.waitReady(scenarios.unschedulable.refs, { namespace: ns, timeout: "8 seconds" }))
      assert.strictEqual(error._tag, "NotReady")
      if (error._tag !== "NotReady") return
      assert.include(error.message, `← Pod ${ns}/picky-`)
      assert.include(error.message, "Unschedulable: 0/1 nodes are available")
      assert.notInclude(error.message, "hunter2")
    }), 60_000)

  // the fake has no StatefulSet controller and no volume binding: this walk is shown on the real server only
  it.effect("a StatefulSet down to its Pod and its claim, a Service to its EndpointSlices", () =>
    Effect.gen(function*() {
      const ns = yield* testNamespace("explain-sts")
      const objects = yield* Manifests.parse(`
apiVersion: apps/v1
kind: StatefulSet
metadata: { name: db }
spec:
  replicas: 1
  serviceName: db
  selector: { matchLabels: { app: db } }
  template:
    metadata: { labels: { app: db } }
    spec:
      terminationGracePeriodSeconds: 0
      containers: [{ name: c, image: busybox, command: ["sh", "-c", "sleep 3600"] }]
  volumeClaimTemplates:
    - metadata: { name: data }
      spec: { accessModes: [ReadWriteOnce], resources: { requests: { storage: 1Gi } } }
---
apiVersion: v1
kind: Service
metadata: { name: db }
spec: { selector: { app: db }, ports: [{ port: 80 }] }
`)
      yield* Manifests.apply(objects, { namespace: ns, fieldManager: "e2e" })
      const reached: Scenario = {
        objects,
        refs: objects,
        reached: (e) => {
          const [set, service] = e
          return set?.children.some((c) => c.events.some((ev) => ev.reason === "FailedScheduling")) === true &&
            set.children.some((c) => c.ref.kind === "PersistentVolumeClaim") && service?.children.length === 1
        }
      }
      const explanation = yield* explainWhenReached(reached, ns, Effect.sleep("1 second"), 60)
      assert.strictEqual(
        normalise(Manifests.renderExplanation(explanation), ns),
        [
          "StatefulSet NS/db: 0/1 ready",
          "  ← Pod NS/db-0: Unschedulable: 0/1 nodes are available: pod has unbound immediate PersistentVolumeClaims. " +
          "not found",
          "      · Warning FailedScheduling (Event, AGE)",
          "  ← PersistentVolumeClaim NS/data-db-0: Pending",
          "Service NS/db: 0/0 endpoint(s) ready",
          "  ← 1 EndpointSlice ready"
        ].join("\n")
      )
    }), 90_000)
})

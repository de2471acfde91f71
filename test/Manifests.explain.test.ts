/**
 * `Manifests.explain`, `renderExplanation`, `explainChanges` and the explanation `waitReady`'s NotReady carries, on
 * the fake with its controllers, scheduler and kubelet, on a TestClock. The scenarios (and what they render to once
 * normalised) are the ones test/e2e/explain.test.ts runs on the real control plane.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/testing/TestClock"
import { type Explanation, NotReady } from "../packages/effect-kube/src/Errors.js"
import * as Kube from "../packages/effect-kube/src/Kube.js"
import * as Manifests from "../packages/effect-kube/src/Manifests.js"
import { Events, EventsEventsV1, Pods } from "../packages/effect-kube/src/resources/index.js"
import { FakeCluster } from "@effect-kube/testing"
import { expected, explainWhenReached, normalise, type Scenario, scenarios } from "./util/explain.js"

const namespace = "shop"

const tick = TestClock.adjust("500 millis")

const run = (scenario: Scenario) =>
  Effect.gen(function*() {
    yield* Manifests.apply([{ apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } }])
    yield* Manifests.apply(scenario.objects, { namespace, fieldManager: "test" })
    return yield* explainWhenReached(scenario, namespace, tick)
  })

const find = (explanation: ReadonlyArray<Explanation>, kind: string): ReadonlyArray<Explanation> => {
  const all = (e: Explanation): ReadonlyArray<Explanation> => [e, ...e.children.flatMap(all)]
  return explanation.flatMap(all).filter((e) => e.ref.kind === kind)
}

describe("Manifests.explain on the fake", () => {
  it.effect("an unschedulable pod: the scheduler's condition and FailedScheduling Event, down from the Deployment", () =>
    Effect.gen(function*() {
      const explanation = yield* run(scenarios.unschedulable)
      const [deployment] = explanation
      assert.strictEqual(deployment?.status, "InProgress")
      assert.strictEqual(deployment?.summary, "0/2 available")
      const pods = find(explanation, "Pod")
      assert.deepStrictEqual(pods.map((p) => p.status), ["InProgress", "InProgress"])
      const scheduled = pods[0]?.conditions.find((c) => c.type === "PodScheduled")
      assert.deepStrictEqual([scheduled?.status, scheduled?.reason], ["False", "Unschedulable"])
      const event = pods[0]?.events[0]
      assert.deepStrictEqual([event?.type, event?.reason, event?.source], ["Warning", "FailedScheduling", "default-scheduler"])
      assert.strictEqual(normalise(Manifests.renderExplanation(explanation), namespace), expected.unschedulable)
    }).pipe(Effect.provide(FakeCluster.layer())))

  it.effect("a quota exceeded: the ReplicaSet's FailedCreate Event and ReplicaFailure condition", () =>
    Effect.gen(function*() {
      const explanation = yield* run(scenarios.quota)
      const [rs] = find(explanation, "ReplicaSet")
      assert.strictEqual(rs?.reason, "FailedCreate")
      assert.strictEqual(rs?.conditions.find((c) => c.type === "ReplicaFailure")?.status, "True")
      assert.isTrue(rs?.events.every((e) => e.reason === "FailedCreate" && e.source === "replicaset-controller"))
      assert.strictEqual(normalise(Manifests.renderExplanation(explanation), namespace), expected.quota)
    }).pipe(Effect.provide(FakeCluster.layer())))

  it.effect("a container that keeps exiting: CrashLoopBackOff with its last exit, never its env values", () =>
    Effect.gen(function*() {
      const explanation = yield* run(scenarios.crash)
      const [pod] = find(explanation, "Pod")
      assert.strictEqual(pod?.reason, "CrashLoopBackOff")
      const text = Manifests.renderExplanation(explanation)
      assert.strictEqual(normalise(text, namespace), expected.crash)
      assert.notInclude(text, "hunter2")
    }).pipe(Effect.provide(FakeCluster.layer({ simulate: { completePods: true } }))))

  it.effect("ages come from the Effect Clock: the same tree renders the same text at the same time", () =>
    Effect.gen(function*() {
      const explanation = yield* run(scenarios.unschedulable)
      const seconds = find(explanation, "Pod")[0]?.events[0]?.ageSeconds ?? -1
      yield* TestClock.adjust("90 seconds")
      const later = yield* Manifests.explain(scenarios.unschedulable.refs, { namespace })
      assert.strictEqual(find(later, "Pod")[0]?.events[0]?.ageSeconds, seconds + 90)
      assert.include(Manifests.renderExplanation(later), `(Event, ${seconds + 90} s ago)`)
      assert.notInclude(Manifests.renderExplanation(later, { ages: false }), "ago")
      assert.strictEqual(Manifests.renderExplanation(later), Manifests.renderExplanation(later))
    }).pipe(Effect.provide(FakeCluster.layer())))

  it.effect("an object that does not exist is NotFound; a ready set renders its children counted", () =>
    Effect.gen(function*() {
      yield* Manifests.apply([{
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name: "web" },
        spec: {
          replicas: 2,
          selector: { matchLabels: { app: "web" } },
          template: { metadata: { labels: { app: "web" } }, spec: { containers: [{ name: "c", image: "nginx" }] } }
        }
      }], { namespace: "default" })
      yield* TestClock.adjust("2 seconds")
      const explanation = yield* Manifests.explain([
        { apiVersion: "apps/v1", kind: "Deployment", name: "web" },
        { apiVersion: "v1", kind: "ConfigMap", name: "missing" }
      ], { namespace: "default" })
      const text = Manifests.renderExplanation(explanation).replace(/web-[a-z0-9]+/g, "web-HASH")
      assert.strictEqual(
        text,
        ["Deployment default/web: 2/2 available", "  ← 1 ReplicaSet ready", "ConfigMap default/missing: not found"].join("\n")
      )
      assert.strictEqual(find(explanation, "Pod").length, 2)
    }).pipe(Effect.provide(FakeCluster.layer())))

  it.effect("waitReady's NotReady carries the explanation, and its message ends with it rendered", () =>
    Effect.gen(function*() {
      yield* Manifests.apply([{ apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } }])
      yield* Manifests.apply(scenarios.unschedulable.objects, { namespace })
      const fiber = yield* Effect.forkChild(
        Effect.flip(Manifests.waitReady(scenarios.unschedulable.refs, { namespace, timeout: "10 seconds" }))
      )
      for (let i = 0; i < 25; i++) yield* TestClock.adjust("500 millis")
      const error = yield* Fiber.join(fiber)
      assert.instanceOf(error, NotReady)
      if (!(error instanceof NotReady)) return
      assert.strictEqual(error.reason, "Timeout")
      assert.strictEqual(error.explanation?.[0]?.ref.name, "picky")
      assert.isDefined(error.explained)
      assert.isTrue(error.message.endsWith(`\n${error.explained}`))
      assert.include(error.message, "← Pod shop/picky-")
      assert.include(error.message, "· Warning FailedScheduling (Event, ")
      assert.notInclude(error.message, "hunter2")
    }).pipe(Effect.provide(FakeCluster.layer())))

  it.effect("explainChanges emits when what a person reads changed, and ends once every object is Current", () =>
    Effect.gen(function*() {
      yield* Manifests.apply([{
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name: "web" },
        spec: {
          replicas: 1,
          selector: { matchLabels: { app: "web" } },
          template: { metadata: { labels: { app: "web" } }, spec: { containers: [{ name: "c", image: "nginx" }] } }
        }
      }], { namespace: "default" })
      const fiber = yield* Effect.forkChild(Stream.runCollect(
        Manifests.explainChanges([{ apiVersion: "apps/v1", kind: "Deployment", name: "web" }], {
          namespace: "default",
          interval: "10 millis"
        })
      ))
      for (let i = 0; i < 40; i++) yield* TestClock.adjust("10 millis")
      const emitted = yield* Fiber.join(fiber)
      const texts = emitted.map((e) =>
        Manifests.renderExplanation(e, { ages: false })
      )
      assert.isAbove(texts.length, 1)
      texts.slice(1).forEach((t, i) => assert.notStrictEqual(t, texts[i]))
      assert.strictEqual(texts.at(-1), "Deployment default/web: 1/1 available\n  ← 1 ReplicaSet ready")
    }).pipe(Effect.provide(FakeCluster.layer())))

  it.effect("a kubelet's ImagePullBackOff and its Events, core v1 and events.k8s.io/v1 alike (one stored resource)", () =>
    Effect.gen(function*() {
      // no kubelet: the test writes what a kubelet would
      const pods = Kube.api(Pods, { namespace: "default" })
      const pod = yield* pods.create({
        metadata: { name: "web-x" },
        spec: { nodeName: "node-1", containers: [{ name: "c", image: "nginx:1.99" }] }
      })
      yield* pods.replaceStatus("web-x", {
        ...pod,
        status: {
          phase: "Pending",
          conditions: [{ type: "PodScheduled", status: "True" }, { type: "Ready", status: "False", reason: "ContainersNotReady" }],
          containerStatuses: [{
            name: "c",
            image: "nginx:1.99",
            imageID: "",
            ready: false,
            restartCount: 0,
            state: { waiting: { reason: "ImagePullBackOff", message: "Back-off pulling image \"nginx:1.99\"" } }
          }]
        }
      })
      const involved = { apiVersion: "v1", kind: "Pod", namespace: "default", name: "web-x", uid: pod.metadata?.uid }
      yield* Kube.api(Events, { namespace: "default" }).create({
        metadata: { name: "web-x.pull" },
        involvedObject: involved,
        type: "Warning",
        reason: "Failed",
        message: "Failed to pull image \"nginx:1.99\": not found",
        source: { component: "kubelet" },
        count: 2,
        lastTimestamp: new Date(0).toISOString().replace(".000", "")
      })
      yield* Kube.api(EventsEventsV1, { namespace: "default" }).create({
        metadata: { name: "web-x.backoff" },
        regarding: involved,
        type: "Warning",
        reason: "BackOff",
        note: "Back-off pulling image \"nginx:1.99\"",
        action: "Pulling",
        reportingController: "kubelet",
        reportingInstance: "node-1",
        eventTime: new Date(5_000).toISOString().replace("Z", "000Z")
      })
      yield* TestClock.adjust("17 seconds")
      const explanation = yield* Manifests.explain([{ apiVersion: "v1", kind: "Pod", name: "web-x" }], {
        namespace: "default"
      })
      assert.strictEqual(explanation[0]?.reason, "ImagePullBackOff")
      assert.deepStrictEqual(explanation[0]?.events.map((e) => `${e.reason} ${e.source} ${e.ageSeconds}`), [
        "BackOff kubelet 12",
        "Failed kubelet 17"
      ])
      assert.strictEqual(
        Manifests.renderExplanation(explanation),
        [
          "Pod default/web-x: ImagePullBackOff, Back-off pulling image \"nginx:1.99\"",
          "  · Warning BackOff (Event, 12 s ago)",
          "  · Warning Failed: Failed to pull image \"nginx:1.99\": not found (Event, 17 s ago, ×2)"
        ].join("\n")
      )
    }).pipe(Effect.provide(FakeCluster.layer({ controllers: false }))))

  it.effect("a ready Deployment is four reads however many pods it has: a ready object's Events are not read", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      yield* Manifests.apply([{
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name: "wide" },
        spec: {
          replicas: 20,
          selector: { matchLabels: { app: "wide" } },
          template: { metadata: { labels: { app: "wide" } }, spec: { containers: [{ name: "c", image: "nginx" }] } }
        }
      }], { namespace: "default" })
      yield* TestClock.adjust("2 seconds")
      const before = cluster.requests().length
      const explanation = yield* Manifests.explain([{ apiVersion: "apps/v1", kind: "Deployment", name: "wide" }], {
        namespace: "default"
      })
      assert.strictEqual(explanation[0]?.status, "Current")
      assert.strictEqual(find(explanation, "Pod").length, 20)
      // discovery of the kind, the Deployment, its ReplicaSets, their Pods
      assert.deepStrictEqual(cluster.requests().slice(before).map((r) => `${r.method} ${r.path}`), [
        "GET /apis",
        "GET /apis/apps/v1/namespaces/default/deployments/wide",
        "GET /apis/apps/v1/namespaces/default/replicasets",
        "GET /api/v1/namespaces/default/pods"
      ])
    }).pipe(Effect.provide(FakeCluster.layer())))

  it.effect("a Service is explained by its EndpointSlices' endpoints", () =>
    Effect.gen(function*() {
      yield* Manifests.apply([
        {
          apiVersion: "apps/v1",
          kind: "Deployment",
          metadata: { name: "web" },
          spec: {
            replicas: 2,
            selector: { matchLabels: { app: "web" } },
            template: { metadata: { labels: { app: "web" } }, spec: { containers: [{ name: "c", image: "nginx" }] } }
          }
        },
        { apiVersion: "v1", kind: "Service", metadata: { name: "web" }, spec: { selector: { app: "web" }, ports: [{ port: 80 }] } }
      ], { namespace: "default" })
      yield* TestClock.adjust("2 seconds")
      const explanation = yield* Manifests.explain([{ apiVersion: "v1", kind: "Service", name: "web" }], {
        namespace: "default"
      })
      assert.strictEqual(
        Manifests.renderExplanation(explanation),
        "Service default/web: 2/2 endpoint(s) ready\n  ← 1 EndpointSlice ready"
      )
      assert.strictEqual(explanation[0]?.children[0]?.summary, "2/2 endpoint(s) ready")
    }).pipe(Effect.provide(FakeCluster.layer())))
})

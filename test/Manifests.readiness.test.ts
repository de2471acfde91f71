/**
 * Readiness of manifest sets with kstatus semantics: the rules per built-in kind and the
 * generic ones (statusOf, no requests), then status / statusChanges / waitReady against
 * the fake cluster. The fake has no controllers here: the tests write status as a
 * controller or a kubelet would (`update`, `setPodPhase`, `failJob`), on a TestClock.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/testing/TestClock"
import { formatRef, NotReady, ValidationError } from "../packages/effect-kube/src/Errors.js"
import * as Manifests from "../packages/effect-kube/src/Manifests.js"
import { type FakeCluster } from "@effect-kube/testing"
import { failureOf } from "./util/failure.js"
import * as Loopback from "./util/loopback.js"
import { configMap, deployment, withCluster } from "./util/manifests.js"

type Fields = Record<string, unknown>

const object = (apiVersion: string, kind: string, fields: Fields, metadata: Fields = {}) =>
  ({ apiVersion, kind, metadata: { name: "x", ...metadata }, ...fields }) as Manifests.Manifest

/** A custom resource with these conditions. */
const widget = (...conditions: ReadonlyArray<unknown>) => object("example.com/v1", "Widget", { status: { conditions } })

const statusOf = (o: Manifests.Manifest) => {
  const { message, status } = Manifests.statusOf(o)
  return `${status}: ${message}`
}

const condition = (type: string, status: string, reason = "", message = "") => ({ type, status, reason, message })

describe("Manifests.statusOf (kstatus rules)", () => {
  it("generic rules: deletion, an unobserved generation, Reconciling and Stalled come first", () => {
    assert.strictEqual(
      statusOf(object("v1", "ConfigMap", {}, { deletionTimestamp: "2026-01-01T00:00:00Z" })),
      "Terminating: being deleted"
    )
    assert.strictEqual(
      statusOf(object("apps/v1", "Deployment", { status: { observedGeneration: 1 } }, { generation: 2 })),
      "InProgress: Deployment generation 2 not yet observed (observed: 1)"
    )
    assert.strictEqual(
      statusOf(widget(condition("Reconciling", "True", "Scaling", "2 of 3"))),
      "InProgress: Scaling: 2 of 3"
    )
    assert.strictEqual(
      statusOf(widget(condition("Stalled", "True", "BadConfig", "no such image"))),
      "Failed: BadConfig: no such image"
    )
    assert.strictEqual(
      statusOf(widget(condition("Ready", "False", "Waiting", "for the database"))),
      "InProgress: Waiting: for the database"
    )
    assert.strictEqual(
      statusOf(widget(condition("Ready", "True"))),
      "Current: Ready"
    )
    assert.strictEqual(statusOf(object("example.com/v1", "Widget", {})), "Current: no conditions to wait for")
  })

  it("Deployment: replicas, updated, available and ready in turn; a passed progress deadline is Failed", () => {
    const d = (status: Record<string, unknown>, replicas = 3) =>
      object(
        "apps/v1",
        "Deployment",
        { spec: { replicas, progressDeadlineSeconds: 600 }, status: { observedGeneration: 1, ...status } },
        { generation: 1 }
      )
    const progressing = condition("Progressing", "True", "NewReplicaSetAvailable")
    const up = { replicas: 3, updatedReplicas: 3, availableReplicas: 3, readyReplicas: 3 }
    const available = condition("Available", "True", "MinimumReplicasAvailable")
    assert.strictEqual(statusOf(d({ replicas: 1 })), "InProgress: Replicas: 1/3")
    assert.strictEqual(statusOf(d({ replicas: 3, updatedReplicas: 2 })), "InProgress: Updated: 2/3")
    assert.strictEqual(statusOf(d({ replicas: 4, updatedReplicas: 3 })), "InProgress: Pending termination: 1")
    assert.strictEqual(
      statusOf(d({ replicas: 3, updatedReplicas: 3, availableReplicas: 1 })),
      "InProgress: Available: 1/3"
    )
    assert.strictEqual(
      statusOf(d({ ...up, conditions: [available] })),
      "InProgress: new ReplicaSet not available yet"
    )
    assert.strictEqual(
      statusOf(d({ ...up, conditions: [progressing, available] })),
      "Current: Deployment is available: 3 replica(s)"
    )
    assert.strictEqual(
      statusOf(d({
        conditions: [
          condition("Progressing", "False", "ProgressDeadlineExceeded", "ReplicaSet \"web-1\" has timed out progressing.")
        ]
      })),
      "Failed: ProgressDeadlineExceeded: ReplicaSet \"web-1\" has timed out progressing."
    )
  })

  it("StatefulSet, DaemonSet and ReplicaSet count their replicas", () => {
    const sts = (status: Record<string, unknown>, spec: Record<string, unknown> = {}) =>
      object("apps/v1", "StatefulSet", { spec: { replicas: 2, ...spec }, status })
    assert.strictEqual(statusOf(sts({ replicas: 2, readyReplicas: 1 })), "InProgress: Ready: 1/2")
    assert.strictEqual(
      statusOf(sts({ replicas: 2, readyReplicas: 2, currentReplicas: 2, currentRevision: "a", updateRevision: "b" })),
      "InProgress: waiting for the update revision to become current"
    )
    assert.strictEqual(
      statusOf(sts({ replicas: 2, readyReplicas: 2, currentReplicas: 2, currentRevision: "a", updateRevision: "a" })),
      "Current: StatefulSet is ready: 2 replica(s)"
    )
    assert.strictEqual(
      statusOf(sts({}, { updateStrategy: { type: "OnDelete" } })),
      "Current: StatefulSet uses the OnDelete update strategy"
    )
    const ds = (status: Record<string, unknown>) =>
      object("apps/v1", "DaemonSet", { status: { observedGeneration: 1, ...status } }, { generation: 1 })
    assert.strictEqual(statusOf(object("apps/v1", "DaemonSet", {}, { generation: 1 })), "InProgress: not observed yet")
    const scheduled = { desiredNumberScheduled: 3, currentNumberScheduled: 3, updatedNumberScheduled: 3 }
    assert.strictEqual(statusOf(ds({ ...scheduled, numberAvailable: 2 })), "InProgress: Available: 2/3")
    assert.strictEqual(
      statusOf(ds({ ...scheduled, numberAvailable: 3, numberReady: 3 })),
      "Current: DaemonSet is ready on 3 node(s)"
    )
    const rs = (status: Record<string, unknown>) => object("apps/v1", "ReplicaSet", { spec: { replicas: 2 }, status })
    assert.strictEqual(
      statusOf(rs({ conditions: [condition("ReplicaFailure", "True", "FailedCreate", "quota exceeded")] })),
      "InProgress: FailedCreate: quota exceeded"
    )
    assert.strictEqual(
      statusOf(rs({ replicas: 2, fullyLabeledReplicas: 2, availableReplicas: 2, readyReplicas: 2 })),
      "Current: ReplicaSet is available: 2 replica(s)"
    )
  })

  it("Pod, Job, PVC, Service, CRD, Namespace and the always-ready kinds", () => {
    const pod = (status: Fields, metadata: Fields = {}) => object("v1", "Pod", { status }, metadata)
    assert.strictEqual(
      statusOf(pod({ phase: "Running", conditions: [condition("Ready", "True")] })),
      "Current: Pod is Ready"
    )
    assert.strictEqual(
      statusOf(pod({
        phase: "Running",
        containerStatuses: [{ name: "app", state: { waiting: { reason: "CrashLoopBackOff" } } }]
      })),
      "Failed: containers in CrashLoopBackOff: app"
    )
    const unready = condition("Ready", "False", "ContainersNotReady", "containers with unready status: [app]")
    assert.strictEqual(
      statusOf(pod({ phase: "Running", conditions: [unready] })),
      "InProgress: ContainersNotReady: containers with unready status: [app]"
    )
    const unschedulable = {
      phase: "Pending",
      conditions: [condition("PodScheduled", "False", "Unschedulable", "0/3 nodes are available")]
    }
    assert.strictEqual(
      statusOf(pod(unschedulable, { creationTimestamp: new Date(Date.now() - 60_000).toISOString() })),
      "Failed: Unschedulable: 0/3 nodes are available"
    )
    assert.strictEqual(
      statusOf(pod(unschedulable, { creationTimestamp: new Date().toISOString() })),
      "InProgress: not scheduled yet"
    )
    assert.strictEqual(statusOf(pod({ phase: "Succeeded" })), "Current: Pod succeeded")
    assert.strictEqual(statusOf(pod({})), "InProgress: no phase yet")
    assert.strictEqual(statusOf(pod({ phase: "Unknown" })), "Unknown: phase Unknown")

    const job = (status: Record<string, unknown>) => object("batch/v1", "Job", { spec: { completions: 1 }, status })
    assert.strictEqual(statusOf(job({})), "InProgress: Job not started")
    assert.strictEqual(
      statusOf(job({ startTime: "2026-01-01T00:00:00Z", active: 1 })),
      "Current: Job running: 0 succeeded, 1 active, 0 failed"
    )
    assert.strictEqual(
      statusOf(job({ succeeded: 1, conditions: [condition("Complete", "True")] })),
      "Current: Job complete: 1/1 succeeded"
    )
    assert.strictEqual(
      statusOf(job({
        failed: 2,
        conditions: [condition("Failed", "True", "BackoffLimitExceeded", "Job has reached the specified backoff limit")]
      })),
      "Failed: Job failed (2 failed pod(s)): BackoffLimitExceeded: Job has reached the specified backoff limit"
    )
    assert.strictEqual(
      statusOf(object("v1", "PersistentVolumeClaim", { status: { phase: "Pending" } })),
      "InProgress: PVC is not Bound (phase: Pending)"
    )
    assert.strictEqual(
      statusOf(object("v1", "PersistentVolumeClaim", { status: { phase: "Bound" } })),
      "Current: PVC is Bound"
    )
    assert.strictEqual(
      statusOf(object("v1", "Service", { spec: { type: "LoadBalancer" } })),
      "InProgress: LoadBalancer Service has no cluster IP yet"
    )
    assert.strictEqual(
      statusOf(object("v1", "Service", { spec: { type: "ClusterIP", clusterIP: "10.0.0.1" } })),
      "Current: Service is ready"
    )
    const crd = (conditions: ReadonlyArray<unknown>) =>
      object("apiextensions.k8s.io/v1", "CustomResourceDefinition", { status: { conditions } })
    assert.strictEqual(statusOf(crd([])), "InProgress: CRD is being installed")
    assert.strictEqual(statusOf(crd([condition("Established", "True")])), "Current: CRD is established")
    assert.strictEqual(
      statusOf(crd([condition("NamesAccepted", "False", "NameConflict", "plural is taken")])),
      "Failed: NameConflict: plural is taken"
    )
    assert.strictEqual(
      statusOf(object("v1", "Namespace", { status: { phase: "Terminating" } })),
      "Terminating: Namespace is terminating"
    )
    assert.strictEqual(
      statusOf(object("v1", "Namespace", { status: { phase: "Active" } })),
      "Current: Namespace is active"
    )
    assert.strictEqual(
      statusOf(object("policy/v1", "PodDisruptionBudget", { status: { observedGeneration: 1 } }, { generation: 1 })),
      "Current: disruptions allowed have been computed"
    )
    for (const [apiVersion, kind] of [["v1", "Secret"], ["v1", "ConfigMap"], ["batch/v1", "CronJob"]] as const) {
      assert.strictEqual(statusOf(object(apiVersion, kind, {})), "Current: always ready")
    }
  })
})

const web = { apiVersion: "apps/v1", kind: "Deployment", name: "web", namespace: "default" }

/** The status a deployment controller writes once one replica is up. */
const rolledOut = (generation: number) => ({
  status: {
    observedGeneration: generation,
    replicas: 1,
    updatedReplicas: 1,
    readyReplicas: 1,
    availableReplicas: 1,
    conditions: [
      { type: "Available", status: "True", reason: "MinimumReplicasAvailable", message: "has minimum availability" },
      { type: "Progressing", status: "True", reason: "NewReplicaSetAvailable", message: "has successfully progressed" }
    ]
  }
})

/** GETs of single objects: the polls (discovery and listings are left out). */
const objectGets = (cluster: Pick<FakeCluster.Control, "requests">) =>
  cluster.requests().filter((r) => r.method === "GET" && /\/namespaces\/[^/]+\/[^/]+\/[^/]+$/.test(r.path)).length

/** Waits (in real time) until the set was read `gets` times and the poller is asleep on the TestClock again. */
const polled = (cluster: Parameters<typeof objectGets>[0], gets: number) =>
  Effect.gen(function*() {
    assert.isTrue(yield* Loopback.eventually(() => objectGets(cluster) >= gets), `${gets} GETs`)
    yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 20)))
  })

describe("Manifests.status, statusChanges and waitReady", () => {
  it.effect("status reads every object: InProgress, Current, NotFound", () =>
    withCluster(() =>
      Effect.gen(function*() {
        yield* Manifests.apply([configMap("a"), deployment("web")], { namespace: "default" })
        const set = [configMap("a"), deployment("web"), configMap("missing")]
        const statuses = yield* Manifests.status(set, { namespace: "default" })
        assert.deepStrictEqual(statuses.map((s) => `${formatRef(s.ref)} ${s.status}: ${s.message}`), [
          "ConfigMap default/a Current: always ready",
          "Deployment default/web InProgress: Replicas: 0/1",
          "ConfigMap default/missing NotFound: not found"
        ])
      })
    ))

  it.effect("statusChanges emits each change, polling on the clock, and ends once every object is Current", () =>
    withCluster((cluster) =>
      Effect.gen(function*() {
        const refs = yield* Manifests.apply([configMap("a"), deployment("web")], { namespace: "default" })
        cluster.reset()
        const fiber = yield* Effect.forkChild(
          Stream.runCollect(Manifests.statusChanges(refs, { namespace: "default", interval: "2 seconds" }))
        )
        yield* polled(cluster, 2)
        // nothing changed: the next poll emits nothing
        yield* TestClock.adjust("2 seconds")
        yield* polled(cluster, 4)
        const generation = cluster.get(web)!.metadata.generation!
        cluster.update(web, rolledOut(generation))
        yield* TestClock.adjust("2 seconds")
        const changes = yield* Fiber.join(fiber)
        assert.deepStrictEqual(changes.map((s) => `${s.ref.name} ${s.status}: ${s.message}`), [
          "a Current: always ready",
          "web InProgress: Replicas: 0/1",
          "web Current: Deployment is available: 1 replica(s)"
        ])
        assert.strictEqual(objectGets(cluster), 6)
        assert.strictEqual(cluster.requests().filter((r) => r.method !== "GET").length, 0)
      })
    ))

  it.effect("waitReady returns the final statuses once a pod is Running and Ready", () =>
    withCluster((cluster) =>
      Effect.gen(function*() {
        const pod = {
          apiVersion: "v1",
          kind: "Pod",
          metadata: { name: "p" },
          spec: { containers: [{ name: "c", image: "busybox" }] }
        }
        const refs = yield* Manifests.apply([pod], { namespace: "default" })
        cluster.reset()
        const fiber = yield* Effect.forkChild(Manifests.waitReady(refs, { namespace: "default" }))
        yield* polled(cluster, 1)
        cluster.setPodPhase("default", "p", "Running")
        yield* TestClock.adjust("2 seconds")
        const statuses = yield* Fiber.join(fiber)
        assert.deepStrictEqual(statuses.map((s) => `${s.ref.name} ${s.status}`), ["p Current"])
      })
    ))

  it.effect("waitReady fails on timeout with NotReady naming each object that is not ready, and why", () =>
    withCluster((cluster) =>
      Effect.gen(function*() {
        const refs = yield* Manifests.apply([configMap("a"), deployment("web")], { namespace: "default" })
        cluster.reset()
        const wait = Manifests.waitReady(refs, { namespace: "default", timeout: "10 seconds" })
        const fiber = yield* Effect.forkChild(failureOf(wait))
        yield* polled(cluster, 2)
        yield* TestClock.adjust("10 seconds")
        const error = yield* Fiber.join(fiber)
        assert.instanceOf(error, NotReady)
        const notReady = error as NotReady
        assert.strictEqual(notReady.reason, "Timeout")
        assert.deepStrictEqual(notReady.objects.map((o) => o.ref.name), ["web"])
        // the first line names what is not ready; the rest (the explanation, read as the wait ended) says why
        const [first, ...why] = notReady.message.split("\n")
        assert.strictEqual(first, "not ready after 10s: Deployment default/web is InProgress: Replicas: 0/1")
        assert.deepStrictEqual(why, ["Deployment default/web: 0/1 available"])
        assert.strictEqual(notReady.explanation?.[0]?.summary, "0/1 available")
      })
    ))

  it.effect("a failed Job ends the wait at once with the condition's message; failFast: false keeps waiting", () =>
    withCluster((cluster) =>
      Effect.gen(function*() {
        const job = {
          apiVersion: "batch/v1",
          kind: "Job",
          metadata: { name: "migrate" },
          spec: { template: { spec: { restartPolicy: "Never", containers: [{ name: "m", image: "busybox" }] } } }
        }
        const refs = yield* Manifests.apply([job], { namespace: "default" })
        const backoff = "Job has reached the specified backoff limit"
        cluster.failJob("default", "migrate", { reason: "BackoffLimitExceeded", message: backoff })
        const error = yield* failureOf(Manifests.waitReady(refs, { namespace: "default" }))
        assert.instanceOf(error, NotReady)
        assert.strictEqual((error as NotReady).reason, "Failed")
        assert.strictEqual(
          error.message.split("\n")[0],
          `an object failed: Job default/migrate is Failed: Job failed (1 failed pod(s)): BackoffLimitExceeded: ${backoff}`
        )
        assert.strictEqual(
          (error as NotReady).explained,
          `Job default/migrate: 0 succeeded, 0 active, 1 failed, BackoffLimitExceeded: ${backoff}`
        )

        cluster.reset()
        const patientWait = Manifests.waitReady(refs, { namespace: "default", failFast: false, timeout: "1 minute" })
        const patient = yield* Effect.forkChild(failureOf(patientWait))
        yield* polled(cluster, 1)
        yield* TestClock.adjust("30 seconds")
        yield* polled(cluster, 15)
        assert.isUndefined(patient.pollUnsafe())
        yield* TestClock.adjust("30 seconds")
        assert.strictEqual(((yield* Fiber.join(patient)) as NotReady).reason, "Timeout")
      })
    ))

  it.effect("bad options are refused before any request", () =>
    withCluster((cluster) =>
      Effect.gen(function*() {
        const error = yield* failureOf(Manifests.waitReady([configMap("a")], { interval: "soon" as never }))
        assert.instanceOf(error, ValidationError)
        assert.match(error.message, /^interval: must be a duration/)
        assert.deepStrictEqual(cluster.requests(), [])
      })
    ))
})

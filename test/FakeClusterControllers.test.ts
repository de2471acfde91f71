/**
 * FakeCluster's core controllers and kubelet, seen by a client through the library's own
 * request path: Deployments roll out through ReplicaSets and pods, Jobs run pods to
 * completion, deletion is graceful, namespaces terminate with their contents, CRDs become
 * Established, and every delay is on the Effect Clock, so these tests step it with
 * `TestClock.adjust` instead of sleeping.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as TestClock from "effect/testing/TestClock"
import * as Kube from "../src/Kube.js"
import * as Patch from "../src/Patch.js"
import { ConfigMaps, Deployments, Namespaces, Pods, ServiceAccounts } from "../src/resources/index.js"
import * as FakeCluster from "../src/testing/FakeCluster.js"

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any

const fake = FakeCluster.FakeCluster

const deployment = (name: string, replicas: number, extra: Json = {}) => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name, namespace: "default" },
  spec: {
    replicas,
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: "web", image: "nginx" }] } },
    ...extra
  }
})

/** The objects of a kind, as the fake holds them. */
const list = (control: FakeCluster.Control, apiVersion: string, kind: string, namespace = "default"): Array<Json> =>
  control.list(apiVersion, kind, namespace) as Array<Json>

const get = (control: FakeCluster.Control, apiVersion: string, kind: string, name: string, namespace = "default") =>
  control.get({ apiVersion, kind, name, namespace }) as Json

const condition = (obj: Json, type: string): Json => (obj?.status?.conditions ?? []).find((c: Json) => c.type === type)

/** `new/old` ReplicaSet replicas of a deployment, newest revision first. */
const replicaSets = (control: FakeCluster.Control) =>
  list(control, "apps/v1", "ReplicaSet")
    .sort((a, b) =>
      Number(b.metadata.annotations["deployment.kubernetes.io/revision"]) -
      Number(a.metadata.annotations["deployment.kubernetes.io/revision"])
    )
    .map((rs) => `${rs.spec.replicas}/${rs.status?.availableReplicas ?? 0}`)

describe("Deployments", () => {
  it.effect("a Deployment gets a ReplicaSet and pods, which the kubelet runs on the TestClock", () =>
    Effect.gen(function*() {
      const control = yield* fake
      yield* Kube.api(Deployments).create(deployment("web", 3))
      const [rs] = list(control, "apps/v1", "ReplicaSet")
      assert.match(rs.metadata.name, /^web-[bcdfghjklmnpqrstvwxz2456789]+$/)
      const hash = rs.metadata.labels["pod-template-hash"]
      assert.deepStrictEqual(rs.spec.selector.matchLabels, { app: "web", "pod-template-hash": hash })
      assert.strictEqual(rs.metadata.annotations["deployment.kubernetes.io/revision"], "1")
      assert.strictEqual(rs.metadata.ownerReferences[0].kind, "Deployment")
      const pods = list(control, "v1", "Pod")
      assert.strictEqual(pods.length, 3)
      for (const pod of pods) {
        assert.match(pod.metadata.name, new RegExp(`^${rs.metadata.name}-[a-z0-9]{5}$`))
        assert.strictEqual(pod.spec.nodeName, "fake-node")
        assert.strictEqual(pod.status.phase, "Pending")
        assert.strictEqual(pod.metadata.ownerReferences[0].name, rs.metadata.name)
      }
      let d = get(control, "apps/v1", "Deployment", "web")
      assert.strictEqual(d.metadata.annotations["deployment.kubernetes.io/revision"], "1")
      assert.strictEqual(condition(d, "Available").status, "False")
      assert.strictEqual(condition(d, "Progressing").reason, "ReplicaSetUpdated")

      yield* TestClock.adjust("50 millis")
      for (const pod of list(control, "v1", "Pod")) {
        assert.strictEqual(pod.status.phase, "Running")
        assert.strictEqual(condition(pod, "Ready").status, "True")
      }
      d = get(control, "apps/v1", "Deployment", "web")
      assert.deepStrictEqual(
        [d.status.replicas, d.status.updatedReplicas, d.status.readyReplicas, d.status.availableReplicas],
        [3, 3, 3, 3]
      )
      assert.strictEqual(d.status.observedGeneration, d.metadata.generation)
      assert.deepStrictEqual(d.status.conditions.map((c: Json) => `${c.type}=${c.status}:${c.reason}`), [
        "Available=True:MinimumReplicasAvailable",
        "Progressing=True:NewReplicaSetAvailable"
      ])
      assert.strictEqual(
        condition(d, "Progressing").message,
        `ReplicaSet "${rs.metadata.name}" has successfully progressed.`
      )
    }).pipe(Effect.provide(FakeCluster.layer())))

  it.effect("a rolling update steps within maxSurge and maxUnavailable as the new pods become ready", () =>
    Effect.gen(function*() {
      const control = yield* fake
      const deployments = Kube.api(Deployments)
      yield* deployments.create(deployment("web", 4, {
        strategy: { type: "RollingUpdate", rollingUpdate: { maxSurge: 1, maxUnavailable: 1 } }
      }))
      yield* TestClock.adjust("50 millis")
      assert.deepStrictEqual(replicaSets(control), ["4/4"])
      // kubectl rollout restart: a new template annotation
      yield* deployments.patch(
        "web",
        Patch.strategic({
          spec: { template: { metadata: { annotations: { "kubectl.kubernetes.io/restartedAt": "now" } } } }
        })
      )
      // surge one new pod, take one old away: 5 pods at most, 3 available at least
      assert.deepStrictEqual(replicaSets(control), ["2/0", "3/3"])
      const steps: Array<ReadonlyArray<string>> = []
      for (let i = 0; i < 3; i++) {
        yield* TestClock.adjust("50 millis")
        steps.push(replicaSets(control))
      }
      assert.deepStrictEqual(steps, [["4/2", "1/1"], ["4/4", "0/0"], ["4/4", "0/0"]])
      const d = get(control, "apps/v1", "Deployment", "web")
      assert.strictEqual(d.metadata.annotations["deployment.kubernetes.io/revision"], "2")
      assert.strictEqual(condition(d, "Progressing").reason, "NewReplicaSetAvailable")
      assert.strictEqual(d.status.updatedReplicas, 4)
    }).pipe(Effect.provide(FakeCluster.layer())))

  it.effect("Recreate takes every old pod away before the new ReplicaSet scales up", () =>
    Effect.gen(function*() {
      const control = yield* fake
      const deployments = Kube.api(Deployments)
      yield* deployments.create(deployment("web", 2, { strategy: { type: "Recreate" } }))
      yield* TestClock.adjust("50 millis")
      const image = { spec: { template: { spec: { containers: [{ name: "web", image: "nginx:2" }] } } } }
      yield* deployments.patch("web", Patch.strategic(image))
      // the old pods are Terminating: no new ReplicaSet yet
      assert.deepStrictEqual(replicaSets(control), ["0/0"])
      assert.isTrue(list(control, "v1", "Pod").every((p) => p.metadata.deletionTimestamp !== undefined))
      yield* TestClock.adjust("50 millis")
      assert.deepStrictEqual(replicaSets(control), ["2/0", "0/0"])
      yield* TestClock.adjust("50 millis")
      assert.deepStrictEqual(replicaSets(control), ["2/2", "0/0"])
    }).pipe(Effect.provide(FakeCluster.layer())))

  it.effect("a rollout whose pods never become ready exceeds its progress deadline on the clock", () =>
    Effect.gen(function*() {
      const control = yield* fake
      yield* Kube.api(Deployments).create(deployment("stuck", 1, { progressDeadlineSeconds: 30 }))
      yield* TestClock.adjust("29 seconds")
      assert.strictEqual(condition(get(control, "apps/v1", "Deployment", "stuck"), "Progressing").status, "True")
      yield* TestClock.adjust("2 seconds")
      const progressing = condition(get(control, "apps/v1", "Deployment", "stuck"), "Progressing")
      assert.strictEqual(progressing.status, "False")
      assert.strictEqual(progressing.reason, "ProgressDeadlineExceeded")
    }).pipe(Effect.provide(FakeCluster.layer({ controllers: { kubelet: false } }))))

  it.effect("deleting a Deployment takes its ReplicaSets and pods (background), or orphans them", () =>
    Effect.gen(function*() {
      const control = yield* fake
      const api = Kube.api(Deployments)
      yield* api.create(deployment("web", 2))
      yield* api.create(deployment("kept", 1))
      yield* TestClock.adjust("50 millis")
      yield* api.delete("web")
      const owners = list(control, "apps/v1", "ReplicaSet").map((rs) => rs.metadata.ownerReferences[0].name)
      assert.deepStrictEqual(owners, ["kept"])
      const terminating = list(control, "v1", "Pod").filter((p) => p.metadata.labels.app === "web")
      assert.strictEqual(terminating.length, 2)
      assert.isTrue(terminating.every((p) => p.metadata.deletionTimestamp !== undefined))
      yield* TestClock.adjust("50 millis")
      assert.deepStrictEqual(list(control, "v1", "Pod").map((p) => p.metadata.labels.app), ["kept"])

      yield* api.delete("kept", { propagationPolicy: "Orphan" })
      assert.isUndefined(get(control, "apps/v1", "Deployment", "kept"))
      const [rs] = list(control, "apps/v1", "ReplicaSet")
      assert.isUndefined(rs.metadata.ownerReferences)
    }).pipe(Effect.provide(FakeCluster.layer())))

  it.effect("with the deployment controller off a test plays it: no ReplicaSet appears", () =>
    Effect.gen(function*() {
      const control = yield* fake
      yield* Kube.api(Deployments).create(deployment("web", 2))
      assert.deepStrictEqual(list(control, "apps/v1", "ReplicaSet"), [])
      assert.isUndefined(get(control, "apps/v1", "Deployment", "web").status?.conditions)
    }).pipe(Effect.provide(FakeCluster.layer({ controllers: { deployment: false } }))))
})

describe("graceful deletion", () => {
  const pod = (name: string, extra: Json = {}) => ({
    metadata: { name },
    spec: { containers: [{ name: "main", image: "busybox" }], ...extra }
  })

  it.effect("a scheduled pod is Terminating until the kubelet stops it; the DELETE answers it so", () =>
    Effect.gen(function*() {
      const control = yield* fake
      const pods = Kube.api(Pods)
      yield* pods.create(pod("web"))
      yield* TestClock.adjust("50 millis")
      const answer = yield* pods.deleteWithResult("web")
      assert.strictEqual(answer._tag, "Object")
      const deleted = answer._tag === "Object" ? answer.object : undefined
      assert.strictEqual(deleted?.metadata?.deletionGracePeriodSeconds, 30)
      assert.strictEqual(deleted?.metadata?.deletionTimestamp, "1970-01-01T00:00:30Z")
      assert.isTrue(Option.isSome(yield* pods.get("web")))
      yield* TestClock.adjust("50 millis")
      assert.isTrue(Option.isNone(yield* pods.get("web")))
    }).pipe(Effect.provide(FakeCluster.layer())))

  it.effect("containers that take their time hold the pod until its grace period ends", () =>
    Effect.gen(function*() {
      const pods = Kube.api(Pods)
      yield* pods.create(pod("slow", { terminationGracePeriodSeconds: 10 }))
      yield* TestClock.adjust("50 millis")
      yield* pods.delete("slow")
      yield* TestClock.adjust("9 seconds")
      assert.isTrue(Option.isSome(yield* pods.get("slow")))
      yield* TestClock.adjust("1 second")
      assert.isTrue(Option.isNone(yield* pods.get("slow")))
    }).pipe(Effect.provide(FakeCluster.layer({ controllers: { kubelet: { podStopMs: 60_000 } } }))))

  it.effect("a pod no kubelet took (kubelet off: unscheduled) and a finished pod go at once", () =>
    Effect.gen(function*() {
      const control = yield* fake
      const pods = Kube.api(Pods)
      yield* pods.create(pod("unscheduled"))
      yield* pods.delete("unscheduled")
      assert.isTrue(Option.isNone(yield* pods.get("unscheduled")))
      control.seed([{
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "done" },
        spec: { nodeName: "n1", containers: [{ name: "main", image: "busybox" }] },
        status: { phase: "Succeeded" }
      }])
      yield* pods.delete("done")
      assert.isTrue(Option.isNone(yield* pods.get("done")))
    }).pipe(Effect.provide(FakeCluster.layer({ controllers: { kubelet: false } }))))
})

describe("namespaces", () => {
  const configMap = (name: string, namespace: string) => ({ metadata: { name, namespace }, data: { a: "1" } })

  it.effect("writing into a namespace that does not exist is 404; autoCreateNamespaces creates it", () =>
    Effect.gen(function*() {
      const missing = yield* Effect.result(Kube.api(ConfigMaps, { namespace: "nope" }).create(configMap("a", "nope")))
      assert.isTrue(Result.isFailure(missing))
      const error = Result.isFailure(missing) ? missing.failure : undefined
      assert.strictEqual(error?._tag, "ApiError")
      assert.include(error?.message, `404 NotFound: namespaces "nope" not found`)
      const created = yield* Kube.api(ConfigMaps, { namespace: "fresh" }).create(configMap("a", "fresh")).pipe(
        Effect.provide(FakeCluster.layer({ autoCreateNamespaces: true }))
      )
      assert.strictEqual(created.metadata?.namespace, "fresh")
    }).pipe(Effect.provide(FakeCluster.layer())))

  it.effect("every namespace gets the ServiceAccount default and the ConfigMap kube-root-ca.crt", () =>
    Effect.gen(function*() {
      yield* Kube.api(Namespaces).create({ metadata: { name: "team" } })
      const sa = yield* Kube.api(ServiceAccounts, { namespace: "team" }).get("default")
      assert.isTrue(Option.isSome(sa))
      const ca = Option.getOrThrow(yield* Kube.api(ConfigMaps, { namespace: "team" }).get("kube-root-ca.crt"))
      assert.match(ca.data?.["ca.crt"] ?? "", /^-----BEGIN CERTIFICATE-----\n/)
      // deleted, they come back
      yield* Kube.api(ServiceAccounts, { namespace: "team" }).delete("default")
      assert.isTrue(Option.isSome(yield* Kube.api(ServiceAccounts, { namespace: "team" }).get("default")))
    }).pipe(Effect.provide(FakeCluster.layer())))

  it.effect("a deleted namespace terminates: no new content, its contents go after a while, then it goes", () =>
    Effect.gen(function*() {
      const control = yield* fake
      const namespaces = Kube.api(Namespaces)
      yield* namespaces.create({ metadata: { name: "team" } })
      const configMaps = Kube.api(ConfigMaps, { namespace: "team" })
      yield* configMaps.create(configMap("settings", "team"))
      yield* Kube.api(Pods, { namespace: "team" }).create({
        metadata: { name: "web" },
        spec: { containers: [{ name: "main", image: "nginx" }] }
      })
      yield* TestClock.adjust("50 millis")
      yield* namespaces.delete("team")
      const ns = Option.getOrThrow(yield* namespaces.get("team"))
      assert.strictEqual(ns.status?.phase, "Terminating")
      const refused = yield* Effect.result(configMaps.create(configMap("late", "team")))
      assert.include(
        Result.isFailure(refused) ? refused.failure.message : "",
        `403 Forbidden: configmaps "late" is forbidden: ` +
          "unable to create new content in namespace team because it is being terminated"
      )
      // the contents are still there while the controller has not started
      assert.isTrue(Option.isSome(yield* configMaps.get("settings")))
      yield* TestClock.adjust("500 millis")
      assert.isTrue(Option.isNone(yield* configMaps.get("settings")))
      const waiting = Option.getOrThrow(yield* namespaces.get("team"))
      assert.strictEqual(
        condition(waiting, "NamespaceContentRemaining").message,
        "Some resources are remaining: pods. has 1 resource instances"
      )
      yield* TestClock.adjust("50 millis")
      assert.isTrue(Option.isNone(yield* namespaces.get("team")))
      assert.deepStrictEqual(list(control, "v1", "Pod", "team"), [])
    }).pipe(Effect.provide(FakeCluster.layer())))

  it.effect("default, kube-system and kube-public may not be deleted", () =>
    Effect.gen(function*() {
      const refused = yield* Effect.result(Kube.api(Namespaces).delete("default"))
      assert.include(
        Result.isFailure(refused) ? refused.failure.message : "",
        `403 Forbidden: namespaces "default" is forbidden: this namespace may not be deleted`
      )
    }).pipe(Effect.provide(FakeCluster.layer())))
})

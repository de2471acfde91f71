/**
 * FakeCluster's core controllers and kubelet, seen by a client through the library's own
 * request path: Deployments roll out through ReplicaSets and pods, Jobs run pods to
 * completion, deletion is graceful, namespaces terminate with their contents, CRDs become
 * Established, and every delay is on the Effect Clock, so these tests step it with
 * `TestClock.adjust` instead of sleeping.
 */
import { assert, describe, it } from "@effect/vitest"
import * as HttpClient from "effect/http/HttpClient"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Result from "effect/Result"
import * as TestClock from "effect/testing/TestClock"
import * as Kube from "../../packages/effect-kube/src/Kube.js"
import * as KubeConfig from "../../packages/effect-kube/src/KubeConfig.js"
import * as Patch from "../../packages/effect-kube/src/Patch.js"
import {
  Bindings,
  ConfigMaps,
  CustomResourceDefinitions,
  Deployments,
  Jobs,
  LocalSubjectAccessReviews,
  Namespaces,
  PodDisruptionBudgets,
  Pods,
  SelfSubjectAccessReviews,
  SelfSubjectReviews,
  SelfSubjectRulesReviews,
  ServiceAccounts,
  Services,
  SubjectAccessReviews,
  TokenReviews
} from "../../packages/effect-kube/src/resources/index.js"
import { FakeCluster } from "@effect-kube/testing"

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

  // what a real API server refuses, stored by a fake that does not validate: the controllers do what
  // kube-controller-manager does with it, once, and go quiet
  it.effect("a template its selector does not select: no ReplicaSet, the refusal in Progressing, then quiet", () =>
    Effect.gen(function*() {
      const control = yield* fake
      const mismatched = deployment("web", 2)
      mismatched.spec.template.metadata.labels = { app: "other" }
      yield* Kube.api(Deployments).create(mismatched)
      yield* TestClock.adjust("1 second")
      assert.deepStrictEqual(list(control, "apps/v1", "ReplicaSet"), [])
      const progressing = condition(get(control, "apps/v1", "Deployment", "web"), "Progressing")
      assert.strictEqual(progressing.status, "False")
      assert.strictEqual(progressing.reason, "ReplicaSetCreateError")
      const hash = "[bcdfghjklmnpqrstvwxz2456789]+"
      assert.match(
        progressing.message,
        new RegExp(
          `^Failed to create new replica set "web-${hash}": ReplicaSet.apps "web-${hash}" is invalid: ` +
            `spec.template.metadata.labels: Invalid value: map\\[string\\]string\\{"app":"other", ` +
            `"pod-template-hash":"${hash}"\\}: \`selector\` does not match template \`labels\`$`
        )
      )
      const rv = control.resourceVersion()
      yield* TestClock.adjust("1 hour")
      assert.strictEqual(control.resourceVersion(), rv)
    }).pipe(Effect.provide(FakeCluster.layer({ validation: false }))))

  it.effect("a selector LabelSelectorAsSelector refuses (an unknown operator): the controllers write nothing", () =>
    Effect.gen(function*() {
      const control = yield* fake
      const odd = deployment("web", 2)
      odd.spec.selector.matchExpressions = [{ key: "app", operator: "Near", values: ["web"] }]
      yield* Kube.api(Deployments).create(odd)
      const rv = control.resourceVersion()
      yield* TestClock.adjust("1 hour")
      assert.strictEqual(control.resourceVersion(), rv)
      assert.deepStrictEqual(list(control, "apps/v1", "ReplicaSet"), [])
      assert.deepStrictEqual(get(control, "apps/v1", "Deployment", "web").status ?? {}, {})
    }).pipe(Effect.provide(FakeCluster.layer({ validation: false }))))

  it.effect("under simulate.completePods a Deployment settles: its containers exit and restart, its pods stay", () =>
    Effect.gen(function*() {
      const control = yield* fake
      yield* Kube.api(Deployments).create(deployment("done", 2))
      yield* TestClock.adjust("50 millis")
      const names = list(control, "v1", "Pod").map((p) => p.metadata.name).sort()
      const statusOf = (pod: Json) => pod.status.containerStatuses[0]
      // the first exit is restarted at once: Running and ready again, one restart
      yield* TestClock.adjust("150 millis")
      for (const pod of list(control, "v1", "Pod")) {
        assert.strictEqual(pod.status.phase, "Running")
        assert.strictEqual(statusOf(pod).restartCount, 1)
        assert.deepStrictEqual(Object.keys(statusOf(pod).state), ["running"])
        assert.strictEqual(statusOf(pod).lastState.terminated.reason, "Completed")
        assert.strictEqual(statusOf(pod).lastState.terminated.exitCode, 0)
      }
      // the second waits out the kubelet's back-off of 10s, not ready meanwhile
      yield* TestClock.adjust("150 millis")
      for (const pod of list(control, "v1", "Pod")) {
        assert.strictEqual(pod.status.phase, "Running")
        assert.strictEqual(statusOf(pod).ready, false)
        assert.strictEqual(statusOf(pod).state.waiting.reason, "CrashLoopBackOff")
        assert.strictEqual(
          statusOf(pod).state.waiting.message,
          `back-off 10s restarting failed container=web pod=${pod.metadata.name}_default(${pod.metadata.uid})`
        )
        assert.strictEqual(condition(pod, "Ready").status, "False")
        assert.strictEqual(condition(pod, "Ready").message, "containers with unready status: [web]")
      }
      yield* TestClock.adjust("10 seconds")
      for (const pod of list(control, "v1", "Pod")) {
        assert.strictEqual(statusOf(pod).restartCount, 2)
        assert.strictEqual(condition(pod, "Ready").status, "True")
      }
      // an hour on: the back-off grew to its 5 minutes, and the same two pods are still there, never replaced
      yield* TestClock.adjust("1 hour")
      const pods = list(control, "v1", "Pod")
      assert.deepStrictEqual(pods.map((p) => p.metadata.name).sort(), names)
      for (const pod of pods) {
        assert.strictEqual(pod.status.phase, "Running")
        assert.isAbove(statusOf(pod).restartCount, 10)
        assert.isBelow(statusOf(pod).restartCount, 20)
      }
      assert.strictEqual(list(control, "apps/v1", "ReplicaSet").length, 1)
      const waiting = pods.map(statusOf).find((s: Json) => s.state.waiting !== undefined)
      if (waiting !== undefined) assert.match(waiting.state.waiting.message, /^back-off (5m0s|2m40s) /)

      // restartPolicy Never and OnFailure: the pod's containers stay exited and it Succeeds
      for (const policy of ["Never", "OnFailure"]) {
        yield* Kube.api(Pods).create({
          metadata: { name: `once-${policy.toLowerCase()}` },
          spec: { restartPolicy: policy, containers: [{ name: "main", image: "busybox" }] }
        })
      }
      yield* TestClock.adjust("200 millis")
      for (const policy of ["never", "onfailure"]) {
        const pod = get(control, "v1", "Pod", `once-${policy}`)
        assert.strictEqual(pod.status.phase, "Succeeded")
        assert.strictEqual(statusOf(pod).restartCount, 0)
        assert.strictEqual(statusOf(pod).state.terminated.reason, "Completed")
      }
    }).pipe(Effect.provide(FakeCluster.layer({ simulate: true }))))

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

  it.live("on the default Clock the kubelet's delays are the machine's timers: a pod starts, then stops when deleted", () =>
    Effect.gen(function*() {
      const pods = Kube.api(Pods)
      yield* pods.create(pod("live"))
      const phase = () => Effect.map(pods.get("live"), Option.map((p) => p.status?.phase))
      assert.deepStrictEqual(yield* phase(), Option.some("Pending"))
      yield* Effect.sleep("60 millis")
      assert.deepStrictEqual(yield* phase(), Option.some("Running"))
      yield* pods.delete("live")
      assert.isTrue(Option.isSome(yield* pods.get("live")))
      yield* Effect.sleep("40 millis")
      assert.isTrue(Option.isNone(yield* pods.get("live")))
    }).pipe(Effect.provide(FakeCluster.layer({ controllers: { kubelet: { podStartMs: 20, podStopMs: 20 } } }))))
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

describe("Jobs", () => {
  const job = (name: string, spec: Json = {}) => ({
    apiVersion: "batch/v1",
    kind: "Job",
    metadata: { name, namespace: "default" },
    spec: {
      template: { spec: { restartPolicy: "Never", containers: [{ name: "main", image: "busybox" }] } },
      ...spec
    }
  })

  it.effect("a Job runs pods one at a time until its completions succeed, then is Complete", () =>
    Effect.gen(function*() {
      const control = yield* fake
      yield* Kube.api(Jobs).create(job("twice", { completions: 2 }))
      let pods = list(control, "v1", "Pod")
      assert.strictEqual(pods.length, 1)
      assert.strictEqual(pods[0].metadata.labels["job-name"], "twice")
      assert.deepStrictEqual(pods[0].metadata.finalizers, ["batch.kubernetes.io/job-tracking"])
      let status = get(control, "batch/v1", "Job", "twice").status
      assert.strictEqual(status.active, 1)
      assert.strictEqual(status.startTime, "1970-01-01T00:00:00Z")
      // start (50 ms) and run (150 ms) on the clock: one succeeded, the second pod starts
      yield* TestClock.adjust("200 millis")
      status = get(control, "batch/v1", "Job", "twice").status
      assert.strictEqual(status.succeeded, 1)
      assert.strictEqual(status.active, 1)
      pods = list(control, "v1", "Pod")
      assert.isTrue(pods.every((p) => p.metadata.finalizers === undefined || p.status.phase !== "Succeeded"))
      yield* TestClock.adjust("200 millis")
      const done = get(control, "batch/v1", "Job", "twice")
      assert.strictEqual(done.status.succeeded, 2)
      assert.isUndefined(done.status.active)
      assert.strictEqual(done.status.completionTime, "1970-01-01T00:00:00Z")
      assert.deepStrictEqual(done.status.conditions.map((c: Json) => `${c.type}:${c.reason}`), [
        "SuccessCriteriaMet:CompletionsReached",
        "Complete:CompletionsReached"
      ])
    }).pipe(Effect.provide(FakeCluster.layer())))

  it.effect("failed pods are replaced after the back-off until the backoffLimit is passed", () =>
    Effect.gen(function*() {
      const control = yield* fake
      yield* Kube.api(Jobs).create(job("flaky", { backoffLimit: 1 }))
      const fail = () => {
        const pod = list(control, "v1", "Pod").find((p) => p.status.phase !== "Failed")
        control.setPodPhase("default", pod.metadata.name, "Failed")
      }
      fail()
      assert.strictEqual(get(control, "batch/v1", "Job", "flaky").status.failed, 1)
      assert.strictEqual(list(control, "v1", "Pod").filter((p) => p.status.phase !== "Failed").length, 0)
      yield* TestClock.adjust("9 seconds")
      assert.strictEqual(list(control, "v1", "Pod").length, 1)
      yield* TestClock.adjust("1 second")
      assert.strictEqual(list(control, "v1", "Pod").length, 2)
      fail()
      const failed = get(control, "batch/v1", "Job", "flaky")
      assert.strictEqual(failed.status.failed, 2)
      assert.deepStrictEqual(failed.status.conditions.map((c: Json) => `${c.type}:${c.reason}`), [
        "FailureTarget:BackoffLimitExceeded",
        "Failed:BackoffLimitExceeded"
      ])
    }).pipe(Effect.provide(FakeCluster.layer({ controllers: { kubelet: { podRunMs: Infinity } } }))))

  it.effect("ttlSecondsAfterFinished deletes a finished Job and its pods on the clock", () =>
    Effect.gen(function*() {
      const control = yield* fake
      yield* Kube.api(Jobs).create(job("brief", { ttlSecondsAfterFinished: 60 }))
      yield* TestClock.adjust("200 millis")
      assert.isDefined(condition(get(control, "batch/v1", "Job", "brief"), "Complete"))
      yield* TestClock.adjust("60 seconds")
      assert.isUndefined(get(control, "batch/v1", "Job", "brief"))
      assert.deepStrictEqual(list(control, "v1", "Pod"), [])
    }).pipe(Effect.provide(FakeCluster.layer())))
})

describe("other controllers", () => {
  it.effect("a CustomResourceDefinition becomes NamesAccepted and Established; deleting it deletes its objects first", () =>
    Effect.gen(function*() {
      const control = yield* fake
      const crds = Kube.api(CustomResourceDefinitions)
      yield* crds.create({
        metadata: { name: "widgets.example.com" },
        spec: {
          group: "example.com",
          scope: "Namespaced",
          names: { plural: "widgets", kind: "Widget" },
          versions: [{
            name: "v1",
            served: true,
            storage: true,
            schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } }
          }]
        }
      })
      const crd = Option.getOrThrow(yield* crds.get("widgets.example.com"))
      assert.deepStrictEqual(crd.status?.conditions?.map((c) => `${c.type}=${c.status}:${c.reason}`), [
        "NamesAccepted=True:NoConflicts",
        "Established=True:InitialNamesAccepted"
      ])
      assert.deepStrictEqual(crd.status?.acceptedNames, {
        plural: "widgets",
        singular: "widget",
        kind: "Widget",
        listKind: "WidgetList"
      })
      assert.deepStrictEqual(crd.status?.storedVersions, ["v1"])
      control.seed([{
        apiVersion: "example.com/v1",
        kind: "Widget",
        metadata: { name: "held", finalizers: ["example.com/keep"] }
      }])
      yield* crds.delete("widgets.example.com")
      // the cleanup starts at the controller's pace, as kube-apiserver's does
      yield* TestClock.adjust("1 second")
      const terminating = Option.getOrThrow(yield* crds.get("widgets.example.com"))
      assert.deepStrictEqual(terminating.metadata?.finalizers, ["customresourcecleanup.apiextensions.k8s.io"])
      assert.strictEqual(condition(terminating, "Terminating").reason, "InstanceDeletionInProgress")
      control.update({ apiVersion: "example.com/v1", kind: "Widget", name: "held" }, { metadata: { finalizers: null } })
      assert.isTrue(Option.isNone(yield* crds.get("widgets.example.com")))
    }).pipe(Effect.provide(FakeCluster.layer())))

  it.effect("a PodDisruptionBudget gets its status and a Service its EndpointSlice as pods become ready", () =>
    Effect.gen(function*() {
      const control = yield* fake
      yield* Kube.api(Deployments).create(deployment("web", 2))
      yield* Kube.api(PodDisruptionBudgets).create({
        metadata: { name: "web" },
        spec: { minAvailable: 1, selector: { matchLabels: { app: "web" } } }
      })
      yield* Kube.api(Services).create({
        metadata: { name: "web" },
        spec: { selector: { app: "web" }, ports: [{ name: "http", port: 80, targetPort: 8080 }] }
      })
      let pdb = get(control, "policy/v1", "PodDisruptionBudget", "web")
      assert.deepStrictEqual(
        [pdb.status.expectedPods, pdb.status.currentHealthy, pdb.status.desiredHealthy, pdb.status.disruptionsAllowed],
        [2, 0, 1, 0]
      )
      assert.strictEqual(condition(pdb, "DisruptionAllowed").reason, "InsufficientPods")
      yield* TestClock.adjust("50 millis")
      pdb = get(control, "policy/v1", "PodDisruptionBudget", "web")
      assert.deepStrictEqual([pdb.status.currentHealthy, pdb.status.disruptionsAllowed], [2, 1])
      assert.strictEqual(condition(pdb, "DisruptionAllowed").reason, "SufficientPods")
      const [slice] = list(control, "discovery.k8s.io/v1", "EndpointSlice")
      assert.strictEqual(slice.metadata.labels["kubernetes.io/service-name"], "web")
      assert.strictEqual(slice.metadata.ownerReferences[0].kind, "Service")
      assert.deepStrictEqual(slice.ports, [{ name: "http", port: 8080, protocol: "TCP" }])
      assert.strictEqual(slice.endpoints.length, 2)
      assert.isTrue(slice.endpoints.every((e: Json) => e.conditions.ready && e.targetRef.kind === "Pod"))
    }).pipe(Effect.provide(FakeCluster.layer())))

  it.effect("the kubelet starts ephemeral containers and takes up a resize", () =>
    Effect.gen(function*() {
      const control = yield* fake
      const pods = Kube.api(Pods)
      yield* pods.create({
        metadata: { name: "web" },
        spec: {
          containers: [{
            name: "main",
            image: "nginx",
            resources: { requests: { cpu: "100m" }, limits: { cpu: "200m" } }
          }]
        }
      })
      yield* TestClock.adjust("50 millis")
      yield* pods.patchEphemeralContainers(
        "web",
        Patch.strategic({ spec: { ephemeralContainers: [{ name: "debug", image: "busybox" }] } })
      )
      const debugged = get(control, "v1", "Pod", "web")
      assert.deepStrictEqual(debugged.status.ephemeralContainerStatuses.map((s: Json) => Object.keys(s.state)), [
        ["running"]
      ])
      yield* pods.patchResize(
        "web",
        Patch.strategic({
          spec: { containers: [{ name: "main", resources: { requests: { cpu: "150m" }, limits: { cpu: "200m" } } }] }
        })
      )
      const resized = get(control, "v1", "Pod", "web")
      assert.deepStrictEqual(resized.status.containerStatuses[0].resources.requests, { cpu: "150m" })
      assert.deepStrictEqual(resized.status.containerStatuses[0].allocatedResources, { cpu: "150m" })
      assert.strictEqual(resized.status.observedGeneration, resized.metadata.generation)
    }).pipe(Effect.provide(FakeCluster.layer())))

  it.effect("seeded objects are left as given: no ReplicaSet for a seeded Deployment, seeded pods keep their phase", () =>
    Effect.gen(function*() {
      const control = yield* fake
      control.seed([deployment("web", 2), {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "p" },
        spec: { containers: [{ name: "main", image: "busybox" }] },
        status: { phase: "Pending" }
      }])
      yield* TestClock.adjust("1 second")
      assert.deepStrictEqual(list(control, "apps/v1", "ReplicaSet"), [])
      assert.strictEqual(get(control, "v1", "Pod", "p").status.phase, "Pending")
      assert.isUndefined(get(control, "v1", "Pod", "p").spec.nodeName)
    }).pipe(Effect.provide(FakeCluster.layer())))
})

describe("service-account tokens", () => {
  it.effect("createToken answers an RS256 JWT with the service-account claims, which TokenReview authenticates", () =>
    Effect.gen(function*() {
      const accounts = Kube.api(ServiceAccounts)
      const account = Option.getOrThrow(yield* accounts.get("default"))
      const { expirationTimestamp, token } = yield* accounts.createToken("default", { audiences: ["vault"] })
      const jwt = Redacted.value(token)
      const [header, payload] = jwt.split(".").slice(0, 2).map((part) => JSON.parse(Buffer.from(part, "base64url").toString()))
      assert.strictEqual(header.alg, "RS256")
      assert.isString(header.kid)
      assert.deepStrictEqual(Object.keys(payload), ["aud", "exp", "iat", "iss", "jti", "kubernetes.io", "nbf", "sub"])
      assert.deepStrictEqual(payload.aud, ["vault"])
      assert.strictEqual(payload.iss, "https://kubernetes.default.svc.cluster.local")
      assert.strictEqual(payload.sub, "system:serviceaccount:default:default")
      assert.deepStrictEqual(payload["kubernetes.io"], {
        namespace: "default",
        serviceaccount: { name: "default", uid: account.metadata?.uid }
      })
      assert.strictEqual(payload.exp - payload.iat, 3600)
      assert.strictEqual(expirationTimestamp, "1970-01-01T01:00:00Z")

      const review = (audiences?: ReadonlyArray<string>) =>
        Kube.api(TokenReviews).create({ spec: { token: jwt, ...(audiences !== undefined ? { audiences } : {}) } })
      const reviewed = yield* review(["vault"])
      assert.isTrue(reviewed.status?.authenticated)
      assert.strictEqual(reviewed.status?.user?.username, "system:serviceaccount:default:default")
      assert.deepStrictEqual(reviewed.status?.user?.groups, [
        "system:serviceaccounts",
        "system:serviceaccounts:default",
        "system:authenticated"
      ])
      assert.deepStrictEqual(reviewed.status?.audiences, ["vault"])
      // another audience, an expired token, a deleted account: refused
      assert.isUndefined((yield* review()).status?.authenticated)
      yield* TestClock.adjust("61 minutes")
      assert.include((yield* review(["vault"])).status?.error, "service account token has expired")
    }).pipe(Effect.provide(FakeCluster.layer())))

  it.effect("the review kinds are created without a name, as on a real server, and answered with a status", () =>
    Effect.gen(function*() {
      const resourceAttributes = { verb: "create", resource: "pods", namespace: "default" }
      const self = yield* Kube.api(SelfSubjectAccessReviews).create({ spec: { resourceAttributes } })
      assert.isTrue(self.status?.allowed)
      assert.isUndefined(self.metadata?.name)
      const subject = yield* Kube.api(SubjectAccessReviews).create({ spec: { user: "jane", resourceAttributes } })
      assert.isTrue(subject.status?.allowed)
      const local = yield* Kube.api(LocalSubjectAccessReviews, { namespace: "default" }).create({
        spec: { user: "jane", resourceAttributes }
      })
      assert.isTrue(local.status?.allowed)
      assert.strictEqual(local.metadata?.namespace, "default")
      const rules = yield* Kube.api(SelfSubjectRulesReviews).create({ spec: { namespace: "default" } })
      assert.deepStrictEqual(rules.status?.resourceRules?.[0]?.verbs, ["*"])
      const whoami = yield* Kube.api(SelfSubjectReviews).create({})
      assert.strictEqual(whoami.status?.userInfo?.username, "fake-admin")
      // a Binding, create-only too, names the pod it binds: still refused without one, before any request
      const control = yield* fake
      const before = control.requests().length
      const binding = yield* Effect.result(
        Kube.api(Bindings, { namespace: "default" }).create({ target: { kind: "Node", name: "fake-node" } })
      )
      assert.isTrue(Result.isFailure(binding) && binding.failure._tag === "ValidationError")
      assert.strictEqual(control.requests().length, before)
    }).pipe(Effect.provide(FakeCluster.layer())))

  it.effect("a token authenticates requests to a fake that requires a bearer token, until its account is gone", () =>
    Effect.gen(function*() {
      const server = FakeCluster.makeServer({ token: "admin" })
      yield* Effect.addFinalizer(() => Effect.sync(() => server.close()))
      const as = (bearer: string) =>
        Layer.merge(
          KubeConfig.layerFrom({ server: "http://fake-cluster.local", namespace: "default", token: bearer }),
          Layer.succeed(HttpClient.HttpClient, FakeCluster.httpClient(server))
        )
      const { token } = yield* Kube.api(ServiceAccounts).createToken("default").pipe(Effect.provide(as("admin")))
      const jwt = Redacted.value(token)
      const listed = yield* Kube.api(ConfigMaps).list().pipe(Effect.provide(as(jwt)))
      assert.deepStrictEqual(listed.items.map((c) => c.metadata?.name), ["kube-root-ca.crt"])
      const forged = yield* Effect.result(Kube.api(ConfigMaps).list().pipe(Effect.provide(as(`${jwt.slice(0, -4)}AAAA`))))
      assert.isTrue(Result.isFailure(forged) && forged.failure.message.includes("401 Unauthorized"))
      yield* Kube.api(ServiceAccounts).delete("default").pipe(Effect.provide(as("admin")))
      const gone = yield* Effect.result(Kube.api(ConfigMaps).list().pipe(Effect.provide(as(jwt))))
      assert.isTrue(Result.isFailure(gone) && gone.failure.message.includes("401 Unauthorized"))
    }))
})

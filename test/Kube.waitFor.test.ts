import * as HttpClient from "effect/http/HttpClient"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import { pipe } from "effect/Function"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as TestClock from "effect/testing/TestClock"
import * as Condition from "../packages/effect-kube/src/Condition.js"
import { ValidationError, WaitTimeout } from "../packages/effect-kube/src/Errors.js"
import * as Kube from "../packages/effect-kube/src/Kube.js"
import * as RequestPolicy from "../packages/effect-kube/src/RequestPolicy.js"
import { type Job, Jobs } from "../packages/effect-kube/src/resources/index.js"
import { type Pod, Pods } from "../packages/effect-kube/src/resources/index.js"
import { FakeCluster } from "@effect-kube/testing"
import * as Loopback from "./util/loopback.js"
import { pod as seedPod, podRef as ref } from "./util/pods.js"

/** A Pending pod, as a kubelet would report one before it starts. */
const pod = (name: string) => ({ ...seedPod(name), status: { phase: "Pending" } })

const pods = Kube.api(Pods, { namespace: "default" })


const objectGets = (cluster: FakeCluster.Control) =>
  cluster.requests().filter((r) => r.method === "GET" && r.path.startsWith("/api/v1/namespaces/default/pods/"))
const watches = (cluster: FakeCluster.Control) => cluster.requests().filter((r) => r.query["watch"] === "true")
const lists = (cluster: FakeCluster.Control) =>
  cluster.requests().filter((r) => r.path === "/api/v1/namespaces/default/pods" && r.query["watch"] === undefined)

const noRetries = RequestPolicy.layer({ readRetries: Schedule.recurs(0), throttleRetries: 0, timeout: null })
const fake = () => Layer.merge(FakeCluster.layer(), noRetries)

const until = (check: () => boolean, what: string) =>
  Effect.flatMap(Loopback.eventually(check), (ok) => Effect.sync(() => assert.isTrue(ok, what)))

describe("waitFor", () => {
  it.effect("returns at once when the condition already holds, after a single get", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      cluster.seed([pod("web")])
      cluster.setPodPhase("default", "web", "Running")
      const running = Option.getOrUndefined(yield* pods.waitFor("web", Condition.podRunning, { timeout: "1 minute" }))
      assert.strictEqual(running?.status?.phase, "Running")
      assert.strictEqual(cluster.requests().length, 1)
      const absent = yield* pods.waitFor("nothing", Condition.deleted, { timeout: "1 minute" })
      assert.isTrue(Option.isNone(absent))
      assert.strictEqual(cluster.requests().length, 2)
    }).pipe(Effect.provide(fake())))

  it.effect("watches by name from the get's resourceVersion until the condition holds", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      const [seeded] = cluster.seed([pod("web"), pod("other")])
      const fiber = yield* Effect.forkChild(pods.waitFor("web", Condition.podSucceeded, { timeout: "1 minute" }))
      yield* until(() => cluster.openWatches() === 1, "watch open")
      cluster.setPodPhase("default", "other", "Succeeded")
      cluster.setPodPhase("default", "web", "Running")
      cluster.setPodPhase("default", "web", "Succeeded")
      const done = Option.getOrUndefined(yield* Fiber.join(fiber))
      assert.strictEqual(done?.metadata?.name, "web")
      assert.strictEqual(done?.status?.phase, "Succeeded")
      assert.deepStrictEqual(watches(cluster).map((r) => r.query), [{
        watch: "true",
        fieldSelector: "metadata.name=web",
        resourceVersion: seeded!.metadata.resourceVersion,
        allowWatchBookmarks: "true",
        timeoutSeconds: "290"
      }])
      assert.strictEqual(lists(cluster).length, 0)
      yield* until(() => cluster.openWatches() === 0, "the watch is closed once the condition holds")
    }).pipe(Effect.provide(fake())))

  it.effect("sees a change made between its get and its watch", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      cluster.seed([pod("web")])
      cluster.setPodPhase("default", "web", "Running")
      let changed = false
      // The transport itself makes the change once the get's answer is in, before the watch is sent.
      const changeAfterGet = Layer.effect(
        HttpClient.HttpClient,
        Effect.map(HttpClient.HttpClient, (client) =>
          HttpClient.tap(client, (response) =>
            Effect.sync(() => {
              if (!changed && response.request.url.endsWith("/pods/web")) {
                changed = true
                cluster.setPodPhase("default", "web", "Succeeded")
              }
            })))
      )
      const done = Option.getOrUndefined(
        yield* pods.waitFor("web", Condition.podSucceeded, { timeout: "1 minute" }).pipe(
          Effect.provide(changeAfterGet)
        )
      )
      assert.isTrue(changed)
      assert.strictEqual(done?.status?.phase, "Succeeded")
      const [get] = objectGets(cluster)
      const [watch] = watches(cluster)
      assert.isDefined(get)
      // the watch started from the version the get saw, older than the change it delivered
      assert.isBelow(Number(watch?.query["resourceVersion"]), Number(done?.metadata?.resourceVersion))
    }).pipe(Effect.provide(fake())))

  it.effect("waits for an absent object to appear, from a listing by name", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      const fiber = yield* Effect.forkChild(pods.waitFor("web", Condition.exists, { timeout: "1 minute" }))
      yield* until(() => cluster.openWatches() === 1, "watch open")
      assert.deepStrictEqual(lists(cluster).map((r) => r.query), [{ fieldSelector: "metadata.name=web", limit: "500" }])
      cluster.seed([pod("other"), pod("web")])
      const found = Option.getOrUndefined(yield* Fiber.join(fiber))
      assert.strictEqual(found?.metadata?.name, "web")
    }).pipe(Effect.provide(fake())))

  it.effect("waits for a deletion", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      cluster.seed([pod("web")])
      const fiber = yield* Effect.forkChild(pods.waitFor("web", Condition.deleted, { timeout: "1 minute" }))
      yield* until(() => cluster.openWatches() === 1, "watch open")
      cluster.remove(ref("web"))
      assert.isTrue(Option.isNone(yield* Fiber.join(fiber)))
    }).pipe(Effect.provide(fake())))

  it.effect("when the get's resourceVersion is too old to watch from, lists by name and goes on from there", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      cluster.seed([pod("web")])
      for (let i = 0; i < 5; i++) cluster.seed([pod(`filler${i}`)])
      cluster.compact()
      const fiber = yield* Effect.forkChild(pods.waitFor("web", Condition.podReady, { timeout: "1 minute" }))
      yield* until(() => watches(cluster).length === 2 && cluster.openWatches() === 1, "second watch open")
      assert.deepStrictEqual(lists(cluster).map((r) => r.query["fieldSelector"]), ["metadata.name=web"])
      cluster.setPodPhase("default", "web", "Running") // Running comes with Ready
      const ready = Option.getOrUndefined(yield* Fiber.join(fiber))
      assert.strictEqual(ready?.status?.phase, "Running")
    }).pipe(Effect.provide(fake())))

  it.effect("times out with WaitTimeout naming the object and the condition", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      cluster.seed([pod("web")])
      const fiber = yield* Effect.forkChild(pods.waitFor("web", Condition.podSucceeded, { timeout: "30 seconds" }))
      yield* until(() => cluster.openWatches() === 1, "watch open")
      yield* TestClock.adjust("30 seconds")
      const error = yield* Effect.flip(Fiber.join(fiber))
      assert.instanceOf(error, WaitTimeout)
      const timeout = error as WaitTimeout
      assert.deepStrictEqual(
        { kind: timeout.kind, name: timeout.name, namespace: timeout.namespace, condition: timeout.condition },
        { kind: "Pod", name: "web", namespace: "default", condition: "Succeeded" }
      )
      assert.strictEqual(timeout.message, "timed out after 30s waiting for Pod default/web to be Succeeded")
      yield* until(() => cluster.openWatches() === 0, "the watch is closed on timeout")
    }).pipe(Effect.provide(fake())))

  it.effect("takes a plain predicate, named \"predicate\" in the timeout", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      cluster.seed([pod("web")])
      const fiber = yield* Effect.forkChild(
        pods.waitFor("web", (p) => p?.status?.phase === "Succeeded", { timeout: "1 minute" })
      )
      yield* until(() => cluster.openWatches() === 1, "watch open")
      cluster.setPodPhase("default", "web", "Succeeded")
      const done = yield* Fiber.join(fiber)
      assert.isTrue(Option.isSome(done))
      assert.strictEqual(Option.getOrUndefined(done)?.status?.phase, "Succeeded")
      // satisfied by absence: none, as get answers for a missing object
      const gone = yield* pods.waitFor("missing", (p) => p === undefined, { timeout: "1 minute" })
      assert.isTrue(Option.isNone(gone))

      const slow = yield* Effect.forkChild(pods.waitFor("web", (p) => p?.status?.phase === "Failed", { timeout: "10 seconds" }))
      yield* until(() => cluster.openWatches() === 1, "second watch open")
      yield* TestClock.adjust("10 seconds")
      const error = yield* Effect.flip(Fiber.join(slow))
      assert.instanceOf(error, WaitTimeout)
      assert.strictEqual((error as WaitTimeout).condition, "predicate")
      assert.strictEqual(error.message, "timed out after 10s waiting for Pod default/web to be predicate")
    }).pipe(Effect.provide(fake())))

  it.effect("a bad name fails before any request", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      const error = yield* Effect.flip(pods.waitFor("a/b", Condition.deleted, { timeout: "1 minute" }))
      assert.instanceOf(error, ValidationError)
      assert.strictEqual(cluster.requests().length, 0)
    }).pipe(Effect.provide(fake())))

  it.effect("job conditions", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      const jobs = Kube.api(Jobs, { namespace: "default" })
      cluster.seed([{
        apiVersion: "batch/v1",
        kind: "Job",
        metadata: { name: "once", namespace: "default" },
        spec: { template: { spec: { containers: [{ name: "c", image: "busybox" }], restartPolicy: "Never" } } }
      }])
      const fiber = yield* Effect.forkChild(
        jobs.waitFor("once", Condition.or(Condition.jobComplete, Condition.jobFailed), { timeout: "1 minute" })
      )
      yield* until(() => cluster.openWatches() === 1, "watch open")
      cluster.completeJob("default", "once")
      const job = Option.getOrUndefined(yield* Fiber.join(fiber))
      assert.isTrue(Condition.jobComplete.test(job))
      assert.isFalse(Condition.jobFailed.test(job))
    }).pipe(Effect.provide(fake())))
})

describe("Condition", () => {
  const withPhase = (phase: string, ready?: "True" | "False"): Pod =>
    ({
      metadata: { name: "p" },
      status: {
        phase: phase as "Running",
        ...(ready === undefined ? {} : { conditions: [{ type: "Ready", status: ready }] })
      }
    }) as Pod

  it("tests pods, jobs and absence", () => {
    assert.isTrue(Condition.podSucceeded.test(withPhase("Succeeded")))
    assert.isFalse(Condition.podSucceeded.test(withPhase("Running")))
    assert.isFalse(Condition.podSucceeded.test(undefined))
    assert.isTrue(Condition.podFailed.test(withPhase("Failed")))
    assert.isTrue(Condition.podRunning.test(withPhase("Running")))
    assert.isTrue(Condition.podReady.test(withPhase("Running", "True")))
    assert.isFalse(Condition.podReady.test(withPhase("Running", "False")))
    assert.isFalse(Condition.podReady.test(withPhase("Running")))
    const failed = { status: { conditions: [{ type: "Failed", status: "True" }] } } as Job
    assert.isTrue(Condition.jobFailed.test(failed))
    assert.isFalse(Condition.jobComplete.test(failed))
    assert.isTrue(Condition.deleted.test(undefined))
    assert.isFalse(Condition.deleted.test(withPhase("Running")))
    assert.isTrue(Condition.exists.test({}))
  })

  it("combines conditions and names them for timeouts", () => {
    const finished = Condition.or(Condition.podSucceeded, Condition.podFailed)
    assert.strictEqual(finished.name, "Succeeded or Failed")
    assert.isTrue(finished.test(withPhase("Failed")))
    assert.isFalse(finished.test(withPhase("Running")))
    const both = Condition.and(Condition.podRunning, Condition.podReady)
    assert.strictEqual(both.name, "Running and Ready")
    assert.isTrue(both.test(withPhase("Running", "True")))
    assert.isFalse(both.test(withPhase("Running", "False")))
    const custom = Condition.make<Pod>("named p", (p) => p?.metadata?.name === "p")
    assert.isTrue(custom.test(withPhase("Pending")))
    const orDeleted = Condition.or(Condition.podSucceeded, Condition.deleted)
    assert.isTrue(orDeleted.test(undefined))
  })

  it("and/or are dual: data-first and data-last alike", () => {
    const dataLast = pipe(Condition.podSucceeded, Condition.or(Condition.podFailed))
    assert.strictEqual(dataLast.name, "Succeeded or Failed")
    assert.isTrue(dataLast.test(withPhase("Failed")))
    assert.isFalse(dataLast.test(withPhase("Running")))
    const both = pipe(Condition.podRunning, Condition.and(Condition.podReady))
    assert.strictEqual(both.name, "Running and Ready")
    assert.isTrue(both.test(withPhase("Running", "True")))
    assert.isFalse(both.test(withPhase("Running", "False")))
  })
})

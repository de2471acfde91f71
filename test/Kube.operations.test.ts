/**
 * What a client-node or kube-rs user reaches for in the first hour, over the real request
 * path (FakeCluster's layer answering real HTTP requests): `getOrFail` for an object that must
 * exist, `api.reflector` beside `api.watcher`, and `Kube.rolloutRestart`.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import * as TestClock from "effect/testing/TestClock"
import { ApiError, ValidationError } from "../packages/effect-kube/src/Errors.js"
import * as Kube from "../packages/effect-kube/src/Kube.js"
import { ConfigMaps, DaemonSets, type Deployment, Deployments, Pods } from "../packages/effect-kube/src/resources/index.js"
import { FakeCluster } from "@effect-kube/testing"

const podSpec = { containers: [{ name: "c", image: "nginx" }] }
const template = { metadata: { labels: { app: "web" } }, spec: { containers: [{ name: "web", image: "nginx" }] } }
const web = (paused = false): Deployment => ({
  metadata: { name: "web" },
  spec: { selector: { matchLabels: { app: "web" } }, template, paused }
})

describe("getOrFail", () => {
  it.effect("answers the object, and the server's NotFound naming it when there is none", () =>
    Effect.gen(function*() {
      const configMaps = Kube.api(ConfigMaps, { namespace: "default" })
      yield* configMaps.create({ metadata: { name: "there" }, data: { a: "1" } })
      assert.deepStrictEqual((yield* configMaps.getOrFail("there")).data, { a: "1" })
      const missing = yield* Effect.flip(configMaps.getOrFail("absent"))
      assert.isTrue(ApiError.isNotFound(missing))
      assert.strictEqual(
        missing.message,
        "k8s: GET /api/v1/namespaces/default/configmaps/absent: 404 NotFound: configmaps \"absent\" not found"
      )
      assert.isTrue(Option.isNone(yield* configMaps.get("absent")))
    }).pipe(Effect.provide(FakeCluster.layer())))
})

describe("api.reflector", () => {
  it.live("is a store kept equal to the cluster for the scope, as Watcher.reflector(api)", () =>
    Effect.gen(function*() {
      const pods = Kube.api(Pods, { namespace: "default" })
      yield* pods.create({ metadata: { name: "a", labels: { app: "web" } }, spec: podSpec })
      yield* pods.create({ metadata: { name: "b", labels: { app: "db" } }, spec: podSpec })
      yield* Effect.scoped(Effect.gen(function*() {
        const store = yield* pods.reflector({ labelSelector: "app=web" })
        yield* store.ready
        assert.deepStrictEqual((yield* store.list()).map((p) => p.metadata?.name), ["a"])
        yield* pods.create({ metadata: { name: "c", labels: { app: "web" } }, spec: podSpec })
        let names: ReadonlyArray<string | undefined> = []
        for (let i = 0; i < 300 && names.length < 2; i++) {
          names = (yield* store.list()).map((p) => p.metadata?.name).sort()
          if (names.length < 2) yield* Effect.sleep("10 millis")
        }
        assert.deepStrictEqual(names, ["a", "c"])
        assert.isTrue(Option.isNone(yield* store.get("b")))
      }))
      const control = yield* FakeCluster.FakeCluster
      assert.strictEqual(control.openWatches(), 0)
    }).pipe(Effect.provide(FakeCluster.layer())))
})

describe("Kube.rolloutRestart", () => {
  it.effect("annotates the pod template with the time, as kubectl rollout restart does", () =>
    Effect.gen(function*() {
      const deployments = Kube.api(Deployments, { namespace: "default" })
      yield* deployments.create(web())
      yield* TestClock.setTime(Date.UTC(2026, 0, 2, 3, 4, 5, 678))
      const restarted = yield* Kube.rolloutRestart(deployments, "web")
      assert.deepStrictEqual(restarted.spec?.template.metadata?.annotations, {
        "kubectl.kubernetes.io/restartedAt": "2026-01-02T03:04:05Z"
      })
      assert.deepStrictEqual(restarted.spec?.template.spec?.containers.map((c) => c.image), ["nginx"])
      const daemons = Kube.api(DaemonSets, { namespace: "default" })
      yield* daemons.create({ metadata: { name: "agent" }, spec: { selector: { matchLabels: { app: "web" } }, template } })
      const agent = yield* Kube.rolloutRestart(daemons, "agent")
      assert.isDefined(agent.spec?.template.metadata?.annotations?.["kubectl.kubernetes.io/restartedAt"])
      const control = yield* FakeCluster.FakeCluster
      const patches = control.requests().filter((r) => r.method === "PATCH")
      assert.deepStrictEqual(patches.map((r) => r.contentType), [
        "application/strategic-merge-patch+json",
        "application/strategic-merge-patch+json"
      ])
    }).pipe(Effect.provide(FakeCluster.layer())))

  it.effect("refuses another kind and a paused Deployment before any change; a missing one is NotFound", () =>
    Effect.gen(function*() {
      const control = yield* FakeCluster.FakeCluster
      const configMaps = Kube.api(ConfigMaps, { namespace: "default" })
      const otherKind = yield* Effect.flip(Kube.rolloutRestart(configMaps, "settings"))
      assert.instanceOf(otherKind, ValidationError)
      assert.include(otherKind.message, "only Deployments, DaemonSets and StatefulSets")
      assert.strictEqual(control.requests().length, 0)
      const deployments = Kube.api(Deployments, { namespace: "default" })
      yield* deployments.create(web(true))
      const paused = yield* Effect.flip(Kube.rolloutRestart(deployments, "web"))
      assert.include(paused.message, "paused")
      assert.strictEqual(control.requests().filter((r) => r.method === "PATCH").length, 0)
      assert.isTrue(ApiError.isNotFound(yield* Effect.flip(Kube.rolloutRestart(deployments, "none"))))
    }).pipe(Effect.provide(FakeCluster.layer())))
})

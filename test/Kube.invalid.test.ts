/**
 * The `invalid` option against FakeCluster seeded with an object that breaks its
 * Schema (a ConfigMap whose `data.size` is not a number, as another tool may write):
 * "fail" fails as before, "skip" leaves it out and reports it to the Warnings service,
 * "raw" delivers it as an `Invalid`; watchers and reflectors keep running.
 *
 * And objects from a server newer than the spec the built-in kinds were generated from: a
 * Pod whose apiVersion, kind and metadata fit but whose status does not (an alpha field of
 * a newer release left out `resources`, which the 1.35 spec calls required) is delivered as
 * a Pod, exactly as sent, by get, list and watch, and reported as a `MismatchedObject`
 * warning naming the path, as is a value of a JSON shape the spec does not have there (an
 * object where it has a string); a scalar of another type (a number where it has a string)
 * and an object broken at the top still fail (or go through `invalid`).
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as Kube from "../packages/effect-kube/src/Kube.js"
import * as Resource from "../packages/effect-kube/src/Resource.js"
import { Pods } from "../packages/effect-kube/src/resources/index.js"
import { FakeCluster } from "@effect-kube/testing"
import * as Watcher from "../packages/effect-kube/src/Watcher.js"
import * as Warnings from "../packages/effect-kube/src/Warnings.js"
import { failureOf } from "./util/failure.js"
import { apiServerOnly } from "./util/apiServerOnly.js"

const Sized = Schema.Struct({
  apiVersion: Schema.optional(Schema.String),
  kind: Schema.optional(Schema.String),
  metadata: Schema.Struct({ name: Schema.String, namespace: Schema.optional(Schema.String) }),
  // v4's NumberFromString reads "big" as NaN; FiniteFromString refuses it, as v3's NumberFromString did
  data: Schema.Struct({ size: Schema.FiniteFromString })
})

const SizedMaps = Resource.make({ apiVersion: "v1", kind: "ConfigMap", plural: "configmaps", namespaced: true, schema: Sized })
const sized = Kube.api(SizedMaps, { namespace: "default" })

const cm = (name: string, size: string) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace: "default" },
  data: { size }
})

const seeded = Layer.merge(
  FakeCluster.layer({ ...apiServerOnly, objects: [cm("a", "1"), cm("bad", "big"), cm("c", "3")] }),
  Warnings.layerCollect
)

/** The one typed failure of an effect (a cause of exactly one Fail), else a defect saying what happened. */

const collectedInvalid = Effect.flatMap(Warnings.Collected, (c) =>
  Effect.map(c.warnings, (all) => all.filter((w) => w._tag === "InvalidObject")))

describe("list and listStream", () => {
  it.effect("fail (default): the list fails with a ValidationError naming the object", () =>
    Effect.gen(function*() {
      const error = yield* failureOf(sized.list())
      assert.strictEqual(error._tag, "ValidationError")
      assert.include(error.message, "ConfigMap default/bad")
      // v3's NumberFromString said `Unable to decode "big" into a number` (the value, in Effect's own text); v4's
      // messages never carry the value: the path at fault and what was expected there
      assert.include(error.message, ".data.size Expected a finite number")
    }).pipe(Effect.provide(seeded)))

  it.effect("skip: the others are listed; the odd one is reported with its name", () =>
    Effect.gen(function*() {
      const listed = yield* sized.list({ invalid: "skip" })
      assert.deepStrictEqual(listed.items.map((i) => [i.metadata.name, i.data.size]), [["a", 1], ["c", 3]])
      const reported = yield* collectedInvalid
      assert.strictEqual(reported.length, 1)
      const w = reported[0]!
      assert.strictEqual(w._tag === "InvalidObject" ? w.error._tag : "", "ValidationError")
      assert.include(w.text, "ConfigMap default/bad")
      assert.strictEqual(w.path, "/api/v1/namespaces/default/configmaps")
      const streamed = yield* sized.listStream({ pageSize: 1, invalid: "skip" }).pipe(
        Stream.map((i) => i.metadata.name),
        Stream.runCollect
      )
      assert.deepStrictEqual([...streamed], ["a", "c"])
    }).pipe(Effect.provide(seeded)))

  it.effect("raw: the odd one is an Invalid in its place, with the raw JSON and the error", () =>
    Effect.gen(function*() {
      const listed = yield* sized.list({ invalid: "raw" })
      assert.strictEqual(listed.items.length, 3)
      const [a, bad, c] = listed.items
      assert.isFalse(Kube.isInvalid(a))
      assert.isTrue(Kube.isInvalid(bad))
      if (Kube.isInvalid(bad)) {
        assert.strictEqual((bad.raw as { data: { size: string } }).data.size, "big")
        assert.include(bad.error.message, "ConfigMap default/bad")
      }
      assert.strictEqual(Kube.isInvalid(c) ? "" : c!.data.size, 3)
      const streamed = yield* sized.listStream({ pageSize: 2, invalid: "raw" }).pipe(Stream.runCollect)
      assert.deepStrictEqual([...streamed].map(Kube.isInvalid), [false, true, false])
      assert.strictEqual((yield* collectedInvalid).length, 0, "raw reports nothing")
    }).pipe(Effect.provide(seeded)))
})

describe("watch and watcher", () => {
  it.effect("watch: fail ends with the ValidationError; skip drops; raw delivers an Invalid event", () =>
    Effect.gen(function*() {
      const failed = yield* failureOf(sized.watch({ resourceVersion: "0" }).pipe(Stream.runDrain))
      assert.strictEqual(failed._tag, "ValidationError")
      const skipped = yield* sized.watch({ resourceVersion: "0", invalid: "skip" }).pipe(Stream.take(2), Stream.runCollect)
      assert.deepStrictEqual([...skipped].map((e) => e.type === "BOOKMARK" ? "" : e.object.metadata.name), ["a", "c"])
      assert.strictEqual((yield* collectedInvalid).length, 1)
      const raw = yield* sized.watch({ resourceVersion: "0", invalid: "raw" }).pipe(Stream.take(3), Stream.runCollect)
      assert.deepStrictEqual([...raw].map((e) => e.type !== "BOOKMARK" && Kube.isInvalid(e.object)), [false, true, false])
    }).pipe(Effect.provide(seeded)))

  it.effect("watcher with fail stops with the ValidationError (today's behaviour)", () =>
    Effect.gen(function*() {
      const error = yield* failureOf(sized.watcher().pipe(Stream.runDrain))
      assert.strictEqual(error._tag, "ValidationError")
    }).pipe(Effect.provide(seeded)))

  it.effect("watcher with skip keeps running past an odd object, listed or changed later", () =>
    Effect.gen(function*() {
      const control = yield* FakeCluster.FakeCluster
      const seen: Array<string> = []
      const fiber = yield* sized.watcher({ invalid: "skip" }).pipe(
        Stream.runForEach((e) =>
          Effect.sync(() => {
            if (e._tag === "InitApply" || e._tag === "Apply") seen.push(`${e._tag}:${e.object.metadata.name}`)
            if (e._tag === "InitDone") seen.push("InitDone")
          })
        ),
        Effect.forkChild
      )
      yield* waitUntil(() => seen.includes("InitDone"))
      control.update({ apiVersion: "v1", kind: "ConfigMap", namespace: "default", name: "a" }, { data: { size: "huge" } })
      control.update({ apiVersion: "v1", kind: "ConfigMap", namespace: "default", name: "c" }, { data: { size: "30" } })
      yield* waitUntil(() => seen.includes("Apply:c"))
      assert.deepStrictEqual(seen, ["InitApply:a", "InitApply:c", "InitDone", "Apply:c"])
      assert.isUndefined(fiber.pollUnsafe(), "still running")
      yield* Fiber.interrupt(fiber)
      const reported = yield* collectedInvalid
      assert.deepStrictEqual(reported.map((w) => w.text.includes("ConfigMap default/bad") || w.text.includes("ConfigMap default/a")), [true, true])
    }).pipe(Effect.provide(seeded)))

  it.effect("watcher with raw delivers Invalid objects and keeps running", () =>
    Effect.gen(function*() {
      const control = yield* FakeCluster.FakeCluster
      const events: Array<Watcher.Event<Kube.Invalid | Schema.Schema.Type<typeof Sized>>> = []
      const fiber = yield* sized.watcher({ invalid: "raw" }).pipe(
        Stream.runForEach((e) => Effect.sync(() => void events.push(e))),
        Effect.forkChild
      )
      yield* waitUntil(() => events.some((e) => e._tag === "InitDone"))
      control.update({ apiVersion: "v1", kind: "ConfigMap", namespace: "default", name: "c" }, { data: { size: "x" } })
      yield* waitUntil(() => events.some((e) => e._tag === "Apply"))
      const apply = events.find((e) => e._tag === "Apply")!
      assert.isTrue(apply._tag === "Apply" && Kube.isInvalid(apply.object))
      const inits = events.filter((e) => e._tag === "InitApply")
      assert.strictEqual(inits.length, 3)
      yield* Fiber.interrupt(fiber)
    }).pipe(Effect.provide(seeded)))

  it.effect("a reflector with skip stores the valid objects and stays up", () =>
    Effect.gen(function*() {
      const control = yield* FakeCluster.FakeCluster
      const store = yield* Watcher.reflector(sized, { invalid: "skip" })
      yield* store.ready
      assert.deepStrictEqual((yield* store.list()).map((i) => i.metadata.name).sort(), ["a", "c"])
      control.seed([cm("d", "4")])
      let found = Option.none<unknown>()
      for (let i = 0; i < 100 && Option.isNone(found); i++) {
        found = yield* store.get("d")
        if (Option.isNone(found)) yield* Effect.promise(() => new Promise((r) => setTimeout(r, 10)))
      }
      assert.isTrue(Option.isSome(found))
    }).pipe(Effect.provide(seeded)))
})

// -- objects from a newer server ------------------------------------------------------------------------

/**
 * A Pod as a release after 1.35 sends it (its testdata Pod): `nodeAllocatableResourceClaimStatuses[0]` has no
 * `resources`, required in the 1.35 spec (an alpha field whose shape changed), plus fields 1.35 does not know.
 */
const newerPod = {
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name: "newer", namespace: "default", labels: { app: "newer" }, uid: "u-newer", resourceVersion: "5" },
  spec: { containers: [{ name: "app", image: "busybox", futureField: { on: true } }], restartPolicy: "Always" },
  status: {
    phase: "Running",
    nodeAllocatableResourceClaimStatuses: [{ resourceClaimName: "gpu-claim", containers: ["app"] }],
    futureStatus: ["x"]
  }
}

const plainPod = {
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name: "plain", namespace: "default", labels: { app: "newer" } },
  spec: { containers: [{ name: "app", image: "busybox" }] }
}

const pods = Kube.api(Pods, { namespace: "default" })

const mismatchPath = ".status.nodeAllocatableResourceClaimStatuses[0].resources is missing"

const collectedMismatched = Effect.flatMap(Warnings.Collected, (c) =>
  Effect.map(c.warnings, (all) => all.filter((w) => w._tag === "MismatchedObject")))

/** The fields of a delivered Pod that the server sent, as sent (the fake adds its own, as a server does). */
const asSent = (pod: unknown) => {
  const p = pod as typeof newerPod
  return { spec: p.spec, status: { ...p.status }, labels: p.metadata.labels }
}

describe("objects from a newer server: a built-in kind that fits at the top but not below", () => {
  const newerCluster = Layer.merge(FakeCluster.layer({ ...apiServerOnly, objects: [newerPod, plainPod] }), Warnings.layerCollect)

  it.effect("get, list and watch deliver it as a Pod, as the server sent it, and report the path", () =>
    Effect.gen(function*() {
      const got = Option.getOrThrow(yield* pods.get("newer"))
      assert.isFalse(Kube.isInvalid(got))
      assert.strictEqual(got.kind, "Pod")
      assert.strictEqual(got.metadata?.name, "newer")
      assert.deepStrictEqual(asSent(got), asSent(newerPod))
      const afterGet = yield* collectedMismatched
      assert.strictEqual(afterGet.length, 1)
      const w = afterGet[0]!
      assert.strictEqual(w.method, "GET")
      assert.strictEqual(w.path, "/api/v1/namespaces/default/pods/newer")
      assert.strictEqual(w._tag === "MismatchedObject" ? w.error._tag : "", "ValidationError")
      assert.include(w.text, "kept as the server sent it")
      assert.include(w.text, "Pod default/newer")
      assert.include(w.text, mismatchPath)

      // a list delivers it in its place; with every `invalid` mode it is a Pod (not left out, not an Invalid)
      for (const invalid of ["fail", "skip", "raw"] as const) {
        const listed = yield* pods.list({ invalid })
        const names = listed.items.map((p) => Kube.isInvalid(p) ? "Invalid" : p.metadata?.name)
        assert.deepStrictEqual(names, ["newer", "plain"])
        assert.deepStrictEqual(asSent(listed.items[0]), asSent(newerPod))
      }
      const afterList = yield* collectedMismatched
      assert.strictEqual(afterList.length, 4)
      assert.deepStrictEqual(afterList.slice(1).map((w) => w.path), Array(3).fill("/api/v1/namespaces/default/pods"))
      assert.isTrue(afterList.every((w) => w.text.includes(mismatchPath)))
      const skipped = (yield* Warnings.Collected.pipe(Effect.flatMap((c) => c.warnings)))
        .filter((w) => w._tag === "InvalidObject")
      assert.strictEqual(skipped.length, 0, "not reported as left out")

      // a watch delivers it as a Pod too, and reports it
      const events = yield* pods.watch({ resourceVersion: "0" }).pipe(Stream.take(2), Stream.runCollect)
      const newer = [...events].find((e) => e.type !== "BOOKMARK" && e.object.metadata?.name === "newer")
      assert.isDefined(newer)
      if (newer !== undefined && newer.type !== "BOOKMARK") {
        assert.isFalse(Kube.isInvalid(newer.object))
        assert.deepStrictEqual(asSent(newer.object), asSent(newerPod))
      }
      const afterWatch = yield* collectedMismatched
      assert.strictEqual(afterWatch.length, 5)
      assert.include(afterWatch[4]!.path, "/api/v1/namespaces/default/pods?")
      assert.include(afterWatch[4]!.path, "watch=true")
      assert.include(afterWatch[4]!.text, mismatchPath)
    }).pipe(Effect.provide(newerCluster)))

  it.effect("a value of a JSON shape the spec does not have there, below the metadata, is kept too; paths named", () =>
    Effect.gen(function*() {
      const control = yield* FakeCluster.FakeCluster
      control.seed([{
        ...plainPod,
        metadata: { name: "shapes", namespace: "default" },
        spec: { containers: [{ name: "app", image: "busybox", ports: "8080" }], hostNetwork: { enabled: true } },
        status: { hostIPs: "10.0.0.1", conditions: [{ type: "Ready", status: "True", lastTransitionTime: { s: 5 } }] }
      }])
      const got = Option.getOrThrow(yield* pods.get("shapes")) as unknown as Record<string, any>
      assert.strictEqual(got.spec.containers[0].ports, "8080")
      assert.strictEqual(got.status.hostIPs, "10.0.0.1")
      const [w] = yield* collectedMismatched
      assert.isDefined(w)
      const paths = [".spec.containers[0].ports", ".spec.hostNetwork", ".status.hostIPs", ".status.conditions[0]"]
      for (const path of paths) assert.include(w!.text, path)
      // never the values: the error says where and what was expected
      assert.notInclude(w!.text, "8080")
      assert.notInclude(w!.text, "10.0.0.1")
    }).pipe(Effect.provide(Layer.merge(FakeCluster.layer(apiServerOnly), Warnings.layerCollect))))

  it.effect("a scalar of another type (a number where the spec has a string) still fails, naming only that path", () =>
    Effect.gen(function*() {
      const control = yield* FakeCluster.FakeCluster
      control.seed([{
        ...newerPod,
        metadata: { name: "odd", namespace: "default" },
        spec: { containers: [{ name: 7, image: "busybox" }] }
      }])
      const error = yield* failureOf(pods.get("odd"))
      assert.strictEqual(error._tag, "ValidationError")
      assert.strictEqual(
        error.message,
        "answer to GET /api/v1/namespaces/default/pods/odd: Pod default/odd: does not match its schema: " +
          ".spec.containers[0].name Expected string"
      )
      const listed = yield* failureOf(pods.list())
      assert.include(listed.message, "Pod default/odd: does not match its schema: .spec.containers[0].name Expected string")
      assert.strictEqual((yield* collectedMismatched).length, 0)
    }).pipe(Effect.provide(Layer.merge(FakeCluster.layer(apiServerOnly), Warnings.layerCollect))))

  it.effect("Warnings.layerFail turns the kept object into the ValidationError, as it does a skipped one", () =>
    Effect.gen(function*() {
      const error = yield* failureOf(pods.get("newer"))
      assert.strictEqual(error._tag, "ValidationError")
      assert.include(error._tag === "ValidationError" ? error.message : "", mismatchPath)
    }).pipe(Effect.provide(Layer.merge(FakeCluster.layer({ ...apiServerOnly, objects: [newerPod] }), Warnings.layerFail))))

  it.effect("an object broken at the top still fails, or goes through `invalid`: its metadata does not fit", () =>
    Effect.gen(function*() {
      const control = yield* FakeCluster.FakeCluster
      control.seed([{ ...newerPod, metadata: { name: "broken", namespace: "default", annotations: { a: 1 } } }])
      const error = yield* failureOf(pods.get("broken"))
      assert.strictEqual(error._tag, "ValidationError")
      assert.include(
        error.message,
        "Pod default/broken: does not match its schema: .metadata.annotations.a Expected string"
      )
      const listFailure = yield* failureOf(pods.list())
      assert.strictEqual(listFailure._tag, "ValidationError")
      const raw = yield* pods.list({ invalid: "raw" })
      assert.deepStrictEqual(raw.items.map(Kube.isInvalid), [true])
      const skipped = yield* pods.list({ invalid: "skip" })
      assert.strictEqual(skipped.items.length, 0)
      const watched = yield* failureOf(pods.watch({ resourceVersion: "0" }).pipe(Stream.runDrain))
      assert.strictEqual(watched._tag, "ValidationError")
      assert.strictEqual((yield* collectedMismatched).length, 0)
    }).pipe(Effect.provide(Layer.merge(FakeCluster.layer(apiServerOnly), Warnings.layerCollect))))
})

/** Polls in real time until `check` holds (fails after `ms`). */
const waitUntil = (check: () => boolean, ms = 3000) =>
  Effect.promise(async () => {
    const end = Date.now() + ms
    while (!check()) {
      if (Date.now() > end) throw new Error("condition not reached")
      await new Promise((r) => setTimeout(r, 5))
    }
  })

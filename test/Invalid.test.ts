/**
 * The `invalid` option against FakeCluster seeded with an object that breaks its
 * Schema (a ConfigMap whose `data.size` is not a number, as another tool may write):
 * "fail" fails as before, "skip" leaves it out and reports it to the Warnings service,
 * "raw" delivers it as an `Invalid`; watchers and reflectors keep running.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as Kube from "../src/Kube.js"
import * as Resource from "../src/Resource.js"
import * as FakeCluster from "../src/testing/FakeCluster.js"
import * as Watcher from "../src/Watcher.js"
import * as Warnings from "../src/Warnings.js"

const Sized = Schema.Struct({
  apiVersion: Schema.optional(Schema.String),
  kind: Schema.optional(Schema.String),
  metadata: Schema.Struct({ name: Schema.String, namespace: Schema.optional(Schema.String) }),
  data: Schema.Struct({ size: Schema.NumberFromString })
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
  FakeCluster.layer({ objects: [cm("a", "1"), cm("bad", "big"), cm("c", "3")] }),
  Warnings.layerCollect
)

const failureOf = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.flatMap(Effect.exit(effect), (exit) =>
    Exit.isFailure(exit) && exit.cause._tag === "Fail"
      ? Effect.succeed(exit.cause.error)
      : Effect.dieMessage(`expected a failure, got ${Exit.isSuccess(exit) ? "success" : exit.cause._tag}`))

const collectedInvalid = Effect.flatMap(Warnings.Collected, (c) =>
  Effect.map(c.warnings, (all) => all.filter((w) => w._tag === "InvalidObject")))

describe("list and listStream", () => {
  it.effect("fail (default): the list fails with a ValidationError naming the object", () =>
    Effect.gen(function*() {
      const error = yield* failureOf(sized.list())
      assert.strictEqual(error._tag, "ValidationError")
      assert.include(error.message, "ConfigMap default/bad")
      assert.include(error.message, "big")
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
        Effect.fork
      )
      yield* waitUntil(() => seen.includes("InitDone"))
      control.update({ apiVersion: "v1", kind: "ConfigMap", namespace: "default", name: "a" }, { data: { size: "huge" } })
      control.update({ apiVersion: "v1", kind: "ConfigMap", namespace: "default", name: "c" }, { data: { size: "30" } })
      yield* waitUntil(() => seen.includes("Apply:c"))
      assert.deepStrictEqual(seen, ["InitApply:a", "InitApply:c", "InitDone", "Apply:c"])
      assert.isNull(yield* Fiber.poll(fiber).pipe(Effect.map(Option.getOrNull)), "still running")
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
        Effect.fork
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

  it.scoped("a reflector with skip stores the valid objects and stays up", () =>
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

/** Polls in real time until `check` holds (fails after `ms`). */
const waitUntil = (check: () => boolean, ms = 3000) =>
  Effect.promise(async () => {
    const end = Date.now() + ms
    while (!check()) {
      if (Date.now() > end) throw new Error("condition not reached")
      await new Promise((r) => setTimeout(r, 5))
    }
  })

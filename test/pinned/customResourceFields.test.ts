/**
 * Pins: fields a Resource's Schema does not declare survive the whole request path, for a
 * custom resource whose Schema is the user's own (transforming, plain) and for a generated
 * kind. What get, list, watch and the watcher return carries every field the server sent,
 * at the top level, inside spec and inside metadata; an object written back (replace of what
 * get returned, create of an object with extra fields) sends them back to the server.
 *
 * Today this holds because every parse runs with `onExcessProperty: "preserve"`
 * (src/internal/codec.ts). Effect 4 removes that option: its default strips unknown keys
 * when a transforming Schema decodes or encodes, so a mechanical port would silently drop
 * `status`, annotations and every field a newer server adds.
 *
 * Everything goes through FakeCluster's real HTTP handling; the raw object is read back
 * with `Kube.request` and through a `Schema.Unknown` resource, never from the decoded value.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as SchemaTransformation from "effect/SchemaTransformation"
import * as Stream from "effect/Stream"
import * as Kube from "../../packages/effect-kube/src/Kube.js"
import * as Resource from "../../packages/effect-kube/src/Resource.js"
import { Pods } from "../../packages/effect-kube/src/resources/index.js"
import { FakeCluster } from "@effect-kube/testing"
import * as Warnings from "../../packages/effect-kube/src/Warnings.js"
import * as Watcher from "../../packages/effect-kube/src/Watcher.js"

const apiVersion = "pin.example.com/v1"

const Metadata = Schema.Struct({
  name: Schema.String,
  namespace: Schema.optional(Schema.String),
  resourceVersion: Schema.optional(Schema.String)
})

/** The user's own transforming Schema: `spec.replicas` is a string on the wire, a number in memory. */
const Widget = Schema.Struct({
  apiVersion: Schema.optional(Schema.String),
  kind: Schema.optional(Schema.String),
  metadata: Metadata,
  spec: Schema.Struct({
    replicas: Schema.NumberFromString,
    color: Schema.String,
    parts: Schema.optional(Schema.Array(Schema.Struct({ weight: Schema.NumberFromString })))
  })
})
type Widget = typeof Widget.Type

/** The same shape with no transformation anywhere: checked in place, not rebuilt. */
const Plain = Schema.Struct({
  apiVersion: Schema.optional(Schema.String),
  kind: Schema.optional(Schema.String),
  metadata: Metadata,
  spec: Schema.Struct({ replicas: Schema.String, color: Schema.String })
})

/** A `Schema.transform` written by hand: the decoded form renames nothing, but the decode spreads its input. */
const GadgetEncoded = Schema.Struct({
  apiVersion: Schema.optional(Schema.String),
  kind: Schema.optional(Schema.String),
  metadata: Metadata,
  spec: Schema.Struct({ size: Schema.String })
})
const GadgetDecoded = Schema.Struct({
  apiVersion: Schema.optional(Schema.String),
  kind: Schema.optional(Schema.String),
  metadata: Metadata,
  spec: Schema.Struct({ size: Schema.Number })
})
const Gadget = GadgetEncoded.pipe(Schema.decodeTo(
  GadgetDecoded,
  SchemaTransformation.transform({
    decode: (e) => ({ ...e, spec: { ...e.spec, size: Number(e.spec.size) } }),
    encode: (d) => ({ ...d, spec: { ...d.spec, size: String(d.spec.size) } })
  })
))

/** A Schema.Class: decoding builds an instance, which keeps the undeclared fields as own properties. */
class Sprocket extends Schema.Class<Sprocket>("Sprocket")({
  apiVersion: Schema.optional(Schema.String),
  kind: Schema.optional(Schema.String),
  metadata: Metadata,
  spec: Schema.Struct({ teeth: Schema.NumberFromString })
}) {}

const Widgets = Resource.make({ apiVersion, kind: "Widget", plural: "widgets", namespaced: true, schema: Widget })
const RawWidgets = Resource.make({
  apiVersion,
  kind: "Widget",
  plural: "widgets",
  namespaced: true,
  schema: Schema.Unknown
})
const Plains = Resource.make({ apiVersion, kind: "Plain", plural: "plains", namespaced: true, schema: Plain })
const Gadgets = Resource.make({ apiVersion, kind: "Gadget", plural: "gadgets", namespaced: true, schema: Gadget })
const Sprockets = Resource.make({
  apiVersion,
  kind: "Sprocket",
  plural: "sprockets",
  namespaced: true,
  schema: Sprocket
})

const widgets = Kube.api(Widgets, { namespace: "default" })
const rawWidgets = Kube.api(RawWidgets, { namespace: "default" })
const plains = Kube.api(Plains, { namespace: "default" })
const gadgets = Kube.api(Gadgets, { namespace: "default" })
const sprockets = Kube.api(Sprockets, { namespace: "default" })
const pods = Kube.api(Pods, { namespace: "default" })

/** Fields no Schema here declares: at the top, in spec (with a nested array), in metadata. */
const extras = {
  top: { status: { ready: true, observedGeneration: 1 }, futureTopLevel: { nested: ["a", "b"] } },
  spec: { futureSpec: { enabled: true, list: [1, 2, 3] } },
  metadata: { labels: { app: "pin" }, annotations: { "pin.example.com/note": "kept" } }
}

const widgetOnServer = (name: string) => ({
  apiVersion,
  kind: "Widget",
  metadata: { name, namespace: "default", ...extras.metadata },
  spec: { replicas: "3", color: "blue", parts: [{ weight: "7", futurePart: "p" }], ...extras.spec },
  ...extras.top
})

const layer = FakeCluster.layer({ resources: [Widgets, Plains, Gadgets, Sprockets] })

/** The object as the server stores it, read through `Kube.request` (no Schema involved). */
const rawGet = (plural: string, name: string) =>
  Kube.request({ method: "GET", path: `/apis/pin.example.com/v1/namespaces/default/${plural}/${name}` })

/** What decoding the server's object must give: the server's JSON with the transformed fields replaced. */
const decodedFrom = (raw: unknown): unknown => {
  const o = raw as {
    readonly spec: { readonly replicas: string; readonly parts: ReadonlyArray<{ readonly weight: string }> }
  }
  return {
    ...o,
    spec: {
      ...o.spec,
      replicas: Number(o.spec.replicas),
      parts: o.spec.parts.map((p) => ({ ...p, weight: Number(p.weight) }))
    }
  }
}

const asRecord = (u: unknown) => u as Record<string, any>

describe("a custom resource with a transforming Schema (Schema.NumberFromString)", () => {
  it.effect("get returns every field the server sent, the declared ones decoded", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      cluster.seed([widgetOnServer("w")])
      const raw = yield* rawGet("widgets", "w")
      const got = Option.getOrThrow(yield* widgets.get("w"))
      assert.strictEqual(got.spec.replicas, 3)
      assert.deepStrictEqual(got as unknown, decodedFrom(raw))
      // spelled out, so a failure names the lost field
      assert.deepStrictEqual(asRecord(got).status, { ready: true, observedGeneration: 1 })
      assert.deepStrictEqual(asRecord(got).futureTopLevel, { nested: ["a", "b"] })
      assert.deepStrictEqual(asRecord(got).spec.futureSpec, { enabled: true, list: [1, 2, 3] })
      assert.deepStrictEqual(asRecord(got).spec.parts, [{ weight: 7, futurePart: "p" }])
      assert.deepStrictEqual(asRecord(got).metadata.labels, { app: "pin" })
      assert.deepStrictEqual(asRecord(got).metadata.annotations, { "pin.example.com/note": "kept" })
      assert.strictEqual(asRecord(got).metadata.uid, asRecord(raw).metadata.uid)
      assert.strictEqual(asRecord(got).metadata.creationTimestamp, asRecord(raw).metadata.creationTimestamp)
      assert.strictEqual(asRecord(got).metadata.generation, 1)
    }).pipe(Effect.provide(layer)))

  it.effect("replace of what get returned sends the undeclared fields back, the declared ones encoded", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      cluster.seed([widgetOnServer("w")])
      const got = Option.getOrThrow(yield* widgets.get("w"))
      const changed: Widget = { ...got, spec: { ...got.spec, replicas: 5 } }
      const replaced = yield* widgets.replace("w", changed)
      const raw = asRecord(yield* rawGet("widgets", "w"))
      assert.deepStrictEqual(raw.spec, {
        replicas: "5",
        color: "blue",
        parts: [{ weight: "7", futurePart: "p" }],
        futureSpec: { enabled: true, list: [1, 2, 3] }
      })
      assert.deepStrictEqual(raw.status, { ready: true, observedGeneration: 1 })
      assert.deepStrictEqual(raw.futureTopLevel, { nested: ["a", "b"] })
      assert.deepStrictEqual(raw.metadata.labels, { app: "pin" })
      assert.deepStrictEqual(raw.metadata.annotations, { "pin.example.com/note": "kept" })
      assert.strictEqual(raw.metadata.generation, 2)
      // what replace returned is the server's answer, decoded whole
      assert.deepStrictEqual(replaced as unknown, decodedFrom(raw))
      assert.strictEqual(replaced.spec.replicas, 5)
      // and read through a Schema.Unknown resource, the stored object is the same JSON
      assert.deepStrictEqual(Option.getOrThrow(yield* rawWidgets.get("w")), raw)
    }).pipe(Effect.provide(layer)))

  it.effect("create of an object with undeclared fields sends them, and returns them", () =>
    Effect.gen(function*() {
      const given = {
        metadata: { name: "c", ...extras.metadata },
        spec: { replicas: 2, color: "red", ...extras.spec },
        ...extras.top
      } as Widget
      const created = yield* widgets.create(given)
      const raw = asRecord(yield* rawGet("widgets", "c"))
      assert.deepStrictEqual(raw.spec, { replicas: "2", color: "red", futureSpec: { enabled: true, list: [1, 2, 3] } })
      assert.deepStrictEqual(raw.status, { ready: true, observedGeneration: 1 })
      assert.deepStrictEqual(raw.futureTopLevel, { nested: ["a", "b"] })
      assert.deepStrictEqual(raw.metadata.annotations, { "pin.example.com/note": "kept" })
      assert.deepStrictEqual(created as unknown, { ...raw, spec: { ...raw.spec, replicas: 2 } })
    }).pipe(Effect.provide(layer)))

  it.effect("list items carry every field the server sent", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      cluster.seed([widgetOnServer("a"), widgetOnServer("b")])
      const listed = yield* widgets.list()
      const rawA = yield* rawGet("widgets", "a")
      const rawB = yield* rawGet("widgets", "b")
      assert.deepStrictEqual(listed.items as ReadonlyArray<unknown>, [decodedFrom(rawA), decodedFrom(rawB)])
      const streamed = Array.from(yield* Stream.runCollect(widgets.listStream({ pageSize: 1 })))
      assert.deepStrictEqual(streamed as ReadonlyArray<unknown>, [decodedFrom(rawA), decodedFrom(rawB)])
    }).pipe(Effect.provide(layer)))

  it.effect("watch events (ADDED, MODIFIED) carry every field the server sent", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      cluster.seed([widgetOnServer("w")])
      const rv = cluster.resourceVersion()
      const added = Array.from(
        yield* Stream.runCollect(widgets.watch({ resourceVersion: "0" }).pipe(Stream.take(1)))
      )
      const rawAdded = yield* rawGet("widgets", "w")
      assert.deepStrictEqual(added as ReadonlyArray<unknown>, [{ type: "ADDED", object: decodedFrom(rawAdded) }])
      cluster.update({ apiVersion, kind: "Widget", name: "w" }, { status: { ready: false } })
      const modified = Array.from(
        yield* Stream.runCollect(widgets.watch({ resourceVersion: rv }).pipe(Stream.take(1)))
      )
      const rawModified = yield* rawGet("widgets", "w")
      assert.deepStrictEqual(asRecord(rawModified).status, { ready: false, observedGeneration: 1 })
      assert.deepStrictEqual(modified as ReadonlyArray<unknown>, [
        { type: "MODIFIED", object: decodedFrom(rawModified) }
      ])
    }).pipe(Effect.provide(layer)))

  it.effect("the watcher's InitApply objects carry every field the server sent", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      cluster.seed([widgetOnServer("w")])
      const events = Array.from(yield* Stream.runCollect(widgets.watcher().pipe(Stream.take(3))))
      const raw = yield* rawGet("widgets", "w")
      assert.deepStrictEqual(events as ReadonlyArray<Watcher.Event<unknown>>, [
        { _tag: "Init" },
        { _tag: "InitApply", object: decodedFrom(raw) },
        { _tag: "InitDone" }
      ])
    }).pipe(Effect.provide(layer)))
})

describe("a custom resource with a hand-written Schema.transform", () => {
  it.effect("get keeps undeclared fields the decode spreads through; replace sends them back", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      cluster.seed([{
        apiVersion,
        kind: "Gadget",
        metadata: { name: "g", namespace: "default", ...extras.metadata },
        spec: { size: "10", ...extras.spec },
        ...extras.top
      }])
      const raw = asRecord(yield* rawGet("gadgets", "g"))
      const got = Option.getOrThrow(yield* gadgets.get("g"))
      assert.deepStrictEqual(got as unknown, { ...raw, spec: { ...raw.spec, size: 10 } })
      yield* gadgets.replace("g", { ...got, spec: { ...got.spec, size: 11 } })
      const after = asRecord(yield* rawGet("gadgets", "g"))
      assert.deepStrictEqual(after.spec, { size: "11", futureSpec: { enabled: true, list: [1, 2, 3] } })
      assert.deepStrictEqual(after.status, { ready: true, observedGeneration: 1 })
      assert.deepStrictEqual(after.futureTopLevel, { nested: ["a", "b"] })
      assert.deepStrictEqual(after.metadata.annotations, { "pin.example.com/note": "kept" })
    }).pipe(Effect.provide(layer)))
})

describe("a custom resource with a Schema.Class", () => {
  it.effect("get and list return instances that carry every field the server sent", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      cluster.seed([{
        apiVersion,
        kind: "Sprocket",
        metadata: { name: "s", namespace: "default", ...extras.metadata },
        spec: { teeth: "12", ...extras.spec },
        ...extras.top
      }])
      const raw = asRecord(yield* rawGet("sprockets", "s"))
      const got = Option.getOrThrow(yield* sprockets.get("s"))
      assert.instanceOf(got, Sprocket)
      assert.strictEqual(got.spec.teeth, 12)
      const expected = { ...raw, spec: { ...raw.spec, teeth: 12 } }
      assert.deepStrictEqual({ ...got }, expected)
      const listed = (yield* sprockets.list()).items
      assert.strictEqual(listed.length, 1)
      assert.instanceOf(listed[0], Sprocket)
      assert.deepStrictEqual({ ...listed[0]! }, expected)
    }).pipe(Effect.provide(layer)))
})

describe("a custom resource with a plain (non-transforming) Struct", () => {
  it.effect("get, list and watch return the server's JSON unchanged; replace sends it back whole", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      cluster.seed([{
        apiVersion,
        kind: "Plain",
        metadata: { name: "p", namespace: "default", ...extras.metadata },
        spec: { replicas: "1", color: "green", ...extras.spec },
        ...extras.top
      }])
      const raw = yield* rawGet("plains", "p")
      const got = Option.getOrThrow(yield* plains.get("p"))
      assert.deepStrictEqual(got as unknown, raw)
      assert.deepStrictEqual((yield* plains.list()).items as ReadonlyArray<unknown>, [raw])
      const added = Array.from(yield* Stream.runCollect(plains.watch({ resourceVersion: "0" }).pipe(Stream.take(1))))
      assert.deepStrictEqual(added as ReadonlyArray<unknown>, [{ type: "ADDED", object: raw }])
      yield* plains.replace("p", { ...got, spec: { ...got.spec, color: "teal" } })
      const after = asRecord(yield* rawGet("plains", "p"))
      assert.deepStrictEqual(after.spec, {
        replicas: "1",
        color: "teal",
        futureSpec: { enabled: true, list: [1, 2, 3] }
      })
      assert.deepStrictEqual(after.status, { ready: true, observedGeneration: 1 })
      assert.deepStrictEqual(after.futureTopLevel, { nested: ["a", "b"] })
      assert.deepStrictEqual(after.metadata.labels, { app: "pin" })
    }).pipe(Effect.provide(layer)))
})

describe("a generated kind (Pods)", () => {
  it.effect("an unknown field in spec, in a container and at the top survives get; a replace is warned of and pruned", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      cluster.seed([{
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "web", namespace: "default", futureMeta: "m" },
        spec: { containers: [{ name: "app", image: "busybox", futureContainer: 1 }], futureSpec: { on: true } },
        futureTopLevel: "t"
      }])
      const path = "/api/v1/namespaces/default/pods/web"
      const raw = yield* Kube.request({ method: "GET", path })
      const got = Option.getOrThrow(yield* pods.get("web"))
      assert.deepStrictEqual(got as unknown, raw)
      assert.deepStrictEqual(asRecord(got).spec.futureSpec, { on: true })
      assert.deepStrictEqual(asRecord(got).spec.containers[0].futureContainer, 1)
      assert.strictEqual(asRecord(got).futureTopLevel, "t")
      assert.strictEqual(asRecord(got).metadata.futureMeta, "m")
      yield* pods.replace("web", { ...got, metadata: { ...got.metadata, labels: { changed: "yes" } } })
      // the fake, as an API server of the client's version under its default fieldValidation (Warn), warns of each
      const warned = yield* Effect.flatMap(Warnings.Collected, (c) => c.warnings)
      assert.deepStrictEqual(warned.map((w) => `${w._tag} ${w.method} ${w.path}: ${w.text}`), [
        `HeaderWarning PUT ${path}: unknown field "metadata.futureMeta"`,
        `HeaderWarning PUT ${path}: unknown field "spec.containers[0].futureContainer"`,
        `HeaderWarning PUT ${path}: unknown field "spec.futureSpec"`,
        `HeaderWarning PUT ${path}: unknown field "futureTopLevel"`
      ])
      const after = asRecord(yield* Kube.request({ method: "GET", path }))
      assert.deepStrictEqual(after.metadata.labels, { changed: "yes" })
      // and prunes them, as it declares none of them (a newer server that did would keep them)
      assert.isUndefined(after.spec.futureSpec)
      assert.isUndefined(after.spec.containers[0].futureContainer)
      assert.isUndefined(after.futureTopLevel)
      assert.isUndefined(after.metadata.futureMeta)
    }).pipe(Effect.provide(Layer.merge(layer, Warnings.layerCollect))))
})

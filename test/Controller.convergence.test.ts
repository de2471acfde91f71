/**
 * Convergence under random changes and injected faults: whatever happens to the
 * primaries (Widgets) and the objects they own (ConfigMaps), with 500s, 409s, watch
 * drops and 410s along the way, the controller ends with every live Widget owning
 * exactly the ConfigMaps it wants, every deleted Widget's cleanup run exactly once and
 * its finalizer gone, and no key ever reconciled twice at once.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as fc from "fast-check"
import * as Controller from "../packages/effect-kube/src/Controller.js"
import { ApiError } from "../packages/effect-kube/src/Errors.js"
import * as Kube from "../packages/effect-kube/src/Kube.js"
import * as RequestPolicy from "../packages/effect-kube/src/RequestPolicy.js"
import * as Resource from "../packages/effect-kube/src/Resource.js"
import { ConfigMaps } from "../packages/effect-kube/src/resources/index.js"
import { ObjectMeta } from "../packages/effect-kube/src/resources/generated.js"
import { FakeCluster } from "@effect-kube/testing"
import * as Loopback from "./util/loopback.js"

const Widget = Schema.Struct({
  apiVersion: Schema.optional(Schema.String),
  kind: Schema.optional(Schema.String),
  metadata: Schema.optional(ObjectMeta),
  spec: Schema.optional(Schema.Struct({ replicas: Schema.Number }))
})
type Widget = typeof Widget.Type
const Widgets = Resource.make({ apiVersion: "example.com/v1", kind: "Widget", plural: "widgets", namespaced: true, schema: Widget })
const widgets = Kube.api(Widgets, { namespace: "default" })
const configMaps = Kube.api(ConfigMaps, { namespace: "default" })
const finalizer = "example.com/cleanup"

const realSleep = (ms: number) => Effect.promise(() => new Promise<void>((resolve) => setTimeout(resolve, ms)))

type Command =
  | { readonly _tag: "create"; readonly w: number; readonly replicas: number }
  | { readonly _tag: "scale"; readonly w: number; readonly replicas: number }
  | { readonly _tag: "delete"; readonly w: number }
  | { readonly _tag: "deleteOwned"; readonly w: number; readonly i: number }
  | { readonly _tag: "tamperOwned"; readonly w: number; readonly i: number }
  | { readonly _tag: "fail500"; readonly count: number }
  | { readonly _tag: "fail409"; readonly count: number }
  | { readonly _tag: "dropWatches"; readonly after: number }
  | { readonly _tag: "expireWatches" }
  | { readonly _tag: "pause"; readonly ms: number }

const w = fc.integer({ min: 0, max: 3 })
const command: fc.Arbitrary<Command> = fc.oneof(
  fc.record({ _tag: fc.constant("create" as const), w, replicas: fc.integer({ min: 0, max: 3 }) }),
  fc.record({ _tag: fc.constant("scale" as const), w, replicas: fc.integer({ min: 0, max: 3 }) }),
  fc.record({ _tag: fc.constant("delete" as const), w }),
  fc.record({ _tag: fc.constant("deleteOwned" as const), w, i: fc.integer({ min: 0, max: 2 }) }),
  fc.record({ _tag: fc.constant("tamperOwned" as const), w, i: fc.integer({ min: 0, max: 2 }) }),
  fc.record({ _tag: fc.constant("fail500" as const), count: fc.integer({ min: 1, max: 3 }) }),
  fc.record({ _tag: fc.constant("fail409" as const), count: fc.integer({ min: 1, max: 3 }) }),
  fc.record({ _tag: fc.constant("dropWatches" as const), after: fc.integer({ min: 1, max: 4 }) }),
  fc.constant({ _tag: "expireWatches" as const }),
  fc.record({ _tag: fc.constant("pause" as const), ms: fc.integer({ min: 0, max: 40 }) })
)

const ownedName = (widget: string, i: number) => `${widget}-${i}`
const widgetRef = (name: string) => ({ apiVersion: "example.com/v1", kind: "Widget", name })
const cmRef = (name: string) => ({ apiVersion: "v1", kind: "ConfigMap", name })

const scenario = (commands: ReadonlyArray<Command>) =>
  Effect.gen(function*() {
    const cluster = yield* FakeCluster.FakeCluster
    const cleanups = new Map<string, number>()
    const active = new Map<string, number>()
    let overlaps = 0

    const reconcile = (widget: Widget) =>
      Effect.gen(function*() {
        const name = widget.metadata!.name!
        const uid = widget.metadata!.uid!
        const replicas = widget.spec?.replicas ?? 0
        const owned = (yield* configMaps.list({ labelSelector: `widget=${name}` })).items
        for (const cm of owned) {
          const index = Number(cm.metadata?.name?.slice(name.length + 1))
          const ownedByMe = cm.metadata?.ownerReferences?.some((r) => r.uid === uid && r.controller === true)
          if (!ownedByMe || !(index < replicas) || cm.data?.index !== String(index)) {
            yield* configMaps.delete(cm.metadata!.name!)
          }
        }
        for (let i = 0; i < replicas; i++) {
          const existing = owned.find((cm) => cm.metadata?.name === ownedName(name, i))
          if (existing !== undefined && existing.data?.index === String(i) &&
            existing.metadata?.ownerReferences?.some((r) => r.uid === uid)) continue
          yield* configMaps.create({
            metadata: {
              name: ownedName(name, i),
              labels: { widget: name },
              ownerReferences: [{ apiVersion: "example.com/v1", kind: "Widget", name, uid, controller: true }]
            },
            data: { index: String(i) }
          })
        }
        return Controller.done
      })

    const track = <A, E, R>(key: string, effect: Effect.Effect<A, E, R>) =>
      Effect.suspend(() => {
        active.set(key, (active.get(key) ?? 0) + 1)
        if (active.get(key)! > 1) overlaps++
        return Effect.ensuring(effect, Effect.sync(() => active.set(key, active.get(key)! - 1)))
      })

    const controller = Controller.make({
      name: "test/widgets",
      api: widgets,
      owns: [configMaps],
      concurrency: 3,
      reconcile: (widget: Widget) => track(widget.metadata!.name!, reconcile(widget)),
      finalizer: {
        name: finalizer,
        cleanup: (widget: Widget) =>
          track(
            widget.metadata!.name!,
            Effect.gen(function*() {
              const uid = widget.metadata!.uid!
              cleanups.set(uid, (cleanups.get(uid) ?? 0) + 1)
              yield* configMaps.deleteAll({ labelSelector: `widget=${widget.metadata!.name!}` })
            })
          )
      }
    })
    const fiber = yield* Effect.forkChild(Controller.run(controller))

    // uids deleted while they carried the finalizer: their cleanup must run exactly once
    const mustClean = new Set<string>()
    const deletedUids = new Set<string>()
    for (const c of commands) {
      const name = `w${"w" in c ? c.w : 0}`
      switch (c._tag) {
        case "create":
          yield* widgets.create({ metadata: { name }, spec: { replicas: c.replicas } }).pipe(
            Effect.catchIf(ApiError.isAlreadyExists, () => Effect.void)
          )
          break
        case "scale":
          if (cluster.get(widgetRef(name)) !== undefined) cluster.update(widgetRef(name), { spec: { replicas: c.replicas } })
          break
        case "delete": {
          const before = cluster.get(widgetRef(name))
          if (before === undefined) break
          const meta = before.metadata as { uid: string; finalizers?: Array<string>; deletionTimestamp?: string }
          deletedUids.add(meta.uid)
          if (meta.finalizers?.includes(finalizer)) mustClean.add(meta.uid)
          yield* widgets.delete(name)
          break
        }
        case "deleteOwned":
          cluster.remove(cmRef(ownedName(name, c.i)))
          break
        case "tamperOwned":
          if (cluster.get(cmRef(ownedName(name, c.i))) !== undefined) {
            cluster.update(cmRef(ownedName(name, c.i)), { data: { index: "tampered" } })
          }
          break
        case "fail500":
          cluster.failNext({
            status: 500,
            count: c.count,
            match: (method, _path, query) => method === "GET" && (query["labelSelector"] ?? "").startsWith("widget=")
          })
          break
        case "fail409":
          cluster.failNext({ status: 409, reason: "Conflict", count: c.count, match: (method) => method === "PATCH" })
          break
        case "dropWatches":
          cluster.dropWatchesAfter(c.after)
          break
        case "expireWatches":
          cluster.expireWatches()
          break
        case "pause":
          yield* realSleep(c.ms)
          break
      }
      yield* realSleep(2)
    }
    cluster.clearFaults()

    const converged = () => {
      const live = cluster.list("example.com/v1", "widgets", "default")
      if (live.some((o) => (o.metadata as { deletionTimestamp?: string }).deletionTimestamp !== undefined)) return false
      const cms = cluster.list("v1", "configmaps", "default").filter((o) =>
        (o.metadata as { labels?: Record<string, string> }).labels?.widget !== undefined
      )
      const want = new Map<string, string>()
      for (const o of live) {
        const m = o.metadata as { name: string; uid: string; finalizers?: Array<string> }
        if (!m.finalizers?.includes(finalizer)) return false
        const replicas = (o.spec as { replicas: number }).replicas
        for (let i = 0; i < replicas; i++) want.set(ownedName(m.name, i), `${m.uid}/${i}`)
      }
      const have = new Map<string, string>()
      for (const o of cms) {
        const m = o.metadata as { name: string; ownerReferences?: Array<{ uid: string }> }
        have.set(m.name, `${m.ownerReferences?.[0]?.uid}/${(o.data as { index?: string } | undefined)?.index}`)
      }
      if (want.size !== have.size) return false
      for (const [k, v] of want) if (have.get(k) !== v) return false
      return true
    }
    const ok = yield* Loopback.eventually(converged, 1000)
    yield* Fiber.interrupt(fiber)
    assert.isTrue(ok, `converged after ${JSON.stringify(commands)}`)
    for (const uid of deletedUids) {
      assert.isAtMost(cleanups.get(uid) ?? 0, 1, `cleanup of ${uid} at most once`)
      if (mustClean.has(uid)) assert.strictEqual(cleanups.get(uid), 1, `cleanup of ${uid} exactly once`)
    }
    assert.strictEqual(overlaps, 0, "no key reconciled twice at once")
  }).pipe(
    Effect.provide(Layer.merge(
      FakeCluster.layer({
        resources: [{ apiVersion: "example.com/v1", kind: "Widget", plural: "widgets", namespaced: true }]
      }),
      RequestPolicy.layer({ readRetries: Schedule.recurs(0), throttleRetries: 0, timeout: null })
    ))
  )

describe("Controller convergence", () => {
  it("converges under random changes and faults", { timeout: 60_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(command, { minLength: 4, maxLength: 25 }), (commands) =>
        Effect.runPromise(scenario(commands)).then(() => true)),
      { numRuns: 8, seed: Number(process.env.CONVERGENCE_SEED ?? 42), endOnFailure: true }
    )
  })
})

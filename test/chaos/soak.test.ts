/**
 * Case 7: a soak. A controller over N ConfigMaps (it copies data.v into an annotation) while a churn patches them at
 * W writes a second, for D minutes: the process's RSS, open file descriptors, active handles (sockets, timers) are
 * sampled every 5 s and their slope over the second half stated; every write is seen by the controller (0 lost) and
 * its latency, from the write's sending to its reconcile, measured (p50, p99, max).
 *
 * "Seen", as client-go's level-triggered promise: every confirmed write of an object is followed by a reconcile of
 * that object at the write's resourceVersion or a later one (the patch's answer says the write's; kube-apiserver's are
 * etcd revisions, so they compare as numbers). A reconcile need not see each value: two writes before the object's
 * reconcile runs coalesce into one at the later value, and that covers both (at 50 writes/s over 1,000 objects, the
 * same object is written again 20 s later, so a backlog that long coalesces). Counting only the reconcile of each exact
 * value would call those writes unseen. The writes covered by a later value are counted (`coalescedWrites`); a key
 * dropped and run again only at the object's next write shows as a latency of about 20 s (`reconcileLatencyMaxMs`).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber, Ref } from "effect"
import * as fs from "node:fs"
import { type ConfigMap, ConfigMaps, Controller, Kube } from "./lib.js"
import { layer, record, retrying, size, testNamespace } from "./support.js"

const objects = size(1000, 200)
const perSecond = size(50, 20)
// EFFECT_KUBE_CHAOS_SOAK_MINUTES runs the full size for another length
const minutes = Number(process.env["EFFECT_KUBE_CHAOS_SOAK_MINUTES"] ?? "") || size(30, 1)

const slopePerMinute = (samples: ReadonlyArray<readonly [number, number]>): number => {
  const n = samples.length
  if (n < 2) return 0
  const mx = samples.reduce((s, [x]) => s + x, 0) / n
  const my = samples.reduce((s, [, y]) => s + y, 0) / n
  const num = samples.reduce((s, [x, y]) => s + (x - mx) * (y - my), 0)
  const den = samples.reduce((s, [x]) => s + (x - mx) ** 2, 0)
  return den === 0 ? 0 : (num / den) * 60_000
}

const quantile = (xs: ReadonlyArray<number>, q: number) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length === 0 ? 0 : s[Math.min(s.length - 1, Math.floor(q * s.length))]!
}

describe("chaos: soak", () => {
  it.live(`a controller over ${objects} objects under ${perSecond} writes/s for ${minutes} min: flat, 0 lost`, () =>
    Effect.gen(function*() {
      const ns = yield* testNamespace("soak")
      const cms = Kube.api(ConfigMaps, { namespace: ns })
      yield* Effect.forEach(
        Array.from({ length: objects }, (_, i) => i),
        (i) => retrying(cms.create({ metadata: { name: `soak-${i}` }, data: { v: "0" } })),
        { concurrency: 16, discard: true }
      )
      // writes sent and not yet covered by a reconcile, per object: their number, when sent, their resourceVersion once
      // answered
      const pending = new Map<string, Map<number, { readonly sentAt: number; rv?: number }>>()
      // per object, the newest resourceVersion a reconcile saw, and when
      const reconciled = new Map<string, { readonly rv: number; readonly at: number }>()
      const latencies: Array<number> = []
      let coalesced = 0
      const cover = (name: string, n: number, at: number, exact: boolean) => {
        const note = pending.get(name)?.get(n)
        if (note === undefined) return
        pending.get(name)!.delete(n)
        latencies.push(Math.max(0, at - note.sentAt))
        if (!exact) coalesced++
      }
      const controller = Controller.make({
        name: "chaos.effect-kube.dev/soak",
        api: cms,
        concurrency: 4,
        reconcile: (cm: ConfigMap, ctx) =>
          Effect.gen(function*() {
            const name = cm.metadata!.name!
            const v = cm.data?.["v"] ?? ""
            const rv = Number(cm.metadata?.resourceVersion)
            const now = performance.now()
            if ((reconciled.get(name)?.rv ?? -1) < rv) reconciled.set(name, { rv, at: now })
            cover(name, Number(v), now, true)
            // the answered writes this state includes
            for (const [n, note] of pending.get(name) ?? []) {
              if (note.rv !== undefined && note.rv <= rv) cover(name, n, now, false)
            }
            if (cm.metadata?.annotations?.["chaos/observed"] !== v) {
              yield* ctx.api.patch(name, {
                _tag: "Merge",
                body: { metadata: { annotations: { "chaos/observed": v } } }
              })
            }
            return Controller.done
          })
      })
      yield* Effect.forkScoped(Controller.run(controller))
      const failures = yield* Ref.make(0)
      let seq = 0
      const writer = Effect.forever(Effect.gen(function*() {
        const t0 = Date.now()
        const i = ++seq
        const name = `soak-${i % objects}`
        // noted before it is sent: the reconcile of a write can come before the writer hears its answer
        const notes = pending.get(name) ?? new Map<number, { readonly sentAt: number; rv?: number }>()
        pending.set(name, notes)
        notes.set(i, { sentAt: performance.now() })
        const answered = yield* Effect.match(cms.patch(name, { _tag: "Merge", body: { data: { v: String(i) } } }), {
          onFailure: () => undefined,
          onSuccess: (cm) => Number(cm.metadata?.resourceVersion)
        }).pipe(
          // the writers are interrupted at the end: a write cut off there may never have been sent, and is no confirmed
          // write (one the server did take is reconciled, and its note taken off, as any other)
          Effect.onInterrupt(() => Effect.sync(() => notes.delete(i)))
        )
        if (answered === undefined) {
          notes.delete(i)
          yield* Ref.update(failures, (n) => n + 1)
        } else {
          const note = notes.get(i)
          if (note !== undefined) {
            note.rv = answered
            // a reconcile at this state or a later one may have run before the answer came
            const seen = reconciled.get(name)
            if (seen !== undefined && seen.rv >= answered) cover(name, i, seen.at, false)
          }
        }
        const left = Math.round(4000 / perSecond) - (Date.now() - t0)
        if (left > 0) yield* Effect.sleep(`${left} millis`)
      }))
      const writers = yield* Effect.forkScoped(Effect.all([writer, writer, writer, writer], { concurrency: 4 }))
      const samples: Array<{ t: number; rss: number; fds: number; handles: number; timers: number }> = []
      const t0 = performance.now()
      const end = t0 + minutes * 60_000
      while (performance.now() < end) {
        const resources = process.getActiveResourcesInfo()
        samples.push({
          t: performance.now() - t0,
          rss: process.memoryUsage().rss / 2 ** 20,
          fds: fs.readdirSync("/proc/self/fd").length,
          handles: resources.length,
          timers: resources.filter((r) => r === "Timeout").length
        })
        yield* Effect.sleep("5 seconds")
      }
      yield* Fiber.interrupt(writers)
      const writes = seq
      // every confirmed write reaches the controller: the latest value of each object observed
      const t1 = performance.now()
      let converged = false
      while (!converged && performance.now() - t1 < 120_000) {
        const list = yield* retrying(cms.list())
        converged = list.items.filter((c) => c.metadata?.name?.startsWith("soak-")).every((c) =>
          c.metadata?.annotations?.["chaos/observed"] === c.data?.["v"]
        )
        if (!converged) yield* Effect.sleep("500 millis")
      }
      const unseen = [...pending].flatMap(([name, notes]) => [...notes.keys()].map((n) => `${name}:${n}`))
      const half = samples.slice(Math.floor(samples.length / 2))
      const slope = (f: (s: (typeof samples)[number]) => number) =>
        Math.round(slopePerMinute(half.map((s) => [s.t, f(s)] as const)) * 100) / 100
      const last = samples.at(-1)!
      yield* record("soak", {
        objects,
        writesPerSecondAsked: perSecond,
        minutes,
        writes,
        failedWrites: yield* Ref.get(failures),
        writesPerSecond: Math.round(writes / (minutes * 60)),
        reconcileLatencyP50Ms: Math.round(quantile(latencies, 0.5)),
        reconcileLatencyP99Ms: Math.round(quantile(latencies, 0.99)),
        reconcileLatencyMaxMs: Math.round(latencies.reduce((a, b) => Math.max(a, b), 0)),
        coalescedWrites: coalesced,
        writesNotSeenByController: unseen.length,
        // which writes, by object and number (the last one sent is `writes`)
        unseen: unseen.slice(0, 10),
        converged,
        rssMiB: Math.round(last.rss),
        rssSlopeMiBPerMin: slope((s) => s.rss),
        fds: last.fds,
        fdsSlopePerMin: slope((s) => s.fds),
        handles: last.handles,
        handlesSlopePerMin: slope((s) => s.handles),
        timers: last.timers,
        timersSlopePerMin: slope((s) => s.timers)
      })
      assert.isTrue(converged, "the controller converged")
      assert.deepStrictEqual(unseen, [], "every confirmed write was followed by a reconcile at its state or a later one")
      assert.isBelow(Math.abs(slope((s) => s.fds)), 1, "open file descriptors flat")
    }).pipe(Effect.scoped, Effect.provide(layer())), { timeout: 3_000_000 })
})

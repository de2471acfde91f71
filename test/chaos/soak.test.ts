/**
 * Case 7: a soak. A controller over N ConfigMaps (it copies data.v into an annotation) while a churn patches them at
 * W writes a second, for D minutes: the process's RSS, open file descriptors, active handles (sockets, timers) are
 * sampled every 5 s and their slope over the second half stated; every write is seen by the controller (0 lost) and
 * its latency, from the write's sending to its reconcile, measured (p50, p99).
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
      const written = new Map<string, number>() // name:v -> when the write was sent
      const latencies: Array<number> = []
      const controller = Controller.make({
        name: "chaos.effect-kube.dev/soak",
        api: cms,
        concurrency: 4,
        reconcile: (cm: ConfigMap, ctx) =>
          Effect.gen(function*() {
            const v = cm.data?.["v"] ?? ""
            const key = `${cm.metadata?.name}:${v}`
            const at = written.get(key)
            if (at !== undefined) {
              latencies.push(performance.now() - at)
              written.delete(key)
            }
            if (cm.metadata?.annotations?.["chaos/observed"] !== v) {
              yield* ctx.api.patch(cm.metadata!.name!, {
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
        written.set(`${name}:${i}`, performance.now())
        const ok = yield* Effect.match(cms.patch(name, { _tag: "Merge", body: { data: { v: String(i) } } }), {
          onFailure: () => false,
          onSuccess: () => true
        }).pipe(
          // the writers are interrupted at the end: a write cut off there may never have been sent, and is no confirmed
          // write (one the server did take is reconciled, and its note taken off, as any other)
          Effect.onInterrupt(() => Effect.sync(() => written.delete(`${name}:${i}`)))
        )
        if (!ok) {
          written.delete(`${name}:${i}`)
          yield* Ref.update(failures, (n) => n + 1)
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
        writesNotSeenByController: written.size,
        // which writes, by their number (the last one sent is `writes`)
        unseen: [...written.keys()].slice(0, 10),
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
      assert.strictEqual(written.size, 0, "every confirmed write was seen by a reconcile")
      assert.isBelow(Math.abs(slope((s) => s.fds)), 1, "open file descriptors flat")
    }).pipe(Effect.scoped, Effect.provide(layer())), { timeout: 3_000_000 })
})

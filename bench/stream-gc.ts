/**
 * `node --trace-gc-nvp --import tsx bench/stream-gc.ts [runForEach|runForEachArray|runDrain] [perChunk]`:
 * the young-generation cost of consuming parsed watch events through an Effect Stream, with no
 * effect-kube code and no I/O. 40k pod events are parsed one chunk at a time by a plain pull
 * source (`Stream.fromPull`) and consumed by the named runner; at the end it prints CPU and GC
 * µs per event (sum the `promoted=` fields of `--trace-gc-nvp`'s `gc=s` lines for what was
 * promoted).
 *
 * On Effect 3 `runForEach` promoted every event (~5.3 KB) and doubled the CPU per event
 * against `runDrain` (~41 µs against ~20): its `Channel.fromEffect` stored `() => effect`
 * straight on a property, which V8 pretenures (`test/pretenure.test.ts`), so a dead
 * old-generation closure kept each chunk alive until the next full collection. Effect 4's
 * pull-based streams have no such closure: the three runners promote what a plain loop does.
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { PerformanceObserver } from "node:perf_hooks"
import { pod } from "./pods.js"

const runner = process.argv[2] ?? "runForEach"
const perChunk = Number(process.argv[3] ?? 16)
const texts = Array.from({ length: 200 }, (_, i) => JSON.stringify({ type: "MODIFIED", object: pod(i, "bench") }))
const events = 40_000

let parsed = 0
const source = Stream.fromPull(Effect.succeed(Effect.suspend(() => {
  if (parsed >= events) return Cause.done()
  const out: Array<{ object?: unknown }> = []
  for (let k = 0; k < perChunk && parsed < events; k++, parsed++) out.push(JSON.parse(texts[parsed % 200]!))
  return Effect.succeed(out as unknown as readonly [{ object?: unknown }, ...Array<{ object?: unknown }>])
})))

let seen = 0
const run = runner === "runDrain"
  ? Stream.runDrain(source)
  : runner === "runForEachArray"
  ? Stream.runForEachArray(source, (chunk) => Effect.sync(() => { seen += chunk.length }))
  : Stream.runForEach(source, (event) => Effect.sync(() => { if (event.object !== undefined) seen++ }))

let gcMs = 0
const observer = new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) gcMs += entry.duration
})
observer.observe({ entryTypes: ["gc"] })
const cpu = process.cpuUsage()
Effect.runPromise(run).then(() => {
  const used = process.cpuUsage(cpu)
  setTimeout(() => {
    observer.disconnect()
    const perEvent = (us: number) => (us / events).toFixed(1)
    process.stderr.write(
      `${runner} ${perChunk}/chunk: ${perEvent(used.user + used.system)} µs CPU, ` +
        `${perEvent(gcMs * 1000)} µs GC per event\n`
    )
  }, 10)
})

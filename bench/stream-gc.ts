/**
 * `node --trace-gc-nvp --import tsx bench/stream-gc.ts [runForEach|runForEachChunk|runDrain] [perChunk]`:
 * the young-generation cost of consuming parsed watch events through an Effect Stream, with no
 * effect-kube code and no I/O. 40k pod events are parsed one chunk at a time by a plain
 * channel and consumed by the named runner; at the end it prints CPU and GC µs per event
 * (sum the `promoted=` fields of `--trace-gc-nvp`'s `gc=s` lines for what was promoted).
 *
 * With `runDrain` almost nothing is promoted (~0.4 KB per event, as with a plain loop); with
 * `runForEach` or `runForEachChunk` every event is (~5.3 KB), and CPU per event doubles (~41 µs
 * against ~20). The cause is one line of Effect 3.x: `Channel.fromEffect` (internal
 * `core-stream.js`) stores its effect as `op.effect = () => effect`. V8's parser takes a
 * function literal assigned straight to a property for a method and allocates every closure
 * made there in the old generation (`test/pretenure.test.ts` shows it). `Sink.forEach` makes one
 * per chunk, around the effect that runs the chunk (`Effect.forEach(chunk, f)`): the dead
 * old-generation closure keeps that effect, the chunk and its events alive through every young
 * collection until the next full one, so they are all promoted. Written as
 * `op.effect = constant(effect)` (`function constant(value) { return () => value }`, declared
 * in the module), `runForEach` promotes what `runDrain` does and costs ~20 µs per event.
 */
import * as Channel from "effect/Channel"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { PerformanceObserver } from "node:perf_hooks"
import { pod } from "./pods.js"

const runner = process.argv[2] ?? "runForEach"
const perChunk = Number(process.argv[3] ?? 16)
const texts = Array.from({ length: 200 }, (_, i) => JSON.stringify({ type: "MODIFIED", object: pod(i, "bench") }))
const events = 40_000

let parsed = 0
const source = Stream.fromChannel(Channel.suspend(function loop(): Channel.Channel<Chunk.Chunk<{ object?: unknown }>> {
  if (parsed >= events) return Channel.void
  const out: Array<{ object?: unknown }> = []
  for (let k = 0; k < perChunk && parsed < events; k++, parsed++) out.push(JSON.parse(texts[parsed % 200]!))
  return Channel.zipRight(Channel.write(Chunk.unsafeFromArray(out)), Channel.suspend(loop))
}))

let seen = 0
const run = runner === "runDrain"
  ? Stream.runDrain(source)
  : runner === "runForEachChunk"
  ? Stream.runForEachChunk(source, (chunk) => Effect.sync(() => { seen += chunk.length }))
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

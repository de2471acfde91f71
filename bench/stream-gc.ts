/**
 * `node --trace-gc-nvp --import tsx bench/stream-gc.ts [runForEach|runForEachChunk|runDrain] [perChunk]`:
 * the young-generation cost of consuming parsed watch events through an Effect Stream, with no
 * effect-kube code and no I/O. 40k pod events are parsed one chunk at a time by a plain
 * channel and consumed by the named runner; at the end it prints CPU and GC µs per event
 * (sum the `promoted=` fields of `--trace-gc-nvp`'s `gc=s` lines for what was promoted). With
 * `runDrain` almost nothing is promoted (as with a plain loop); with `runForEach` or
 * `runForEachChunk` about 5 KB per event is, whatever the chunk size (even one event per
 * chunk), and GC time about doubles: the cost is in how the Sink's per-chunk effect is run,
 * not in the producer. It follows the chunk being referenced by that effect:
 * `runForEachChunk(s, () => Effect.succeed(1))` promotes nothing, `runForEachChunk(s, (c) =>
 * Effect.succeed(c))` promotes as much as `runForEach` (whose `Effect.forEach` over the chunk
 * always references it): the per-chunk effects outlive their run inside the channel executor
 * (`runScopedInterpret` / `FromEffect`), so each chunk's objects survive scavenges.
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

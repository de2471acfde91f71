/**
 * `npx tsx bench/lines-micro.ts [reps]`: the CPU time of the line cutter alone
 * (`internal/stream/lines.ts`'s `lineBatches`, what `logStream` runs in the loop that reads
 * the body), over 200k log lines of the `logs` measure (about 110 bytes each) cut in chunks of
 * 16 KiB (a TLS record) and of 1,000 bytes (lines split across chunks), against the floor's
 * cut (`setEncoding("utf8")`, `pending + chunk`, `indexOf`) and a byte count (newline bytes
 * counted, nothing decoded). No server, no Stream: CPU per MB, the median of `reps`, taking turns.
 */
import { StringDecoder } from "node:string_decoder"
import { lineBatches } from "../packages/effect-kube/src/internal/stream/lines.js"

const reps = Number(process.argv[2] ?? 9)
const logLine = (i: number): string =>
  `2025-01-01T12:00:${String(i % 60).padStart(2, "0")}.${String(i % 1000).padStart(3, "0")}Z INFO ` +
  `request handled method=GET path=/api/items/${i} status=200 duration_ms=${i % 97} bytes=${(i * 7919) % 65536}`
const body = Buffer.from(Array.from({ length: 200_000 }, (_, i) => logLine(i)).join("\n") + "\n")
const chunksOf = (size: number) => {
  const out: Array<Buffer> = []
  for (let at = 0; at < body.length; at += size) out.push(body.subarray(at, Math.min(at + size, body.length)))
  return out
}

const cut = (make: typeof lineBatches) => (chunks: ReadonlyArray<Buffer>) => {
    const decoder = make(true, 128 * 1024, () => "too long")()
    let seen = 0
    const out: Array<string> = []
    for (const chunk of chunks) {
      decoder.push(chunk)
      if (decoder.ready() && decoder.full()) {
        decoder.take(out)
        seen += out.length
        out.length = 0
      }
    }
    decoder.take(out)
    decoder.end(out)
    return seen + out.length
  }

// LINES_BEFORE=<path> adds the line cutter of another version of lines.ts, to compare (tsx resolves the path)
const before = process.env["LINES_BEFORE"]
const contenders: Record<string, (chunks: ReadonlyArray<Buffer>) => number> = {
  "effect-kube lineBatches": cut(lineBatches),
  ...(before === undefined ? {} : { "the same, LINES_BEFORE's": cut((await import(before)).lineBatches) }),
  "floor: decode, pending + chunk, indexOf": (chunks) => {
    const decoder = new StringDecoder("utf8")
    let pending = ""
    let seen = 0
    // the lines are kept a batch at a time, as a consumer is handed them
    const batch: Array<string> = []
    for (const chunk of chunks) {
      const text = pending + decoder.write(chunk)
      let start = 0
      let newline: number
      while ((newline = text.indexOf("\n", start)) !== -1) {
        batch.push(text.slice(start, newline))
        start = newline + 1
      }
      pending = text.slice(start)
      seen += batch.length
      batch.length = 0
    }
    return seen
  },
  "byte count: newline bytes, nothing decoded": (chunks) => {
    let seen = 0
    for (const chunk of chunks) {
      let at = 0
      while ((at = chunk.indexOf(10, at)) !== -1) {
        seen++
        at++
      }
    }
    return seen
  }
}

const median = (values: ReadonlyArray<number>) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!
for (const size of [16 * 1024, 1000]) {
  const chunks = chunksOf(size)
  const samples: Record<string, Array<number>> = {}
  for (let rep = 0; rep < reps + 1; rep++) {
    for (const [name, run] of Object.entries(contenders)) {
      const cpu = process.cpuUsage()
      const seen = run(chunks)
      const used = process.cpuUsage(cpu)
      if (seen !== 200_000) throw new Error(`${name}: ${seen} lines`)
      // the first turn warms up
      if (rep > 0) (samples[name] ??= []).push((used.user + used.system) / 1000)
    }
  }
  const mb = body.length / 1e6
  process.stdout.write(`chunks of ${size} bytes, ${mb.toFixed(1)} MB, median of ${reps}:\n`)
  for (const [name, ms] of Object.entries(samples)) {
    process.stdout.write(`  ${name.padEnd(44)} ${median(ms).toFixed(1).padStart(7)} ms CPU  ${(median(ms) / mb).toFixed(2)} ms/MB\n`)
  }
}

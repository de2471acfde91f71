/**
 * One measurement of one client, in a process of its own so that its peak RSS is its
 * own: `node --expose-gc --import tsx bench/worker.ts '<json Job>'`. Prints one line of
 * JSON (a `Result`) on stdout.
 *
 * Each measurement warms the client up first (a smaller run of the same work), so JIT
 * compilation and connection setup are not measured.
 *
 * Watch and log throughput is the client's: the server is asked to produce all the
 * events (or lines) while this process is blocked in a synchronous call, so the bytes
 * wait in the socket buffers and the clock measures only how fast the client consumes
 * them, not how fast the fake cluster produces them.
 */
import { execFileSync } from "node:child_process"
import { performance } from "node:perf_hooks"
import type * as Clients from "./clients.js"
import { undiciRedirected } from "./undici-compat.js"

export type Measure = "list" | "get" | "watch" | "logs"

export interface Job {
  readonly measure: Measure
  readonly client: Clients.ClientName
  readonly target: Clients.Target
  /** The bench server's control endpoint (plain HTTP on loopback). */
  readonly control: string
  readonly list: { readonly namespace: string; readonly warmNamespace: string; readonly pageSize: number; readonly count: number }
  readonly get: { readonly namespace: string; readonly name: string; readonly warmup: number; readonly count: number }
  readonly watch: { readonly namespace: string; readonly warmup: number; readonly count: number }
  readonly logs: {
    readonly namespace: string
    readonly warmPod: string
    readonly pod: string
    readonly warmup: number
    readonly count: number
  }
}

export type Result =
  | { readonly measure: "list"; readonly wallMs: number; readonly peakRssBytes: number; readonly items: number }
  | { readonly measure: "get"; readonly p50Ms: number; readonly p99Ms: number; readonly meanMs: number }
  | { readonly measure: "watch"; readonly eventsPerSec: number; readonly events: number }
  | { readonly measure: "logs"; readonly linesPerSec: number; readonly lines: number }

const gc = (): void => {
  const collect = (globalThis as { gc?: () => void }).gc
  if (collect === undefined) throw new Error("run the worker with --expose-gc")
  collect()
  collect()
}

const control = async (job: Job, path: string): Promise<string> => {
  const response = await fetch(`${job.control}${path}`, { method: "POST" })
  const text = await response.text()
  if (!response.ok) throw new Error(`control ${path}: ${response.status} ${text}`)
  return text
}

/** Blocks this process (its event loop included) until the server has done `path`. */
const controlBlocking = (job: Job, path: string): string =>
  execFileSync("curl", ["-sSf", "-X", "POST", `${job.control}${path}`], { encoding: "utf8", maxBuffer: 1 << 20 })

const quantile = (sorted: ReadonlyArray<number>, q: number): number =>
  sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!

const list = async (job: Job, client: Clients.Client): Promise<Result> => {
  const { count, namespace, pageSize, warmNamespace } = job.list
  for (let i = 0; i < 3; i++) await client.listAll(warmNamespace, pageSize)
  gc()
  const baseline = process.memoryUsage().rss
  const start = performance.now()
  const items = await client.listAll(namespace, pageSize)
  const wallMs = performance.now() - start
  // maxRSS is the peak of the whole process; the warm-up holds a fifth of the pods, so the peak is this list's.
  const peak = process.resourceUsage().maxRSS * 1024
  if (items.length !== count) throw new Error(`${job.client}: listed ${items.length} pods, expected ${count}`)
  return { measure: "list", wallMs, peakRssBytes: peak - baseline, items: items.length }
}

const get = async (job: Job, client: Clients.Client): Promise<Result> => {
  const { count, name, namespace, warmup } = job.get
  for (let i = 0; i < warmup; i++) await client.get(namespace, name)
  const latencies: Array<number> = new Array(count)
  for (let i = 0; i < count; i++) {
    const start = performance.now()
    const pod = await client.get(namespace, name)
    latencies[i] = performance.now() - start
    if (pod === undefined) throw new Error(`${job.client}: no pod`)
  }
  const sorted = [...latencies].sort((a, b) => a - b)
  return {
    measure: "get",
    p50Ms: quantile(sorted, 0.5),
    p99Ms: quantile(sorted, 0.99),
    meanMs: latencies.reduce((a, b) => a + b, 0) / count
  }
}

const nameOf = (object: unknown): unknown =>
  (object as { metadata?: { name?: unknown } } | undefined)?.metadata?.name

/**
 * One watch of `count` MODIFIED events: a first event proves the watch is connected, then
 * the bulk is produced while this process is blocked, then the clock runs while it
 * drains.
 */
const watchRun = async (job: Job, client: Clients.Client, count: number): Promise<number> => {
  const { namespace } = job.watch
  const resourceVersion = await control(job, `/rv?namespace=${namespace}`)
  let seen = 0
  let start = 0
  const done = client.watch(namespace, resourceVersion, count + 1, (type, object) => {
    if (type !== "MODIFIED" || typeof nameOf(object) !== "string") {
      throw new Error(`${job.client}: unexpected event ${type}`)
    }
    if (seen++ === 0) {
      controlBlocking(job, `/touch?namespace=${namespace}&count=${count}`)
      start = performance.now()
    }
  })
  await control(job, `/touch?namespace=${namespace}&count=1`)
  await done
  const elapsed = performance.now() - start
  if (seen !== count + 1) throw new Error(`${job.client}: saw ${seen} events, expected ${count + 1}`)
  return (count / elapsed) * 1000
}

const watch = async (job: Job, client: Clients.Client): Promise<Result> => {
  await watchRun(job, client, job.watch.warmup)
  const eventsPerSec = await watchRun(job, client, job.watch.count)
  return { measure: "watch", eventsPerSec, events: job.watch.count }
}

const logsRun = async (job: Job, client: Clients.Client, pod: string, count: number): Promise<number> => {
  const { namespace } = job.logs
  let seen = 0
  let start = 0
  const done = client.follow(namespace, pod, count + 1, (line) => {
    if (seen++ === 0) {
      controlBlocking(job, `/log?namespace=${namespace}&pod=${pod}&count=${count}`)
      start = performance.now()
    } else if (line.length < 20) throw new Error(`${job.client}: unexpected line ${JSON.stringify(line)}`)
  })
  await control(job, `/log?namespace=${namespace}&pod=${pod}&count=1`)
  await done
  const elapsed = performance.now() - start
  if (seen !== count + 1) throw new Error(`${job.client}: saw ${seen} lines, expected ${count + 1}`)
  return (count / elapsed) * 1000
}

const logs = async (job: Job, client: Clients.Client): Promise<Result> => {
  await logsRun(job, client, job.logs.warmPod, job.logs.warmup)
  const linesPerSec = await logsRun(job, client, job.logs.pod, job.logs.count)
  return { measure: "logs", linesPerSec, lines: job.logs.count }
}

const main = async () => {
  const job = JSON.parse(process.argv[2]!) as Job
  // Imported only now: client-node's imports must be resolved after undici-compat's hook is in place.
  const Clients = await import("./clients.js")
  void undiciRedirected
  const client = Clients.make(job.client, job.target)
  const run = { list, get, watch, logs }[job.measure]
  const result = await run(job, client)
  process.stdout.write(`${JSON.stringify(result)}\n`)
  await client.close()
  // Streams of some clients keep sockets half-open after they are abandoned: do not wait for them.
  process.exit(0)
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack ?? error.message : String(error)}\n`)
  process.exit(1)
})

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
 *
 * Against the real control plane (`real-*`, see bench/real.ts) there is no such control: the
 * watch replays a burst of writes made before (from the resourceVersion before it, out of
 * the apiserver's watch cache) and the follow reads a log its container wrote before, so the
 * clock runs from the first event (or line) to the last, as fast as client and apiserver go.
 */
import { execFileSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Http from "node:http"
import * as Inspector from "node:inspector"
import * as Path from "node:path"
import { performance } from "node:perf_hooks"
import type * as Clients from "./clients.js"
import { undiciRedirected } from "./undici-compat.js"

export type Measure =
  | "list"
  | "list-gzip"
  | "get"
  | "watch"
  | "logs"
  | "logs-bytes"
  | "load"
  | "list-slow"
  | "watches"
  | "real-watch"
  | "real-logs"
  | "real-logs-bytes"
  | "real"

export interface Job {
  readonly measure: Measure
  readonly client: Clients.ClientName
  readonly target: Clients.Target
  /** The bench server's control endpoint (plain HTTP on loopback). */
  readonly control: string
  /** When set, the measured part (not start-up, not warm-up) is CPU-profiled into this directory. */
  readonly profileDir?: string | undefined
  readonly list: {
    readonly namespace: string
    readonly warmNamespace: string
    readonly pageSize: number
    readonly count: number
  }
  readonly get: { readonly namespace: string; readonly name: string; readonly warmup: number; readonly count: number }
  readonly watch: {
    readonly namespace: string
    readonly warmup: number
    readonly count: number
    /** `real-watch`: the burst's events come after this resourceVersion (`warmup` of them first, then all `count`). */
    readonly resourceVersion?: string | undefined
  }
  readonly logs: {
    readonly namespace: string
    readonly warmPod: string
    readonly pod: string
    readonly warmup: number
    readonly count: number
  }
  readonly load: {
    readonly namespace: string
    readonly name: string
    /** Sequential GETs first, for the JIT; they leave one kept-alive connection. */
    readonly warmup: number
    /** GETs sent at once. */
    readonly count: number
    /** Watches held open during the burst (0: none), on `watchNamespace`, which is touched meanwhile. */
    readonly watches: number
    readonly watchNamespace: string
    /** Every this many ms during the burst one pod of `watchNamespace` changes: an event on every watch. */
    readonly touchEveryMs: number
  }
  /** `watches`: this many watches of the namespace opened at once and held. */
  readonly watches: { readonly namespace: string; readonly count: number }
  /** `real`: these measures one after the other in this process (the list first: its peak RSS is the cold list's). */
  readonly real?: ReadonlyArray<Measure> | undefined
}

/**
 * `cpuMs`: this process's CPU time (user + system) over the measured part, less
 * sensitive than wall time to a busy machine.
 */
export type Result =
  | {
    readonly measure: "list" | "list-gzip"
    readonly wallMs: number
    /** The peak RSS of the process during a cold list, less the RSS before it. */
    readonly peakRssBytes: number
    readonly baselineRssBytes: number
    readonly items: number
    readonly cpuMs: number
  }
  | {
    readonly measure: "get"
    readonly p50Ms: number
    readonly p99Ms: number
    readonly meanMs: number
    readonly cpuMs: number
  }
  | {
    readonly measure: "watch" | "real-watch"
    readonly eventsPerSec: number
    readonly events: number
    readonly cpuMs: number
  }
  | {
    readonly measure: "logs" | "logs-bytes" | "real-logs" | "real-logs-bytes"
    readonly linesPerSec: number
    readonly lines: number
    readonly cpuMs: number
  }
  | {
    readonly measure: "load"
    /** How many watches were open during the burst. */
    readonly watches: number
    readonly wallMs: number
    /** Connections the server accepted during the burst. */
    readonly connections: number
    /** Connections the server accepted from the client's first request on (warm-up, watches and burst). */
    readonly connectionsTotal: number
    /** Each GET's time from the burst's start to its answer. */
    readonly p99Ms: number
    /** GETs of the burst that failed (the wall time includes them). */
    readonly failed: number
    /** Events the watches received during the burst. */
    readonly watchEvents: number
    readonly cpuMs: number
  }
  | { readonly measure: "list-slow"; readonly wallMs: number; readonly items: number; readonly cpuMs: number }
  | {
    readonly measure: "watches"
    readonly watches: number
    /** Connections the server accepted from the client's first request on (one warm-up GET and watch too). */
    readonly connections: number
    /** RSS and heap in use with every watch open, less what they were before the first was opened (after a GC). */
    readonly rssBytes: number
    readonly heapBytes: number
    /** From the first watch sent to the last one's first event. */
    readonly openMs: number
    readonly cpuMs: number
  }
  | {
    readonly measure: "real"
    readonly results: ReadonlyArray<Result>
    /** The sum of theirs. */
    readonly cpuMs: number
  }

const cpuSince = (start: NodeJS.CpuUsage): number => {
  const used = process.cpuUsage(start)
  return (used.user + used.system) / 1000
}

const gc = (): void => {
  const collect = (globalThis as { gc?: () => void }).gc
  if (collect === undefined) throw new Error("run the worker with --expose-gc")
  collect()
  collect()
}

/**
 * A POST to the bench server's control endpoint, on a connection of its own: a kept-alive
 * one may be closed by the server's idle timeout just as it is reused ("other side closed").
 */
const control = (job: Job, path: string): Promise<string> =>
  new Promise((resolve, reject) => {
    const req = Http.request(`${job.control}${path}`, { method: "POST", agent: false }, (res) => {
      let text = ""
      res.setEncoding("utf8")
      res.on("data", (chunk: string) => (text += chunk))
      res.on("end", () =>
        res.statusCode === 200 ? resolve(text) : reject(new Error(`control ${path}: ${res.statusCode} ${text}`))
      )
      res.on("error", reject)
    })
    req.on("error", reject)
    req.end()
  })

/** Blocks this process (its event loop included) until the server has done `path`. */
const controlBlocking = (job: Job, path: string): string =>
  execFileSync("curl", ["-sSf", "-X", "POST", `${job.control}${path}`], { encoding: "utf8", maxBuffer: 1 << 20 })

let session: Inspector.Session | undefined

const post = (method: string, params?: object): Promise<unknown> =>
  new Promise((resolve, reject) =>
    session!.post(method, params, (error, result) => (error ? reject(error) : resolve(result)))
  )

/** Starts the profiler when the job asks for a profile (call right before the measured part). */
const profileStart = async (job: Job): Promise<void> => {
  if (job.profileDir === undefined) return
  session = new Inspector.Session()
  session.connect()
  await post("Profiler.enable")
  await post("Profiler.setSamplingInterval", { interval: 100 })
  await post("Profiler.start")
}

const profileStop = async (job: Job): Promise<void> => {
  if (job.profileDir === undefined || session === undefined) return
  const { profile } = await post("Profiler.stop") as { profile: unknown }
  Fs.mkdirSync(job.profileDir, { recursive: true })
  const file = Path.join(job.profileDir, `${job.measure}-${job.client}-${process.pid}.cpuprofile`)
  Fs.writeFileSync(file, JSON.stringify(profile))
  process.stderr.write(`profile: ${file}\n`)
  session.disconnect()
}

const quantile = (sorted: ReadonlyArray<number>, q: number): number =>
  sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!

/**
 * Peak RSS comes from a first, cold list measured from a baseline taken after start-up and
 * before any request: a baseline taken after warm-up lists would depend on how much freed
 * heap each client happens to keep. Wall and CPU time come from a later list, after
 * warm-up lists of a smaller namespace. `list-gzip` is the same against the compressing
 * listener (the job's target says so), every page gzipped.
 */
const list = async (job: Job, client: Clients.Client): Promise<Result> => {
  const { count, namespace, pageSize, warmNamespace } = job.list
  gc()
  const baseline = process.memoryUsage().rss
  let items = await client.listAll(namespace, pageSize)
  const peak = process.resourceUsage().maxRSS * 1024
  if (items.length !== count) throw new Error(`${job.client}: listed ${items.length} pods, expected ${count}`)
  items = []
  gc()
  for (let i = 0; i < 3; i++) await client.listAll(warmNamespace, pageSize)
  await profileStart(job)
  const cpu = process.cpuUsage()
  const start = performance.now()
  items = await client.listAll(namespace, pageSize)
  const wallMs = performance.now() - start
  const cpuMs = cpuSince(cpu)
  await profileStop(job)
  if (items.length !== count) throw new Error(`${job.client}: listed ${items.length} pods, expected ${count}`)
  return {
    measure: job.measure === "list-gzip" ? "list-gzip" : "list",
    wallMs,
    peakRssBytes: peak - baseline,
    baselineRssBytes: baseline,
    items: items.length,
    cpuMs
  }
}

/**
 * `list-slow`: the list of `list`, through a simulated slow link (the job's target is the
 * link, see bench/link.ts), after one list of the warm namespace through it.
 */
const listSlow = async (job: Job, client: Clients.Client): Promise<Result> => {
  const { count, namespace, pageSize, warmNamespace } = job.list
  await client.listAll(warmNamespace, pageSize)
  gc()
  await profileStart(job)
  const cpu = process.cpuUsage()
  const start = performance.now()
  const items = await client.listAll(namespace, pageSize)
  const wallMs = performance.now() - start
  const cpuMs = cpuSince(cpu)
  await profileStop(job)
  if (items.length !== count) throw new Error(`${job.client}: listed ${items.length} pods, expected ${count}`)
  return { measure: "list-slow", wallMs, items: items.length, cpuMs }
}

const get = async (job: Job, client: Clients.Client): Promise<Result> => {
  const { count, name, namespace, warmup } = job.get
  for (let i = 0; i < warmup; i++) await client.get(namespace, name)
  const latencies: Array<number> = new Array(count)
  await profileStart(job)
  const cpu = process.cpuUsage()
  for (let i = 0; i < count; i++) {
    const start = performance.now()
    const pod = await client.get(namespace, name)
    latencies[i] = performance.now() - start
    if (pod === undefined) throw new Error(`${job.client}: no pod`)
  }
  const cpuMs = cpuSince(cpu)
  await profileStop(job)
  const sorted = [...latencies].sort((a, b) => a - b)
  return {
    measure: "get",
    p50Ms: quantile(sorted, 0.5),
    p99Ms: quantile(sorted, 0.99),
    meanMs: latencies.reduce((a, b) => a + b, 0) / count,
    cpuMs
  }
}

const nameOf = (object: unknown): unknown =>
  (object as { metadata?: { name?: unknown } } | undefined)?.metadata?.name

/**
 * One watch of `count` MODIFIED events: a first event proves the watch is connected, then
 * the bulk is produced while this process is blocked, then the clock runs while it
 * drains.
 */
const watchRun = async (
  job: Job,
  client: Clients.Client,
  count: number
): Promise<{ readonly perSec: number; readonly cpuMs: number }> => {
  const { namespace } = job.watch
  const resourceVersion = await control(job, `/rv?namespace=${namespace}`)
  let seen = 0
  let start = 0
  let cpu = process.cpuUsage()
  const done = client.watch(namespace, resourceVersion, count + 1, (type, object) => {
    if (type !== "MODIFIED" || typeof nameOf(object) !== "string") {
      throw new Error(`${job.client}: unexpected event ${type}`)
    }
    if (seen++ === 0) {
      controlBlocking(job, `/touch?namespace=${namespace}&count=${count}`)
      cpu = process.cpuUsage()
      start = performance.now()
    }
  })
  await control(job, `/touch?namespace=${namespace}&count=1`)
  await done
  const elapsed = performance.now() - start
  const cpuMs = cpuSince(cpu)
  if (seen !== count + 1) throw new Error(`${job.client}: saw ${seen} events, expected ${count + 1}`)
  return { perSec: (count / elapsed) * 1000, cpuMs }
}

const watch = async (job: Job, client: Clients.Client): Promise<Result> => {
  await watchRun(job, client, job.watch.warmup)
  await profileStart(job)
  const { cpuMs, perSec } = await watchRun(job, client, job.watch.count)
  await profileStop(job)
  return {
    measure: "watch",
    eventsPerSec: perSec,
    events: job.watch.count,
    cpuMs
  }
}

const logsRun = async (
  job: Job,
  client: Clients.Client,
  pod: string,
  count: number
): Promise<{ readonly perSec: number; readonly cpuMs: number }> => {
  const { namespace } = job.logs
  let seen = 0
  let start = 0
  let cpu = process.cpuUsage()
  const via = job.measure === "logs-bytes" ? "bytes" : "lines"
  const done = client.follow(namespace, pod, count + 1, via, (line) => {
    if (seen++ === 0) {
      controlBlocking(job, `/log?namespace=${namespace}&pod=${pod}&count=${count}`)
      cpu = process.cpuUsage()
      start = performance.now()
    } else if (line.length < 20) throw new Error(`${job.client}: unexpected line ${JSON.stringify(line)}`)
  })
  await control(job, `/log?namespace=${namespace}&pod=${pod}&count=1`)
  await done
  const elapsed = performance.now() - start
  const cpuMs = cpuSince(cpu)
  if (seen !== count + 1) throw new Error(`${job.client}: saw ${seen} lines, expected ${count + 1}`)
  return { perSec: (count / elapsed) * 1000, cpuMs }
}

const logs = async (job: Job, client: Clients.Client): Promise<Result> => {
  await logsRun(job, client, job.logs.warmPod, job.logs.warmup)
  await profileStart(job)
  const { cpuMs, perSec } = await logsRun(job, client, job.logs.pod, job.logs.count)
  await profileStop(job)
  const measure = job.measure === "logs-bytes" ? job.measure : "logs"
  return { measure, linesPerSec: perSec, lines: job.logs.count, cpuMs }
}

/**
 * `real-watch`: the first `count` events of a watch from `resourceVersion`, the pods the burst
 * created (ADDED), replayed by the apiserver's watch cache; events a second from the first
 * event to the last.
 */
const replayRun = async (
  job: Job,
  client: Clients.Client,
  count: number
): Promise<{ readonly perSec: number; readonly cpuMs: number }> => {
  const { namespace, resourceVersion } = job.watch
  if (resourceVersion === undefined) throw new Error("real-watch: no resourceVersion")
  let seen = 0
  let start = 0
  let cpu = process.cpuUsage()
  await client.watch(namespace, resourceVersion, count, (type, object) => {
    if (type !== "ADDED" || typeof nameOf(object) !== "string") {
      throw new Error(`${job.client}: unexpected event ${type}`)
    }
    if (seen++ === 0) {
      cpu = process.cpuUsage()
      start = performance.now()
    }
  })
  const elapsed = performance.now() - start
  const cpuMs = cpuSince(cpu)
  if (seen !== count) throw new Error(`${job.client}: saw ${seen} events, expected ${count}`)
  return { perSec: ((count - 1) / elapsed) * 1000, cpuMs }
}

const realWatch = async (job: Job, client: Clients.Client): Promise<Result> => {
  await replayRun(job, client, job.watch.warmup)
  await profileStart(job)
  const { cpuMs, perSec } = await replayRun(job, client, job.watch.count)
  await profileStop(job)
  return { measure: "real-watch", eventsPerSec: perSec, events: job.watch.count, cpuMs }
}

/**
 * `real-logs`: a follow of a log of `count` lines its container has already written (it then
 * sleeps): lines a second from the first line to the last.
 */
const readRun = async (
  job: Job,
  client: Clients.Client,
  pod: string,
  count: number
): Promise<{ readonly perSec: number; readonly cpuMs: number }> => {
  let seen = 0
  let start = 0
  let cpu = process.cpuUsage()
  const via = job.measure === "real-logs-bytes" ? "bytes" : "lines"
  await client.follow(job.logs.namespace, pod, count, via, (line) => {
    if (seen++ === 0) {
      cpu = process.cpuUsage()
      start = performance.now()
    }
    if (line.length < 20) throw new Error(`${job.client}: unexpected line ${JSON.stringify(line)}`)
  })
  const elapsed = performance.now() - start
  const cpuMs = cpuSince(cpu)
  if (seen !== count) throw new Error(`${job.client}: saw ${seen} lines, expected ${count}`)
  return { perSec: ((count - 1) / elapsed) * 1000, cpuMs }
}

const realLogs = async (job: Job, client: Clients.Client): Promise<Result> => {
  // The warm pod's log is read whole: a client that leaves a follow open reads nothing more from it.
  await readRun(job, client, job.logs.warmPod, job.logs.warmup)
  await profileStart(job)
  const { cpuMs, perSec } = await readRun(job, client, job.logs.pod, job.logs.count)
  await profileStop(job)
  return { measure: job.measure === "real-logs-bytes" ? "real-logs-bytes" : "real-logs", linesPerSec: perSec, lines: job.logs.count, cpuMs }
}

/**
 * `count` GETs of one pod sent at once, after `warmup` sequential ones; with `watches`
 * watches held open (each connected, proven by a first event) and receiving an event every
 * `touchEveryMs` meanwhile. Connections are counted by the server.
 */
const load = async (job: Job, client: Clients.Client): Promise<Result> => {
  const { count, name, namespace, touchEveryMs, warmup, watchNamespace, watches } = job.load
  const first = Number(await control(job, "/connections"))
  for (let i = 0; i < warmup; i++) await client.get(namespace, name)
  const open = watches > 0 ? await openWatches(job, client, watchNamespace, watches) : { events: () => 0 }
  const touching = watches > 0
    ? setInterval(() => {
      control(job, `/touch?namespace=${watchNamespace}&count=1`).catch((error: unknown) => {
        process.stderr.write(`touch failed: ${String(error)}\n`)
      })
    }, touchEveryMs)
    : undefined
  const before = Number(await control(job, "/connections"))
  const eventsBefore = open.events()
  const latencies: Array<number> = []
  await profileStart(job)
  const cpu = process.cpuUsage()
  const start = performance.now()
  let failed = 0
  let firstFailure: unknown
  await Promise.all(Array.from({ length: count }, () =>
    client.get(namespace, name).then(
      (pod) => {
        latencies.push(performance.now() - start)
        if (nameOf(pod) !== name) throw new Error(`${job.client}: a GET did not return the pod`)
      },
      (error: unknown) => {
        // Counted, not fatal: a client that opens a connection per request may be refused some.
        if (failed++ === 0) firstFailure = error
      }
    )))
  const wallMs = performance.now() - start
  const cpuMs = cpuSince(cpu)
  await profileStop(job)
  clearInterval(touching)
  const after = Number(await control(job, "/connections"))
  if (firstFailure !== undefined) {
    process.stderr.write(`${job.client}: ${failed} of ${count} GETs failed, the first with ${String(firstFailure)}\n`)
  }
  return {
    measure: "load",
    watches,
    wallMs,
    connections: after - before,
    connectionsTotal: after - first,
    p99Ms: quantile(latencies.sort((a, b) => a - b), 0.99),
    failed,
    watchEvents: open.events() - eventsBefore,
    cpuMs
  }
}

/**
 * Opens `count` watches of a namespace at once and waits until each has had an event (the
 * namespace is touched until then), which proves it connected. They are held until the process ends.
 */
const openWatches = async (job: Job, client: Clients.Client, namespace: string, count: number) => {
  let events = 0
  const connected = new Set<number>()
  const resourceVersion = await control(job, `/rv?namespace=${namespace}`)
  for (let w = 0; w < count; w++) {
    client.watch(namespace, resourceVersion, Number.MAX_SAFE_INTEGER, () => {
      connected.add(w)
      events++
    }).catch((error: unknown) => {
      if (!closing) process.stderr.write(`${job.client}: watch ${w} failed: ${String(error)}\n`)
    })
  }
  const deadline = performance.now() + 30_000
  while (connected.size < count) {
    if (performance.now() > deadline) throw new Error(`${job.client}: ${connected.size} of ${count} watches open`)
    await control(job, `/touch?namespace=${namespace}&count=1`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  return { events: () => events }
}

/**
 * `watches`: after one GET and one watch for warm-up, `count` watches opened at once and
 * held: how many connections they took, and the client's memory with all of them open.
 */
const watches = async (job: Job, client: Clients.Client): Promise<Result> => {
  const { count, namespace } = job.watches
  const first = Number(await control(job, "/connections"))
  await client.get(job.load.namespace, job.load.name)
  const warm = await control(job, `/rv?namespace=${namespace}`)
  const warmWatch = client.watch(namespace, warm, 1, () => undefined)
  await control(job, `/touch?namespace=${namespace}&count=1`)
  await warmWatch
  gc()
  const baseline = process.memoryUsage()
  const cpu = process.cpuUsage()
  const start = performance.now()
  await openWatches(job, client, namespace, count)
  const openMs = performance.now() - start
  const cpuMs = cpuSince(cpu)
  gc()
  const held = process.memoryUsage()
  const connections = Number(await control(job, "/connections")) - first
  return {
    measure: "watches",
    watches: count,
    connections,
    rssBytes: held.rss - baseline.rss,
    heapBytes: held.heapUsed - baseline.heapUsed,
    openMs,
    cpuMs
  }
}

/** Set once the result is out: streams failing as the client closes are expected then. */
let closing = false

const main = async () => {
  const job = JSON.parse(process.argv[2]!) as Job
  // Imported only now: client-node's imports must be resolved after undici-compat's hook is in place.
  const Clients = await import("./clients.js")
  void undiciRedirected
  const client = Clients.make(job.client, job.target)
  await client.init()
  const run: Record<Measure, (job: Job, client: Clients.Client) => Promise<Result>> = {
    list,
    "list-gzip": list,
    get,
    watch,
    logs,
    "logs-bytes": logs,
    load,
    "list-slow": listSlow,
    watches,
    "real-watch": realWatch,
    "real-logs": realLogs,
    "real-logs-bytes": realLogs,
    real: async (job: Job, client: Clients.Client): Promise<Result> => {
      const results: Array<Result> = []
      for (const measure of job.real ?? []) {
        if (measure === "real") throw new Error("real: a measure of its own")
        results.push(await run[measure]({ ...job, measure }, client))
      }
      return { measure: "real", results, cpuMs: results.reduce((sum, r) => sum + r.cpuMs, 0) }
    }
  }
  const result = await run[job.measure](job, client)
  process.stdout.write(`${JSON.stringify(result)}\n`)
  closing = true
  await client.close()
  // Streams of some clients keep sockets half-open after they are abandoned: do not wait for them.
  process.exit(0)
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack ?? error.message : String(error)}\n`)
  process.exit(1)
})

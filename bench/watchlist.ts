/**
 * A reflector's start on a real control plane, by WatchList (`sendInitialEvents=true`, the
 * watch cache's snapshot as events) or by list-then-watch (pages of 500): the client's wall
 * time until `ready`, its CPU and peak RSS, and the CPU the kube-apiserver and etcd spent on it
 * (their /proc/<pid>/stat utime + stime, read by the client just before the reflector starts
 * and once it is ready), and the bytes the kube-apiserver allocated meanwhile (its /metrics
 * `go_memstats_alloc_bytes_total`, read just before the start and once the child has ended; both
 * reads count alike in either mode). One start a process, so that its peak is its own; the modes
 * take turns, and the medians are reported.
 *
 *   tsx bench/watchlist.ts [--pods 10000] [--reps 3]     # starts cluster/'s control plane, seeds, measures, stops
 *   tsx bench/watchlist.ts start <namespace> auto|list <apiserver pid> <etcd pid>   # one start (KUBECONFIG=…)
 *
 * The pods are bench/real.ts's (bench/pods.ts's, held by a scheduling gate: nothing writes them
 * after), about 5.3 KB of JSON each as the apiserver returns them. Not part of `npm run bench`:
 * seeding 10,000 pods takes minutes on the shared machine.
 */
import { spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

const here = Path.dirname(fileURLToPath(import.meta.url))
const [command = "bench", ...rest] = process.argv.slice(2)

const cpuOf = async (pid: number | undefined): Promise<number> => {
  if (pid === undefined || Number.isNaN(pid)) return Number.NaN
  const { processCpuMs } = await import("./real-cluster.js")
  return processCpuMs(pid)
}

/** One start, in this process: prints one line of JSON. */
const start = async (namespace: string, mode: "auto" | "list", apiserverPid: number, etcdPid: number) => {
  const { Effect } = await import("effect")
  const { Kube, NodeKube, Pods } = await import("effect-kube")
  const layer = NodeKube.layerFromFile({ path: process.env["KUBECONFIG"]! })
  const baseRssMiB = process.memoryUsage().rss / 2 ** 20
  const figures = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
    const server = { apiserver: yield* Effect.promise(() => cpuOf(apiserverPid)), etcd: yield* Effect.promise(() => cpuOf(etcdPid)) }
    const began = performance.now()
    const cpu = process.cpuUsage()
    const store = yield* Kube.api(Pods, { namespace }).reflector({ watchList: mode === "auto" ? "auto" : false })
    yield* store.ready
    const wallMs = performance.now() - began
    const used = process.cpuUsage(cpu)
    const apiserverCpuMs = (yield* Effect.promise(() => cpuOf(apiserverPid))) - server.apiserver
    const etcdCpuMs = (yield* Effect.promise(() => cpuOf(etcdPid))) - server.etcd
    const objects = (yield* store.list()).length
    return {
      mode,
      objects,
      wallMs: Math.round(wallMs),
      cpuMs: Math.round((used.user + used.system) / 1000),
      apiserverCpuMs,
      etcdCpuMs,
      peakRssMiB: Math.round(process.resourceUsage().maxRSS / 1024),
      baseRssMiB: Math.round(baseRssMiB)
    }
  }).pipe(Effect.provide(layer))))
  process.stdout.write(`${JSON.stringify(figures)}\n`)
}

interface StartFigures {
  readonly mode: string
  readonly objects: number
  readonly wallMs: number
  readonly cpuMs: number
  readonly apiserverCpuMs: number
  readonly etcdCpuMs: number
  readonly peakRssMiB: number
  readonly baseRssMiB: number
  /** The apiserver's CPU at its idle pace over the start's wall time, and its CPU over the start less that. */
  readonly apiserverIdleCpuMs?: number
  readonly apiserverNetCpuMs?: number
  /** MiB the apiserver's Go heap allocated over the start (its garbage included). */
  readonly apiserverAllocMiB?: number
}

/** The apiserver's cumulative heap allocations, from its own metrics. */
const allocatedBytes = async (metrics: { must: (method: string, path: string) => Promise<{ text: string }> }) => {
  const { text } = await metrics.must("GET", "/metrics")
  const line = text.split("\n").find((l) => l.startsWith("go_memstats_alloc_bytes_total "))
  return line === undefined ? Number.NaN : Number(line.split(" ")[1])
}

const runChild = (args: ReadonlyArray<string>, env: Record<string, string>): Promise<StartFigures> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", Path.join(here, "watchlist.ts"), ...args], {
      stdio: ["ignore", "pipe", "inherit"],
      env: { ...process.env, ...env }
    })
    let out = ""
    child.stdout.setEncoding("utf8").on("data", (s: string) => (out += s))
    child.on("error", reject)
    child.on("exit", (code) => {
      const line = out.split("\n").find((l) => l.startsWith("{"))
      if (code !== 0 || line === undefined) reject(new Error(`watchlist start ${args.join(" ")}: exit ${code}`))
      else resolve(JSON.parse(line) as StartFigures)
    })
  })

const median = (values: ReadonlyArray<number>) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

const bench = async () => {
  const flag = (name: string, otherwise: number) => {
    const i = rest.indexOf(name)
    return i === -1 ? otherwise : Number(rest[i + 1])
  }
  const pods = flag("--pods", 10_000)
  const reps = flag("--reps", 3)
  const real = await import("./real-cluster.js")
  const { realPod, realSizes } = await import("./real.js")
  const cluster = await real.startCluster()
  const ns = "bench-watchlist"
  try {
    const credentials = real.readCredentials(cluster.kubeconfig)
    const admin = real.adminSession(credentials)
    const version = (JSON.parse((await admin.must("GET", "/version")).text) as { gitVersion: string }).gitVersion
    await real.namespace(admin, ns)
    const seedBegan = performance.now()
    await real.inParallel(pods, realSizes.seedWidth, (i) => real.persist(admin, "POST", `/api/v1/namespaces/${ns}/pods`, realPod(i, ns)))
    const seedMs = performance.now() - seedBegan
    admin.close()
    const metrics = real.adminSession(credentials)
    const apiserver = real.piecePid(cluster.pid, "apiserver")
    const etcd = real.piecePid(cluster.pid, "etcd")
    process.stderr.write(`watchlist: ${pods} pods seeded in ${(seedMs / 1000).toFixed(0)} s; apiserver ${apiserver}, etcd ${etcd}\n`)
    const samples: Record<string, Array<StartFigures>> = { auto: [], list: [] }
    const loads: Array<number> = []
    for (let rep = 0; rep < reps; rep++) {
      // turns: the order flips every repetition
      for (const mode of rep % 2 === 0 ? ["auto", "list"] as const : ["list", "auto"] as const) {
        loads.push(Os.loadavg()[0]!)
        // the apiserver's own pace without us (its controllers' watches, leases): over 5 s just
        // before, taken off its CPU over the start's wall time below
        const idleFrom = { at: performance.now(), cpu: await cpuOf(apiserver) }
        await new Promise((r) => setTimeout(r, 5_000))
        const idlePerMs = ((await cpuOf(apiserver)) - idleFrom.cpu) / (performance.now() - idleFrom.at)
        const allocatedBefore = await allocatedBytes(metrics)
        const started = await runChild(["start", ns, mode, String(apiserver ?? ""), String(etcd ?? "")], {
          KUBECONFIG: cluster.kubeconfig
        })
        const allocated = (await allocatedBytes(metrics)) - allocatedBefore
        const figures: StartFigures = {
          ...started,
          apiserverAllocMiB: Math.round(allocated / 2 ** 20),
          apiserverIdleCpuMs: Math.round(idlePerMs * started.wallMs),
          apiserverNetCpuMs: Math.round(started.apiserverCpuMs - idlePerMs * started.wallMs)
        }
        if (figures.objects !== pods) throw new Error(`watchlist ${mode}: ${figures.objects} objects, expected ${pods}`)
        samples[mode]!.push(figures)
        process.stderr.write(`watchlist ${mode} #${rep + 1}: ${JSON.stringify(figures)}\n`)
      }
    }
    const of = (mode: string, key: keyof StartFigures) => median(samples[mode]!.map((f) => f[key] as number))
    const keys: Array<[keyof StartFigures, string]> = [
      ["apiserverCpuMs", "kube-apiserver CPU, user + system (ms)"],
      ["apiserverNetCpuMs", "kube-apiserver CPU less its idle pace over the same wall time (ms)"],
      ["apiserverAllocMiB", "kube-apiserver heap allocated over the start, from its /metrics (MiB)"],
      ["etcdCpuMs", "etcd CPU, user + system (ms)"],
      ["peakRssMiB", "client peak RSS (MiB)"],
      ["baseRssMiB", "client RSS before the start (MiB)"],
      ["cpuMs", "client CPU, user + system (ms)"],
      ["wallMs", "wall time to `ready` (ms)"]
    ]
    const rows = [
      `| a reflector's start on ${pods.toLocaleString("en")} pods (${version}) | WatchList | list-then-watch (pages of 500) | WatchList / list |`,
      "|---|---:|---:|---:|",
      ...keys.map(([key, label]) => {
        const a = of("auto", key)
        const l = of("list", key)
        return `| ${label} | ${a} | ${l} | ${(a / l).toFixed(2)}x |`
      })
    ]
    const sorted = [...loads].sort((a, b) => a - b)
    process.stdout.write(
      `${rows.join("\n")}\n\nMedian of ${reps} starts a mode, taking turns; ${pods.toLocaleString("en")} pods seeded in ${
        (seedMs / 1000).toFixed(0)
      } s; load average (1 min) ${sorted[0]!.toFixed(1)} to ${sorted[sorted.length - 1]!.toFixed(1)}, median ${
        median(loads).toFixed(1)
      }, on ${Os.cpus().length} CPUs.\n`
    )
    Fs.mkdirSync(Path.join(here, "..", ".tmp"), { recursive: true })
    Fs.writeFileSync(Path.join(here, "..", ".tmp", "watchlist.json"), JSON.stringify({ version, pods, seedMs, samples, loads }, null, 1))
    metrics.close()
  } finally {
    await cluster.stop()
  }
}

const main = command === "start"
  ? start(rest[0]!, rest[1] === "list" ? "list" : "auto", Number(rest[2]), Number(rest[3]))
  : bench()
main.then(() => process.exit(0), (e) => {
  console.error(e)
  process.exit(1)
})

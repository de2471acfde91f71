/**
 * The `discovery` and `transform` measures of `npm run bench` (issue 39): each starts its
 * FakeCluster in a process of its own (bench/discovery.ts, bench/transform.ts), runs every
 * client in fresh processes `reps` times and takes the medians. `discovery` also runs
 * against a real cluster when `EFFECT_KUBE_BENCH_KUBECONFIG` names one (its 50 CRD groups
 * applied first with `tsx bench/discovery.ts seed`, which prints the manifest for kubectl).
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

const here = Path.dirname(fileURLToPath(import.meta.url))

const firstLine = (child: ChildProcess): Promise<string> =>
  new Promise((resolve, reject) => {
    let out = ""
    child.stdout!.setEncoding("utf8")
    child.stdout!.on("data", (chunk: string) => {
      out += chunk
      const newline = out.indexOf("\n")
      if (newline !== -1) resolve(out.slice(0, newline))
    })
    child.on("exit", (code) => reject(new Error(`child exited with ${code} before answering`)))
    child.on("error", reject)
  })

const tsx = (script: string, args: ReadonlyArray<string>, nodeArgs: ReadonlyArray<string> = []) =>
  spawn(process.execPath, [...nodeArgs, "--import", "tsx", Path.join(here, script), ...args], {
    stdio: ["ignore", "pipe", "inherit"]
  })

const median = (values: ReadonlyArray<number>): number => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]!
}

const serveFake = async (script: string, args: ReadonlyArray<string>) => {
  const child = tsx(script, ["serve", ...args])
  const { kubeconfig } = JSON.parse(await firstLine(child)) as { kubeconfig: string }
  return { kubeconfig, stop: () => child.kill("SIGTERM") }
}

/** A target line: what the issue asks, the figure, met or not. */
export interface ParityVerdict {
  readonly target: string
  readonly figure: string
  readonly met: boolean
}

export interface ParityOutput {
  readonly table: string
  readonly figures: Record<string, unknown>
  readonly verdicts: ReadonlyArray<ParityVerdict>
}

interface DiscoveryRun {
  readonly client: string
  readonly resources: number
  readonly requests: number
  readonly medianMs: number
}

const discoveryClients = ["floor", "floor-per-group", "effect-kube", "effect-kube-per-group", "client-node"] as const

const discoveryOn = async (kubeconfig: string, reps: number, rounds: number) => {
  const out: Record<string, DiscoveryRun> = {}
  for (const client of discoveryClients) {
    const runs: Array<DiscoveryRun> = []
    for (let rep = 0; rep < reps; rep++) {
      runs.push(JSON.parse(await firstLine(tsx("discovery.ts", ["run", client, kubeconfig, String(rounds)]))) as DiscoveryRun)
    }
    out[client] = { ...runs[0]!, medianMs: median(runs.map((r) => r.medianMs)) }
    process.stderr.write(`discovery ${client}: ${JSON.stringify(out[client])}\n`)
  }
  return out
}

/** Discovery of a cluster with 50 CRD groups: aggregated against per group version, effect-kube, client-node, the floor. */
export const measureDiscovery = async (reps: number, rounds = 20): Promise<ParityOutput> => {
  const fake = await serveFake("discovery.ts", [])
  const sections: Record<string, Record<string, DiscoveryRun>> = {}
  try {
    sections["FakeCluster"] = await discoveryOn(fake.kubeconfig, reps, rounds)
  } finally {
    fake.stop()
  }
  const real = process.env["EFFECT_KUBE_BENCH_KUBECONFIG"]
  if (real !== undefined && real !== "") sections["kube-apiserver 1.35"] = await discoveryOn(real, reps, rounds)
  const rows = [
    "| discovery of 50 CRD groups (resources of every group version) | server | requests | wall (ms, median) | vs effect-kube per group |",
    "|---|---|---:|---:|---:|"
  ]
  const verdicts: Array<ParityVerdict> = []
  for (const [server, runs] of Object.entries(sections)) {
    const perGroup = runs["effect-kube-per-group"]!.medianMs
    for (const client of discoveryClients) {
      const r = runs[client]!
      rows.push(`| ${client} | ${server} | ${r.requests} | ${r.medianMs.toFixed(1)} | ${(r.medianMs / perGroup).toFixed(2)}x |`)
    }
    const ours = runs["effect-kube"]!
    verdicts.push({
      target: `discovery of 50 CRD groups (${server}): two requests (/api, /apis), ≤ 0.3x per-group time`,
      figure: `${ours.requests} requests, ${(ours.medianMs / perGroup).toFixed(2)}x (${ours.medianMs.toFixed(1)} against ${
        perGroup.toFixed(1)
      } ms); client-node ${runs["client-node"]!.medianMs.toFixed(0)} ms`,
      met: ours.requests <= 2 && ours.medianMs / perGroup <= 0.3
    })
  }
  return { table: rows.join("\n"), figures: sections, verdicts }
}

interface TransformRun {
  readonly client: string
  readonly objects: number
  readonly rssMiB: number
  readonly heapMiB: number
  /** The process's RSS with its client loaded, before the first request. */
  readonly baseRssMiB: number
}

const transformClients = ["floor", "floor-transform", "effect-kube", "effect-kube-transform", "client-node"] as const

/** A reflector holding 10,000 pods, with and without the managedFields transform: RSS and heap once ready. */
export const measureTransform = async (reps: number, count = 10_000): Promise<ParityOutput> => {
  const fake = await serveFake("transform.ts", [String(count)])
  const out: Record<string, TransformRun> = {}
  try {
    const runs: Record<string, Array<TransformRun>> = {}
    // the clients take turns, a repetition at a time
    for (let rep = 0; rep < reps; rep++) {
      for (const client of transformClients) {
        const run = JSON.parse(await firstLine(tsx("transform.ts", ["run", client, fake.kubeconfig], ["--expose-gc"]))) as TransformRun
        ;(runs[client] ??= []).push(run)
        process.stderr.write(`transform ${client} #${rep + 1}: ${JSON.stringify(run)}\n`)
      }
    }
    for (const client of transformClients) {
      const mine = runs[client]!
      out[client] = {
        ...mine[0]!,
        rssMiB: median(mine.map((r) => r.rssMiB)),
        heapMiB: median(mine.map((r) => r.heapMiB)),
        baseRssMiB: median(mine.map((r) => r.baseRssMiB))
      }
    }
  } finally {
    fake.stop()
  }
  const rows = [
    `| a store of ${count.toLocaleString("en")} pods, once ready and collected | RSS (MiB) | heap used (MiB) | RSS before the first request (MiB) | RSS over it (MiB) |`,
    "|---|---:|---:|---:|---:|",
    ...transformClients.map((c) => {
      const r = out[c]!
      return `| ${c} | ${r.rssMiB.toFixed(0)} | ${r.heapMiB.toFixed(0)} | ${r.baseRssMiB.toFixed(0)} | ${(r.rssMiB - r.baseRssMiB).toFixed(0)} |`
    })
  ]
  const without = out["effect-kube"]!
  const withTransform = out["effect-kube-transform"]!
  const over = (r: TransformRun) => r.rssMiB - r.baseRssMiB
  const verdicts: Array<ParityVerdict> = [{
    target: `a reflector holding ${count.toLocaleString("en")} pods with the managedFields transform: RSS ≤ 0.7x without`,
    figure: `RSS ${(withTransform.rssMiB / without.rssMiB).toFixed(2)}x (${withTransform.rssMiB.toFixed(0)} against ${
      without.rssMiB.toFixed(0)
    } MiB; over the process's base ${(over(withTransform) / over(without)).toFixed(2)}x), heap ${(withTransform.heapMiB / without.heapMiB).toFixed(2)}x`,
    met: withTransform.rssMiB / without.rssMiB <= 0.7
  }]
  return { table: rows.join("\n"), figures: out, verdicts }
}

/**
 * Cold start: the time a fresh process takes from its start to its first answer, as a
 * script, a kubectl plugin or a CI step feels it. Each run is a new `node` process that
 * imports the client, reads a kubeconfig and lists the 10 pods of a namespace over
 * loopback HTTPS with a bearer token (`bench/coldstart/*.mjs`); effect-kube is run from
 * its build (`dist/esm`, built again when `src` is newer), as users get it. Clients take
 * turns, 7 runs each by default; medians are reported: wall time from spawn to exit, the
 * time to the first answer inside the process, the import time, peak RSS and the CPU time
 * up to the answer.
 *
 * `tsx bench/coldstart.ts [--reps N]` (also part of `npm run bench`).
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { pki } from "../test/util/pki.js"
import { ensureBuild } from "./build.js"
import { serverReady, spawnServer } from "./serve.js"
import type { ServerConfig } from "./server.js"

const here = Path.dirname(fileURLToPath(import.meta.url))
const root = Path.join(here, "..")

export type ColdClient = "floor" | "effect-kube" | "client-node"

export interface ColdResult {
  readonly wallMs: number
  readonly answerMs: number
  readonly importMs: number
  readonly peakRssMB: number
  /** CPU time of the process (user + system) up to the answer: steadier than wall time on a busy machine. */
  readonly cpuMs: number
}

const median = (values: ReadonlyArray<number>): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

const lastLine = (child: ChildProcess): Promise<string> =>
  new Promise((resolve, reject) => {
    let out = ""
    let err = ""
    child.stdout!.setEncoding("utf8").on("data", (chunk: string) => (out += chunk))
    child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (err += chunk))
    child.on("exit", (code) =>
      code === 0 ? resolve(out.trim().split("\n").pop() ?? "") : reject(new Error(`exited with ${code}: ${err}`))
    )
    child.on("error", reject)
  })

/**
 * client-node 2.x ships undici 8, which needs Node >= 22.19. On an older Node, a copy of
 * the package (hard links, made once) without its own undici resolves `undici` to the 7.x
 * this repository installs, as an install on a supported Node would load it: no loader
 * hook, which would slow every import of the measured process.
 */
const clientNodeEntry = (): string => {
  const installed = Path.join(root, "node_modules", "@kubernetes", "client-node")
  const main = (JSON.parse(Fs.readFileSync(Path.join(installed, "package.json"), "utf8")) as { main: string }).main
  if (Number(process.versions.node.split(".")[0]) >= 22) return Path.join(installed, main)
  const copy = Path.join(root, ".tmp", "coldstart", "node_modules", "@kubernetes", "client-node")
  if (!Fs.existsSync(copy)) {
    Fs.mkdirSync(Path.dirname(copy), { recursive: true })
    execFileSync("cp", ["-al", installed, copy])
    Fs.rmSync(Path.join(copy, "node_modules", "undici"), { recursive: true, force: true })
  }
  return Path.join(copy, main)
}

const runOnce = async (client: ColdClient, kubeconfig: string, namespace: string) => {
  const started = process.hrtime.bigint()
  const extra = client === "client-node" ? [clientNodeEntry()] : []
  const child = spawn(process.execPath, [Path.join(here, "coldstart", `${client}.mjs`), kubeconfig, namespace, ...extra], {
    stdio: ["ignore", "pipe", "pipe"],
    cwd: root
  })
  const line = await lastLine(child)
  const wallMs = Number(process.hrtime.bigint() - started) / 1e6
  const report = JSON.parse(line) as {
    items: number
    importMs: number
    answerMs: number
    maxRssKB: number
    cpuMs: number
  }
  if (report.items !== 10) throw new Error(`${client} listed ${report.items} pods, expected 10`)
  return {
    wallMs,
    answerMs: report.answerMs,
    importMs: report.importMs,
    peakRssMB: report.maxRssKB / 1024,
    cpuMs: report.cpuMs
  }
}

/** Serves 10 pods, runs every client `reps` times in turn, and returns the medians. */
export const measureColdStart = async (
  reps: number,
  clients: ReadonlyArray<ColdClient> = ["floor", "effect-kube", "client-node"]
): Promise<Partial<Record<ColdClient, ColdResult>>> => {
  ensureBuild()
  const certs = pki()
  const namespace = "cold"
  const config: ServerConfig = {
    tls: { cert: certs.server.cert, key: certs.server.key, ca: certs.ca.cert },
    token: `cold-${Math.random().toString(36).slice(2)}`,
    seed: [{ namespace, pods: 10 }]
  }
  const server = spawnServer(config)
  try {
    const ready = await serverReady(server)
    const runs: Record<ColdClient, Array<ColdResult>> = { floor: [], "effect-kube": [], "client-node": [] }
    // One unmeasured run each, so that the disk cache is warm for everyone alike.
    for (const client of clients) await runOnce(client, ready.kubeconfigPath, namespace)
    for (let i = 0; i < reps; i++) {
      for (const client of clients) runs[client].push(await runOnce(client, ready.kubeconfigPath, namespace))
    }
    const summary: Partial<Record<ColdClient, ColdResult>> = {}
    for (const client of clients) {
      const r = runs[client]
      summary[client] = {
        wallMs: median(r.map((x) => x.wallMs)),
        answerMs: median(r.map((x) => x.answerMs)),
        importMs: median(r.map((x) => x.importMs)),
        peakRssMB: median(r.map((x) => x.peakRssMB)),
        cpuMs: median(r.map((x) => x.cpuMs))
      }
    }
    return summary
  } finally {
    server.kill("SIGTERM")
  }
}

/** The markdown table of `measureColdStart`'s medians (a client not measured shows `-`). */
export const coldStartTable = (summary: Partial<Record<ColdClient, ColdResult>>): string => {
  const f = (n: number | undefined) => (n === undefined ? "-" : n.toFixed(0))
  const rows = [
    "| cold start (fresh process, list 10 pods) | floor | effect-kube | client-node | effect-kube / client-node |",
    "|---|---:|---:|---:|---:|"
  ]
  const row = (label: string, key: keyof ColdResult) => {
    const [floor, ours, theirs] = [summary.floor?.[key], summary["effect-kube"]?.[key], summary["client-node"]?.[key]]
    const ratio = ours === undefined || theirs === undefined ? "-" : `${(ours / theirs).toFixed(2)}x`
    rows.push(`| ${label} | ${f(floor)} | ${f(ours)} | ${f(theirs)} | ${ratio} |`)
  }
  row("process start to exit, wall (ms)", "wallMs")
  row("to the first answer, in process (ms)", "answerMs")
  row("import of the client (ms)", "importMs")
  row("peak RSS (MB)", "peakRssMB")
  row("CPU time to the answer, user + system (ms)", "cpuMs")
  return rows.join("\n")
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === Path.resolve(process.argv[1])) {
  const at = process.argv.indexOf("--reps")
  const reps = at === -1 ? 7 : Number(process.argv[at + 1])
  measureColdStart(reps).then((summary) => console.log(coldStartTable(summary)), (error: unknown) => {
    console.error(error)
    process.exit(1)
  })
}

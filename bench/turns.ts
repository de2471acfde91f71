/**
 * What the GET harnesses over loopback TLS share (`get-ablation.ts`, `get-layers.ts`): variants of a GET taking turns
 * in blocks in one process, so that load from elsewhere falls on all alike, each reported with its p50 and p99 (and
 * their ratio to the first variant's, the floor) and the client process's CPU per GET.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { performance } from "node:perf_hooks"
import { pki } from "../test/util/pki.js"
import type { ServerConfig, ServerReady } from "./server.js"

/** The CA the server's certificate is signed by, the server process (to kill at the end) and what it printed. */
export interface OneServer {
  readonly ca: string
  readonly child: ChildProcess
  readonly ready: ServerReady
}

/** `bench/server.ts` in a process of its own (one pod in `default` unless told), over TLS with a generated CA and `token`. */
export const startServer = async (
  token: string,
  seed: ServerConfig["seed"] = [{ namespace: "default", pods: 1 }]
): Promise<OneServer> => {
  const { ca, server: serverPair } = pki()
  const config: ServerConfig = { tls: { cert: serverPair.cert, key: serverPair.key, ca: ca.cert }, token, seed }
  const child = spawn(process.execPath, ["--import", "tsx", "bench/server.ts", JSON.stringify(config)], {
    stdio: ["ignore", "pipe", "inherit"]
  })
  const ready = await new Promise<ServerReady>((resolve) => {
    let text = ""
    child.stdout!.on("data", (chunk: Buffer) => {
      text += chunk.toString("utf8")
      if (text.includes("\n")) resolve(JSON.parse(text.split("\n")[0]!) as ServerReady)
    })
  })
  return { ca: ca.cert, child, ready }
}

/** One way to GET the pod, and what was measured of it. */
export interface Turn {
  readonly name: string
  readonly get: () => Promise<unknown>
  readonly times: Array<number>
  cpu: number
}

/** A variant with nothing measured yet. */
export const turn = (name: string, get: () => Promise<unknown>): Turn => ({ name, get, times: [], cpu: 0 })

/** After `warmup` GETs of each, `n` GETs of each variant, taking turns in blocks of `block`. */
export const takeTurns = async (turns: ReadonlyArray<Turn>, n: number, block = 50, warmup = 300): Promise<void> => {
  for (const t of turns) for (let i = 0; i < warmup; i++) await t.get()
  for (let done = 0; done < n; done += block) {
    for (const t of turns) {
      const cpu = process.cpuUsage()
      for (let i = 0; i < block; i++) {
        const start = performance.now()
        await t.get()
        t.times.push(performance.now() - start)
      }
      const used = process.cpuUsage(cpu)
      t.cpu += used.user + used.system
    }
  }
}

const quantile = (sorted: ReadonlyArray<number>, p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!

/** One line per variant: p50, p99 (ratios to the first variant's) and CPU per GET. */
export const printTurns = (turns: ReadonlyArray<Turn>): void => {
  for (const t of turns) t.times.sort((a, b) => a - b)
  const floor = turns[0]!
  for (const t of turns) {
    const p50 = quantile(t.times, 0.5)
    const p99 = quantile(t.times, 0.99)
    console.log(
      `${t.name.padEnd(14)} p50 ${p50.toFixed(3)} ms (${(p50 / quantile(floor.times, 0.5)).toFixed(2)}x)  ` +
        `p99 ${p99.toFixed(3)} ms (${(p99 / quantile(floor.times, 0.99)).toFixed(2)}x)  ` +
        `CPU ${(t.cpu / t.times.length).toFixed(0)} µs/GET`
    )
  }
}

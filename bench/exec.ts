/**
 * Exec throughput: MB/s through `cat` in a pod of the fake (served over loopback HTTPS
 * with a token), for effect-kube's `Exec.execStream` and client-node's `Exec`, each
 * run in a process of its own, clients taking turns. A run sends `mb` MB of stdin in
 * 64 KB writes, reads the same bytes back from stdout, closes stdin (v5) and waits for
 * the exit code; the clock covers all of it, after a warm-up of the same kind.
 *
 * `runExecBench` is called by `bench/run.ts`; `tsx bench/exec.ts '<json ExecJob>'` is
 * its worker and prints one line of JSON.
 */
import type * as K8s from "@kubernetes/client-node"
import * as Effect from "effect/Effect"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Stream from "effect/Stream"
import { spawn } from "node:child_process"
import * as Path from "node:path"
import { performance } from "node:perf_hooks"
import { PassThrough, Writable } from "node:stream"
import { fileURLToPath } from "node:url"
import * as Exec from "../packages/effect-kube/src/Exec.js"
import * as Kube from "../packages/effect-kube/src/Kube.js"
import * as NodeKube from "../packages/effect-kube/src/NodeKube.js"
import { Pods } from "../packages/effect-kube/src/resources/index.js"
import "./undici-compat.js"

const here = Path.dirname(fileURLToPath(import.meta.url))

export type ExecClient = "effect-kube" | "client-node"

export interface ExecJob {
  readonly client: ExecClient
  readonly kubeconfig: string
  readonly namespace: string
  readonly pod: string
  readonly container: string
  readonly mb: number
  readonly warmupMb: number
}

export interface ExecResult {
  readonly mbPerSec: number
  readonly bytes: number
  readonly cpuMs: number
}

const chunkSize = 64 * 1024

const payload = (() => {
  const chunk = new Uint8Array(chunkSize)
  for (let i = 0; i < chunk.length; i++) chunk[i] = (i * 31 + 7) & 0xff
  return chunk
})()

/** One pass through cat: resolves with the bytes that came back. */
type Pass = (mb: number) => Promise<number>

const effectKube = (job: ExecJob): { pass: Pass; close: () => Promise<void> } => {
  const runtime = ManagedRuntime.make(NodeKube.layerFromFile({ path: job.kubeconfig }))
  const pods = Kube.api(Pods, { namespace: job.namespace })
  const pass: Pass = (mb) =>
    runtime.runPromise(Effect.scoped(Effect.gen(function*() {
      const cat = yield* Exec.execStream(pods, job.pod, ["cat"], { container: job.container })
      const chunks = (mb * 2 ** 20) / chunkSize
      const feed = Effect.andThen(
        Effect.forEach(Array.from({ length: chunks }), () => cat.write(payload), { discard: true }),
        cat.end
      )
      const [received] = yield* Effect.all(
        [Stream.runFold(cat.stdout, () => 0, (n, c) => n + c.length), feed, cat.exit],
        { concurrency: "unbounded" }
      )
      return received
    })))
  return { pass, close: () => runtime.dispose() }
}

const clientNode = (k8s: typeof K8s, job: ExecJob): { pass: Pass; close: () => Promise<void> } => {
  const kc = new k8s.KubeConfig()
  kc.loadFromFile(job.kubeconfig)
  const exec = new k8s.Exec(kc)
  const pass: Pass = (mb) =>
    new Promise<number>((resolve, reject) => {
      let received = 0
      const stdout = new Writable({
        write(chunk: Buffer, _encoding, done) {
          received += chunk.length
          done()
        }
      })
      const stdin = new PassThrough({ highWaterMark: chunkSize * 4 })
      exec.exec(job.namespace, job.pod, job.container, ["cat"], stdout, null, stdin, false, (status) => {
        if (status.status === "Success") resolve(received)
        else reject(new Error(JSON.stringify(status)))
      }).then(async () => {
        const chunks = (mb * 2 ** 20) / chunkSize
        for (let i = 0; i < chunks; i++) {
          if (!stdin.write(payload)) await new Promise((r) => stdin.once("drain", r))
        }
        stdin.end()
      }, reject)
    })
  return { pass, close: () => Promise.resolve() }
}

const worker = async (job: ExecJob): Promise<ExecResult> => {
  // imported only now: client-node's imports must be resolved after undici-compat's hook is in place
  const client = job.client === "effect-kube"
    ? effectKube(job)
    : clientNode(await import("@kubernetes/client-node"), job)
  await client.pass(job.warmupMb)
  const cpu = process.cpuUsage()
  const start = performance.now()
  const bytes = await client.pass(job.mb)
  const seconds = (performance.now() - start) / 1000
  const used = process.cpuUsage(cpu)
  await client.close()
  if (bytes !== job.mb * 2 ** 20) throw new Error(`${job.client}: ${bytes} bytes came back, not ${job.mb * 2 ** 20}`)
  return { mbPerSec: job.mb / seconds, bytes, cpuMs: (used.user + used.system) / 1000 }
}

/** Runs one worker process and returns its result. */
const runWorker = (job: ExecJob): Promise<ExecResult> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", Path.join(here, "exec.ts"), JSON.stringify(job)], {
      stdio: ["ignore", "pipe", "inherit"]
    })
    let out = ""
    child.stdout.setEncoding("utf8")
    child.stdout.on("data", (chunk: string) => (out += chunk))
    child.on("exit", (code) =>
      code === 0 ? resolve(JSON.parse(out.trim().split("\n").pop()!) as ExecResult) : reject(new Error(`exec worker exited with ${code}`))
    )
  })

const median = (values: ReadonlyArray<number>): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

/** The exec measurement for `bench/run.ts`: medians of `reps` runs per client. */
export const runExecBench = async (options: {
  readonly kubeconfig: string
  readonly namespace: string
  readonly pod: string
  readonly reps: number
  readonly mb: number
}) => {
  const samples: Record<ExecClient, Array<ExecResult>> = { "effect-kube": [], "client-node": [] }
  for (let rep = 0; rep < options.reps; rep++) {
    for (const client of ["effect-kube", "client-node"] as const) {
      const result = await runWorker({
        client,
        kubeconfig: options.kubeconfig,
        namespace: options.namespace,
        pod: options.pod,
        container: "app",
        mb: options.mb,
        warmupMb: 8
      })
      samples[client].push(result)
      process.stderr.write(`exec ${client} #${rep + 1}: ${JSON.stringify(result)}\n`)
    }
  }
  const ours = median(samples["effect-kube"].map((r) => r.mbPerSec))
  const theirs = median(samples["client-node"].map((r) => r.mbPerSec))
  return {
    unit: "MB/s",
    mb: options.mb,
    effectKube: ours,
    clientNode: theirs,
    effectKubeVsClientNode: ours / theirs,
    cpuMs: {
      effectKube: median(samples["effect-kube"].map((r) => r.cpuMs)),
      clientNode: median(samples["client-node"].map((r) => r.cpuMs))
    },
    samples: Object.fromEntries(Object.entries(samples).map(([c, rs]) => [c, rs.map((r) => r.mbPerSec)])),
    row: `| exec: ${options.mb} MB through cat (MB/s) | - | ${ours.toFixed(1)} | ${theirs.toFixed(1)} | - | - | ${
      (ours / theirs).toFixed(2)
    }x | ${ours > theirs ? "ahead of" : "BEHIND"} client-node |`
  }
}

if (process.argv[1] !== undefined && Path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  worker(JSON.parse(process.argv[2]!) as ExecJob).then(
    (result) => process.stdout.write(`${JSON.stringify(result)}\n`),
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? error.stack ?? error.message : String(error)}\n`)
      process.exit(1)
    }
  )
}

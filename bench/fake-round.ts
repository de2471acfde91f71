/**
 * The CPU of one round of `Kube.api(Pods)` on the in-memory `FakeCluster.layer()`: a create, a
 * get, a list (by label) and a watch (by field, up to its first event), each its own
 * `runPromise`, as a test suite written on FakeCluster runs them. A delete after each round, not
 * measured, keeps the store at one pod, so that every round costs the same. This is what a test
 * of effect-kube's users pays per request (the fake's HTTP handling, `HttpClient.make`, our
 * request path), not a comparison with another client.
 *
 * `npx tsx bench/fake-round.ts [rounds, default 3000] [--json]` (also part of `npm run bench`,
 * which reads the `--json` line). Rounds are measured after a tenth as many of warm-up.
 */
import * as Effect from "effect/Effect"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Stream from "effect/Stream"
import * as Path from "node:path"
import { performance } from "node:perf_hooks"
import { fileURLToPath } from "node:url"
import * as Kube from "../src/Kube.js"
import { Pods } from "../src/resources/index.js"
import * as FakeCluster from "../src/testing/FakeCluster.js"

export interface FakeRoundResult {
  readonly rounds: number
  /** CPU (user + system) per round, µs. */
  readonly roundCpuUs: number
  /** CPU per operation of the round, µs. */
  readonly opCpuUs: { readonly create: number; readonly get: number; readonly list: number; readonly watch: number }
  readonly roundWallUs: number
}

const operations = ["create", "get", "list", "watch"] as const

const pods = Kube.api(Pods, { namespace: "default" })

const round = (i: number): ReadonlyArray<Effect.Effect<unknown, unknown, Kube.Requirements>> => {
  const name = `pod-${i}`
  return [
    pods.create({
      metadata: { name, labels: { app: `a${i}` } },
      spec: { containers: [{ name: "c", image: "busybox" }] }
    }),
    pods.get(name),
    pods.list({ labelSelector: `app=a${i}` }),
    Stream.runDrain(Stream.take(pods.watch({ fieldSelector: `metadata.name=${name}` }), 1)),
    pods.delete(name, { gracePeriodSeconds: 0 })
  ]
}

export const measureFakeRound = async (rounds: number): Promise<FakeRoundResult> => {
  const runtime = ManagedRuntime.make(FakeCluster.layer())
  const cpu = [0, 0, 0, 0]
  const run = async (from: number, to: number, measured: boolean) => {
    for (let i = from; i < to; i++) {
      const steps = round(i)
      for (let k = 0; k < steps.length; k++) {
        const start = process.cpuUsage()
        await runtime.runPromise(steps[k]!)
        const used = process.cpuUsage(start)
        if (measured && k < operations.length) cpu[k]! += used.user + used.system
      }
    }
  }
  const warmup = Math.ceil(rounds / 10)
  await run(0, warmup, false)
  const start = performance.now()
  await run(warmup, warmup + rounds, true)
  const roundWallUs = ((performance.now() - start) * 1000) / rounds
  await runtime.dispose()
  const per = (k: number) => cpu[k]! / rounds
  return {
    rounds,
    roundCpuUs: cpu.reduce((a, b) => a + b, 0) / rounds,
    opCpuUs: { create: per(0), get: per(1), list: per(2), watch: per(3) },
    roundWallUs
  }
}

/** The markdown table of a `measureFakeRound` result (the median of several, when run by `npm run bench`). */
export const fakeRoundTable = (result: FakeRoundResult): string =>
  [
    "| one round on `FakeCluster.layer()` (µs CPU) | round | create | get | list | watch |",
    "|---|---:|---:|---:|---:|---:|",
    `| effect-kube, ${result.rounds.toLocaleString("en-US")} rounds | ${result.roundCpuUs.toFixed(0)} | ${
      operations.map((op) => result.opCpuUs[op].toFixed(0)).join(" | ")
    } |`
  ].join("\n")

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === Path.resolve(process.argv[1])) {
  const args = process.argv.slice(2)
  const rounds = Number(args.find((a) => !a.startsWith("--")) ?? 3000)
  measureFakeRound(rounds).then(
    (result) => console.log(args.includes("--json") ? JSON.stringify(result) : fakeRoundTable(result)),
    (error: unknown) => {
      console.error(error)
      process.exit(1)
    }
  )
}

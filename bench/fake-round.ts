/**
 * The CPU of one round of `Kube.api(Pods)` on the in-memory `FakeCluster.layer()`: a create, a
 * get, a list (by label) and a watch (by field, up to its first event), each its own
 * `runPromise`, as a test suite written on FakeCluster runs them. A delete after each round, not
 * measured, keeps the store at one pod, so that every round costs the same. This is what a test
 * of effect-kube's users pays per request (the fake's HTTP handling, `HttpClient.make`, our
 * request path), not a comparison with another client.
 *
 * `npx tsx bench/fake-round.ts [rounds, default 3000] [--json] [--no-controllers]` (also part of
 * `npm run bench`, which reads the `--json` line). Rounds are measured after a tenth as many of
 * warm-up. With `name=<src dir>` arguments (this checkout's `src`, a copy of another commit's),
 * each copy is loaded in this process and they take turns, 5 blocks of the rounds each, which
 * is how a change is compared on a shared machine: `git archive main src | tar -x -C .tmp/main`,
 * then `npx tsx bench/fake-round.ts 600 main=.tmp/main/src new=src`.
 */
import * as Effect from "effect/Effect"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Stream from "effect/Stream"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { performance } from "node:perf_hooks"
import { fileURLToPath, pathToFileURL } from "node:url"
import * as Kube from "../packages/effect-kube/src/Kube.js"
import { Pods } from "../packages/effect-kube/src/resources/index.js"
import { FakeCluster } from "@effect-kube/testing"

export interface FakeRoundResult {
  readonly rounds: number
  /** CPU (user + system) per round, µs. */
  readonly roundCpuUs: number
  /** CPU per operation of the round, µs. */
  readonly opCpuUs: { readonly create: number; readonly get: number; readonly list: number; readonly watch: number }
  readonly roundWallUs: number
}

const operations = ["create", "get", "list", "watch"] as const

/** What a round needs of one copy of `src`. */
interface Modules {
  readonly Kube: typeof Kube
  readonly Pods: typeof Pods
  readonly FakeCluster: typeof FakeCluster
}

const thisSrc: Modules = { Kube, Pods, FakeCluster }

/** The modules of a copy of `src` (a checkout's, or another commit's unpacked). */
const loadModules = async (src: string): Promise<Modules> => {
  const ext = Fs.existsSync(Path.join(src, "Kube.ts")) ? ".ts" : ".js"
  const url = (file: string) => pathToFileURL(Path.join(Path.resolve(src), file + ext)).href
  return {
    Kube: await import(url("Kube")),
    Pods: (await import(url("resources/index"))).Pods,
    FakeCluster: await import(url("testing/FakeCluster"))
  }
}

/** A fake of one copy of `src` and the rounds run on it so far: `run` adds rounds to its totals. */
const makeRounds = (modules: Modules, options: { readonly controllers: boolean }) => {
  const runtime = ManagedRuntime.make(modules.FakeCluster.layer(options.controllers ? {} : { controllers: false }))
  const pods = modules.Kube.api(modules.Pods, { namespace: "default" })
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
  const cpu = [0, 0, 0, 0]
  let measuredRounds = 0
  let wallMs = 0
  let next = 0
  const run = async (count: number, measured: boolean) => {
    const start = performance.now()
    for (let r = 0; r < count; r++) {
      const steps = round(next++)
      for (let k = 0; k < steps.length; k++) {
        const before = process.cpuUsage()
        await runtime.runPromise(steps[k]! as Effect.Effect<unknown, unknown, never>)
        const used = process.cpuUsage(before)
        if (measured && k < operations.length) cpu[k]! += used.user + used.system
      }
    }
    if (measured) {
      measuredRounds += count
      wallMs += performance.now() - start
    }
  }
  const result = (): FakeRoundResult => {
    const per = (k: number) => cpu[k]! / measuredRounds
    return {
      rounds: measuredRounds,
      roundCpuUs: cpu.reduce((a, b) => a + b, 0) / measuredRounds,
      opCpuUs: { create: per(0), get: per(1), list: per(2), watch: per(3) },
      roundWallUs: (wallMs * 1000) / measuredRounds
    }
  }
  return { run, result, dispose: () => runtime.dispose() }
}

export const measureFakeRound = async (
  rounds: number,
  options: { readonly controllers: boolean } = { controllers: true }
): Promise<FakeRoundResult> => {
  const fake = makeRounds(thisSrc, options)
  await fake.run(Math.ceil(rounds / 10), false)
  await fake.run(rounds, true)
  await fake.dispose()
  return fake.result()
}

/** Copies of `src` taking turns in one process: `blocks` blocks of `rounds` each, after a warm-up. */
const compareFakeRounds = async (
  variants: ReadonlyArray<{ readonly name: string; readonly modules: Modules }>,
  rounds: number,
  blocks: number,
  options: { readonly controllers: boolean }
): Promise<ReadonlyArray<{ readonly name: string; readonly result: FakeRoundResult }>> => {
  const fakes = variants.map((v) => ({ name: v.name, fake: makeRounds(v.modules, options) }))
  for (const { fake } of fakes) await fake.run(Math.ceil(rounds / 10), false)
  for (let block = 0; block < blocks; block++) for (const { fake } of fakes) await fake.run(rounds, true)
  for (const { fake } of fakes) await fake.dispose()
  return fakes.map(({ fake, name }) => ({ name, result: fake.result() }))
}

/** The markdown table of a `measureFakeRound` result (the median of several, when run by `npm run bench`). */
export const fakeRoundTable = (result: FakeRoundResult, label = "effect-kube"): string =>
  [
    "| one round on `FakeCluster.layer()` (µs CPU) | round | create | get | list | watch |",
    "|---|---:|---:|---:|---:|---:|",
    fakeRoundRow(result, label)
  ].join("\n")

const fakeRoundRow = (result: FakeRoundResult, label: string): string =>
  `| ${label}, ${result.rounds.toLocaleString("en-US")} rounds | ${result.roundCpuUs.toFixed(0)} | ${
    operations.map((op) => result.opCpuUs[op].toFixed(0)).join(" | ")
  } |`

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === Path.resolve(process.argv[1])) {
  const args = process.argv.slice(2)
  const rounds = Number(args.find((a) => /^\d+$/.test(a)) ?? 3000)
  const options = { controllers: !args.includes("--no-controllers") }
  const variants = args.filter((a) => a.includes("="))
  const main = async (): Promise<string> => {
    if (variants.length === 0) {
      const result = await measureFakeRound(rounds, options)
      return args.includes("--json") ? JSON.stringify(result) : fakeRoundTable(result)
    }
    const loaded = []
    for (const spec of variants) {
      const [name, src] = spec.split("=") as [string, string]
      loaded.push({ name, modules: await loadModules(src) })
    }
    const results = await compareFakeRounds(loaded, rounds, 5, options)
    if (args.includes("--json")) return JSON.stringify(results)
    const [header, rule] = fakeRoundTable(results[0]!.result).split("\n")
    return [header, rule, ...results.map(({ name, result }) => fakeRoundRow(result, name))].join("\n")
  }
  main().then(
    (out) => {
      console.log(out)
      process.exit(0)
    },
    (error: unknown) => {
      console.error(error)
      process.exit(1)
    }
  )
}

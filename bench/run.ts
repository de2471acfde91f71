/**
 * `npm run bench`: effect-kube against `@kubernetes/client-node` and a raw floor
 * (`node:https` + `JSON.parse`), all talking to the same preloaded FakeCluster served
 * over loopback HTTPS with a generated CA and a bearer token, as a real cluster would be.
 *
 * Every measurement of every client runs in a fresh child process (`bench/worker.ts`),
 * the server in another (`bench/server.ts`), clients taking turns so that drift on a
 * busy machine spreads over all of them. The median of the repetitions is reported,
 * with its ratio to the floor and to client-node, and checked against the targets of
 * issue 21 (the last table); `bench/results.json` gets the same.
 *
 * `list-gzip` lists the same 10k pods from the same fake served with gzip over 128 KiB (as
 * kube-apiserver does, for clients that ask): the floor asks for gzip and inflates with
 * `zlib.createGunzip()`, effect-kube and client-node ask as they do by default.
 *
 * `list-slow` lists the same 10k pods through a simulated link of 100 Mbit/s with 1 ms
 * latency each way (`bench/link.ts`, a pacing TCP proxy in this process), once from the
 * server uncompressed and once from the compressing one; the floor runs there both without
 * and with `Accept-Encoding: gzip`. Wall and client CPU time, bytes through the link, and
 * how many answers each client got gzipped (whether it asked).
 *
 * `load`: 1,000 GETs of one pod sent at once, alone and then (in a fresh worker) with 50
 * watches held open and receiving events: wall time, and how many connections the server
 * accepted during the burst. One repetition by default (`--reps` sets more): the floor and
 * client-node open a connection per GET, which alone takes most of the measure's time.
 *
 * `cold` (`bench/coldstart.ts`) runs fresh processes that import the client, read a
 * kubeconfig and list 10 pods: wall time, time to the answer, import time, peak RSS, CPU.
 * `bundle` (`bench/bundle.ts`) bundles a list-pods program with esbuild for effect-kube and
 * client-node: minified and gzip bytes, and the largest packages. `fake-round`
 * (`bench/fake-round.ts`) is the CPU of one create/get/list/watch round on
 * `FakeCluster.layer()`, effect-kube alone. `exec` (`bench/exec.ts`) pushes 64 MB through
 * `cat` in an exec session.
 *
 * `real` (`bench/real.ts`) runs the list, watch, log and GET measures against a real control
 * plane: one started from cluster/ for the run (`.cluster/bin/kube-cluster up`, built if need be,
 * stopped at the end), or the cluster of `--kubeconfig PATH`; the three clients take turns as
 * here, effect-kube also with `http2: false`. `--only real --write` writes only its own block of
 * bench/README.md and its key (`realControlPlane`) of bench/results.json.
 *
 * `watches`: 200 watches opened at once and held (each proven connected by a first event),
 * after a warm-up GET and watch: connections the client opened, RSS and heap over what they
 * were before (after a GC).
 *
 * The HTTP/2 table (issue 27) puts effect-kube over h2 (the default) beside effect-kube with
 * `http2: false` (`effect-kube-h1`, run in `load`, `watches` and `list` beside the others),
 * client-node (HTTP/1.1) and the floor (HTTP/1.1).
 *
 * Options (`--help` prints them and exits, starting nothing): `--quick` (one repetition each),
 * `--only <measures>` (comma-separated, of
 * list,list-gzip,get,watch,logs,logs-bytes,load,list-slow,watches,exec,cold,bundle,fake-round,real,discovery,transform),
 * `--reps N` (every measurement N times), `--clients floor,effect-kube` (a subset of
 * floor,effect-kube,client-node), `--profile effect-kube` (that client's workers CPU-profile
 * the measured part into `.tmp/bench-profiles/`; `tsx bench/profile.ts <file>` lists where
 * the time went). The tables are printed; nothing is written unless `--write` asks, and only a
 * full run (no other option) may: it writes `bench/results.json` and puts the tables in
 * bench/README.md, between the `bench:begin` and `bench:end` comment lines (the real control
 * plane's between `bench:real:begin` and `bench:real:end`); so may `--only real` (with
 * `--kubeconfig` or not), which writes that block and key alone. An unknown option,
 * or `--write` with a partial run, fails at once (exit 2), before anything starts.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { pki } from "../test/util/pki.js"
import type { ClientName, Target } from "./clients.js"
import { type BundleResult, bundleTable, measureBundles } from "./bundle.js"
import { type ColdResult, coldStartTable, measureColdStart } from "./coldstart.js"
import { runExecBench } from "./exec.js"
import { fakeRoundTable, type FakeRoundResult } from "./fake-round.js"
import { measureDiscovery, measureTransform } from "./parity.js"
import { startLink } from "./link.js"
import { checkKubeconfig, type RealOutput, runReal } from "./real.js"
import { undiciRedirected } from "./undici-compat.js"
import type { ServerConfig, ServerReady } from "./server.js"
import type { Job, Measure as WorkerMeasure, Result } from "./worker.js"

const here = Path.dirname(fileURLToPath(import.meta.url))

/** The measures of the fake cluster (`real`, bench/real.ts, has its own). */
type Measure = Exclude<WorkerMeasure, "real" | `real-${string}`>

const usage = `Usage: npm run bench -- [options]   (or: npx tsx bench/run.ts [options])

Runs effect-kube, @kubernetes/client-node and a raw floor against a preloaded fake cluster
served over loopback HTTPS (and, for \`real\`, against a real control plane), each measurement
in its own process, and prints the tables.

Options:
  --help                 print this and exit
  --quick                one repetition of each measurement
  --only <measures>      comma-separated, of
                         list,list-gzip,get,watch,logs,logs-bytes,load,list-slow,watches,
                         exec,cold,bundle,fake-round,real,discovery,transform
                         (discovery: 50 CRD groups, aggregated and per group; transform:
                         a reflector of 10,000 pods with and without dropManagedFields;
                         real: list, watch, logs and GETs against a real kube-apiserver,
                         started from cluster/ for the run and stopped after; a few minutes)
  --kubeconfig <path>    real: use that cluster instead of starting one (its current
                         context's user; the namespaces it makes are deleted after)
  --reps <n>             every measurement n times
  --clients <clients>    comma-separated, of floor,effect-kube,client-node
  --profile <client>     CPU-profile that client's workers into .tmp/bench-profiles/
                         (then: npx tsx bench/profile.ts <file>)
  --write                a full run only (no other option): write bench/results.json and
                         the tables between the bench:begin and bench:end lines of
                         bench/README.md; or with --only real (and --kubeconfig): that
                         section's key of bench/results.json and its bench:real block
                         alone; without it nothing is written
`

const args = process.argv.slice(2)
/** The options that take a value, and those that do not. */
const valueOptions = ["--only", "--reps", "--clients", "--profile", "--kubeconfig"]
const switches = ["--help", "--quick", "--write"]
/** Ends the process before anything starts: usage asked for (exit 0), or a command line that cannot run (exit 2). */
const refuse = (message: string): never => {
  process.stderr.write(`bench/run.ts: ${message}\n\n${usage}`)
  process.exit(2)
}
if (args.includes("--help") || args.includes("-h")) {
  process.stdout.write(usage)
  process.exit(0)
}
for (let i = 0; i < args.length; i++) {
  const arg = args[i]!
  if (valueOptions.includes(arg)) {
    const value = args[i + 1]
    if (value === undefined || value.startsWith("--")) refuse(`${arg} needs a value`)
    i++
  } else if (!switches.includes(arg)) {
    refuse(`unknown option ${arg}`)
  }
}
const flag = (name: string): string | undefined => {
  const i = args.indexOf(name)
  return i === -1 ? undefined : args[i + 1]
}
const quick = args.includes("--quick")
const write = args.includes("--write")
/** `--only real`, alone: the real control plane's section and nothing else. */
const onlyReal = flag("--only") === "real"
const writeOptions = onlyReal ? ["--write", "--only", "real", "--kubeconfig", flag("--kubeconfig")] : ["--write"]
if (write && args.some((arg) => !writeOptions.includes(arg))) {
  refuse(
    "--write needs a full run (or --only real, with --kubeconfig or not): the tables it writes stand for every " +
      "measure, client and repetition"
  )
}
const kubeconfigFlag = flag("--kubeconfig")
if (kubeconfigFlag !== undefined && !checkKubeconfig(kubeconfigFlag)) refuse(`--kubeconfig: no file ${kubeconfigFlag}`)
/** The measures a worker runs, client by client. */
const workerMeasures: ReadonlyArray<Measure> = [
  "list",
  "list-gzip",
  "get",
  "watch",
  "logs",
  "logs-bytes",
  "load",
  "list-slow",
  "watches"
]
/** The measures with a harness of their own. */
const otherMeasures = ["exec", "cold", "bundle", "fake-round", "real", "discovery", "transform"] as const
type OtherMeasure = (typeof otherMeasures)[number]
const everyMeasure: ReadonlyArray<Measure | OtherMeasure> = [...workerMeasures, ...otherMeasures]
const onlyFlag = flag("--only")
const only = new Set(onlyFlag === undefined ? everyMeasure : onlyFlag.split(",") as Array<Measure | OtherMeasure>)
for (const name of only) {
  if (!everyMeasure.includes(name)) throw new Error(`--only: no measure ${name} (measures: ${everyMeasure.join(",")})`)
}
if (kubeconfigFlag !== undefined && !only.has("real")) refuse("--kubeconfig is for the real measure (--only real)")
const repsFlag = flag("--reps")
const profiled = flag("--profile")
const profileDir = Path.join(here, "..", ".tmp", "bench-profiles")

/** The clients `--clients` names (effect-kube with HTTP/2 off runs beside effect-kube, see `clientsOf`). */
type NamedClient = Exclude<ClientName, "effect-kube-h1">
const allClients: ReadonlyArray<NamedClient> = ["floor", "effect-kube", "client-node"]
const clientNames: ReadonlyArray<NamedClient> = (flag("--clients")?.split(",") as Array<NamedClient> | undefined) ??
  allClients

/** The measures of the HTTP/2 table, where effect-kube also runs with HTTP/2 off (`effect-kube-h1`), beside itself. */
const h1Measures: ReadonlySet<Measure> = new Set(["get", "load", "watches", "list"])
const clientsOf = (measure: Measure): ReadonlyArray<ClientName> =>
  h1Measures.has(measure) && clientNames.includes("effect-kube")
    ? clientNames.flatMap((c) => c === "effect-kube" ? [c, "effect-kube-h1" as const] : [c])
    : clientNames

const sizes = {
  listCount: 10_000,
  warmListCount: 2_000,
  pageSize: 500,
  gets: 1_000,
  getWarmup: 200,
  watchEvents: 50_000,
  watchWarmup: 5_000,
  watchPods: 200,
  logLines: 200_000,
  logWarmup: 20_000,
  loadGets: 1_000,
  loadWarmup: 200,
  loadWatches: 50,
  loadTouchEveryMs: 100,
  openWatches: 200
}

const defaultReps: Record<Measure | OtherMeasure, number> = {
  list: 5,
  "list-gzip": 5,
  get: 3,
  watch: 3,
  logs: 3,
  "logs-bytes": 3,
  // one `load` run each: its six bursts (1,000 TLS handshakes for the floor and client-node) take ~40 s
  load: 1,
  "list-slow": 3,
  watches: 3,
  exec: 3,
  cold: 7,
  // sizes do not change from one build to the next
  bundle: 1,
  "fake-round": 3,
  discovery: 3,
  transform: 3,
  // a few minutes in all (the seeding is a minute of it)
  real: 3
}
const reps = Object.fromEntries(
  Object.entries(defaultReps).map((
    [measure, n]
  ) => [measure, repsFlag !== undefined ? Number(repsFlag) : quick ? 1 : n])
) as Record<Measure | OtherMeasure, number>

/** Rounds of `fake-round` per repetition. */
const fakeRounds = quick ? 1000 : 3000

/** The simulated link of `list-slow`. */
const slowLink = { bitsPerSecond: 100_000_000, latencyMs: 1 }

const token = `bench-${Math.random().toString(36).slice(2)}`

const tsxNode = (script: string, nodeArgs: ReadonlyArray<string>, json: unknown) =>
  spawn(process.execPath, [...nodeArgs, "--import", "tsx", Path.join(here, script), JSON.stringify(json)], {
    stdio: ["ignore", "pipe", "inherit"]
  })

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

const startServer = async (config: ServerConfig) => {
  const child = tsxNode("server.ts", ["--max-old-space-size=8192"], config)
  const ready = JSON.parse(await firstLine(child)) as ServerReady
  return { ...ready, stop: () => child.kill("SIGTERM") }
}

const runWorker = async (job: Job): Promise<Result> => {
  const child = tsxNode("worker.ts", ["--expose-gc"], job)
  return JSON.parse(await firstLine(child)) as Result
}

const median = (values: ReadonlyArray<number>): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

type Figure =
  | "listWallMs"
  | "listPeakRssMB"
  | "listGzipWallMs"
  | "listGzipPeakRssMB"
  | "listGzipAnswersGzipped"
  | "watchEventsPerSec"
  | "logLinesPerSec"
  | "logBytesLinesPerSec"
  | "getP50Ms"
  | "getP99Ms"
  | "loadWallMs"
  | "loadConnections"
  | "loadWatchedWallMs"
  | "loadWatchedConnections"

/** What effect-kube must reach (issue 21's targets): a ratio to the floor, being ahead of client-node, or both. */
interface Goal {
  /** effect-kube's ratio to the floor: at most this (lower is better), or at least (higher is better). */
  readonly vsFloor?: number | undefined
  readonly aheadOfClientNode?: boolean | undefined
}

interface FigureInfo {
  readonly label: string
  readonly unit: string
  readonly measure: Measure
  readonly from: (r: Result) => number
  /** Lower is better (times, memory) or higher (throughput). */
  readonly lowerIsBetter: boolean
  /** None for a figure reported without a target. */
  readonly goal: Goal | undefined
}

/** The `load` figures: one value of the runs with (or without) watches open, NaN for the others. */
const loadFigure = (watched: boolean, from: (r: Extract<Result, { measure: "load" }>) => number) => (r: Result) =>
  r.measure === "load" && (r.watches > 0) === watched ? from(r) : NaN

const listWall = (measure: "list" | "list-gzip") => (r: Result) => r.measure === measure ? r.wallMs : NaN
const listRss = (measure: "list" | "list-gzip") => (r: Result) =>
  r.measure === measure ? r.peakRssBytes / 2 ** 20 : NaN

/** The pages a list worker fetches: a cold list, three of the warm namespace, the measured one. */
const listPages = 2 * Math.ceil(sizes.listCount / sizes.pageSize) + 3 * Math.ceil(sizes.warmListCount / sizes.pageSize)

const figures: Record<Figure, FigureInfo> = {
  listWallMs: {
    label: "list 10k pods (pages of 500): wall",
    unit: "ms",
    measure: "list",
    from: listWall("list"),
    lowerIsBetter: true,
    goal: { vsFloor: 1.25 }
  },
  listPeakRssMB: {
    label: "list 10k pods: peak RSS over baseline",
    unit: "MB",
    measure: "list",
    from: listRss("list"),
    lowerIsBetter: true,
    goal: { vsFloor: 1.2 }
  },
  listGzipWallMs: {
    label: "list 10k pods, server gzips over 128 KiB: wall",
    unit: "ms",
    measure: "list-gzip",
    from: listWall("list-gzip"),
    lowerIsBetter: true,
    goal: { vsFloor: 1.25 }
  },
  listGzipPeakRssMB: {
    label: "list 10k pods, server gzips: peak RSS over baseline",
    unit: "MB",
    measure: "list-gzip",
    from: listRss("list-gzip"),
    lowerIsBetter: true,
    goal: { vsFloor: 1.2 }
  },
  listGzipAnswersGzipped: {
    label: `list 10k pods, server gzips: answers gzipped (of ${listPages})`,
    unit: "answers",
    measure: "list-gzip",
    from: (r) => (r.measure === "list-gzip" ? gzippedAnswers.get(r) ?? NaN : NaN),
    lowerIsBetter: false,
    goal: undefined
  },
  watchEventsPerSec: {
    label: "watch 50k MODIFIED events (`Stream.runForEach`)",
    unit: "events/s",
    measure: "watch",
    from: (r) => (r.measure === "watch" ? r.eventsPerSec : NaN),
    lowerIsBetter: false,
    goal: { vsFloor: 0.9, aheadOfClientNode: true }
  },
  logLinesPerSec: {
    label: "follow a log of 200k lines (`logStream` + `Stream.runForEach`)",
    unit: "lines/s",
    measure: "logs",
    from: (r) => (r.measure === "logs" ? r.linesPerSec : NaN),
    lowerIsBetter: false,
    goal: { aheadOfClientNode: true }
  },
  logBytesLinesPerSec: {
    label:
      "follow a log of 200k lines, its newline bytes counted, nothing decoded (the byte-counting floor; effect-kube: `logBytes` + `Stream.runForEachWhile`)",
    unit: "lines/s",
    measure: "logs-bytes",
    from: (r) => (r.measure === "logs-bytes" ? r.linesPerSec : NaN),
    lowerIsBetter: false,
    goal: { vsFloor: 0.95 }
  },
  getP50Ms: {
    label: "1,000 sequential GETs: p50",
    unit: "ms",
    measure: "get",
    from: (r) => (r.measure === "get" ? r.p50Ms : NaN),
    lowerIsBetter: true,
    goal: { vsFloor: 1.3 }
  },
  getP99Ms: {
    label: "1,000 sequential GETs: p99",
    unit: "ms",
    measure: "get",
    from: (r) => (r.measure === "get" ? r.p99Ms : NaN),
    lowerIsBetter: true,
    goal: { vsFloor: 1.5 }
  },
  loadWallMs: {
    label: "1,000 concurrent GETs: wall",
    unit: "ms",
    measure: "load",
    from: loadFigure(false, (r) => r.wallMs),
    lowerIsBetter: true,
    goal: undefined
  },
  loadConnections: {
    label: "1,000 concurrent GETs: connections opened",
    unit: "connections",
    measure: "load",
    from: loadFigure(false, (r) => r.connections),
    lowerIsBetter: true,
    goal: undefined
  },
  loadWatchedWallMs: {
    label: "1,000 concurrent GETs beside 50 open watches: wall",
    unit: "ms",
    measure: "load",
    from: loadFigure(true, (r) => r.wallMs),
    lowerIsBetter: true,
    goal: undefined
  },
  loadWatchedConnections: {
    label: "1,000 concurrent GETs beside 50 open watches: connections opened",
    unit: "connections",
    measure: "load",
    from: loadFigure(true, (r) => r.connections),
    lowerIsBetter: true,
    goal: undefined
  }
}

/** A row of the HTTP/2 table: every figure there is better lower. */
interface Http2Row {
  readonly label: string
  readonly unit: string
  readonly measure: Measure
  readonly from: (r: Result) => number
  /** For a count of connections: the streams open at once, which over h2 take ceil(streams / the server's limit). */
  readonly streamsAtOnce?: number
  /** A burst's wall time, which over h2 must be no worse than over HTTP/1.1 (issue 27). */
  readonly wall?: true
  /** For a sequential figure: issue 21's goal against the floor, judged again with both sides on HTTP/1.1. */
  readonly http1VsFloor?: number
}

const openWatchesFigure = (from: (r: Extract<Result, { measure: "watches" }>) => number) => (r: Result) =>
  r.measure === "watches" ? from(r) : NaN

const http2Rows: Record<string, Http2Row> = {
  getP50Ms: {
    label: "1,000 sequential GETs: p50",
    unit: "ms",
    measure: "get",
    from: (r) => (r.measure === "get" ? r.p50Ms : NaN),
    http1VsFloor: 1.3
  },
  getP99Ms: {
    label: "1,000 sequential GETs: p99",
    unit: "ms",
    measure: "get",
    from: (r) => (r.measure === "get" ? r.p99Ms : NaN),
    http1VsFloor: 1.5
  },
  loadConnections: {
    label: "1,000 concurrent GETs: connections the client opened",
    unit: "connections",
    measure: "load",
    from: loadFigure(false, (r) => r.connectionsTotal),
    streamsAtOnce: sizes.loadGets
  },
  loadWallMs: {
    label: "1,000 concurrent GETs: wall",
    unit: "ms",
    measure: "load",
    from: loadFigure(false, (r) => r.wallMs),
    wall: true
  },
  loadP99Ms: {
    label: "1,000 concurrent GETs: p99 latency",
    unit: "ms",
    measure: "load",
    from: loadFigure(false, (r) => r.p99Ms)
  },
  loadWatchedConnections: {
    label: `1,000 concurrent GETs beside ${sizes.loadWatches} open watches: connections the client opened`,
    unit: "connections",
    measure: "load",
    from: loadFigure(true, (r) => r.connectionsTotal),
    streamsAtOnce: sizes.loadGets + sizes.loadWatches
  },
  loadWatchedWallMs: {
    label: `1,000 concurrent GETs beside ${sizes.loadWatches} open watches: wall`,
    unit: "ms",
    measure: "load",
    from: loadFigure(true, (r) => r.wallMs),
    wall: true
  },
  loadWatchedP99Ms: {
    label: `1,000 concurrent GETs beside ${sizes.loadWatches} open watches: p99 latency`,
    unit: "ms",
    measure: "load",
    from: loadFigure(true, (r) => r.p99Ms)
  },
  watchesConnections: {
    label: `${sizes.openWatches} watches open at once: connections`,
    unit: "connections",
    measure: "watches",
    from: openWatchesFigure((r) => r.connections),
    streamsAtOnce: sizes.openWatches
  },
  watchesRssMB: {
    label: `${sizes.openWatches} watches open at once: RSS over baseline`,
    unit: "MB",
    measure: "watches",
    from: openWatchesFigure((r) => r.rssBytes / 2 ** 20)
  },
  watchesHeapMB: {
    label: `${sizes.openWatches} watches open at once: heap over baseline`,
    unit: "MB",
    measure: "watches",
    from: openWatchesFigure((r) => r.heapBytes / 2 ** 20)
  },
  listWallMs: {
    label: "list 10k pods (pages of 500): wall",
    unit: "ms",
    measure: "list",
    from: listWall("list"),
    wall: true
  }
}

/** The `SETTINGS_MAX_CONCURRENT_STREAMS` of the bench's fake (`FakeCluster.listen`'s default, kube-apiserver's). */
const fakeStreamsPerConnection = 1000

/** Within this ratio of HTTP/1.1's wall time counts as no worse: one run's noise on a shared machine. */
const http2WallSlack = 1.1

/**
 * The HTTP/2 table and issue 27's targets: 1 connection for the GETs (and beside the watches)
 * over h2, wall times no worse than HTTP/1.1's, no figure behind client-node's.
 */
const http2Table = (samples: Record<Measure, Record<ClientName, Array<Result>>>) => {
  const columns = ["floor", "effect-kube", "effect-kube-h1", "client-node"] as const
  const rows: Array<string> = [
    "| measurement (HTTP/2) | floor (HTTP/1.1) | effect-kube (h2) | effect-kube (HTTP/1.1) | " +
    "client-node (HTTP/1.1) | h2 / HTTP/1.1 | h2 / client-node |",
    "|---|---:|---:|---:|---:|---:|---:|"
  ]
  const figures: Record<string, unknown> = {}
  const verdicts: Array<Verdict> = []
  const behind: Array<string> = []
  for (const [name, row] of Object.entries(http2Rows)) {
    if (!only.has(row.measure)) continue
    const value = (c: ClientName) => median(samples[row.measure][c].map(row.from).filter((v) => !Number.isNaN(v)))
    const [floor, h2, h1, theirs] = columns.map(value) as [number, number, number, number]
    figures[name] = { unit: row.unit, floor, effectKubeH2: h2, effectKubeHttp1: h1, clientNode: theirs }
    const cells = [floor, h2, h1, theirs].map((v) => format(v, row.unit)).join(" | ")
    rows.push(`| ${row.label} (${row.unit}) | ${cells} | ${ratio(h2, h1)} | ${ratio(h2, theirs)} |`)
    if (h2 > theirs) behind.push(row.label)
    const streams = row.streamsAtOnce
    if (streams !== undefined) {
      // as client-go, a new connection once a connection's streams are all in use
      const fewest = Math.ceil(streams / fakeStreamsPerConnection)
      verdicts.push({
        target: `${row.label} over h2: ${fewest} (${streams.toLocaleString("en-US")} streams at once, ` +
          `${fakeStreamsPerConnection.toLocaleString("en-US")} a connection)`,
        figure: format(h2, row.unit),
        met: h2 <= fewest
      })
    }
    if (row.http1VsFloor !== undefined) {
      verdicts.push({
        target: `${row.label} with \`http2: false\` (the floor's protocol): ≤ ${row.http1VsFloor}x the floor`,
        figure: `${ratio(h1, floor)} the floor (over h2: ${ratio(h2, floor)})`,
        met: h1 / floor <= row.http1VsFloor
      })
    }
    if (row.wall === true) {
      verdicts.push({
        target: `${row.label} over h2: no worse than HTTP/1.1's (≤ ${http2WallSlack}x)`,
        figure: `${ratio(h2, h1)} HTTP/1.1's (${format(h2, row.unit)} against ${format(h1, row.unit)} ms)`,
        met: h2 / h1 <= http2WallSlack
      })
    }
  }
  if (rows.length > 2 && clientNames.includes("client-node")) {
    verdicts.push({
      target: "every HTTP/2 figure of effect-kube at or ahead of client-node's",
      figure: behind.length === 0 ? "none behind" : `behind: ${behind.join("; ")}`,
      met: behind.length === 0
    })
  }
  return { table: rows.length > 2 ? rows.join("\n") : undefined, figures, verdicts }
}

/** How many answers of a `list-gzip` run the server sent gzipped (counted by the server, kept beside the result). */
const gzippedAnswers = new WeakMap<Result, number>()

/** What a goal asks, in words: `≤ 1.25x the floor`, `ahead of client-node`, or both. */
const goalText = (goal: Goal, lowerIsBetter: boolean): string =>
  [
    ...(goal.vsFloor === undefined ? [] : [`${lowerIsBetter ? "≤" : "≥"} ${goal.vsFloor}x the floor`]),
    ...(goal.aheadOfClientNode === true ? ["ahead of client-node"] : [])
  ].join(", ")

/** Whether effect-kube's figure meets a goal, and the table's cell that says so. */
const judge = (goal: Goal, lowerIsBetter: boolean, ours: number, floor: number, theirs: number) => {
  const vsFloor = ours / floor
  const meetsFloor = goal.vsFloor === undefined ||
    (lowerIsBetter ? vsFloor <= goal.vsFloor : vsFloor >= goal.vsFloor)
  const ahead = lowerIsBetter ? ours < theirs : ours > theirs
  const meetsClientNode = goal.aheadOfClientNode !== true || ahead
  const cell = [
    ...(goal.vsFloor === undefined ? [] : [`${lowerIsBetter ? "≤" : "≥"} ${goal.vsFloor}x ${meetsFloor ? "met" : "MISSED"}`]),
    ...(goal.aheadOfClientNode === true ? [`${ahead ? "ahead of" : "BEHIND"} client-node`] : [])
  ].join("; ")
  return { met: meetsFloor && meetsClientNode, cell }
}

const machine = () => {
  const cpuinfo = Fs.existsSync("/proc/cpuinfo") ? Fs.readFileSync("/proc/cpuinfo", "utf8") : ""
  const model = /^model name\s*:\s*(.+)$/m.exec(cpuinfo)?.[1] ?? Os.cpus()[0]?.model ?? "unknown"
  let nproc = Os.availableParallelism()
  try {
    nproc = Number(execFileSync("nproc", { encoding: "utf8" }).trim())
  } catch {
    // nproc is not everywhere; availableParallelism says the same.
  }
  return {
    node: process.version,
    nproc,
    cpu: model,
    memoryGB: Math.round(Os.totalmem() / 2 ** 30),
    os: `${Os.type()} ${Os.release()} ${Os.arch()}`
  }
}

const format = (value: number, unit: string): string =>
  unit === "ms"
    ? value < 10 ? value.toFixed(2) : value.toFixed(0)
    : unit === "MB"
    ? value < 10 ? value.toFixed(1) : value.toFixed(0)
    : Math.round(value).toLocaleString("en-US")

const ratio = (a: number, b: number): string => (Number.isFinite(a / b) ? `${(a / b).toFixed(2)}x` : "-")

interface SlowSample {
  readonly variant: "uncompressed" | "gzip"
  /** `floor+gzip` is the floor asking for gzip. */
  readonly client: ClientName | "floor+gzip"
  readonly result: Result
  /** Bytes that came down the link during the whole run (warm-up list included). */
  readonly bytesDown: number
  /** Answers the compressing listener sent gzipped during the run (of 24: 4 warm-up pages and 20). */
  readonly gzipped: number
}

/**
 * `list-slow`: each client lists through its own fresh link (so that none inherits another's
 * queue), from the uncompressed listener and then from the compressing one.
 */
const runListSlow = async (server: ServerReady, ca: string): Promise<Array<SlowSample>> => {
  const samples: Array<SlowSample> = []
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "bench-slow-"))
  const gzipped = async () => Number(await (await fetch(`${server.control}/gzipped`, { method: "POST" })).text())
  try {
    const variants = [
      { name: "uncompressed", url: server.url, kubeconfig: server.kubeconfigPath },
      { name: "gzip", url: server.gzipUrl, kubeconfig: server.gzipKubeconfigPath }
    ] as const
    for (const variant of variants) {
      const clients: Array<ClientName | "floor+gzip"> = variant.name === "gzip" && clientNames.includes("floor")
        ? [...clientNames, "floor+gzip"]
        : [...clientNames]
      const upstream = new URL(variant.url)
      for (let rep = 0; rep < reps["list-slow"]; rep++) {
        for (const client of clients) {
          const link = await startLink({ host: upstream.hostname, port: Number(upstream.port), ...slowLink })
          try {
            const proxied = `https://127.0.0.1:${link.port}`
            const kubeconfig = Path.join(dir, `kubeconfig-${link.port}`)
            Fs.writeFileSync(kubeconfig, Fs.readFileSync(variant.kubeconfig, "utf8").split(variant.url).join(proxied))
            const name: ClientName = client === "floor+gzip" ? "floor" : client
            const before = await gzipped()
            const result = await runWorker({
              measure: "list-slow",
              client: name,
              target: { kubeconfig, server: proxied, ca, token, floorGzip: client === "floor+gzip" },
              control: server.control,
              profileDir: name === profiled ? profileDir : undefined,
              list: { namespace: "bench", warmNamespace: "warm", pageSize: sizes.pageSize, count: sizes.listCount },
              get: { namespace: "bench", name: "", warmup: 0, count: 0 },
              watch: { namespace: "", warmup: 0, count: 0 },
              logs: { namespace: "", warmPod: "", pod: "", warmup: 0, count: 0 },
              load: { namespace: "", name: "", warmup: 0, count: 0, watches: 0, watchNamespace: "", touchEveryMs: 0 },
              watches: { namespace: "", count: 0 }
            })
            const sample: SlowSample = {
              variant: variant.name,
              client,
              result,
              bytesDown: link.carried().down,
              gzipped: (await gzipped()) - before
            }
            samples.push(sample)
            process.stderr.write(
              `list-slow ${variant.name} ${client} #${rep + 1}: ${JSON.stringify({ ...result, ...sample, result: undefined })}\n`
            )
          } finally {
            await link.close()
          }
        }
      }
    }
  } finally {
    Fs.rmSync(dir, { recursive: true, force: true })
  }
  return samples
}

/** The `list-slow` table: medians per variant and client. */
const slowTable = (samples: ReadonlyArray<SlowSample>) => {
  const columns: ReadonlyArray<ClientName | "floor+gzip"> = ["floor", "floor+gzip", "effect-kube", "client-node"]
  const pick = (variant: SlowSample["variant"], client: SlowSample["client"], f: (s: SlowSample) => number) =>
    median(samples.filter((s) => s.variant === variant && s.client === client).map(f))
  const wall = (s: SlowSample) => (s.result.measure === "list-slow" ? s.result.wallMs : NaN)
  const cpu = (s: SlowSample) => s.result.cpuMs
  const mb = (s: SlowSample) => s.bytesDown / 1e6
  const figures: Record<string, unknown> = {}
  const rows = [
    `| list 10k pods through ${slowLink.bitsPerSecond / 1e6} Mbit/s, ${slowLink.latencyMs} ms each way | floor | ` +
    "floor asking gzip | effect-kube | client-node | effect-kube / client-node |",
    "|---|---:|---:|---:|---:|---:|"
  ]
  const row = (label: string, variant: SlowSample["variant"], f: (s: SlowSample) => number, digits: number) => {
    const values = columns.map((c) => pick(variant, c, f))
    figures[`${label} (${variant})`] = Object.fromEntries(columns.map((c, i) => [c, values[i]]))
    const cell = (v: number) => (Number.isFinite(v) ? v.toFixed(digits) : "-")
    rows.push(`| ${label}, server ${variant === "gzip" ? "gzips over 128 KiB" : "uncompressed"} | ${
      values.map(cell).join(" | ")
    } | ${ratio(values[2]!, values[3]!)} |`)
  }
  for (const variant of ["uncompressed", "gzip"] as const) {
    row("wall (ms)", variant, wall, 0)
    row("client CPU (ms)", variant, cpu, 0)
    row("MB down the link (with the warm-up list)", variant, mb, 1)
    if (variant === "gzip") row("answers gzipped (of 24)", variant, (s) => s.gzipped, 0)
  }
  return { table: rows.join("\n"), figures }
}

/** Runs `bench/fake-round.ts` in a process of its own, `reps` times, and returns the median of each figure. */
const runFakeRound = async (): Promise<FakeRoundResult> => {
  const runs: Array<FakeRoundResult> = []
  for (let rep = 0; rep < reps["fake-round"]; rep++) {
    const child = spawn(process.execPath, ["--import", "tsx", Path.join(here, "fake-round.ts"), String(fakeRounds), "--json"], {
      stdio: ["ignore", "pipe", "inherit"]
    })
    const result = JSON.parse(await firstLine(child)) as FakeRoundResult
    runs.push(result)
    process.stderr.write(`fake-round #${rep + 1}: ${JSON.stringify(result)}\n`)
  }
  const m = (f: (r: FakeRoundResult) => number) => median(runs.map(f))
  return {
    rounds: fakeRounds,
    roundCpuUs: m((r) => r.roundCpuUs),
    opCpuUs: {
      create: m((r) => r.opCpuUs.create),
      get: m((r) => r.opCpuUs.get),
      list: m((r) => r.opCpuUs.list),
      watch: m((r) => r.opCpuUs.watch)
    },
    roundWallUs: m((r) => r.roundWallUs)
  }
}

/** One line of the targets table: what issue 21 asks, effect-kube's figure, and whether it is met. */
interface Verdict {
  readonly target: string
  readonly figure: string
  readonly met: boolean
}

/** The real control plane's section (`real`, bench/real.ts), with this run's options. */
const realSection = (): Promise<RealOutput> =>
  runReal({ kubeconfig: kubeconfigFlag, reps: reps.real, clients: clientNames, profiled, profileDir, runWorker })

/** What `--write` puts between the `bench:real` lines of bench/README.md. */
const realBlock = (real: RealOutput): string =>
  `Run of ${String(real.json["date"]).slice(0, 10)}, \`npm run bench -- --only real\`. ${real.summary}\n\n${real.table}`

const printReal = (real: RealOutput): void => {
  process.stdout.write(`\n${real.table}\n\n${real.summary}\n`)
  if (real.behind.length > 0) process.stdout.write(`Behind client-node (real control plane): ${real.behind.join("; ")}\n`)
}

/** `--only real`: that section alone; `--write` puts it in its own block and key, the rest left as it was. */
const mainReal = async () => {
  const real = await realSection()
  if (write) {
    const file = Path.join(here, "results.json")
    const results = Fs.existsSync(file) ? JSON.parse(Fs.readFileSync(file, "utf8")) as Record<string, unknown> : {}
    results["realControlPlane"] = real.json
    Fs.writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`)
    fillReadme(realBlock(real), readmeRealBegin, readmeRealEnd)
  }
  printReal(real)
}

const main = async () => {
  if (onlyReal) return mainReal()
  const certs = pki()

  const samples = Object.fromEntries(
    workerMeasures.map((m) => [m, { floor: [], "effect-kube": [], "effect-kube-h1": [], "client-node": [] }])
  ) as unknown as Record<Measure, Record<ClientName, Array<Result>>>
  const slow: Array<SlowSample> = []

  const groups: ReadonlyArray<{ readonly measures: ReadonlyArray<Measure>; readonly seed: ServerConfig["seed"] }> = [
    {
      measures: ["list", "list-gzip", "get", "load", "list-slow", "watches"],
      seed: [
        { namespace: "bench", pods: sizes.listCount },
        { namespace: "warm", pods: sizes.warmListCount },
        { namespace: "loadwatch", pods: 10 }
      ]
    },
    { measures: ["watch"], seed: [{ namespace: "watch", pods: sizes.watchPods }] },
    {
      measures: ["logs", "logs-bytes"],
      seed: [{ namespace: "logs", pods: 2 * (reps.logs + reps["logs-bytes"]) * clientNames.length }]
    }
  ]

  for (const group of groups) {
    const measures = group.measures.filter((m) => only.has(m))
    if (measures.length === 0) continue
    const server = await startServer({
      tls: { cert: certs.server.cert, key: certs.server.key, ca: certs.ca.cert },
      token,
      seed: group.seed
    })
    const gzipped = async () => Number(await (await fetch(`${server.control}/gzipped`, { method: "POST" })).text())
    try {
      const plain: Target = { kubeconfig: server.kubeconfigPath, server: server.url, ca: certs.ca.cert, token }
      const compressing: Target = {
        kubeconfig: server.gzipKubeconfigPath,
        server: server.gzipUrl,
        ca: certs.ca.cert,
        token,
        floorGzip: true
      }
      let logPod = 0
      for (const measure of measures) {
        if (measure === "list-slow") {
          slow.push(...await runListSlow(server, certs.ca.cert))
          continue
        }
        // `load` runs twice per client and repetition: alone, then beside open watches.
        const variants = measure === "load" ? [0, sizes.loadWatches] : [0]
        for (let rep = 0; rep < reps[measure]; rep++) {
          for (const watches of variants) for (const client of clientsOf(measure)) {
            const isLogs = measure === "logs" || measure === "logs-bytes"
            const job: Job = {
              measure,
              client,
              target: measure === "list-gzip" ? compressing : plain,
              control: server.control,
              profileDir: client === profiled ? profileDir : undefined,
              list: { namespace: "bench", warmNamespace: "warm", pageSize: sizes.pageSize, count: sizes.listCount },
              get: {
                namespace: "bench",
                name: server.podNames["bench"]?.[0] ?? "",
                warmup: sizes.getWarmup,
                count: sizes.gets
              },
              watch: { namespace: "watch", warmup: sizes.watchWarmup, count: sizes.watchEvents },
              logs: {
                namespace: "logs",
                warmPod: isLogs ? server.podNames["logs"]![logPod++]! : "",
                pod: isLogs ? server.podNames["logs"]![logPod++]! : "",
                warmup: sizes.logWarmup,
                count: sizes.logLines
              },
              load: {
                namespace: "bench",
                name: server.podNames["bench"]?.[0] ?? "",
                warmup: sizes.loadWarmup,
                count: sizes.loadGets,
                watches,
                watchNamespace: "loadwatch",
                touchEveryMs: sizes.loadTouchEveryMs
              },
              watches: { namespace: "loadwatch", count: sizes.openWatches }
            }
            const before = measure === "list-gzip" ? await gzipped() : 0
            const result = await runWorker(job)
            if (measure === "list-gzip") gzippedAnswers.set(result, (await gzipped()) - before)
            samples[measure][client].push(result)
            const answers = gzippedAnswers.has(result) ? ` (${gzippedAnswers.get(result)} answers gzipped)` : ""
            process.stderr.write(`${measure} ${client} #${rep + 1}: ${JSON.stringify(result)}${answers}\n`)
          }
        }
      }
    } finally {
      server.stop()
    }
  }

  let exec: Awaited<ReturnType<typeof runExecBench>> | undefined
  if (only.has("exec")) {
    const server = await startServer({
      tls: { cert: certs.server.cert, key: certs.server.key, ca: certs.ca.cert },
      token,
      seed: [{ namespace: "exec", pods: 1 }]
    })
    try {
      exec = await runExecBench({
        kubeconfig: server.kubeconfigPath,
        namespace: "exec",
        pod: server.podNames["exec"]![0]!,
        reps: reps.exec,
        mb: 64
      })
    } finally {
      server.stop()
    }
  }

  const results: Record<string, unknown> = {}
  const rows: Array<string> = [
    "| measurement | floor | effect-kube | client-node | effect-kube / floor | client-node / floor | " +
    "effect-kube / client-node | target (vs floor) |",
    "|---|---:|---:|---:|---:|---:|---:|---|"
  ]
  const verdicts: Array<Verdict> = []
  for (const [name, info] of Object.entries(figures) as Array<[Figure, FigureInfo]>) {
    if (!only.has(info.measure)) continue
    const samplesOf = (c: ClientName) => samples[info.measure][c].map(info.from).filter((v) => !Number.isNaN(v))
    const floor = median(samplesOf("floor"))
    const ours = median(samplesOf("effect-kube"))
    const theirs = median(samplesOf("client-node"))
    const figure = {
      unit: info.unit,
      floor,
      effectKube: ours,
      clientNode: theirs,
      effectKubeVsFloor: ours / floor,
      clientNodeVsFloor: theirs / floor,
      effectKubeVsClientNode: ours / theirs,
      samples: Object.fromEntries(clientNames.map((c) => [c, samplesOf(c)]))
    }
    const cells = `| ${info.label} (${info.unit}) | ${format(floor, info.unit)} | ${format(ours, info.unit)} | ${
      format(theirs, info.unit)
    } | ${ratio(ours, floor)} | ${ratio(theirs, floor)} | ${ratio(ours, theirs)} |`
    if (info.goal === undefined) {
      results[name] = figure
      rows.push(`${cells} - |`)
      continue
    }
    const { cell, met } = judge(info.goal, info.lowerIsBetter, ours, floor, theirs)
    const target = goalText(info.goal, info.lowerIsBetter)
    results[name] = { ...figure, target, met }
    rows.push(`${cells} ${cell} |`)
    verdicts.push({
      target: `${info.label}: ${target}`,
      figure: `${ratio(ours, floor)} the floor, ${ratio(ours, theirs)} client-node`,
      met
    })
  }

  // issue 39: the lines of `logStream` against the floor that only counts newline bytes (the logs-bytes row's)
  if (only.has("logs") && only.has("logs-bytes")) {
    const lines = median(samples.logs["effect-kube"].map(figures.logLinesPerSec.from).filter((v) => !Number.isNaN(v)))
    const counted = median(samples["logs-bytes"].floor.map(figures.logBytesLinesPerSec.from).filter((v) => !Number.isNaN(v)))
    const met = lines / counted >= 0.8
    results["logLinesVsByteFloor"] = { ratio: lines / counted, met }
    verdicts.push({
      target: "follow a log of 200k lines (`logStream` + `Stream.runForEach`): ≥ 0.8x the byte-counting floor",
      figure: `${ratio(lines, counted)} the byte-counting floor (${format(lines, "lines/s")} against ${format(counted, "lines/s")} lines a second)`,
      met
    })
  }

  const http2 = http2Table(samples)
  results["http2"] = http2.figures
  verdicts.push(...http2.verdicts)

  // GETs of the load bursts that failed (a client opening a connection per request may be refused some).
  let loadFailures = ""
  if (only.has("load")) {
    const failed = Object.fromEntries(
      clientNames.map((c) => [c, samples.load[c].reduce((n, r) => n + (r.measure === "load" ? r.failed : 0), 0)])
    )
    results["loadFailedGets"] = failed
    if (Object.values(failed).some((n) => n > 0)) loadFailures = `Failed GETs in the load bursts: ${JSON.stringify(failed)}`
  }

  // CPU time of the client's process over the measured part: not a target, but it moves far
  // less than wall time when other work shares the machine, so it tells noise from cost.
  const cpuRows: Array<string> = [
    "| client CPU time (user + system) | floor | effect-kube | client-node | effect-kube / floor | " +
    "client-node / floor |",
    "|---|---:|---:|---:|---:|---:|"
  ]
  const cpu: Record<string, unknown> = {}
  const cpuLabels: Record<Exclude<Measure, "list-slow" | "watches">, string> = {
    list: "list 10k pods (ms)",
    "list-gzip": "list 10k pods, server gzips (ms)",
    watch: "watch 50k events (ms)",
    logs: "follow 200k log lines, `logStream` (ms)",
    "logs-bytes": "follow 200k log lines, `logBytes` (ms)",
    get: "1,000 GETs (ms)",
    load: "1,000 concurrent GETs, no watches (ms)"
  }
  for (const measure of Object.keys(cpuLabels) as Array<keyof typeof cpuLabels>) {
    if (!only.has(measure)) continue
    const value = (client: ClientName) =>
      median(
        samples[measure][client].filter((r) => r.measure !== "load" || r.watches === 0).map((r) => r.cpuMs)
      )
    const [floor, ours, theirs] = [value("floor"), value("effect-kube"), value("client-node")]
    cpu[measure] = { floor, effectKube: ours, clientNode: theirs, effectKubeVsFloor: ours / floor }
    cpuRows.push(
      `| ${cpuLabels[measure]} | ${floor.toFixed(0)} | ${ours.toFixed(0)} | ${theirs.toFixed(0)} | ${
        ratio(ours, floor)
      } | ${ratio(theirs, floor)} |`
    )
  }

  if (exec !== undefined) {
    const { row, ...figure } = exec
    results["execMBPerSec"] = figure
    rows.push(row)
  }

  // Cold start: fresh processes, clients taking turns.
  let cold: Partial<Record<ClientName, ColdResult>> | undefined
  if (only.has("cold")) {
    cold = await measureColdStart(reps.cold, clientNames)
    const ours = cold["effect-kube"]?.answerMs
    const theirs = cold["client-node"]?.answerMs
    if (ours !== undefined && theirs !== undefined) {
      verdicts.push({
        target: "cold start to the first answer ≤ 0.85x client-node's",
        figure: `${ratio(ours, theirs)} client-node (${ours.toFixed(0)} against ${theirs.toFixed(0)} ms)`,
        met: ours / theirs <= 0.85
      })
    }
  }

  let bundles: Record<"effect-kube" | "client-node", BundleResult> | undefined
  if (only.has("bundle")) {
    bundles = await measureBundles()
    const ours = bundles["effect-kube"].gzipBytes
    const theirs = bundles["client-node"].gzipBytes
    verdicts.push({
      target: "the esbuild-minified list-pods program, gzipped, ≤ client-node's",
      figure: `${ratio(ours, theirs)} client-node (${(ours / 1000).toFixed(1)} against ${(theirs / 1000).toFixed(1)} KB)`,
      met: ours <= theirs
    })
  }

  const fakeRound = only.has("fake-round") ? await runFakeRound() : undefined

  const discovery = only.has("discovery") ? await measureDiscovery(reps.discovery) : undefined
  const transform = only.has("transform") ? await measureTransform(reps.transform) : undefined
  for (const parity of [discovery, transform]) if (parity !== undefined) verdicts.push(...parity.verdicts)

  const real = only.has("real") ? await realSection() : undefined

  const targetRows = [
    "| target | effect-kube | |",
    "|---|---|---|",
    ...verdicts.map((v) => `| ${v.target} | ${v.figure} | ${v.met ? "met" : "MISSED"} |`)
  ]

  const description = machine()
  const table = rows.join("\n")
  const cpuTable = cpuRows.join("\n")
  const coldTable = cold === undefined ? undefined : coldStartTable(cold)
  const listSlowTable = slow.length > 0 ? slowTable(slow).table : undefined
  const output = {
    date: new Date().toISOString(),
    machine: description,
    sizes,
    repetitions: Object.fromEntries([...only].map((m) => [m, reps[m]])),
    clientNodeVersion: (JSON.parse(
      Fs.readFileSync(Path.join(here, "..", "node_modules", "@kubernetes", "client-node", "package.json"), "utf8")
    ) as { version: string }).version,
    clientNodeUndici: undiciRedirected ? "undici 7 (client-node's undici 8 needs Node >= 22.19)" : "as shipped",
    figures: results,
    cpuMs: cpu,
    targets: verdicts,
    missed: verdicts.filter((v) => !v.met).map((v) => v.target),
    table,
    http2Table: http2.table,
    listSlow: slow.length > 0 ? { link: slowLink, ...slowTable(slow).figures } : undefined,
    listSlowTable,
    cpuTable,
    coldStart: cold,
    coldTable,
    bundle: bundles,
    bundleTable: bundles === undefined ? undefined : bundleTable(bundles),
    fakeRound,
    fakeRoundTable: fakeRound === undefined ? undefined : fakeRoundTable(fakeRound),
    discovery: discovery?.figures,
    discoveryTable: discovery?.table,
    transform: transform?.figures,
    transformTable: transform?.table,
    targetTable: verdicts.length > 0 ? targetRows.join("\n") : undefined,
    realControlPlane: real?.json
  }
  const tables = [
    rows.length > 2 ? table : undefined,
    http2.table,
    cpuRows.length > 2 ? cpuTable : undefined,
    listSlowTable,
    coldTable,
    output.bundleTable,
    output.fakeRoundTable,
    output.discoveryTable,
    output.transformTable,
    output.targetTable
  ].filter((t) => t !== undefined).join("\n\n")
  const summary = `Median of ${JSON.stringify(output.repetitions)} runs; Node ${description.node}, ` +
    `${description.nproc} CPUs (${description.cpu}), ${description.memoryGB} GB, ${description.os}.`
  // `--write` was refused at the start unless this is a full run
  if (write) {
    Fs.writeFileSync(Path.join(here, "results.json"), `${JSON.stringify(output, null, 2)}\n`)
    fillReadme(`Full run of ${output.date.slice(0, 10)}. ${summary}\n\n${tables}`, readmeBegin, readmeEnd)
    if (real !== undefined) fillReadme(realBlock(real), readmeRealBegin, readmeRealEnd)
  }
  process.stdout.write(`\n${tables}\n\n${summary}\n`)
  if (real !== undefined) printReal(real)
  if (output.missed.length > 0) process.stdout.write(`Targets missed: ${output.missed.join("; ")}\n`)
  if (loadFailures !== "") process.stdout.write(`${loadFailures}\n`)
}

/** Where `--write` puts the tables in bench/README.md: between these two lines, replacing what was there. */
const readmeBegin = "<!-- bench:begin: written by `npm run bench -- --write` (bench/run.ts) -->"
const readmeEnd = "<!-- bench:end -->"
/** The same for the real control plane's tables (`real`). */
const readmeRealBegin = "<!-- bench:real:begin: written by `npm run bench -- --only real --write` (bench/run.ts) -->"
const readmeRealEnd = "<!-- bench:real:end -->"

const fillReadme = (block: string, beginLine: string, endLine: string): void => {
  const file = Path.join(here, "README.md")
  const text = Fs.readFileSync(file, "utf8")
  const begin = text.indexOf(beginLine)
  const end = text.indexOf(endLine, begin)
  if (begin === -1 || end === -1) {
    process.stderr.write(
      `bench/README.md has no ${beginLine} ... ${endLine} block: the tables are in bench/results.json\n`
    )
    return
  }
  Fs.writeFileSync(file, `${text.slice(0, begin + beginLine.length)}\n${block}\n${text.slice(end)}`)
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack ?? error.message : String(error)}\n`)
  process.exit(1)
})

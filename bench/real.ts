/**
 * `npm run bench -- --only real`: the list, watch, log and GET measures against a real control
 * plane (kube-apiserver 1.35 and etcd from cluster/, or the cluster of `--kubeconfig`): Go's
 * HTTP/2 and TLS, the apiserver's gzip of answers over 128 KiB, its watch cache, the kubelet's
 * log stream proxied through the apiserver. The user is the kubeconfig's: the admin's client
 * certificate on our own cluster, which every client uses (the floor with the CA, certificate
 * and key read from the kubeconfig).
 *
 * The cluster is seeded first, over one HTTP/2 session (bench/real-cluster.ts):
 * - `pods` pods in a namespace of their own: bench/pods.ts's pods without status, owner or
 *   node, held by a scheduling gate (they stay Pending, nothing schedules or runs them, no
 *   controller writes them again), so what is listed is what the apiserver stores of a
 *   Deployment's pod spec: its defaults, the projected token volume and managedFields;
 * - the creation of those pods is the watch's burst of writes: each client watches from the
 *   resourceVersion before it, and the apiserver's watch cache replays the ADDED events;
 * - a smaller namespace to warm the lists up; two pods that print a log (`perl`, run for real
 *   in a sandbox by the node stand-in) and then sleep.
 *
 * Each client runs in a fresh process (bench/worker.ts) for each repetition, which runs its
 * measures in turn (the list first, so that its peak RSS is a cold list's; each measure warmed
 * up first), clients taking turns; the apiserver shares the machine's CPUs with them, so these
 * figures are what a client gets end to end, the server's time included. Nothing is written
 * unless `--write` asks.
 */
import * as Fs from "node:fs"
import * as Os from "node:os"
import type { ClientName, Target } from "./clients.js"
import { pod } from "./pods.js"
import {
  adminSession,
  buildCluster,
  type Cluster,
  inParallel,
  namespace as makeNamespace,
  persist,
  podsResourceVersion,
  readCredentials,
  readWatch,
  startCluster
} from "./real-cluster.js"
import type { Job, Measure, Result } from "./worker.js"

export const realSizes = {
  /** Pods listed, and created in one burst for the watch. */
  pods: 5_000,
  pageSize: 500,
  /** Pods of the namespace the lists warm up on (one page). */
  warmPods: 500,
  gets: 500,
  getWarmup: 100,
  /** Events of the burst read to warm the watch up. */
  watchWarmup: 1_000,
  logLines: 200_000,
  logWarmLines: 20_000,
  /** How many writes the seeding sends at once. */
  seedWidth: 48
}

export interface RealOptions {
  /** A cluster to use instead of starting one (`--kubeconfig`); its namespaces are deleted at the end. */
  readonly kubeconfig: string | undefined
  readonly reps: number
  readonly clients: ReadonlyArray<Exclude<ClientName, "effect-kube-h1">>
  readonly profiled: string | undefined
  readonly profileDir: string
  readonly runWorker: (job: Job) => Promise<Result>
}

/** A pod of bench/pods.ts as a user would create it: no status, no owner, no node, held by a scheduling gate. */
export const realPod = (i: number, ns: string): Record<string, unknown> => {
  const p = pod(i, ns) as {
    metadata: Record<string, unknown>
    spec: Record<string, unknown>
    status?: unknown
  }
  const { creationTimestamp: _c, generateName: _g, ownerReferences: _o, resourceVersion: _r, uid: _u, ...metadata } =
    p.metadata
  const { nodeName: _n, ...spec } = p.spec
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata,
    spec: {
      ...spec,
      // the namespace's own: bench/pods.ts names one per app, which would not exist
      serviceAccountName: "default",
      serviceAccount: "default",
      schedulingGates: [{ name: "bench.effect-kube/hold" }]
    }
  }
}

/** The line `i` of a log pod: server.ts's log line (about 110 bytes). */
const perlLogLines = (count: number) =>
  `for my $i (0..${count - 1}) { printf("2025-01-01T12:00:%02d.%03dZ INFO request handled method=GET ` +
  `path=/api/items/%d status=200 duration_ms=%d bytes=%d\\n", $i % 60, $i % 1000, $i, $i % 97, ($i * 7919) % 65536) }`

const logPod = (name: string, ns: string, lines: number) => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name, namespace: ns },
  spec: {
    restartPolicy: "Never",
    terminationGracePeriodSeconds: 0,
    containers: [{
      name: "app",
      image: "perl",
      command: ["sh", "-c", `perl -e '${perlLogLines(lines)}'; exec sleep infinity`]
    }]
  }
})

const median = (values: ReadonlyArray<number>): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length === 0
    ? NaN
    : sorted.length % 2 === 1
    ? sorted[mid]!
    : (sorted[mid - 1]! + sorted[mid]!) / 2
}

const format = (value: number, unit: string): string =>
  !Number.isFinite(value)
    ? "-"
    : unit === "ms"
    ? value < 10 ? value.toFixed(2) : value.toFixed(0)
    : unit === "MB"
    ? value < 10 ? value.toFixed(1) : value.toFixed(0)
    : Math.round(value).toLocaleString("en-US")

const ratio = (a: number, b: number): string => (Number.isFinite(a / b) ? `${(a / b).toFixed(2)}x` : "-")

const load1 = () => Os.loadavg()[0]!

export interface RealOutput {
  readonly table: string
  readonly summary: string
  readonly json: Record<string, unknown>
  readonly behind: ReadonlyArray<string>
}

export const runReal = async (options: RealOptions): Promise<RealOutput> => {
  const began = performance.now()
  const loads: Array<number> = [load1()]
  const reps = options.reps
  const clients = options.clients
  let cluster: Cluster | undefined
  let kubeconfig = options.kubeconfig
  if (kubeconfig === undefined) {
    buildCluster()
    cluster = await startCluster()
    kubeconfig = cluster.kubeconfig
    process.stderr.write(`real: cluster ready in ${(cluster.startMs / 1000).toFixed(1)} s\n`)
  }
  const credentials = readCredentials(kubeconfig)
  const admin = adminSession(credentials)
  const id = Math.random().toString(36).slice(2, 7)
  const ns = { main: `bench-${id}`, warm: `bench-${id}-warm`, logs: `bench-${id}-logs` }
  const samples = new Map<string, Array<Result>>()
  const sample = (measure: Measure, client: ClientName) => samples.get(`${measure} ${client}`) ?? []
  let version = "unknown"
  let seedMs = 0
  let podBytes = 0
  let logsSkipped: string | undefined
  try {
    version = (JSON.parse((await admin.must("GET", "/version")).text) as { gitVersion: string }).gitVersion

    // The warm namespace and the log pods first: the burst comes last, so that nothing is
    // written to pods after it and the watch cache keeps all of it.
    for (const name of Object.values(ns)) await makeNamespace(admin, name)
    await inParallel(realSizes.warmPods, realSizes.seedWidth, (i) =>
      persist(admin, "POST", `/api/v1/namespaces/${ns.warm}/pods`, realPod(i, ns.warm)))
    const logs = { warm: { name: "log-warm", lines: realSizes.logWarmLines }, main: { name: "log", lines: realSizes.logLines } }
    for (const l of Object.values(logs)) {
      await persist(admin, "POST", `/api/v1/namespaces/${ns.logs}/pods`, logPod(l.name, ns.logs, l.lines))
    }
    const logsDeadline = performance.now() + 90_000
    for (const l of Object.values(logs)) {
      const last = `path=/api/items/${l.lines - 1} `
      for (;;) {
        const answer = await admin.request(
          "GET",
          `/api/v1/namespaces/${ns.logs}/pods/${l.name}/log?container=app&tailLines=1`
        )
        if (answer.status === 200 && answer.text.includes(last)) break
        if (performance.now() > logsDeadline) {
          logsSkipped = `the pod's log was not written within 90 s (the node runs containers only as root, ` +
            `with nsenter); its last line: ${answer.text.slice(0, 200)}`
          break
        }
        await new Promise((r) => setTimeout(r, 300))
      }
      if (logsSkipped !== undefined) break
    }

    const before = await podsResourceVersion(admin, ns.main)
    const seedBegan = performance.now()
    const names: Array<string> = []
    await inParallel(realSizes.pods, realSizes.seedWidth, async (i) => {
      const object = realPod(i, ns.main)
      await persist(admin, "POST", `/api/v1/namespaces/${ns.main}/pods`, object)
      names[i] = (object["metadata"] as { name: string }).name
    })
    seedMs = performance.now() - seedBegan
    podBytes = (await admin.must("GET", `/api/v1/namespaces/${ns.main}/pods/${names[0]}`)).text.length
    const primed = await readWatch(
      credentials,
      `/api/v1/namespaces/${ns.main}/pods?watch=true&resourceVersion=${before}`,
      realSizes.pods
    )
    process.stderr.write(
      `real: ${version}, ${realSizes.pods} pods (${podBytes} bytes of JSON each) created in ` +
        `${(seedMs / 1000).toFixed(1)} s; the watch cache replayed them in ${primed.ms.toFixed(0)} ms\n`
    )

    const target: Target = {
      kubeconfig,
      server: credentials.server,
      ca: credentials.ca ?? "",
      token: credentials.token,
      cert: credentials.cert,
      key: credentials.key,
      floorGzip: true
    }
    // One process a client and repetition, running its measures in turn (the list first, so that
    // its peak RSS is a cold list's): a worker's start-up (tsx, the client's import) takes
    // seconds on a loaded machine, too many to pay per measure. effect-kube with `http2: false`
    // runs the list and the GETs.
    const measuresOf = (client: ClientName): ReadonlyArray<Measure> =>
      client === "effect-kube-h1"
        ? ["list", "get"]
        : [
          "list",
          "real-watch",
          ...(logsSkipped === undefined
            ? ["real-logs" as const, ...(client === "effect-kube" ? ["real-logs-bytes" as const] : [])]
            : []),
          "get"
        ]
    const turns = clients.flatMap((c) => (c === "effect-kube" ? [c, "effect-kube-h1" as const] : [c]))
    for (let rep = 0; rep < reps; rep++) {
      for (const client of turns) {
        const job: Job = {
          measure: "real",
          real: measuresOf(client),
          client,
          target,
          control: "",
          profileDir: client === options.profiled ? options.profileDir : undefined,
          list: { namespace: ns.main, warmNamespace: ns.warm, pageSize: realSizes.pageSize, count: realSizes.pods },
          get: { namespace: ns.main, name: names[0]!, warmup: realSizes.getWarmup, count: realSizes.gets },
          watch: {
            namespace: ns.main,
            warmup: realSizes.watchWarmup,
            count: realSizes.pods,
            resourceVersion: before
          },
          logs: {
            namespace: ns.logs,
            warmPod: logs.warm.name,
            pod: logs.main.name,
            warmup: logs.warm.lines,
            count: logs.main.lines
          },
          load: { namespace: "", name: "", warmup: 0, count: 0, watches: 0, watchNamespace: "", touchEveryMs: 0 },
          watches: { namespace: "", count: 0 }
        }
        const workerBegan = performance.now()
        const answer = await options.runWorker(job)
        loads.push(load1())
        process.stderr.write(`real: ${client} #${rep + 1} took ${((performance.now() - workerBegan) / 1000).toFixed(1)} s\n`)
        for (const result of answer.measure === "real" ? answer.results : [answer]) {
          samples.set(`${result.measure} ${client}`, [...sample(result.measure, client), result])
          process.stderr.write(`real ${result.measure} ${client} #${rep + 1}: ${JSON.stringify(result)}\n`)
        }
      }
    }
  } finally {
    if (cluster === undefined) {
      for (const name of Object.values(ns)) await admin.request("DELETE", `/api/v1/namespaces/${name}`).catch(() => {})
    }
    admin.close()
    await cluster?.stop()
  }
  loads.push(load1())

  // The table: one row a figure, effect-kube with `http2: false` on rows of its own.
  type Row = {
    readonly label: string
    readonly unit: string
    readonly measure: Measure
    readonly ours: ClientName
    readonly from: (r: Result) => number
    readonly lowerIsBetter: boolean
    /** Figures whose floor and client-node come from another measure (the same work for them). */
    readonly theirs?: Measure
  }
  const N = realSizes.pods.toLocaleString("en-US")
  const lines = `${realSizes.logLines / 1000}k`
  const wall = (r: Result) => (r.measure === "list" ? r.wallMs : NaN)
  const rss = (r: Result) => (r.measure === "list" ? r.peakRssBytes / 2 ** 20 : NaN)
  const p50 = (r: Result) => (r.measure === "get" ? r.p50Ms : NaN)
  const p99 = (r: Result) => (r.measure === "get" ? r.p99Ms : NaN)
  const events = (r: Result) => (r.measure === "real-watch" ? r.eventsPerSec : NaN)
  const linesPerSec = (r: Result) =>
    r.measure === "real-logs" || r.measure === "real-logs-bytes" ? r.linesPerSec : NaN
  const rows: ReadonlyArray<Row> = [
    { label: `list ${N} pods (pages of 500, gzipped by the apiserver): wall`, unit: "ms", measure: "list", ours: "effect-kube", from: wall, lowerIsBetter: true },
    { label: `list ${N} pods, effect-kube with \`http2: false\`: wall`, unit: "ms", measure: "list", ours: "effect-kube-h1", from: wall, lowerIsBetter: true },
    { label: `list ${N} pods: peak RSS over baseline`, unit: "MB", measure: "list", ours: "effect-kube", from: rss, lowerIsBetter: true },
    {
      label: `watch: the burst's ${N} ADDED events from the watch cache (\`Stream.runForEach\`)`,
      unit: "events/s",
      measure: "real-watch",
      ours: "effect-kube",
      from: events,
      lowerIsBetter: false
    },
    {
      label: `read a pod's log of ${lines} lines (\`logStream\` + \`Stream.runForEach\`)`,
      unit: "lines/s",
      measure: "real-logs",
      ours: "effect-kube",
      from: linesPerSec,
      lowerIsBetter: false
    },
    {
      label: `read a pod's log of ${lines} lines as bytes (effect-kube: \`logBytes\` + \`Stream.runForEachWhile\`)`,
      unit: "lines/s",
      measure: "real-logs-bytes",
      ours: "effect-kube",
      from: linesPerSec,
      lowerIsBetter: false,
      theirs: "real-logs"
    },
    { label: `${realSizes.gets.toLocaleString("en-US")} sequential GETs: p50`, unit: "ms", measure: "get", ours: "effect-kube", from: p50, lowerIsBetter: true },
    { label: `${realSizes.gets.toLocaleString("en-US")} sequential GETs: p99`, unit: "ms", measure: "get", ours: "effect-kube", from: p99, lowerIsBetter: true },
    { label: "sequential GETs, effect-kube with `http2: false`: p50", unit: "ms", measure: "get", ours: "effect-kube-h1", from: p50, lowerIsBetter: true },
    { label: "sequential GETs, effect-kube with `http2: false`: p99", unit: "ms", measure: "get", ours: "effect-kube-h1", from: p99, lowerIsBetter: true }
  ]
  const table = [
    "| measurement (real control plane) | floor | effect-kube | client-node | effect-kube / floor | " +
    "client-node / floor | effect-kube / client-node |",
    "|---|---:|---:|---:|---:|---:|---:|"
  ]
  const cpuTable = [
    "| client CPU time, user + system (real control plane) | floor | effect-kube | client-node | effect-kube / floor | " +
    "effect-kube / client-node |",
    "|---|---:|---:|---:|---:|---:|"
  ]
  const figures: Record<string, unknown> = {}
  const behind: Array<string> = []
  for (const row of rows) {
    const values = (measure: Measure, client: ClientName, f: (r: Result) => number) =>
      sample(measure, client).map(f).filter((v) => !Number.isNaN(v))
    const ours = median(values(row.measure, row.ours, row.from))
    if (Number.isNaN(ours)) continue
    const other = row.theirs ?? row.measure
    const floor = median(values(other, "floor", row.from))
    const theirs = median(values(other, "client-node", row.from))
    figures[row.label] = {
      unit: row.unit,
      floor,
      effectKube: ours,
      clientNode: theirs,
      effectKubeVsFloor: ours / floor,
      effectKubeVsClientNode: ours / theirs,
      samples: {
        floor: values(other, "floor", row.from),
        [row.ours]: values(row.measure, row.ours, row.from),
        "client-node": values(other, "client-node", row.from)
      }
    }
    const isBehind = row.lowerIsBetter ? ours > theirs : ours < theirs
    if (isBehind) behind.push(row.label)
    table.push(
      `| ${row.label} (${row.unit}) | ${format(floor, row.unit)} | ${format(ours, row.unit)} | ${format(theirs, row.unit)} | ` +
        `${ratio(ours, floor)} | ${ratio(theirs, floor)} | ${ratio(ours, theirs)}${isBehind ? " BEHIND" : ""} |`
    )
  }
  const cpuLabels: ReadonlyArray<readonly [Measure, ClientName, string]> = [
    ["list", "effect-kube", `list ${N} pods (ms)`],
    ["list", "effect-kube-h1", `list ${N} pods, effect-kube with \`http2: false\` (ms)`],
    ["real-watch", "effect-kube", `watch ${N} events (ms)`],
    ["real-logs", "effect-kube", `read ${lines} log lines, \`logStream\` (ms)`],
    ["get", "effect-kube", `${realSizes.gets.toLocaleString("en-US")} GETs (ms)`],
    ["get", "effect-kube-h1", `${realSizes.gets.toLocaleString("en-US")} GETs, effect-kube with \`http2: false\` (ms)`]
  ]
  const cpu: Record<string, unknown> = {}
  for (const [measure, ours, label] of cpuLabels) {
    const value = (c: ClientName) => median(sample(measure, c).map((r) => r.cpuMs))
    const [floor, mine, theirs] = [value("floor"), value(ours), value("client-node")]
    if (Number.isNaN(mine)) continue
    cpu[label] = { floor, effectKube: mine, clientNode: theirs }
    cpuTable.push(
      `| ${label} | ${format(floor, "")} | ${format(mine, "")} | ${format(theirs, "")} | ${ratio(mine, floor)} | ` +
        `${ratio(mine, theirs)} |`
    )
  }

  const sortedLoads = [...loads].sort((a, b) => a - b)
  const totalS = (performance.now() - began) / 1000
  const nproc = Os.availableParallelism()
  const summary = `Against ${version} (${cluster === undefined ? "the cluster of --kubeconfig" : "cluster/, started for the run"}), ` +
    `${N} pods of ${(podBytes / 1000).toFixed(1)} KB of JSON each as the apiserver returns them (created in ` +
    `${(seedMs / 1000).toFixed(0)} s); median of ${reps} run${reps === 1 ? "" : "s"} a client, clients taking turns; ` +
    `the whole section took ${totalS.toFixed(0)} s. A loaded machine: load average (1 min) ${sortedLoads[0]!.toFixed(1)} to ` +
    `${sortedLoads.at(-1)!.toFixed(1)}, median ${median(loads).toFixed(1)}, on ${nproc} CPUs, the apiserver and etcd ` +
    `among them; Node ${process.version}.` +
    (logsSkipped === undefined ? "" : ` Log rows skipped: ${logsSkipped}.`)
  const json = {
    date: new Date().toISOString(),
    server: version,
    cluster: cluster === undefined ? "--kubeconfig" : "cluster/ (kube-cluster up)",
    sizes: realSizes,
    podBytes,
    seedMs,
    repetitions: reps,
    loadAverage: { min: sortedLoads[0], median: median(loads), max: sortedLoads.at(-1), samples: loads },
    nproc,
    figures,
    cpuMs: cpu,
    behindClientNode: behind,
    logsSkipped,
    table: table.join("\n"),
    cpuTable: cpuTable.join("\n"),
    summary,
    seconds: totalS
  }
  return { table: `${table.join("\n")}\n\n${cpuTable.join("\n")}`, summary, json, behind }
}

/** The kubeconfig path exists (a readable file), for `--kubeconfig`. */
export const checkKubeconfig = (path: string): boolean => Fs.existsSync(path) && Fs.statSync(path).isFile()

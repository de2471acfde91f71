/**
 * `npx tsx bench/h2-burst.ts [rounds] [burst] [variant ...]`: what HTTP/2 costs the client and the server, against
 * undici's HTTP/1.1 and against Node's own `node:http2`. One client process against `bench/server.ts` in its own
 * (loopback HTTPS, a token file; 1 pod in `default`, 500 in `big`), the variants taking turns round by round so that
 * load from elsewhere falls on all alike. Each turn sends `burst` (default 1,000) GETs of one pod at once, then 100
 * sequential GETs, then 3 lists of the 500 pods; per variant it prints the medians over the rounds: the burst's wall,
 * the client's CPU for it (`process.cpuUsage`) and the server's (its `/proc/<pid>/stat`, so Linux only), the client's CPU per sequential GET and a list's wall. Variants:
 * - `undici-h1`: undici's `request` + `body.text()` + `JSON.parse` over an Agent of 32 connections (the cap of
 *   effect-kube's HTTP/1.1);
 * - `pool-h2`: the same through effect-kube's HTTP/2 pool (`src/internal/http2.ts`, `node:http2` sessions);
 * - `node-h2`: one `node:http2` session, a `session.request` per GET (no pool, no limits: the floor of h2 in Node);
 * - `get-h1`, `get-h2`: `Kube.api(Pods).get` (and `.list`) through the NodeKube layer, `http2: false` and the default.
 */
import * as Fs from "node:fs"
import * as Http2 from "node:http2"
import * as Os from "node:os"
import * as Path from "node:path"
import { performance } from "node:perf_hooks"
import * as Effect from "effect/Effect"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Option from "effect/Option"
import * as Kube from "../packages/effect-kube/src/Kube.js"
import * as KubeConfig from "../packages/effect-kube/src/KubeConfig.js"
import * as NodeKube from "../packages/effect-kube/src/NodeKube.js"
import { Pods } from "../packages/effect-kube/src/resources/index.js"
import * as H2 from "../packages/effect-kube/src/internal/transport/http2.js"
import * as Undici from "../packages/effect-kube/src/internal/transport/undici.js"
import { writeTokenFileKubeconfig } from "./kubeconfig.js"
import { startServer } from "./turns.js"

const [roundsArg, burstArg, ...picked] = process.argv.slice(2)
const rounds = Number(roundsArg ?? 8)
const burst = Number(burstArg ?? 1000)
const token = "bench-token"

/** User and system CPU of a process (ms), from `/proc` (clock ticks of 10 ms). */
const cpuOfMs = (pid: number): number => {
  const fields = Fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")
  return (Number(fields[11]) + Number(fields[12])) * 10
}

interface Variant {
  readonly name: string
  readonly get: (kind: "pod" | "list") => Promise<unknown>
  readonly wall: Array<number>
  readonly client: Array<number>
  readonly server: Array<number>
  readonly sequential: Array<number>
  readonly list: Array<number>
}

const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

const main = async () => {
  const { ca, child, ready } = await startServer(token, [
    { namespace: "default", pods: 1 },
    { namespace: "big", pods: 500 }
  ])
  process.on("exit", () => child.kill())
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "effect-kube-h2-burst-"))
  const kubeconfig = writeTokenFileKubeconfig(dir, ready.url, token, ca)
  const podName = ready.podNames["default"]![0]!
  const paths = { pod: `/api/v1/namespaces/default/pods/${podName}`, list: "/api/v1/namespaces/big/pods?limit=500" }
  const headers = { authorization: `Bearer ${token}`, accept: "application/json" }
  const origin = new URL(ready.url).origin
  const variants: Array<Variant> = []
  const add = (name: string, get: Variant["get"]) => {
    if (picked.length > 0 && !picked.includes(name)) return
    variants.push({ name, get, wall: [], client: [], server: [], sequential: [], list: [] })
  }
  const through = (dispatcher: Undici.Requester): Variant["get"] => async (kind) => {
    const chunks: Array<Buffer> = []
    for await (const chunk of (await dispatcher.request({ origin, path: paths[kind], method: "GET", headers })).body) {
      chunks.push(chunk as Buffer)
    }
    return JSON.parse(Buffer.concat(chunks).toString("utf8"))
  }

  const h1 = new Undici.Agent({ connect: { ca }, connections: 32, bodyTimeout: 0, headersTimeout: 0 })
  add("undici-h1", through(h1))
  add(
    "pool-h2",
    through(new H2.Negotiated(origin, { ca }, 32, () => false, { pingIntervalMs: 0, pingTimeoutMs: 0 }, 64 * 1024))
  )
  const session = Http2.connect(origin, { ca })
  add("node-h2", (kind) =>
    new Promise((resolve, reject) => {
      const stream = session.request({ ":method": "GET", ":path": paths[kind], ...headers })
      const chunks: Array<Buffer> = []
      stream.on("data", (chunk: Buffer) => chunks.push(chunk))
      stream.on("end", () => resolve(JSON.parse(Buffer.concat(chunks).toString("utf8"))))
      stream.on("error", reject)
    }))
  for (const http2 of [false, true]) {
    const runtime = ManagedRuntime.make(
      NodeKube.layerFromKubeConfig(KubeConfig.layerFromFile({ path: kubeconfig }), { http2 })
    )
    await runtime.context()
    const get = Effect.map(Kube.api(Pods, { namespace: "default" }).get(podName), Option.getOrThrow)
    const list = Kube.api(Pods, { namespace: "big" }).list({ limit: 500 })
    add(`get-${http2 ? "h2" : "h1"}`, (kind) => kind === "pod" ? runtime.runPromise(get) : runtime.runPromise(list))
  }

  const turn = async (v: Variant, record: boolean) => {
    const server = cpuOfMs(child.pid!)
    const cpu = process.cpuUsage()
    const start = performance.now()
    await Promise.all(Array.from({ length: burst }, () => v.get("pod")))
    const wall = performance.now() - start
    const used = process.cpuUsage(cpu)
    const serverUsed = cpuOfMs(child.pid!) - server
    const sequentialCpu = process.cpuUsage()
    for (let i = 0; i < 100; i++) await v.get("pod")
    const sequential = process.cpuUsage(sequentialCpu)
    const listStart = performance.now()
    for (let i = 0; i < 3; i++) await v.get("list")
    const list = (performance.now() - listStart) / 3
    if (!record) return
    v.wall.push(wall)
    v.client.push((used.user + used.system) / 1000)
    v.server.push(serverUsed)
    v.sequential.push((sequential.user + sequential.system) / 100)
    v.list.push(list)
  }
  for (const v of variants) await turn(v, false)
  for (let round = 0; round < rounds; round++) for (const v of variants) await turn(v, true)
  console.log(`load average ${Os.loadavg().map((x) => x.toFixed(1)).join(" ")}; ${rounds} rounds of ${burst} GETs`)
  for (const v of variants) {
    console.log(
      `${v.name.padEnd(10)} burst wall ${median(v.wall).toFixed(0)} ms, client CPU ${median(v.client).toFixed(0)} ms; ` +
        `server CPU ${median(v.server).toFixed(0)} ms; sequential ${median(v.sequential).toFixed(0)} µs ` +
        `client CPU a GET; list of 500 ${median(v.list).toFixed(0)} ms`
    )
  }
  Fs.rmSync(dir, { recursive: true, force: true })
  process.exit(0)
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})

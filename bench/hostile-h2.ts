/**
 * `npx tsx bench/hostile-h2.ts [case ...]`: the memory and CPU of the hostile-server cases of
 * issue 42, each in a child process of its own with a 1 GB heap (`--max-old-space-size=1024`),
 * sampled every 20 ms: the peak of the V8 heap and of the RSS over the process's start, the
 * CPU time and the wall time, and how it ended (a result, a typed failure, or the process
 * aborting). Not a timed unit test: the figures go to `docs/reliability-hostile.md`.
 *
 * Cases (all by default): `watch-h2-<MB>` (a watch line of that many MB in 1-byte HTTP/2
 * DATA frames, default policy: `maxLineBytes` is 32 MiB), `watch-h1-<MB>` (the same in 1-byte
 * HTTP/1.1 chunks), `list-h2-<MB>` (a list of about that many MB in 1-byte DATA frames, no
 * content-length), `watch-h2-16k-<MB>` (the line in 16 KiB frames, for comparison).
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as ChildProcess from "node:child_process"
import * as Http from "node:http"
import type * as Net from "node:net"
import type * as Scope from "effect/Scope"
import * as Kube from "../packages/effect-kube/src/Kube.js"
import * as KubeConfig from "../packages/effect-kube/src/KubeConfig.js"
import * as NodeKube from "../packages/effect-kube/src/NodeKube.js"
import { ConfigMaps } from "../packages/effect-kube/src/resources/index.js"
import { pki } from "../test/util/pki.js"
import { serveRawH2 } from "../test/util/rawH2.js"


const cms = Kube.api(ConfigMaps, { namespace: "default" })
const MB = 1_000_000

const defaultCases = [
  "watch-h2-16k-12",
  "watch-h2-2",
  "list-h2-2",
  "watch-h1-2",
  "watch-h2-12",
  "watch-h1-12",
  "list-h2-20"
]

interface Figures {
  readonly outcome: string
  readonly wallMs: number
  readonly cpuMs: number
  readonly heapPeakMB: number
  readonly rssStartMB: number
  readonly rssPeakMB: number
}

const lineBytes = (mb: number) => {
  const head = Buffer.from(
    `{"type":"ADDED","object":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"},"data":{"a":"`
  )
  const out = Buffer.alloc(Math.round(mb * MB), "x")
  head.copy(out)
  return out
}

const listBytes = (mb: number) => {
  const item = (i: number) =>
    JSON.stringify({ metadata: { name: `cm-${i}`, namespace: "default" }, data: { pad: "x".repeat(900) } })
  const items: Array<string> = []
  let size = 0
  for (let i = 0; size < mb * MB; i++) {
    const text = item(i)
    items.push(text)
    size += text.length + 1
  }
  const head = `{"apiVersion":"v1","kind":"ConfigMapList","metadata":{"resourceVersion":"1"},"items":[`
  return Buffer.from(`${head}${items.join(",")}]}`)
}

const outcomeOf = (exit: Exit.Exit<unknown, unknown>): string =>
  Exit.isSuccess(exit) ? "ok" : String(exit.cause).replace(/\s+/g, " ").slice(0, 160)

/** Serves one case (in the parent, so that the server's own work is not the client's figures): its URL. */
const serveCase = (name: string): Effect.Effect<string, never, Scope.Scope> => {
  const [what, protocol, ...rest] = name.split("-")
  const frame = rest.length === 2 ? 16 * 1024 : 1
  const mb = Number(rest[rest.length - 1])
  const body = what === "list" ? listBytes(mb) : lineBytes(mb)
  if (protocol === "h2") {
    return Effect.map(
      serveRawH2((stream) => {
        stream.respond(200, { "content-type": "application/json" })
        void stream.send(body, frame).then(() => stream.end())
      }),
      (server) => server.url
    )
  }
  // HTTP/1.1: a write per byte, each a chunk of the chunked encoding
  return Effect.acquireRelease(
    Effect.promise(() => {
      const server = Http.createServer((_req, res) => {
        res.writeHead(200, { "content-type": "application/json" })
        let offset = 0
        const next = () => {
          if (res.destroyed) return
          let flushed = true
          for (let i = 0; i < 4096 && offset < body.length; i++) flushed = res.write(body.subarray(offset, ++offset))
          if (offset >= body.length) res.end()
          else if (flushed) setImmediate(next)
          else res.once("drain", next)
        }
        next()
      })
      return new Promise<Http.Server>((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)))
    }),
    (server) =>
      Effect.sync(() => {
        server.closeAllConnections()
        server.close()
      })
  ).pipe(Effect.map((server) => `http://127.0.0.1:${(server.address() as Net.AddressInfo).port}`))
}

/** Runs one case's client in this process (the child). */
const runCase = async (name: string, url: string): Promise<string> => {
  const [what] = name.split("-")
  const layer = NodeKube.layerFromKubeConfig(
    KubeConfig.layerFrom({ server: url, namespace: "default", tls: { ca: process.env["HOSTILE_CA"]! }, token: "t" })
  ).pipe(Layer.orDie)
  const run = what === "list" ? Effect.asVoid(cms.list()) : Stream.runDrain(cms.watch())
  return outcomeOf(await Effect.runPromise(Effect.exit(Effect.provide(run, layer))))
}

const child = async (name: string, url: string) => {
  const rssStart = process.memoryUsage().rss
  let heapPeak = 0
  let rssPeak = 0
  const sample = () => {
    const usage = process.memoryUsage()
    heapPeak = Math.max(heapPeak, usage.heapUsed)
    rssPeak = Math.max(rssPeak, usage.rss)
  }
  const sampler = setInterval(sample, 20)
  const cpu = process.cpuUsage()
  const start = performance.now()
  const outcome = await runCase(name, url)
  sample()
  clearInterval(sampler)
  const used = process.cpuUsage(cpu)
  const figures: Figures = {
    outcome,
    wallMs: Math.round(performance.now() - start),
    cpuMs: Math.round((used.user + used.system) / 1000),
    heapPeakMB: Math.round(heapPeak / 2 ** 20),
    rssStartMB: Math.round(rssStart / 2 ** 20),
    rssPeakMB: Math.round(rssPeak / 2 ** 20)
  }
  process.stdout.write(`FIGURES ${JSON.stringify(figures)}\n`)
  process.exit(0)
}

const parent = async (cases: ReadonlyArray<string>) => {
  for (const name of cases) {
    const started = performance.now()
    const result = await Effect.runPromise(Effect.scoped(Effect.flatMap(serveCase(name), (url) =>
      Effect.promise(() =>
        new Promise<{ stdout: string; stderr: string; code: number | null }>((resolve) => {
          const child = ChildProcess.spawn(
            process.execPath,
            ["--max-old-space-size=1024", "--import", "tsx", new URL(import.meta.url).pathname, "--child", name, url],
            { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, HOSTILE_CA: pki().ca.cert } }
          )
          let stdout = ""
          let stderr = ""
          child.stdout.on("data", (chunk) => (stdout += chunk))
          child.stderr.on("data", (chunk) => (stderr = (stderr + chunk).slice(-4000)))
          child.on("close", (code) => resolve({ stdout, stderr, code }))
        })
      ))))
    const line = result.stdout.split("\n").find((l) => l.startsWith("FIGURES "))
    if (line !== undefined) {
      const f = JSON.parse(line.slice(8)) as Figures
      console.log(
        `${name.padEnd(18)} wall ${(f.wallMs / 1000).toFixed(1)} s, cpu ${(f.cpuMs / 1000).toFixed(1)} s, heap peak ` +
          `${f.heapPeakMB} MB, RSS ${f.rssStartMB}→${f.rssPeakMB} MB: ${f.outcome}`
      )
    } else {
      const why = /heap out of memory|Allocation failed/.test(result.stderr)
        ? "aborted: V8 heap out of memory"
        : `exit ${result.code}: ${result.stderr.slice(-300)}`
      console.log(`${name.padEnd(18)} after ${((performance.now() - started) / 1000).toFixed(1)} s: ${why}`)
    }
  }
}

const args = process.argv.slice(2)
if (args[0] === "--child") void child(args[1]!, args[2]!)
else void parent(args.length > 0 ? args : defaultCases)

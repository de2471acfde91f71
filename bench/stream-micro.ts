/**
 * `npx tsx bench/stream-micro.ts [watch|logs|all] [reps]` (`VARIANTS=1` adds stages of the watch path alone;
 * `PACE=16384` has the server write 16 KiB a turn, as a server writing as it goes): the per-event and per-line cost of
 * effect-kube's watch and log-follow paths against a floor, in one process over plain
 * loopback HTTP (no TLS, no FakeCluster): the server writes a prebuilt body, so what is
 * measured is the client's consumption (CPU µs per event or line, and wall time). Not the
 * full benchmark (`npm run bench`): a quick check of the streaming hot path.
 */
import * as HttpClient from "effect/http/HttpClient"
import * as Effect from "effect/Effect"
import { splitLines } from "../packages/effect-kube/src/internal/stream/lines.js"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Stream from "effect/Stream"
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Http from "node:http"
import * as Https from "node:https"
import * as Os from "node:os"
import * as Path from "node:path"
import { performance, PerformanceObserver } from "node:perf_hooks"
import { StringDecoder } from "node:string_decoder"
import * as Undici from "undici"
import * as Kube from "../packages/effect-kube/src/Kube.js"
import * as NodeKube from "../packages/effect-kube/src/NodeKube.js"
import { Pods } from "../packages/effect-kube/src/resources/index.js"
import { pki } from "../test/util/pki.js"
import { writeTokenFileKubeconfig } from "./kubeconfig.js"
import { pod } from "./pods.js"

const what = process.argv[2] ?? "all"
const reps = Number(process.argv[3] ?? 3)
const events = 20_000
const lines = 200_000

const watchBody = (() => {
  if (what !== "serve") return Buffer.alloc(0)
  const objects = Array.from({ length: 200 }, (_, i) => JSON.stringify({ type: "MODIFIED", object: pod(i, "bench") }))
  const parts: Array<string> = []
  for (let i = 0; i < events; i++) parts.push(objects[i % 200]!)
  return Buffer.from(parts.join("\n") + "\n")
})()
const logBody = (() => {
  if (what !== "serve") return Buffer.alloc(0)
  const parts: Array<string> = []
  for (let i = 0; i < lines; i++) {
    parts.push(`2025-01-01T12:00:00.000Z INFO request handled method=GET path=/api/items/${i} status=200 bytes=${i}`)
  }
  return Buffer.from(parts.join("\n") + "\n")
})()

// TLS=1: HTTPS with the test PKI (the server's key and certificate as PEM text in TLS_KEY and TLS_CERT, never on disk)
const tls = process.env["TLS"] === "1"
const handler = (req: Http.IncomingMessage, res: Http.ServerResponse) => {
  res.writeHead(200, { "content-type": req.url!.includes("/log") ? "text/plain" : "application/json" })
  const body = req.url!.includes("/log") ? logBody : watchBody
  // PACE=<bytes>: written a piece per turn of the event loop, so the client gets a chunk per piece
  // (as from a server writing as it goes) instead of whatever filled the socket
  const pace = Number(process.env["PACE"] ?? 0)
  if (pace > 0) {
    let i = 0
    const next = () => {
      if (i >= body.length) return void res.end()
      res.write(body.subarray(i, i + pace))
      i += pace
      setImmediate(next)
    }
    return next()
  }
  for (let i = 0; i < body.length; i += 1 << 16) res.write(body.subarray(i, i + (1 << 16)))
  res.end()
}
const serve = () => tls
  ? Https.createServer({ key: process.env["TLS_KEY"]!, cert: process.env["TLS_CERT"]! }, handler)
  : Http.createServer(handler)
const ca = tls && what !== "serve" ? pki().ca.cert : undefined
const get = (url: string, callback: (res: Http.IncomingMessage) => void) =>
  ca === undefined ? Http.get(url, callback) : Https.get(url, { ca }, callback)

const floorLines = (url: string, onLine: (line: string) => void) =>
  new Promise<void>((resolve, reject) => {
    get(url, (res) => {
      res.setEncoding("utf8")
      let pending = ""
      res.on("data", (chunk: string) => {
        const text = pending + chunk
        let start = 0
        let newline: number
        while ((newline = text.indexOf("\n", start)) !== -1) {
          onLine(text.slice(start, newline))
          start = newline + 1
        }
        pending = text.slice(start)
      })
      res.on("end", resolve)
      res.on("error", reject)
    }).on("error", reject)
  })

const time = async (name: string, count: number, run: () => Promise<void>) => {
  const results: Array<string> = []
  for (let r = 0; r < reps; r++) {
    let gcMs = 0
    const observer = new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) gcMs += entry.duration
    })
    observer.observe({ entryTypes: ["gc"] })
    const cpu = process.cpuUsage()
    const start = performance.now()
    await run()
    const wall = performance.now() - start
    const used = process.cpuUsage(cpu)
    await new Promise((resolve) => setTimeout(resolve, 10))
    observer.disconnect()
    results.push(
      `${((used.user + used.system) / count).toFixed(1)}µs cpu (gc ${((gcMs * 1000) / count).toFixed(1)}) ${
        ((wall * 1000) / count).toFixed(1)
      }µs wall`
    )
  }
  process.stdout.write(`${name.padEnd(28)} ${results.join(" | ")}\n`)
}

const main = async () => {
  if (what === "serve") {
    const server = serve()
    server.listen(0, "127.0.0.1", () => process.stdout.write(`${(server.address() as { port: number }).port}\n`))
    return
  }
  // The server runs in a process of its own, so that CPU time is the client's alone.
  const child = ChildProcess.spawn(process.execPath, ["--import", "tsx", new URL(import.meta.url).pathname, "serve"], {
    stdio: ["ignore", "pipe", "inherit"],
    env: tls
      ? { ...process.env, TLS_KEY: pki().server.key, TLS_CERT: pki().server.cert }
      : process.env
  })
  const port = await new Promise<number>((resolve) => child.stdout!.once("data", (d: Buffer) => resolve(Number(String(d).trim()))))
  const base = `${tls ? "https" : "http"}://127.0.0.1:${port}`
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "effect-kube-micro-"))
  const kubeconfig = writeTokenFileKubeconfig(dir, base, "t", ca)
  const pods = Kube.api(Pods, { namespace: "bench" })
  const runtime = ManagedRuntime.make(NodeKube.layerFromFile({ path: kubeconfig }))
  await runtime.context()
  const run = <A>(effect: Effect.Effect<A, unknown, Kube.Requirements>) => runtime.runPromise(effect)
  let seen = 0
  if (what === "all" || what === "watch") {
    await time("watch floor", events, () =>
      floorLines(`${base}/api/v1/namespaces/bench/pods?watch=true`, (line) => {
        const event = JSON.parse(line) as { type: string; object: { metadata: { name: string } } }
        if (typeof event.object.metadata.name === "string") seen++
      }))
    if (process.env.VARIANTS) {
      const url = `${base}/api/v1/namespaces/bench/pods?watch=true`
      const agent = new Undici.Agent()
      await time("U0 node:http bytes", events, () =>
        new Promise<void>((resolve) => get(url, (res) => { res.on("data", (c: Buffer) => { seen += c.length }); res.on("end", resolve) })))
      await time("U1 undici for-await bytes", events, async () => {
        const r = await Undici.request(url, { dispatcher: agent })
        for await (const c of r.body) seen += (c as Buffer).length
      })
      await time("U2 undici on(data) bytes", events, async () => {
        const r = await Undici.request(url, { dispatcher: agent })
        await new Promise((resolve) => { r.body.on("data", (c: Buffer) => { seen += c.length }); r.body.on("end", resolve) })
      })
      await time("V1 transport bytes", events, () =>
        run(Effect.scoped(Effect.flatMap(HttpClient.get(url), (r) => Stream.runForEachArray(r.stream, (c) => Effect.sync(() => { seen += c.length }))))))
      await time("V2 + lines + JSON.parse", events, () =>
        run(Effect.scoped(Effect.flatMap(HttpClient.get(url), (r) => Stream.runForEachArray(splitLines(false)(r.stream), (c) => Effect.sync(() => { for (const l of c) { if (JSON.parse(l).object) seen++ } }))))))
      await time("V3 watch runForEachChunk", events, () =>
        run(Stream.runForEachArray(pods.watch({ resourceVersion: "1" }), (c) => Effect.sync(() => { seen += c.length }))))
    }
    await time("watch effect-kube runForEach", events, () =>
      run(Stream.runForEach(pods.watch({ resourceVersion: "1" }), (event) =>
        Effect.sync(() => {
          if (event.type !== "BOOKMARK" && typeof event.object.metadata?.name === "string") seen++
        }))))
  }
  if (what === "all" || what === "logs") {
    await time("logs floor", lines, () => floorLines(`${base}/api/v1/namespaces/bench/pods/p/log`, (line) => {
      if (line.length > 0) seen++
    }))
    await time("logs effect-kube runForEach", lines, () =>
      run(Stream.runForEach(pods.logStream("p", {}), (line) =>
        Effect.sync(() => {
          if (line.length > 0) seen++
        }))))
    // the consumer client-node's benchmark has: raw chunks, lines cut by the caller
    await time("logs effect-kube logBytes", lines, () => {
      const decoder = new StringDecoder("utf8")
      let pending = ""
      return run(Stream.runForEach(pods.logBytes("p", {}), (bytes) =>
        Effect.sync(() => {
          const text = pending + decoder.write(bytes as Buffer)
          let start = 0
          let newline: number
          while ((newline = text.indexOf("\n", start)) !== -1) {
            if (newline > start) seen++
            start = newline + 1
          }
          pending = text.slice(start)
        })))
    })
  }
  await runtime.dispose()
  child.kill()
  Fs.rmSync(dir, { recursive: true, force: true })
}

main().catch((error: unknown) => {
  console.error(error)
  process.exit(1)
})

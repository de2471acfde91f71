/**
 * `npx tsx bench/compare-get.ts <other checkout's src dir> [n]`: the GET of
 * `bench/transport-get.ts` (a token file, loopback HTTPS), for this checkout's `src` and
 * another's (e.g. an older commit: `git archive <commit> src | tar -x -C /tmp/old`, then
 * `/tmp/old/src`), in one client process against one FakeCluster served by
 * `bench/server.ts` in its own, alternating blocks of 50 requests so that load from
 * elsewhere on the machine falls on both alike. Prints wall and CPU time per GET (CPU of
 * the client process only) for each.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { spawn } from "node:child_process"
import * as Diagnostics from "node:diagnostics_channel"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { performance } from "node:perf_hooks"
import { pathToFileURL } from "node:url"
import type { ServerConfig, ServerReady } from "./server.js"
import { pki } from "../test/util/pki.js"
import { writeTokenFileKubeconfig } from "./kubeconfig.js"

const [otherSrc, count] = process.argv.slice(2)
if (otherSrc === undefined) throw new Error("usage: compare-get.ts <other src dir> [n]")
const n = Number(count ?? 1000)
const block = 50
const token = "bench-token"

interface Variant {
  readonly name: string
  readonly get: Effect.Effect<unknown, unknown>
  readonly times: Array<number>
  cpu: number
  /** Connections undici opened during this variant's blocks (TLS handshakes). */
  connections: number
}

let connected = 0
Diagnostics.channel("undici:client:connected").subscribe(() => {
  connected++
})

const load = async (name: string, src: string, kubeconfig: string) => {
  const url = (file: string) => pathToFileURL(Path.join(src, file)).href
  const Kube = await import(url("Kube.ts"))
  const NodeKube = await import(url("NodeKube.ts"))
  const { Pods } = await import(url("resources/index.ts"))
  const layer = NodeKube.layerFromFile({ path: kubeconfig }) as Layer.Layer<never>
  const pods = Kube.api(Pods, { namespace: "default" })
  return { name, layer, pods }
}

const program = Effect.gen(function*() {
  const { ca, server: serverPair } = pki()
  // The cluster in a process of its own (bench/server.ts), as in `npm run bench`.
  const config: ServerConfig = {
    tls: { cert: serverPair.cert, key: serverPair.key, ca: ca.cert },
    token,
    seed: [{ namespace: "default", pods: 1 }]
  }
  const child = yield* Effect.acquireRelease(
    Effect.sync(() =>
      spawn(process.execPath, ["--import", "tsx", "bench/server.ts", JSON.stringify(config)], {
        stdio: ["ignore", "pipe", "inherit"]
      })
    ),
    (child) => Effect.sync(() => child.kill())
  )
  const ready = yield* Effect.callback<ServerReady>((resume) => {
    let text = ""
    child.stdout!.on("data", (chunk: Buffer) => {
      text += chunk.toString("utf8")
      if (text.includes("\n")) resume(Effect.succeed(JSON.parse(text.split("\n")[0]!) as ServerReady))
    })
  })
  const podName = ready.podNames["default"]![0]!
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "effect-kube-compare-get-"))
  yield* Effect.addFinalizer(() => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true })))
  const kubeconfig = writeTokenFileKubeconfig(dir, ready.url, token, ca.cert)
  const here = Path.join(import.meta.dirname, "..", "packages", "effect-kube", "src")
  const loaded = yield* Effect.promise(() =>
    Promise.all([load("this", here, kubeconfig), load("other", Path.resolve(otherSrc), kubeconfig)])
  )
  const variants: Array<Variant> = []
  for (const { layer, name, pods } of loaded) {
    // Each variant's layer is built once and kept for the run (its connections stay warm).
    const context = yield* Layer.build(layer)
    const get = Effect.provide(pods.get(podName) as Effect.Effect<unknown, unknown>, context)
    variants.push({ name, get, times: [], cpu: 0, connections: 0 })
  }
  for (const variant of variants) for (let i = 0; i < 200; i++) yield* variant.get
  for (let done = 0; done < n; done += block) {
    for (const variant of variants) {
      const cpu = process.cpuUsage()
      const connectedBefore = connected
      for (let i = 0; i < block; i++) {
        const t0 = performance.now()
        yield* variant.get
        variant.times.push(performance.now() - t0)
      }
      const used = process.cpuUsage(cpu)
      variant.cpu += used.user + used.system
      variant.connections += connected - connectedBefore
    }
  }
  for (const { connections, cpu, name, times } of variants) {
    times.sort((a, b) => a - b)
    const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))]!.toFixed(3)
    const mean = times.reduce((a, b) => a + b, 0) / times.length
    console.log(
      `${name}: ${times.length} GETs, mean ${mean.toFixed(3)} ms, p50 ${at(0.5)} ms, p90 ${at(0.9)} ms, ` +
        `p99 ${at(0.99)} ms, CPU ${(cpu / times.length).toFixed(0)} µs per GET, ${connections} connections opened`
    )
  }
})

Effect.runPromise(Effect.scoped(program)).catch((error) => {
  console.error(error)
  process.exit(1)
})

/**
 * `npx tsx bench/get-layers.ts [n] [variant ...]`: where a sequential GET's client CPU goes, layer by layer, over
 * HTTP/1.1 and HTTP/2. One client process against `bench/server.ts` in its own (loopback HTTPS, a token file), the
 * variants taking turns in blocks of 50 so that load from elsewhere falls on all alike; each prints p50, p99 (and their
 * ratio to the floor's) and the client's CPU per GET. Each variant adds one layer to the one before:
 * - `floor`: `node:https` keep-alive + `JSON.parse` (`bench/clients.ts`'s floor);
 * - `undici-h1`, `undici-h2`: undici's own `request` + `body.text()` + `JSON.parse`, HTTP/2 by ALPN for the second;
 * - `transport-h1`, `transport-h2`: the Node transport (`nodeTransport.ts`: the dispatcher for the credentials,
 *   `Negotiated` on h2, gzip accepted) and its HttpClient (`undiciHttpClient.ts`), one `Effect.runPromise` per GET,
 *   with the credentials set as the request path sets them;
 * - `request-h1`, `request-h2`: the request path (`client.ts`'s `sendJson`: credentials, headers, span, metrics,
 *   timeout, retries, warnings), `runtime.runPromise` per GET;
 * - `get-h1`, `get-h2`: `Kube.api(Pods).get` through the NodeKube layer, as `bench/clients.ts` measures it (the above
 *   plus the Pod's decoding and check).
 * Names on the command line pick variants (the floor always runs).
 */
import { spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Https from "node:https"
import * as Os from "node:os"
import * as Path from "node:path"
import { performance } from "node:perf_hooks"
import * as Effect from "effect/Effect"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import * as Kube from "../src/Kube.js"
import * as KubeConfig from "../src/KubeConfig.js"
import * as NodeKube from "../src/NodeKube.js"
import { Pods } from "../src/resources/index.js"
import * as Client from "../src/internal/client.js"
import { currentCredentials } from "../src/internal/credentials.js"
import * as NodeTransport from "../src/internal/nodeTransport.js"
import * as Undici from "../src/internal/undici.js"
import { pki } from "../test/util/pki.js"
import { writeTokenFileKubeconfig } from "./kubeconfig.js"
import type { ServerConfig, ServerReady } from "./server.js"

const [count, ...picked] = process.argv.slice(2)
const n = Number(count ?? 1000)
const block = 50
const token = "bench-token"

interface Variant {
  readonly name: string
  readonly get: () => Promise<unknown>
  readonly times: Array<number>
  cpu: number
}

const main = async () => {
  const { ca, server: serverPair } = pki()
  const config: ServerConfig = {
    tls: { cert: serverPair.cert, key: serverPair.key, ca: ca.cert },
    token,
    seed: [{ namespace: "default", pods: 1 }]
  }
  const child = spawn(process.execPath, ["--import", "tsx", "bench/server.ts", JSON.stringify(config)], {
    stdio: ["ignore", "pipe", "inherit"]
  })
  process.on("exit", () => child.kill())
  const ready = await new Promise<ServerReady>((resolve) => {
    let text = ""
    child.stdout!.on("data", (chunk: Buffer) => {
      text += chunk.toString("utf8")
      if (text.includes("\n")) resolve(JSON.parse(text.split("\n")[0]!) as ServerReady)
    })
  })
  const podName = ready.podNames["default"]![0]!
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "effect-kube-layers-"))
  const kubeconfig = writeTokenFileKubeconfig(dir, ready.url, token, ca.cert)
  const path = `/api/v1/namespaces/default/pods/${podName}`
  const url = `${ready.url}${path}`
  const headers = { authorization: `Bearer ${token}`, accept: "application/json" }
  const variants: Array<Variant> = []
  const add = (name: string, get: () => Promise<unknown>) => {
    if (name === "floor" || picked.length === 0 || picked.includes(name)) variants.push({ name, get, times: [], cpu: 0 })
  }

  const agent = new Https.Agent({ keepAlive: true, ca: ca.cert })
  add("floor", () =>
    new Promise((resolve, reject) => {
      const req = Https.get(url, { agent, headers }, (res) => {
        const chunks: Array<Buffer> = []
        res.on("data", (c: Buffer) => chunks.push(c))
        res.on("end", () => resolve(JSON.parse(Buffer.concat(chunks).toString("utf8"))))
        res.on("error", reject)
      })
      req.on("error", reject)
    }))

  const origin = new URL(ready.url).origin
  for (const h2 of [false, true]) {
    const raw = new Undici.Agent({ connect: { ca: ca.cert }, bodyTimeout: 0, headersTimeout: 0, allowH2: h2 })
    add(`undici-${h2 ? "h2" : "h1"}`, async () => {
      const res = await raw.request({ origin, path, method: "GET", headers })
      return JSON.parse(await res.body.text())
    })
  }

  const scope = await Effect.runPromise(Scope.make())
  for (const http2 of [false, true]) {
    const suffix = http2 ? "h2" : "h1"
    const layer = NodeKube.layerFromKubeConfig(KubeConfig.layerFromFile({ path: kubeconfig }), { http2 })
    const runtime = ManagedRuntime.make(layer)
    await runtime.context()
    const kubeConfig = await runtime.runPromise(Effect.gen(function*() {
      return yield* KubeConfig.KubeConfig
    }))
    const credentials = await runtime.runPromise(kubeConfig.auth.credentials)
    const transport = await Effect.runPromise(Scope.provide(scope)(NodeTransport.make(kubeConfig, { http2 })))
    const viaTransport = Effect.provideService(
      Effect.flatMap(
        Effect.flatMap(transport.execute(HttpClientRequest.get(url, { headers })), (response) => response.text),
        (text) => Effect.sync(() => JSON.parse(text) as unknown)
      ),
      currentCredentials,
      credentials
    )
    add(`transport-${suffix}`, () => Effect.runPromise(viaTransport))
    const spec: Client.Spec = {
      method: "GET",
      path,
      operation: { verb: "get", kind: "Pod", namespace: "default", name: podName }
    }
    const viaRequestPath = Client.sendJson(spec)
    add(`request-${suffix}`, () => runtime.runPromise(viaRequestPath))
    const pods = Kube.api(Pods, { namespace: "default" })
    const viaApi = Effect.map(pods.get(podName), Option.getOrThrow)
    add(`get-${suffix}`, () => runtime.runPromise(viaApi))
  }

  for (const v of variants) for (let i = 0; i < 300; i++) await v.get()
  for (let done = 0; done < n; done += block) {
    for (const v of variants) {
      const cpu = process.cpuUsage()
      for (let i = 0; i < block; i++) {
        const t0 = performance.now()
        await v.get()
        v.times.push(performance.now() - t0)
      }
      const used = process.cpuUsage(cpu)
      v.cpu += used.user + used.system
    }
  }
  const q = (times: Array<number>, p: number) => times[Math.min(times.length - 1, Math.floor(p * times.length))]!
  for (const v of variants) v.times.sort((a, b) => a - b)
  const floor = variants[0]!
  for (const v of variants) {
    const p50 = q(v.times, 0.5)
    const p99 = q(v.times, 0.99)
    console.log(
      `${v.name.padEnd(13)} p50 ${p50.toFixed(3)} ms (${(p50 / q(floor.times, 0.5)).toFixed(2)}x)  ` +
        `p99 ${p99.toFixed(3)} ms (${(p99 / q(floor.times, 0.99)).toFixed(2)}x)  ` +
        `CPU ${(v.cpu / v.times.length).toFixed(0)} µs/GET`
    )
  }
  Fs.rmSync(dir, { recursive: true, force: true })
  process.exit(0)
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})

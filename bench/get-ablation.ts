/**
 * `npx tsx bench/get-ablation.ts [n] name=<src dir> ...`: the benchmark's GET (`runtime.runPromise`
 * per GET, as `bench/clients.ts` does; loopback HTTPS, a token file) for several copies of `src`
 * (see `get-micro.ts`) and the floor (`node:https` keep-alive + `JSON.parse`; with `UNDICI=1` also
 * undici's own `request`), in one client process against `bench/server.ts` in its own, taking
 * turns in blocks of 50 so that load from elsewhere falls on all alike. Prints p50 and p99 (and
 * their ratio to the floor's) and the client process's CPU per GET.
 */
import { spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Https from "node:https"
import * as Os from "node:os"
import * as Path from "node:path"
import { performance } from "node:perf_hooks"
import type { ServerConfig, ServerReady } from "./server.js"
import { pki } from "../test/util/pki.js"
import { writeTokenFileKubeconfig } from "./kubeconfig.js"
import { loadSrcVariant } from "./src-variant.js"

const [count, ...specs] = process.argv.slice(2)
const n = Number(count ?? 1000)
const block = 50
const token = "bench-token"

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
  const ready = await new Promise<ServerReady>((resolve) => {
    let text = ""
    child.stdout!.on("data", (chunk: Buffer) => {
      text += chunk.toString("utf8")
      if (text.includes("\n")) resolve(JSON.parse(text.split("\n")[0]!) as ServerReady)
    })
  })
  const podName = ready.podNames["default"]![0]!
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "effect-kube-many-"))
  const kubeconfig = writeTokenFileKubeconfig(dir, ready.url, token, ca.cert)
  const variants: Array<{ name: string; get: () => Promise<unknown>; times: Array<number>; cpu: number }> = []
  // the floor, as bench/clients.ts
  const agent = new Https.Agent({ keepAlive: true, ca: ca.cert })
  const headers = { authorization: `Bearer ${token}`, accept: "application/json" }
  const floorGet = (): Promise<unknown> =>
    new Promise((resolve, reject) => {
      const req = Https.get(`${ready.url}/api/v1/namespaces/default/pods/${podName}`, { agent, headers }, (res) => {
        const chunks: Array<Buffer> = []
        res.on("data", (c: Buffer) => chunks.push(c))
        res.on("end", () => resolve(JSON.parse(Buffer.concat(chunks).toString("utf8"))))
        res.on("error", reject)
      })
      req.on("error", reject)
    })
  variants.push({ name: "floor", get: floorGet, times: [], cpu: 0 })
  if (process.env.UNDICI) {
    const { Agent } = await import("undici")
    const ua = new Agent({ connect: { ca: ca.cert }, bodyTimeout: 0, headersTimeout: 0 })
    const origin = new URL(ready.url).origin
    const undiciGet = async () => {
      const res = await ua.request({ origin, path: `/api/v1/namespaces/default/pods/${podName}`, method: "GET", headers })
      return JSON.parse(await res.body.text())
    }
    variants.push({ name: "undici-raw", get: undiciGet, times: [], cpu: 0 })
  }
  for (const spec of specs) {
    const { name, get } = await loadSrcVariant(spec, kubeconfig, podName)
    variants.push({ name, get, times: [], cpu: 0 })
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
  const floorRow = variants[0]!
  const q = (times: Array<number>, p: number) => times[Math.min(times.length - 1, Math.floor(p * times.length))]!
  for (const v of variants) v.times.sort((a, b) => a - b)
  for (const v of variants) {
    const p50 = q(v.times, 0.5), p99 = q(v.times, 0.99)
    console.log(
      `${v.name.padEnd(14)} p50 ${p50.toFixed(3)} ms (${(p50 / q(floorRow.times, 0.5)).toFixed(2)}x)  p99 ${p99.toFixed(3)} ms (${(p99 / q(floorRow.times, 0.99)).toFixed(2)}x)  CPU ${(v.cpu / v.times.length).toFixed(0)} µs/GET`
    )
  }
  child.kill()
  Fs.rmSync(dir, { recursive: true, force: true })
  process.exit(0)
}
main().catch((e) => {
  console.error(e)
  process.exit(1)
})

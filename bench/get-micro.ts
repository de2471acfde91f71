/**
 * `npx tsx bench/get-micro.ts [n] name=<src dir> ...`: the CPU per GET of the whole request path
 * (`Kube.api(Pods).get` through NodeKube's transport, a token file, `runtime.runPromise` per GET as
 * `bench/clients.ts` does) with undici's dispatcher answering from memory after a `setImmediate`:
 * our own cost without network noise. Several copies of `src` (e.g. `src` and an older commit's,
 * `git archive <commit> src | tar -x -C .tmp/old`; a copy must sit inside this checkout so that it
 * finds `node_modules`), each with one thing removed, say what each thing costs. Variants take turns
 * in blocks of 500; `floor` is the dispatcher's answer and `JSON.parse` alone. With `THRASH_BYTES=<n>` every GET
 * is preceded by a walk over an n-byte buffer (not counted), which evicts the CPU's caches as the server process and
 * TLS do between two GETs over loopback TLS: what a GET costs when it starts cold.
 */
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { performance } from "node:perf_hooks"
import { Readable } from "node:stream"
// @ts-expect-error internal
import DispatcherImpl from "undici/lib/dispatcher/dispatcher.js"
import { pod } from "./pods.js"
import { loadSrcVariant } from "./src-variant.js"

const [count, ...specs] = process.argv.slice(2)
const n = Number(count ?? 20000)
const block = 500
const json = JSON.stringify(pod(0, "default"))
const podName = (pod(0, "default") as any).metadata.name
const bytes = Buffer.from(json)

/** A body as undici hands it over: a Readable whose bytes come after a turn of the event loop. */
const answerBody = () => {
  const body = new Readable({ read() {} })
  setImmediate(() => {
    body.push(bytes)
    body.push(null)
  })
  return body
}

const thrashBytes = Number(process.env.THRASH_BYTES ?? 0)
const junk = new Uint8Array(Math.max(1, thrashBytes))
let touched = 0
/** Reads one byte of every cache line of `junk` (and writes one, so that the walk is not optimised away). */
const thrash = (): void => {
  for (let i = 0; i < thrashBytes; i += 64) touched += junk[i]!
  junk[touched & 1023] = touched & 255
}

/** The CPU (µs) of `count` GETs, each after a walk over `junk` when `THRASH_BYTES` is set. */
const measureBlock = async (get: () => Promise<unknown>, count: number): Promise<number> => {
  if (thrashBytes === 0) {
    const cpu = process.cpuUsage()
    for (let i = 0; i < count; i++) await get()
    const used = process.cpuUsage(cpu)
    return used.user + used.system
  }
  let total = 0
  for (let i = 0; i < count; i++) {
    thrash()
    const cpu = process.cpuUsage()
    await get()
    const used = process.cpuUsage(cpu)
    total += used.user + used.system
  }
  return total
}

const main = async () => {
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "effect-kube-micro-"))
  Fs.writeFileSync(Path.join(dir, "token"), "tok")
  Fs.writeFileSync(Path.join(dir, "kubeconfig"), JSON.stringify({
    apiVersion: "v1", kind: "Config", "current-context": "bench",
    clusters: [{ name: "c", cluster: { server: "https://127.0.0.1:6443", "insecure-skip-tls-verify": true } }],
    users: [{ name: "u", user: { tokenFile: "token" } }],
    contexts: [{ name: "bench", context: { cluster: "c", user: "u", namespace: "default" } }]
  }))
  const variants: Array<{ name: string; get: () => Promise<unknown>; cpu: number; count: number }> = []
  for (const spec of specs) {
    const { name, get } = await loadSrcVariant(spec, Path.join(dir, "kubeconfig"), podName)
    variants.push({ name, get, cpu: 0, count: 0 })
  }
  // after the src modules installed undici's request API: answer from memory
  ;(DispatcherImpl as any).prototype.request = function(_opts: unknown) {
    return new Promise((resolve) =>
      setImmediate(() =>
        resolve({
          statusCode: 200,
          headers: { "content-type": "application/json", "content-length": String(json.length), "audit-id": "x", "cache-control": "no-cache, private", date: "Mon, 30 Nov 2026 06:00:00 GMT" },
          body: answerBody()
        })
      )
    )
  }
  const req = (DispatcherImpl as any).prototype.request
  const floorGet = async () => {
    const r = await req({})
    return new Promise((resolve, reject) => {
      let text = ""
      r.body.on("data", (chunk: Buffer) => { text += chunk.toString("utf8") })
      r.body.on("end", () => resolve(JSON.parse(text)))
      r.body.on("error", reject)
    })
  }
  variants.unshift({ name: "floor", get: floorGet, cpu: 0, count: 0 })
  for (const v of variants) for (let i = 0; i < 2000; i++) await v.get()
  for (let done = 0; done < n; done += block) {
    for (const v of variants) {
      v.cpu += await measureBlock(v.get, block)
      v.count += block
    }
  }
  for (const v of variants) console.log(`${v.name.padEnd(14)} CPU ${(v.cpu / v.count).toFixed(1)} µs/GET`)
  if (process.env.FLOORISH) {
    // JSON.parse alone, for scale
    const t = process.cpuUsage(); for (let i = 0; i < 10000; i++) JSON.parse(json); const u = process.cpuUsage(t)
    console.log(`JSON.parse ${((u.user + u.system) / 10000).toFixed(1)} µs`)
  }
  Fs.rmSync(dir, { recursive: true, force: true })
  process.exit(0)
}
main().catch((e) => { console.error(e); process.exit(1) })

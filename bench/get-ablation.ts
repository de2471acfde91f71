/**
 * `npx tsx bench/get-ablation.ts [n] name=<src dir> ...`: the benchmark's GET (`runtime.runPromise`
 * per GET, as `bench/clients.ts` does; loopback HTTPS, a token file) for several copies of `src`
 * (see `get-micro.ts`) and the floor (`node:https` keep-alive + `JSON.parse`; with `UNDICI=1` also
 * undici's own `request`), in one client process against `bench/server.ts` in its own, taking
 * turns in blocks of 50 so that load from elsewhere falls on all alike. Prints p50 and p99 (and
 * their ratio to the floor's) and the client process's CPU per GET.
 */
import * as Fs from "node:fs"
import * as Https from "node:https"
import * as Os from "node:os"
import * as Path from "node:path"
import { writeTokenFileKubeconfig } from "./kubeconfig.js"
import { loadSrcVariant } from "./src-variant.js"
import { printTurns, startServer, takeTurns, turn, type Turn } from "./turns.js"

const [count, ...specs] = process.argv.slice(2)
const n = Number(count ?? 1000)
const token = "bench-token"

const main = async () => {
  const { ca, child, ready } = await startServer(token)
  const podName = ready.podNames["default"]![0]!
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "effect-kube-many-"))
  const kubeconfig = writeTokenFileKubeconfig(dir, ready.url, token, ca)
  const variants: Array<Turn> = []
  // the floor, as bench/clients.ts
  const agent = new Https.Agent({ keepAlive: true, ca })
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
  variants.push(turn("floor", floorGet))
  if (process.env.UNDICI) {
    const { Agent } = await import("undici")
    const ua = new Agent({ connect: { ca }, bodyTimeout: 0, headersTimeout: 0 })
    const origin = new URL(ready.url).origin
    const undiciGet = async () => {
      const res = await ua.request({ origin, path: `/api/v1/namespaces/default/pods/${podName}`, method: "GET", headers })
      return JSON.parse(await res.body.text())
    }
    variants.push(turn("undici-raw", undiciGet))
  }
  for (const spec of specs) {
    const { name, get } = await loadSrcVariant(spec, kubeconfig, podName)
    variants.push(turn(name, get))
  }
  await takeTurns(variants, n)
  printTurns(variants)
  child.kill()
  Fs.rmSync(dir, { recursive: true, force: true })
  process.exit(0)
}
main().catch((e) => {
  console.error(e)
  process.exit(1)
})

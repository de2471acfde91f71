/**
 * `npx tsx bench/h2-window.ts [latencyMs]`: what HTTP/2 flow control costs a large answer across a link with latency.
 * `bench/server.ts` (500 pods in `big`) behind `bench/link.ts` (1 Gbit/s, `latencyMs` one way, default 10), lists of
 * the 500 pods (a ~2 MB page) one at a time and four at once, taking turns over: undici's HTTP/1.1 (an Agent), one
 * undici Client over h2 with undici's own windows (256 KiB a stream, 512 KiB the connection), and effect-kube's
 * HTTP/2 pool (`src/internal/http2.ts`, Go's windows: 4 MiB and 1 GiB). Prints the median wall of each.
 */
import { performance } from "node:perf_hooks"
import * as H2 from "../packages/effect-kube/src/internal/transport/http2.js"
import * as Undici from "../packages/effect-kube/src/internal/transport/undici.js"
import { startLink } from "./link.js"
import { startServer } from "./turns.js"

const latencyMs = Number(process.argv[2] ?? 10)
const rounds = 6

const main = async () => {
  const { ca, child, ready } = await startServer("bench-token", [{ namespace: "big", pods: 500 }])
  process.on("exit", () => child.kill())
  const target = new URL(ready.url)
  const link = await startLink({ host: "127.0.0.1", port: Number(target.port), bitsPerSecond: 1e9, latencyMs })
  const origin = `https://127.0.0.1:${link.port}`
  const headers = { authorization: "Bearer bench-token", accept: "application/json" }
  const path = "/api/v1/namespaces/big/pods?limit=500"
  const h1 = new Undici.Agent({ connect: { ca }, bodyTimeout: 0, headersTimeout: 0 })
  const variants: ReadonlyArray<{
    readonly name: string
    readonly dispatcher: Undici.Requester
    readonly one: Array<number>
    readonly four: Array<number>
  }> = [
    { name: "undici HTTP/1.1", dispatcher: h1, one: [], four: [] },
    {
      name: "undici h2, its windows",
      dispatcher: new Undici.Client(origin, { connect: { ca }, allowH2: true, pipelining: 100 }),
      one: [],
      four: []
    },
    {
      name: "effect-kube h2 pool",
      dispatcher: new H2.Negotiated(origin, { ca }, 32, () => false, { pingIntervalMs: 0, pingTimeoutMs: 0 }, 65_536),
      one: [],
      four: []
    }
  ]
  let bytes = 0
  const list = async (dispatcher: Undici.Requester) => {
    bytes = 0
    for await (const chunk of (await dispatcher.request({ origin, path, method: "GET", headers })).body) {
      bytes += (chunk as Buffer).length
    }
  }
  for (const v of variants) await list(v.dispatcher)
  for (let round = 0; round < rounds; round++) {
    for (const v of variants) {
      let start = performance.now()
      await list(v.dispatcher)
      v.one.push(performance.now() - start)
      start = performance.now()
      await Promise.all([1, 2, 3, 4].map(() => list(v.dispatcher)))
      v.four.push(performance.now() - start)
    }
  }
  const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
  console.log(`a page of ${(bytes / 1e6).toFixed(2)} MB through 1 Gbit/s, ${latencyMs} ms one way; ${rounds} rounds`)
  for (const v of variants) {
    console.log(`${v.name.padEnd(24)} one page ${median(v.one).toFixed(0)} ms, four at once ${median(v.four).toFixed(0)} ms`)
  }
  await link.close()
  process.exit(0)
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})

/**
 * `npx tsx bench/transport-get.ts [n]`: the per-request cost of the request path and the
 * Node transport, as one number to compare before and after a change. It serves a
 * FakeCluster over loopback HTTPS (a generated CA), reads a kubeconfig whose user has a
 * `tokenFile`, and times `n` (default 1000) sequential GETs of one pod, after a warm-up:
 * wall time per GET and CPU time per GET (client and fake server, one process).
 * Not a test and not the full benchmark (`npm run bench`): a quick check of the hot path.
 */
import * as Effect from "effect/Effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { performance } from "node:perf_hooks"
import * as Kube from "../packages/effect-kube/src/Kube.js"
import * as KubeConfig from "../packages/effect-kube/src/KubeConfig.js"
import * as NodeKube from "../packages/effect-kube/src/NodeKube.js"
import { Pods } from "../packages/effect-kube/src/resources/index.js"
import { FakeCluster } from "@effect-kube/testing"
import { pki } from "../test/util/pki.js"
import { writeTokenFileKubeconfig } from "./kubeconfig.js"

const n = Number(process.argv[2] ?? 1000)
const token = "bench-token"

const program = Effect.gen(function*() {
  const { ca, server: serverPair } = pki()
  const served = yield* FakeCluster.serve({
    token,
    tls: { cert: serverPair.cert, key: serverPair.key, ca: ca.cert }
  })
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "effect-kube-bench-get-"))
  yield* Effect.addFinalizer(() => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true })))
  const kubeconfig = writeTokenFileKubeconfig(dir, served.url, token, ca.cert)
  const pods = Kube.api(Pods, { namespace: "default" })
  const measure = Effect.gen(function*() {
    yield* pods.create({ metadata: { name: "bench" }, spec: { containers: [{ name: "c", image: "busybox" }] } })
    for (let i = 0; i < 200; i++) yield* pods.get("bench")
    const times: Array<number> = []
    const cpuStart = process.cpuUsage()
    const start = performance.now()
    for (let i = 0; i < n; i++) {
      const t0 = performance.now()
      yield* pods.get("bench")
      times.push(performance.now() - t0)
    }
    const total = performance.now() - start
    const cpu = process.cpuUsage(cpuStart)
    times.sort((a, b) => a - b)
    const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))]!.toFixed(3)
    console.log(
      `${n} sequential GETs: ${total.toFixed(0)} ms, mean ${(total / n).toFixed(3)} ms, ` +
        `p50 ${at(0.5)} ms, p90 ${at(0.9)} ms, p99 ${at(0.99)} ms; ` +
        // CPU time of this process (client and fake server both) is what a busy machine disturbs least.
        `CPU ${((cpu.user + cpu.system) / n).toFixed(0)} µs per GET`
    )
    console.log(`connections open to the server: ${served.openConnections()}`)
    // What one look-up of the credentials costs (the request path does it once per request).
    const config = yield* KubeConfig.KubeConfig
    const credentialsStart = performance.now()
    for (let i = 0; i < n; i++) yield* config.auth.credentials
    const credentials = performance.now() - credentialsStart
    const each = (credentials / n * 1000).toFixed(1)
    console.log(`${n} credential look-ups: ${credentials.toFixed(1)} ms, mean ${each} µs`)
  })
  yield* Effect.provide(measure, NodeKube.layerFromFile({ path: kubeconfig }))
})

Effect.runPromise(Effect.scoped(program)).catch((error) => {
  console.error(error)
  process.exit(1)
})

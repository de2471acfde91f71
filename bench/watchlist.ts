/**
 * A reflector's start on a real cluster, by WatchList or by list-then-watch: the wall time
 * until `ready` and the process's peak RSS. One mode a process, so that the peak is its own.
 *
 *   KUBECONFIG=… tsx bench/watchlist.ts seed <namespace> <count>   # ConfigMaps of ~1 KiB
 *   KUBECONFIG=… tsx bench/watchlist.ts start <namespace> auto|list
 *
 * Not part of `npm run bench` (that one runs against the fake).
 */
import { Effect } from "effect"
import { ConfigMaps, Kube, Namespaces, NodeKube } from "effect-kube"

const [command, namespace = "bench-watchlist", arg = ""] = process.argv.slice(2)
const layer = NodeKube.layerFromFile({ path: process.env["KUBECONFIG"]! })
const cms = Kube.api(ConfigMaps, { namespace })

const seed = (count: number) =>
  Effect.gen(function*() {
    yield* Effect.ignore(Kube.api(Namespaces).create({ metadata: { name: namespace } }))
    const data = { payload: "x".repeat(1024) }
    yield* Effect.forEach(
      Array.from({ length: count }, (_, i) => i),
      (i) => Effect.ignore(cms.create({ metadata: { name: `cm-${i}`, labels: { app: "bench" } }, data })),
      { concurrency: 16, discard: true }
    )
  })

const start = (mode: "auto" | "list") =>
  Effect.scoped(Effect.gen(function*() {
    const began = performance.now()
    const cpu = process.cpuUsage()
    const store = yield* cms.reflector({ watchList: mode === "auto" ? "auto" : false })
    yield* store.ready
    const wall = performance.now() - began
    const used = process.cpuUsage(cpu)
    const objects = (yield* store.list()).length
    console.log(JSON.stringify({ mode, objects, wallMs: Math.round(wall), cpuMs: Math.round((used.user + used.system) / 1000), peakRssMiB: Math.round(process.resourceUsage().maxRSS / 1024) }))
  }))

const program = command === "seed" ? seed(Number(arg)) : start(arg === "list" ? "list" : "auto")
Effect.runPromise(program.pipe(Effect.provide(layer))).catch((e) => {
  console.error(e)
  process.exit(1)
})

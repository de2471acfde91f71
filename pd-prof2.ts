import { Effect, ManagedRuntime } from "effect"
import { Discovery, Kube, NodeKube } from "./packages/effect-kube/src/index.js"
const rt = ManagedRuntime.make(NodeKube.layerFromFile({ path: process.argv[2]! }))
const accept = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
const time = async (label: string, f: () => Promise<unknown>) => {
  const ts: number[] = []
  for (let i = 0; i < 15; i++) { const t = performance.now(); await f(); ts.push(performance.now() - t) }
  ts.sort((a, b) => a - b); console.log(label, ts[7]!.toFixed(1))
}
await time("request /apis", () => rt.runPromise(Kube.request({ method: "GET", path: "/apis", accept })))
await time("request /version", () => rt.runPromise(Kube.request({ method: "GET", path: "/version" })))
await time("resources", () => rt.runPromise(Effect.flatMap(Discovery.make, (d) => d.resources())))
await time("resolve", () => rt.runPromise(Effect.flatMap(Discovery.make, (d) => d.resolve("group3.bench.example.com/v1", "Widget3"))))
process.exit(0)

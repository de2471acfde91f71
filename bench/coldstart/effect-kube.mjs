// A fresh process as a user's script is: import effect-kube, read the kubeconfig, list pods.
// Prints one line of JSON: how many pods, the import time and the peak RSS.
const started = performance.now()
const [{ Kube, NodeKube, Pods }, Effect] = await Promise.all([
  import("../../packages/effect-kube/dist/esm/index.js"),
  import("effect/Effect")
])
const imported = performance.now()
const [kubeconfig, namespace] = process.argv.slice(2)
const list = Kube.api(Pods, { namespace }).list()
const result = await Effect.runPromise(list.pipe(Effect.provide(NodeKube.layerFromFile({ path: kubeconfig }))))
process.stdout.write(`${JSON.stringify({
  items: result.items.length,
  importMs: imported - started,
  answerMs: performance.now() - started,
  maxRssKB: process.resourceUsage().maxRSS,
  cpuMs: (process.cpuUsage().user + process.cpuUsage().system) / 1000
})}\n`)

// The same program with @kubernetes/client-node, imported from the path given as the third
// argument: on Node < 22 the driver hands over a copy of the package whose undici
// resolves to undici 7 (its own undici 8 does not load there), so no loader hook slows
// the import down.
const started = performance.now()
const [kubeconfig, namespace, clientNode] = process.argv.slice(2)
const k8s = await import(clientNode)
const imported = performance.now()
const config = new k8s.KubeConfig()
config.loadFromFile(kubeconfig)
const result = await config.makeApiClient(k8s.CoreV1Api).listNamespacedPod({ namespace })
process.stdout.write(`${JSON.stringify({
  items: result.items.length,
  importMs: imported - started,
  answerMs: performance.now() - started,
  maxRssKB: process.resourceUsage().maxRSS,
  cpuMs: (process.cpuUsage().user + process.cpuUsage().system) / 1000
})}\n`)

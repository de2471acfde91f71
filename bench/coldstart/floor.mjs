// The least a program can do: read the kubeconfig (YAML), one GET with node:https, JSON.parse.
import * as Fs from "node:fs"
import * as Https from "node:https"
const started = performance.now()
const { parse } = await import("yaml")
const imported = performance.now()
const [kubeconfig, namespace] = process.argv.slice(2)
const config = parse(Fs.readFileSync(kubeconfig, "utf8"))
const cluster = config.clusters[0].cluster
const token = config.users[0].user.token
const url = new URL(`${cluster.server}/api/v1/namespaces/${namespace}/pods`)
const body = await new Promise((resolve, reject) => {
  Https.get(url, {
    ca: Buffer.from(cluster["certificate-authority-data"], "base64").toString("utf8"),
    headers: { authorization: `Bearer ${token}`, accept: "application/json" }
  }, (res) => {
    const chunks = []
    res.on("data", (c) => chunks.push(c))
    res.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
    res.on("error", reject)
  }).on("error", reject)
})
const result = JSON.parse(body)
process.stdout.write(`${JSON.stringify({
  items: result.items.length,
  importMs: imported - started,
  answerMs: performance.now() - started,
  maxRssKB: process.resourceUsage().maxRSS,
  cpuMs: (process.cpuUsage().user + process.cpuUsage().system) / 1000
})}\n`)

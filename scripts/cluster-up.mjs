#!/usr/bin/env node
// npm run cluster [-- flags of `kube-cluster up`]: starts a whole cluster (see
// cluster/README.md) from .cluster/bin/kube-cluster, passes its stdout through
// (KUBECONFIG=..., KUBECTL=..., EFFECT_KUBE_CLUSTER_DIR=...,
// EFFECT_KUBE_CLUSTER_CONTROL=...) and runs until Ctrl-C, which stops it and
// removes its folder.
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const bin = path.join(root, ".cluster", "bin", "kube-cluster")
if (!fs.existsSync(bin)) {
  console.error(`cluster: ${path.relative(root, bin)} is missing: run npm run cluster:build first`)
  process.exit(1)
}
const child = spawn(bin, ["up", ...process.argv.slice(2)], { stdio: ["ignore", "inherit", "inherit"] })
for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(sig, () => child.kill(sig === "SIGHUP" ? "SIGTERM" : sig))
}
child.on("error", (e) => {
  console.error(`cluster: cannot start ${bin}: ${e.message}`)
  process.exit(1)
})
child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)))

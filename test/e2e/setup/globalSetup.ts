/**
 * The e2e run's cluster: one real control plane (cluster/, see cluster/README.md) for
 * the whole `npm run test:e2e`, started here and stopped at teardown. With
 * EFFECT_KUBE_E2E_KUBECONFIG set, that cluster is used instead and nothing is started.
 *
 * Tests get the admin kubeconfig's path and kubectl's as `inject("kubeconfig")` /
 * `inject("kubectl")` and as $KUBECONFIG / $KUBECTL; `inject("clusterControl")` is the
 * loopback URL that stops, kills and restarts one piece (see ./cluster.ts), undefined
 * for an outside cluster.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import type { TestProject } from "vitest/node"

declare module "vitest" {
  export interface ProvidedContext {
    kubeconfig: string
    kubectl: string
    clusterControl: string | undefined
    clusterDir: string | undefined
  }
}

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..")
const binDir = path.join(root, ".cluster", "bin")
const bin = path.join(binDir, "kube-cluster")

const startTimeoutMs = 120_000

let child: ChildProcess | undefined

const build = (): void => {
  const r = spawnSync(process.execPath, [path.join(root, "scripts", "cluster-build.mjs")], {
    stdio: ["ignore", "inherit", "inherit"]
  })
  if (r.status !== 0) throw new Error("e2e: npm run cluster:build failed (its last line above says why)")
}

const start = (): Promise<Record<string, string>> =>
  new Promise((resolve, reject) => {
    const up = spawn(bin, ["up"], { stdio: ["pipe", "pipe", "pipe"] })
    child = up
    const env: Record<string, string> = {}
    let stderr = ""
    let stdout = ""
    let settled = false
    const finish = (err?: Error) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      if (err) {
        up.kill("SIGTERM")
        reject(err)
      } else resolve(env)
    }
    const timer = setTimeout(
      () => finish(new Error(`e2e: the cluster was not ready within ${startTimeoutMs / 1000} s:\n${stderr}`)),
      startTimeoutMs
    )
    up.stderr.setEncoding("utf8").on("data", (s: string) => {
      stderr += s
      if (process.env["EFFECT_KUBE_E2E_VERBOSE"]) process.stderr.write(s)
    })
    up.stdout.setEncoding("utf8").on("data", (s: string) => {
      stdout += s
      for (const line of stdout.split("\n").slice(0, -1)) {
        const at = line.indexOf("=")
        if (at > 0) env[line.slice(0, at)] = line.slice(at + 1)
      }
      if (env["KUBECONFIG"] && env["EFFECT_KUBE_CLUSTER_CONTROL"]) finish()
    })
    up.on("error", (e) => finish(new Error(`e2e: cannot start ${bin}: ${e.message}`)))
    up.on("exit", (code, signal) =>
      finish(new Error(`e2e: the cluster exited (${signal ?? code}) before it was ready: ${stderr.trim()}`))
    )
  })

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const outside = process.env["EFFECT_KUBE_E2E_KUBECONFIG"]
  if (outside !== undefined && outside !== "") {
    const kubectl = process.env["KUBECTL"] || path.join(binDir, "kubectl")
    process.env["KUBECONFIG"] = path.resolve(outside)
    process.env["KUBECTL"] = kubectl
    project.provide("kubeconfig", path.resolve(outside))
    project.provide("kubectl", kubectl)
    project.provide("clusterControl", undefined)
    project.provide("clusterDir", undefined)
    return async () => {}
  }
  build()
  const began = Date.now()
  const env = await start()
  const kubeconfig = env["KUBECONFIG"]!
  const kubectl = env["KUBECTL"] && fs.existsSync(env["KUBECTL"]) ? env["KUBECTL"] : path.join(binDir, "kubectl")
  console.error(`e2e: cluster ready in ${((Date.now() - began) / 1000).toFixed(1)} s, KUBECONFIG=${kubeconfig}`)
  process.env["KUBECONFIG"] = kubeconfig
  process.env["KUBECTL"] = kubectl
  process.env["EFFECT_KUBE_CLUSTER_CONTROL"] = env["EFFECT_KUBE_CLUSTER_CONTROL"]!
  project.provide("kubeconfig", kubeconfig)
  project.provide("kubectl", kubectl)
  project.provide("clusterControl", env["EFFECT_KUBE_CLUSTER_CONTROL"])
  project.provide("clusterDir", env["EFFECT_KUBE_CLUSTER_DIR"])
  return async () => {
    const up = child
    child = undefined
    if (up === undefined || up.exitCode !== null) return
    await new Promise<void>((resolve) => {
      const kill = setTimeout(() => up.kill("SIGKILL"), 20_000)
      up.on("exit", () => {
        clearTimeout(kill)
        resolve()
      })
      up.kill("SIGTERM")
    })
  }
}

/**
 * The chaos run's cluster: the e2e global setup's (one real control plane for the whole run, see
 * test/e2e/setup/globalSetup.ts), or, with EFFECT_KUBE_CHAOS_CLUSTER_ENV naming the `env` file of a cluster started
 * with `npm run cluster` (its folder's `env`), that cluster, control endpoint included: for working on one case
 * without paying the cluster's start each time.
 */
import * as fs from "node:fs"
import type { TestProject } from "vitest/node"
import e2eSetup from "../../e2e/setup/globalSetup.js"

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const envFile = process.env["EFFECT_KUBE_CHAOS_CLUSTER_ENV"]
  if (envFile === undefined || envFile === "") return e2eSetup(project)
  const env: Record<string, string> = {}
  for (const line of fs.readFileSync(envFile, "utf8").split("\n")) {
    const at = line.indexOf("=")
    if (at > 0) env[line.slice(0, at)] = line.slice(at + 1)
  }
  for (const [k, v] of Object.entries(env)) process.env[k] = v
  project.provide("kubeconfig", env["KUBECONFIG"]!)
  project.provide("kubectl", env["KUBECTL"]!)
  project.provide("clusterControl", env["EFFECT_KUBE_CLUSTER_CONTROL"])
  project.provide("clusterDir", env["EFFECT_KUBE_CLUSTER_DIR"])
  return async () => {}
}

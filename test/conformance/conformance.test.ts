/**
 * The fake against the real kube-apiserver: every scenario (./scenarios.ts) is sent to the control plane the global
 * setup started and to `FakeCluster.serve` (both over TLS), and what a client observes of each is compared after
 * normalising only what is meant to differ (./normalise.ts). A difference fails its test unless ./outOfScope.ts
 * declares it; the run ends with `conformance: N of M scenarios identical`.
 */
import { FakeCluster } from "@effect-kube/testing"
import { Effect, Exit, Scope } from "effect"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { kubeconfigPath } from "../e2e/setup/cluster.js"
import { connect, type Endpoint } from "./client.js"
import { excuse } from "./outOfScope.js"
import { compare, type Outcome, pool } from "./run.js"
import { collection, kinds } from "./kinds.js"
import { scenarios } from "./scenarios.js"

const run = crypto.randomBytes(2).toString("hex")
const groups = [...new Set(scenarios.map((s) => s.group))]
const namespaceOf = (group: string) => `cf-${groups.indexOf(group)}-${run}`

let real: Endpoint
let fake: Endpoint
let scope: Scope.Closeable
const outcomes = new Map<string, Outcome>()
let wallMs = 0

const ensureNamespace = async (endpoint: Endpoint, name: string): Promise<void> => {
  const created = await endpoint.request({
    method: "POST", path: "/api/v1/namespaces", body: { metadata: { name, labels: { "effect-kube.dev/conformance": run } } }
  }, {})
  if (created.status !== 201) throw new Error(`${endpoint.name}: namespace ${name}: ${created.status}`)
  // the service account controller gives each namespace its "default" ServiceAccount, which pods need
  const sa = await endpoint.request({
    method: "GET", path: `/api/v1/namespaces/${name}/serviceaccounts/default`, until: (o) => o.status === 200
  }, {})
  if (sa.status !== 200) throw new Error(`${endpoint.name}: namespace ${name} has no default ServiceAccount`)
}

beforeAll(async () => {
  const began = Date.now()
  scope = Effect.runSync(Scope.make())
  const served = await Effect.runPromise(
    FakeCluster.serve({ tls: "self-signed", token: "conformance" }).pipe(Scope.provide(scope))
  )
  real = await connect("real", kubeconfigPath())
  fake = await connect("fake", served.kubeconfigPath)
  await pool(groups, 4, async (g) => {
    await Promise.all([ensureNamespace(real, namespaceOf(g)), ensureNamespace(fake, namespaceOf(g))])
  })
  const only = process.env["EFFECT_KUBE_CONFORMANCE_ONLY"]
  const chosen = only ? scenarios.filter((s) => s.name.includes(only)) : scenarios
  const results = await pool(chosen, 8, (s) => compare(s, real, fake, namespaceOf(s.group)))
  for (const r of results) outcomes.set(r.scenario.name, r)
  wallMs = Date.now() - began
})

afterAll(async () => {
  const all = [...outcomes.values()]
  const identical = all.filter((o) => o.identical).length
  const differing = all.filter((o) => !o.identical)
  const unexcused = (o: Outcome) => o.differences.filter((d) => excuse(o.scenario.name, d) === undefined)
  const inScope = differing.filter((o) => unexcused(o).length > 0)
  fs.mkdirSync(".tmp", { recursive: true })
  fs.writeFileSync(".tmp/conformance.json", JSON.stringify(all.map((o) => ({
    name: o.scenario.name, identical: o.identical, unexcused: unexcused(o),
    differences: o.differences, real: o.identical && process.env["EFFECT_KUBE_CONFORMANCE_KEEP"] === undefined ? undefined : o.real, fake: o.identical ? undefined : o.fake
  })), null, 1))
  console.log(
    `conformance: ${identical} of ${all.length} scenarios identical` +
      ` (${differing.length - inScope.length} declared out of scope, ${inScope.length} in-scope differences;` +
      ` ${(wallMs / 1000).toFixed(1)} s; details in .tmp/conformance.json)`
  )
  if (real !== undefined) {
    // cluster-scoped objects outlive the namespaces: the run's go by their label
    for (const k of kinds.filter((k) => !k.namespaced)) {
      await real.request({
        method: "DELETE", path: collection(k), query: { labelSelector: "conformance.effect-kube.dev/case" }
      }, {}).catch(() => undefined)
    }
    for (const g of groups) {
      await real.request({ method: "DELETE", path: `/api/v1/namespaces/${namespaceOf(g)}` }, {}).catch(() => undefined)
    }
    real.close()
  }
  fake?.close()
  if (scope !== undefined) await Effect.runPromise(Scope.close(scope, Exit.void))
})

describe("conformance: the fake answers as kube-apiserver does", () => {
  for (const s of scenarios) {
    it(s.name, (ctx) => {
      const outcome = outcomes.get(s.name)
      if (outcome === undefined) return ctx.skip()
      const inScope = outcome.differences.filter((d) => excuse(s.name, d) === undefined)
      expect(inScope, `${s.name}: differences no row of outOfScope.ts declares`).toEqual([])
    })
  }
})

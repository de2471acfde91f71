/**
 * The differential fuzzer (./fuzz.ts) against the real control plane and `FakeCluster.serve`: each case is written to
 * both (a create, or an update of a valid object), and what a client sees is compared: the status code, the Status's
 * reason and causes (reason and field), the Warning header, and the object returned and stored. A difference shrinks to
 * the fewest mutations that still show it; one that no row of ./outOfScope.ts declares fails the run.
 *
 * EFFECT_KUBE_FUZZ_WRITES (default 600, the CI size; the documented full run is 5,000), EFFECT_KUBE_FUZZ_SEED and
 * EFFECT_KUBE_FUZZ_SHRINK (how many differences are shrunk, default 40).
 */
import { FakeCluster } from "@effect-kube/testing"
import { Effect, Exit, Scope } from "effect"
import * as fc from "fast-check"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { kubeconfigPath } from "../e2e/setup/cluster.js"
import { connect, type Endpoint, type Observed } from "./client.js"
import { type Case, cases, describeCase, objectOf } from "./fuzz.js"
import { collection, kinds } from "./kinds.js"
import { differences, normalise, pick } from "./normalise.js"
import { excuse } from "./outOfScope.js"
import { pool } from "./run.js"

const writes = Number(process.env["EFFECT_KUBE_FUZZ_WRITES"] ?? 600)
const seed = Number(process.env["EFFECT_KUBE_FUZZ_SEED"] ?? 37)
// how many differing cases are shrunk (each try is a write to both servers); the rest are reported as first seen
const shrinkLimit = Number(process.env["EFFECT_KUBE_FUZZ_SHRINK"] ?? 40)
const run = crypto.randomBytes(2).toString("hex")
const ns = `fz-${run}`

let real: Endpoint
let fake: Endpoint
let scope: Scope.Closeable
let counter = 0

interface Finding {
  readonly name: string
  readonly differences: ReadonlyArray<string>
  readonly unexcused: ReadonlyArray<string>
}
const findings: Array<Finding> = []
let sent = 0

const volatile = [
  "apiVersion", "kind", "metadata.name", "metadata.labels", "metadata.annotations", "spec", "data", "rules",
  "subjects", "roleRef", "value", "handler", "provisioner", "subsets", "endpoints", "ports", "template"
]

/** What the fuzzer compares of one answer: no message text, no managedFields (both declared), the rest as is. */
const view = (o: Observed, isVolatile: boolean): Observed => {
  const body = o.body as Record<string, any> | undefined
  if (body?.kind === "Status") {
    const causes = ((body.details?.causes ?? []) as Array<{ reason?: string; field?: string }>)
      .map((c) => ({ reason: c.reason, field: c.field }))
      .sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)))
    return { ...o, body: { reason: body.reason, code: body.code, causes } }
  }
  if (body === undefined || typeof body !== "object") return o
  const { managedFields: _, ...metadata } = body.metadata ?? {}
  const trimmed = { ...body, metadata }
  return { ...o, body: isVolatile ? pick(trimmed, volatile) : trimmed }
}

const constraining = new Set(["ResourceQuota", "LimitRange"])

/** Writes a case to one endpoint: the answer, and the stored object when it was written. */
const writeOn = async (endpoint: Endpoint, c: Case, name: string): Promise<Array<Observed>> => {
  const vars = { ns }
  const base = collection(c.kind)
  const object = objectOf(c, name)
  const stored = (c.kind.object(name)["metadata"] as { name: string }).name
  const query = { fieldValidation: c.fieldValidation, fieldManager: "fuzz" }
  const out: Array<Observed> = []
  if (c.update) {
    const valid = { apiVersion: c.kind.apiVersion, kind: c.kind.kind, ...c.kind.object(name) }
    const created = await endpoint.request({ method: "POST", path: base, query, body: valid }, vars)
    out.push({ ...created, body: { status: created.status } })
    let rv = (created.body as { metadata?: { resourceVersion?: string } } | undefined)?.metadata?.resourceVersion
    // a controller may write the object's status between the create and the update, at each server's own pace: the
    // update is sent again on the fresh resourceVersion, as a client would, so that only the case's answer is compared
    for (let attempt = 0; ; attempt++) {
      const metadata = { ...(object["metadata"] as object), resourceVersion: rv }
      const updated = await endpoint.request({ method: "PUT", path: `${base}/${stored}`, query, body: { ...object, metadata } }, vars)
      if (updated.status !== 409 || attempt === 3) {
        out.push(updated)
        break
      }
      const fresh = await endpoint.request({ method: "GET", path: `${base}/${stored}` }, vars)
      rv = (fresh.body as { metadata?: { resourceVersion?: string } } | undefined)?.metadata?.resourceVersion
    }
  } else {
    out.push(await endpoint.request({ method: "POST", path: base, query, body: object }, vars))
  }
  if (out[out.length - 1]!.status < 300) out.push(await endpoint.request({ method: "GET", path: `${base}/${stored}` }, vars))
  // a quota or limit range left in the namespace would admit or refuse the other cases' pods (kube-apiserver's quota
  // and LimitRanger admission), so these go once compared
  if (constraining.has(c.kind.kind)) await endpoint.request({ method: "DELETE", path: `${base}/${stored}` }, vars)
  return out.map((o) => view(o, c.kind.volatile === true))
}

/** The differences of one case, written under a name of its own on each server. */
const compareCase = async (c: Case): Promise<ReadonlyArray<string>> => {
  const name = c.kind.namespaced ? `fz-${counter++}` : `{ns}-fz-${counter++}`
  sent++
  const [a, b] = await Promise.all([writeOn(real, c, name), writeOn(fake, c, name)])
  const views = a.map(() => ({}))
  return differences(normalise(a, views), normalise(b, views))
}

/** The fewest of a differing case's mutations that still differ. */
const shrink = async (c: Case): Promise<Case> => {
  if (c.mutations.length === 1) return c
  for (const m of c.mutations) {
    const one = { ...c, mutations: [m] }
    if ((await compareCase(one)).length > 0) return one
  }
  for (let i = 0; i < c.mutations.length; i++) {
    const two = { ...c, mutations: c.mutations.filter((_, j) => j !== i) }
    if (two.mutations.length < c.mutations.length && (await compareCase(two)).length > 0) return two
  }
  return c
}

const ensureNamespace = async (endpoint: Endpoint): Promise<void> => {
  const created = await endpoint.request({ method: "POST", path: "/api/v1/namespaces", body: { metadata: { name: ns } } }, {})
  if (created.status !== 201) throw new Error(`${endpoint.name}: namespace ${ns}: ${created.status}`)
  await endpoint.request({ method: "GET", path: `/api/v1/namespaces/${ns}/serviceaccounts/default`, until: (o) => o.status === 200 }, {})
}

let wallMs = 0

beforeAll(async () => {
  const began = Date.now()
  scope = Effect.runSync(Scope.make())
  const served = await Effect.runPromise(FakeCluster.serve({ tls: "self-signed", token: "fuzz" }).pipe(Scope.provide(scope)))
  real = await connect("real", kubeconfigPath())
  fake = await connect("fake", served.kubeconfigPath)
  await Promise.all([ensureNamespace(real), ensureNamespace(fake)])
  const sample = fc.sample(cases, { seed, numRuns: writes })
  const differing: Array<{ readonly c: Case; readonly diffs: ReadonlyArray<string> }> = []
  await pool(sample, 8, async (c) => {
    const diffs = await compareCase(c)
    if (diffs.length > 0) differing.push({ c, diffs })
  })
  // shrink the first differences (bounded: each try is a write to both servers)
  const seen = new Set<string>()
  for (const { c } of differing.slice(0, shrinkLimit)) {
    const minimal = await shrink(c)
    const name = `fuzz ${describeCase(minimal)}`
    if (seen.has(name)) continue
    seen.add(name)
    const diffs = await compareCase(minimal)
    if (diffs.length === 0) continue
    findings.push({ name, differences: diffs, unexcused: diffs.filter((d) => excuse(name, d) === undefined) })
  }
  // the rest as first seen, each judged by its own differences
  for (const { c, diffs } of differing.slice(shrinkLimit)) {
    const name = `fuzz ${describeCase(c)}`
    findings.push({ name, differences: diffs, unexcused: diffs.filter((d) => excuse(name, d) === undefined) })
  }
  wallMs = Date.now() - began
}, 1_800_000)

afterAll(async () => {
  fs.mkdirSync(".tmp", { recursive: true })
  fs.writeFileSync(".tmp/fuzz.json", JSON.stringify({ seed, writes: sent, findings }, null, 1))
  const unexcused = findings.filter((f) => f.unexcused.length > 0)
  console.log(
    `fuzz: ${writes} cases (${sent} writes to each server with shrinking, seed ${seed}): ${findings.length} differ,` +
      ` ${unexcused.length} not declared; ${(wallMs / 1000).toFixed(1)} s; details in .tmp/fuzz.json`
  )
  for (const f of unexcused.slice(0, 30)) console.log(`  ${f.name}\n    ${f.unexcused.slice(0, 4).join("\n    ")}`)
  if (real !== undefined) {
    for (const k of kinds.filter((k) => !k.namespaced)) {
      await real.request({ method: "DELETE", path: collection(k), query: { labelSelector: "conformance.effect-kube.dev/case" } }, {})
        .catch(() => undefined)
    }
    await real.request({ method: "DELETE", path: `/api/v1/namespaces/${ns}` }, {}).catch(() => undefined)
    real.close()
  }
  fake?.close()
  if (scope !== undefined) await Effect.runPromise(Scope.close(scope, Exit.void))
})

describe("fuzz: generated writes answer alike on kube-apiserver and the fake", () => {
  it("every difference is declared in outOfScope.ts", () => {
    expect(findings.filter((f) => f.unexcused.length > 0).map((f) => `${f.name}: ${f.unexcused[0]}`)).toEqual([])
  })
})

/**
 * Case 6: API Priority and Fairness. A FlowSchema puts our service account in a priority level of its own with the
 * fewest seats the server gives (1 nominal share: 3 seats of 600) and a short queue: a burst of creates and lists
 * waits in the queue, the overflow is answered 429 with Retry-After, and the client sends those again after the
 * wait asked. Every create happens exactly once (a create sent twice would answer 409 AlreadyExists), none is lost.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Layer } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { kubectl } from "../e2e/setup/cluster.js"
import { ConfigMaps, Kube, NodeKube, RequestPolicy } from "./lib.js"
import { kubeconfigPath, layer, record, since, size, testNamespace } from "./support.js"
import { leakChecked } from "./leaks.js"

const burst = size(300, 150)

/** The sum of a metric's samples whose labels include `match`, from the apiserver's /metrics. */
const metric = (text: string, name: string, match: string): number =>
  text.split("\n")
    .filter((l) => l.startsWith(name + "{") && l.includes(match))
    .reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(" ") + 1)), 0)

describe("chaos: API Priority and Fairness", () => {
  it.live("requests queue, 429s are sent again after Retry-After, every create happens once", () =>
    Effect.gen(function*() {
      const ns = yield* testNamespace("apf")
      const level = `${ns}-level`
      const schema = `${ns}-schema`
      yield* Effect.addFinalizer(() =>
        Effect.promise(() =>
          kubectl(["delete", "flowschema", schema, "--ignore-not-found"])
            .then(() => kubectl(["delete", "prioritylevelconfiguration", level, "--ignore-not-found"])).catch(() => "")
        )
      )
      yield* Effect.promise(() =>
        kubectl(["apply", "-f", "-"], {
          input: `
apiVersion: v1
kind: ServiceAccount
metadata: {name: chaos-apf, namespace: ${ns}}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: cms, namespace: ${ns}}
rules: [{apiGroups: [""], resources: [configmaps], verbs: ["*"]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: cms, namespace: ${ns}}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: cms}
subjects: [{kind: ServiceAccount, name: chaos-apf, namespace: ${ns}}]
---
apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: PriorityLevelConfiguration
metadata: {name: ${level}}
spec:
  type: Limited
  limited:
    nominalConcurrencyShares: 1
    lendablePercent: 0
    limitResponse: {type: Queue, queuing: {queues: 1, handSize: 1, queueLengthLimit: 10}}
---
apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: FlowSchema
metadata: {name: ${schema}}
spec:
  matchingPrecedence: 100
  priorityLevelConfiguration: {name: ${level}}
  distinguisherMethod: {type: ByUser}
  rules:
  - subjects: [{kind: ServiceAccount, serviceAccount: {name: chaos-apf, namespace: ${ns}}}]
    resourceRules: [{verbs: ["*"], apiGroups: ["*"], resources: ["*"], namespaces: ["*"], clusterScope: true}]
    nonResourceRules: [{verbs: ["*"], nonResourceURLs: ["*"]}]
`
        })
      )
      const token = (yield* Effect.promise(() => kubectl(["-n", ns, "create", "token", "chaos-apf"]))).trim()
      const admin = fs.readFileSync(kubeconfigPath(), "utf8")
      const server = /server: (\S+)/.exec(admin)![1]!
      const ca = /certificate-authority-data: (\S+)/.exec(admin)![1]!
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "chaos-apf-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true })))
      const file = path.join(dir, "kubeconfig")
      fs.writeFileSync(file, `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "${server}", certificate-authority-data: ${ca}}}]
users: [{name: u, user: {token: ${token}}}]
contexts: [{name: c, context: {cluster: c, user: u, namespace: ${ns}}}]
current-context: c
`)
      const metrics = () => kubectl(["get", "--raw", "/metrics"])
      const cms = Kube.api(ConfigMaps, { namespace: ns })
      // the default policy: 10 throttle retries, client-go's count (the burst is far past the level's seats and queue)
      assert.strictEqual(RequestPolicy.defaults.throttleRetries, 10)
      const client = NodeKube.layerFromFile({ path: file })
      // the schema in force: a request of ours is counted under it
      const deadline = Date.now() + 60_000
      while (true) {
        yield* Effect.provide(Effect.ignore(cms.list()), client)
        if (metric(yield* Effect.promise(metrics), "apiserver_flowcontrol_dispatched_requests_total", `flow_schema="${schema}"`) > 0) break
        if (Date.now() > deadline) assert.fail("the FlowSchema was not in force within 60 s")
        yield* Effect.sleep("500 millis")
      }
      const m0 = yield* Effect.promise(metrics)
      const t0 = performance.now()
      const results = yield* Effect.forEach(
        Array.from({ length: burst }, (_, i) => i),
        (i) =>
          Effect.exit(i % 3 === 2 ? cms.list() : cms.create({ metadata: { name: `apf-${i}` }, data: { i: String(i) } })),
        { concurrency: "unbounded" }
      ).pipe(Effect.provide(client))
      const took = since(t0)
      const m1 = yield* Effect.promise(metrics)
      const delta = (name: string) =>
        metric(m1, name, `flow_schema="${schema}"`) - metric(m0, name, `flow_schema="${schema}"`)
      const rejected = delta("apiserver_flowcontrol_rejected_requests_total")
      const dispatched = delta("apiserver_flowcontrol_dispatched_requests_total")
      const waitCount = metric(m1, "apiserver_flowcontrol_request_wait_duration_seconds_count", `flow_schema="${schema}"`) -
        metric(m0, "apiserver_flowcontrol_request_wait_duration_seconds_count", `flow_schema="${schema}"`)
      const waitSum = metric(m1, "apiserver_flowcontrol_request_wait_duration_seconds_sum", `flow_schema="${schema}"`) -
        metric(m0, "apiserver_flowcontrol_request_wait_duration_seconds_sum", `flow_schema="${schema}"`)
      const failed = results.filter(Exit.isFailure)
      const creates = Array.from({ length: burst }, (_, i) => i).filter((i) => i % 3 !== 2)
      const stored = (yield* cms.list()).items.filter((c) => c.metadata?.name?.startsWith("apf-"))
      yield* record("apf", {
        requests: burst,
        creates: creates.length,
        tookMs: took,
        rejected429: rejected,
        dispatched,
        meanQueueWaitMs: waitCount > 0 ? Math.round((waitSum / waitCount) * 10000) / 10 : 0,
        failed: failed.length,
        firstFailure: failed.length > 0 ? String(failed[0]!.cause).slice(0, 200) : undefined,
        stored: stored.length
      })
      assert.strictEqual(failed.length, 0, "no request failed")
      assert.strictEqual(stored.length, creates.length, "every create happened")
      assert.isAbove(rejected, 0, "the server answered 429s")
      // each request executed once: the burst (creates and lists) and no more
      assert.strictEqual(dispatched, burst, "every request executed once, none twice")
    }).pipe(Effect.scoped, Effect.provide(layer()), leakChecked("apf")), { timeout: 300_000 })
})

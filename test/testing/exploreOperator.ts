/**
 * examples/operator.ts under Explore: two replicas, a user changing things meanwhile, and the operator's
 * invariants. Shared by test/testing/Explore.test.ts (on the fake) and test/e2e/explore.test.ts (the same
 * invariants on the real control plane).
 */
import { Effect } from "effect"
import { ConfigMaps, Kube } from "effect-kube"
import { Explore, type FakeCluster } from "@effect-kube/testing"
import * as Operator from "../../examples/operator.js"

export const mirrorCrd = Effect.runSync(Operator.ConfigMirrors.crd())
export const mirrorLabel = "mirror.example.com/mirror"
const userConfigMaps = (namespace: string) => Kube.api(ConfigMaps, { namespace })
const mirrorsApi = Kube.api(Operator.ConfigMirrors)

/** What a user does while the operator runs: a source, a mirror of it, a change of the source and of the targets. */
export const operatorWorkload = Effect.gen(function*() {
  yield* userConfigMaps("default").create({ metadata: { name: "settings" }, data: { color: "blue" } })
  yield* mirrorsApi.create({
    metadata: { name: "settings" },
    spec: { source: { namespace: "default", name: "settings" }, targetNamespaces: ["team-a", "team-b"] }
  })
  yield* userConfigMaps("default").patch("settings", { _tag: "Merge", body: { data: { color: "green" } } })
  yield* mirrorsApi.patch("settings", { _tag: "Merge", body: { spec: { targetNamespaces: ["team-b", "team-c"] } } })
})

const configMap = (cluster: FakeCluster.Service, namespace: string, name: string) =>
  cluster.get({ apiVersion: "v1", kind: "ConfigMap", name, namespace })

/** A write of the operator's (not the Lease's, not the user's) made by a replica that was not the last to take the lease. */
export const operatorOneLeader = ({ actions }: Explore.View): boolean => {
  let holder: string | undefined
  for (const a of actions) {
    if (a.actor === "workload" || a.method === "GET" || a.status === 0) continue
    if (a.resource === "leases") {
      if (a.status >= 200 && a.status < 300) holder = a.actor
    } else if (a.actor !== holder) return false
  }
  return true
}

export const operatorExploration = {
  cluster: { namespaces: ["team-a", "team-b", "team-c"] },
  setup: (cluster: FakeCluster.Service) => {
    cluster.seed([mirrorCrd])
    // a user's ConfigMap beside where the copies go: not the operator's to touch
    cluster.seed([{ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "keep", namespace: "team-a" }, data: { mine: "yes" } }])
  },
  controllers: {
    "replica-a": Operator.layer({ namespace: "default", identity: "replica-a" }),
    "replica-b": Operator.layer({ namespace: "default", identity: "replica-b" })
  },
  workload: operatorWorkload,
  quiet: 150,
  invariants: {
    "at most one leader acting": operatorOneLeader,
    "never deletes an object it does not own": ({ actions, cluster }: Explore.View) =>
      configMap(cluster, "team-a", "keep") !== undefined &&
      actions.every((a) => a.method !== "DELETE" || a.actor === "workload" || a.resource !== "configmaps" || a.name === "settings"),
    "converges: copies where the mirror says, in the source's color, Ready": Explore.eventually(({ cluster }) => {
      const copies = cluster.list("v1", "configmaps").filter((cm) => cm.metadata.labels?.[mirrorLabel] === "settings")
      const mirror = cluster.get({ apiVersion: "mirror.example.com/v1", kind: "ConfigMirror", name: "settings" })
      const status = mirror?.status as { copies?: ReadonlyArray<string>; conditions?: ReadonlyArray<{ type: string; status: string }> } | undefined
      return JSON.stringify(copies.map((cm) => [cm.metadata.namespace, cm.data?.color])) ===
          JSON.stringify([["team-b", "green"], ["team-c", "green"]]) &&
        JSON.stringify(status?.copies) === JSON.stringify(["team-b", "team-c"]) &&
        (status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") ?? false)
    })
  }
}


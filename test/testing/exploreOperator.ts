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

/** The names a run uses: the fake's fixed ones, a real cluster's unique ones. */
export interface Names {
  readonly source: string
  readonly mirror: string
  readonly a: string
  readonly b: string
  readonly c: string
}
export const fakeNames: Names = { source: "default", mirror: "settings", a: "team-a", b: "team-b", c: "team-c" }

/** What a user does while the operator runs: a source, a mirror of it, a change of the source and of the targets. */
export const workloadOf = (n: Names) =>
  Effect.gen(function*() {
    yield* userConfigMaps(n.source).create({ metadata: { name: "settings" }, data: { color: "blue" } })
    yield* mirrorsApi.create({
      metadata: { name: n.mirror },
      spec: { source: { namespace: n.source, name: "settings" }, targetNamespaces: [n.a, n.b] }
    })
    yield* userConfigMaps(n.source).patch("settings", { _tag: "Merge", body: { data: { color: "green" } } })
    yield* mirrorsApi.patch(n.mirror, { _tag: "Merge", body: { spec: { targetNamespaces: [n.b, n.c] } } })
  })
export const operatorWorkload = workloadOf(fakeNames)

/** Converged: the copies (namespace, color) are in b and c, green; the status says so and Ready. */
export const convergedOf = (
  n: Names,
  copies: ReadonlyArray<readonly [string | undefined, string | undefined]>,
  status: {
    readonly copies?: ReadonlyArray<string> | undefined
    readonly conditions?: ReadonlyArray<{ readonly type: string; readonly status: string }> | undefined
  } | undefined
): boolean =>
  JSON.stringify([...copies].sort()) === JSON.stringify([[n.b, "green"], [n.c, "green"]]) &&
  JSON.stringify(status?.copies) === JSON.stringify([n.b, n.c]) &&
  (status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") ?? false)

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
      return convergedOf(
        fakeNames,
        copies.map((cm) => [cm.metadata.namespace, (cm.data as { color?: string } | undefined)?.color] as const),
        mirror?.status as Parameters<typeof convergedOf>[2]
      )
    })
  }
}


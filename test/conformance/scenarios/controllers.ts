/**
 * The core controllers, as scenarios: a Deployment's rollout (its ReplicaSets, the revision annotation, the status it
 * converges to) and a new revision, a ReplicaSet scaled up and down, a Job run to completion, garbage collection of
 * dependents (Background and Foreground), a Service's EndpointSlice, a ServiceAccount's TokenRequest, and a namespace
 * deleted with content. Each waits (`until`) on both servers until they have converged; what is compared is the
 * converged state, not the way there.
 */
import type { Observed, Step } from "../client.js"
import type { Scenario } from "../scenarios.js"

type Json = Record<string, unknown>

const body = (o: Observed): Json => (o.body ?? {}) as Json
const status = (o: Observed): Json => (body(o)["status"] ?? {}) as Json
const items = (o: Observed): ReadonlyArray<Json> => (body(o)["items"] ?? []) as ReadonlyArray<Json>

const labels = (app: string) => ({ app, "conformance.effect-kube.dev/case": "yes" })

/** A container that runs until it is stopped (a real process on the control plane's nodes), and stops at once. */
const podSpec = {
  terminationGracePeriodSeconds: 0,
  containers: [{ name: "c", image: "busybox:1.36", command: ["sleep", "3600"] }]
}

const deployment = (name: string, replicas: number) => ({
  apiVersion: "apps/v1", kind: "Deployment",
  metadata: { name, labels: labels(name) },
  spec: {
    replicas, selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: podSpec }
  }
})

const deploymentView = [
  "metadata.generation", "metadata.annotations", "spec.replicas", "status.observedGeneration", "status.replicas",
  "status.updatedReplicas", "status.readyReplicas", "status.availableReplicas", "status.unavailableReplicas",
  "status.terminatingReplicas",
  "status.conditions.type", "status.conditions.status", "status.conditions.reason"
]

const replicaSetsView = [
  "items.metadata.name", "items.metadata.labels", "items.metadata.annotations", "items.metadata.ownerReferences.kind",
  "items.metadata.ownerReferences.name", "items.metadata.ownerReferences.controller",
  "items.metadata.ownerReferences.blockOwnerDeletion", "items.spec.replicas", "items.spec.selector",
  "items.status.replicas", "items.status.readyReplicas", "items.status.availableReplicas", "items.status.observedGeneration",
  "items.status.terminatingReplicas"
]

const rolledOut = (replicas: number, generation: number) => (o: Observed): boolean => {
  const s = status(o)
  return s["observedGeneration"] === generation && s["updatedReplicas"] === replicas && s["availableReplicas"] === replicas &&
    s["replicas"] === replicas
}

const deployments = "/apis/apps/v1/namespaces/{ns}/deployments"
const replicaSets = "/apis/apps/v1/namespaces/{ns}/replicasets"
const configMaps = "/api/v1/namespaces/{ns}/configmaps"

const listReplicaSets = (app: string, until: (o: Observed) => boolean): Step => ({
  method: "GET", path: replicaSets, query: { labelSelector: `app=${app}` }, pick: replicaSetsView, until
})

const replicaSetsSettled = (count: number, replicas: ReadonlyArray<number>) => (o: Observed): boolean =>
  items(o).length === count &&
  items(o).every((rs, i) => (rs["status"] as Json | undefined)?.["replicas"] === (replicas[i] ?? 0) ||
    ((rs["status"] as Json | undefined)?.["replicas"] === undefined && (replicas[i] ?? 0) === 0))

const gone = (o: Observed): boolean => o.status === 404

const ownedConfigMap = (name: string, owner: string, blockOwnerDeletion: boolean): Step => ({
  method: "POST", path: configMaps, pick: ["metadata.name", "metadata.ownerReferences"],
  body: {
    metadata: {
      name, labels: labels(name),
      ownerReferences: [{ apiVersion: "v1", kind: "ConfigMap", name: owner, uid: "{uid}", blockOwnerDeletion }]
    }
  }
})

const garbageCollection = (policy: "Background" | "Foreground"): Scenario => {
  const owner = `gc-${policy.toLowerCase()}-owner`
  const dependent = `gc-${policy.toLowerCase()}-dependent`
  return {
    name: `ConfigMap garbage-collection-${policy.toLowerCase()}`, group: "controllers",
    steps: [
      { method: "POST", path: configMaps, body: { metadata: { name: owner, labels: labels(owner) } }, pick: ["metadata.name"] },
      ownedConfigMap(dependent, owner, policy === "Foreground"),
      {
        method: "DELETE", path: `${configMaps}/${owner}`, body: { kind: "DeleteOptions", apiVersion: "v1", propagationPolicy: policy },
        pick: ["kind", "metadata.name", "metadata.finalizers", "metadata.deletionTimestamp", "status"]
      },
      { method: "GET", path: `${configMaps}/${dependent}`, until: gone, statusOnly: true },
      { method: "GET", path: `${configMaps}/${owner}`, until: gone, statusOnly: true }
    ]
  }
}

export const controllerScenarios: ReadonlyArray<Scenario> = [
  {
    name: "Deployment rollout", group: "controllers",
    steps: [
      { method: "POST", path: deployments, body: deployment("rollout", 2), pick: ["metadata.name", "metadata.generation"] },
      { method: "GET", path: `${deployments}/rollout`, pick: deploymentView, until: rolledOut(2, 1) },
      listReplicaSets("rollout", replicaSetsSettled(1, [2])),
      // a new template: a second ReplicaSet takes over, revision 2
      {
        method: "PATCH", path: `${deployments}/rollout`, contentType: "application/strategic-merge-patch+json",
        body: { spec: { template: { metadata: { annotations: { rev: "2" } } } } }, pick: ["metadata.generation"]
      },
      { method: "GET", path: `${deployments}/rollout`, pick: deploymentView, until: rolledOut(2, 2) },
      listReplicaSets("rollout", replicaSetsSettled(2, [2, 0]))
    ]
  },
  {
    name: "Deployment delete-background-dependents", group: "controllers",
    steps: [
      { method: "POST", path: deployments, body: deployment("gc-deploy", 1), pick: ["metadata.name"] },
      listReplicaSets("gc-deploy", (o) =>
        items(o).length === 1 && (items(o)[0]!["status"] as Json | undefined)?.["availableReplicas"] === 1),
      {
        method: "DELETE", path: `${deployments}/gc-deploy`,
        body: { kind: "DeleteOptions", apiVersion: "v1", propagationPolicy: "Background" }, statusOnly: true
      },
      listReplicaSets("gc-deploy", (o) => items(o).length === 0),
      {
        method: "GET", path: "/api/v1/namespaces/{ns}/pods", query: { labelSelector: "app=gc-deploy" },
        pick: ["kind", "items.metadata.name"], until: (o) => items(o).length === 0
      }
    ]
  },
  {
    name: "ReplicaSet scale-up-and-down", group: "controllers",
    steps: [
      {
        method: "POST", path: replicaSets, pick: ["metadata.name"],
        body: {
          apiVersion: "apps/v1", kind: "ReplicaSet", metadata: { name: "scaled", labels: labels("scaled") },
          spec: { replicas: 1, selector: { matchLabels: { app: "scaled" } }, template: { metadata: { labels: { app: "scaled" } }, spec: podSpec } }
        }
      },
      {
        method: "GET", path: `${replicaSets}/scaled`, pick: ["spec.replicas", "status"],
        until: (o) => status(o)["readyReplicas"] === 1 && status(o)["availableReplicas"] === 1
      },
      {
        method: "PATCH", path: `${replicaSets}/scaled/scale`, body: { spec: { replicas: 3 } },
        pick: ["kind", "apiVersion", "spec", "status.selector"]
      },
      {
        method: "GET", path: `${replicaSets}/scaled`, pick: ["spec.replicas", "status"],
        until: (o) => status(o)["readyReplicas"] === 3 && status(o)["availableReplicas"] === 3 && status(o)["observedGeneration"] === 2
      },
      {
        method: "GET", path: "/api/v1/namespaces/{ns}/pods", query: { labelSelector: "app=scaled" },
        pick: ["items.metadata.generateName", "items.metadata.labels", "items.metadata.ownerReferences.kind", "items.metadata.ownerReferences.name"]
      },
      {
        method: "PATCH", path: `${replicaSets}/scaled/scale`, body: { spec: { replicas: 1 } },
        pick: ["kind", "apiVersion", "spec"]
      },
      {
        method: "GET", path: `${replicaSets}/scaled`, pick: ["spec.replicas", "status"],
        until: (o) => status(o)["replicas"] === 1 && status(o)["readyReplicas"] === 1 && status(o)["observedGeneration"] === 3
      }
    ]
  },
  {
    name: "Job run-to-completion", group: "controllers",
    steps: [
      {
        method: "POST", path: "/apis/batch/v1/namespaces/{ns}/jobs", pick: ["metadata.name", "spec.completions", "spec.parallelism"],
        body: {
          apiVersion: "batch/v1", kind: "Job", metadata: { name: "done", labels: labels("done") },
          spec: {
            completions: 2, parallelism: 1, backoffLimit: 0,
            template: { spec: { restartPolicy: "Never", containers: [{ name: "c", image: "busybox:1.36", command: ["true"] }] } }
          }
        }
      },
      {
        method: "GET", path: "/apis/batch/v1/namespaces/{ns}/jobs/done",
        pick: [
          "status.succeeded", "status.failed", "status.active", "status.ready", "status.terminating",
          "status.uncountedTerminatedPods", "status.conditions.type", "status.conditions.status", "status.conditions.reason"
        ],
        until: (o) => status(o)["succeeded"] === 2 &&
          ((status(o)["conditions"] ?? []) as ReadonlyArray<Json>).some((c) => c["type"] === "Complete")
      },
      {
        method: "GET", path: "/api/v1/namespaces/{ns}/pods", query: { labelSelector: "batch.kubernetes.io/job-name=done" },
        pick: ["items.metadata.generateName", "items.metadata.ownerReferences.kind", "items.metadata.ownerReferences.name", "items.status.phase"]
      }
    ]
  },
  garbageCollection("Background"),
  garbageCollection("Foreground"),
  {
    name: "EndpointSlice of-a-service", group: "controllers",
    steps: [
      {
        method: "POST", path: "/api/v1/namespaces/{ns}/services", pick: ["metadata.name", "spec.ports"],
        body: {
          metadata: { name: "sliced", labels: labels("sliced") },
          spec: { selector: { app: "sliced" }, ports: [{ name: "http", port: 80, targetPort: 8080, protocol: "TCP" }] }
        }
      },
      {
        method: "POST", path: "/api/v1/namespaces/{ns}/pods", pick: ["metadata.name"],
        body: { metadata: { name: "sliced-pod", labels: { app: "sliced" } }, spec: podSpec }
      },
      {
        method: "GET", path: "/apis/discovery.k8s.io/v1/namespaces/{ns}/endpointslices",
        query: { labelSelector: "kubernetes.io/service-name=sliced" },
        pick: [
          "items.metadata.generateName", "items.metadata.labels", "items.metadata.ownerReferences.kind",
          "items.metadata.ownerReferences.name", "items.metadata.ownerReferences.controller", "items.addressType",
          "items.ports", "items.endpoints.conditions", "items.endpoints.targetRef.kind", "items.endpoints.targetRef.name"
        ],
        until: (o) => items(o).length === 1 &&
          ((items(o)[0]!["endpoints"] ?? []) as ReadonlyArray<Json>).some((e) => (e["conditions"] as Json | undefined)?.["ready"] === true)
      }
    ]
  },
  {
    name: "ServiceAccount token-request", group: "controllers",
    steps: [{
      method: "POST", path: "/api/v1/namespaces/{ns}/serviceaccounts/default/token",
      body: { apiVersion: "authentication.k8s.io/v1", kind: "TokenRequest", spec: { audiences: ["conformance"], expirationSeconds: 3600 } },
      pick: ["kind", "apiVersion", "metadata", "spec", "status"]
    }, {
      method: "POST", path: "/api/v1/namespaces/{ns}/serviceaccounts/missing/token",
      body: { apiVersion: "authentication.k8s.io/v1", kind: "TokenRequest", spec: { audiences: ["conformance"] } }
    }]
  },
  {
    name: "Namespace delete-with-content", group: "controllers",
    steps: [
      { method: "POST", path: "/api/v1/namespaces", body: { metadata: { name: "{ns}-gone", labels: { "conformance.effect-kube.dev/case": "yes" } } }, pick: ["metadata.name", "spec", "status"] },
      {
        method: "POST", path: "/api/v1/namespaces/{ns}-gone/configmaps", body: { metadata: { name: "content" } }, pick: ["metadata.name"],
        // the namespace's own controllers are ready first (its default ServiceAccount)
        delayMs: 200
      },
      { method: "DELETE", path: "/api/v1/namespaces/{ns}-gone", pick: ["kind", "metadata.name", "spec", "status.phase"] },
      { method: "POST", path: "/api/v1/namespaces/{ns}-gone/configmaps", body: { metadata: { name: "late" } } },
      { method: "GET", path: "/api/v1/namespaces/{ns}-gone", until: gone, statusOnly: true }
    ]
  }
]

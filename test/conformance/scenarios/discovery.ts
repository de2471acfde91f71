/**
 * Discovery and the named cases of issue 37, as scenarios: the legacy and aggregated discovery documents a client reads
 * before anything else (resources, verbs, shortNames, categories, storage versions), the OpenAPI documents' shape as
 * kubectl reads it, and single cases the per-kind tables do not make (a Deployment's scale subresource patched, a
 * millisecond MicroTime, a metadata-only watch-list's bookmark, a strict merge patch with an unknown field).
 */
import type { Scenario } from "../scenarios.js"

const aggregated = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;q=0.9"

/** A resource list's resources by name, each with what a client reads of it. */
const resourceFields = [
  "kind", "groupVersion", "resources.name", "resources.singularName", "resources.namespaced", "resources.kind",
  "resources.verbs", "resources.shortNames", "resources.categories"
]

const discovery: ReadonlyArray<Scenario> = [
  { name: "discovery api", group: "discovery", steps: [{ method: "GET", path: "/api", pick: ["kind", "versions"] }] },
  {
    name: "discovery apis", group: "discovery",
    steps: [{ method: "GET", path: "/apis", pick: ["kind", "groups.name", "groups.versions", "groups.preferredVersion"] }]
  },
  ...["/api/v1", "/apis/apps/v1", "/apis/batch/v1", "/apis/rbac.authorization.k8s.io/v1", "/apis/networking.k8s.io/v1",
    "/apis/storage.k8s.io/v1", "/apis/apiextensions.k8s.io/v1", "/apis/events.k8s.io/v1", "/apis/policy/v1",
    "/apis/autoscaling/v2", "/apis/discovery.k8s.io/v1", "/apis/coordination.k8s.io/v1", "/apis/scheduling.k8s.io/v1",
    "/apis/node.k8s.io/v1", "/apis/admissionregistration.k8s.io/v1"].map((path): Scenario => ({
      name: `discovery ${path}`, group: "discovery", steps: [{ method: "GET", path, pick: resourceFields }]
    })),
  ...["apps", "batch", "rbac.authorization.k8s.io"].map((group): Scenario => ({
    name: `discovery group ${group}`, group: "discovery",
    steps: [{ method: "GET", path: `/apis/${group}`, pick: ["kind", "name", "versions", "preferredVersion"] }]
  })),
  {
    name: "discovery aggregated api", group: "discovery",
    steps: [{
      method: "GET", path: "/api", accept: aggregated,
      pick: ["kind", "apiVersion", "items.metadata.name", "items.versions.version", "items.versions.resources.resource",
        "items.versions.resources.verbs", "items.versions.resources.shortNames", "items.versions.resources.categories",
        "items.versions.resources.scope", "items.versions.resources.responseKind"]
    }]
  },
  {
    name: "discovery aggregated apis apps", group: "discovery",
    steps: [{
      method: "GET", path: "/apis", accept: aggregated,
      pick: ["kind", "apiVersion", "items.metadata.name"]
    }]
  },
  {
    name: "openapi v3 index", group: "discovery",
    steps: [{ method: "GET", path: "/openapi/v3", pick: [] }]
  },
  {
    name: "openapi v3 apps", group: "discovery",
    steps: [{ method: "GET", path: "/openapi/v3/apis/apps/v1", pick: ["openapi", "info"] }]
  },
  {
    name: "openapi v2", group: "discovery",
    steps: [{ method: "GET", path: "/openapi/v2", pick: ["swagger", "info"] }]
  }
]

const deployment = (name: string) => ({
  apiVersion: "apps/v1", kind: "Deployment",
  metadata: { name, labels: { "conformance.effect-kube.dev/case": "yes" } },
  spec: {
    replicas: 0, selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: "c", image: "registry.k8s.io/pause:3.10" }] } }
  }
})

const event = (name: string, eventTime: string) => ({
  apiVersion: "events.k8s.io/v1", kind: "Event",
  metadata: { name, labels: { "conformance.effect-kube.dev/case": "yes" } },
  eventTime, reportingController: "conformance", reportingInstance: "i", action: "Test", reason: "Test", type: "Normal",
  regarding: { kind: "Pod", name: "p", namespace: "{ns}" }
})

const named: ReadonlyArray<Scenario> = [
  {
    name: "Deployment scale-merge-patch", group: "named",
    steps: [
      { method: "POST", path: "/apis/apps/v1/namespaces/{ns}/deployments", body: deployment("scale-patch"), statusOnly: true },
      {
        method: "PATCH", path: "/apis/apps/v1/namespaces/{ns}/deployments/scale-patch/scale",
        contentType: "application/merge-patch+json", body: { spec: { replicas: 0 } },
        pick: ["kind", "apiVersion", "metadata.name", "spec"]
      },
      {
        method: "GET", path: "/apis/apps/v1/namespaces/{ns}/deployments/scale-patch/scale",
        pick: ["kind", "apiVersion", "metadata.name", "spec", "status.selector"]
      }
    ]
  },
  {
    name: "Event microtime-milliseconds", group: "named",
    steps: [{
      method: "POST", path: "/apis/events.k8s.io/v1/namespaces/{ns}/events",
      body: event("millis", "2026-01-01T00:00:00.123Z")
    }]
  },
  {
    name: "Event microtime-microseconds", group: "named",
    steps: [{
      method: "POST", path: "/apis/events.k8s.io/v1/namespaces/{ns}/events",
      body: event("micros", "2026-01-01T00:00:00.123456Z"),
      pick: ["kind", "apiVersion", "metadata.name", "eventTime", "regarding", "reason", "type"]
    }]
  },
  {
    name: "ConfigMap watch-initial-events-metadata", group: "named",
    steps: [
      {
        method: "POST", path: "/api/v1/namespaces/{ns}/configmaps", statusOnly: true,
        body: { metadata: { name: "partial-watch", labels: { "conformance.effect-kube.dev/case": "yes" } } }
      },
      {
        method: "GET", path: "/api/v1/namespaces/{ns}/configmaps",
        accept: "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1",
        query: {
          watch: "true", sendInitialEvents: "true", resourceVersionMatch: "NotOlderThan", allowWatchBookmarks: "true",
          fieldSelector: "metadata.name=partial-watch"
        },
        watchEvents: 2,
        pick: ["type", "object.kind", "object.apiVersion", "object.metadata.name", "object.metadata.annotations"]
      }
    ]
  },
  {
    name: "ConfigMap strict-merge-patch-unknown-field", group: "named",
    steps: [
      {
        // its resourceVersion ranks the one the 422 quotes
        method: "POST", path: "/api/v1/namespaces/{ns}/configmaps", pick: ["metadata.name", "metadata.resourceVersion"],
        body: { metadata: { name: "strict-patch", labels: { "conformance.effect-kube.dev/case": "yes" } } }
      },
      {
        method: "PATCH", path: "/api/v1/namespaces/{ns}/configmaps/strict-patch", query: { fieldValidation: "Strict" },
        contentType: "application/merge-patch+json", body: { bogus: 1, data: { a: "b" } }
      }
    ]
  },
  {
    name: "ConfigMap strict-strategic-patch-unknown-field", group: "named",
    steps: [
      {
        // its resourceVersion ranks the one the 422 quotes
        method: "POST", path: "/api/v1/namespaces/{ns}/configmaps", pick: ["metadata.name", "metadata.resourceVersion"],
        body: { metadata: { name: "strict-smp", labels: { "conformance.effect-kube.dev/case": "yes" } } }
      },
      {
        method: "PATCH", path: "/api/v1/namespaces/{ns}/configmaps/strict-smp", query: { fieldValidation: "Strict" },
        contentType: "application/strategic-merge-patch+json", body: { bogus: 1 }
      }
    ]
  }
]

/** The discovery documents and the named cases. */
export const discoveryScenarios: ReadonlyArray<Scenario> = [...discovery, ...named]

/**
 * Issue 37's named cases the other tables do not make: strict patches of every type (an unknown field, a repeated
 * one), server-side apply of a field a built-in kind does not declare, a Deployment's scale subresource JSON-patched,
 * and a pod's memory limit lowered through pods/resize.
 */
import type { Step } from "../client.js"
import type { Scenario } from "../scenarios.js"

const configMaps = "/api/v1/namespaces/{ns}/configmaps"

/** A ConfigMap, its resourceVersion kept so the one a 422 quotes ranks alike. */
const configMap = (name: string): Step => ({
  method: "POST", path: configMaps, pick: ["metadata.name", "metadata.resourceVersion"],
  body: { metadata: { name, labels: { "conformance.effect-kube.dev/case": "yes" } } }
})

const deployment = (name: string) => ({
  apiVersion: "apps/v1", kind: "Deployment",
  metadata: { name, labels: { "conformance.effect-kube.dev/case": "yes" } },
  spec: {
    replicas: 0, selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: "c", image: "registry.k8s.io/pause:3.10" }] } }
  }
})

const pod = (name: string) => ({
  apiVersion: "v1", kind: "Pod",
  metadata: { name, labels: { "conformance.effect-kube.dev/case": "yes" } },
  spec: {
    containers: [{
      name: "c", image: "registry.k8s.io/pause:3.10",
      resources: { requests: { cpu: "10m", memory: "32Mi" }, limits: { cpu: "100m", memory: "64Mi" } }
    }]
  }
})

const podView = ["kind", "metadata.name", "spec.containers.resources", "spec.containers.resizePolicy"]

export const namedScenarios: ReadonlyArray<Scenario> = [
  {
    name: "ConfigMap strict-json-patch-unknown-field", group: "named2",
    steps: [configMap("strict-jsonpatch"), {
      method: "PATCH", path: `${configMaps}/strict-jsonpatch`, query: { fieldValidation: "Strict" },
      contentType: "application/json-patch+json", body: [{ op: "add", path: "/bogus", value: { a: 1 } }]
    }]
  },
  {
    name: "ConfigMap strict-merge-patch-duplicate-field", group: "named2",
    steps: [configMap("strict-dup"), {
      method: "PATCH", path: `${configMaps}/strict-dup`, query: { fieldValidation: "Strict" },
      contentType: "application/merge-patch+json", body: `{"data":{"b":"1","b":"2"},"bogus":true}`
    }]
  },
  {
    name: "ConfigMap warn-merge-patch-unknown-field", group: "named2",
    steps: [configMap("warn-patch"), {
      method: "PATCH", path: `${configMaps}/warn-patch`, query: { fieldValidation: "Warn" },
      contentType: "application/merge-patch+json", body: { bogus: 1, data: { a: "b" } }, pick: ["data"]
    }]
  },
  {
    name: "Deployment apply-undeclared-field", group: "named2",
    steps: [{
      method: "PATCH", path: "/apis/apps/v1/namespaces/{ns}/deployments/apply-undeclared", query: { fieldManager: "t" },
      contentType: "application/apply-patch+yaml",
      body: { ...deployment("apply-undeclared"), spec: { ...deployment("apply-undeclared").spec, bogus: 1 } }
    }]
  },
  {
    name: "Deployment apply-undeclared-field-strict", group: "named2",
    steps: [{
      method: "PATCH", path: "/apis/apps/v1/namespaces/{ns}/deployments/apply-undeclared-strict",
      query: { fieldManager: "t", fieldValidation: "Strict" }, contentType: "application/apply-patch+yaml",
      body: { ...deployment("apply-undeclared-strict"), spec: { ...deployment("apply-undeclared-strict").spec, bogus: 1 } }
    }]
  },
  {
    name: "Deployment scale-json-patch", group: "named2",
    steps: [
      { method: "POST", path: "/apis/apps/v1/namespaces/{ns}/deployments", body: deployment("scale-jsonpatch"), statusOnly: true },
      {
        method: "PATCH", path: "/apis/apps/v1/namespaces/{ns}/deployments/scale-jsonpatch/scale",
        contentType: "application/json-patch+json", body: [{ op: "replace", path: "/spec/replicas", value: 0 }],
        pick: ["kind", "apiVersion", "metadata.name", "spec"]
      },
      {
        method: "PATCH", path: "/apis/apps/v1/namespaces/{ns}/deployments/scale-jsonpatch/scale",
        contentType: "application/strategic-merge-patch+json", body: { spec: { replicas: 0 } },
        pick: ["kind", "apiVersion", "metadata.name", "spec"]
      }
    ]
  },
  {
    name: "Pod resize-lower-memory-limit", group: "named2",
    steps: [
      { method: "POST", path: "/api/v1/namespaces/{ns}/pods", body: pod("resize-down"), pick: podView },
      {
        method: "PATCH", path: "/api/v1/namespaces/{ns}/pods/resize-down/resize",
        contentType: "application/strategic-merge-patch+json",
        body: { spec: { containers: [{ name: "c", resources: { limits: { memory: "48Mi" } } }] } }, pick: podView
      },
      { method: "GET", path: "/api/v1/namespaces/{ns}/pods/resize-down", pick: podView }
    ]
  },
  {
    name: "Pod resize-lower-memory-limit-not-restart", group: "named2",
    steps: [
      {
        method: "POST", path: "/api/v1/namespaces/{ns}/pods", pick: podView,
        body: { ...pod("resize-down-nr"), spec: { containers: [{ ...pod("x").spec.containers[0], resizePolicy: [{ resourceName: "memory", restartPolicy: "NotRequired" }] }] } }
      },
      {
        method: "PATCH", path: "/api/v1/namespaces/{ns}/pods/resize-down-nr/resize",
        contentType: "application/strategic-merge-patch+json",
        body: { spec: { containers: [{ name: "c", resources: { limits: { memory: "48Mi" } } }] } }, pick: podView
      }
    ]
  }
]

/**
 * A CustomResourceDefinition with versions (conversion None): an object written in one version read in another, the
 * storage version recorded in status.storedVersions, a version not served answering 404, discovery's preferred
 * version, and a change of storage version.
 */
import type { Observed, Step } from "../client.js"
import type { Scenario } from "../scenarios.js"

const group = "versions.conformance.effect-kube.dev"
const crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
const crdName = `widgets.${group}`
const widgets = (version: string) => `/apis/${group}/${version}/namespaces/{ns}/widgets`

const schema = {
  openAPIV3Schema: {
    type: "object",
    properties: {
      spec: { type: "object", properties: { size: { type: "integer" }, color: { type: "string" } } }
    }
  }
}

const crd = {
  apiVersion: "apiextensions.k8s.io/v1", kind: "CustomResourceDefinition",
  metadata: { name: crdName, labels: { "conformance.effect-kube.dev/case": "yes" } },
  spec: {
    group, scope: "Namespaced",
    names: { plural: "widgets", singular: "widget", kind: "Widget", listKind: "WidgetList" },
    conversion: { strategy: "None" },
    versions: [
      { name: "v1beta1", served: false, storage: false, schema },
      { name: "v1", served: true, storage: false, schema },
      { name: "v2", served: true, storage: true, schema }
    ]
  }
}

const served = (o: Observed): boolean => o.status !== 404
const widgetView = ["apiVersion", "kind", "metadata.name", "spec"]

const widget = (version: string, name: string, spec: Record<string, unknown>): Step => ({
  method: "POST", path: widgets(version), pick: widgetView, until: served,
  body: { apiVersion: `${group}/${version}`, kind: "Widget", metadata: { name }, spec }
})

export const crdVersionScenarios: ReadonlyArray<Scenario> = [{
  name: "CustomResourceDefinition versions-conversion-none", group: "crdVersions",
  steps: [
    { method: "POST", path: crds, body: crd, pick: ["metadata.name", "spec.versions", "spec.conversion"] },
    widget("v1", "written-v1", { size: 1, color: "red" }),
    { method: "GET", path: `${widgets("v2")}/written-v1`, pick: widgetView, until: served },
    widget("v2", "written-v2", { size: 2 }),
    { method: "GET", path: `${widgets("v1")}/written-v2`, pick: widgetView },
    { method: "GET", path: widgets("v1"), pick: ["apiVersion", "kind", "items.apiVersion", "items.metadata.name", "items.spec"] },
    { method: "GET", path: `${widgets("v1beta1")}/written-v1` },
    {
      method: "GET", path: `${crds}/${crdName}`,
      pick: ["status.storedVersions", "status.acceptedNames", "status.conditions.type", "status.conditions.status"],
      until: (o) => JSON.stringify((o.body as { status?: unknown } | undefined)?.status ?? {}).includes("Established")
    },
    { method: "GET", path: `/apis/${group}`, pick: ["kind", "name", "versions", "preferredVersion"] },
    {
      method: "GET", path: `/apis/${group}/v1`, pick: ["kind", "groupVersion", "resources.name", "resources.kind", "resources.verbs"]
    },
    // v1 becomes the storage version: storedVersions keeps v2 and adds v1
    {
      method: "PATCH", path: `${crds}/${crdName}`, contentType: "application/json-patch+json",
      body: [
        { op: "replace", path: "/spec/versions/1/storage", value: true },
        { op: "replace", path: "/spec/versions/2/storage", value: false }
      ],
      pick: ["spec.versions.name", "spec.versions.storage", "status.storedVersions"]
    },
    {
      method: "PUT", path: `${widgets("v1")}/written-v2`, pick: widgetView,
      body: { apiVersion: `${group}/v1`, kind: "Widget", metadata: { name: "written-v2" }, spec: { size: 3 } }
    },
    // a storage version that is not served, and no storage version at all, are refused
    {
      method: "PATCH", path: `${crds}/${crdName}`, contentType: "application/json-patch+json",
      body: [{ op: "replace", path: "/spec/versions/1/served", value: false }]
    },
    {
      method: "PATCH", path: `${crds}/${crdName}`, contentType: "application/json-patch+json",
      body: [{ op: "replace", path: "/spec/versions/1/storage", value: false }]
    },
    { method: "DELETE", path: `${crds}/${crdName}`, statusOnly: true }
  ]
}]

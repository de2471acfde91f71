/**
 * Discovery and the named cases of issue 37, as scenarios: the legacy and aggregated discovery documents a client reads
 * before anything else (resources, verbs, shortNames, categories, storage versions), the OpenAPI documents' shape as
 * kubectl reads it, and single cases the per-kind tables do not make (a Deployment's scale subresource patched, a
 * millisecond MicroTime, a metadata-only watch-list's bookmark, a strict merge patch with an unknown field).
 */
import type { Step } from "../client.js"
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
    steps: [{
      method: "GET", path: "/openapi/v3/apis/apps/v1",
      pick: ["openapi", "info", "components.schemas.[io.k8s.api.apps.v1.Deployment]",
        "components.schemas.[io.k8s.api.apps.v1.DeploymentSpec]", "components.schemas.[io.k8s.api.apps.v1.StatefulSet]"]
    }]
  },
  {
    name: "openapi v2", group: "discovery",
    steps: [{
      method: "GET", path: "/openapi/v2",
      pick: ["swagger", "info", "definitions.[io.k8s.api.core.v1.Pod]", "definitions.[io.k8s.api.apps.v1.Deployment]",
        "definitions.[io.k8s.api.core.v1.ConfigMap]", "definitions.[io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta]"]
    }]
  },
  {
    // client-go's first ask: kube-apiserver answers protobuf, the fake 406 (declared)
    name: "openapi v2 protobuf", group: "discovery",
    steps: [{ method: "GET", path: "/openapi/v2", accept: "application/com.github.proto-openapi.spec.v2@v1.0+protobuf", statusOnly: true }]
  },
  ...openApiCustom()
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

/**
 * A CRD's schema as both servers publish it: in /openapi/v2's definitions and in its group version's /openapi/v3
 * document (apiVersion, kind and metadata added, v2's restrictions), and again after the CRD's schema changed.
 * Each scenario has its own CRD (the servers publish a CRD's schema at their pace: steps wait for it).
 */
function openApiCustom(): ReadonlyArray<Scenario> {
  const crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
  const crd = (group: string, extra: Record<string, unknown> = {}) => ({
    apiVersion: "apiextensions.k8s.io/v1", kind: "CustomResourceDefinition",
    metadata: { name: `widgets.${group}` },
    spec: {
      group, scope: "Namespaced",
      names: { plural: "widgets", singular: "widget", kind: "Widget", listKind: "WidgetList" },
      versions: [{
        name: "v1", served: true, storage: true, subresources: { status: {} },
        schema: {
          openAPIV3Schema: {
            type: "object", description: "A Widget is a thing for the openapi scenarios.",
            properties: {
              spec: {
                type: "object", description: "What the widget should be.", required: ["size"],
                properties: {
                  size: { type: "integer", minimum: 1, description: "How big." },
                  color: { type: "string", enum: ["red", "blue"], default: "red", nullable: true },
                  port: { "x-kubernetes-int-or-string": true, anyOf: [{ type: "integer" }, { type: "string" }] },
                  extra: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
                  tags: {
                    type: "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                    items: { type: "object", required: ["name"], properties: { name: { type: "string" }, value: { type: "string" } } }
                  },
                  ...extra
                }
              },
              status: { type: "object", properties: { ready: { type: "boolean" } } }
            }
          }
        }
      }]
    }
  })
  const name = (group: string) => group.split(".").reverse().join(".")
  const create = (group: string): Step => ({ method: "POST", path: crds, body: crd(group), statusOnly: true })
  const remove = (group: string): Step => ({ method: "DELETE", path: `${crds}/widgets.${group}`, statusOnly: true })
  const schemas = (body: unknown): Record<string, unknown> =>
    ((body as { components?: { schemas?: Record<string, unknown> } } | undefined)?.components?.schemas) ?? {}
  const v2 = "openapi-v2.conformance.effect-kube.dev"
  const v3 = "openapi-v3.conformance.effect-kube.dev"
  const changed = "openapi-change.conformance.effect-kube.dev"
  const v3Doc = (group: string, until: (s: Record<string, unknown>) => boolean): Step => ({
    method: "GET", path: `/openapi/v3/apis/${group}/v1`,
    until: (o) => o.status === 200 && until(schemas(o.body)),
    pick: ["openapi", "info", `components.schemas.[${name(group)}.v1.Widget]`, `components.schemas.[${name(group)}.v1.WidgetList]`]
  })
  return [
    {
      name: "openapi v2 custom resource", group: "openapi",
      steps: [create(v2), {
        method: "GET", path: "/openapi/v2",
        until: (o) => `${name(v2)}.v1.Widget` in ((o.body as { definitions?: object } | undefined)?.definitions ?? {}),
        pick: [`definitions.[${name(v2)}.v1.Widget]`, `definitions.[${name(v2)}.v1.WidgetList]`]
      }, remove(v2)]
    },
    {
      name: "openapi v3 custom resource", group: "openapi",
      steps: [create(v3), {
        method: "GET", path: "/openapi/v3", until: (o) => `apis/${v3}/v1` in ((o.body as { paths?: object } | undefined)?.paths ?? {}),
        pick: []
      }, v3Doc(v3, (s) => `${name(v3)}.v1.Widget` in s), remove(v3)]
    },
    {
      name: "openapi v3 custom resource changed", group: "openapi",
      steps: [create(changed), v3Doc(changed, (s) => `${name(changed)}.v1.Widget` in s), {
        method: "PATCH", path: `${crds}/widgets.${changed}`, contentType: "application/json-patch+json", statusOnly: true,
        body: [{
          op: "add", path: "/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties/weight",
          value: { type: "number", description: "How heavy." }
        }]
      }, v3Doc(changed, (s) => JSON.stringify(s[`${name(changed)}.v1.Widget`] ?? {}).includes("How heavy.")), remove(changed)]
    }
  ]
}

/** The discovery documents and the named cases. */
export const discoveryScenarios: ReadonlyArray<Scenario> = [...discovery, ...named]

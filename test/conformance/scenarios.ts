/**
 * The scenarios, as data: tables of cases made per kind and verb (and a few by hand), each a short sequence of
 * requests sent alike to the real control plane and to the fake.
 */
import type { Step } from "./client.js"
import { collection, type Kind, kinds, objectName, storedName } from "./kinds.js"
import { celScenarios } from "./scenarios/cel.js"
import { discoveryScenarios } from "./scenarios/discovery.js"
import { controllerScenarios } from "./scenarios/controllers.js"
import { crdVersionScenarios } from "./scenarios/crdVersions.js"
import { kubectlScenarios } from "./scenarios/kubectl.js"
import { namedScenarios } from "./scenarios/named.js"

export interface Scenario {
  /** `kind verb`, unique: the out-of-scope table names scenarios by it. */
  readonly name: string
  /** Scenarios of one group share a namespace (their objects have their own names). */
  readonly group: string
  readonly steps: ReadonlyArray<Step>
}

/** What is compared of an object a controller or the scheduler also writes. */
const volatilePaths = [
  "apiVersion", "kind", "metadata.name", "metadata.namespace", "metadata.labels", "metadata.annotations",
  "metadata.finalizers", "metadata.generation", "metadata.deletionTimestamp", "metadata.generateName", "spec",
  "items.metadata.name", "items.spec", "type", "object.metadata.name", "object.spec", "object.kind"
]

const finalizersOf = (body: unknown): ReadonlyArray<unknown> => {
  const metadata = (body as { metadata?: { finalizers?: unknown } } | undefined)?.metadata
  return Array.isArray(metadata?.finalizers) ? metadata.finalizers : []
}

const view = (k: Kind): Pick<Step, "pick"> => k.volatile ? { pick: volatilePaths } : {}

const manager = { fieldManager: "conformance" }

const perKind = (k: Kind): ReadonlyArray<Scenario> => {
  const base = collection(k)
  const out: Array<Scenario> = []
  const add = (verb: string, steps: (name: string, path: string) => ReadonlyArray<Step>) => {
    const name = objectName(k, verb)
    const stored = storedName(k, verb)
    out.push({ name: `${k.kind} ${verb}`, group: k.kind, steps: steps(name, `${base}/${stored}`) })
  }
  const body = (name: string, extra: Record<string, unknown> = {}) => {
    const o = k.object(name)
    return { apiVersion: k.apiVersion, kind: k.kind, ...o, ...extra }
  }
  const create = (name: string, query: Record<string, string> = manager): Step => ({
    method: "POST", path: base, query, body: body(name)
  })
  const get = (path: string): Step => ({ method: "GET", path, ...view(k) })
  // Deleting a kind whose default propagation orphans (ReplicationController, Job) leaves the object, carrying the
  // `orphan` finalizer, until the garbage collector has orphaned its dependents: kube-apiserver's GC takes its own
  // while (a loaded CI machine saw the finalizer still there at the next GET), so what is compared is after it.
  const afterDelete = (path: string): Step => ({
    ...get(path),
    until: (o) => o.status === 404 || !finalizersOf(o.body).includes("orphan")
  })
  const metadata = (name: string) => k.object(name)["metadata"] as Record<string, unknown>

  add("create", (name, path) => [{ ...create(name) }, get(path)])
  add("create-duplicate", (name) => [create(name), create(name)])
  add("get-missing", (_name, path) => [get(`${path}-missing`)])
  add("list-by-name", (name) => [create(name), {
    method: "GET", path: base, query: { fieldSelector: `metadata.name=${storedName(k, "list-by-name")}` }, ...view(k)
  }])
  add("list-by-label", (name) => [create(name), {
    method: "GET", path: base,
    query: { labelSelector: "conformance.effect-kube.dev/case=yes", fieldSelector: `metadata.name=${storedName(k, "list-by-label")}` },
    ...view(k)
  }])
  add("list-limit", (name) => [create(name), {
    method: "GET", path: base, query: { limit: "1", fieldSelector: `metadata.name=${storedName(k, "list-limit")}` }, ...view(k)
  }])
  add("merge-patch", (name, path) => [create(name), {
    method: "PATCH", path, query: manager, contentType: "application/merge-patch+json",
    body: { metadata: { labels: { patched: "merge" } }, ...k.change }, ...view(k)
  }, get(path)])
  add("merge-patch-remove-label", (name, path) => [create(name), {
    method: "PATCH", path, query: manager, contentType: "application/merge-patch+json",
    body: { metadata: { labels: { "conformance.effect-kube.dev/case": null } } }, ...view(k)
  }, get(path)])
  add("json-patch", (name, path) => [create(name), {
    method: "PATCH", path, query: manager, contentType: "application/json-patch+json",
    body: [{ op: "add", path: "/metadata/annotations", value: { patched: "json" } }], ...view(k)
  }, get(path)])
  add("json-patch-test-fails", (name, path) => [create(name), {
    method: "PATCH", path, query: manager, contentType: "application/json-patch+json",
    body: [{ op: "test", path: "/metadata/name", value: "other" }]
  }])
  add("json-patch-bad-path", (name, path) => [create(name), {
    method: "PATCH", path, query: manager, contentType: "application/json-patch+json",
    body: [{ op: "replace", path: "/metadata/nothing/here", value: 1 }]
  }])
  add("strategic-patch", (name, path) => [create(name), {
    method: "PATCH", path, query: manager, contentType: "application/strategic-merge-patch+json",
    body: { metadata: { labels: { patched: "strategic" } }, ...k.change }, ...view(k)
  }, get(path)])
  add("patch-missing", (_name, path) => [{
    method: "PATCH", path: `${path}-missing`, query: manager, body: { metadata: { labels: { a: "b" } } }
  }])
  add("patch-bad-json", (name, path) => [create(name), {
    method: "PATCH", path, query: manager, contentType: "application/merge-patch+json", body: "{not json"
  }])
  add("apply-create", (name, path) => [{
    method: "PATCH", path, query: { fieldManager: "applier" }, contentType: "application/apply-patch+yaml",
    body: body(name), ...view(k)
  }, get(path)])
  add("apply-no-manager", (name, path) => [{
    method: "PATCH", path, contentType: "application/apply-patch+yaml", body: body(name)
  }])
  add("apply-conflict", (name, path) => [create(name), {
    method: "PATCH", path, query: { fieldManager: "other" }, contentType: "application/apply-patch+yaml",
    body: { apiVersion: k.apiVersion, kind: k.kind, metadata: { name: metadata(name)["name"], labels: { "conformance.effect-kube.dev/case": "other" } } }
  }])
  add("apply-force", (name, path) => [create(name), {
    method: "PATCH", path, query: { fieldManager: "other", force: "true" }, contentType: "application/apply-patch+yaml",
    body: { apiVersion: k.apiVersion, kind: k.kind, metadata: { name: metadata(name)["name"], labels: { "conformance.effect-kube.dev/case": "other" } } },
    ...view(k)
  }, get(path)])
  add("apply-shared", (name, path) => [create(name), {
    method: "PATCH", path, query: { fieldManager: "other" }, contentType: "application/apply-patch+yaml",
    body: { apiVersion: k.apiVersion, kind: k.kind, metadata: { name: metadata(name)["name"], labels: { "conformance.effect-kube.dev/case": "yes", extra: "x" } } },
    ...view(k)
  }])
  add("apply-dry-run", (name, path) => [{
    method: "PATCH", path, query: { fieldManager: "applier", dryRun: "All" }, contentType: "application/apply-patch+yaml",
    body: body(name), ...view(k)
  }, get(path)])
  add("update", (name, path) => [create(name), {
    method: "PUT", path, query: manager,
    body: body(name, { metadata: { ...metadata(name), resourceVersion: "{rv}", annotations: { updated: "yes" } } }), ...view(k)
  }, get(path)])
  add("update-stale", (name, path) => [create(name), {
    method: "PATCH", path, query: manager, body: { metadata: { annotations: { bump: "1" } } }, ...view(k)
  }, {
    method: "PUT", path, query: manager,
    body: body(name, { metadata: { ...metadata(name), resourceVersion: "{rv0}" } })
  }])
  add("update-missing", (name, path) => [{
    method: "PUT", path, query: manager, body: body(name)
  }])
  add("update-name-mismatch", (name, path) => [create(name), {
    method: "PUT", path, query: manager,
    body: body(name, { metadata: { ...metadata(name), name: `${String(metadata(name)["name"])}-other`, resourceVersion: "{rv}" } })
  }])
  add("delete", (name, path) => [create(name), { method: "DELETE", path, ...view(k) }, afterDelete(path)])
  add("delete-orphan", (name, path) => [create(name), {
    method: "DELETE", path, body: { kind: "DeleteOptions", apiVersion: "v1", propagationPolicy: "Orphan" }, ...view(k)
  }])
  add("delete-missing", (_name, path) => [{ method: "DELETE", path: `${path}-missing` }])
  add("delete-uid-precondition", (name, path) => [create(name), {
    method: "DELETE", path,
    body: { kind: "DeleteOptions", apiVersion: "v1", preconditions: { uid: "00000000-0000-0000-0000-000000000000" } }
  }])
  add("delete-rv-precondition", (name, path) => [create(name), {
    method: "DELETE", path, body: { kind: "DeleteOptions", apiVersion: "v1", preconditions: { resourceVersion: "1" } }
  }])
  add("delete-dry-run", (name, path) => [create(name), { method: "DELETE", path, query: { dryRun: "All" }, ...view(k) }, get(path)])
  add("delete-collection", (name) => [create(name), {
    method: "DELETE", path: base, query: { fieldSelector: `metadata.name=${storedName(k, "delete-collection")}` }, ...view(k)
  }, {
    method: "GET", path: base, query: { fieldSelector: `metadata.name=${storedName(k, "delete-collection")}` }
  }])
  add("finalizer", (name, path) => [{
    method: "POST", path: base, query: manager,
    body: body(name, { metadata: { ...metadata(name), finalizers: ["conformance.effect-kube.dev/hold"] } })
  }, { method: "DELETE", path, ...view(k) }, afterDelete(path), {
    method: "PATCH", path, query: manager, body: { metadata: { finalizers: null } }, ...view(k)
  }, get(path)])
  // cluster-scoped kinds that take any path segment as a name (RBAC's) keep what they accept: the namespace in the
  // name keeps each run's own
  add("invalid-name", () => [{
    method: "POST", path: base, query: manager,
    body: body("Bad_Name", { metadata: { ...metadata("x"), name: "Bad_Name-{ns}" } })
  }])
  add("long-name", () => [{
    method: "POST", path: base, query: manager,
    body: body("x", { metadata: { ...metadata("x"), name: `${"a".repeat(243)}-{ns}` } })
  }])
  add("missing-name", () => [{
    method: "POST", path: base, query: manager, body: body("x", { metadata: { labels: metadata("x")["labels"] } })
  }])
  add("invalid-label", (name) => [{
    method: "POST", path: base, query: manager,
    body: body(name, { metadata: { ...metadata(name), labels: { "bad key!": "v" } } })
  }])
  add("invalid-label-value", (name) => [{
    method: "POST", path: base, query: manager,
    body: body(name, { metadata: { ...metadata(name), labels: { ok: "bad value!" } } })
  }])
  add("invalid-annotation", (name) => [{
    method: "POST", path: base, query: manager,
    body: body(name, { metadata: { ...metadata(name), annotations: { "Bad/Key/Two": "v" } } })
  }])
  add("generate-name", (name) => [{
    method: "POST", path: base, query: manager,
    body: body(name, { metadata: { ...metadata(name), name: undefined, generateName: `${String(metadata(name)["name"])}-` } }),
    ...view(k)
  }])
  add("wrong-kind", (name) => [{ method: "POST", path: base, query: manager, body: body(name, { kind: "Wrong" }) }])
  add("wrong-api-version", (name) => [{
    method: "POST", path: base, query: manager, body: body(name, { apiVersion: "nothing.example.com/v9" })
  }])
  add("not-json", () => [{ method: "POST", path: base, query: manager, body: "{not json", contentType: "application/json" }])
  add("unsupported-media-type", (name) => [{
    method: "POST", path: base, query: manager, body: JSON.stringify(body(name)), contentType: "text/plain"
  }])
  add("dry-run", (name, path) => [{ ...create(name, { ...manager, dryRun: "All" }), ...view(k) }, get(path)])
  add("bad-dry-run", (name) => [create(name, { ...manager, dryRun: "Some" })])
  add("strict-unknown-field", (name) => [{
    method: "POST", path: base, query: { ...manager, fieldValidation: "Strict" }, body: body(name, { bogus: 1 })
  }])
  add("warn-unknown-field", (name, path) => [{
    method: "POST", path: base, query: { ...manager, fieldValidation: "Warn" }, body: body(name, { bogus: 1 }), ...view(k)
  }, get(path)])
  add("ignore-unknown-field", (name) => [{
    method: "POST", path: base, query: { ...manager, fieldValidation: "Ignore" }, body: body(name, { bogus: 1 }), ...view(k)
  }])
  add("bad-field-validation", (name) => [create(name, { ...manager, fieldValidation: "Loud" })])
  add("duplicate-field", (name) => [{
    method: "POST", path: base, query: { ...manager, fieldValidation: "Strict" },
    body: JSON.stringify(body(name)).replace(/^\{/, `{"metadata":{"name":"dup"},`)
  }])
  add("table", (name) => [create(name), {
    method: "GET", path: base, query: { fieldSelector: `metadata.name=${storedName(k, "table")}` },
    accept: "application/json;as=Table;v=v1;g=meta.k8s.io",
    ...(k.volatile ? { pick: ["kind", "apiVersion", "columnDefinitions", "rows.object.metadata.name"] } : {})
  }])
  add("table-get", (name, path) => [create(name), {
    method: "GET", path, query: { includeObject: "None" }, accept: "application/json;as=Table;v=v1;g=meta.k8s.io",
    ...(k.volatile ? { pick: ["kind", "apiVersion", "columnDefinitions"] } : {})
  }])
  add("metadata-get", (name, path) => [create(name), {
    method: "GET", path, accept: "application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io",
    ...(k.volatile ? { pick: ["kind", "apiVersion", "metadata.name", "metadata.labels"] } : {})
  }])
  add("metadata-list", (name) => [create(name), {
    method: "GET", path: base, query: { fieldSelector: `metadata.name=${storedName(k, "metadata-list")}` },
    accept: "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io",
    ...(k.volatile ? { pick: ["kind", "apiVersion", "items.metadata.name", "items.metadata.labels"] } : {})
  }])
  add("watch-initial-events", (name) => [create(name), {
    method: "GET", path: base,
    query: {
      watch: "true", sendInitialEvents: "true", resourceVersionMatch: "NotOlderThan", allowWatchBookmarks: "true",
      fieldSelector: `metadata.name=${storedName(k, "watch-initial-events")}`
    },
    watchEvents: 2, pick: ["type", "object.kind", "object.metadata.name", "object.metadata.annotations"]
  }])
  add("watch-from-rv", (name, path) => [create(name), {
    method: "GET", path: base,
    query: { watch: "true", resourceVersion: "{rv}", fieldSelector: `metadata.name=${storedName(k, "watch-from-rv")}` },
    watchEvents: 0, watchMs: 300
  }, { method: "DELETE", path, statusOnly: true }])
  add("watch-bad-rv", () => [{
    method: "GET", path: base, query: { watch: "true", resourceVersion: "abc" }, watchMs: 500
  }])
  add("list-bad-selector", () => [{ method: "GET", path: base, query: { labelSelector: "a in (" } }])
  add("list-bad-field-selector", () => [{ method: "GET", path: base, query: { fieldSelector: "nothing.here=1" } }])
  add("list-bad-limit", () => [{ method: "GET", path: base, query: { limit: "-1", fieldSelector: "metadata.name=none" } }])
  add("list-rv-match-without-rv", () => [{ method: "GET", path: base, query: { resourceVersionMatch: "Exact" } }])
  add("list-bad-continue", () => [{ method: "GET", path: base, query: { continue: "garbage" } }])
  if (k.namespaced) {
    add("namespace-mismatch", (name) => [{
      method: "POST", path: base, query: manager,
      body: body(name, { metadata: { ...metadata(name), namespace: "default" } })
    }])
    add("missing-namespace", (name) => [{
      method: "POST", path: base.replace("{ns}", "{ns}-absent"), query: manager, body: body(name)
    }])
  }
  return out
}

export const scenarios: ReadonlyArray<Scenario> = [...kinds.flatMap(perKind), ...discoveryScenarios, ...celScenarios, ...namedScenarios, ...controllerScenarios, ...crdVersionScenarios, ...kubectlScenarios]

/**
 * Differences the conformance suite (test/conformance) found between the fake and kube-apiserver v1.35, each checked
 * here through the fake's HTTP handler with what the real server answered.
 */
import { afterAll, assert, describe, it } from "@effect/vitest"
import { FakeCluster } from "@effect-kube/testing"

const server = FakeCluster.makeServer()
afterAll(() => server.close())

const send = async (method: string, path: string, body?: unknown) => {
  const res = await server.handle(
    new Request(`http://fake.local${path}`, {
      method,
      headers: body === undefined ? {} : { "Content-Type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
  )
  return { status: res.status, body: await res.json() as Record<string, any> }
}

const sendAs = async (method: string, path: string, body: string | undefined, contentType: string, accept = "application/json") => {
  const res = await server.handle(
    new Request(`http://fake.local${path}`, { method, headers: { "Content-Type": contentType, Accept: accept }, body: body ?? null })
  )
  return { status: res.status, body: await res.json() as Record<string, any> }
}

const configMap = (name: string) => ({ apiVersion: "v1", kind: "ConfigMap", metadata: { name }, data: { a: "1" } })

describe("FakeCluster answers query options as kube-apiserver does", () => {
  it("dryRun takes only All: anything else is a 422 naming the options kind, and nothing is stored", async () => {
    const created = await send("POST", "/api/v1/namespaces/default/configmaps?dryRun=Some", configMap("dry"))
    assert.strictEqual(created.status, 422)
    assert.strictEqual(
      created.body.message,
      `CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: ["Some"]: supported values: "All"`
    )
    assert.deepStrictEqual(created.body.details, {
      group: "meta.k8s.io",
      kind: "CreateOptions",
      causes: [{ reason: "FieldValueNotSupported", message: `Unsupported value: ["Some"]: supported values: "All"`, field: "dryRun" }]
    })
    assert.strictEqual((await send("GET", "/api/v1/namespaces/default/configmaps/dry")).status, 404)
    const deleted = await send("DELETE", "/api/v1/namespaces/default/configmaps/dry?dryRun=Maybe")
    assert.strictEqual(deleted.body.details.kind, "DeleteOptions")
  })

  it("a list's resourceVersionMatch without a resourceVersion is a 422; a watch-list's is not", async () => {
    const listed = await send("GET", "/api/v1/namespaces/default/configmaps?resourceVersionMatch=Exact")
    assert.strictEqual(listed.status, 422)
    assert.strictEqual(
      listed.body.message,
      `ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided`
    )
    assert.notProperty(listed.body.details, "name")
    const withRv = await send("GET", "/api/v1/namespaces/default/configmaps?resourceVersionMatch=NotOlderThan&resourceVersion=0")
    assert.strictEqual(withRv.status, 200)
  })

  it("a negative limit lists everything; a filtered list says continue only when another object matches", async () => {
    for (const name of ["lim-a", "lim-b", "other"]) {
      assert.strictEqual((await send("POST", "/api/v1/namespaces/default/configmaps", configMap(name))).status, 201)
    }
    const all = await send("GET", "/api/v1/namespaces/default/configmaps?limit=-1")
    assert.strictEqual(all.status, 200)
    assert.isAtLeast(all.body.items.length, 3)
    const one = await send("GET", "/api/v1/namespaces/default/configmaps?limit=1&fieldSelector=metadata.name%3Dlim-a")
    assert.deepStrictEqual(one.body.items.map((i: any) => i.metadata.name), ["lim-a"])
    assert.notProperty(one.body.metadata, "continue")
    const first = await send("GET", "/api/v1/namespaces/default/configmaps?limit=1&fieldSelector=metadata.name!%3Dother")
    assert.isString(first.body.metadata.continue)
  })

  it("the Status of an object without a name has no details.name (Go's omitempty)", async () => {
    const nameless = await send("POST", "/api/v1/namespaces/default/configmaps", { apiVersion: "v1", kind: "ConfigMap", metadata: {} })
    assert.strictEqual(nameless.status, 422)
    assert.notProperty(nameless.body.details, "name")
  })
})

describe("FakeCluster writes as kube-apiserver v1.35's registries do", () => {
  it("a PUT without a resourceVersion creates the kinds that allow it (Service, Lease), not the others", async () => {
    const service = { apiVersion: "v1", kind: "Service", metadata: { name: "put-made" }, spec: { ports: [{ port: 80 }] } }
    assert.strictEqual((await send("PUT", "/api/v1/namespaces/default/services/put-made", service)).status, 201)
    const lease = { apiVersion: "coordination.k8s.io/v1", kind: "Lease", metadata: { name: "put-made" }, spec: {} }
    assert.strictEqual((await send("PUT", "/apis/coordination.k8s.io/v1/namespaces/default/leases/put-made", lease)).status, 201)
    const missing = await send("PUT", "/api/v1/namespaces/default/configmaps/put-missing", configMap("put-missing"))
    assert.strictEqual(missing.status, 404)
  })

  it("a DELETE answers the deleted object for the kinds whose registry returns it, a Status for the rest", async () => {
    await send("POST", "/api/v1/namespaces/default/serviceaccounts", { metadata: { name: "gone" } })
    const sa = await send("DELETE", "/api/v1/namespaces/default/serviceaccounts/gone")
    assert.strictEqual(sa.body.kind, "ServiceAccount")
    await send("POST", "/api/v1/namespaces/default/configmaps", configMap("gone"))
    assert.strictEqual((await send("DELETE", "/api/v1/namespaces/default/configmaps/gone")).body.kind, "Status")
  })

  it("PodTemplates keep a generation; emptied labels are left out; a gated pod is created SchedulingGated", async () => {
    const template = {
      metadata: { name: "t", labels: { a: "b" } },
      template: { spec: { containers: [{ name: "c", image: "i" }] } }
    }
    const created = await send("POST", "/api/v1/namespaces/default/podtemplates", template)
    assert.strictEqual(created.body.metadata.generation, 1)
    const patched = await sendAs(
      "PATCH", "/api/v1/namespaces/default/podtemplates/t", JSON.stringify({ metadata: { labels: { a: null } } }),
      "application/merge-patch+json"
    )
    assert.notProperty(patched.body.metadata, "labels")
    const pod = await send("POST", "/api/v1/namespaces/default/pods", {
      metadata: { name: "gated" },
      spec: { schedulingGates: [{ name: "hold" }], containers: [{ name: "c", image: "i" }] }
    })
    const [condition] = pod.body.status.conditions
    assert.deepInclude(condition, {
      type: "PodScheduled", status: "False", lastProbeTime: null, reason: "SchedulingGated",
      message: "Scheduling is blocked due to non-empty scheduling gates"
    })
  })

  it("a ServiceAccount's Table is Name and Age; a watch's unparsable resourceVersion is a reasonless 500; a 415 has no details", async () => {
    await send("POST", "/api/v1/namespaces/default/serviceaccounts", { metadata: { name: "printed" } })
    const table = await sendAs("GET", "/api/v1/namespaces/default/serviceaccounts/printed", undefined, "application/json", "application/json;as=Table;v=v1;g=meta.k8s.io")
    assert.deepStrictEqual(table.body.columnDefinitions.map((c: any) => c.name), ["Name", "Age"])
    const watch = await send("GET", "/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=abc")
    assert.strictEqual(watch.status, 500)
    assert.notProperty(watch.body, "reason")
    const unknown = await sendAs("POST", "/api/v1/namespaces/default/configmaps", "{}", "text/plain")
    assert.strictEqual(unknown.status, 415)
    assert.notProperty(unknown.body, "details")
  })
})

describe("FakeCluster defaults as kube-apiserver v1.35 does", () => {
  it("fills the defaults of StorageClass, PriorityClass, HPA, NetworkPolicy, EndpointSlice, ValidatingAdmissionPolicy and LimitRange", async () => {
    const sc = await send("POST", "/apis/storage.k8s.io/v1/storageclasses", { metadata: { name: "sc" }, provisioner: "x" })
    assert.deepInclude(sc.body, { reclaimPolicy: "Delete", volumeBindingMode: "Immediate" })
    const pc = await send("POST", "/apis/scheduling.k8s.io/v1/priorityclasses", { metadata: { name: "pc" }, value: 1 })
    assert.strictEqual(pc.body.preemptionPolicy, "PreemptLowerPriority")
    const hpa = await send("POST", "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers", {
      metadata: { name: "h" },
      spec: { scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: "d" }, maxReplicas: 3 }
    })
    assert.strictEqual(hpa.body.spec.minReplicas, 1)
    assert.deepStrictEqual(hpa.body.spec.metrics, [
      { type: "Resource", resource: { name: "cpu", target: { type: "Utilization", averageUtilization: 80 } } }
    ])
    const np = await send("POST", "/apis/networking.k8s.io/v1/namespaces/default/networkpolicies", {
      metadata: { name: "np" }, spec: { podSelector: {}, egress: [{}] }
    })
    assert.deepStrictEqual(np.body.spec.policyTypes, ["Ingress", "Egress"])
    const slice = await send("POST", "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices", {
      metadata: { name: "s" }, addressType: "IPv4", endpoints: [{ addresses: ["10.0.0.1"] }], ports: [{ port: 80 }]
    })
    assert.deepStrictEqual(slice.body.ports, [{ name: "", protocol: "TCP", port: 80 }])
    assert.deepStrictEqual(slice.body.endpoints[0].conditions, {})
    const vap = await send("POST", "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies", {
      metadata: { name: "vap" },
      spec: {
        matchConstraints: { resourceRules: [{ apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["pods"] }] },
        validations: [{ expression: "true" }]
      }
    })
    assert.strictEqual(vap.body.spec.failurePolicy, "Fail")
    assert.deepInclude(vap.body.spec.matchConstraints, { namespaceSelector: {}, objectSelector: {}, matchPolicy: "Equivalent" })
    assert.strictEqual(vap.body.spec.matchConstraints.resourceRules[0].scope, "*")
    const lr = await send("POST", "/api/v1/namespaces/default/limitranges", {
      metadata: {}, spec: { limits: [{ type: "Container", max: { cpu: "2" }, min: { memory: "1Mi" } }] }
    })
    // a nameless LimitRange is named by a uid, as its registry does
    assert.match(lr.body.metadata.name, /^[0-9a-f-]{36}$/)
    assert.deepInclude(lr.body.spec.limits[0], { default: { cpu: "2" }, defaultRequest: { cpu: "2", memory: "1Mi" } })
  })

  it("an RC takes its template's labels; a DaemonSet counts its template generations; v1 Endpoints warn on every request", async () => {
    const rc = await send("POST", "/api/v1/namespaces/default/replicationcontrollers", {
      metadata: { name: "rc" },
      spec: { replicas: 0, template: { metadata: { labels: { app: "rc" } }, spec: { containers: [{ name: "c", image: "i" }] } } }
    })
    assert.deepStrictEqual(rc.body.metadata.labels, { app: "rc" })
    assert.deepStrictEqual(rc.body.spec.selector, { app: "rc" })
    const template = (image: string) => ({ metadata: { labels: { app: "ds" } }, spec: { containers: [{ name: "c", image }] } })
    const ds = await send("POST", "/apis/apps/v1/namespaces/default/daemonsets", {
      metadata: { name: "ds" }, spec: { selector: { matchLabels: { app: "ds" } }, template: template("one") }
    })
    assert.strictEqual(ds.body.metadata.annotations["deprecated.daemonset.template.generation"], "1")
    const changed = await sendAs(
      "PATCH", "/apis/apps/v1/namespaces/default/daemonsets/ds",
      JSON.stringify({ spec: { template: template("two") } }), "application/merge-patch+json"
    )
    assert.strictEqual(changed.body.metadata.annotations["deprecated.daemonset.template.generation"], "2")
    const missing = await server.handle(new Request("http://fake.local/api/v1/namespaces/default/endpoints/none"))
    assert.strictEqual(missing.status, 404)
    assert.strictEqual(
      missing.headers.get("warning"),
      `299 - "v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice"`
    )
  })
})

describe("FakeCluster decodes spec.replicas as the int32 it is", () => {
  it("a replica count beyond int32 is the decoder's 400 and nothing is stored (the fuzzer's case: the controller made pods without end)", async () => {
    const replicaSet = {
      apiVersion: "apps/v1",
      kind: "ReplicaSet",
      metadata: { name: "huge" },
      spec: {
        replicas: 2 ** 40,
        selector: { matchLabels: { app: "huge" } },
        template: { metadata: { labels: { app: "huge" } }, spec: { containers: [{ name: "c", image: "i" }] } }
      }
    }
    const created = await send("POST", "/apis/apps/v1/namespaces/default/replicasets", replicaSet)
    assert.strictEqual(created.status, 400)
    assert.strictEqual(
      created.body.message,
      `ReplicaSet in version "v1" cannot be handled as a ReplicaSet: json: cannot unmarshal number 1099511627776 into Go struct field ReplicaSetSpec.spec.replicas of type int32`
    )
    assert.strictEqual((await send("GET", "/apis/apps/v1/namespaces/default/replicasets/huge")).status, 404)
    const small = await send("POST", "/apis/apps/v1/namespaces/default/replicasets", { ...replicaSet, spec: { ...replicaSet.spec, replicas: 0 } })
    assert.strictEqual(small.status, 201)
    const patched = await sendAs(
      "PATCH", "/apis/apps/v1/namespaces/default/replicasets/huge", JSON.stringify({ spec: { replicas: 2 ** 31 } }),
      "application/merge-patch+json"
    )
    assert.strictEqual(patched.status, 400)
  })
})

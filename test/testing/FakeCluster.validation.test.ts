/**
 * FakeCluster's validation of the kinds whose rules are easy to get wrong, over real HTTP
 * (`FakeCluster.listen`, `fetch`), checked against kube-apiserver v1.35's answers: status,
 * reason, the message and each cause, as pkg/apis/{rbac,core}/validation and
 * apiextensions-apiserver word them. Also the request's options (`fieldValidation`) and
 * the fields a JSON or YAML body repeats.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { FakeCluster } from "@effect-kube/testing"

interface Answer {
  readonly status: number
  readonly body: Record<string, any>
  readonly warning: string | null
}

interface Cause {
  readonly reason: string
  readonly field: string
  readonly message: string
}

let listening: FakeCluster.Listening

beforeAll(async () => {
  listening = await FakeCluster.listen(FakeCluster.makeServer())
})

afterAll(() => listening.close())

const send = async (
  method: string,
  path: string,
  body?: unknown,
  contentType = method === "PATCH" ? "application/merge-patch+json" : "application/json"
): Promise<Answer> => {
  const response = await fetch(`${listening.url}${path}`, {
    method,
    headers: { "content-type": contentType },
    ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) })
  })
  const text = await response.text()
  const parsed = text === "" ? {} : JSON.parse(text)
  return { status: response.status, body: parsed, warning: response.headers.get("warning") }
}

const ok = async (answer: Promise<Answer>): Promise<Record<string, any>> => {
  const { body, status } = await answer
  assert.isBelow(status, 300, JSON.stringify(body))
  return body
}

/** A 422 Invalid: its message, and its causes as `field: message`. */
const invalid = async (answer: Promise<Answer>, message: string, causes?: ReadonlyArray<string>) => {
  const { body, status } = await answer
  assert.strictEqual(status, 422, JSON.stringify(body))
  assert.strictEqual(body.reason, "Invalid")
  assert.strictEqual(body.message, message)
  if (causes !== undefined) {
    assert.deepStrictEqual((body.details.causes as ReadonlyArray<Cause>).map((c) => `${c.field}: ${c.message}`), causes)
  }
  return body
}

const rbac = "/apis/rbac.authorization.k8s.io/v1"
const roleRef = { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "reader" }

const crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
const version = (name: string, storage: boolean) => ({
  name,
  served: true,
  storage,
  schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } }
})
const crd = (name: string, spec: Record<string, unknown>) => ({
  metadata: { name },
  spec: {
    group: "example.com",
    scope: "Namespaced",
    names: { plural: "widgets", kind: "Widget" },
    versions: [version("v1", true)],
    ...spec
  }
})

const goVersion = (name: string, storage: boolean) =>
  `apiextensions.CustomResourceDefinitionVersion{Name:"${name}", Served:true, Storage:${storage}, Deprecated:false, ` +
  `DeprecationWarning:(*string)(nil), Schema:(*apiextensions.CustomResourceValidation)(0xc000a3c000), ` +
  `Subresources:(*apiextensions.CustomResourceSubresources)(nil), ` +
  `AdditionalPrinterColumns:[]apiextensions.CustomResourceColumnDefinition(nil), ` +
  `SelectableFields:[]apiextensions.SelectableField(nil)}`

describe("FakeCluster validation as kube-apiserver v1.35 answers", () => {
  it("RoleBinding and ClusterRoleBinding: roleRef is required and cannot change", async () => {
    const bindings = `${rbac}/namespaces/default/rolebindings`
    await invalid(
      send("POST", bindings, { metadata: { name: "bad" }, roleRef: { apiGroup: "example.com", kind: "Thing" } }),
      `RoleBinding.rbac.authorization.k8s.io "bad" is invalid: [roleRef.apiGroup: Unsupported value: "example.com": ` +
        `supported values: "rbac.authorization.k8s.io", roleRef.kind: Unsupported value: "Thing": supported values: ` +
        `"Role", "ClusterRole", roleRef.name: Required value]`
    )
    // an apiGroup left out is defaulted
    const created = await ok(send("POST", bindings, {
      metadata: { name: "readers" },
      roleRef: { kind: "Role", name: "reader" },
      subjects: [{ kind: "User", name: "jane" }]
    }))
    assert.deepStrictEqual(created.roleRef, roleRef)
    const changed =
      `RoleBinding.rbac.authorization.k8s.io "readers" is invalid: roleRef: Invalid value: rbac.RoleRef{APIGroup:` +
      `"rbac.authorization.k8s.io", Kind:"ClusterRole", Name:"admin"}: cannot change roleRef`
    await invalid(
      send("PUT", `${bindings}/readers`, {
        metadata: { name: "readers" },
        roleRef: { ...roleRef, kind: "ClusterRole", name: "admin" }
      }),
      changed,
      [changed.slice(changed.indexOf("roleRef: "))]
    )
    await invalid(send("PATCH", `${bindings}/readers`, { roleRef: { kind: "ClusterRole", name: "admin" } }), changed)
    // the subjects may change
    await ok(send("PATCH", `${bindings}/readers`, { subjects: [{ kind: "Group", name: "devs" }] }))

    await invalid(
      send("POST", `${rbac}/clusterrolebindings`, {
        metadata: { name: "cluster-readers" },
        roleRef,
        subjects: [{ kind: "ServiceAccount", name: "robot" }]
      }),
      `ClusterRoleBinding.rbac.authorization.k8s.io "cluster-readers" is invalid: [roleRef.kind: Unsupported value: ` +
        `"Role": supported values: "ClusterRole", subjects[0].namespace: Required value]`
    )
    await ok(send("POST", `${rbac}/clusterrolebindings`, {
      metadata: { name: "cluster-readers" },
      roleRef: { ...roleRef, kind: "ClusterRole", name: "view" }
    }))
    await invalid(
      send("PATCH", `${rbac}/clusterrolebindings/cluster-readers`, { roleRef: { name: "edit" } }),
      `ClusterRoleBinding.rbac.authorization.k8s.io "cluster-readers" is invalid: roleRef: Invalid value: ` +
        `rbac.RoleRef{APIGroup:"rbac.authorization.k8s.io", Kind:"ClusterRole", Name:"edit"}: cannot change roleRef`
    )
  })

  it("PersistentVolumeClaim: access modes and storage required, the spec immutable but a bound claim's size", async () => {
    const claims = "/api/v1/namespaces/default/persistentvolumeclaims"
    await invalid(
      send("POST", claims, { metadata: { name: "data" }, spec: {} }),
      `PersistentVolumeClaim "data" is invalid: [spec.accessModes: Required value: at least 1 access mode is required, ` +
        `spec.resources[storage]: Required value]`
    )
    await invalid(
      send("POST", claims, {
        metadata: { name: "data" },
        spec: { accessModes: ["ReadWriteSometimes"], resources: { requests: { storage: "0" } } }
      }),
      `PersistentVolumeClaim "data" is invalid: [spec.accessModes: Unsupported value: "ReadWriteSometimes": supported ` +
        `values: "ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod", spec.resources[storage]: ` +
        `Invalid value: "0": must be greater than zero]`
    )
    await ok(send("POST", claims, {
      metadata: { name: "data" },
      spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "1Gi" } } }
    }))
    const immutable =
      "spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims"
    const modes = await invalid(
      send("PATCH", `${claims}/data`, { spec: { accessModes: ["ReadWriteMany"] } }),
      // the cmp.Diff of the two specs, as go-cmp's reporter writes it (with regular spaces: it picks them at random)
      `PersistentVolumeClaim "data" is invalid: spec: Forbidden: ${immutable}\n` +
        `  core.PersistentVolumeClaimSpec{\n` +
        `  \tAccessModes: []core.PersistentVolumeAccessMode{\n` +
        `- \t\t"ReadWriteOnce",\n` +
        `+ \t\t"ReadWriteMany",\n` +
        `  \t},\n` +
        `  \tSelector:  nil,\n` +
        `  \tResources: {Requests: {s"storage": {i: {...}, s: "1Gi", Format: "BinarySI"}}},\n` +
        `  \t... // 6 identical fields\n` +
        `  }\n`
    )
    assert.strictEqual(modes.details.causes[0].field, "spec")
    // a claim not bound yet cannot be resized either
    const pending = await send("PATCH", `${claims}/data`, { spec: { resources: { requests: { storage: "2Gi" } } } })
    assert.strictEqual(pending.status, 422)
    assert.include(pending.body.message, immutable)

    await ok(send("PATCH", `${claims}/data/status`, { status: { phase: "Bound", capacity: { storage: "1Gi" } } }))
    await ok(send("PATCH", `${claims}/data`, { spec: { resources: { requests: { storage: "3Gi" } } } }))
    // only the storage request: not limits
    const limits = await send("PATCH", `${claims}/data`, { spec: { resources: { limits: { storage: "5Gi" } } } })
    assert.strictEqual(limits.status, 422)
    assert.include(limits.body.message, immutable)
    // back down to above what the volume has (recovering from a failed expansion), but not to it
    await ok(send("PATCH", `${claims}/data`, { spec: { resources: { requests: { storage: "2Gi" } } } }))
    await invalid(
      send("PATCH", `${claims}/data`, { spec: { resources: { requests: { storage: "1Gi" } } } }),
      `PersistentVolumeClaim "data" is invalid: spec.resources.requests.storage: Forbidden: field can not be less than ` +
        `status.capacity`
    )
  })

  it("events.k8s.io/v1 Event: the required fields on create, fields that never change on update", async () => {
    const events = "/apis/events.k8s.io/v1/namespaces/default/events"
    await invalid(
      send("POST", events, { metadata: { name: "bare" } }),
      `Event.events.k8s.io "bare" is invalid: [eventTime: Required value, type: Invalid value: "": has invalid value: ]`
    )
    const eventTime = "2026-12-01T10:00:00.000000Z"
    const qualified = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with " +
      "an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is " +
      "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
    await invalid(
      send("POST", events, {
        metadata: { name: "unreported" },
        eventTime,
        type: "Sideways",
        deprecatedCount: 3,
        series: { count: 1 }
      }),
      `Event.events.k8s.io "unreported" is invalid: [reportingController: Required value, reportingController: Invalid ` +
        `value: "": name part must be non-empty, reportingController: Invalid value: "": ${qualified}, ` +
        `reportingInstance: Required value, action: Required value, reason: Required value, series.count: Invalid ` +
        `value: "": should be at least 2, series.lastObservedTime: Required value, type: Invalid value: "": has ` +
        `invalid value: Sideways, count: Invalid value: "": needs to be unset]`
    )
    const event = {
      metadata: { name: "scaled" },
      eventTime,
      type: "Normal",
      reason: "Scaled",
      action: "Scale",
      note: "scaled to 3",
      reportingController: "example.com/scaler",
      reportingInstance: "scaler-0",
      regarding: { kind: "Deployment", name: "web", namespace: "default" }
    }
    await ok(send("POST", events, event))
    // reason is checked twice by the API server: two causes, one message
    await invalid(
      send("PATCH", `${events}/scaled`, { reason: "Other", action: "Other" }),
      `Event.events.k8s.io "scaled" is invalid: [reason: Invalid value: "Other": field is immutable, action: Invalid ` +
        `value: "Other": field is immutable]`,
      [
        `reason: Invalid value: "Other": field is immutable`,
        `reason: Invalid value: "Other": field is immutable`,
        `action: Invalid value: "Other": field is immutable`
      ]
    )
    // the same instant written in another zone is no change (and is kept in UTC); labels may change
    const relabelled = await ok(
      send("PATCH", `${events}/scaled`, {
        eventTime: "2026-12-01T11:00:00.000000+01:00",
        metadata: { labels: { a: "b" } }
      })
    )
    assert.strictEqual(relabelled.eventTime, eventTime)
    // a struct's new value is the internal type's %#v, a time its String, a nil pointer "null"
    await invalid(
      send("PATCH", `${events}/scaled`, {
        regarding: { kind: "Deployment", name: "api" },
        deprecatedLastTimestamp: "2026-12-01T10:30:00Z",
        related: null
      }),
      `Event.events.k8s.io "scaled" is invalid: [involvedObject: Invalid value: core.ObjectReference{Kind:"Deployment", ` +
        `Namespace:"default", Name:"api", UID:"", APIVersion:"", ResourceVersion:"", FieldPath:""}: field is immutable, ` +
        `lastTimestamp: Invalid value: 2026-12-01 10:30:00 +0000 UTC: field is immutable]`
    )
    await invalid(
      send("PATCH", `${events}/scaled`, { related: { kind: "Pod", name: "web-1" } }),
      `Event.events.k8s.io "scaled" is invalid: related: Invalid value: core.ObjectReference{Kind:"Pod", Namespace:"", ` +
        `Name:"web-1", UID:"", APIVersion:"", ResourceVersion:"", FieldPath:""}: field is immutable`
    )
  })

  it("CustomResourceDefinition: named <plural>.<group>, its names, scope and versions", async () => {
    await invalid(
      send("POST", crds, crd("widgets.wrong.io", {})),
      `CustomResourceDefinition.apiextensions.k8s.io "widgets.wrong.io" is invalid: metadata.name: Invalid value: ` +
        `"widgets.wrong.io": must be spec.names.plural+"."+spec.group`
    )
    const bad = await invalid(
      send("POST", crds, crd("widgets.example.com", {
        scope: "Everywhere",
        names: { plural: "widgets", categories: ["All_Things"] },
        versions: [version("v1", true), version("v2", true)]
      })),
      `CustomResourceDefinition.apiextensions.k8s.io "widgets.example.com" is invalid: [spec.scope: Unsupported value: ` +
        `"Everywhere": supported values: "Cluster", "Namespaced", spec.versions: Invalid value: ` +
        // %#v of the internal versions; the address of a set pointer is the fake's own (the server's cannot be known)
        `[]apiextensions.CustomResourceDefinitionVersion{${goVersion("v1", true)}, ${goVersion("v2", true)}}: must have ` +
        `exactly one version marked as storage version, ` +
        `spec.names.singular: Required value, spec.names.kind: Required value, spec.names.listKind: Required value, ` +
        `spec.names.categories[0]: Invalid value: "All_Things": a DNS-1035 label must consist of lower case alphanumeric ` +
        `characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  ` +
        `or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')]`
    )
    assert.deepStrictEqual(bad.details.causes.map((c: Cause) => c.reason), [
      "FieldValueNotSupported",
      "FieldValueInvalid",
      "FieldValueRequired",
      "FieldValueRequired",
      "FieldValueRequired",
      "FieldValueInvalid"
    ])
    await invalid(
      send("POST", crds, crd("widgets.example.com", { versions: [version("v1", false)] })),
      `CustomResourceDefinition.apiextensions.k8s.io "widgets.example.com" is invalid: spec.versions: Invalid value: ` +
        `[]apiextensions.CustomResourceDefinitionVersion{${goVersion("v1", false)}}: must have exactly one version marked ` +
        `as storage version`
    )
    // a version that is not served is allowed (there is no rule that one must be)
    await ok(send("POST", crds, crd("widgets.example.com", { versions: [{ ...version("v1", true), served: false }] })))
    await invalid(
      send("PATCH", `${crds}/widgets.example.com`, { spec: { group: "example.org" } }),
      `CustomResourceDefinition.apiextensions.k8s.io "widgets.example.com" is invalid: [metadata.name: Invalid value: ` +
        `"widgets.example.com": must be spec.names.plural+"."+spec.group, spec.group: Invalid value: "example.org": ` +
        `field is immutable]`
    )
  })

  it("CustomResourceDefinition: scope and kind are fixed once established, not before", async () => {
    await ok(send("POST", crds, crd("gadgets.example.com", { names: { plural: "gadgets", kind: "Gadget" } })))
    const established = async () => {
      for (let i = 0; i < 100; i++) {
        const live = await ok(send("GET", `${crds}/gadgets.example.com`))
        const conditions: ReadonlyArray<{ type: string; status: string }> = live.status?.conditions ?? []
        if (conditions.some((c) => c.type === "Established" && c.status === "True")) return
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
      assert.fail("the CRD never became Established")
    }
    await established()
    await invalid(
      send("PATCH", `${crds}/gadgets.example.com`, { spec: { scope: "Cluster", names: { kind: "Gizmo" } } }),
      `CustomResourceDefinition.apiextensions.k8s.io "gadgets.example.com" is invalid: [spec.scope: Invalid value: ` +
        `"Cluster": field is immutable, spec.names.kind: Invalid value: "Gizmo": field is immutable]`
    )
    // without the CRD controller nothing establishes it, and both may change
    const unestablished = await FakeCluster.listen(FakeCluster.makeServer({ controllers: { crd: false } }))
    try {
      const post = await fetch(`${unestablished.url}${crds}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(crd("gadgets.example.com", { names: { plural: "gadgets", kind: "Gadget" } }))
      })
      assert.strictEqual(post.status, 201)
      const patched = await fetch(`${unestablished.url}${crds}/gadgets.example.com`, {
        method: "PATCH",
        headers: { "content-type": "application/merge-patch+json" },
        body: JSON.stringify({ spec: { scope: "Cluster", names: { kind: "Gizmo" } } })
      })
      assert.strictEqual(patched.status, 200, await patched.clone().text())
      const body = await patched.json() as { spec: { scope: string; names: { kind: string } } }
      assert.deepStrictEqual([body.spec.scope, body.spec.names.kind], ["Cluster", "Gizmo"])
    } finally {
      await unestablished.close()
    }
  })

  const pods = "/api/v1/namespaces/default/pods"
  const strategic = "application/strategic-merge-patch+json"
  /** A strategic merge patch of one container of a list (through `path`, the resize subresource or the pod). */
  const resizeTo = (path: string, list: "containers" | "initContainers", container: Record<string, unknown>) =>
    send("PATCH", path, { spec: { [list]: [container] } }, strategic)

  it("ephemeral containers: not on create, only by their subresource, restricted, never changed or removed", async () => {
    await invalid(
      send("POST", pods, {
        metadata: { name: "early" },
        spec: {
          containers: [{ name: "app", image: "nginx" }],
          ephemeralContainers: [{ name: "debug", image: "busybox" }]
        }
      }),
      `Pod "early" is invalid: spec.ephemeralContainers: Forbidden: cannot be set on create`
    )
    await ok(send("POST", pods, {
      metadata: { name: "debugged" },
      spec: {
        initContainers: [{ name: "setup", image: "busybox" }],
        containers: [{ name: "app", image: "nginx" }],
        volumes: [{ name: "data", emptyDir: {} }]
      }
    }))
    const ephemeral = `${pods}/debugged/ephemeralcontainers`
    const forbidden = "Forbidden: cannot be set for an Ephemeral Container"
    await invalid(
      send("PATCH", ephemeral, {
        spec: {
          ephemeralContainers: [{
            name: "debug",
            image: "busybox",
            targetContainerName: "missing",
            ports: [{ containerPort: 80 }],
            resources: { requests: { cpu: "1" } },
            readinessProbe: { exec: { command: ["true"] } },
            volumeMounts: [{ name: "data", mountPath: "/data", subPath: "x" }]
          }]
        }
      }, strategic),
      `Pod "debugged" is invalid: [spec.ephemeralContainers[0].targetContainerName: Not found: "missing", ` +
        `spec.ephemeralContainers[0].ports: ${forbidden}, spec.ephemeralContainers[0].resources: ${forbidden}, ` +
        `spec.ephemeralContainers[0].readinessProbe: ${forbidden}, ` +
        `spec.ephemeralContainers[0].volumeMounts[0].subPath: ${forbidden}]`
    )
    // an init container is a target too; a name must be unique across all the pod's containers
    await invalid(
      send("PATCH", ephemeral, { spec: { ephemeralContainers: [{ name: "app", image: "busybox" }] } }, strategic),
      `Pod "debugged" is invalid: spec.ephemeralContainers[0].name: Duplicate value: "app"`
    )
    const added = await ok(send("PATCH", ephemeral, {
      spec: { ephemeralContainers: [{ name: "debug", image: "busybox", targetContainerName: "setup" }] }
    }, strategic))
    assert.strictEqual(added.spec.ephemeralContainers[0].targetContainerName, "setup")
    // what else the subresource's body changes is dropped
    const other = await ok(send("PATCH", ephemeral, { spec: { activeDeadlineSeconds: 5 } }, strategic))
    assert.isUndefined(other.spec.activeDeadlineSeconds)
    await invalid(
      send("PATCH", ephemeral, { spec: { ephemeralContainers: [{ name: "debug", image: "alpine" }] } }, strategic),
      `Pod "debugged" is invalid: spec.ephemeralContainers: Forbidden: existing ephemeral containers "debug" may not be ` +
        `changed\n`
    )
    await invalid(
      send("PATCH", ephemeral, { spec: { ephemeralContainers: [{ name: "other", image: "busybox" }] } }),
      `Pod "debugged" is invalid: spec.ephemeralContainers: Forbidden: existing ephemeral containers "debug" may not be ` +
        `removed\n`
    )
    // not through the pod itself
    const direct = await send("PATCH", `${pods}/debugged`, {
      spec: { ephemeralContainers: [{ name: "shell", image: "busybox" }] }
    }, strategic)
    assert.strictEqual(direct.status, 422)
    assert.include(direct.body.message, `Pod "debugged" is invalid: spec: Forbidden: pod updates may not change fields`)
  })

  it("a pod's spec change: Forbidden, with the cmp.Diff of the internal PodSpecs", async () => {
    const pods = "/api/v1/namespaces/default/pods"
    await ok(send("POST", pods, {
      metadata: { name: "fixed" },
      spec: {
        hostNetwork: true,
        automountServiceAccountToken: false,
        containers: [{ name: "web", image: "nginx", resources: {} }]
      }
    }))
    const changed = await send("PATCH", `${pods}/fixed`, {
      spec: { containers: [{ name: "web", command: ["sleep", "3600"], resources: { limits: { cpu: "1" } } }] }
    }, "application/strategic-merge-patch+json")
    assert.strictEqual(changed.status, 422)
    const message = changed.body.message as string
    const diff = message.slice(message.indexOf("\n") + 1)
    assert.strictEqual(
      diff,
      [
        "  core.PodSpec{",
        "  \tVolumes:        nil,",
        "  \tInitContainers: nil,",
        "  \tContainers: []core.Container{",
        "  \t\t{",
        `  \t\t\tName:       "web",`,
        `  \t\t\tImage:      "nginx",`,
        "- \t\t\tCommand:    nil,",
        `+ \t\t\tCommand:    []string{"sleep", "3600"},`,
        "  \t\t\tArgs:       nil,",
        `  \t\t\tWorkingDir: "",`,
        "  \t\t\tPorts:      nil,",
        "  \t\t\tEnvFrom:    nil,",
        "  \t\t\tEnv:        nil,",
        "  \t\t\tResources: core.ResourceRequirements{",
        "- \t\t\t\tLimits:   nil,",
        `+ \t\t\t\tLimits:   core.ResourceList{s"cpu": {i: {...}, s: "1", Format: "DecimalSI"}},`,
        // the requests are defaulted from the limits before the specs are compared
        "- \t\t\t\tRequests: nil,",
        `+ \t\t\t\tRequests: core.ResourceList{s"cpu": {i: {...}, s: "1", Format: "DecimalSI"}},`,
        "  \t\t\t\tClaims:   nil,",
        "  \t\t\t},",
        "  \t\t\tResizePolicy:  nil,",
        "  \t\t\tRestartPolicy: nil,",
        "  \t\t\t... // 14 identical fields",
        "  \t\t},",
        "  \t},",
        "  \tEphemeralContainers: nil,",
        `  \tRestartPolicy:       "Always",`,
        "  \t... // 32 identical fields",
        "  }",
        ""
      ].join("\n")
    )
    // the host namespaces are in the internal PodSpec's security context: not among its fields
    assert.notInclude(diff, "HostNetwork")
  })

  it("resize: cpu and memory only, the same QoS class, containers in place, nothing removed", async () => {
    await ok(send("POST", pods, {
      metadata: { name: "sized" },
      spec: {
        initContainers: [
          { name: "setup", image: "busybox", resources: { requests: { cpu: "50m" } } },
          { name: "sidecar", image: "envoy", restartPolicy: "Always", resources: { requests: { cpu: "50m" } } }
        ],
        containers: [
          {
            name: "app",
            image: "nginx",
            resources: { requests: { cpu: "100m", "ephemeral-storage": "1Gi" }, limits: { cpu: "200m" } }
          },
          { name: "log", image: "fluentd" }
        ]
      }
    }))
    const resize = `${pods}/sized/resize`
    const resized = await ok(send("PATCH", resize, {
      spec: {
        containers: [{ name: "app", resources: { requests: { cpu: "150m", memory: "64Mi" }, limits: { cpu: "300m" } } }],
        initContainers: [{ name: "sidecar", resources: { requests: { cpu: "75m" } } }]
      }
    }, strategic))
    assert.deepStrictEqual(resized.spec.containers[0].resources, {
      requests: { cpu: "150m", "ephemeral-storage": "1Gi", memory: "64Mi" },
      limits: { cpu: "300m" }
    })
    assert.deepStrictEqual(resized.spec.initContainers[1].resources, { requests: { cpu: "75m" } })
    await invalid(
      resizeTo(resize, "containers", { name: "app", resources: { requests: { "ephemeral-storage": "2Gi" } } }),
      `Pod "sized" is invalid: spec: Forbidden: only cpu and memory resources are mutable`
    )
    await invalid(
      resizeTo(resize, "containers", { name: "app", resources: { limits: { cpu: null } } }),
      `Pod "sized" is invalid: spec.containers[0].resources.limits: Forbidden: resource limits cannot be removed`
    )
    await invalid(
      resizeTo(resize, "initContainers", { name: "setup", resources: { requests: { cpu: "60m" } } }),
      `Pod "sized" is invalid: spec.initContainers[0].resources: Forbidden: resources for non-sidecar init containers ` +
        `are immutable`
    )
    // a merge patch replaces the list: reordered, and with a container left out
    const live = await ok(send("GET", `${pods}/sized`))
    const [app, log] = live.spec.containers
    await invalid(
      send("PATCH", resize, { spec: { containers: [log, app] } }),
      `Pod "sized" is invalid: [spec.containers[0].name: Forbidden: containers may not be renamed or reordered on ` +
        `resize, spec.containers[1].name: Forbidden: containers may not be renamed or reordered on resize, spec: ` +
        `Forbidden: only cpu and memory resources are mutable]`
    )
    const dropped = await send("PATCH", resize, { spec: { containers: [app] } })
    assert.strictEqual(dropped.status, 422)
    assert.include(dropped.body.message, "spec.containers: Forbidden: containers may not be added or removed on resize")
    // a request equal to its limit on every container would make the Burstable pod Guaranteed
    await ok(send("POST", pods, {
      metadata: { name: "besteffort" },
      spec: { containers: [{ name: "app", image: "nginx" }] }
    }))
    await invalid(
      resizeTo(`${pods}/besteffort/resize`, "containers", { name: "app", resources: { requests: { memory: "64Mi" } } }),
      `Pod "besteffort" is invalid: spec: Invalid value: "BestEffort": Pod QOS Class may not change as a result of ` +
        `resizing`
    )
    // and resources change only through the subresource
    const direct = await resizeTo(`${pods}/sized`, "containers", { name: "app", resources: { requests: { cpu: "1" } } })
    assert.strictEqual(direct.status, 422)
    assert.include(direct.body.message, "pod updates may not change fields other than")
  })
})

describe("FakeCluster's field validation as kube-apiserver v1.35 answers", () => {
  const configMaps = "/api/v1/namespaces/default/configmaps"
  const bogus = (options: string) =>
    `${options}.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "Bogus": supported values: "", ` +
    `"Ignore", "Strict", "Warn"`

  it("pod volumes: exactly one source, the second reported in the order the API server looks for them", async () => {
    const withVolume = (name: string, volume: Record<string, unknown>) => ({
      metadata: { name },
      spec: { containers: [{ name: "main", image: "busybox" }], volumes: [{ name: "v", ...volume }] }
    })
    const pods = "/api/v1/namespaces/default/pods"
    // configMap written first, but secret comes first in ValidateVolumes' order
    await invalid(
      send("POST", pods, withVolume("two", { configMap: { name: "c" }, secret: { secretName: "s" } })),
      `Pod "two" is invalid: spec.volumes[0].configMap: Forbidden: may not specify more than 1 volume type`
    )
    // as SetDefaults_Volume: a volume without a source is an emptyDir
    const none = await ok(send("POST", pods, withVolume("none", {})))
    assert.deepStrictEqual(none.spec.volumes[0], { name: "v", emptyDir: {} })
  })

  it("an unsupported fieldValidation is a 422 on the request's options", async () => {
    const body = await invalid(
      send("POST", `${configMaps}?fieldValidation=Bogus`, { metadata: { name: "options" } }),
      bogus("CreateOptions"),
      [`fieldValidation: Unsupported value: "Bogus": supported values: "", "Ignore", "Strict", "Warn"`]
    )
    const { group, kind, name } = body.details
    // kube-apiserver leaves the empty name out (Go's omitempty)
    assert.deepStrictEqual([group, kind, name], ["meta.k8s.io", "CreateOptions", undefined])
    await ok(send("POST", configMaps, { metadata: { name: "options" } }))
    await invalid(
      send("PUT", `${configMaps}/options?fieldValidation=Bogus`, { metadata: { name: "options" } }),
      bogus("UpdateOptions")
    )
    await invalid(send("PATCH", `${configMaps}/options?fieldValidation=Bogus`, {}), bogus("PatchOptions"))
    await invalid(
      send("PATCH", `${configMaps}/options?fieldValidation=Bogus&fieldManager=me`, "{}", "application/apply-patch+yaml"),
      bogus("PatchOptions")
    )
  })

  it("repeated JSON fields: refused under Strict, warned of under Warn, the last kept, in the decoder's order", async () => {
    const repeated = `{"metadata":{"name":"first","name":"twice"},"data":{"a":"1"},"extra":true}`
    const strict = await send("POST", `${configMaps}?fieldValidation=Strict`, repeated)
    assert.strictEqual(strict.status, 400)
    assert.strictEqual(strict.body.reason, "BadRequest")
    assert.strictEqual(
      strict.body.message,
      `ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: duplicate field ` +
        `"metadata.name", unknown field "extra"`
    )
    // the decoder meets the unknown field first here
    const later = await send(
      "POST",
      `${configMaps}?fieldValidation=Strict`,
      `{"extra":1,"metadata":{"name":"a"},"metadata":{"name":"b"}}`
    )
    assert.include(later.body.message, `strict decoding error: unknown field "extra", duplicate field "metadata"`)
    const warned = await send("POST", configMaps, repeated)
    assert.strictEqual(warned.status, 201)
    assert.strictEqual(warned.warning, `299 - "duplicate field \\"metadata.name\\"", 299 - "unknown field \\"extra\\""`)
    assert.strictEqual(warned.body.metadata.name, "twice")
    const ignored = await send("POST", `${configMaps}?fieldValidation=Ignore`, repeated.replace("twice", "thrice"))
    assert.strictEqual(ignored.status, 201)
    assert.isNull(ignored.warning)
    // patches: a 422 quoting what the patch made, one cause on the field "patch" (kube-apiserver's patch handler);
    // inside lists, by index
    const patch = await send("PATCH", `${configMaps}/twice?fieldValidation=Strict`, `{"data":{"b":"1","b":"2"}}`)
    assert.strictEqual(patch.status, 422)
    assert.strictEqual(patch.body.reason, "Invalid")
    assert.strictEqual(patch.body.details.causes.length, 1)
    assert.strictEqual(patch.body.details.causes[0].field, "patch")
    assert.match(patch.body.message, /^ "" is invalid: patch: Invalid value: "\{.*\}": strict decoding error: duplicate field "data.b"$/)
    const smp = await send(
      "PATCH", `${configMaps}/twice?fieldValidation=Strict`, `{"bogus":{"n":1,"f":1.5,"l":["x",null]}}`,
      "application/strategic-merge-patch+json"
    )
    // a strategic merge patch quotes the patch as Go prints the map it decoded
    assert.strictEqual(
      smp.body.details.causes[0].message,
      `Invalid value: "map[bogus:map[f:1.5 l:[x <nil>] n:1]]": strict decoding error: unknown field "bogus"`
    )
    await ok(send("POST", "/api/v1/namespaces/default/pods", {
      metadata: { name: "listed" },
      spec: { containers: [{ name: "app", image: "nginx" }] }
    }))
    const inList = await send(
      "PATCH",
      "/api/v1/namespaces/default/pods/listed",
      `{"spec":{"containers":[{"name":"app","image":"nginx:1","image":"nginx:2","bogus":1}]}}`,
      "application/strategic-merge-patch+json"
    )
    // a patch's repeated fields come first (it is read into a map before the patched object is decoded)
    assert.strictEqual(
      inList.warning,
      `299 - "duplicate field \\"spec.containers[0].image\\"", 299 - "unknown field \\"spec.containers[0].bogus\\""`
    )
    assert.strictEqual(inList.body.spec.containers[0].image, "nginx:2")
  })

  it("repeated YAML keys: go-yaml's error under Strict, its warning under Warn, the last kept", async () => {
    const yaml = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: yaml-first\n  name: yaml-cm\ndata:\n  a: \"1\"\n"
    const strict = await send("POST", `${configMaps}?fieldValidation=Strict`, yaml, "application/yaml")
    assert.strictEqual(strict.status, 400)
    assert.strictEqual(
      strict.body.message,
      `ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: yaml: unmarshal errors:\n` +
        `  line 5: key "name" already set in map`
    )
    const warned = await send("POST", configMaps, yaml, "application/yaml")
    assert.strictEqual(warned.status, 201)
    // Go writes the line break of a header value as a space
    assert.strictEqual(warned.warning, `299 - "yaml: unmarshal errors:   line 5: key \\"name\\" already set in map"`)
    assert.strictEqual(warned.body.metadata.name, "yaml-cm")
    const ignored = await send(
      "POST",
      `${configMaps}?fieldValidation=Ignore`,
      yaml.replace("yaml-cm", "yaml-ignored"),
      "application/yaml"
    )
    assert.strictEqual(ignored.status, 201)
    assert.isNull(ignored.warning)

    const apply = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\ndata:\n  a: \"1\"\n  a: \"2\"\n"
    const applyPath = `${configMaps}/applied?fieldManager=me`
    const refused = await send("PATCH", `${applyPath}&fieldValidation=Strict`, apply, "application/apply-patch+yaml")
    assert.strictEqual(refused.status, 400)
    assert.strictEqual(
      refused.body.message,
      `error strict decoding YAML: error converting YAML to JSON: yaml: unmarshal errors:\n  line 7: key "a" already ` +
        `set in map`
    )
    const applied = await send("PATCH", applyPath, apply, "application/apply-patch+yaml")
    assert.strictEqual(applied.status, 201)
    assert.strictEqual(
      applied.warning,
      `299 - "error converting YAML to JSON: yaml: unmarshal errors:   line 7: key \\"a\\" already set in map"`
    )
    assert.deepStrictEqual(applied.body.data, { a: "2" })
  })
})

describe("FakeCluster's smaller API details as kube-apiserver v1.35 answers", () => {
  const managers = (obj: Record<string, any>) =>
    (obj.metadata.managedFields ?? []).map((m: Record<string, string>) => [m.manager, m.operation, m.subresource])

  it("a subresource's writer is recorded with its subresource", async () => {
    const pods = "/api/v1/namespaces/default/pods"
    await ok(send("POST", `${pods}?fieldManager=creator`, {
      metadata: { name: "managed" },
      spec: { containers: [{ name: "app", image: "nginx" }] }
    }))
    await ok(send("PATCH", `${pods}/managed/status?fieldManager=prober`, {
      status: { conditions: [{ type: "Probed", status: "True" }] }
    }))
    await ok(send("PATCH", `${pods}/managed/ephemeralcontainers?fieldManager=debugger`, {
      spec: { ephemeralContainers: [{ name: "debug", image: "busybox" }] }
    }, "application/strategic-merge-patch+json"))
    const applied = await ok(send(
      "PATCH",
      `${pods}/managed/status?fieldManager=applier&force=true`,
      {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "managed" },
        status: { conditions: [{ type: "Applied", status: "True" }] }
      },
      "application/apply-patch+yaml"
    ))
    const own = managers(applied).filter(([name]: [string]) => name !== "node" && !name.startsWith("kube"))
    assert.deepStrictEqual(own, [
      ["creator", "Update", undefined],
      ["prober", "Update", "status"],
      ["debugger", "Update", "ephemeralcontainers"],
      ["applier", "Apply", "status"]
    ])
  })

  it("managedFields by JSON patch: [{}] clears them, leaving them out keeps them, an edit is taken", async () => {
    const configMaps = "/api/v1/namespaces/default/configmaps"
    const jsonPatch = (ops: unknown, manager: string) =>
      send("PATCH", `${configMaps}/owned?fieldManager=${manager}`, JSON.stringify(ops), "application/json-patch+json")
    await ok(send("POST", `${configMaps}?fieldManager=creator`, { metadata: { name: "owned" }, data: { a: "1" } }))
    const cleared = await ok(jsonPatch([{ op: "replace", path: "/metadata/managedFields", value: [{}] }], "clearer"))
    assert.isUndefined(cleared.metadata.managedFields)
    await ok(jsonPatch([{ op: "add", path: "/data/b", value: "2" }], "second"))
    const kept = await ok(jsonPatch([
      { op: "remove", path: "/metadata/managedFields" },
      { op: "add", path: "/data/c", value: "3" }
    ], "third"))
    assert.deepStrictEqual(managers(kept), [["second", "Update", undefined], ["third", "Update", undefined]])
    const renamed = await ok(
      jsonPatch([{ op: "replace", path: "/metadata/managedFields/0/manager", value: "renamed" }], "editor")
    )
    assert.deepStrictEqual(managers(renamed), [["renamed", "Update", undefined], ["third", "Update", undefined]])
  })

  it("custom resources are written as Go writes a map, their lists with an empty continue", async () => {
    await ok(send("POST", crds, crd("sprockets.example.com", { names: { plural: "sprockets", kind: "Sprocket" } })))
    const sprockets = "/apis/example.com/v1/namespaces/default/sprockets"
    let raw = ""
    for (let i = 0; i < 100 && !raw.startsWith("{"); i++) {
      const response = await fetch(`${listening.url}${sprockets}`)
      if (response.status === 200) raw = await response.text()
      else await new Promise((resolve) => setTimeout(resolve, 20))
    }
    assert.match(
      raw,
      /^\{"apiVersion":"example\.com\/v1","items":\[\],"kind":"SprocketList","metadata":\{"continue":"","resourceVersion":"\d+"\}\}$/
    )
    await ok(send("POST", sprockets, {
      kind: "Sprocket",
      apiVersion: "example.com/v1",
      spec: { zeta: 1, alpha: { y: 1, b: 2 } },
      metadata: { name: "s", labels: { b: "1", a: "2" } }
    }))
    const one = await (await fetch(`${listening.url}${sprockets}/s`)).text()
    assert.match(one, /^\{"apiVersion":"example\.com\/v1","kind":"Sprocket","metadata":\{"creationTimestamp":/)
    assert.include(one, `"labels":{"a":"2","b":"1"}`)
    assert.include(one, `"spec":{"alpha":{"b":2,"y":1},"zeta":1}`)
    const page = JSON.parse(await (await fetch(`${listening.url}${sprockets}?limit=1`)).text())
    assert.strictEqual(page.metadata.continue, "")
    // a built-in list has no continue when there is no more
    const builtIn = await (await fetch(`${listening.url}/api/v1/namespaces/default/configmaps`)).text()
    assert.notInclude(builtIn.slice(0, builtIn.indexOf(`"items"`)), "continue")
  })

  it("every MicroTime is kept in UTC, to the microsecond", async () => {
    const event = await ok(send("POST", "/api/v1/namespaces/default/events", {
      metadata: { name: "timed" },
      involvedObject: { kind: "Pod", name: "p", namespace: "default" },
      eventTime: "2026-12-01T11:00:00.123456+01:00",
      series: { count: 2, lastObservedTime: "2026-12-01T12:00:00.000001-02:00" },
      reportingComponent: "example.com/timer",
      reportingInstance: "timer-0",
      action: "Tick",
      reason: "Ticked"
    }))
    assert.deepStrictEqual([event.eventTime, event.series.lastObservedTime], [
      "2026-12-01T10:00:00.123456Z",
      "2026-12-01T14:00:00.000001Z"
    ])
    const candidate = await ok(send("POST", "/apis/coordination.k8s.io/v1beta1/namespaces/default/leasecandidates", {
      metadata: { name: "candidate" },
      spec: {
        leaseName: "leader",
        binaryVersion: "1.35.0",
        strategy: "OldestEmulationVersion",
        pingTime: "2026-12-01T11:00:00.000100+01:00",
        renewTime: "2026-12-01T11:00:00.000200+01:00"
      }
    }))
    assert.deepStrictEqual([candidate.spec.pingTime, candidate.spec.renewTime], [
      "2026-12-01T10:00:00.000100Z",
      "2026-12-01T10:00:00.000200Z"
    ])
    const malformed = await send("POST", "/apis/coordination.k8s.io/v1beta1/namespaces/default/leasecandidates", {
      metadata: { name: "late" },
      spec: {
        leaseName: "leader",
        binaryVersion: "1.35.0",
        strategy: "OldestEmulationVersion",
        renewTime: "2026-12-01T11:00:00Z"
      }
    })
    assert.strictEqual(malformed.status, 400)
    assert.strictEqual(
      malformed.body.message,
      `LeaseCandidate in version "v1beta1" cannot be handled as a LeaseCandidate: unable to decode spec.renewTime: ` +
        `parsing time "2026-12-01T11:00:00Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse as RFC 3339 with ` +
        `microseconds`
    )
  })
})

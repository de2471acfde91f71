/**
 * The kinds the scenarios write, each with a small valid object, and what a scenario compares of it: `volatile` kinds
 * are changed by a controller or the scheduler at its own pace, so reads of them compare metadata and spec only.
 */
export interface Kind {
  readonly kind: string
  readonly apiVersion: string
  readonly plural: string
  readonly namespaced: boolean
  /** A valid object named `name` (cluster-scoped names carry the scenario's namespace to stay unique). */
  readonly object: (name: string) => Record<string, unknown>
  /** A merge patch that changes something besides metadata (undefined: only labels are changed). */
  readonly change?: Record<string, unknown>
  /** A controller writes its status: compare metadata and spec, not status. */
  readonly volatile?: boolean
}

const labels = { "conformance.effect-kube.dev/case": "yes" }
const meta = (name: string, extra: Record<string, unknown> = {}) => ({ name, labels, ...extra })
const podSpec = {
  // a gate keeps the scheduler (and so every kubelet) off the pod: what is stored stays as written
  schedulingGates: [{ name: "conformance.effect-kube.dev/hold" }],
  containers: [{ name: "c", image: "registry.k8s.io/pause:3.10" }]
}
const template = (app: string) => ({
  metadata: { labels: { app } },
  spec: { containers: [{ name: "c", image: "registry.k8s.io/pause:3.10" }] }
})

export const kinds: ReadonlyArray<Kind> = [
  {
    kind: "ConfigMap", apiVersion: "v1", plural: "configmaps", namespaced: true,
    object: (name) => ({ metadata: meta(name), data: { a: "1" } }), change: { data: { b: "2" } }
  },
  {
    kind: "Secret", apiVersion: "v1", plural: "secrets", namespaced: true,
    object: (name) => ({ metadata: meta(name), type: "Opaque", stringData: { a: "1" } }), change: { data: { b: "Mg==" } }
  },
  {
    kind: "ServiceAccount", apiVersion: "v1", plural: "serviceaccounts", namespaced: true,
    object: (name) => ({ metadata: meta(name) }), change: { automountServiceAccountToken: false }
  },
  {
    kind: "Service", apiVersion: "v1", plural: "services", namespaced: true,
    object: (name) => ({ metadata: meta(name), spec: { selector: { app: name }, ports: [{ port: 80 }] } }),
    change: { spec: { sessionAffinity: "ClientIP" } }
  },
  {
    kind: "Pod", apiVersion: "v1", plural: "pods", namespaced: true, volatile: true,
    object: (name) => ({ metadata: meta(name), spec: podSpec }), change: { spec: { activeDeadlineSeconds: 30 } }
  },
  {
    kind: "PodTemplate", apiVersion: "v1", plural: "podtemplates", namespaced: true,
    object: (name) => ({ metadata: meta(name), template: template(name) })
  },
  {
    kind: "ReplicationController", apiVersion: "v1", plural: "replicationcontrollers", namespaced: true, volatile: true,
    object: (name) => ({ metadata: meta(name), spec: { replicas: 0, selector: { app: name }, template: template(name) } }),
    change: { spec: { minReadySeconds: 3 } }
  },
  {
    kind: "LimitRange", apiVersion: "v1", plural: "limitranges", namespaced: true,
    object: (name) => ({ metadata: meta(name), spec: { limits: [{ type: "Container", max: { cpu: "2" } }] } })
  },
  {
    kind: "ResourceQuota", apiVersion: "v1", plural: "resourcequotas", namespaced: true, volatile: true,
    object: (name) => ({ metadata: meta(name), spec: { hard: { pods: "100" } } }), change: { spec: { hard: { pods: "50" } } }
  },
  {
    kind: "Endpoints", apiVersion: "v1", plural: "endpoints", namespaced: true,
    object: (name) => ({ metadata: meta(name), subsets: [{ addresses: [{ ip: "10.0.0.1" }], ports: [{ port: 80 }] }] })
  },
  {
    kind: "PersistentVolumeClaim", apiVersion: "v1", plural: "persistentvolumeclaims", namespaced: true, volatile: true,
    object: (name) => ({
      metadata: meta(name),
      spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "1Gi" } }, storageClassName: "none" }
    })
  },
  {
    kind: "Deployment", apiVersion: "apps/v1", plural: "deployments", namespaced: true, volatile: true,
    object: (name) => ({
      metadata: meta(name),
      spec: { replicas: 0, selector: { matchLabels: { app: name } }, template: template(name) }
    }),
    change: { spec: { minReadySeconds: 3 } }
  },
  {
    kind: "ReplicaSet", apiVersion: "apps/v1", plural: "replicasets", namespaced: true, volatile: true,
    object: (name) => ({
      metadata: meta(name),
      spec: { replicas: 0, selector: { matchLabels: { app: name } }, template: template(name) }
    }),
    change: { spec: { minReadySeconds: 3 } }
  },
  {
    kind: "StatefulSet", apiVersion: "apps/v1", plural: "statefulsets", namespaced: true, volatile: true,
    object: (name) => ({
      metadata: meta(name),
      spec: { replicas: 0, serviceName: name, selector: { matchLabels: { app: name } }, template: template(name) }
    }),
    change: { spec: { minReadySeconds: 3 } }
  },
  {
    kind: "DaemonSet", apiVersion: "apps/v1", plural: "daemonsets", namespaced: true, volatile: true,
    object: (name) => ({
      metadata: meta(name),
      spec: {
        selector: { matchLabels: { app: name } },
        template: { ...template(name), spec: { ...template(name).spec, nodeSelector: { "conformance/none": "x" } } }
      }
    }),
    change: { spec: { minReadySeconds: 3 } }
  },
  {
    kind: "ControllerRevision", apiVersion: "apps/v1", plural: "controllerrevisions", namespaced: true,
    object: (name) => ({ metadata: meta(name), revision: 1, data: { a: 1 } })
  },
  {
    kind: "Job", apiVersion: "batch/v1", plural: "jobs", namespaced: true, volatile: true,
    object: (name) => ({
      metadata: meta(name),
      spec: { suspend: true, template: { spec: { restartPolicy: "Never", containers: template(name).spec.containers } } }
    }),
    change: { spec: { activeDeadlineSeconds: 30 } }
  },
  {
    kind: "CronJob", apiVersion: "batch/v1", plural: "cronjobs", namespaced: true, volatile: true,
    object: (name) => ({
      metadata: meta(name),
      spec: {
        schedule: "0 0 1 1 *", suspend: true,
        jobTemplate: { spec: { template: { spec: { restartPolicy: "Never", containers: template(name).spec.containers } } } }
      }
    }),
    change: { spec: { schedule: "0 0 2 1 *" } }
  },
  {
    kind: "Role", apiVersion: "rbac.authorization.k8s.io/v1", plural: "roles", namespaced: true,
    object: (name) => ({ metadata: meta(name), rules: [{ apiGroups: [""], resources: ["pods"], verbs: ["get"] }] })
  },
  {
    kind: "RoleBinding", apiVersion: "rbac.authorization.k8s.io/v1", plural: "rolebindings", namespaced: true,
    object: (name) => ({
      metadata: meta(name),
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "r" },
      subjects: [{ kind: "ServiceAccount", name: "default", namespace: "default" }]
    })
  },
  {
    kind: "NetworkPolicy", apiVersion: "networking.k8s.io/v1", plural: "networkpolicies", namespaced: true,
    object: (name) => ({ metadata: meta(name), spec: { podSelector: {} } }), change: { spec: { policyTypes: ["Ingress"] } }
  },
  {
    kind: "Ingress", apiVersion: "networking.k8s.io/v1", plural: "ingresses", namespaced: true,
    object: (name) => ({
      metadata: meta(name),
      spec: { defaultBackend: { service: { name: "s", port: { number: 80 } } } }
    })
  },
  {
    kind: "PodDisruptionBudget", apiVersion: "policy/v1", plural: "poddisruptionbudgets", namespaced: true, volatile: true,
    object: (name) => ({ metadata: meta(name), spec: { minAvailable: 1, selector: { matchLabels: { app: name } } } })
  },
  {
    kind: "HorizontalPodAutoscaler", apiVersion: "autoscaling/v2", plural: "horizontalpodautoscalers", namespaced: true,
    volatile: true,
    object: (name) => ({
      metadata: meta(name),
      spec: { scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: "none" }, maxReplicas: 3 }
    }),
    change: { spec: { maxReplicas: 4 } }
  },
  {
    kind: "Lease", apiVersion: "coordination.k8s.io/v1", plural: "leases", namespaced: true,
    object: (name) => ({ metadata: meta(name), spec: { holderIdentity: "a", leaseDurationSeconds: 15 } }),
    change: { spec: { holderIdentity: "b" } }
  },
  {
    kind: "EndpointSlice", apiVersion: "discovery.k8s.io/v1", plural: "endpointslices", namespaced: true,
    object: (name) => ({
      metadata: meta(name), addressType: "IPv4", endpoints: [{ addresses: ["10.0.0.1"] }], ports: [{ port: 80 }]
    })
  },
  {
    kind: "Event", apiVersion: "events.k8s.io/v1", plural: "events", namespaced: true,
    object: (name) => ({
      metadata: meta(name),
      eventTime: "2026-01-01T00:00:00.000000Z", reportingController: "conformance", reportingInstance: "i",
      action: "Test", reason: "Test", type: "Normal", regarding: { kind: "Pod", name: "p", namespace: "{ns}" }
    }),
    change: { note: "changed" }
  },
  {
    kind: "ClusterRole", apiVersion: "rbac.authorization.k8s.io/v1", plural: "clusterroles", namespaced: false,
    object: (name) => ({ metadata: meta(name), rules: [{ apiGroups: [""], resources: ["pods"], verbs: ["get"] }] })
  },
  {
    kind: "ClusterRoleBinding", apiVersion: "rbac.authorization.k8s.io/v1", plural: "clusterrolebindings",
    namespaced: false,
    object: (name) => ({
      metadata: meta(name),
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "view" },
      subjects: [{ kind: "ServiceAccount", name: "default", namespace: "default" }]
    })
  },
  {
    kind: "PriorityClass", apiVersion: "scheduling.k8s.io/v1", plural: "priorityclasses", namespaced: false,
    object: (name) => ({ metadata: meta(name), value: 1000 }), change: { description: "changed" }
  },
  {
    kind: "StorageClass", apiVersion: "storage.k8s.io/v1", plural: "storageclasses", namespaced: false,
    object: (name) => ({ metadata: meta(name), provisioner: "example.com/none" }), change: { allowVolumeExpansion: true }
  },
  {
    kind: "IngressClass", apiVersion: "networking.k8s.io/v1", plural: "ingressclasses", namespaced: false,
    object: (name) => ({ metadata: meta(name), spec: { controller: "example.com/none" } })
  },
  {
    kind: "RuntimeClass", apiVersion: "node.k8s.io/v1", plural: "runtimeclasses", namespaced: false,
    object: (name) => ({ metadata: meta(name), handler: "runc" })
  },
  {
    kind: "PersistentVolume", apiVersion: "v1", plural: "persistentvolumes", namespaced: false, volatile: true,
    object: (name) => ({
      metadata: meta(name),
      spec: { capacity: { storage: "1Gi" }, accessModes: ["ReadWriteOnce"], hostPath: { path: "/tmp/none" } }
    }),
    change: { spec: { persistentVolumeReclaimPolicy: "Delete" } }
  },
  {
    kind: "ValidatingAdmissionPolicy", apiVersion: "admissionregistration.k8s.io/v1",
    plural: "validatingadmissionpolicies", namespaced: false, volatile: true,
    object: (name) => ({
      metadata: meta(name),
      spec: {
        matchConstraints: { resourceRules: [{ apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["nothing"] }] },
        validations: [{ expression: "true" }]
      }
    })
  },
  {
    kind: "CustomResourceDefinition", apiVersion: "apiextensions.k8s.io/v1", plural: "customresourcedefinitions",
    namespaced: false, volatile: true,
    object: (name) => ({
      metadata: { name: `${name.replaceAll(".", "-")}s.conformance.effect-kube.dev`, labels },
      spec: {
        group: "conformance.effect-kube.dev",
        names: { plural: `${name.replaceAll(".", "-")}s`, singular: name.replaceAll(".", "-"), kind: "Widget" },
        scope: "Namespaced",
        versions: [{ name: "v1", served: true, storage: true, schema: { openAPIV3Schema: { type: "object" } } }]
      }
    })
  }
]

/** The collection path of a kind, in the scenario's namespace. */
export const collection = (k: Kind): string => {
  const prefix = k.apiVersion.includes("/") ? `/apis/${k.apiVersion}` : `/api/${k.apiVersion}`
  return k.namespaced ? `${prefix}/namespaces/{ns}/${k.plural}` : `${prefix}/${k.plural}`
}

/** The name of the object in a scenario: cluster-scoped ones carry the namespace to stay unique. */
export const objectName = (k: Kind, base: string): string => k.namespaced ? base : `{ns}-${base}`

/** The name the object really gets (the CRD's name is its plural.group). */
export const storedName = (k: Kind, base: string): string =>
  (k.object(objectName(k, base))["metadata"] as { name: string }).name

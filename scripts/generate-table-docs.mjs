/**
 * Writes packages/testing/src/internal/tables/docs.ts: the descriptions of the fields that the API
 * server's printers name in their Table column definitions (`ServiceSpec{}.SwaggerDoc()["type"]`
 * in kube-apiserver), read from the OpenAPI document in spec/kubernetes/. Run it when the
 * spec changes:
 *
 *   node scripts/generate-table-docs.mjs
 *
 * The OpenAPI text of an enum field ends with its "Possible enum values"; SwaggerDoc has no such
 * tail, so it is cut.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const spec = JSON.parse(fs.readFileSync(path.join(root, "spec/kubernetes/swagger-v1.35.0.json"), "utf8"))

/** `<package>.<Definition>`: the fields whose descriptions a printer uses. */
const fields = {
  "core.v1.PodStatus": ["podIP", "nominatedNodeName"],
  "core.v1.PodSpec": ["nodeName", "readinessGates", "nodeSelector"],
  "core.v1.ReplicationControllerSpec": ["replicas", "selector"],
  "core.v1.ReplicationControllerStatus": ["replicas", "readyReplicas"],
  "apps.v1.ReplicaSetSpec": ["replicas", "selector"],
  "apps.v1.ReplicaSetStatus": ["replicas", "readyReplicas"],
  "apps.v1.DaemonSetStatus": [
    "desiredNumberScheduled",
    "currentNumberScheduled",
    "numberReady",
    "updatedNumberScheduled",
    "numberAvailable"
  ],
  "apps.v1.DaemonSetSpec": ["selector"],
  "apps.v1.DeploymentStatus": ["updatedReplicas", "availableReplicas"],
  "apps.v1.DeploymentSpec": ["selector"],
  "apps.v1.ControllerRevision": ["revision"],
  "batch.v1.JobStatus": ["succeeded"],
  "batch.v1.JobSpec": ["selector"],
  "batch.v1.CronJobSpec": ["schedule", "timeZone", "suspend"],
  "batch.v1.CronJobStatus": ["active", "lastScheduleTime"],
  "core.v1.ServiceSpec": ["type", "clusterIP", "externalIPs", "ports", "selector"],
  "core.v1.Endpoints": ["subsets"],
  "core.v1.NodeSystemInfo": ["kubeletVersion", "osImage", "kernelVersion", "containerRuntimeVersion"],
  "core.v1.NodeStatus": ["addresses"],
  "core.v1.Event": ["lastTimestamp", "type", "reason", "involvedObject", "source", "message", "firstTimestamp", "count"],
  "core.v1.ObjectReference": ["fieldPath"],
  "core.v1.Secret": ["type", "data"],
  "core.v1.ServiceAccount": ["secrets"],
  "core.v1.ConfigMap": ["data"],
  "core.v1.PersistentVolumeSpec": ["capacity", "accessModes", "persistentVolumeReclaimPolicy", "claimRef", "volumeMode"],
  "core.v1.PersistentVolumeStatus": ["phase", "reason"],
  "core.v1.PersistentVolumeClaimSpec": ["volumeName", "volumeMode"],
  "core.v1.PersistentVolumeClaimStatus": ["phase", "capacity", "accessModes"],
  "autoscaling.v2.HorizontalPodAutoscalerSpec": ["scaleTargetRef", "metrics", "minReplicas", "maxReplicas"],
  "autoscaling.v2.HorizontalPodAutoscalerStatus": ["currentReplicas"],
  "networking.v1.NetworkPolicySpec": ["podSelector"],
  "rbac.v1.RoleBinding": ["roleRef"],
  "rbac.v1.ClusterRoleBinding": ["roleRef"],
  "certificates.v1.CertificateSigningRequestSpec": ["signerName", "request", "expirationSeconds"],
  "certificates.v1.CertificateSigningRequestStatus": ["conditions"],
  "coordination.v1.LeaseSpec": ["holderIdentity"],
  "storage.v1.StorageClass": ["provisioner", "reclaimPolicy", "volumeBindingMode", "allowVolumeExpansion"],
  "storage.v1.VolumeAttachmentSpec": ["attacher", "nodeName"],
  "storage.v1.VolumeAttachmentSource": ["persistentVolumeName"],
  "storage.v1.VolumeAttachmentStatus": ["attached"],
  "storage.v1.CSIDriverSpec": [
    "attachRequired",
    "podInfoOnMount",
    "storageCapacity",
    "tokenRequests",
    "requiresRepublish",
    "volumeLifecycleModes"
  ],
  "scheduling.v1.PriorityClass": ["value", "globalDefault", "preemptionPolicy"],
  "discovery.v1.EndpointSlice": ["addressType", "ports", "endpoints"],
  "meta.v1.ObjectMeta": ["name", "creationTimestamp"]
}

const lines = []
for (const [definition, names] of Object.entries(fields)) {
  const key = definition.startsWith("meta.")
    ? `io.k8s.apimachinery.pkg.apis.${definition}`
    : `io.k8s.api.${definition}`
  const properties = spec.definitions[key]?.properties
  if (properties === undefined) throw new Error(`${key} is not in the spec`)
  const short = definition.split(".").pop()
  for (const name of names) {
    const text = properties[name]?.description
    if (typeof text !== "string") throw new Error(`${key}.${name} has no description`)
    lines.push(`  ${JSON.stringify(`${short}.${name}`)}: ${JSON.stringify(text.replace(/\n\nPossible enum values:[\s\S]*$/, ""))}`)
  }
}

const out = `/**
 * The descriptions of the fields that the API server's printers name in their column
 * definitions, from the Kubernetes OpenAPI document (v1.35). Written by
 * scripts/generate-table-docs.mjs: do not edit.
 *
 * @internal
 */

/** \`Definition.field\` -> its description. @internal */
export const docs = {
${lines.join(",\n")}
} as const
`
fs.writeFileSync(path.join(root, "packages/testing/src/internal/tables/docs.ts"), out)

/**
 * The validation of every write the fake takes through its API, as kube-apiserver's
 * registry strategies run it: each kind's rules (a table, below) after the metadata's,
 * on create and on update (with the stored object), and a custom resource against its
 * CRD's schema. Problems become one 422 Invalid Status, worded as the API server words
 * it, with a cause per field.
 *
 * @internal
 */
import type { JsonObject } from "../store/json.js"
import type { KindInfo } from "../store/kinds.js"
import * as Apps from "./apps.js"
import * as Core from "./core.js"
import * as Field from "./field.js"
import * as Meta from "./meta.js"
import * as Other from "./other.js"
import * as Pods from "./pods.js"
import { type Errors, type Rule, run } from "./rules.js"
import * as Schema from "./schema.js"
import * as Small from "./small.js"

/** The rules of a kind: what its `Validate` and `ValidateUpdate` check besides the metadata. */
interface KindRules {
  readonly rules?: ReadonlyArray<Rule>
  readonly create?: (obj: JsonObject, errors: Errors) => void
  readonly update?: (obj: JsonObject, old: JsonObject, errors: Errors) => void
}

const kinds: Record<string, KindRules> = {
  "/Pod": { create: Pods.validatePodCreate, update: Pods.validatePodUpdate },
  "/PodTemplate": {
    create: (obj, errors) => Pods.validatePodTemplateSpec(obj.template, "template", errors),
    update: (obj, _old, errors) => Pods.validatePodTemplateSpec(obj.template, "template", errors)
  },
  "/Service": { rules: Core.service },
  "/ConfigMap": { rules: Core.configMap },
  "/Secret": { rules: Core.secret },
  "/Namespace": { rules: Core.namespace },
  "/PersistentVolumeClaim": { rules: Core.persistentVolumeClaim },
  "/Event": { rules: Core.coreEvent },
  "apps/Deployment": { rules: Apps.deployment },
  "apps/ReplicaSet": { rules: Apps.replicaSet },
  "apps/StatefulSet": { rules: Apps.statefulSet },
  "apps/DaemonSet": { rules: Apps.daemonSet },
  "batch/Job": { rules: Apps.job },
  "batch/CronJob": { rules: Apps.cronJob },
  "rbac.authorization.k8s.io/Role": { rules: Other.role },
  "rbac.authorization.k8s.io/ClusterRole": { rules: Other.clusterRole },
  "rbac.authorization.k8s.io/RoleBinding": { rules: Other.roleBinding },
  "rbac.authorization.k8s.io/ClusterRoleBinding": { rules: Other.clusterRoleBinding },
  "coordination.k8s.io/Lease": { rules: Other.lease },
  "events.k8s.io/Event": { rules: Other.event },
  "policy/PodDisruptionBudget": { rules: Other.podDisruptionBudget },
  "networking.k8s.io/Ingress": { rules: Other.ingress },
  "apiextensions.k8s.io/CustomResourceDefinition": { rules: Other.customResourceDefinition },
  "networking.k8s.io/IngressClass": { rules: Small.ingressClass },
  "node.k8s.io/RuntimeClass": { rules: Small.runtimeClass },
  "storage.k8s.io/StorageClass": { rules: Small.storageClass },
  "apps/ControllerRevision": { rules: Small.controllerRevision },
  "autoscaling/HorizontalPodAutoscaler": { rules: Small.horizontalPodAutoscaler },
  "/Endpoints": { rules: Small.endpoints },
  "/PersistentVolume": { rules: Small.persistentVolume }
}

/** How a kind's names are checked. @internal */
export const nameRuleOf = (kind: Pick<KindInfo, "group" | "kind" | "nameRule">): Meta.NameRule =>
  kind.group === "" && kind.kind === "Service"
    ? Meta.dns1035Name
    : kind.nameRule === "label"
    ? Meta.labelName
    : kind.nameRule === "path"
    ? Meta.pathSegmentName
    : Meta.subdomainName

/**
 * The errors of an object to be written: its metadata (as new, or as changed from
 * `old`), its kind's rules, and, for a custom resource, its schema.
 *
 * @internal
 */
export const errorsOf = (
  kind: KindInfo,
  obj: JsonObject,
  old: JsonObject | undefined,
  schema: Schema.Schema | undefined
): Errors => {
  const errors: Errors = []
  if (old === undefined) Meta.validateObjectMeta(obj.metadata, nameRuleOf(kind), errors)
  else Meta.validateObjectMetaUpdate(obj.metadata, old.metadata, errors)
  const rules = kinds[`${kind.group}/${kind.kind}`]
  if (rules !== undefined) {
    if (rules.rules !== undefined) errors.push(...run(rules.rules, obj, old))
    if (old === undefined) rules.create?.(obj, errors)
    else rules.update?.(obj, old, errors)
  }
  if (schema !== undefined) Schema.validate(obj, schema, "", errors)
  return errors
}

/** Fails with the 422 Invalid Status when an object to be written breaks its kind's rules. @internal */
export const check = (
  kind: KindInfo,
  obj: JsonObject,
  old: JsonObject | undefined,
  schema: Schema.Schema | undefined
): void => {
  const errors = errorsOf(kind, obj, old, schema)
  const name = (obj.metadata as JsonObject | undefined)?.name
  Field.throwIfAny(kind, typeof name === "string" ? name : "", errors)
}

/**
 * A write through the status subresource: the status strategies check the metadata's
 * change (and what status rules the kind has), never the spec.
 *
 * @internal
 */
export const checkStatus = (kind: KindInfo, obj: JsonObject, old: JsonObject): void => {
  const errors: Errors = []
  Meta.validateObjectMetaUpdate(obj.metadata, old.metadata, errors)
  const name = (obj.metadata as JsonObject | undefined)?.name
  Field.throwIfAny(kind, typeof name === "string" ? name : "", errors)
}

/** What a pod's `ephemeralcontainers` or `resize` subresource may change. @internal */
export const checkPodSubresource = (
  kind: KindInfo,
  subresource: "ephemeralcontainers" | "resize",
  pod: JsonObject,
  old: JsonObject
): void => {
  const errors: Errors = []
  if (subresource === "ephemeralcontainers") Pods.validateEphemeralContainersUpdate(pod, old, errors)
  else Pods.validatePodResize(pod, old, errors)
  const name = (pod.metadata as JsonObject | undefined)?.name
  Field.throwIfAny(kind, typeof name === "string" ? name : "", errors)
}

/** The Scale a `scale` write sends (`Scale.autoscaling "web" is invalid: spec.replicas: ...`). @internal */
export const checkScale = (scale: JsonObject, name: string): void => {
  Field.throwIfAny({ group: "autoscaling", kind: "Scale", plural: "scales" }, name, Apps.scale(scale))
}

/** Kinds whose objects get no `metadata.generation` (their strategies never set one). */
const withoutGeneration = new Set([
  "/ConfigMap",
  "/Secret",
  "/Namespace",
  "/ServiceAccount",
  "node.k8s.io/RuntimeClass",
  "/Service",
  "/Endpoints",
  "/Event",
  "/Node",
  "/PersistentVolumeClaim",
  "/PersistentVolume",
  "/LimitRange",
  "/ResourceQuota",
  "autoscaling/HorizontalPodAutoscaler",
  "events.k8s.io/Event",
  "rbac.authorization.k8s.io/Role",
  "rbac.authorization.k8s.io/RoleBinding",
  "rbac.authorization.k8s.io/ClusterRole",
  "rbac.authorization.k8s.io/ClusterRoleBinding",
  "coordination.k8s.io/Lease",
  "storage.k8s.io/StorageClass",
  "apps/ControllerRevision"
])

/** Whether the API server keeps a `metadata.generation` for the kind's objects. @internal */
export const hasGeneration = (kind: Pick<KindInfo, "group" | "kind">): boolean =>
  !withoutGeneration.has(`${kind.group}/${kind.kind}`)

/**
 * Defaulting as kube-apiserver does it, per kind: the versioned defaults every decode
 * applies (pkg/apis/{core,apps,batch,rbac,...}/v1/defaults.go, apiextensions' CRD
 * defaults), and what the registry strategies and default admission plugins add when an
 * object is created or updated (a Job's generated selector, a Service's cluster IP and
 * node ports, a Secret's `stringData` merged into `data`, a namespace's name label, a
 * pod's service account token).
 *
 * `apply` is what the fake's API writes run; a controller creating objects may run it
 * too, so that what it stores looks as the server would store it.
 *
 * @internal
 */
import { eventsEvent, normalizeCoreEvent } from "../store/conversion.js"
import { isObject, type JsonObject } from "../store/json.js"
import type { KindInfo } from "../store/kinds.js"
import * as Pods from "./pods.js"

const set = (obj: JsonObject, key: string, value: unknown): void => {
  if (obj[key] === undefined || obj[key] === null) obj[key] = value
}

const setIfEmpty = (obj: JsonObject, key: string, value: unknown): void => {
  if (obj[key] === undefined || obj[key] === null || obj[key] === "") obj[key] = value
}

const child = (obj: JsonObject, key: string): JsonObject => {
  if (!isObject(obj[key])) obj[key] = {}
  return obj[key] as JsonObject
}

const objectsOf = (list: unknown): Array<JsonObject> => (Array.isArray(list) ? list.filter(isObject) : [])

/** Where the write comes from: a create, or an update of `old`. @internal */
export interface Context {
  readonly old: JsonObject | undefined
  /** Service IPs and node ports already taken (all Services of the cluster). */
  readonly takenServiceAddresses: () => ReadonlySet<string>
}

type Defaulter = (obj: JsonObject, context: Context) => void

const sortedMap = (map: JsonObject): JsonObject => {
  const out: JsonObject = {}
  for (const k of Object.keys(map).sort()) if (map[k] !== undefined) out[k] = map[k]
  return out
}

const claimSpec = (spec: unknown): void => {
  if (!isObject(spec)) return
  set(spec, "volumeMode", "Filesystem")
  const resources = isObject(spec.resources) ? spec.resources : undefined
  if (resources !== undefined) {
    Pods.canonicalQuantities(resources.requests)
    Pods.canonicalQuantities(resources.limits)
  }
}

const deployment: Defaulter = (obj) => {
  const spec = child(obj, "spec")
  set(spec, "replicas", 1)
  const strategy = child(spec, "strategy")
  setIfEmpty(strategy, "type", "RollingUpdate")
  if (strategy.type === "RollingUpdate") {
    const rolling = child(strategy, "rollingUpdate")
    set(rolling, "maxUnavailable", "25%")
    set(rolling, "maxSurge", "25%")
  }
  set(spec, "revisionHistoryLimit", 10)
  set(spec, "progressDeadlineSeconds", 600)
  Pods.podTemplate(spec.template)
}

const replicaSet: Defaulter = (obj) => {
  const spec = child(obj, "spec")
  set(spec, "replicas", 1)
  Pods.podTemplate(spec.template)
}

const statefulSet: Defaulter = (obj) => {
  const spec = child(obj, "spec")
  setIfEmpty(spec, "podManagementPolicy", "OrderedReady")
  const strategy = child(spec, "updateStrategy")
  if (strategy.type === undefined || strategy.type === "") {
    strategy.type = "RollingUpdate"
    set(strategy, "rollingUpdate", {})
  }
  if (strategy.type === "RollingUpdate" && isObject(strategy.rollingUpdate)) set(strategy.rollingUpdate, "partition", 0)
  const retention = child(spec, "persistentVolumeClaimRetentionPolicy")
  setIfEmpty(retention, "whenDeleted", "Retain")
  setIfEmpty(retention, "whenScaled", "Retain")
  set(spec, "replicas", 1)
  set(spec, "revisionHistoryLimit", 10)
  Pods.podTemplate(spec.template)
  for (const claim of objectsOf(spec.volumeClaimTemplates)) {
    claimSpec(claim.spec)
    set(claim, "status", {})
    setIfEmpty(claim.status as JsonObject, "phase", "Pending")
  }
}

const daemonSet: Defaulter = (obj, context) => {
  const spec = child(obj, "spec")
  const strategy = child(spec, "updateStrategy")
  setIfEmpty(strategy, "type", "RollingUpdate")
  if (strategy.type === "RollingUpdate") {
    const rolling = child(strategy, "rollingUpdate")
    set(rolling, "maxUnavailable", 1)
    set(rolling, "maxSurge", 0)
  }
  set(spec, "revisionHistoryLimit", 10)
  Pods.podTemplate(spec.template)
  daemonSetTemplateGeneration(obj, context)
}

/**
 * The DaemonSet registry's deprecated.daemonset.template.generation annotation: 1 on create, one more each time an
 * update changes the pod template.
 */
const daemonSetTemplateGeneration = (obj: JsonObject, context: Context): void => {
  const key = "deprecated.daemonset.template.generation"
  const annotations = child(child(obj, "metadata"), "annotations")
  const old = context.old
  if (old === undefined) {
    annotations[key] = "1"
    return
  }
  const oldAnnotations = isObject(old.metadata) && isObject(old.metadata.annotations) ? old.metadata.annotations : {}
  const before = Number(oldAnnotations[key] ?? "1")
  const oldTemplate = isObject(old.spec) ? old.spec.template : undefined
  const changed = JSON.stringify(oldTemplate) !== JSON.stringify(child(obj, "spec").template)
  annotations[key] = String(changed ? before + 1 : before)
}

const jobSpec = (spec: JsonObject): void => {
  if (spec.completions === undefined && spec.parallelism === undefined) {
    spec.completions = 1
    spec.parallelism = 1
  }
  set(spec, "parallelism", 1)
  set(spec, "backoffLimit", spec.backoffLimitPerIndex !== undefined ? 2147483647 : 6)
  set(spec, "completionMode", "NonIndexed")
  set(spec, "suspend", false)
  set(spec, "podReplacementPolicy", spec.podFailurePolicy !== undefined ? "Failed" : "TerminatingOrFailed")
  for (const rule of objectsOf(isObject(spec.podFailurePolicy) ? spec.podFailurePolicy.rules : undefined)) {
    for (const pattern of objectsOf(rule.onPodConditions)) setIfEmpty(pattern, "status", "True")
  }
}

const job: Defaulter = (obj, context) => {
  const spec = child(obj, "spec")
  jobSpec(spec)
  Pods.podTemplate(spec.template)
  const metadata = child(obj, "metadata")
  const template = child(spec, "template")
  const templateMeta = isObject(template.metadata) ? template.metadata : undefined
  const copyLabels = templateMeta !== undefined && isObject(templateMeta.labels) &&
    (!isObject(metadata.labels) || Object.keys(metadata.labels).length === 0)
  if (context.old === undefined && spec.manualSelector !== true) generateSelector(obj)
  if (context.old === undefined) set(spec, "manualSelector", false)
  // the API server's Job takes its template's labels map itself, so it sees the generated labels too
  if (copyLabels) metadata.labels = { ...(templateMeta!.labels as JsonObject) }
}

/** The Job strategy's generated selector: the controller-uid label, and the job-name labels on the template. */
const generateSelector = (obj: JsonObject): void => {
  const metadata = child(obj, "metadata")
  const uid = String(metadata.uid ?? "")
  const spec = child(obj, "spec")
  const templateMeta = child(child(spec, "template"), "metadata")
  const labels = child(templateMeta, "labels")
  for (const k of ["batch.kubernetes.io/job-name", "job-name"]) set(labels, k, metadata.name)
  for (const k of ["batch.kubernetes.io/controller-uid", "controller-uid"]) set(labels, k, uid)
  templateMeta.labels = sortedMap(labels)
  const selector = child(spec, "selector")
  const matchLabels = child(selector, "matchLabels")
  set(matchLabels, "batch.kubernetes.io/controller-uid", uid)
}

const cronJob: Defaulter = (obj) => {
  const spec = child(obj, "spec")
  // the templates' ObjectMeta are Go values: encoded as {} when empty
  const template = child(spec, "jobTemplate")
  child(template, "metadata")
  const jobSpec = child(template, "spec")
  if (isObject(jobSpec.template)) child(jobSpec.template, "metadata")
  setIfEmpty(spec, "concurrencyPolicy", "Allow")
  set(spec, "suspend", false)
  set(spec, "successfulJobsHistoryLimit", 3)
  set(spec, "failedJobsHistoryLimit", 1)
  const jobTemplate = child(spec, "jobTemplate")
  Pods.podTemplate(child(jobTemplate, "spec").template)
}

const randomIp = (taken: ReadonlySet<string>): string => {
  // the default service CIDR, 10.96.0.0/12, without its network, broadcast and first (kubernetes) addresses
  for (;;) {
    const n = 2 + Math.floor(Math.random() * (2 ** 20 - 3))
    const ip = `10.${96 + (n >> 16)}.${(n >> 8) & 255}.${n & 255}`
    if (!taken.has(ip) && ip !== "10.96.0.10") return ip
  }
}

const randomNodePort = (taken: ReadonlySet<string>): number => {
  for (;;) {
    const port = 30000 + Math.floor(Math.random() * 2768)
    if (!taken.has(`:${port}`)) return port
  }
}

const externallyAccessible = (spec: JsonObject): boolean =>
  spec.type === "LoadBalancer" || spec.type === "NodePort" ||
  (spec.type === "ClusterIP" && Array.isArray(spec.externalIPs) && spec.externalIPs.length > 0)

/**
 * A Service: `SetDefaults_Service`, then what the Service registry allocates (a cluster
 * IP from 10.96.0.0/12, node ports from 30000-32767) or, on update, keeps of what was
 * allocated when the new object leaves it out.
 */
const service: Defaulter = (obj, context) => {
  const spec = child(obj, "spec")
  setIfEmpty(spec, "sessionAffinity", "None")
  if (spec.sessionAffinity === "None") spec.sessionAffinityConfig = undefined
  if (spec.sessionAffinity === "ClientIP") {
    const config = child(spec, "sessionAffinityConfig")
    set(child(config, "clientIP"), "timeoutSeconds", 10800)
  }
  setIfEmpty(spec, "type", "ClusterIP")
  for (const port of objectsOf(spec.ports)) {
    setIfEmpty(port, "protocol", "TCP")
    if (port.targetPort === undefined || port.targetPort === 0 || port.targetPort === "") port.targetPort = port.port
  }
  if (externallyAccessible(spec)) setIfEmpty(spec, "externalTrafficPolicy", "Cluster")
  if (spec.type === "NodePort" || spec.type === "LoadBalancer" || spec.type === "ClusterIP") {
    set(spec, "internalTrafficPolicy", "Cluster")
  }
  if (spec.type === "LoadBalancer") set(spec, "allocateLoadBalancerNodePorts", true)
  const old = context.old !== undefined && isObject(context.old.spec) ? context.old.spec : undefined
  if (spec.type === "ExternalName") return
  if (old !== undefined && old.type !== "ExternalName") {
    // an update that leaves out what was allocated keeps it (`patchAllocatedValues`)
    if ((spec.clusterIP === undefined || spec.clusterIP === "") && old.clusterIP !== undefined) spec.clusterIP = old.clusterIP
    if (spec.clusterIPs === undefined && old.clusterIPs !== undefined) spec.clusterIPs = old.clusterIPs
    if (spec.ipFamilies === undefined && old.ipFamilies !== undefined) spec.ipFamilies = old.ipFamilies
    if (spec.ipFamilyPolicy === undefined && old.ipFamilyPolicy !== undefined) spec.ipFamilyPolicy = old.ipFamilyPolicy
    for (const port of objectsOf(spec.ports)) {
      if (port.nodePort !== undefined && port.nodePort !== 0) continue
      const same = objectsOf(old.ports).find((p) => p.port === port.port && (p.protocol ?? "TCP") === port.protocol)
      if (same !== undefined && typeof same.nodePort === "number") port.nodePort = same.nodePort
    }
  }
  const taken = context.takenServiceAddresses()
  if (spec.clusterIP === undefined || spec.clusterIP === "") {
    const fromList = Array.isArray(spec.clusterIPs) && typeof spec.clusterIPs[0] === "string" ? spec.clusterIPs[0] : ""
    spec.clusterIP = fromList !== "" ? fromList : randomIp(taken)
  }
  if (!Array.isArray(spec.clusterIPs) || spec.clusterIPs.length === 0) spec.clusterIPs = [spec.clusterIP]
  const headless = spec.clusterIP === "None"
  const hasSelector = isObject(spec.selector) && Object.keys(spec.selector).length > 0
  set(spec, "ipFamilyPolicy", headless && !hasSelector ? "RequireDualStack" : "SingleStack")
  set(spec, "ipFamilies", ["IPv4"])
  if (spec.type === "NodePort" || (spec.type === "LoadBalancer" && spec.allocateLoadBalancerNodePorts !== false)) {
    for (const port of objectsOf(spec.ports)) {
      if (port.nodePort === undefined || port.nodePort === 0) port.nodePort = randomNodePort(taken)
    }
  }
}

const serviceStatus: Defaulter = (obj) => {
  const status = child(obj, "status")
  set(status, "loadBalancer", {})
}

const secret: Defaulter = (obj) => {
  setIfEmpty(obj, "type", "Opaque")
  if (!isObject(obj.stringData)) return
  const data = isObject(obj.data) ? { ...obj.data } : {}
  for (const [k, v] of Object.entries(obj.stringData)) {
    if (typeof v === "string") data[k] = Buffer.from(v, "utf8").toString("base64")
  }
  obj.data = sortedMap(data)
  obj.stringData = undefined
}

const namespace: Defaulter = (obj) => {
  const metadata = child(obj, "metadata")
  const labels = child(metadata, "labels")
  labels["kubernetes.io/metadata.name"] = metadata.name
  metadata.labels = sortedMap(labels)
  const spec = child(obj, "spec")
  if (!Array.isArray(spec.finalizers)) spec.finalizers = ["kubernetes"]
  setIfEmpty(child(obj, "status"), "phase", "Active")
}

const persistentVolumeClaim: Defaulter = (obj) => {
  claimSpec(child(obj, "spec"))
  setIfEmpty(child(obj, "status"), "phase", "Pending")
}

const persistentVolume: Defaulter = (obj) => {
  const spec = child(obj, "spec")
  setIfEmpty(spec, "persistentVolumeReclaimPolicy", "Retain")
  setIfEmpty(spec, "volumeMode", "Filesystem")
  if (isObject(spec.hostPath)) set(spec.hostPath, "type", "")
  Pods.canonicalQuantities(spec.capacity)
  setIfEmpty(child(obj, "status"), "phase", "Pending")
}

const subjects = (obj: JsonObject): void => {
  for (const s of objectsOf(obj.subjects)) {
    if (s.apiGroup !== undefined && s.apiGroup !== "") continue
    if (s.kind === "User" || s.kind === "Group") s.apiGroup = "rbac.authorization.k8s.io"
  }
}

const binding: Defaulter = (obj) => {
  if (isObject(obj.roleRef)) setIfEmpty(obj.roleRef, "apiGroup", "rbac.authorization.k8s.io")
  subjects(obj)
}

const podDisruptionBudget: Defaulter = (obj, context) => {
  if (context.old !== undefined) return
  obj.status = { currentHealthy: 0, desiredHealthy: 0, disruptionsAllowed: 0, expectedPods: 0 }
}

const ingress: Defaulter = (obj) => {
  set(child(obj, "status"), "loadBalancer", {})
}

const customResourceDefinition: Defaulter = (obj, context) => {
  const spec = child(obj, "spec")
  const names = child(spec, "names")
  if (typeof names.kind === "string") {
    setIfEmpty(names, "singular", names.kind.toLowerCase())
    if (names.kind !== "") setIfEmpty(names, "listKind", `${names.kind}List`)
  }
  set(spec, "conversion", { strategy: "None" })
  if (context.old === undefined) {
    const storage = objectsOf(spec.versions).find((v) => v.storage === true)
    obj.status = {
      acceptedNames: { kind: "", plural: "" },
      storedVersions: storage !== undefined ? [storage.name] : []
    }
  } else {
    // the CRD registry records a new storage version as the update is written, not later
    const storage = objectsOf(spec.versions).find((v) => v.storage === true)
    const status = child(obj, "status")
    const stored = Array.isArray(status.storedVersions) ? status.storedVersions : []
    if (storage !== undefined && typeof storage.name === "string" && !stored.includes(storage.name)) {
      status.storedVersions = [...stored, storage.name]
    }
  }
}

const endpoints: Defaulter = (obj) => {
  for (const subset of objectsOf(obj.subsets)) for (const port of objectsOf(subset.ports)) setIfEmpty(port, "protocol", "TCP")
}

const endpointSlice: Defaulter = (obj) => {
  for (const port of objectsOf(obj.ports)) {
    set(port, "name", "")
    setIfEmpty(port, "protocol", "TCP")
  }
  for (const endpoint of objectsOf(obj.endpoints)) set(endpoint, "conditions", {})
}

const limitRange: Defaulter = (obj) => {
  for (const limit of objectsOf(child(obj, "spec").limits)) {
    if (limit.type !== "Container") continue
    const fill = (into: string, from: unknown) => {
      if (!isObject(from)) return
      for (const [k, v] of Object.entries(from)) {
        const target = child(limit, into)
        if (target[k] === undefined) target[k] = v
      }
    }
    // a default limit is the max; a default request is the default limit, else the min (SetDefaults_LimitRangeItem)
    fill("default", limit.max)
    fill("defaultRequest", limit.default)
    fill("defaultRequest", limit.min)
  }
}

const networkPolicy: Defaulter = (obj) => {
  const spec = child(obj, "spec")
  if (Array.isArray(spec.policyTypes) && spec.policyTypes.length > 0) return
  spec.policyTypes = Array.isArray(spec.egress) && spec.egress.length > 0 ? ["Ingress", "Egress"] : ["Ingress"]
}

const horizontalPodAutoscaler: Defaulter = (obj) => {
  const spec = child(obj, "spec")
  set(spec, "minReplicas", 1)
  if (!Array.isArray(spec.metrics) || spec.metrics.length === 0) {
    spec.metrics = [{ type: "Resource", resource: { name: "cpu", target: { type: "Utilization", averageUtilization: 80 } } }]
  }
}

const validatingAdmissionPolicy: Defaulter = (obj) => {
  const spec = child(obj, "spec")
  setIfEmpty(spec, "failurePolicy", "Fail")
  if (!isObject(spec.matchConstraints)) return
  const match = spec.matchConstraints
  set(match, "namespaceSelector", {})
  set(match, "objectSelector", {})
  setIfEmpty(match, "matchPolicy", "Equivalent")
  for (const rule of [...objectsOf(match.resourceRules), ...objectsOf(match.excludeResourceRules)]) {
    setIfEmpty(rule, "scope", "*")
  }
}

const statusOf = (fields: JsonObject): Defaulter => (obj) => {
  const status = child(obj, "status")
  for (const [k, v] of Object.entries(fields)) set(status, k, v)
}

/** What each kind's defaults are, by `group/Kind`. */
const defaulters: Record<string, ReadonlyArray<Defaulter>> = {
  "/Pod": [(obj) => Pods.pod(obj)],
  "/PodTemplate": [(obj) => Pods.podTemplate(obj.template)],
  "/ReplicationController": [(obj) => {
    const spec = child(obj, "spec")
    set(spec, "replicas", 1)
    Pods.podTemplate(spec.template)
    // SetDefaults_ReplicationController: an RC without labels (or selector) takes its template's
    const template = isObject(spec.template) ? spec.template : undefined
    const templateLabels = template !== undefined && isObject(template.metadata) ? template.metadata.labels : undefined
    if (isObject(templateLabels)) {
      const metadata = child(obj, "metadata")
      if (!isObject(metadata.labels) || Object.keys(metadata.labels).length === 0) metadata.labels = { ...templateLabels }
      if (!isObject(spec.selector) || Object.keys(spec.selector).length === 0) spec.selector = { ...templateLabels }
    }
  }, statusOf({ replicas: 0 })],
  "/ResourceQuota": [statusOf({})],
  "/Endpoints": [endpoints],
  "/LimitRange": [limitRange],
  "discovery.k8s.io/EndpointSlice": [endpointSlice],
  "storage.k8s.io/StorageClass": [(obj) => {
    setIfEmpty(obj, "reclaimPolicy", "Delete")
    setIfEmpty(obj, "volumeBindingMode", "Immediate")
  }],
  "scheduling.k8s.io/PriorityClass": [(obj) => setIfEmpty(obj, "preemptionPolicy", "PreemptLowerPriority")],
  "networking.k8s.io/NetworkPolicy": [networkPolicy],
  "autoscaling/HorizontalPodAutoscaler": [horizontalPodAutoscaler, statusOf({ desiredReplicas: 0, currentMetrics: null })],
  "admissionregistration.k8s.io/ValidatingAdmissionPolicy": [validatingAdmissionPolicy, statusOf({})],
  "apps/Deployment": [deployment, statusOf({})],
  "apps/ReplicaSet": [replicaSet, statusOf({ replicas: 0 })],
  "apps/StatefulSet": [statefulSet, statusOf({ replicas: 0, availableReplicas: 0 })],
  "apps/DaemonSet": [
    daemonSet,
    statusOf({ currentNumberScheduled: 0, numberMisscheduled: 0, desiredNumberScheduled: 0, numberReady: 0 })
  ],
  "batch/Job": [job, statusOf({})],
  "batch/CronJob": [cronJob, statusOf({})],
  "/Service": [service, serviceStatus],
  "/Secret": [secret],
  "/Namespace": [namespace],
  "/PersistentVolumeClaim": [persistentVolumeClaim],
  "/PersistentVolume": [persistentVolume],
  "rbac.authorization.k8s.io/RoleBinding": [binding],
  "rbac.authorization.k8s.io/ClusterRoleBinding": [binding],
  "policy/PodDisruptionBudget": [podDisruptionBudget],
  "networking.k8s.io/Ingress": [ingress],
  "apiextensions.k8s.io/CustomResourceDefinition": [customResourceDefinition],
  // no defaults, but the Go struct's zero values (`"reportingComponent": ""`, `"source": {}`, unset times `null`)
  "/Event": [(obj) => normalizeCoreEvent(obj)],
  "events.k8s.io/Event": [(obj) => eventsEvent.normalize(obj)]
}

/**
 * Applies a kind's defaults (and, on create, its admission defaults) to an object in
 * place. Objects of kinds without defaults are left as they are.
 *
 * @internal
 */
export const apply = (kind: Pick<KindInfo, "group" | "kind">, obj: JsonObject, context: Context): void => {
  const key = `${kind.group}/${kind.kind}`
  for (const d of defaulters[key] ?? []) d(obj, context)
  if (key === "/Pod" && context.old === undefined) Pods.podAdmission(obj)
}

/** Whether the kind has defaults of its own. @internal */
export const hasDefaults = (kind: Pick<KindInfo, "group" | "kind">): boolean =>
  defaulters[`${kind.group}/${kind.kind}`] !== undefined

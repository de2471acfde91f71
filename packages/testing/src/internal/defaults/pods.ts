/**
 * The defaults of pod specs (pkg/apis/core/v1/defaults.go: `SetDefaults_PodSpec`,
 * `SetDefaults_Container`, probes, ports, volumes, downward-API references) and what a
 * Pod itself gets besides (`SetDefaults_Pod`, and the default admission plugins
 * ServiceAccount, Priority and DefaultTolerationSeconds).
 *
 * @internal
 */
import { Quantity } from "effect-kube"
import * as Result from "effect/Result"
import { isObject, type JsonObject, randomSuffix } from "../store/json.js"

const set = (obj: JsonObject, key: string, value: unknown): void => {
  if (obj[key] === undefined || obj[key] === null) obj[key] = value
}

const setIfEmpty = (obj: JsonObject, key: string, value: unknown): void => {
  if (obj[key] === undefined || obj[key] === null || obj[key] === "") obj[key] = value
}

const objectsOf = (list: unknown): Array<JsonObject> => (Array.isArray(list) ? list.filter(isObject) : [])

const objectAt = (obj: JsonObject, key: string): JsonObject | undefined =>
  isObject(obj[key]) ? (obj[key] as JsonObject) : undefined

// the reference grammar of distribution/reference, which parsers.ParseImageName reads an image with
const domainPart = "(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
const component = "[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*"
const reference = new RegExp(
  `^(?:${domainPart}(?:\\.${domainPart})*(?::[0-9]+)?/)?${component}(?:/${component})*` +
    "(?::[\\w][\\w.-]{0,127})?(?:@[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9A-Fa-f]{32,})?$"
)

/**
 * The tag `ParseImageName` finds: `latest` when there is neither tag nor digest, "" with a
 * digest only, and "" for an image that does not parse (a repository name over 255
 * characters, upper case, ...), whose default is then IfNotPresent.
 */
const imageTag = (image: string): string => {
  if (!reference.test(image)) return ""
  const at = image.indexOf("@")
  const name = at === -1 ? image : image.slice(0, at)
  const lastSlash = name.lastIndexOf("/")
  const colon = name.lastIndexOf(":")
  if ((colon > lastSlash ? name.slice(0, colon) : name).length > 255) return ""
  const tag = colon > lastSlash ? name.slice(colon + 1) : ""
  if (tag !== "") return tag
  return at === -1 ? "latest" : ""
}

/** Resource quantities as the server stores them: canonical (`0.5` is `500m`, `1024Mi` is `1Gi`). */
export const canonicalQuantities = (map: unknown): void => {
  if (!isObject(map)) return
  for (const k of Object.keys(map)) {
    const v = map[k]
    if (typeof v !== "string" && typeof v !== "number") continue
    const canonical = Quantity.canonicalize(String(v))
    if (Result.isSuccess(canonical)) map[k] = canonical.success
  }
}

const probe = (p: unknown): void => {
  if (!isObject(p)) return
  set(p, "timeoutSeconds", 1)
  set(p, "periodSeconds", 10)
  set(p, "successThreshold", 1)
  set(p, "failureThreshold", 3)
  handler(p)
}

/** The defaults of a probe's or a lifecycle hook's handler. */
const handler = (h: JsonObject): void => {
  const http = objectAt(h, "httpGet")
  if (http !== undefined) {
    setIfEmpty(http, "path", "/")
    setIfEmpty(http, "scheme", "HTTP")
  }
  const grpc = objectAt(h, "grpc")
  if (grpc !== undefined) set(grpc, "service", "")
}

const fieldRef = (ref: unknown): void => {
  if (isObject(ref)) setIfEmpty(ref, "apiVersion", "v1")
}

const resourceFieldRef = (ref: unknown): void => {
  if (isObject(ref)) set(ref, "divisor", "0")
}

const container = (c: JsonObject): void => {
  // an image left out or unreadable is validation's to refuse: the default is IfNotPresent all the same
  if (c.imagePullPolicy === undefined || c.imagePullPolicy === "" || c.imagePullPolicy === null) {
    c.imagePullPolicy = typeof c.image === "string" && imageTag(c.image) === "latest" ? "Always" : "IfNotPresent"
  }
  setIfEmpty(c, "terminationMessagePath", "/dev/termination-log")
  setIfEmpty(c, "terminationMessagePolicy", "File")
  for (const port of objectsOf(c.ports)) setIfEmpty(port, "protocol", "TCP")
  for (const env of objectsOf(c.env)) {
    const from = objectAt(env, "valueFrom")
    if (from === undefined) continue
    fieldRef(from.fieldRef)
    resourceFieldRef(from.resourceFieldRef)
  }
  probe(c.livenessProbe)
  probe(c.readinessProbe)
  probe(c.startupProbe)
  const lifecycle = objectAt(c, "lifecycle")
  if (lifecycle !== undefined) {
    for (const hook of ["postStart", "preStop"]) if (isObject(lifecycle[hook])) handler(lifecycle[hook] as JsonObject)
  }
  // a non-pointer struct: always there, `{}` when empty
  if (!isObject(c.resources)) c.resources = {}
  const resources = c.resources as JsonObject
  canonicalQuantities(resources.limits)
  canonicalQuantities(resources.requests)
}

const volumeSources = [
  "hostPath", "emptyDir", "gcePersistentDisk", "awsElasticBlockStore", "gitRepo", "secret", "nfs", "iscsi",
  "glusterfs", "persistentVolumeClaim", "rbd", "flexVolume", "cinder", "cephfs", "flocker", "downwardAPI", "fc",
  "azureFile", "configMap", "vsphereVolume", "quobyte", "azureDisk", "photonPersistentDisk", "projected",
  "portworxVolume", "scaleIO", "storageos", "csi", "ephemeral", "image"
]

const volume = (v: JsonObject): void => {
  if (!volumeSources.some((s) => v[s] !== undefined && v[s] !== null)) v.emptyDir = {}
  for (const source of ["secret", "configMap", "downwardAPI", "projected"]) {
    const s = objectAt(v, source)
    if (s !== undefined) set(s, "defaultMode", 420)
  }
  const hostPath = objectAt(v, "hostPath")
  if (hostPath !== undefined) set(hostPath, "type", "")
  const downward = objectAt(v, "downwardAPI")
  for (const item of objectsOf(downward?.items)) {
    fieldRef(item.fieldRef)
    resourceFieldRef(item.resourceFieldRef)
  }
  for (const source of objectsOf(objectAt(v, "projected")?.sources)) {
    const token = objectAt(source, "serviceAccountToken")
    if (token !== undefined) set(token, "expirationSeconds", 3600)
    for (const item of objectsOf(objectAt(source, "downwardAPI")?.items)) {
      fieldRef(item.fieldRef)
      resourceFieldRef(item.resourceFieldRef)
    }
  }
  const ephemeral = objectAt(objectAt(v, "ephemeral") ?? {}, "volumeClaimTemplate")
  const claimSpec = ephemeral !== undefined ? objectAt(ephemeral, "spec") : undefined
  if (claimSpec !== undefined) set(claimSpec, "volumeMode", "Filesystem")
}

/** `SetDefaults_PodSpec` and what its generated defaulter reaches (containers, volumes). @internal */
export const podSpec = (spec: unknown): void => {
  if (!isObject(spec)) return
  // v1's deprecated `serviceAccount` is read when `serviceAccountName` is not set, and always written as it
  if ((spec.serviceAccountName === undefined || spec.serviceAccountName === "") && typeof spec.serviceAccount === "string") {
    spec.serviceAccountName = spec.serviceAccount
  }
  spec.serviceAccount = spec.serviceAccountName === "" ? undefined : spec.serviceAccountName
  setIfEmpty(spec, "dnsPolicy", "ClusterFirst")
  setIfEmpty(spec, "restartPolicy", "Always")
  set(spec, "securityContext", {})
  set(spec, "terminationGracePeriodSeconds", 30)
  setIfEmpty(spec, "schedulerName", "default-scheduler")
  for (const list of ["containers", "initContainers", "ephemeralContainers"]) {
    for (const c of objectsOf(spec[list])) container(c)
  }
  for (const v of objectsOf(spec.volumes)) volume(v)
  canonicalQuantities(spec.overhead)
}

/** A pod template (`metadata` and `spec`): the spec's defaults. @internal */
export const podTemplate = (template: unknown): void => {
  if (isObject(template)) podSpec(template.spec)
}

const serviceAccountMountPath = "/var/run/secrets/kubernetes.io/serviceaccount"

/** The projected volume the ServiceAccount admission plugin adds to a pod. */
const tokenVolume = (name: string): JsonObject => ({
  name,
  projected: {
    sources: [
      { serviceAccountToken: { expirationSeconds: 3607, path: "token" } },
      { configMap: { name: "kube-root-ca.crt", items: [{ key: "ca.crt", path: "ca.crt" }] } },
      {
        downwardAPI: {
          items: [{ path: "namespace", fieldRef: { apiVersion: "v1", fieldPath: "metadata.namespace" } }]
        }
      }
    ],
    defaultMode: 420
  }
})

const serviceAccountAdmission = (spec: JsonObject): void => {
  setIfEmpty(spec, "serviceAccountName", "default")
  spec.serviceAccount = spec.serviceAccountName
  if (spec.automountServiceAccountToken === false) return
  const containers = ["initContainers", "containers"].flatMap((k) => objectsOf(spec[k]))
  // a pod that mounts something at the token's path already is left alone
  const mounted = containers.some((c) => objectsOf(c.volumeMounts).some((m) => m.mountPath === serviceAccountMountPath))
  if (mounted) return
  const volumes = Array.isArray(spec.volumes) ? (spec.volumes as Array<unknown>) : (spec.volumes = [])
  const name = `kube-api-access-${randomSuffix()}`
  volumes.push(tokenVolume(name))
  for (const c of containers) {
    const mounts = Array.isArray(c.volumeMounts) ? (c.volumeMounts as Array<unknown>) : (c.volumeMounts = [])
    mounts.push({ name, readOnly: true, mountPath: serviceAccountMountPath })
  }
}

const defaultTolerations = (spec: JsonObject): void => {
  const tolerations = Array.isArray(spec.tolerations) ? (spec.tolerations as Array<unknown>) : []
  for (const key of ["node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"]) {
    const has = tolerations.some((t) =>
      isObject(t) && (t.key === key || t.key === undefined || t.key === "") &&
      (t.effect === "NoExecute" || t.effect === undefined || t.effect === "")
    )
    if (!has) tolerations.push({ key, operator: "Exists", effect: "NoExecute", tolerationSeconds: 300 })
  }
  spec.tolerations = tolerations
}

/**
 * A Pod's defaults, on every write: its spec's, and `SetDefaults_Pod`'s (requests from
 * limits, service links, host ports on the host network).
 *
 * @internal
 */
export const pod = (obj: JsonObject): void => {
  const spec = objectAt(obj, "spec")
  if (spec === undefined) return
  podSpec(spec)
  for (const c of ["containers", "initContainers"].flatMap((k) => objectsOf(spec[k]))) {
    const resources = objectAt(c, "resources")
    const limits = resources !== undefined ? objectAt(resources, "limits") : undefined
    if (resources === undefined || limits === undefined) continue
    const requests = objectAt(resources, "requests") ?? (resources.requests = {}) as JsonObject
    for (const [k, v] of Object.entries(limits)) if (requests[k] === undefined) requests[k] = v
  }
  set(spec, "enableServiceLinks", true)
  if (spec.hostNetwork === true) {
    for (const c of ["containers", "initContainers"].flatMap((k) => objectsOf(spec[k]))) {
      for (const port of objectsOf(c.ports)) {
        if (port.hostPort === undefined || port.hostPort === 0) port.hostPort = port.containerPort
      }
    }
  }
}

/**
 * What the admission plugins of a default kube-apiserver add to a new Pod: its service
 * account and the token volume mounted in every container (ServiceAccount), its priority
 * (Priority) and the not-ready / unreachable tolerations (DefaultTolerationSeconds).
 *
 * @internal
 */
export const podAdmission = (obj: JsonObject): void => {
  const spec = objectAt(obj, "spec")
  if (spec === undefined) return
  serviceAccountAdmission(spec)
  if (spec.priorityClassName === undefined || spec.priorityClassName === "") set(spec, "priority", 0)
  set(spec, "preemptionPolicy", "PreemptLowerPriority")
  defaultTolerations(spec)
}

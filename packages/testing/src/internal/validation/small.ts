/**
 * Kinds with short validations, as their registries check them in kube-apiserver v1.35:
 * IngressClass (networking), RuntimeClass (node), StorageClass (storage),
 * ControllerRevision (apps), HorizontalPodAutoscaler's target (autoscaling) and
 * Endpoints' subsets (core). The differential fuzzer found each accepting what the server
 * refuses.
 *
 * @internal
 */
import { deepEqual, isObject, type JsonObject } from "../store/json.js"
import * as Field from "./field.js"
import * as Names from "./names.js"
import { child, type Errors, immutableAt, index, nonNegative, type Rule, valueAt } from "./rules.js"

const str = (v: unknown): string => (typeof v === "string" ? v : "")
const list = (v: unknown): Array<unknown> => (Array.isArray(v) ? v : [])
const object = (v: unknown): JsonObject => (isObject(v) ? v : {})

const domainPrefixedPath = /^[A-Za-z0-9/\-._~%!$&'()*+,;=:]+$/

/** validation.IsDomainPrefixedPath: `acme.io/foo`. */
const isDomainPrefixedPath = (path: string, value: string, errors: Errors): void => {
  if (value === "") {
    errors.push(Field.required(path, ""))
    return
  }
  const slash = value.indexOf("/")
  if (slash < 0) {
    errors.push(Field.invalid(path, value, "must be a domain-prefixed path (such as \"acme.io/foo\")"))
    return
  }
  const host = value.slice(0, slash)
  for (const msg of Names.isDns1123Subdomain(host)) errors.push(Field.invalid(path, host, msg))
  const rest = value.slice(slash + 1)
  if (!domainPrefixedPath.test(rest)) errors.push(Field.invalid(path, rest, "Invalid path"))
}

/** @internal */
export const ingressClass: ReadonlyArray<Rule> = [
  (obj, errors) => {
    const controller = str(valueAt(obj, "spec.controller"))
    if (controller.length > 250) errors.push(Field.tooLong("spec.controller", 250))
    isDomainPrefixedPath("spec.controller", controller, errors)
  },
  immutableAt("spec.controller")
]

/** @internal */
export const runtimeClass: ReadonlyArray<Rule> = [
  (obj, errors) => {
    const handler = str(obj.handler)
    for (const msg of Names.isDns1123Label(handler)) errors.push(Field.invalid("handler", handler, msg))
  },
  immutableAt("handler")
]

const reclaimPolicies = ["Delete", "Retain"]
const bindingModes = ["Immediate", "WaitForFirstConsumer"]

/** Updates the StorageClass registry forbids outright (`updates to provisioner are forbidden.`). */
const forbiddenUpdate = (path: string): Rule => (obj, errors, old) => {
  if (old !== undefined && !deepEqual(obj[path] ?? null, old[path] ?? null)) {
    errors.push(Field.forbidden(path, `updates to ${path} are forbidden.`))
  }
}

/** @internal */
export const storageClass: ReadonlyArray<Rule> = [
  (obj, errors) => {
    const provisioner = str(obj.provisioner)
    if (provisioner === "") errors.push(Field.required("provisioner", ""))
    else for (const msg of Names.isQualifiedName(provisioner.toLowerCase())) errors.push(Field.invalid("provisioner", provisioner, msg))
    const policy = obj.reclaimPolicy
    if (typeof policy === "string" && !reclaimPolicies.includes(policy)) {
      errors.push(Field.notSupported("reclaimPolicy", policy, reclaimPolicies))
    }
    const mode = obj.volumeBindingMode
    if (typeof mode === "string" && !bindingModes.includes(mode)) {
      errors.push(Field.notSupported("volumeBindingMode", mode, bindingModes))
    }
  },
  forbiddenUpdate("parameters"),
  forbiddenUpdate("provisioner"),
  forbiddenUpdate("reclaimPolicy"),
  immutableAt("volumeBindingMode")
]

/** @internal */
export const controllerRevision: ReadonlyArray<Rule> = [
  (obj, errors) => {
    if (obj.data === undefined || obj.data === null) errors.push(Field.required("data", "data is mandatory"))
    nonNegative(obj.revision, "revision", errors)
  },
  immutableAt("data")
]

/** schema.ParseGroupVersion's complaint about an apiVersion, or that it names no group. */
const apiVersionError = (apiVersion: string): string | undefined => {
  if (apiVersion === "" || apiVersion === "v1") return apiVersion === "" ? undefined : "apiVersion must specify API group"
  const parts = apiVersion.split("/")
  if (parts.length === 1) return "apiVersion must specify API group"
  if (parts.length > 2) return `unexpected GroupVersion string: ${apiVersion}`
  return undefined
}

/** ValidateCrossVersionObjectReference of an autoscaler's target. */
const crossVersionObjectReference = (ref: unknown, path: string, errors: Errors): void => {
  const r = object(ref)
  const kind = str(r.kind)
  if (kind === "") errors.push(Field.required(child(path, "kind"), ""))
  else for (const msg of Names.isValidPathSegmentName(kind)) errors.push(Field.invalid(child(path, "kind"), kind, msg))
  const name = str(r.name)
  if (name === "") errors.push(Field.required(child(path, "name"), ""))
  else for (const msg of Names.isValidPathSegmentName(name)) errors.push(Field.invalid(child(path, "name"), name, msg))
  // an empty apiVersion parses as the empty group version, which names no group either
  const apiVersion = str(r.apiVersion)
  const problem = apiVersion === "" ? "apiVersion must specify API group" : apiVersionError(apiVersion)
  if (problem !== undefined) errors.push(Field.invalid(child(path, "apiVersion"), apiVersion, problem))
}

/** @internal */
export const horizontalPodAutoscaler: ReadonlyArray<Rule> = [
  (obj, errors) => {
    const spec = object(obj.spec)
    const min = spec.minReplicas
    if (typeof min === "number" && min < 1) errors.push(Field.invalid("spec.minReplicas", min, "must be greater than or equal to 1"))
    const max = typeof spec.maxReplicas === "number" ? spec.maxReplicas : 0
    if (max < 1) errors.push(Field.invalid("spec.maxReplicas", max, "must be greater than 0"))
    if (typeof min === "number" && max < min) {
      errors.push(Field.invalid("spec.maxReplicas", max, "must be greater than or equal to `minReplicas`"))
    }
    crossVersionObjectReference(spec.scaleTargetRef, "spec.scaleTargetRef", errors)
  }
]

const ipv4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/
const isIP = (s: string): boolean => ipv4.test(s) || (s.includes(":") && /^[0-9A-Fa-f:.]+$/.test(s))
const protocols = ["SCTP", "TCP", "UDP"]

/** @internal */
export const endpoints: ReadonlyArray<Rule> = [
  (obj, errors) => {
    list(obj.subsets).forEach((s, i) => {
      const subset = object(s)
      const path = index("subsets", i)
      const addresses = list(subset.addresses)
      const notReady = list(subset.notReadyAddresses)
      if (addresses.length === 0 && notReady.length === 0) {
        errors.push(Field.required(path, "must specify `addresses` or `notReadyAddresses`"))
      }
      const address = (a: unknown, at: string) => {
        const ip = str(object(a).ip)
        if (!isIP(ip)) errors.push(Field.invalid(child(at, "ip"), ip, "must be a valid IP address"))
        const hostname = str(object(a).hostname)
        if (hostname !== "") {
          for (const msg of Names.isDns1123Label(hostname)) errors.push(Field.invalid(child(at, "hostname"), hostname, msg))
        }
      }
      addresses.forEach((a, j) => address(a, index(child(path, "addresses"), j)))
      notReady.forEach((a, j) => address(a, index(child(path, "notReadyAddresses"), j)))
      const ports = list(subset.ports)
      ports.forEach((p, j) => {
        const port = object(p)
        const at = index(child(path, "ports"), j)
        const name = str(port.name)
        if (ports.length > 1 && name === "") errors.push(Field.required(child(at, "name"), ""))
        else if (name !== "") for (const msg of Names.isDns1123Label(name)) errors.push(Field.invalid(child(at, "name"), name, msg))
        const number = typeof port.port === "number" ? port.port : 0
        for (const msg of Names.isValidPortNum(number)) errors.push(Field.invalid(child(at, "port"), number, msg))
        const protocol = str(port.protocol)
        if (protocol === "") errors.push(Field.required(child(at, "protocol"), ""))
        else if (!protocols.includes(protocol)) errors.push(Field.notSupported(child(at, "protocol"), protocol, protocols))
      })
    })
  }
]

// the volume sources of a PersistentVolumeSpec, in the order ValidatePersistentVolumeSpec checks them
const volumeSources = [
  "hostPath", "gcePersistentDisk", "awsElasticBlockStore", "glusterfs", "flocker", "nfs", "rbd", "quobyte", "cephfs",
  "iscsi", "cinder", "fc", "flexVolume", "azureFile", "vsphereVolume", "photonPersistentDisk", "portworxVolume",
  "azureDisk", "scaleIO", "local", "storageos", "csi"
]
const accessModes = ["ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"]
const pvReclaimPolicies = ["Delete", "Recycle", "Retain"]
const hostPathTypes = ["", "BlockDevice", "CharDevice", "Directory", "DirectoryOrCreate", "File", "FileOrCreate", "Socket"]

/** A quantity's sign, read loosely (its decode already refused what does not parse). */
const quantitySign = (q: unknown): number => {
  const n = Number.parseFloat(String(q))
  return Number.isNaN(n) ? 0 : Math.sign(n)
}

/** ValidatePersistentVolumeSpec of a PersistentVolume (not an inline one), and what its update may not change. */
export const persistentVolume: ReadonlyArray<Rule> = [
  (obj, errors) => {
    const spec = object(obj.spec)
    const modes = list(spec.accessModes)
    if (modes.length === 0) errors.push(Field.required("spec.accessModes", ""))
    for (const mode of modes) {
      if (typeof mode !== "string" || !accessModes.includes(mode)) errors.push(Field.notSupported("spec.accessModes", mode, accessModes))
    }
    if (modes.includes("ReadWriteOncePod") && modes.some((m) => m !== "ReadWriteOncePod" && accessModes.includes(String(m)))) {
      errors.push(Field.forbidden("spec.accessModes", "may not use ReadWriteOncePod with other access modes"))
    }
    const capacity = object(spec.capacity)
    const resources = Object.keys(capacity)
    if (resources.length === 0) errors.push(Field.required("spec.capacity", ""))
    if (!("storage" in capacity) || resources.length > 1) errors.push(Field.notSupported("spec.capacity", capacity, ["storage"]))
    for (const r of resources) {
      if (quantitySign(capacity[r]) <= 0) errors.push(Field.invalid(`spec.capacity[${r}]`, String(capacity[r]), "must be greater than zero"))
    }
    const policy = spec.persistentVolumeReclaimPolicy
    if (typeof policy === "string" && policy !== "" && !pvReclaimPolicies.includes(policy)) {
      errors.push(Field.notSupported("spec.persistentVolumeReclaimPolicy", policy, pvReclaimPolicies))
    }
    let volumes = 0
    for (const source of volumeSources) {
      if (spec[source] === undefined || spec[source] === null) continue
      if (volumes > 0) {
        errors.push(Field.forbidden(`spec.${source}`, "may not specify more than 1 volume type"))
        continue
      }
      volumes++
      if (source === "hostPath") {
        const hostPath = object(spec.hostPath)
        const path = str(hostPath.path)
        if (path === "") errors.push(Field.required("spec.hostPath.path", ""))
        else {
          if (path.split("/").includes("..")) errors.push(Field.invalid("spec.hostPath.path", path, "must not contain '..'"))
          const type = hostPath.type
          if (typeof type === "string" && !hostPathTypes.includes(type)) errors.push(Field.notSupported("spec.hostPath.type", type, hostPathTypes))
        }
      }
    }
    if (volumes === 0) errors.push(Field.required("spec", "must specify a volume type"))
  },
  (obj, errors, old) => {
    if (old === undefined) return
    const spec = object(obj.spec)
    const was = object(old.spec)
    if (volumeSources.some((s) => !deepEqual(spec[s] ?? null, was[s] ?? null))) {
      errors.push(Field.forbidden("spec.persistentvolumesource", "spec.persistentvolumesource is immutable after creation"))
    }
    if (!deepEqual(spec.volumeMode ?? null, was.volumeMode ?? null)) errors.push(Field.immutable("volumeMode", spec.volumeMode ?? ""))
  }
]

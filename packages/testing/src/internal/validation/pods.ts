/**
 * Pods and pod templates (`ValidatePodSpec`, `ValidatePodCreate`, `ValidatePodUpdate`,
 * the `ephemeralcontainers` and `resize` subresources): containers, ports, environment,
 * volumes and their mounts, resources, probes, and what a pod's update may change.
 *
 * @internal
 */
import { deepEqual, isObject, type JsonObject } from "../store/json.js"
import { Quantity } from "effect-kube"
import * as Result from "effect/Result"
import { cmpDiff } from "./cmpdiff.js"
import * as Field from "./field.js"
import * as Meta from "./meta.js"
import * as Names from "./names.js"
import { child, type Errors, index, isEmpty, key, oneOf } from "./rules.js"

const objectAt = (obj: JsonObject, k: string): JsonObject => (isObject(obj[k]) ? (obj[k] as JsonObject) : {})
const listAt = (obj: JsonObject, k: string): Array<unknown> => (Array.isArray(obj[k]) ? (obj[k] as Array<unknown>) : [])
const stringAt = (obj: JsonObject, k: string): string => (typeof obj[k] === "string" ? (obj[k] as string) : "")

const dns1123Label = (value: string, path: string, errors: Errors): void => {
  for (const msg of Names.isDns1123Label(value)) errors.push(Field.invalid(path, value, msg))
}

const volumeSources = [
  "hostPath", "emptyDir", "gcePersistentDisk", "awsElasticBlockStore", "gitRepo", "secret", "nfs", "iscsi",
  "glusterfs", "persistentVolumeClaim", "rbd", "flexVolume", "cinder", "cephfs", "flocker", "downwardAPI", "fc",
  "azureFile", "configMap", "vsphereVolume", "quobyte", "azureDisk", "photonPersistentDisk", "projected",
  "portworxVolume", "scaleIO", "storageos", "csi", "ephemeral", "image"
]

const volumeSourceRank = new Map(volumeSources.map((s, i) => [s, i]))

/** The sources a volume sets, in the order `ValidateVolumes` looks for them (by the volume's few keys, not the 30 sources). */
const sourcesOf = (vol: JsonObject): Array<string> => {
  const sources: Array<string> = []
  for (const k in vol) if (volumeSourceRank.has(k) && vol[k] !== undefined && vol[k] !== null) sources.push(k)
  if (sources.length > 1) sources.sort((a, b) => volumeSourceRank.get(a)! - volumeSourceRank.get(b)!)
  return sources
}

const requiredKeyOf: Record<string, string> = {
  secret: "secretName",
  configMap: "name",
  persistentVolumeClaim: "claimName",
  hostPath: "path",
  nfs: "server",
  image: "reference"
}

/** `ValidateVolumes`: a name (an RFC 1123 label, unique) and exactly one source. Answers the names. */
const validateVolumes = (volumes: unknown, path: string, errors: Errors): Set<string> => {
  const names = new Set<string>()
  if (!Array.isArray(volumes)) return names
  volumes.forEach((v, i) => {
    const vol = isObject(v) ? v : {}
    const at = index(path, i)
    const sources = sourcesOf(vol)
    if (sources.length === 0) errors.push(Field.required(at, "must specify a volume type"))
    else if (sources.length > 1) {
      errors.push(Field.forbidden(child(at, sources[1]!), "may not specify more than 1 volume type"))
    } else {
      const source = sources[0]!
      const needed = requiredKeyOf[source]
      const body = isObject(vol[source]) ? (vol[source] as JsonObject) : {}
      if (needed !== undefined && (typeof body[needed] !== "string" || body[needed] === "")) {
        errors.push(Field.required(child(child(at, source), needed), ""))
      }
    }
    const name = stringAt(vol, "name")
    if (name === "") errors.push(Field.required(child(at, "name"), ""))
    else dns1123Label(name, child(at, "name"), errors)
    if (names.has(name)) errors.push(Field.duplicate(child(at, "name"), name))
    else names.add(name)
  })
  return names
}

const protocols = ["SCTP", "TCP", "UDP"]

const validateContainerPorts = (ports: unknown, path: string, errors: Errors): void => {
  if (!Array.isArray(ports)) return
  const names = new Set<string>()
  ports.forEach((p, i) => {
    const port = isObject(p) ? p : {}
    const at = index(path, i)
    const name = stringAt(port, "name")
    if (name !== "") {
      const msgs = Names.isValidPortName(name)
      if (msgs.length > 0) for (const msg of msgs) errors.push(Field.invalid(child(at, "name"), name, msg))
      else if (names.has(name)) errors.push(Field.duplicate(child(at, "name"), name))
      else names.add(name)
    }
    const containerPort = typeof port.containerPort === "number" ? port.containerPort : 0
    if (containerPort === 0) errors.push(Field.required(child(at, "containerPort"), ""))
    else {
      for (const msg of Names.isValidPortNum(containerPort)) {
        errors.push(Field.invalid(child(at, "containerPort"), containerPort, msg))
      }
    }
    if (typeof port.hostPort === "number" && port.hostPort !== 0) {
      for (const msg of Names.isValidPortNum(port.hostPort)) errors.push(Field.invalid(child(at, "hostPort"), port.hostPort, msg))
    }
    oneOf(protocols, "required")(port.protocol, child(at, "protocol"), errors)
  })
}

const valueSources = ["fieldRef", "resourceFieldRef", "configMapKeyRef", "secretKeyRef", "fileKeyRef"]

const validateEnv = (env: unknown, path: string, errors: Errors): void => {
  if (!Array.isArray(env)) return
  env.forEach((e, i) => {
    const ev = isObject(e) ? e : {}
    const at = index(path, i)
    const name = stringAt(ev, "name")
    if (name === "") errors.push(Field.required(child(at, "name"), ""))
    else for (const msg of Names.isEnvVarName(name)) errors.push(Field.invalid(child(at, "name"), name, msg))
    if (!isObject(ev.valueFrom)) return
    const from = ev.valueFrom
    const count = valueSources.filter((s) => from[s] !== undefined && from[s] !== null).length
    const fromPath = child(at, "valueFrom")
    if (stringAt(ev, "value") !== "" && count !== 0) {
      errors.push(Field.invalid(fromPath, "", "may not be specified when `value` is not empty"))
    } else if (count === 0) {
      errors.push(Field.invalid(
        fromPath,
        "",
        "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`"
      ))
    } else if (count > 1) {
      errors.push(Field.invalid(fromPath, "", "may not have more than one field specified at a time"))
    }
    for (const ref of ["configMapKeyRef", "secretKeyRef"]) {
      if (!isObject(from[ref])) continue
      const r = from[ref] as JsonObject
      if (stringAt(r, "key") === "") errors.push(Field.required(child(child(fromPath, ref), "key"), ""))
      if (stringAt(r, "name") === "") errors.push(Field.required(child(child(fromPath, ref), "name"), ""))
    }
  })
}

const validateVolumeMounts = (mounts: unknown, volumes: ReadonlySet<string>, path: string, errors: Errors): void => {
  if (!Array.isArray(mounts)) return
  const paths = new Set<string>()
  mounts.forEach((m, i) => {
    const mount = isObject(m) ? m : {}
    const at = index(path, i)
    const name = stringAt(mount, "name")
    if (name === "") errors.push(Field.required(child(at, "name"), ""))
    if (!volumes.has(name)) errors.push(Field.notFound(child(at, "name"), name))
    const mountPath = stringAt(mount, "mountPath")
    if (mountPath === "") errors.push(Field.required(child(at, "mountPath"), ""))
    if (paths.has(mountPath)) errors.push(Field.invalid(child(at, "mountPath"), mountPath, "must be unique"))
    paths.add(mountPath)
  })
}

const quantityOf = (value: unknown): Quantity.Quantity | undefined => {
  if (typeof value !== "string" && typeof value !== "number") return undefined
  const parsed = Quantity.parse(String(value))
  return Result.isSuccess(parsed) ? parsed.success : undefined
}

const validateResources = (resources: unknown, path: string, errors: Errors): void => {
  if (!isObject(resources)) return
  const limits = isObject(resources.limits) ? resources.limits : {}
  const requests = isObject(resources.requests) ? resources.requests : {}
  for (const [name, value] of Object.entries(limits)) {
    const q = quantityOf(value)
    if (q !== undefined && q.nanos < 0n) {
      errors.push(Field.invalid(key(child(path, "limits"), name), String(value), Names.isNegativeErrorMsg))
    }
  }
  for (const [name, value] of Object.entries(requests)) {
    const q = quantityOf(value)
    const at = key(child(path, "requests"), name)
    if (q === undefined) continue
    if (q.nanos < 0n) errors.push(Field.invalid(at, String(value), Names.isNegativeErrorMsg))
    const limit = quantityOf(limits[name])
    if (limit !== undefined && Quantity.compare(q, limit) > 0) {
      errors.push(Field.invalid(
        at,
        Quantity.format(q),
        `must be less than or equal to ${name} limit of ${Quantity.format(limit)}`
      ))
    }
  }
}

const handlers = ["exec", "httpGet", "tcpSocket", "grpc"]

const validateProbe = (probe: unknown, path: string, errors: Errors, kind: "liveness" | "readiness" | "startup"): void => {
  if (!isObject(probe)) return
  const set = handlers.filter((h) => probe[h] !== undefined && probe[h] !== null)
  if (set.length === 0) errors.push(Field.required(path, "must specify a handler type"))
  else if (set.length > 1) errors.push(Field.forbidden(child(path, set[1]!), "may not specify more than 1 handler type"))
  for (const f of ["initialDelaySeconds", "timeoutSeconds", "periodSeconds", "successThreshold", "failureThreshold"]) {
    const v = probe[f]
    if (typeof v === "number" && v < 0) errors.push(Field.invalid(child(path, f), v, Names.isNegativeErrorMsg))
  }
  if (kind !== "readiness" && typeof probe.successThreshold === "number" && probe.successThreshold !== 1) {
    errors.push(Field.invalid(child(path, "successThreshold"), probe.successThreshold, "must be 1"))
  }
  if (kind === "readiness" && probe.terminationGracePeriodSeconds !== undefined) {
    errors.push(Field.invalid(
      child(path, "terminationGracePeriodSeconds"),
      probe.terminationGracePeriodSeconds,
      "must not be set for readinessProbes"
    ))
  }
  for (const h of ["httpGet", "tcpSocket"]) {
    if (!isObject(probe[h])) continue
    const port = (probe[h] as JsonObject).port
    const at = child(child(path, h), "port")
    if (typeof port === "number") for (const msg of Names.isValidPortNum(port)) errors.push(Field.invalid(at, port, msg))
    else if (typeof port === "string") for (const msg of Names.isValidPortName(port)) errors.push(Field.invalid(at, port, msg))
    else errors.push(Field.required(at, ""))
  }
}

const pullPolicies = ["Always", "IfNotPresent", "Never"]
const terminationMessagePolicies = ["File", "FallbackToLogsOnError"]

/** `validateContainerCommon`: what every kind of container must satisfy. */
const validateContainerCommon = (
  ctr: JsonObject,
  volumes: ReadonlySet<string>,
  path: string,
  errors: Errors
): void => {
  const name = stringAt(ctr, "name")
  if (name === "") errors.push(Field.required(child(path, "name"), ""))
  else dns1123Label(name, child(path, "name"), errors)
  if (stringAt(ctr, "image") === "") errors.push(Field.required(child(path, "image"), ""))
  const policy = ctr.terminationMessagePolicy
  if (policy === undefined || policy === "") {
    errors.push(Field.required(child(path, "terminationMessagePolicy"), "must be 'File' or 'FallbackToLogsOnError'"))
  } else oneOf(terminationMessagePolicies)(policy, child(path, "terminationMessagePolicy"), errors)
  validateContainerPorts(ctr.ports, child(path, "ports"), errors)
  validateEnv(ctr.env, child(path, "env"), errors)
  validateVolumeMounts(ctr.volumeMounts, volumes, child(path, "volumeMounts"), errors)
  oneOf(pullPolicies, "required")(ctr.imagePullPolicy, child(path, "imagePullPolicy"), errors)
  validateResources(ctr.resources, child(path, "resources"), errors)
}

/**
 * Each container of a list with the checks every kind of container gets (the common fields,
 * a name unique across all the pod's containers), then the checks of its kind.
 */
const eachContainer = (
  list: ReadonlyArray<unknown>,
  volumes: ReadonlySet<string>,
  path: string,
  errors: Errors,
  names: Set<string>,
  check: (ctr: Record<string, unknown>, at: string) => void
): void =>
  list.forEach((c, i) => {
    const ctr = isObject(c) ? c : {}
    const at = index(path, i)
    validateContainerCommon(ctr, volumes, at, errors)
    const name = stringAt(ctr, "name")
    if (names.has(name)) errors.push(Field.duplicate(child(at, "name"), name))
    else names.add(name)
    check(ctr, at)
  })

const validateContainers = (
  containers: unknown,
  volumes: ReadonlySet<string>,
  path: string,
  errors: Errors,
  names: Set<string>
): void => {
  const list = Array.isArray(containers) ? containers : []
  if (list.length === 0) errors.push(Field.required(path, ""))
  eachContainer(list, volumes, path, errors, names, (ctr, at) => {
    validateProbe(ctr.livenessProbe, child(at, "livenessProbe"), errors, "liveness")
    validateProbe(ctr.readinessProbe, child(at, "readinessProbe"), errors, "readiness")
    validateProbe(ctr.startupProbe, child(at, "startupProbe"), errors, "startup")
  })
}

const validateInitContainers = (
  containers: unknown,
  volumes: ReadonlySet<string>,
  path: string,
  errors: Errors,
  names: Set<string>
): void => {
  if (!Array.isArray(containers)) return
  eachContainer(containers, volumes, path, errors, names, (ctr, at) => {
    const sidecar = ctr.restartPolicy === "Always"
    if (ctr.restartPolicy !== undefined && !sidecar) {
      errors.push(Field.notSupported(child(at, "restartPolicy"), ctr.restartPolicy, ["Always"]))
    }
    if (!sidecar) {
      for (const probe of ["livenessProbe", "readinessProbe", "startupProbe"]) {
        if (ctr[probe] !== undefined) {
          errors.push(Field.forbidden(child(at, probe), `may not be set for init containers without restartPolicy=Always`))
        }
      }
    }
  })
}

/**
 * Fields an ephemeral container may not set, each `Forbidden: cannot be set for an Ephemeral
 * Container`, in the order of the Go struct (`validateFieldAllowList` walks its fields).
 */
const ephemeralForbidden = [
  "ports", "resources", "resizePolicy", "restartPolicy", "restartPolicyRules", "volumeDevices", "livenessProbe",
  "readinessProbe", "startupProbe", "lifecycle"
]

const ephemeralText = "cannot be set for an Ephemeral Container"

const validateEphemeralContainers = (
  containers: unknown,
  volumes: ReadonlySet<string>,
  others: ReadonlySet<string>,
  path: string,
  errors: Errors,
  names: Set<string>
): void => {
  if (!Array.isArray(containers)) return
  eachContainer(containers, volumes, path, errors, names, (ctr, at) => {
    const target = stringAt(ctr, "targetContainerName")
    if (target !== "" && !others.has(target)) errors.push(Field.notFound(child(at, "targetContainerName"), target))
    for (const f of ephemeralForbidden) {
      // a zero value (absent, null, an empty list or object) is not set
      if (!isEmpty(ctr[f])) errors.push(Field.forbidden(child(at, f), ephemeralText))
    }
    listAt(ctr, "volumeMounts").forEach((m, i) => {
      if (!isObject(m)) return
      for (const f of ["subPath", "subPathExpr"]) {
        if (stringAt(m, f) !== "") {
          errors.push(Field.forbidden(child(index(child(at, "volumeMounts"), i), f), ephemeralText))
        }
      }
    })
  })
}

const restartPolicies = ["Always", "OnFailure", "Never"]
const dnsPolicies = ["ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"]

/** `ValidatePodSpec`. */
export const validatePodSpec = (spec: unknown, path: string, errors: Errors): void => {
  const s = isObject(spec) ? spec : {}
  const volumes = validateVolumes(s.volumes, child(path, "volumes"), errors)
  const names = new Set<string>()
  validateContainers(s.containers, volumes, child(path, "containers"), errors, names)
  validateInitContainers(s.initContainers, volumes, child(path, "initContainers"), errors, names)
  // the target of an ephemeral container is any container of the pod but another ephemeral one
  const others = new Set(names)
  validateEphemeralContainers(s.ephemeralContainers, volumes, others, child(path, "ephemeralContainers"), errors, names)
  oneOf(restartPolicies, "required")(s.restartPolicy, child(path, "restartPolicy"), errors)
  oneOf(dnsPolicies, "required")(s.dnsPolicy, child(path, "dnsPolicy"), errors)
  Meta.validateLabels(s.nodeSelector, child(path, "nodeSelector"), errors)
  const serviceAccount = stringAt(s, "serviceAccountName")
  if (serviceAccount !== "") {
    for (const msg of Names.isDns1123Subdomain(serviceAccount)) {
      errors.push(Field.invalid(child(path, "serviceAccountName"), serviceAccount, msg))
    }
  }
  const nodeName = stringAt(s, "nodeName")
  if (nodeName !== "") {
    for (const msg of Names.isDns1123Subdomain(nodeName)) errors.push(Field.invalid(child(path, "nodeName"), nodeName, msg))
  }
  if (typeof s.activeDeadlineSeconds === "number" && (s.activeDeadlineSeconds < 1 || s.activeDeadlineSeconds > 2147483647)) {
    errors.push(Field.invalid(
      child(path, "activeDeadlineSeconds"),
      s.activeDeadlineSeconds,
      Names.inclusiveRangeError(1, 2147483647)
    ))
  }
  for (const f of ["hostname", "subdomain"]) {
    const v = stringAt(s, f)
    if (v !== "") dns1123Label(v, child(path, f), errors)
  }
  if (Array.isArray(s.tolerations)) {
    s.tolerations.forEach((t, i) => {
      const tol = isObject(t) ? t : {}
      const at = index(child(path, "tolerations"), i)
      oneOf(["Equal", "Exists"])(tol.operator, child(at, "operator"), errors)
      if (tol.operator === "Exists" && stringAt(tol, "value") !== "") {
        errors.push(Field.invalid(child(at, "operator"), tol.value, "value must be empty when `operator` is 'Exists'"))
      }
      oneOf(["NoSchedule", "PreferNoSchedule", "NoExecute"])(tol.effect, child(at, "effect"), errors)
    })
  }
}

/** `ValidatePodTemplateSpec`: the template's labels and annotations, then its spec. @internal */
export const validatePodTemplateSpec = (template: unknown, path: string, errors: Errors): void => {
  const t = isObject(template) ? template : {}
  Meta.validateTemplateMeta(t.metadata, child(path, "metadata"), errors)
  validatePodSpec(t.spec, child(path, "spec"), errors)
}

/** `ValidatePodCreate`: the spec, and no ephemeral containers yet. @internal */
export const validatePodCreate = (pod: JsonObject, errors: Errors): void => {
  validatePodSpec(pod.spec, "spec", errors)
  const spec = objectAt(pod, "spec")
  if (listAt(spec, "ephemeralContainers").length > 0) {
    errors.push(Field.forbidden("spec.ephemeralContainers", "cannot be set on create"))
  }
}

const updatablePodSpecFields = [
  "`spec.containers[*].image`",
  "`spec.initContainers[*].image`",
  "`spec.activeDeadlineSeconds`",
  "`spec.tolerations` (only additions to existing tolerations)",
  "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)"
].join(",")

const containerUpdates = (now: Array<unknown>, old: Array<unknown>, path: string, errors: Errors): boolean => {
  if (now.length !== old.length) {
    errors.push(Field.forbidden(path, "pod updates may not add or remove containers"))
    return true
  }
  now.forEach((c, i) => {
    const image = isObject(c) ? stringAt(c, "image") : ""
    if (image === "") errors.push(Field.required(child(index(path, i), "image"), ""))
    if (image.trim().length !== image.length) {
      errors.push(Field.invalid(child(index(path, i), "image"), image, "must not have leading or trailing whitespace"))
    }
  })
  return false
}

/** `ValidatePodUpdate`: images, activeDeadlineSeconds, added tolerations; nothing else of the spec. @internal */
export const validatePodUpdate = (pod: JsonObject, old: JsonObject, errors: Errors): void => {
  validatePodSpec(pod.spec, "spec", errors)
  const spec = objectAt(pod, "spec")
  const oldSpec = objectAt(old, "spec")
  if (containerUpdates(listAt(spec, "containers"), listAt(oldSpec, "containers"), "spec.containers", errors)) return
  if (containerUpdates(listAt(spec, "initContainers"), listAt(oldSpec, "initContainers"), "spec.initContainers", errors)) {
    return
  }
  const deadline = spec.activeDeadlineSeconds
  const oldDeadline = oldSpec.activeDeadlineSeconds
  if (typeof deadline === "number") {
    if (deadline < 0 || deadline > 2147483647) {
      errors.push(Field.invalid("spec.activeDeadlineSeconds", deadline, Names.inclusiveRangeError(0, 2147483647)))
      return
    }
    if (typeof oldDeadline === "number" && oldDeadline < deadline) {
      errors.push(Field.invalid("spec.activeDeadlineSeconds", deadline, "must be less than or equal to previous value"))
      return
    }
  } else if (typeof oldDeadline === "number") {
    errors.push(Field.invalid("spec.activeDeadlineSeconds", null, "must not update from a positive integer to nil value"))
  }
  const oldTolerations = listAt(oldSpec, "tolerations")
  for (const t of oldTolerations) {
    if (!listAt(spec, "tolerations").some((n) => deepEqual(n, t))) {
      errors.push(Field.forbidden("spec.tolerations", "existing toleration can not be modified except its tolerationSeconds"))
      break
    }
  }
  if (deepEqual(spec, oldSpec)) return
  const munged: JsonObject = { ...spec }
  const withImagesOf = (list: Array<unknown>, olds: Array<unknown>) =>
    list.map((c, i) => (isObject(c) ? { ...c, image: (olds[i] as JsonObject | undefined)?.image } : c))
  munged.containers = withImagesOf(listAt(spec, "containers"), listAt(oldSpec, "containers"))
  if (spec.initContainers !== undefined) {
    munged.initContainers = withImagesOf(listAt(spec, "initContainers"), listAt(oldSpec, "initContainers"))
  }
  munged.activeDeadlineSeconds = oldSpec.activeDeadlineSeconds
  munged.tolerations = oldSpec.tolerations
  munged.schedulingGates = oldSpec.schedulingGates
  const oldGrace = oldSpec.terminationGracePeriodSeconds
  if (typeof oldGrace === "number" && oldGrace < 0 && munged.terminationGracePeriodSeconds === 1) {
    munged.terminationGracePeriodSeconds = oldGrace
  }
  if (!deepEqual(munged, oldSpec)) {
    errors.push(Field.forbidden(
      "spec",
      `pod updates may not change fields other than ${updatablePodSpecFields}\n` +
        cmpDiff("core/v1.PodSpec", oldSpec, munged)
    ))
  }
}

/**
 * `ValidatePodEphemeralContainersUpdate`: the new spec is valid, and every ephemeral
 * container already there is still there, unchanged.
 *
 * @internal
 */
export const validateEphemeralContainersUpdate = (pod: JsonObject, old: JsonObject, errors: Errors): void => {
  validatePodSpec(pod.spec, "spec", errors)
  const now = listAt(objectAt(pod, "spec"), "ephemeralContainers")
  for (const o of listAt(objectAt(old, "spec"), "ephemeralContainers")) {
    if (!isObject(o)) continue
    const same = now.find((n) => isObject(n) && n.name === o.name)
    if (same === undefined) {
      errors.push(Field.forbidden(
        "spec.ephemeralContainers",
        `existing ephemeral containers ${Field.quote(String(o.name))} may not be removed\n`
      ))
    } else if (!deepEqual(same, o)) {
      errors.push(Field.forbidden(
        "spec.ephemeralContainers",
        `existing ephemeral containers ${Field.quote(String(o.name))} may not be changed\n`
      ))
    }
  }
}

/** The QoS class of a pod's spec (`qos.ComputePodQOS`). @internal */
export const qosClass = (spec: unknown): "Guaranteed" | "Burstable" | "BestEffort" => {
  const s = isObject(spec) ? spec : {}
  const containers = [...listAt(s, "containers"), ...listAt(s, "initContainers")].filter(isObject)
  let anySet = false
  let guaranteed = true
  for (const c of containers) {
    const r = objectAt(c, "resources")
    const limits = objectAt(r, "limits")
    const requests = objectAt(r, "requests")
    for (const name of ["cpu", "memory"]) {
      const req = quantityOf(requests[name])
      const lim = quantityOf(limits[name])
      if ((req !== undefined && req.nanos !== 0n) || (lim !== undefined && lim.nanos !== 0n)) anySet = true
      if (lim === undefined || (req !== undefined && Quantity.compare(req, lim) !== 0)) guaranteed = false
    }
  }
  if (!anySet) return "BestEffort"
  return guaranteed ? "Guaranteed" : "Burstable"
}

/** The resources a list names (a patch may leave a removed one as an `undefined` key). */
const resourceKeys = (r: JsonObject, k: string): Array<string> => {
  const list = objectAt(r, k)
  return Object.keys(list).filter((name) => list[name] !== undefined)
}

/** `validateContainerResize` of one container: no request or limit it had may go. */
const resizeRemovals = (now: JsonObject, before: JsonObject, path: string, errors: Errors): void => {
  const r = objectAt(now, "resources")
  const o = objectAt(before, "resources")
  if (resourceKeys(o, "requests").some((k) => !resourceKeys(r, "requests").includes(k))) {
    errors.push(Field.forbidden(child(path, "requests"), "resource requests cannot be removed"))
  }
  if (resourceKeys(o, "limits").some((k) => !resourceKeys(r, "limits").includes(k))) {
    errors.push(Field.forbidden(child(path, "limits"), "resource limits cannot be removed"))
  }
}

/** The containers of a list kept in place by name, and their resources' allowed changes. */
const resizeList = (now: Array<unknown>, before: Array<unknown>, field: string, errors: Errors): void => {
  const path = child("spec", field)
  if (now.length !== before.length) errors.push(Field.forbidden(path, `${field} may not be added or removed on resize`))
  for (let i = 0; i < Math.min(now.length, before.length); i++) {
    const ctr = isObject(now[i]) ? (now[i] as JsonObject) : {}
    const old = isObject(before[i]) ? (before[i] as JsonObject) : {}
    const at = index(path, i)
    if (ctr.name !== old.name) {
      // its resources are another container's: nothing to compare
      errors.push(Field.forbidden(child(at, "name"), `${field} may not be renamed or reordered on resize`))
      continue
    }
    if (field === "initContainers" && old.restartPolicy !== "Always") {
      if (!deepEqual(ctr.resources, old.resources)) {
        errors.push(Field.forbidden(child(at, "resources"), "resources for non-sidecar init containers are immutable"))
      }
      continue
    }
    resizeRemovals(ctr, old, child(at, "resources"), errors)
  }
}

/** A container without its cpu and memory (the only resources a resize may change) and its resize policy. */
const withoutCpuMemory = (c: unknown): unknown => {
  if (!isObject(c)) return c
  const resources = objectAt(c, "resources")
  const strip = (k: string) => {
    const list = objectAt(resources, k)
    const { cpu: _cpu, memory: _memory, ...rest } = list
    return Object.keys(rest).length === 0 ? undefined : rest
  }
  const kept = { ...resources, requests: strip("requests"), limits: strip("limits") }
  return { ...c, resources: kept, resizePolicy: undefined }
}

const stripCpuMemory = (s: JsonObject): JsonObject => ({
  ...s,
  containers: listAt(s, "containers").map(withoutCpuMemory),
  initContainers: s.initContainers === undefined ? undefined : listAt(s, "initContainers").map(withoutCpuMemory)
})

/**
 * `ValidatePodResize`: the resized spec is valid, the QoS class stays, containers (and
 * sidecars) keep their names and places, no request or limit is removed, a plain init
 * container's resources stay, and nothing but cpu and memory changes.
 *
 * @internal
 */
export const validatePodResize = (pod: JsonObject, old: JsonObject, errors: Errors): void => {
  validatePodSpec(pod.spec, "spec", errors)
  const spec = objectAt(pod, "spec")
  const oldSpec = objectAt(old, "spec")
  const oldClass = isObject(old.status) && typeof old.status.qosClass === "string" ? old.status.qosClass : qosClass(oldSpec)
  if (qosClass(spec) !== oldClass) {
    errors.push(Field.invalid("spec", oldClass, "Pod QOS Class may not change as a result of resizing"))
  }
  resizeList(listAt(spec, "containers"), listAt(oldSpec, "containers"), "containers", errors)
  resizeList(listAt(spec, "initContainers"), listAt(oldSpec, "initContainers"), "initContainers", errors)
  if (!deepEqual(stripCpuMemory(spec), stripCpuMemory(oldSpec))) {
    errors.push(Field.forbidden("spec", "only cpu and memory resources are mutable"))
  }
}

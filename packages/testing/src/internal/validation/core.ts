/**
 * Core kinds besides pods: Services, ConfigMaps, Secrets, Namespaces,
 * PersistentVolumeClaims and core/v1 Events, as pkg/apis/core/validation checks them.
 *
 * @internal
 */
import { deepEqual, isObject, type JsonObject } from "../store/json.js"
import { Quantity } from "effect-kube"
import * as Result from "effect/Result"
import * as Field from "./field.js"
import { cmpDiff } from "./cmpdiff.js"
import * as Meta from "./meta.js"
import * as Names from "./names.js"
import { child, type Errors, index, key, oneOf, type Rule, valueAt } from "./rules.js"

const objectAt = (obj: unknown, path: string): JsonObject => {
  const v = valueAt(obj, path)
  return isObject(v) ? v : {}
}

const isHeadless = (spec: JsonObject): boolean => spec.clusterIP === "None"

const servicePort = (p: unknown, path: string, requireName: boolean, names: Set<string>, errors: Errors): void => {
  const port = isObject(p) ? p : {}
  const name = typeof port.name === "string" ? port.name : ""
  if (requireName && name === "") errors.push(Field.required(child(path, "name"), ""))
  else if (name !== "") {
    for (const msg of Names.isDns1123Label(name)) errors.push(Field.invalid(child(path, "name"), name, msg))
    if (names.has(name)) errors.push(Field.duplicate(child(path, "name"), name))
    else names.add(name)
  }
  const number = typeof port.port === "number" ? port.port : 0
  for (const msg of Names.isValidPortNum(number)) errors.push(Field.invalid(child(path, "port"), number, msg))
  oneOf(["SCTP", "TCP", "UDP"], "required")(port.protocol, child(path, "protocol"), errors)
  const target = port.targetPort
  if (typeof target === "number") {
    for (const msg of Names.isValidPortNum(target)) errors.push(Field.invalid(child(path, "targetPort"), target, msg))
  } else if (typeof target === "string") {
    for (const msg of Names.isValidPortName(target)) errors.push(Field.invalid(child(path, "targetPort"), target, msg))
  }
}

/** @internal */
export const service: ReadonlyArray<Rule> = [
  (obj, errors) => {
    const spec = objectAt(obj, "spec")
    const ports = Array.isArray(spec.ports) ? spec.ports : []
    const type = spec.type
    if (ports.length === 0 && !isHeadless(spec) && type !== "ExternalName") errors.push(Field.required("spec.ports", ""))
    const clusterIPs = Array.isArray(spec.clusterIPs) ? spec.clusterIPs : []
    if ((type === "LoadBalancer" || type === "NodePort") && isHeadless(spec)) {
      errors.push(Field.invalid("spec.clusterIPs[0]", clusterIPs[0] ?? "None", `may not be set to 'None' for ${type} services`))
    }
    if (type === "ExternalName") {
      if (clusterIPs.length > 0) errors.push(Field.forbidden("spec.clusterIPs", "may not be set for ExternalName services"))
      if (Array.isArray(spec.ipFamilies) && spec.ipFamilies.length > 0) {
        errors.push(Field.forbidden("spec.ipFamilies", "may not be set for ExternalName services"))
      }
      if (spec.ipFamilyPolicy !== undefined) {
        errors.push(Field.forbidden("spec.ipFamilyPolicy", "may not be set for ExternalName services"))
      }
      const cname = typeof spec.externalName === "string" ? spec.externalName.replace(/\.$/, "") : ""
      if (cname === "") errors.push(Field.required("spec.externalName", ""))
      else for (const msg of Names.isDns1123Subdomain(cname)) errors.push(Field.invalid("spec.externalName", cname, msg))
    }
    const names = new Set<string>()
    ports.forEach((p, i) => servicePort(p, index("spec.ports", i), ports.length > 1, names, errors))
    Meta.validateLabels(spec.selector, "spec.selector", errors)
    oneOf(["ClientIP", "None"], "required")(spec.sessionAffinity, "spec.sessionAffinity", errors)
    oneOf(["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"], "required")(type, "spec.type", errors)
    if (type === "ClusterIP") {
      ports.forEach((p, i) => {
        if (isObject(p) && typeof p.nodePort === "number" && p.nodePort !== 0) {
          errors.push(Field.forbidden(child(index("spec.ports", i), "nodePort"), "may not be used when `type` is 'ClusterIP'"))
        }
      })
    }
    oneOf(["Cluster", "Local"])(spec.externalTrafficPolicy, "spec.externalTrafficPolicy", errors)
    oneOf(["Cluster", "Local"])(spec.internalTrafficPolicy, "spec.internalTrafficPolicy", errors)
  },
  (obj, errors, old) => {
    if (old === undefined) return
    const now = valueAt(obj, "spec.clusterIPs")
    const before = valueAt(old, "spec.clusterIPs")
    const typeChange = valueAt(obj, "spec.type") === "ExternalName" || valueAt(old, "spec.type") === "ExternalName"
    if (!typeChange && Array.isArray(now) && Array.isArray(before) && now.length > 0 && now[0] !== before[0]) {
      errors.push(Field.invalid("spec.clusterIPs[0]", Field.goValue(now), "may not change once set"))
    }
  }
]

const maxDataSize = 1024 * 1024

const byteSize = (v: unknown): number => (typeof v === "string" ? Buffer.byteLength(v) : 0)

/** @internal */
export const configMap: ReadonlyArray<Rule> = [
  (obj, errors) => {
    const data = objectAt(obj, "data")
    const binary = objectAt(obj, "binaryData")
    let size = 0
    for (const k of Object.keys(data)) {
      if (data[k] === undefined) continue
      for (const msg of Names.isConfigMapKey(k)) errors.push(Field.invalid(key("data", k), k, msg))
      if (binary[k] !== undefined) errors.push(Field.invalid(key("data", k), k, "duplicate of key present in binaryData"))
      size += byteSize(data[k])
    }
    for (const k of Object.keys(binary)) {
      if (binary[k] === undefined) continue
      for (const msg of Names.isConfigMapKey(k)) errors.push(Field.invalid(key("binaryData", k), k, msg))
      size += Math.floor((byteSize(binary[k]) * 3) / 4)
    }
    if (size > maxDataSize) errors.push(Field.tooLong("", maxDataSize))
  },
  immutableData
]

/** `immutable: true` objects keep their data (ConfigMaps and Secrets). */
function immutableData(obj: JsonObject, errors: Errors, old: JsonObject | undefined): void {
  if (old === undefined || old.immutable !== true) return
  if (obj.immutable !== true) errors.push(Field.forbidden("immutable", "field is immutable when `immutable` is set"))
  if (!deepEqual(obj.data, old.data)) errors.push(Field.forbidden("data", "field is immutable when `immutable` is set"))
  if (obj.binaryData !== undefined || old.binaryData !== undefined) {
    if (!deepEqual(obj.binaryData, old.binaryData)) {
      errors.push(Field.forbidden("binaryData", "field is immutable when `immutable` is set"))
    }
  }
}

const secretTypeKeys: Record<string, ReadonlyArray<string>> = {
  "kubernetes.io/dockercfg": [".dockercfg"],
  "kubernetes.io/dockerconfigjson": [".dockerconfigjson"],
  "kubernetes.io/ssh-auth": ["ssh-privatekey"],
  "kubernetes.io/tls": ["tls.crt", "tls.key"]
}

/** @internal */
export const secret: ReadonlyArray<Rule> = [
  (obj, errors) => {
    const data = objectAt(obj, "data")
    let size = 0
    for (const k of Object.keys(data)) {
      if (data[k] === undefined) continue
      for (const msg of Names.isConfigMapKey(k)) errors.push(Field.invalid(key("data", k), k, msg))
      size += Math.floor((byteSize(data[k]) * 3) / 4)
    }
    if (size > maxDataSize) errors.push(Field.tooLong("data", maxDataSize))
    const type = typeof obj.type === "string" ? obj.type : ""
    if (type === "kubernetes.io/service-account-token") {
      const name = valueAt(obj, "metadata.annotations")
      if (!isObject(name) || typeof name["kubernetes.io/service-account.name"] !== "string" ||
        name["kubernetes.io/service-account.name"] === "") {
        errors.push(Field.required("metadata.annotations[kubernetes.io/service-account.name]", ""))
      }
    } else if (type === "kubernetes.io/basic-auth") {
      if (data.username === undefined && data.password === undefined) {
        errors.push(Field.required("data[username]", ""))
        errors.push(Field.required("data[password]", ""))
      }
    } else {
      for (const k of secretTypeKeys[type] ?? []) {
        if (data[k] === undefined || (type === "kubernetes.io/ssh-auth" && data[k] === "")) {
          errors.push(Field.required(key("data", k), ""))
        }
      }
    }
  },
  (obj, errors, old) => {
    if (old === undefined) return
    if (obj.type !== old.type) errors.push(Field.immutable("type", obj.type ?? ""))
    immutableData(obj, errors, old)
  }
]

/** @internal */
export const namespace: ReadonlyArray<Rule> = [
  (obj, errors) => {
    const finalizers = valueAt(obj, "spec.finalizers")
    if (!Array.isArray(finalizers)) return
    finalizers.forEach((f) => {
      if (typeof f !== "string") return
      for (const msg of Names.isQualifiedName(f)) errors.push(Field.invalid("spec.finalizers", f, msg))
    })
  }
]

const quantityOf = (value: unknown): Quantity.Quantity | undefined => {
  if (typeof value !== "string" && typeof value !== "number") return undefined
  const parsed = Quantity.parse(String(value))
  return Result.isSuccess(parsed) ? parsed.success : undefined
}

const accessModes = ["ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"]

/** `ValidatePersistentVolumeClaimSpec` at a path (a claim's spec, a StatefulSet's claim templates). @internal */
export const persistentVolumeClaimSpec = (spec: unknown, path: string, errors: Errors): void => {
  const s = isObject(spec) ? spec : {}
  const modes = Array.isArray(s.accessModes) ? s.accessModes : []
  if (modes.length === 0) errors.push(Field.required(child(path, "accessModes"), "at least 1 access mode is required"))
  Meta.validateLabelSelector(s.selector, child(path, "selector"), errors)
  let once = false
  let other = false
  for (const mode of modes) {
    if (typeof mode !== "string" || !accessModes.includes(mode)) {
      errors.push(Field.notSupported(child(path, "accessModes"), mode, accessModes))
    } else if (mode === "ReadWriteOncePod") once = true
    else other = true
  }
  if (once && other) errors.push(Field.forbidden(child(path, "accessModes"), "may not use ReadWriteOncePod with other access modes"))
  const storage = valueAt(s, "resources.requests.storage")
  const storagePath = key(child(path, "resources"), "storage")
  if (storage === undefined) errors.push(Field.required(storagePath, ""))
  else {
    const q = quantityOf(storage)
    if (q !== undefined && q.nanos <= 0n) errors.push(Field.invalid(storagePath, Quantity.format(q), "must be greater than zero"))
  }
  const className = s.storageClassName
  if (typeof className === "string" && className !== "") {
    for (const msg of Names.isDns1123Subdomain(className)) errors.push(Field.invalid(child(path, "storageClassName"), className, msg))
  }
  oneOf(["Block", "Filesystem"])(s.volumeMode, child(path, "volumeMode"), errors)
}

/** @internal */
export const persistentVolumeClaim: ReadonlyArray<Rule> = [
  (obj, errors) => persistentVolumeClaimSpec(obj.spec, "spec", errors),
  (obj, errors, old) => {
    if (old === undefined) return
    const now: JsonObject = { ...objectAt(obj, "spec") }
    const before = objectAt(old, "spec")
    // the volume may be bound once; a bound claim may change its storage request and attributes class
    if (before.volumeName === undefined || before.volumeName === "") now.volumeName = before.volumeName
    if (valueAt(obj, "status.phase") === "Bound") {
      const requests = valueAt(now, "resources.requests")
      if (isObject(requests)) {
        const storage = valueAt(before, "resources.requests.storage")
        now.resources = { ...objectAt(now, "resources"), requests: { ...requests, storage } }
      }
      if (now.volumeAttributesClassName !== undefined) now.volumeAttributesClassName = before.volumeAttributesClassName
    }
    if (!deepEqual(now, before)) {
      errors.push(Field.forbidden(
        "spec",
        "spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims\n" +
          cmpDiff("core/v1.PersistentVolumeClaimSpec", before, now)
      ))
    }
    // shrinking is allowed down to what the volume has (recovery from a failed expansion), never below
    const oldSize = quantityOf(valueAt(old, "spec.resources.requests.storage"))
    const newSize = quantityOf(valueAt(obj, "spec.resources.requests.storage"))
    const capacity = quantityOf(valueAt(old, "status.capacity.storage")) ?? Quantity.make(0n)
    if (oldSize !== undefined && newSize !== undefined && Quantity.compare(newSize, oldSize) < 0 &&
      Quantity.compare(newSize, capacity) <= 0) {
      errors.push(Field.forbidden("spec.resources.requests.storage", "field can not be less than status.capacity"))
    }
  }
]

/** core/v1 Events (`legacyValidateEvent`: the only checks the v1 API makes). @internal */
export const coreEvent: ReadonlyArray<Rule> = [
  (obj, errors) => {
    const namespace = valueAt(obj, "metadata.namespace")
    const ns = typeof namespace === "string" ? namespace : ""
    const involved = valueAt(obj, "involvedObject.namespace")
    const involvedNs = typeof involved === "string" ? involved : ""
    const eventTime = obj.eventTime
    if (eventTime === undefined || eventTime === null) {
      if (involvedNs === "" ? ns !== "" && ns !== "default" : ns !== involvedNs) {
        errors.push(Field.invalid("involvedObject.namespace", involvedNs, "does not match event.namespace"))
      }
    } else {
      if (involvedNs === "" && ns !== "default" && ns !== "kube-system") {
        errors.push(Field.invalid("involvedObject.namespace", involvedNs, "does not match event.namespace"))
      }
      eventStrings(obj.reportingComponent, obj.reportingInstance, obj.action, obj.reason, obj.message, errors)
    }
  }
]

/** The string rules of an event with an eventTime (`reportingController`, instance, action, reason, note). @internal */
export const eventStrings = (
  controller: unknown,
  instance: unknown,
  action: unknown,
  reason: unknown,
  note: unknown,
  errors: Errors
): void => {
  const str = (v: unknown) => (typeof v === "string" ? v : "")
  if (str(controller) === "") errors.push(Field.required("reportingController", ""))
  for (const msg of Names.isQualifiedName(str(controller))) {
    errors.push(Field.invalid("reportingController", str(controller), msg))
  }
  if (str(instance) === "") errors.push(Field.required("reportingInstance", ""))
  if (str(instance).length > 128) errors.push(Field.invalid("reportingInstance", "", "can have at most 128 characters"))
  if (str(action) === "") errors.push(Field.required("action", ""))
  if (str(action).length > 128) errors.push(Field.invalid("action", "", "can have at most 128 characters"))
  if (str(reason) === "") errors.push(Field.required("reason", ""))
  if (str(reason).length > 128) errors.push(Field.invalid("reason", "", "can have at most 128 characters"))
  if (str(note).length > 1024) errors.push(Field.invalid("message", "", "can have at most 1024 characters"))
}


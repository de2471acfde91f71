/**
 * The readiness of one object from its live state alone, with the semantics of kstatus
 * (sigs.k8s.io/cli-utils, as Flux and kpt use it): Current, InProgress, Failed or
 * Terminating. First the generic rules that hold for any kind (a deletion under way; a
 * generation the controller has not observed; the `Reconciling` and `Stalled`
 * conditions), then the rules of the built-in kinds, then, beyond kstatus, a `Ready`
 * condition (the convention of most operators); anything else is Current.
 */
import type { ObjectReadiness } from "../../Errors.js"
import { isObject, type JsonObject } from "../codec/codec.js"

/** A status with why. */
export interface Computed {
  readonly status: ObjectReadiness["status"]
  readonly message: string
}

interface Condition {
  readonly type: string
  readonly status: string
  readonly reason: string
  readonly message: string
}

/** The value at a path of keys, `undefined` where a step is not an object. @internal */
export const field = (object: unknown, path: ReadonlyArray<string>): unknown => {
  let value: unknown = object
  for (const key of path) {
    if (!isObject(value)) return undefined
    value = value[key]
  }
  return value
}

const int = (object: unknown, path: ReadonlyArray<string>, fallback: number): number => {
  const value = field(object, path)
  return typeof value === "number" && Number.isInteger(value) ? value : fallback
}

const text = (object: unknown, path: ReadonlyArray<string>): string | undefined => {
  const value = field(object, path)
  return typeof value === "string" ? value : undefined
}

const conditionsOf = (object: unknown): ReadonlyArray<Condition> => {
  const list = field(object, ["status", "conditions"])
  if (!Array.isArray(list)) return []
  return list.filter(isObject).map((c) => ({
    type: typeof c["type"] === "string" ? c["type"] : "",
    status: typeof c["status"] === "string" ? c["status"] : "",
    reason: typeof c["reason"] === "string" ? c["reason"] : "",
    message: typeof c["message"] === "string" ? c["message"] : ""
  }))
}

const find = (conditions: ReadonlyArray<Condition>, type: string, status?: string) =>
  conditions.find((c) => c.type === type && (status === undefined || c.status === status))

/** A condition's reason and message, as much of them as there is. */
const because = (condition: Condition, fallback: string): string => {
  const parts = [condition.reason, condition.message].filter((p) => p !== "")
  return parts.length === 0 ? fallback : parts.join(": ")
}

const current = (message: string): Computed => ({ status: "Current", message })
const inProgress = (message: string): Computed => ({ status: "InProgress", message })
const failed = (message: string): Computed => ({ status: "Failed", message })

const generic = (object: JsonObject, kind: string): Computed | undefined => {
  const deletion = text(object, ["metadata", "deletionTimestamp"])
  if (deletion !== undefined && deletion !== "") return { status: "Terminating", message: "being deleted" }
  const generation = field(object, ["metadata", "generation"])
  const observed = field(object, ["status", "observedGeneration"])
  if (typeof generation === "number" && typeof observed === "number" && generation !== observed) {
    return inProgress(`${kind} generation ${generation} not yet observed (observed: ${observed})`)
  }
  const conditions = conditionsOf(object)
  const reconciling = find(conditions, "Reconciling", "True")
  if (reconciling !== undefined) return inProgress(because(reconciling, "reconciling"))
  const stalled = find(conditions, "Stalled", "True")
  if (stalled !== undefined) return failed(because(stalled, "stalled"))
  return undefined
}

const replicas = (object: JsonObject) => int(object, ["spec", "replicas"], 1)

const deployment = (object: JsonObject): Computed => {
  const conditions = conditionsOf(object)
  const progressingCondition = find(conditions, "Progressing")
  if (progressingCondition?.reason === "ProgressDeadlineExceeded") {
    return failed(because(progressingCondition, "progress deadline exceeded"))
  }
  // Without a deadline the controller sets no Progressing condition.
  const noDeadline = field(object, ["spec", "progressDeadlineSeconds"]) === undefined ||
    int(object, ["spec", "progressDeadlineSeconds"], 0) === 2147483647
  const progressing = noDeadline ||
    (progressingCondition?.status === "True" && progressingCondition.reason === "NewReplicaSetAvailable")
  const available = find(conditions, "Available", "True") !== undefined
  const wanted = replicas(object)
  const have = int(object, ["status", "replicas"], 0)
  const updated = int(object, ["status", "updatedReplicas"], 0)
  const ready = int(object, ["status", "readyReplicas"], 0)
  const availableReplicas = int(object, ["status", "availableReplicas"], 0)
  if (wanted > have) return inProgress(`Replicas: ${have}/${wanted}`)
  if (wanted > updated) return inProgress(`Updated: ${updated}/${wanted}`)
  if (have > wanted) return inProgress(`Pending termination: ${have - wanted}`)
  if (updated > availableReplicas) return inProgress(`Available: ${availableReplicas}/${updated}`)
  if (wanted > ready) return inProgress(`Ready: ${ready}/${wanted}`)
  if (!progressing) return inProgress("new ReplicaSet not available yet")
  if (!available) {
    const condition = find(conditions, "Available")
    return inProgress(condition === undefined ? "not Available yet" : because(condition, "not Available yet"))
  }
  return current(`Deployment is available: ${have} replica(s)`)
}

const statefulSet = (object: JsonObject): Computed => {
  if (text(object, ["spec", "updateStrategy", "type"]) === "OnDelete") {
    return current("StatefulSet uses the OnDelete update strategy")
  }
  const wanted = replicas(object)
  const have = int(object, ["status", "replicas"], 0)
  const ready = int(object, ["status", "readyReplicas"], 0)
  const currentReplicas = int(object, ["status", "currentReplicas"], 0)
  const updated = int(object, ["status", "updatedReplicas"], 0)
  const partition = int(object, ["spec", "updateStrategy", "rollingUpdate", "partition"], -1)
  if (wanted > have) return inProgress(`Replicas: ${have}/${wanted}`)
  if (wanted > ready) return inProgress(`Ready: ${ready}/${wanted}`)
  if (have > wanted) return inProgress(`Pending termination: ${have - wanted}`)
  if (partition !== -1) {
    if (updated < wanted - partition) {
      return inProgress(`Updated: ${updated}/${wanted - partition} (partition ${partition})`)
    }
    return current(`partitioned rollout complete: ${updated} updated`)
  }
  if (wanted > currentReplicas) return inProgress(`Current: ${currentReplicas}/${wanted}`)
  if (text(object, ["status", "currentRevision"]) !== text(object, ["status", "updateRevision"])) {
    return inProgress("waiting for the update revision to become current")
  }
  return current(`StatefulSet is ready: ${have} replica(s)`)
}

const daemonSet = (object: JsonObject): Computed => {
  // Once the controller has seen a DaemonSet, both are set.
  if (typeof field(object, ["metadata", "generation"]) !== "number") return inProgress("no metadata.generation yet")
  if (typeof field(object, ["status", "observedGeneration"]) !== "number") return inProgress("not observed yet")
  const desired = int(object, ["status", "desiredNumberScheduled"], -1)
  if (desired === -1) return inProgress("no status.desiredNumberScheduled yet")
  const scheduled = int(object, ["status", "currentNumberScheduled"], 0)
  const updated = int(object, ["status", "updatedNumberScheduled"], 0)
  const available = int(object, ["status", "numberAvailable"], 0)
  const ready = int(object, ["status", "numberReady"], 0)
  if (desired > scheduled) return inProgress(`Scheduled: ${scheduled}/${desired}`)
  if (desired > updated) return inProgress(`Updated: ${updated}/${desired}`)
  if (desired > available) return inProgress(`Available: ${available}/${desired}`)
  if (desired > ready) return inProgress(`Ready: ${ready}/${desired}`)
  return current(`DaemonSet is ready on ${desired} node(s)`)
}

const replicaSet = (object: JsonObject): Computed => {
  const failure = find(conditionsOf(object), "ReplicaFailure", "True")
  if (failure !== undefined) return inProgress(because(failure, "replica failure"))
  const wanted = replicas(object)
  const labelled = int(object, ["status", "fullyLabeledReplicas"], 0)
  const available = int(object, ["status", "availableReplicas"], 0)
  const ready = int(object, ["status", "readyReplicas"], 0)
  const have = int(object, ["status", "replicas"], 0)
  if (wanted > labelled) return inProgress(`Labelled: ${labelled}/${wanted}`)
  if (wanted > available) return inProgress(`Available: ${available}/${wanted}`)
  if (wanted > ready) return inProgress(`Ready: ${ready}/${wanted}`)
  if (have > wanted) return inProgress(`Pending termination: ${have - wanted}`)
  return current(`ReplicaSet is available: ${have} replica(s)`)
}

/** How long a pod may stay unschedulable before it counts as failed, as kstatus allows. */
const scheduleWindowMs = 15_000

const crashLooping = (object: JsonObject): ReadonlyArray<string> => {
  const statuses = field(object, ["status", "containerStatuses"])
  if (!Array.isArray(statuses)) return []
  return statuses.filter(isObject).flatMap((s) =>
    text(s, ["state", "waiting", "reason"]) === "CrashLoopBackOff" && typeof s["name"] === "string" ? [s["name"]] : []
  )
}

const pod = (object: JsonObject, now: number): Computed => {
  const conditions = conditionsOf(object)
  const phase = text(object, ["status", "phase"]) ?? ""
  switch (phase) {
    case "Succeeded":
      return current("Pod succeeded")
    case "Failed": {
      // kstatus: a pod that ran to its end is done, whatever its exit
      const why = text(object, ["status", "message"])
      return current(why === undefined ? "Pod failed" : `Pod failed: ${why}`)
    }
    case "Running": {
      if (find(conditions, "Ready", "True") !== undefined) return current("Pod is Ready")
      const looping = crashLooping(object)
      if (looping.length > 0) return failed(`containers in CrashLoopBackOff: ${looping.join(", ")}`)
      const ready = find(conditions, "Ready")
      return inProgress(ready === undefined ? "running, not Ready" : because(ready, "running, not Ready"))
    }
    case "Pending": {
      const unschedulable = find(conditions, "PodScheduled", "False")
      if (unschedulable?.reason === "Unschedulable") {
        const created = Date.parse(text(object, ["metadata", "creationTimestamp"]) ?? "")
        if (Number.isFinite(created) && now - created < scheduleWindowMs) return inProgress("not scheduled yet")
        return failed(because(unschedulable, "cannot be scheduled"))
      }
      return inProgress("Pod is Pending")
    }
    case "":
      return inProgress("no phase yet")
    default:
      return { status: "Unknown", message: `phase ${phase}` }
  }
}

const job = (object: JsonObject): Computed => {
  const parallelism = int(object, ["spec", "parallelism"], 1)
  const completions = int(object, ["spec", "completions"], parallelism)
  const succeeded = int(object, ["status", "succeeded"], 0)
  const active = int(object, ["status", "active"], 0)
  const failedPods = int(object, ["status", "failed"], 0)
  for (const c of conditionsOf(object)) {
    if (c.status !== "True") continue
    if (c.type === "Complete") return current(`Job complete: ${succeeded}/${completions} succeeded`)
    if (c.type === "Failed") return failed(`Job failed (${failedPods} failed pod(s)): ${because(c, "failed")}`)
    if (c.type === "Suspended") return current("Job is suspended")
  }
  // kstatus: a Job that started is Current (it runs on its own); one that did not is InProgress
  if (text(object, ["status", "startTime"]) === undefined) return inProgress("Job not started")
  return current(`Job running: ${succeeded} succeeded, ${active} active, ${failedPods} failed`)
}

const pvc = (object: JsonObject): Computed => {
  const phase = text(object, ["status", "phase"])
  return phase === "Bound" ? current("PVC is Bound") : inProgress(`PVC is not Bound (phase: ${phase ?? "none"})`)
}

const service = (object: JsonObject): Computed => {
  if (text(object, ["spec", "type"]) === "LoadBalancer" && (text(object, ["spec", "clusterIP"]) ?? "") === "") {
    return inProgress("LoadBalancer Service has no cluster IP yet")
  }
  return current("Service is ready")
}

const crd = (object: JsonObject): Computed => {
  for (const c of conditionsOf(object)) {
    if (c.type === "NamesAccepted" && c.status === "False") return failed(because(c, "names not accepted"))
    if (c.type === "Established") {
      if (c.status === "False" && c.reason !== "Installing") return failed(because(c, "not established"))
      if (c.status === "True") return current("CRD is established")
    }
  }
  return inProgress("CRD is being installed")
}

const namespace = (object: JsonObject): Computed =>
  text(object, ["status", "phase"]) === "Terminating"
    ? { status: "Terminating", message: "Namespace is terminating" }
    : current("Namespace is active")

const always = (): Computed => current("always ready")

/** The rules of the built-in kinds, by `group/Kind` (`Kind` for the core group). */
const builtins: Readonly<Record<string, (object: JsonObject, now: number) => Computed>> = {
  "Service": service,
  "Pod": pod,
  "Secret": always,
  "ConfigMap": always,
  "PersistentVolumeClaim": pvc,
  "Namespace": namespace,
  "apps/StatefulSet": statefulSet,
  "apps/DaemonSet": daemonSet,
  "apps/Deployment": deployment,
  "apps/ReplicaSet": replicaSet,
  "policy/PodDisruptionBudget": () => current("disruptions allowed have been computed"),
  "batch/CronJob": always,
  "batch/Job": job,
  "apiextensions.k8s.io/CustomResourceDefinition": crd
}

const groupOf = (apiVersion: unknown): string => {
  if (typeof apiVersion !== "string") return ""
  const slash = apiVersion.indexOf("/")
  return slash === -1 ? "" : apiVersion.slice(0, slash)
}

/** The readiness of a live object; `now` (epoch ms) dates how long a pod has been unschedulable. */
export const compute = (object: unknown, now: number): Computed => {
  if (!isObject(object)) return { status: "Unknown", message: "not an object" }
  const kind = typeof object["kind"] === "string" ? object["kind"] : ""
  const fromGeneric = generic(object, kind)
  if (fromGeneric !== undefined) return fromGeneric
  const group = groupOf(object["apiVersion"])
  const rule = builtins[group === "" ? kind : `${group}/${kind}`]
  if (rule !== undefined) return rule(object, now)
  const ready = find(conditionsOf(object), "Ready")
  if (ready !== undefined && ready.status !== "True") return inProgress(because(ready, "not Ready"))
  return current(ready !== undefined ? "Ready" : "no conditions to wait for")
}

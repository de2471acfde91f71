/**
 * What a kubelet and the job controller would do, done by the fake: pod phases with
 * the conditions and container statuses a kubelet reports, containers ending (and
 * restarting), jobs completing or failing, and with `simulate` on, created pods and
 * jobs that run by themselves (Pending, Running, Succeeded, writing a few log lines).
 *
 * @internal
 */
import { child, clone, drop, isObject, type JsonObject, now, randomSuffix } from "./json.js"
import type { KindInfo } from "./kinds.js"
import type { FakeState } from "./state.js"
import { type Entry, keyOf } from "./store.js"
import { appendLog, containerLog, containerNames } from "./subresources.js"
import type { FakeObject } from "./types.js"
import { finish, serverUpdate, updateObject } from "./writes.js"

/** What an `echo` command in a container would print, for simulated logs. */
const echoed = (pod: JsonObject, container: string): Array<string> => {
  const spec = pod.spec as JsonObject
  const c = (spec.containers as Array<JsonObject>).find((x) => x.name === container)
  const words = [...(Array.isArray(c?.command) ? c.command : []), ...(Array.isArray(c?.args) ? c.args : [])]
    .filter((w): w is string => typeof w === "string")
  const text = words.join(" ")
  const m = /\becho\s+(.+?)(?:\s*(?:;|&&|\|\||$))/.exec(text)
  if (m === null) return []
  return [m[1]!.replace(/^["']|["']$/g, "")]
}

const jobKind = (state: FakeState): KindInfo => {
  return state.registry.byResource("batch", "v1", "jobs")!
}

const podKind = (state: FakeState): KindInfo => {
  return state.registry.byResource("", "v1", "pods")!
}

const currentPod = (state: FakeState, namespace: string, name: string, uid: unknown): Entry | undefined => {
  const e = state.collectionOf(podKind(state)).entries.get(keyOf(namespace, name))
  return e !== undefined && e.uid === uid ? e : undefined
}

const podStatus = (
  state: FakeState,
  pod: Entry,
  phase: string,
  options: { readonly reason?: string | undefined; readonly message?: string | undefined }
): JsonObject => {
  const next = pod.copy()
  const status = child(next, "status")
  const at = now()
  const previous = Array.isArray(status.conditions) ? (status.conditions as Array<JsonObject>) : []
  const condition = (type: string, value: boolean, reason?: string): JsonObject => {
    const old = previous.find((c) => c.type === type)
    const s = value ? "True" : "False"
    return {
      type,
      status: s,
      lastProbeTime: null,
      lastTransitionTime: old !== undefined && old.status === s ? old.lastTransitionTime : at,
      ...(reason !== undefined ? { reason } : {})
    }
  }
  status.phase = phase
  if (options.reason !== undefined) status.reason = options.reason
  else drop(status, "reason")
  if (options.message !== undefined) status.message = options.message
  else drop(status, "message")
  const terminal = phase === "Succeeded" || phase === "Failed"
  const running = phase === "Running"
  const reason = phase === "Succeeded"
    ? "PodCompleted"
    : phase === "Failed"
    ? "PodFailed"
    : running
    ? undefined
    : "ContainersNotReady"
  status.conditions = [
    condition("PodReadyToStartContainers", running || terminal),
    condition(
      "Initialized",
      phase !== "Pending" || previous.some((c) => c.type === "Initialized" && c.status === "True")
    ),
    condition("Ready", running, reason),
    condition("ContainersReady", running, reason),
    condition("PodScheduled", true)
  ]
  if (phase !== "Pending") {
    status.startTime ??= at
    status.hostIP ??= "10.0.0.10"
    status.podIP ??= `10.244.${Math.floor(++state.podIps / 250) % 250}.${(state.podIps % 250) + 2}`
    status.podIPs ??= [{ ip: status.podIP }]
  }
  const oldStatuses = Array.isArray(status.containerStatuses) ? (status.containerStatuses as Array<JsonObject>) : []
  status.containerStatuses = containerNames(pod.obj).map((name) => {
    const old = oldStatuses.find((c) => c.name === name)
    const containers = (pod.obj.spec as JsonObject | undefined)?.containers as Array<JsonObject> | undefined
    const container = containers?.find((c) => c.name === name)
    const startedAt = isObject(old?.state) && isObject(old.state.running) ? old.state.running.startedAt : at
    const log = state.logs.get(pod.uid)?.get(name)
    const exitCode = log?.exitCode ?? (phase === "Failed" ? 1 : 0)
    const containerState = running
      ? { running: { startedAt } }
      : terminal
      ? { terminated: { exitCode, reason: exitCode === 0 ? "Completed" : "Error", startedAt, finishedAt: at } }
      : { waiting: { reason: "ContainerCreating" } }
    return {
      name,
      state: containerState,
      lastState: old?.lastState ?? {},
      ready: running,
      restartCount: typeof old?.restartCount === "number" ? old.restartCount : 0,
      image: container?.image ?? "",
      imageID: "",
      started: running,
      ...(phase !== "Pending" ? { containerID: `containerd://${pod.uid}-${name}` } : {})
    }
  })
  return next
}

const simulatePod = (state: FakeState, entry: Entry): void => {
  const sim = state.simulate!
  const uid = entry.uid
  const { name, namespace } = entry
  state.later(sim.podStartMs, () => {
    if (currentPod(state, namespace, name, uid) === undefined) return
    setPodPhase(state, namespace, name, "Running")
    for (const container of containerNames(entry.obj)) {
      const lines = [`starting ${container} in pod ${namespace}/${name}`, ...echoed(entry.obj, container)]
      appendLog(state, namespace, name, lines, { container })
    }
    if (!sim.completePods) return
    state.later(sim.podRunMs, () => {
      if (currentPod(state, namespace, name, uid) === undefined) return
      for (const container of containerNames(entry.obj)) {
        appendLog(state, namespace, name, [`${container} finished`], { container })
      }
      const pod = setPodPhase(state, namespace, name, "Succeeded")
      const owner = ((pod.metadata.ownerReferences ?? []) as Array<JsonObject>).find((o) => o.kind === "Job")
      if (owner !== undefined && typeof owner.name === "string") {
        const job = state.collectionOf(jobKind(state)).entries.get(keyOf(namespace, owner.name))
        if (job !== undefined && job.uid === owner.uid) completeJob(state, namespace, owner.name)
      }
    })
  })
}

const simulateJob = (state: FakeState, entry: Entry): void => {
  const sim = state.simulate!
  const jobMeta = entry.obj.metadata as JsonObject
  const { name, namespace } = entry
  state.later(Math.max(1, Math.floor(sim.podStartMs / 2)), () => {
    const jobs = state.collectionOf(state.registry.byResource("batch", "v1", "jobs")!)
    const job = jobs.entries.get(keyOf(namespace, name))
    if (job === undefined || job.uid !== jobMeta.uid) return
    const spec = job.obj.spec as JsonObject | undefined
    const template = isObject(spec?.template) ? clone(spec.template) : {}
    const podMeta = isObject(template.metadata) ? template.metadata : {}
    const labels = {
      ...(isObject(podMeta.labels) ? podMeta.labels : {}),
      "batch.kubernetes.io/controller-uid": jobMeta.uid,
      "batch.kubernetes.io/job-name": name,
      "controller-uid": jobMeta.uid,
      "job-name": name
    }
    const kind = podKind(state)
    const pods = state.collectionOf(kind)
    let podName = `${name}-${randomSuffix()}`
    while (pods.entries.has(keyOf(namespace, podName))) podName = `${name}-${randomSuffix()}`
    const pod: JsonObject = {
      apiVersion: "v1",
      kind: "Pod",
      metadata: {
        ...podMeta,
        name: podName,
        namespace,
        labels,
        ownerReferences: [{
          apiVersion: "batch/v1",
          kind: "Job",
          name,
          uid: jobMeta.uid,
          controller: true,
          blockOwnerDeletion: true
        }]
      },
      spec: isObject(template.spec) ? template.spec : { containers: [] }
    }
    finish(kind, pod, undefined, undefined, true)
    const created = state.store.write(pods, namespace, podName, (rv) => {
      ;(pod.metadata as JsonObject).resourceVersion = String(rv)
      return { obj: pod, managers: [] }
    })
    updateObject(state, { apiVersion: "batch/v1", kind: "Job", namespace, name }, (j) => {
      const status = child(j as JsonObject, "status")
      status.active = 1
      status.startTime ??= now()
      status.ready = 0
    })
    simulatePod(state, created)
  })
}

/** Sets a pod's phase (see `Control.setPodPhase`). @internal */
export const setPodPhase = (
  state: FakeState,
  namespace: string,
  name: string,
  phase: "Pending" | "Running" | "Succeeded" | "Failed" | "Unknown",
  options: { readonly reason?: string | undefined; readonly message?: string | undefined } = {}
): FakeObject => {
  const { entry, kind } = state.refEntry({ apiVersion: "v1", kind: "Pod", namespace, name })
  if (entry === undefined) throw new Error(`setPodPhase: pod ${namespace}/${name} does not exist`)
  if (phase === "Succeeded" || phase === "Failed") {
    const byContainer = state.logs.get(entry.uid)
    for (const c of containerNames(entry.obj)) {
      const log = byContainer?.get(c)
      if (log !== undefined && !log.ended) log.end(phase === "Succeeded" ? 0 : 1)
    }
  }
  const next = podStatus(state, entry, phase, options)
  serverUpdate(state, kind, entry, next)
  return next as unknown as FakeObject
}

/** Ends a container, or restarts it (see `Control.endContainer`). @internal */
export const endContainer = (
  state: FakeState,
  namespace: string,
  pod: string,
  options: {
    readonly container?: string | undefined
    readonly exitCode?: number | undefined
    readonly restart?: boolean | undefined
  } = {}
): void => {
  const { entry, kind } = state.refEntry({ apiVersion: "v1", kind: "Pod", namespace, name: pod })
  if (entry === undefined) throw new Error(`endContainer: pod ${namespace}/${pod} does not exist`)
  const { log, name } = containerLog(state, entry, options.container, true)
  const exitCode = options.exitCode ?? 0
  log.end(exitCode)
  const next = entry.copy()
  const status = child(next, "status")
  const statuses = Array.isArray(status.containerStatuses) ? (status.containerStatuses as Array<JsonObject>) : []
  const at = now()
  let found = statuses.find((c) => c.name === name)
  if (found === undefined) {
    found = { name, ready: false, restartCount: 0, image: "", imageID: "", started: false }
    statuses.push(found)
  }
  const terminated = { exitCode, reason: exitCode === 0 ? "Completed" : "Error", finishedAt: at }
  if (options.restart === true) {
    found.lastState = { terminated }
    found.restartCount = (typeof found.restartCount === "number" ? found.restartCount : 0) + 1
    found.state = { running: { startedAt: at } }
    log.restart()
  } else {
    found.state = { terminated }
    found.ready = false
    found.started = false
  }
  status.containerStatuses = statuses
  serverUpdate(state, kind, entry, next)
}

/** Marks a Job complete (see `Control.completeJob`). @internal */
export const completeJob = (state: FakeState, namespace: string, name: string): FakeObject =>
  updateObject(state, { apiVersion: "batch/v1", kind: "Job", namespace, name }, (job) => {
    const obj = job as unknown as JsonObject
    const status = child(obj, "status")
    const at = now()
    const completions = (obj.spec as JsonObject | undefined)?.completions
    status.startTime ??= at
    status.completionTime = at
    status.succeeded = typeof completions === "number" ? completions : 1
    status.ready = 0
    drop(status, "active")
    const reached = {
      status: "True",
      lastProbeTime: at,
      lastTransitionTime: at,
      reason: "CompletionsReached",
      message: "Reached expected number of succeeded pods"
    }
    status.conditions = [{ type: "SuccessCriteriaMet", ...reached }, { type: "Complete", ...reached }]
  })

/** Marks a Job failed (see `Control.failJob`). @internal */
export const failJob = (
  state: FakeState,
  namespace: string,
  name: string,
  options: { readonly reason?: string | undefined; readonly message?: string | undefined } = {}
): FakeObject =>
  updateObject(state, { apiVersion: "batch/v1", kind: "Job", namespace, name }, (job) => {
    const status = child(job as unknown as JsonObject, "status")
    const at = now()
    const reason = options.reason ?? "BackoffLimitExceeded"
    const message = options.message ?? "Job has reached the specified backoff limit"
    status.startTime ??= at
    status.failed = typeof status.failed === "number" ? status.failed + 1 : 1
    status.ready = 0
    drop(status, "active")
    status.conditions = [
      { type: "FailureTarget", status: "True", lastProbeTime: at, lastTransitionTime: at, reason, message },
      { type: "Failed", status: "True", lastProbeTime: at, lastTransitionTime: at, reason, message }
    ]
  })

/** With `simulate` on, pods and jobs created through the API (not seeded) run by themselves. @internal */
export const install = (state: FakeState): void => {
  if (state.simulate === undefined) return
  state.onWrite((kind, entry, prev) => {
    if (prev !== undefined || kind.custom) return
    if (kind.group === "" && kind.kind === "Pod") simulatePod(state, entry)
    if (kind.group === "batch" && kind.kind === "Job") simulateJob(state, entry)
  })
}

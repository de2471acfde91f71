/**
 * The scheduler and the kubelet of one node. The scheduler binds new pods to the node
 * (`spec.nodeName`, PodScheduled). The kubelet registers its Node and runs the pods bound
 * to it as a kubelet reports them: admitted (Pending, containers creating), Running and
 * Ready after `podStartMs`, containers that do not restart exiting after `podRunMs`,
 * ephemeral containers started, resizes taken up, and a deleted pod stopped (terminal
 * status, then removed) after `podStopMs`, within its grace period. Every delay is on the
 * fake's clock.
 *
 * Seeded pods are left as given, and so are pods bound to other nodes: a test plays
 * their kubelet.
 *
 * @internal
 */
import { asLines, printedBy } from "./printed.js"
import { child, drop, isObject, type JsonObject } from "../store/json.js"
import type { KindInfo } from "../store/kinds.js"
import type { FakeState } from "../store/state.js"
import type { Entry } from "../store/store.js"
import { appendLog, containerNames } from "../writes/subresources.js"
import {
  builtinKind,
  createObject,
  editObject,
  entriesOf,
  entryOf,
  isDeleting,
  isSeed,
  metadataOf,
  removeObject,
  setCondition,
  updateObject
} from "../controllers/api.js"
import { recordEvent } from "../controllers/events.js"
import { keyFor, splitKey, WorkQueue } from "../controllers/queue.js"

/** The kubelet's settings with the defaults filled in. @internal */
export interface KubeletConfig {
  readonly nodeName: string
  readonly podStartMs: number
  readonly podRunMs: number
  readonly podStopMs: number
  /**
   * `simulate`: log lines per container, and (with `completePods`) containers that restart exit too: the
   * kubelet starts them again, after its back-off from the second exit on.
   */
  readonly simulate: { readonly completePods: boolean } | undefined
}

/** The node's address: every pod's `hostIP`. */
const hostIP = "10.0.0.10"

const podKind = (state: FakeState): KindInfo => builtinKind(state, "", "v1", "pods")

type Phase = "Pending" | "Running" | "Succeeded" | "Failed" | "Unknown"

const specOf = (pod: JsonObject): JsonObject => (isObject(pod.spec) ? pod.spec : {})

const containersOf = (pod: JsonObject, field: "containers" | "initContainers" | "ephemeralContainers") => {
  const list = specOf(pod)[field]
  return Array.isArray(list) ? list.filter((c): c is JsonObject => isObject(c) && typeof c.name === "string") : []
}

const nextPodIP = (state: FakeState): string => {
  const n = ++state.podIps
  return `10.244.${Math.floor(n / 250) % 250}.${(n % 250) + 2}`
}

/**
 * A copy of a pod with the status a kubelet reports in `phase`: conditions, container
 * statuses (with their logs' exit codes once terminated), IPs and start time. `admitted`:
 * the kubelet has the pod (Pending with a start time and its node's IP). `next` is the
 * copy to change (its status is).
 *
 * @internal
 */
export const podWithPhase = (
  state: FakeState,
  pod: Entry,
  phase: Phase,
  options: {
    readonly reason?: string | undefined
    readonly message?: string | undefined
    readonly admitted?: boolean | undefined
  } = {},
  next: JsonObject = pod.copy()
): JsonObject => {
  const status = child(next, "status")
  const at = state.now()
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
  const started = phase !== "Pending"
  const reason = phase === "Succeeded"
    ? "PodCompleted"
    : phase === "Failed"
    ? "PodFailed"
    : running
    ? undefined
    : "ContainersNotReady"
  const initialized = started || previous.some((c) => c.type === "Initialized" && c.status === "True") ||
    (options.admitted === true && containersOf(pod.obj, "initContainers").length === 0)
  status.conditions = [
    condition("PodReadyToStartContainers", running || terminal),
    condition("Initialized", initialized),
    condition("Ready", running, reason),
    condition("ContainersReady", running, reason),
    condition("PodScheduled", true)
  ]
  if (started || options.admitted === true) {
    status.startTime ??= at
    status.hostIP ??= hostIP
    status.hostIPs ??= [{ ip: status.hostIP }]
  }
  if (started) {
    status.podIP ??= nextPodIP(state)
    status.podIPs ??= [{ ip: status.podIP }]
  }
  if (options.admitted === true) status.observedGeneration = pod.generation
  const oldStatuses = Array.isArray(status.containerStatuses) ? (status.containerStatuses as Array<JsonObject>) : []
  const containers = containersOf(pod.obj, "containers")
  status.containerStatuses = containerNames(pod.obj).map((name) => {
    const old = oldStatuses.find((c) => c.name === name)
    const container = containers.find((c) => c.name === name)
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
      ...(started ? { containerID: `containerd://${pod.uid}-${name}` } : {}),
      ...(started && isObject(container?.resources) ? resourcesStatus(container.resources) : {})
    }
  })
  const inits = containersOf(pod.obj, "initContainers")
  if (inits.length > 0) {
    status.initContainerStatuses = inits.map((c) => ({
      name: c.name,
      state: started
        ? { terminated: { exitCode: 0, reason: "Completed", startedAt: at, finishedAt: at } }
        : { waiting: { reason: "PodInitializing" } },
      lastState: {},
      ready: started,
      restartCount: 0,
      image: c.image ?? "",
      imageID: "",
      started: false,
      ...(started ? { containerID: `containerd://${pod.uid}-${c.name as string}` } : {})
    }))
  }
  return next
}

/** What a container status reports of resources the kubelet has applied. */
const resourcesStatus = (resources: JsonObject): JsonObject => ({
  ...(isObject(resources.requests) ? { allocatedResources: resources.requests } : {}),
  resources: {
    ...(isObject(resources.limits) ? { limits: resources.limits } : {}),
    ...(isObject(resources.requests) ? { requests: resources.requests } : {})
  }
})

/** The Node a kubelet registers. */
const nodeObject = (state: FakeState, name: string): JsonObject => {
  const at = state.now()
  const condition = (type: string, status: string, reason: string, message: string) => ({
    type,
    status,
    lastHeartbeatTime: at,
    lastTransitionTime: at,
    reason,
    message
  })
  const capacity = { cpu: "4", "ephemeral-storage": "102400000Ki", memory: "16384000Ki", pods: "110" }
  return {
    apiVersion: "v1",
    kind: "Node",
    metadata: {
      name,
      labels: {
        "beta.kubernetes.io/arch": "amd64",
        "beta.kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux"
      },
      annotations: {
        "node.alpha.kubernetes.io/ttl": "0",
        "volumes.kubernetes.io/controller-managed-attach-detach": "true"
      }
    },
    spec: { podCIDR: "10.244.0.0/24", podCIDRs: ["10.244.0.0/24"] },
    status: {
      capacity,
      allocatable: capacity,
      conditions: [
        condition("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
        condition("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
        condition("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
        condition("Ready", "True", "KubeletReady", "kubelet is posting ready status")
      ],
      addresses: [{ type: "InternalIP", address: hostIP }, { type: "Hostname", address: name }],
      daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
      nodeInfo: {
        machineID: "",
        systemUUID: "",
        bootID: "",
        kernelVersion: "",
        osImage: "effect-kube FakeCluster",
        containerRuntimeVersion: "containerd://2.1.0",
        kubeletVersion: "v1.35.0",
        operatingSystem: "linux",
        architecture: "amd64"
      }
    }
  }
}

const isScheduled = (pod: JsonObject): boolean => {
  const nodeName = specOf(pod).nodeName
  return typeof nodeName === "string" && nodeName !== ""
}

/** A pod the default scheduler would bind: not bound, not gated, not finished, not being deleted. */
const wantsScheduling = (entry: Entry): boolean => {
  const spec = specOf(entry.obj)
  const phase = isObject(entry.obj.status) ? entry.obj.status.phase : undefined
  const gates = spec.schedulingGates
  return !isScheduled(entry.obj) && !isDeleting(entry) && phase !== "Succeeded" && phase !== "Failed" &&
    (spec.schedulerName === undefined || spec.schedulerName === "default-scheduler") &&
    !(Array.isArray(gates) && gates.length > 0)
}

/** Whether the pod tolerates a cordoned node's taint (DaemonSet pods do: their controller adds it). */
const toleratesUnschedulable = (pod: JsonObject): boolean => {
  const tolerations = specOf(pod).tolerations
  return Array.isArray(tolerations) && tolerations.some((t) =>
    isObject(t) && (t.operator === "Exists" && (t.key === undefined || t.key === "") ||
      t.key === "node.kubernetes.io/unschedulable") && (t.effect === undefined || t.effect === "" || t.effect === "NoSchedule")
  )
}

/**
 * Binds pods to the node, as the default scheduler's Binding does; not while the node is
 * cordoned (`spec.unschedulable`, its NodeUnschedulable plugin) or lacks a label of the pod's
 * `nodeSelector` (its NodeAffinity plugin), where a pod stays Pending with PodScheduled False
 * (reason Unschedulable) and a Warning FailedScheduling Event in the scheduler's words, until
 * the node is schedulable again. @internal
 */
export const installScheduler = (state: FakeState, nodeName: string): void => {
  const podsKind = podKind(state)
  const nodeKind = builtinKind(state, "", "v1", "nodes")
  const cordoned = (): boolean => {
    const node = entryOf(state, nodeKind, "", nodeName)
    return node !== undefined && specOf(node.obj).unschedulable === true
  }
  const nodeSelected = (pod: JsonObject): boolean => {
    // its NodeAffinity plugin: every label of spec.nodeSelector on the node (required node affinity is not modelled)
    const selector = specOf(pod).nodeSelector
    if (!isObject(selector)) return true
    const node = entryOf(state, nodeKind, "", nodeName)
    const labels = node !== undefined && isObject(node.obj.metadata) && isObject(node.obj.metadata.labels) ?
      node.obj.metadata.labels :
      {}
    return Object.entries(selector).every(([key, value]) => labels[key] === value)
  }
  const queue = new WorkQueue(state, (key) => {
    const { name, namespace } = splitKey(key)
    const pod = entryOf(state, podsKind, namespace, name)
    if (pod === undefined || !wantsScheduling(pod)) return
    const draft = pod.statusCopy()
    // the real scheduler's words for a one-node cluster
    const message = cordoned() && !toleratesUnschedulable(pod.obj) ?
      "0/1 nodes are available: 1 node(s) were unschedulable. preemption: 0/1 nodes are available: " +
        "1 Preemption is not helpful for scheduling." :
      !nodeSelected(pod.obj) ?
      "0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector. no new claims to deallocate, " +
        "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling." :
      undefined
    if (message !== undefined) {
      const current = isObject(pod.obj.status) && Array.isArray(pod.obj.status.conditions)
        ? pod.obj.status.conditions.find((c) => isObject(c) && c.type === "PodScheduled")
        : undefined
      if (isObject(current) && current.status === "False" && current.message === message) return
      setCondition(child(draft, "status"), { type: "PodScheduled", status: "False", reason: "Unschedulable", message }, state.now(), {
        lastProbeTime: true
      })
      const updated = updateObject(state, podsKind, pod, draft, { keepGeneration: true })
      // as the scheduler's events.k8s.io recorder: one FailedScheduling per attempt that did not bind
      recordEvent(state, updated, { component: "default-scheduler", action: "Scheduling" }, {
        type: "Warning",
        reason: "FailedScheduling",
        message
      })
      return
    }
    // the binding sets only spec.nodeName: the spec's parts are the stored ones, not copies
    draft.spec = { ...specOf(pod.obj), nodeName }
    setCondition(child(draft, "status"), { type: "PodScheduled", status: "True" }, state.now(), { lastProbeTime: true })
    updateObject(state, podsKind, pod, draft, { keepGeneration: true })
  })
  state.onWrite((kind, entry, prev) => {
    if (kind.group !== "" || isSeed(entry, prev)) return
    if (kind.plural === "pods" && wantsScheduling(entry)) queue.add(keyFor(entry.namespace, entry.name))
    // uncordoned (or relabelled): the pods left pending are tried again
    if (kind.plural === "nodes" && entry.name === nodeName && specOf(entry.obj).unschedulable !== true) {
      for (const pod of entriesOf(state, podsKind, undefined)) {
        if (wantsScheduling(pod)) queue.add(keyFor(pod.namespace, pod.name))
      }
    }
  })
}

/** What the kubelet remembers of a pod it runs (by uid): its pending timers. */
interface Running {
  startTimer?: (() => void) | undefined
  exitTimer?: (() => void) | undefined
  stopTimer?: (() => void) | undefined
  /** How many times its containers exited and were started again (`completePods` with restartPolicy Always). */
  exits?: number | undefined
}

/** The kubelet's crash-loop back-off: none for the first restart, then 10s doubling to 5 minutes. */
const restartBackOffMs = (exits: number): number => exits <= 1 ? 0 : Math.min(10_000 * 2 ** (exits - 2), 300_000)

/** A duration as Go's `time.Duration` prints whole seconds (`10s`, `1m20s`, `5m0s`). */
const goSeconds = (ms: number): string => {
  const s = Math.round(ms / 1000)
  return s < 60 ? `${s}s` : `${Math.floor(s / 60)}m${s % 60}s`
}

/** Runs the pods bound to the node. @internal */
export const installKubelet = (state: FakeState, config: KubeletConfig): void => {
  const nodeKind = builtinKind(state, "", "v1", "nodes")
  // a built-in kind is registered once, for the life of the fake
  const podsKind = podKind(state)
  if (entryOf(state, nodeKind, "", config.nodeName) === undefined) {
    createObject(state, nodeKind, nodeObject(state, config.nodeName))
  }
  const pods = new Map<string, Running>()
  const forget = (uid: string) => {
    const running = pods.get(uid)
    if (running === undefined) return
    running.startTimer?.()
    running.exitTimer?.()
    running.stopTimer?.()
    pods.delete(uid)
  }
  const current = (namespace: string, name: string, uid: string): Entry | undefined => {
    const pod = entryOf(state, podsKind, namespace, name)
    return pod !== undefined && pod.uid === uid ? pod : undefined
  }
  const phaseOf = (pod: Entry): unknown => (isObject(pod.obj.status) ? pod.obj.status.phase : undefined)
  const restarts = (pod: Entry): boolean => {
    // as the kubelet's shouldContainerBeRestarted: only Never and OnFailure let a container stay exited
    const policy = specOf(pod.obj).restartPolicy
    return policy !== "Never" && policy !== "OnFailure"
  }
  /** Whether the containers exit after `podRunMs`: those that do not restart, and with `completePods` all. */
  const exits = (pod: Entry): boolean => !restarts(pod) || config.simulate?.completePods === true
  const writePhase = (pod: Entry, phase: Phase, admitted = false): Entry => {
    // the spec is the stored one: a status write leaves it, and its JSON, as they were
    const next = podWithPhase(state, pod, phase, { admitted }, pod.statusCopy())
    child(next, "status").observedGeneration = pod.generation
    return updateObject(state, podsKind, pod, next)
  }
  const logLines = (pod: Entry, lines: (container: string) => ReadonlyArray<string>) => {
    if (config.simulate === undefined) return
    for (const container of containerNames(pod.obj)) {
      appendLog(state, pod.namespace, pod.name, lines(container), { container })
    }
  }
  const start = (namespace: string, name: string, uid: string) => {
    const pod = current(namespace, name, uid)
    if (pod === undefined || isDeleting(pod) || phaseOf(pod) !== "Pending") return
    const runningPod = writePhase(pod, "Running")
    // what the container's command would print, and nothing made up (a cluster's log has only that)
    logLines(runningPod, (container) => printedLines(pod.obj, container))
    startEphemeral(runningPod)
    if (!exits(runningPod)) return
    const running = pods.get(uid)
    if (running !== undefined) running.exitTimer = state.later(config.podRunMs, () => exit(namespace, name, uid))
  }
  const exit = (namespace: string, name: string, uid: string) => {
    const pod = current(namespace, name, uid)
    if (pod === undefined || isDeleting(pod) || phaseOf(pod) !== "Running") return
    if (restarts(pod)) return exitAndRestart(pod)
    for (const log of state.logs.get(uid)?.values() ?? []) if (!log.ended) log.end(0)
    writePhase(pod, "Succeeded")
  }
  /**
   * Containers of a pod that restarts exited 0: the pod stays Running and the kubelet starts them
   * again, at once the first time, then after its back-off (CrashLoopBackOff, not ready meanwhile).
   */
  const exitAndRestart = (pod: Entry) => {
    const running = pods.get(pod.uid)
    if (running === undefined) return
    const { name, namespace, uid } = pod
    running.exits = (running.exits ?? 0) + 1
    const backOffMs = restartBackOffMs(running.exits)
    const at = state.now()
    editObject(state, podKind(state), pod, (draft) => {
      const status = child(draft, "status")
      const statuses = Array.isArray(status.containerStatuses) ? status.containerStatuses as Array<JsonObject> : []
      status.containerStatuses = statuses.map((cs) => {
        const startedAt = isObject(cs.state) && isObject(cs.state.running) ? cs.state.running.startedAt : at
        const lastState = {
          terminated: { exitCode: 0, reason: "Completed", startedAt, finishedAt: at, containerID: cs.containerID }
        }
        if (backOffMs === 0) {
          const restartCount = typeof cs.restartCount === "number" ? cs.restartCount + 1 : 1
          return { ...cs, state: { running: { startedAt: at } }, lastState, restartCount }
        }
        const message = `back-off ${goSeconds(backOffMs)} restarting failed container=${String(cs.name)} ` +
          `pod=${name}_${namespace}(${uid})`
        const state = { waiting: { reason: "CrashLoopBackOff", message } }
        return { ...cs, state, lastState, ready: false, started: false }
      })
      if (backOffMs === 0) return
      const unready = statuses.map((cs) => String(cs.name)).join(" ")
      for (const type of ["Ready", "ContainersReady"]) {
        setCondition(status, {
          type,
          status: "False",
          reason: "ContainersNotReady",
          message: `containers with unready status: [${unready}]`
        }, at, { lastProbeTime: true })
      }
    })
    if (backOffMs === 0) {
      running.exitTimer = state.later(config.podRunMs, () => exit(namespace, name, uid))
      return
    }
    running.exitTimer = state.later(backOffMs, () => restartAfterBackOff(namespace, name, uid))
  }
  const restartAfterBackOff = (namespace: string, name: string, uid: string) => {
    const pod = current(namespace, name, uid)
    const running = pods.get(uid)
    if (pod === undefined || running === undefined || isDeleting(pod) || phaseOf(pod) !== "Running") return
    // ready and running again, its last exit kept in lastState, one restart more
    const status = child(podWithPhase(state, pod, "Running"), "status")
    status.observedGeneration = pod.generation
    for (const cs of status.containerStatuses as Array<JsonObject>) cs.restartCount = (cs.restartCount as number) + 1
    const restarted = editObject(state, podKind(state), pod, (draft) => {
      draft.status = status
    })
    logLines(restarted, (container) => [`starting ${container} in pod ${namespace}/${name}`])
    running.exitTimer = state.later(config.podRunMs, () => exit(namespace, name, uid))
  }
  const stop = (namespace: string, name: string, uid: string) => {
    const pod = current(namespace, name, uid)
    if (pod === undefined) return
    const phase = phaseOf(pod)
    let stopped = pod
    if (phase !== "Succeeded" && phase !== "Failed") {
      for (const log of state.logs.get(uid)?.values() ?? []) if (!log.ended) log.end(0)
      stopped = writePhase(pod, phase === "Pending" ? "Failed" : "Succeeded")
    }
    removeObject(state, podsKind, stopped, { gracePeriodSeconds: 0, preconditions: { uid } })
  }
  const startEphemeral = (pod: Entry) => {
    const ephemeral = containersOf(pod.obj, "ephemeralContainers")
    if (ephemeral.length === 0) return
    const status = isObject(pod.obj.status) ? pod.obj.status : {}
    const known = Array.isArray(status.ephemeralContainerStatuses) ? status.ephemeralContainerStatuses : []
    if (ephemeral.every((c) => known.some((s) => isObject(s) && s.name === c.name))) return
    const at = state.now()
    editObject(state, podsKind, pod, (draft) => {
      const s = child(draft, "status")
      const had = Array.isArray(s.ephemeralContainerStatuses) ? s.ephemeralContainerStatuses as Array<JsonObject> : []
      s.ephemeralContainerStatuses = ephemeral.map((c) =>
        had.find((h) => h.name === c.name) ?? {
          name: c.name,
          state: { running: { startedAt: at } },
          lastState: {},
          ready: false,
          restartCount: 0,
          image: c.image ?? "",
          imageID: "",
          containerID: `containerd://${pod.uid}-${c.name as string}`
        }
      )
    })
  }
  /** An in-place resize: the containers' new resources become what they run with. */
  const takeResize = (pod: Entry) => {
    const containers = containersOf(pod.obj, "containers")
    const status = isObject(pod.obj.status) ? pod.obj.status : {}
    const statuses = Array.isArray(status.containerStatuses) ? status.containerStatuses as Array<JsonObject> : []
    const differs = containers.some((c) => {
      const s = statuses.find((x) => x.name === c.name)
      return s !== undefined && isObject(c.resources) &&
        JSON.stringify(resourcesStatus(c.resources).resources) !== JSON.stringify(s.resources ?? {})
    })
    if (!differs && status.observedGeneration === pod.generation) return
    editObject(state, podsKind, pod, (draft) => {
      const s = child(draft, "status")
      s.observedGeneration = pod.generation
      const list = Array.isArray(s.containerStatuses) ? s.containerStatuses as Array<JsonObject> : []
      s.containerStatuses = list.map((cs) => {
        const c = containers.find((x) => x.name === cs.name)
        return c !== undefined && isObject(c.resources) ? { ...cs, ...resourcesStatus(c.resources) } : cs
      })
    })
  }
  const queue = new WorkQueue(state, (key) => {
    const { name, namespace } = splitKey(key)
    const pod = entryOf(state, podsKind, namespace, name)
    if (pod === undefined || specOf(pod.obj).nodeName !== config.nodeName) return
    const uid = pod.uid
    let running = pods.get(uid)
    if (isDeleting(pod)) {
      if (running === undefined) pods.set(uid, running = {})
      if (running.stopTimer !== undefined) return
      running.startTimer?.()
      running.exitTimer?.()
      const left = Date.parse(metadataOf(pod.obj).deletionTimestamp as string) - state.clock.now()
      running.stopTimer = state.later(Math.max(0, Math.min(config.podStopMs, left)), () => stop(namespace, name, uid))
      return
    }
    const phase = phaseOf(pod)
    if (running === undefined) {
      if (phase !== "Pending" && phase !== undefined) return
      pods.set(uid, running = {})
      writePhase(pod, "Pending", true)
      running.startTimer = state.later(config.podStartMs, () => start(namespace, name, uid))
      return
    }
    if (phase === "Running") {
      startEphemeral(pod)
      const latest = entryOf(state, podsKind, namespace, name)
      if (latest !== undefined && latest.uid === uid) takeResize(latest)
    }
  })
  state.onWrite((kind, entry, prev) => {
    if (kind.group !== "" || kind.plural !== "pods" || isSeed(entry, prev)) return
    if (specOf(entry.obj).nodeName === config.nodeName) queue.add(keyFor(entry.namespace, entry.name))
  })
  state.onRemove((kind, removed) => {
    if (kind.group === "" && kind.plural === "pods") forget(removed.uid)
  })
}

/** What a container's command and args would print, for simulated logs (the rule: ./printed.ts). */
const printedLines = (pod: JsonObject, container: string): Array<string> => {
  const c = containersOf(pod, "containers").find((x) => x.name === container)
  const words = [...(Array.isArray(c?.command) ? c.command : []), ...(Array.isArray(c?.args) ? c.args : [])]
    .filter((w): w is string => typeof w === "string")
  const env = new Map<string, string>()
  for (const e of Array.isArray(c?.env) ? c.env : []) {
    if (e !== null && typeof e === "object" && typeof e.name === "string" && typeof e.value === "string") {
      env.set(e.name, e.value)
    }
  }
  return asLines(printedBy(words, env))
}

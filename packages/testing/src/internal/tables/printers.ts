/**
 * The built-in kinds' Table printers, as kube-apiserver's (pkg/printers/internalversion)
 * define them: each kind's column definitions (wide columns at priority 1) and the cells
 * of one object's row, computed from the object as stored. The server always prints the
 * wide cells; kubectl shows the priority-1 columns only with `-o wide`.
 *
 * Kinds without a printer (Role, ClusterRole, CRDs, LimitRange, ...) get the default
 * columns: Name and Created At.
 *
 * @internal
 */
import { isObject, type JsonObject } from "../store/json.js"
import { docs } from "./docs.js"
import {
  accessModes,
  containerCells,
  formatLabels,
  formatLabelSelector,
  humanDuration,
  intOrString,
  quantity,
  selectorOrInvalid,
  since,
  timeOf
} from "./format.js"

/** One column of a Table. @internal */
export interface Column {
  readonly name: string
  readonly type: string
  readonly format: string
  readonly description: string
  readonly priority: number
}

/** One object's row: its cells, and the conditions the printer reports (a completed pod). @internal */
export interface Row {
  readonly cells: ReadonlyArray<unknown>
  readonly conditions?: ReadonlyArray<JsonObject> | undefined
}

/** A kind's printer: its columns and the row of an object at a time (ms). @internal */
export interface Printer {
  readonly columns: ReadonlyArray<Column>
  readonly row: (obj: JsonObject, now: number) => Row
}

const column = (name: string, type: string, description: string, priority = 0, format = ""): Column => ({
  name,
  type,
  format,
  description,
  priority
})

const nameColumn = column("Name", "string", docs["ObjectMeta.name"], 0, "name")
const ageColumn = column("Age", "string", docs["ObjectMeta.creationTimestamp"])
const containersColumn = column("Containers", "string", "Names of each container in the template.", 1)
const imagesColumn = column("Images", "string", "Images referenced by each container in the template.", 1)

const obj = (u: unknown): JsonObject => (isObject(u) ? u : {})
const list = (u: unknown): Array<JsonObject> => (Array.isArray(u) ? u.filter(isObject) : [])
const str = (u: unknown): string => (typeof u === "string" ? u : "")
const int = (u: unknown): number => (typeof u === "number" ? Math.trunc(u) : 0)
const size = (u: unknown): number => (Array.isArray(u) ? u.length : isObject(u) ? Object.keys(u).length : 0)

const meta = (o: JsonObject): JsonObject => obj(o.metadata)
const spec = (o: JsonObject): JsonObject => obj(o.spec)
const status = (o: JsonObject): JsonObject => obj(o.status)
const nameOf = (o: JsonObject): string => str(meta(o).name)
const ageOf = (o: JsonObject, now: number): string => since(meta(o).creationTimestamp, now)
const deleting = (o: JsonObject): boolean => meta(o).deletionTimestamp !== undefined

/** A replica count the API server defaults to 1 when it is not given. */
const replicas = (o: JsonObject): number => (typeof spec(o).replicas === "number" ? int(spec(o).replicas) : 1)

const templateContainers = (template: unknown): [string, string] => containerCells(obj(obj(template).spec).containers)

const printBoolPointer = (u: unknown): string => (typeof u === "boolean" ? (u ? "True" : "False") : "<unset>")

// ---------------------------------------------------------------------------
// Pods
// ---------------------------------------------------------------------------

const completed = (reason: string, message: string): ReadonlyArray<JsonObject> => [
  { type: "Completed", status: "True", reason, message }
]
const podSucceeded = completed("Succeeded", "The pod has completed successfully.")
const podFailed = completed("Failed", "The pod failed.")

const hasCondition = (conditions: unknown, type: string): boolean =>
  list(conditions).some((c) => c.type === type && c.status === "True")

const restartable = (container: JsonObject | undefined): boolean => container?.restartPolicy === "Always"

/** The latest of a timestamp and a container's last termination (ms, 0 for none). */
const lastTermination = (latest: number, container: JsonObject): number => {
  const finished = timeOf(obj(obj(container.lastState).terminated).finishedAt)
  return finished !== undefined && finished > latest ? finished : latest
}

const printPod = (pod: JsonObject, now: number): Row => {
  const podSpec = spec(pod)
  const podStatus = status(pod)
  const initSpecs = new Map(list(podSpec.initContainers).map((c) => [str(c.name), c]))
  let restarts = 0
  let restartableRestarts = 0
  let totalContainers = list(podSpec.containers).length
  let readyContainers = 0
  let lastRestart = 0
  let lastRestartableRestart = 0
  const phase = str(podStatus.phase)
  let reason = str(podStatus.reason) !== "" ? str(podStatus.reason) : phase
  for (const c of list(podStatus.conditions)) {
    if (c.type === "PodScheduled" && c.reason === "SchedulingGated") reason = "SchedulingGated"
  }
  for (const c of initSpecs.values()) if (restartable(c)) totalContainers++

  let initializing = false
  const initStatuses = list(podStatus.initContainerStatuses)
  for (let i = 0; i < initStatuses.length; i++) {
    const c = initStatuses[i]!
    const state = obj(c.state)
    const terminated = isObject(state.terminated) ? state.terminated : undefined
    const waiting = isObject(state.waiting) ? state.waiting : undefined
    const isRestartable = restartable(initSpecs.get(str(c.name)))
    restarts += int(c.restartCount)
    lastRestart = lastTermination(lastRestart, c)
    if (isRestartable) {
      restartableRestarts += int(c.restartCount)
      lastRestartableRestart = lastTermination(lastRestartableRestart, c)
    }
    if (terminated !== undefined && int(terminated.exitCode) === 0) continue
    if (isRestartable && c.started === true) {
      if (c.ready === true) readyContainers++
      continue
    }
    if (terminated !== undefined) {
      reason = str(terminated.reason) !== ""
        ? `Init:${str(terminated.reason)}`
        : int(terminated.signal) !== 0
        ? `Init:Signal:${int(terminated.signal)}`
        : `Init:ExitCode:${int(terminated.exitCode)}`
    } else if (waiting !== undefined && str(waiting.reason) !== "" && waiting.reason !== "PodInitializing") {
      reason = `Init:${str(waiting.reason)}`
    } else {
      reason = `Init:${i}/${initSpecs.size}`
    }
    initializing = true
    break
  }

  if (!initializing || hasCondition(podStatus.conditions, "Initialized")) {
    restarts = restartableRestarts
    lastRestart = lastRestartableRestart
    let hasRunning = false
    const statuses = list(podStatus.containerStatuses)
    for (let i = statuses.length - 1; i >= 0; i--) {
      const c = statuses[i]!
      const state = obj(c.state)
      const terminated = isObject(state.terminated) ? state.terminated : undefined
      const waiting = isObject(state.waiting) ? state.waiting : undefined
      restarts += int(c.restartCount)
      lastRestart = lastTermination(lastRestart, c)
      if (waiting !== undefined && str(waiting.reason) !== "") reason = str(waiting.reason)
      else if (terminated !== undefined && str(terminated.reason) !== "") reason = str(terminated.reason)
      else if (terminated !== undefined) {
        reason = int(terminated.signal) !== 0
          ? `Signal:${int(terminated.signal)}`
          : `ExitCode:${int(terminated.exitCode)}`
      } else if (c.ready === true && isObject(state.running)) {
        hasRunning = true
        readyContainers++
      }
    }
    // a pod with a container still running is not Completed
    if (reason === "Completed" && hasRunning) {
      reason = hasCondition(podStatus.conditions, "Ready") ? "Running" : "NotReady"
    }
  }

  if (deleting(pod) && podStatus.reason === "NodeLost") reason = "Unknown"
  else if (deleting(pod) && phase !== "Succeeded" && phase !== "Failed") reason = "Terminating"

  const restartsText = restarts !== 0 && lastRestart !== 0
    ? `${restarts} (${humanDuration(now - lastRestart)} ago)`
    : String(restarts)
  const podIps = list(podStatus.podIPs)
  const gates = list(podSpec.readinessGates)
  const conditions = list(podStatus.conditions)
  const readinessGates = gates.length === 0 ? "<none>" : `${
    gates.filter((g) => conditions.find((c) => c.type === g.conditionType)?.status === "True").length
  }/${gates.length}`
  return {
    cells: [
      nameOf(pod),
      `${readyContainers}/${totalContainers}`,
      reason,
      restartsText,
      ageOf(pod, now),
      str(podIps[0]?.ip) || "<none>",
      str(podSpec.nodeName) || "<none>",
      str(podStatus.nominatedNodeName) || "<none>",
      readinessGates
    ],
    conditions: phase === "Succeeded" ? podSucceeded : phase === "Failed" ? podFailed : undefined
  }
}

// ---------------------------------------------------------------------------
// Workloads
// ---------------------------------------------------------------------------

const printReplicated = (o: JsonObject, now: number, selector: string): Row => {
  const [names, images] = templateContainers(spec(o).template)
  return {
    cells: [nameOf(o), replicas(o), int(status(o).replicas), int(status(o).readyReplicas), ageOf(o, now), names, images, selector]
  }
}

const printDeployment = (o: JsonObject, now: number): Row => {
  const [names, images] = templateContainers(spec(o).template)
  return {
    cells: [
      nameOf(o),
      `${int(status(o).readyReplicas)}/${replicas(o)}`,
      int(status(o).updatedReplicas),
      int(status(o).availableReplicas),
      ageOf(o, now),
      names,
      images,
      selectorOrInvalid(spec(o).selector)
    ]
  }
}

const printStatefulSet = (o: JsonObject, now: number): Row => {
  const [names, images] = templateContainers(spec(o).template)
  return { cells: [nameOf(o), `${int(status(o).readyReplicas)}/${replicas(o)}`, ageOf(o, now), names, images] }
}

const printDaemonSet = (o: JsonObject, now: number): Row => {
  const s = status(o)
  const [names, images] = templateContainers(spec(o).template)
  return {
    cells: [
      nameOf(o),
      int(s.desiredNumberScheduled),
      int(s.currentNumberScheduled),
      int(s.numberReady),
      int(s.updatedNumberScheduled),
      int(s.numberAvailable),
      formatLabels(obj(obj(spec(o).template).spec).nodeSelector),
      ageOf(o, now),
      names,
      images,
      formatLabelSelector(spec(o).selector)
    ]
  }
}

/** Whether the first condition of a type is True, as `hasJobCondition` reads it. */
const jobCondition = (conditions: unknown, type: string): boolean =>
  list(conditions).find((c) => c.type === type)?.status === "True"

const printJob = (o: JsonObject, now: number): Row => {
  const s = status(o)
  const js = spec(o)
  const succeeded = int(s.succeeded)
  const parallelism = typeof js.parallelism === "number" ? int(js.parallelism) : 0
  const completions = typeof js.completions === "number"
    ? `${succeeded}/${int(js.completions)}`
    : parallelism > 1
    ? `${succeeded}/1 of ${parallelism}`
    : `${succeeded}/1`
  const start = timeOf(s.startTime)
  const end = timeOf(s.completionTime)
  const duration = start === undefined ? "" : humanDuration((end ?? now) - start)
  const state = jobCondition(s.conditions, "Complete")
    ? "Complete"
    : jobCondition(s.conditions, "Failed")
    ? "Failed"
    : deleting(o)
    ? "Terminating"
    : jobCondition(s.conditions, "Suspended")
    ? "Suspended"
    : jobCondition(s.conditions, "FailureTarget")
    ? "FailureTarget"
    : "Running"
  const [names, images] = templateContainers(js.template)
  return {
    cells: [nameOf(o), state, completions, duration, ageOf(o, now), names, images, formatLabelSelector(js.selector)]
  }
}

const printCronJob = (o: JsonObject, now: number): Row => {
  const s = status(o)
  const cs = spec(o)
  const jobSpec = obj(obj(cs.jobTemplate).spec)
  const [names, images] = templateContainers(jobSpec.template)
  return {
    cells: [
      nameOf(o),
      str(cs.schedule),
      typeof cs.timeZone === "string" ? cs.timeZone : "<none>",
      printBoolPointer(cs.suspend),
      size(s.active),
      s.lastScheduleTime === undefined ? "<none>" : since(s.lastScheduleTime, now),
      ageOf(o, now),
      names,
      images,
      formatLabelSelector(jobSpec.selector)
    ]
  }
}

// ---------------------------------------------------------------------------
// Services and networking
// ---------------------------------------------------------------------------

/** A load balancer's addresses, sorted; unclipped, as the server prints the wide form. */
const loadBalancerIngress = (ingress: unknown): string => {
  const addresses = new Set<string>()
  for (const i of list(ingress)) {
    if (str(i.ip) !== "") addresses.add(str(i.ip))
    else if (str(i.hostname) !== "") addresses.add(str(i.hostname))
  }
  return [...addresses].sort().join(",")
}

const serviceExternalIp = (svc: JsonObject): string => {
  const s = spec(svc)
  const external = Array.isArray(s.externalIPs) ? s.externalIPs.map(String) : []
  switch (s.type) {
    case "ClusterIP":
    case "NodePort":
      return external.length > 0 ? external.join(",") : "<none>"
    case "LoadBalancer": {
      const lb = loadBalancerIngress(obj(status(svc).loadBalancer).ingress)
      if (external.length > 0) return [...(lb === "" ? [] : lb.split(",")), ...external].join(",")
      return lb !== "" ? lb : "<pending>"
    }
    case "ExternalName":
      return str(s.externalName)
  }
  return "<unknown>"
}

const servicePorts = (ports: unknown): string =>
  list(ports).map((p) =>
    int(p.nodePort) > 0
      ? `${int(p.port)}:${int(p.nodePort)}/${str(p.protocol)}`
      : `${int(p.port)}/${str(p.protocol)}`
  ).join(",")

const printService = (o: JsonObject, now: number): Row => {
  const s = spec(o)
  const clusterIps = Array.isArray(s.clusterIPs) ? s.clusterIPs : []
  return {
    cells: [
      nameOf(o),
      str(s.type),
      clusterIps.length > 0 ? str(clusterIps[0]) : "<none>",
      serviceExternalIp(o),
      servicePorts(s.ports) || "<none>",
      ageOf(o, now),
      formatLabels(s.selector)
    ]
  }
}

const printIngress = (o: JsonObject, now: number): Row => {
  const s = spec(o)
  const rules = list(s.rules)
  const hosts: Array<string> = []
  let more = false
  for (const rule of rules) {
    if (hosts.length === 3) more = true
    if (!more && str(rule.host) !== "") hosts.push(str(rule.host))
  }
  const hostsText = hosts.length === 0
    ? "*"
    : more
    ? `${hosts.join(",")} + ${rules.length - 3} more...`
    : hosts.join(",")
  return {
    cells: [
      nameOf(o),
      typeof s.ingressClassName === "string" ? s.ingressClassName : "<none>",
      hostsText,
      loadBalancerIngress(obj(status(o).loadBalancer).ingress),
      size(s.tls) > 0 ? "80, 443" : "80",
      ageOf(o, now)
    ]
  }
}

const printIngressClass = (o: JsonObject, now: number): Row => {
  const p = spec(o).parameters
  const parameters = isObject(p)
    ? `${str(p.kind)}${typeof p.apiGroup === "string" ? `.${p.apiGroup}` : ""}/${str(p.name)}`
    : "<none>"
  return { cells: [nameOf(o), str(spec(o).controller), parameters, ageOf(o, now)] }
}

const withMore = (items: ReadonlyArray<string>, count: number, empty: string): string => {
  const text = items.join(",")
  if (count > 3) return `${text} + ${count - 3} more...`
  return text === "" ? empty : text
}

const formatEndpoints = (subsets: unknown): string => {
  const all = list(subsets)
  if (all.length === 0) return "<none>"
  const shown: Array<string> = []
  let count = 0
  for (const subset of all) {
    const addresses = list(subset.addresses)
    const ports = list(subset.ports)
    if (ports.length === 0) {
      count += addresses.length
      for (const a of addresses) if (shown.length < 3) shown.push(str(a.ip))
      continue
    }
    for (const port of ports) {
      count += addresses.length
      for (const a of addresses) {
        if (shown.length < 3) {
          const ip = str(a.ip)
          shown.push(`${ip.includes(":") ? `[${ip}]` : ip}:${int(port.port)}`)
        }
      }
    }
  }
  return withMore(shown, count, "")
}

const printEndpointSlice = (o: JsonObject, now: number): Row => {
  const ports = list(o.ports)
  const portText = withMore(
    ports.slice(0, 3).map((p) => (typeof p.port === "number" ? String(p.port) : typeof p.name === "string" ? p.name : "*")),
    ports.length,
    "<unset>"
  )
  const addresses = list(o.endpoints).flatMap((e) => (Array.isArray(e.addresses) ? e.addresses.map(String) : []))
  return {
    cells: [
      nameOf(o),
      str(o.addressType),
      portText,
      withMore(addresses.slice(0, 3), addresses.length, "<unset>"),
      ageOf(o, now)
    ]
  }
}

// ---------------------------------------------------------------------------
// Nodes, namespaces, config, storage
// ---------------------------------------------------------------------------

const nodeAddress = (node: JsonObject, type: string): string =>
  str(list(status(node).addresses).find((a) => a.type === type)?.address) || "<none>"

const printNode = (o: JsonObject, now: number): Row => {
  const ready = list(status(o).conditions).filter((c) => c.type === "Ready").pop()
  const states = ready === undefined ? ["Unknown"] : [ready.status === "True" ? "Ready" : "NotReady"]
  if (spec(o).unschedulable === true) states.push("SchedulingDisabled")
  const roles = new Set<string>()
  for (const [k, v] of Object.entries(obj(meta(o).labels))) {
    if (k.startsWith("node-role.kubernetes.io/") && k.length > "node-role.kubernetes.io/".length) {
      roles.add(k.slice("node-role.kubernetes.io/".length))
    } else if (k === "kubernetes.io/role" && v !== "") roles.add(String(v))
  }
  const info = obj(status(o).nodeInfo)
  return {
    cells: [
      nameOf(o),
      states.join(","),
      [...roles].sort().join(",") || "<none>",
      ageOf(o, now),
      str(info.kubeletVersion),
      nodeAddress(o, "InternalIP"),
      nodeAddress(o, "ExternalIP"),
      str(info.osImage) || "<unknown>",
      str(info.kernelVersion) || "<unknown>",
      str(info.containerRuntimeVersion) || "<unknown>"
    ]
  }
}

const storageClassOf = (o: JsonObject): string => {
  const annotation = obj(meta(o).annotations)["volume.beta.kubernetes.io/storage-class"]
  return typeof annotation === "string" ? annotation : str(spec(o).storageClassName)
}

const printPersistentVolume = (o: JsonObject, now: number): Row => {
  const s = spec(o)
  const claim = isObject(s.claimRef) ? `${str(s.claimRef.namespace)}/${str(s.claimRef.name)}` : ""
  return {
    cells: [
      nameOf(o),
      quantity(obj(s.capacity).storage),
      accessModes(s.accessModes),
      str(s.persistentVolumeReclaimPolicy),
      deleting(o) ? "Terminating" : str(status(o).phase),
      claim,
      storageClassOf(o),
      typeof s.volumeAttributesClassName === "string" ? s.volumeAttributesClassName : "<unset>",
      str(status(o).reason),
      ageOf(o, now),
      typeof s.volumeMode === "string" ? s.volumeMode : "<unset>"
    ]
  }
}

const printPersistentVolumeClaim = (o: JsonObject, now: number): Row => {
  const s = spec(o)
  const bound = str(s.volumeName) !== ""
  return {
    cells: [
      nameOf(o),
      deleting(o) ? "Terminating" : str(status(o).phase),
      str(s.volumeName),
      bound ? quantity(obj(status(o).capacity).storage) : "",
      bound ? accessModes(status(o).accessModes) : "",
      storageClassOf(o),
      typeof s.volumeAttributesClassName === "string" ? s.volumeAttributesClassName : "<unset>",
      ageOf(o, now),
      typeof s.volumeMode === "string" ? s.volumeMode : "<unset>"
    ]
  }
}

const printStorageClass = (o: JsonObject, now: number): Row => {
  const annotations = obj(meta(o).annotations)
  const isDefault = annotations["storageclass.kubernetes.io/is-default-class"] === "true" ||
    annotations["storageclass.beta.kubernetes.io/is-default-class"] === "true"
  return {
    cells: [
      isDefault ? `${nameOf(o)} (default)` : nameOf(o),
      str(o.provisioner),
      typeof o.reclaimPolicy === "string" ? o.reclaimPolicy : "Delete",
      typeof o.volumeBindingMode === "string" ? o.volumeBindingMode : "Immediate",
      o.allowVolumeExpansion === true,
      ageOf(o, now)
    ]
  }
}

// ---------------------------------------------------------------------------
// Events
// ---------------------------------------------------------------------------

const eventSource = (source: unknown, controller: unknown, instance: unknown): string => {
  const component = str(obj(source).component) || str(controller)
  const host = str(obj(source).host) || str(instance)
  return host === "" ? component : `${component}, ${host}`
}

/** The core Event's printer; `events.k8s.io` Events are mapped onto its fields (they share one storage). */
const printEventFields = (
  o: JsonObject,
  now: number,
  fields: {
    readonly first: unknown
    readonly last: unknown
    readonly eventTime: unknown
    readonly count: unknown
    readonly involved: JsonObject
    readonly message: unknown
    readonly source: unknown
  }
): Row => {
  const first = timeOf(fields.first) !== undefined ? since(fields.first, now) : since(fields.eventTime, now)
  let last = timeOf(fields.last) !== undefined ? since(fields.last, now) : first
  let count = int(fields.count)
  const series = o.series
  if (isObject(series)) {
    last = since(series.lastObservedTime, now)
    count = int(series.count)
  } else if (count === 0) count = 1
  const involved = fields.involved
  const kind = str(involved.kind).toLowerCase()
  const target = str(involved.name) !== "" ? `${kind}/${str(involved.name)}` : kind
  return {
    cells: [
      last,
      str(o.type),
      str(o.reason),
      target,
      str(involved.fieldPath),
      eventSource(fields.source, o.reportingController ?? o.reportingComponent, o.reportingInstance),
      str(fields.message).trim(),
      first,
      count,
      nameOf(o)
    ]
  }
}

const printCoreEvent = (o: JsonObject, now: number): Row =>
  printEventFields(o, now, {
    first: o.firstTimestamp,
    last: o.lastTimestamp,
    eventTime: o.eventTime,
    count: o.count,
    involved: obj(o.involvedObject),
    message: o.message,
    source: o.source
  })

const printEventsEvent = (o: JsonObject, now: number): Row =>
  printEventFields(o, now, {
    first: o.deprecatedFirstTimestamp,
    last: o.deprecatedLastTimestamp,
    eventTime: o.eventTime,
    count: o.deprecatedCount,
    involved: obj(o.regarding),
    message: o.note,
    source: o.deprecatedSource
  })

// ---------------------------------------------------------------------------
// Autoscaling, policy, RBAC and the rest
// ---------------------------------------------------------------------------

const metricTarget = (spec: JsonObject, status: JsonObject | undefined, name: string | undefined): string => {
  const target = obj(spec.target)
  const current = obj(status?.current)
  const prefix = name === undefined ? "" : `${name}: `
  if (target.averageValue !== undefined) {
    const value = current.averageValue === undefined ? "<unknown>" : quantity(current.averageValue)
    return `${prefix}${value}/${quantity(target.averageValue)}${name === undefined ? " (avg)" : ""}`
  }
  if (name !== undefined) {
    const value = typeof current.averageUtilization === "number" ? `${current.averageUtilization}%` : "<unknown>"
    const goal = typeof target.averageUtilization === "number" ? `${target.averageUtilization}%` : "<auto>"
    return `${prefix}${value}/${goal}`
  }
  const value = current.value === undefined ? "<unknown>" : quantity(current.value)
  return `${value}/${quantity(target.value)}`
}

/** The HPA's metrics in the v2 form; a v1 object's CPU target read as the API server converts it. */
const hpaMetrics = (o: JsonObject): { specs: Array<JsonObject>; statuses: Array<JsonObject> } => {
  const s = spec(o)
  if (Array.isArray(s.metrics)) return { specs: list(s.metrics), statuses: list(status(o).currentMetrics) }
  if (typeof s.targetCPUUtilizationPercentage !== "number") return { specs: [], statuses: [] }
  const current = status(o).currentCPUUtilizationPercentage
  return {
    specs: [{
      type: "Resource",
      resource: { name: "cpu", target: { type: "Utilization", averageUtilization: s.targetCPUUtilizationPercentage } }
    }],
    statuses: typeof current === "number"
      ? [{ type: "Resource", resource: { name: "cpu", current: { averageUtilization: current } } }]
      : []
  }
}

const formatHpaMetrics = (o: JsonObject): string => {
  const { specs, statuses } = hpaMetrics(o)
  if (specs.length === 0) return "<none>"
  const shown = specs.map((m, i) => {
    const current = statuses[i]
    switch (m.type) {
      case "External":
        return metricTarget(obj(m.external), isObject(current?.external) ? current.external : undefined, undefined)
      case "Pods": {
        const value = isObject(current?.pods) ? quantity(obj(current.pods.current).averageValue) : "<unknown>"
        return `${value}/${quantity(obj(obj(m.pods).target).averageValue)}`
      }
      case "Object":
        return metricTarget(obj(m.object), isObject(current?.object) ? current.object : undefined, undefined)
      case "Resource":
        return metricTarget(obj(m.resource), isObject(current?.resource) ? current.resource : undefined, str(obj(m.resource).name))
      case "ContainerResource":
        return metricTarget(
          obj(m.containerResource),
          isObject(current?.containerResource) ? current.containerResource : undefined,
          str(obj(m.containerResource).name)
        )
      default:
        return "<unknown type>"
    }
  })
  return shown.length > 2 ? `${shown.slice(0, 2).join(", ")} + ${shown.length - 2} more...` : shown.join(", ")
}

const printHpa = (o: JsonObject, now: number): Row => {
  const s = spec(o)
  const ref = obj(s.scaleTargetRef)
  return {
    cells: [
      nameOf(o),
      `${str(ref.kind)}/${str(ref.name)}`,
      formatHpaMetrics(o),
      typeof s.minReplicas === "number" ? String(s.minReplicas) : "<unset>",
      int(s.maxReplicas),
      int(status(o).currentReplicas),
      ageOf(o, now)
    ]
  }
}

const printPdb = (o: JsonObject, now: number): Row => {
  const s = spec(o)
  return {
    cells: [
      nameOf(o),
      s.minAvailable === undefined ? "N/A" : intOrString(s.minAvailable),
      s.maxUnavailable === undefined ? "N/A" : intOrString(s.maxUnavailable),
      int(status(o).disruptionsAllowed),
      ageOf(o, now)
    ]
  }
}

/** `rbac.SubjectsStrings`: the users, groups and service accounts (`namespace/name`) a binding names. */
const subjects = (o: JsonObject): [string, string, string] => {
  const users: Array<string> = []
  const groups: Array<string> = []
  const accounts: Array<string> = []
  for (const s of list(o.subjects)) {
    if (s.kind === "User") users.push(str(s.name))
    else if (s.kind === "Group") groups.push(str(s.name))
    else if (s.kind === "ServiceAccount") accounts.push(`${str(s.namespace)}/${str(s.name)}`)
  }
  return [users.join(", "), groups.join(", "), accounts.join(", ")]
}

const printBinding = (o: JsonObject, now: number): Row => {
  const ref = obj(o.roleRef)
  return { cells: [nameOf(o), `${str(ref.kind)}/${str(ref.name)}`, ageOf(o, now), ...subjects(o)] }
}

const csrCondition = (o: JsonObject): string => {
  const types = new Set(list(status(o).conditions).map((c) => c.type))
  let text = types.has("Denied") ? "Denied" : types.has("Approved") ? "Approved" : "Pending"
  if (types.has("Failed")) text += ",Failed"
  if (str(status(o).certificate) !== "") text += ",Issued"
  return text
}

const printCsr = (o: JsonObject, now: number): Row => {
  const s = spec(o)
  return {
    cells: [
      nameOf(o),
      ageOf(o, now),
      str(s.signerName) || "<none>",
      str(s.username),
      typeof s.expirationSeconds === "number" ? humanDuration(s.expirationSeconds * 1000) : "<none>",
      csrCondition(o)
    ]
  }
}

const printControllerRevision = (o: JsonObject, now: number): Row => {
  const owner = list(meta(o).ownerReferences).find((r) => r.controller === true)
  let controller = "<none>"
  if (owner !== undefined) {
    const apiVersion = str(owner.apiVersion)
    const group = apiVersion.includes("/") ? apiVersion.slice(0, apiVersion.indexOf("/")) : ""
    const kind = str(owner.kind)
    controller = kind === "" && group === "" ? str(owner.name) : `${(group === "" ? kind : `${kind}.${group}`).toLowerCase()}/${str(owner.name)}`
  }
  return { cells: [nameOf(o), controller, int(o.revision), ageOf(o, now)] }
}

/** Resource names in the order `SortableResourceNames` gives them: plain ones, then prefixed ones, each sorted. */
const quotaColumns = (o: JsonObject): [string, string] => {
  const hard = obj(status(o).hard)
  const used = obj(status(o).used)
  const names = Object.keys(hard).sort()
  const requests: Array<string> = []
  const limits: Array<string> = []
  for (const name of names) {
    const text = `${name}: ${used[name] === undefined ? "0" : quantity(used[name])}/${quantity(hard[name])}`
    if (name.split(".").length > 1 && name.split(".")[0] === "limits") limits.push(text)
    else requests.push(text)
  }
  return [requests.join(", "), limits.join(", ")]
}

const simple = (...cells: ReadonlyArray<(o: JsonObject, now: number) => unknown>) => (o: JsonObject, now: number): Row => ({
  cells: cells.map((cell) => cell(o, now))
})

const name = (o: JsonObject) => nameOf(o)
const age = (o: JsonObject, now: number) => ageOf(o, now)

const webhookPrinter = (description: string): Printer => ({
  columns: [nameColumn, column("Webhooks", "integer", description), ageColumn],
  row: simple(name, (o) => size(o.webhooks), age)
})

const policyPrinter = (count: "validations" | "mutations", label: string, description: string): Printer => ({
  columns: [
    nameColumn,
    column(label, "integer", description),
    column("ParamKind", "string", "ParamKind specifies the kind of resources used to parameterize this policy"),
    ageColumn
  ],
  row: simple(name, (o) => size(spec(o)[count]), (o) => {
    const kind = spec(o).paramKind
    return isObject(kind) ? `${str(kind.apiVersion)}/${str(kind.kind)}` : "<unset>"
  }, age)
})

const policyBindingPrinter: Printer = {
  columns: [
    nameColumn,
    column("PolicyName", "string", "PolicyName indicates the policy definition which the policy binding binded to"),
    column("ParamRef", "string", "ParamRef indicates the param resource which sets the configration param"),
    ageColumn
  ],
  row: simple(name, (o) => str(spec(o).policyName), (o) => {
    const ref = spec(o).paramRef
    if (!isObject(ref)) return "<unset>"
    if (str(ref.name) !== "") return str(ref.namespace) !== "" ? `${str(ref.namespace)}/${str(ref.name)}` : `*/${str(ref.name)}`
    return isObject(ref.selector) ? selectorOrInvalid(ref.selector) : "<unset>"
  }, age)
}

const eventColumns: ReadonlyArray<Column> = [
  column("Last Seen", "string", docs["Event.lastTimestamp"]),
  column("Type", "string", docs["Event.type"]),
  column("Reason", "string", docs["Event.reason"]),
  column("Object", "string", docs["Event.involvedObject"]),
  column("Subobject", "string", docs["ObjectReference.fieldPath"], 1),
  column("Source", "string", docs["Event.source"], 1),
  column("Message", "string", docs["Event.message"]),
  column("First Seen", "string", docs["Event.firstTimestamp"], 1),
  column("Count", "string", docs["Event.count"], 1),
  column("Name", "string", docs["ObjectMeta.name"], 1, "name")
]

const bindingColumns = (what: string, roleRef: string): ReadonlyArray<Column> => [
  nameColumn,
  column("Role", "string", roleRef),
  ageColumn,
  column("Users", "string", `Users in the ${what}`, 1),
  column("Groups", "string", `Groups in the ${what}`, 1),
  column("ServiceAccounts", "string", `ServiceAccounts in the ${what}`, 1)
]

/** The printers of the built-in kinds, by `group/plural`. @internal */
export const printers: Readonly<Record<string, Printer>> = {
  "/pods": {
    columns: [
      nameColumn,
      column("Ready", "string", "The aggregate readiness state of this pod for accepting traffic."),
      column("Status", "string", "The aggregate status of the containers in this pod."),
      column(
        "Restarts",
        "string",
        "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted."
      ),
      ageColumn,
      column("IP", "string", docs["PodStatus.podIP"], 1),
      column("Node", "string", docs["PodSpec.nodeName"], 1),
      column("Nominated Node", "string", docs["PodStatus.nominatedNodeName"], 1),
      column("Readiness Gates", "string", docs["PodSpec.readinessGates"], 1)
    ],
    row: printPod
  },
  "/podtemplates": {
    columns: [
      nameColumn,
      column("Containers", "string", "Names of each container in the template."),
      column("Images", "string", "Images referenced by each container in the template."),
      column("Pod Labels", "string", "The labels for the pod template.")
    ],
    row: (o) => {
      const template = obj(o.template)
      return { cells: [nameOf(o), ...templateContainers(template), formatLabels(obj(template.metadata).labels)] }
    }
  },
  "policy/poddisruptionbudgets": {
    columns: [
      nameColumn,
      column("Min Available", "string", "The minimum number of pods that must be available."),
      column("Max Unavailable", "string", "The maximum number of pods that may be unavailable."),
      column("Allowed Disruptions", "integer", "Calculated number of pods that may be disrupted at this time."),
      ageColumn
    ],
    row: printPdb
  },
  "/replicationcontrollers": {
    columns: [
      nameColumn,
      column("Desired", "integer", docs["ReplicationControllerSpec.replicas"]),
      column("Current", "integer", docs["ReplicationControllerStatus.replicas"]),
      column("Ready", "integer", docs["ReplicationControllerStatus.readyReplicas"]),
      ageColumn,
      containersColumn,
      imagesColumn,
      column("Selector", "string", docs["ReplicationControllerSpec.selector"], 1)
    ],
    row: (o, now) => printReplicated(o, now, formatLabels(spec(o).selector))
  },
  "apps/replicasets": {
    columns: [
      nameColumn,
      column("Desired", "integer", docs["ReplicaSetSpec.replicas"]),
      column("Current", "integer", docs["ReplicaSetStatus.replicas"]),
      column("Ready", "integer", docs["ReplicaSetStatus.readyReplicas"]),
      ageColumn,
      containersColumn,
      imagesColumn,
      column("Selector", "string", docs["ReplicaSetSpec.selector"], 1)
    ],
    row: (o, now) => printReplicated(o, now, formatLabelSelector(spec(o).selector))
  },
  "apps/daemonsets": {
    columns: [
      nameColumn,
      column("Desired", "integer", docs["DaemonSetStatus.desiredNumberScheduled"]),
      column("Current", "integer", docs["DaemonSetStatus.currentNumberScheduled"]),
      column("Ready", "integer", docs["DaemonSetStatus.numberReady"]),
      column("Up-to-date", "integer", docs["DaemonSetStatus.updatedNumberScheduled"]),
      column("Available", "integer", docs["DaemonSetStatus.numberAvailable"]),
      column("Node Selector", "string", docs["PodSpec.nodeSelector"]),
      ageColumn,
      containersColumn,
      imagesColumn,
      column("Selector", "string", docs["DaemonSetSpec.selector"], 1)
    ],
    row: printDaemonSet
  },
  "batch/jobs": {
    columns: [
      nameColumn,
      column("Status", "string", "Status of the job."),
      column("Completions", "string", docs["JobStatus.succeeded"]),
      column("Duration", "string", "Time required to complete the job."),
      ageColumn,
      containersColumn,
      imagesColumn,
      column("Selector", "string", docs["JobSpec.selector"], 1)
    ],
    row: printJob
  },
  "batch/cronjobs": {
    columns: [
      nameColumn,
      column("Schedule", "string", docs["CronJobSpec.schedule"]),
      column("Timezone", "string", docs["CronJobSpec.timeZone"]),
      column("Suspend", "boolean", docs["CronJobSpec.suspend"]),
      column("Active", "integer", docs["CronJobStatus.active"]),
      column("Last Schedule", "string", docs["CronJobStatus.lastScheduleTime"]),
      ageColumn,
      containersColumn,
      imagesColumn,
      column("Selector", "string", docs["JobSpec.selector"], 1)
    ],
    row: printCronJob
  },
  "/services": {
    columns: [
      nameColumn,
      column("Type", "string", docs["ServiceSpec.type"]),
      column("Cluster-IP", "string", docs["ServiceSpec.clusterIP"]),
      column("External-IP", "string", docs["ServiceSpec.externalIPs"]),
      column("Port(s)", "string", docs["ServiceSpec.ports"]),
      ageColumn,
      column("Selector", "string", docs["ServiceSpec.selector"], 1)
    ],
    row: printService
  },
  "networking.k8s.io/ingresses": {
    columns: [
      nameColumn,
      column("Class", "string", "The name of the IngressClass resource that should be used for additional configuration"),
      column("Hosts", "string", "Hosts that incoming requests are matched against before the ingress rule"),
      column("Address", "string", "Address is a list containing ingress points for the load-balancer"),
      column("Ports", "string", "Ports of TLS configurations that open"),
      ageColumn
    ],
    row: printIngress
  },
  "networking.k8s.io/ingressclasses": {
    columns: [
      nameColumn,
      column("Controller", "string", "Controller that is responsible for handling this class"),
      column("Parameters", "string", "A reference to a resource with additional parameters"),
      ageColumn
    ],
    row: printIngressClass
  },
  "apps/statefulsets": {
    columns: [nameColumn, column("Ready", "string", "Number of the pod with ready state"), ageColumn, containersColumn, imagesColumn],
    row: printStatefulSet
  },
  "/endpoints": {
    columns: [nameColumn, column("Endpoints", "string", docs["Endpoints.subsets"]), ageColumn],
    row: simple(name, (o) => formatEndpoints(o.subsets), age)
  },
  "/nodes": {
    columns: [
      nameColumn,
      column("Status", "string", "The status of the node"),
      column("Roles", "string", "The roles of the node"),
      ageColumn,
      column("Version", "string", docs["NodeSystemInfo.kubeletVersion"]),
      column("Internal-IP", "string", docs["NodeStatus.addresses"], 1),
      column("External-IP", "string", docs["NodeStatus.addresses"], 1),
      column("OS-Image", "string", docs["NodeSystemInfo.osImage"], 1),
      column("Kernel-Version", "string", docs["NodeSystemInfo.kernelVersion"], 1),
      column("Container-Runtime", "string", docs["NodeSystemInfo.containerRuntimeVersion"], 1)
    ],
    row: printNode
  },
  "/events": { columns: eventColumns, row: printCoreEvent },
  "events.k8s.io/events": { columns: eventColumns, row: printEventsEvent },
  "/namespaces": {
    columns: [nameColumn, column("Status", "string", "The status of the namespace"), ageColumn],
    row: simple(name, (o) => str(status(o).phase), age)
  },
  "/secrets": {
    columns: [nameColumn, column("Type", "string", docs["Secret.type"]), column("Data", "string", docs["Secret.data"]), ageColumn],
    row: simple(name, (o) => str(o.type), (o) => size(o.data), age)
  },
  "/serviceaccounts": {
    // v1.35 prints no Secrets column (token Secrets are no longer made for service accounts)
    columns: [nameColumn, ageColumn],
    row: simple(name, age)
  },
  "/persistentvolumes": {
    columns: [
      nameColumn,
      column("Capacity", "string", docs["PersistentVolumeSpec.capacity"]),
      column("Access Modes", "string", docs["PersistentVolumeSpec.accessModes"]),
      column("Reclaim Policy", "string", docs["PersistentVolumeSpec.persistentVolumeReclaimPolicy"]),
      column("Status", "string", docs["PersistentVolumeStatus.phase"]),
      column("Claim", "string", docs["PersistentVolumeSpec.claimRef"]),
      column("StorageClass", "string", "StorageClass of the pv"),
      column("VolumeAttributesClass", "string", "VolumeAttributesClass of the pv"),
      column("Reason", "string", docs["PersistentVolumeStatus.reason"]),
      ageColumn,
      column("VolumeMode", "string", docs["PersistentVolumeSpec.volumeMode"], 1)
    ],
    row: printPersistentVolume
  },
  "/persistentvolumeclaims": {
    columns: [
      nameColumn,
      column("Status", "string", docs["PersistentVolumeClaimStatus.phase"]),
      column("Volume", "string", docs["PersistentVolumeClaimSpec.volumeName"]),
      column("Capacity", "string", docs["PersistentVolumeClaimStatus.capacity"]),
      column("Access Modes", "string", docs["PersistentVolumeClaimStatus.accessModes"]),
      column("StorageClass", "string", "StorageClass of the pvc"),
      column("VolumeAttributesClass", "string", "VolumeAttributesClass of the pvc"),
      ageColumn,
      column("VolumeMode", "string", docs["PersistentVolumeClaimSpec.volumeMode"], 1)
    ],
    row: printPersistentVolumeClaim
  },
  "/componentstatuses": {
    columns: [
      nameColumn,
      column("Status", "string", "Status of the component conditions"),
      column("Message", "string", "Message of the component conditions"),
      column("Error", "string", "Error of the component conditions")
    ],
    row: (o) => {
      const healthy = list(o.conditions).find((c) => c.type === "Healthy")
      return {
        cells: [
          nameOf(o),
          healthy === undefined ? "Unknown" : healthy.status === "True" ? "Healthy" : "Unhealthy",
          str(healthy?.message),
          str(healthy?.error)
        ]
      }
    }
  },
  "apps/deployments": {
    columns: [
      nameColumn,
      column("Ready", "string", "Number of the pod with ready state"),
      column("Up-to-date", "string", docs["DeploymentStatus.updatedReplicas"]),
      column("Available", "string", docs["DeploymentStatus.availableReplicas"]),
      ageColumn,
      containersColumn,
      imagesColumn,
      column("Selector", "string", docs["DeploymentSpec.selector"], 1)
    ],
    row: printDeployment
  },
  "autoscaling/horizontalpodautoscalers": {
    columns: [
      nameColumn,
      column("Reference", "string", docs["HorizontalPodAutoscalerSpec.scaleTargetRef"]),
      column("Targets", "string", docs["HorizontalPodAutoscalerSpec.metrics"]),
      column("MinPods", "string", docs["HorizontalPodAutoscalerSpec.minReplicas"]),
      column("MaxPods", "string", docs["HorizontalPodAutoscalerSpec.maxReplicas"]),
      column("Replicas", "string", docs["HorizontalPodAutoscalerStatus.currentReplicas"]),
      ageColumn
    ],
    row: printHpa
  },
  "/configmaps": {
    columns: [nameColumn, column("Data", "string", docs["ConfigMap.data"]), ageColumn],
    row: simple(name, (o) => size(o.data) + size(o.binaryData), age)
  },
  "networking.k8s.io/networkpolicies": {
    columns: [nameColumn, column("Pod-Selector", "string", docs["NetworkPolicySpec.podSelector"]), ageColumn],
    row: simple(name, (o) => formatLabelSelector(spec(o).podSelector ?? {}), age)
  },
  "rbac.authorization.k8s.io/rolebindings": {
    columns: bindingColumns("roleBinding", docs["RoleBinding.roleRef"]),
    row: printBinding
  },
  "rbac.authorization.k8s.io/clusterrolebindings": {
    columns: bindingColumns("clusterRoleBinding", docs["ClusterRoleBinding.roleRef"]),
    row: printBinding
  },
  "certificates.k8s.io/certificatesigningrequests": {
    columns: [
      nameColumn,
      ageColumn,
      column("SignerName", "string", docs["CertificateSigningRequestSpec.signerName"]),
      column("Requestor", "string", docs["CertificateSigningRequestSpec.request"]),
      column("RequestedDuration", "string", docs["CertificateSigningRequestSpec.expirationSeconds"]),
      column("Condition", "string", docs["CertificateSigningRequestStatus.conditions"])
    ],
    row: printCsr
  },
  "coordination.k8s.io/leases": {
    columns: [nameColumn, column("Holder", "string", docs["LeaseSpec.holderIdentity"]), ageColumn],
    row: simple(name, (o) => str(spec(o).holderIdentity), age)
  },
  "storage.k8s.io/storageclasses": {
    columns: [
      nameColumn,
      column("Provisioner", "string", docs["StorageClass.provisioner"]),
      column("ReclaimPolicy", "string", docs["StorageClass.reclaimPolicy"]),
      column("VolumeBindingMode", "string", docs["StorageClass.volumeBindingMode"]),
      column("AllowVolumeExpansion", "string", docs["StorageClass.allowVolumeExpansion"]),
      ageColumn
    ],
    row: printStorageClass
  },
  "apps/controllerrevisions": {
    columns: [
      nameColumn,
      column("Controller", "string", "Controller of the object"),
      column("Revision", "string", docs["ControllerRevision.revision"]),
      ageColumn
    ],
    row: printControllerRevision
  },
  "/resourcequotas": {
    columns: [
      nameColumn,
      column("Request", "string", "Request represents a minimum amount of cpu/memory that a container may consume."),
      column(
        "Limit",
        "string",
        "Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node."
      ),
      ageColumn
    ],
    row: (o, now) => ({ cells: [nameOf(o), ...quotaColumns(o), ageOf(o, now)] })
  },
  "scheduling.k8s.io/priorityclasses": {
    columns: [
      nameColumn,
      column("Value", "integer", docs["PriorityClass.value"]),
      column("Global-Default", "boolean", docs["PriorityClass.globalDefault"]),
      ageColumn,
      column("PreemptionPolicy", "string", docs["PriorityClass.preemptionPolicy"])
    ],
    row: simple(name, (o) => int(o.value), (o) => o.globalDefault === true, age, (o) => str(o.preemptionPolicy))
  },
  "node.k8s.io/runtimeclasses": {
    // the printer names ObjectMeta's "handler", which has no description
    columns: [nameColumn, column("Handler", "string", ""), ageColumn],
    row: simple(name, (o) => str(o.handler), age)
  },
  "storage.k8s.io/volumeattachments": {
    columns: [
      nameColumn,
      column("Attacher", "string", docs["VolumeAttachmentSpec.attacher"], 0, "name"),
      column("PV", "string", docs["VolumeAttachmentSource.persistentVolumeName"]),
      column("Node", "string", docs["VolumeAttachmentSpec.nodeName"]),
      column("Attached", "boolean", docs["VolumeAttachmentStatus.attached"]),
      ageColumn
    ],
    row: simple(
      name,
      (o) => str(spec(o).attacher),
      (o) => str(obj(spec(o).source).persistentVolumeName),
      (o) => str(spec(o).nodeName),
      (o) => status(o).attached === true,
      age
    )
  },
  "discovery.k8s.io/endpointslices": {
    columns: [
      nameColumn,
      column("AddressType", "string", docs["EndpointSlice.addressType"]),
      column("Ports", "string", docs["EndpointSlice.ports"]),
      column("Endpoints", "string", docs["EndpointSlice.endpoints"]),
      ageColumn
    ],
    row: printEndpointSlice
  },
  "storage.k8s.io/csinodes": {
    columns: [nameColumn, column("Drivers", "integer", "Drivers indicates the number of CSI drivers registered on the node"), ageColumn],
    row: simple(name, (o) => size(spec(o).drivers), age)
  },
  "storage.k8s.io/csidrivers": {
    columns: [
      nameColumn,
      column("AttachRequired", "boolean", docs["CSIDriverSpec.attachRequired"]),
      column("PodInfoOnMount", "boolean", docs["CSIDriverSpec.podInfoOnMount"]),
      column("StorageCapacity", "boolean", docs["CSIDriverSpec.storageCapacity"]),
      column("TokenRequests", "string", docs["CSIDriverSpec.tokenRequests"]),
      column("RequiresRepublish", "boolean", docs["CSIDriverSpec.requiresRepublish"]),
      column("Modes", "string", docs["CSIDriverSpec.volumeLifecycleModes"]),
      ageColumn
    ],
    row: simple(
      name,
      (o) => spec(o).attachRequired !== false,
      (o) => spec(o).podInfoOnMount === true,
      (o) => spec(o).storageCapacity === true,
      (o) => (Array.isArray(spec(o).tokenRequests) ? list(spec(o).tokenRequests).map((t) => str(t.audience)).join(",") : "<unset>"),
      (o) => spec(o).requiresRepublish === true,
      (o) => (Array.isArray(spec(o).volumeLifecycleModes) ? spec(o).volumeLifecycleModes as Array<unknown> : []).join(",") || "<none>",
      age
    )
  },
  "admissionregistration.k8s.io/mutatingwebhookconfigurations": webhookPrinter(
    "Webhooks indicates the number of webhooks registered in this configuration"
  ),
  "admissionregistration.k8s.io/validatingwebhookconfigurations": webhookPrinter(
    "Webhooks indicates the number of webhooks registered in this configuration"
  ),
  "admissionregistration.k8s.io/validatingadmissionpolicies": policyPrinter(
    "validations",
    "Validations",
    "Validations indicates the number of validation rules defined in this configuration"
  ),
  "admissionregistration.k8s.io/mutatingadmissionpolicies": policyPrinter(
    "mutations",
    "Mutations",
    "Mutation indicates the number of mutations rules defined in this configuration"
  ),
  "admissionregistration.k8s.io/validatingadmissionpolicybindings": policyBindingPrinter,
  "admissionregistration.k8s.io/mutatingadmissionpolicybindings": policyBindingPrinter
}

/** The columns of the default table convertor (kinds without a printer). @internal */
export const defaultPrinter: Printer = {
  columns: [nameColumn, column("Created At", "date", docs["ObjectMeta.creationTimestamp"])],
  row: (o) => {
    const t = timeOf(meta(o).creationTimestamp)
    // Go's zero time, formatted as RFC 3339, when there is none
    return { cells: [nameOf(o), t === undefined ? "0001-01-01T00:00:00Z" : new Date(t).toISOString().replace(/\.\d{3}Z$/, "Z")] }
  }
}

/** The Name column every Table starts with. @internal */
export const nameColumnDefinition: Column = nameColumn

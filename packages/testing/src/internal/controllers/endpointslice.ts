/**
 * The EndpointSlice controller: a Service with a selector gets an EndpointSlice (owned by
 * it, labelled `kubernetes.io/service-name`) listing the pods it selects that have an IP,
 * with their ready / serving / terminating conditions, and the Service's ports resolved
 * against the pods' (a named `targetPort` by the container port's name).
 *
 * @internal
 */
import { isObject, type JsonObject } from "../store/json.js"
import type { FakeState } from "../store/state.js"
import type { Entry } from "../store/store.js"
import {
  builtinKind,
  controllerRef,
  createObject,
  editObject,
  entriesOf,
  entryOf,
  isDeleting,
  isSeed,
  labelsOf,
  metadataOf
} from "./api.js"
import { isFinished, isReady, podKind } from "./pods.js"
import { keyFor, splitKey, WorkQueue } from "./queue.js"

const managedBy = "endpointslice-controller.k8s.io"

/** A Service's selector: a plain map, every key to match. */
const selects = (selector: unknown, labels: JsonObject): boolean =>
  isObject(selector) && Object.keys(selector).length > 0 &&
  Object.entries(selector).every(([k, v]) => labels[k] === v)

const podIPOf = (pod: JsonObject): string | undefined => {
  const ip = isObject(pod.status) ? pod.status.podIP : undefined
  return typeof ip === "string" && ip !== "" ? ip : undefined
}

/** A named `targetPort` resolved against a pod's container ports. */
const resolvePort = (target: unknown, port: number, pods: ReadonlyArray<Entry>): number | undefined => {
  if (target === undefined) return port
  if (typeof target === "number") return target
  if (typeof target === "string" && /^\d+$/.test(target)) return Number(target)
  for (const pod of pods) {
    const containers = (pod.obj.spec as JsonObject | undefined)?.containers
    for (const c of Array.isArray(containers) ? containers : []) {
      const ports = isObject(c) && Array.isArray(c.ports) ? c.ports : []
      const found = ports.find((p) => isObject(p) && p.name === target)
      if (isObject(found) && typeof found.containerPort === "number") return found.containerPort
    }
  }
  return undefined
}

/** @internal */
export const installEndpointSlices = (state: FakeState): void => {
  const svcKind = builtinKind(state, "", "v1", "services")
  const sliceKind = builtinKind(state, "discovery.k8s.io", "v1", "endpointslices")
  const queue = new WorkQueue(state, (key) => {
    const { name, namespace } = splitKey(key)
    const svc = entryOf(state, svcKind, namespace, name)
    if (svc === undefined || isDeleting(svc)) return
    const spec = isObject(svc.obj.spec) ? svc.obj.spec : {}
    if (!isObject(spec.selector) || Object.keys(spec.selector).length === 0 || spec.type === "ExternalName") return
    const pods = entriesOf(state, podKind(state), namespace).filter((p) =>
      selects(spec.selector, labelsOf(p.obj)) && podIPOf(p.obj) !== undefined && !isFinished(p.obj)
    )
    const endpoints = pods.map((pod) => {
      const ready = isReady(pod.obj)
      const terminating = isDeleting(pod)
      const nodeName = (pod.obj.spec as JsonObject | undefined)?.nodeName
      return {
        addresses: [podIPOf(pod.obj)],
        conditions: { ready: ready && !terminating, serving: ready, terminating },
        ...(typeof nodeName === "string" ? { nodeName } : {}),
        targetRef: { kind: "Pod", namespace, name: pod.name, uid: pod.uid }
      }
    })
    const ports = (Array.isArray(spec.ports) ? spec.ports : []).filter(isObject).flatMap((p) => {
      const port = resolvePort(p.targetPort, typeof p.port === "number" ? p.port : 0, pods)
      if (port === undefined) return []
      return [{
        name: typeof p.name === "string" ? p.name : "",
        port,
        protocol: typeof p.protocol === "string" ? p.protocol : "TCP",
        ...(typeof p.appProtocol === "string" ? { appProtocol: p.appProtocol } : {})
      }]
    })
    const body: JsonObject = { addressType: "IPv4", endpoints: endpoints.length > 0 ? endpoints : null, ports }
    const labels = {
      ...labelsOf(svc.obj),
      "endpointslice.kubernetes.io/managed-by": managedBy,
      "kubernetes.io/service-name": name
    }
    const existing = entriesOf(state, sliceKind, namespace).find((s) =>
      labelsOf(s.obj)["kubernetes.io/service-name"] === name &&
      labelsOf(s.obj)["endpointslice.kubernetes.io/managed-by"] === managedBy
    )
    const at = state.now()
    if (existing === undefined) {
      createObject(state, sliceKind, {
        apiVersion: "discovery.k8s.io/v1",
        kind: "EndpointSlice",
        metadata: {
          generateName: `${name}-`,
          namespace,
          labels,
          annotations: { "endpoints.kubernetes.io/last-change-trigger-time": at },
          ownerReferences: [controllerRef(svc)]
        },
        ...body
      })
      return
    }
    const was = { addressType: existing.obj.addressType, endpoints: existing.obj.endpoints, ports: existing.obj.ports }
    const same = JSON.stringify(was) === JSON.stringify(body) &&
      JSON.stringify(labelsOf(existing.obj)) === JSON.stringify(labels)
    if (same) return
    editObject(state, sliceKind, existing, (draft) => {
      const meta = metadataOf(draft)
      meta.labels = labels
      meta.annotations = {
        ...(isObject(meta.annotations) ? meta.annotations : {}),
        "endpoints.kubernetes.io/last-change-trigger-time": at
      }
      Object.assign(draft, body)
    })
  })
  state.onWrite((kind, entry, prev) => {
    if (isSeed(entry, prev)) return
    if (kind.group === "" && kind.plural === "services") queue.add(keyFor(entry.namespace, entry.name))
    else if (kind.group === "" && kind.plural === "pods") {
      for (const svc of entriesOf(state, svcKind, entry.namespace)) {
        const selector = (svc.obj.spec as JsonObject | undefined)?.selector
        if (selects(selector, labelsOf(entry.obj)) || (prev !== undefined && selects(selector, labelsOf(prev.obj)))) {
          queue.add(keyFor(svc.namespace, svc.name))
        }
      }
    }
  })
  state.onRemove((kind, removed) => {
    if (kind.group !== "" || kind.plural !== "pods") return
    for (const svc of entriesOf(state, svcKind, removed.namespace)) {
      if (selects((svc.obj.spec as JsonObject | undefined)?.selector, labelsOf(removed.obj))) {
        queue.add(keyFor(svc.namespace, svc.name))
      }
    }
  })
}

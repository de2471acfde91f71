/**
 * The controls tests use (see `Control`): seeding and inspecting objects, server-side
 * changes, the request log, pods, jobs and logs, injected faults and watch faults.
 * Each is a thin entry into the concern that does the work.
 *
 * @internal
 */
import * as Authz from "../authz/index.js"
import * as ExploreHooks from "../explore/hooks.js"
import { removeNamespaceContents } from "../writes/deletes.js"
import { clone, drop, isObject, type JsonObject, randomSuffix } from "../store/json.js"
import { customKind, type KindInfo, splitApiVersion } from "../store/kinds.js"
import * as Simulation from "../kubelet/simulation.js"
import { type FakeState, objectIn, toStored } from "../store/state.js"
import * as Status from "./statusBodies.js"
import { type Entry, keyOf } from "../store/store.js"
import { appendLog } from "../writes/subresources.js"
import type { Control, FakeObject } from "../types.js"
import { updateObject } from "../writes/writes.js"

/** A copy of a stored object, as `kind` in the version of `apiVersion` shows it. */
const snapshot = (entry: Entry, kind: KindInfo, apiVersion: string): FakeObject => {
  const converted = objectIn(entry.obj, kind, splitApiVersion(apiVersion).version)
  return (converted === entry.obj ? JSON.parse(entry.json) : clone(converted)) as FakeObject
}

/** @internal */
export const make = (state: FakeState): Control => {
  /** A control's change, with the controllers' reactions to it done before it returns. */
  const settled = <A>(change: () => A): A => {
    const result = change()
    state.settle()
    return result
  }
  const control: Control = {
    seed: (objects) => settled(() => {
      const out: Array<FakeObject> = []
      for (const raw of objects) {
        if (!isObject(raw) || typeof raw.apiVersion !== "string" || typeof raw.kind !== "string") {
          throw new Error("seed: every object needs apiVersion and kind")
        }
        const kind = state.kindFor(raw.apiVersion, raw.kind)
        // a shallow copy: only metadata is changed, and the object is not kept parsed
        const metadata: JsonObject = isObject(raw.metadata) ? { ...raw.metadata } : {}
        const sent: JsonObject = { ...raw, metadata }
        const obj = toStored(kind, sent)
        const given = typeof metadata.namespace === "string" && metadata.namespace !== ""
          ? metadata.namespace
          : undefined
        const namespace = kind.namespaced ? given ?? state.defaultNamespace : ""
        const collection = state.collectionOf(kind)
        if (typeof metadata.name !== "string" || metadata.name === "") {
          if (typeof metadata.generateName !== "string") throw new Error(`seed: a ${kind.kind} needs metadata.name`)
          let name = `${metadata.generateName}${randomSuffix()}`
          while (collection.entries.has(keyOf(namespace, name))) name = `${metadata.generateName}${randomSuffix()}`
          metadata.name = name
        }
        const name = metadata.name as string
        if (kind.namespaced) {
          metadata.namespace = namespace
          state.createNamespace(namespace)
        } else drop(metadata, "namespace")
        const prev = collection.entries.get(keyOf(namespace, name))
        metadata.uid ??= prev?.uid ?? crypto.randomUUID()
        metadata.creationTimestamp ??= prev?.creationTimestamp ?? state.now()
        metadata.generation ??= 1
        drop(metadata, "managedFields")
        const entry = state.store.write(collection, namespace, name, (rv) => {
          metadata.resourceVersion = String(rv)
          return { obj, managers: [], cache: false }
        })
        state.afterWrite(collection.kind, entry, prev ?? entry)
        // the stored object itself is not kept parsed, so handing it back is safe
        out.push(sent as unknown as FakeObject)
      }
      return out
    }),
    get: (ref) => {
      const { entry, kind } = state.refEntry(ref)
      return entry === undefined ? undefined : snapshot(entry, kind, ref.apiVersion)
    },
    list: (apiVersion, kindOrPlural, namespace) => {
      const kind = state.kindFor(apiVersion, kindOrPlural)
      const collection = state.collectionOf(kind)
      const keys = collection.keys()
      const { end, start } = collection.range(kind.namespaced ? namespace : undefined, undefined)
      const out: Array<FakeObject> = []
      for (let i = start; i < end; i++) out.push(snapshot(collection.entries.get(keys[i]!)!, kind, apiVersion))
      return out
    },
    update: (ref, change) => settled(() => updateObject(state, ref, change)),
    remove: (ref) =>
      settled(() => {
        const { entry, kind } = state.refEntry(ref)
        if (entry === undefined) return false
        if (kind.group === "" && kind.kind === "Namespace") removeNamespaceContents(state, entry.name)
        state.removeEntry(kind, entry)
        return true
      }),
    registerResource: (resource) => state.registry.add(customKind(resource)),
    resourceVersion: () => String(state.store.resourceVersion),
    requests: () => state.requestLog.slice(),
    accessLog: () => Authz.accessLog(state),
    mutations: () => state.mutationCount,
    auditAnnotations: () => state.audit.slice(),
    reset: () => {
      state.requestLog = []
      state.mutationCount = 0
      state.audit.length = 0
      state.faults.clear()
      Authz.clearAccessLog(state)
    },
    setToken: (token) => {
      state.token = token
    },
    setPodPhase: (namespace, name, phase, options) =>
      settled(() => Simulation.setPodPhase(state, namespace, name, phase, options)),
    completeJob: (namespace, name) => settled(() => Simulation.completeJob(state, namespace, name)),
    failJob: (namespace, name, options) => settled(() => Simulation.failJob(state, namespace, name, options)),
    appendLog: (namespace, pod, text, options) => appendLog(state, namespace, pod, text, options),
    endContainer: (namespace, pod, options) => settled(() => Simulation.endContainer(state, namespace, pod, options)),
    failNext: (options) => state.faults.failNext(options),
    resetNext: (options) => state.faults.resetNext(options),
    delayNext: (options) => state.faults.delayNext(options),
    stallNext: (options) => state.faults.stallNext(options),
    warnNext: (options) => state.faults.warnNext(options),
    clearFaults: () => {
      state.faults.clear()
      state.hub.dropAfter = undefined
    },
    dropWatchesAfter: (events) => {
      state.hub.dropAfter = events
      if (events !== undefined) {
        // watches already past the limit end now
        for (const w of [...state.hub.open]) w.checkDrop()
      }
    },
    expireWatches: () => {
      const rv = state.store.resourceVersion
      for (const w of [...state.hub.open]) w.error(Status.expired(`too old resource version: ${rv} (${rv + 1})`))
    },
    compact: () => state.store.compact(),
    bookmark: () => state.sendBookmarks(),
    openWatches: () => state.hub.open.size,
    openLogStreams: () => state.logStreams.size
  }
  // under a symbol, so that copies of the controls (the layer's service) carry it and `Control` stays as it is
  return Object.assign(control, { [ExploreHooks.HooksId]: ExploreHooks.make(state) })
}

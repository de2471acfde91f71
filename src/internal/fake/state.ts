/**
 * What the handlers of one fake cluster share: the kinds it serves, the object store,
 * open watches and log streams, the request log, pending faults and timers, and the
 * few primitives every concern uses (finding an object, its JSON in a requested
 * version, removing it, scheduling work).
 *
 * Concerns that react to changes (CRDs registering their kinds, simulated pods and
 * jobs, pod logs) subscribe with `onWrite` / `onRemove`, so that the modules which
 * write and delete need not know them.
 *
 * @internal
 */
import { Faults } from "./faults.js"
import { type JsonObject, now } from "./json.js"
import { apiVersionOf, builtinKinds, type KindInfo, Registry, splitApiVersion } from "./kinds.js"
import type { ContainerLog, LogFollower } from "./logs.js"
import * as Status from "./status.js"
import { type Collection, type Entry, keyOf, Store } from "./store.js"
import type { AuditAnnotation, ObjectRef, Options, RequestRecord } from "./types.js"
import type { WatchHub } from "./watch.js"

/** A resource path taken apart. @internal */
export interface Route {
  readonly kind: KindInfo
  readonly version: string
  readonly namespace: string | undefined
  readonly name: string | undefined
  readonly subresource: string | undefined
  readonly watchPath: boolean
}

/** The `apiVersion` a route addresses. @internal */
export const routeApiVersion = (route: Route): string => apiVersionOf(route.kind.group, route.version)

/** @internal */
export const hasFinalizers = (obj: JsonObject): boolean => {
  const finalizers = (obj.metadata as JsonObject | undefined)?.finalizers
  return Array.isArray(finalizers) && finalizers.length > 0
}

/** How simulated pods progress, with the defaults filled in. @internal */
export interface Simulation {
  readonly podStartMs: number
  readonly podRunMs: number
  readonly completePods: boolean
}

/** Called after an object was stored (`prev` undefined when it is new). @internal */
export type WriteHook = (kind: KindInfo, entry: Entry, prev: Entry | undefined) => void

/** Called after an object was removed, with its last stored version. @internal */
export type RemoveHook = (kind: KindInfo, removed: Entry) => void

/** A write about to be stored, as admission sees it. @internal */
export interface AdmissionRequest {
  readonly route: Route
  readonly operation: "CREATE" | "UPDATE"
  /** The object as it will be stored, server-owned fields filled in. */
  readonly object: JsonObject
  readonly oldObject: JsonObject | undefined
  readonly dryRun: boolean
}

/**
 * Checks a write before it is stored (validation rules, admission policies): throws a StatusError to refuse
 * it, or answers the warnings to send with it. @internal
 */
export type AdmitHook = (request: AdmissionRequest) => ReadonlyArray<string>

/** @internal */
export class FakeState {
  readonly registry = new Registry(builtinKinds)
  readonly store: Store
  readonly hub: WatchHub
  readonly defaultNamespace: string
  token: string | undefined
  /** pod uid -> container name -> log. */
  readonly logs = new Map<string, Map<string, ContainerLog>>()
  readonly logStreams = new Set<LogFollower>()
  requestLog: Array<RequestRecord> = []
  /** What admission policies recorded for the audit log. */
  readonly audit: Array<AuditAnnotation> = []
  readonly maxRequestLog: number
  mutationCount = 0
  readonly faults = new Faults()
  readonly timers = new Set<ReturnType<typeof setTimeout>>()
  readonly simulate: Simulation | undefined
  podIps = 0
  closed = false
  private readonly writeHooks: Array<WriteHook> = []
  private readonly removeHooks: Array<RemoveHook> = []
  private readonly admitHooks: Array<AdmitHook> = []

  constructor(readonly options: Options) {
    this.store = new Store(options.compactionWindow ?? 1000)
    this.hub = { store: this.store, open: new Set(), dropAfter: undefined }
    this.defaultNamespace = options.namespace ?? "default"
    this.token = options.token
    this.maxRequestLog = options.maxRequestLog ?? 100_000
    const sim = options.simulate
    this.simulate = sim === undefined || sim === false
      ? undefined
      : {
        podStartMs: (sim === true ? undefined : sim.podStartMs) ?? 50,
        podRunMs: (sim === true ? undefined : sim.podRunMs) ?? 150,
        completePods: (sim === true ? undefined : sim.completePods) ?? true
      }
  }

  onWrite(hook: WriteHook): void {
    this.writeHooks.push(hook)
  }

  onRemove(hook: RemoveHook): void {
    this.removeHooks.push(hook)
  }

  onAdmit(hook: AdmitHook): void {
    this.admitHooks.push(hook)
  }

  /** Runs the admission checks of a write: throws to refuse it, answers the warnings of all. */
  admit(request: AdmissionRequest): ReadonlyArray<string> {
    if (this.admitHooks.length === 0) return []
    return this.admitHooks.flatMap((hook) => hook(request))
  }

  /** Tells the subscribers that an object was stored (`prev` undefined when it is new). */
  afterWrite(kind: KindInfo, entry: Entry, prev: Entry | undefined): void {
    for (const hook of this.writeHooks) hook(kind, entry, prev)
  }

  /** Removes an object now (finalizers are the caller's business) and tells the subscribers. */
  removeEntry(kind: KindInfo, entry: Entry, finalize?: (obj: JsonObject) => JsonObject): Entry {
    const collection = this.collectionOf(kind)
    const current = collection.entries.get(entry.key)
    if (current === undefined) return entry
    const gone = this.store.remove(collection, current, finalize)
    for (const hook of this.removeHooks) hook(kind, current)
    return gone
  }

  record(entry: RequestRecord): void {
    if (this.requestLog.length >= this.maxRequestLog) this.requestLog.shift()
    this.requestLog.push(entry)
  }

  collectionOf(kind: KindInfo): Collection {
    return this.store.collection(kind)
  }

  entryOf(route: Route): Entry {
    const entry = this.collectionOf(route.kind).entries.get(keyOf(route.namespace ?? "", route.name!))
    if (entry === undefined) throw Status.notFound(route.kind, route.name!)
    return entry
  }

  /** An object's JSON in the version the request asked for. */
  jsonIn(entry: Entry, version: string): string {
    const kind = entry.obj.kind
    const apiVersion = apiVersionOf(splitApiVersion(entry.obj.apiVersion as string).group, version)
    if (entry.obj.apiVersion === apiVersion) return entry.json
    return JSON.stringify({ ...entry.obj, apiVersion, kind })
  }

  later(ms: number, f: () => void): void {
    if (this.closed) return
    const t = setTimeout(() => {
      this.timers.delete(t)
      if (!this.closed) f()
    }, ms)
    this.timers.add(t)
  }

  ensureNamespace(name: string): void {
    const kind = this.registry.byResource("", "v1", "namespaces")!
    const collection = this.collectionOf(kind)
    if (collection.entries.has(keyOf("", name))) return
    this.store.write(collection, "", name, (rv) => ({
      obj: {
        apiVersion: "v1",
        kind: "Namespace",
        metadata: {
          name,
          uid: crypto.randomUUID(),
          resourceVersion: String(rv),
          creationTimestamp: now(),
          labels: { "kubernetes.io/metadata.name": name }
        },
        spec: { finalizers: ["kubernetes"] },
        status: { phase: "Active" }
      },
      managers: []
    }))
  }

  kindFor(apiVersion: string, kindOrPlural: string): KindInfo {
    const kind = this.registry.lookup(apiVersion, kindOrPlural)
    if (kind === undefined) throw new Error(`the fake cluster does not serve ${kindOrPlural} in ${apiVersion}`)
    return kind
  }

  refEntry(
    ref: ObjectRef
  ): { readonly kind: KindInfo; readonly entry: Entry | undefined; readonly namespace: string } {
    const kind = this.kindFor(ref.apiVersion, ref.kind)
    const namespace = kind.namespaced ? ref.namespace ?? this.defaultNamespace : ""
    return { kind, namespace, entry: this.collectionOf(kind).entries.get(keyOf(namespace, ref.name)) }
  }

  sendBookmarks(): void {
    const rv = this.store.resourceVersion
    for (const w of this.hub.open) w.bookmark(rv)
  }
}

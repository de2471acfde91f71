/**
 * What the handlers of one fake cluster share: the kinds it serves, the object store,
 * open watches and log streams, the request log, pending faults and timers, and the
 * few primitives every concern uses (finding an object, its JSON in a requested
 * version, removing it, the clock, work to do later).
 *
 * Concerns that react to changes (CRDs registering their kinds, the controllers and the
 * kubelet, pod logs) subscribe with `onWrite` / `onRemove`, so that the modules which
 * write and delete need not know them. What they do about a change they `defer`: it
 * runs once the write that caused it is done (in a microtask, so before the client
 * sees the answer; or when a control returns), never inside it.
 *
 * @internal
 */
import type { Requester } from "../authz/requester.js"
import { type FakeClock, realClock, rfc3339 } from "./clock.js"
import { inGroup } from "./conversion.js"
import { Faults } from "../serve/faults.js"
import type { JsonObject } from "./json.js"
import { apiVersionOf, builtinKinds, type KindInfo, Registry, splitApiVersion } from "./kinds.js"
import type { ContainerLog, LogFollower } from "../kubelet/logs.js"
import * as Status from "../serve/statusBodies.js"
import { type Collection, Entry, keyOf, Store } from "./store.js"
import type { AuditAnnotation, ObjectRef, Options, RequestRecord } from "../types.js"
import type { ActiveWatch, WatchHub } from "../reads/watch.js"

/** A resource path taken apart. @internal */
export interface Route {
  readonly kind: KindInfo
  readonly version: string
  readonly namespace: string | undefined
  readonly name: string | undefined
  readonly subresource: string | undefined
  readonly watchPath: boolean
  /** Who sent the request and what it asked, for admission checks that depend on it (RBAC writes). */
  readonly requester?: Requester | undefined
}

/** The `apiVersion` a route addresses. @internal */
export const routeApiVersion = (route: Route): string => apiVersionOf(route.kind.group, route.version)

/**
 * A stored object as `kind` in `version` shows it: itself when it is in that version already,
 * converted when the kind is stored as another, else with that apiVersion (the versions of one
 * kind differ in their schema only).
 *
 * @internal
 */
export const objectIn = (obj: JsonObject, kind: KindInfo, version: string): JsonObject => {
  const group = kind.storedAs !== undefined ? kind.group : splitApiVersion(obj.apiVersion as string).group
  const apiVersion = apiVersionOf(group, version)
  if (obj.apiVersion === apiVersion) return obj
  if (kind.storedAs !== undefined && !inGroup(obj, group)) return kind.storedAs.fromStorage(obj, apiVersion)
  return { ...obj, apiVersion, kind: obj.kind }
}

/** An object written through `kind` as it is stored (converted when the kind is stored as another). @internal */
export const toStored = (kind: KindInfo, obj: JsonObject): JsonObject =>
  kind.storedAs !== undefined && inGroup(obj, kind.group) ? kind.storedAs.toStorage(obj) : obj

/**
 * Whether something still holds an object marked for deletion: `metadata.finalizers`, and
 * for a namespace also `spec.finalizers` (the namespace controller's `kubernetes`).
 *
 * @internal
 */
export const hasFinalizers = (obj: JsonObject): boolean => {
  const finalizers = (obj.metadata as JsonObject | undefined)?.finalizers
  if (Array.isArray(finalizers) && finalizers.length > 0) return true
  if (obj.kind !== "Namespace" || obj.apiVersion !== "v1") return false
  const spec = (obj.spec as JsonObject | undefined)?.finalizers
  return Array.isArray(spec) && spec.length > 0
}

/** Called after an object was stored (`prev` undefined when it is new). @internal */
export type WriteHook = (kind: KindInfo, entry: Entry, prev: Entry | undefined) => void

/** Called after an object was removed, with its last stored version. @internal */
export type RemoveHook = (kind: KindInfo, removed: Entry) => void

/** A set that tells when something is added: the open watches, to arm the bookmark timer. */
class WatchSet<A> extends Set<A> {
  constructor(private readonly added: (a: A) => void) {
    super()
  }

  override add(a: A): this {
    super.add(a)
    this.added(a)
    return this
  }
}

/** How many deferred tasks one settling may run before the fake calls it a loop between controllers. */
const settleLimit = 1_000_000

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
  /** Looked up on every namespaced write; a built-in kind is registered once, for the life of the fake. */
  private readonly namespacesKind = this.registry.byResource("", "v1", "namespaces")!
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
  readonly faults: Faults
  /** The cancels of the timers waiting on the clock. */
  private readonly timers = new Set<() => void>()
  podIps = 0
  closed = false
  private readonly writeHooks: Array<WriteHook> = []
  private readonly removeHooks: Array<RemoveHook> = []
  private deferred: Array<() => void> = []
  private settling = false
  private settleQueued = false
  private readonly bookmarkIntervalMs: number
  private bookmarksArmed = false
  private readonly admitHooks: Array<AdmitHook> = []

  constructor(readonly options: Options, readonly clock: FakeClock = realClock) {
    this.faults = new Faults(clock.stepped === true)
    this.store = new Store(options.compactionWindow ?? 1000)
    const open = new WatchSet<ActiveWatch>((w) => {
      if (w.bookmarks) this.armBookmarks()
    })
    const later = (ms: number, f: () => void) => this.later(ms, f)
    const hub = { store: this.store, open, dropAfter: undefined, later }
    this.hub = hub
    this.defaultNamespace = options.namespace ?? "default"
    this.token = options.token
    this.maxRequestLog = options.maxRequestLog ?? 100_000
    this.bookmarkIntervalMs = options.bookmarkIntervalMs ?? 60_000
    const namespaces = new Set(["default", "kube-system", "kube-public", "kube-node-lease", this.defaultNamespace])
    for (const ns of options.namespaces ?? []) namespaces.add(ns)
    for (const ns of namespaces) this.createNamespace(ns)
  }

  /** The fake's time as the API server writes timestamps (RFC 3339, whole seconds, UTC). */
  now(): string {
    return rfc3339(this.clock.now())
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

  /**
   * Work a change calls for (a controller's reconcile), run after the current write:
   * in a microtask, or by `settle`. Tasks deferred while settling run in the same settling.
   */
  defer(task: () => void): void {
    if (this.closed) return
    this.deferred.push(task)
    if (this.settling || this.settleQueued) return
    this.settleQueued = true
    queueMicrotask(() => this.settle())
  }

  /** Runs the deferred work until there is none left (the controllers have caught up). */
  settle(): void {
    this.settleQueued = false
    if (this.settling) return
    this.settling = true
    try {
      let ran = 0
      while (this.deferred.length > 0 && !this.closed) {
        const tasks = this.deferred
        this.deferred = []
        for (const task of tasks) {
          try {
            task()
          } catch (e) {
            // the work of a controller has no caller to fail: it is the fake's own bug, told loudly
            console.error("effect-kube FakeCluster: a controller failed", e)
          }
        }
        ran += tasks.length
        if (ran > settleLimit) throw new Error("the fake cluster's controllers do not settle (a loop between them?)")
      }
    } finally {
      this.settling = false
    }
  }

  /**
   * Runs `f` once `ms` have passed on the fake's clock (at once, as deferred work, when
   * `ms` is 0 or less); the returned function cancels it. The controllers' work that `f`
   * calls for is settled before the timer is done.
   */
  later(ms: number, f: () => void): () => void {
    if (this.closed) return () => {}
    if (!(ms > 0)) {
      let cancelled = false
      this.defer(() => {
        if (!cancelled) f()
      })
      return () => {
        cancelled = true
      }
    }
    if (ms === Infinity) return () => {}
    const cancel = this.clock.after(ms, () => {
      this.timers.delete(cancel)
      if (this.closed) return
      try {
        f()
        this.settle()
      } catch (e) {
        // a timer has no caller to tell: the failure is the fake's own bug
        console.error("effect-kube FakeCluster: a timer failed", e)
      }
    })
    this.timers.add(cancel)
    return () => {
      this.timers.delete(cancel)
      cancel()
    }
  }

  /** Sends bookmarks every interval while a watch that allows them is open. */
  private armBookmarks(): void {
    if (this.bookmarksArmed || this.bookmarkIntervalMs <= 0) return
    this.bookmarksArmed = true
    const tick = () => {
      let wanted = false
      for (const w of this.hub.open) {
        if (w.bookmarks) wanted = true
      }
      if (!wanted) {
        this.bookmarksArmed = false
        return
      }
      this.sendBookmarks()
      this.later(this.bookmarkIntervalMs, tick)
    }
    this.later(this.bookmarkIntervalMs, tick)
  }

  /** Stops the timers and deferred work, and ends every open watch and log stream. */
  close(): void {
    if (this.closed) return
    this.closed = true
    for (const cancel of [...this.timers]) cancel()
    this.timers.clear()
    this.deferred = []
    for (const w of [...this.hub.open]) w.end()
    for (const f of [...this.logStreams]) f.finish()
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

  /** An object's JSON in the kind and version the request asked for. */
  jsonIn(entry: Entry, kind: KindInfo, version: string): string {
    const obj = entry.obj
    const converted = objectIn(obj, kind, version)
    return converted === obj ? entry.json : JSON.stringify(converted)
  }

  /**
   * A stored version of an object as a write through `route` sees it (converted when its kind is
   * stored as another): not stored, the same resourceVersion, uid and managers.
   */
  entryIn(route: Route, entry: Entry): Entry {
    const storedAs = route.kind.storedAs
    if (storedAs === undefined || inGroup(entry.obj, route.kind.group)) return entry
    const obj = storedAs.fromStorage(entry.obj, routeApiVersion(route))
    return Entry.of(obj, entry.namespace, entry.name, entry.rv, entry.managers, [], this.store.recent)
  }

  private namespaceEntry(name: string): Entry | undefined {
    return this.collectionOf(this.namespacesKind).entries.get(keyOf("", name))
  }

  /** Creates a namespace (Active, with the `kubernetes` finalizer) unless it exists. */
  createNamespace(name: string): void {
    if (this.namespaceEntry(name) !== undefined) return
    const kind = this.namespacesKind
    const entry = this.store.write(this.collectionOf(kind), "", name, (rv) => ({
      obj: {
        apiVersion: "v1",
        kind: "Namespace",
        metadata: {
          name,
          uid: crypto.randomUUID(),
          resourceVersion: String(rv),
          creationTimestamp: this.now(),
          labels: { "kubernetes.io/metadata.name": name }
        },
        spec: { finalizers: ["kubernetes"] },
        status: { phase: "Active" }
      },
      managers: []
    }))
    this.afterWrite(kind, entry, undefined)
  }

  /**
   * The NamespaceLifecycle admission of a write into a namespace: 404 when it does not
   * exist (unless `autoCreateNamespaces`, which creates it), 403 for a create while it is
   * being terminated.
   */
  admitNamespace(route: Pick<Route, "kind" | "namespace" | "name">, operation: "create" | "update"): void {
    const namespace = route.namespace
    if (!route.kind.namespaced || namespace === undefined) return
    const entry = this.namespaceEntry(namespace)
    if (entry === undefined) {
      if (this.options.autoCreateNamespaces === true) return this.createNamespace(namespace)
      throw Status.notFound({ group: "", plural: "namespaces" }, namespace)
    }
    if (operation === "create" && (entry.obj.status as JsonObject | undefined)?.phase === "Terminating") {
      const kind = route.kind
      const resource = kind.group === "" ? kind.plural : `${kind.plural}.${kind.group}`
      const name = route.name ?? ""
      throw new Status.StatusError(
        403,
        "Forbidden",
        `${resource}${name === "" ? "" : ` "${name}"`} is forbidden: unable to create new content in namespace ` +
          `${namespace} because it is being terminated`,
        {
          ...(name !== "" ? { name } : {}),
          ...(kind.group !== "" ? { group: kind.group } : {}),
          kind: kind.plural,
          causes: [{
            reason: "NamespaceTerminating",
            message: `namespace ${namespace} is being terminated`,
            field: "metadata.namespace"
          }]
        }
      )
    }
  }

  /**
   * A write into a namespace that may not exist (the writes' last check before storing):
   * as `admitNamespace` for an update.
   */
  ensureNamespace(name: string): void {
    if (this.namespaceEntry(name) !== undefined) return
    const anyNamespaced = this.registry.byResource("", "v1", "pods")!
    this.admitNamespace({ kind: anyNamespaced, namespace: name, name: undefined }, "update")
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

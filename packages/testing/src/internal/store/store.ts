/**
 * The object store: collections of objects keyed by namespace and name, one global
 * resourceVersion counter, a bounded history of changes (the compaction window) and
 * the watchers each change is delivered to.
 *
 * Objects are stored as plain JSON and serialized once per change; lists and watch
 * events reuse that serialization.
 *
 * @internal
 */
import { clone, isObject, type JsonObject } from "./json.js"
import { collectionId, type KindInfo } from "./kinds.js"
import type { ManagerEntry } from "../writes/managedFields.js"

/** A selectable field's path, split once (every write of its kind projects it). */
const fieldPath = (field: string): ReadonlyArray<string> => {
  let path = fieldPaths.get(field)
  if (path === undefined) fieldPaths.set(field, path = field.split("."))
  return path
}

const fieldPaths = new Map<string, ReadonlyArray<string>>()

/**
 * What selectors look at, copied out of an object when it is stored: name, namespace,
 * labels and the kind's selectable fields, in the object's own shape.
 */
const project = (obj: JsonObject, fields: ReadonlyArray<string>): JsonObject => {
  const meta = (obj.metadata ?? {}) as JsonObject
  const out: JsonObject = { metadata: { name: meta.name, namespace: meta.namespace, labels: meta.labels } }
  for (const field of fields) {
    const path = fieldPath(field)
    let node: unknown = obj
    for (const key of path) node = typeof node === "object" && node !== null ? (node as JsonObject)[key] : undefined
    if (node === undefined) continue
    let target = out
    for (let i = 0; i < path.length - 1; i++) {
      const next = target[path[i]!]
      target = (typeof next === "object" && next !== null ? next : (target[path[i]!] = {})) as JsonObject
    }
    target[path[path.length - 1]!] = node
  }
  return out
}

/** A stored object's managedFields, which its copies share (see `Entry.copy`). */
const managedFieldsOf = (obj: JsonObject): object | undefined => {
  const managedFields = isObject(obj.metadata) ? obj.metadata.managedFields : undefined
  return typeof managedFields === "object" && managedFields !== null ? managedFields : undefined
}

/**
 * The JSON of the parts of stored objects, by the part itself: a version that keeps a
 * part of the one before it (the same object: a status write keeps the spec, a deletion
 * the spec and the status, a controller's write the managedFields) is stored without
 * serializing that part again. Stored objects are never changed in place, so a part's
 * JSON stays right for as long as the part lives. Objects a caller keeps (stored with
 * `cache: false`) are neither looked up nor remembered: the caller may change them.
 */
const partJsons = new WeakMap<object, string>()

const partJson = (value: unknown, remember: boolean): string => {
  if (!remember || typeof value !== "object" || value === null) return JSON.stringify(value)
  let json = partJsons.get(value)
  if (json === undefined) partJsons.set(value, json = JSON.stringify(value))
  return json
}

/** Metadata's JSON: its managedFields (a third of a defaulted pod's JSON) from `partJson`, as most writes keep them. */
const metadataJson = (meta: JsonObject, remember: boolean): string => {
  const managedFields = meta.managedFields
  if (!remember || typeof managedFields !== "object" || managedFields === null) return JSON.stringify(meta)
  const parts: Array<string> = []
  for (const k in meta) {
    const v = meta[k]
    if (v !== undefined) parts.push(`${JSON.stringify(k)}:${k === "managedFields" ? partJson(v, true) : JSON.stringify(v)}`)
  }
  return `{${parts.join(",")}}`
}

/**
 * The few recently used parsed objects of one store. Keeping every stored object parsed
 * would keep them all alive in the old generation of the heap, which makes garbage
 * collection the main cost of a fake holding 10k large pods (and a `WeakRef` would keep
 * each one alive until the end of the current job: a tight loop of writes is one job).
 *
 * One per store, never shared: another fake's writes must not evict this one's objects,
 * and a closed fake's objects must not stay reachable through a live one.
 *
 * @internal
 */
export class RecentlyParsed {
  private readonly entries: Array<Entry | undefined>
  private next = 0

  constructor(readonly capacity = 256) {
    this.entries = new Array(capacity)
  }

  remember(entry: Entry): void {
    const evicted = this.entries[this.next]
    if (evicted !== undefined && evicted !== entry) evicted.forget()
    this.entries[this.next] = entry
    this.next = (this.next + 1) % this.capacity
  }
}

/**
 * One stored version of an object: its JSON (what every answer is made of), the
 * selector projection, and the parsed object, kept only while recently used and
 * parsed again when needed. Never mutated once stored.
 *
 * @internal
 */
export class Entry {
  private cached: JsonObject | undefined

  constructor(
    readonly json: string,
    /** `namespace/name`, `/name` for cluster-scoped objects: sorts like etcd keys. */
    readonly key: string,
    readonly namespace: string,
    readonly name: string,
    readonly rv: number,
    readonly managers: ReadonlyArray<ManagerEntry>,
    /** What label and field selectors are evaluated on. */
    readonly attrs: JsonObject,
    readonly uid: string,
    /** The uids in `metadata.ownerReferences`. */
    readonly owners: ReadonlyArray<string>,
    readonly generation: number,
    readonly creationTimestamp: string | undefined,
    /** The JSON of every top-level field but apiVersion, kind, metadata and status: a change bumps `generation`. */
    readonly specJson: string,
    /** Where this entry's parsed object is kept while recently used. */
    private readonly recent: RecentlyParsed,
    obj: JsonObject | undefined
  ) {
    if (obj !== undefined) {
      this.cached = obj
      recent.remember(this)
    }
  }

  /** The stored object: treat it as read-only (`copy` before changing it). */
  get obj(): JsonObject {
    let obj = this.cached
    if (obj === undefined) {
      obj = this.cached = JSON.parse(this.json) as JsonObject
      this.recent.remember(this)
    }
    return obj
  }

  forget(): void {
    this.cached = undefined
  }

  /**
   * A fresh copy to change (walked from the parsed object while it is kept: faster than
   * parsing again), but for `metadata.managedFields`, which is the stored array itself:
   * the rendered entries are shared by every version that keeps them and never changed in
   * place (a write sets a new array), and they are a third of a defaulted pod's objects.
   */
  copy(): JsonObject {
    const obj = this.cached
    return obj === undefined ? JSON.parse(this.json) as JsonObject : clone(obj, managedFieldsOf(obj))
  }

  /**
   * A copy to change the metadata and status of: those are copied (but for the
   * managedFields, as in `copy`), every other part is the stored one, read-only, whose
   * JSON a write of the copy reuses.
   */
  statusCopy(): JsonObject {
    const obj = this.obj
    const out: JsonObject = { ...obj }
    if (isObject(obj.metadata)) out.metadata = clone(obj.metadata, managedFieldsOf(obj))
    if (obj.status !== undefined) out.status = clone(obj.status)
    return out
  }

  /**
   * Serializes an object for storing. With `generationFrom`, `metadata.generation` is
   * set from that version: the same when the spec is unchanged, one more otherwise
   * (compared as JSON, so the previous version need not be parsed again). With
   * `cache: false` the object is not kept (the caller may still hold parts of it).
   */
  static of(
    obj: JsonObject,
    namespace: string,
    name: string,
    rv: number,
    managers: ReadonlyArray<ManagerEntry>,
    fields: ReadonlyArray<string>,
    recent: RecentlyParsed,
    options: { readonly generationFrom?: Entry | undefined; readonly cache?: boolean | undefined } = {}
  ): Entry {
    const meta = (obj.metadata ?? {}) as JsonObject
    const remember = options.cache !== false
    // one JSON.stringify per top-level field, joined: the spec part comes for free
    const parts: Array<string> = []
    let spec = ""
    let metaIndex = -1
    for (const k in obj) {
      const v = obj[k]
      if (v === undefined) continue
      if (k === "metadata") {
        metaIndex = parts.length
        parts.push("")
        continue
      }
      const part = `${JSON.stringify(k)}:${partJson(v, remember)}`
      parts.push(part)
      if (k !== "apiVersion" && k !== "kind" && k !== "status") spec += part
    }
    const from = options.generationFrom
    if (from !== undefined) meta.generation = spec === from.specJson ? from.generation : from.generation + 1
    if (metaIndex !== -1) parts[metaIndex] = `"metadata":${metadataJson(meta, remember)}`
    const uid = meta.uid
    const refs = meta.ownerReferences
    const owners: Array<string> = []
    if (Array.isArray(refs)) {
      for (const r of refs) {
        const owner = typeof r === "object" && r !== null ? (r as JsonObject).uid : undefined
        if (typeof owner === "string") owners.push(owner)
      }
    }
    return new Entry(
      `{${parts.join(",")}}`,
      keyOf(namespace, name),
      namespace,
      name,
      rv,
      managers,
      project(obj, fields),
      typeof uid === "string" ? uid : "",
      owners,
      typeof meta.generation === "number" ? meta.generation : 1,
      typeof meta.creationTimestamp === "string" ? meta.creationTimestamp : undefined,
      spec,
      recent,
      options.cache === false ? undefined : obj
    )
  }
}

/** @internal */
export type ChangeType = "ADDED" | "MODIFIED" | "DELETED"

/** Something that receives the event lines of a collection. @internal */
export interface WatchTarget {
  readonly namespace: string | undefined
  /** `false` when there is no selector: every object matches, none needs to be looked at. */
  readonly selective: boolean
  readonly matches: (obj: JsonObject) => boolean
  deliver(line: string): void
}

/**
 * One change, shared by every watcher that receives it. Once delivered live it keeps
 * only the JSON of the versions (history can hold many thousands of changes); the
 * rare replay through a selector parses them again.
 *
 * @internal
 */
export class Change {
  private cached: string | undefined
  private leftCached: string | undefined
  private prev: Entry | undefined
  readonly json: string
  readonly prevJson: string | undefined
  readonly namespace: string
  readonly attrs: JsonObject
  readonly prevAttrs: JsonObject | undefined

  constructor(
    readonly rv: number,
    readonly collection: Collection,
    readonly type: ChangeType,
    entry: Entry,
    prev: Entry | undefined
  ) {
    this.prev = prev
    this.json = entry.json
    this.prevJson = prev?.json
    this.namespace = entry.namespace
    this.attrs = entry.attrs
    this.prevAttrs = prev?.attrs
  }

  /** Drops the parsed objects once the change has been delivered live. */
  release(): void {
    this.prev = undefined
    // the event lines were shared by the live watchers; history keeps only the JSON
    this.cached = undefined
    this.leftCached = undefined
  }

  private prevObj(): JsonObject | undefined {
    return this.prev?.obj ?? (this.prevJson !== undefined ? (JSON.parse(this.prevJson) as JsonObject) : undefined)
  }

  line(): string {
    return (this.cached ??= `{"type":"${this.type}","object":${this.json}}\n`)
  }

  addedLine(): string {
    return this.type === "ADDED" ? this.line() : `{"type":"ADDED","object":${this.json}}\n`
  }

  /**
   * The object stopped matching a watcher's selector: the API server sends DELETED
   * with the previous content at the new resourceVersion.
   */
  leftLine(prev: JsonObject): string {
    if (this.leftCached !== undefined) return this.leftCached
    const obj = { ...prev, metadata: { ...(prev.metadata as JsonObject), resourceVersion: String(this.rv) } }
    return (this.leftCached = `{"type":"DELETED","object":${JSON.stringify(obj)}}\n`)
  }

  /** The line a watcher receives for this change, if any. */
  lineFor(target: WatchTarget): string | undefined {
    if (target.namespace !== undefined && target.namespace !== this.namespace) return undefined
    if (!target.selective) return this.line()
    if (this.type !== "MODIFIED") return target.matches(this.attrs) ? this.line() : undefined
    const now = target.matches(this.attrs)
    const before = this.prevAttrs !== undefined && target.matches(this.prevAttrs)
    if (now) return before ? this.line() : this.addedLine()
    return before ? this.leftLine(this.prevObj()!) : undefined
  }
}

const lowerBound = (keys: ReadonlyArray<string>, key: string): number => {
  let lo = 0
  let hi = keys.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (keys[mid]! < key) lo = mid + 1
    else hi = mid
  }
  return lo
}

/** The objects of one kind (across its versions). @internal */
export class Collection {
  readonly entries = new Map<string, Entry>()
  readonly watchers = new Set<WatchTarget>()
  private sorted: Array<string> | undefined

  constructor(public kind: KindInfo) {}

  keys(): ReadonlyArray<string> {
    return (this.sorted ??= [...this.entries.keys()].sort())
  }

  invalidate(): void {
    this.sorted = undefined
  }

  /**
   * Index range of the keys of a namespace (all keys when undefined), starting after
   * `after` when given.
   */
  range(namespace: string | undefined, after: string | undefined): { readonly start: number; readonly end: number } {
    const keys = this.keys()
    let start = 0
    let end = keys.length
    if (namespace !== undefined) {
      const prefix = `${namespace}/`
      start = lowerBound(keys, prefix)
      end = lowerBound(keys, `${namespace}0`) // "0" sorts right after "/"
    }
    if (after !== undefined) {
      const from = lowerBound(keys, after)
      start = Math.max(start, keys[from] === after ? from + 1 : from)
    }
    return { start, end: Math.max(start, end) }
  }
}

/** @internal */
export const keyOf = (namespace: string, name: string): string => `${namespace}/${name}`

/** @internal */
export class Store {
  private counter = 0
  private readonly collections = new Map<string, Collection>()
  private history: Array<Change> = []
  private historyStart = 0
  /** This store's recently parsed objects. */
  readonly recent = new RecentlyParsed()
  /** Watches and continue tokens from a resourceVersion below this have expired. */
  compactedRv = 0
  /** owner uid -> the objects that name it in ownerReferences. */
  private readonly dependents = new Map<string, Map<string, Collection>>()

  constructor(private readonly window: number) {}

  get resourceVersion(): number {
    return this.counter
  }

  /** A kind's objects (those of the kind it is stored as, when it is). */
  collection(served: KindInfo): Collection {
    const kind = served.storedAs?.kind ?? served
    const id = collectionId(kind)
    let c = this.collections.get(id)
    if (c === undefined) {
      c = new Collection(kind)
      this.collections.set(id, c)
    } else if (c.kind !== kind) {
      c.kind = kind
    }
    return c
  }

  existing(served: Pick<KindInfo, "group" | "plural" | "storedAs">): Collection | undefined {
    return this.collections.get(collectionId(served.storedAs?.kind ?? served))
  }

  allCollections(): IterableIterator<Collection> {
    return this.collections.values()
  }

  /** The resourceVersion the next write will get, without taking it. */
  peekNext(): number {
    return this.counter + 1
  }

  /**
   * Stores a new version of an object. `build` receives the new resourceVersion and
   * returns the object to store (with that resourceVersion in its metadata).
   */
  write(
    collection: Collection,
    namespace: string,
    name: string,
    build: (rv: number) => {
      readonly obj: JsonObject
      readonly managers: ReadonlyArray<ManagerEntry>
      readonly generationFrom?: Entry | undefined
      readonly cache?: boolean | undefined
    }
  ): Entry {
    const rv = ++this.counter
    const { cache, generationFrom, managers, obj } = build(rv)
    const fields = collection.kind.fieldSelectors
    const entry = Entry.of(obj, namespace, name, rv, managers, fields, this.recent, { generationFrom, cache })
    const key = entry.key
    const prev = collection.entries.get(key)
    collection.entries.set(key, entry)
    if (prev !== undefined) this.unindex(collection, prev)
    this.index(collection, entry)
    if (prev === undefined) collection.invalidate()
    this.emit(new Change(rv, collection, prev === undefined ? "ADDED" : "MODIFIED", entry, prev))
    return entry
  }

  /** Removes an object; the DELETED event carries the deletion's resourceVersion. */
  remove(collection: Collection, entry: Entry, finalize?: (obj: JsonObject) => JsonObject): Entry {
    const rv = ++this.counter
    const base = finalize !== undefined ? finalize(entry.obj) : entry.obj
    const obj = { ...base, metadata: { ...(base.metadata as JsonObject), resourceVersion: String(rv) } }
    const deleted = Entry.of(
      obj,
      entry.namespace,
      entry.name,
      rv,
      entry.managers,
      collection.kind.fieldSelectors,
      this.recent
    )
    collection.entries.delete(entry.key)
    this.unindex(collection, entry)
    collection.invalidate()
    this.emit(new Change(rv, collection, "DELETED", deleted, entry))
    return deleted
  }

  private index(collection: Collection, entry: Entry): void {
    for (const owner of entry.owners) {
      let set = this.dependents.get(owner)
      if (set === undefined) this.dependents.set(owner, set = new Map())
      set.set(`${collectionId(collection.kind)}\u0000${entry.key}`, collection)
    }
  }

  private unindex(collection: Collection, entry: Entry): void {
    for (const owner of entry.owners) {
      const set = this.dependents.get(owner)
      if (set === undefined) continue
      set.delete(`${collectionId(collection.kind)}\u0000${entry.key}`)
      if (set.size === 0) this.dependents.delete(owner)
    }
  }

  /** The current objects whose ownerReferences name `uid`. */
  dependentsOf(uid: string): Array<{ readonly collection: Collection; readonly entry: Entry }> {
    const set = this.dependents.get(uid)
    if (set === undefined) return []
    const out: Array<{ readonly collection: Collection; readonly entry: Entry }> = []
    for (const [id, collection] of set) {
      const entry = collection.entries.get(id.slice(id.indexOf("\u0000") + 1))
      if (entry !== undefined) out.push({ collection, entry })
    }
    return out
  }

  private emit(change: Change): void {
    this.history.push(change)
    if (this.history.length - this.historyStart > this.window) {
      this.compactedRv = this.history[this.historyStart]!.rv
      this.historyStart++
      if (this.historyStart > 1024 && this.historyStart * 2 > this.history.length) {
        this.history = this.history.slice(this.historyStart)
        this.historyStart = 0
      }
    }
    for (const target of change.collection.watchers) {
      const line = change.lineFor(target)
      if (line !== undefined) target.deliver(line)
    }
    change.release()
  }

  /** Changes of a collection after `rv`, oldest first; `undefined` when `rv` is compacted. */
  changesSince(collection: Collection, rv: number): ReadonlyArray<Change> | undefined {
    if (rv < this.compactedRv) return undefined
    let lo = this.historyStart
    let hi = this.history.length
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (this.history[mid]!.rv <= rv) lo = mid + 1
      else hi = mid
    }
    const out: Array<Change> = []
    for (let i = lo; i < this.history.length; i++) {
      const c = this.history[i]!
      if (c.collection === collection) out.push(c)
    }
    return out
  }

  /** Drops all history: every watch or continue token from an older resourceVersion expires. */
  compact(): void {
    this.compactedRv = this.counter
    this.history = []
    this.historyStart = 0
  }
}

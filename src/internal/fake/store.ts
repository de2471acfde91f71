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
import type { JsonObject } from "./json.js"
import { collectionId, type KindInfo } from "./kinds.js"
import type { ManagerEntry } from "./managed.js"

/** One stored version of an object. Never mutated once stored. @internal */
export interface Entry {
  readonly obj: JsonObject
  readonly json: string
  /** `namespace/name`, `/name` for cluster-scoped objects: sorts like etcd keys. */
  readonly key: string
  readonly namespace: string
  readonly name: string
  readonly rv: number
  readonly managers: ReadonlyArray<ManagerEntry>
}

/** @internal */
export type ChangeType = "ADDED" | "MODIFIED" | "DELETED"

/** Something that receives the event lines of a collection. @internal */
export interface WatchTarget {
  readonly namespace: string | undefined
  readonly matches: (obj: JsonObject) => boolean
  deliver(line: string): void
}

/** One change, shared by every watcher that receives it. @internal */
export class Change {
  private cached: string | undefined
  private leftCached: string | undefined

  constructor(
    readonly rv: number,
    readonly collection: Collection,
    readonly type: ChangeType,
    readonly entry: Entry,
    readonly prev: Entry | undefined
  ) {}

  line(): string {
    return (this.cached ??= `{"type":"${this.type}","object":${this.entry.json}}\n`)
  }

  addedLine(): string {
    return this.type === "ADDED" ? this.line() : `{"type":"ADDED","object":${this.entry.json}}\n`
  }

  /**
   * The object stopped matching a watcher's selector: the API server sends DELETED
   * with the previous content at the new resourceVersion.
   */
  leftLine(): string {
    if (this.leftCached !== undefined) return this.leftCached
    const prev = this.prev!.obj
    const obj = { ...prev, metadata: { ...(prev.metadata as JsonObject), resourceVersion: String(this.rv) } }
    return (this.leftCached = `{"type":"DELETED","object":${JSON.stringify(obj)}}\n`)
  }

  /** The line a watcher receives for this change, if any. */
  lineFor(target: WatchTarget): string | undefined {
    if (target.namespace !== undefined && target.namespace !== this.entry.namespace) return undefined
    if (this.type !== "MODIFIED") return target.matches(this.entry.obj) ? this.line() : undefined
    const now = target.matches(this.entry.obj)
    const before = this.prev !== undefined && target.matches(this.prev.obj)
    if (now) return before ? this.line() : this.addedLine()
    return before ? this.leftLine() : undefined
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
  /** Watches and continue tokens from a resourceVersion below this have expired. */
  compactedRv = 0

  constructor(private readonly window: number) {}

  get resourceVersion(): number {
    return this.counter
  }

  collection(kind: KindInfo): Collection {
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

  existing(kind: Pick<KindInfo, "group" | "plural">): Collection | undefined {
    return this.collections.get(collectionId(kind))
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
    build: (rv: number) => { readonly obj: JsonObject; readonly managers: ReadonlyArray<ManagerEntry> }
  ): Entry {
    const rv = ++this.counter
    const { managers, obj } = build(rv)
    const key = keyOf(namespace, name)
    const prev = collection.entries.get(key)
    const entry: Entry = { obj, json: JSON.stringify(obj), key, namespace, name, rv, managers }
    collection.entries.set(key, entry)
    if (prev === undefined) collection.invalidate()
    this.emit(new Change(rv, collection, prev === undefined ? "ADDED" : "MODIFIED", entry, prev))
    return entry
  }

  /** Removes an object; the DELETED event carries the deletion's resourceVersion. */
  remove(collection: Collection, entry: Entry, finalize?: (obj: JsonObject) => JsonObject): Entry {
    const rv = ++this.counter
    const base = finalize !== undefined ? finalize(entry.obj) : entry.obj
    const obj = { ...base, metadata: { ...(base.metadata as JsonObject), resourceVersion: String(rv) } }
    const deleted: Entry = { ...entry, obj, json: JSON.stringify(obj), rv }
    collection.entries.delete(entry.key)
    collection.invalidate()
    this.emit(new Change(rv, collection, "DELETED", deleted, entry))
    return deleted
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

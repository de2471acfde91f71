/**
 * Watch streams: newline-delimited JSON events for one collection, from the current
 * state or replayed from a resourceVersion, with bookmarks, timeouts and the faults
 * tests inject (drop after N events, a mid-stream 410).
 *
 * @internal
 */
import type { JsonObject } from "../store/json.js"
import { apiVersionOf } from "../store/kinds.js"
import type { StatusError } from "../serve/statusBodies.js"
import type { Collection, Store, WatchTarget } from "../store/store.js"
import { Batcher, type Sink, type StreamBody } from "../serve/stream.js"

/** @internal */
export interface WatchHub {
  readonly store: Store
  readonly open: Set<ActiveWatch>
  /** Close each watch after it has sent this many events (fault injection). */
  dropAfter: number | undefined
  /** Explore: every event is held back until the explorer releases it (`releaseOne`). */
  hold?: boolean | undefined
  /** Explore: the watches with held events (those ended wait here until their last one is released). */
  holding?: Set<ActiveWatch> | undefined
}

/** @internal */
export class ActiveWatch implements WatchTarget, StreamBody {
  readonly _tag = "Stream"
  private out: Batcher | undefined
  private early: Array<string> | undefined = []
  private earlyEnd: "end" | "fail" | undefined
  private sent = 0
  private timer: ReturnType<typeof setTimeout> | undefined
  private finished = false
  /** Events held back by the explorer, oldest first, and whether the stream ends after them. */
  private held: Array<string> = []
  private endAfterHeld = false
  /** Rewrites each event line into the form the client asked for (metadata only, a Table). */
  transform: ((line: string) => string) | undefined = undefined
  /** Whether `transform` rewrites bookmarks too (a metadata-only watch's are PartialObjectMetadata). */
  transformsBookmarks = false
  /** The kind and apiVersion of the watch's bookmarks: the request's (the stored kind's first version when unset). */
  objectType: { readonly kind: string; readonly apiVersion: string } | undefined = undefined

  constructor(
    private readonly hub: WatchHub,
    readonly collection: Collection,
    readonly namespace: string | undefined,
    readonly matches: (obj: JsonObject) => boolean,
    readonly selective: boolean,
    readonly bookmarks: boolean,
    timeoutSeconds: number | undefined
  ) {
    if (timeoutSeconds !== undefined && timeoutSeconds > 0) {
      this.timer = setTimeout(() => this.end(), timeoutSeconds * 1000)
    }
  }

  /** Registers with the collection; from now on no change is missed. */
  attach(): void {
    this.collection.watchers.add(this)
    this.hub.open.add(this)
  }

  start(sink: Sink): void {
    this.out = new Batcher(sink)
    const early = this.early ?? []
    this.early = undefined
    for (const line of early) this.out.write(line)
    if (this.earlyEnd === "end") this.out.end()
    else if (this.earlyEnd === "fail") this.out.fail(new Error("watch dropped by the fake cluster"))
  }

  cancel(): void {
    this.detach()
    this.dropHeld()
    this.out?.abandon()
  }

  private emit(line: string): void {
    if (this.out !== undefined) this.out.write(line)
    else this.early!.push(line)
  }

  private write(line: string): void {
    if (this.finished) return
    if (this.hub.hold === true) {
      this.held.push(line)
      this.hub.holding?.add(this)
    } else this.emit(line)
    this.sent++
    const dropAfter = this.hub.dropAfter
    if (dropAfter !== undefined && this.sent >= dropAfter) this.end()
  }

  /** Ends the watch when it already sent as many events as the drop limit allows. */
  checkDrop(): void {
    const dropAfter = this.hub.dropAfter
    if (dropAfter !== undefined && this.sent >= dropAfter) this.end()
  }

  deliver(line: string): void {
    this.write(this.transform === undefined ? line : this.transform(line))
  }

  bookmark(rv: number, annotations?: Record<string, string>): void {
    if (!this.bookmarks) return
    const kind = this.collection.kind
    const metadata: JsonObject = { resourceVersion: String(rv) }
    if (annotations !== undefined) metadata.annotations = annotations
    const type = this.objectType ?? { kind: kind.kind, apiVersion: apiVersionOf(kind.group, kind.versions[0]!) }
    const object = { kind: type.kind, apiVersion: type.apiVersion, metadata }
    const line = `{"type":"BOOKMARK","object":${JSON.stringify(object)}}\n`
    this.write(this.transformsBookmarks && this.transform !== undefined ? this.transform(line) : line)
  }

  /** Sends an ERROR event carrying the Status, then ends the stream, as the API server does. */
  error(status: StatusError): void {
    if (this.finished) return
    this.write(`{"type":"ERROR","object":${JSON.stringify(status.body())}}\n`)
    this.end()
  }

  /** Ends the stream cleanly (a timeout, a dropped watch); after the held events when some are. */
  end(): void {
    if (this.finished) return
    this.detach()
    if (this.held.length > 0) this.endAfterHeld = true
    else this.close()
  }

  private close(): void {
    if (this.out !== undefined) this.out.end()
    else this.earlyEnd = "end"
  }

  /** Explore: how many events are held back. */
  get heldCount(): number {
    return this.held.length
  }

  /** Explore: the oldest held event line. */
  get heldHead(): string | undefined {
    return this.held[0]
  }

  /** Explore: sends the oldest held event (and ends the stream after the last one when it ended). */
  releaseOne(): void {
    const line = this.held.shift()
    if (line === undefined) return
    this.emit(line)
    if (this.held.length === 0) {
      this.hub.holding?.delete(this)
      if (this.endAfterHeld) this.close()
    }
  }

  /** Explore: the connection is reset, what was held back is lost, the client sees an error. */
  reset(): void {
    this.detach()
    this.dropHeld()
    if (this.out !== undefined) this.out.fail(new Error("connection reset by the fake cluster (injected fault)"))
    else this.earlyEnd = "fail"
  }

  private dropHeld(): void {
    this.held = []
    this.endAfterHeld = false
    this.hub.holding?.delete(this)
  }

  private detach(): void {
    this.finished = true
    if (this.timer !== undefined) clearTimeout(this.timer)
    this.timer = undefined
    this.collection.watchers.delete(this)
    this.hub.open.delete(this)
  }
}

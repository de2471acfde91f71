/**
 * A controller's work queue: keys marked dirty by the changes it watches, reconciled
 * once each after the write that dirtied them (deferred on the fake), and keys to look
 * at again later on the fake's clock (a deadline, a delay). Nothing runs while nothing
 * it watches changes.
 *
 * @internal
 */
import type { FakeState } from "../store/state.js"

/** @internal */
export class WorkQueue {
  private dirty = new Set<string>()
  private queued = false
  /** key -> when it is due (clock ms) and how to cancel its timer. */
  private readonly timers = new Map<string, { readonly due: number; readonly cancel: () => void }>()

  constructor(private readonly state: FakeState, private readonly reconcile: (key: string) => void) {}

  add(key: string): void {
    this.dirty.add(key)
    if (this.queued) return
    this.queued = true
    this.state.defer(() => this.run())
  }

  /** Looks at `key` again in `ms` (or sooner, when a nearer time was asked for already). */
  addAfter(key: string, ms: number): void {
    if (!(ms > 0)) return this.add(key)
    if (ms === Infinity) return
    const due = this.state.clock.now() + ms
    const pending = this.timers.get(key)
    if (pending !== undefined) {
      if (pending.due <= due) return
      pending.cancel()
    }
    const cancel = this.state.later(ms, () => {
      this.timers.delete(key)
      this.add(key)
    })
    this.timers.set(key, { due, cancel })
  }

  private run(): void {
    this.queued = false
    const keys = this.dirty
    this.dirty = new Set()
    for (const key of keys) this.reconcile(key)
  }
}

/** `namespace/name` of an object. @internal */
export const keyFor = (namespace: string, name: string): string => `${namespace}/${name}`

/** The namespace and name of a key. @internal */
export const splitKey = (key: string): { readonly namespace: string; readonly name: string } => {
  const slash = key.indexOf("/")
  return { namespace: key.slice(0, slash), name: key.slice(slash + 1) }
}

/**
 * The fake's side of `Explore`: watch events held back until the explorer releases them,
 * and one watch at a time expired or reset. The controls carry these under a symbol, so
 * that `FakeCluster.layer`'s service (a copy of the controls) has them too and the public
 * `Control` does not grow.
 *
 * @internal
 */
import type { ActiveWatch } from "../reads/watch.js"
import * as Status from "../serve/statusBodies.js"
import type { FakeState } from "../store/state.js"

/** @internal */
export const HooksId: unique symbol = Symbol.for("@effect-kube/testing/Explore/hooks")

/** One watch stream, as the explorer sees it. @internal */
export interface WatchHandle {
  /** The collection watched, e.g. `configmaps (all namespaces)`. */
  readonly what: string
  /** Events held back. */
  readonly held: number
  /** The oldest held event, e.g. `MODIFIED ConfigMap team-a/settings`. */
  readonly head: string | undefined
  /** Whether the stream is still open (not ended with events still held). */
  readonly open: boolean
  readonly release: () => void
  /** An ERROR event with a 410 Expired Status (after what is held), then the end. */
  readonly expire: () => void
  readonly reset: () => void
}

/** @internal */
export interface Hooks {
  /** From now on, every watch event waits until released (`false`: sends what is held and stops holding). */
  readonly hold: (on: boolean) => void
  /** The watches open or with events held, in the order they were opened. */
  readonly watches: () => ReadonlyArray<WatchHandle>
}

const describeLine = (line: string): string => {
  try {
    const event = JSON.parse(line) as { type?: string; object?: { kind?: string; metadata?: { name?: string; namespace?: string } } }
    const meta = event.object?.metadata
    const name = meta?.name === undefined ? "" : ` ${meta.namespace === undefined ? "" : `${meta.namespace}/`}${meta.name}`
    return `${event.type ?? "?"} ${event.object?.kind ?? "?"}${name}`
  } catch {
    return "an event"
  }
}

const handleOf = (w: ActiveWatch, open: boolean): WatchHandle => {
  const ns = w.namespace === undefined || w.namespace === "" ? " (all namespaces)" : ` in ${w.namespace}`
  const head = w.heldHead
  return {
    what: `${w.collection.kind.plural}${ns}`,
    held: w.heldCount,
    head: head === undefined ? undefined : describeLine(head),
    open,
    release: () => w.releaseOne(),
    expire: () => w.error(Status.expired("too old resource version (injected by Explore)")),
    reset: () => w.reset()
  }
}

/** @internal */
export const make = (state: FakeState): Hooks => {
  const hub = state.hub
  const order = new WeakMap<ActiveWatch, number>()
  let next = 0
  const idOf = (w: ActiveWatch): number => {
    let id = order.get(w)
    if (id === undefined) order.set(w, id = next++)
    return id
  }
  return {
    hold: (on) => {
      if (on) {
        hub.hold = true
        hub.holding ??= new Set()
        return
      }
      hub.hold = false
      for (const w of [...(hub.holding ?? [])]) while (w.heldCount > 0) w.releaseOne()
    },
    watches: () => {
      const all = new Set<ActiveWatch>([...hub.open, ...(hub.holding ?? [])])
      return [...all].sort((a, b) => idOf(a) - idOf(b)).map((w) => handleOf(w, hub.open.has(w)))
    }
  }
}

/**
 * A resilient watch: an endless stream of the changes to a set of objects that never
 * loses one. It lists, then watches from the list's resourceVersion; it resumes after
 * a watch ends, re-lists after 410 Gone, and backs off on transport errors, 5xx and 429.
 *
 * @since 0.1.0
 */
import type * as Schedule from "effect/Schedule"
import type { Selectors } from "./Kube.js"

/**
 * What the watcher emits. `Init` … `InitApply`* … `InitDone` frames a full listing
 * (at the start and after every re-list); `Apply` and `Delete` are live changes.
 *
 * @since 0.1.0
 * @category models
 */
export type Event<A> =
  | { readonly _tag: "Init" }
  | { readonly _tag: "InitApply"; readonly object: A }
  | { readonly _tag: "InitDone" }
  | { readonly _tag: "Apply"; readonly object: A }
  | { readonly _tag: "Delete"; readonly object: A }

/**
 * Options of a watcher.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options extends Selectors {
  readonly allNamespaces?: boolean | undefined
  /** Objects per page of the initial list (default 500). */
  readonly pageSize?: number | undefined
  /** The server-side timeout of each watch request (default 290 s). */
  readonly timeoutSeconds?: number | undefined
  /** The delays between retries (default: 800 ms doubling to 30 s, with jitter). */
  readonly backoff?: Schedule.Schedule<unknown, unknown> | undefined
}

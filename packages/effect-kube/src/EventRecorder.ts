/**
 * An `EventRecorder` writes events.k8s.io/v1 Events about objects, as `kubectl
 * describe` shows them: `normal(regarding, reason, note)` and `warning(...)`, with the
 * reporting controller and instance. Repeats of the same event (same object, type,
 * reason, action and note) within a window (default 6 minutes, as client-go) become one
 * Event whose `series.count` grows, instead of a flood of Events. Times are written as
 * MicroTime. Recording is best effort: a failure to write an Event is logged, never
 * returned, so it cannot fail a reconcile.
 *
 * @example
 * ```ts
 * import { Effect, Option } from "effect"
 * import { ConfigMaps, EventRecorder, Kube } from "effect-kube"
 *
 * const program = Effect.gen(function* () {
 *   const recorder = yield* EventRecorder.make({
 *     reportingController: "example.com/mirror",
 *     reportingInstance: "pod-1"
 *   })
 *   const cm = yield* Kube.api(ConfigMaps, { namespace: "default" }).get("settings")
 *   if (Option.isSome(cm)) {
 *     yield* recorder.normal(EventRecorder.reference(ConfigMaps, cm.value), "Copied", "copied to 3 namespaces")
 *   }
 * })
 * ```
 * @since 0.1.0
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { ApiError } from "./Errors.js"
import { EventsV1 } from "./internal/runtime/writtenKinds.js"
import * as meta from "./internal/runtime/objectMeta.js"
import * as Kube from "./Kube.js"
import * as MicroTime from "./MicroTime.js"
import type * as Resource from "./Resource.js"

/**
 * What an event is about.
 *
 * @since 0.1.0
 * @category models
 */
export type Reference = meta.ObjectReference

/**
 * The reference of an object of a resource (its uid and resourceVersion included).
 *
 * @since 0.1.0
 * @category constructors
 */
export const reference: (
  resource: Pick<Resource.Info, "apiVersion" | "kind" | "namespaced">,
  object: unknown
) => Reference = meta.referenceOf

/**
 * One event to record.
 *
 * @since 0.1.0
 * @category models
 */
export interface Event {
  readonly type: "Normal" | "Warning"
  /** UpperCamelCase, short: `Created`, `SyncFailed`. */
  readonly reason: string
  /** For a person, at most 1 kB. */
  readonly note: string
  /** What was done or failed (`Reconcile` by default). */
  readonly action?: string | undefined
}

/**
 * Options of a recorder.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** The controller's name, e.g. `example.com/config-mirror`. */
  readonly reportingController: string
  /** This replica, e.g. the pod name. */
  readonly reportingInstance: string
  /** Repeats within this window are folded into a series (default 6 minutes). */
  readonly window?: Duration.Input | undefined
}

/**
 * A recorder.
 *
 * @since 0.1.0
 * @category models
 */
export interface Recorder {
  readonly publish: (regarding: Reference, event: Event) => Effect.Effect<void, never, Kube.Requirements>
  readonly normal: (
    regarding: Reference,
    reason: string,
    note: string,
    action?: string
  ) => Effect.Effect<void, never, Kube.Requirements>
  readonly warning: (
    regarding: Reference,
    reason: string,
    note: string,
    action?: string
  ) => Effect.Effect<void, never, Kube.Requirements>
}

interface Series {
  readonly name: string
  readonly namespace: string
  count: number
  last: number
}

const maxNote = 1024

/**
 * A recorder with its own memory of recent events (for series).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: Options): Effect.Effect<Recorder> =>
  Effect.sync(() => {
    const window = Duration.toMillis(Duration.fromInputUnsafe(options.window ?? "6 minutes"))
    const recent = new Map<string, Series>()
    const publish = (regarding: Reference, event: Event): Effect.Effect<void, never, Kube.Requirements> =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const namespace = regarding.namespace ?? "default"
        const events = Kube.api(EventsV1, { namespace })
        const action = event.action ?? "Reconcile"
        const note = event.note.length > maxNote ? event.note.slice(0, maxNote) : event.note
        const key = JSON.stringify([regarding.uid ?? `${namespace}/${regarding.kind}/${regarding.name}`, event.type, event.reason, action, note])
        for (const [k, s] of recent) if (now - s.last > window) recent.delete(k)
        const series = recent.get(key)
        if (series !== undefined) {
          series.count++
          series.last = now
          const updated = yield* events.patch(series.name, {
            _tag: "Merge",
            body: { series: { count: series.count, lastObservedTime: MicroTime.format(now) } }
          }).pipe(
            Effect.as(true),
            Effect.catchIf(ApiError.isNotFound, () => Effect.succeed(false))
          )
          if (updated) return
        }
        const name = `${regarding.name}.${(now * 1000).toString(16)}${Math.floor(Math.random() * 0xffff).toString(16)}`
        yield* events.create({
          metadata: { name, namespace },
          eventTime: MicroTime.format(now),
          reportingController: options.reportingController,
          reportingInstance: options.reportingInstance,
          action,
          reason: event.reason,
          note,
          type: event.type,
          regarding: { ...regarding }
        })
        recent.set(key, { name, namespace, count: 1, last: now })
      }).pipe(
        Effect.catch((error) =>
          Effect.logWarning(`EventRecorder: could not record ${event.reason} for ${regarding.kind} ${regarding.name}`, error)
        )
      )
    return {
      publish,
      normal: (regarding, reason, note, action) => publish(regarding, { type: "Normal", reason, note, action }),
      warning: (regarding, reason, note, action) => publish(regarding, { type: "Warning", reason, note, action })
    }
  })

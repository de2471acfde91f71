/**
 * Finalizers let a controller clean up before an object goes away: the finalizer is
 * added before the first reconcile of a live object, so the API server keeps a deleted
 * object (with a `deletionTimestamp`) until the controller has run its cleanup and
 * removed the finalizer. Both writes are merge patches with the read resourceVersion as
 * precondition, re-read and retried on 409, so they are safe beside concurrent writers
 * (other controllers' finalizers are kept).
 *
 * Cleanup runs at least once: when removing the finalizer fails for another reason than
 * a conflict, the next reconcile runs cleanup again, so it must be idempotent.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { type ConfigMap, ConfigMaps, Controller, Finalizer, Kube } from "effect-kube"
 *
 * // your own logic: copy a ConfigMap elsewhere, and remove the copies (idempotently)
 * declare const copy: (cm: ConfigMap) => Effect.Effect<void>
 * declare const removeCopies: (cm: ConfigMap) => Effect.Effect<void>
 *
 * const mirrors = Kube.api(ConfigMaps, { namespace: "default" })
 * const reconcile = (mirror: ConfigMap) =>
 *   Finalizer.reconcile(mirrors, "example.com/cleanup", mirror, {
 *     apply: (m) => copy(m).pipe(Effect.as(Controller.done)),
 *     cleanup: (m) => removeCopies(m)
 *   })
 * ```
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Conflict from "./Conflict.js"
import * as meta from "./internal/runtime/objectMeta.js"
import * as Kube from "./Kube.js"

/**
 * Whether the object lists the finalizer.
 *
 * @since 0.1.0
 * @category predicates
 */
export const has = (object: unknown, finalizer: string): boolean =>
  (meta.metadataOf(object).finalizers ?? []).includes(finalizer)

/**
 * Whether the object is being deleted (it has a `deletionTimestamp`).
 *
 * @since 0.1.0
 * @category predicates
 */
export const isDeleting = (object: unknown): boolean => meta.metadataOf(object).deletionTimestamp !== undefined

/** The api in the object's own namespace (an all-namespaces controller's objects live anywhere). */
const boundTo = <A>(api: Kube.Api<A>, namespace: string | undefined): Kube.Api<A> =>
  api.resource.namespaced && namespace !== undefined && namespace !== api.namespace
    ? Kube.api(api.resource, { namespace })
    : api

const rewrite = <A>(
  api: Kube.Api<A>,
  object: A,
  change: (finalizers: ReadonlyArray<string>) => ReadonlyArray<string> | undefined
): Effect.Effect<Option.Option<A>, Kube.Error, Kube.Requirements> => {
  const { name = "", namespace } = meta.metadataOf(object)
  const namespaced = boundTo(api, namespace)
  let first = true
  return Conflict.retryOnConflict(
    Effect.gen(function*() {
      // the first attempt uses the object as given; after a conflict, the server's current one
      const current = first ? Option.some(object) : yield* namespaced.get(name)
      first = false
      if (Option.isNone(current)) return Option.none<A>()
      const m = meta.metadataOf(current.value)
      const next = change(m.finalizers ?? [])
      if (next === undefined) return current
      const patched = yield* namespaced.patch(name, {
        _tag: "Merge",
        body: { metadata: { resourceVersion: m.resourceVersion, finalizers: next.length === 0 ? null : next } }
      })
      return Option.some(patched)
    })
  )
}

/**
 * Adds the finalizer (unless present); returns the object as the server now has it, or
 * none when it is gone.
 *
 * @since 0.1.0
 * @category combinators
 */
export const add = <A>(api: Kube.Api<A>, object: A, finalizer: string) =>
  rewrite(api, object, (fs) => (fs.includes(finalizer) ? undefined : [...fs, finalizer]))

/**
 * Removes the finalizer (if present), keeping every other; returns the object as the
 * server now has it, or none when it is gone (the last finalizer removed from a deleted
 * object lets the server delete it).
 *
 * @since 0.1.0
 * @category combinators
 */
export const remove = <A>(api: Kube.Api<A>, object: A, finalizer: string) =>
  rewrite(api, object, (fs) => (fs.includes(finalizer) ? fs.filter((f) => f !== finalizer) : undefined))

/**
 * What `reconcile` does with an object: `apply` to a live one (after adding the
 * finalizer), `cleanup` once to a deleted one that still has the finalizer (then the
 * finalizer is removed), nothing to a deleted one without it.
 *
 * @since 0.1.0
 * @category models
 */
export interface Handlers<A, B, E, R, E2, R2> {
  readonly apply: (object: A) => Effect.Effect<B, E, R>
  readonly cleanup: (object: A) => Effect.Effect<void, E2, R2>
}

/**
 * Drives one object through its finalizer: adds it before the first `apply`, runs
 * `cleanup` and removes it on deletion. Returns `apply`'s result, or `Option.none()`
 * when the object was being deleted (cleaned up now or before).
 *
 * @since 0.1.0
 * @category combinators
 */
export const reconcile = <A, B, E, R, E2, R2>(
  api: Kube.Api<A>,
  finalizer: string,
  object: A,
  handlers: Handlers<A, B, E, R, E2, R2>
): Effect.Effect<Option.Option<B>, E | E2 | Kube.Error, R | R2 | Kube.Requirements> =>
  Effect.gen(function*() {
    if (isDeleting(object)) {
      if (!has(object, finalizer)) return Option.none()
      // a cached object may be stale: confirm with the server that cleanup is still due,
      // so that a cleanup that finished (finalizer removed) is not run again
      const fresh = yield* boundTo(api, meta.metadataOf(object).namespace).get(meta.metadataOf(object).name ?? "")
      if (Option.isNone(fresh) || !has(fresh.value, finalizer)) return Option.none()
      yield* handlers.cleanup(fresh.value)
      yield* remove(api, fresh.value, finalizer)
      return Option.none()
    }
    let current = object
    if (!has(object, finalizer)) {
      const added = yield* add(api, object, finalizer)
      if (Option.isNone(added)) return Option.none()
      current = added.value
      // deleted in between: the next event brings the deletion
      if (isDeleting(current)) return Option.none()
    }
    return Option.some(yield* handlers.apply(current))
  })

/**
 * Optimistic concurrency made easy: `retryOnConflict` re-runs a read-modify-write when
 * the server answers 409 Conflict (someone else wrote in between), and `update` is the
 * read-modify-write itself: get, apply a function, replace with the read
 * resourceVersion as precondition. Only 409 Conflict is retried (it proves the write
 * did not happen), and only a bounded number of times.
 *
 * @example
 * ```ts
 * import { Conflict, ConfigMaps, Kube } from "effect-kube"
 *
 * const configMaps = Kube.api(ConfigMaps, { namespace: "default" })
 * const bump = Conflict.update(configMaps, "settings", (cm) => ({
 *   ...cm,
 *   data: { ...cm.data, revision: String(Number(cm.data?.revision ?? "0") + 1) }
 * }))
 * ```
 * @since 0.1.0
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Random from "effect/Random"
import * as Schedule from "effect/Schedule"
import { ApiError } from "./Errors.js"
import type * as Kube from "./Kube.js"
import { KubeConfig } from "./KubeConfig.js"
import * as Resource from "./Resource.js"

/**
 * The default retry schedule: 10 ms apart with 10 % jitter, at most 5 retries, as
 * client-go's `retry.DefaultRetry`.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultSchedule: Schedule.Schedule<unknown, unknown> = Schedule.max([
  Schedule.spaced("10 millis").pipe(
    // 10 % jitter, as client-go's (Schedule.jittered scales by 0.8 to 1.2)
    Schedule.modifyDelay(({ duration }) =>
      Effect.map(Random.next, (random) => Duration.millis(Duration.toMillis(duration) * (0.9 + 0.2 * random)))
    )
  ),
  Schedule.recurs(5)
])

/**
 * Runs `effect` again (after `schedule`, default `defaultSchedule`) while it fails with
 * a 409 Conflict. Any other failure, or a conflict once the schedule is exhausted, is
 * returned as is. The effect should read what it writes, so that each attempt starts
 * from the server's current version.
 *
 * @since 0.1.0
 * @category combinators
 */
export const retryOnConflict = <A, E, R>(
  effect: Effect.Effect<A, E, R>,
  schedule: Schedule.Schedule<unknown, unknown> = defaultSchedule
): Effect.Effect<A, E, R> => Effect.retry(effect, { schedule, while: (e: E) => ApiError.isConflict(e) })

/**
 * Options of `update`.
 *
 * @since 0.1.0
 * @category models
 */
export interface UpdateOptions extends Kube.WriteOptions {
  /** Between attempts after a conflict (default `defaultSchedule`). */
  readonly schedule?: Schedule.Schedule<unknown, unknown> | undefined
}

/**
 * Read-modify-write of one object: gets it, computes the next version with `f` (a value
 * or an Effect), and replaces it; a 409 (the object changed in between) starts again
 * from a fresh read. When `f` returns the very object it was given, nothing is written.
 * A missing object fails with ApiError NotFound.
 *
 * @example
 * ```ts
 * import { Conflict, Deployments, Kube } from "effect-kube"
 *
 * const deployments = Kube.api(Deployments, { namespace: "default" })
 * const scaled = Conflict.update(deployments, "web", (d) => ({ ...d, spec: { ...d.spec!, replicas: 3 } }))
 * ```
 * @since 0.1.0
 * @category combinators
 */
export const update = <A, E = never, R = never>(
  api: Kube.Api<A>,
  name: string,
  f: (current: A) => A | Effect.Effect<A, E, R>,
  options?: UpdateOptions
): Effect.Effect<A, Kube.Error | E, R | Kube.Requirements> =>
  retryOnConflict(
    Effect.gen(function*() {
      const found = yield* api.get(name)
      if (Option.isNone(found)) return yield* notFound(api, name)
      const current = found.value
      const computed = f(current)
      const next = Effect.isEffect(computed) ? yield* (computed as Effect.Effect<A, E, R>) : computed
      if (next === current) return current
      return yield* api.replace(name, next, { dryRun: options?.dryRun, fieldManager: options?.fieldManager })
    }),
    options?.schedule ?? defaultSchedule
  )

const notFound = <A>(api: Kube.Api<A>, name: string) =>
  Effect.flatMap(KubeConfig, (config) => {
    const namespace = api.resource.namespaced ? api.namespace ?? config.namespace : undefined
    return Effect.fail(
      new ApiError({
        method: "GET",
        path: Resource.objectPath(api.resource, namespace, name),
        code: 404,
        reason: "NotFound",
        statusMessage: `${api.resource.plural}${api.resource.group === "" ? "" : `.${api.resource.group}`} "${name}" not found`
      })
    )
  })

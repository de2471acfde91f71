/**
 * Leader election on a coordination.k8s.io/v1 Lease, with client-go's semantics, so
 * that one of N replicas does the work and another takes over when it goes away.
 *
 * - A candidate takes the lease when it has no holder, or when its record has not
 *   changed for `leaseDuration` by the candidate's own clock (clocks need not agree).
 * - The leader renews every `retryPeriod`; when a renewal round has not succeeded within
 *   `renewDeadline` it steps down: the protected effect is interrupted (and its
 *   interruption awaited) before any other candidate can acquire, as long as
 *   `renewDeadline + retryPeriod < leaseDuration` (true of the defaults 15 s / 10 s / 2 s).
 *   It then becomes a candidate again.
 * - When the protected effect ends or is interrupted, the lease is released (empty
 *   holder), so that a successor takes over at once (`releaseOnCancel`, default true).
 * - `acquireTime` and `renewTime` are written as MicroTime (six fractional digits), as
 *   the API server requires.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { ConfigMaps, Controller, Kube, LeaderElection, NodeKube } from "effect-kube"
 *
 * const controller = Controller.make({
 *   name: "example.com/config-mirror",
 *   api: Kube.api(ConfigMaps),
 *   reconcile: (cm) => Effect.log(`mirroring ${cm.metadata?.name}`).pipe(Effect.as(Controller.done))
 * })
 *
 * const program = LeaderElection.run(Controller.run(controller), {
 *   lease: { name: "config-mirror", namespace: "operators" },
 *   identity: process.env.POD_NAME ?? crypto.randomUUID()
 * })
 *
 * // call main() to run it against the cluster your kubeconfig names
 * const main = () => Effect.runPromise(program.pipe(Effect.provide(NodeKube.layer)))
 * ```
 * @since 0.1.0
 */
import type * as Effect from "effect/Effect"
import type { ValidationError } from "./Errors.js"
import * as internal from "./internal/runtime/leaderElection.js"
import type { Options, ShardOptions } from "./internal/runtime/leaderElection.js"
import type * as Kube from "./Kube.js"

/**
 * Runs `effect` only while this replica leads: waits to acquire the lease, runs the
 * effect, interrupts it when leadership is lost (then waits to lead again), and returns
 * its result once it completes as leader. Fails with ValidationError before any request
 * when the options are inconsistent; API errors while acquiring or renewing are retried.
 *
 * @since 0.1.0
 * @category running
 */
export const run: <A, E, R>(
  effect: Effect.Effect<A, E, R>,
  options: Options
) => Effect.Effect<A, E | ValidationError, R | Kube.Requirements> = internal.run

export type {
  /**
   * Options of `run`: the Lease, this replica's identity, and client-go's timings
   * (`leaseDuration`, `renewDeadline`, `retryPeriod`), each field documented where it is declared.
   *
   * @since 0.1.0
   * @category models
   */
  Options,
  /**
   * Options of `shards`: those of `run`, plus how many shards and the one this replica contests at once.
   *
   * @since 0.1.0
   * @category models
   */
  ShardOptions
} from "./internal/runtime/leaderElection.js"

/**
 * Scale-out: N replicas split the keys instead of idling behind one leader. Each shard
 * has a Lease; for every shard lease this replica holds, `work(shard)` runs (typically
 * `Controller.run(Controller.make({ ..., shard }))`, which reconciles only the keys
 * whose hash falls in that shard). A replica that goes away loses its leases and
 * another replica takes its shards over.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { ConfigMaps, Controller, Kube, LeaderElection } from "effect-kube"
 *
 * const options = {
 *   name: "example.com/config-mirror",
 *   api: Kube.api(ConfigMaps),
 *   reconcile: () => Effect.succeed(Controller.done)
 * }
 * const podName = process.env.POD_NAME ?? "config-mirror-0" // a StatefulSet's pod
 * const ordinal = Number(podName.slice(podName.lastIndexOf("-") + 1))
 *
 * const program = LeaderElection.shards((shard) => Controller.run(Controller.make({ ...options, shard })), {
 *   lease: { name: "config-mirror", namespace: "operators" },
 *   identity: podName,
 *   shards: 3,
 *   home: ordinal
 * })
 * ```
 * @since 0.1.0
 * @category running
 */
export const shards: <E, R>(
  work: (shard: { readonly index: number; readonly count: number }) => Effect.Effect<unknown, E, R>,
  options: ShardOptions
) => Effect.Effect<never, E | ValidationError, R | Kube.Requirements> = internal.shards

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
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import type { ValidationError } from "./Errors.js"
import * as internal from "./internal/runtime/leaderElection.js"
import type * as Kube from "./Kube.js"

/**
 * Options of `run`.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** The Lease (namespace: the KubeConfig's by default). It is created when absent. */
  readonly lease: { readonly name: string; readonly namespace?: string | undefined }
  /** This replica's identity, unique among candidates (e.g. the pod name). */
  readonly identity: string
  /** How long a lease holds without renewal (default 15 s; written in whole seconds). */
  readonly leaseDuration?: Duration.Input | undefined
  /** How long the leader keeps trying to renew before it steps down (default 10 s). */
  readonly renewDeadline?: Duration.Input | undefined
  /** Between attempts to acquire or renew (default 2 s). */
  readonly retryPeriod?: Duration.Input | undefined
  /** Release the lease when the protected effect ends or is interrupted (default true). */
  readonly releaseOnCancel?: boolean | undefined
}

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

/**
 * Options of `shards`.
 *
 * @since 0.1.0
 * @category models
 */
export interface ShardOptions extends Options {
  /** How many shards (and leases, named `<lease.name>-<index>`). */
  readonly shards: number
  /**
   * The shard this replica contests at once; it stands by for the others and takes one
   * over when its holder goes away. Give each of N replicas a different home (e.g. the
   * StatefulSet ordinal) so that the work spreads.
   */
  readonly home?: number | undefined
}

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

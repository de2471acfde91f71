/**
 * Leader election on a coordination.k8s.io/v1 Lease with client-go's semantics: a
 * candidate takes the lease when it is free or when its record has not changed for
 * `leaseDurationSeconds` of the candidate's own clock (so clocks need not agree); the
 * leader renews every `retryPeriod` and gives up when a renewal round has not
 * succeeded within `renewDeadline`, interrupting the protected effect before another
 * candidate can take over; on shutdown it releases the lease (empty holder) so that a
 * successor takes over at once.
 *
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Random from "effect/Random"
import { ApiError, ValidationError } from "../../Errors.js"
import * as Kube from "../../Kube.js"
import * as MicroTime from "../../MicroTime.js"
import { type Lease, Leases } from "./writtenKinds.js"

/**
 * Options of `run`.
 *
 * Declared here, where `run` and `shards` read it, and exported by `LeaderElection`.
 *
 * @internal
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

type Spec = NonNullable<Lease["spec"]>

const sameRecord = (a: Spec | undefined, b: Spec | undefined) =>
  a !== undefined && b !== undefined && a.holderIdentity === b.holderIdentity && a.renewTime === b.renewTime &&
  a.acquireTime === b.acquireTime && a.leaseTransitions === b.leaseTransitions &&
  a.leaseDurationSeconds === b.leaseDurationSeconds

/** @internal */
export const run = <A, E, R>(
  effect: Effect.Effect<A, E, R>,
  options: Options
): Effect.Effect<A, E | ValidationError, R | Kube.Requirements> =>
  Effect.gen(function*() {
    const leaseDuration = Duration.toMillis(Duration.fromInputUnsafe(options.leaseDuration ?? "15 seconds"))
    const renewDeadline = Duration.toMillis(Duration.fromInputUnsafe(options.renewDeadline ?? "10 seconds"))
    const retryPeriod = Duration.toMillis(Duration.fromInputUnsafe(options.retryPeriod ?? "2 seconds"))
    if (options.identity === "") {
      return yield* new ValidationError({ subject: "LeaderElection identity", detail: "must not be empty" })
    }
    if (options.lease.name === "") {
      return yield* new ValidationError({ subject: "LeaderElection lease.name", detail: "must not be empty" })
    }
    if (!(leaseDuration > renewDeadline && renewDeadline > retryPeriod && retryPeriod > 0)) {
      return yield* new ValidationError({
        subject: "LeaderElection durations",
        detail:
          `leaseDuration (${leaseDuration} ms) must exceed renewDeadline (${renewDeadline} ms), which must exceed retryPeriod (${retryPeriod} ms) > 0`
      })
    }
    const leases = Kube.api(Leases, { namespace: options.lease.namespace })
    const name = options.lease.name
    const identity = options.identity
    const durationSeconds = Math.max(1, Math.ceil(leaseDuration / 1000))
    let observed: Spec | undefined = undefined
    let observedAt = 0

    /** One attempt: `true` when this candidate holds the lease afterwards. */
    const tryAcquireOrRenew = Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const stamp = MicroTime.format(now)
      const found = yield* leases.get(name)
      if (Option.isNone(found)) {
        const spec: Spec = {
          holderIdentity: identity,
          leaseDurationSeconds: durationSeconds,
          acquireTime: stamp,
          renewTime: stamp,
          leaseTransitions: 0
        }
        yield* leases.create({ metadata: { name }, spec })
        observed = spec
        observedAt = now
        return true
      }
      const lease = found.value
      const record = lease.spec ?? {}
      if (!sameRecord(record, observed)) {
        observed = record
        observedAt = now
      }
      const holder = record.holderIdentity ?? ""
      const held = holder !== "" && holder !== identity
      if (held && observedAt + (record.leaseDurationSeconds ?? durationSeconds) * 1000 > now) return false
      const mine = holder === identity
      const spec: Spec = {
        ...record,
        holderIdentity: identity,
        leaseDurationSeconds: durationSeconds,
        acquireTime: mine && record.acquireTime ? record.acquireTime : stamp,
        renewTime: stamp,
        leaseTransitions: mine ? record.leaseTransitions ?? 0 : (record.leaseTransitions ?? 0) + 1
      }
      yield* leases.replace(name, { ...lease, spec })
      observed = spec
      observedAt = now
      return true
    }).pipe(
      Effect.catch((error) =>
        ApiError.isConflict(error) || ApiError.isAlreadyExists(error)
          ? Effect.succeed(false)
          : Effect.logDebug(`LeaderElection ${identity}: ${error.message}`).pipe(Effect.as(false))
      )
    )

    const jittered = Effect.map(Random.nextBetween(1, 1.2), (f) => Duration.millis(retryPeriod * f))

    const acquire = Effect.gen(function*() {
      while (!(yield* tryAcquireOrRenew)) yield* Effect.flatMap(jittered, Effect.sleep)
      yield* Effect.logDebug(`LeaderElection ${identity}: acquired lease ${name}`)
    })

    /** Completes when leadership is lost: a renewal round that did not succeed within renewDeadline. */
    const renewUntilLost = Effect.gen(function*() {
      while (true) {
        yield* Effect.sleep(Duration.millis(retryPeriod))
        const round = Effect.gen(function*() {
          while (!(yield* tryAcquireOrRenew)) yield* Effect.sleep(Duration.millis(retryPeriod))
        })
        const renewed = yield* Effect.timeoutOption(round, Duration.millis(renewDeadline))
        if (Option.isNone(renewed)) {
          yield* Effect.logWarning(`LeaderElection ${identity}: failed to renew lease ${name}, stepping down`)
          return
        }
      }
    })

    /** Gives the lease up (empty holder), if this candidate still holds it. */
    const release = Effect.gen(function*() {
      const found = yield* leases.get(name)
      if (Option.isNone(found) || found.value.spec?.holderIdentity !== identity) return
      const stamp = MicroTime.format(yield* Clock.currentTimeMillis)
      yield* leases.replace(name, {
        ...found.value,
        spec: { ...found.value.spec, holderIdentity: "", leaseDurationSeconds: 1, acquireTime: stamp, renewTime: stamp }
      })
      yield* Effect.logDebug(`LeaderElection ${identity}: released lease ${name}`)
    }).pipe(
      Effect.timeout(Duration.millis(renewDeadline)),
      Effect.catch((error) => Effect.logWarning(`LeaderElection ${identity}: could not release lease ${name}`, error))
    )
    const releaseOnCancel = options.releaseOnCancel ?? true

    while (true) {
      yield* acquire
      const outcome = yield* Effect.raceFirst(
        Effect.map(Effect.exit(effect), (exit) => ({ _tag: "Done" as const, exit })),
        Effect.as(renewUntilLost, { _tag: "Lost" as const })
      ).pipe(Effect.onInterrupt(() => (releaseOnCancel ? release : Effect.void)))
      if (outcome._tag === "Done") {
        if (releaseOnCancel) yield* release
        return yield* Exit.match(outcome.exit, { onFailure: Effect.failCause, onSuccess: Effect.succeed })
      }
    }
  })

/**
 * Options of `shards`.
 *
 * Declared here, where `run` and `shards` read it, and exported by `LeaderElection`.
 *
 * @internal
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

/** One candidate loop per shard lease; shards other than `home` are contested only after a lease duration. @internal */
export const shards = <E, R>(
  work: (shard: { readonly index: number; readonly count: number }) => Effect.Effect<unknown, E, R>,
  options: ShardOptions
): Effect.Effect<never, E | ValidationError, R | Kube.Requirements> =>
  Effect.gen(function*() {
    const count = options.shards
    if (!Number.isInteger(count) || count < 1) {
      return yield* new ValidationError({ subject: "LeaderElection shards", detail: `must be a positive integer (got ${count})` })
    }
    const home = options.home
    if (home !== undefined && !(Number.isInteger(home) && home >= 0 && home < count)) {
      return yield* new ValidationError({ subject: "LeaderElection home", detail: `must be a shard in 0..${count - 1} (got ${home})` })
    }
    const leaseDuration = Duration.fromInputUnsafe(options.leaseDuration ?? "15 seconds")
    const indexes = Array.from({ length: count }, (_, i) => i)
    return yield* Effect.forEach(
      indexes,
      (index) =>
        run(work({ index, count }), { ...options, lease: { ...options.lease, name: `${options.lease.name}-${index}` } })
          .pipe(
            Effect.forever,
            // let each shard's home replica take it first; the others stand by for a takeover
            home === undefined || home === index ? (e) => e : Effect.delay(leaseDuration)
          ),
      { concurrency: "unbounded", discard: true }
    ).pipe(Effect.andThen(Effect.never))
  })

/**
 * The error an effect fails with, for tests that assert on it: a success, a defect, an
 * interruption or more than one failure is itself a test failure, reported with the cause.
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"

export const failureOf = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<E, never, R> =>
  Effect.flatMap(Effect.exit(effect), (exit) => {
    const reasons = Exit.isFailure(exit) ? exit.cause.reasons : []
    const only = reasons.length === 1 ? reasons[0]! : undefined
    return only !== undefined && Cause.isFailReason(only)
      ? Effect.succeed(only.error)
      : Effect.die(new Error(`expected a failure, got ${Exit.isSuccess(exit) ? "success" : Cause.pretty(exit.cause)}`))
  })

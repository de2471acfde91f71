/**
 * Retries of the request path (`execute.ts`): which failures may be sent again (a throttled
 * answer by any verb, a transient one by a read alone) and how long to wait between attempts
 * (`RequestPolicy`'s schedule, or the server's `Retry-After`).
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Pull from "effect/Pull"
import * as Schedule from "effect/Schedule"
import { ApiError } from "../../Errors.js"
import type { Policy } from "../../RequestPolicy.js"
import { reachedIn } from "../transport/contract.js"
import type { RequestError } from "./requestError.js"

/** The server said it did not act on the request: any verb may send it again. */
export const isThrottled = (error: RequestError): error is ApiError =>
  error._tag === "ApiError" &&
  ((error.code === 429 && !isDisruptionBudget(error)) || (error.code === 503 && error.retryAfter !== undefined))

/**
 * An eviction that a PodDisruptionBudget refused (429 with a `DisruptionBudget` cause):
 * a refusal, not a throttle, so it goes to the caller at once (as `kubectl drain` retries
 * evictions on its own schedule).
 */
export const isDisruptionBudget = (error: ApiError): boolean =>
  error.status?.details?.causes?.some((cause) => cause.reason === "DisruptionBudget") === true

/**
 * A read may be sent again after a transport failure, a timeout, a broken answer or a
 * 5xx. A throttle is not one of them (it has a count of its own), nor an invalid URL, a
 * body that cannot be encoded or an answer past a limit, which fail the same way every time.
 */
export const isTransient = (error: RequestError): boolean => {
  switch (error._tag) {
    case "HttpClientError": {
      const tag = error.reason._tag
      return tag !== "InvalidUrlError" && tag !== "EncodeError" && reachedIn(error) === undefined
    }
    case "RequestTimeout":
      return true
    case "ApiError":
      return error.code >= 500 && !isThrottled(error)
    default:
      return false
  }
}

/**
 * The longest wait between throttle retries when the server named none: 500 ms doubling
 * stops here, so that the default 10 retries without a Retry-After wait under a minute in all.
 */
export const maxThrottleBackoffMillis = 8_000

/**
 * How long to wait before a throttled request goes again: what the server asked
 * (`Retry-After`, `retryAfterSeconds`), at most the policy's `maxRetryAfter`, else 500 ms
 * doubling with each attempt up to `maxThrottleBackoffMillis`. Every wait a server's
 * answer asks for goes through here (the watcher's too), so that no answer can make the
 * client sleep for longer.
 */
export const throttleWait = (error: ApiError, attempt: number, policy: Policy): Duration.Duration => {
  const asked = error.retryAfter
  const cap = Duration.toMillis(policy.maxRetryAfter)
  const backoff = Math.min(500 * 2 ** attempt, maxThrottleBackoffMillis)
  return Duration.millis(Math.min(asked === undefined ? backoff : asked * 1000, cap))
}

/**
 * Sends a request again while the policy allows, as one budget for the operation: a
 * throttle (429, or 503 with Retry-After) for any verb, `throttleRetries` times at most,
 * after `throttleWait`; a transient failure of a read (`isTransient`) on the `readRetries`
 * schedule. The two add up rather than multiply: at most 1 + `throttleRetries` + the
 * schedule's recurrences attempts (14 by default). Nothing of this is built until an
 * attempt has failed (`Effect.retry` steps its schedule on every call, which a request
 * that succeeds at once need not pay).
 */
export const retrying = <A, R>(
  effect: Effect.Effect<A, RequestError, R>,
  policy: Policy,
  read: boolean
): Effect.Effect<A, RequestError, R> => {
  const retryable = (error: RequestError) =>
    (isThrottled(error) && policy.throttleRetries > 0) || (read && isTransient(error))
  return Effect.catchIf(effect, retryable, (first) =>
    Effect.gen(function*() {
      let error = first
      let throttles = 0
      let step: ((now: number, input: unknown) => Pull.Pull<[unknown, Duration.Duration], never, unknown>) | undefined
      for (;;) {
        let wait: Duration.Duration
        if (isThrottled(error)) {
          if (throttles >= policy.throttleRetries) return yield* Effect.fail(error)
          wait = throttleWait(error, throttles++, policy)
        } else {
          step ??= yield* Schedule.toStep(policy.readRetries)
          const decision = yield* Pull.catchDone(step(yield* Clock.currentTimeMillis, error), () => Effect.undefined)
          if (decision === undefined) return yield* Effect.fail(error)
          wait = decision[1]
        }
        yield* Effect.sleep(wait)
        const again = yield* Effect.result(effect)
        if (again._tag === "Success") return again.success
        error = again.failure
        if (!retryable(error)) return yield* Effect.fail(error)
      }
    }))
}

/**
 * The client-side rate limit of the request path (`execute.ts`): `RequestPolicy`'s token
 * bucket, waited for before each attempt.
 */
import * as Effect from "effect/Effect"
import type { Policy } from "../../RequestPolicy.js"
import * as telemetry from "./telemetry.js"

/**
 * Waits for the client-side rate limit (`RequestPolicy`'s token bucket) before each attempt,
 * retries included, as client-go's `tryThrottle` does. The wait comes before the request's
 * timeout starts: the timeout bounds the exchange with the server, not the queue in front of
 * it. A wait is put on the span (`kube.client_throttle_ms`).
 */
export const rateLimited = <A, E, R>(effect: Effect.Effect<A, E, R>, policy: Policy): Effect.Effect<A, E, R> => {
  const limiter = policy.rateLimiter
  return limiter === undefined ? effect : Effect.flatMap(
    limiter.take,
    (waited) => waited > 0 ? Effect.andThen(telemetry.annotate({ "kube.client_throttle_ms": waited }), effect) : effect
  )
}

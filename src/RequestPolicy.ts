/**
 * How requests behave when the server is slow or refuses: the per-request timeout, how
 * often a throttled request (429, or 503 with Retry-After) is tried again, and how
 * idempotent reads retry transient failures. Mutations never retry a timeout, a lost
 * response or a 5xx on their own, since the server may have acted; they do retry a 429
 * or a 503 with Retry-After, which say the server did not.
 *
 * The defaults apply without any layer; provide `RequestPolicy.layer(...)` to change them.
 *
 * @example
 * ```ts
 * import { Effect, Schedule } from "effect"
 * import { Kube, NodeKube, Pods, RequestPolicy } from "effect-kube"
 *
 * const program = Kube.api(Pods).list()
 *
 * const policy = RequestPolicy.layer({
 *   timeout: "5 seconds",
 *   throttleRetries: 5,
 *   readRetries: Schedule.max([Schedule.exponential("200 millis"), Schedule.recurs(3)])
 * })
 *
 * // call main() to run it against the cluster your kubeconfig names
 * const main = () => Effect.runPromise(program.pipe(Effect.provide(policy), Effect.provide(NodeKube.layer)))
 * ```
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"

/**
 * The policy in force.
 *
 * @since 0.1.0
 * @category models
 */
export interface Policy {
  /** The longest a non-streaming request (including reading its body) may take; `undefined` for none. Never applies to watches and log follows. */
  readonly timeout: Duration.Duration | undefined
  /** How many times a request the server throttled (429, or 503 with Retry-After) is sent again. */
  readonly throttleRetries: number
  /** The longest wait a Retry-After may impose before the request is tried again. */
  readonly maxRetryAfter: Duration.Duration
  /** The delays between retries of idempotent reads after a transport failure or a 5xx; it also bounds how many. */
  readonly readRetries: Schedule.Schedule<unknown, unknown>
}

/**
 * The defaults: a 30 s timeout, 3 throttle retries (Retry-After capped at 60 s) and 3 read
 * retries after 200 ms, 400 ms and 800 ms (jittered).
 *
 * @since 0.1.0
 * @category constructors
 */
export const defaults: Policy = {
  timeout: Duration.seconds(30),
  throttleRetries: 3,
  maxRetryAfter: Duration.seconds(60),
  readRetries: Schedule.max([Schedule.jittered(Schedule.exponential("200 millis")), Schedule.recurs(3)])
}

/**
 * The policy as a Reference with defaults: operations read it without requiring it.
 * Provide another with `layer`, or for one effect with
 * `Effect.provideService(RequestPolicy.RequestPolicy, RequestPolicy.make({ ... }))`.
 *
 * @since 0.1.0
 * @category tags
 */
export const RequestPolicy: Context.Reference<Policy> = Context.Reference<Policy>("effect-kube/RequestPolicy", {
  defaultValue: () => defaults
})

/**
 * Options of `layer`; anything left out keeps its default.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** `null` turns the timeout off. */
  readonly timeout?: Duration.Input | null | undefined
  readonly throttleRetries?: number | undefined
  readonly maxRetryAfter?: Duration.Input | undefined
  readonly readRetries?: Schedule.Schedule<unknown, unknown> | undefined
}

/**
 * Builds a policy from options over the defaults.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: Options): Policy => ({
  timeout: options.timeout === null
    ? undefined
    : options.timeout === undefined
    ? defaults.timeout
    : Duration.fromInputUnsafe(options.timeout),
  throttleRetries: options.throttleRetries ?? defaults.throttleRetries,
  maxRetryAfter: options.maxRetryAfter === undefined ? defaults.maxRetryAfter : Duration.fromInputUnsafe(options.maxRetryAfter),
  readRetries: options.readRetries ?? defaults.readRetries
})

/**
 * A layer that sets the policy for every operation it is provided to. (A Reference is
 * never required, so the layer provides nothing the types track.)
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options): Layer.Layer<never> => Layer.succeed(RequestPolicy, make(options))

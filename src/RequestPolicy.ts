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
  /**
   * The largest body read whole (every answer but a watch or a followed log), in bytes as
   * they arrive and again after gunzip. A larger one fails with `LimitExceeded` and its
   * connection is closed; an error answer's body is read up to 1 MiB, past which it is left
   * out of the `ApiError`.
   */
  readonly maxResponseBytes: number
  /** The longest line of a watch or a followed log, in bytes. A longer one ends the stream with `LimitExceeded`. */
  readonly maxLineBytes: number
  /**
   * The deepest nesting of an object decoded by a recursive Schema (a CRD's
   * `openAPIV3Schema`, your own `Schema.suspend`): a deeper one fails with `LimitExceeded`
   * rather than overflow the stack. Other objects are not walked (parsing JSON is not
   * recursive), so their depth costs nothing.
   */
  readonly maxJsonDepth: number
}

/**
 * The defaults: a 30 s timeout, 3 throttle retries (Retry-After capped at 60 s), 3 read
 * retries after 200 ms, 400 ms and 800 ms (jittered), bodies up to 256 MiB, lines up to
 * 32 MiB and recursive objects nested up to 1,000 levels.
 *
 * No real cluster comes near these limits: kube-apiserver refuses objects over 3 MiB (etcd
 * over 1.5 MiB), so a watch event is a few MiB at most, and a page of a list (500 objects
 * here) a few MB; Go's JSON decoder, the API server's, refuses nesting beyond 10,000 levels,
 * and real objects and CRD schemas nest a few dozen. An unpaged `list()` of everything in a
 * very large cluster can pass 256 MiB: page it (`listStream`, `limit`) or raise the limit
 * (V8 cannot make a text over 512 MiB).
 *
 * @since 0.1.0
 * @category constructors
 */
export const defaults: Policy = {
  timeout: Duration.seconds(30),
  throttleRetries: 3,
  maxRetryAfter: Duration.seconds(60),
  readRetries: Schedule.max([Schedule.jittered(Schedule.exponential("200 millis")), Schedule.recurs(3)]),
  maxResponseBytes: 256 * 1024 * 1024,
  maxLineBytes: 32 * 1024 * 1024,
  maxJsonDepth: 1000
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
  readonly maxResponseBytes?: number | undefined
  readonly maxLineBytes?: number | undefined
  readonly maxJsonDepth?: number | undefined
}

/**
 * Builds a policy from options over the defaults. A limit that is not a positive whole
 * number (or `Infinity`) throws a `RangeError`.
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
  readRetries: options.readRetries ?? defaults.readRetries,
  maxResponseBytes: limit("maxResponseBytes", options.maxResponseBytes, defaults.maxResponseBytes),
  maxLineBytes: limit("maxLineBytes", options.maxLineBytes, defaults.maxLineBytes),
  maxJsonDepth: limit("maxJsonDepth", options.maxJsonDepth, defaults.maxJsonDepth)
})

/**
 * A limit as given (a positive whole number, or `Infinity` for none), else its default. A
 * policy is built once, where the program is put together: a value that cannot be a limit
 * is a mistake in the program, thrown there.
 */
const limit = (name: string, given: number | undefined, fallback: number): number => {
  if (given === undefined) return fallback
  if (given > 0 && (Number.isSafeInteger(given) || given === Number.POSITIVE_INFINITY)) return given
  throw new RangeError(`RequestPolicy: ${name} must be a positive whole number (or Infinity), got ${String(given)}`)
}

/**
 * A layer that sets the policy for every operation it is provided to. (A Reference is
 * never required, so the layer provides nothing the types track.)
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options): Layer.Layer<never> => Layer.succeed(RequestPolicy, make(options))

/**
 * How requests behave when the server is slow or refuses: the per-request timeout, how
 * often a throttled request (429, or 503 with Retry-After) is tried again, and how
 * idempotent reads retry transient failures. Mutations never retry a timeout, a lost
 * response or a 5xx on their own, since the server may have acted; they do retry a 429
 * or a 503 with Retry-After, which say the server did not.
 *
 * A client-side rate limit (a token bucket: `qps` requests a second on average, bursts of
 * up to `burst`, as client-go's `QPS`/`Burst`) is off by default; `rateLimit:
 * RequestPolicy.clientGo` turns on client-go's 5/10, `RequestPolicy.kubectl` kubectl's
 * 50/300. Every request takes a token before it is sent (each retry too), including the
 * request that opens a watch or a log follow; a stream already open takes none.
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
 *   readRetries: Schedule.max([Schedule.exponential("200 millis"), Schedule.recurs(3)]),
 *   rateLimit: RequestPolicy.clientGo
 * })
 *
 * // call main() to run it against the cluster your kubeconfig names
 * const main = () => Effect.runPromise(program.pipe(Effect.provide(policy), Effect.provide(NodeKube.layer)))
 * ```
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"

/**
 * A client-side rate limit: a token bucket holding up to `burst` tokens (full at first),
 * refilled at `qps` tokens a second. A request takes one token, waiting (on the Effect
 * Clock) until one is there when the bucket is empty; waiting requests are served in the
 * order they came.
 *
 * @since 0.1.0
 * @category models
 */
export interface RateLimit {
  /** Tokens added a second: the sustained rate of requests. A positive number. */
  readonly qps: number
  /** The most tokens the bucket holds: how many requests may go at once after a quiet spell. A positive integer. */
  readonly burst: number
}

/**
 * A rate limit in force: its numbers, and the bucket requests take their tokens from
 * (shared by every request under the same policy).
 *
 * @since 0.1.0
 * @category models
 */
export interface RateLimiter extends RateLimit {
  /** Takes one token, waiting until there is one; the milliseconds it waited. */
  readonly take: Effect.Effect<number>
}

/**
 * The token bucket behind a rate limit, as client-go's (golang.org/x/time/rate under
 * `flowcontrol.NewTokenBucketRateLimiter`): it starts full with `burst` tokens and gains `qps`
 * a second up to `burst`. A request takes a token at once when there is one; otherwise it
 * reserves the next one to come (the count goes below zero, so later requests queue behind it,
 * in order) and sleeps until then on the Effect Clock (a TestClock drives it). A request
 * interrupted while it waits gives its token back. (Here rather than in a module of its own:
 * every module the package root loads costs each cold start.)
 */
class TokenBucket implements RateLimiter {
  /** Tokens in the bucket at `updatedAt`; below zero, the tokens already promised to waiting requests. */
  private tokens: number
  private updatedAt: number | undefined = undefined

  constructor(readonly qps: number, readonly burst: number) {
    if (!(typeof qps === "number" && Number.isFinite(qps) && qps > 0)) {
      throw new RangeError(`RequestPolicy: a rate limit's qps must be a positive number, got ${String(qps)}`)
    }
    if (!(typeof burst === "number" && Number.isSafeInteger(burst) && burst > 0)) {
      throw new RangeError(`RequestPolicy: a rate limit's burst must be a positive integer, got ${String(burst)}`)
    }
    this.tokens = burst
  }

  /** Takes a token, waiting for it when the bucket is empty; the milliseconds waited. */
  readonly take: Effect.Effect<number> = Effect.clockWith((clock) => {
    const wait = this.reserve(clock.currentTimeMillisUnsafe())
    if (wait === 0) return Effect.succeed(0)
    return Effect.as(
      Effect.onInterrupt(Effect.sleep(Duration.millis(wait)), () => Effect.sync(() => this.giveBack())),
      wait
    )
  })

  /** Takes a token now (0) or reserves the next one: how many milliseconds until it is there. */
  private reserve(now: number): number {
    if (this.updatedAt !== undefined && now > this.updatedAt) {
      this.tokens = Math.min(this.burst, this.tokens + ((now - this.updatedAt) * this.qps) / 1000)
    }
    this.updatedAt = Math.max(now, this.updatedAt ?? now)
    this.tokens -= 1
    return this.tokens >= 0 ? 0 : Math.ceil((-this.tokens * 1000) / this.qps)
  }

  private giveBack(): void {
    this.tokens = Math.min(this.burst, this.tokens + 1)
  }
}

/**
 * client-go's defaults (`rest.Config` with `QPS` and `Burst` left at zero): 5 requests a
 * second, bursts of 10.
 *
 * @since 0.1.0
 * @category constructors
 */
export const clientGo: RateLimit = { qps: 5, burst: 10 }

/**
 * What kubectl runs with: 50 requests a second, bursts of 300 (its discovery of every
 * group at start-up is bursty).
 *
 * @since 0.1.0
 * @category constructors
 */
export const kubectl: RateLimit = { qps: 50, burst: 300 }

/**
 * The policy in force.
 *
 * @since 0.1.0
 * @category models
 */
export interface Policy {
  /** The longest a non-streaming request (including reading its body) may take; `undefined` for none. Never applies to watches and log follows. */
  readonly timeout: Duration.Duration | undefined
  /**
   * How many times a request the server throttled (429, or 503 with Retry-After) is sent
   * again, by any verb, mutations included: such an answer says the server did not execute
   * the request (API Priority and Fairness rejected it before it ran), so sending it again
   * cannot do it twice. Mutations retry nothing else on their own. Default 10, client-go's
   * (`rest.Request`'s `maxRetries`).
   */
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
  /** The client-side rate limit; `undefined` (the default) sends as fast as asked. */
  readonly rateLimiter?: RateLimiter | undefined
}

/**
 * The defaults: a 30 s timeout, 10 throttle retries as client-go makes (Retry-After
 * capped at 60 s; without one 500 ms doubling to 8 s), 3 read
 * retries after 200 ms, 400 ms and 800 ms (jittered), bodies up to 256 MiB, lines up to
 * 32 MiB and recursive objects nested up to 1,000 levels.
 *
 * No real cluster comes near these limits: kube-apiserver refuses objects over 3 MiB (etcd
 * over 1.5 MiB), so a watch event is a few MiB at most, and a page of a list (500 objects
 * here) a few MB; Go's JSON decoder, the API server's, refuses nesting beyond 10,000 levels,
 * and real objects and CRD schemas nest a few dozen. An unpaged `list()` of everything in a
 * very large cluster can pass 256 MiB: page it (`listStream`, `limit`) or raise the limit
 * (V8 cannot make a text over 512 MiB). There is no client-side rate limit unless
 * `rateLimit` asks for one.
 *
 * @since 0.1.0
 * @category constructors
 */
export const defaults: Policy = {
  timeout: Duration.seconds(30),
  throttleRetries: 10,
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
  /** A client-side rate limit (`clientGo`, `kubectl` or your own numbers); `null` or left out: none. */
  readonly rateLimit?: RateLimit | null | undefined
}

/**
 * Builds a policy from options over the defaults. A limit that is not a positive whole
 * number (or `Infinity`) throws a `RangeError`. A rate limit gets a bucket of its own
 * here: every request under this policy (or the layer built from it) shares it. Numbers
 * that make no bucket (a `qps` that is not a positive number, a `burst` that is not a
 * positive integer) throw, as a duration that cannot be read does.
 *
 * @example
 * ```ts
 * import { RequestPolicy } from "effect-kube"
 *
 * // client-go's 5 requests a second, bursts of 10
 * const policy = RequestPolicy.make({ rateLimit: RequestPolicy.clientGo })
 * console.log(policy.rateLimiter?.qps) // 5
 * ```
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: Options): Policy => ({
  ...(options.rateLimit === undefined || options.rateLimit === null
    ? {}
    : { rateLimiter: new TokenBucket(options.rateLimit.qps, options.rateLimit.burst) }),
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
 * never required, so the layer provides nothing the types track.) Its rate limit's bucket
 * is made once, with the layer value: every program it is provided to shares it.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options): Layer.Layer<never> => Layer.succeed(RequestPolicy, make(options))

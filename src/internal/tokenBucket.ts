/**
 * The token bucket behind `RequestPolicy`'s rate limit, as client-go's (golang.org/x/time/rate
 * under `flowcontrol.NewTokenBucketRateLimiter`): it starts full with `burst` tokens and gains
 * `qps` a second up to `burst`. A request takes a token at once when there is one; otherwise it
 * reserves the next one to come (the count goes below zero, so later requests queue behind it,
 * in order) and sleeps until then on the Effect Clock (a TestClock drives it). A request
 * interrupted while it waits gives its token back.
 *
 * @internal
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"

/** @internal */
export class TokenBucket {
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

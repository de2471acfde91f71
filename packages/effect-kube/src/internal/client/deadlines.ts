/**
 * The timeout of each attempt of the request path (`execute.ts`): a deadline the transport
 * enforces where it can (`transport/contract.ts`), a timer otherwise, with timers of one
 * length sharing one list.
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import { RequestTimeout } from "../../Errors.js"
import { type Service as KubeConfigService } from "../../KubeConfig.js"
import { type Deadline, enforcesDeadline } from "../transport/contract.js"

/** The Clock every program has unless it provides another (a TestClock, say): the Reference's default. */
export const liveClock = Context.get(Context.empty(), Clock.Clock)

/** The longest delay a JS timer takes; the live Clock treats a longer sleep as never ending. */
export const maxTimerMillis = 2 ** 31 - 1

/**
 * Auth providers whose credentials never wait on something that may hang (a process, the
 * network): with them, the whole of a request until its transport takes the deadline is
 * in memory or a local file.
 */
export const settledAuth: ReadonlySet<string> = new Set(["none", "token", "tokenFile", "basic", "clientCertificate"])

/**
 * Fails with `onTimeout()` when `effect` (one exchange: credentials, request, body) has
 * not completed within `timeout` by `clock` (the fiber's).
 *
 * `Effect.timeoutOrElse` races the effect against a sleep, with fibers forked per request
 * and joined back (on Effect 3 the largest cost of a GET after the span). Under the live
 * Clock it is not needed:
 * - the Node transport (`enforcesDeadline`) with settled credentials: one timer, which
 *   aborts the request and the reading of its body through `currentDeadline`; no fiber;
 * - any other client: the request is forked (one fiber, not two) and the timer interrupts it.
 * Either way the answer is the request's own when it completed (even at the deadline), and
 * once the timer has fired its failure becomes the timeout, after its finalizers ran (the
 * connection it was waiting on is closed). Any other Clock (a TestClock) gets
 * `Effect.timeoutOrElse`, which follows that Clock.
 */
export const withTimeout = <A, E, R>(
  attempt: (deadline: Deadline | undefined) => Effect.Effect<A, E, R>,
  timeout: Duration.Duration,
  onTimeout: () => RequestTimeout,
  clock: Clock.Clock,
  client: object,
  config: KubeConfigService
): Effect.Effect<A, E | RequestTimeout, R> => {
  if (clock !== liveClock) {
    return Effect.timeoutOrElse(attempt(undefined), { duration: timeout, orElse: () => Effect.fail(onTimeout()) })
  }
  const millis = Duration.toMillis(timeout)
  if (!(millis <= maxTimerMillis)) return attempt(undefined)
  return enforcesDeadline.has(client) && settledAuth.has(config.auth.kind)
    ? withDeadline(attempt, millis, onTimeout)
    : withTimer(attempt(undefined), millis, onTimeout)
}

/**
 * One idle timer (unref'd: it keeps no process alive) per deadline length in use, so that
 * Node's list of timers of that length outlives each request's own: arming and clearing a
 * request's timer is then a list append and removal, where a lone timer creates the list,
 * queues it and reschedules libuv's timer, and clearing it drops the list again (per
 * sequential GET, ~10 µs of a profile's CPU). The idle timer re-arms itself while requests
 * used its length since it last fired, and goes away after a quiet spell. Where timers are
 * not Node's (a runtime whose `setTimeout` gives a number), nothing is kept.
 */
export const timerLists = new Map<number, { readonly timer: ReturnType<typeof setTimeout>; used: boolean }>()

/** At most this many lengths keep a list: a deadline of another length arms its timer alone. */
export const maxKeptTimerLists = 4

export const keepTimerList = (millis: number): void => {
  const kept = timerLists.get(millis)
  if (kept !== undefined) {
    kept.used = true
    return
  }
  if (timerLists.size >= maxKeptTimerLists) return
  const timer = setTimeout(() => {
    if (entry.used) {
      entry.used = false
      timer.refresh()
    } else {
      timerLists.delete(millis)
    }
  }, millis)
  if (typeof timer !== "object" || typeof timer.refresh !== "function" || typeof timer.unref !== "function") {
    return clearTimeout(timer)
  }
  timer.unref()
  const entry = { timer, used: false }
  timerLists.set(millis, entry)
}

/** Each attempt gets a deadline of its own, which the request path hands to the transport (`executeKube`). */
export const withDeadline = <A, E, R>(
  attempt: (deadline: Deadline) => Effect.Effect<A, E, R>,
  millis: number,
  onTimeout: () => RequestTimeout
): Effect.Effect<A, E | RequestTimeout, R> =>
  Effect.suspend(() => {
    const deadline: Deadline = { expiresAt: Date.now() + millis, expired: false, abort: undefined }
    keepTimerList(millis)
    const timer = setTimeout(() => {
      deadline.expired = true
      deadline.abort?.()
    }, millis)
    return Effect.catch(
      Effect.onExit(attempt(deadline), () => {
        clearTimeout(timer)
        return Effect.void
      }),
      (error) => Effect.fail(deadline.expired ? onTimeout() : error)
    )
  })

export const withTimer = <A, E, R>(
  effect: Effect.Effect<A, E, R>,
  millis: number,
  onTimeout: () => RequestTimeout
): Effect.Effect<A, E | RequestTimeout, R> =>
  Effect.flatMap(Effect.forkChild(effect), (fiber) =>
    Effect.callback<A, E | RequestTimeout>((resume) => {
      let timedOut = false
      const timer = setTimeout(() => {
        timedOut = true
        fiber.interruptUnsafe(fiber.id)
      }, millis)
      fiber.addObserver((exit) => {
        clearTimeout(timer)
        resume(timedOut && Exit.isFailure(exit) ? Effect.fail(onTimeout()) : exit)
      })
      return Effect.asVoid(Fiber.interrupt(fiber))
    }))

/**
 * The fake cluster's sense of time: what "now" is, and running something later. The
 * layer and `serve` take it from the Effect `Clock` they run under, so a test on the
 * `TestClock` steps the kubelet, grace periods, watch timeouts and every other timer of
 * the fake with `TestClock.adjust`; `makeServer` (no Effect) uses the machine's clock.
 *
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"

/** @internal */
export interface FakeClock {
  /** Milliseconds since the epoch. */
  readonly now: () => number
  /** Runs `f` once `ms` (more than 0) have passed; the returned function cancels it. */
  readonly after: (ms: number, f: () => void) => () => void
  /** Whether time moves only when a test moves it (the `TestClock` of `it.effect`). */
  readonly stepped?: boolean | undefined
}

/** The longest delay `setTimeout` takes (a longer one would fire at once). */
const maxTimerMs = 2 ** 31 - 1

/** Runs `f` after `ms` on the machine's timers, in steps when longer than they take; answers its cancel. */
const machineTimer = (ms: number, f: () => void, unref: boolean): () => void => {
  let timer: ReturnType<typeof setTimeout>
  const wait = (left: number) => {
    timer = left > maxTimerMs ? setTimeout(() => wait(left - maxTimerMs), maxTimerMs) : setTimeout(f, left)
    if (unref) timer.unref?.()
  }
  wait(ms)
  return () => clearTimeout(timer)
}

/** The machine's clock; its timers never keep the process alive. @internal */
export const realClock: FakeClock = {
  now: () => Date.now(),
  after: (ms, f) => machineTimer(ms, f, true)
}

/**
 * The Effect `Clock` of `context` (the `TestClock` in `it.effect`): each timer is a fiber
 * sleeping on it, forked with `context` so that the test clock's scheduler sees it. On
 * the default `Clock`, whose sleeps are the machine's timers, the timers are those
 * directly (forking a fiber for the kubelet's start timer was ~60 µs of every pod's
 * create); they keep the process alive, as the sleeps would.
 *
 * @internal
 */
export const effectClock = (context: Context.Context<never>): FakeClock => {
  const clock = Context.get(context, Clock.Clock)
  if (clock === Context.get(Context.empty(), Clock.Clock)) {
    return { now: () => Date.now(), after: (ms, f) => machineTimer(ms, f, false) }
  }
  const run = Effect.runCallbackWith(context)
  return {
    // a TestClock is the Clock with adjust (effect/testing/TestClock)
    stepped: typeof (clock as { readonly adjust?: unknown }).adjust === "function",
    now: () => clock.currentTimeMillisUnsafe(),
    after: (ms, f) => {
      let cancelled = false
      const interrupt = run(Effect.andThen(
        clock.sleep(Duration.millis(ms)),
        Effect.sync(() => {
          if (!cancelled) f()
        })
      ))
      return () => {
        cancelled = true
        interrupt()
      }
    }
  }
}

/** A time as the API server writes it: RFC 3339 in UTC, whole seconds. @internal */
export const rfc3339 = (ms: number): string => {
  // a write asks for the time several times within the same second
  const second = Math.floor(ms / 1000)
  if (second !== lastSecond) {
    lastSecond = second
    lastText = new Date(second * 1000).toISOString().replace(/\.\d{3}Z$/, "Z")
  }
  return lastText
}

let lastSecond = NaN
let lastText = ""

/**
 * Injected faults: the next matching requests fail with a Status, have their
 * connection reset (before the answer or part way through its body), are answered
 * late, or are never answered. Each fault is used up by the requests it applies to.
 *
 * @internal
 */
import { ConnectionReset, type RawRequest, type RawResponse, statusResponse } from "./http.js"
import * as Status from "./statusBodies.js"
import type { Control, RequestMatch } from "../types.js"

/** @internal */
export interface Fault {
  readonly kind: "fail" | "reset" | "delay" | "stall" | "warn"
  remaining: number
  readonly match: RequestMatch | undefined
  readonly status?: Status.StatusError
  readonly afterBytes?: number | undefined
  readonly ms?: number
  readonly text?: string
  readonly retryAfterSeconds?: number | undefined
}

type Matching = {
  readonly count?: number | undefined
  readonly match?: RequestMatch | undefined
  readonly method?: string | ReadonlyArray<string> | undefined
  readonly path?: string | RegExp | undefined
}

/** The fault's count, checked: a whole number from 1, or `Infinity` (until `clearFaults()`). */
const countOf = (control: string, count: unknown): number => {
  if (count === undefined) return 1
  if (count === Infinity || (typeof count === "number" && Number.isInteger(count) && count >= 1)) return count
  throw new TypeError(
    `FakeCluster.${control}: count must be a whole number from 1, or Infinity for every matching request until ` +
      `clearFaults() (got ${String(count)})`
  )
}

/** `match`, `method` and `path` together: a request matches when each given one does. */
const matcherOf = (control: string, options: Matching): RequestMatch | undefined => {
  const { match, method, path } = options
  if (method === undefined && path === undefined) return match
  const methods = method === undefined ? undefined : new Set((typeof method === "string" ? [method] : method).map((m) => m.toUpperCase()))
  if (path !== undefined && typeof path !== "string" && !(path instanceof RegExp)) {
    throw new TypeError(`FakeCluster.${control}: path must be a path prefix (a string) or a RegExp`)
  }
  return (m, p, q) =>
    (methods === undefined || methods.has(m)) &&
    (path === undefined || (typeof path === "string" ? p.startsWith(path) : path.test(p))) &&
    (match === undefined || match(m, p, q))
}

/** Whether effect-kube sends a request answered with this status again, after a wait on the Effect Clock. */
const retried = (method: string, status: Status.StatusError, retryAfterSeconds: number | undefined): boolean =>
  status.code === 429 || (status.code === 503 && retryAfterSeconds !== undefined) || (method === "GET" && status.code >= 500)

/** The pending faults of one fake, oldest first. @internal */
export class Faults {
  private pending: Array<Fault> = []
  private warned = false

  /** `stepped`: the fake runs on a TestClock, so a client's retry waits until the test moves it. */
  constructor(private readonly stepped: boolean = false) {}

  failNext(options: Parameters<Control["failNext"]>[0]): void {
    const status = options?.status
    if (typeof status !== "number" || !Number.isInteger(status) || status < 400 || status > 599) {
      throw new TypeError(
        `FakeCluster.failNext: status must be an HTTP error code from 400 to 599, as in failNext({ status: 503 }) ` +
          `(got ${JSON.stringify(status)})`
      )
    }
    this.pending.push({
      kind: "fail",
      remaining: countOf("failNext", options.count),
      match: matcherOf("failNext", options),
      status: Status.forCode(status, options),
      retryAfterSeconds: options.retryAfterSeconds
    })
  }

  /**
   * Once per fake on a TestClock: a failure the client will retry after a backoff, which
   * waits on that clock, so a test that does not move it waits until vitest's timeout.
   */
  private warnOfRetry(method: string, path: string, fault: Fault): void {
    if (!this.stepped || this.warned || fault.status === undefined) return
    if (!retried(method, fault.status, fault.retryAfterSeconds)) return
    this.warned = true
    console.warn(
      `FakeCluster.failNext answered ${method} ${path} with ${fault.status.code}. effect-kube sends a read that ` +
        "gets a 5xx (and any request that gets a 429, or a 503 with retryAfterSeconds) again after a backoff on " +
        "the Effect Clock, and this fake runs on a TestClock (it.effect), so the retry waits until the test moves " +
        "the clock: fork the read and TestClock.adjust(\"1 minute\"), use it.live, or fail every attempt with " +
        "count: Infinity (until clearFaults()). This is said once per fake."
    )
  }

  resetNext(options: Parameters<Control["resetNext"]>[0] = {}): void {
    this.pending.push({
      kind: "reset",
      remaining: countOf("resetNext", options.count),
      match: matcherOf("resetNext", options),
      afterBytes: options.afterBytes
    })
  }

  delayNext(options: Parameters<Control["delayNext"]>[0]): void {
    this.pending.push({
      kind: "delay",
      remaining: countOf("delayNext", options.count),
      match: matcherOf("delayNext", options),
      ms: options.ms
    })
  }

  stallNext(options: Parameters<Control["stallNext"]>[0] = {}): void {
    this.pending.push({ kind: "stall", remaining: countOf("stallNext", options.count), match: matcherOf("stallNext", options) })
  }

  warnNext(options: Parameters<Control["warnNext"]>[0]): void {
    this.pending.push({
      kind: "warn",
      remaining: countOf("warnNext", options.count),
      match: matcherOf("warnNext", options),
      text: options.text
    })
  }

  clear(): void {
    this.pending = []
  }

  /** The first pending fault that applies to a request, used up by one. */
  take(method: string, path: string, query: Record<string, string>): Fault | undefined {
    for (let i = 0; i < this.pending.length; i++) {
      const f = this.pending[i]!
      if (f.match !== undefined && !f.match(method, path, query)) continue
      f.remaining--
      if (f.remaining <= 0) this.pending.splice(i, 1)
      if (f.kind === "fail") this.warnOfRetry(method, path, f)
      return f
    }
    return undefined
  }
}

/**
 * Answers a request under a fault: a failure answers without carrying the request out,
 * a stall never answers (the client gives up), a delay answers late and a reset marks
 * the answer for the transport to cut.
 *
 * @internal
 */
export const withFault = async (
  fault: Fault | undefined,
  request: RawRequest,
  answer: () => Promise<RawResponse>
): Promise<RawResponse> => {
  if (fault?.kind === "fail") return statusResponse(fault.status!)
  if (fault?.kind === "stall") {
    await waitForAbort(request.signal)
    throw new ConnectionReset()
  }
  const response = await answer()
  if (fault?.kind === "delay") await sleep(fault.ms!, request.signal)
  if (fault?.kind === "reset") return { ...response, reset: { afterBytes: fault.afterBytes } }
  if (fault?.kind === "warn") {
    return { ...response, headers: { ...response.headers, warning: warningHeader(fault.text!) } }
  }
  return response
}

const sleep = (ms: number, signal: AbortSignal | undefined): Promise<void> =>
  new Promise((resolve) => {
    if (signal?.aborted) return resolve()
    const t = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort)
      resolve()
    }, ms)
    const onAbort = () => {
      clearTimeout(t)
      resolve()
    }
    signal?.addEventListener("abort", onAbort, { once: true })
  })

const waitForAbort = (signal: AbortSignal | undefined): Promise<void> =>
  new Promise((resolve) => {
    if (signal === undefined) return
    if (signal.aborted) return resolve()
    signal.addEventListener("abort", () => resolve(), { once: true })
  })

/**
 * A warning as the API server writes it: code 299, no agent, the text quoted; a line break
 * goes out as a space, as Go's HTTP server writes one in a header value.
 *
 * @internal
 */
export const warningHeader = (text: string): string =>
  `299 - "${text.replace(/[\\"\r\n]/g, (c) => (c === "\r" || c === "\n" ? " " : `\\${c}`))}"`

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
}

/** The pending faults of one fake, oldest first. @internal */
export class Faults {
  private pending: Array<Fault> = []

  failNext(options: Parameters<Control["failNext"]>[0]): void {
    this.pending.push({
      kind: "fail",
      remaining: options.count ?? 1,
      match: options.match,
      status: Status.forCode(options.status, options)
    })
  }

  resetNext(options: Parameters<Control["resetNext"]>[0] = {}): void {
    this.pending.push({
      kind: "reset",
      remaining: options.count ?? 1,
      match: options.match,
      afterBytes: options.afterBytes
    })
  }

  delayNext(options: Parameters<Control["delayNext"]>[0]): void {
    this.pending.push({ kind: "delay", remaining: options.count ?? 1, match: options.match, ms: options.ms })
  }

  stallNext(options: Parameters<Control["stallNext"]>[0] = {}): void {
    this.pending.push({ kind: "stall", remaining: options.count ?? 1, match: options.match })
  }

  warnNext(options: Parameters<Control["warnNext"]>[0]): void {
    this.pending.push({ kind: "warn", remaining: options.count ?? 1, match: options.match, text: options.text })
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

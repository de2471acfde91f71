/**
 * The peak RSS of the process while an effect runs, sampled every 2 ms from a worker
 * thread: the worker's loop goes on while the main thread is busy in a synchronous parse,
 * which a timer on the main thread would not see. `process.resourceUsage().maxRSS` is the
 * peak of the whole process's life, useless for one case among others.
 */
import * as Effect from "effect/Effect"
import type * as Exit from "effect/Exit"
import { Worker } from "node:worker_threads"

const sampler = `
const { workerData } = require("node:worker_threads")
const peak = new Float64Array(workerData)
setInterval(() => { const rss = process.memoryUsage.rss(); if (rss > peak[0]) peak[0] = rss }, 2)
`

let shared: Float64Array | undefined

const peakCell = (): Float64Array => {
  if (shared !== undefined) return shared
  const buffer = new SharedArrayBuffer(8)
  const worker = new Worker(sampler, { eval: true, workerData: buffer })
  worker.unref()
  shared = new Float64Array(buffer)
  return shared
}

/** What a case cost: its time, and how far the RSS rose above where it was at the start. */
export interface Cost<A, E> {
  readonly exit: Exit.Exit<A, E>
  readonly ms: number
  readonly peakGrowthBytes: number
}

/** Runs `effect` and measures its time and peak RSS growth (a failure is in `exit`). */
export const measure = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<Cost<A, E>, never, R> =>
  Effect.gen(function*() {
    const peak = peakCell()
    const before = process.memoryUsage.rss()
    peak[0] = before
    const start = performance.now()
    const exit = yield* Effect.exit(effect)
    const ms = performance.now() - start
    const after = Math.max(peak[0]!, process.memoryUsage.rss())
    return { exit, ms, peakGrowthBytes: after - before }
  })

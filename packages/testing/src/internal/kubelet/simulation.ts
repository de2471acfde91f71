/**
 * The controls that play the kubelet and the job controller for a test: a pod's phase
 * with the conditions and container statuses a kubelet reports, containers ending (and
 * restarting), jobs completing or failing. (The kubelet and controllers that do this by
 * themselves are in `controllers/`.)
 *
 * @internal
 */
import { podWithPhase } from "./kubelet.js"
import * as Controllers from "../controllers/index.js"
import { child, drop, type JsonObject } from "../store/json.js"
import type { FakeState } from "../store/state.js"
import { containerLog, containerNames } from "../writes/subresources.js"
import type { FakeObject } from "../types.js"
import { serverUpdate, updateObject } from "../writes/writes.js"

/** Sets a pod's phase (see `Control.setPodPhase`). @internal */
export const setPodPhase = (
  state: FakeState,
  namespace: string,
  name: string,
  phase: "Pending" | "Running" | "Succeeded" | "Failed" | "Unknown",
  options: { readonly reason?: string | undefined; readonly message?: string | undefined } = {}
): FakeObject => {
  const { entry, kind } = state.refEntry({ apiVersion: "v1", kind: "Pod", namespace, name })
  if (entry === undefined) throw new Error(`setPodPhase: pod ${namespace}/${name} does not exist`)
  if (phase === "Succeeded" || phase === "Failed") {
    const byContainer = state.logs.get(entry.uid)
    for (const c of containerNames(entry.obj)) {
      const log = byContainer?.get(c)
      if (log !== undefined && !log.ended) log.end(phase === "Succeeded" ? 0 : 1)
    }
  }
  const next = podWithPhase(state, entry, phase, options)
  serverUpdate(state, kind, entry, next)
  return next as unknown as FakeObject
}

/** Ends a container, or restarts it (see `Control.endContainer`). @internal */
export const endContainer = (
  state: FakeState,
  namespace: string,
  pod: string,
  options: {
    readonly container?: string | undefined
    readonly exitCode?: number | undefined
    readonly restart?: boolean | undefined
  } = {}
): void => {
  const { entry, kind } = state.refEntry({ apiVersion: "v1", kind: "Pod", namespace, name: pod })
  if (entry === undefined) throw new Error(`endContainer: pod ${namespace}/${pod} does not exist`)
  const { log, name } = containerLog(state, entry, options.container, true)
  const exitCode = options.exitCode ?? 0
  log.end(exitCode)
  const next = entry.copy()
  const status = child(next, "status")
  const statuses = Array.isArray(status.containerStatuses) ? (status.containerStatuses as Array<JsonObject>) : []
  const at = state.now()
  let found = statuses.find((c) => c.name === name)
  if (found === undefined) {
    found = { name, ready: false, restartCount: 0, image: "", imageID: "", started: false }
    statuses.push(found)
  }
  const terminated = { exitCode, reason: exitCode === 0 ? "Completed" : "Error", finishedAt: at }
  if (options.restart === true) {
    found.lastState = { terminated }
    found.restartCount = (typeof found.restartCount === "number" ? found.restartCount : 0) + 1
    found.state = { running: { startedAt: at } }
    log.restart()
  } else {
    found.state = { terminated }
    found.ready = false
    found.started = false
  }
  status.containerStatuses = statuses
  serverUpdate(state, kind, entry, next)
}

/** Marks a Job complete (see `Control.completeJob`). @internal */
export const completeJob = (state: FakeState, namespace: string, name: string): FakeObject =>
  updateObject(state, { apiVersion: "batch/v1", kind: "Job", namespace, name }, (job) => {
    const obj = job as unknown as JsonObject
    const status = child(obj, "status")
    const at = state.now()
    const completions = (obj.spec as JsonObject | undefined)?.completions
    status.startTime ??= at
    status.completionTime = at
    status.succeeded = typeof completions === "number" ? completions : 1
    status.ready = 0
    drop(status, "active")
    const reached = {
      status: "True",
      lastProbeTime: at,
      lastTransitionTime: at,
      reason: "CompletionsReached",
      message: "Reached expected number of succeeded pods"
    }
    status.conditions = [{ type: "SuccessCriteriaMet", ...reached }, { type: "Complete", ...reached }]
  })

/** Marks a Job failed (see `Control.failJob`). @internal */
export const failJob = (
  state: FakeState,
  namespace: string,
  name: string,
  options: { readonly reason?: string | undefined; readonly message?: string | undefined } = {}
): FakeObject =>
  updateObject(state, { apiVersion: "batch/v1", kind: "Job", namespace, name }, (job) => {
    const status = child(job as unknown as JsonObject, "status")
    const at = state.now()
    const reason = options.reason ?? "BackoffLimitExceeded"
    const message = options.message ?? "Job has reached the specified backoff limit"
    status.startTime ??= at
    status.failed = typeof status.failed === "number" ? status.failed + 1 : 1
    status.ready = 0
    drop(status, "active")
    status.conditions = [
      { type: "FailureTarget", status: "True", lastProbeTime: at, lastTransitionTime: at, reason, message },
      { type: "Failed", status: "True", lastProbeTime: at, lastTransitionTime: at, reason, message }
    ]
  })

/** Installs the controllers and the kubelet the options ask for (see `controllers/index.ts`). @internal */
export const install = (state: FakeState): void => Controllers.install(state)

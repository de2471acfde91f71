/**
 * The Job controller (and the TTL-after-finished controller): pods up to `parallelism`
 * until `completions` have succeeded (one, when unset), each tracked with the
 * `batch.kubernetes.io/job-tracking` finalizer until counted; failed pods replaced after
 * an exponential back-off (10 s, doubling, at most 6 min) until `backoffLimit` (default
 * 6) is passed; `activeDeadlineSeconds`; `suspend`; Indexed completion; the status
 * (`active`, `ready`, `terminating`, `succeeded`, `failed`, `startTime`,
 * `completionTime`) and the conditions kubectl waits on (SuccessCriteriaMet and Complete,
 * FailureTarget and Failed, Suspended). A finished Job with `ttlSecondsAfterFinished` is
 * deleted when that has passed. Every delay is on the fake's clock.
 *
 * @internal
 */
import { isObject, type JsonObject } from "../store/json.js"
import type { KindInfo } from "../store/kinds.js"
import type { FakeState } from "../store/state.js"
import type { Entry } from "../store/store.js"
import {
  builtinKind,
  conditionOf,
  controllerOf,
  createObject,
  dropFinalizer,
  editObject,
  entryOf,
  isDeleting,
  isSeed,
  isUsableSelector,
  metadataOf,
  removeObject,
  selectorMatches
} from "./api.js"
import { claimPods, deletionOrder, isActive, isFinished, isReady, phaseOf, podFromTemplate, podKind } from "./pods.js"
import { keyFor, splitKey, WorkQueue } from "./queue.js"

const trackingFinalizer = "batch.kubernetes.io/job-tracking"
const indexAnnotation = "batch.kubernetes.io/job-completion-index"

const jobKind = (state: FakeState): KindInfo => builtinKind(state, "batch", "v1", "jobs")

const isTrue = (obj: JsonObject, type: string): boolean => conditionOf(obj.status, type)?.status === "True"

/** A Job that is done: Complete or Failed. @internal */
export const isJobFinished = (job: JsonObject): boolean => isTrue(job, "Complete") || isTrue(job, "Failed")

const hasFinalizer = (pod: Entry): boolean => {
  const finalizers = metadataOf(pod.obj).finalizers
  return Array.isArray(finalizers) && finalizers.includes(trackingFinalizer)
}

const indexOf = (pod: Entry): number | undefined => {
  const annotations = metadataOf(pod.obj).annotations
  const v = isObject(annotations) ? Number(annotations[indexAnnotation]) : NaN
  return Number.isInteger(v) ? v : undefined
}

/** `0,2-4`: a set of completion indexes as the Job's status writes them. */
const formatIndexes = (indexes: ReadonlySet<number>): string => {
  const sorted = [...indexes].sort((a, b) => a - b)
  const parts: Array<string> = []
  for (let i = 0; i < sorted.length; i++) {
    let j = i
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j]! + 1) j++
    parts.push(i === j ? String(sorted[i]) : `${sorted[i]}-${sorted[j]}`)
    i = j
  }
  return parts.join(",")
}

const parseIndexes = (text: unknown): Set<number> => {
  const out = new Set<number>()
  if (typeof text !== "string" || text === "") return out
  for (const part of text.split(",")) {
    const [a, b] = part.split("-").map(Number)
    for (let i = a!; i <= (b ?? a!); i++) out.add(i)
  }
  return out
}

/** @internal */
export const installJobs = (state: FakeState): void => {
  /** Pods the controller itself deleted (excess, suspended, finished job): not counted as failures. */
  const deletedByUs = new Set<string>()
  /** job uid -> when its last pod failure was counted (clock ms), for the back-off. */
  const lastFailure = new Map<string, number>()
  const queue = new WorkQueue(state, (key) => sync(state, key, queue, deletedByUs, lastFailure))
  const podChanged = (pod: Entry) => {
    const ref = controllerOf(pod.obj)
    if (ref?.kind === "Job" && typeof ref.name === "string") queue.add(keyFor(pod.namespace, ref.name))
  }
  state.onWrite((kind, entry, prev) => {
    if (isSeed(entry, prev)) return
    if (kind.group === "batch" && kind.plural === "jobs") queue.add(keyFor(entry.namespace, entry.name))
    else if (kind.group === "" && kind.plural === "pods") podChanged(entry)
  })
  state.onRemove((kind, removed) => {
    if (kind.group === "" && kind.plural === "pods") {
      podChanged(removed)
      deletedByUs.delete(removed.uid)
    } else if (kind.group === "batch" && kind.plural === "jobs") lastFailure.delete(removed.uid)
  })
}

const sync = (
  state: FakeState,
  key: string,
  queue: WorkQueue,
  deletedByUs: Set<string>,
  lastFailure: Map<string, number>
): void => {
  const { name, namespace } = splitKey(key)
  const kind = jobKind(state)
  const job = entryOf(state, kind, namespace, name)
  if (job === undefined) return
  const spec = isObject(job.obj.spec) ? job.obj.spec : {}
  const selector = isObject(spec.selector) ?
    spec.selector :
    { matchLabels: { "batch.kubernetes.io/controller-uid": job.uid } }
  if (!isUsableSelector(selector)) return
  const nowMs = state.clock.now()
  const at = state.now()
  const pods = claimPods(state, job, selector)
  const old = isObject(job.obj.status) ? job.obj.status : {}
  let succeeded = typeof old.succeeded === "number" ? old.succeeded : 0
  let failed = typeof old.failed === "number" ? old.failed : 0
  const indexed = spec.completionMode === "Indexed"
  const completed = parseIndexes(old.completedIndexes)
  const remove = (pod: Entry) => {
    deletedByUs.add(pod.uid)
    removeObject(state, podKind(state), pod)
  }

  // count the finished pods still carrying the tracking finalizer, then let them go
  let newlyFailed = false
  for (const pod of pods) {
    if (!hasFinalizer(pod)) continue
    const finished = isFinished(pod.obj)
    if (!finished && !(isDeleting(pod) && deletedByUs.has(pod.uid))) continue
    if (!deletedByUs.has(pod.uid)) {
      if (phaseOf(pod.obj) === "Succeeded") {
        succeeded++
        const index = indexOf(pod)
        if (index !== undefined) completed.add(index)
      } else if (finished) {
        failed++
        newlyFailed = true
      }
    }
    dropFinalizer(state, podKind(state), pod, trackingFinalizer)
  }
  if (newlyFailed) lastFailure.set(job.uid, nowMs)
  if (indexed) succeeded = Math.max(succeeded, completed.size)

  const tracked = [...pods]
  const current = () =>
    tracked.map((p) => entryOf(state, podKind(state), p.namespace, p.name)).filter(
      (p, i): p is Entry => p !== undefined && p.uid === tracked[i]!.uid
    )
  const finishedAlready = isJobFinished(job.obj)
  const suspended = spec.suspend === true
  const parallelism = typeof spec.parallelism === "number" ? spec.parallelism : 1
  const completions = typeof spec.completions === "number" ? spec.completions : undefined
  const backoffLimit = typeof spec.backoffLimit === "number" ? spec.backoffLimit : 6
  const startTime = typeof old.startTime === "string" ? old.startTime : undefined
  const deadline = typeof spec.activeDeadlineSeconds === "number" && startTime !== undefined ?
    Date.parse(startTime) + spec.activeDeadlineSeconds * 1000 :
    undefined

  let outcome: { readonly type: "Complete" | "Failed"; readonly reason: string; readonly message: string } | undefined
  if (!finishedAlready) {
    let active = current().filter(isActive)
    if (failed > backoffLimit) {
      outcome = {
        type: "Failed",
        reason: "BackoffLimitExceeded",
        message: "Job has reached the specified backoff limit"
      }
    } else if (deadline !== undefined && deadline <= nowMs && !suspended) {
      outcome = { type: "Failed", reason: "DeadlineExceeded", message: "Job was active longer than specified deadline" }
    } else if (completions !== undefined ? succeeded >= completions : succeeded > 0 && active.length === 0) {
      outcome = { type: "Complete", reason: "CompletionsReached", message: "Reached expected number of succeeded pods" }
    }
    if (outcome !== undefined || suspended) {
      for (const pod of active) remove(pod)
    } else {
      const want = completions !== undefined ?
        Math.min(parallelism, completions - succeeded) :
        succeeded > 0 ?
        0 :
        parallelism
      const missing = want - active.length
      if (missing > 0) {
        const since = lastFailure.get(job.uid)
        const backoff = failed > 0 && since !== undefined ?
          Math.min(10_000 * 2 ** (failed - 1), 360_000) - (nowMs - since) :
          0
        if (backoff > 0) {
          queue.addAfter(key, backoff)
        } else {
          const taken = new Set(active.map(indexOf).filter((i): i is number => i !== undefined))
          let next = 0
          for (let i = 0; i < missing; i++) {
            let extra: Parameters<typeof podFromTemplate>[2] = { finalizers: [trackingFinalizer] }
            if (indexed) {
              while (completed.has(next) || taken.has(next)) next++
              if (completions !== undefined && next >= completions) break
              const index = String(next)
              taken.add(next)
              extra = {
                ...extra,
                generateName: `${job.name}-${index}-`,
                annotations: { [indexAnnotation]: index },
                labels: { [indexAnnotation]: index, ...jobLabels(job) },
                spec: { hostname: `${job.name}-${index}` }
              }
            } else {
              extra = { ...extra, labels: jobLabels(job) }
            }
            const pod = podFromTemplate(job, spec.template, extra)
            // a pod its selector would not select (a template validation refuses) it would release as made
            if (!selectorMatches(selector, metadataOf(pod).labels)) break
            const created = createObject(state, podKind(state), pod)
            if (created !== undefined) tracked.push(created)
          }
        }
      } else if (missing < 0) {
        for (const pod of deletionOrder(active).slice(0, -missing)) remove(pod)
      }
      active = current().filter(isActive)
    }
    if (deadline !== undefined && outcome === undefined && !suspended) queue.addAfter(key, deadline - nowMs)
  }

  const latestPods = current()
  const active = latestPods.filter(isActive)
  const latest = entryOf(state, kind, namespace, name)
  if (latest === undefined || latest.uid !== job.uid) return
  const updated = editObject(state, kind, latest, (draft) => {
    const status = isObject(draft.status) ? draft.status : (draft.status = {})
    if (!finishedAlready) {
      if (!suspended && status.startTime === undefined) status.startTime = at
      status.active = active.length > 0 ? active.length : undefined
      status.ready = active.filter((p) => isReady(p.obj)).length
      status.terminating = latestPods.filter((p) => isDeleting(p) && !isFinished(p.obj)).length
      status.succeeded = succeeded > 0 ? succeeded : undefined
      status.failed = failed > 0 ? failed : undefined
      status.uncountedTerminatedPods = {}
      if (indexed) status.completedIndexes = formatIndexes(completed)
      const conditions = Array.isArray(status.conditions) ? status.conditions as Array<JsonObject> : []
      const suspendedCondition = conditions.find((c) => c.type === "Suspended")
      if (suspended && suspendedCondition?.status !== "True") {
        status.conditions = [...conditions.filter((c) => c.type !== "Suspended"), {
          type: "Suspended",
          status: "True",
          lastProbeTime: at,
          lastTransitionTime: at,
          reason: "JobSuspended",
          message: "Job suspended"
        }]
        status.startTime = undefined
      } else if (!suspended && suspendedCondition?.status === "True") {
        status.conditions = conditions.map((c) =>
          c.type === "Suspended" ?
            {
              ...c,
              status: "False",
              lastProbeTime: at,
              lastTransitionTime: at,
              reason: "JobResumed",
              message: "Job resumed"
            } :
            c
        )
      }
      if (outcome !== undefined) {
        const reached = {
          status: "True",
          lastProbeTime: at,
          lastTransitionTime: at,
          reason: outcome.reason,
          message: outcome.message
        }
        const first = outcome.type === "Complete" ? "SuccessCriteriaMet" : "FailureTarget"
        status.conditions = [
          ...((status.conditions as Array<JsonObject> | undefined) ?? []),
          { type: first, ...reached },
          { type: outcome.type, ...reached }
        ]
        if (outcome.type === "Complete") status.completionTime = at
        status.active = undefined
        status.ready = 0
      }
    } else {
      status.succeeded = succeeded > 0 ? succeeded : status.succeeded
      status.failed = failed > 0 ? failed : status.failed
    }
  })
  if (isJobFinished(updated.obj)) expireAfterFinished(state, queue, updated, key)
}

/** The labels every pod of a Job carries (the API server puts them in the template too). */
const jobLabels = (job: Entry): JsonObject => ({
  "batch.kubernetes.io/controller-uid": job.uid,
  "batch.kubernetes.io/job-name": job.name,
  "controller-uid": job.uid,
  "job-name": job.name
})

/** The TTL-after-finished controller: a finished Job goes `ttlSecondsAfterFinished` after it finished. */
const expireAfterFinished = (state: FakeState, queue: WorkQueue, job: Entry, key: string): void => {
  const ttl = (job.obj.spec as JsonObject | undefined)?.ttlSecondsAfterFinished
  if (typeof ttl !== "number" || isDeleting(job)) return
  const finished = conditionOf(job.obj.status, "Complete") ?? conditionOf(job.obj.status, "Failed")
  const since = finished?.lastTransitionTime
  const at = typeof since === "string" ? Date.parse(since) : state.clock.now()
  const left = at + ttl * 1000 - state.clock.now()
  if (left > 0) return queue.addAfter(key, left)
  removeObject(state, jobKind(state), job, { propagationPolicy: "Background" })
}

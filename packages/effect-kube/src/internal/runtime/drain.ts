/**
 * kubectl drain's rules (k8s.io/kubectl/pkg/drain: filters.go, drain.go) over the
 * library's own calls: list the node's pods, sort them, cordon, evict, wait.
 *
 * @internal
 */
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import type * as Drain from "../../Drain.js"
import { ApiError, ValidationError } from "../../Errors.js"
import * as Kube from "../../Kube.js"
import { DaemonSets, Nodes, type Pod, Pods } from "../../resources/index.js"

/** What `Drain` turns into its public `DrainFailed`. @internal */
export class DrainStuck extends Data.TaggedError("DrainStuck")<{
  readonly node: string
  readonly reason: "Unevictable" | "Timeout"
  readonly pods: ReadonlyArray<Drain.PodReason>
  readonly timeout?: string | undefined
}> {}

const mirrorAnnotation = "kubernetes.io/config.mirror"

// kubectl's own words (filters.go), with its flags named as our options
const daemonSetFatal = "DaemonSet-managed (use ignoreDaemonSets to leave it)"
const daemonSetWarning = "DaemonSet-managed: left on the node"
const localStorageFatal = "has local storage (use deleteEmptyDirData to override)"
const localStorageWarning = "has local storage: its emptyDir data is lost"
const unmanagedFatal = "declares no controller (use force to override)"
const unmanagedWarning = "declares no controller: nothing brings it back"

const nodes = Kube.api(Nodes)
const allPods = Kube.api(Pods)
const podsIn = (namespace: string) => Kube.api(Pods, { namespace })

/** @internal */
export const setUnschedulable = (
  node: string,
  unschedulable: boolean
): Effect.Effect<boolean, Kube.Error, Kube.Requirements> =>
  Effect.gen(function*() {
    const current = yield* nodes.get(node)
    // a missing node: the patch answers the server's own 404
    if (Option.isSome(current) && (current.value.spec?.unschedulable === true) === unschedulable) return false
    // kubectl's patch: a false unschedulable is omitted, so uncordon removes the field
    yield* nodes.patch(node, { _tag: "Merge", body: { spec: { unschedulable: unschedulable ? true : null } } })
    return true
  })

/** What one filter says of a pod: evict it (maybe with a warning), leave it, or refuse the drain. */
type Verdict =
  | { readonly _tag: "Evict"; readonly warning?: string | undefined }
  | { readonly _tag: "Skip"; readonly reason: string }
  | { readonly _tag: "Block"; readonly reason: string }

const evict: Verdict = { _tag: "Evict" }

const refOf = (pod: Pod): Drain.PodRef => ({
  namespace: pod.metadata?.namespace ?? "",
  name: pod.metadata?.name ?? "",
  uid: pod.metadata?.uid
})

const isFinished = (pod: Pod): boolean => pod.status?.phase === "Succeeded" || pod.status?.phase === "Failed"

const controllerOf = (pod: Pod) => pod.metadata?.ownerReferences?.find((owner) => owner.controller === true)

/** kubectl's filters in its order: the first that does not evict decides. */
const verdictsOf = (
  pod: Pod,
  options: Drain.DrainOptions
): Effect.Effect<ReadonlyArray<Verdict>, Kube.Error, Kube.Requirements> =>
  Effect.gen(function*() {
    const verdicts: Array<Verdict> = []
    const controller = controllerOf(pod)
    if (controller?.kind === "DaemonSet" && !isFinished(pod) && pod.metadata?.deletionTimestamp === undefined) {
      // as kubectl, the DaemonSet must exist: an orphan is evicted only under force
      const owner = yield* Kube.api(DaemonSets, { namespace: refOf(pod).namespace }).get(controller.name)
      if (Option.isNone(owner)) {
        const reason = `its DaemonSet ${controller.name} is not found`
        if (options.force !== true) return [{ _tag: "Block", reason: `${reason} (use force to evict it)` }]
        verdicts.push({ _tag: "Evict", warning: reason })
      } else if (options.ignoreDaemonSets !== true) {
        return [{ _tag: "Block", reason: daemonSetFatal }]
      } else {
        return [{ _tag: "Skip", reason: daemonSetWarning }]
      }
    }
    if (pod.metadata?.annotations?.[mirrorAnnotation] !== undefined) {
      return [...verdicts, { _tag: "Skip", reason: "mirror pod: the kubelet's static pod" }]
    }
    if (!isFinished(pod) && (pod.spec?.volumes ?? []).some((volume) => volume.emptyDir !== undefined)) {
      if (options.deleteEmptyDirData !== true) return [{ _tag: "Block", reason: localStorageFatal }]
      verdicts.push({ _tag: "Evict", warning: localStorageWarning })
    }
    if (!isFinished(pod) && controller === undefined) {
      if (options.force !== true) return [{ _tag: "Block", reason: unmanagedFatal }]
      verdicts.push({ _tag: "Evict", warning: unmanagedWarning })
    }
    return verdicts.length === 0 ? [evict] : verdicts
  })

const checkOptions = (node: string, options: Drain.DrainOptions): Effect.Effect<void, ValidationError> => {
  const grace = options.gracePeriodSeconds
  if (grace !== undefined && !(Number.isSafeInteger(grace) && grace >= 0)) {
    return Effect.fail(
      new ValidationError({
        subject: `drain node ${node}: gracePeriodSeconds`,
        detail: `must be a whole number of seconds, 0 or more; got ${grace}`
      })
    )
  }
  for (const name of ["timeout", "retryInterval", "pollInterval"] as const) {
    const value = options[name]
    if (value === undefined) continue
    const duration = Duration.fromInput(value)
    if (Option.isNone(duration) || Duration.isNegative(duration.value)) {
      return Effect.fail(
        new ValidationError({ subject: `drain node ${node}: ${name}`, detail: `not a duration: ${String(value)}` })
      )
    }
  }
  return Effect.void
}

/** @internal */
export const plan = (
  node: string,
  options: Drain.DrainOptions = {}
): Effect.Effect<Drain.Plan, Kube.Error, Kube.Requirements> =>
  Effect.gen(function*() {
    yield* checkOptions(node, options)
    const list = yield* allPods.list({
      allNamespaces: true,
      fieldSelector: `spec.nodeName=${node}`,
      labelSelector: options.podSelector
    })
    const result = { node, evict: [] as Array<Drain.PodRef>, skipped: [] as Array<Drain.PodReason>, blocking: [] as Array<Drain.PodReason>, warnings: [] as Array<Drain.PodReason> }
    for (const pod of list.items) {
      const ref = refOf(pod)
      const verdicts = yield* verdictsOf(pod, options)
      const last = verdicts[verdicts.length - 1]!
      for (const verdict of verdicts) {
        if (verdict._tag === "Evict" && verdict.warning !== undefined) result.warnings.push({ ...ref, reason: verdict.warning })
      }
      if (last._tag === "Block") result.blocking.push({ ...ref, reason: last.reason })
      else if (last._tag === "Skip") {
        result.skipped.push({ ...ref, reason: last.reason })
        if (last.reason === daemonSetWarning) result.warnings.push({ ...ref, reason: last.reason })
      } else result.evict.push(ref)
    }
    return result
  })

/** Where one pod's eviction stands, for the timeout's report. */
type Progress = Map<string, string>

const keyOf = (pod: Drain.PodRef) => `${pod.namespace}/${pod.name}`

/** Evicts one pod, again after each 429 (the budget), then waits until it is gone or replaced. */
const evictAndWait = (
  pod: Drain.PodRef,
  options: Drain.DrainOptions,
  progress: Progress
): Effect.Effect<void, Kube.Error, Kube.Requirements> => {
  const api = podsIn(pod.namespace)
  const deleteOptions = options.gracePeriodSeconds === undefined
    ? undefined
    : { gracePeriodSeconds: options.gracePeriodSeconds }
  const retryInterval = options.retryInterval ?? "5 seconds"
  const attempt = api.evict(pod.name, { deleteOptions }).pipe(
    Effect.tapError((error) =>
      Effect.sync(() => {
        if (ApiError.isTooManyRequests(error)) progress.set(keyOf(pod), `eviction refused: ${error.statusMessage}`)
      })
    ),
    // the one mutation sent again on its own: a 429 eviction wrote nothing (see Drain.ts)
    Effect.retry({ schedule: Schedule.spaced(retryInterval), while: ApiError.isTooManyRequests }),
    // gone already: nothing to evict
    Effect.catchIf(ApiError.isNotFound, () => Effect.void)
  )
  const gone = api.get(pod.name).pipe(
    Effect.map((found) => Option.isNone(found) || found.value.metadata?.uid !== pod.uid)
  )
  const waitGone = gone.pipe(
    Effect.repeat({ schedule: Schedule.spaced(options.pollInterval ?? "1 second"), until: (done) => done })
  )
  return Effect.gen(function*() {
    progress.set(keyOf(pod), "evicting")
    yield* attempt
    progress.set(keyOf(pod), "evicted, waiting for its deletion")
    yield* waitGone
    progress.delete(keyOf(pod))
  })
}

/** @internal */
export const drain = (
  node: string,
  options: Drain.DrainOptions = {}
): Effect.Effect<Drain.DrainResult, DrainStuck | Kube.Error, Kube.Requirements> =>
  Effect.gen(function*() {
    // refuse before writing anything when the pods there now cannot go
    const before = yield* plan(node, options)
    if (before.blocking.length > 0) {
      return yield* new DrainStuck({ node, reason: "Unevictable", pods: before.blocking })
    }
    const cordoned = yield* setUnschedulable(node, true)
    // listed again once cordoned, as kubectl: a pod may have been bound meanwhile
    const sorted = yield* plan(node, options)
    if (sorted.blocking.length > 0) {
      return yield* new DrainStuck({ node, reason: "Unevictable", pods: sorted.blocking })
    }
    const progress: Progress = new Map()
    const evictAll = Effect.forEach(sorted.evict, (pod) => evictAndWait(pod, options, progress), {
      concurrency: "unbounded",
      discard: true
    })
    if (options.timeout === undefined) {
      yield* evictAll
    } else {
      const finished = yield* Effect.timeoutOption(evictAll, options.timeout)
      if (Option.isNone(finished)) {
        const pods = sorted.evict.flatMap((pod) => {
          const reason = progress.get(keyOf(pod))
          return reason === undefined ? [] : [{ ...pod, reason }]
        })
        return yield* new DrainStuck({
          node,
          reason: "Timeout",
          pods,
          timeout: Duration.format(Duration.fromInputUnsafe(options.timeout))
        })
      }
    }
    return { node, cordoned, evicted: sorted.evict, skipped: sorted.skipped, warnings: sorted.warnings }
  })

/**
 * `Manifests.explain`, `explainChanges` and `renderExplanation`: why each object of a set is
 * as ready as it is. Each object is read, then what it owns (found by the owner reference's
 * uid, as the garbage collector finds it; a Service's EndpointSlices by their
 * `kubernetes.io/service-name` label; a StatefulSet's claims by the names its controller
 * gives them), and each is joined with its kstatus readiness, its conditions and its recent
 * core v1 Events (by `involvedObject.uid`, as `kubectl describe` lists them; the server keeps
 * events.k8s.io/v1 Events in the same store, so one read sees both). Reads only.
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import {
  ApiError,
  type ExplainedCondition,
  type ExplainedEvent,
  type Explanation,
  formatRef,
  NotReady,
  type ObjectReadiness,
  type ObjectRef
} from "../../Errors.js"
import type * as Kube from "../../Kube.js"
import type * as Manifests from "../../Manifests.js"
import * as client from "../client/execute.js"
import { isObject, type JsonObject } from "../codec/codec.js"
import type * as verbs from "../request/verbs.js"
import * as request from "../request/verbs.js"
import * as kstatus from "./kstatus.js"
import * as manifests from "./manifests.js"

// ---------------------------------------------------------------------------------------------------------------------
// reading JSON
// ---------------------------------------------------------------------------------------------------------------------

const field = kstatus.field

const int = (object: unknown, path: ReadonlyArray<string>, fallback = 0): number => {
  const value = field(object, path)
  return typeof value === "number" && Number.isInteger(value) ? value : fallback
}

const text = (object: unknown, path: ReadonlyArray<string>): string | undefined => {
  const value = field(object, path)
  return typeof value === "string" && value !== "" ? value : undefined
}

const objects = (value: unknown): ReadonlyArray<JsonObject> => Array.isArray(value) ? value.filter(isObject) : []

const conditionsOf = (object: unknown): ReadonlyArray<ExplainedCondition> =>
  objects(field(object, ["status", "conditions"])).map((c) => ({
    type: typeof c["type"] === "string" ? c["type"] : "",
    status: typeof c["status"] === "string" ? c["status"] : "",
    reason: typeof c["reason"] === "string" ? c["reason"] : "",
    message: typeof c["message"] === "string" ? c["message"] : ""
  }))

const find = (conditions: ReadonlyArray<ExplainedCondition>, type: string) => conditions.find((c) => c.type === type)

/** A condition's reason and message, as much of them as there is. */
const because = (c: { readonly reason: string; readonly message: string }) =>
  [c.reason, c.message].filter((p) => p !== "").join(": ")

// ---------------------------------------------------------------------------------------------------------------------
// the kinds walked
// ---------------------------------------------------------------------------------------------------------------------

const kinds = {
  pods: { group: "", version: "v1", plural: "pods", kind: "Pod" },
  claims: { group: "", version: "v1", plural: "persistentvolumeclaims", kind: "PersistentVolumeClaim" },
  events: { group: "", version: "v1", plural: "events", kind: "Event" },
  replicaSets: { group: "apps", version: "v1", plural: "replicasets", kind: "ReplicaSet" },
  slices: { group: "discovery.k8s.io", version: "v1", plural: "endpointslices", kind: "EndpointSlice" }
} satisfies Record<string, verbs.Kind>

const apiVersionOf = (kind: verbs.Kind) => kind.group === "" ? kind.version : `${kind.group}/${kind.version}`

const refOf = (object: JsonObject, fallback?: verbs.Kind): ObjectRef => {
  const namespace = text(object, ["metadata", "namespace"])
  return {
    apiVersion: text(object, ["apiVersion"]) ?? (fallback === undefined ? "" : apiVersionOf(fallback)),
    kind: text(object, ["kind"]) ?? fallback?.kind ?? "",
    name: text(object, ["metadata", "name"]) ?? "",
    ...(namespace === undefined ? {} : { namespace })
  }
}

const kindKey = (object: JsonObject): string => {
  const apiVersion = text(object, ["apiVersion"]) ?? ""
  const group = apiVersion.includes("/") ? apiVersion.slice(0, apiVersion.indexOf("/")) : ""
  return group === "" ? text(object, ["kind"]) ?? "" : `${group}/${text(object, ["kind"]) ?? ""}`
}

const isOwnedBy = (object: JsonObject, uid: string): boolean =>
  objects(field(object, ["metadata", "ownerReferences"])).some((o) => o["uid"] === uid)

/** A selector of matchLabels alone as a query, to narrow a list; anything else lists the namespace (owners filter). */
const labelQuery = (selector: unknown): string | undefined => {
  if (!isObject(selector) || objects(selector["matchExpressions"]).length > 0) return undefined
  const labels = selector["matchLabels"]
  if (!isObject(labels)) return undefined
  const pairs = Object.entries(labels).filter((e): e is [string, string] => typeof e[1] === "string")
  return pairs.length === 0 ? undefined : pairs.map(([k, v]) => `${k}=${v}`).join(",")
}

const byName = (a: JsonObject, b: JsonObject) =>
  (text(a, ["metadata", "name"]) ?? "").localeCompare(text(b, ["metadata", "name"]) ?? "")

const listIn = (kind: verbs.Kind, namespace: string, options: { labelSelector?: string | undefined } = {}) =>
  Effect.map(
    client.sendJson(request.list(kind, namespace, options)),
    (list) =>
      objects(field(list, ["items"])).map((item): JsonObject => ({
        // a built-in list's items come without apiVersion and kind from kube-apiserver
        ...item,
        apiVersion: apiVersionOf(kind),
        kind: kind.kind
      }))
  )

const ownedIn = (kind: verbs.Kind, owner: JsonObject) => {
  const namespace = text(owner, ["metadata", "namespace"]) ?? ""
  const uid = text(owner, ["metadata", "uid"]) ?? ""
  return Effect.map(
    listIn(kind, namespace, { labelSelector: labelQuery(field(owner, ["spec", "selector"])) }),
    (items) => items.filter((item) => isOwnedBy(item, uid)).sort(byName)
  )
}

const revisionOf = (rs: JsonObject) =>
  Number(text(rs, ["metadata", "annotations", "deployment.kubernetes.io/revision"]) ?? "0")

/** What an object owns that says why it is not ready, in the order a person reads it. */
const childrenOf = (object: JsonObject) => {
  const namespace = text(object, ["metadata", "namespace"]) ?? ""
  switch (kindKey(object)) {
    case "apps/Deployment":
      // the current ReplicaSet first (the highest revision), then older ones that still have pods
      return Effect.map(ownedIn(kinds.replicaSets, object), (sets) =>
        sets
          .filter((rs, _, all) =>
            int(rs, ["spec", "replicas"], 1) > 0 || int(rs, ["status", "replicas"]) > 0 ||
            revisionOf(rs) === Math.max(...all.map(revisionOf))
          )
          .sort((a, b) => revisionOf(b) - revisionOf(a) || byName(a, b)))
    case "apps/ReplicaSet":
    case "apps/DaemonSet":
    case "batch/Job":
      return ownedIn(kinds.pods, object)
    case "apps/StatefulSet": {
      const name = text(object, ["metadata", "name"]) ?? ""
      const replicas = int(object, ["spec", "replicas"], 1)
      const templates = objects(field(object, ["spec", "volumeClaimTemplates"]))
        .flatMap((t) => text(t, ["metadata", "name"]) ?? [])
      // the claims the StatefulSet controller names `<template>-<set>-<ordinal>`
      const claimNames = templates.flatMap((t) => Array.from({ length: replicas }, (_, i) => `${t}-${name}-${i}`))
      return Effect.zipWith(
        ownedIn(kinds.pods, object),
        Effect.forEach(
          claimNames,
          (claim) =>
            Effect.map(
              client.sendJsonOption(request.get(kinds.claims, namespace, claim)),
              Option.map((c): JsonObject => isObject(c) ? { ...c, apiVersion: "v1", kind: "PersistentVolumeClaim" } : {})
            ),
          { concurrency: 4 }
        ),
        (pods, claims) => [...pods, ...claims.flatMap((c) => Option.isSome(c) ? [c.value] : [])]
      )
    }
    case "Service":
      return Effect.map(
        listIn(kinds.slices, namespace, {
          labelSelector: `kubernetes.io/service-name=${text(object, ["metadata", "name"]) ?? ""}`
        }),
        (slices) => slices.sort(byName)
      )
    default:
      return Effect.succeed<ReadonlyArray<JsonObject>>([])
  }
}

// ---------------------------------------------------------------------------------------------------------------------
// events
// ---------------------------------------------------------------------------------------------------------------------

const recentEvents = 3

const timeOf = (event: JsonObject): string | undefined =>
  text(event, ["lastTimestamp"]) ?? text(event, ["series", "lastObservedTime"]) ?? text(event, ["eventTime"]) ??
    text(event, ["firstTimestamp"]) ?? text(event, ["metadata", "creationTimestamp"])

const eventOf = (event: JsonObject, now: number): ExplainedEvent => {
  const lastSeen = timeOf(event)
  const at = lastSeen === undefined ? Number.NaN : Date.parse(lastSeen)
  return {
    type: text(event, ["type"]) ?? "Normal",
    reason: text(event, ["reason"]) ?? "",
    message: text(event, ["message"]) ?? "",
    count: Math.max(1, int(event, ["count"], 0), int(event, ["series", "count"], 0)),
    source: text(event, ["reportingComponent"]) ?? text(event, ["source", "component"]) ?? "",
    ...(lastSeen === undefined ? {} : { lastSeen }),
    ...(Number.isFinite(at) ? { ageSeconds: Math.max(0, Math.floor((now - at) / 1000)) } : {})
  }
}

/** The few Events about one object that say most, Warnings first, newest first; a reader that may not list Events gets none rather than a failure. */
const eventsOf = (object: JsonObject, now: number) => {
  const namespace = text(object, ["metadata", "namespace"]) ?? "default"
  const uid = text(object, ["metadata", "uid"])
  if (uid === undefined) return Effect.succeed<ReadonlyArray<ExplainedEvent>>([])
  return client.sendJson(request.list(kinds.events, namespace, { fieldSelector: `involvedObject.uid=${uid}` })).pipe(
    Effect.map((list) =>
      objects(field(list, ["items"]))
        .map((e) => ({ event: eventOf(e, now), at: Date.parse(timeOf(e) ?? "") }))
        // Warnings first (they say why), then the newest
        .sort((a, b) =>
          Number(b.event.type === "Warning") - Number(a.event.type === "Warning") ||
          (Number.isFinite(b.at) ? b.at : 0) - (Number.isFinite(a.at) ? a.at : 0) ||
          a.event.reason.localeCompare(b.event.reason)
        )
        .slice(0, recentEvents)
        .map((e) => e.event)
    ),
    Effect.catchIf(ApiError.isForbidden, () => Effect.succeed<ReadonlyArray<ExplainedEvent>>([]))
  )
}

// ---------------------------------------------------------------------------------------------------------------------
// summaries
// ---------------------------------------------------------------------------------------------------------------------

/** A Service's endpoints, from its EndpointSlices: ready ones are what it sends traffic to. */
const endpointsOf = (slices: ReadonlyArray<JsonObject>): string => {
  const endpoints = slices.flatMap((slice) => objects(slice["endpoints"]))
  const ready = endpoints.filter((e) => field(e, ["conditions", "ready"]) === true).length
  return `${ready}/${endpoints.length} endpoint(s) ready`
}

interface Summary {
  readonly summary: string
  readonly reason?: string | undefined
}

/** A container's state as `kubectl get pods` shows it, when it is not simply running. */
const containerTrouble = (statuses: ReadonlyArray<JsonObject>, prefix: string): Summary | undefined => {
  for (const s of statuses) {
    const waiting = field(s, ["state", "waiting"])
    const reason = text(waiting, ["reason"])
    if (reason !== undefined && reason !== "ContainerCreating" && reason !== "PodInitializing") {
      const message = text(waiting, ["message"])
      const last = field(s, ["lastState", "terminated"])
      const exit = isObject(last) ?
        `, last exit code ${int(last, ["exitCode"])}${text(last, ["reason"]) === undefined ? "" : ` (${text(last, ["reason"])})`}` :
        ""
      const restarts = int(s, ["restartCount"])
      return {
        reason: `${prefix}${reason}`,
        summary: `${prefix}${reason}${message === undefined ? "" : `, ${message}`}${exit}` +
          (restarts > 0 ? `, ${restarts} restart(s)` : "")
      }
    }
    const terminated = field(s, ["state", "terminated"])
    if (isObject(terminated) && int(terminated, ["exitCode"]) !== 0) {
      const reason = text(terminated, ["reason"]) ?? "Error"
      return { reason: `${prefix}${reason}`, summary: `${prefix}${reason}, exit code ${int(terminated, ["exitCode"])}` }
    }
  }
  return undefined
}

const podSummary = (pod: JsonObject, conditions: ReadonlyArray<ExplainedCondition>): Summary => {
  if (text(pod, ["metadata", "deletionTimestamp"]) !== undefined) return { summary: "Terminating", reason: "Terminating" }
  const phase = text(pod, ["status", "phase"]) ?? "Pending"
  const scheduled = find(conditions, "PodScheduled")
  if (scheduled?.status === "False") {
    return { reason: scheduled.reason || "Unschedulable", summary: because(scheduled) || "not scheduled" }
  }
  const trouble = containerTrouble(objects(field(pod, ["status", "initContainerStatuses"])), "Init:") ??
    containerTrouble(objects(field(pod, ["status", "containerStatuses"])), "")
  if (trouble !== undefined) return trouble
  if (phase === "Succeeded" || phase === "Failed") {
    const reason = text(pod, ["status", "reason"])
    return { summary: [phase, reason, text(pod, ["status", "message"])].filter((p) => p !== undefined).join(", ") }
  }
  const ready = find(conditions, "Ready")
  if (ready?.status === "True") return { summary: "Ready" }
  if (phase === "Running") {
    return { summary: `Running, not ready${ready === undefined || because(ready) === "" ? "" : `: ${because(ready)}`}` }
  }
  return { summary: phase }
}

const failure = (conditions: ReadonlyArray<ExplainedCondition>, type: string): Summary | undefined => {
  const c = find(conditions, type)
  return c?.status === "True" ? { reason: c.reason || type, summary: because(c) || type } : undefined
}

/** The numbers a person looks at first, then the failing condition's words when there is one. */
const summaryOf = (
  object: JsonObject,
  conditions: ReadonlyArray<ExplainedCondition>,
  readiness: kstatus.Computed
): Summary => {
  const replicas = int(object, ["spec", "replicas"], 1)
  const withFailure = (counts: string, f: Summary | undefined): Summary =>
    f === undefined ? { summary: counts } : { summary: `${counts}, ${f.summary}`, reason: f.reason }
  switch (kindKey(object)) {
    case "Pod":
      return podSummary(object, conditions)
    case "apps/Deployment": {
      const progressing = find(conditions, "Progressing")
      const stuck = progressing?.reason === "ProgressDeadlineExceeded" ?
        { reason: progressing.reason, summary: because(progressing) } :
        undefined
      return withFailure(
        `${int(object, ["status", "availableReplicas"])}/${replicas} available` +
          // a rollout under way: some of the pods there are of an older template
          (int(object, ["status", "updatedReplicas"]) < int(object, ["status", "replicas"]) ?
            `, ${int(object, ["status", "updatedReplicas"])}/${replicas} updated` :
            ""),
        // a ReplicaFailure the controller copies from the ReplicaSet is said once, on the ReplicaSet
        stuck
      )
    }
    case "apps/ReplicaSet": {
      const have = int(object, ["status", "replicas"])
      const ready = int(object, ["status", "readyReplicas"])
      const counts = have < replicas ?
        `${have}/${replicas} pod(s) created` :
        ready < have ?
        `${have - ready} pod(s) not ready` :
        `${ready}/${replicas} ready`
      return withFailure(counts, failure(conditions, "ReplicaFailure"))
    }
    case "apps/StatefulSet":
      return { summary: `${int(object, ["status", "readyReplicas"])}/${replicas} ready` }
    case "apps/DaemonSet":
      return {
        summary: `${int(object, ["status", "numberReady"])}/${int(object, ["status", "desiredNumberScheduled"])} ready`
      }
    case "batch/Job": {
      const counts = `${int(object, ["status", "succeeded"])} succeeded, ${int(object, ["status", "active"])} active, ` +
        `${int(object, ["status", "failed"])} failed`
      return withFailure(counts, failure(conditions, "Failed"))
    }
    case "discovery.k8s.io/EndpointSlice":
      return { summary: endpointsOf([object]) }
    case "PersistentVolumeClaim":
      return { summary: text(object, ["status", "phase"]) ?? "Pending" }
    default:
      return { summary: readiness.message }
  }
}

// ---------------------------------------------------------------------------------------------------------------------
// the tree
// ---------------------------------------------------------------------------------------------------------------------

const explainObject = (
  object: JsonObject,
  now: number,
  depth: number
): Effect.Effect<Explanation, Kube.Error, Kube.Requirements> =>
  Effect.gen(function*() {
    const readiness = kstatus.compute(object, now)
    const conditions = conditionsOf(object)
    const { reason, summary } = summaryOf(object, conditions, readiness)
    const [events, owned] = yield* Effect.all([
      // a ready object's Events say nothing of why: one request fewer per ready Pod (50 of a ready Deployment's 56)
      readiness.status === "Current" ? Effect.succeed<ReadonlyArray<ExplainedEvent>>([]) : eventsOf(object, now),
      depth < 3 ? childrenOf(object) : Effect.succeed<ReadonlyArray<JsonObject>>([])
    ], { concurrency: 2 })
    const children = yield* Effect.forEach(owned, (child) => explainObject(child, now, depth + 1), { concurrency: 4 })
    return {
      ref: refOf(object),
      status: readiness.status,
      summary: kindKey(object) === "Service" && text(object, ["spec", "type"]) !== "ExternalName" ?
        endpointsOf(owned) :
        summary,
      ...(reason === undefined ? {} : { reason }),
      conditions,
      events,
      children
    }
  })

const explainResolved = (resolved: ReadonlyArray<manifests.Resolved>) =>
  Effect.flatMap(Clock.currentTimeMillis, (now) =>
    Effect.forEach(
      resolved,
      (item) => {
        const { uid: _uid, ...ref }: ObjectRef = item.ref
        return Effect.flatMap(
          client.sendJsonOption(request.get(item.resource, item.ref.namespace, item.name)),
          Option.match({
            onNone: () =>
              Effect.succeed<Explanation>({
                ref,
                status: "NotFound",
                summary: "not found",
                conditions: [],
                events: [],
                children: []
              }),
            onSome: (object) =>
              isObject(object) ?
                Effect.map(explainObject({ apiVersion: ref.apiVersion, kind: ref.kind, ...object }, now, 0), (e) => ({
                  ...e,
                  ref
                })) :
                Effect.succeed<Explanation>({
                  ref,
                  status: "Unknown",
                  summary: "not an object",
                  conditions: [],
                  events: [],
                  children: []
                })
          })
        )
      },
      { concurrency: 4 }
    ))

export const explain = (
  refs: Iterable<ObjectRef | Manifests.Applicable>,
  options: Manifests.Options = {}
): Effect.Effect<ReadonlyArray<Explanation>, Kube.Error, Kube.Requirements> =>
  Effect.flatMap(manifests.prepareRefs(refs, options), explainResolved)

// ---------------------------------------------------------------------------------------------------------------------
// rendering
// ---------------------------------------------------------------------------------------------------------------------

const age = (seconds: number): string =>
  seconds < 120 ?
    `${seconds} s ago` :
    seconds < 7200 ?
    `${Math.floor(seconds / 60)} min ago` :
    seconds < 172_800 ?
    `${Math.floor(seconds / 3600)} h ago` :
    `${Math.floor(seconds / 86_400)} d ago`

/** client-go's aggregator prefixes the tenth similar event and on; the count says as much. */
const combined = "(combined from similar events): "

const eventLine = (event: ExplainedEvent, summary: string, ages: boolean): string => {
  const when = [
    "Event",
    ...(ages && event.ageSeconds !== undefined ? [age(event.ageSeconds)] : []),
    ...(event.count > 1 ? [`×${event.count}`] : [])
  ].join(", ")
  const message = event.message.startsWith(combined) ? event.message.slice(combined.length) : event.message
  // the scheduler's event repeats the condition the summary already quotes
  const said = message === "" || summary.includes(message)
  return `${event.type === "Warning" ? "Warning " : ""}${event.reason}${said ? "" : `: ${message}`} (${when})`
}

/** Whether an object and all it owns are ready: then it is one line, its children counted, not shown. */
const allCurrent = (e: Explanation): boolean => e.status === "Current" && e.children.every(allCurrent)

const plural = (kind: string, n: number) => n === 1 ? kind : kind.endsWith("s") ? kind : `${kind}s`

const renderInto = (lines: Array<string>, e: Explanation, indent: string, arrow: string, ages: boolean) => {
  lines.push(`${indent}${arrow}${formatRef(e.ref)}: ${e.summary}`)
  const inner = `${indent}  `
  if (e.status !== "Current") {
    // Warnings say why; a Normal event says what went as it should (the data keeps both)
    for (const event of e.events) {
      if (event.type === "Warning") lines.push(`${indent}${" ".repeat(arrow.length)}  · ${eventLine(event, e.summary, ages)}`)
    }
  }
  const ready = new Map<string, number>()
  for (const child of e.children) {
    if (allCurrent(child)) ready.set(child.ref.kind, (ready.get(child.ref.kind) ?? 0) + 1)
    else renderInto(lines, child, inner, "← ", ages)
  }
  for (const [kind, n] of ready) lines.push(`${inner}← ${n} ${plural(kind, n)} ready`)
}

export const render = (explanations: ReadonlyArray<Explanation>, options: { readonly ages?: boolean | undefined } = {}): string => {
  const lines: Array<string> = []
  for (const e of explanations) renderInto(lines, e, "", "", options.ages !== false)
  return lines.join("\n")
}

// ---------------------------------------------------------------------------------------------------------------------
// while waiting
// ---------------------------------------------------------------------------------------------------------------------

const decodeDuration = (value: Duration.Input | undefined, fallback: Duration.Duration, subject: string) => {
  const decoded = Duration.fromInput(value ?? fallback)
  return Option.isNone(decoded) || Duration.isNegative(decoded.value)
    ? manifests.invalid(subject, "must be a duration of zero or more (\"30 seconds\", 30_000)")
    : Effect.succeed(decoded.value)
}

const readinessOf = (e: Explanation): ObjectReadiness => ({ ref: e.ref, status: e.status, message: e.summary })

const sameRef = (a: ObjectRef, b: ObjectRef) =>
  a.apiVersion === b.apiVersion && a.kind === b.kind && a.name === b.name && (a.namespace ?? "") === (b.namespace ?? "")

/**
 * Explains the objects a `NotReady` names (those not Current), or leaves the error as it was when the explanation
 * cannot be read: the wait's own verdict is what the caller asked for.
 */
export const explainFailure = (resolved: ReadonlyArray<manifests.Resolved>, error: NotReady) =>
  explainResolved(resolved.filter((item) => error.objects.some((o) => sameRef(o.ref, item.ref)))).pipe(
    Effect.map((explanation) => new NotReady({ ...error, explanation, explained: render(explanation) })),
    Effect.catch(() => Effect.succeed(error))
  )

export const explainChanges = (
  refs: Iterable<ObjectRef | Manifests.Applicable>,
  options: Manifests.WaitOptions = {}
): Stream.Stream<ReadonlyArray<Explanation>, NotReady | Kube.Error, Kube.Requirements> =>
  Stream.unwrap(Effect.gen(function*() {
    const interval = yield* decodeDuration(options.interval, Duration.seconds(2), "interval")
    const timeout = yield* decodeDuration(options.timeout, Duration.minutes(5), "timeout")
    const resolved = yield* manifests.prepareRefs(refs, options)
    const latest = yield* Ref.make<ReadonlyArray<Explanation>>([])
    const deadline = Effect.sleep(timeout).pipe(
      Effect.andThen(Ref.get(latest)),
      Effect.flatMap((explanation) =>
        Effect.fail(
          new NotReady({
            reason: "Timeout",
            objects: explanation.filter((e) => e.status !== "Current").map(readinessOf),
            timeout: Duration.format(timeout),
            explanation,
            explained: render(explanation)
          })
        )
      )
    )
    return Stream.fromEffectSchedule(
      Effect.tap(explainResolved(resolved), (explanation) => Ref.set(latest, explanation)),
      Schedule.spaced(interval)
    ).pipe(
      // a change is a change of what a person reads, not of the events' ages
      Stream.changesWith((a, b) => render(a, { ages: false }) === render(b, { ages: false })),
      Stream.takeUntil((explanation) => explanation.every((e) => e.status === "Current")),
      Stream.interruptWhen(deadline)
    )
  }))

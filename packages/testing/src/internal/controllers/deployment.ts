/**
 * The Deployment controller, as kube-controller-manager's: one ReplicaSet per pod
 * template (named by the template's hash, labelled `pod-template-hash`), revisions
 * (`deployment.kubernetes.io/revision`, taken up again by a rollback), RollingUpdate
 * within `maxSurge` / `maxUnavailable` and Recreate, pausing, the history limit, and the
 * status and conditions that `kubectl rollout status` reads (Available, Progressing with
 * NewReplicaSetCreated, ReplicaSetUpdated, NewReplicaSetAvailable, ProgressDeadlineExceeded,
 * DeploymentPaused / DeploymentResumed). The progress deadline runs on the fake's clock.
 *
 * @internal
 */
import { clone, deepEqual, isObject, type JsonObject } from "../store/json.js"
import type { KindInfo } from "../store/kinds.js"
import type { FakeState } from "../store/state.js"
import type { Entry } from "../store/store.js"
import * as Field from "../validation/field.js"
import {
  builtinKind,
  conditionOf,
  controllerOf,
  controllerRef,
  createObject,
  editObject,
  entriesOf,
  entryOf,
  isDeleting,
  isEmptySelector,
  isSeed,
  isUsableSelector,
  labelsOf,
  metadataOf,
  removeObject,
  selectorMatches
} from "./api.js"
import { isFinished, podKind } from "./pods.js"
import { keyFor, splitKey, WorkQueue } from "./queue.js"
import { replicaSetKind } from "./replicaset.js"

const revisionAnnotation = "deployment.kubernetes.io/revision"
const revisionHistoryAnnotation = "deployment.kubernetes.io/revision-history"
const desiredReplicasAnnotation = "deployment.kubernetes.io/desired-replicas"
const maxReplicasAnnotation = "deployment.kubernetes.io/max-replicas"
const hashLabel = "pod-template-hash"
/** What the API server's validation says of a ReplicaSet whose selector does not select its template. */
const selectorMismatch = "`selector` does not match template `labels`"

/** Annotations of a Deployment that its ReplicaSets do not copy. */
const notCopied = new Set([
  "kubectl.kubernetes.io/last-applied-configuration",
  revisionAnnotation,
  revisionHistoryAnnotation,
  desiredReplicasAnnotation,
  maxReplicasAnnotation,
  "deprecated.deployment.rollback.to"
])

const deploymentKind = (state: FakeState): KindInfo => builtinKind(state, "apps", "v1", "deployments")

/** JSON with keys sorted, so that equal templates hash alike whatever order they were sent in. */
const canonical = (value: unknown): string => {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`
  if (isObject(value)) {
    return `{${
      Object.keys(value).filter((k) => value[k] !== undefined).sort().map((k) =>
        `${JSON.stringify(k)}:${canonical(value[k])}`
      ).join(",")
    }}`
  }
  return JSON.stringify(value)
}

const safeAlphabet = "bcdfghjklmnpqrstvwxz2456789"

/**
 * The `pod-template-hash` of a template: FNV-1a (32 bits) of the template and the
 * collision count, its decimal digits spelled in the API machinery's safe alphabet.
 *
 * @internal
 */
export const templateHash = (template: unknown, collisionCount: number): string => {
  let hash = 0x811c9dc5
  const text = canonical(template) + (collisionCount > 0 ? String(collisionCount) : "")
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i)
    hash = Math.imul(hash, 0x01000193) >>> 0
  }
  return [...String(hash)].map((d) => safeAlphabet[d.charCodeAt(0) % safeAlphabet.length]).join("")
}

const withoutHash = (template: unknown): unknown => {
  if (!isObject(template)) return template
  const copy = clone(template)
  const labels = isObject(copy.metadata) ? copy.metadata.labels : undefined
  if (isObject(labels)) {
    labels[hashLabel] = undefined
    if (Object.keys(labels).every((k) => labels[k] === undefined)) (copy.metadata as JsonObject).labels = undefined
  }
  return copy
}

const intOrPercent = (value: unknown, total: number, roundUp: boolean): number => {
  if (typeof value === "number") return value
  if (typeof value === "string" && value.endsWith("%")) {
    const n = (Number(value.slice(0, -1)) * total) / 100
    return roundUp ? Math.ceil(n) : Math.floor(n)
  }
  if (typeof value === "string" && /^\d+$/.test(value)) return Number(value)
  return 0
}

interface Plan {
  readonly replicas: number
  readonly recreate: boolean
  readonly maxSurge: number
  readonly maxUnavailable: number
}

const planOf = (spec: JsonObject): Plan => {
  const replicas = typeof spec.replicas === "number" ? spec.replicas : 1
  const strategy = isObject(spec.strategy) ? spec.strategy : {}
  const recreate = strategy.type === "Recreate"
  const rolling = isObject(strategy.rollingUpdate) ? strategy.rollingUpdate : {}
  let maxSurge = recreate ? 0 : intOrPercent(rolling.maxSurge ?? "25%", replicas, true)
  let maxUnavailable = recreate ? 0 : intOrPercent(rolling.maxUnavailable ?? "25%", replicas, false)
  if (!recreate && maxSurge === 0 && maxUnavailable === 0) maxUnavailable = 1
  if (maxUnavailable > replicas) maxUnavailable = replicas
  if (replicas === 0) {
    maxSurge = recreate ? 0 : maxSurge
    maxUnavailable = 0
  }
  return { replicas, recreate, maxSurge, maxUnavailable }
}

const specReplicas = (rs: Entry): number => {
  const r = (rs.obj.spec as JsonObject | undefined)?.replicas
  return typeof r === "number" ? r : 1
}

const statusCount = (obj: JsonObject, field: string): number => {
  const v = isObject(obj.status) ? obj.status[field] : undefined
  return typeof v === "number" ? v : 0
}

const revisionOf = (rs: Entry): number => {
  const annotations = metadataOf(rs.obj).annotations
  const v = isObject(annotations) ? Number(annotations[revisionAnnotation]) : NaN
  return Number.isFinite(v) ? v : 0
}

/** Sets a condition as the deployment controller does: unchanged when status and reason are; else moved to the end. */
const setDeploymentCondition = (
  status: JsonObject,
  type: string,
  value: "True" | "False" | "Unknown",
  reason: string,
  message: string,
  at: string,
  keepTransition?: unknown
): void => {
  const conditions = Array.isArray(status.conditions) ? status.conditions as Array<JsonObject> : []
  const old = conditions.find((c) => c.type === type)
  if (old !== undefined && old.status === value && old.reason === reason) return
  const lastTransitionTime = keepTransition ?? (old !== undefined && old.status === value ? old.lastTransitionTime : at)
  status.conditions = [
    ...conditions.filter((c) => c.type !== type),
    { type, status: value, lastUpdateTime: at, lastTransitionTime, reason, message }
  ]
}

/** @internal */
export const installDeployments = (state: FakeState): void => {
  const queue = new WorkQueue(state, (key) => sync(state, key, queue))
  const ownerOfReplicaSet = (rs: Entry) => {
    const ref = controllerOf(rs.obj)
    if (ref !== undefined) {
      if (ref.kind === "Deployment" && typeof ref.name === "string") queue.add(keyFor(rs.namespace, ref.name))
      return
    }
    const labels = labelsOf(rs.obj)
    for (const d of entriesOf(state, deploymentKind(state), rs.namespace)) {
      const selector = (d.obj.spec as JsonObject | undefined)?.selector
      if (selectorMatches(selector, labels)) queue.add(keyFor(d.namespace, d.name))
    }
  }
  /** A Recreate rollout waits for the old pods: their end concerns the Deployment. */
  const podEnded = (pod: Entry) => {
    const ref = controllerOf(pod.obj)
    if (ref?.kind !== "ReplicaSet" || typeof ref.name !== "string") return
    const rs = entryOf(state, replicaSetKind(state), pod.namespace, ref.name)
    if (rs !== undefined) ownerOfReplicaSet(rs)
  }
  state.onWrite((kind, entry, prev) => {
    if (isSeed(entry, prev)) return
    if (kind.group === "apps" && kind.plural === "deployments") queue.add(keyFor(entry.namespace, entry.name))
    else if (kind.group === "apps" && kind.plural === "replicasets") ownerOfReplicaSet(entry)
    else if (kind.group === "" && kind.plural === "pods" && isFinished(entry.obj)) podEnded(entry)
  })
  state.onRemove((kind, removed) => {
    if (kind.group === "apps" && kind.plural === "replicasets") ownerOfReplicaSet(removed)
    else if (kind.group === "" && kind.plural === "pods") podEnded(removed)
  })
}

/** The ReplicaSets a Deployment controls (adopting matching orphans, releasing those that no longer match). */
const claimReplicaSets = (state: FakeState, d: Entry, selector: unknown): Array<Entry> => {
  const kind = replicaSetKind(state)
  const owned: Array<Entry> = []
  for (const rs of entriesOf(state, kind, d.namespace)) {
    const ref = controllerOf(rs.obj)
    const matches = selectorMatches(selector, labelsOf(rs.obj))
    if (ref?.uid === d.uid) {
      if (matches) owned.push(rs)
      else if (!isDeleting(d)) {
        editObject(state, kind, rs, (draft) => {
          const meta = metadataOf(draft)
          const refs = (meta.ownerReferences as Array<JsonObject>).filter((r) => r.uid !== d.uid)
          meta.ownerReferences = refs.length > 0 ? refs : undefined
        })
      }
    } else if (ref === undefined && matches && !isDeleting(d) && !isDeleting(rs)) {
      owned.push(editObject(state, kind, rs, (draft) => {
        const meta = metadataOf(draft)
        meta.ownerReferences = [...(Array.isArray(meta.ownerReferences) ? meta.ownerReferences : []), controllerRef(d)]
      }))
    }
  }
  return owned.sort((a, b) =>
    (a.creationTimestamp ?? "").localeCompare(b.creationTimestamp ?? "") || a.key.localeCompare(b.key)
  )
}

const sync = (state: FakeState, key: string, queue: WorkQueue): void => {
  const { name, namespace } = splitKey(key)
  const dKind = deploymentKind(state)
  const rsKind = replicaSetKind(state)
  let d = entryOf(state, dKind, namespace, name)
  if (d === undefined || isDeleting(d)) return
  const spec = isObject(d.obj.spec) ? d.obj.spec : {}
  const selector = spec.selector
  if (!isUsableSelector(selector)) return
  if (isEmptySelector(selector)) {
    // "SelectingAll": the controller only says it saw this generation
    editObject(state, dKind, d, (draft) => {
      const status = isObject(draft.status) ? draft.status : (draft.status = {})
      if (statusCount(draft, "observedGeneration") < d!.generation) status.observedGeneration = d!.generation
    })
    return
  }
  const plan = planOf(spec)
  const paused = spec.paused === true
  const at = state.now()
  const reread = (rs: Entry): Entry => entryOf(state, rsKind, rs.namespace, rs.name) ?? rs
  const scale = (rs: Entry, replicas: number): Entry =>
    editObject(state, rsKind, reread(rs), (draft) => {
      const s = draft.spec as JsonObject
      s.replicas = replicas
      const had = metadataOf(draft).annotations
      const annotations = { ...(isObject(had) ? had : {}) }
      annotations[desiredReplicasAnnotation] = String(plan.replicas)
      annotations[maxReplicasAnnotation] = String(plan.replicas + plan.maxSurge)
      metadataOf(draft).annotations = annotations
    })

  // paused or resumed: the Progressing condition says so first
  const progressing = conditionOf(d.obj.status, "Progressing")
  const pausedCondition = progressing?.reason === "DeploymentPaused"
  if (progressing?.reason !== "ProgressDeadlineExceeded" && paused !== pausedCondition) {
    d = editObject(state, dKind, d, (draft) => {
      const status = isObject(draft.status) ? draft.status : (draft.status = {})
      const [reason, message] = paused ?
        ["DeploymentPaused", "Deployment is paused"] :
        ["DeploymentResumed", "Deployment is resumed"]
      setDeploymentCondition(status, "Progressing", "Unknown", reason, message, at)
    })
  }

  let all = claimReplicaSets(state, d, selector)
  const template = spec.template
  let newRS = all.find((rs) => deepEqual(withoutHash((rs.obj.spec as JsonObject | undefined)?.template), template))
  const olds = () => all.filter((rs) => rs.uid !== newRS?.uid)
  const maxOldRevision = olds().reduce((m, rs) => Math.max(m, revisionOf(rs)), 0)
  const newRevision = maxOldRevision + 1

  const adoptRevision = (rs: Entry): Entry => {
    const current = revisionOf(rs)
    if (current >= newRevision) return rs
    return editObject(state, rsKind, rs, (draft) => {
      const meta = metadataOf(draft)
      const annotations = { ...(isObject(meta.annotations) ? meta.annotations : {}) }
      if (current > 0) {
        const history = typeof annotations[revisionHistoryAnnotation] === "string" ?
          `${annotations[revisionHistoryAnnotation] as string},${current}` :
          String(current)
        annotations[revisionHistoryAnnotation] = history
      }
      annotations[revisionAnnotation] = String(newRevision)
      meta.annotations = annotations
    })
  }
  let refused = false
  const createNew = (replicas: number): Entry | undefined => {
    const collisionCount = statusCount(d!.obj, "collisionCount")
    const hash = templateHash(template, collisionCount)
    const t = clone(isObject(template) ? template : {})
    const tMeta = isObject(t.metadata) ? t.metadata : (t.metadata = {})
    tMeta.labels = { ...(isObject(tMeta.labels) ? tMeta.labels : {}), [hashLabel]: hash }
    const dAnnotations = metadataOf(d!.obj).annotations
    const annotations: JsonObject = {}
    if (isObject(dAnnotations)) {
      for (const [k, v] of Object.entries(dAnnotations)) if (!notCopied.has(k)) annotations[k] = v
    }
    annotations[desiredReplicasAnnotation] = String(plan.replicas)
    annotations[maxReplicasAnnotation] = String(plan.replicas + plan.maxSurge)
    annotations[revisionAnnotation] = String(newRevision)
    const sel = clone(selector)
    sel.matchLabels = { ...(isObject(sel.matchLabels) ? sel.matchLabels : {}), [hashLabel]: hash }
    const rsName = `${d!.name}-${hash}`
    if (!selectorMatches(sel, tMeta.labels)) {
      // the API server refuses the ReplicaSet (its validation's message), and the Deployment says so
      refused = true
      const refusal = Field.toStatus(rsKind, rsName, [
        Field.invalid("spec.template.metadata.labels", Field.goLabels(tMeta.labels), selectorMismatch)
      ])
      d = editObject(state, dKind, d!, (draft) => {
        const status = isObject(draft.status) ? draft.status : (draft.status = {})
        setDeploymentCondition(
          status,
          "Progressing",
          "False",
          "ReplicaSetCreateError",
          `Failed to create new replica set "${rsName}": ${refusal.message}`,
          at
        )
      })
      return undefined
    }
    const existing = entryOf(state, rsKind, namespace, rsName)
    if (existing !== undefined) {
      // a ReplicaSet of that name with another template: count the collision and try again
      d = editObject(state, dKind, d!, (draft) => {
        const status = isObject(draft.status) ? draft.status : (draft.status = {})
        status.collisionCount = collisionCount + 1
      })
      queue.add(key)
      return undefined
    }
    return createObject(state, rsKind, {
      apiVersion: "apps/v1",
      kind: "ReplicaSet",
      metadata: {
        name: rsName,
        namespace,
        labels: tMeta.labels,
        annotations,
        ownerReferences: [controllerRef(d!)]
      },
      spec: {
        replicas,
        ...(typeof spec.minReadySeconds === "number" ? { minReadySeconds: spec.minReadySeconds } : {}),
        selector: sel,
        template: t
      }
    })
  }
  const setProgressing = (reason: string, message: string) => {
    d = editObject(state, dKind, d!, (draft) => {
      const status = isObject(draft.status) ? draft.status : (draft.status = {})
      setDeploymentCondition(status, "Progressing", "True", reason, message, at)
    })
  }
  const syncRevision = () => {
    if (newRS === undefined) return
    const revision = String(revisionOf(newRS))
    d = editObject(state, dKind, d!, (draft) => {
      const meta = metadataOf(draft)
      const annotations = isObject(meta.annotations) ? meta.annotations : {}
      if (annotations[revisionAnnotation] === revision) return
      meta.annotations = { ...annotations, [revisionAnnotation]: revision }
    })
    if (conditionOf(d!.obj.status, "Progressing") === undefined) {
      setProgressing("FoundNewReplicaSet", `Found new replica set "${newRS.name}"`)
    }
  }
  const ensureNew = (replicas: number) => {
    if (newRS !== undefined) {
      newRS = adoptRevision(newRS)
      syncRevision()
      return
    }
    const created = createNew(replicas)
    if (created === undefined) return
    newRS = created
    all = [...all, created]
    syncRevision()
    setProgressing("NewReplicaSetCreated", `Created new replica set "${created.name}"`)
  }

  if (!paused) {
    if (plan.recreate) {
      let scaledDown = false
      for (const rs of olds()) {
        if (specReplicas(reread(rs)) > 0) {
          scale(rs, 0)
          scaledDown = true
        }
      }
      const oldUids = new Set(olds().map((rs) => rs.uid))
      const oldPodsRunning = olds().some((rs) => statusCount(reread(rs).obj, "replicas") > 0) ||
        entriesOf(state, podKind(state), namespace).some((p) => {
          const ref = controllerOf(p.obj)
          return ref !== undefined && oldUids.has(ref.uid as string) && !isFinished(p.obj)
        })
      if (!scaledDown && !oldPodsRunning) {
        ensureNew(plan.replicas)
        if (newRS !== undefined && specReplicas(reread(newRS)) !== plan.replicas) newRS = scale(newRS, plan.replicas)
      } else if (newRS !== undefined) {
        newRS = adoptRevision(newRS)
        syncRevision()
      }
    } else {
      const total = () => all.reduce((n, rs) => n + specReplicas(reread(rs)), 0)
      const newReplicasWanted = (current: number): number => {
        const maxTotal = plan.replicas + plan.maxSurge
        const count = total()
        if (count >= maxTotal) return current
        return current + Math.min(maxTotal - count, plan.replicas - current)
      }
      if (newRS === undefined) ensureNew(newReplicasWanted(0))
      else ensureNew(0)
      if (newRS !== undefined) {
        const current = specReplicas(reread(newRS))
        if (current > plan.replicas) newRS = scale(newRS, plan.replicas)
        else if (current < plan.replicas) {
          const wanted = newReplicasWanted(current)
          if (wanted !== current) newRS = scale(newRS, wanted)
        }
        scaleDownOld(state, plan, reread(newRS), olds().map(reread), scale)
      }
    }
  } else if (newRS !== undefined && olds().every((rs) => specReplicas(reread(rs)) === 0)) {
    // a paused deployment still scales
    if (specReplicas(reread(newRS)) !== plan.replicas) newRS = scale(newRS, plan.replicas)
  }

  if (refused) return
  all = all.map(reread).filter((rs) => entryOf(state, rsKind, rs.namespace, rs.name) !== undefined)
  if (newRS !== undefined) newRS = reread(newRS)
  d = entryOf(state, dKind, namespace, name) ?? d
  const status = calculateStatus(d, all, newRS, plan, at, state.clock.now(), paused)
  const latest = editObject(state, dKind, d, (draft) => {
    draft.status = status
  })
  const complete = isComplete(latest, plan)
  if (complete && !paused) cleanup(state, spec, olds().map(reread))
  const cond = conditionOf(latest.obj.status, "Progressing")
  const deadline = typeof spec.progressDeadlineSeconds === "number" ? spec.progressDeadlineSeconds : 600
  if (
    !paused && cond?.status === "True" && cond.reason !== "NewReplicaSetAvailable" &&
    typeof cond.lastUpdateTime === "string"
  ) {
    queue.addAfter(key, Date.parse(cond.lastUpdateTime) + deadline * 1000 - state.clock.now() + 1)
  }
}

/** RollingUpdate: old ReplicaSets scaled down as far as availability allows, unhealthy replicas first. */
const scaleDownOld = (
  _state: FakeState,
  plan: Plan,
  newRS: Entry,
  olds: ReadonlyArray<Entry>,
  scale: (rs: Entry, replicas: number) => Entry
): void => {
  const oldCount = olds.reduce((n, rs) => n + specReplicas(rs), 0)
  if (oldCount === 0) return
  const allCount = oldCount + specReplicas(newRS)
  const minAvailable = plan.replicas - plan.maxUnavailable
  const newUnavailable = specReplicas(newRS) - statusCount(newRS.obj, "availableReplicas")
  let maxScaledDown = allCount - minAvailable - newUnavailable
  if (maxScaledDown <= 0) return
  const replicas = new Map(olds.map((rs) => [rs, specReplicas(rs)]))
  for (const rs of olds) {
    if (maxScaledDown <= 0) break
    const r = replicas.get(rs)!
    const unhealthy = r - statusCount(rs.obj, "availableReplicas")
    if (unhealthy <= 0) continue
    const down = Math.min(maxScaledDown, unhealthy)
    replicas.set(rs, r - down)
    maxScaledDown -= down
  }
  const available = olds.reduce((n, rs) => n + statusCount(rs.obj, "availableReplicas"), 0) +
    statusCount(newRS.obj, "availableReplicas")
  let toScaleDown = available - minAvailable
  for (const rs of olds) {
    if (toScaleDown <= 0) break
    const r = replicas.get(rs)!
    if (r === 0) continue
    const down = Math.min(r, toScaleDown)
    replicas.set(rs, r - down)
    toScaleDown -= down
  }
  for (const rs of olds) {
    const r = replicas.get(rs)!
    if (r !== specReplicas(rs)) scale(rs, r)
  }
}

const isComplete = (d: Entry, plan: Plan): boolean => {
  const s = d.obj
  return statusCount(s, "updatedReplicas") === plan.replicas && statusCount(s, "replicas") === plan.replicas &&
    statusCount(s, "availableReplicas") === plan.replicas &&
    statusCount(s, "observedGeneration") >= d.generation
}

const calculateStatus = (
  d: Entry,
  all: ReadonlyArray<Entry>,
  newRS: Entry | undefined,
  plan: Plan,
  at: string,
  nowMs: number,
  paused: boolean
): JsonObject => {
  const old = isObject(d.obj.status) ? d.obj.status : {}
  const sum = (field: string) => all.reduce((n, rs) => n + statusCount(rs.obj, field), 0)
  const replicas = sum("replicas")
  const updated = newRS !== undefined ? statusCount(newRS.obj, "replicas") : 0
  const ready = sum("readyReplicas")
  const available = sum("availableReplicas")
  const unavailable = Math.max(0, plan.replicas - available)
  const status: JsonObject = {
    observedGeneration: d.generation,
    ...(replicas > 0 ? { replicas } : {}),
    ...(updated > 0 ? { updatedReplicas: updated } : {}),
    ...(ready > 0 ? { readyReplicas: ready } : {}),
    ...(available > 0 ? { availableReplicas: available } : {}),
    ...(unavailable > 0 ? { unavailableReplicas: unavailable } : {}),
    // its ReplicaSets' pods going but not gone (v1.35's DeploymentReplicaSetTerminatingReplicas, 0 included)
    terminatingReplicas: sum("terminatingReplicas"),
    ...(Array.isArray(old.conditions) ? { conditions: clone(old.conditions) } : {}),
    ...(typeof old.collisionCount === "number" ? { collisionCount: old.collisionCount } : {})
  }
  if (available >= plan.replicas - plan.maxUnavailable) {
    setDeploymentCondition(
      status,
      "Available",
      "True",
      "MinimumReplicasAvailable",
      "Deployment has minimum availability.",
      at
    )
  } else {
    setDeploymentCondition(
      status,
      "Available",
      "False",
      "MinimumReplicasUnavailable",
      "Deployment does not have minimum availability.",
      at
    )
  }
  if (paused) return status
  const current = conditionOf(old, "Progressing")
  const completeAlready = replicas === updated && current?.reason === "NewReplicaSetAvailable"
  if (completeAlready) return status
  const newName = newRS?.name
  const complete = updated === plan.replicas && replicas === plan.replicas && available === plan.replicas
  const oldReplicas = (s: JsonObject) =>
    statusCount({ status: s }, "replicas") - statusCount({ status: s }, "updatedReplicas")
  const progressed = updated > statusCount(d.obj, "updatedReplicas") || oldReplicas(status) < oldReplicas(old) ||
    ready > statusCount(d.obj, "readyReplicas") || available > statusCount(d.obj, "availableReplicas")
  if (complete) {
    setDeploymentCondition(
      status,
      "Progressing",
      "True",
      "NewReplicaSetAvailable",
      newName !== undefined ?
        `ReplicaSet "${newName}" has successfully progressed.` :
        `Deployment "${d.name}" has successfully progressed.`,
      at
    )
  } else if (progressed) {
    const conditions = (status.conditions as Array<JsonObject> | undefined) ?? []
    const existing = conditions.find((c) => c.type === "Progressing")
    status.conditions = conditions.filter((c) => c.type !== "Progressing")
    setDeploymentCondition(
      status,
      "Progressing",
      "True",
      "ReplicaSetUpdated",
      newName !== undefined ? `ReplicaSet "${newName}" is progressing.` : `Deployment "${d.name}" is progressing.`,
      at,
      existing?.status === "True" ? existing.lastTransitionTime : undefined
    )
  } else if (current !== undefined && current.reason !== "NewReplicaSetAvailable") {
    const deadline = typeof (d.obj.spec as JsonObject).progressDeadlineSeconds === "number" ?
      (d.obj.spec as JsonObject).progressDeadlineSeconds as number :
      600
    const from = typeof current.lastUpdateTime === "string" ? Date.parse(current.lastUpdateTime) : NaN
    if (current.reason === "ProgressDeadlineExceeded" || from + deadline * 1000 < nowMs) {
      setDeploymentCondition(
        status,
        "Progressing",
        "False",
        "ProgressDeadlineExceeded",
        newName !== undefined ?
          `ReplicaSet "${newName}" has timed out progressing.` :
          `Deployment "${d.name}" has timed out progressing.`,
        at
      )
    }
  }
  return status
}

/** Old ReplicaSets beyond `revisionHistoryLimit` (default 10) go, oldest revision first, once empty. */
const cleanup = (state: FakeState, spec: JsonObject, olds: ReadonlyArray<Entry>): void => {
  const limit = typeof spec.revisionHistoryLimit === "number" ? spec.revisionHistoryLimit : 10
  const cleanable = olds.filter((rs) => !isDeleting(rs))
  const excess = cleanable.length - limit
  if (excess <= 0) return
  const byRevision = [...cleanable].sort((a, b) => revisionOf(a) - revisionOf(b))
  for (const rs of byRevision.slice(0, excess)) {
    if (statusCount(rs.obj, "replicas") !== 0 || specReplicas(rs) !== 0) continue
    if (rs.generation > statusCount(rs.obj, "observedGeneration")) continue
    removeObject(state, replicaSetKind(state), rs)
  }
}

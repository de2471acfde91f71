/**
 * Workloads: Deployments, ReplicaSets, StatefulSets, DaemonSets (apps/v1), Jobs and
 * CronJobs (batch/v1), and the Scale their `scale` subresource takes, as
 * pkg/apis/apps/validation and pkg/apis/batch/validation check them.
 *
 * @internal
 */
import { deepEqual, isObject, type JsonObject } from "../store/json.js"
import * as Field from "./field.js"
import * as Meta from "./meta.js"
import * as Names from "./names.js"
import * as Pods from "./pods.js"
import { at, child, type Errors, nonNegative, oneOf, type Rule, valueAt } from "./rules.js"

const objectAt = (obj: unknown, path: string): JsonObject => {
  const v = valueAt(obj, path)
  return isObject(v) ? v : {}
}

/** `intstr.IntOrString` as `%#v` prints it. */
const goIntOrString = (v: unknown): Field.GoValue =>
  typeof v === "string"
    ? new Field.GoValue(`intstr.IntOrString{Type:1, IntVal:0, StrVal:${Field.quote(v)}}`)
    : new Field.GoValue(`intstr.IntOrString{Type:0, IntVal:${String(v)}, StrVal:""}`)

const percentOf = (v: unknown): number | undefined =>
  typeof v === "string" && Names.isValidPercent(v).length === 0 ? Number(v.slice(0, -1)) : undefined

/** `ValidatePositiveIntOrPercent` and `IsNotMoreThan100Percent`. @internal */
export const intOrPercent = (value: unknown, path: string, errors: Errors): void => {
  if (value === undefined || value === null) return
  if (typeof value === "string") {
    for (const msg of Names.isValidPercent(value)) errors.push(Field.invalid(path, goIntOrString(value), msg))
  } else if (typeof value === "number") {
    if (value < 0) errors.push(Field.invalid(path, value, Names.isNegativeErrorMsg))
  }
  const percent = percentOf(value)
  if (percent !== undefined && percent > 100) {
    errors.push(Field.invalid(path, goIntOrString(value), "must not be greater than 100%"))
  }
}

const intOrPercentValue = (v: unknown): number => (typeof v === "number" ? v : percentOf(v) ?? 0)

/** The selector of a workload: required, valid, not empty (`empty selector is invalid for <what>`). */
const selectorRules = (what: string): Rule => (obj, errors) => {
  const selector = valueAt(obj, "spec.selector")
  if (selector === undefined || selector === null) {
    errors.push(Field.required("spec.selector", ""))
    return
  }
  Meta.validateLabelSelector(selector, "spec.selector", errors)
  if (Meta.isEmptySelector(selector)) {
    errors.push(Field.invalid("spec.selector", Field.goSelector(selector), `empty selector is invalid for ${what}`))
  }
}

/** Template labels the selector must select (an absent selector selects nothing; an empty one everything). */
const templateMatchesSelector: Rule = (obj, errors) => {
  const selector = valueAt(obj, "spec.selector")
  const labels = valueAt(obj, "spec.template.metadata.labels")
  const empty = isObject(selector) && Meta.isEmptySelector(selector)
  if (!empty && !Meta.selectorMatches(selector, labels)) {
    errors.push(Field.invalid(
      "spec.template.metadata.labels",
      Field.goLabels(labels),
      "`selector` does not match template `labels`"
    ))
  }
}

/** `ValidatePodTemplateSpecForReplicaSet` (Deployments and ReplicaSets). */
const replicaSetTemplate: Rule = (obj, errors) => {
  templateMatchesSelector(obj, errors, undefined)
  restartingTemplate("ReplicaSet")(obj, errors, undefined)
}

/**
 * The pod template of a controller whose pods run for ever (ReplicaSet, StatefulSet,
 * DaemonSet): a valid template, `restartPolicy: Always`, no `activeDeadlineSeconds`
 * (DaemonSet's validation calls that Invalid, the others Forbidden).
 */
const restartingTemplate = (kind: "ReplicaSet" | "StatefulSet" | "DaemonSet"): Rule => (obj, errors) => {
  Pods.validatePodTemplateSpec(valueAt(obj, "spec.template"), "spec.template", errors)
  const spec = objectAt(obj, "spec.template.spec")
  if (spec.restartPolicy !== "Always") {
    errors.push(Field.notSupported("spec.template.spec.restartPolicy", spec.restartPolicy ?? "", ["Always"]))
  }
  const deadline = spec.activeDeadlineSeconds
  if (deadline !== undefined && deadline !== null) {
    const path = "spec.template.spec.activeDeadlineSeconds"
    const detail = `activeDeadlineSeconds in ${kind} is not Supported`
    errors.push(kind === "DaemonSet" ? Field.invalid(path, deadline, detail) : Field.forbidden(path, detail))
  }
}

const deploymentStrategy: Rule = (obj, errors) => {
  const strategy = objectAt(obj, "spec.strategy")
  const rolling = strategy.rollingUpdate
  switch (strategy.type) {
    case "Recreate":
      if (rolling !== undefined && rolling !== null) {
        errors.push(Field.forbidden("spec.strategy.rollingUpdate", "may not be specified when strategy `type` is 'Recreate'"))
      }
      break
    case "RollingUpdate": {
      if (!isObject(rolling)) {
        errors.push(Field.required("spec.strategy.rollingUpdate", "this should be defaulted and never be nil"))
        break
      }
      const path = "spec.strategy.rollingUpdate"
      intOrPercent(rolling.maxUnavailable, child(path, "maxUnavailable"), errors)
      intOrPercent(rolling.maxSurge, child(path, "maxSurge"), errors)
      if (intOrPercentValue(rolling.maxUnavailable) === 0 && intOrPercentValue(rolling.maxSurge) === 0) {
        errors.push(Field.invalid(
          child(path, "maxUnavailable"),
          typeof rolling.maxUnavailable === "string" ? goIntOrString(rolling.maxUnavailable) : rolling.maxUnavailable,
          "may not be 0 when `maxSurge` is 0"
        ))
      }
      break
    }
    default:
      errors.push(Field.notSupported("spec.strategy", new Field.GoValue("apps.DeploymentStrategy{...}"), [
        "Recreate",
        "RollingUpdate"
      ]))
  }
}

const progressDeadline: Rule = (obj, errors) => {
  const deadline = valueAt(obj, "spec.progressDeadlineSeconds")
  if (typeof deadline !== "number") return
  nonNegative(deadline, "spec.progressDeadlineSeconds", errors)
  const minReady = valueAt(obj, "spec.minReadySeconds")
  if (deadline <= (typeof minReady === "number" ? minReady : 0)) {
    errors.push(Field.invalid("spec.progressDeadlineSeconds", deadline, "must be greater than minReadySeconds"))
  }
}

const selectorImmutable: Rule = (obj, errors, old) => {
  if (old === undefined) return
  const now = valueAt(obj, "spec.selector")
  if (!deepEqual(now, valueAt(old, "spec.selector"))) {
    errors.push(Field.immutable("spec.selector", Field.goSelector(now)))
  }
}

/** @internal */
export const deployment: ReadonlyArray<Rule> = [
  at("spec.replicas", nonNegative),
  selectorRules("deployment"),
  replicaSetTemplate,
  deploymentStrategy,
  at("spec.minReadySeconds", nonNegative),
  at("spec.revisionHistoryLimit", nonNegative),
  progressDeadline,
  selectorImmutable
]

/** @internal */
export const replicaSet: ReadonlyArray<Rule> = [
  at("spec.replicas", nonNegative),
  at("spec.minReadySeconds", nonNegative),
  // the API server words it so for ReplicaSets too
  selectorRules("deployment"),
  replicaSetTemplate,
  selectorImmutable
]

const statefulSetUpdatable = [
  "replicas",
  "ordinals",
  "template",
  "updateStrategy",
  "revisionHistoryLimit",
  "persistentVolumeClaimRetentionPolicy",
  "minReadySeconds"
]

/** @internal */
export const statefulSet: ReadonlyArray<Rule> = [
  at("spec.podManagementPolicy", (v, path, errors) => {
    if (v === undefined || v === "") errors.push(Field.required(path, ""))
    else if (v !== "OrderedReady" && v !== "Parallel") {
      errors.push(Field.invalid(path, v, "must be 'OrderedReady' or 'Parallel'"))
    }
  }),
  (obj, errors) => {
    const strategy = objectAt(obj, "spec.updateStrategy")
    if (strategy.type === undefined || strategy.type === "") errors.push(Field.required("spec.updateStrategy", ""))
    else if (strategy.type === "OnDelete" && strategy.rollingUpdate !== undefined) {
      errors.push(Field.invalid(
        "spec.updateStrategy.rollingUpdate",
        new Field.GoValue("apps.RollingUpdateStatefulSetStrategy{...}"),
        "only allowed for updateStrategy 'RollingUpdate'"
      ))
    } else if (strategy.type === "RollingUpdate") {
      nonNegative(valueAt(strategy, "rollingUpdate.partition"), "spec.updateStrategy.rollingUpdate.partition", errors)
    } else if (strategy.type !== "OnDelete") {
      errors.push(Field.invalid(
        "spec.updateStrategy",
        new Field.GoValue("apps.StatefulSetUpdateStrategy{...}"),
        "must be 'RollingUpdate' or 'OnDelete'"
      ))
    }
  },
  at("spec.persistentVolumeClaimRetentionPolicy.whenDeleted", oneOf(["Retain", "Delete"])),
  at("spec.persistentVolumeClaimRetentionPolicy.whenScaled", oneOf(["Retain", "Delete"])),
  at("spec.replicas", nonNegative),
  at("spec.minReadySeconds", nonNegative),
  at("spec.ordinals.start", nonNegative),
  selectorRules("statefulset"),
  templateMatchesSelector,
  restartingTemplate("StatefulSet"),
  (obj, errors, old) => {
    if (old === undefined) return
    const now: JsonObject = { ...objectAt(obj, "spec") }
    const before = objectAt(old, "spec")
    for (const k of statefulSetUpdatable) now[k] = before[k]
    if (!deepEqual(now, before)) {
      errors.push(Field.forbidden(
        "spec",
        "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', " +
          "'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"
      ))
    }
  }
]

/** @internal */
export const daemonSet: ReadonlyArray<Rule> = [
  (obj, errors) => {
    const selector = valueAt(obj, "spec.selector")
    if (selector === undefined || selector === null) errors.push(Field.required("spec.selector", ""))
    else Meta.validateLabelSelector(selector, "spec.selector", errors)
  },
  templateMatchesSelector,
  (obj, errors) => {
    const selector = valueAt(obj, "spec.selector")
    if (isObject(selector) && Meta.isEmptySelector(selector)) {
      errors.push(Field.invalid("spec.selector", Field.goSelector(selector), "empty selector is invalid for daemonset"))
    }
  },
  restartingTemplate("DaemonSet"),
  at("spec.minReadySeconds", nonNegative),
  (obj, errors) => {
    const strategy = objectAt(obj, "spec.updateStrategy")
    if (strategy.type === "RollingUpdate") {
      const rolling = isObject(strategy.rollingUpdate) ? strategy.rollingUpdate : {}
      const path = "spec.updateStrategy.rollingUpdate"
      intOrPercent(rolling.maxUnavailable, child(path, "maxUnavailable"), errors)
      intOrPercent(rolling.maxSurge, child(path, "maxSurge"), errors)
      const unavailable = intOrPercentValue(rolling.maxUnavailable)
      const surge = intOrPercentValue(rolling.maxSurge)
      if (unavailable === 0 && surge === 0) {
        errors.push(Field.invalid(child(path, "maxUnavailable"), rolling.maxUnavailable ?? 0, "cannot be 0 when maxSurge is 0"))
      } else if (unavailable !== 0 && surge !== 0) {
        errors.push(Field.invalid(
          child(path, "maxSurge"),
          rolling.maxSurge ?? 0,
          "may not be set when maxUnavailable is non-zero"
        ))
      }
    } else if (strategy.type !== "OnDelete") {
      errors.push(Field.notSupported("spec.updateStrategy.type", strategy.type ?? "", ["OnDelete", "RollingUpdate"]))
    }
  },
  at("spec.revisionHistoryLimit", nonNegative),
  selectorImmutable
]

/** `validateJobSpec` of a Job or a CronJob's job template (`path`: where the job spec is). */
const jobSpec = (spec: unknown, path: string, errors: Errors): void => {
  const s = isObject(spec) ? spec : {}
  for (const f of ["parallelism", "completions", "activeDeadlineSeconds", "backoffLimit", "ttlSecondsAfterFinished"]) {
    nonNegative(s[f], child(path, f), errors)
  }
  if (s.completionMode !== undefined) {
    oneOf(["NonIndexed", "Indexed"])(s.completionMode, child(path, "completionMode"), errors)
    if (s.completionMode === "Indexed" && s.completions === undefined) {
      errors.push(Field.required(child(path, "completions"), "when completion mode is Indexed"))
    }
  }
  oneOf(["TerminatingOrFailed", "Failed"])(s.podReplacementPolicy, child(path, "podReplacementPolicy"), errors)
  Pods.validatePodTemplateSpec(s.template, child(path, "template"), errors)
  const restartPolicy = valueAt(s, "template.spec.restartPolicy")
  if (restartPolicy !== "OnFailure" && restartPolicy !== "Never") {
    errors.push(Field.notSupported(child(path, "template.spec.restartPolicy"), restartPolicy ?? "", ["OnFailure", "Never"]))
  } else if (restartPolicy === "OnFailure" && s.podFailurePolicy !== undefined) {
    errors.push(Field.invalid(
      child(path, "template.spec.restartPolicy"),
      restartPolicy,
      "only \"Never\" is supported when podFailurePolicy is specified"
    ))
  }
}

const jobImmutable = ["completionMode", "podFailurePolicy", "backoffLimitPerIndex", "podReplacementPolicy"]

/** @internal */
export const job: ReadonlyArray<Rule> = [
  (obj, errors) => {
    const spec = objectAt(obj, "spec")
    jobSpec(spec, "spec", errors)
    if (spec.selector === undefined || spec.selector === null) errors.push(Field.required("spec.selector", ""))
    else Meta.validateLabelSelector(spec.selector, "spec.selector", errors)
    if (isObject(spec.selector) && !Meta.selectorMatches(spec.selector, valueAt(spec, "template.metadata.labels"))) {
      errors.push(Field.invalid(
        "spec.template.metadata.labels",
        Field.goLabels(valueAt(spec, "template.metadata.labels")),
        "`selector` does not match template `labels`"
      ))
    }
  },
  (obj, errors, old) => {
    if (old === undefined) return
    const spec = objectAt(obj, "spec")
    const before = objectAt(old, "spec")
    if (!deepEqual(spec.completions, before.completions) && spec.completionMode !== "Indexed") {
      errors.push(Field.immutable("spec.completions", spec.completions ?? null))
    }
    if (!deepEqual(spec.selector, before.selector)) errors.push(Field.immutable("spec.selector", Field.goSelector(spec.selector)))
    const suspended = spec.suspend === true && before.suspend === true
    if (!suspended && !deepEqual(spec.template, before.template)) {
      errors.push(Field.immutable("spec.template", new Field.GoValue("core.PodTemplateSpec{...}")))
    }
    for (const f of jobImmutable) {
      if (!deepEqual(spec[f], before[f])) errors.push(Field.immutable(`spec.${f}`, spec[f] ?? null))
    }
  }
]

const cronMacros = new Set(["@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly"])

/** What robfig/cron's standard parser says of a schedule, or undefined when it parses. */
const cronProblem = (schedule: string): string | undefined => {
  const trimmed = schedule.trim()
  if (cronMacros.has(trimmed) || trimmed.startsWith("@every ")) return undefined
  if (trimmed.startsWith("@")) return `unrecognized descriptor: ${trimmed}`
  const fields = trimmed.split(/\s+/).filter((f) => f !== "")
  if (fields.length !== 5) return `expected exactly 5 fields, found ${fields.length}: [${fields.join(" ")}]`
  const ranges: ReadonlyArray<readonly [number, number]> = [[0, 59], [0, 23], [1, 31], [1, 12], [0, 7]]
  for (let i = 0; i < 5; i++) {
    const [lo, hi] = ranges[i]!
    for (const part of fields[i]!.split(",")) {
      const [range, step] = part.split("/")
      if (step !== undefined && !/^\d+$/.test(step)) return `failed to parse int from ${step}: strconv.Atoi: parsing ${Field.quote(step)}: invalid syntax`
      if (range === "*" || range === "?") continue
      for (const n of range!.split("-")) {
        if (/^[a-zA-Z]{3}$/.test(n) && (i === 3 || i === 4)) continue
        if (!/^\d+$/.test(n)) return `failed to parse int from ${n}: strconv.Atoi: parsing ${Field.quote(n)}: invalid syntax`
        const v = Number(n)
        if (v < lo) return `beginning of range (${v}) below minimum (${lo}): ${part}`
        if (v > hi) return `end of range (${v}) above maximum (${hi}): ${part}`
      }
    }
  }
  return undefined
}

/** @internal */
export const cronJob: ReadonlyArray<Rule> = [
  (obj, errors) => {
    const name = valueAt(obj, "metadata.name")
    if (typeof name === "string" && name.length > 52) {
      errors.push(Field.invalid("metadata.name", name, "must be no more than 52 characters"))
    }
  },
  at("spec.schedule", (v, path, errors) => {
    if (typeof v !== "string" || v === "") {
      errors.push(Field.required(path, ""))
      return
    }
    if (/^(CRON_)?TZ=/.test(v.trim())) {
      errors.push(Field.invalid(path, v, "cannot use TZ or CRON_TZ in schedule, use timeZone field instead"))
      return
    }
    const problem = cronProblem(v)
    if (problem !== undefined) errors.push(Field.invalid(path, v, problem))
  }),
  at("spec.startingDeadlineSeconds", nonNegative),
  at("spec.concurrencyPolicy", oneOf(["Allow", "Forbid", "Replace"], "required")),
  (obj, errors) => {
    const template = objectAt(obj, "spec.jobTemplate")
    Meta.validateTemplateMeta(template.metadata, "spec.jobTemplate.metadata", errors)
    jobSpec(template.spec, "spec.jobTemplate.spec", errors)
  },
  at("spec.successfulJobsHistoryLimit", nonNegative),
  at("spec.failedJobsHistoryLimit", nonNegative)
]

/** The Scale a `scale` subresource is written with (`ValidateScale`). @internal */
export const scale = (obj: JsonObject): Errors => {
  const errors: Errors = []
  nonNegative(valueAt(obj, "spec.replicas"), "spec.replicas", errors)
  return errors
}

/**
 * `Manifests.diff`: what an apply would change, as the server says it. Each object is
 * applied as a server-side dry run (so defaults, admission and field ownership are the
 * server's) and compared with the live object; with an ApplySet and `prune: true`, the
 * members that would be pruned are listed too. What the server sets on every write
 * (resourceVersion, generation, managedFields, uid, creationTimestamp) and `status` (an
 * apply never changes it) are left out of the comparison. A Secret's values are masked
 * in the YAML shown, as `kubectl diff` masks them: only their keys ever appear.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Yaml from "yaml"
import type { ApplySetError, ObjectRef } from "../../Errors.js"
import type * as Kube from "../../Kube.js"
import type * as Manifests from "../../Manifests.js"
import type * as Resource from "../../Resource.js"
import * as applySet from "./applyset.js"
import * as client from "../client/execute.js"
import { isObject, type JsonObject } from "../codec/codec.js"
import * as manifests from "./manifests.js"
import * as request from "../request/verbs.js"

/** Metadata every write sets on its own: never a change an apply asks for. */
const serverSet: ReadonlyArray<string> = [
  "managedFields",
  "resourceVersion",
  "generation",
  "uid",
  "creationTimestamp",
  "selfLink"
]

/** The object as compared and shown: without status and the server's own metadata. */
const normalize = (object: unknown): JsonObject => {
  if (!isObject(object)) return {}
  const { status: _status, ...rest } = object
  const metadata: JsonObject = { ...(isObject(rest["metadata"]) ? rest["metadata"] : {}) }
  for (const field of serverSet) delete metadata[field]
  return { ...rest, metadata }
}

const isSecret = (object: JsonObject) => object["apiVersion"] === "v1" && object["kind"] === "Secret"

/**
 * Masks a Secret's values on both sides: `***` where they agree, `*** (before)` and
 * `*** (after)` where they differ, so a diff says that a value changed, never what it is.
 */
const mask = (before: JsonObject | undefined, after: JsonObject | undefined) => {
  const masked = (object: JsonObject | undefined, other: JsonObject | undefined, side: string) => {
    if (object === undefined || !isSecret(object)) return object
    const copy: JsonObject = { ...object }
    for (const field of ["data", "stringData"]) {
      const values = object[field]
      if (!isObject(values)) continue
      const others = other !== undefined && isObject(other[field]) ? other[field] : {}
      copy[field] = Object.fromEntries(
        Object.keys(values).map((key) => [
          key,
          Object.hasOwn(others, key) && others[key] !== values[key] ? `*** (${side})` : "***"
        ])
      )
    }
    return copy
  }
  return { before: masked(before, after, "before"), after: masked(after, before, "after") }
}

const identifier = /^[A-Za-z_][A-Za-z0-9_-]*$/

const appendKey = (path: string, key: string) =>
  identifier.test(key) ? (path === "" ? key : `${path}.${key}`) : `${path}[${JSON.stringify(key)}]`

const sameJson = (a: unknown, b: unknown): boolean => {
  if (a === b) return true
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => sameJson(x, b[i]))
  if (isObject(a) && isObject(b)) {
    const keys = Object.keys(a)
    return keys.length === Object.keys(b).length && keys.every((k) => Object.hasOwn(b, k) && sameJson(a[k], b[k]))
  }
  return false
}

/** The paths of the fields that differ: added, removed or changed, as deep as both sides go. */
export const changedPaths = (before: unknown, after: unknown, path = "", into: Array<string> = []): Array<string> => {
  if (isObject(before) && isObject(after)) {
    const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort()
    for (const key of keys) {
      const inBefore = Object.hasOwn(before, key)
      const inAfter = Object.hasOwn(after, key)
      if (inBefore && inAfter) changedPaths(before[key], after[key], appendKey(path, key), into)
      else into.push(appendKey(path, key))
    }
  } else if (Array.isArray(before) && Array.isArray(after)) {
    for (let i = 0; i < Math.max(before.length, after.length); i++) {
      if (i < before.length && i < after.length) changedPaths(before[i], after[i], `${path}[${i}]`, into)
      else into.push(`${path}[${i}]`)
    }
  } else if (!sameJson(before, after)) into.push(path)
  return into
}

const yamlOf = (object: JsonObject | undefined): string =>
  object === undefined ? "" : Yaml.stringify(object, { sortMapEntries: true, lineWidth: 0 })

/** The object's file name in the diff, as kubectl names it: `apps.v1.Deployment.shop.web`. */
const fileName = (resource: Resource.Resource<unknown>, ref: ObjectRef) =>
  [resource.group, resource.version, ref.kind, ref.namespace ?? "", ref.name].filter((p) => p !== "").join(".")

type TwoFilesPatch = typeof import("diff").createTwoFilesPatch

/**
 * The `diff` package, loaded by the first `Manifests.diff` rather than by the import of the
 * package root (each module loaded costs every cold start).
 */
const loadPatcher: Effect.Effect<TwoFilesPatch> = Effect.promise(() => import("diff")).pipe(
  Effect.map((lib) => lib.createTwoFilesPatch),
  Effect.cached,
  Effect.runSync
)

/** A unified diff of the YAML of both sides, without the separator line `diff` puts first. */
const unified = (
  patcher: TwoFilesPatch,
  name: string,
  before: JsonObject | undefined,
  after: JsonObject | undefined
): string => {
  const shown = mask(before, after)
  return patcher(`live/${name}`, `merged/${name}`, yamlOf(shown.before), yamlOf(shown.after)).replace(/^=+\n/, "")
}

const entry = (
  patcher: TwoFilesPatch,
  resource: Resource.Resource<unknown>,
  ref: ObjectRef,
  live: unknown,
  merged: unknown
): Manifests.ObjectDiff => {
  const before = live === undefined ? undefined : normalize(live)
  const after = merged === undefined ? undefined : normalize(merged)
  const name = fileName(resource, ref)
  if (before === undefined) return { ref, action: "create", paths: [], diff: unified(patcher, name, undefined, after) }
  if (after === undefined) return { ref, action: "prune", paths: [], diff: unified(patcher, name, before, undefined) }
  const paths = changedPaths(before, after)
  return paths.length === 0
    ? { ref, action: "unchanged", paths, diff: "" }
    : { ref, action: "change", paths, diff: unified(patcher, name, before, after) }
}

export const diff = (
  objects: Iterable<Manifests.Applicable>,
  options: Manifests.DiffOptions = {}
): Effect.Effect<ReadonlyArray<Manifests.ObjectDiff>, ApplySetError | Kube.Error, Kube.Requirements> =>
  Effect.gen(function*() {
    const dryRun = { ...options, dryRun: true } as const
    const patcher = yield* loadPatcher
    const planned = options.applySet !== undefined
      ? yield* applySet.plan(objects, dryRun as Manifests.ApplySetOptions)
      : undefined
    const prepared = planned?.prepared ?? (yield* manifests.prepareApply(objects, dryRun as Manifests.ApplyOptions))
    const bodies = planned?.bodies ?? prepared.bodies
    const applied = yield* Effect.forEach(
      prepared.resolved,
      (item, i) =>
        Effect.all([
          client.sendJsonOption(request.get(item.resource, item.ref.namespace, item.name)),
          manifests.applyOne(item, bodies[i]!, { ...dryRun, fieldManager: prepared.fieldManager })
        ]).pipe(
          Effect.map(([live, merged]) => {
            const { uid: _given, ...ref } = item.ref
            return entry(patcher, item.resource, ref, Option.getOrUndefined(live), merged.object)
          })
        ),
      { concurrency: 4 }
    )
    // the items of a list may leave out apiVersion and kind
    const pruned = (planned?.prune ?? []).map((member) =>
      entry(
        patcher,
        member.resource,
        member.ref,
        { apiVersion: member.resource.apiVersion, kind: member.kind, ...member.object },
        undefined
      )
    )
    return [...applied, ...pruned]
  })

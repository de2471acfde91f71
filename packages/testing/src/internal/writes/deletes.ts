/**
 * Deletes as the API server's registry does them: one object (with uid and
 * resourceVersion preconditions) or a collection by selector; graceful deletion of
 * pods (Terminating until the kubelet is done, `deletionTimestamp` at the end of the
 * grace period); finalizers (marked for deletion until they are gone), the garbage
 * collector's `orphan` and `foregroundDeletion` finalizers by propagation policy;
 * namespaces and CustomResourceDefinitions, which only start terminating (their
 * controllers empty them and then let them go).
 *
 * @internal
 */
import { rfc3339 } from "../store/clock.js"
import { json, type RawRequest, type RawResponse, readBody } from "../serve/http.js"
import { isObject, type JsonObject } from "../store/json.js"
import { apiVersionOf, type KindInfo } from "../store/kinds.js"
import { listItemJson, listJson, matchers } from "../reads/reads.js"
import { type FakeState, hasFinalizers, type Route } from "../store/state.js"
import * as Status from "../serve/statusBodies.js"
import { warningHeader } from "../serve/faults.js"
import { withWarnings } from "../validation/fieldValidation.js"
import { Entry } from "../store/store.js"

/** The finalizers the garbage collector acts on. @internal */
export const orphanFinalizer = "orphan"
/** @internal */
export const foregroundFinalizer = "foregroundDeletion"
/** The finalizer that keeps a CRD until its objects are gone. @internal */
export const crdCleanupFinalizer = "customresourcecleanup.apiextensions.k8s.io"

/** Namespaces the API server refuses to delete. */
const immortalNamespaces = new Set(["default", "kube-system", "kube-public"])

const deleteOptions = async (query: Record<string, string>, request: RawRequest): Promise<JsonObject> => {
  const body = request.method.toUpperCase() === "DELETE" ? await readBody(request) : undefined
  const options: JsonObject = isObject(body) ? { ...body } : {}
  if (query.propagationPolicy !== undefined) options.propagationPolicy = query.propagationPolicy
  if (query.gracePeriodSeconds !== undefined) options.gracePeriodSeconds = Number(query.gracePeriodSeconds)
  if (query.orphanDependents !== undefined) options.orphanDependents = query.orphanDependents === "true"
  if (query.dryRun !== undefined) options.dryRun = [query.dryRun]
  const uid = query["preconditions.uid"]
  const resourceVersion = query["preconditions.resourceVersion"]
  if (uid !== undefined || resourceVersion !== undefined) {
    options.preconditions = {
      ...(isObject(options.preconditions) ? options.preconditions : {}),
      ...(uid !== undefined ? { uid } : {}),
      ...(resourceVersion !== undefined ? { resourceVersion } : {})
    }
  }
  const policy = options.propagationPolicy
  if (policy !== undefined && policy !== "Orphan" && policy !== "Background" && policy !== "Foreground") {
    throw Status.invalid({ group: "meta.k8s.io", plural: "deleteoptions", kind: "DeleteOptions" }, "", [{
      reason: "FieldValueNotSupported",
      field: "propagationPolicy",
      message: `Unsupported value: ${JSON.stringify(policy)}: ` +
        `supported values: "Foreground", "Background", "Orphan", "nil"`
    }])
  }
  return options
}

/** DELETE of one object: preconditions, finalizers, grace, propagation. @internal */
export const deleteOne = async (
  state: FakeState,
  route: Route,
  query: Record<string, string>,
  request: RawRequest
): Promise<RawResponse> => {
  const options = await deleteOptions(query, request)
  return withOrphaningWarning(route.kind, options, () => deleteWithOptions(state, route, options))
}

/** Job's warning on the answer (a failure too: the registry says it before it looks the object up). */
const withOrphaningWarning = (kind: KindInfo, options: JsonObject, answer: () => RawResponse): RawResponse => {
  if (!warnsOfOrphaning(kind, options)) return answer()
  try {
    return withWarnings(answer(), [jobOrphanWarning])
  } catch (e) {
    if (!(e instanceof Status.StatusError)) throw e
    const warning = warningHeader(jobOrphanWarning)
    throw new Status.StatusError(e.code, e.reason, e.message, e.details, { ...e.headers, warning }, e.metadata)
  }
}

/** Deletes one object with options already read (an eviction's `deleteOptions`). @internal */
export const deleteWithOptions = (state: FakeState, route: Route, options: JsonObject): RawResponse => {
  const entry = state.entryOf(route)
  checkImmortal(route.kind, entry)
  checkPreconditions(route.kind, entry, options)
  const result = deleteObject(state, route.kind, entry, options)
  return deleteAnswer(state, route, result.entry, result.gone, options)
}

const checkImmortal = (kind: KindInfo, entry: Entry): void => {
  if (!(kind.group === "" && kind.kind === "Namespace" && immortalNamespaces.has(entry.name))) return
  throw new Status.StatusError(
    403,
    "Forbidden",
    `namespaces "${entry.name}" is forbidden: this namespace may not be deleted`,
    { name: entry.name, kind: "namespaces" }
  )
}

/** The uid and resourceVersion preconditions of a delete (409 when one fails). */
const checkPreconditions = (kind: KindInfo, entry: Entry, options: JsonObject): void => {
  const meta = entry.obj.metadata as JsonObject
  const pre = isObject(options.preconditions) ? options.preconditions : {}
  // the store's own check (not the registry's): the kind by its Kind, as kube-apiserver's etcd3 store words it
  const failed = (message: string) =>
    new Status.StatusError(
      409,
      "Conflict",
      `Operation cannot be fulfilled on ${kind.group === "" ? kind.kind : `${kind.kind}.${kind.group}`} "${entry.name}": ${message}`,
      { name: entry.name, ...(kind.group !== "" ? { group: kind.group } : {}), kind: kind.kind }
    )
  if (typeof pre.uid === "string" && pre.uid !== meta.uid) {
    throw failed(
      `the UID in the precondition (${pre.uid}) does not match the UID in record (${String(meta.uid)}). ` +
        "The object might have been deleted and then recreated"
    )
  }
  if (typeof pre.resourceVersion === "string" && pre.resourceVersion !== meta.resourceVersion) {
    throw failed(
      `the ResourceVersion in the precondition (${pre.resourceVersion}) does not match the ResourceVersion in record ` +
        `(${String(meta.resourceVersion)}). The object might have been modified`
    )
  }
}

/** The kinds whose registry answers a DELETE with the deleted object (`ReturnDeletedObject`), as kube-apiserver v1.35's do. */
const returnsDeleted = new Set([
  "/Pod", "/Namespace", "/ServiceAccount", "/Service", "/PodTemplate", "/ReplicationController", "/ResourceQuota",
  "/PersistentVolumeClaim", "/PersistentVolume", "storage.k8s.io/StorageClass"
])

/**
 * What a DELETE answers: the object while it is still there (terminating, or held by
 * finalizers), else the deleted object for the kinds whose registry returns it, else a
 * Success Status. 202 instead of 200 when the deprecated `orphanDependents: false` asked
 * for a cascade that has not finished.
 */
const deleteAnswer = (
  state: FakeState,
  route: Route,
  entry: Entry,
  gone: boolean,
  options: JsonObject
): RawResponse => {
  const kind = route.kind
  const code = !gone && options.orphanDependents === false ? 202 : 200
  const returnsObject = !gone || kind.custom || returnsDeleted.has(`${kind.group}/${kind.kind}`)
  if (returnsObject) return json(code, state.jsonIn(entry, route.kind, route.version))
  return json(code, Status.success(kind, entry.name, entry.uid))
}

const isPodKind = (kind: KindInfo): boolean => kind.group === "" && kind.kind === "Pod"
const isNamespaceKind = (kind: KindInfo): boolean => kind.group === "" && kind.kind === "Namespace"
const isCrdKind = (kind: KindInfo): boolean =>
  kind.group === "apiextensions.k8s.io" && kind.plural === "customresourcedefinitions"

/**
 * A pod's grace period, as the pod registry decides it: the one asked for, else the
 * pod's own (30 seconds when unset); none for a pod never scheduled or already finished.
 */
const podGracePeriod = (pod: JsonObject, asked: number | undefined): number => {
  const spec = isObject(pod.spec) ? pod.spec : {}
  const phase = isObject(pod.status) ? pod.status.phase : undefined
  const own = spec.terminationGracePeriodSeconds
  let period = asked ?? (typeof own === "number" ? own : 30)
  if (typeof spec.nodeName !== "string" || spec.nodeName === "") period = 0
  if (phase === "Failed" || phase === "Succeeded") period = 0
  return period < 0 ? 1 : period
}

/**
 * A kind's garbage collection policy when a delete names none, as its registry's DefaultGarbageCollectionPolicy says:
 * the legacy ReplicationController and batch/v1 Job orphan their dependents, an Event takes no propagation at all
 * (its registry says Unsupported), every other kind deletes them in the background.
 */
const defaultGcPolicy = (kind: KindInfo): "orphan" | "background" | "unsupported" =>
  kind.group === "" && kind.kind === "ReplicationController"
    ? "orphan"
    : kind.group === "batch" && kind.kind === "Job"
    ? "orphan"
    : kind.kind === "Event" && (kind.group === "" || kind.group === "events.k8s.io")
    ? "unsupported"
    : "background"

/** The warning a batch/v1 Job's delete without a propagation policy answers with. @internal */
export const jobOrphanWarning =
  "child pods are preserved by default when jobs are deleted; set propagationPolicy=Background to remove them or " +
  "set propagationPolicy=Orphan to suppress this warning"

/** Whether a delete (or a DELETE of a collection) of the kind with these options answers Job's orphaning warning. @internal */
export const warnsOfOrphaning = (kind: KindInfo, options: JsonObject): boolean =>
  kind.group === "batch" && kind.kind === "Job" && options.propagationPolicy === undefined &&
  options.orphanDependents === undefined

/**
 * The finalizers after a delete asks for a propagation: `orphan` or `foregroundDeletion` put in or taken out, as the
 * generic store's shouldOrphanDependents and shouldDeleteDependents decide (the options first, then a finalizer the
 * object carries, then the kind's default).
 */
const gcFinalizers = (kind: KindInfo, finalizers: ReadonlyArray<string>, options: JsonObject): ReadonlyArray<string> => {
  const byDefault = defaultGcPolicy(kind)
  if (byDefault === "unsupported") return finalizers
  const policy = options.propagationPolicy
  const unasked = policy === undefined && options.orphanDependents === undefined
  const orphan = typeof options.orphanDependents === "boolean"
    ? options.orphanDependents
    : policy === "Orphan"
    ? true
    : policy === "Background" || policy === "Foreground"
    ? false
    : finalizers.includes(orphanFinalizer)
    ? true
    : finalizers.includes(foregroundFinalizer)
    ? false
    : byDefault === "orphan"
  const foreground = policy === "Foreground" || (unasked && finalizers.includes(foregroundFinalizer))
  const next = finalizers.filter((f) => f !== orphanFinalizer && f !== foregroundFinalizer)
  if (orphan) next.push(orphanFinalizer)
  if (foreground && !orphan) next.push(foregroundFinalizer)
  return next
}

const finalizersOf = (obj: JsonObject): ReadonlyArray<string> => {
  const finalizers = (obj.metadata as JsonObject).finalizers
  return Array.isArray(finalizers) ? finalizers.filter((f): f is string => typeof f === "string") : []
}

const sameList = (a: ReadonlyArray<string>, b: ReadonlyArray<string>): boolean =>
  a.length === b.length && a.every((x) => b.includes(x))

const withMetadata = (obj: JsonObject, change: (metadata: JsonObject) => void): JsonObject => {
  const metadata = { ...(obj.metadata as JsonObject) }
  change(metadata)
  return { ...obj, metadata }
}

/**
 * Deletes an object as the registry does (a DELETE, a DELETE of a collection, the garbage
 * collector's or a controller's): marks it for deletion while a grace period runs or
 * finalizers remain, else removes it. A namespace starts terminating (its controller
 * empties it); a CRD gets its cleanup finalizer and the Terminating condition.
 *
 * @internal
 */
export const deleteObject = (
  state: FakeState,
  kind: KindInfo,
  entry: Entry,
  options: JsonObject = {}
): { readonly entry: Entry; readonly gone: boolean } => {
  const dryRun = Array.isArray(options.dryRun) && options.dryRun.includes("All")
  const meta = entry.obj.metadata as JsonObject
  const deleting = meta.deletionTimestamp !== undefined
  const nowMs = state.clock.now()
  const store = (obj: JsonObject): Entry => {
    if (dryRun) return unstored(state, kind, entry, obj)
    const next = state.store.write(state.collectionOf(kind), entry.namespace, entry.name, (rv) => {
      ;(obj.metadata as JsonObject).resourceVersion = String(rv)
      return { obj, managers: entry.managers }
    })
    state.afterWrite(kind, next, entry)
    return next
  }
  const bumpGeneration = (metadata: JsonObject) => {
    if (typeof metadata.generation === "number" && metadata.generation > 0) metadata.generation += 1
  }

  if (isNamespaceKind(kind)) {
    if (deleting) {
      const finalizers = (entry.obj.spec as JsonObject | undefined)?.finalizers
      if (Array.isArray(finalizers) && finalizers.length > 0) {
        throw new Status.StatusError(
          409,
          "Conflict",
          `Operation cannot be fulfilled on namespaces "${entry.name}": The system is ensuring all content is ` +
            "removed from this namespace.  Upon completion, this namespace will automatically be purged by the system.",
          { name: entry.name, kind: "namespaces" }
        )
      }
    } else {
      const next = withMetadata(entry.obj, (metadata) => {
        metadata.deletionTimestamp = rfc3339(nowMs)
        if (options.orphanDependents === false && Array.isArray(metadata.finalizers)) {
          metadata.finalizers = metadata.finalizers.filter((f) => f !== orphanFinalizer)
        }
      })
      next.status = { ...(isObject(entry.obj.status) ? entry.obj.status : {}), phase: "Terminating" }
      return { entry: store(next), gone: false }
    }
  }

  if (isCrdKind(kind) && !deleting) {
    const next = withMetadata(entry.obj, (metadata) => {
      metadata.deletionTimestamp = rfc3339(nowMs)
      const finalizers = finalizersOf(entry.obj)
      if (!finalizers.includes(crdCleanupFinalizer)) metadata.finalizers = [...finalizers, crdCleanupFinalizer]
    })
    const status = { ...(isObject(entry.obj.status) ? entry.obj.status : {}) }
    const conditions = (Array.isArray(status.conditions) ? status.conditions as Array<JsonObject> : [])
      .filter((c) => c.type !== "Terminating")
    conditions.push({
      type: "Terminating",
      status: "True",
      lastTransitionTime: rfc3339(nowMs),
      reason: "InstanceDeletionPending",
      message: "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon"
    })
    next.status = { ...status, conditions }
    return { entry: store(next), gone: false }
  }

  const asked = typeof options.gracePeriodSeconds === "number" ? options.gracePeriodSeconds : undefined
  if (deleting) {
    const current = typeof meta.deletionGracePeriodSeconds === "number" ? meta.deletionGracePeriodSeconds : 0
    if (current > 0) {
      // a graceful deletion is under way: only a shorter grace period changes it
      if (asked === undefined || asked >= current) return { entry, gone: false }
      const period = asked < 0 ? 1 : asked
      const start = Date.parse(meta.deletionTimestamp as string) - current * 1000
      const next = withMetadata(entry.obj, (metadata) => {
        metadata.deletionTimestamp = rfc3339(start + period * 1000)
        metadata.deletionGracePeriodSeconds = period
      })
      if (period > 0 || hasFinalizers(entry.obj)) return { entry: store(next), gone: false }
      return removeNow(state, kind, entry, next, dryRun)
    }
    if (hasFinalizers(entry.obj)) return { entry, gone: false }
  }

  const finalizers = finalizersOf(entry.obj)
  const nextFinalizers = deleting ? finalizers : gcFinalizers(kind, finalizers, options)
  const period = isPodKind(kind) && !deleting ? podGracePeriod(entry.obj, asked) : 0
  if (period > 0) {
    const next = withMetadata(entry.obj, (metadata) => {
      metadata.deletionTimestamp = rfc3339(nowMs + period * 1000)
      metadata.deletionGracePeriodSeconds = period
      if (!sameList(finalizers, nextFinalizers)) metadata.finalizers = nextFinalizers
      bumpGeneration(metadata)
    })
    return { entry: store(next), gone: false }
  }
  if (nextFinalizers.length > 0) {
    const next = withMetadata(entry.obj, (metadata) => {
      if (!deleting) bumpGeneration(metadata)
      const existing = metadata.deletionTimestamp
      if (typeof existing !== "string" || Date.parse(existing) > nowMs) metadata.deletionTimestamp = rfc3339(nowMs)
      metadata.deletionGracePeriodSeconds = 0
      if (!sameList(finalizers, nextFinalizers)) metadata.finalizers = nextFinalizers
    })
    return { entry: store(next), gone: false }
  }
  if (isPodKind(kind) && !deleting) {
    // a pod deleted without grace is first marked (a MODIFIED event), then removed
    const marked = withMetadata(entry.obj, (metadata) => {
      metadata.deletionTimestamp = rfc3339(nowMs)
      metadata.deletionGracePeriodSeconds = 0
      bumpGeneration(metadata)
    })
    if (dryRun) return { entry: store(marked), gone: true }
    const next = store(marked)
    return removeNow(state, kind, next, next.obj, false)
  }
  return removeNow(state, kind, entry, entry.obj, dryRun)
}

/** What a dry run answers: the object as it would be, at the stored resourceVersion. */
const unstored = (state: FakeState, kind: KindInfo, entry: Entry, obj: JsonObject): Entry =>
  Entry.of(obj, entry.namespace, entry.name, entry.rv, entry.managers, kind.fieldSelectors, state.store.recent)

const removeNow = (
  state: FakeState,
  kind: KindInfo,
  entry: Entry,
  last: JsonObject,
  dryRun: boolean
): { readonly entry: Entry; readonly gone: boolean } => {
  if (dryRun) {
    return { entry: unstored(state, kind, entry, last), gone: true }
  }
  const finalize = last === entry.obj ? undefined : () => last
  return { entry: state.removeEntry(kind, entry, finalize), gone: true }
}

/** Removes every object in a namespace at once, finalizers ignored (the `remove` control). @internal */
export const removeNamespaceContents = (state: FakeState, namespace: string): void => {
  for (const collection of [...state.store.allCollections()]) {
    if (!collection.kind.namespaced) continue
    const { end, start } = collection.range(namespace, undefined)
    const keys = collection.keys().slice(start, end)
    for (const key of keys) {
      const e = collection.entries.get(key)
      if (e !== undefined) state.removeEntry(collection.kind, e)
    }
  }
}

/** DELETE of a collection: the objects its selectors match, as a list. @internal */
export const deleteCollection = async (
  state: FakeState,
  route: Route,
  query: Record<string, string>,
  request: RawRequest
): Promise<RawResponse> => {
  const options = await deleteOptions(query, request)
  return withOrphaningWarning(route.kind, options, () => deleteMatching(state, route, query, options))
}

const deleteMatching = (
  state: FakeState,
  route: Route,
  query: Record<string, string>,
  options: JsonObject
): RawResponse => {
  const matches = matchers(route, query)
  const collection = state.collectionOf(route.kind)
  const keys = collection.keys()
  const { end, start } = collection.range(route.namespace, undefined)
  const targets: Array<Entry> = []
  for (let i = start; i < end; i++) {
    const e = collection.entries.get(keys[i]!)!
    if (matches(e.attrs)) targets.push(e)
  }
  const items: Array<string> = []
  for (const e of targets) {
    const current = collection.entries.get(e.key)
    if (current === undefined) continue
    // as the API server's DeleteCollection: the first failed precondition fails the call
    checkImmortal(route.kind, current)
    checkPreconditions(route.kind, current, options)
    // the answer lists the objects as they were found, as the registry's DeleteCollection does
    items.push(listItemJson(route.kind, state.jsonIn(current, route.kind, route.version)))
    deleteObject(state, route.kind, current, options)
  }
  const apiVersion = apiVersionOf(route.kind.group, route.version)
  const metadata = { resourceVersion: String(state.store.resourceVersion) }
  return json(200, listJson(route.kind, apiVersion, metadata, items.join(",")))
}

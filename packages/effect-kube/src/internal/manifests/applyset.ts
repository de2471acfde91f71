/**
 * ApplySets (KEP-3659) as kubectl 1.32 keeps them: a parent object (a Secret, a ConfigMap
 * or a custom resource allowed as a parent) labelled with the set's id and annotated with
 * its tooling, the group kinds of its members and the namespaces beyond its own; every
 * member labelled `applyset.kubernetes.io/part-of=<id>`. Membership is the label alone:
 * pruning lists the parent's kinds in the parent's namespaces by that label and deletes
 * what the manifests no longer hold, each with its uid as a precondition, so nothing
 * outside the set (nor a replacement made since the listing) is ever deleted.
 *
 * The order follows kubectl: check everything, write the parent with the union of the old
 * and the new kinds and namespaces (so an interrupted apply leaks nothing), apply every
 * object, prune, and only then narrow the parent to the new set.
 */
import * as Effect from "effect/Effect"
import * as Base64Url from "effect/encoding/Base64Url"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import {
  ApiError,
  ApplyFailed,
  ApplySetError,
  formatRef,
  type ObjectRef,
  PruneFailed,
  type RefFailure,
  ValidationError
} from "../../Errors.js"
import type * as Kube from "../../Kube.js"
import type * as Manifests from "../../Manifests.js"
import * as Patch from "../../Patch.js"
import type * as Resource from "../../Resource.js"
import * as client from "../client/execute.js"
import { isObject, type JsonObject } from "../codec/codec.js"
import * as discovery from "../api/discovery.js"
import * as manifests from "./manifests.js"
import * as operations from "../api/operations.js"
import * as request from "../request/verbs.js"
import { nameProblem, namespaceProblem } from "../request/inputChecks.js"
import { version } from "../request/userAgent.js"

/** The label every member carries: the set's id. */
export const partOfLabel = "applyset.kubernetes.io/part-of"
/** The label that makes an object a parent: the set's id. */
export const idLabel = "applyset.kubernetes.io/id"
/** `<tool>/<version>` of the tool that manages the set. */
export const toolingAnnotation = "applyset.kubernetes.io/tooling"
/** The members' group kinds, sorted: `ConfigMap,Deployment.apps`. */
export const groupKindsAnnotation = "applyset.kubernetes.io/contains-group-kinds"
/** The members' group resources, as kubectl 1.27 wrote them (read only). */
export const groupResourcesAnnotation = "applyset.kubernetes.io/contains-group-resources"
/** The namespaces of members beyond the parent's own, sorted. */
export const additionalNamespacesAnnotation = "applyset.kubernetes.io/additional-namespaces"
/** The label of a CRD whose kind may be a parent. */
export const parentTypeLabel = "applyset.kubernetes.io/is-parent-type"

/** The tooling written on parents unless another is asked for. */
export const defaultTooling = `effect-kube/${version}`

/**
 * The id of the set a parent stands for: the URL-safe base64 (no padding) of the SHA-256
 * of `<name>.<namespace>.<kind>.<group>`, between `applyset-` and `-v1`. The namespace is
 * empty for a cluster-scoped parent, the group empty for the core group.
 */
export const applySetId = (parent: {
  readonly name: string
  readonly namespace?: string | undefined
  readonly kind: string
  readonly group: string
}): Effect.Effect<string> =>
  Effect.promise(() =>
    globalThis.crypto.subtle.digest(
      "SHA-256",
      new TextEncoder().encode([parent.name, parent.namespace ?? "", parent.kind, parent.group].join("."))
    )
  ).pipe(Effect.map((digest) => `applyset-${Base64Url.encode(new Uint8Array(digest))}-v1`))

/** A group kind as the annotation writes it: `Kind` for the core group, else `Kind.group`. */
export const groupKindText = (group: string, kind: string): string => group === "" ? kind : `${kind}.${group}`

/** The tool a tooling value names: everything before its last `/`. */
const toolName = (tooling: string): string => {
  const cut = tooling.lastIndexOf("/")
  return cut === -1 ? tooling : tooling.slice(0, cut)
}

/**
 * Kinds in the order they are safe to create: what others need first (namespaces, then
 * policies, accounts, configuration, storage, CRDs, RBAC, services, workloads, then what
 * points at them). Pruning goes the other way, kinds not listed (custom resources) first,
 * so that a CRD outlives its objects and a namespace everything in it.
 */
const installOrder: ReadonlyArray<string> = [
  "Namespace",
  "NetworkPolicy",
  "ResourceQuota",
  "LimitRange",
  "PodDisruptionBudget",
  "ServiceAccount",
  "Secret",
  "ConfigMap",
  "StorageClass",
  "PersistentVolume",
  "PersistentVolumeClaim",
  "CustomResourceDefinition",
  "ClusterRole",
  "ClusterRoleBinding",
  "Role",
  "RoleBinding",
  "Service",
  "DaemonSet",
  "Pod",
  "ReplicationController",
  "ReplicaSet",
  "Deployment",
  "HorizontalPodAutoscaler",
  "StatefulSet",
  "Job",
  "CronJob",
  "IngressClass",
  "Ingress",
  "APIService",
  "MutatingWebhookConfiguration",
  "ValidatingWebhookConfiguration"
]
const installRank = new Map(installOrder.map((kind, i) => [kind, i]))

/** Sorts members for deletion: the reverse of the install order, unlisted kinds first; stable otherwise. */
export const pruneOrder = <A extends { readonly kind: string }>(members: ReadonlyArray<A>): ReadonlyArray<A> =>
  members
    .map((member, index) => ({ member, index, rank: installRank.get(member.kind) ?? installOrder.length }))
    .sort((a, b) => b.rank - a.rank || b.index - a.index)
    .map((entry) => entry.member)

// ---------------------------------------------------------------------------------------------------------------------
// the parent
// ---------------------------------------------------------------------------------------------------------------------

/** The parent, resolved: where it lives, its id, and the tooling and field manager it is written with. */
export interface Parent {
  readonly resource: Resource.Resource<unknown>
  readonly ref: ObjectRef
  readonly id: string
  readonly tooling: string
  readonly fieldManager: string
}

/** What the live parent says of the set before this apply: kinds and namespaces. */
interface Recorded {
  readonly uid: string | undefined
  readonly kinds: ReadonlyArray<Resource.Resource<unknown>>
  readonly namespaces: ReadonlySet<string>
}

const invalid = manifests.invalid

const isBuiltinParent = (apiVersion: string, kind: string) =>
  apiVersion === "v1" && (kind === "Secret" || kind === "ConfigMap")

const checkText = (value: unknown, subject: string): Effect.Effect<string | undefined, ValidationError> =>
  value === undefined || (typeof value === "string" && value !== "")
    ? Effect.succeed(value as string | undefined)
    : invalid(subject, "must be a non-empty string")

/** Checks the `applySet` option and finds the parent's kind; nothing is sent but discovery. */
export const resolveParent = (
  applySet: Manifests.ApplySet,
  target: string
): Effect.Effect<Parent, Kube.Error | ApplySetError, Kube.Requirements> =>
  Effect.gen(function*() {
    if (!isObject(applySet)) return yield* invalid("applySet", "must be an object with a name")
    const problem = nameProblem(applySet.name)
    if (problem !== undefined) return yield* invalid("applySet.name", problem)
    const kind = (yield* checkText(applySet.kind, "applySet.kind")) ?? "Secret"
    const givenVersion = yield* checkText(applySet.apiVersion, "applySet.apiVersion")
    if (givenVersion === undefined && kind !== "Secret" && kind !== "ConfigMap") {
      return yield* invalid("applySet.apiVersion", `is needed for a parent of kind ${kind} (a custom resource)`)
    }
    const apiVersion = givenVersion ?? "v1"
    const tooling = (yield* checkText(applySet.tooling, "applySet.tooling")) ?? defaultTooling
    const cut = tooling.lastIndexOf("/")
    if (cut <= 0 || cut === tooling.length - 1) {
      return yield* invalid(
        "applySet.tooling",
        `must be <tool>/<version>, like "kubectl/v1.32.0" (got ${JSON.stringify(tooling)})`
      )
    }
    const service = yield* manifests.discoveryService
    const resource = yield* service.resolve(apiVersion, kind).pipe(
      Effect.mapError((e) =>
        e._tag === "ValidationError" ? new ValidationError({ subject: "applySet", detail: e.message }) : e
      )
    )
    let namespace: string | undefined
    if (resource.namespaced) {
      namespace = (yield* checkText(applySet.namespace, "applySet.namespace")) ?? target
      const nsProblem = namespaceProblem(namespace)
      if (nsProblem !== undefined) return yield* invalid("applySet.namespace", nsProblem)
    } else if (applySet.namespace !== undefined) {
      return yield* invalid("applySet.namespace", `${kind} is cluster-scoped: a parent of that kind has no namespace`)
    }
    const ref: ObjectRef = { apiVersion, kind, name: applySet.name, ...(namespace !== undefined ? { namespace } : {}) }
    if (!isBuiltinParent(apiVersion, kind)) yield* checkParentType(resource, ref)
    const id = yield* applySetId({ name: ref.name, namespace, kind, group: resource.group })
    return { resource, ref, id, tooling, fieldManager: `${toolName(tooling)}-applyset` }
  })

/** A custom resource may be a parent only when its CRD carries the `is-parent-type` label, as kubectl requires. */
const checkParentType = (resource: Resource.Resource<unknown>, ref: ObjectRef) =>
  Effect.gen(function*() {
    const crds = yield* manifests.discoveryService.pipe(
      Effect.flatMap((service) => service.resolve("apiextensions.k8s.io/v1", "CustomResourceDefinition"))
    )
    const crd = yield* operations.get({ resource: crds, namespace: undefined }, `${resource.plural}.${resource.group}`)
    const labels = Option.isSome(crd) ? labelsOf(crd.value) : {}
    if (!Object.hasOwn(labels, parentTypeLabel)) {
      return yield* new ApplySetError({
        reason: "ParentNotAllowed",
        parent: ref,
        detail: `${resource.plural}.${resource.group} may not be an ApplySet parent: its CustomResourceDefinition ` +
          `needs the label ${parentTypeLabel} (Secret and ConfigMap parents need nothing)`
      })
    }
  })

const metadataOf = (object: unknown): JsonObject => {
  const metadata = isObject(object) ? object["metadata"] : undefined
  return isObject(metadata) ? metadata : {}
}

const stringMap = (value: unknown): Readonly<Record<string, string>> =>
  isObject(value)
    ? Object.fromEntries(Object.entries(value).filter((e): e is [string, string] => typeof e[1] === "string"))
    : {}

const labelsOf = (object: unknown) => stringMap(metadataOf(object)["labels"])
const annotationsOf = (object: unknown) => stringMap(metadataOf(object)["annotations"])

const splitList = (text: string | undefined): ReadonlyArray<string> =>
  text === undefined || text === "" ? [] : text.split(",").filter((s) => s !== "")

/**
 * Reads the live parent and checks that it is this set's: its tooling is the same tool's,
 * its id label the computed id. A parent that does not exist records an empty set (a
 * custom resource parent must exist, as kubectl requires).
 */
export const readParent = (parent: Parent): Effect.Effect<Recorded, Kube.Error | ApplySetError, Kube.Requirements> =>
  Effect.gen(function*() {
    const live = yield* client.sendJsonOption(request.get(parent.resource, parent.ref.namespace, parent.ref.name))
    if (Option.isNone(live)) {
      if (!isBuiltinParent(parent.ref.apiVersion, parent.ref.kind)) {
        return yield* new ApplySetError({
          reason: "ParentNotFound",
          parent: parent.ref,
          detail: "does not exist: a custom resource parent must be created before the first apply"
        })
      }
      const own = parent.ref.namespace !== undefined ? [parent.ref.namespace] : []
      return { uid: undefined, kinds: [], namespaces: new Set(own) }
    }
    const labels = labelsOf(live.value)
    const annotations = annotationsOf(live.value)
    const tooling = annotations[toolingAnnotation]
    const id = labels[idLabel]
    if (tooling === undefined || id === undefined) {
      return yield* new ApplySetError({
        reason: "NotAParent",
        parent: parent.ref,
        detail: `exists and is not an ApplySet parent (it has no ${
          tooling === undefined ? `${toolingAnnotation} annotation` : `${idLabel} label`
        }): choose another name`
      })
    }
    if (toolName(tooling) !== toolName(parent.tooling)) {
      return yield* new ApplySetError({
        reason: "ForeignTooling",
        parent: parent.ref,
        detail: `is managed by ${JSON.stringify(toolName(tooling))} (${toolingAnnotation}: ${tooling}), not by ` +
          `${JSON.stringify(toolName(parent.tooling))}: pass applySet.tooling: ${JSON.stringify(tooling)} to share it`
      })
    }
    if (id !== parent.id) {
      return yield* new ApplySetError({
        reason: "WrongId",
        parent: parent.ref,
        detail: `has the label ${idLabel}=${id}, but its name, namespace, kind and group give ${parent.id}`
      })
    }
    const kinds = yield* recordedKinds(parent, annotations)
    const namespaces = new Set(splitList(annotations[additionalNamespacesAnnotation]))
    if (parent.ref.namespace !== undefined) namespaces.add(parent.ref.namespace)
    return { uid: manifests.uidOf(live.value), kinds, namespaces }
  })

/**
 * The kinds a parent lists, resolved by discovery at the group's preferred version. A kind
 * the server no longer serves (its CRD was deleted) holds no objects, and is left out.
 */
const recordedKinds = (
  parent: Parent,
  annotations: Readonly<Record<string, string>>
): Effect.Effect<ReadonlyArray<Resource.Resource<unknown>>, Kube.Error | ApplySetError, Kube.Requirements> =>
  Effect.gen(function*() {
    const service = yield* manifests.discoveryService
    const kindsText = annotations[groupKindsAnnotation]
    if (kindsText === undefined) {
      const resourcesText = annotations[groupResourcesAnnotation]
      if (resourcesText === undefined) {
        return yield* new ApplySetError({
          reason: "NoKinds",
          parent: parent.ref,
          detail: `has neither ${groupKindsAnnotation} nor ${groupResourcesAnnotation}, so its members cannot be listed`
        })
      }
      const { resources } = yield* service.resources()
      const found: Array<Resource.Resource<unknown>> = []
      for (const groupResource of splitList(resourcesText)) {
        const dot = groupResource.indexOf(".")
        const plural = dot === -1 ? groupResource : groupResource.slice(0, dot)
        const group = dot === -1 ? "" : groupResource.slice(dot + 1)
        const entry = resources.find((r) => r.preferred && r.group === group && r.plural === plural)
        if (entry !== undefined) found.push(yield* service.resolve(entry.apiVersion, entry.kind))
      }
      return found
    }
    const groupKinds = splitList(kindsText).map((text) => {
      const dot = text.indexOf(".")
      return dot === -1 ? { kind: text, group: "" } : { kind: text.slice(0, dot), group: text.slice(dot + 1) }
    })
    const preferred = groupKinds.some((gk) => gk.group !== "") ? yield* discovery.preferredVersions : new Map()
    const found: Array<Resource.Resource<unknown>> = []
    for (const { group, kind } of groupKinds) {
      const version = group === "" ? "v1" : preferred.get(group)
      if (version === undefined || version === "") continue
      const resolved = yield* Effect.result(service.resolve(group === "" ? version : `${group}/${version}`, kind))
      if (Result.isSuccess(resolved)) found.push(resolved.success)
      else if (resolved.failure._tag !== "ValidationError") return yield* Effect.fail(resolved.failure)
    }
    return found
  })

/** The parent as server-side apply writes it: the id label and the annotations, nothing else. */
const parentBody = (
  parent: Parent,
  kinds: ReadonlyArray<Resource.Resource<unknown>>,
  namespaces: ReadonlySet<string>
): JsonObject => {
  const groupKinds = [...new Set(kinds.map((r) => groupKindText(r.group, r.kind)))].sort()
  const additional = [...namespaces].filter((ns) => ns !== parent.ref.namespace).sort()
  return {
    apiVersion: parent.ref.apiVersion,
    kind: parent.ref.kind,
    metadata: {
      name: parent.ref.name,
      ...(parent.ref.namespace !== undefined ? { namespace: parent.ref.namespace } : {}),
      labels: { [idLabel]: parent.id },
      annotations: {
        [toolingAnnotation]: parent.tooling,
        [groupKindsAnnotation]: groupKinds.join(","),
        [additionalNamespacesAnnotation]: additional.join(",")
      }
    }
  }
}

/**
 * Writes the parent's record. Forced: these fields are the set's manager's by definition
 * (kubectl retries with force on a conflict; forcing at once sends one request, not two).
 */
const writeParent = (
  parent: Parent,
  kinds: ReadonlyArray<Resource.Resource<unknown>>,
  namespaces: ReadonlySet<string>,
  dryRun: boolean | undefined
) =>
  client.sendJson(
    request.patch(
      parent.resource,
      parent.ref.namespace,
      parent.ref.name,
      Patch.apply(parentBody(parent, kinds, namespaces), { fieldManager: parent.fieldManager, force: true }),
      { dryRun, fieldManager: parent.fieldManager }
    )
  )

// ---------------------------------------------------------------------------------------------------------------------
// members
// ---------------------------------------------------------------------------------------------------------------------

/** A live member of the set, as its listing found it. */
export interface Member {
  readonly resource: Resource.Resource<unknown>
  readonly ref: ObjectRef
  readonly kind: string
  readonly name: string
  readonly object: JsonObject
}

const memberKey = (resource: Resource.Resource<unknown>, namespace: string | undefined, name: string) =>
  `${resource.group}/${resource.kind}/${namespace ?? ""}/${name}`

const uniqueKinds = (kinds: ReadonlyArray<Resource.Resource<unknown>>): ReadonlyArray<Resource.Resource<unknown>> => {
  const seen = new Map<string, Resource.Resource<unknown>>()
  for (const r of kinds) if (!seen.has(`${r.group}/${r.kind}`)) seen.set(`${r.group}/${r.kind}`, r)
  return [...seen.values()]
}

/** Lists the members of every kind in every namespace of the set's scope, by the part-of label. */
export const listMembers = (
  id: string,
  kinds: ReadonlyArray<Resource.Resource<unknown>>,
  namespaces: ReadonlySet<string>
): Effect.Effect<ReadonlyArray<Member>, Kube.Error, Kube.Requirements> =>
  Effect.gen(function*() {
    const tasks = uniqueKinds(kinds).flatMap((resource): ReadonlyArray<{
      readonly resource: Resource.Resource<unknown>
      readonly namespace: string | undefined
    }> =>
      resource.namespaced
        ? [...namespaces].sort().map((namespace) => ({ resource, namespace }))
        : [{ resource, namespace: undefined }]
    )
    const pages = yield* Effect.forEach(
      tasks,
      ({ namespace, resource }) =>
        Effect.map(
          operations.listIn({ resource, namespace }, namespace, { labelSelector: `${partOfLabel}=${id}` }),
          (list) => ({ resource, namespace, items: list.items })
        ),
      { concurrency: 4 }
    )
    const members: Array<Member> = []
    for (const { items, namespace, resource } of pages) {
      for (const item of items) {
        if (!isObject(item)) continue
        const name = metadataOf(item)["name"]
        if (typeof name !== "string") continue
        const ref: ObjectRef = {
          apiVersion: resource.apiVersion,
          kind: resource.kind,
          name,
          ...(namespace !== undefined ? { namespace } : {}),
          ...(manifests.uidOf(item) !== undefined ? { uid: manifests.uidOf(item) } : {})
        }
        members.push({ resource, ref, kind: resource.kind, name, object: item })
      }
    }
    return members
  })

/** The bodies to apply, each labelled as a member; a manifest that names another set, or is the parent, is refused. */
const labelMembers = (
  prepared: manifests.PreparedApply,
  parent: Parent
): Effect.Effect<ReadonlyArray<JsonObject>, ValidationError> =>
  Effect.gen(function*() {
    const bodies: Array<JsonObject> = []
    for (let i = 0; i < prepared.resolved.length; i++) {
      const item = prepared.resolved[i]!
      const key = memberKey(item.resource, item.ref.namespace, item.name)
      if (key === memberKey(parent.resource, parent.ref.namespace, parent.ref.name)) {
        return yield* invalid(item.subject, "is the ApplySet's parent itself, which cannot be a member of its own set")
      }
      const body = prepared.bodies[i]!
      const metadata = body["metadata"] as JsonObject
      const labels = stringMap(metadata["labels"])
      const given = labels[partOfLabel]
      if (given !== undefined && given !== parent.id) {
        return yield* invalid(
          item.subject,
          `has the label ${partOfLabel}=${given}, which belongs to another ApplySet (this one is ${parent.id})`
        )
      }
      bodies.push({ ...body, metadata: { ...metadata, labels: { ...labels, [partOfLabel]: parent.id } } })
    }
    return bodies
  })

/**
 * The object without what tells nothing of a change: the managers' timestamps, and the
 * apiVersion and kind that the items of a list leave out.
 */
const comparable = (object: unknown): unknown => {
  if (!isObject(object)) return object
  const { apiVersion: _apiVersion, kind: _kind, ...rest } = object
  const { managedFields: _managedFields, ...metadata } = metadataOf(object)
  return { ...rest, metadata }
}

const sameJson = (a: unknown, b: unknown): boolean => JSON.stringify(sortKeys(a)) === JSON.stringify(sortKeys(b))

const sortKeys = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(sortKeys)
  if (!isObject(value)) return value
  return Object.fromEntries(Object.keys(value).sort().map((k) => [k, sortKeys(value[k])]))
}

/** The owner a listed member names other than the parent, if any: such a member is someone else's to delete. */
const foreignOwner = (member: Member, parentUid: string | undefined): string | undefined => {
  const owners = metadataOf(member.object)["ownerReferences"]
  if (!Array.isArray(owners) || owners.length === 0) return undefined
  const other = owners.find((o) => !isObject(o) || o["uid"] !== parentUid)
  if (other === undefined) return undefined
  return isObject(other) ? `${String(other["kind"])} ${String(other["name"])}` : "another object"
}

// ---------------------------------------------------------------------------------------------------------------------
// the plan: shared by apply and diff
// ---------------------------------------------------------------------------------------------------------------------

/** Everything an apply with an ApplySet knows before it changes anything. */
export interface Plan {
  readonly prepared: manifests.PreparedApply
  readonly parent: Parent
  readonly bodies: ReadonlyArray<JsonObject>
  readonly recorded: Recorded
  /** The members listed before the apply, by identity. */
  readonly live: ReadonlyMap<string, Member>
  /** The members the manifests no longer hold, in the order they are to be deleted (empty without prune). */
  readonly prune: ReadonlyArray<Member>
  readonly kinds: ReadonlyArray<Resource.Resource<unknown>>
  readonly namespaces: ReadonlySet<string>
}

/** The namespaces the members of the new set are in. */
const memberNamespaces = (prepared: manifests.PreparedApply): ReadonlySet<string> =>
  new Set(prepared.resolved.flatMap((item) => item.ref.namespace !== undefined ? [item.ref.namespace] : []))

export const plan = (
  objects: Iterable<Manifests.Applicable>,
  options: Manifests.ApplySetOptions
): Effect.Effect<Plan, Kube.Error | ApplySetError, Kube.Requirements> =>
  Effect.gen(function*() {
    yield* manifests.checkOptionalBoolean(options.prune, "prune")
    const prepared = yield* manifests.prepareApply(objects, options)
    if (prepared.resolved.length === 0 && options.prune === true) {
      // as kubectl refuses: an empty file would otherwise delete the whole set
      return yield* invalid(
        "objects",
        "is empty: an apply with prune needs at least one object (to remove a whole set, delete its members and parent)"
      )
    }
    const parent = yield* resolveParent(options.applySet, prepared.target)
    const bodies = yield* labelMembers(prepared, parent)
    const recorded = yield* readParent(parent)
    const newKinds = prepared.resolved.map((item) => item.resource)
    const kinds = uniqueKinds([...recorded.kinds, ...newKinds])
    const namespaces = new Set([...recorded.namespaces, ...memberNamespaces(prepared)])
    const listed = yield* listMembers(parent.id, kinds, namespaces)
    const live = new Map(listed.map((m) => [memberKey(m.resource, m.ref.namespace, m.name), m]))
    const wanted = new Set(prepared.resolved.map((item) => memberKey(item.resource, item.ref.namespace, item.name)))
    const parentKey = memberKey(parent.resource, parent.ref.namespace, parent.ref.name)
    const dropped = options.prune === true
      ? listed.filter((m) => {
        const key = memberKey(m.resource, m.ref.namespace, m.name)
        return !wanted.has(key) && key !== parentKey
      })
      : []
    if (options.clusterScoped !== true) {
      const clusterWide = dropped.find((m) => !m.resource.namespaced)
      if (clusterWide !== undefined) {
        return yield* invalid(
          "prune",
          `${formatRef(clusterWide.ref)} is a cluster-scoped member the manifests no longer hold: pass ` +
            "clusterScoped: true to prune cluster-scoped objects"
        )
      }
    }
    return { prepared, parent, bodies, recorded, live, prune: pruneOrder(dropped), kinds, namespaces }
  })

/** Where an apply of a set leaves its parent: the new set's kinds and namespaces alone. */
const latestKinds = (prepared: manifests.PreparedApply) => uniqueKinds(prepared.resolved.map((item) => item.resource))

const latestNamespaces = (prepared: manifests.PreparedApply, parent: Parent) =>
  new Set([...memberNamespaces(prepared), ...(parent.ref.namespace !== undefined ? [parent.ref.namespace] : [])])

export const apply = (
  objects: Iterable<Manifests.Applicable>,
  options: Manifests.ApplySetOptions
): Effect.Effect<
  Manifests.ApplySetResult,
  ApplyFailed | PruneFailed | ApplySetError | Kube.Error,
  Kube.Requirements
> =>
  Effect.gen(function*() {
    const propagationPolicy = yield* manifests.checkPropagationPolicy(options.propagationPolicy)
    const theplan = yield* plan(objects, options)
    const { bodies, live, parent, prepared } = theplan
    // The union first: if this run stops half-way, the next one still lists every member.
    const written = yield* writeParent(parent, theplan.kinds, theplan.namespaces, options.dryRun)
    // A dry run answers with a uid the server made up for a parent it did not create.
    const parentUid = options.dryRun === true ? theplan.recorded.uid : manifests.uidOf(written)

    const applied: Array<ObjectRef> = []
    const created: Array<ObjectRef> = []
    const changed: Array<ObjectRef> = []
    const unchanged: Array<ObjectRef> = []
    for (let i = 0; i < prepared.resolved.length; i++) {
      const item = prepared.resolved[i]!
      const result = yield* Effect.result(
        manifests.applyOne(item, bodies[i]!, { ...options, fieldManager: prepared.fieldManager })
      )
      if (Result.isFailure(result)) {
        const { uid: _given, ...ref } = item.ref
        return yield* new ApplyFailed({ applied, failed: { ref, error: manifests.asRefError(result.failure) } })
      }
      const ref = manifests.appliedRef(item, result.success.object)
      applied.push(ref)
      const before = live.get(memberKey(item.resource, item.ref.namespace, item.name))
      if (result.success.created) created.push(ref)
      else if (before !== undefined && sameJson(comparable(before.object), comparable(result.success.object))) {
        unchanged.push(ref)
      } else changed.push(ref)
    }

    const pruned: Array<ObjectRef> = []
    const failures: Array<RefFailure> = []
    for (const member of theplan.prune) {
      const owner = foreignOwner(member, parentUid)
      if (owner !== undefined) {
        failures.push({
          ref: member.ref,
          error: new ValidationError({
            subject: formatRef(member.ref),
            detail: `carries the set's label but is owned by ${owner}, not by the ApplySet's parent: not pruned`
          })
        })
        continue
      }
      const result = yield* Effect.result(
        client.sendJson(request.del(member.resource, member.ref.namespace, member.name, {
          propagationPolicy,
          dryRun: options.dryRun,
          ...(member.ref.uid !== undefined ? { preconditions: { uid: member.ref.uid } } : {})
        })).pipe(Effect.catchIf(ApiError.isNotFound, () => Effect.void))
      )
      if (Result.isFailure(result)) failures.push({ ref: member.ref, error: manifests.asRefError(result.failure) })
      else pruned.push(member.ref)
    }
    // A failed prune leaves the parent at the union, so the next apply finds what is left.
    if (failures.length > 0) return yield* new PruneFailed({ applied, pruned, failures })
    if (options.prune === true) {
      yield* writeParent(parent, latestKinds(prepared), latestNamespaces(prepared, parent), options.dryRun)
    }
    return {
      id: parent.id,
      parent: parentUid !== undefined ? { ...parent.ref, uid: parentUid } : parent.ref,
      applied,
      created,
      changed,
      unchanged,
      pruned
    }
  })

/**
 * The namespace controller: a namespace marked for deletion (Terminating) has its
 * contents deleted, a short while after the DELETE (as on a cluster, where the
 * controller first discovers what to delete), each object as a DELETE would (pods
 * gracefully, finalizers kept); its conditions report what remains; once nothing does,
 * the `kubernetes` finalizer comes off and the namespace goes.
 *
 * @internal
 */
import { isObject, type JsonObject } from "../store/json.js"
import type { FakeState } from "../store/state.js"
import type { Entry } from "../store/store.js"
import { builtinKind, editObject, entriesOf, entryOf, isDeleting, metadataOf, removeObject } from "./api.js"
import { WorkQueue } from "./queue.js"

const condition = (
  type: string,
  status: "True" | "False",
  reason: string,
  message: string,
  at: string,
  old: unknown
) => {
  const previous = Array.isArray(old) ?
    old.find((c): c is JsonObject => isObject(c) && c.type === type) :
    undefined
  return {
    type,
    status,
    lastTransitionTime: previous !== undefined && previous.status === status ? previous.lastTransitionTime : at,
    reason,
    message
  }
}

/** @internal */
export const installNamespaces = (state: FakeState, contentDeletionDelayMs: number): void => {
  const nsKind = builtinKind(state, "", "v1", "namespaces")
  /** Terminating namespaces -> whether the controller has started on their contents. */
  const terminating = new Map<string, boolean>()
  const queue = new WorkQueue(state, (name) => {
    const ns = entryOf(state, nsKind, "", name)
    if (ns === undefined || !isDeleting(ns)) {
      terminating.delete(name)
      return
    }
    terminating.set(name, true)
    sync(state, ns)
  })
  state.onWrite((kind, entry) => {
    if (kind.group === "" && kind.plural === "namespaces") {
      if (!isDeleting(entry) || terminating.has(entry.name)) return
      terminating.set(entry.name, false)
      queue.addAfter(entry.name, contentDeletionDelayMs)
    } else if (kind.namespaced && terminating.get(entry.namespace) === true) {
      queue.add(entry.namespace)
    }
  })
  state.onRemove((kind, removed) => {
    if (kind.namespaced && terminating.get(removed.namespace) === true) queue.add(removed.namespace)
    else if (kind.group === "" && kind.plural === "namespaces") terminating.delete(removed.name)
  })
}

const sync = (state: FakeState, ns: Entry): void => {
  const nsKind = builtinKind(state, "", "v1", "namespaces")
  const remaining = new Map<string, number>()
  const finalizers = new Map<string, number>()
  for (const collection of [...state.store.allCollections()]) {
    const kind = collection.kind
    if (!kind.namespaced) continue
    for (const entry of entriesOf(state, kind, ns.name)) {
      if (!isDeleting(entry)) removeObject(state, kind, entry, { propagationPolicy: "Background" })
    }
    const left = entriesOf(state, kind, ns.name)
    if (left.length === 0) continue
    remaining.set(`${kind.plural}.${kind.group}`, left.length)
    for (const entry of left) {
      const held = metadataOf(entry.obj).finalizers
      if (!Array.isArray(held)) continue
      for (const f of held) if (typeof f === "string") finalizers.set(f, (finalizers.get(f) ?? 0) + 1)
    }
  }
  const current = entryOf(state, nsKind, "", ns.name)
  if (current === undefined || current.uid !== ns.uid) return
  const at = state.now()
  const list = (m: Map<string, number>, verb: string) =>
    [...m.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([k, n]) => `${k} ${verb} ${n} resource instances`)
      .join(", ")
  const updated = editObject(state, nsKind, current, (draft) => {
    const status = isObject(draft.status) ? draft.status : (draft.status = {})
    const old = status.conditions
    status.conditions = [
      condition(
        "NamespaceDeletionDiscoveryFailure",
        "False",
        "ResourcesDiscovered",
        "All resources successfully discovered",
        at,
        old
      ),
      condition(
        "NamespaceDeletionGroupVersionParsingFailure",
        "False",
        "ParsedGroupVersions",
        "All legacy kube types successfully parsed",
        at,
        old
      ),
      condition(
        "NamespaceDeletionContentFailure",
        "False",
        "ContentDeleted",
        "All content successfully deleted, may be waiting on finalization",
        at,
        old
      ),
      remaining.size > 0 ?
        condition(
          "NamespaceContentRemaining",
          "True",
          "SomeResourcesRemain",
          `Some resources are remaining: ${list(remaining, "has")}`,
          at,
          old
        ) :
        condition("NamespaceContentRemaining", "False", "ContentRemoved", "All content successfully removed", at, old),
      finalizers.size > 0 ?
        condition(
          "NamespaceFinalizersRemaining",
          "True",
          "SomeFinalizersRemain",
          `Some content in the namespace has finalizers remaining: ${list(finalizers, "in")}`,
          at,
          old
        ) :
        condition(
          "NamespaceFinalizersRemaining",
          "False",
          "ContentHasNoFinalizers",
          "All content-preserving finalizers finished",
          at,
          old
        )
    ]
    if (remaining.size === 0) {
      // the namespace controller's finalize: with the last finalizer gone the namespace goes
      const spec = isObject(draft.spec) ? draft.spec : (draft.spec = {})
      const held = Array.isArray(spec.finalizers) ? spec.finalizers : []
      spec.finalizers = held.filter((f) => f !== "kubernetes")
    }
  })
  if (remaining.size === 0 && entryOf(state, nsKind, "", ns.name)?.uid === ns.uid) {
    removeObject(state, nsKind, updated)
  }
}

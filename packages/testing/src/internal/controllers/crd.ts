/**
 * What apiextensions-apiserver does with a CustomResourceDefinition once stored: its
 * names accepted (unless another CRD of the group has them) and the kind Established,
 * with `acceptedNames` and `storedVersions`; once deleted (Terminating, with the
 * `customresourcecleanup.apiextensions.k8s.io` finalizer), after a short delay every object of
 * the kind is deleted (their finalizers respected), then the CRD goes.
 *
 * @internal
 */
import { crdCleanupFinalizer } from "../writes/deletes.js"
import { isObject, type JsonObject } from "../store/json.js"
import type { KindInfo } from "../store/kinds.js"
import type { FakeState } from "../store/state.js"
import type { Entry } from "../store/store.js"
import {
  builtinKind,
  conditionOf,
  dropFinalizer,
  editObject,
  entriesOf,
  entryOf,
  isDeleting,
  metadataOf,
  removeObject,
  setCondition
} from "./api.js"
import { WorkQueue } from "./queue.js"

const crdKind = (state: FakeState): KindInfo =>
  builtinKind(state, "apiextensions.k8s.io", "v1", "customresourcedefinitions")

interface Names {
  readonly group: string
  readonly plural: string
  readonly kind: string
  readonly names: JsonObject
}

const namesOf = (crd: JsonObject): Names | undefined => {
  const spec = isObject(crd.spec) ? crd.spec : {}
  const names = isObject(spec.names) ? spec.names : {}
  if (typeof spec.group !== "string" || typeof names.plural !== "string" || typeof names.kind !== "string") {
    return undefined
  }
  return { group: spec.group, plural: names.plural, kind: names.kind, names }
}

/** The kind a CRD serves, while it serves it. */
const servedKind = (state: FakeState, names: Names): KindInfo | undefined =>
  state.registry.all().find((k) => k.custom && k.group === names.group && k.plural === names.plural)

/** How long a deleted CRD waits for its cleanup to start (fake clock ms). */
const cleanupDelayMs = 100

/** @internal */
export const installCrds = (state: FakeState): void => {
  const queue = new WorkQueue(state, (name) => sync(state, name))
  state.onWrite((kind, entry) => {
    if (kind.group !== "apiextensions.k8s.io" || kind.plural !== "customresourcedefinitions") return
    // a deleted CRD's cleanup starts at the controller's pace: kube-apiserver keeps an empty one 50 to 150 ms
    if (isDeleting(entry)) queue.addAfter(entry.name, cleanupDelayMs)
    else queue.add(entry.name)
  })
  state.onRemove((kind) => {
    if (!kind.custom) return
    const crd = entryOf(state, crdKind(state), "", `${kind.plural}.${kind.group}`)
    if (crd !== undefined && isDeleting(crd)) queue.add(crd.name)
  })
}

const sync = (state: FakeState, name: string): void => {
  const kind = crdKind(state)
  const crd = entryOf(state, kind, "", name)
  if (crd === undefined) return
  const names = namesOf(crd.obj)
  if (names === undefined) return
  const at = state.now()
  if (isDeleting(crd)) return cleanUp(state, crd, names, at)
  const conflict = entriesOf(state, kind, undefined).find((other) => {
    if (other.uid === crd.uid || isDeleting(other)) return false
    const o = namesOf(other.obj)
    if (o === undefined || o.group !== names.group) return false
    const accepted = isObject(other.obj.status) && isObject(other.obj.status.acceptedNames) ?
      other.obj.status.acceptedNames :
      undefined
    if (accepted === undefined) return false
    return accepted.plural === names.plural || accepted.kind === names.kind
  })
  const versions = (Array.isArray((crd.obj.spec as JsonObject).versions) ?
    (crd.obj.spec as JsonObject).versions as Array<unknown> :
    []).filter(isObject)
  const storage = versions.find((v) => v.storage === true) ?? versions[0]
  editObject(state, kind, crd, (draft) => {
    const status = isObject(draft.status) ? draft.status : (draft.status = {})
    if (conflict !== undefined) {
      const taken = (conflict.obj.status as JsonObject).acceptedNames as JsonObject
      const what = taken.plural === names.plural ? names.plural : names.kind
      setCondition(
        status,
        { type: "NamesAccepted", status: "False", reason: "AlreadyInUse", message: `"${what}" is already in use` },
        at
      )
      if (conditionOf(status, "Established") === undefined) {
        setCondition(
          status,
          { type: "Established", status: "False", reason: "NotAccepted", message: "not all names are accepted" },
          at
        )
      }
      if (!isObject(status.acceptedNames)) status.acceptedNames = { plural: "", kind: "" }
    } else {
      const n = names.names
      status.acceptedNames = {
        plural: names.plural,
        singular: typeof n.singular === "string" && n.singular !== "" ? n.singular : names.kind.toLowerCase(),
        ...(Array.isArray(n.shortNames) && n.shortNames.length > 0 ? { shortNames: n.shortNames } : {}),
        kind: names.kind,
        listKind: typeof n.listKind === "string" && n.listKind !== "" ? n.listKind : `${names.kind}List`,
        ...(Array.isArray(n.categories) && n.categories.length > 0 ? { categories: n.categories } : {})
      }
      setCondition(
        status,
        { type: "NamesAccepted", status: "True", reason: "NoConflicts", message: "no conflicts found" },
        at
      )
      const established = conditionOf(status, "Established")
      if (established?.status !== "True") {
        setCondition(
          status,
          {
            type: "Established",
            status: "True",
            reason: "InitialNamesAccepted",
            message: "the initial names have been accepted"
          },
          at
        )
      }
    }
    const stored = Array.isArray(status.storedVersions) ? status.storedVersions as Array<unknown> : []
    if (storage !== undefined && typeof storage.name === "string" && !stored.includes(storage.name)) {
      status.storedVersions = [...stored, storage.name]
    }
  })
}

/** A deleted CRD: its objects go first (their own finalizers respected), then its cleanup finalizer. */
const cleanUp = (state: FakeState, crd: Entry, names: Names, at: string): void => {
  const finalizers = metadataOf(crd.obj).finalizers
  if (!Array.isArray(finalizers) || !finalizers.includes(crdCleanupFinalizer)) return
  const kind = servedKind(state, names)
  if (kind !== undefined) {
    for (const entry of entriesOf(state, kind, undefined)) {
      if (!isDeleting(entry)) removeObject(state, kind, entry, { propagationPolicy: "Background" })
    }
  }
  const left = kind === undefined ? 0 : entriesOf(state, kind, undefined).length
  const current = entryOf(state, crdKind(state), "", crd.name)
  if (current === undefined) return
  if (left > 0) {
    editObject(state, crdKind(state), current, (draft) => {
      const status = isObject(draft.status) ? draft.status : (draft.status = {})
      setCondition(status, {
        type: "Terminating",
        status: "True",
        reason: "InstanceDeletionInProgress",
        message: "CustomResource deletion is in progress"
      }, at)
    })
    return
  }
  dropFinalizer(state, crdKind(state), current, crdCleanupFinalizer)
}

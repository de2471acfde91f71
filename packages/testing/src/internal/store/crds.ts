/**
 * CustomResourceDefinitions: storing one serves its kind (discovery lists it, its
 * paths answer); deleting it removes the kind and every object of it. A served
 * version's `openAPIV3Schema` is what its objects are pruned, defaulted and validated
 * by; lists of custom resources are written as the API server writes unstructured
 * lists (keys sorted, `continue` always there).
 *
 * @internal
 */
import { isObject, type JsonObject } from "./json.js"
import { customKind, type KindInfo } from "./kinds.js"
import type { FakeState } from "./state.js"
import { type Entry, keyOf } from "./store.js"
import { type Schema, schemaOf } from "../validation/schema.js"

const schemas = new WeakMap<Entry, Map<string, Schema | undefined>>()

/**
 * The structural schema a custom kind's version has in its CRD, if the kind comes from a
 * stored CRD and that version has one (a kind registered through the options has none).
 *
 * @internal
 */
export const schemaFor = (state: FakeState, kind: KindInfo, version: string): Schema | undefined => {
  const entry = crdOf(state, kind)
  if (entry === undefined) return undefined
  let byVersion = schemas.get(entry)
  if (byVersion === undefined) schemas.set(entry, byVersion = new Map())
  if (!byVersion.has(version)) byVersion.set(version, schemaOf(entry.obj, version))
  return byVersion.get(version)
}

/** The stored CRD a custom kind comes from. */
const crdOf = (state: FakeState, kind: KindInfo): Entry | undefined => {
  const crdKind = state.registry.byResource("apiextensions.k8s.io", "v1", "customresourcedefinitions")
  if (crdKind === undefined) return undefined
  return state.store.existing(crdKind)?.entries.get(keyOf("", `${kind.plural}.${kind.group}`))
}

/** Where a custom resource keeps what its `scale` subresource shows (`.spec.replicas` style paths, no arrays). */
export interface ScalePaths {
  readonly specReplicasPath: string
  readonly statusReplicasPath: string
  readonly labelSelectorPath: string | undefined
}

/**
 * The scale subresource a custom kind's version has in its CRD (undefined for a kind
 * registered through the options, which is scaled as `spec.replicas`).
 *
 * @internal
 */
export const scalePathsFor = (state: FakeState, kind: KindInfo, version: string): ScalePaths | undefined => {
  const spec = crdOf(state, kind)?.obj.spec
  const versions = isObject(spec) && Array.isArray(spec.versions) ? spec.versions : []
  const served = versions.find((v): v is JsonObject => isObject(v) && v.name === version)
  const scale = isObject(served?.subresources) ? served.subresources.scale : undefined
  if (!isObject(scale)) return undefined
  const path = (p: unknown, fallback: string) => typeof p === "string" && p !== "" ? p : fallback
  return {
    specReplicasPath: path(scale.specReplicasPath, ".spec.replicas"),
    statusReplicasPath: path(scale.statusReplicasPath, ".status.replicas"),
    labelSelectorPath: typeof scale.labelSelectorPath === "string" && scale.labelSelectorPath !== "" ?
      scale.labelSelectorPath :
      undefined
  }
}

/**
 * A list of custom resources as the API server writes it (an unstructured list, every
 * map's keys sorted): `{"apiVersion","items","kind","metadata":{"continue":"",...}}`.
 * The items are stored sorted already.
 *
 * @internal
 */
export const customListJson = (
  kind: KindInfo,
  apiVersion: string,
  metadata: { readonly continue?: string | undefined; readonly remainingItemCount?: number | undefined; readonly resourceVersion: string },
  items: string
): string => {
  const meta: JsonObject = { continue: metadata.continue ?? "" }
  if (metadata.remainingItemCount !== undefined) meta.remainingItemCount = metadata.remainingItemCount
  meta.resourceVersion = metadata.resourceVersion
  return `{"apiVersion":${JSON.stringify(apiVersion)},"items":[${items}],"kind":${JSON.stringify(kind.listKind)},` +
    `"metadata":${JSON.stringify(meta)}}`
}

const isCrdKind = (kind: KindInfo): boolean =>
  kind.group === "apiextensions.k8s.io" && kind.plural === "customresourcedefinitions"

const registerCrd = (state: FakeState, crd: JsonObject): void => {
  const spec = isObject(crd.spec) ? crd.spec : {}
  const names = isObject(spec.names) ? spec.names : {}
  if (typeof spec.group !== "string" || typeof names.plural !== "string" || typeof names.kind !== "string") return
  const versions = (Array.isArray(spec.versions) ? spec.versions : []).filter(
    (v): v is JsonObject => isObject(v) && typeof v.name === "string" && v.served !== false
  )
  if (versions.length === 0) return
  const storage = versions.find((v) => v.storage === true) ?? versions[0]!
  const ordered = [storage, ...versions.filter((v) => v !== storage)]
  const hasStatus = versions.some((v) => isObject(v.subresources) && v.subresources.status !== undefined)
  const hasScale = versions.some((v) => isObject(v.subresources) && v.subresources.scale !== undefined)
  // `.spec.color` in the CRD, `spec.color` in a field selector
  const selectable = versions.flatMap((v) => Array.isArray(v.selectableFields) ? v.selectableFields : [])
    .flatMap((f) => isObject(f) && typeof f.jsonPath === "string" ? [f.jsonPath.replace(/^\./, "")] : [])
  state.registry.add(customKind(
    {
      apiVersion: `${spec.group}/${storage.name as string}`,
      kind: names.kind,
      plural: names.plural,
      namespaced: spec.scope !== "Cluster",
      shortNames: Array.isArray(names.shortNames)
        ? names.shortNames.filter((s): s is string => typeof s === "string")
        : [],
      singular: typeof names.singular === "string" ? names.singular : undefined
    },
    {
      versions: ordered.map((v) => v.name as string),
      hasStatus,
      subresources: [...(hasStatus ? ["status"] : []), ...(hasScale ? ["scale"] : [])],
      fieldSelectors: [...new Set(selectable)],
      ...(Array.isArray(names.categories)
        ? { categories: names.categories.filter((c): c is string => typeof c === "string") }
        : {})
    }
  ))
}

const unregisterCrd = (state: FakeState, crd: JsonObject): void => {
  const spec = isObject(crd.spec) ? crd.spec : {}
  const names = isObject(spec.names) ? spec.names : {}
  if (typeof spec.group !== "string" || typeof names.plural !== "string") return
  const kind = state.registry.byResource(spec.group, "", names.plural) ??
    state.registry.all().find((k) => k.group === spec.group && k.plural === names.plural)
  if (kind === undefined || !kind.custom) return
  const collection = state.store.existing(kind)
  if (collection !== undefined) {
    for (const e of [...collection.entries.values()]) state.removeEntry(kind, e)
  }
  state.registry.remove(spec.group, names.plural as string)
}

/** Serves the kind of each CRD stored, and stops serving it when the CRD is removed. @internal */
export const install = (state: FakeState): void => {
  state.onWrite((kind, entry) => {
    if (isCrdKind(kind)) registerCrd(state, entry.obj)
  })
  state.onRemove((kind, removed) => {
    if (isCrdKind(kind)) unregisterCrd(state, removed.obj)
  })
}

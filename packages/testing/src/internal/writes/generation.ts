/**
 * Which updates bump `metadata.generation`: each kind's own rule, as its registry strategy's PrepareForUpdate decides
 * it on the defaulted object. Most kinds bump on any change outside metadata and status; a Deployment also on its
 * annotations (they are copied to its ReplicaSets), an EndpointSlice on its endpoints, ports, address type and labels,
 * a PriorityClass never; a custom resource without a status subresource on its status too. Deleting with finalizers
 * bumps it as well (writes/deletes.ts).
 *
 * @internal
 */
import { deepEqual, type JsonObject } from "../store/json.js"
import type { KindInfo } from "../store/kinds.js"

const metadataOf = (obj: JsonObject): JsonObject => (obj.metadata ?? {}) as JsonObject

/** Any top-level field but metadata, the type and (when it is a subresource) status. */
const contentChanged = (kind: KindInfo, a: JsonObject, b: JsonObject): boolean => {
  const statusApart = !kind.custom || kind.hasStatus
  for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) {
    if (k === "metadata" || k === "apiVersion" || k === "kind" || (k === "status" && statusApart)) continue
    if (!deepEqual(a[k], b[k])) return true
  }
  return false
}

const fieldsChanged = (a: JsonObject, b: JsonObject, fields: ReadonlyArray<string>): boolean =>
  fields.some((f) => !deepEqual(a[f], b[f]))

const rules: Readonly<Record<string, (a: JsonObject, b: JsonObject) => boolean>> = {
  "apps/Deployment": (a, b) =>
    !deepEqual(a.spec, b.spec) || !deepEqual(metadataOf(a).annotations, metadataOf(b).annotations),
  "discovery.k8s.io/EndpointSlice": (a, b) =>
    fieldsChanged(a, b, ["endpoints", "ports", "addressType"]) || !deepEqual(metadataOf(a).labels, metadataOf(b).labels),
  "scheduling.k8s.io/PriorityClass": () => false
}

/** Whether an update from `old` to `next` (both defaulted) bumps the generation. @internal */
export const bumps = (kind: KindInfo, old: JsonObject, next: JsonObject): boolean => {
  const rule = kind.custom ? undefined : rules[`${kind.group}/${kind.kind}`]
  return rule !== undefined ? rule(old, next) : contentChanged(kind, old, next)
}

/** Sets an updated object's generation from the stored one's by the kind's rule. @internal */
export const update = (kind: KindInfo, old: JsonObject, next: JsonObject): void => {
  const before = metadataOf(old).generation
  const generation = typeof before === "number" ? before : 1
  metadataOf(next).generation = bumps(kind, old, next) ? generation + 1 : generation
}

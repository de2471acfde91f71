/**
 * The metadata the controller runtime reads from any object.
 *
 * @internal
 */
import type * as Resource from "../../Resource.js"

/** @internal */
export interface OwnerRef {
  readonly apiVersion: string
  readonly kind: string
  readonly name: string
  readonly uid: string
  readonly controller?: boolean | undefined
}

/** @internal */
export interface Metadata {
  readonly name?: string | undefined
  readonly namespace?: string | undefined
  readonly uid?: string | undefined
  readonly resourceVersion?: string | undefined
  readonly generation?: number | undefined
  readonly finalizers?: ReadonlyArray<string> | undefined
  readonly deletionTimestamp?: string | undefined
  readonly ownerReferences?: ReadonlyArray<OwnerRef> | undefined
}

/** @internal */
export interface HasMetadata {
  readonly metadata?: Metadata | undefined
}

/** @internal */
export const metadataOf = (object: unknown): Metadata =>
  typeof object === "object" && object !== null && typeof (object as HasMetadata).metadata === "object"
    ? (object as HasMetadata).metadata ?? {}
    : {}

/** A reference to an object, as Events and owner references take it. @internal */
export interface ObjectReference {
  readonly apiVersion: string
  readonly kind: string
  readonly name: string
  readonly namespace?: string | undefined
  readonly uid?: string | undefined
  readonly resourceVersion?: string | undefined
}

/** @internal */
export const referenceOf = (
  resource: Pick<Resource.Info, "apiVersion" | "kind" | "namespaced">,
  object: unknown
): ObjectReference => {
  const m = metadataOf(object)
  return {
    apiVersion: resource.apiVersion,
    kind: resource.kind,
    name: m.name ?? "",
    ...(resource.namespaced && m.namespace !== undefined ? { namespace: m.namespace } : {}),
    ...(m.uid !== undefined ? { uid: m.uid } : {}),
    ...(m.resourceVersion !== undefined ? { resourceVersion: m.resourceVersion } : {})
  }
}

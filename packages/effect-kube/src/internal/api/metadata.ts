/**
 * `Kube.metadata`: the metadata-only view of a resource. Its operations are those of
 * `Kube.api` over a view of the resource (same group, version, plural and scope) whose
 * requests ask for `PartialObjectMetadata` (`request/view.ts`) and whose Schema keeps
 * only `metadata`: an object from a server that ignored the Accept (an aggregated API)
 * is cut down to the same shape, so callers never see the difference.
 */
import * as Schema from "effect/Schema"
import * as SchemaTransformation from "effect/SchemaTransformation"
import type * as Kube from "../../Kube.js"
import * as Resource from "../../Resource.js"
import { ObjectMeta } from "../../resources/generated.js"
import * as reflector from "../runtime/reflector.js"
import * as api from "../kube.js"
import { markMetadataView } from "../request/view.js"

/** An object's metadata alone, as the API server's PartialObjectMetadata. */
export interface PartialObjectMetadata {
  readonly apiVersion: "meta.k8s.io/v1"
  readonly kind: "PartialObjectMetadata"
  readonly metadata: ObjectMeta
}

const Partial = Schema.Struct({
  apiVersion: Schema.Literal("meta.k8s.io/v1"),
  kind: Schema.Literal("PartialObjectMetadata"),
  metadata: ObjectMeta
})

/**
 * Decodes a PartialObjectMetadata, or a whole object of any kind (its metadata is kept,
 * the rest dropped); encodes to the metadata alone.
 */
export const PartialObjectMetadataSchema: Schema.Codec<PartialObjectMetadata, { readonly metadata: ObjectMeta }> =
  Schema.Struct({ metadata: ObjectMeta }).pipe(
    Schema.decodeTo(
      Partial,
      SchemaTransformation.transform({
        decode: (whole) => ({
          apiVersion: "meta.k8s.io/v1" as const,
          kind: "PartialObjectMetadata" as const,
          metadata: whole.metadata
        }),
        encode: (partial) => ({ metadata: partial.metadata })
      })
    )
  )

/** The metadata view of a resource: a new Resource, marked so its requests ask for PartialObjectMetadata. */
export const viewOf = <A, I, S extends string>(
  resource: Resource.Resource<A, I, S>
): Resource.Resource<PartialObjectMetadata, { readonly metadata: ObjectMeta }> =>
  markMetadataView(Resource.make({
    apiVersion: resource.apiVersion,
    kind: resource.kind,
    plural: resource.plural,
    namespaced: resource.namespaced,
    schema: PartialObjectMetadataSchema
  }))

/** Builds `Kube.metadata`'s operations. */
export const make = <A, I, S extends string>(
  resource: Resource.Resource<A, I, S>,
  options?: { readonly namespace?: string | undefined }
): Kube.MetadataApi => {
  const full = api.make(viewOf(resource), options)
  return {
    resource: resource as Resource.Resource<unknown, unknown, string>,
    namespace: full.namespace,
    get: full.get,
    list: full.list,
    listStream: full.listStream,
    watch: full.watch,
    watcher: full.watcher,
    reflector: (watcherOptions) => reflector.reflector(full, watcherOptions ?? {}),
    patch: full.patch
  }
}

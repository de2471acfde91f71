/**
 * The metadata-only view of a resource (`Kube.metadata`): requests for its objects ask
 * for `PartialObjectMetadata` (the List form for lists), and its answers may carry that
 * kind. A resource is marked here once, when `Kube.metadata` makes its view; everything
 * else about the request (path, query, verb) stays that of the resource.
 */

/** The Accept of a get, a patch and a watch of a metadata view; plain JSON last, for a server that cannot. */
export const partialAccept = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1, application/json"

/** The Accept of a list of a metadata view. */
export const partialListAccept = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1, application/json"

const views = new WeakSet<object>()

/** Marks a resource as a metadata view. */
export const markMetadataView = <R extends object>(resource: R): R => {
  views.add(resource)
  return resource
}

/** Whether a resource is a metadata view. */
export const isMetadataView = (resource: object): boolean => views.has(resource)

/** The accept header of a request for the resource's objects: `undefined` (JSON) unless it is a metadata view. */
export const acceptFor = (resource: object, form: "object" | "list"): string | undefined =>
  views.has(resource) ? (form === "list" ? partialListAccept : partialAccept) : undefined

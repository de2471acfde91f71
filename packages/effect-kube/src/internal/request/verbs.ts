/**
 * Every operation's request, built from its inputs with no I/O (as kube-rs's kube-core
 * builds them): the method, path, query, headers and body of get, list, create,
 * replace, patch and apply, delete and delete-collection, watch, log and discovery.
 * Inputs are already checked (names, namespaces, numbers); nothing here fails.
 */
import type * as Kube from "../../Kube.js"
import * as Patch from "../../Patch.js"
import * as Resource from "../../Resource.js"
import { jsonBody, type Spec, type SubresourceVerb } from "./spec.js"
import { acceptFor } from "./view.js"

/** What a request needs to know of a resource: where it lives and what it is called. */
export type Kind = Pick<Resource.Info, "group" | "version" | "plural" | "kind">

/** A selector that says something: a blank one is left out of the query. */
export const nonEmpty = (s: string | undefined): s is string => s !== undefined && s.trim() !== ""

const selectorQuery = (options: Kube.Selectors) => ({
  labelSelector: nonEmpty(options.labelSelector) ? options.labelSelector : undefined,
  fieldSelector: nonEmpty(options.fieldSelector) ? options.fieldSelector : undefined
})

const dryRunQuery = (dryRun: boolean | undefined) => (dryRun === true ? "All" : undefined)

/** `GET` of one object (at a resourceVersion when one is given). Written without spreads: every get makes one. */
export const get = (
  resource: Kind,
  namespace: string | undefined,
  name: string,
  options: Kube.GetOptions = {}
): Spec => ({
  method: "GET",
  path: Resource.objectPath(resource, namespace, name),
  query: options.resourceVersion !== undefined || options.resourceVersionMatch !== undefined
    ? { resourceVersion: options.resourceVersion, resourceVersionMatch: options.resourceVersionMatch }
    : undefined,
  accept: acceptFor(resource, "object"),
  operation: { verb: "get", kind: resource.kind, namespace, name }
})

/** `GET` of a collection (one page when `limit` is given). */
export const list = (resource: Kind, namespace: string | undefined, options: Kube.ListOptions): Spec => ({
  method: "GET",
  path: Resource.collectionPath(resource, namespace),
  query: {
    ...selectorQuery(options),
    limit: options.limit,
    continue: options.continue,
    resourceVersion: options.resourceVersion,
    resourceVersionMatch: options.resourceVersionMatch,
    timeoutSeconds: options.timeoutSeconds
  },
  accept: acceptFor(resource, "list"),
  operation: { verb: "list", kind: resource.kind, namespace }
})

/** The query of a write: dry run, field manager, field validation. */
const writeQuery = (options: Kube.WriteOptions) => ({
  dryRun: dryRunQuery(options.dryRun),
  fieldManager: options.fieldManager,
  fieldValidation: options.fieldValidation
})

/** `POST` of a new object (its encoded, checked form). */
export const create = (
  resource: Kind,
  namespace: string | undefined,
  body: unknown,
  options: Kube.WriteOptions
): Spec => ({
  method: "POST",
  path: Resource.collectionPath(resource, namespace),
  query: writeQuery(options),
  body: jsonBody(body),
  operation: { verb: "create", kind: resource.kind, namespace }
})

/** `PUT` of a whole object. */
export const replace = (
  resource: Kind,
  namespace: string | undefined,
  name: string,
  body: unknown,
  options: Kube.WriteOptions
): Spec => ({
  method: "PUT",
  path: Resource.objectPath(resource, namespace, name),
  query: writeQuery(options),
  body: jsonBody(body),
  operation: { verb: "replace", kind: resource.kind, namespace, name }
})

/**
 * `PATCH` with the patch's content type. A server-side apply (verb `apply`) sends the
 * field manager and `force`; the other kinds send the field manager when one is given.
 */
export const patch = (
  resource: Kind,
  namespace: string | undefined,
  name: string,
  thePatch: Patch.Patch,
  options: Kube.WriteOptions
): Spec => ({
  method: "PATCH",
  path: Resource.objectPath(resource, namespace, name),
  query: {
    ...writeQuery(options),
    force: thePatch._tag === "Apply" && thePatch.force ? true : undefined
  },
  body: { contentType: Patch.contentType(thePatch), text: Patch.bodyText(thePatch) },
  accept: acceptFor(resource, "object"),
  operation: { verb: thePatch._tag === "Apply" ? "apply" : "patch", kind: resource.kind, namespace, name }
})

/** The options of a delete, as the API's `DeleteOptions` object. */
const deleteOptionsObject = (
  options: {
    readonly propagationPolicy?: Kube.DeleteOptions["propagationPolicy"]
    readonly gracePeriodSeconds?: number | undefined
    readonly dryRun?: boolean | undefined
    readonly preconditions?: Kube.DeleteOptions["preconditions"]
  }
) => ({
  kind: "DeleteOptions",
  apiVersion: "v1",
  ...(options.propagationPolicy !== undefined ? { propagationPolicy: options.propagationPolicy } : {}),
  ...(options.gracePeriodSeconds !== undefined ? { gracePeriodSeconds: options.gracePeriodSeconds } : {}),
  ...(options.preconditions !== undefined ? { preconditions: options.preconditions } : {}),
  ...(options.dryRun === true ? { dryRun: ["All"] } : {})
})

/** The options of a delete, as the API's `DeleteOptions` body. */
const deleteBody = (options: Parameters<typeof deleteOptionsObject>[0]) => jsonBody(deleteOptionsObject(options))

/** `DELETE` of one object, with its options in the body. */
export const del = (resource: Kind, namespace: string | undefined, name: string, options: Kube.DeleteOptions): Spec => ({
  method: "DELETE",
  path: Resource.objectPath(resource, namespace, name),
  body: deleteBody(options),
  operation: { verb: "delete", kind: resource.kind, namespace, name }
})

/** `DELETE` of the objects of a collection that the selectors match. */
export const deleteCollection = (
  resource: Kind,
  namespace: string | undefined,
  options: Kube.DeleteAllOptions
): Spec => ({
  method: "DELETE",
  path: Resource.collectionPath(resource, namespace),
  query: { ...selectorQuery(options), resourceVersion: options.resourceVersion },
  body: deleteBody({
    propagationPolicy: options.propagationPolicy,
    gracePeriodSeconds: options.gracePeriodSeconds,
    dryRun: options.dryRun,
    preconditions: options.preconditions
  }),
  operation: { verb: "deleteAll", kind: resource.kind, namespace }
})

/**
 * A watch of a collection. `sendInitialEvents` is only accepted by the API together with
 * `resourceVersionMatch=NotOlderThan` and bookmarks, so those are sent with it.
 */
export const watch = (resource: Kind, namespace: string | undefined, options: Kube.WatchOptions): Spec => {
  const initialEvents = options.sendInitialEvents !== undefined
  return {
    method: "GET",
    path: Resource.collectionPath(resource, namespace),
    query: {
      watch: true,
      ...selectorQuery(options),
      resourceVersion: nonEmpty(options.resourceVersion) ? options.resourceVersion : undefined,
      resourceVersionMatch: initialEvents ? "NotOlderThan" : undefined,
      sendInitialEvents: options.sendInitialEvents,
      allowWatchBookmarks: initialEvents ? true : options.allowWatchBookmarks,
      timeoutSeconds: options.timeoutSeconds
    },
    accept: acceptFor(resource, "object"),
    operation: { verb: "watch", kind: resource.kind, namespace }
  }
}

/** The options of a log request, checked, with `sinceTime` as RFC 3339 text. */
export interface LogQuery extends Omit<Kube.LogOptions, "sinceTime"> {
  readonly sinceTime?: string | undefined
  readonly follow: boolean
}

/** A pod's log, as plain text. */
export const log = (resource: Kind, namespace: string | undefined, name: string, options: LogQuery): Spec => ({
  method: "GET",
  path: Resource.objectPath(resource, namespace, name, "log"),
  query: {
    container: options.container,
    follow: options.follow ? true : undefined,
    tailLines: options.tailLines,
    sinceSeconds: options.sinceSeconds,
    sinceTime: options.sinceTime,
    timestamps: options.timestamps === true ? true : undefined,
    previous: options.previous === true ? true : undefined,
    limitBytes: options.limitBytes
  },
  accept: "text/plain, */*",
  operation: { verb: "logs", kind: resource.kind, namespace, name }
})

/** The discovery document of one group version: `/api/v1` or `/apis/<group>/<version>`. */
export const groupVersionPath = (apiVersion: string): string =>
  apiVersion.includes("/") ? `/apis/${apiVersion}` : `/api/${apiVersion}`

/** The kinds a group version serves (an APIResourceList). */
export const discovery = (apiVersion: string): Spec => ({
  method: "GET",
  path: groupVersionPath(apiVersion),
  operation: { verb: "discovery", kind: "APIResourceList", name: apiVersion }
})

/** `GET` of a subresource of one object (`status`, `scale`, `ephemeralcontainers`, `resize`). */
export const getSubresource = (
  resource: Kind,
  namespace: string | undefined,
  name: string,
  subresource: string,
  verb: SubresourceVerb
): Spec => ({
  method: "GET",
  path: Resource.objectPath(resource, namespace, name, subresource),
  operation: { verb, kind: resource.kind, namespace, name }
})

/** `PUT` of a subresource of one object (its encoded form: the object, or a Scale). */
export const replaceSubresource = (
  resource: Kind,
  namespace: string | undefined,
  name: string,
  subresource: string,
  body: unknown,
  options: Kube.WriteOptions,
  verb: SubresourceVerb
): Spec => ({
  method: "PUT",
  path: Resource.objectPath(resource, namespace, name, subresource),
  query: writeQuery(options),
  body: jsonBody(body),
  operation: { verb, kind: resource.kind, namespace, name }
})

/** `PATCH` of a subresource of one object, any patch kind (apply sends `force` as `patch` does). */
export const patchSubresource = (
  resource: Kind,
  namespace: string | undefined,
  name: string,
  subresource: string,
  thePatch: Patch.Patch,
  options: Kube.WriteOptions,
  verb: SubresourceVerb
): Spec => ({
  ...patch(resource, namespace, name, thePatch, options),
  path: Resource.objectPath(resource, namespace, name, subresource),
  operation: { verb, kind: resource.kind, namespace, name }
})

/** `POST` of a policy/v1 Eviction of a pod, with the delete options it deletes the pod with. */
export const evict = (
  resource: Kind,
  namespace: string | undefined,
  name: string,
  options: Kube.EvictOptions
): Spec => {
  const deleteOptions = options.deleteOptions === undefined ? undefined : deleteOptionsObject(options.deleteOptions)
  return {
    method: "POST",
    path: Resource.objectPath(resource, namespace, name, "eviction"),
    body: jsonBody({
      apiVersion: "policy/v1",
      kind: "Eviction",
      metadata: { name, ...(namespace !== undefined ? { namespace } : {}) },
      ...(deleteOptions !== undefined ? { deleteOptions } : {})
    }),
    operation: { verb: "evict", kind: resource.kind, namespace, name }
  }
}

/** `POST` of an authentication/v1 TokenRequest for a service account. */
export const createToken = (
  resource: Kind,
  namespace: string | undefined,
  name: string,
  options: Kube.TokenOptions
): Spec => ({
  method: "POST",
  path: Resource.objectPath(resource, namespace, name, "token"),
  body: jsonBody({
    apiVersion: "authentication.k8s.io/v1",
    kind: "TokenRequest",
    metadata: { name, ...(namespace !== undefined ? { namespace } : {}) },
    spec: {
      audiences: options.audiences ?? [],
      ...(options.expirationSeconds !== undefined ? { expirationSeconds: options.expirationSeconds } : {}),
      ...(options.boundObjectRef !== undefined ? { boundObjectRef: options.boundObjectRef } : {})
    }
  }),
  operation: { verb: "createToken", kind: resource.kind, namespace, name }
})

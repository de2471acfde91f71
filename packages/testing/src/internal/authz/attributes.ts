/**
 * What a request asks to do, as kube-apiserver's RequestInfoFactory reads it from the
 * method, path and query before authorizing: the verb (`get` becomes `list` or `watch`
 * without a name, `delete` becomes `deletecollection`), API group and version, resource,
 * subresource, namespace and name (a `metadata.name=` field selector names a list or a
 * watch). Paths outside `/api/...` and `/apis/<group>/...` are non-resource requests,
 * authorized by their path and the lowercase method.
 *
 * @internal
 */

/** A request against a resource. @internal */
export interface ResourceAttributes {
  readonly resourceRequest: true
  readonly verb: string
  readonly apiGroup: string
  readonly apiVersion: string
  readonly resource: string
  readonly subresource: string
  /** `""` for a cluster-scoped resource or a list across namespaces. */
  readonly namespace: string
  /** `""` when the request names no object. */
  readonly name: string
}

/** A request for a path that is no resource (discovery, health, version). @internal */
export interface NonResourceAttributes {
  readonly resourceRequest: false
  readonly verb: string
  readonly path: string
}

/** @internal */
export type Attributes = ResourceAttributes | NonResourceAttributes

const methodVerbs: Record<string, string> = {
  POST: "create",
  GET: "get",
  HEAD: "get",
  PUT: "update",
  PATCH: "patch",
  DELETE: "delete"
}

// the path segments after a namespace's name that are its own subresources, not a resource in it
const namespaceSubresources = new Set(["status", "finalize"])

// a Go ParseBool, as the API server reads `watch=`
const isTrue = (value: string | undefined): boolean =>
  value !== undefined && ["1", "t", "T", "true", "TRUE", "True"].includes(value)

/** The name a field selector requires exactly, as `RequiresExactMatch("metadata.name")`. */
const selectedName = (fieldSelector: string | undefined): string => {
  if (fieldSelector === undefined || fieldSelector === "") return ""
  for (const term of fieldSelector.split(",")) {
    const match = /^\s*metadata\.name\s*==?\s*(.*?)\s*$/.exec(term)
    if (match !== null && match[1] !== "" && !match[1]!.includes("/") && match[1] !== "." && match[1] !== "..") {
      return match[1]!
    }
  }
  return ""
}

/**
 * The attributes of a request. `websocketUpgrade` marks the GET of exec, attach or
 * port-forward, which the API server authorizes as `create` (since 1.31).
 *
 * @internal
 */
export const requestAttributes = (
  method: string,
  path: string,
  query: Readonly<Record<string, string>>
): Attributes => {
  const upper = method.toUpperCase()
  const nonResource: NonResourceAttributes = { resourceRequest: false, verb: upper.toLowerCase(), path }
  const parts = path.split("/").filter((s) => s !== "").map((s) => {
    try {
      return decodeURIComponent(s)
    } catch {
      return s
    }
  })
  const prefix = parts[0]
  let rest: Array<string>
  let apiGroup = ""
  if (prefix === "api" && parts.length >= 3) {
    rest = parts.slice(1)
  } else if (prefix === "apis" && parts.length >= 4) {
    apiGroup = parts[1]!
    rest = parts.slice(2)
  } else {
    return nonResource
  }
  const apiVersion = rest[0]!
  let current = rest.slice(1)
  let verb = methodVerbs[upper] ?? upper.toLowerCase()
  if (current[0] === "watch") {
    // the deprecated /watch/ prefix: GET only
    if (verb === "get") verb = "watch"
    current = current.slice(1)
    if (current.length === 0) return nonResource
  }
  let namespace = ""
  if (current[0] === "namespaces") {
    if (current.length > 1) {
      namespace = current[1]!
      if (current.length > 2 && !namespaceSubresources.has(current[2]!)) current = current.slice(2)
    }
  }
  const resource = current[0] ?? ""
  const name = current[1] ?? ""
  const subresource = current.length >= 3 ? current[2]! : ""
  let finalName = name
  if (name === "" && verb === "get") {
    verb = isTrue(query.watch) ? "watch" : "list"
    finalName = selectedName(query.fieldSelector)
  } else if (name === "" && verb === "watch") {
    finalName = selectedName(query.fieldSelector)
  }
  if (name === "" && verb === "delete") verb = "deletecollection"
  // exec, attach and port-forward over a WebSocket are a GET the API server authorizes as create
  if (
    apiGroup === "" && resource === "pods" &&
    (subresource === "exec" || subresource === "attach" || subresource === "portforward")
  ) verb = "create"
  return { resourceRequest: true, verb, apiGroup, apiVersion, resource, subresource, namespace, name: finalName }
}

/** `pods` or `pods/log`: the resource as RBAC rules name it. @internal */
export const combinedResource = (a: ResourceAttributes): string =>
  a.subresource === "" ? a.resource : `${a.resource}/${a.subresource}`

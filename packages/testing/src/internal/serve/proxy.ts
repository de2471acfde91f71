/**
 * The `proxy` subresource of pods, services and nodes
 * (`/api/v1/namespaces/<ns>/pods/[scheme:]<name>[:port]/proxy/<path>`): the object must
 * exist (404 as the API server answers), then the request goes to `Options.proxy`, which
 * answers for the target. Without one, the answer is the API server's when nothing
 * listens: for a service, 404 without its Endpoints and 503 `no endpoints available for
 * service` with them; for a pod or a node the error of a refused dial.
 *
 * @internal
 */
import { keyOf } from "../store/store.js"
import type { FakeState } from "../store/state.js"
import type { FakeObject } from "../types.js"
import type { RawRequest, RawResponse } from "./http.js"
import * as Status from "./statusBodies.js"

const proxied = new Set(["pods", "services", "nodes"])

/** A proxy path taken apart, or undefined when the path is not one. @internal */
export interface ProxyRoute {
  readonly plural: "pods" | "services" | "nodes"
  readonly namespace: string | undefined
  readonly name: string
  readonly scheme: string | undefined
  readonly port: string | undefined
  readonly path: string
}

/** Takes a core path below the version apart (`namespaces/ns/pods/web:8080/proxy/a/b`). @internal */
export const proxyRoute = (rest: ReadonlyArray<string>, trailingSlash: boolean): ProxyRoute | undefined => {
  let segs = rest
  let namespace: string | undefined
  if (segs[0] === "namespaces" && segs.length >= 4) {
    namespace = segs[1]
    segs = segs.slice(2)
  }
  if (segs.length < 3 || !proxied.has(segs[0]!) || segs[2] !== "proxy") return undefined
  const plural = segs[0] as ProxyRoute["plural"]
  if ((plural === "nodes") !== (namespace === undefined)) return undefined
  // [scheme:]name[:port], as the API server splits it
  const parts = segs[1]!.split(":")
  const [scheme, name, port] = parts.length === 3
    ? [parts[0], parts[1]!, parts[2]]
    : parts.length === 2
    ? [undefined, parts[0]!, parts[1]]
    : [undefined, parts[0]!, undefined]
  const below = segs.slice(3).join("/")
  const path = `/${below}${trailingSlash && below !== "" ? "/" : ""}`
  return { plural, namespace, name, scheme: scheme === "" ? undefined : scheme, port: port === "" ? undefined : port, path }
}

/** @internal */
export const serve = async (
  state: FakeState,
  version: string,
  route: ProxyRoute,
  method: string,
  query: string,
  request: RawRequest
): Promise<RawResponse> => {
  const kind = state.registry.byResource("", version, route.plural)
  if (kind === undefined) throw Status.pathNotFound()
  const entry = state.entryOf({
    kind,
    version,
    namespace: route.namespace,
    name: route.name,
    subresource: "proxy",
    watchPath: false
  })
  const handler = state.options.proxy
  if (handler === undefined) {
    if (route.plural === "services") {
      // the API server finds a service's address in its Endpoints: without them it reports the service not found
      const endpoints = state.registry.byResource("", "v1", "endpoints")
      const found = endpoints !== undefined &&
        state.collectionOf(endpoints).entries.get(keyOf(route.namespace ?? "", route.name)) !== undefined
      if (!found) throw Status.notFound(kind, route.name)
      const segment = [route.scheme, route.name, route.port].filter((p) => p !== undefined).join(":")
      throw new Status.StatusError(503, "ServiceUnavailable", `no endpoints available for service "${segment}"`)
    }
    throw new Status.StatusError(
        503,
        "ServiceUnavailable",
        `error trying to reach service: dial tcp ${route.port ?? "80"}: connect: connection refused`
      )
  }
  const answer = await handler({
    resource: route.plural,
    object: entry.obj as unknown as FakeObject,
    scheme: route.scheme,
    port: route.port,
    method,
    path: route.path,
    query,
    header: request.header,
    body: method === "GET" || method === "HEAD" ? "" : await request.text()
  })
  return {
    status: answer.status ?? 200,
    headers: { "content-type": "text/plain; charset=utf-8", ...answer.headers },
    body: answer.body ?? ""
  }
}

/**
 * Routing: a request's way to its handler. Authentication, the request log and
 * injected faults first; then discovery and health paths, and resource paths taken
 * apart (group, version, namespace, kind, name, subresource, watch) and sent by verb
 * to reads, writes, deletes or subresources. A thrown Status becomes the answer.
 *
 * @internal
 */
import * as Authz from "../authz/index.js"
import * as Deletes from "../writes/deletes.js"
import * as Exec from "../kubelet/exec.js"
import * as Discovery from "../discovery/documents.js"
import * as OpenApi from "../discovery/openapi.js"
import * as PodSubresources from "../writes/podSubresources.js"
import { withFault } from "./faults.js"
import { firstValues, isTrue, json, mediaType, type RawRequest, type RawResponse, statusResponse } from "./http.js"
import * as Protobuf from "../protocols/protobuf/decode.js"
import * as Reads from "../reads/reads.js"
import type { FakeState, Route } from "../store/state.js"
import * as Status from "./statusBodies.js"
import * as Subresources from "../writes/subresources.js"
import { checkPartial, negotiate, negotiateDiscovery, type Target } from "./negotiate.js"
import { asPartial, partialEvent } from "../reads/partial.js"
import * as Proxy from "./proxy.js"
import * as Tables from "../tables/index.js"
import { authenticates } from "./tokens.js"
import { isReview, review } from "../writes/reviews.js"
import { processRequest } from "../writes/processedTemplates.js"
import * as Writes from "../writes/writes.js"

/** Answers one request. @internal */
export const handleRaw = async (state: FakeState, request: RawRequest): Promise<RawResponse> => {
  const url = new URL(request.url, "http://fake")
  const path = url.pathname
  const query = firstValues(url.searchParams)
  const method = request.method.toUpperCase()
  state.record({
    method,
    path,
    query,
    contentType: request.header("content-type"),
    userAgent: request.header("user-agent"),
    acceptEncoding: request.header("accept-encoding")
  })
  const publicPath = path === "/version" || path === "/healthz" || path === "/livez" || path === "/readyz"
  if (!publicPath && !authenticates(state, request.header("authorization"))) {
    return statusResponse(Status.unauthorized())
  }
  const requester = publicPath ? undefined : Authz.authorizeRequest(state, method, path, query, request.header)
  if (requester instanceof Status.StatusError) return statusResponse(requester)
  return withFault(state.faults.take(method, path, query), request, async () => {
    try {
      return await dispatch(state, method, path, query, await withJsonBody(request), requester)
    } catch (e) {
      return e instanceof Status.StatusError
        ? statusResponse(e)
        : statusResponse(Status.internalError(e instanceof Error ? e.message : String(e)))
    }
  })
}

/**
 * A protobuf body (what kubectl's typed commands send since 1.32) as the JSON body it
 * encodes, so that every handler reads JSON; answers stay JSON, which such clients accept.
 */
const withJsonBody = async (request: RawRequest): Promise<RawRequest> => {
  if (request.bytes === undefined || mediaType(request.header("content-type")) !== Protobuf.mediaType) return request
  const text = JSON.stringify(Protobuf.decode(await request.bytes()))
  return {
    ...request,
    header: (name) => (name.toLowerCase() === "content-type" ? "application/json" : request.header(name)),
    text: () => Promise.resolve(text)
  }
}

const dispatch = async (
  state: FakeState,
  method: string,
  path: string,
  query: Record<string, string>,
  request: RawRequest,
  requester: Authz.Requester | undefined
): Promise<RawResponse> => {
  let segments: Array<string>
  try {
    // most segments hold no escape, and decoding one that holds none costs more than looking
    segments = path.split("/").filter((s) => s !== "").map((s) => (s.includes("%") ? decodeURIComponent(s) : s))
  } catch {
    throw Status.badRequest(`invalid escape in the path ${JSON.stringify(path)}`)
  }
  if (segments.length === 0) return json(200, { paths: ["/api", "/api/v1", "/apis", "/version", "/healthz"] })
  const head = segments[0]!
  if (segments.length === 1 && (head === "healthz" || head === "livez" || head === "readyz")) {
    return { status: 200, headers: { "content-type": "text/plain; charset=utf-8" }, body: "ok" }
  }
  if (head === "version" && segments.length === 1) return json(200, Discovery.version)
  if (head === "api") {
    if (segments.length === 1) {
      return discoveryRoot(state, request, true, () => Discovery.apiVersions(request.header("host") ?? "127.0.0.1"))
    }
    if (Exec.isStreamPath(path)) return streamWithoutUpgrade(state, method, request)
    return dispatchGroup(state, "", segments[1]!, segments.slice(2), method, query, request, requester)
  }
  if (head === "apis") {
    if (segments.length === 1) return discoveryRoot(state, request, false, () => Discovery.apiGroupList(state.registry.all()))
    if (segments.length === 2) {
      const group = Discovery.apiGroup(state.registry.all(), segments[1]!)
      if (group === undefined) throw Status.pathNotFound()
      return json(200, group)
    }
    return dispatchGroup(state, segments[1]!, segments[2]!, segments.slice(3), method, query, request, requester)
  }
  if (head === "openapi" && segments[1] === "v2" && segments.length === 2) return openApiV2(state, request)
  if (head === "openapi" && segments[1] === "v3") {
    const kinds = state.registry.all()
    if (segments.length === 2) {
      // kube-apiserver writes the index without a Content-Type, so Go's sniffing names it plain text
      const index = json(200, Discovery.openApiV3Index(kinds, (g, v) => OpenApi.v3Hash(state, g, v)))
      return { ...index, headers: { ...index.headers, "content-type": "text/plain; charset=utf-8" } }
    }
    const rest = segments.slice(2)
    const gv = rest[0] === "api" && rest.length === 2
      ? { group: "", version: rest[1]! }
      : rest[0] === "apis" && rest.length === 3
      ? { group: rest[1]!, version: rest[2]! }
      : undefined
    const doc = gv === undefined
      ? undefined
      : Discovery.openApiV3(
        kinds,
        gv.group,
        gv.version,
        () => OpenApi.v3Schemas(state, gv.group, gv.version),
        OpenApi.v3Info(state, gv.group, gv.version)
      )
    if (doc !== undefined) return json(200, doc)
  }
  return pageNotFound()
}

/** The 404 of a path no handler serves: Go's mux's plain text. */
const pageNotFound = (): RawResponse => ({
  status: 404,
  headers: { "content-type": "text/plain; charset=utf-8" },
  body: "404 page not found\n"
})

const plain: Target = { _tag: "Json" }

/**
 * `/openapi/v2` in JSON. kube-apiserver also serves it as protobuf (what client-go asks for first); the fake
 * does not, so an Accept naming only protobuf (or nothing JSON) is answered 406 with an empty body, as
 * kube-apiserver answers a type it does not serve.
 */
const openApiV2 = (state: FakeState, request: RawRequest): RawResponse => {
  const accept = request.header("accept")
  const acceptsJson = accept === undefined || accept.trim() === "" || accept.split(",").some((part) => {
    const type = part.split(";")[0]!.trim().toLowerCase()
    return type === "application/json" || type === "*/*" || type === "application/*"
  })
  if (!acceptsJson) return { status: 406, headers: { vary: "Accept" }, body: "" }
  const body = JSON.stringify(OpenApi.v2(state))
  return {
    status: 200,
    headers: { "content-type": "application/json", etag: `"${OpenApi.etag(body)}"`, vary: "Accept" },
    body
  }
}

/** `/api` or `/apis`: aggregated (one document with every resource) when asked for and served, else the legacy index. */
const discoveryRoot = (
  state: FakeState,
  request: RawRequest,
  core: boolean,
  legacy: () => Record<string, unknown>
): RawResponse => {
  const form = negotiateDiscovery(request.header("accept"), state.options.features?.aggregatedDiscovery !== false)
  if (form === "legacy") return json(200, legacy())
  return {
    status: 200,
    headers: { "content-type": Discovery.aggregatedMediaType, vary: "Accept" },
    body: JSON.stringify(Discovery.aggregatedDiscovery(state.registry.all(), core))
  }
}

/**
 * exec, attach or port-forward without an upgrade: the same checks as the upgrade's
 * (a missing pod is still 404), then 400 `Upgrade request required`.
 */
const streamWithoutUpgrade = async (state: FakeState, method: string, request: RawRequest): Promise<RawResponse> => {
  if (method !== "GET" && method !== "POST") throw Status.methodNotAllowed()
  const decision = await Exec.decide(state, state.options, request, "none", true)
  if (decision._tag !== "Refuse") throw Status.badRequest("Upgrade request required")
  return { status: decision.status, headers: { "content-type": decision.contentType }, body: decision.body }
}

const dispatchGroup = (
  state: FakeState,
  group: string,
  version: string,
  rest: ReadonlyArray<string>,
  method: string,
  query: Record<string, string>,
  request: RawRequest,
  requester: Authz.Requester | undefined
): Promise<RawResponse> | RawResponse => {
  // a group no built-in kind is in is kube-apiserver's CRD handler's: what it does not serve there (a version not
  // served, a resource not defined, a group no CRD defines) falls through to the plain-text 404 of the mux
  const builtIn = group === "" || state.registry.all().some((k) => k.group === group && !k.custom)
  if (rest.length === 0) {
    const doc = Discovery.apiResourceList(state.registry.all(), group, version)
    if (doc === undefined) {
      if (!builtIn) return pageNotFound()
      throw Status.pathNotFound()
    }
    return json(200, doc)
  }
  const proxied = group === "" ? Proxy.proxyRoute(rest, request.url.split("?")[0]!.endsWith("/")) : undefined
  if (proxied !== undefined) {
    return Proxy.serve(state, version, proxied, method, new URLSearchParams(query).toString(), request)
  }
  let route: Route
  try {
    route = parseRoute(state, group, version, rest, requester)
  } catch (e) {
    if (!builtIn && e instanceof Status.StatusError && e.code === 404 && e.details?.name === undefined) return pageNotFound()
    throw e
  }
  const deprecation = deprecationOf(route)
  if (deprecation === undefined) return dispatchRoute(state, route, method, query, request)
  // kube-apiserver warns of a deprecated API on every request to it, answered or refused
  const warn = (response: RawResponse): RawResponse => ({
    ...response,
    headers: {
      ...response.headers,
      warning: response.headers.warning === undefined ? deprecation : `${deprecation}, ${response.headers.warning}`
    }
  })
  const refuse = (e: unknown): never => {
    if (e instanceof Status.StatusError) {
      throw new Status.StatusError(e.code, e.reason, e.message, e.details, { ...e.headers, warning: deprecation }, e.metadata)
    }
    throw e
  }
  try {
    const answer = dispatchRoute(state, route, method, query, request)
    return answer instanceof Promise ? answer.then(warn, refuse) : warn(answer)
  } catch (e) {
    return refuse(e)
  }
}

/** The Warning kube-apiserver v1.35 sends with every request to a deprecated API. */
const deprecationOf = (route: Route): string | undefined =>
  route.kind.group === "" && route.kind.kind === "Endpoints"
    ? `299 - "v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice"`
    : undefined

const dispatchRoute = (
  state: FakeState,
  route: Route,
  method: string,
  query: Record<string, string>,
  request: RawRequest
): Promise<RawResponse> | RawResponse => {
  // processing a template reads nothing and stores nothing
  if (method !== "GET" && method !== "HEAD" && route.kind.plural !== "processedtemplates") state.mutationCount++
  // subresources (status, scale, logs) answer in their own form
  const target: Target = route.subresource === undefined ? negotiate(request.header("accept"), route.kind) : plain
  if (target._tag === "Json") return serveResource(state, route, method, query, request, undefined)
  const table = target._tag === "Table" ? Tables.tableRequest(target.version, query) : undefined
  // a watch rewrites each event; a list of PartialObjectMetadataList per event is refused
  // by the API server's transform, which then sends the events as they are
  const events = table !== undefined
    ? Tables.tableEvents(state, route.kind, route.version, table, () => state.clock.now())
    : target._tag === "Partial" && target.form === "object"
    ? partialEvent
    : undefined
  return Promise.resolve(serveResource(state, route, method, query, request, events)).then((response) =>
    transformAnswer(state, route, response, target, table)
  )
}

/** A one-shot JSON answer in the form negotiated; Status answers and streams are left as they are. */
const transformAnswer = (
  state: FakeState,
  route: Route,
  response: RawResponse,
  target: Target,
  table: Tables.TableRequest | undefined
): RawResponse => {
  if (typeof response.body !== "string" || response.status >= 300) return response
  const body = JSON.parse(response.body) as Record<string, unknown>
  if (body.kind === "Status") return response
  if (table !== undefined) {
    return { ...response, body: Tables.table(state, route.kind, route.version, body, table, state.clock.now()) }
  }
  if (target._tag !== "Partial") return response
  checkPartial(route.kind, target.form, body)
  return asPartial(response, target.form)
}

const parseRoute = (
  state: FakeState,
  group: string,
  version: string,
  rest: ReadonlyArray<string>,
  requester: Authz.Requester | undefined
): Route => {
  let segs = rest
  let watchPath = false
  if (segs[0] === "watch") {
    watchPath = true
    segs = segs.slice(1)
  }
  let namespace: string | undefined
  if (
    segs[0] === "namespaces" && segs.length >= 3 &&
    !(group === "" && segs.length === 3 && (segs[2] === "status" || segs[2] === "finalize"))
  ) {
    namespace = segs[1]
    segs = segs.slice(2)
  }
  if (segs.length > 3) throw Status.pathNotFound()
  const kind = state.registry.byResource(group, version, segs[0]!)
  if (kind === undefined) throw Status.pathNotFound()
  if (!kind.namespaced && namespace !== undefined) throw Status.pathNotFound()
  const name = segs[1]
  if (kind.namespaced && namespace === undefined && name !== undefined) throw Status.pathNotFound()
  const subresource = segs[2]
  if (subresource !== undefined && !kind.subresources.includes(subresource)) throw Status.pathNotFound()
  return { kind, version, namespace, name, subresource, watchPath, requester }
}

/** The options kind whose query a method carries, as kube-apiserver names it in a 422. */
const optionsKinds: Readonly<Record<string, string>> = {
  GET: "ListOptions", POST: "CreateOptions", PUT: "UpdateOptions", PATCH: "PatchOptions", DELETE: "DeleteOptions"
}

const optionsInvalid = (method: string, reason: string, field: string, message: string): Status.StatusError => {
  const kind = optionsKinds[method] ?? "ListOptions"
  return Status.invalid({ group: "meta.k8s.io", plural: kind.toLowerCase(), kind }, "", [{ reason, field, message }])
}

/**
 * The query options kube-apiserver validates before it reads or writes anything: `dryRun` takes only `All`, and a
 * list's `resourceVersionMatch` needs a `resourceVersion` (a watch-list's `sendInitialEvents` excepted).
 */
const checkOptions = (method: string, query: Record<string, string>, collection: boolean): void => {
  const dryRun = query.dryRun
  if (method !== "GET" && dryRun !== undefined && dryRun !== "" && dryRun !== "All") {
    throw optionsInvalid(method, "FieldValueNotSupported", "dryRun", `Unsupported value: ["${dryRun}"]: supported values: "All"`)
  }
  if (
    method === "GET" && collection && query.resourceVersionMatch !== undefined && query.resourceVersionMatch !== "" &&
    query.sendInitialEvents === undefined && (query.resourceVersion ?? "") === ""
  ) {
    throw optionsInvalid(
      method, "FieldValueForbidden", "resourceVersionMatch",
      "Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided"
    )
  }
}

const serveResource = (
  state: FakeState,
  route: Route,
  method: string,
  query: Record<string, string>,
  request: RawRequest,
  events: ((line: string) => string) | undefined
): Promise<RawResponse> | RawResponse => {
  const { kind, name, subresource } = route
  checkOptions(method, query, name === undefined)
  const allowed = (verb: string) => {
    if (!kind.verbs.includes(verb)) throw Status.methodNotAllowed()
  }
  if (name === undefined) {
    switch (method) {
      case "GET":
        if (route.watchPath || isTrue(query.watch)) {
          allowed("watch")
          return Reads.watch(state, route, query, events)
        }
        allowed("list")
        return Reads.list(state, route, query)
      case "POST":
        allowed("create")
        // processing a template reads nothing and stores nothing
        if (route.kind.plural === "processedtemplates") return processRequest(request)
        // a review is answered, not stored
        if (isReview(kind.group, kind.plural)) return review(kind.plural, route.namespace, state.token, request, state, route.requester)
        return Writes.create(state, route, query, request)
      case "DELETE":
        allowed("deletecollection")
        return Deletes.deleteCollection(state, route, query, request)
      default:
        throw Status.methodNotAllowed()
    }
  }
  if (route.watchPath) {
    allowed("watch")
    const fieldSelector = Reads.joinSelector(query.fieldSelector, `metadata.name=${name}`)
    return Reads.watch(state, route, { ...query, fieldSelector }, events)
  }
  if (subresource === "log") {
    if (method !== "GET") throw Status.methodNotAllowed()
    return Subresources.podLog(state, route, query)
  }
  if (subresource === "scale") return Subresources.scale(state, route, method, query, request)
  if (subresource === "eviction" || subresource === "token") {
    if (method !== "POST") throw Status.methodNotAllowed()
    return subresource === "token"
      ? PodSubresources.token(state, route, request, Writes.fieldManagerOf(query, request))
      : PodSubresources.evict(state, route, request, (options) => Deletes.deleteWithOptions(state, route, options))
  }
  switch (method) {
    case "GET":
      allowed("get")
      return Reads.get(state, route)
    case "PUT":
      allowed("update")
      return Writes.replace(state, route, query, request)
    case "PATCH":
      allowed("patch")
      return Writes.patch(state, route, query, request)
    case "DELETE":
      allowed("delete")
      return Deletes.deleteOne(state, route, query, request)
    default:
      throw Status.methodNotAllowed()
  }
}


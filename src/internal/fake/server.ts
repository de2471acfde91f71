/**
 * The fake Kubernetes API server: an in-memory store behind a request handler that
 * speaks the API server's HTTP protocol (paths, verbs, content types, Status bodies,
 * watch streams, pod logs, discovery), plus the controls tests use to seed state,
 * drive pods and jobs, and inject faults.
 *
 * Transport-free: `handleRaw` takes a parsed request and returns status, headers and
 * a string or streaming body. The web adapter (`handle`) and the `node:http` adapter
 * (`node.ts`) wrap it.
 *
 * @internal
 */
import * as YAML from "yaml"
import type {
  Control,
  ObjectRef,
  Options as ServerOptions,
  RequestMatch,
  RequestRecord,
  SimulateOptions
} from "../../testing/FakeCluster.js"
import * as Discovery from "./discovery.js"
import { child, clone, deepEqual, drop, isObject, type JsonObject, now, randomSuffix, stringAt } from "./json.js"
import {
  apiVersionOf,
  builtinKinds,
  customKind,
  type KindInfo,
  Registry,
  splitApiVersion
} from "./kinds.js"
import { ContainerLog, LogFollower, type ReadOptions } from "./logs.js"
import * as Managed from "./managed.js"
import { jsonPatch, mergePatch, PatchError, strategicMerge } from "./patch.js"
import { type Matcher, parseFieldSelector, parseLabelSelector } from "./selectors.js"
import * as MicroTime from "./microtime.js"
import * as Status from "./status.js"
import { type Collection, Entry, keyOf, Store } from "./store.js"
import { cutAfter, fromString, type Sink, type StreamBody } from "./stream.js"
import { processTemplate } from "./template.js"
import { ActiveWatch, type WatchHub } from "./watch.js"

// The control surface is declared, with its documentation, by the public module.
export type { Control, ObjectRef, RequestMatch, RequestRecord, ServerOptions, SimulateOptions }

// ---------------------------------------------------------------------------
// Public shapes (re-exported by src/testing/FakeCluster.ts)
// ---------------------------------------------------------------------------

/** @internal */
export interface FakeObject {
  readonly apiVersion: string
  readonly kind: string
  readonly metadata: {
    readonly name: string
    readonly namespace?: string | undefined
    readonly uid: string
    readonly resourceVersion: string
    readonly generation?: number | undefined
    readonly creationTimestamp: string
    readonly labels?: { readonly [key: string]: string } | undefined
    readonly annotations?: { readonly [key: string]: string } | undefined
    readonly [key: string]: unknown
  }
  readonly [key: string]: unknown
}

// ---------------------------------------------------------------------------
// Transport-free request and response
// ---------------------------------------------------------------------------

/** @internal */
export interface RawRequest {
  readonly method: string
  /** Path and query, e.g. `/api/v1/pods?limit=5`. */
  readonly url: string
  readonly header: (name: string) => string | undefined
  readonly text: () => Promise<string>
  readonly signal?: AbortSignal | undefined
}

/** @internal */
export interface RawResponse {
  readonly status: number
  readonly headers: Record<string, string>
  readonly body: string | StreamBody | undefined
  /** Fault injection: reset the connection after this many body bytes (`undefined`: before the answer). */
  readonly reset?: { readonly afterBytes: number | undefined } | undefined
}

/** Thrown (layer) or acted on (serve) when the fake resets a connection. @internal */
export class ConnectionReset extends Error {
  constructor() {
    super("connection reset by the fake cluster (injected fault)")
    this.name = "ConnectionReset"
  }
}

interface Fault {
  readonly kind: "fail" | "reset" | "delay" | "stall"
  remaining: number
  readonly match: RequestMatch | undefined
  readonly status?: Status.StatusError
  readonly afterBytes?: number | undefined
  readonly ms?: number
}

const jsonHeaders = { "content-type": "application/json" }

const json = (status: number, body: unknown): RawResponse => ({
  status,
  headers: jsonHeaders,
  body: typeof body === "string" ? body : JSON.stringify(body)
})

const statusResponse = (error: Status.StatusError): RawResponse => ({
  status: error.code,
  headers: { ...jsonHeaders, ...error.headers },
  body: JSON.stringify(error.body())
})

const PATCH_TYPES = [
  "application/json-patch+json",
  "application/merge-patch+json",
  "application/strategic-merge-patch+json",
  "application/apply-patch+yaml"
]

const dns1123Label = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/
const dns1123Subdomain = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/

const nameProblem = (rule: KindInfo["nameRule"], name: string): string | undefined => {
  if (rule === "path") {
    if (name === "." || name === ".." || name.includes("/") || name.includes("%")) {
      return `may not contain '/' or '%' and may not be '.' or '..'`
    }
    return undefined
  }
  if (rule === "label") {
    if (name.length > 63) return "must be no more than 63 characters"
    if (!dns1123Label.test(name)) {
      return `a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`
    }
    return undefined
  }
  if (name.length > 253) return "must be no more than 253 characters"
  if (!dns1123Subdomain.test(name)) {
    return `a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`
  }
  return undefined
}

/** Fields outside metadata and status: a change to them bumps `generation`. */
const specChanged = (a: JsonObject, b: JsonObject): boolean => {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)])
  for (const k of keys) {
    if (k === "metadata" || k === "status" || k === "apiVersion" || k === "kind") continue
    if (!deepEqual(a[k], b[k])) return true
  }
  return false
}

const firstValues = (params: URLSearchParams): Record<string, string> => {
  const out: Record<string, string> = {}
  for (const [k, v] of params) if (!(k in out)) out[k] = v
  return out
}

const isTrue = (v: string | undefined): boolean => v === "true" || v === "1"

const mediaType = (contentType: string | undefined): string =>
  (contentType ?? "").split(";")[0]!.trim().toLowerCase()

const encodeContinue = (rv: number, lastKey: string): string =>
  Buffer.from(JSON.stringify({ v: "meta.k8s.io/v1", rv, start: `${lastKey}\u0000` })).toString("base64")

const decodeContinue = (token: string): { readonly rv: number; readonly after: string } => {
  try {
    const decoded = JSON.parse(Buffer.from(token, "base64").toString("utf8")) as JsonObject
    if (decoded.v !== "meta.k8s.io/v1" || typeof decoded.rv !== "number" || typeof decoded.start !== "string") {
      throw new Error("unknown token")
    }
    return { rv: decoded.rv, after: decoded.start.replace(/\u0000$/, "") }
  } catch (e) {
    throw Status.badRequest(`continue key is not valid: ${(e as Error).message}`)
  }
}

const managerFromUserAgent = (userAgent: string | undefined): string => {
  const prefix = (userAgent ?? "").split("/")[0]!.trim()
  return prefix === "" ? "unknown" : prefix.slice(0, 128)
}

const readBody = async (request: RawRequest): Promise<unknown> => {
  const text = await request.text()
  if (text.trim() === "") return undefined
  const type = mediaType(request.header("content-type"))
  if (type === "application/yaml" || type === "application/apply-patch+yaml") {
    try {
      return YAML.parse(text)
    } catch (e) {
      throw Status.badRequest(`error decoding YAML: ${(e as Error).message}`)
    }
  }
  try {
    return JSON.parse(text)
  } catch (e) {
    throw Status.badRequest(`couldn't get version/kind; json parse error: ${(e as Error).message}`)
  }
}

interface Route {
  readonly kind: KindInfo
  readonly version: string
  readonly namespace: string | undefined
  readonly name: string | undefined
  readonly subresource: string | undefined
  readonly watchPath: boolean
}

// ---------------------------------------------------------------------------
// The server
// ---------------------------------------------------------------------------

/** @internal */
export class FakeServer {
  readonly registry = new Registry([...builtinKinds, ...MicroTime.kinds])
  readonly store: Store
  readonly defaultNamespace: string
  private token: string | undefined
  private readonly hub: WatchHub
  private readonly logs = new Map<string, Map<string, ContainerLog>>()
  private readonly logStreams = new Set<LogFollower>()
  private requestLog: Array<RequestRecord> = []
  private mutationCount = 0
  private faults: Array<Fault> = []
  private readonly timers = new Set<ReturnType<typeof setTimeout>>()
  private bookmarkTimer: ReturnType<typeof setInterval> | undefined
  private readonly simulate:
    | { readonly podStartMs: number; readonly podRunMs: number; readonly completePods: boolean }
    | undefined
  private readonly maxRequestLog: number
  private podIps = 0
  private closed = false
  readonly control: Control

  constructor(readonly options: ServerOptions = {}) {
    this.store = new Store(options.compactionWindow ?? 1000)
    this.hub = { store: this.store, open: new Set(), dropAfter: undefined }
    this.defaultNamespace = options.namespace ?? "default"
    this.token = options.token
    this.maxRequestLog = options.maxRequestLog ?? 100_000
    const sim = options.simulate
    this.simulate = sim === undefined || sim === false
      ? undefined
      : {
        podStartMs: (sim === true ? undefined : sim.podStartMs) ?? 50,
        podRunMs: (sim === true ? undefined : sim.podRunMs) ?? 150,
        completePods: (sim === true ? undefined : sim.completePods) ?? true
      }
    for (const r of options.resources ?? []) this.registry.add(customKind(r))
    const namespaces = new Set(["default", "kube-system", "kube-public", "kube-node-lease", this.defaultNamespace])
    for (const ns of options.namespaces ?? []) namespaces.add(ns)
    for (const ns of namespaces) this.ensureNamespace(ns)
    const interval = options.bookmarkIntervalMs ?? 60_000
    if (interval > 0) {
      this.bookmarkTimer = setInterval(() => this.sendBookmarks(), interval)
      this.bookmarkTimer.unref?.()
    }
    this.control = this.makeControl()
    if (options.objects !== undefined) this.control.seed(options.objects)
  }

  /** Stops timers and ends every open watch and log stream. */
  close(): void {
    if (this.closed) return
    this.closed = true
    if (this.bookmarkTimer !== undefined) clearInterval(this.bookmarkTimer)
    for (const t of this.timers) clearTimeout(t)
    this.timers.clear()
    for (const w of [...this.hub.open]) w.end()
    for (const f of [...this.logStreams]) f.finish()
  }

  // -------------------------------------------------------------------------
  // Web adapter
  // -------------------------------------------------------------------------

  /** Answers a web `Request`. A reset fault rejects (before the answer) or errors the body. */
  async handle(request: Request): Promise<Response> {
    const url = new URL(request.url)
    const raw = await this.handleRaw({
      method: request.method,
      url: url.pathname + url.search,
      header: (name) => request.headers.get(name) ?? undefined,
      text: () => request.text(),
      signal: request.signal
    })
    return toWebResponse(raw, request.signal)
  }

  // -------------------------------------------------------------------------
  // Dispatch
  // -------------------------------------------------------------------------

  async handleRaw(request: RawRequest): Promise<RawResponse> {
    const url = new URL(request.url, "http://fake")
    const path = url.pathname
    const query = firstValues(url.searchParams)
    const method = request.method.toUpperCase()
    this.record({
      method,
      path,
      query,
      contentType: request.header("content-type"),
      userAgent: request.header("user-agent")
    })
    const publicPath = path === "/version" || path === "/healthz" || path === "/livez" || path === "/readyz"
    if (this.token !== undefined && !publicPath && request.header("authorization") !== `Bearer ${this.token}`) {
      return statusResponse(Status.unauthorized())
    }
    const fault = this.takeFault(method, path, query)
    if (fault?.kind === "fail") return statusResponse(fault.status!)
    if (fault?.kind === "stall") {
      await waitForAbort(request.signal)
      throw new ConnectionReset()
    }
    let response: RawResponse
    try {
      response = await this.dispatch(method, path, query, request)
    } catch (e) {
      response = e instanceof Status.StatusError
        ? statusResponse(e)
        : statusResponse(Status.internalError(e instanceof Error ? e.message : String(e)))
    }
    if (fault?.kind === "delay") await sleep(fault.ms!, request.signal)
    if (fault?.kind === "reset") return { ...response, reset: { afterBytes: fault.afterBytes } }
    return response
  }

  private record(entry: RequestRecord): void {
    if (this.requestLog.length >= this.maxRequestLog) this.requestLog.shift()
    this.requestLog.push(entry)
  }

  private takeFault(method: string, path: string, query: Record<string, string>): Fault | undefined {
    for (let i = 0; i < this.faults.length; i++) {
      const f = this.faults[i]!
      if (f.match !== undefined && !f.match(method, path, query)) continue
      f.remaining--
      if (f.remaining <= 0) this.faults.splice(i, 1)
      return f
    }
    return undefined
  }

  private async dispatch(
    method: string,
    path: string,
    query: Record<string, string>,
    request: RawRequest
  ): Promise<RawResponse> {
    let segments: Array<string>
    try {
      segments = path.split("/").filter((s) => s !== "").map((s) => decodeURIComponent(s))
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
      if (segments.length === 1) return json(200, Discovery.apiVersions(request.header("host") ?? "127.0.0.1"))
      return this.dispatchGroup("", segments[1]!, segments.slice(2), method, query, request)
    }
    if (head === "apis") {
      if (segments.length === 1) return json(200, Discovery.apiGroupList(this.registry.all()))
      if (segments.length === 2) {
        const group = Discovery.apiGroup(this.registry.all(), segments[1]!)
        if (group === undefined) throw Status.pathNotFound()
        return json(200, group)
      }
      return this.dispatchGroup(segments[1]!, segments[2]!, segments.slice(3), method, query, request)
    }
    if (head === "openapi" && segments[1] === "v3") {
      if (segments.length === 2) return json(200, Discovery.openApiV3Index(this.registry.all()))
      const rest = segments.slice(2)
      const doc = rest[0] === "api" && rest.length === 2
        ? Discovery.openApiV3(this.registry.all(), "", rest[1]!)
        : rest[0] === "apis" && rest.length === 3
        ? Discovery.openApiV3(this.registry.all(), rest[1]!, rest[2]!)
        : undefined
      if (doc !== undefined) return json(200, doc)
    }
    return { status: 404, headers: { "content-type": "text/plain; charset=utf-8" }, body: "404 page not found\n" }
  }

  private dispatchGroup(
    group: string,
    version: string,
    rest: ReadonlyArray<string>,
    method: string,
    query: Record<string, string>,
    request: RawRequest
  ): Promise<RawResponse> | RawResponse {
    if (rest.length === 0) {
      const doc = Discovery.apiResourceList(this.registry.all(), group, version)
      if (doc === undefined) throw Status.pathNotFound()
      return json(200, doc)
    }
    const route = this.route(group, version, rest)
    // processing a template reads nothing and stores nothing
    if (method !== "GET" && method !== "HEAD" && route.kind.plural !== "processedtemplates") this.mutationCount++
    return this.serve(route, method, query, request)
  }

  private route(group: string, version: string, rest: ReadonlyArray<string>): Route {
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
    const kind = this.registry.byResource(group, version, segs[0]!)
    if (kind === undefined) throw Status.pathNotFound()
    if (!kind.namespaced && namespace !== undefined) throw Status.pathNotFound()
    const name = segs[1]
    if (kind.namespaced && namespace === undefined && name !== undefined) throw Status.pathNotFound()
    const subresource = segs[2]
    if (subresource !== undefined && !kind.subresources.includes(subresource)) throw Status.pathNotFound()
    return { kind, version, namespace, name, subresource, watchPath }
  }

  private serve(
    route: Route,
    method: string,
    query: Record<string, string>,
    request: RawRequest
  ): Promise<RawResponse> | RawResponse {
    const { kind, name, subresource } = route
    const allowed = (verb: string) => {
      if (!kind.verbs.includes(verb)) throw Status.methodNotAllowed()
    }
    if (name === undefined) {
      switch (method) {
        case "GET":
          if (route.watchPath || isTrue(query.watch)) {
            allowed("watch")
            return this.watch(route, query)
          }
          allowed("list")
          return this.list(route, query, request.header("accept"))
        case "POST":
          allowed("create")
          return this.create(route, query, request)
        case "DELETE":
          allowed("deletecollection")
          return this.deleteCollection(route, query, request)
        default:
          throw Status.methodNotAllowed()
      }
    }
    if (route.watchPath) {
      allowed("watch")
      return this.watch(route, { ...query, fieldSelector: joinSelector(query.fieldSelector, `metadata.name=${name}`) })
    }
    if (subresource === "log") {
      if (method !== "GET") throw Status.methodNotAllowed()
      return this.podLog(route, query)
    }
    if (subresource === "scale") return this.scale(route, method, query, request)
    switch (method) {
      case "GET":
        allowed("get")
        return this.get(route, request.header("accept"))
      case "PUT":
        allowed("update")
        return this.replace(route, query, request)
      case "PATCH":
        allowed("patch")
        return this.patch(route, query, request)
      case "DELETE":
        allowed("delete")
        return this.deleteOne(route, query, request)
      default:
        throw Status.methodNotAllowed()
    }
  }

  // -------------------------------------------------------------------------
  // Reads
  // -------------------------------------------------------------------------

  private collectionOf(kind: KindInfo): Collection {
    return this.store.collection(kind)
  }

  private entryOf(route: Route): Entry {
    const entry = this.collectionOf(route.kind).entries.get(keyOf(route.namespace ?? "", route.name!))
    if (entry === undefined) throw Status.notFound(route.kind, route.name!)
    return entry
  }

  /** An object's JSON in the version the request asked for. */
  private jsonIn(entry: Entry, version: string): string {
    const kind = entry.obj.kind
    const apiVersion = apiVersionOf(splitApiVersion(entry.obj.apiVersion as string).group, version)
    if (entry.obj.apiVersion === apiVersion) return entry.json
    return JSON.stringify({ ...entry.obj, apiVersion, kind })
  }

  private get(route: Route, accept: string | undefined): RawResponse {
    const entry = this.entryOf(route)
    if (wantsTable(accept)) return json(200, this.table(route.kind, [entry], String(this.store.resourceVersion)))
    return json(200, this.jsonIn(entry, route.version))
  }

  private matchers(route: Route, query: Record<string, string>): Matcher {
    const label = parseLabelSelector(query.labelSelector)
    const field = parseFieldSelector(query.fieldSelector, route.kind.fieldSelectors)
    return (obj) => label(obj) && field(obj)
  }

  private list(route: Route, query: Record<string, string>, accept: string | undefined): RawResponse {
    const matches = this.matchers(route, query)
    const collection = this.collectionOf(route.kind)
    const limit = query.limit !== undefined && query.limit !== "" ? Number(query.limit) : 0
    if (!Number.isInteger(limit) || limit < 0) throw Status.badRequest(`invalid limit "${query.limit}"`)
    let listRv = this.store.resourceVersion
    let after: string | undefined
    if (query.continue !== undefined && query.continue !== "") {
      const token = decodeContinue(query.continue)
      if (token.rv < this.store.compactedRv) {
        throw new Status.StatusError(
          410,
          "Expired",
          "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.",
          undefined,
          undefined,
          { continue: encodeContinue(this.store.resourceVersion, token.after) }
        )
      }
      listRv = token.rv
      after = token.after
    }
    const keys = collection.keys()
    const { end, start } = collection.range(route.namespace, after)
    const selected: Array<Entry> = []
    let i = start
    const filtered = hasSelector(query)
    for (; i < end; i++) {
      if (limit > 0 && selected.length >= limit) break
      const entry = collection.entries.get(keys[i]!)!
      if (filtered && !matches(entry.attrs)) continue
      selected.push(entry)
    }
    const metadata: JsonObject = { resourceVersion: String(listRv) }
    if (limit > 0 && i < end && selected.length > 0) {
      metadata.continue = encodeContinue(listRv, selected[selected.length - 1]!.key)
      if (!filtered) metadata.remainingItemCount = end - i
    }
    if (wantsTable(accept)) return json(200, this.table(route.kind, selected, String(listRv), metadata))
    const apiVersion = apiVersionOf(route.kind.group, route.version)
    const items = selected.map((e) => this.jsonIn(e, route.version)).join(",")
    return json(200, listJson(route.kind, apiVersion, metadata, items))
  }

  private table(kind: KindInfo, entries: ReadonlyArray<Entry>, rv: string, metadata?: JsonObject): JsonObject {
    return {
      kind: "Table",
      apiVersion: "meta.k8s.io/v1",
      metadata: metadata ?? { resourceVersion: rv },
      columnDefinitions: [
        column("Name", "name", "Name must be unique within a namespace."),
        ...(kind.kind === "Pod" ? [column("Status", "", "The phase of the pod.")] : []),
        column("Age", "", "CreationTimestamp of the object.")
      ],
      rows: entries.map((e) => {
        const meta = e.obj.metadata as JsonObject
        return {
          cells: [
            meta.name,
            ...(kind.kind === "Pod" ? [stringAt(e.obj, "status", "phase") ?? "Unknown"] : []),
            age(meta.creationTimestamp)
          ],
          object: { kind: "PartialObjectMetadata", apiVersion: "meta.k8s.io/v1", metadata: meta }
        }
      })
    }
  }

  private watch(route: Route, query: Record<string, string>): RawResponse {
    const matches = this.matchers(route, query)
    const collection = this.collectionOf(route.kind)
    const sendInitial = query.sendInitialEvents
    if (isTrue(sendInitial) && query.resourceVersionMatch !== "NotOlderThan") {
      throw Status.invalid({ group: "meta.k8s.io", plural: "listoptions", kind: "ListOptions" }, "", [{
        reason: "FieldValueForbidden",
        field: "resourceVersionMatch",
        message: "Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"
      }])
    }
    const rvParam = query.resourceVersion ?? ""
    if (rvParam !== "" && !/^\d+$/.test(rvParam)) {
      throw Status.badRequest(`invalid resource version "${rvParam}"`)
    }
    const timeout = query.timeoutSeconds !== undefined ? Number(query.timeoutSeconds) : undefined
    const watch = new ActiveWatch(
      this.hub,
      collection,
      route.namespace,
      matches,
      hasSelector(query),
      isTrue(query.allowWatchBookmarks),
      timeout !== undefined && Number.isFinite(timeout) ? timeout : undefined
    )
    const response: RawResponse = { status: 200, headers: { ...jsonHeaders, "cache-control": "no-cache" }, body: watch }
    const fromNow = rvParam === "" || rvParam === "0"
    if (isTrue(sendInitial) || (fromNow && sendInitial === undefined)) {
      const keys = collection.keys()
      const { end, start } = collection.range(route.namespace, undefined)
      for (let i = start; i < end; i++) {
        const entry = collection.entries.get(keys[i]!)!
        if (matches(entry.attrs)) watch.deliver(`{"type":"ADDED","object":${entry.json}}\n`)
      }
      if (isTrue(sendInitial)) {
        watch.bookmark(this.store.resourceVersion, { "k8s.io/initial-events-end": "true" })
      }
      watch.attach()
      return response
    }
    if (!fromNow) {
      const rv = Number(rvParam)
      const changes = this.store.changesSince(collection, rv)
      if (changes === undefined) {
        watch.error(Status.expired(`too old resource version: ${rv} (${this.store.compactedRv + 1})`))
        return response
      }
      for (const change of changes) {
        const line = change.lineFor(watch)
        if (line !== undefined) watch.deliver(line)
      }
    }
    watch.attach()
    return response
  }

  // -------------------------------------------------------------------------
  // Writes
  // -------------------------------------------------------------------------

  private ensureNamespace(name: string): void {
    const kind = this.registry.byResource("", "v1", "namespaces")!
    const collection = this.collectionOf(kind)
    if (collection.entries.has(keyOf("", name))) return
    this.store.write(collection, "", name, (rv) => ({
      obj: {
        apiVersion: "v1",
        kind: "Namespace",
        metadata: {
          name,
          uid: crypto.randomUUID(),
          resourceVersion: String(rv),
          creationTimestamp: now(),
          labels: { "kubernetes.io/metadata.name": name }
        },
        spec: { finalizers: ["kubernetes"] },
        status: { phase: "Active" }
      },
      managers: []
    }))
  }

  private manager(query: Record<string, string>, request: RawRequest): string {
    return query.fieldManager !== undefined && query.fieldManager !== ""
      ? query.fieldManager
      : managerFromUserAgent(request.header("user-agent"))
  }

  /** Checks the body of a create or replace against the URL and returns a copy. */
  private checkBody(route: Route, body: unknown): JsonObject {
    if (!isObject(body)) throw Status.badRequest("the body of the request must be a JSON object")
    const apiVersion = apiVersionOf(route.kind.group, route.version)
    // like the API server, the URL supplies a missing apiVersion or kind
    if (body.apiVersion !== undefined && body.apiVersion !== "" && body.apiVersion !== apiVersion) {
      throw Status.badRequest(
        `the API version in the data (${String(body.apiVersion)}) does not match the expected API version ` +
          `(${apiVersion})`
      )
    }
    if (body.kind !== undefined && body.kind !== "" && body.kind !== route.kind.kind) {
      throw Status.badRequest(
        `the kind in the data (${body.kind}) does not match the expected kind (${route.kind.kind})`
      )
    }
    const obj: JsonObject = { apiVersion, kind: route.kind.kind, ...clone(body) }
    obj.apiVersion = apiVersion
    obj.kind = route.kind.kind
    const metadata = isObject(obj.metadata) ? obj.metadata : (obj.metadata = {})
    if (route.kind.namespaced) {
      if (metadata.namespace !== undefined && metadata.namespace !== "" && metadata.namespace !== route.namespace) {
        throw Status.badRequest("the namespace of the provided object does not match the namespace sent on the request")
      }
      metadata.namespace = route.namespace
    } else {
      drop(metadata, "namespace")
    }
    return obj
  }

  private validateName(kind: KindInfo, name: string): void {
    const problem = nameProblem(kind.nameRule, name)
    if (problem !== undefined) {
      throw Status.invalid(kind, name, [{
        reason: "FieldValueInvalid",
        field: "metadata.name",
        message: `Invalid value: ${JSON.stringify(name)}: ${problem}`
      }])
    }
  }

  /**
   * Fills in what the server owns on a new or changed object: identity, uid,
   * creationTimestamp, generation, resourceVersion and (for kinds with a status
   * subresource) the status.
   */
  private finish(
    kind: KindInfo,
    obj: JsonObject,
    prev: JsonObject | undefined,
    rv: number | undefined,
    mainResource: boolean
  ): JsonObject {
    const metadata = child(obj, "metadata")
    const prevMeta = prev !== undefined ? (prev.metadata as JsonObject) : undefined
    if (prevMeta !== undefined) {
      metadata.uid = prevMeta.uid
      metadata.creationTimestamp = prevMeta.creationTimestamp
      if (prevMeta.deletionTimestamp !== undefined) {
        metadata.deletionTimestamp = prevMeta.deletionTimestamp
        metadata.deletionGracePeriodSeconds = prevMeta.deletionGracePeriodSeconds
      } else {
        drop(metadata, "deletionTimestamp")
        drop(metadata, "deletionGracePeriodSeconds")
      }
      const generation = typeof prevMeta.generation === "number" ? prevMeta.generation : 1
      metadata.generation = specChanged(prev!, obj) ? generation + 1 : generation
      if (kind.hasStatus && mainResource) {
        if (prev!.status !== undefined) obj.status = clone(prev!.status)
        else drop(obj, "status")
      }
    } else {
      metadata.uid = crypto.randomUUID()
      metadata.creationTimestamp = now()
      metadata.generation = 1
      drop(metadata, "deletionTimestamp")
      drop(metadata, "deletionGracePeriodSeconds")
      if (kind.hasStatus && mainResource) {
        if (kind.kind === "Pod" && kind.group === "") obj.status = { phase: "Pending", qosClass: "BestEffort" }
        else if (kind.kind === "Namespace" && kind.group === "") obj.status = { phase: "Active" }
        else drop(obj, "status")
      }
      if (kind.kind === "Namespace" && kind.group === "") {
        const spec = child(obj, "spec")
        if (!Array.isArray(spec.finalizers)) spec.finalizers = ["kubernetes"]
      }
    }
    drop(metadata, "selfLink")
    if (rv !== undefined) metadata.resourceVersion = String(rv)
    else drop(metadata, "resourceVersion")
    return obj
  }

  private withManagedFields(obj: JsonObject, managers: ReadonlyArray<Managed.ManagerEntry>): JsonObject {
    const metadata = obj.metadata as JsonObject
    if (managers.length > 0) metadata.managedFields = Managed.render(managers)
    else drop(metadata, "managedFields")
    return obj
  }

  private stripForCompare(obj: JsonObject): JsonObject {
    const metadata = { ...(obj.metadata as JsonObject) }
    drop(metadata, "resourceVersion")
    drop(metadata, "managedFields")
    return { ...obj, metadata }
  }

  /**
   * Writes a new version of an object (replace, patch, apply, status): no-op writes
   * keep the stored version, like the API server.
   */
  private commit(
    route: Route,
    prev: Entry | undefined,
    candidate: JsonObject,
    managers: ReadonlyArray<Managed.ManagerEntry>,
    dryRun: boolean,
    mainResource = true
  ): { readonly status: number; readonly entry: Entry | undefined; readonly json: string } {
    const kind = route.kind
    const namespace = route.namespace ?? ""
    const name = route.name ?? (candidate.metadata as JsonObject).name as string
    const obj = this.finish(kind, candidate, prev?.obj, undefined, mainResource)
    MicroTime.checkMicroTimes(kind, obj)
    if (prev !== undefined) {
      const unchanged = deepEqual(this.stripForCompare(obj), this.stripForCompare(prev.obj)) &&
        managersEqual(managers, prev.managers)
      if (unchanged) return { status: 200, entry: prev, json: this.jsonIn(prev, route.version) }
    }
    if (dryRun) {
      this.withManagedFields(obj, managers)
      if (prev !== undefined) (obj.metadata as JsonObject).resourceVersion = String(prev.rv)
      return { status: prev === undefined ? 201 : 200, entry: undefined, json: JSON.stringify(obj) }
    }
    if (kind.namespaced) this.ensureNamespace(namespace)
    const entry = this.store.write(this.collectionOf(kind), namespace, name, (rv) => {
      (obj.metadata as JsonObject).resourceVersion = String(rv)
      return { obj: this.withManagedFields(obj, managers), managers }
    })
    this.afterWrite(kind, entry, prev)
    const metadata = entry.obj.metadata as JsonObject
    if (metadata.deletionTimestamp !== undefined && !hasFinalizers(entry.obj)) {
      const gone = this.removeEntry(kind, entry)
      return { status: 200, entry: gone, json: this.jsonIn(gone, route.version) }
    }
    return { status: prev === undefined ? 201 : 200, entry, json: this.jsonIn(entry, route.version) }
  }

  private async create(route: Route, query: Record<string, string>, request: RawRequest): Promise<RawResponse> {
    if (route.kind.plural === "processedtemplates") {
      const body = await readBody(request)
      if (!isObject(body)) throw Status.badRequest("the body of the request must be a Template")
      return json(201, processTemplate(body))
    }
    const type = mediaType(request.header("content-type"))
    if (type !== "" && type !== "application/json" && type !== "application/yaml") {
      throw Status.unsupportedMediaType(type, ["application/json", "application/yaml"])
    }
    const obj = this.checkBody(route, await readBody(request))
    const metadata = obj.metadata as JsonObject
    const collection = this.collectionOf(route.kind)
    const namespace = route.namespace ?? ""
    if (typeof metadata.name !== "string" || metadata.name === "") {
      if (typeof metadata.generateName === "string" && metadata.generateName !== "") {
        let name = `${metadata.generateName}${randomSuffix()}`
        while (collection.entries.has(keyOf(namespace, name))) name = `${metadata.generateName}${randomSuffix()}`
        metadata.name = name
      } else {
        throw Status.invalid(route.kind, "", [{
          reason: "FieldValueRequired",
          field: "metadata.name",
          message: "Required value: name or generateName is required"
        }])
      }
    }
    const name = metadata.name as string
    this.validateName(route.kind, name)
    if (collection.entries.has(keyOf(namespace, name))) throw Status.alreadyExists(route.kind, name)
    const dryRun = query.dryRun === "All"
    this.finish(route.kind, obj, undefined, undefined, true)
    const managers = Managed.recordUpdate([], this.manager(query, request), this.apiVersion(route), undefined, obj)
    const result = this.commit({ ...route, name }, undefined, obj, managers, dryRun)
    return json(result.status, result.json)
  }

  private async replace(route: Route, query: Record<string, string>, request: RawRequest): Promise<RawResponse> {
    const type = mediaType(request.header("content-type"))
    if (type !== "" && type !== "application/json" && type !== "application/yaml") {
      throw Status.unsupportedMediaType(type, ["application/json", "application/yaml"])
    }
    const body = await readBody(request)
    const obj = this.checkBody(route, body)
    const metadata = obj.metadata as JsonObject
    if (metadata.name !== undefined && metadata.name !== route.name) {
      throw Status.badRequest(
        `the name of the object (${String(metadata.name)}) does not match the name on the URL (${route.name})`
      )
    }
    metadata.name = route.name
    const prev = this.entryOf(route)
    const prevMeta = prev.obj.metadata as JsonObject
    const rv = metadata.resourceVersion
    if (rv !== undefined && rv !== "" && rv !== prevMeta.resourceVersion) {
      throw Status.conflict(route.kind, route.name!)
    }
    if (metadata.uid !== undefined && metadata.uid !== "" && metadata.uid !== prevMeta.uid) {
      throw Status.preconditionFailed(
        route.kind,
        route.name!,
        `Precondition failed: UID in precondition: ${String(metadata.uid)}, UID in object meta: ${String(prevMeta.uid)}`
      )
    }
    if (route.subresource === "status") {
      const next = { ...prev.copy(), status: obj.status }
      const result = this.commit(route, prev, next, prev.managers, query.dryRun === "All", false)
      return json(result.status, result.json)
    }
    this.finish(route.kind, obj, prev.obj, undefined, true)
    const manager = this.manager(query, request)
    const managers = Managed.recordUpdate(prev.managers, manager, this.apiVersion(route), prev.obj, obj)
    const result = this.commit(route, prev, obj, managers, query.dryRun === "All")
    return json(200, result.json)
  }

  private async patch(route: Route, query: Record<string, string>, request: RawRequest): Promise<RawResponse> {
    const type = mediaType(request.header("content-type"))
    if (!PATCH_TYPES.includes(type)) throw Status.unsupportedMediaType(type, PATCH_TYPES)
    if (type === "application/strategic-merge-patch+json" && route.kind.custom) {
      throw Status.unsupportedMediaType(type, PATCH_TYPES.filter((t) => t !== "application/strategic-merge-patch+json"))
    }
    if (type === "application/apply-patch+yaml") return this.apply(route, query, request)
    const body = await readBody(request)
    const prev = this.entryOf(route)
    const base = prev.copy()
    drop(base.metadata as JsonObject, "managedFields")
    let patched: unknown
    try {
      if (type === "application/json-patch+json") patched = jsonPatch(base, body)
      else if (type === "application/merge-patch+json") patched = mergePatch(base, body)
      else patched = strategicMerge(base, body)
    } catch (e) {
      if (e instanceof PatchError) {
        throw new Status.StatusError(
          422,
          "Invalid",
          `the server rejected our request due to an error in our request: ${e.message}`,
          {}
        )
      }
      throw e
    }
    if (!isObject(patched)) throw Status.badRequest("the patch did not produce an object")
    const metadata = child(patched, "metadata")
    const prevMeta = prev.obj.metadata as JsonObject
    if (metadata.resourceVersion !== undefined && metadata.resourceVersion !== prevMeta.resourceVersion) {
      throw Status.conflict(route.kind, route.name!)
    }
    if (metadata.uid !== undefined && metadata.uid !== prevMeta.uid) {
      throw Status.preconditionFailed(
        route.kind,
        route.name!,
        `Precondition failed: UID in precondition: ${String(metadata.uid)}, UID in object meta: ${String(prevMeta.uid)}`
      )
    }
    metadata.name = route.name
    if (route.kind.namespaced) metadata.namespace = route.namespace
    patched.apiVersion = prev.obj.apiVersion
    patched.kind = prev.obj.kind
    if (route.subresource === "status") {
      const next = { ...prev.copy(), status: patched.status }
      const result = this.commit(route, prev, next, prev.managers, query.dryRun === "All", false)
      return json(result.status, result.json)
    }
    this.finish(route.kind, patched, prev.obj, undefined, true)
    const managers = Managed.recordUpdate(
      prev.managers,
      this.manager(query, request),
      this.apiVersion(route),
      prev.obj,
      patched
    )
    const result = this.commit(route, prev, patched, managers, query.dryRun === "All")
    return json(200, result.json)
  }

  private async apply(route: Route, query: Record<string, string>, request: RawRequest): Promise<RawResponse> {
    const manager = query.fieldManager
    if (manager === undefined || manager === "") {
      throw new Status.StatusError(
        422,
        "Invalid",
        `PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch`,
        {
          group: "meta.k8s.io",
          kind: "PatchOptions",
          causes: [{
            reason: "FieldValueRequired",
            message: "Required value: is required for apply patch",
            field: "fieldManager"
          }]
        }
      )
    }
    if (route.subresource !== undefined) throw Status.methodNotAllowed()
    const body = await readBody(request)
    if (!isObject(body)) throw Status.badRequest("error decoding YAML: the apply configuration must be an object")
    const apiVersion = apiVersionOf(route.kind.group, route.version)
    if (body.apiVersion !== apiVersion || body.kind !== route.kind.kind) {
      throw Status.badRequest(
        `the API version and kind in the data (${String(body.apiVersion)}, ${String(body.kind)}) ` +
          `do not match the URL (${apiVersion}, ${route.kind.kind})`
      )
    }
    const config = clone(body)
    const metadata = child(config, "metadata")
    if (metadata.name !== route.name) {
      throw Status.badRequest(
        `the name of the object (${String(metadata.name)}) does not match the name on the URL (${route.name})`
      )
    }
    if (route.kind.namespaced) {
      if (metadata.namespace !== undefined && metadata.namespace !== "" && metadata.namespace !== route.namespace) {
        throw Status.badRequest("the namespace of the provided object does not match the namespace sent on the request")
      }
      metadata.namespace = route.namespace
    } else {
      drop(metadata, "namespace")
    }
    this.validateName(route.kind, route.name!)
    const prev = this.collectionOf(route.kind).entries.get(keyOf(route.namespace ?? "", route.name!))
    if (prev !== undefined && metadata.resourceVersion !== undefined && metadata.resourceVersion !== String(prev.rv)) {
      throw Status.conflict(route.kind, route.name!)
    }
    for (const k of serverOwnedMetadata) drop(metadata, k)
    if (route.kind.hasStatus) drop(config, "status")
    const live = prev !== undefined ? prev.copy() : undefined
    if (live !== undefined) drop(live.metadata as JsonObject, "managedFields")
    const result = Managed.apply({
      live,
      config,
      manager,
      apiVersion,
      force: isTrue(query.force),
      entries: prev?.managers ?? []
    })
    if (result._tag === "Conflicts") {
      throw new Status.StatusError(409, "Conflict", Managed.conflictMessage(result.conflicts), {
        causes: result.conflicts.map((c) => ({
          reason: "FieldManagerConflict",
          message: `conflict with ${Managed.printManager(c.entry)}`,
          field: Managed.formatPath(c.path)
        }))
      })
    }
    const obj = this.finish(route.kind, result.object, prev?.obj, undefined, true)
    const committed = this.commit(route, prev, obj, result.entries, query.dryRun === "All")
    return json(committed.status, committed.json)
  }

  private scale(
    route: Route,
    method: string,
    query: Record<string, string>,
    request: RawRequest
  ): Promise<RawResponse> | RawResponse {
    const toScale = (entry: Entry): JsonObject => {
      const meta = entry.obj.metadata as JsonObject
      const selector = stringAt(entry.obj, "spec", "selector") ?? labelSelectorString(entry.obj)
      return {
        kind: "Scale",
        apiVersion: "autoscaling/v1",
        metadata: {
          name: meta.name,
          namespace: meta.namespace,
          uid: meta.uid,
          resourceVersion: meta.resourceVersion,
          creationTimestamp: meta.creationTimestamp
        },
        spec: { replicas: (entry.obj.spec as JsonObject | undefined)?.replicas ?? 1 },
        status: { replicas: (entry.obj.status as JsonObject | undefined)?.replicas ?? 0, selector }
      }
    }
    const prev = this.entryOf(route)
    if (method === "GET") return json(200, toScale(prev))
    if (method !== "PUT" && method !== "PATCH") throw Status.methodNotAllowed()
    return (async () => {
      const body = await readBody(request)
      let scale: unknown = toScale(prev)
      const type = mediaType(request.header("content-type"))
      if (method === "PUT") scale = body
      else if (type === "application/json-patch+json") scale = jsonPatch(scale, body)
      else scale = mergePatch(scale, body)
      const replicas = isObject(scale) && isObject(scale.spec) ? scale.spec.replicas : undefined
      if (typeof replicas !== "number") throw Status.badRequest("spec.replicas must be a number")
      const next = prev.copy()
      child(next, "spec").replicas = replicas
      this.finish(route.kind, next, prev.obj, undefined, true)
      const manager = this.manager(query, request)
      const managers = Managed.recordUpdate(prev.managers, manager, this.apiVersion(route), prev.obj, next)
      const result = this.commit({ ...route, subresource: undefined }, prev, next, managers, query.dryRun === "All")
      const entry = result.entry ?? prev
      return json(200, toScale(entry))
    })()
  }

  // -------------------------------------------------------------------------
  // Deletes
  // -------------------------------------------------------------------------

  private async deleteOptions(query: Record<string, string>, request: RawRequest): Promise<JsonObject> {
    const body = request.method.toUpperCase() === "DELETE" ? await readBody(request) : undefined
    const options: JsonObject = isObject(body) ? { ...body } : {}
    if (query.propagationPolicy !== undefined) options.propagationPolicy = query.propagationPolicy
    if (query.gracePeriodSeconds !== undefined) options.gracePeriodSeconds = Number(query.gracePeriodSeconds)
    if (query.dryRun !== undefined) options.dryRun = [query.dryRun]
    const uid = query["preconditions.uid"]
    const resourceVersion = query["preconditions.resourceVersion"]
    if (uid !== undefined || resourceVersion !== undefined) {
      options.preconditions = {
        ...(isObject(options.preconditions) ? options.preconditions : {}),
        ...(uid !== undefined ? { uid } : {}),
        ...(resourceVersion !== undefined ? { resourceVersion } : {})
      }
    }
    const policy = options.propagationPolicy
    if (policy !== undefined && policy !== "Orphan" && policy !== "Background" && policy !== "Foreground") {
      throw Status.invalid({ group: "meta.k8s.io", plural: "deleteoptions", kind: "DeleteOptions" }, "", [{
        reason: "FieldValueNotSupported",
        field: "propagationPolicy",
        message: `Unsupported value: ${JSON.stringify(policy)}: supported values: "Foreground", "Background", "Orphan", "nil"`
      }])
    }
    return options
  }

  private async deleteOne(route: Route, query: Record<string, string>, request: RawRequest): Promise<RawResponse> {
    const options = await this.deleteOptions(query, request)
    const entry = this.entryOf(route)
    const meta = entry.obj.metadata as JsonObject
    const pre = isObject(options.preconditions) ? options.preconditions : {}
    if (typeof pre.uid === "string" && pre.uid !== meta.uid) {
      throw Status.preconditionFailed(
        route.kind,
        route.name!,
        `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${String(meta.uid)}`
      )
    }
    if (typeof pre.resourceVersion === "string" && pre.resourceVersion !== meta.resourceVersion) {
      throw Status.preconditionFailed(
        route.kind,
        route.name!,
        `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ` +
          `ResourceVersion in object meta: ${String(meta.resourceVersion)}`
      )
    }
    const dryRun = Array.isArray(options.dryRun) && options.dryRun.includes("All")
    const result = this.deleteEntry(route.kind, entry, options, dryRun)
    return this.deleteAnswer(route, result.entry, result.gone)
  }

  private deleteAnswer(route: Route, entry: Entry, gone: boolean): RawResponse {
    const kind = route.kind
    const returnsObject = !gone || kind.custom ||
      (kind.group === "" && (kind.kind === "Pod" || kind.kind === "Namespace"))
    if (returnsObject) return json(200, this.jsonIn(entry, route.version))
    return json(200, Status.success(kind, entry.name, entry.uid))
  }

  /** Deletes (or marks for deletion, when finalizers remain) and cascades. */
  private deleteEntry(
    kind: KindInfo,
    entry: Entry,
    options: JsonObject,
    dryRun: boolean
  ): { readonly entry: Entry; readonly gone: boolean } {
    const grace = typeof options.gracePeriodSeconds === "number" ? options.gracePeriodSeconds : undefined
    const isPod = kind.group === "" && kind.kind === "Pod"
    const isNamespace = kind.group === "" && kind.kind === "Namespace"
    const markDeleting = (obj: JsonObject): JsonObject => {
      const metadata = { ...(obj.metadata as JsonObject) }
      metadata.deletionTimestamp ??= now()
      metadata.deletionGracePeriodSeconds ??= grace ?? (isPod ? 30 : 0)
      const out: JsonObject = { ...obj, metadata }
      if (isNamespace) out.status = { ...(isObject(obj.status) ? obj.status : {}), phase: "Terminating" }
      return out
    }
    if (dryRun) {
      const obj = markDeleting(entry.obj)
      return {
        entry: Entry.of(obj, entry.namespace, entry.name, entry.rv, entry.managers, kind.fieldSelectors),
        gone: !hasFinalizers(entry.obj)
      }
    }
    if (hasFinalizers(entry.obj)) {
      if ((entry.obj.metadata as JsonObject).deletionTimestamp !== undefined) return { entry, gone: false }
      const next = this.store.write(this.collectionOf(kind), entry.namespace, entry.name, (rv) => {
        const obj = markDeleting(entry.obj)
        ;(obj.metadata as JsonObject).resourceVersion = String(rv)
        return { obj, managers: entry.managers }
      })
      return { entry: next, gone: false }
    }
    const policy = options.propagationPolicy
    if (isNamespace) this.removeNamespaceContents(entry.name)
    const gone = this.removeEntry(kind, entry, isPod || isNamespace ? markDeleting : undefined)
    if (policy !== "Orphan") this.removeDependents(entry.uid)
    return { entry: gone, gone: true }
  }

  private removeEntry(kind: KindInfo, entry: Entry, finalize?: (obj: JsonObject) => JsonObject): Entry {
    const collection = this.collectionOf(kind)
    const current = collection.entries.get(entry.key)
    if (current === undefined) return entry
    const gone = this.store.remove(collection, current, finalize)
    if (kind.group === "" && kind.kind === "Pod") this.forgetPod(current)
    if (isCrdKind(kind)) this.unregisterCrd(current.obj)
    return gone
  }

  private removeNamespaceContents(namespace: string): void {
    for (const collection of [...this.store.allCollections()]) {
      if (!collection.kind.namespaced) continue
      const { end, start } = collection.range(namespace, undefined)
      const keys = collection.keys().slice(start, end)
      for (const key of keys) {
        const e = collection.entries.get(key)
        if (e !== undefined) this.removeEntry(collection.kind, e)
      }
    }
  }

  /** Garbage collection: objects whose ownerReferences name a deleted uid. */
  private removeDependents(uid: string): void {
    for (const { collection, entry } of this.store.dependentsOf(uid)) {
      this.removeEntry(collection.kind, entry)
      this.removeDependents(entry.uid)
    }
  }

  private async deleteCollection(
    route: Route,
    query: Record<string, string>,
    request: RawRequest
  ): Promise<RawResponse> {
    const options = await this.deleteOptions(query, request)
    const matches = this.matchers(route, query)
    const collection = this.collectionOf(route.kind)
    const keys = collection.keys()
    const { end, start } = collection.range(route.namespace, undefined)
    const targets: Array<Entry> = []
    for (let i = start; i < end; i++) {
      const e = collection.entries.get(keys[i]!)!
      if (matches(e.attrs)) targets.push(e)
    }
    const dryRun = Array.isArray(options.dryRun) && options.dryRun.includes("All")
    const items: Array<string> = []
    for (const e of targets) {
      const current = collection.entries.get(e.key)
      if (current === undefined) continue
      items.push(this.jsonIn(this.deleteEntry(route.kind, current, options, dryRun).entry, route.version))
    }
    const apiVersion = apiVersionOf(route.kind.group, route.version)
    const metadata = { resourceVersion: String(this.store.resourceVersion) }
    return json(200, listJson(route.kind, apiVersion, metadata, items.join(",")))
  }

  // -------------------------------------------------------------------------
  // Hooks: CRDs, simulation
  // -------------------------------------------------------------------------

  private afterWrite(kind: KindInfo, entry: Entry, prev: Entry | undefined): void {
    if (isCrdKind(kind)) this.registerCrd(entry.obj)
    if (this.simulate !== undefined && prev === undefined && !kind.custom) {
      if (kind.group === "" && kind.kind === "Pod") this.simulatePod(entry)
      if (kind.group === "batch" && kind.kind === "Job") this.simulateJob(entry)
    }
  }

  private registerCrd(crd: JsonObject): void {
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
    this.registry.add(customKind(
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
        subresources: [...(hasStatus ? ["status"] : []), ...(hasScale ? ["scale"] : [])]
      }
    ))
  }

  private unregisterCrd(crd: JsonObject): void {
    const spec = isObject(crd.spec) ? crd.spec : {}
    const names = isObject(spec.names) ? spec.names : {}
    if (typeof spec.group !== "string" || typeof names.plural !== "string") return
    const kind = this.registry.byResource(spec.group, "", names.plural) ??
      this.registry.all().find((k) => k.group === spec.group && k.plural === names.plural)
    if (kind === undefined || !kind.custom) return
    const collection = this.store.existing(kind)
    if (collection !== undefined) {
      for (const e of [...collection.entries.values()]) this.removeEntry(kind, e)
    }
    this.registry.remove(spec.group, names.plural as string)
  }

  private later(ms: number, f: () => void): void {
    if (this.closed) return
    const t = setTimeout(() => {
      this.timers.delete(t)
      if (!this.closed) f()
    }, ms)
    this.timers.add(t)
  }

  private apiVersion(route: Route): string {
    return apiVersionOf(route.kind.group, route.version)
  }

  private jobKind(): KindInfo {
    return this.registry.byResource("batch", "v1", "jobs")!
  }

  private podKind(): KindInfo {
    return this.registry.byResource("", "v1", "pods")!
  }

  private currentPod(namespace: string, name: string, uid: unknown): Entry | undefined {
    const e = this.collectionOf(this.podKind()).entries.get(keyOf(namespace, name))
    return e !== undefined && e.uid === uid ? e : undefined
  }

  private simulatePod(entry: Entry): void {
    const sim = this.simulate!
    const uid = entry.uid
    const { name, namespace } = entry
    this.later(sim.podStartMs, () => {
      if (this.currentPod(namespace, name, uid) === undefined) return
      this.control.setPodPhase(namespace, name, "Running")
      for (const container of containerNames(entry.obj)) {
        const lines = [`starting ${container} in pod ${namespace}/${name}`, ...echoed(entry.obj, container)]
        this.control.appendLog(namespace, name, lines, { container })
      }
      if (!sim.completePods) return
      this.later(sim.podRunMs, () => {
        if (this.currentPod(namespace, name, uid) === undefined) return
        for (const container of containerNames(entry.obj)) {
          this.control.appendLog(namespace, name, [`${container} finished`], { container })
        }
        const pod = this.control.setPodPhase(namespace, name, "Succeeded")
        const owner = ((pod.metadata.ownerReferences ?? []) as Array<JsonObject>).find((o) => o.kind === "Job")
        if (owner !== undefined && typeof owner.name === "string") {
          const job = this.collectionOf(this.jobKind()).entries.get(keyOf(namespace, owner.name))
          if (job !== undefined && job.uid === owner.uid) this.control.completeJob(namespace, owner.name)
        }
      })
    })
  }

  private simulateJob(entry: Entry): void {
    const sim = this.simulate!
    const jobMeta = entry.obj.metadata as JsonObject
    const { name, namespace } = entry
    this.later(Math.max(1, Math.floor(sim.podStartMs / 2)), () => {
      const jobs = this.collectionOf(this.registry.byResource("batch", "v1", "jobs")!)
      const job = jobs.entries.get(keyOf(namespace, name))
      if (job === undefined || job.uid !== jobMeta.uid) return
      const spec = job.obj.spec as JsonObject | undefined
      const template = isObject(spec?.template) ? clone(spec.template) : {}
      const podMeta = isObject(template.metadata) ? template.metadata : {}
      const labels = {
        ...(isObject(podMeta.labels) ? podMeta.labels : {}),
        "batch.kubernetes.io/controller-uid": jobMeta.uid,
        "batch.kubernetes.io/job-name": name,
        "controller-uid": jobMeta.uid,
        "job-name": name
      }
      const podKind = this.podKind()
      const pods = this.collectionOf(podKind)
      let podName = `${name}-${randomSuffix()}`
      while (pods.entries.has(keyOf(namespace, podName))) podName = `${name}-${randomSuffix()}`
      const pod: JsonObject = {
        apiVersion: "v1",
        kind: "Pod",
        metadata: {
          ...podMeta,
          name: podName,
          namespace,
          labels,
          ownerReferences: [{
            apiVersion: "batch/v1",
            kind: "Job",
            name,
            uid: jobMeta.uid,
            controller: true,
            blockOwnerDeletion: true
          }]
        },
        spec: isObject(template.spec) ? template.spec : { containers: [] }
      }
      this.finish(podKind, pod, undefined, undefined, true)
      const created = this.store.write(pods, namespace, podName, (rv) => {
        ;(pod.metadata as JsonObject).resourceVersion = String(rv)
        return { obj: pod, managers: [] }
      })
      this.control.update({ apiVersion: "batch/v1", kind: "Job", namespace, name }, (j) => {
        const status = child(j as JsonObject, "status")
        status.active = 1
        status.startTime ??= now()
        status.ready = 0
      })
      this.simulatePod(created)
    })
  }

  // -------------------------------------------------------------------------
  // Logs
  // -------------------------------------------------------------------------

  private containerLog(
    pod: Entry,
    container: string | undefined,
    create: boolean
  ): { readonly log: ContainerLog; readonly name: string } {
    const names = containerNames(pod.obj)
    let name = container
    if (name === undefined || name === "") {
      if (names.length > 1) {
        throw Status.badRequest(
          `a container name must be specified for pod ${pod.name}, choose one of: [${names.join(" ")}]`
        )
      }
      name = names[0] ?? ""
    } else if (names.length > 0 && !names.includes(name)) {
      throw Status.badRequest(`container ${name} is not valid for pod ${pod.name}`)
    }
    const uid = pod.uid
    let byContainer = this.logs.get(uid)
    if (byContainer === undefined) {
      byContainer = new Map()
      if (create) this.logs.set(uid, byContainer)
    }
    let log = byContainer.get(name)
    if (log === undefined) {
      log = new ContainerLog()
      if (create) byContainer.set(name, log)
    }
    return { log, name }
  }

  private forgetPod(pod: Entry): void {
    const uid = pod.uid
    const byContainer = this.logs.get(uid)
    if (byContainer === undefined) return
    this.logs.delete(uid)
    for (const log of byContainer.values()) for (const f of [...log.followers]) f.finish()
  }

  private podLog(route: Route, query: Record<string, string>): RawResponse {
    if (!(route.kind.group === "" && route.kind.kind === "Pod")) throw Status.pathNotFound()
    const pod = this.entryOf(route)
    const { log, name } = this.containerLog(pod, query.container, true)
    const num = (key: string): number | undefined => {
      const v = query[key]
      if (v === undefined || v === "") return undefined
      const n = Number(v)
      if (!Number.isFinite(n)) throw Status.badRequest(`invalid ${key}: ${v}`)
      return n
    }
    if (query.sinceSeconds !== undefined && query.sinceTime !== undefined) {
      throw Status.invalid({ group: "", plural: "podlogoptions", kind: "PodLogOptions" }, "", [{
        reason: "FieldValueForbidden",
        field: "sinceSeconds",
        message: "Forbidden: at most one of `sinceTime` or `sinceSeconds` may be specified"
      }])
    }
    const sinceSeconds = num("sinceSeconds")
    let sinceMs: number | undefined = sinceSeconds !== undefined ? Date.now() - sinceSeconds * 1000 : undefined
    if (query.sinceTime !== undefined) {
      const t = Date.parse(query.sinceTime)
      if (Number.isNaN(t)) throw Status.badRequest(`invalid sinceTime: ${query.sinceTime}`)
      sinceMs = t
    }
    const options: ReadOptions = {
      tailLines: num("tailLines"),
      sinceMs,
      timestamps: isTrue(query.timestamps),
      limitBytes: num("limitBytes")
    }
    const headers = { "content-type": "text/plain" }
    if (isTrue(query.previous)) {
      if (!log.hasPrevious()) {
        throw Status.badRequest(`previous terminated container "${name}" in pod "${pod.name}" not found`)
      }
      return { status: 200, headers, body: log.read(options, true) }
    }
    const initial = log.read(options)
    if (!isTrue(query.follow)) return { status: 200, headers, body: initial }
    const follower = new LogFollower(log, initial, options, (f) => this.logStreams.delete(f))
    if (!log.ended) this.logStreams.add(follower)
    return { status: 200, headers: { ...headers, "cache-control": "no-cache" }, body: follower }
  }

  private sendBookmarks(): void {
    const rv = this.store.resourceVersion
    for (const w of this.hub.open) w.bookmark(rv)
  }

  // -------------------------------------------------------------------------
  // Controls
  // -------------------------------------------------------------------------

  private kindFor(apiVersion: string, kindOrPlural: string): KindInfo {
    const kind = this.registry.lookup(apiVersion, kindOrPlural)
    if (kind === undefined) throw new Error(`the fake cluster does not serve ${kindOrPlural} in ${apiVersion}`)
    return kind
  }

  private refEntry(
    ref: ObjectRef
  ): { readonly kind: KindInfo; readonly entry: Entry | undefined; readonly namespace: string } {
    const kind = this.kindFor(ref.apiVersion, ref.kind)
    const namespace = kind.namespaced ? ref.namespace ?? this.defaultNamespace : ""
    return { kind, namespace, entry: this.collectionOf(kind).entries.get(keyOf(namespace, ref.name)) }
  }

  /** A change made by the fake itself (controls, simulation): no field manager, no validation. */
  private serverUpdate(kind: KindInfo, prev: Entry, next: JsonObject): Entry {
    const metadata = child(next, "metadata")
    metadata.name = prev.name
    if (kind.namespaced) metadata.namespace = prev.namespace
    metadata.uid = prev.uid
    metadata.creationTimestamp = prev.creationTimestamp
    const apiVersion = next.apiVersion
    if (typeof apiVersion !== "string" || !kind.versions.some((v) => apiVersionOf(kind.group, v) === apiVersion)) {
      next.apiVersion = apiVersionOf(kind.group, kind.versions[0]!)
    }
    next.kind = kind.kind
    const entry = this.store.write(this.collectionOf(kind), prev.namespace, prev.name, (rv) => {
      metadata.resourceVersion = String(rv)
      // not kept parsed: the caller keeps `next` (controls hand it back)
      return {
        obj: this.withManagedFields(next, prev.managers),
        managers: prev.managers,
        generationFrom: prev,
        cache: false
      }
    })
    this.afterWrite(kind, entry, prev)
    if (metadata.deletionTimestamp !== undefined && !hasFinalizers(entry.obj)) return this.removeEntry(kind, entry)
    return entry
  }

  private podStatus(
    pod: Entry,
    phase: string,
    options: { readonly reason?: string | undefined; readonly message?: string | undefined }
  ): JsonObject {
    const next = pod.copy()
    const status = child(next, "status")
    const at = now()
    const previous = Array.isArray(status.conditions) ? (status.conditions as Array<JsonObject>) : []
    const condition = (type: string, value: boolean, reason?: string): JsonObject => {
      const old = previous.find((c) => c.type === type)
      const s = value ? "True" : "False"
      return {
        type,
        status: s,
        lastProbeTime: null,
        lastTransitionTime: old !== undefined && old.status === s ? old.lastTransitionTime : at,
        ...(reason !== undefined ? { reason } : {})
      }
    }
    status.phase = phase
    if (options.reason !== undefined) status.reason = options.reason
    else drop(status, "reason")
    if (options.message !== undefined) status.message = options.message
    else drop(status, "message")
    const terminal = phase === "Succeeded" || phase === "Failed"
    const running = phase === "Running"
    const reason = phase === "Succeeded"
      ? "PodCompleted"
      : phase === "Failed"
      ? "PodFailed"
      : running
      ? undefined
      : "ContainersNotReady"
    status.conditions = [
      condition("PodReadyToStartContainers", running || terminal),
      condition(
        "Initialized",
        phase !== "Pending" || previous.some((c) => c.type === "Initialized" && c.status === "True")
      ),
      condition("Ready", running, reason),
      condition("ContainersReady", running, reason),
      condition("PodScheduled", true)
    ]
    if (phase !== "Pending") {
      status.startTime ??= at
      status.hostIP ??= "10.0.0.10"
      status.podIP ??= `10.244.${Math.floor(++this.podIps / 250) % 250}.${(this.podIps % 250) + 2}`
      status.podIPs ??= [{ ip: status.podIP }]
    }
    const oldStatuses = Array.isArray(status.containerStatuses) ? (status.containerStatuses as Array<JsonObject>) : []
    status.containerStatuses = containerNames(pod.obj).map((name) => {
      const old = oldStatuses.find((c) => c.name === name)
      const containers = (pod.obj.spec as JsonObject | undefined)?.containers as Array<JsonObject> | undefined
      const container = containers?.find((c) => c.name === name)
      const startedAt = isObject(old?.state) && isObject(old.state.running) ? old.state.running.startedAt : at
      const log = this.logs.get(pod.uid)?.get(name)
      const exitCode = log?.exitCode ?? (phase === "Failed" ? 1 : 0)
      const state = running
        ? { running: { startedAt } }
        : terminal
        ? { terminated: { exitCode, reason: exitCode === 0 ? "Completed" : "Error", startedAt, finishedAt: at } }
        : { waiting: { reason: "ContainerCreating" } }
      return {
        name,
        state,
        lastState: old?.lastState ?? {},
        ready: running,
        restartCount: typeof old?.restartCount === "number" ? old.restartCount : 0,
        image: container?.image ?? "",
        imageID: "",
        started: running,
        ...(phase !== "Pending" ? { containerID: `containerd://${pod.uid}-${name}` } : {})
      }
    })
    return next
  }

  private makeControl(): Control {
    const snapshot = (entry: Entry): FakeObject => JSON.parse(entry.json) as FakeObject
    const control: Control = {
      seed: (objects) => {
        const out: Array<FakeObject> = []
        for (const raw of objects) {
          if (!isObject(raw) || typeof raw.apiVersion !== "string" || typeof raw.kind !== "string") {
            throw new Error("seed: every object needs apiVersion and kind")
          }
          const kind = this.kindFor(raw.apiVersion, raw.kind)
          // a shallow copy: only metadata is changed, and the object is not kept parsed
          const metadata: JsonObject = isObject(raw.metadata) ? { ...raw.metadata } : {}
          const obj: JsonObject = { ...raw, metadata }
          const given = typeof metadata.namespace === "string" && metadata.namespace !== ""
            ? metadata.namespace
            : undefined
          const namespace = kind.namespaced ? given ?? this.defaultNamespace : ""
          const collection = this.collectionOf(kind)
          if (typeof metadata.name !== "string" || metadata.name === "") {
            if (typeof metadata.generateName !== "string") throw new Error(`seed: a ${kind.kind} needs metadata.name`)
            let name = `${metadata.generateName}${randomSuffix()}`
            while (collection.entries.has(keyOf(namespace, name))) name = `${metadata.generateName}${randomSuffix()}`
            metadata.name = name
          }
          const name = metadata.name as string
          if (kind.namespaced) {
            metadata.namespace = namespace
            this.ensureNamespace(namespace)
          } else drop(metadata, "namespace")
          const prev = collection.entries.get(keyOf(namespace, name))
          metadata.uid ??= prev?.uid ?? crypto.randomUUID()
          metadata.creationTimestamp ??= prev?.creationTimestamp ?? now()
          metadata.generation ??= 1
          drop(metadata, "managedFields")
          const entry = this.store.write(collection, namespace, name, (rv) => {
            metadata.resourceVersion = String(rv)
            return { obj, managers: [], cache: false }
          })
          this.afterWrite(kind, entry, prev ?? entry)
          // the stored object itself is not kept parsed, so handing it back is safe
          out.push(obj as unknown as FakeObject)
        }
        return out
      },
      get: (ref) => {
        const { entry } = this.refEntry(ref)
        return entry === undefined ? undefined : snapshot(entry)
      },
      list: (apiVersion, kindOrPlural, namespace) => {
        const kind = this.kindFor(apiVersion, kindOrPlural)
        const collection = this.collectionOf(kind)
        const keys = collection.keys()
        const { end, start } = collection.range(kind.namespaced ? namespace : undefined, undefined)
        const out: Array<FakeObject> = []
        for (let i = start; i < end; i++) out.push(snapshot(collection.entries.get(keys[i]!)!))
        return out
      },
      update: (ref, change) => {
        const { entry, kind } = this.refEntry(ref)
        if (entry === undefined) {
          throw new Error(`update: ${ref.kind} ${ref.namespace ?? ""}/${ref.name} does not exist`)
        }
        let next: JsonObject
        if (typeof change === "function") {
          const draft = entry.copy()
          const result = change(draft as unknown as FakeObject)
          next = result === undefined ? draft : clone(result as unknown as JsonObject)
        } else {
          next = mergePatch(entry.copy(), change) as JsonObject
        }
        this.serverUpdate(kind, entry, next)
        return next as unknown as FakeObject
      },
      remove: (ref) => {
        const { entry, kind } = this.refEntry(ref)
        if (entry === undefined) return false
        if (kind.group === "" && kind.kind === "Namespace") this.removeNamespaceContents(entry.name)
        this.removeEntry(kind, entry)
        return true
      },
      registerResource: (resource) => this.registry.add(customKind(resource)),
      resourceVersion: () => String(this.store.resourceVersion),
      requests: () => this.requestLog.slice(),
      mutations: () => this.mutationCount,
      reset: () => {
        this.requestLog = []
        this.mutationCount = 0
        this.faults = []
      },
      setToken: (token) => {
        this.token = token
      },
      setPodPhase: (namespace, name, phase, options = {}) => {
        const { entry, kind } = this.refEntry({ apiVersion: "v1", kind: "Pod", namespace, name })
        if (entry === undefined) throw new Error(`setPodPhase: pod ${namespace}/${name} does not exist`)
        if (phase === "Succeeded" || phase === "Failed") {
          const byContainer = this.logs.get(entry.uid)
          for (const c of containerNames(entry.obj)) {
            const log = byContainer?.get(c)
            if (log !== undefined && !log.ended) log.end(phase === "Succeeded" ? 0 : 1)
          }
        }
        const next = this.podStatus(entry, phase, options)
        this.serverUpdate(kind, entry, next)
        return next as unknown as FakeObject
      },
      completeJob: (namespace, name) =>
        control.update({ apiVersion: "batch/v1", kind: "Job", namespace, name }, (job) => {
          const obj = job as unknown as JsonObject
          const status = child(obj, "status")
          const at = now()
          const completions = (obj.spec as JsonObject | undefined)?.completions
          status.startTime ??= at
          status.completionTime = at
          status.succeeded = typeof completions === "number" ? completions : 1
          status.ready = 0
          drop(status, "active")
          const reached = {
            status: "True",
            lastProbeTime: at,
            lastTransitionTime: at,
            reason: "CompletionsReached",
            message: "Reached expected number of succeeded pods"
          }
          status.conditions = [{ type: "SuccessCriteriaMet", ...reached }, { type: "Complete", ...reached }]
        }),
      failJob: (namespace, name, options = {}) =>
        control.update({ apiVersion: "batch/v1", kind: "Job", namespace, name }, (job) => {
          const status = child(job as unknown as JsonObject, "status")
          const at = now()
          const reason = options.reason ?? "BackoffLimitExceeded"
          const message = options.message ?? "Job has reached the specified backoff limit"
          status.startTime ??= at
          status.failed = typeof status.failed === "number" ? status.failed + 1 : 1
          status.ready = 0
          drop(status, "active")
          status.conditions = [
            { type: "FailureTarget", status: "True", lastProbeTime: at, lastTransitionTime: at, reason, message },
            { type: "Failed", status: "True", lastProbeTime: at, lastTransitionTime: at, reason, message }
          ]
        }),
      appendLog: (namespace, pod, text, options = {}) => {
        const { entry } = this.refEntry({ apiVersion: "v1", kind: "Pod", namespace, name: pod })
        if (entry === undefined) throw new Error(`appendLog: pod ${namespace}/${pod} does not exist`)
        const { log } = this.containerLog(entry, options.container, true)
        if (typeof text === "string") log.append(text)
        else log.appendLines(text)
      },
      endContainer: (namespace, pod, options = {}) => {
        const { entry, kind } = this.refEntry({ apiVersion: "v1", kind: "Pod", namespace, name: pod })
        if (entry === undefined) throw new Error(`endContainer: pod ${namespace}/${pod} does not exist`)
        const { log, name } = this.containerLog(entry, options.container, true)
        const exitCode = options.exitCode ?? 0
        log.end(exitCode)
        const next = entry.copy()
        const status = child(next, "status")
        const statuses = Array.isArray(status.containerStatuses) ? (status.containerStatuses as Array<JsonObject>) : []
        const at = now()
        let found = statuses.find((c) => c.name === name)
        if (found === undefined) {
          found = { name, ready: false, restartCount: 0, image: "", imageID: "", started: false }
          statuses.push(found)
        }
        const terminated = { exitCode, reason: exitCode === 0 ? "Completed" : "Error", finishedAt: at }
        if (options.restart === true) {
          found.lastState = { terminated }
          found.restartCount = (typeof found.restartCount === "number" ? found.restartCount : 0) + 1
          found.state = { running: { startedAt: at } }
          log.restart()
        } else {
          found.state = { terminated }
          found.ready = false
          found.started = false
        }
        status.containerStatuses = statuses
        this.serverUpdate(kind, entry, next)
      },
      failNext: (options) => {
        this.faults.push({
          kind: "fail",
          remaining: options.count ?? 1,
          match: options.match,
          status: Status.forCode(options.status, options)
        })
      },
      resetNext: (options = {}) => {
        this.faults.push({
          kind: "reset",
          remaining: options.count ?? 1,
          match: options.match,
          afterBytes: options.afterBytes
        })
      },
      delayNext: (options) => {
        this.faults.push({ kind: "delay", remaining: options.count ?? 1, match: options.match, ms: options.ms })
      },
      stallNext: (options = {}) => {
        this.faults.push({ kind: "stall", remaining: options.count ?? 1, match: options.match })
      },
      clearFaults: () => {
        this.faults = []
        this.hub.dropAfter = undefined
      },
      dropWatchesAfter: (events) => {
        this.hub.dropAfter = events
        if (events !== undefined) {
          // watches already past the limit end now
          for (const w of [...this.hub.open]) w.checkDrop()
        }
      },
      expireWatches: () => {
        const rv = this.store.resourceVersion
        for (const w of [...this.hub.open]) w.error(Status.expired(`too old resource version: ${rv} (${rv + 1})`))
      },
      compact: () => this.store.compact(),
      bookmark: () => this.sendBookmarks(),
      openWatches: () => this.hub.open.size,
      openLogStreams: () => this.logStreams.size
    }
    return control
  }
}

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

const serverOwnedMetadata = [
  "uid",
  "resourceVersion",
  "managedFields",
  "creationTimestamp",
  "generation",
  "selfLink",
  "deletionTimestamp",
  "deletionGracePeriodSeconds"
]

const isCrdKind = (kind: KindInfo): boolean =>
  kind.group === "apiextensions.k8s.io" && kind.plural === "customresourcedefinitions"

const listJson = (kind: KindInfo, apiVersion: string, metadata: JsonObject, items: string): string =>
  `{"kind":"${kind.listKind}","apiVersion":"${apiVersion}","metadata":${JSON.stringify(metadata)},"items":[${items}]}`

const column = (name: string, format: string, description: string): JsonObject => ({
  name,
  type: "string",
  format,
  description,
  priority: 0
})

const hasFinalizers = (obj: JsonObject): boolean => {
  const finalizers = (obj.metadata as JsonObject | undefined)?.finalizers
  return Array.isArray(finalizers) && finalizers.length > 0
}

const managersEqual = (a: ReadonlyArray<Managed.ManagerEntry>, b: ReadonlyArray<Managed.ManagerEntry>): boolean =>
  a.length === b.length && a.every((e, i) => e === b[i])

const containerNames = (pod: JsonObject): Array<string> => {
  const spec = pod.spec
  if (!isObject(spec) || !Array.isArray(spec.containers)) return []
  return spec.containers
    .filter((c): c is JsonObject => isObject(c) && typeof c.name === "string")
    .map((c) => c.name as string)
}

/** What an `echo` command in a container would print, for simulated logs. */
const echoed = (pod: JsonObject, container: string): Array<string> => {
  const spec = pod.spec as JsonObject
  const c = (spec.containers as Array<JsonObject>).find((x) => x.name === container)
  const words = [...(Array.isArray(c?.command) ? c.command : []), ...(Array.isArray(c?.args) ? c.args : [])]
    .filter((w): w is string => typeof w === "string")
  const text = words.join(" ")
  const m = /\becho\s+(.+?)(?:\s*(?:;|&&|\|\||$))/.exec(text)
  if (m === null) return []
  return [m[1]!.replace(/^["']|["']$/g, "")]
}

const labelSelectorString = (obj: JsonObject): string => {
  const selector = (obj.spec as JsonObject | undefined)?.selector
  const labels = isObject(selector) && isObject(selector.matchLabels) ? selector.matchLabels : {}
  return Object.entries(labels).map(([k, v]) => `${k}=${String(v)}`).join(",")
}

const hasSelector = (query: Record<string, string>): boolean =>
  (query.labelSelector !== undefined && query.labelSelector.trim() !== "") ||
  (query.fieldSelector !== undefined && query.fieldSelector.trim() !== "")

const joinSelector = (a: string | undefined, b: string): string => (a === undefined || a === "" ? b : `${a},${b}`)

const wantsTable = (accept: string | undefined): boolean => accept !== undefined && accept.includes("as=Table")

const age = (timestamp: unknown): string => {
  if (typeof timestamp !== "string") return "<unknown>"
  const seconds = Math.max(0, Math.floor((Date.now() - Date.parse(timestamp)) / 1000))
  if (seconds < 120) return `${seconds}s`
  const minutes = Math.floor(seconds / 60)
  if (minutes < 120) return `${minutes}m`
  const hours = Math.floor(minutes / 60)
  return hours < 48 ? `${hours}h` : `${Math.floor(hours / 24)}d`
}

const sleep = (ms: number, signal: AbortSignal | undefined): Promise<void> =>
  new Promise((resolve) => {
    if (signal?.aborted) return resolve()
    const t = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort)
      resolve()
    }, ms)
    const onAbort = () => {
      clearTimeout(t)
      resolve()
    }
    signal?.addEventListener("abort", onAbort, { once: true })
  })

const waitForAbort = (signal: AbortSignal | undefined): Promise<void> =>
  new Promise((resolve) => {
    if (signal === undefined) return
    if (signal.aborted) return resolve()
    signal.addEventListener("abort", () => resolve(), { once: true })
  })

const encoder = new TextEncoder()

/** A raw response as a web `Response`; a reset becomes a rejection or an erroring body. @internal */
export const toWebResponse = (raw: RawResponse, signal: AbortSignal | undefined): Response => {
  if (raw.reset !== undefined && raw.reset.afterBytes === undefined) {
    if (raw.body !== undefined && typeof raw.body !== "string") raw.body.cancel()
    throw new ConnectionReset()
  }
  const streaming = raw.body !== undefined && typeof raw.body !== "string"
  if (!streaming && raw.reset === undefined) {
    return new Response(raw.status === 204 ? null : (raw.body as string | undefined) ?? "", {
      status: raw.status,
      headers: raw.headers
    })
  }
  const body: StreamBody = typeof raw.body === "string" || raw.body === undefined
    ? fromString(raw.body ?? "")
    : raw.body
  let finished = false
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      let sink: Sink = {
        write(chunk) {
          if (!finished) controller.enqueue(typeof chunk === "string" ? encoder.encode(chunk) : chunk)
        },
        end() {
          if (finished) return
          finished = true
          controller.close()
        },
        fail(error) {
          if (finished) return
          finished = true
          controller.error(error)
        }
      }
      if (raw.reset !== undefined) sink = cutAfter(sink, raw.reset.afterBytes!, () => body.cancel())
      signal?.addEventListener("abort", () => {
        if (finished) return
        finished = true
        body.cancel()
        try {
          controller.error(new Error("aborted"))
        } catch {
          // already closed
        }
      }, { once: true })
      body.start(sink)
    },
    cancel() {
      finished = true
      body.cancel()
    }
  })
  return new Response(stream, { status: raw.status, headers: raw.headers })
}

/**
 * Reads: get and list (with label and field selectors, pagination by continue token)
 * and watch (from now, with the initial state, or replayed from a resourceVersion). The
 * Table and metadata-only forms are made from these answers (routing, tables/).
 *
 * @internal
 */
import { isTrue, json, jsonHeaders, type RawResponse } from "../serve/http.js"
import type { JsonObject } from "../store/json.js"
import { apiVersionOf, type KindInfo } from "../store/kinds.js"
import { type Matcher, parseFieldSelector, parseLabelSelector } from "../store/selectors.js"
import { type FakeState, objectIn, type Route, routeApiVersion } from "../store/state.js"
import * as Status from "../serve/statusBodies.js"
import type { Entry } from "../store/store.js"
import { partialEvent } from "./partial.js"
import { ActiveWatch } from "./watch.js"


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

/**
 * A list body around items already serialized. A custom resource's list is unstructured
 * on the API server, written as Go writes a map: keys in order, at every level.
 *
 * @internal
 */
export const listJson = (kind: KindInfo, apiVersion: string, metadata: JsonObject, items: string): string => {
  if (!kind.custom) {
    const meta = JSON.stringify(metadata)
    return `{"kind":"${kind.listKind}","apiVersion":"${apiVersion}","metadata":${meta},"items":[${items}]}`
  }
  const sorted: JsonObject = {}
  for (const key of Object.keys(metadata).sort()) sorted[key] = metadata[key]
  const meta = JSON.stringify(sorted)
  return `{"apiVersion":"${apiVersion}","items":[${items}],"kind":"${kind.listKind}","metadata":${meta}}`
}

const typeMetaPrefix = /^\{"apiVersion":"[^"\\]*","kind":"[^"\\]*",?/

/**
 * A built-in object's JSON as an item of its list: without apiVersion and kind, as kube-apiserver encodes a typed
 * list (its items' TypeMeta is empty; clients fill it in from the list). A custom resource's list is unstructured and
 * keeps them. Stored objects begin with apiVersion and kind, so this is a slice, not a parse.
 *
 * @internal
 */
export const listItemJson = (kind: KindInfo, json: string): string => {
  if (kind.custom) return json
  const prefix = typeMetaPrefix.exec(json)
  if (prefix !== null) return `{${json.slice(prefix[0].length)}`
  if (!json.includes('"kind":')) return json
  const { apiVersion: _apiVersion, kind: _kind, ...rest } = JSON.parse(json) as JsonObject
  return JSON.stringify(rest)
}

/** Whether a query selects by label or field. @internal */
export const hasSelector = (query: Record<string, string>): boolean =>
  (query.labelSelector !== undefined && query.labelSelector.trim() !== "") ||
  (query.fieldSelector !== undefined && query.fieldSelector.trim() !== "")

/** Two field selectors as one. @internal */
export const joinSelector = (a: string | undefined, b: string): string =>
  a === undefined || a === "" ? b : `${a},${b}`

/** The label and field selectors of a query as one matcher. @internal */
export const matchers = (route: Route, query: Record<string, string>): Matcher => {
  const label = parseLabelSelector(query.labelSelector)
  const field = parseFieldSelector(query.fieldSelector, route.kind.fieldSelectors, route.kind.storedAs?.fieldLabels)
  return (obj) => label(obj) && field(obj)
}


/** GET of one object. @internal */
export const get = (state: FakeState, route: Route): RawResponse =>
  json(200, state.jsonIn(state.entryOf(route), route.kind, route.version))

/** GET of a collection: selectors, `limit` and `continue`. @internal */
export const list = (state: FakeState, route: Route, query: Record<string, string>): RawResponse => {
  const matches = matchers(route, query)
  const collection = state.collectionOf(route.kind)
  const asked = query.limit !== undefined && query.limit !== "" ? Number(query.limit) : 0
  if (!Number.isInteger(asked)) throw Status.badRequest(`invalid limit "${query.limit}"`)
  // kube-apiserver reads a negative limit as none
  const limit = Math.max(0, asked)
  let listRv = state.store.resourceVersion
  let after: string | undefined
  if (query.continue !== undefined && query.continue !== "") {
    const token = decodeContinue(query.continue)
    if (token.rv < state.store.compactedRv) {
      throw new Status.StatusError(
        410,
        "Expired",
        "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.",
        undefined,
        undefined,
        { continue: encodeContinue(state.store.resourceVersion, token.after) }
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
  // as the watch cache does, a filtered list says continue only when another object matches
  let more = i < end
  if (more && filtered) {
    more = false
    for (let j = i; j < end; j++) {
      if (matches(collection.entries.get(keys[j]!)!.attrs)) {
        more = true
        break
      }
    }
  }
  const metadata: JsonObject = { resourceVersion: String(listRv) }
  if (limit > 0 && more && selected.length > 0) {
    metadata.continue = encodeContinue(listRv, selected[selected.length - 1]!.key)
    if (!filtered) metadata.remainingItemCount = end - i
  } else if (route.kind.custom) {
    // an unstructured list sets its continue token even when there is none
    metadata.continue = ""
  }
  const apiVersion = apiVersionOf(route.kind.group, route.version)
  const items = selected.map((e) => listItemJson(route.kind, state.jsonIn(e, route.kind, route.version))).join(",")
  return json(200, listJson(route.kind, apiVersion, metadata, items))
}

/**
 * Rewrites the event lines of a collection into the route's kind and version, for the kinds whose
 * stored objects may be in another (several versions, or stored as another kind); `undefined` when
 * every stored object is in the route's form already.
 */
const servedLines = (route: Route): ((line: string) => string) | undefined => {
  const kind = route.kind
  if (kind.storedAs === undefined && kind.versions.length < 2) return undefined
  return (line) => {
    const event = JSON.parse(line) as { readonly type: string; readonly object: JsonObject }
    if (event.type === "ERROR" || event.type === "BOOKMARK") return line
    const object = objectIn(event.object, kind, route.version)
    return object === event.object ? line : `${JSON.stringify({ type: event.type, object })}\n`
  }
}

/**
 * A watch stream: from now, with initial events, or replayed from a resourceVersion;
 * `transform` rewrites each event into the form the client asked for.
 *
 * @internal
 */
export const watch = (
  state: FakeState,
  route: Route,
  query: Record<string, string>,
  transform?: ((line: string) => string) | undefined
): RawResponse => {
  const matches = matchers(route, query)
  const collection = state.collectionOf(route.kind)
  const sendInitial = query.sendInitialEvents
  if (sendInitial !== undefined && state.options.features?.watchList === false) {
    // kube-apiserver with its WatchList gate off
    throw Status.invalid({ group: "meta.k8s.io", plural: "listoptions", kind: "ListOptions" }, "", [{
      reason: "FieldValueForbidden",
      field: "sendInitialEvents",
      message: "Forbidden: sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled"
    }])
  }
  if (isTrue(sendInitial) && query.resourceVersionMatch !== "NotOlderThan") {
    throw Status.invalid({ group: "meta.k8s.io", plural: "listoptions", kind: "ListOptions" }, "", [{
      reason: "FieldValueForbidden",
      field: "resourceVersionMatch",
      message: "Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"
    }])
  }
  const rvParam = query.resourceVersion ?? ""
  if (rvParam !== "" && !/^\d+$/.test(rvParam)) {
    // kube-apiserver's watch answers a 500 without a reason here (the parse error is not a Status of its own)
    throw new Status.StatusError(
      500,
      "",
      `resourceVersion: Invalid value: "${rvParam}": strconv.ParseUint: parsing "${rvParam}": invalid syntax`
    )
  }
  const timeout = query.timeoutSeconds !== undefined ? Number(query.timeoutSeconds) : undefined
  const watch = new ActiveWatch(
    state.hub,
    collection,
    route.namespace,
    matches,
    hasSelector(query),
    isTrue(query.allowWatchBookmarks),
    timeout !== undefined && Number.isFinite(timeout) ? timeout : undefined
  )
  watch.objectType = { kind: route.kind.kind, apiVersion: routeApiVersion(route) }
  const served = servedLines(route)
  watch.transform = served === undefined || transform === undefined ? served ?? transform : (l) => transform(served(l))
  watch.transformsBookmarks = transform === partialEvent
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
      watch.bookmark(state.store.resourceVersion, { "k8s.io/initial-events-end": "true" })
    }
    watch.attach()
    return response
  }
  if (!fromNow) {
    const rv = Number(rvParam)
    const changes = state.store.changesSince(collection, rv)
    if (changes === undefined) {
      watch.error(Status.expired(`too old resource version: ${rv} (${state.store.compactedRv + 1})`))
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

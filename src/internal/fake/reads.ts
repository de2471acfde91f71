/**
 * Reads: get and list (with label and field selectors, pagination by continue token,
 * and the Table form kubectl asks for) and watch (from now, with the initial state, or
 * replayed from a resourceVersion).
 *
 * @internal
 */
import * as Columns from "./columns.js"
import { isTrue, json, jsonHeaders, type RawResponse } from "./http.js"
import { type JsonObject, stringAt } from "./json.js"
import { apiVersionOf, type KindInfo } from "./kinds.js"
import { type Matcher, parseFieldSelector, parseLabelSelector } from "./selectors.js"
import type { FakeState, Route } from "./state.js"
import * as Status from "./status.js"
import type { Entry } from "./store.js"
import { ActiveWatch } from "./watch.js"
import { partialForm } from "./partial.js"


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

/** A list body around items already serialized. @internal */
export const listJson = (kind: KindInfo, apiVersion: string, metadata: JsonObject, items: string): string =>
  `{"kind":"${kind.listKind}","apiVersion":"${apiVersion}","metadata":${JSON.stringify(metadata)},"items":[${items}]}`

const column = (name: string, format: string, description: string): JsonObject => ({
  name,
  type: "string",
  format,
  description,
  priority: 0
})

const age = (timestamp: unknown): string => {
  if (typeof timestamp !== "string") return "<unknown>"
  const seconds = Math.max(0, Math.floor((Date.now() - Date.parse(timestamp)) / 1000))
  if (seconds < 120) return `${seconds}s`
  const minutes = Math.floor(seconds / 60)
  if (minutes < 120) return `${minutes}m`
  const hours = Math.floor(minutes / 60)
  return hours < 48 ? `${hours}h` : `${Math.floor(hours / 24)}d`
}

const wantsTable = (accept: string | undefined): boolean => accept !== undefined && accept.includes("as=Table")

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
  const field = parseFieldSelector(query.fieldSelector, route.kind.fieldSelectors)
  return (obj) => label(obj) && field(obj)
}


/** GET of one object (or its Table row). @internal */
export const get = (state: FakeState, route: Route, accept: string | undefined): RawResponse => {
  const entry = state.entryOf(route)
  if (wantsTable(accept)) {
    return json(200, table(route.kind, [entry], String(state.store.resourceVersion), undefined, Columns.of(state, route)))
  }
  return json(200, state.jsonIn(entry, route.version))
}

/** GET of a collection: selectors, `limit` and `continue`, Table form. @internal */
export const list = (
  state: FakeState,
  route: Route,
  query: Record<string, string>,
  accept: string | undefined
): RawResponse => {
  const matches = matchers(route, query)
  const collection = state.collectionOf(route.kind)
  const limit = query.limit !== undefined && query.limit !== "" ? Number(query.limit) : 0
  if (!Number.isInteger(limit) || limit < 0) throw Status.badRequest(`invalid limit "${query.limit}"`)
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
  const metadata: JsonObject = { resourceVersion: String(listRv) }
  if (limit > 0 && i < end && selected.length > 0) {
    metadata.continue = encodeContinue(listRv, selected[selected.length - 1]!.key)
    if (!filtered) metadata.remainingItemCount = end - i
  }
  if (wantsTable(accept)) return json(200, table(route.kind, selected, String(listRv), metadata, Columns.of(state, route)))
  const apiVersion = apiVersionOf(route.kind.group, route.version)
  const items = selected.map((e) => state.jsonIn(e, route.version)).join(",")
  return json(200, listJson(route.kind, apiVersion, metadata, items))
}

/**
 * The Table form of some objects: name and age (and a pod's phase), or, for a custom resource whose CRD
 * names printer columns, name and those columns, as the API server answers `kubectl get`.
 */
const table = (
  kind: KindInfo,
  entries: ReadonlyArray<Entry>,
  rv: string,
  metadata?: JsonObject,
  columns?: ReadonlyArray<Columns.Column>
): JsonObject => {
  const isPod = kind.kind === "Pod"
  return {
    kind: "Table",
    apiVersion: "meta.k8s.io/v1",
    metadata: metadata ?? { resourceVersion: rv },
    columnDefinitions: [
      column("Name", "name", "Name must be unique within a namespace."),
      ...(columns !== undefined
        ? columns.map(({ description, format, name, priority, type }) => ({ name, type, format, description, priority }))
        : [
          ...(isPod ? [column("Status", "", "The phase of the pod.")] : []),
          column("Age", "", "CreationTimestamp of the object.")
        ])
    ],
    rows: entries.map((e) => {
      const meta = e.obj.metadata as JsonObject
      return {
        cells: [
          meta.name,
          ...(columns !== undefined
            ? columns.map((c) => Columns.cell(e.obj, c))
            : [...(isPod ? [stringAt(e.obj, "status", "phase") ?? "Unknown"] : []), age(meta.creationTimestamp)])
        ],
        object: { kind: "PartialObjectMetadata", apiVersion: "meta.k8s.io/v1", metadata: meta }
      }
    })
  }
}

/** A watch stream: from now, with initial events, or replayed from a resourceVersion. @internal */
export const watch = (
  state: FakeState,
  route: Route,
  query: Record<string, string>,
  accept?: string | undefined
): RawResponse => {
  const matches = matchers(route, query)
  const collection = state.collectionOf(route.kind)
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
    state.hub,
    collection,
    route.namespace,
    matches,
    hasSelector(query),
    isTrue(query.allowWatchBookmarks),
    timeout !== undefined && Number.isFinite(timeout) ? timeout : undefined
  )
  watch.partial = partialForm(accept) !== undefined
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

/**
 * What is meant to differ between two servers, and nothing else, replaced by placeholders: uids, timestamps,
 * resourceVersion values (by their rank in the scenario, so their order still counts), generated names' suffixes,
 * certificate and token bytes, continue tokens, pod IPs and node names a scheduler picks.
 */
import type { Observed } from "./client.js"

const uuid = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g
const rfc3339 = /\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})/g
const pem = /-----BEGIN ([A-Z ]+)-----[\s\S]*?-----END \1-----\n?/g
const jwt = /\beyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+/g

/** Every resourceVersion in what was observed, in numeric order: its rank is its placeholder. */
const resourceVersions = (value: unknown, into: Set<string>): void => {
  if (Array.isArray(value)) for (const v of value) resourceVersions(v, into)
  else if (value !== null && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) {
      if (k === "resourceVersion" && typeof v === "string" && /^\d+$/.test(v)) into.add(v)
      else resourceVersions(v, into)
    }
  }
}

/** Names made from a generateName: the suffix goes. */
const generatedNames = (value: unknown, into: Map<string, string>): void => {
  if (Array.isArray(value)) for (const v of value) generatedNames(v, into)
  else if (value !== null && typeof value === "object") {
    const o = value as Record<string, unknown>
    if (typeof o["generateName"] === "string" && typeof o["name"] === "string" && o["name"].startsWith(o["generateName"])) {
      into.set(o["name"], `${o["generateName"]}<suffix>`)
    }
    for (const v of Object.values(o)) generatedNames(v, into)
  }
}

/**
 * The deployment controller's pod-template-hash (a hash of Go's printout of the template, in the ReplicaSets' names and
 * labels): by the order each first appears.
 */
const templateHashes = (value: unknown, into: Map<string, string>): void => {
  if (Array.isArray(value)) for (const v of value) templateHashes(v, into)
  else if (value !== null && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) {
      if (k === "pod-template-hash" && typeof v === "string" && v !== "" && !into.has(v)) {
        into.set(v, `<hash${[...into.values()].filter((p) => p.startsWith("<hash")).length}>`)
      } else templateHashes(v, into)
    }
  }
}

const string = (s: string, rvs: Map<string, string>, names: Map<string, string>): string => {
  let out = s.replace(pem, "<pem>").replace(/kube-api-access-[a-z0-9]{5}/g, "kube-api-access-<suffix>").replace(jwt, "<jwt>").replace(uuid, "<uid>").replace(rfc3339, "<time>")
  for (const [name, placeholder] of names) out = out.replaceAll(name, placeholder)
  for (const [rv, placeholder] of rvs) if (out === rv) return placeholder
  // a message that quotes a resourceVersion ("the ResourceVersion in record (123)")
  if (/resource ?version/i.test(out)) {
    for (const [rv, placeholder] of rvs) out = out.replace(new RegExp(`\\b${rv}\\b`, "g"), placeholder)
  }
  return out
}

const volatileKeys = new Set(["uid", "creationTimestamp", "deletionTimestamp", "time", "lastTransitionTime"])

const walk = (value: unknown, rvs: Map<string, string>, names: Map<string, string>, key?: string): unknown => {
  if (typeof value === "string") {
    if (key === "resourceVersion") return rvs.get(value) ?? (value === "" ? "" : "<rv?>")
    if (key === "continue") return value === "" ? "" : "<continue>"
    if (key === "caBundle" || key === "ca.crt" || key === "token" || key === "certificate") return "<bytes>"
    if (key === "podIP" || key === "hostIP" || key === "ip" || key === "clusterIP") return "<ip>"
    if (volatileKeys.has(key ?? "")) return `<${key}>`
    return string(value, rvs, names)
  }
  if (Array.isArray(value)) {
    if (key === "clusterIPs" || key === "podIPs" || key === "hostIPs") return value.map(() => "<ip>")
    return value.map((v) => walk(v, rvs, names))
  }
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [string(k, rvs, names), walk(v, rvs, names, k)])
    )
  }
  return value
}

/** The parts of an answer a step compares: dotted paths, applied to each element of an array on the way. */
const project = (value: unknown, path: ReadonlyArray<string>): unknown => {
  if (path.length === 0) return value
  if (Array.isArray(value)) return value.map((v) => project(v, path))
  if (value === null || typeof value !== "object") return undefined
  const [head, ...rest] = path
  return { [head!]: project((value as Record<string, unknown>)[head!], rest) }
}

const merge = (a: unknown, b: unknown): unknown => {
  if (a === undefined) return b
  if (Array.isArray(a) && Array.isArray(b)) return a.map((v, i) => merge(v, b[i]))
  if (a !== null && b !== null && typeof a === "object" && typeof b === "object") {
    const out: Record<string, unknown> = { ...(a as Record<string, unknown>) }
    for (const [k, v] of Object.entries(b)) out[k] = merge(out[k], v)
    return out
  }
  return a
}

/** A Status is compared whole; any other body by its picked paths. */
export const pick = (body: unknown, paths: ReadonlyArray<string>): unknown =>
  body !== null && typeof body === "object" && (body as { kind?: string }).kind === "Status"
    ? body
    : paths.reduce<unknown>((acc, path) => merge(acc, project(body, segments(path))), undefined)

/** A picked path's keys: split at dots, but a `[key.with.dots]` (an OpenAPI definition's name) is one key. */
const segments = (path: string): Array<string> =>
  (path.match(/\[[^\]]*\]|[^.]+/g) ?? []).map((s) => s.startsWith("[") ? s.slice(1, -1) : s)

/** A Table's age cells ("0s", "3s") differ by when each server was asked. */
const ages = (body: unknown): unknown => {
  const table = body as { kind?: string; rows?: Array<{ cells?: Array<unknown> }> } | undefined
  if (table?.kind !== "Table" || !Array.isArray(table.rows)) return body
  return {
    ...table,
    rows: table.rows.map((row) => ({
      ...row,
      cells: row.cells?.map((c) =>
        typeof c !== "string" ? c : /^\d+(s|m\d*s?)$/.test(c) ? "<age>" : /^\d+\.\d+\.\d+\.\d+$/.test(c) ? "<ip>" : c
      )
    }))
  }
}

export interface StepView {
  readonly picked?: ReadonlyArray<string> | undefined
  readonly statusOnly?: boolean | undefined
}

/** A scenario's observations, normalised for comparison. */
export const normalise = (observed: ReadonlyArray<Observed>, views: ReadonlyArray<StepView>): unknown => {
  const viewed = observed.map((o, i) => {
    const view = views[i] ?? {}
    const body = view.statusOnly
      ? { reason: (o.body as { reason?: string } | undefined)?.reason }
      : view.picked !== undefined && o.body !== undefined
      ? pick(o.body, view.picked)
      : ages(o.body)
    return {
      status: o.status,
      contentType: o.contentType,
      ...(o.warning === undefined ? {} : { warning: o.warning }),
      ...(o.retryAfter === undefined ? {} : { retryAfter: o.retryAfter }),
      body,
      ...(o.events === undefined
        ? {}
        : { events: view.picked === undefined ? o.events : o.events.map((e) => pick(e, view.picked!)) })
    }
  })
  const all = new Set<string>()
  resourceVersions(viewed, all)
  const rvs = new Map([...all].sort((a, b) => Number(a) - Number(b)).map((rv, i) => [rv, `<rv${i}>`]))
  const names = new Map<string, string>()
  generatedNames(observed, names)
  templateHashes(observed, names)
  return walk(viewed, rvs, names)
}

/** The first differences between two normalised values, as `path: a ≠ b` lines. */
export const differences = (a: unknown, b: unknown, path = "", out: Array<string> = [], limit = 12): Array<string> => {
  if (out.length >= limit) return out
  if (JSON.stringify(a) === JSON.stringify(b)) return out
  if (a !== null && b !== null && typeof a === "object" && typeof b === "object" && Array.isArray(a) === Array.isArray(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)])
    for (const k of keys) {
      differences((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], `${path}/${k}`, out, limit)
    }
    return out
  }
  const show = (v: unknown) => v === undefined ? "(absent)" : JSON.stringify(v).slice(0, 300)
  out.push(`${path || "/"}: real ${show(a)} ≠ fake ${show(b)}`)
  return out
}

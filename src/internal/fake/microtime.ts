/**
 * What the fake needs for the controller runtime: it serves Leases
 * (coordination.k8s.io/v1) and events.k8s.io/v1 Events, and it is as strict as the real
 * API server about their MicroTime fields: RFC 3339 with exactly six fractional digits,
 * a 400 BadRequest otherwise (Go's `metav1.MicroTime` fails to decode anything else).
 *
 * Hooked into server.ts with two lines: the kinds are added to the registry, and
 * `checkMicroTimes` runs on every object about to be committed.
 *
 * @internal
 */
import type { KindInfo } from "./kinds.js"
import * as Status from "./status.js"

const allVerbs = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]

const kind = (group: string, kindName: string, plural: string, fieldSelectors: ReadonlyArray<string>): KindInfo => ({
  group,
  versions: ["v1"],
  kind: kindName,
  listKind: `${kindName}List`,
  plural,
  singular: kindName.toLowerCase(),
  namespaced: true,
  shortNames: kindName === "Event" ? ["ev"] : [],
  verbs: allVerbs,
  subresources: [],
  custom: false,
  hasStatus: false,
  fieldSelectors,
  nameRule: "subdomain"
})

/** Leases and events.k8s.io Events. @internal */
export const kinds: ReadonlyArray<KindInfo> = [
  kind("coordination.k8s.io", "Lease", "leases", []),
  kind("events.k8s.io", "Event", "events", [
    "regarding.kind",
    "regarding.namespace",
    "regarding.name",
    "regarding.uid",
    "reason",
    "reportingController",
    "type"
  ])
]

const microTime = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}(Z|[+-]\d{2}:\d{2})$/

/** The MicroTime fields of each kind, as paths from the object's root. */
const fields: Record<string, ReadonlyArray<ReadonlyArray<string>>> = {
  "coordination.k8s.io/Lease": [["spec", "acquireTime"], ["spec", "renewTime"]],
  "events.k8s.io/Event": [["eventTime"], ["series", "lastObservedTime"]],
  "/Event": [["eventTime"]]
}

const at = (obj: unknown, path: ReadonlyArray<string>): unknown => {
  let value = obj
  for (const key of path) {
    if (typeof value !== "object" || value === null) return undefined
    value = (value as Record<string, unknown>)[key]
  }
  return value
}

/** Throws a 400 StatusError when a MicroTime field of the object is malformed. @internal */
export const checkMicroTimes = (kindInfo: Pick<KindInfo, "group" | "kind">, obj: unknown): void => {
  for (const path of fields[`${kindInfo.group}/${kindInfo.kind}`] ?? []) {
    const value = at(obj, path)
    if (value === undefined || value === null) continue
    if (typeof value !== "string" || !microTime.test(value)) {
      throw Status.badRequest(
        `${kindInfo.kind} in version "v1" cannot be handled as a ${kindInfo.kind}: unable to decode ${
          path.join(".")
        }: parsing time ${JSON.stringify(value)} as "2006-01-02T15:04:05.000000Z07:00": cannot parse as RFC 3339 with microseconds`
      )
    }
  }
}

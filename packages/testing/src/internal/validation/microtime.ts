/**
 * The fake is as strict as the real API server about MicroTime fields (Lease
 * `acquireTime`/`renewTime`, LeaseCandidate `pingTime`/`renewTime`, an Event's `eventTime`
 * and `series.lastObservedTime`, in both its APIs): RFC 3339 with exactly six
 * fractional digits, a 400 BadRequest otherwise (Go's `metav1.MicroTime` fails to decode
 * anything else); a valid one is stored as the server writes it back, in UTC
 * (`...T10:00:00.123456+02:00` is `...T08:00:00.123456Z`). `checkMicroTimes` runs on every
 * object the fake is about to write.
 *
 * @internal
 */
import type { KindInfo } from "../store/kinds.js"
import * as Status from "../serve/statusBodies.js"

const microTime = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}(Z|[+-]\d{2}:\d{2})$/

/** The MicroTime fields of each kind, as paths from the object's root. */
const fields: Record<string, ReadonlyArray<ReadonlyArray<string>>> = {
  "coordination.k8s.io/Lease": [["spec", "acquireTime"], ["spec", "renewTime"]],
  "coordination.k8s.io/LeaseCandidate": [["spec", "pingTime"], ["spec", "renewTime"]],
  "events.k8s.io/Event": [["eventTime"], ["series", "lastObservedTime"]],
  "/Event": [["eventTime"], ["series", "lastObservedTime"]]
}

/** The object holding the field at a path (and the field's name), when there is one. */
const holder = (obj: unknown, path: ReadonlyArray<string>): Record<string, unknown> | undefined => {
  let value = obj
  for (const key of path.slice(0, -1)) {
    if (typeof value !== "object" || value === null) return undefined
    value = (value as Record<string, unknown>)[key]
  }
  return typeof value === "object" && value !== null ? (value as Record<string, unknown>) : undefined
}

/** A valid MicroTime in UTC, its six digits kept (Date keeps only milliseconds). */
const inUtc = (value: string): string => {
  if (value.endsWith("Z")) return value
  const fraction = value.slice(20, 26)
  const whole = Date.parse(`${value.slice(0, 19)}${value.slice(26)}`)
  return `${new Date(whole).toISOString().slice(0, 19)}.${fraction}Z`
}

/**
 * Throws a 400 StatusError when a MicroTime field of the object is malformed, and puts
 * the others in UTC.
 *
 * @internal
 */
export const checkMicroTimes = (kindInfo: Pick<KindInfo, "group" | "kind">, obj: unknown): void => {
  for (const path of fields[`${kindInfo.group}/${kindInfo.kind}`] ?? []) {
    const parent = holder(obj, path)
    const key = path[path.length - 1]!
    const value = parent?.[key]
    if (value === undefined || value === null) continue
    if (typeof value !== "string" || !microTime.test(value)) {
      const apiVersion = typeof (obj as { apiVersion?: unknown }).apiVersion === "string"
        ? (obj as { apiVersion: string }).apiVersion
        : "v1"
      const version = JSON.stringify(apiVersion.slice(apiVersion.indexOf("/") + 1))
      throw Status.badRequest(
        `${kindInfo.kind} in version ${version} cannot be handled as a ${kindInfo.kind}: unable to decode ` +
          `${path.join(".")}: parsing time ${JSON.stringify(value)} as "2006-01-02T15:04:05.000000Z07:00": cannot ` +
          `parse as RFC 3339 with microseconds`
      )
    }
    parent![key] = inUtc(value)
  }
}

/**
 * The fake is as strict as the real API server about MicroTime fields (Lease
 * `acquireTime`/`renewTime`, events.k8s.io `eventTime`): RFC 3339 with exactly six
 * fractional digits, a 400 BadRequest otherwise (Go's `metav1.MicroTime` fails to decode
 * anything else). `checkMicroTimes` runs on every object the fake is about to write.
 *
 * @internal
 */
import type { KindInfo } from "./kinds.js"
import * as Status from "./status.js"

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

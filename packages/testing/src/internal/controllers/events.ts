/**
 * Events the controllers and the scheduler record, in the two shapes kube-apiserver stores
 * (one resource, read as core v1 or events.k8s.io/v1): the old recorder's (the
 * controller-manager's controllers: `count`, `firstTimestamp`, `lastTimestamp`, `source`)
 * and the events.k8s.io recorder's (the scheduler: `eventTime`, `action`, `reportingInstance`,
 * no count or timestamps). Named `<object>.<16 hex digits>` as client-go names them.
 *
 * @internal
 */
import { randomBytes } from "node:crypto"
import type { FakeState } from "../store/state.js"
import type { Entry } from "../store/store.js"
import { builtinKind, createObject } from "./api.js"

/** Who records an event, and with which recorder. @internal */
export interface Reporter {
  readonly component: string
  /** The events.k8s.io recorder (the scheduler's): eventTime and action, no count. */
  readonly action?: string | undefined
}

/** Records an event about `object` (an entry of the store). @internal */
export const recordEvent = (
  state: FakeState,
  object: Entry,
  reporter: Reporter,
  event: { readonly type: "Normal" | "Warning"; readonly reason: string; readonly message: string }
): void => {
  const kind = builtinKind(state, "", "v1", "events")
  const namespace = object.namespace === "" ? "default" : object.namespace
  const at = state.now()
  const involvedObject = {
    apiVersion: object.obj.apiVersion,
    kind: object.obj.kind,
    name: object.name,
    ...(object.namespace === "" ? {} : { namespace: object.namespace }),
    resourceVersion: (object.obj.metadata as { resourceVersion?: string }).resourceVersion,
    uid: object.uid
  }
  const shape = reporter.action === undefined ?
    {
      count: 1,
      firstTimestamp: at,
      lastTimestamp: at,
      source: { component: reporter.component },
      reportingComponent: reporter.component,
      reportingInstance: ""
    } :
    {
      // a MicroTime, as the events.k8s.io recorder writes it
      eventTime: new Date(state.clock.now()).toISOString().replace(/Z$/, "000Z"),
      action: reporter.action,
      source: {},
      reportingComponent: reporter.component,
      reportingInstance: `${reporter.component}-fake`
    }
  createObject(state, kind, {
    apiVersion: "v1",
    kind: "Event",
    metadata: { name: `${object.name}.${randomBytes(8).toString("hex")}`, namespace },
    involvedObject,
    type: event.type,
    reason: event.reason,
    message: event.message,
    ...shape
  })
}

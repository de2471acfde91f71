/**
 * LOCAL KINDS, TO SWITCH TO THE GENERATED ONES AT MERGE: Leases
 * (coordination.k8s.io/v1) and events.k8s.io/v1 Events, declared here with just the
 * fields the controller runtime reads and writes, until `src/resources/` generates every
 * kind from the OpenAPI spec. Replace `Leases` / `Lease` and `EventsV1` / `EventV1` with
 * the generated Resources and Schemas (MicroTime fields are plain strings there too).
 *
 * @internal
 */
import * as Schema from "effect/Schema"
import * as Resource from "../../Resource.js"
import { ObjectMeta } from "../../resources/Meta.js"

/** coordination.k8s.io/v1 Lease (LOCAL: switch to the generated one). @internal */
export const Lease = Schema.Struct({
  apiVersion: Schema.optional(Schema.String),
  kind: Schema.optional(Schema.String),
  metadata: Schema.optional(ObjectMeta),
  spec: Schema.optional(Schema.Struct({
    holderIdentity: Schema.optional(Schema.NullOr(Schema.String)),
    leaseDurationSeconds: Schema.optional(Schema.NullOr(Schema.Number)),
    /** MicroTime */
    acquireTime: Schema.optional(Schema.NullOr(Schema.String)),
    /** MicroTime */
    renewTime: Schema.optional(Schema.NullOr(Schema.String)),
    leaseTransitions: Schema.optional(Schema.NullOr(Schema.Number)),
    strategy: Schema.optional(Schema.String),
    preferredHolder: Schema.optional(Schema.String)
  }))
}).annotations({ identifier: "Lease" })

/** @internal */
export type Lease = typeof Lease.Type

/** (LOCAL: switch to the generated one.) @internal */
export const Leases = Resource.make({
  apiVersion: "coordination.k8s.io/v1",
  kind: "Lease",
  plural: "leases",
  namespaced: true,
  schema: Lease
})

const ObjectReference = Schema.Struct({
  apiVersion: Schema.optional(Schema.String),
  kind: Schema.optional(Schema.String),
  name: Schema.optional(Schema.String),
  namespace: Schema.optional(Schema.String),
  uid: Schema.optional(Schema.String),
  resourceVersion: Schema.optional(Schema.String),
  fieldPath: Schema.optional(Schema.String)
})

/** events.k8s.io/v1 Event (LOCAL: switch to the generated one). @internal */
export const EventV1 = Schema.Struct({
  apiVersion: Schema.optional(Schema.String),
  kind: Schema.optional(Schema.String),
  metadata: Schema.optional(ObjectMeta),
  /** MicroTime */
  eventTime: Schema.NullOr(Schema.String),
  series: Schema.optional(Schema.Struct({
    count: Schema.Number,
    /** MicroTime */
    lastObservedTime: Schema.String
  })),
  reportingController: Schema.optional(Schema.String),
  reportingInstance: Schema.optional(Schema.String),
  action: Schema.optional(Schema.String),
  reason: Schema.optional(Schema.String),
  note: Schema.optional(Schema.String),
  type: Schema.optional(Schema.String),
  regarding: Schema.optional(ObjectReference),
  related: Schema.optional(ObjectReference)
}).annotations({ identifier: "EventV1" })

/** @internal */
export type EventV1 = typeof EventV1.Type

/** (LOCAL: switch to the generated one.) @internal */
export const EventsV1 = Resource.make({
  apiVersion: "events.k8s.io/v1",
  kind: "Event",
  plural: "events",
  namespaced: true,
  schema: EventV1
})

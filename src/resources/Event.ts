/**
 * Events (core `v1`, namespaced): what happened to an object, as reported by a
 * component (scheduler, kubelet, controllers).
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import * as Resource from "../Resource.js"
import { NullableTime, openEnum } from "./internal/schema.js"
import { ObjectMeta, ObjectReference } from "./Meta.js"

/**
 * The component (and host) that reported an event.
 *
 * @since 0.1.0
 * @category schemas
 */
export const EventSource = Schema.Struct({
  component: Schema.optional(Schema.String),
  host: Schema.optional(Schema.String)
}).annotations({ identifier: "EventSource" })

/**
 * @since 0.1.0
 * @category models
 */
export type EventSource = typeof EventSource.Type

/**
 * An event. Its timestamps may be `null`: events recorded through `events.k8s.io` carry
 * `eventTime` and leave `firstTimestamp`/`lastTimestamp` null, older ones the reverse.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Event = Schema.Struct({
  apiVersion: Schema.optional(Schema.String),
  kind: Schema.optional(Schema.String),
  metadata: Schema.optional(ObjectMeta),
  involvedObject: ObjectReference,
  reason: Schema.optional(Schema.String),
  message: Schema.optional(Schema.String),
  type: Schema.optional(openEnum("Normal", "Warning")),
  count: Schema.optional(Schema.Number),
  firstTimestamp: Schema.optional(NullableTime),
  lastTimestamp: Schema.optional(NullableTime),
  eventTime: Schema.optional(NullableTime),
  source: Schema.optional(EventSource),
  reportingComponent: Schema.optional(Schema.String),
  reportingInstance: Schema.optional(Schema.String),
  action: Schema.optional(Schema.String),
  related: Schema.optional(ObjectReference),
  series: Schema.optional(
    Schema.Struct({
      count: Schema.optional(Schema.Number),
      lastObservedTime: Schema.optional(NullableTime)
    })
  )
}).annotations({ identifier: "Event" })

/**
 * @since 0.1.0
 * @category models
 */
export type Event = typeof Event.Type

/**
 * Events: core `v1`, namespaced.
 *
 * @since 0.1.0
 * @category resources
 */
export const Events = Resource.make({
  apiVersion: "v1",
  kind: "Event",
  plural: "events",
  namespaced: true,
  schema: Event
})

/**
 * Schemas shared by every kind that the spec does not define as such: the list and
 * watch-event envelopes of any kind, one condition type for the conditions of every
 * kind, and int-or-string. The object and list metadata, `Status`, owner references and
 * label selectors are generated with the rest (`meta/v1`).
 *
 * None of these Schemas transforms anything: the decoded type is the JSON type.
 * Timestamps stay strings and quantities stay as sent, so an object read from the server
 * can be written back unchanged. (The library checks objects in place and keeps the fields
 * a Schema does not name; `effect/Schema`'s own decoders drop them.)
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import * as internal from "./internal/schema.js"
import { NullableTime, openEnum } from "./internal/schema.js"
import { ListMeta, Status } from "./generated.js"

/**
 * An int-or-string field (`targetPort`, `maxSurge`, a probe's `port`): `8080` or `"http"`, `"25%"`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const IntOrString: Schema.Codec<number | string> = internal.IntOrString

/**
 * @since 0.1.0
 * @category models
 */
export type IntOrString = number | string

/**
 * A condition in an object's status. One Schema serves the conditions of every kind
 * here (Pod, Job, Deployment, Namespace, Service and `metav1.Condition`), so it has
 * all of their timestamps; those the API serializes as `null` when unset may be `null`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const StatusCondition = Schema.Struct({
  type: Schema.String,
  status: openEnum("True", "False", "Unknown"),
  lastProbeTime: Schema.optional(NullableTime),
  lastTransitionTime: Schema.optional(NullableTime),
  lastUpdateTime: Schema.optional(NullableTime),
  reason: Schema.optional(Schema.String),
  message: Schema.optional(Schema.String),
  observedGeneration: Schema.optional(Schema.Number)
}).annotate({ identifier: "StatusCondition" })

/**
 * @since 0.1.0
 * @category models
 */
export type StatusCondition = typeof StatusCondition.Type

/**
 * The Schema of a list of objects as the server returns it (`PodList`, ...). Items of a
 * list may lack `apiVersion` and `kind`; the item Schemas allow that.
 *
 * @example
 * ```ts
 * import * as Schema from "effect/Schema"
 * import { ObjectList, Pod } from "effect-kube"
 *
 * const decodePodList = Schema.decodeUnknownSync(ObjectList(Pod))
 * ```
 * @since 0.1.0
 * @category constructors
 */
export const ObjectList = <Item extends Schema.Top>(item: Item) =>
  Schema.Struct({
    apiVersion: Schema.optional(Schema.String),
    kind: Schema.optional(Schema.String),
    metadata: ListMeta,
    items: Schema.Array(item)
  })

/**
 * A decoded list of objects of type `A`.
 *
 * @since 0.1.0
 * @category models
 */
export interface ObjectList<A> {
  readonly apiVersion?: string | undefined
  readonly kind?: string | undefined
  readonly metadata: ListMeta
  readonly items: ReadonlyArray<A>
}

/**
 * The type of a watch event that carries an object. A `BOOKMARK` carries an object
 * with only `metadata.resourceVersion` (and annotations) set.
 *
 * @since 0.1.0
 * @category models
 */
export type WatchEventType = "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK"

/**
 * The Schema of one event of a watch stream: an object event, or an `ERROR` carrying a
 * `Status` (e.g. 410 Gone when the resourceVersion is too old).
 *
 * @example
 * ```ts
 * import * as Schema from "effect/Schema"
 * import { Pod, WatchEvent } from "effect-kube"
 *
 * const decodeEvent = Schema.decodeUnknownSync(WatchEvent(Pod))
 * ```
 * @since 0.1.0
 * @category constructors
 */
export const WatchEvent = <Item extends Schema.Top>(item: Item) =>
  Schema.Union([
    Schema.Struct({
      type: Schema.Literals(["ADDED", "MODIFIED", "DELETED", "BOOKMARK"]),
      object: item
    }),
    Schema.Struct({
      type: Schema.Literal("ERROR"),
      object: Status
    })
  ])

/**
 * A decoded watch event for objects of type `A`.
 *
 * @since 0.1.0
 * @category models
 */
export type WatchEvent<A> =
  | { readonly type: WatchEventType; readonly object: A }
  | { readonly type: "ERROR"; readonly object: Status }

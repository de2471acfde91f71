/**
 * Schemas shared by every kind: object and list metadata, the API's `Status`, owner
 * references, label selectors, conditions, and the list and watch-event envelopes.
 *
 * None of these Schemas transforms anything: the decoded type is the JSON type.
 * Timestamps stay strings, quantities stay as sent, and fields a Schema does not name
 * survive a decode with `{ onExcessProperty: "preserve" }`, so an object read from the
 * server can be written back unchanged.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { NullableTime, openEnum, StringMap, Time } from "./internal/schema.js"

/**
 * An int-or-string field (`targetPort`, `maxSurge`, a probe's `port`): `8080` or `"http"`, `"25%"`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const IntOrString = Schema.Union(Schema.Number, Schema.String).annotations({ identifier: "IntOrString" })

/**
 * @since 0.1.0
 * @category models
 */
export type IntOrString = typeof IntOrString.Type

/**
 * A resource quantity (`"500m"`, `"1Gi"`, `2`), kept as sent: not parsed into a number.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Quantity = Schema.Union(Schema.String, Schema.Number).annotations({ identifier: "Quantity" })

/**
 * @since 0.1.0
 * @category models
 */
export type Quantity = typeof Quantity.Type

/**
 * A reference from an object to its owner, used for garbage collection.
 *
 * @since 0.1.0
 * @category schemas
 */
export const OwnerReference = Schema.Struct({
  apiVersion: Schema.String,
  kind: Schema.String,
  name: Schema.String,
  uid: Schema.String,
  controller: Schema.optional(Schema.Boolean),
  blockOwnerDeletion: Schema.optional(Schema.Boolean)
}).annotations({ identifier: "OwnerReference" })

/**
 * @since 0.1.0
 * @category models
 */
export type OwnerReference = typeof OwnerReference.Type

/**
 * One entry of `metadata.managedFields`: which field manager owns which fields.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ManagedFieldsEntry = Schema.Struct({
  manager: Schema.optional(Schema.String),
  operation: Schema.optional(openEnum("Apply", "Update")),
  apiVersion: Schema.optional(Schema.String),
  time: Schema.optional(Time),
  fieldsType: Schema.optional(Schema.String),
  fieldsV1: Schema.optional(Schema.Unknown),
  subresource: Schema.optional(Schema.String)
}).annotations({ identifier: "ManagedFieldsEntry" })

/**
 * @since 0.1.0
 * @category models
 */
export type ManagedFieldsEntry = typeof ManagedFieldsEntry.Type

/**
 * The metadata of every object. `creationTimestamp` may be `null`: manifests written by
 * `kubectl` and the templates inside Jobs and Deployments carry `creationTimestamp: null`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ObjectMeta = Schema.Struct({
  name: Schema.optional(Schema.String),
  namespace: Schema.optional(Schema.String),
  uid: Schema.optional(Schema.String),
  resourceVersion: Schema.optional(Schema.String),
  creationTimestamp: Schema.optional(NullableTime),
  labels: Schema.optional(StringMap),
  annotations: Schema.optional(StringMap),
  generateName: Schema.optional(Schema.String),
  ownerReferences: Schema.optional(Schema.Array(OwnerReference)),
  managedFields: Schema.optional(Schema.Array(ManagedFieldsEntry)),
  generation: Schema.optional(Schema.Number),
  finalizers: Schema.optional(Schema.Array(Schema.String)),
  deletionTimestamp: Schema.optional(Time),
  deletionGracePeriodSeconds: Schema.optional(Schema.Number),
  selfLink: Schema.optional(Schema.String)
}).annotations({ identifier: "ObjectMeta" })

/**
 * @since 0.1.0
 * @category models
 */
export type ObjectMeta = typeof ObjectMeta.Type

/**
 * The metadata of a list: the `resourceVersion` to watch from and the `continue` token
 * of the next page.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ListMeta = Schema.Struct({
  resourceVersion: Schema.optional(Schema.String),
  continue: Schema.optional(Schema.String),
  remainingItemCount: Schema.optional(Schema.Number),
  selfLink: Schema.optional(Schema.String)
}).annotations({ identifier: "ListMeta" })

/**
 * @since 0.1.0
 * @category models
 */
export type ListMeta = typeof ListMeta.Type

/**
 * One cause of a failure in a `Status`, e.g. the field that failed validation.
 *
 * @since 0.1.0
 * @category schemas
 */
export const StatusCause = Schema.Struct({
  reason: Schema.optional(Schema.String),
  message: Schema.optional(Schema.String),
  field: Schema.optional(Schema.String)
}).annotations({ identifier: "StatusCause" })

/**
 * @since 0.1.0
 * @category models
 */
export type StatusCause = typeof StatusCause.Type

/**
 * What a `Status` is about: the object it names and the causes of a failure.
 *
 * @since 0.1.0
 * @category schemas
 */
export const StatusDetails = Schema.Struct({
  name: Schema.optional(Schema.String),
  group: Schema.optional(Schema.String),
  kind: Schema.optional(Schema.String),
  uid: Schema.optional(Schema.String),
  causes: Schema.optional(Schema.Array(StatusCause)),
  retryAfterSeconds: Schema.optional(Schema.Number)
}).annotations({ identifier: "StatusDetails" })

/**
 * @since 0.1.0
 * @category models
 */
export type StatusDetails = typeof StatusDetails.Type

/**
 * The API's `Status` object: the body of every non-2xx answer, of some deletes, and of
 * a watch's `ERROR` event. Its type fits `Errors.Status`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Status = Schema.Struct({
  kind: Schema.optional(Schema.Literal("Status")),
  apiVersion: Schema.optional(Schema.String),
  metadata: Schema.optional(ListMeta),
  status: Schema.optional(openEnum("Success", "Failure")),
  message: Schema.optional(Schema.String),
  reason: Schema.optional(Schema.String),
  details: Schema.optional(StatusDetails),
  code: Schema.optional(Schema.Number)
}).annotations({ identifier: "Status" })

/**
 * @since 0.1.0
 * @category models
 */
export type Status = typeof Status.Type

/**
 * One requirement of a label selector: `key` `In`, `NotIn`, `Exists` or `DoesNotExist` `values`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const LabelSelectorRequirement = Schema.Struct({
  key: Schema.String,
  operator: openEnum("In", "NotIn", "Exists", "DoesNotExist"),
  values: Schema.optional(Schema.Array(Schema.String))
}).annotations({ identifier: "LabelSelectorRequirement" })

/**
 * @since 0.1.0
 * @category models
 */
export type LabelSelectorRequirement = typeof LabelSelectorRequirement.Type

/**
 * A structured label selector, as in a Job's or a Deployment's `spec.selector`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const LabelSelector = Schema.Struct({
  matchLabels: Schema.optional(StringMap),
  matchExpressions: Schema.optional(Schema.Array(LabelSelectorRequirement))
}).annotations({ identifier: "LabelSelector" })

/**
 * @since 0.1.0
 * @category models
 */
export type LabelSelector = typeof LabelSelector.Type

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
}).annotations({ identifier: "StatusCondition" })

/**
 * @since 0.1.0
 * @category models
 */
export type StatusCondition = typeof StatusCondition.Type

/**
 * A reference to an object in the same namespace, by name (`imagePullSecrets`).
 *
 * @since 0.1.0
 * @category schemas
 */
export const LocalObjectReference = Schema.Struct({
  name: Schema.optional(Schema.String)
}).annotations({ identifier: "LocalObjectReference" })

/**
 * @since 0.1.0
 * @category models
 */
export type LocalObjectReference = typeof LocalObjectReference.Type

/**
 * A reference to any object, optionally to a field inside it (an Event's `involvedObject`).
 *
 * @since 0.1.0
 * @category schemas
 */
export const ObjectReference = Schema.Struct({
  apiVersion: Schema.optional(Schema.String),
  kind: Schema.optional(Schema.String),
  namespace: Schema.optional(Schema.String),
  name: Schema.optional(Schema.String),
  uid: Schema.optional(Schema.String),
  resourceVersion: Schema.optional(Schema.String),
  fieldPath: Schema.optional(Schema.String)
}).annotations({ identifier: "ObjectReference" })

/**
 * @since 0.1.0
 * @category models
 */
export type ObjectReference = typeof ObjectReference.Type

/**
 * The Schema of a list of objects as the server returns it (`PodList`, ...). Items of a
 * list may lack `apiVersion` and `kind`; the item Schemas allow that.
 *
 * @example
 * ```ts
 * import * as Schema from "effect/Schema"
 * import { ObjectList, Pod } from "effect-kube"
 *
 * const decodePodList = Schema.decodeUnknownSync(ObjectList(Pod), { onExcessProperty: "preserve" })
 * ```
 * @since 0.1.0
 * @category constructors
 */
export const ObjectList = <Item extends Schema.Schema.Any>(item: Item) =>
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
 * const decodeEvent = Schema.decodeUnknownSync(WatchEvent(Pod), { onExcessProperty: "preserve" })
 * ```
 * @since 0.1.0
 * @category constructors
 */
export const WatchEvent = <Item extends Schema.Schema.Any>(item: Item) =>
  Schema.Union(
    Schema.Struct({
      type: Schema.Literal("ADDED", "MODIFIED", "DELETED", "BOOKMARK"),
      object: item
    }),
    Schema.Struct({
      type: Schema.Literal("ERROR"),
      object: Status
    })
  )

/**
 * A decoded watch event for objects of type `A`.
 *
 * @since 0.1.0
 * @category models
 */
export type WatchEvent<A> =
  | { readonly type: WatchEventType; readonly object: A }
  | { readonly type: "ERROR"; readonly object: Status }

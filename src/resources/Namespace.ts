/**
 * Namespaces (`v1`, cluster-scoped).
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import * as Resource from "../Resource.js"
import { openEnum } from "./internal/schema.js"
import { StatusCondition, ObjectMeta } from "./Meta.js"

/**
 * The desired state of a namespace: the finalizers that must run before it is removed.
 *
 * @since 0.1.0
 * @category schemas
 */
export const NamespaceSpec = Schema.Struct({
  finalizers: Schema.optional(Schema.Array(Schema.String))
}).annotations({ identifier: "NamespaceSpec" })

/**
 * @since 0.1.0
 * @category models
 */
export type NamespaceSpec = typeof NamespaceSpec.Type

/**
 * The observed state of a namespace: `Active`, or `Terminating` while it is deleted.
 *
 * @since 0.1.0
 * @category schemas
 */
export const NamespaceStatus = Schema.Struct({
  phase: Schema.optional(openEnum("Active", "Terminating")),
  conditions: Schema.optional(Schema.Array(StatusCondition))
}).annotations({ identifier: "NamespaceStatus" })

/**
 * @since 0.1.0
 * @category models
 */
export type NamespaceStatus = typeof NamespaceStatus.Type

/**
 * A namespace.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Namespace = Schema.Struct({
  apiVersion: Schema.optional(Schema.String),
  kind: Schema.optional(Schema.String),
  metadata: Schema.optional(ObjectMeta),
  spec: Schema.optional(NamespaceSpec),
  status: Schema.optional(NamespaceStatus)
}).annotations({ identifier: "Namespace" })

/**
 * @since 0.1.0
 * @category models
 */
export type Namespace = typeof Namespace.Type

/**
 * Namespaces: `v1`, cluster-scoped.
 *
 * @since 0.1.0
 * @category resources
 */
export const Namespaces = Resource.make({
  apiVersion: "v1",
  kind: "Namespace",
  plural: "namespaces",
  namespaced: false,
  schema: Namespace
})

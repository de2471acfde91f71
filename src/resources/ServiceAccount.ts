/**
 * ServiceAccounts (`v1`, namespaced): identities for processes that run in pods.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import * as Resource from "../Resource.js"
import { LocalObjectReference, ObjectMeta, ObjectReference } from "./Meta.js"

/**
 * A service account.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ServiceAccount = Schema.Struct({
  apiVersion: Schema.optional(Schema.String),
  kind: Schema.optional(Schema.String),
  metadata: Schema.optional(ObjectMeta),
  secrets: Schema.optional(Schema.Array(ObjectReference)),
  imagePullSecrets: Schema.optional(Schema.Array(LocalObjectReference)),
  automountServiceAccountToken: Schema.optional(Schema.Boolean)
}).annotations({ identifier: "ServiceAccount" })

/**
 * @since 0.1.0
 * @category models
 */
export type ServiceAccount = typeof ServiceAccount.Type

/**
 * ServiceAccounts: `v1`, namespaced.
 *
 * @since 0.1.0
 * @category resources
 */
export const ServiceAccounts = Resource.make({
  apiVersion: "v1",
  kind: "ServiceAccount",
  plural: "serviceaccounts",
  namespaced: true,
  schema: ServiceAccount
})

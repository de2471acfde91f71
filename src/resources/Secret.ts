/**
 * Secrets (`v1`, namespaced).
 *
 * `data` values are base64 strings and stay encoded: decoding them here would make the
 * decoded object differ from what the server sent, and would spread plain secret values
 * into every place an object is printed. Decode the one value you need, when you need it.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import * as Resource from "../Resource.js"
import { openEnum, StringMap } from "./internal/schema.js"
import { ObjectMeta } from "./Meta.js"

/**
 * A Secret. `data` holds base64 strings (kept encoded); `stringData` is write-only
 * plain text that the server merges into `data`.
 *
 * @example
 * ```ts
 * import * as Encoding from "effect/Encoding"
 *
 * const password = Encoding.decodeBase64String(secret.data?.["password"] ?? "")
 * ```
 * @since 0.1.0
 * @category schemas
 */
export const Secret = Schema.Struct({
  apiVersion: Schema.optional(Schema.String),
  kind: Schema.optional(Schema.String),
  metadata: Schema.optional(ObjectMeta),
  type: Schema.optional(
    openEnum(
      "Opaque",
      "kubernetes.io/service-account-token",
      "kubernetes.io/dockerconfigjson",
      "kubernetes.io/dockercfg",
      "kubernetes.io/basic-auth",
      "kubernetes.io/ssh-auth",
      "kubernetes.io/tls",
      "bootstrap.kubernetes.io/token"
    )
  ),
  data: Schema.optional(StringMap),
  stringData: Schema.optional(StringMap),
  immutable: Schema.optional(Schema.Boolean)
}).annotations({ identifier: "Secret" })

/**
 * @since 0.1.0
 * @category models
 */
export type Secret = typeof Secret.Type

/**
 * Secrets: `v1`, namespaced.
 *
 * @since 0.1.0
 * @category resources
 */
export const Secrets = Resource.make({
  apiVersion: "v1",
  kind: "Secret",
  plural: "secrets",
  namespaced: true,
  schema: Secret
})

/**
 * ConfigMaps (`v1`, namespaced): configuration as key-value pairs.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import * as Resource from "../Resource.js"
import { StringMap } from "./internal/schema.js"
import { ObjectMeta } from "./Meta.js"

/**
 * A ConfigMap. `binaryData` values are base64 strings, kept encoded.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ConfigMap = Schema.Struct({
  apiVersion: Schema.optional(Schema.String),
  kind: Schema.optional(Schema.String),
  metadata: Schema.optional(ObjectMeta),
  data: Schema.optional(StringMap),
  binaryData: Schema.optional(StringMap),
  immutable: Schema.optional(Schema.Boolean)
}).annotations({ identifier: "ConfigMap" })

/**
 * @since 0.1.0
 * @category models
 */
export type ConfigMap = typeof ConfigMap.Type

/**
 * ConfigMaps: `v1`, namespaced.
 *
 * @since 0.1.0
 * @category resources
 */
export const ConfigMaps = Resource.make({
  apiVersion: "v1",
  kind: "ConfigMap",
  plural: "configmaps",
  namespaced: true,
  schema: ConfigMap
})

/**
 * Building blocks shared by the built-in Schemas. Not part of the public API.
 *
 * Every Schema built from these has the same decoded and encoded type: no
 * transformations, so an object decoded from the server can be sent back as it is.
 */
import * as Schema from "effect/Schema"

/**
 * An RFC 3339 timestamp, kept as the string the server sent (parsing it into a Date
 * would make the encoded and decoded forms differ).
 */
export const Time = Schema.String

/**
 * A timestamp the API serializes from a non-pointer `metav1.Time`: its zero value is
 * sent as `null` (`creationTimestamp: null`, `lastProbeTime: null`, `eventTime: null`).
 */
export const NullableTime = Schema.NullOr(Schema.String)

/**
 * A sub-object that is large and rarely read (affinity, probes, volume sources):
 * checked to be an object, its contents kept as they are.
 */
export const LooseObject = Schema.Record({ key: Schema.String, value: Schema.Unknown })

/** Labels, annotations, selectors, ConfigMap and Secret data. */
export const StringMap = Schema.Record({ key: Schema.String, value: Schema.String })

/**
 * A string field whose well-known values the type suggests while any string decodes:
 * the API adds values over time (`restartPolicy`, `type`, `protocol`), and an older
 * client must not reject an object because of a value it does not know yet.
 */
export const openEnum = <const Values extends ReadonlyArray<string>>(
  ...values: Values
): Schema.Schema<Values[number] | (string & {})> =>
  Schema.String.annotations({
    description: `one of ${values.join(", ")} (other strings are accepted)`
  }) as unknown as Schema.Schema<Values[number] | (string & {})>

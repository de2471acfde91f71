/**
 * `Kube.api(...).table`: a list (or one object) as the server prints it, asked for with
 * `Accept: application/json;as=Table;v=v1;g=meta.k8s.io`: the printer columns of a
 * built-in kind, or a CRD's `additionalPrinterColumns`, and a row of cells per object,
 * decoded into a `Kube.Table`.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { ValidationError } from "../../Errors.js"
import type * as Kube from "../../Kube.js"
import * as Resource from "../../Resource.js"
import * as client from "../client/execute.js"
import { malformed } from "../codec/codec.js"
import { checkName, checkPositive, resolveNamespace, type Target } from "../request/inputChecks.js"
import type { Spec } from "../request/spec.js"
import { nonEmpty } from "../request/verbs.js"

/** The Accept of a Table (v1), with JSON as the fallback of a server that does not print tables. */
export const tableAccept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"

const includeObjects: ReadonlyArray<Kube.TableOptions["includeObject"]> = ["None", "Metadata", "Object", undefined]

const TableSchema = Schema.Struct({
  kind: Schema.Literal("Table"),
  metadata: Schema.optional(Schema.Struct({
    resourceVersion: Schema.optional(Schema.String),
    continue: Schema.optional(Schema.String),
    remainingItemCount: Schema.optional(Schema.Number)
  })),
  columnDefinitions: Schema.Array(Schema.Struct({
    name: Schema.String,
    type: Schema.String,
    format: Schema.optional(Schema.String),
    description: Schema.optional(Schema.String),
    priority: Schema.optional(Schema.Number)
  })),
  rows: Schema.NullOr(Schema.Array(Schema.Struct({
    cells: Schema.Array(Schema.Unknown),
    conditions: Schema.optional(Schema.NullOr(Schema.Array(Schema.Unknown))),
    object: Schema.optional(Schema.Unknown)
  })))
})
const decodeTable = Schema.decodeUnknownOption(TableSchema)

/** The request of a Table: the collection, or one object when `name` is given. */
export const tableRequest = (
  resource: Resource.Info,
  namespace: string | undefined,
  options: Kube.TableOptions
): Spec => ({
  method: "GET",
  path: options.name === undefined
    ? Resource.collectionPath(resource, namespace)
    : Resource.objectPath(resource, namespace, options.name),
  query: {
    labelSelector: nonEmpty(options.labelSelector) ? options.labelSelector : undefined,
    fieldSelector: nonEmpty(options.fieldSelector) ? options.fieldSelector : undefined,
    limit: options.limit,
    continue: options.continue,
    includeObject: options.includeObject
  },
  accept: tableAccept,
  operation: { verb: "table", kind: resource.kind, namespace, name: options.name }
})

/** Lists (or reads one object) as a Table. */
export const table = <A, I>(
  target: Target<A, I>,
  options: Kube.TableOptions = {}
): Effect.Effect<Kube.Table, Kube.Error, Kube.Requirements> =>
  Effect.gen(function*() {
    yield* checkPositive(options.limit, "limit")
    if (!includeObjects.includes(options.includeObject)) {
      return yield* new ValidationError({
        subject: "includeObject",
        detail: `must be "None", "Metadata" or "Object" (got ${JSON.stringify(options.includeObject)})`
      })
    }
    if (options.name !== undefined) yield* checkName(options.name)
    if (options.name !== undefined && options.allNamespaces === true && target.resource.namespaced) {
      return yield* new ValidationError({ subject: "name", detail: "names one object: give its namespace, not allNamespaces" })
    }
    const namespace = yield* resolveNamespace(target, options.allNamespaces)
    const spec = tableRequest(target.resource, namespace, options)
    const json = yield* client.sendJson(spec)
    const decoded = decodeTable(json)
    if (Option.isNone(decoded)) {
      // a server that cannot print (an aggregated API without tables) answers the plain object or list
      return yield* malformed(spec, "expected a meta.k8s.io/v1 Table with columnDefinitions and rows")
    }
    const { columnDefinitions, metadata, rows } = decoded.value
    return {
      apiVersion: "meta.k8s.io/v1",
      kind: "Table",
      metadata: metadata ?? {},
      columnDefinitions: columnDefinitions.map((c) => ({
        name: c.name,
        type: c.type,
        format: c.format ?? "",
        description: c.description ?? "",
        priority: c.priority ?? 0
      })),
      rows: (rows ?? []).map((row) => ({
        cells: row.cells,
        ...(row.conditions !== undefined && row.conditions !== null ? { conditions: row.conditions } : {}),
        ...(row.object !== undefined && row.object !== null ? { object: row.object } : {})
      }))
    }
  })

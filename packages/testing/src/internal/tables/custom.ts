/**
 * Custom resources' Table printers, from their CRD's `additionalPrinterColumns` for the
 * version asked (an Age column when it has none), as apiextensions-apiserver's table
 * convertor builds them: a Name column, then each column's JSONPath result converted to
 * the column's type (`date` as an age, `string` as JSONPath prints it).
 *
 * @internal
 */
import { isObject, type JsonObject } from "../store/json.js"
import { docs } from "./docs.js"
import { humanDuration, printValue } from "./format.js"
import { compile } from "./jsonpath.js"
import { type Column, nameColumnDefinition, type Printer } from "./printers.js"

/** A column as a CRD declares it. */
interface ColumnSpec {
  readonly name: string
  readonly type: string
  readonly format?: string | undefined
  readonly description?: string | undefined
  readonly priority?: number | undefined
  readonly jsonPath: string
}

const ageColumn: ColumnSpec = {
  name: "Age",
  type: "date",
  description: docs["ObjectMeta.creationTimestamp"],
  jsonPath: ".metadata.creationTimestamp"
}

const rfc3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})$/

/** `cellForJSONValue`: a value as a cell of the column's type, `null` when it is not of that type. */
const cellFor = (type: string, value: unknown, now: number): unknown => {
  switch (type) {
    case "integer":
      return typeof value === "number" ? Math.trunc(value) : null
    case "number":
      return typeof value === "number" ? value : null
    case "boolean":
      return typeof value === "boolean" ? value : null
    case "date": {
      if (typeof value !== "string") return null
      if (value === "") return "<unknown>"
      if (!rfc3339.test(value)) return "<invalid>"
      return humanDuration(now - Date.parse(value))
    }
  }
  return null
}

const columnsOf = (crd: JsonObject, version: string): ReadonlyArray<ColumnSpec> => {
  const spec = isObject(crd.spec) ? crd.spec : {}
  const served = (Array.isArray(spec.versions) ? spec.versions : []).find((v) => isObject(v) && v.name === version)
  const declared = isObject(served) && Array.isArray(served.additionalPrinterColumns)
    ? served.additionalPrinterColumns.filter(
      (c): c is ColumnSpec => isObject(c) && typeof c.name === "string" && typeof c.jsonPath === "string"
    )
    : []
  return declared.length > 0 ? declared : [ageColumn]
}

/** The printer of a custom resource whose CRD is `crd` (none for kinds registered without one). @internal */
export const customPrinter = (crd: JsonObject | undefined, version: string): Printer => {
  const specs = crd === undefined ? [ageColumn] : columnsOf(crd, version)
  const columns: Array<Column> = [nameColumnDefinition]
  const paths = specs.map((c) => {
    const path = c.jsonPath.trim()
    columns.push({
      name: c.name,
      type: typeof c.type === "string" ? c.type : "",
      format: typeof c.format === "string" ? c.format : "",
      description: typeof c.description === "string" && c.description !== ""
        ? c.description
        : `Custom resource definition column (in JSONPath format): ${path.startsWith("{") ? path : `{${path}}`}`,
      priority: typeof c.priority === "number" ? c.priority : 0
    })
    return compile(path)
  })
  return {
    columns,
    row: (obj, now) => {
      const metadata = isObject(obj.metadata) ? obj.metadata : {}
      const cells: Array<unknown> = [typeof metadata.name === "string" ? metadata.name : ""]
      paths.forEach((path, i) => {
        const found = path === undefined ? [] : path(obj)
        if (found.length === 0 || found[0] === null) {
          cells.push(null)
          return
        }
        const type = columns[i + 1]!.type
        // a string column prints any value as JSONPath does; the others keep values of their type
        cells.push(type === "string" ? printValue(found[0]) : cellFor(type, found[0], now))
      })
      return { cells }
    }
  }
}

/**
 * The metadata-only answers (`Accept: application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1`,
 * `as=PartialObjectMetadataList` for lists) as the API server gives them: the object's
 * metadata under kind PartialObjectMetadata (List), apiVersion meta.k8s.io/v1. A client
 * that lists plain JSON after them in its Accept gets them all the same.
 *
 * @internal
 */
import type { RawResponse } from "../serve/http.js"

/** The form asked for, if the Accept asks for PartialObjectMetadata. @internal */
export const partialForm = (accept: string | undefined): "object" | "list" | undefined => {
  if (accept === undefined) return undefined
  const first = accept.split(",").map((a) => a.trim()).find((a) => a.includes("as="))
  if (first === undefined || !first.includes("g=meta.k8s.io")) return undefined
  if (first.includes("as=PartialObjectMetadataList")) return "list"
  if (first.includes("as=PartialObjectMetadata")) return "object"
  return undefined
}

type Json = Record<string, unknown>

const partialOf = (object: Json): Json => ({
  kind: "PartialObjectMetadata",
  apiVersion: "meta.k8s.io/v1",
  metadata: object["metadata"] ?? {}
})

/** A JSON answer (an object or a list) cut down to its metadata; Status answers and streams are left. @internal */
export const asPartial = (response: RawResponse, form: "object" | "list"): RawResponse => {
  if (typeof response.body !== "string" || response.status >= 300) return response
  let body: Json
  try {
    body = JSON.parse(response.body) as Json
  } catch {
    return response
  }
  if (body["kind"] === "Status") return response
  const out = Array.isArray(body["items"])
    ? {
      kind: "PartialObjectMetadataList",
      apiVersion: "meta.k8s.io/v1",
      metadata: body["metadata"] ?? {},
      items: (body["items"] as Array<Json>).map(partialOf)
    }
    : form === "list"
    ? body
    : partialOf(body)
  return { ...response, body: JSON.stringify(out) }
}

/**
 * A watch event line with its object cut down to its metadata; a bookmark's object becomes a PartialObjectMetadata
 * too (its resourceVersion and annotations kept, as kube-apiserver encodes it for a metadata-only watch); errors as
 * they are.
 *
 * @internal
 */
export const partialEvent = (line: string): string => {
  const event = JSON.parse(line) as { type: string; object: Json }
  if (event.type === "ERROR") return line
  return `${JSON.stringify({ type: event.type, object: partialOf(event.object) })}\n`
}

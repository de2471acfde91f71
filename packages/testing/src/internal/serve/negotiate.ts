/**
 * Content negotiation of a resource request, as the API server does it: the first
 * acceptable entry of the Accept header (by `q`, then order) picks the answer's form,
 * plain JSON, a Table (`as=Table;g=meta.k8s.io;v=v1`) or metadata only
 * (`as=PartialObjectMetadata(List)`); entries the fake cannot answer (protobuf) are
 * passed over; an Accept with no acceptable entry is 406. Then the transform the form
 * calls for, with the server's refusals: PartialObjectMetadata of a list, or
 * PartialObjectMetadataList of one object, is 406 NotAcceptable.
 *
 * @internal
 */
import type { JsonObject } from "../store/json.js"
import type { KindInfo } from "../store/kinds.js"
import * as Status from "./statusBodies.js"

/** The form of an answer. @internal */
export type Target =
  | { readonly _tag: "Json" }
  | { readonly _tag: "Table"; readonly version: string }
  | { readonly _tag: "Partial"; readonly form: "object" | "list"; readonly version: string }

const json: Target = { _tag: "Json" }

interface MediaRange {
  readonly type: string
  readonly params: Readonly<Record<string, string>>
  readonly q: number
}

const parseAccept = (header: string): Array<MediaRange> => {
  const ranges: Array<MediaRange> = []
  for (const part of header.split(",")) {
    const [type, ...rest] = part.split(";")
    const params: Record<string, string> = {}
    for (const p of rest) {
      const eq = p.indexOf("=")
      if (eq !== -1) params[p.slice(0, eq).trim().toLowerCase()] = p.slice(eq + 1).trim()
    }
    const q = params.q === undefined ? 1 : Number(params.q)
    const mediaType = type!.trim().toLowerCase()
    if (mediaType !== "" && q > 0) ranges.push({ type: mediaType, params, q: Number.isFinite(q) ? q : 1 })
  }
  // a stable sort: equal weights keep the client's order
  return ranges.map((r, i) => [r, i] as const).sort((a, b) => b[0].q - a[0].q || a[1] - b[1]).map(([r]) => r)
}

const plainTypes = new Set(["application/json", "application/yaml", "application/*", "*/*"])
const metaVersions = new Set(["v1", "v1beta1"])

/** What one Accept entry asks for, `undefined` when the fake cannot answer it. */
const targetOf = (range: MediaRange): Target | undefined => {
  const as = range.params.as
  if (as === undefined) return plainTypes.has(range.type) ? json : undefined
  // a transform is answered as JSON only (the API server also serves YAML, and protobuf for metadata)
  if (range.type !== "application/json" || range.params.g !== "meta.k8s.io") return undefined
  const version = range.params.v ?? ""
  if (!metaVersions.has(version)) return undefined
  if (as === "Table") return { _tag: "Table", version }
  if (as === "PartialObjectMetadata") return { _tag: "Partial", form: "object", version }
  if (as === "PartialObjectMetadataList") return { _tag: "Partial", form: "list", version }
  return undefined
}

/**
 * The form a request's Accept asks for; 406 NotAcceptable when no entry can be answered
 * (the message lists what the server serves: protobuf is not served for custom resources).
 *
 * @internal
 */
export const negotiate = (accept: string | undefined, kind: KindInfo): Target => {
  if (accept === undefined || accept.trim() === "") return json
  const ranges = parseAccept(accept)
  for (const range of ranges) {
    const target = targetOf(range)
    if (target !== undefined) return target
  }
  // protobuf is the one form the API server serves that the fake cannot: a client asking
  // only for it gets JSON, which it can read, rather than a refusal
  if (!kind.custom && ranges.some((r) => r.type === "application/vnd.kubernetes.protobuf")) return json
  const accepted = kind.custom
    ? "application/json, application/yaml"
    : "application/json, application/yaml, application/vnd.kubernetes.protobuf"
  throw new Status.StatusError(406, "NotAcceptable", `only the following media types are accepted: ${accepted}`)
}

/**
 * The form of `/api` and `/apis` a request's Accept asks for: the aggregated document
 * (`as=APIGroupDiscoveryList;g=apidiscovery.k8s.io;v=v2`) when `aggregated` is served and
 * comes first, else the legacy APIVersions / APIGroupList; 406 when neither is acceptable.
 * `v2beta1` is answered with the legacy index, as kube-apiserver 1.35 (which no longer serves it) does;
 * an unknown version is passed over.
 *
 * @internal
 */
export const negotiateDiscovery = (accept: string | undefined, aggregated: boolean): "aggregated" | "legacy" => {
  if (accept === undefined || accept.trim() === "") return "legacy"
  for (const range of parseAccept(accept)) {
    const as = range.params.as
    if (as === undefined) {
      if (plainTypes.has(range.type) || range.type === "application/vnd.kubernetes.protobuf") return "legacy"
      continue
    }
    if (as !== "APIGroupDiscoveryList" || range.type !== "application/json" || range.params.g !== "apidiscovery.k8s.io") {
      continue
    }
    if (aggregated && range.params.v === "v2") return "aggregated"
    // kube-apiserver 1.35 still knows v2beta1 and answers it with the legacy index
    if (aggregated && range.params.v === "v2beta1") return "legacy"
  }
  throw new Status.StatusError(
    406,
    "NotAcceptable",
    "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf"
  )
}

/** The Go package of a group's internal types, as `%T` names them in the API server's messages. */
const internalPackages: Readonly<Record<string, string>> = {
  "": "core",
  "events.k8s.io": "core",
  "networking.k8s.io": "networking",
  "rbac.authorization.k8s.io": "rbac",
  "storage.k8s.io": "storage",
  "flowcontrol.apiserver.k8s.io": "flowcontrol",
  "internal.apiserver.k8s.io": "apiserverinternal"
}

/** How the API server's `%T` names the internal type of an object or list of a kind. */
const goTypeName = (kind: KindInfo, list: boolean): string => {
  if (kind.custom) return list ? "*unstructured.UnstructuredList" : "*unstructured.Unstructured"
  const pkg = internalPackages[kind.group] ?? kind.group.split(".")[0]!
  return `*${pkg}.${kind.kind}${list ? "List" : ""}`
}

const notAcceptable = (message: string): Status.StatusError => new Status.StatusError(406, "NotAcceptable", message)

/**
 * Checks that a body can take the metadata-only form asked for, as the API server's
 * transform does: a list cannot be PartialObjectMetadata, an object cannot be a
 * PartialObjectMetadataList.
 *
 * @internal
 */
export const checkPartial = (kind: KindInfo, form: "object" | "list", body: JsonObject): void => {
  const isList = body.kind === kind.listKind
  if (form === "object" && isList) {
    throw notAcceptable(
      `you requested PartialObjectMetadata, but the requested object is a list (${goTypeName(kind, true)})`
    )
  }
  if (form === "list" && !isList) {
    throw notAcceptable(
      `you requested PartialObjectMetadataList, but the requested object is not a list (${goTypeName(kind, false)})`
    )
  }
}

/**
 * The OpenAPI documents with their schemas, as kube-apiserver v1.35 publishes them: `/openapi/v2` (one
 * Swagger 2.0 document, every definition) and `/openapi/v3/<group-version>` (one OpenAPI 3.0 document per
 * group version, `components.schemas` the definitions its kinds reach). The built-in kinds' schemas come
 * from the Kubernetes v1.35.0 spec, shipped gzipped beside this module (`openapi-v1.35.0.json.gz`, written
 * by scripts/generate-openapi.mjs) and read on the first request that needs it, so importing the fake stays
 * cheap. A custom resource's schema is its CRD's structural schema in the published form kube-apiserver
 * builds: `apiVersion`, `kind` and `metadata` added, `x-kubernetes-group-version-kind` set, and for v2 the
 * parts OpenAPI v2 cannot say dropped.
 *
 * @internal
 */
import { createHash } from "node:crypto"
import { readFileSync } from "node:fs"
import { gunzipSync } from "node:zlib"
import { isObject, type JsonObject } from "../store/json.js"
import type { KindInfo } from "../store/kinds.js"
import type { FakeState } from "../store/state.js"
import { keyOf } from "../store/store.js"
import { schemaOf } from "../validation/schema.js"

interface Spec {
  readonly definitions: Record<string, JsonObject>
  readonly paths: Record<string, JsonObject>
  readonly parameters?: JsonObject
  readonly security?: ReadonlyArray<unknown>
  readonly securityDefinitions?: JsonObject
}

let loaded: { readonly spec: Spec; readonly byGvk: Map<string, string> } | undefined

/** The v1.35 spec, parsed once, and each built-in kind's definition name by `group/version/kind`. */
const builtIn = () => {
  if (loaded !== undefined) return loaded
  const text = gunzipSync(readFileSync(new URL("./openapi-v1.35.0.json.gz", import.meta.url))).toString("utf8")
  const spec = JSON.parse(text) as Spec
  const byGvk = new Map<string, string>()
  for (const [name, def] of Object.entries(spec.definitions)) {
    const gvks = def["x-kubernetes-group-version-kind"]
    if (!Array.isArray(gvks)) continue
    // meta.v1 kinds (DeleteOptions, WatchEvent, Status) are listed under every group: the first naming is theirs
    for (const g of gvks) if (isObject(g)) {
      const key = `${String(g.group)}/${String(g.version)}/${String(g.kind)}`
      if (!byGvk.has(key)) byGvk.set(key, name)
    }
  }
  return loaded = { spec, byGvk }
}

const metaV1 = "io.k8s.apimachinery.pkg.apis.meta.v1"

/** The definition name kube-apiserver gives a custom kind: its group reversed, then version and kind. */
const customName = (group: string, version: string, kind: string): string =>
  `${group.split(".").reverse().join(".")}.${version}.${kind}`

const descriptions = {
  apiVersion: "APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources",
  kind: "Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds",
  metadata: "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata",
  // kube-apiserver's text for a custom list's metadata links to #types-kinds, not #metadata
  listMetadata: "Standard list metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds"
}

/** The stored CRD of a custom kind, if it comes from one. */
const crdOf = (state: FakeState, kind: KindInfo): JsonObject | undefined => {
  const crdKind = state.registry.byResource("apiextensions.k8s.io", "v1", "customresourcedefinitions")
  if (crdKind === undefined) return undefined
  return state.store.existing(crdKind)?.entries.get(keyOf("", `${kind.plural}.${kind.group}`))?.obj
}

type Form = "v2" | "v3"

/**
 * A CRD's structural schema as kube-apiserver publishes it in OpenAPI v2: no `nullable`, `default`,
 * `oneOf`/`anyOf`/`not` (v2 cannot say them), and no `type` where v2's type would refuse values the schema
 * allows: a nullable field (null), an `x-kubernetes-preserve-unknown-fields` one (anything), an
 * `x-kubernetes-int-or-string` one (either).
 */
const toV2 = (schema: unknown): unknown => {
  if (Array.isArray(schema)) return schema.map(toV2)
  if (!isObject(schema)) return schema
  const out: JsonObject = {}
  const untyped = schema.nullable === true || schema["x-kubernetes-preserve-unknown-fields"] === true ||
    schema["x-kubernetes-int-or-string"] === true
  for (const [k, v] of Object.entries(schema)) {
    if (k === "nullable" || k === "default" || k === "oneOf" || k === "anyOf" || k === "not") continue
    if (k === "type" && untyped) continue
    if (k === "properties" || k === "patternProperties" || k === "definitions") {
      out[k] = isObject(v) ? Object.fromEntries(Object.entries(v).map(([p, s]) => [p, toV2(s)])) : v
    } else if (k === "items" || k === "additionalProperties" || k === "allOf") {
      out[k] = toV2(v)
    } else out[k] = v
  }
  return out
}

/** The published schema of one version of a custom kind (and its list), keyed by definition name. */
const customDefinitions = (
  state: FakeState,
  k: KindInfo,
  version: string,
  form: Form
): Record<string, JsonObject> => {
  const crd = crdOf(state, k)
  const structural = crd === undefined ? undefined : schemaOf(crd, version)
  const ref = (name: string) => form === "v2" ? `#/definitions/${name}` : `#/components/schemas/${name}`
  const withDescription = (name: string, description: string): JsonObject =>
    form === "v2" ? { $ref: ref(name), description } : { allOf: [{ $ref: ref(name) }], description }
  const base = structural === undefined
    ? { type: "object", "x-kubernetes-preserve-unknown-fields": true }
    : (form === "v2" ? toV2(structural) : structural) as JsonObject
  const properties = isObject(base.properties) ? base.properties : {}
  const name = customName(k.group, version, k.kind)
  const object: JsonObject = {
    ...base,
    properties: {
      ...properties,
      apiVersion: { type: "string", description: descriptions.apiVersion },
      kind: { type: "string", description: descriptions.kind },
      metadata: withDescription(`${metaV1}.ObjectMeta`, descriptions.metadata)
    },
    "x-kubernetes-group-version-kind": [{ group: k.group, kind: k.kind, version }]
  }
  const list: JsonObject = {
    description: `${k.listKind} is a list of ${k.kind}`,
    type: "object",
    required: ["items"],
    properties: {
      apiVersion: { type: "string", description: descriptions.apiVersion },
      items: {
        type: "array",
        description: `List of ${k.plural}. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md`,
        items: { $ref: ref(name) }
      },
      kind: { type: "string", description: descriptions.kind },
      metadata: withDescription(`${metaV1}.ListMeta`, descriptions.listMetadata)
    },
    "x-kubernetes-group-version-kind": [{ group: k.group, kind: k.listKind, version }]
  }
  return { [name]: object, [`${customName(k.group, version, k.listKind)}`]: list }
}

/** The server's major.minor, as its OpenAPI documents' info names it. */
const info = { title: "Kubernetes", version: "1.35" }

/**
 * The info of a group version's v3 document: a group of custom kinds only is published by the
 * apiextensions server, which names its documents so.
 *
 * @internal
 */
export const v3Info = (state: FakeState, group: string, version: string): JsonObject =>
  servedIn(state, group, version).every((k) => k.custom)
    ? { title: "Kubernetes CRD Swagger", version: "v0.1.0" }
    : info

/**
 * `/openapi/v2`: the v1.35 spec's definitions and paths, with every served custom kind's definitions added.
 *
 * @internal
 */
export const v2 = (state: FakeState): JsonObject => {
  const { spec } = builtIn()
  const definitions: Record<string, unknown> = { ...spec.definitions }
  for (const k of state.registry.all()) {
    if (!k.custom) continue
    for (const version of k.versions) Object.assign(definitions, customDefinitions(state, k, version, "v2"))
  }
  return {
    swagger: "2.0",
    info,
    paths: spec.paths,
    definitions,
    ...(spec.parameters !== undefined ? { parameters: spec.parameters } : {}),
    ...(spec.securityDefinitions !== undefined ? { securityDefinitions: spec.securityDefinitions } : {}),
    ...(spec.security !== undefined ? { security: spec.security } : {})
  }
}

/** A v2 definition in v3's words: `$ref`s into `components.schemas`, a `$ref` with siblings wrapped in `allOf`. */
const toV3 = (schema: unknown): unknown => {
  if (Array.isArray(schema)) return schema.map(toV3)
  if (!isObject(schema)) return schema
  const out: JsonObject = {}
  for (const [k, v] of Object.entries(schema)) {
    if (k === "$ref" && typeof v === "string") continue
    out[k] = k === "properties" && isObject(v)
      ? Object.fromEntries(Object.entries(v).map(([p, s]) => [p, toV3(s)]))
      : toV3(v)
  }
  if (typeof schema.$ref === "string") {
    const ref = schema.$ref.replace("#/definitions/", "#/components/schemas/")
    return Object.keys(out).length === 0 ? { $ref: ref } : { allOf: [{ $ref: ref }], ...out }
  }
  return out
}

/** Every definition name a schema refers to, `#/definitions/` or `#/components/schemas/`. */
const refsOf = (schema: unknown, into: Set<string>): void => {
  if (Array.isArray(schema)) for (const s of schema) refsOf(s, into)
  else if (isObject(schema)) {
    for (const [k, v] of Object.entries(schema)) {
      if (k === "$ref" && typeof v === "string") into.add(v.slice(v.lastIndexOf("/") + 1))
      else refsOf(v, into)
    }
  }
}

const servedIn = (state: FakeState, group: string, version: string): ReadonlyArray<KindInfo> =>
  state.registry.all().filter((k) => k.group === group && k.versions.includes(version))

/** The request and answer kinds a built-in group version's operations name besides its own kinds. */
const shared = [`${metaV1}.APIResourceList`, `${metaV1}.DeleteOptions`, `${metaV1}.Status`, `${metaV1}.WatchEvent`, `${metaV1}.Patch`]
/** A custom group version's: no discovery list, and watches answer in the kind's own schema. */
const customShared = [`${metaV1}.DeleteOptions`, `${metaV1}.Status`, `${metaV1}.Patch`]

const subresourceDefinition = (sub: string): string | undefined =>
  sub === "scale" ? "io.k8s.api.autoscaling.v1.Scale"
  : sub === "eviction" ? "io.k8s.api.policy.v1.Eviction"
  : sub === "token" ? "io.k8s.api.authentication.v1.TokenRequest"
  : undefined

/**
 * `components.schemas` of one group version's document: its built-in kinds' definitions (and their lists')
 * and every definition they reach, in v3's form; its custom kinds' published schemas.
 *
 * @internal
 */
export const v3Schemas = (state: FakeState, group: string, version: string): Record<string, unknown> => {
  const served = servedIn(state, group, version)
  const schemas: Record<string, unknown> = {}
  const wanted: Array<string> = []
  const lookup = () => builtIn()
  for (const k of served) {
    if (k.custom) {
      Object.assign(schemas, customDefinitions(state, k, version, "v3"))
      wanted.push(`${metaV1}.ObjectMeta`, `${metaV1}.ListMeta`)
      continue
    }
    const { byGvk } = lookup()
    for (const kind of [k.kind, k.listKind]) {
      const name = byGvk.get(`${group}/${version}/${kind}`)
      if (name !== undefined) wanted.push(name)
    }
    for (const sub of k.subresources) {
      const name = subresourceDefinition(sub)
      if (name !== undefined) wanted.push(name)
    }
  }
  if (served.some((k) => !k.custom)) wanted.push(...shared)
  else if (served.length > 0) wanted.push(...customShared)
  const { spec } = lookup()
  const seen = new Set<string>()
  while (wanted.length > 0) {
    const name = wanted.pop()!
    if (seen.has(name)) continue
    seen.add(name)
    const def = spec.definitions[name]
    if (def === undefined) continue
    schemas[name] = toV3(def)
    const refs = new Set<string>()
    refsOf(def, refs)
    wanted.push(...refs)
  }
  // Go writes the map of schemas with its keys sorted
  return Object.fromEntries(Object.keys(schemas).sort().map((name) => [name, schemas[name]]))
}

/**
 * The token the `/openapi/v3` index puts in a group version's `serverRelativeURL` (`?hash=`), as
 * kube-apiserver does, so a client caching documents by URL refetches one when it changes: the group
 * version's kinds and, for custom kinds, their CRDs' schemas. Uppercase hex of a SHA-512, as the real one.
 *
 * @internal
 */
export const v3Hash = (state: FakeState, group: string, version: string): string => {
  const h = createHash("sha512")
  h.update(`${group}/${version}`)
  for (const k of servedIn(state, group, version)) {
    h.update(`\n${k.kind}/${k.plural}/${k.namespaced}/${k.verbs.join(",")}/${k.subresources.join(",")}`)
    if (k.custom) {
      const crd = crdOf(state, k)
      h.update(JSON.stringify(crd === undefined ? null : schemaOf(crd, version) ?? null))
    }
  }
  return h.digest("hex").toUpperCase()
}

/** A document's ETag, as kube-apiserver's: uppercase hex of the SHA-512 of its bytes. @internal */
export const etag = (body: string): string => createHash("sha512").update(body).digest("hex").toUpperCase()

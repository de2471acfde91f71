/**
 * The discovery documents (`/api`, `/apis`, `/api/v1`, `/apis/<group>/<version>`,
 * `/version`) in the legacy (unaggregated) JSON form that kubectl and client libraries
 * fall back to, and the aggregated form (`apidiscovery.k8s.io/v2`, every group version's
 * resources in one answer of `/api` or `/apis`), built from the kinds the fake currently serves.
 *
 * @internal
 */
import { apiVersionOf, type KindInfo } from "../store/kinds.js"

/** @internal */
export const apiVersions = (serverAddress: string): Record<string, unknown> => ({
  kind: "APIVersions",
  versions: ["v1"],
  serverAddressByClientCIDRs: [{ clientCIDR: "0.0.0.0/0", serverAddress }]
})

/** The order kube-apiserver v1.35 lists its built-in groups in (`/apis`, aggregated discovery). */
const groupOrder = [
  "apiregistration.k8s.io", "apps", "events.k8s.io", "authentication.k8s.io", "authorization.k8s.io", "autoscaling",
  "batch", "certificates.k8s.io", "networking.k8s.io", "policy", "rbac.authorization.k8s.io", "storage.k8s.io",
  "admissionregistration.k8s.io", "apiextensions.k8s.io", "scheduling.k8s.io", "coordination.k8s.io", "node.k8s.io",
  "discovery.k8s.io", "resource.k8s.io", "flowcontrol.apiserver.k8s.io", "internal.apiserver.k8s.io",
  "storagemigration.k8s.io"
]

interface GroupVersions {
  readonly name: string
  readonly versions: ReadonlyArray<string>
}

const groupsOf = (kinds: ReadonlyArray<KindInfo>): Array<GroupVersions> => {
  const groups = new Map<string, Array<string>>()
  for (const k of kinds) {
    if (k.group === "") continue
    const versions = groups.get(k.group) ?? []
    for (const v of k.versions) if (!versions.includes(v)) versions.push(v)
    groups.set(k.group, versions)
  }
  const rank = (name: string) => {
    const at = groupOrder.indexOf(name)
    return at === -1 ? groupOrder.length : at
  }
  // built-in groups in kube-apiserver's order (its groups' priorities), custom ones after them as they came
  return [...groups.entries()].map(([name, versions]) => ({ name, versions }))
    .map((g, i) => ({ g, i })).sort((a, b) => rank(a.g.name) - rank(b.g.name) || a.i - b.i).map(({ g }) => g)
}

const groupDoc = (g: GroupVersions): Record<string, unknown> => ({
  name: g.name,
  versions: g.versions.map((version) => ({ groupVersion: `${g.name}/${version}`, version })),
  preferredVersion: { groupVersion: `${g.name}/${g.versions[0]}`, version: g.versions[0] }
})

/** @internal */
export const apiGroupList = (kinds: ReadonlyArray<KindInfo>): Record<string, unknown> => ({
  kind: "APIGroupList",
  apiVersion: "v1",
  groups: groupsOf(kinds).map(groupDoc)
})

/** @internal */
export const apiGroup = (kinds: ReadonlyArray<KindInfo>, group: string): Record<string, unknown> | undefined => {
  const found = groupsOf(kinds).find((g) => g.name === group)
  return found === undefined ? undefined : { kind: "APIGroup", apiVersion: "v1", ...groupDoc(found) }
}

/** The kinds a group version serves. */
const servedIn = (kinds: ReadonlyArray<KindInfo>, group: string, version: string): ReadonlyArray<KindInfo> =>
  kinds.filter((k) => k.group === group && k.versions.includes(version))

/** @internal */
export const apiResourceList = (
  kinds: ReadonlyArray<KindInfo>,
  group: string,
  version: string
): Record<string, unknown> | undefined => {
  const served = servedIn(kinds, group, version)
  if (served.length === 0) return undefined
  const resources: Array<Record<string, unknown>> = []
  for (const k of served) {
    resources.push({
      name: k.plural,
      singularName: k.singular,
      namespaced: k.namespaced,
      kind: k.kind,
      verbs: k.verbs,
      ...(k.shortNames.length > 0 ? { shortNames: k.shortNames } : {}),
      ...(k.categories !== undefined ? { categories: k.categories } : {}),
      storageVersionHash: hash(`${k.group}/${k.versions[0]}/${k.kind}`)
    })
    for (const sub of k.subresources) {
      const answer = subresourceKind(k, sub)
      resources.push({
        name: `${k.plural}/${sub}`,
        singularName: "",
        namespaced: k.namespaced,
        ...(answer.group !== undefined ? { group: answer.group, version: answer.version } : {}),
        kind: answer.kind,
        verbs: subresourceVerbs(sub)
      })
    }
  }
  return { kind: "APIResourceList", apiVersion: "v1", groupVersion: apiVersionOf(group, version), resources }
}

/** The kind a subresource answers with; `group` and `version` when it is not the resource's own group version. */
const subresourceKind = (
  k: KindInfo,
  sub: string
): { readonly kind: string; readonly group?: string | undefined; readonly version?: string | undefined } =>
  sub === "scale"
    ? { kind: "Scale", group: "autoscaling", version: "v1" }
    : sub === "eviction"
    ? { kind: "Eviction", group: "policy", version: "v1" }
    : sub === "token"
    ? { kind: "TokenRequest", group: "authentication.k8s.io", version: "v1" }
    : sub === "log"
    ? { kind: "Pod" }
    : { kind: k.kind }

const subresourceVerbs = (sub: string): ReadonlyArray<string> =>
  sub === "log" ? ["get"] : sub === "eviction" || sub === "token" ? ["create"] : ["get", "patch", "update"]

/**
 * The media type of the aggregated discovery document, as kube-apiserver 1.35 names it in
 * its answer. It serves `v2` only (a `v2beta1` Accept is answered in the legacy form).
 *
 * @internal
 */
export const aggregatedMediaType = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"

/**
 * One resource of a group version in the aggregated form. Built-in kinds leave the
 * response kind's group and version empty (the group version's own), as kube-apiserver
 * does; custom resources name them; resources and built-in subresources are sorted by
 * name, a CRD's subresources come status then scale.
 */
const aggregatedResource = (k: KindInfo, group: string, version: string): Record<string, unknown> => {
  const own = (kind: string) => (k.custom ? { group, version, kind } : { group: "", version: "", kind })
  const subresources = (k.custom ? k.subresources : [...k.subresources].sort()).map((sub) => {
    const answer = subresourceKind(k, sub)
    return {
      subresource: sub,
      responseKind: answer.group !== undefined
        ? { group: answer.group, version: answer.version, kind: answer.kind }
        : own(answer.kind),
      verbs: subresourceVerbs(sub)
    }
  })
  return {
    resource: k.plural,
    responseKind: own(k.kind),
    scope: k.namespaced ? "Namespaced" : "Cluster",
    singularResource: k.singular,
    verbs: k.verbs,
    ...(k.shortNames.length > 0 ? { shortNames: k.shortNames } : {}),
    ...(k.categories !== undefined ? { categories: k.categories } : {}),
    ...(subresources.length > 0 ? { subresources } : {})
  }
}

/**
 * The aggregated discovery document (`APIGroupDiscoveryList`, `apidiscovery.k8s.io/v2`)
 * of `/api` (the core group, its item without a name) or `/apis` (every named group, in
 * the order the fake registered them; each group's versions with the preferred one first,
 * every version `Current`).
 *
 * @internal
 */
export const aggregatedDiscovery = (kinds: ReadonlyArray<KindInfo>, core: boolean): Record<string, unknown> => {
  const groups = core ? [{ name: "", versions: ["v1"] }] : groupsOf(kinds)
  return {
    kind: "APIGroupDiscoveryList",
    apiVersion: "apidiscovery.k8s.io/v2",
    metadata: {},
    items: groups.map((g) => ({
      metadata: g.name === "" ? {} : { name: g.name },
      versions: g.versions.map((version) => {
        const served = servedIn(kinds, g.name, version)
        const ordered = core || served.every((k) => !k.custom)
          ? [...served].sort((a, b) => (a.plural < b.plural ? -1 : a.plural > b.plural ? 1 : 0))
          : served
        return {
          version,
          resources: ordered.map((k) => aggregatedResource(k, g.name, version)),
          freshness: "Current"
        }
      })
    }))
  }
}

// A stable short token, as the API server gives one per storage version.
const hash = (text: string): string => {
  let h = 2166136261
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i)
    h = Math.imul(h, 16777619)
  }
  return Buffer.from(String(h >>> 0)).toString("base64").slice(0, 11)
}

/**
 * `/version`, as kube-apiserver v1.35 (the version of the kinds the fake serves) answers
 * it, the emulation and minimum compatibility versions included.
 *
 * @internal
 */
export const version = {
  major: "1",
  minor: "35",
  emulationMajor: "1",
  emulationMinor: "35",
  minCompatibilityMajor: "1",
  minCompatibilityMinor: "34",
  gitVersion: "v1.35.0",
  gitCommit: "0000000000000000000000000000000000000000",
  gitTreeState: "clean",
  buildDate: "2025-12-17T00:00:00Z",
  goVersion: "go1.25.5",
  compiler: "gc",
  platform: "linux/amd64"
}

/** The server's major.minor, as its OpenAPI documents' info names it. */
const release = `${version.major}.${version.minor}`

const gvPath = (group: string, version: string): string =>
  group === "" ? `api/${version}` : `apis/${group}/${version}`

/**
 * The OpenAPI v3 index. kubectl reads it to learn that the server validates fields
 * itself (`fieldValidation`); without it `kubectl create` and `apply` refuse to run
 * unless told `--validate=false`.
 *
 * @internal
 */
export const openApiV3Index = (
  kinds: ReadonlyArray<KindInfo>,
  hashOf: (group: string, version: string) => string
): Record<string, unknown> => {
  const paths: Record<string, unknown> = {}
  for (const k of kinds) {
    for (const v of k.versions) {
      const p = gvPath(k.group, v)
      if (paths[p] === undefined) paths[p] = { serverRelativeURL: `/openapi/v3/${p}?hash=${hashOf(k.group, v)}` }
    }
  }
  return { paths }
}

const queryParameter = (name: string, description: string, type = "string") => ({
  name,
  in: "query",
  description,
  schema: { type, uniqueItems: true }
})

const writeParameters = [
  queryParameter("dryRun", "When present, indicates that modifications should not be persisted."),
  queryParameter("fieldManager", "The name of the actor making these changes."),
  queryParameter("fieldValidation", "How the server handles unknown or duplicate fields.")
]

/**
 * The OpenAPI v3 document of one group version: its operations, with the
 * `x-kubernetes-group-version-kind` and query parameters kubectl looks for, and the
 * schemas it is given (`components.schemas`, ./openapi.ts).
 *
 * @internal
 */
export const openApiV3 = (
  kinds: ReadonlyArray<KindInfo>,
  group: string,
  version: string,
  schemas: () => Record<string, unknown>,
  info: Record<string, unknown> = { title: "Kubernetes", version: release }
): Record<string, unknown> | undefined => {
  const served = servedIn(kinds, group, version)
  if (served.length === 0) return undefined
  const paths: Record<string, unknown> = {}
  const prefix = `/${gvPath(group, version)}`
  for (const k of served) {
    const gvk = { group, version, kind: k.kind }
    const op = (action: string, extra: Array<Record<string, unknown>>) => ({
      description: `${action} ${k.kind}`,
      operationId: `${action}${k.kind}`,
      parameters: extra,
      responses: { "200": { description: "OK" } },
      "x-kubernetes-action": action,
      "x-kubernetes-group-version-kind": gvk
    })
    const collection = k.namespaced ? `${prefix}/namespaces/{namespace}/${k.plural}` : `${prefix}/${k.plural}`
    paths[collection] = k.verbs.includes("create")
      ? { post: op("post", writeParameters), get: op("list", []) }
      : { get: op("list", []) }
    if (k.verbs.includes("get")) {
      paths[`${collection}/{name}`] = {
        get: op("get", []),
        put: op("put", writeParameters),
        patch: op("patch", [
          ...writeParameters,
          queryParameter("force", "Force is going to \"force\" Apply requests.", "boolean")
        ]),
        delete: op("delete", [])
      }
    }
  }
  return {
    openapi: "3.0.0",
    // the server's version, not the group version's
    info,
    paths,
    components: { schemas: schemas() }
  }
}

/**
 * The implementation of `Discovery`: the aggregated documents of `/api` (the core group)
 * and `/apis` (every named group), each fetched the first time a kind of it is asked for
 * and kept for the life of the service; on a server without aggregated discovery, one
 * APIResourceList per group version instead. A kind that is not in the cached document
 * makes it be fetched once more (a CRD may have been installed since); concurrent callers
 * share one fetch.
 */
import type * as HttpClient from "effect/http/HttpClient"
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import type * as Discovery from "../../Discovery.js"
import { ApiError, ValidationError } from "../../Errors.js"
import type * as Kube from "../../Kube.js"
import type { KubeConfig } from "../../KubeConfig.js"
import * as Resource from "../../Resource.js"
import * as client from "../client/execute.js"
import { malformed } from "../codec/codec.js"
import * as requestDiscovery from "../request/discoveryIndex.js"
import * as request from "../request/verbs.js"
import type { Spec } from "../request/spec.js"

/** One resource of a group version's document, with what it serves. */
interface Candidate {
  readonly resource: Resource.Resource<unknown>
  readonly entry: Discovery.ApiResource
}

/**
 * What one group version serves: its resources in the server's order, and the
 * candidates for each kind (OpenShift serves kind Template as `processedtemplates`,
 * create-only, and as `templates`); `undefined` when the server does not serve the
 * group version.
 */
type Kinds =
  | {
    readonly resources: ReadonlyArray<Discovery.ApiResource>
    readonly byKind: ReadonlyMap<string, ReadonlyArray<Candidate>>
  }
  | undefined

// A group is a DNS subdomain; a version a DNS label (v1, v1beta1, v2alpha3).
const groupPattern = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/
const versionPattern = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/
const kindPattern = /^[A-Za-z][A-Za-z0-9]*$/

/** Why an apiVersion cannot name a group version, or undefined when it can. */
export const apiVersionProblem = (apiVersion: unknown): string | undefined => {
  if (typeof apiVersion !== "string") return "must be a string"
  if (apiVersion === "") return "must not be empty"
  const parts = apiVersion.split("/")
  if (parts.length > 2) return `must be "<version>" or "<group>/<version>" (got ${JSON.stringify(apiVersion)})`
  const [groupOrVersion, version] = parts as [string, string | undefined]
  if (version === undefined) {
    return versionPattern.test(groupOrVersion) ? undefined : `is not a version (got ${JSON.stringify(apiVersion)})`
  }
  if (groupOrVersion.length > 253 || !groupPattern.test(groupOrVersion)) {
    return `has a group that is not a DNS subdomain (got ${JSON.stringify(apiVersion)})`
  }
  return versionPattern.test(version)
    ? undefined
    : `has a version that is not a DNS label (got ${JSON.stringify(apiVersion)})`
}

/** Why a kind cannot be a Kubernetes kind, or undefined when it can. */
export const kindProblem = (kind: unknown): string | undefined => {
  if (typeof kind !== "string") return "must be a string"
  if (kind === "") return "must not be empty"
  return kindPattern.test(kind)
    ? undefined
    : `must be letters and digits, starting with a letter (got ${JSON.stringify(kind)})`
}

const ResourceEntry = Schema.Struct({
  name: Schema.String,
  kind: Schema.String,
  namespaced: Schema.Boolean,
  singularName: Schema.optional(Schema.String),
  verbs: Schema.optional(Schema.Array(Schema.String)),
  shortNames: Schema.optional(Schema.Array(Schema.String)),
  categories: Schema.optional(Schema.Array(Schema.String))
})

const ResourceList = Schema.Struct({
  resources: Schema.Array(Schema.Unknown)
})

const decodeList = Schema.decodeUnknownOption(ResourceList)
const decodeEntry = Schema.decodeUnknownOption(ResourceEntry)

/**
 * Turns an APIResourceList into its resources and kinds; subresources (`pods/log`) are
 * not kinds, they are listed with the resource they belong to.
 */
export const kindsOf = (
  apiVersion: string,
  json: unknown,
  spec: Spec
): Effect.Effect<Kinds, ValidationError> => {
  const list = decodeList(json)
  if (Option.isNone(list)) return Effect.fail(malformed(spec, "expected an APIResourceList"))
  const slash = apiVersion.indexOf("/")
  const group = slash === -1 ? "" : apiVersion.slice(0, slash)
  const version = slash === -1 ? apiVersion : apiVersion.slice(slash + 1)
  const entries = new Map<string, Discovery.ApiResource>()
  const subresources = new Map<string, Array<string>>()
  for (const raw of list.value.resources) {
    const decoded = decodeEntry(raw)
    if (Option.isNone(decoded)) {
      return Effect.fail(
        malformed(spec, "has a resource without a string name and kind and a boolean namespaced")
      )
    }
    const e = decoded.value
    const cut = e.name.indexOf("/")
    if (cut !== -1) {
      const parent = e.name.slice(0, cut)
      subresources.set(parent, [...(subresources.get(parent) ?? []), e.name.slice(cut + 1)])
      continue
    }
    entries.set(e.name, {
      group,
      version,
      apiVersion,
      kind: e.kind,
      plural: e.name,
      singular: e.singularName !== undefined && e.singularName !== "" ? e.singularName : e.kind.toLowerCase(),
      namespaced: e.namespaced,
      verbs: e.verbs ?? [],
      shortNames: e.shortNames ?? [],
      categories: e.categories ?? [],
      subresources: [],
      preferred: true
    })
  }
  const resources: Array<Discovery.ApiResource> = []
  for (const entry of entries.values()) resources.push({ ...entry, subresources: subresources.get(entry.plural) ?? [] })
  return Effect.succeed(indexKinds(apiVersion, resources))
}

/** What a stored object needs: `Manifests` reads, patches and deletes what it applies. */
const storedVerbs: ReadonlyArray<string> = ["get", "patch", "delete"]

/**
 * The candidate whose verbs fit: every verb asked for, or, when none is asked for, the
 * one that stores objects (get, patch, delete), else the one that can be read, else the
 * first (a create-only kind such as SubjectAccessReview). A document without verbs (an
 * old aggregated API) is taken to serve them all.
 */
const pick = (
  candidates: ReadonlyArray<Candidate>,
  verbs: ReadonlyArray<string> | undefined
): Candidate | undefined => {
  const serves = (c: Candidate, wanted: ReadonlyArray<string>) =>
    c.entry.verbs.length === 0 || wanted.every((v) => c.entry.verbs.includes(v))
  if (verbs !== undefined && verbs.length > 0) return candidates.find((c) => serves(c, verbs))
  return candidates.find((c) => serves(c, storedVerbs)) ?? candidates.find((c) => serves(c, ["get"])) ?? candidates[0]
}

/** The discovery document of one group version: `/api/v1` or `/apis/<group>/<version>`. */
export const groupVersionPath = request.groupVersionPath

/**
 * The edit distance of two words (optimal string alignment: insertions, deletions,
 * substitutions and swaps of two neighbours, each 1), so `Deploymnet` is 1 from `Deployment`.
 */
export const editDistance = (a: string, b: string): number => {
  const rows: Array<Array<number>> = []
  for (let i = 0; i <= a.length; i++) {
    const row: Array<number> = [i]
    for (let j = 1; j <= b.length; j++) {
      if (i === 0) {
        row.push(j)
        continue
      }
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      let best = Math.min(rows[i - 1]![j]! + 1, row[j - 1]! + 1, rows[i - 1]![j - 1]! + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, rows[i - 2]![j - 2]! + 1)
      row.push(best)
    }
    rows.push(row)
  }
  return rows[a.length]![b.length]!
}

/**
 * `: did you mean Deployment?` when one of the served kinds is close to the one asked for
 * (letter case ignored; at most 1 edit for short kinds, 2 from 6 letters, 3 from 12), else `""`.
 */
export const didYouMean = (kind: string, served: Iterable<string>): string => {
  const wanted = kind.toLowerCase()
  const limit = wanted.length < 6 ? 1 : wanted.length < 12 ? 2 : 3
  let best: string | undefined
  let bestDistance = limit + 1
  for (const candidate of served) {
    const distance = editDistance(wanted, candidate.toLowerCase())
    if (distance < bestDistance || (distance === bestDistance && best !== undefined && candidate < best)) {
      best = candidate
      bestDistance = distance
    }
  }
  return best === undefined ? "" : `: did you mean ${best}?`
}

const fetchKinds = (apiVersion: string): Effect.Effect<Kinds, Kube.Error, KubeConfig | HttpClient.HttpClient> => {
  const spec = request.discovery(apiVersion)
  return client.sendJson(spec).pipe(
    Effect.flatMap((json) => kindsOf(apiVersion, json, spec)),
    // A group version the server does not serve is answered 404: no kinds, not a failure.
    Effect.catchIf(ApiError.isNotFound, () => Effect.succeed(undefined))
  )
}

/** The kinds of a group version's resources, each kind with its candidates in the server's order. */
const indexKinds = (apiVersion: string, resources: ReadonlyArray<Discovery.ApiResource>): NonNullable<Kinds> => {
  const byKind = new Map<string, Array<Candidate>>()
  for (const entry of resources) {
    const resource = Resource.make({
      apiVersion,
      kind: entry.kind,
      plural: entry.plural,
      namespaced: entry.namespaced,
      schema: Schema.Unknown
    })
    byKind.set(entry.kind, [...(byKind.get(entry.kind) ?? []), { resource, entry }])
  }
  return { resources, byKind }
}

const GroupVersionKind = Schema.Struct({ kind: Schema.String })
const AggregatedList = Schema.Struct({
  kind: Schema.Literal("APIGroupDiscoveryList"),
  items: Schema.Array(Schema.Struct({
    metadata: Schema.optional(Schema.Struct({ name: Schema.optional(Schema.String) })),
    versions: Schema.Array(Schema.Struct({
      version: Schema.String,
      freshness: Schema.optional(Schema.String),
      resources: Schema.Array(Schema.Struct({
        resource: Schema.String,
        responseKind: GroupVersionKind,
        scope: Schema.String,
        singularResource: Schema.optional(Schema.String),
        verbs: Schema.optional(Schema.Array(Schema.String)),
        shortNames: Schema.optional(Schema.Array(Schema.String)),
        categories: Schema.optional(Schema.Array(Schema.String)),
        subresources: Schema.optional(Schema.Array(Schema.Struct({ subresource: Schema.String })))
      }))
    }))
  }))
})
const decodeAggregated = Schema.decodeUnknownOption(AggregatedList)

/**
 * What one aggregated document (`/api` or `/apis`) says: its groups (versions in the
 * server's order of preference, the first preferred), the kinds of each group version,
 * and the group versions the server marks `Stale` (an aggregated API it could not ask):
 * those are read from their own document, as client-go does.
 */
export interface Snapshot {
  readonly groups: ReadonlyArray<Discovery.ApiGroup>
  readonly kinds: ReadonlyMap<string, NonNullable<Kinds>>
  readonly stale: ReadonlySet<string>
}

/** `/api` or `/apis` as one answer: aggregated, or the legacy index of a server without aggregated discovery. */
type Root =
  | { readonly _tag: "Aggregated"; readonly snapshot: Snapshot }
  /** `index`: the legacy index the server answered instead (APIVersions, APIGroupList), when it did. */
  | { readonly _tag: "Legacy"; readonly index: unknown }

const legacy: Root = { _tag: "Legacy", index: undefined }

/** Reads an APIGroupDiscoveryList (v2 or v2beta1: the same fields). */
export const snapshotOf = (json: unknown, spec: Spec): Effect.Effect<Snapshot, ValidationError> => {
  const list = decodeAggregated(json)
  if (Option.isNone(list)) {
    return Effect.fail(malformed(spec, "expected an APIGroupDiscoveryList with resources, kinds and scopes"))
  }
  const groups: Array<Discovery.ApiGroup> = []
  const kinds = new Map<string, NonNullable<Kinds>>()
  const stale = new Set<string>()
  for (const item of list.value.items) {
    const group = item.metadata?.name ?? ""
    const versions = item.versions.map((v) => v.version)
    groups.push({ name: group, versions, preferredVersion: versions[0] ?? "" })
    for (const v of item.versions) {
      const apiVersion = group === "" ? v.version : `${group}/${v.version}`
      if (v.freshness === "Stale") stale.add(apiVersion)
      const resources = v.resources.map((r): Discovery.ApiResource => ({
        group,
        version: v.version,
        apiVersion,
        kind: r.responseKind.kind,
        plural: r.resource,
        singular: r.singularResource !== undefined && r.singularResource !== ""
          ? r.singularResource
          : r.responseKind.kind.toLowerCase(),
        namespaced: r.scope === "Namespaced",
        verbs: r.verbs ?? [],
        shortNames: r.shortNames ?? [],
        categories: r.categories ?? [],
        subresources: (r.subresources ?? []).map((sub) => sub.subresource),
        preferred: v.version === versions[0]
      }))
      kinds.set(apiVersion, indexKinds(apiVersion, resources))
    }
  }
  return Effect.succeed({ groups, kinds, stale })
}

/**
 * One root of discovery with the aggregated Accept. A server without aggregated discovery
 * answers the legacy index (or, asked by an Accept it cannot serve, 404 or 406): the
 * per-group-version documents are read instead.
 */
const fetchRoot = (core: boolean): Effect.Effect<Root, Kube.Error, KubeConfig | HttpClient.HttpClient> => {
  const spec = core ? requestDiscovery.aggregatedCore : requestDiscovery.aggregatedGroups
  return client.sendJson(spec).pipe(
    Effect.flatMap((json): Effect.Effect<Root, ValidationError> =>
      typeof json === "object" && json !== null && (json as { kind?: unknown }).kind === "APIGroupDiscoveryList"
        ? Effect.map(snapshotOf(json, spec), (snapshot) => ({ _tag: "Aggregated", snapshot }))
        : Effect.succeed({ _tag: "Legacy", index: json })
    ),
    Effect.catchIf(
      (e): e is ApiError => e._tag === "ApiError" && (e.code === 404 || e.code === 406 || e.code === 415),
      () => Effect.succeed(legacy)
    )
  )
}

/**
 * A cache of one value per key, each fetched by the first caller that needs it while the
 * others wait for that fetch. `stale` (an entry a caller found wanting) is replaced by a
 * fresh fetch; `"refresh"` replaces whatever is there. A failed fetch is not kept.
 */
const makeCache = <A>(
  fetch: (key: string) => Effect.Effect<A, Kube.Error>
) =>
  Effect.map(Ref.make(new Map<string, Deferred.Deferred<A, Kube.Error>>()), (cache) => {
    type Entry = Deferred.Deferred<A, Kube.Error>
    const forget = (key: string, entry: Entry) =>
      Ref.update(cache, (map) => {
        if (map.get(key) !== entry) return map
        const next = new Map(map)
        next.delete(key)
        return next
      })
    const load = (
      key: string,
      stale: Entry | "refresh" | undefined
    ): Effect.Effect<{ readonly entry: Entry; readonly value: A; readonly fresh: boolean }, Kube.Error> =>
      Effect.gen(function*() {
        const candidate = yield* Deferred.make<A, Kube.Error>()
        const entry = yield* Ref.modify(cache, (map): [Entry, Map<string, Entry>] => {
          const current = map.get(key)
          if (current !== undefined && stale !== "refresh" && current !== stale) return [current, map]
          return [candidate, new Map(map).set(key, candidate)]
        })
        const fresh = entry === candidate
        if (fresh) {
          yield* fetch(key).pipe(
            Effect.onExit((exit) => (Exit.isSuccess(exit) ? Effect.void : forget(key, candidate))),
            Deferred.into(candidate)
          )
        }
        const exit = yield* Effect.exit(Deferred.await(entry))
        if (Exit.isSuccess(exit)) return { entry, value: exit.value, fresh }
        // The fiber that was fetching for us was interrupted (and its entry forgotten): fetch again.
        if (Cause.hasInterruptsOnly(exit.cause)) return yield* load(key, undefined)
        return yield* Effect.failCause(exit.cause)
      })
    return load
  })

/** The root document a group version is listed in: `/api` for the core group, `/apis` for the others. */
const rootOf = (apiVersion: string): "api" | "apis" => (apiVersion.includes("/") ? "apis" : "api")

/** Builds the service; the requests it sends use the KubeConfig and HttpClient in scope now. */
export const make: Effect.Effect<Discovery.Service, never, KubeConfig | HttpClient.HttpClient> = Effect.gen(
  function*() {
    const context = yield* Effect.context<KubeConfig | HttpClient.HttpClient>()
    const loadKinds = yield* makeCache((apiVersion) => Effect.provide(fetchKinds(apiVersion), context))
    const loadRoot = yield* makeCache((root) => Effect.provide(fetchRoot(root === "api"), context))

    /** Resolves from one group version's own document (a server without aggregated discovery, a Stale group). */
    const resolveByGroupVersion = (
      apiVersion: string,
      kind: string,
      verbs: ReadonlyArray<string> | undefined
    ): Effect.Effect<Resource.Resource<unknown>, Kube.Error> =>
      Effect.gen(function*() {
        const first = yield* loadKinds(apiVersion, undefined)
        const found = find(first.value, kind, verbs)
        if (found !== undefined) return found
        // A list fetched by this very call is as fresh as it gets; an older one may predate a CRD.
        const second = first.fresh ? first : yield* loadKinds(apiVersion, first.entry)
        return yield* foundOrFail(apiVersion, kind, verbs, second.value)
      })

    const resolve = (
      apiVersion: string,
      kind: string,
      options?: Discovery.ResolveOptions
    ): Effect.Effect<Resource.Resource<unknown>, Kube.Error> =>
      Effect.gen(function*() {
        const versionProblem = apiVersionProblem(apiVersion)
        if (versionProblem !== undefined) {
          return yield* new ValidationError({ subject: `apiVersion of kind ${String(kind)}`, detail: versionProblem })
        }
        const problem = kindProblem(kind)
        if (problem !== undefined) {
          return yield* new ValidationError({ subject: `kind (${apiVersion})`, detail: problem })
        }
        const verbs = options?.verbs
        const root = rootOf(apiVersion)
        const first = yield* loadRoot(root, undefined)
        if (first.value._tag === "Legacy" || first.value.snapshot.stale.has(apiVersion)) {
          return yield* resolveByGroupVersion(apiVersion, kind, verbs)
        }
        const found = find(first.value.snapshot.kinds.get(apiVersion), kind, verbs)
        if (found !== undefined) return found
        // A document fetched by this very call is as fresh as it gets; an older one may predate a CRD.
        const second = first.fresh ? first : yield* loadRoot(root, first.entry)
        if (second.value._tag === "Legacy" || second.value.snapshot.stale.has(apiVersion)) {
          return yield* resolveByGroupVersion(apiVersion, kind, verbs)
        }
        return yield* foundOrFail(apiVersion, kind, verbs, second.value.snapshot.kinds.get(apiVersion))
      })

    const serverVersion = client.sendJson(requestDiscovery.serverVersion).pipe(
      Effect.flatMap((json) =>
        Effect.mapError(
          decodeVersion(json),
          () => malformed(requestDiscovery.serverVersion, "expected a version.Info with major, minor and gitVersion")
        )
      ),
      Effect.provide(context)
    )

    const legacyCoreGroup = (index: unknown): Effect.Effect<ReadonlyArray<Discovery.ApiGroup>, Kube.Error> =>
      (index !== undefined ? Effect.succeed(index) : client.sendJson(requestDiscovery.coreVersions)).pipe(
        Effect.flatMap((json) =>
          Effect.mapError(decodeCore(json), () => malformed(requestDiscovery.coreVersions, "expected an APIVersions"))
        ),
        Effect.map((core): ReadonlyArray<Discovery.ApiGroup> => [{
          name: "",
          versions: core.versions,
          preferredVersion: core.versions[0] ?? "v1"
        }]),
        Effect.provide(context)
      )

    const legacyNamedGroups = (index: unknown): Effect.Effect<ReadonlyArray<Discovery.ApiGroup>, Kube.Error> =>
      (index !== undefined ? Effect.succeed(index) : client.sendJson(requestDiscovery.groups)).pipe(
      Effect.flatMap((json) =>
        Effect.mapError(decodeGroups(json), () => malformed(requestDiscovery.groups, "expected an APIGroupList"))
      ),
      Effect.map((named) =>
        named.groups.map((g): Discovery.ApiGroup => ({
          name: g.name,
          versions: g.versions.map((v) => v.version),
          preferredVersion: g.preferredVersion?.version ?? g.versions[0]?.version ?? ""
        }))
      ),
      Effect.provide(context)
    )

    /** Every resource of the group versions listed, read from their own documents (shared with `resolve`). */
    const resourcesByGroupVersion = (
      pairs: ReadonlyArray<{ readonly group: Discovery.ApiGroup; readonly version: string; readonly apiVersion: string }>
    ) =>
      Effect.gen(function*() {
        const loaded = yield* Effect.forEach(
          pairs,
          (pair) => Effect.result(Effect.map(loadKinds(pair.apiVersion, undefined), (l) => ({ pair, kinds: l.value }))),
          { concurrency: 8 }
        )
        const all: Array<Discovery.ApiResource> = []
        const failed: Array<Discovery.FailedGroupVersion> = []
        for (let i = 0; i < loaded.length; i++) {
          const result = loaded[i]!
          const pair = pairs[i]!
          if (Result.isFailure(result)) {
            // An aggregated API that is down (503) does not hide every other group, as with kubectl.
            if (result.failure._tag === "ApiError" && result.failure.code >= 500) {
              failed.push({ apiVersion: pair.apiVersion, error: result.failure })
              continue
            }
            return yield* Effect.fail(result.failure)
          }
          const preferred = pair.group.preferredVersion === pair.version
          for (const r of result.success.kinds?.resources ?? []) all.push({ ...r, preferred })
        }
        return { resources: all, failed }
      })

    const pairsOf = (groups: ReadonlyArray<Discovery.ApiGroup>, keep: (apiVersion: string) => boolean) =>
      groups.flatMap((g) =>
        g.versions.map((version) => ({
          group: g,
          version,
          apiVersion: g.name === "" ? version : `${g.name}/${version}`
        }))
      ).filter((pair) => keep(pair.apiVersion))

    const resources = (): Effect.Effect<Discovery.Resources, Kube.Error> =>
      Effect.gen(function*() {
        // Fresh roots (what is served changes); with aggregated discovery they are all there is to read.
        const [core, named] = yield* Effect.all([loadRoot("api", "refresh"), loadRoot("apis", "refresh")], {
          concurrency: 2
        })
        const groups: Array<Discovery.ApiGroup> = []
        const all: Array<Discovery.ApiResource> = []
        const byGroupVersion: Array<ReturnType<typeof pairsOf>[number]> = []
        for (const [root, legacyGroups] of [[core.value, legacyCoreGroup], [named.value, legacyNamedGroups]] as const) {
          if (root._tag === "Legacy") {
            // the index the server answered the aggregated Accept with
            const listed = yield* legacyGroups(root.index)
            groups.push(...listed)
            byGroupVersion.push(...pairsOf(listed, () => true))
            continue
          }
          const { snapshot } = root
          groups.push(...snapshot.groups)
          for (const [apiVersion, kinds] of snapshot.kinds) {
            if (!snapshot.stale.has(apiVersion)) all.push(...kinds.resources)
          }
          byGroupVersion.push(...pairsOf(snapshot.groups, (apiVersion) => snapshot.stale.has(apiVersion)))
        }
        const rest = yield* resourcesByGroupVersion(byGroupVersion)
        return { groups, resources: [...all, ...rest.resources], failed: rest.failed }
      })

    return { resolve, serverVersion, resources }
  }
)

/** The resource of a kind whose verbs fit, from a group version's kinds; undefined when there is none. */
const find = (
  kinds: Kinds,
  kind: string,
  verbs: ReadonlyArray<string> | undefined
): Resource.Resource<unknown> | undefined => {
  const found = kinds?.byKind.get(kind)
  return found === undefined ? undefined : pick(found, verbs)?.resource
}

/** The resource of a kind from the freshest kinds there are, or the ValidationError that says why there is none. */
const foundOrFail = (
  apiVersion: string,
  kind: string,
  verbs: ReadonlyArray<string> | undefined,
  kinds: Kinds
): Effect.Effect<Resource.Resource<unknown>, ValidationError> => {
  const again = kinds?.byKind.get(kind)
  if (again !== undefined) {
    const fits = pick(again, verbs)
    if (fits !== undefined) return Effect.succeed(fits.resource)
    return Effect.fail(
      new ValidationError({
        subject: `${apiVersion} ${kind}`,
        detail: `no resource of kind ${kind} serves ${verbs?.join(", ")} (${
          again.map((c) => `${c.entry.plural}: ${c.entry.verbs.join(", ")}`).join("; ")
        })`
      })
    )
  }
  return Effect.fail(
    new ValidationError({
      subject: `${apiVersion} ${kind}`,
      detail: kinds === undefined
        ? `the server does not serve ${apiVersion} (no ${groupVersionPath(apiVersion)})`
        : `the server serves no kind ${kind} in ${apiVersion}${didYouMean(kind, kinds.byKind.keys())}`
    })
  )
}

const VersionInfo = Schema.Struct({
  major: Schema.String,
  minor: Schema.String,
  gitVersion: Schema.String,
  gitCommit: Schema.optional(Schema.String),
  gitTreeState: Schema.optional(Schema.String),
  buildDate: Schema.optional(Schema.String),
  goVersion: Schema.optional(Schema.String),
  compiler: Schema.optional(Schema.String),
  platform: Schema.optional(Schema.String)
})
const decodeVersion = Schema.decodeUnknownEffect(VersionInfo)

const decodeCore = Schema.decodeUnknownEffect(Schema.Struct({ versions: Schema.Array(Schema.String) }))

const GroupVersion = Schema.Struct({ groupVersion: Schema.String, version: Schema.String })
const decodeGroups = Schema.decodeUnknownEffect(Schema.Struct({
  groups: Schema.Array(Schema.Struct({
    name: Schema.String,
    versions: Schema.Array(GroupVersion),
    preferredVersion: Schema.optional(GroupVersion)
  }))
}))

/**
 * The version the server prefers for each named group (`/apis`): for kinds known by group
 * alone, as an ApplySet parent lists them (`Deployment.apps`).
 */
export const preferredVersions: Effect.Effect<ReadonlyMap<string, string>, Kube.Error, KubeConfig | HttpClient.HttpClient> =
  client.sendJson(requestDiscovery.groups).pipe(
    Effect.flatMap((json) =>
      Effect.mapError(decodeGroups(json), () => malformed(requestDiscovery.groups, "expected an APIGroupList"))
    ),
    Effect.map((list) =>
      new Map(list.groups.map((g) => [g.name, g.preferredVersion?.version ?? g.versions[0]?.version ?? ""]))
    )
  )

/**
 * The implementation of `Discovery`: one APIResourceList per group version, fetched the
 * first time a kind of that group version is asked for and kept for the life of the
 * service. A kind that is not in the cached list makes the list be fetched once more
 * (a CRD may have been installed since); concurrent callers share one fetch.
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

type Entry = Deferred.Deferred<Kinds, Kube.Error>

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
  const byKind = new Map<string, Array<Candidate>>()
  for (const entry of entries.values()) {
    const full = { ...entry, subresources: subresources.get(entry.plural) ?? [] }
    resources.push(full)
    const resource = Resource.make({
      apiVersion,
      kind: full.kind,
      plural: full.plural,
      namespaced: full.namespaced,
      schema: Schema.Unknown
    })
    byKind.set(full.kind, [...(byKind.get(full.kind) ?? []), { resource, entry: full }])
  }
  return Effect.succeed({ resources, byKind })
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

/** Builds the service; the requests it sends use the KubeConfig and HttpClient in scope now. */
export const make: Effect.Effect<Discovery.Service, never, KubeConfig | HttpClient.HttpClient> = Effect.gen(
  function*() {
    const context = yield* Effect.context<KubeConfig | HttpClient.HttpClient>()
    const cache = yield* Ref.make(new Map<string, Entry>())

    const forget = (apiVersion: string, entry: Entry) =>
      Ref.update(cache, (map) => {
        if (map.get(apiVersion) !== entry) return map
        const next = new Map(map)
        next.delete(apiVersion)
        return next
      })

    /**
     * The kinds of a group version: the cached list unless it is `stale`, else a fresh
     * one. Only the caller that installs a new entry fetches; the others wait for it.
     * `fresh` says whether this call fetched the list itself.
     */
    const load = (
      apiVersion: string,
      stale: Entry | undefined
    ): Effect.Effect<{ readonly entry: Entry; readonly kinds: Kinds; readonly fresh: boolean }, Kube.Error> =>
      Effect.gen(function*() {
        const candidate = yield* Deferred.make<Kinds, Kube.Error>()
        const entry = yield* Ref.modify(cache, (map): [Entry, Map<string, Entry>] => {
          const current = map.get(apiVersion)
          if (current !== undefined && current !== stale) return [current, map]
          return [candidate, new Map(map).set(apiVersion, candidate)]
        })
        const fresh = entry === candidate
        if (fresh) {
          // A failed fetch is not cached: the next caller tries again.
          yield* fetchKinds(apiVersion).pipe(
            Effect.provide(context),
            Effect.onExit((exit) => (Exit.isSuccess(exit) ? Effect.void : forget(apiVersion, candidate))),
            Deferred.into(candidate)
          )
        }
        const exit = yield* Effect.exit(Deferred.await(entry))
        if (Exit.isSuccess(exit)) return { entry, kinds: exit.value, fresh }
        // The fiber that was fetching for us was interrupted (and its entry forgotten): fetch again.
        if (Cause.hasInterruptsOnly(exit.cause)) return yield* load(apiVersion, undefined)
        return yield* Effect.failCause(exit.cause)
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
        const first = yield* load(apiVersion, undefined)
        const found = first.kinds?.byKind.get(kind)
        if (found !== undefined) {
          const fits = pick(found, verbs)
          if (fits !== undefined) return fits.resource
        }
        // A list fetched by this very call is as fresh as it gets; an older one may predate a CRD.
        const second = first.fresh ? first : yield* load(apiVersion, first.entry)
        const again = second.kinds?.byKind.get(kind)
        if (again !== undefined) {
          const fits = pick(again, verbs)
          if (fits !== undefined) return fits.resource
          return yield* new ValidationError({
            subject: `${apiVersion} ${kind}`,
            detail: `no resource of kind ${kind} serves ${verbs?.join(", ")} (${
              again.map((c) => `${c.entry.plural}: ${c.entry.verbs.join(", ")}`).join("; ")
            })`
          })
        }
        return yield* new ValidationError({
          subject: `${apiVersion} ${kind}`,
          detail: second.kinds === undefined
            ? `the server does not serve ${apiVersion} (no ${groupVersionPath(apiVersion)})`
            : `the server serves no kind ${kind} in ${apiVersion}${didYouMean(kind, second.kinds.byKind.keys())}`
        })
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

    const groupVersions: Effect.Effect<ReadonlyArray<Discovery.ApiGroup>, Kube.Error> = Effect.gen(function*() {
      const core = yield* client.sendJson(requestDiscovery.coreVersions).pipe(
        Effect.flatMap((json) =>
          Effect.mapError(decodeCore(json), () => malformed(requestDiscovery.coreVersions, "expected an APIVersions"))
        )
      )
      const named = yield* client.sendJson(requestDiscovery.groups).pipe(
        Effect.flatMap((json) =>
          Effect.mapError(decodeGroups(json), () => malformed(requestDiscovery.groups, "expected an APIGroupList"))
        )
      )
      const coreGroup: Discovery.ApiGroup = {
        name: "",
        versions: core.versions,
        preferredVersion: core.versions[0] ?? "v1"
      }
      return [
        coreGroup,
        ...named.groups.map((g): Discovery.ApiGroup => ({
          name: g.name,
          versions: g.versions.map((v) => v.version),
          preferredVersion: g.preferredVersion?.version ?? g.versions[0]?.version ?? ""
        }))
      ]
    }).pipe(Effect.provide(context))

    const resources = (): Effect.Effect<Discovery.Resources, Kube.Error> =>
      Effect.gen(function*() {
        const groups = yield* groupVersions
        const pairs = groups.flatMap((g) =>
          g.versions.map((version) => ({
            group: g,
            version,
            apiVersion: g.name === "" ? version : `${g.name}/${version}`
          }))
        )
        const loaded = yield* Effect.forEach(
          pairs,
          (pair) => Effect.result(Effect.map(load(pair.apiVersion, undefined), (l) => ({ pair, kinds: l.kinds }))),
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
        return { groups, resources: all, failed }
      })

    return { resolve, serverVersion, resources }
  }
)

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

/**
 * The implementation of `Discovery`: one APIResourceList per group version, fetched the
 * first time a kind of that group version is asked for and kept for the life of the
 * service. A kind that is not in the cached list makes the list be fetched once more
 * (a CRD may have been installed since); concurrent callers share one fetch.
 */
import type * as HttpClient from "@effect/platform/HttpClient"
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import type * as Discovery from "../Discovery.js"
import { ApiError, ValidationError } from "../Errors.js"
import type * as Kube from "../Kube.js"
import type { KubeConfig } from "../KubeConfig.js"
import * as Resource from "../Resource.js"
import * as client from "./client.js"
import { malformed } from "./codec.js"
import * as request from "./request/operations.js"
import type { Spec } from "./request/spec.js"

/** The kinds one group version serves, by kind; `undefined` when the server does not serve the group version. */
type Kinds = ReadonlyMap<string, Resource.Resource<unknown>> | undefined

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
  namespaced: Schema.Boolean
})

const ResourceList = Schema.Struct({
  resources: Schema.Array(Schema.Unknown)
})

const decodeList = Schema.decodeUnknownOption(ResourceList)
const decodeEntry = Schema.decodeUnknownOption(ResourceEntry)

/** Turns an APIResourceList into its kinds; subresources (`pods/log`) are not kinds. */
export const kindsOf = (
  apiVersion: string,
  json: unknown,
  spec: Spec
): Effect.Effect<Kinds, ValidationError> => {
  const list = decodeList(json)
  if (Option.isNone(list)) return Effect.fail(malformed(spec, "expected an APIResourceList"))
  const kinds = new Map<string, Resource.Resource<unknown>>()
  for (const raw of list.value.resources) {
    const entry = decodeEntry(raw)
    if (Option.isNone(entry)) {
      return Effect.fail(
        malformed(spec, "has a resource without a string name and kind and a boolean namespaced")
      )
    }
    const { kind, name, namespaced } = entry.value
    if (name.includes("/") || kinds.has(kind)) continue
    kinds.set(kind, Resource.make({ apiVersion, kind, plural: name, namespaced, schema: Schema.Unknown }))
  }
  return Effect.succeed(kinds)
}

/** The discovery document of one group version: `/api/v1` or `/apis/<group>/<version>`. */
export const groupVersionPath = request.groupVersionPath

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
            Effect.intoDeferred(candidate)
          )
        }
        const exit = yield* Effect.exit(Deferred.await(entry))
        if (Exit.isSuccess(exit)) return { entry, kinds: exit.value, fresh }
        // The fiber that was fetching for us was interrupted (and its entry forgotten): fetch again.
        if (Cause.isInterruptedOnly(exit.cause)) return yield* load(apiVersion, undefined)
        return yield* Effect.failCause(exit.cause)
      })

    const resolve = (apiVersion: string, kind: string): Effect.Effect<Resource.Resource<unknown>, Kube.Error> =>
      Effect.gen(function*() {
        const versionProblem = apiVersionProblem(apiVersion)
        if (versionProblem !== undefined) {
          return yield* new ValidationError({ subject: `apiVersion of kind ${String(kind)}`, detail: versionProblem })
        }
        const problem = kindProblem(kind)
        if (problem !== undefined) {
          return yield* new ValidationError({ subject: `kind (${apiVersion})`, detail: problem })
        }
        const first = yield* load(apiVersion, undefined)
        const found = first.kinds?.get(kind)
        if (found !== undefined) return found
        // A list fetched by this very call is as fresh as it gets; an older one may predate a CRD.
        const second = first.fresh ? first : yield* load(apiVersion, first.entry)
        const again = second.kinds?.get(kind)
        if (again !== undefined) return again
        return yield* new ValidationError({
          subject: `${apiVersion} ${kind}`,
          detail: second.kinds === undefined
            ? `the server does not serve ${apiVersion} (no ${groupVersionPath(apiVersion)})`
            : `the server serves no kind ${kind} in ${apiVersion}`
        })
      })

    return { resolve }
  }
)

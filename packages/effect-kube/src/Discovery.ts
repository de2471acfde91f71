/**
 * Finds where a kind lives (its plural, and whether it is namespaced) from the server's
 * discovery documents, so objects of any kind, custom resources included, can be sent
 * without a hand-written `Resource`.
 *
 * The documents are the aggregated ones (`apidiscovery.k8s.io/v2`, or `v2beta1`): `/api`
 * for the core group and `/apis` for every other, each fetched the first time one of its
 * kinds is asked for and kept as long as the service lives. A server without them (before
 * kube-apiserver 1.26) answers the legacy index, and each group version's own document
 * (`/api/v1`, `/apis/<group>/<version>`) is read instead, as is a group version the
 * aggregated document marks `Stale`. A kind a cached document does not list makes it be
 * fetched once more, so a CRD installed meanwhile is found. `Manifests` and `Template`
 * use the `Discovery` in context when there is one, else a new one per operation.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Discovery, Kube, NodeKube } from "effect-kube"
 *
 * const program = Effect.gen(function* () {
 *   const discovery = yield* Discovery.Discovery
 *   const crontabs = yield* discovery.resolve("stable.example.com/v1", "CronTab")
 *   return yield* Kube.api(crontabs, { namespace: "default" }).list()
 * })
 *
 * // call main() to run it against the cluster your kubeconfig names
 * const main = () => Effect.runPromise(program.pipe(Effect.provide(Discovery.layer), Effect.provide(NodeKube.layer)))
 * ```
 * @since 0.1.0
 */
import type * as HttpClient from "effect/http/HttpClient"
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as internal from "./internal/api/discovery.js"
import type * as Kube from "./Kube.js"
import type { KubeConfig } from "./KubeConfig.js"
import type * as Resource from "./Resource.js"

/**
 * Options of `resolve`: the verbs the resource must serve.
 *
 * @since 0.1.0
 * @category models
 */
export interface ResolveOptions {
  /**
   * Verbs the resource must serve (`["create"]` for OpenShift's `processedtemplates`).
   * Without them, the resource that stores objects of the kind (get, patch, delete) is
   * preferred, as kubectl does.
   */
  readonly verbs?: ReadonlyArray<string> | undefined
}

/**
 * The server's build, from `/version`.
 *
 * @since 0.1.0
 * @category models
 */
export interface ServerVersion {
  readonly major: string
  readonly minor: string
  readonly gitVersion: string
  readonly gitCommit?: string | undefined
  readonly gitTreeState?: string | undefined
  readonly buildDate?: string | undefined
  readonly goVersion?: string | undefined
  readonly compiler?: string | undefined
  readonly platform?: string | undefined
}

/**
 * One resource a group version serves, as `kubectl api-resources` lists it.
 * `preferred` says whether its version is the group's preferred version.
 *
 * @since 0.1.0
 * @category models
 */
export interface ApiResource {
  /** `""` for the core group. */
  readonly group: string
  readonly version: string
  readonly apiVersion: string
  readonly kind: string
  readonly plural: string
  readonly singular: string
  readonly namespaced: boolean
  readonly verbs: ReadonlyArray<string>
  readonly shortNames: ReadonlyArray<string>
  readonly categories: ReadonlyArray<string>
  /** Subresources such as `status`, `scale`, `log`. */
  readonly subresources: ReadonlyArray<string>
  readonly preferred: boolean
}

/**
 * One API group, its versions and the version the server prefers.
 *
 * @since 0.1.0
 * @category models
 */
export interface ApiGroup {
  /** `""` for the core group. */
  readonly name: string
  readonly versions: ReadonlyArray<string>
  readonly preferredVersion: string
}

/**
 * A group version whose document could not be read (an aggregated API that is down).
 *
 * @since 0.1.0
 * @category models
 */
export interface FailedGroupVersion {
  readonly apiVersion: string
  readonly error: Kube.Error
}

/**
 * Everything the server serves: groups, and every resource of every version.
 *
 * @since 0.1.0
 * @category models
 */
export interface Resources {
  readonly groups: ReadonlyArray<ApiGroup>
  readonly resources: ReadonlyArray<ApiResource>
  /** Group versions that answered 5xx, left out as kubectl leaves them out (with a warning). */
  readonly failed: ReadonlyArray<FailedGroupVersion>
}

/**
 * What discovery answers.
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /**
   * The Resource of a kind, with a raw-JSON Schema (`Schema.Unknown`). Where several
   * resources serve the kind (OpenShift's `templates` and create-only
   * `processedtemplates`), the one whose verbs fit (see `ResolveOptions`). A kind the
   * server does not serve fails with a `ValidationError` naming the apiVersion and
   * kind; a failed discovery request fails like every other request.
   */
  readonly resolve: (
    apiVersion: string,
    kind: string,
    options?: ResolveOptions
  ) => Effect.Effect<Resource.Resource<unknown>, Kube.Error>
  /** The server's version (`/version`). */
  readonly serverVersion: Effect.Effect<ServerVersion, Kube.Error>
  /**
   * Every group, version and resource the server serves (`kubectl api-resources`),
   * with verbs, short names, categories, subresources and preferred versions: the two
   * aggregated documents, read afresh (and then shared with `resolve`), or on a server
   * without them every group version's document (shared with `resolve`'s cache).
   *
   * @example
   * ```ts
   * const { resources } = yield* discovery.resources()
   * const deletable = resources.filter((r) => r.preferred && r.verbs.includes("delete"))
   * ```
   */
  readonly resources: () => Effect.Effect<Resources, Kube.Error>
}

/**
 * The `Discovery` service tag.
 *
 * @since 0.1.0
 * @category tags
 */
export class Discovery extends Context.Service<Discovery, Service>()("effect-kube/Discovery") {}

/**
 * A discovery with an empty cache, sending its requests with the KubeConfig and
 * HttpClient in context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<Service, never, KubeConfig | HttpClient.HttpClient> = internal.make

/**
 * A discovery whose cache lives as long as the layer: provide it once so that many
 * `Manifests` and `Template` operations share it.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<Discovery, never, KubeConfig | HttpClient.HttpClient> = Layer.effect(Discovery, make)

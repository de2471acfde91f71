/**
 * A `Resource` describes one kind of the Kubernetes API: where it lives (group,
 * version, plural, namespaced or cluster-scoped) and the Schema its objects are
 * decoded and encoded with. Built-in kinds are in `resources/`; custom resources are
 * one `Resource.make` away.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { Resource } from "effect-kube"
 *
 * const CronTabs = Resource.make({
 *   apiVersion: "stable.example.com/v1",
 *   kind: "CronTab",
 *   plural: "crontabs",
 *   namespaced: true,
 *   schema: Schema.Unknown // a raw-JSON client
 * })
 * ```
 * @since 0.1.0
 */
import type * as Schema from "effect/Schema"
import type { ObjectMetaApply } from "./resources/generatedApply.js"
import type { Named } from "./resources/internal/apply.js"

/**
 * @since 0.1.0
 * @category type ids
 */
export const TypeId: unique symbol = Symbol.for("effect-kube/Resource")

/**
 * @since 0.1.0
 * @category type ids
 */
export type TypeId = typeof TypeId

/**
 * Where a Resource's type keeps its apply configuration: a type only, never a value.
 *
 * @since 0.2.0
 * @category type ids
 */
export declare const ApplyConfigurationTypeId: unique symbol

/**
 * @since 0.2.0
 * @category type ids
 */
export type ApplyConfigurationTypeId = typeof ApplyConfigurationTypeId

/**
 * One kind of the Kubernetes API and the Schema of its objects. `A` is the decoded
 * object type, `I` its JSON form, `S` the subresources the API serves for it
 * (`"status" | "scale"`, `"log" | "exec" | ...` for Pods), `P` what server-side apply
 * takes for it (see `ApplyConfiguration`; `unknown`: derived from `I` by `PartialObject`).
 * Operations on a subresource are offered only where `S` names it, so calling one a kind
 * lacks is a type error.
 *
 * @since 0.1.0
 * @category models
 */
export interface Resource<A, I = A, S extends string = string, P = unknown> {
  readonly [TypeId]: TypeId
  /** The type of the resource's apply configurations; absent at run time. */
  readonly [ApplyConfigurationTypeId]?: P | undefined
  /** `v1` for the core group, `<group>/<version>` otherwise. */
  readonly apiVersion: string
  /** `""` for the core group. */
  readonly group: string
  readonly version: string
  readonly kind: string
  /** The lower-case plural used in paths, e.g. `pods`. */
  readonly plural: string
  readonly namespaced: boolean
  /** The subresources served for this kind, as they appear in paths (`status`, `scale`, `log`). */
  readonly subresources: ReadonlyArray<S>
  readonly schema: Schema.Codec<A, I>
}

/**
 * What a resource says about where it lives, without its Schema: enough to build paths
 * and name objects, for any resource whatever its object type.
 *
 * @since 0.1.0
 * @category models
 */
export type Info = Omit<Resource<unknown>, "schema" | typeof TypeId>

/**
 * The decoded object type of a resource.
 *
 * @since 0.1.0
 * @category models
 */
export type Object<R> = R extends Resource<infer A, infer _I, infer _S> ? A : never

/**
 * The subresources of a resource, as a union of literals.
 *
 * @since 0.1.0
 * @category models
 */
export type Subresources<R> = R extends Resource<infer _A, infer _I, infer S> ? S : never

/**
 * What server-side apply takes for a resource's objects (`apply`, `applyStatus`): the
 * generated apply configuration of a built-in kind (`ApplyConfiguration<typeof Deployments>`
 * is `DeploymentApply`), or `PartialObject` of the JSON form of a custom resource's objects.
 *
 * @example
 * ```ts
 * import { type Deployments, Resource } from "effect-kube"
 *
 * // an autoscaler owns the replicas and nothing else
 * const replicas: Resource.ApplyConfiguration<typeof Deployments> = {
 *   apiVersion: "apps/v1",
 *   kind: "Deployment",
 *   metadata: { name: "web" },
 *   spec: { replicas: 5 }
 * }
 * ```
 * @since 0.2.0
 * @category models
 */
export type ApplyConfiguration<R> = R extends Resource<infer _A, infer I, infer _S, infer P> ? ApplyConfigurationOf<I, P>
  : never

/**
 * The apply configuration of objects whose JSON form is `I`, or `P` when the resource names its own.
 *
 * @since 0.2.0
 * @category models
 */
export type ApplyConfigurationOf<I, P> = unknown extends P ? PartialObject<I> : P

/**
 * An apply configuration derived from an object type (a custom resource's, without one of
 * its own): `apiVersion`, `kind` and `metadata.name` required, every other field optional at
 * every depth. Arrays keep their whole type: a custom resource's lists are atomic (the
 * server replaces them whole) unless its CRD declares them otherwise. `unknown` stays
 * `unknown` (a raw-JSON resource takes any object).
 *
 * @since 0.2.0
 * @category models
 */
export type PartialObject<I> = unknown extends I ? unknown
  :
    & {
      readonly apiVersion: string
      readonly kind: string
      readonly metadata: ObjectMetaApply & Named
    }
    & { readonly [K in Exclude<keyof I, "apiVersion" | "kind" | "metadata">]?: DeepPartial<I[K]> | undefined }

/**
 * Every field optional at every depth, arrays kept whole.
 *
 * @since 0.2.0
 * @category models
 */
export type DeepPartial<T> = T extends ReadonlyArray<unknown> ? T
  : T extends object ? { readonly [K in keyof T]?: DeepPartial<T[K]> | undefined }
  : T

/**
 * Describes a kind. The group and version are taken from `apiVersion`; `subresources`
 * (none by default) lists what the API serves below each object, e.g. a CRD's
 * `["status", "scale"]`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = <A, I, const S extends string = never, P = unknown>(options: {
  readonly apiVersion: string
  readonly kind: string
  readonly plural: string
  readonly namespaced: boolean
  readonly subresources?: ReadonlyArray<S> | undefined
  readonly schema: Schema.Codec<A, I>
}): Resource<A, I, S, P> => {
  const slash = options.apiVersion.indexOf("/")
  return {
    [TypeId]: TypeId,
    apiVersion: options.apiVersion,
    group: slash === -1 ? "" : options.apiVersion.slice(0, slash),
    version: slash === -1 ? options.apiVersion : options.apiVersion.slice(slash + 1),
    kind: options.kind,
    plural: options.plural,
    namespaced: options.namespaced,
    subresources: options.subresources ?? [],
    schema: options.schema
  }
}

/**
 * `/api/v1` for the core group, `/apis/<group>/<version>` otherwise.
 *
 * @since 0.1.0
 * @category paths
 */
export const apiPrefix = (resource: Pick<Info, "group" | "version">): string =>
  resource.group === "" ? `/api/${resource.version}` : `/apis/${resource.group}/${resource.version}`

/**
 * The path of a resource's collection: in a namespace, or across all namespaces (and
 * for cluster-scoped kinds) when `namespace` is undefined. Names are not checked here.
 *
 * @since 0.1.0
 * @category paths
 */
export const collectionPath = (
  resource: Pick<Info, "group" | "version" | "plural">,
  namespace?: string | undefined
): string =>
  namespace === undefined
    ? `${apiPrefix(resource)}/${resource.plural}`
    : `${apiPrefix(resource)}/namespaces/${namespace}/${resource.plural}`

/**
 * The path of one object, optionally of a subresource (`status`, `log`, ...).
 *
 * @since 0.1.0
 * @category paths
 */
export const objectPath = (
  resource: Pick<Info, "group" | "version" | "plural">,
  namespace: string | undefined,
  name: string,
  subresource?: string | undefined
): string =>
  `${collectionPath(resource, namespace)}/${name}${subresource === undefined ? "" : `/${subresource}`}`

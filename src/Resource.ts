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
 * One kind of the Kubernetes API and the Schema of its objects. `A` is the decoded
 * object type, `I` its JSON form, `S` the subresources the API serves for it
 * (`"status" | "scale"`, `"log" | "exec" | ...` for Pods). Operations on a subresource
 * are offered only where `S` names it, so calling one a kind lacks is a type error.
 *
 * @since 0.1.0
 * @category models
 */
export interface Resource<A, I = A, S extends string = string> {
  readonly [TypeId]: TypeId
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
 * Describes a kind. The group and version are taken from `apiVersion`; `subresources`
 * (none by default) lists what the API serves below each object, e.g. a CRD's
 * `["status", "scale"]`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = <A, I, const S extends string = never>(options: {
  readonly apiVersion: string
  readonly kind: string
  readonly plural: string
  readonly namespaced: boolean
  readonly subresources?: ReadonlyArray<S> | undefined
  readonly schema: Schema.Codec<A, I>
}): Resource<A, I, S> => {
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

/**
 * Finds where a kind lives (its plural, and whether it is namespaced) from the server's
 * discovery documents (`/api/v1`, `/apis/<group>/<version>`), so objects of any kind,
 * custom resources included, can be sent without a hand-written `Resource`.
 *
 * Each group version's document is fetched the first time one of its kinds is asked
 * for and kept as long as the service lives; a kind it does not list makes it be
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
import type * as HttpClient from "@effect/platform/HttpClient"
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as internal from "./internal/discovery.js"
import type * as Kube from "./Kube.js"
import type { KubeConfig } from "./KubeConfig.js"
import type * as Resource from "./Resource.js"

/**
 * What discovery answers.
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /**
   * The Resource of a kind, with a raw-JSON Schema (`Schema.Unknown`). A kind the
   * server does not serve fails with a `ValidationError` naming the apiVersion and
   * kind; a failed discovery request fails like every other request.
   */
  readonly resolve: (apiVersion: string, kind: string) => Effect.Effect<Resource.Resource<unknown>, Kube.Error>
}

/**
 * The `Discovery` service tag.
 *
 * @since 0.1.0
 * @category tags
 */
export class Discovery extends Context.Tag("effect-kube/Discovery")<Discovery, Service>() {}

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

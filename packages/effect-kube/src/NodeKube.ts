/**
 * Kubernetes on Node: a `KubeConfig` together with an `HttpClient` whose TLS (CA,
 * client certificate, server name, `insecure-skip-tls-verify`) comes from that
 * configuration, over keep-alive connections reused across requests.
 *
 * The layers provide the application's `HttpClient`, so the cluster's TLS applies to the
 * cluster's origin only: a request to any other origin goes out with the platform's
 * defaults (the system's roots, no client certificate), as if the cluster were not there.
 *
 * The layers provide both services every operation needs, `KubeConfig` and
 * `HttpClient.HttpClient`, and need nothing themselves.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Kube, NodeKube, Pods } from "effect-kube"
 *
 * const program = Kube.api(Pods).list()
 * // call main() to run it against the cluster your kubeconfig names
 * const main = () => Effect.runPromise(Effect.provide(program, NodeKube.layer))
 * ```
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as HttpClient from "effect/http/HttpClient"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import type { KubeConfigError } from "./Errors.js"
import { ValidationError } from "./Errors.js"
import { enforcesDeadline } from "./internal/transport/contract.js"
import * as internal from "./internal/transport/node.js"
import * as Platform from "./internal/transport/layers.js"
import * as KubeConfig from "./KubeConfig.js"

/**
 * How the Node transport connects to the cluster.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /**
   * The most HTTP/1.1 connections to the cluster for short requests (get, list, create,
   * patch, delete, ...), per client certificate; more requests wait for a free connection.
   * Watches, log requests and the other long-running requests (exec, attach, port-forward,
   * proxy) have a pool of their own, without a cap, so that open streams never hold up
   * short requests. A positive integer, or `Infinity` for no cap. Default 32.
   */
  readonly maxConnections?: number | undefined
  /**
   * The most bytes of an answer's status line and headers (undici's `maxHeaderSize`),
   * which also bounds how many headers there can be. Past it the connection is closed and
   * the request fails with `LimitExceeded`. A positive integer; default 64 KiB (a
   * kube-apiserver answer's headers are well under 8 KiB, its warnings cut at 4 KiB).
   */
  readonly maxHeaderBytes?: number | undefined
  /**
   * HTTP/2 where the cluster offers it by ALPN (kube-apiserver does): every request, watch
   * and log follow a stream on one connection (a second when the server's
   * `SETTINGS_MAX_CONCURRENT_STREAMS` is reached), each connection pinged every 30 s and
   * given up when a ping goes unanswered for 15 s, as client-go does. Servers that answer
   * HTTP/1.1 get the two pools above; exec, attach and port-forward are always WebSocket
   * over HTTP/1.1; a cluster reached through a proxy is spoken to over HTTP/1.1. Default
   * `true`; `false`, or the environment variable `DISABLE_HTTP2` set to anything (client-go's
   * switch), keeps HTTP/1.1 only.
   */
  readonly http2?: boolean | undefined
}

/**
 * The platform services the kubeconfig loaders need (`KubeConfig.Platform`: `FileSystem`,
 * `Path` and `ChildProcessSpawner`), from @effect/platform-node-shared. The `NodeKube`
 * layers include it; provide it yourself to a `KubeConfig` layer used on its own. It
 * runs on Bun and Deno too, through their Node compatibility.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { KubeConfig, NodeKube } from "effect-kube"
 *
 * const program = Effect.map(KubeConfig.fromFile({ path: "./kubeconfig" }), (config) => config.server)
 * // call main() to print the server of ./kubeconfig
 * const main = () => Effect.runPromise(Effect.provide(program, NodeKube.layerPlatform)).then(console.log)
 * ```
 * @since 0.1.0
 * @category layers
 */
export const layerPlatform: Layer.Layer<KubeConfig.Platform> = Platform.layer

const checkOptions = (options: Options): Effect.Effect<Options, ValidationError> => {
  const max = options.maxConnections
  if (!(max === undefined || max === Infinity || (Number.isInteger(max) && max >= 1))) {
    return Effect.fail(
      new ValidationError({
        subject: "NodeKube.Options.maxConnections",
        detail: `must be a positive integer or Infinity, got ${String(max)}`
      })
    )
  }
  const headers = options.maxHeaderBytes
  if (!(headers === undefined || (Number.isSafeInteger(headers) && headers >= 1))) {
    return Effect.fail(
      new ValidationError({
        subject: "NodeKube.Options.maxHeaderBytes",
        detail: `must be a positive integer, got ${String(headers)}`
      })
    )
  }
  return Effect.succeed(options)
}

/**
 * An `HttpClient` for the configuration in context: on the cluster's origin, TLS from
 * `KubeConfig.tls` and client certificates from the auth provider (an exec plugin's
 * certificate included, with a fresh connection pool when it changes); on any other
 * origin, the platform's defaults. Keep-alive connections, at most 32 for short requests
 * and a separate pool for watches and other long-running requests (see `Options`); the
 * agents are destroyed when the scope closes. It adds no headers: the operations add the
 * server URL, the Authorization header and the rest.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<HttpClient.HttpClient, never, KubeConfig.KubeConfig | Scope.Scope> = Effect.flatMap(
  KubeConfig.KubeConfig,
  (config) => Effect.map(internal.make(config), enforcingDeadlines)
)

/**
 * The Node transport's client, marked as one that enforces the request path's deadline: a
 * request's timeout then arms one timer that the transport answers to, where any other
 * client's request is forked to be interrupted (a fiber, its observer and its interruption
 * per request). Every client the transport makes is marked, with options or without.
 */
const enforcingDeadlines = (client: HttpClient.HttpClient): HttpClient.HttpClient => {
  enforcesDeadline.add(client)
  return client
}

/**
 * `make` with options; fails with a `ValidationError` when an option is not valid.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeWith = (
  options: Options
): Effect.Effect<HttpClient.HttpClient, ValidationError, KubeConfig.KubeConfig | Scope.Scope> =>
  Effect.flatMap(
    checkOptions(options),
    (checked) =>
      Effect.flatMap(KubeConfig.KubeConfig, (config) => Effect.map(internal.make(config, checked), enforcingDeadlines))
  )

/**
 * The `HttpClient` for whichever `KubeConfig` layer it is given; see `make`.
 *
 * @since 0.1.0
 * @category layers
 */
export const httpClientLayer: Layer.Layer<HttpClient.HttpClient, never, KubeConfig.KubeConfig> = Layer.effect(
  HttpClient.HttpClient,
  make
)

/**
 * `httpClientLayer` with options; fails with a `ValidationError` when an option is not valid.
 *
 * @since 0.1.0
 * @category layers
 */
export const httpClientLayerWith = (
  options: Options
): Layer.Layer<HttpClient.HttpClient, ValidationError, KubeConfig.KubeConfig> =>
  Layer.effect(HttpClient.HttpClient, makeWith(options))

/**
 * Both services from any `KubeConfig` layer: that layer, plus the Node `HttpClient` for it.
 * The layer is given Node's `FileSystem`, `Path` and `ChildProcessSpawner` (`layerPlatform`),
 * so the kubeconfig loaders' `KubeConfig.Platform` requirement is met here.
 *
 * With `options`, the transport's (see `Options`); an option that is not valid fails the
 * layer with a `ValidationError`.
 *
 * @example
 * ```ts
 * import { KubeConfig, NodeKube } from "effect-kube"
 *
 * const text = process.env.CI_KUBECONFIG ?? "" // a kubeconfig's YAML, e.g. from a CI secret
 * const layer = NodeKube.layerFromKubeConfig(KubeConfig.layerFromString(text, { context: "ci" }))
 *
 * // the kubeconfig kubectl would use, with up to 64 connections for short requests
 * const busy = NodeKube.layerFromKubeConfig(KubeConfig.layer, { maxConnections: 64 })
 * ```
 * @since 0.1.0
 * @category layers
 */
export const layerFromKubeConfig: {
  <E, R>(
    kubeConfig: Layer.Layer<KubeConfig.KubeConfig, E, R>
  ): Layer.Layer<KubeConfig.KubeConfig | HttpClient.HttpClient, E, Exclude<R, KubeConfig.Platform>>
  <E, R>(
    kubeConfig: Layer.Layer<KubeConfig.KubeConfig, E, R>,
    options: Options
  ): Layer.Layer<
    KubeConfig.KubeConfig | HttpClient.HttpClient,
    E | ValidationError,
    Exclude<R, KubeConfig.Platform>
  >
} = <E, R>(
  kubeConfig: Layer.Layer<KubeConfig.KubeConfig, E, R>,
  options?: Options
): Layer.Layer<
  KubeConfig.KubeConfig | HttpClient.HttpClient,
  E | ValidationError,
  Exclude<R, KubeConfig.Platform>
> =>
  Layer.provideMerge(
    // fresh: a layer is memoized by identity, so without it a second layerFromKubeConfig provided inside a program
    // that already built one (another cluster, a token of another user) would get the first one's HttpClient: its
    // CA and TLS settings, its proxy, its connections
    Layer.fresh(options === undefined ? httpClientLayer : httpClientLayerWith(options)),
    Layer.provide(kubeConfig, Platform.layer)
  )

/** The layers below, made by the helper every runtime module shares. */
const layers = Platform.runtimeLayers((kubeConfig) => layerFromKubeConfig(kubeConfig))

/**
 * The layer for most programs: in a pod its service account, elsewhere the kubeconfig
 * kubectl would use (`$KUBECONFIG`, else `~/.kube/config`), with the Node transport.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<KubeConfig.KubeConfig | HttpClient.HttpClient, KubeConfigError> = layers.layer

/**
 * A kubeconfig file (or path list) and context, with the Node transport.
 *
 * @example
 * ```ts
 * import { NodeKube } from "effect-kube"
 *
 * const staging = NodeKube.layerFromFile({ path: "./kubeconfig", context: "staging" })
 * ```
 * @since 0.1.0
 * @category layers
 */
export const layerFromFile = (
  options?: KubeConfig.FileOptions
): Layer.Layer<KubeConfig.KubeConfig | HttpClient.HttpClient, KubeConfigError> => layers.layerFromFile(options)

/**
 * The pod's own service account, with the Node transport.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerInCluster: Layer.Layer<KubeConfig.KubeConfig | HttpClient.HttpClient, KubeConfigError> =
  layers.layerInCluster

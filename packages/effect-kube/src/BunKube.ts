/**
 * Kubernetes on Bun: a `KubeConfig` together with an `HttpClient` over Bun's `fetch`,
 * whose TLS options (CA, client certificate, server name, `insecure-skip-tls-verify`)
 * are given only to requests for the cluster's origin; other origins get Bun's
 * defaults (the HttpClient is `effect/http/FetchHttpClient`). Kubeconfig files are read
 * and exec plugins run through Bun's Node compatibility (`NodeKube.layerPlatform`, from
 * @effect/platform-node-shared). Exported as `effect-kube/bun`.
 *
 * An impersonation with several groups (or several values of one extra) is refused by
 * this transport: Bun's `fetch` cannot send one header name on several lines.
 *
 * The cluster's proxy (its `proxy-url`, else `HTTPS_PROXY`/`NO_PROXY` by client-go's rules)
 * is given to Bun's `fetch`; a SOCKS5 one, which Bun's `fetch` cannot use, fails the
 * cluster's requests with an error naming it.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Kube, Pods } from "effect-kube"
 * import { BunKube } from "effect-kube/bun"
 *
 * const program = Kube.api(Pods).list()
 * // call main() under Bun
 * const main = () => Effect.runPromise(Effect.provide(program, BunKube.layer))
 * ```
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as HttpClient from "effect/http/HttpClient"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import type { KubeConfigError } from "./Errors.js"
import * as internal from "./internal/transport/fetch.js"
import { proxyUrlWithCredentials } from "./internal/transport/proxies.js"
import * as Platform from "./internal/transport/layers.js"
import * as KubeConfig from "./KubeConfig.js"

/**
 * The platform services the kubeconfig loaders need on Bun (`KubeConfig.Platform`):
 * @effect/platform-node-shared's `FileSystem`, `Path` and `ChildProcessSpawner`, which
 * run on Bun's Node compatibility. The same layer as `NodeKube.layerPlatform`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerPlatform: Layer.Layer<KubeConfig.Platform> = Platform.layer

/** Bun's `fetch` TLS options (`tls` in its `RequestInit`). */
interface BunTls {
  readonly rejectUnauthorized: boolean
  readonly ca?: string
  readonly serverName?: string
  readonly cert?: string
  readonly key?: string
}

/**
 * An `HttpClient` for the configuration in context, over Bun's `fetch`: the cluster's
 * TLS material for the cluster's origin only, the current client certificate of the
 * auth provider (an exec plugin's included). It adds no headers: the operations add the
 * server URL, the Authorization header and the rest.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<HttpClient.HttpClient, never, KubeConfig.KubeConfig> = Effect.flatMap(
  KubeConfig.KubeConfig,
  (config) =>
    internal.make(config, (certificate, proxy) => {
      const tls: BunTls = {
        rejectUnauthorized: !config.tls.insecureSkipTlsVerify,
        ...(config.tls.ca !== undefined ? { ca: config.tls.ca } : {}),
        ...(config.tls.serverName !== undefined ? { serverName: config.tls.serverName } : {}),
        ...(certificate !== undefined ? { cert: certificate.cert, key: Redacted.value(certificate.key) } : {})
      }
      const init: { readonly tls: BunTls; readonly proxy?: string } = proxy === undefined
        ? { tls }
        : { tls, proxy: proxyUrlWithCredentials(proxy) }
      return init as RequestInit
    }, (proxy) =>
      proxy.url.startsWith("socks5:")
        ? `the cluster's proxy ${proxy.url} is SOCKS5, which Bun's fetch cannot use (use an http:// or https:// proxy, or NodeKube)`
        : undefined)
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
 * Both services from any `KubeConfig` layer: that layer (given `FileSystem`, `Path` and
 * `ChildProcessSpawner`, see `layerPlatform`), plus the Bun `HttpClient` for it.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerFromKubeConfig = <E, R>(
  kubeConfig: Layer.Layer<KubeConfig.KubeConfig, E, R>
): Layer.Layer<KubeConfig.KubeConfig | HttpClient.HttpClient, E, Exclude<R, KubeConfig.Platform>> =>
  Layer.provideMerge(Layer.fresh(httpClientLayer), Layer.provide(kubeConfig, Platform.layer)) // fresh: see NodeKube

/** The layers below, made by the helper every runtime module shares. */
const layers = Platform.runtimeLayers(layerFromKubeConfig)

/**
 * The layer for most programs: in a pod its service account, elsewhere the kubeconfig
 * kubectl would use (`$KUBECONFIG`, else `~/.kube/config`), over Bun's `fetch`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<KubeConfig.KubeConfig | HttpClient.HttpClient, KubeConfigError> = layers.layer

/**
 * A kubeconfig file (or path list) and context, over Bun's `fetch`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerFromFile = (
  options?: KubeConfig.FileOptions
): Layer.Layer<KubeConfig.KubeConfig | HttpClient.HttpClient, KubeConfigError> => layers.layerFromFile(options)

/**
 * The pod's own service account, over Bun's `fetch`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerInCluster: Layer.Layer<KubeConfig.KubeConfig | HttpClient.HttpClient, KubeConfigError> =
  layers.layerInCluster

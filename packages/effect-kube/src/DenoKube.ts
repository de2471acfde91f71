/**
 * Kubernetes on Deno: a `KubeConfig` together with an `HttpClient` over Deno's `fetch`,
 * with a `Deno.createHttpClient` that carries the cluster's CA and client certificate
 * given only to requests for the cluster's origin; other origins get Deno's defaults.
 * The HttpClient is `effect/http/FetchHttpClient`; kubeconfig files are read and exec
 * plugins run through Deno's Node compatibility (`NodeKube.layerPlatform`, from
 * @effect/platform-node-shared). Exported as `effect-kube/deno`.
 *
 * Deno's HTTP client has no option to skip verification or to check another name than
 * the URL's host, so a cluster with `insecure-skip-tls-verify` or `tls-server-name` is
 * refused with a `KubeConfigError`. Its `caCerts` are trusted in addition to Deno's
 * roots. An impersonation with several groups (or several values of one extra) is
 * refused by this transport: `fetch` cannot send one header name on several lines.
 * The cluster's proxy (its `proxy-url`, else `HTTPS_PROXY`/`NO_PROXY` by client-go's rules;
 * http, https or SOCKS5) is given to the HTTP client.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Kube, Pods } from "effect-kube"
 * import { DenoKube } from "effect-kube/deno"
 *
 * const program = Kube.api(Pods).list()
 * // call main() under Deno
 * const main = () => Effect.runPromise(Effect.provide(program, DenoKube.layer))
 * ```
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as HttpClient from "effect/http/HttpClient"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import type * as Scope from "effect/Scope"
import { KubeConfigError } from "./Errors.js"
import * as internal from "./internal/transport/fetch.js"
import * as Platform from "./internal/transport/layers.js"
import * as KubeConfig from "./KubeConfig.js"

/**
 * The platform services the kubeconfig loaders need on Deno (`KubeConfig.Platform`):
 * @effect/platform-node-shared's `FileSystem`, `Path` and `ChildProcessSpawner`, which
 * run on Deno's Node compatibility. The same layer as `NodeKube.layerPlatform`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerPlatform: Layer.Layer<KubeConfig.Platform> = Platform.layer

/** The part of the `Deno` global used here (the package is type-checked without Deno's types). */
interface DenoHttpClient {
  close(): void
}
interface DenoGlobal {
  createHttpClient(options: {
    readonly caCerts?: ReadonlyArray<string>
    readonly cert?: string
    readonly key?: string
    readonly proxy?: {
      readonly url: string
      readonly basicAuth?: { readonly username: string; readonly password: string }
    }
  }): DenoHttpClient
}

/**
 * An `HttpClient` for the configuration in context, over Deno's `fetch`; see the module
 * comment for what Deno cannot do. Deno HTTP clients are closed with the scope.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<HttpClient.HttpClient, KubeConfigError, KubeConfig.KubeConfig | Scope.Scope> = Effect
  .gen(function*() {
    const config = yield* KubeConfig.KubeConfig
    const refuse = (field: string, detail: string) =>
      Effect.fail(new KubeConfigError({ source: config.source, context: config.context, field, detail }))
    const deno = (globalThis as { readonly Deno?: DenoGlobal }).Deno
    if (deno === undefined) return yield* refuse("DenoKube", "runs on Deno only (the Deno global is missing)")
    if (config.tls.insecureSkipTlsVerify) {
      return yield* refuse("insecure-skip-tls-verify", "is not supported on Deno: its HTTP client always verifies")
    }
    if (config.tls.serverName !== undefined) {
      return yield* refuse("tls-server-name", "is not supported on Deno: its HTTP client checks the URL's host")
    }
    const clients = new Map<string, DenoHttpClient>()
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        for (const client of clients.values()) client.close()
        clients.clear()
      })
    )
    return yield* internal.make(config, (certificate, proxy) => {
      const key = certificate === undefined ? "" : certificate.cert
      let client = clients.get(key)
      if (client === undefined) {
        client = deno.createHttpClient({
          ...(config.tls.ca !== undefined ? { caCerts: [config.tls.ca] } : {}),
          ...(certificate !== undefined ? { cert: certificate.cert, key: Redacted.value(certificate.key) } : {}),
          ...(proxy !== undefined
            ? {
              proxy: {
                url: proxy.url,
                ...(proxy.credentials !== undefined ? { basicAuth: Redacted.value(proxy.credentials) } : {})
              }
            }
            : {})
        })
        clients.set(key, client)
      }
      return { client } as RequestInit
    })
  })

/**
 * The `HttpClient` for whichever `KubeConfig` layer it is given; see `make`.
 *
 * @since 0.1.0
 * @category layers
 */
export const httpClientLayer: Layer.Layer<HttpClient.HttpClient, KubeConfigError, KubeConfig.KubeConfig> = Layer
  .effect(HttpClient.HttpClient, make)

/**
 * Both services from any `KubeConfig` layer: that layer (given `FileSystem`, `Path` and
 * `ChildProcessSpawner`, see `layerPlatform`, which Deno runs through its Node
 * compatibility), plus the Deno `HttpClient` for it.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerFromKubeConfig = <E, R>(
  kubeConfig: Layer.Layer<KubeConfig.KubeConfig, E, R>
): Layer.Layer<
  KubeConfig.KubeConfig | HttpClient.HttpClient,
  E | KubeConfigError,
  Exclude<R, KubeConfig.Platform>
> => Layer.provideMerge(Layer.fresh(httpClientLayer), Layer.provide(kubeConfig, Platform.layer)) // fresh: see NodeKube

/** The layers below, made by the helper every runtime module shares. */
const layers = Platform.runtimeLayers(layerFromKubeConfig)

/**
 * The layer for most programs: in a pod its service account, elsewhere the kubeconfig
 * kubectl would use (`$KUBECONFIG`, else `~/.kube/config`), over Deno's `fetch`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<KubeConfig.KubeConfig | HttpClient.HttpClient, KubeConfigError> = layers.layer

/**
 * A kubeconfig file (or path list) and context, over Deno's `fetch`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerFromFile = (
  options?: KubeConfig.FileOptions
): Layer.Layer<KubeConfig.KubeConfig | HttpClient.HttpClient, KubeConfigError> => layers.layerFromFile(options)

/**
 * The pod's own service account, over Deno's `fetch`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerInCluster: Layer.Layer<KubeConfig.KubeConfig | HttpClient.HttpClient, KubeConfigError> =
  layers.layerInCluster

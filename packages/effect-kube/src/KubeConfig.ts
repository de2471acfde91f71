/**
 * The `KubeConfig` service: where the cluster is, how to trust it and how to
 * authenticate to it. Every operation requires it; layers build it from a kubeconfig
 * file, a string, the in-cluster service account, or an explicit value.
 *
 * @example
 * ```ts
 * import { KubeConfig } from "effect-kube"
 *
 * const layer = KubeConfig.layerFromFile({ path: "./kubeconfig", context: "staging" })
 * ```
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type * as FileSystem from "effect/FileSystem"
import type * as HttpClient from "effect/http/HttpClient"
import * as Layer from "effect/Layer"
import type * as Path from "effect/Path"
import type * as ChildProcessSpawner from "effect/process/ChildProcessSpawner"
import type * as Redacted from "effect/Redacted"
import type { KubeConfigError } from "./Errors.js"
import * as internal from "./internal/kubeconfig/load.js"
import * as internalOidc from "./internal/kubeconfig/oidc.js"

/**
 * Credentials to present on a request. Secrets are `Redacted`, so they print as
 * `<redacted>` everywhere.
 *
 * @since 0.1.0
 * @category models
 */
export interface Credentials {
  /** Sent as `Authorization: Bearer <token>`. */
  readonly token?: Redacted.Redacted<string> | undefined
  /** Sent as `Authorization: Basic ...`. */
  readonly basic?: { readonly username: string; readonly password: Redacted.Redacted<string> } | undefined
  /** A client certificate (PEM) and key (PEM), presented during the TLS handshake. */
  readonly clientCertificate?: { readonly cert: string; readonly key: Redacted.Redacted<string> } | undefined
}

/**
 * Obtains credentials, caching them as long as they are valid (a token file is checked
 * for a new token every few seconds, an exec plugin is run again after its
 * `expirationTimestamp`; both at once after a 401).
 *
 * @since 0.1.0
 * @category models
 */
export interface AuthProvider {
  /** A short name for messages: `"none"`, `"token"`, `"tokenFile"`, `"basic"`, `"exec"`, `"oidc"`, `"clientCertificate"`. */
  readonly kind: string
  /** The credentials to use for the next request. */
  readonly credentials: Effect.Effect<Credentials, KubeConfigError>
  /**
   * Called once after the server answered 401: forget cached credentials so the next
   * `credentials` obtains fresh ones. `true` when fresh credentials may differ (so one
   * retry is worth it), `false` for static credentials.
   */
  readonly invalidate: Effect.Effect<boolean>
}

/**
 * How to trust the server, from the kubeconfig's cluster entry.
 *
 * @since 0.1.0
 * @category models
 */
export interface TlsOptions {
  /** PEM certificate authority bundle. */
  readonly ca?: string | undefined
  readonly insecureSkipTlsVerify: boolean
  /** SNI and certificate name to check instead of the URL's host. */
  readonly serverName?: string | undefined
}

/**
 * A proxy to reach the cluster through: a cluster's `proxy-url`, or `KubeConfig.make`'s
 * `proxy`. The credentials a URL carries (`http://user:password@host:port`) are kept
 * apart and `Redacted`, so that printing the configuration never shows them.
 *
 * @since 0.1.0
 * @category models
 */
export interface ProxyOptions {
  /** `http://host:port`, `https://host:port` or `socks5://host:port`, without credentials. */
  readonly url: string
  /**
   * The URL's credentials: sent as `Proxy-Authorization: Basic` to an http(s) proxy, or as
   * the SOCKS5 username and password.
   */
  readonly credentials?: Redacted.Redacted<{ readonly username: string; readonly password: string }> | undefined
}

/**
 * Acting as another user (kubectl's `--as`, `--as-uid`, `--as-group`; a kubeconfig
 * user's `as`, `as-uid`, `as-groups`, `as-user-extra`). Every request carries
 * `Impersonate-User`, `Impersonate-Uid`, one `Impersonate-Group` per group and one
 * `Impersonate-Extra-<key>` per value (the key percent-encoded as kubectl does).
 *
 * @since 0.1.0
 * @category models
 */
export interface Impersonation {
  readonly user: string
  readonly uid?: string | undefined
  readonly groups: ReadonlyArray<string>
  readonly extra: { readonly [key: string]: ReadonlyArray<string> }
}

/**
 * A resolved configuration: server URL, default namespace, TLS and authentication.
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /** `https://host:port` (a path prefix is kept), without a trailing slash. */
  readonly server: string
  /** The namespace that operations use when none is given (the context's, else `default`). */
  readonly namespace: string
  readonly tls: TlsOptions
  readonly auth: AuthProvider
  /**
   * The proxy to reach the server through. When there is none, the Node transport
   * follows `HTTPS_PROXY` (`HTTP_PROXY` for an http server) and `NO_PROXY` from the
   * environment, as client-go does.
   */
  readonly proxy?: ProxyOptions | undefined
  /**
   * Do not ask the server to compress its answers. By default the Node transport sends
   * `Accept-Encoding: gzip`, as client-go does, and kube-apiserver gzips answers over
   * 128 KiB (large lists), which saves bandwidth on real networks and costs CPU on both
   * ends; a cluster's `disable-compression: true` (or `KubeConfig.make`'s option) turns it
   * off, for fast links where the CPU matters more.
   */
  readonly disableCompression?: boolean | undefined
  /** Whom to act as, when the user entry impersonates someone. */
  readonly impersonate?: Impersonation | undefined
  /** The context this was resolved from, when it came from a kubeconfig. */
  readonly context?: string | undefined
  /** Where this came from: a file path, `"<string>"`, `"<in-cluster>"` or `"<explicit>"`. */
  readonly source: string
}

/**
 * The platform services a loader uses: `FileSystem` (the kubeconfig, CA, certificate and
 * token files), `Path` (relative paths, `$KUBECONFIG` lists) and `ChildProcessSpawner`
 * (exec credential plugins), from `effect/FileSystem`, `effect/Path` and
 * `effect/process/ChildProcessSpawner`. `NodeKube.layerPlatform` provides them (on Node,
 * Bun and Deno); the `NodeKube`, `BunKube` and `DenoKube` layers provide them for you.
 *
 * @since 0.1.0
 * @category models
 */
export type Platform = FileSystem.FileSystem | Path.Path | ChildProcessSpawner.ChildProcessSpawner

/**
 * The `KubeConfig` service.
 *
 * @since 0.1.0
 * @category tags
 */
export class KubeConfig extends Context.Service<KubeConfig, Service>()("effect-kube/KubeConfig") {}

/**
 * The `HttpClient` that talks to OIDC identity providers, to renew an `oidc`
 * auth-provider's id-token. An issuer is not the cluster: it must not be sent the
 * cluster's client certificate, nor be checked against the cluster's CA. By default it is
 * `fetch` with the platform's own trust store; provide another (for an issuer behind a
 * private CA, named by `idp-certificate-authority`) to the `KubeConfig` layer. It is a
 * `Context.Reference` (a service with a default value), so nothing needs to provide it.
 *
 * @example
 * ```ts
 * import { Effect, Layer } from "effect"
 * import { FetchHttpClient, HttpClient } from "effect/http"
 * import { KubeConfig, NodeKube } from "effect-kube"
 *
 * const issuerClient = Layer.effect(
 *   KubeConfig.OidcHttpClient,
 *   Effect.provide(HttpClient.HttpClient, FetchHttpClient.layer)
 * )
 * const layer = NodeKube.layerFromKubeConfig(Layer.provide(KubeConfig.layerFromFile(), issuerClient))
 * ```
 * @since 0.1.0
 * @category tags
 */
export const OidcHttpClient: Context.Reference<HttpClient.HttpClient> = internalOidc.OidcHttpClient

/**
 * The type of the `OidcHttpClient` reference.
 *
 * @since 0.1.0
 * @category tags
 */
export type OidcHttpClient = Context.Reference<HttpClient.HttpClient>

/**
 * An explicit configuration. At most one way to authenticate (`token`, `tokenFile`,
 * `username`/`password` or a custom `auth` provider), optionally with a client
 * certificate. Plain strings given for secrets are wrapped in `Redacted`.
 *
 * @since 0.1.0
 * @category models
 */
export interface MakeOptions {
  /** `https://host:port`, optionally with a path prefix. */
  readonly server: string
  /** Default `"default"`. */
  readonly namespace?: string | undefined
  readonly tls?: {
    /** PEM certificate authority bundle. */
    readonly ca?: string | undefined
    readonly insecureSkipTlsVerify?: boolean | undefined
    readonly serverName?: string | undefined
  } | undefined
  readonly token?: string | Redacted.Redacted<string> | undefined
  /** A file holding the token, checked for a new one every few seconds and at once after a 401. */
  readonly tokenFile?: string | undefined
  readonly username?: string | undefined
  readonly password?: string | Redacted.Redacted<string> | undefined
  /** PEM certificate and key for client-certificate authentication. */
  readonly clientCertificate?: {
    readonly cert: string
    readonly key: string | Redacted.Redacted<string>
  } | undefined
  /** A custom auth provider, for credentials obtained some other way. */
  readonly auth?: AuthProvider | undefined
  /**
   * A proxy URL (`http://`, `https://` or `socks5://`), as a cluster's `proxy-url`. Give
   * it `Redacted` when it carries credentials.
   */
  readonly proxy?: string | Redacted.Redacted<string> | undefined
  /** Do not ask for compressed answers (`Accept-Encoding: gzip`), as a cluster's `disable-compression: true`. */
  readonly disableCompression?: boolean | undefined
  /** Act as another user on every request; see `Impersonation`. */
  readonly impersonate?: {
    readonly user: string
    readonly uid?: string | undefined
    readonly groups?: ReadonlyArray<string> | undefined
    readonly extra?: { readonly [key: string]: ReadonlyArray<string> } | undefined
  } | undefined
}

/**
 * Builds a configuration from explicit values, checking them (the server must be an
 * http(s) URL, PEM values must be PEM, credentials must not conflict). It needs no
 * service, except `FileSystem` when a `tokenFile` is given (to read it).
 *
 * @example
 * ```ts
 * import { Redacted } from "effect"
 * import { KubeConfig } from "effect-kube"
 *
 * const caPem = process.env.KUBE_CA_PEM ?? "" // the cluster's CA certificate, PEM
 *
 * const config = KubeConfig.make({
 *   server: "https://10.0.0.1:6443",
 *   namespace: "apps",
 *   tls: { ca: caPem },
 *   token: Redacted.make(process.env.KUBE_TOKEN ?? "")
 * })
 * ```
 * @since 0.1.0
 * @category constructors
 */
export const make: {
  (options: MakeOptions & { readonly tokenFile?: undefined }): Effect.Effect<Service, KubeConfigError>
  (options: MakeOptions): Effect.Effect<Service, KubeConfigError, FileSystem.FileSystem>
} = internal.make as (options: MakeOptions) => Effect.Effect<Service, KubeConfigError>

/**
 * A layer for an explicit configuration; see `make` (it needs `FileSystem` only for a
 * `tokenFile`).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerFrom: {
  (options: MakeOptions & { readonly tokenFile?: undefined }): Layer.Layer<KubeConfig, KubeConfigError>
  (options: MakeOptions): Layer.Layer<KubeConfig, KubeConfigError, FileSystem.FileSystem>
} = (options: MakeOptions) =>
  Layer.effect(KubeConfig, internal.make(options) as Effect.Effect<Service, KubeConfigError>)

/**
 * Where to find a kubeconfig file and which context to use.
 *
 * @since 0.1.0
 * @category models
 */
export interface FileOptions {
  /**
   * A file, or a path list like `$KUBECONFIG` (merged as kubectl merges). Default:
   * `$KUBECONFIG`, else `~/.kube/config`.
   */
  readonly path?: string | undefined
  /** The context to use instead of the file's `current-context`. */
  readonly context?: string | undefined
  /**
   * Write an oidc auth-provider's renewed `id-token` (and a rotated `refresh-token`) back
   * to the file that defined the user, as kubectl does; comments and other entries are
   * kept. Default `false`: the renewed tokens live in memory only.
   */
  readonly persistOidcTokens?: boolean | undefined
}

/**
 * Loads a context from kubeconfig files. Relative paths in a file (CA, client
 * certificate and key, token file, exec command) are resolved against that file's
 * directory. When several files are merged, the first to define a cluster, user or
 * context name wins, and `current-context` comes from the first file that sets one.
 *
 * Requires the `Platform` services (`FileSystem`, `Path`, `ChildProcessSpawner`); the
 * `NodeKube`, `BunKube` and `DenoKube` layers provide them.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromFile = (options?: FileOptions): Effect.Effect<Service, KubeConfigError, Platform> =>
  internal.fromFile({
    path: options?.path,
    context: options?.context,
    persistOidcTokens: options?.persistOidcTokens
  })

/**
 * A layer loading a kubeconfig file; see `fromFile`. Requires the `Platform` services.
 *
 * @example
 * ```ts
 * import { KubeConfig } from "effect-kube"
 *
 * const staging = KubeConfig.layerFromFile({ context: "staging" })
 * ```
 * @since 0.1.0
 * @category layers
 */
export const layerFromFile = (options?: FileOptions): Layer.Layer<KubeConfig, KubeConfigError, Platform> =>
  Layer.effect(KubeConfig, fromFile(options))

/**
 * Options for a kubeconfig given as text.
 *
 * @since 0.1.0
 * @category models
 */
export interface StringOptions {
  /** The context to use instead of the text's `current-context`. */
  readonly context?: string | undefined
  /** The directory relative paths are resolved against (default: the working directory). */
  readonly basePath?: string | undefined
}

/**
 * Loads a context from kubeconfig text (YAML or JSON). Requires the `Platform` services:
 * the text may name CA, certificate or token files and exec plugins.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromString: (
  text: string,
  options?: StringOptions
) => Effect.Effect<Service, KubeConfigError, Platform> = internal.fromString

/**
 * A layer loading kubeconfig text; see `fromString`. Requires the `Platform` services.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerFromString = (
  text: string,
  options?: StringOptions
): Layer.Layer<KubeConfig, KubeConfigError, Platform> =>
  Layer.effect(KubeConfig, fromString(text, options))

/**
 * Where a pod's service account is found. Both default to what Kubernetes provides;
 * they are here for tests and unusual mounts.
 *
 * @since 0.1.0
 * @category models
 */
export interface InClusterOptions {
  /**
   * The directory holding `token`, `ca.crt` and `namespace`.
   * Default `/var/run/secrets/kubernetes.io/serviceaccount`.
   */
  readonly dir?: string | undefined
  /** The environment holding `KUBERNETES_SERVICE_HOST` and `KUBERNETES_SERVICE_PORT`. Default `process.env`. */
  readonly env?: { readonly [name: string]: string | undefined } | undefined
}

/**
 * The pod's own service account: the API server from `KUBERNETES_SERVICE_HOST` and
 * `KUBERNETES_SERVICE_PORT`, the token from its file (checked for a rotated one every few
 * seconds, and at once after a 401), the CA and the namespace from theirs. Requires
 * `FileSystem` and `Path`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const inCluster: (
  options?: InClusterOptions
) => Effect.Effect<Service, KubeConfigError, FileSystem.FileSystem | Path.Path> = internal.inCluster

/**
 * A layer for the pod's own service account; see `inCluster`. Requires `FileSystem` and `Path`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerInCluster: Layer.Layer<KubeConfig, KubeConfigError, FileSystem.FileSystem | Path.Path> = Layer
  .effect(KubeConfig, inCluster())

/**
 * A layer for a service account found elsewhere; see `inCluster`. Requires `FileSystem` and `Path`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerInClusterFrom = (
  options: InClusterOptions
): Layer.Layer<KubeConfig, KubeConfigError, FileSystem.FileSystem | Path.Path> =>
  Layer.effect(KubeConfig, inCluster(options))

/**
 * What a program finds where it runs: in a pod (the service env vars are set and the
 * service-account token exists) the pod's service account, otherwise the kubeconfig
 * kubectl would use (`$KUBECONFIG` merged, else `~/.kube/config`) and its current
 * context. Requires the `Platform` services.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromEnvironment: Effect.Effect<Service, KubeConfigError, Platform> = internal.fromEnvironment()

/**
 * The layer for most programs; see `fromEnvironment`. Requires the `Platform` services
 * (`NodeKube.layer`, `BunKube.layer` and `DenoKube.layer` include them;
 * `NodeKube.layerPlatform` provides them alone).
 *
 * @example
 * ```ts
 * import { Effect, Layer } from "effect"
 * import { KubeConfig, NodeKube } from "effect-kube"
 *
 * const program = Effect.gen(function* () {
 *   const config = yield* KubeConfig.KubeConfig
 *   console.log(config.server, config.namespace)
 * })
 * // call main() to print the server and namespace of your kubeconfig
 * const main = () => Effect.runPromise(Effect.provide(program, Layer.provide(KubeConfig.layer, NodeKube.layerPlatform)))
 * ```
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<KubeConfig, KubeConfigError, Platform> = Layer.effect(KubeConfig, fromEnvironment)

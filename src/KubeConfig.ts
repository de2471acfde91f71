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
import type * as Redacted from "effect/Redacted"
import type { KubeConfigError } from "./Errors.js"

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
 * Obtains credentials, caching them as long as they are valid (a token file is re-read
 * when it changes, an exec plugin is run again after its `expirationTimestamp`).
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
  /** The context this was resolved from, when it came from a kubeconfig. */
  readonly context?: string | undefined
  /** Where this came from: a file path, `"<string>"`, `"<in-cluster>"` or `"<explicit>"`. */
  readonly source: string
}

/**
 * The `KubeConfig` service tag.
 *
 * @since 0.1.0
 * @category tags
 */
export class KubeConfig extends Context.Tag("effect-kube/KubeConfig")<KubeConfig, Service>() {}

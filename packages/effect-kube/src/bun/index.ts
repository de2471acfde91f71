/**
 * effect-kube on Bun, exported as `effect-kube/bun`.
 *
 * @since 0.1.0
 */

/**
 * Layers for Bun: `KubeConfig` and an `HttpClient` over Bun's `fetch`.
 *
 * @since 0.1.0
 */
export * as BunKube from "../BunKube.js"

/**
 * effect-kube on Deno, exported as `effect-kube/deno`.
 *
 * @since 0.1.0
 */

/**
 * Layers for Deno: `KubeConfig` and an `HttpClient` over Deno's `fetch`.
 *
 * @since 0.1.0
 */
export * as DenoKube from "../DenoKube.js"

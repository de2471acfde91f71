/**
 * Test helpers for effect-kube, exported as `effect-kube/testing`.
 *
 * @since 0.1.0
 */

/**
 * An in-memory Kubernetes API server: a layer for tests, a loopback server for other
 * clients.
 *
 * @since 0.1.0
 */
export * as FakeCluster from "./FakeCluster.js"

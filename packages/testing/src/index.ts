/**
 * `@effect-kube/testing`: test helpers for effect-kube, in a package of their own so that a
 * production install carries none of the fake cluster (its CEL, protobuf and RE2).
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

/**
 * The least-privilege RBAC a program needs, written from what it asked a fake for.
 *
 * @since 0.2.0
 */
export * as Rbac from "./Rbac.js"

/**
 * Seeded exploration of controllers' interleavings over the fake, shrunk to a minimal
 * failing schedule that replays exactly.
 *
 * @since 0.2.0
 */
export * as Explore from "./Explore.js"

/**
 * The built-in kinds, generated from the Kubernetes OpenAPI spec: for each kind, the
 * Schema of its objects (`Pod`), their type, and the Resource to pass to `Kube.api`
 * (`Pods`); every nested definition (`PodSpec`, `Container`, `ObjectMeta`, ...); plus the
 * hand-written envelopes of `Meta` (`ObjectList`, `WatchEvent`, `StatusCondition`).
 *
 * @since 0.1.0
 */
export * from "./generated.js"
export type * from "./generatedApply.js"
export * from "./Meta.js"

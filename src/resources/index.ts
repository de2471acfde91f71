/**
 * The built-in kinds: for each, the Schema of its objects (`Pod`), their type, and the
 * Resource to pass to `Kube.api` (`Pods`); plus the shared Schemas of `Meta`.
 *
 * @since 0.1.0
 */
export * from "./ConfigMap.js"
export * from "./Deployment.js"
export * from "./Event.js"
export * from "./Job.js"
export * from "./Meta.js"
export * from "./Namespace.js"
export * from "./Pod.js"
export * from "./Secret.js"
export * from "./Service.js"
export * from "./ServiceAccount.js"

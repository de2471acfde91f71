/**
 * effect-kube: an Effect-native Kubernetes client.
 *
 * Modules are namespaces (`Kube`, `KubeConfig`, `NodeKube`, ...); the built-in kinds
 * (`Pods`, `Services`, `Jobs`, ...) and their Schemas (`Pod`, `Service`, `Job`, ...) and
 * the tagged errors are exported by name.
 *
 * @since 0.1.0
 */

/** @since 0.1.0 */
export * as Kube from "./Kube.js"

/** @since 0.1.0 */
export * as KubeConfig from "./KubeConfig.js"

/** @since 0.1.0 */
export * as NodeKube from "./NodeKube.js"

/** @since 0.1.0 */
export * as Resource from "./Resource.js"

/** @since 0.2.0 */
export * as CustomResource from "./CustomResource.js"

/** @since 0.1.0 */
export * as Patch from "./Patch.js"

/** @since 0.1.0 */
export * as RequestPolicy from "./RequestPolicy.js"

/** @since 0.1.0 */
export * as Watcher from "./Watcher.js"

/** @since 0.1.0 */
export * as Streams from "./Streams.js"

/** @since 0.1.0 */
export * as Condition from "./Condition.js"

/** @since 0.1.0 */
export * as Discovery from "./Discovery.js"

/** @since 0.1.0 */
export * as Manifests from "./Manifests.js"

/** @since 0.1.0 */
export * as Template from "./Template.js"

/** @since 0.1.0 */
export * as Exec from "./Exec.js"

/** @since 0.1.0 */
export * as Errors from "./Errors.js"

/** @since 0.1.0 */
export * as Quantity from "./Quantity.js"

/** @since 0.1.0 */
export * as MicroTime from "./MicroTime.js"

/** @since 0.1.0 */
export * as Conflict from "./Conflict.js"

/** @since 0.1.0 */
export * as Informers from "./Informers.js"

/** @since 0.1.0 */
export * as Controller from "./Controller.js"

/** @since 0.1.0 */
export * as Finalizer from "./Finalizer.js"

/** @since 0.1.0 */
export * as EventRecorder from "./EventRecorder.js"

/** @since 0.1.0 */
export * as LeaderElection from "./LeaderElection.js"

export {
  /** @since 0.1.0 */
  ApiError,
  /** @since 0.1.0 */
  type ApiErrorReason,
  /** @since 0.1.0 */
  ApplyFailed,
  /** @since 0.2.0 */
  ApplySetError,
  /** @since 0.2.0 */
  ConnectionFailure,
  /** @since 0.2.0 */
  type ConnectionProblem,
  /** @since 0.2.0 */
  connectionProblem,
  /** @since 0.1.0 */
  DeleteFailed,
  /** @since 0.2.0 */
  IndexError,
  /** @since 0.1.0 */
  KubeConfigError,
  /** @since 0.2.0 */
  type Limit,
  /** @since 0.2.0 */
  LimitExceeded,
  /** @since 0.2.0 */
  NotReady,
  /** @since 0.2.0 */
  type ObjectReadiness,
  /** @since 0.1.0 */
  type ObjectRef,
  /** @since 0.2.0 */
  PruneFailed,
  /** @since 0.1.0 */
  RequestTimeout,
  /** @since 0.1.0 */
  ServerWarning,
  /** @since 0.1.0 */
  ValidationError,
  /** @since 0.1.0 */
  WaitTimeout
} from "./Errors.js"

/** @since 0.1.0 */
export * from "./resources/index.js"

/** @since 0.1.0 */
export * as Warnings from "./Warnings.js"


/** @since 0.2.0 */
export * as Drain from "./Drain.js"

/** @since 0.2.0 */
export * as Copy from "./Copy.js"

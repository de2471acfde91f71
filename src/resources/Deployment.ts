/**
 * Deployments (`apps/v1`, namespaced): replicated pods rolled out declaratively.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import * as Resource from "../Resource.js"
import { openEnum } from "./internal/schema.js"
import { StatusCondition, IntOrString, LabelSelector, ObjectMeta } from "./Meta.js"
import { PodTemplateSpec } from "./Pod.js"

/**
 * How a deployment replaces old pods: `Recreate`, or `RollingUpdate` bounded by
 * `maxSurge` and `maxUnavailable` (a count or a percentage such as `"25%"`).
 *
 * @since 0.1.0
 * @category schemas
 */
export const DeploymentStrategy = Schema.Struct({
  type: Schema.optional(openEnum("RollingUpdate", "Recreate")),
  rollingUpdate: Schema.optional(
    Schema.Struct({
      maxSurge: Schema.optional(IntOrString),
      maxUnavailable: Schema.optional(IntOrString)
    })
  )
}).annotations({ identifier: "DeploymentStrategy" })

/**
 * @since 0.1.0
 * @category models
 */
export type DeploymentStrategy = typeof DeploymentStrategy.Type

/**
 * The desired state of a deployment.
 *
 * @since 0.1.0
 * @category schemas
 */
export const DeploymentSpec = Schema.Struct({
  replicas: Schema.optional(Schema.Number),
  selector: LabelSelector,
  template: PodTemplateSpec,
  strategy: Schema.optional(DeploymentStrategy),
  minReadySeconds: Schema.optional(Schema.Number),
  revisionHistoryLimit: Schema.optional(Schema.Number),
  paused: Schema.optional(Schema.Boolean),
  progressDeadlineSeconds: Schema.optional(Schema.Number)
}).annotations({ identifier: "DeploymentSpec" })

/**
 * @since 0.1.0
 * @category models
 */
export type DeploymentSpec = typeof DeploymentSpec.Type

/**
 * The observed state of a deployment. It has rolled out when `observedGeneration`
 * reached `metadata.generation` and `updatedReplicas`, `availableReplicas` and
 * `replicas` all equal the desired replicas.
 *
 * @since 0.1.0
 * @category schemas
 */
export const DeploymentStatus = Schema.Struct({
  observedGeneration: Schema.optional(Schema.Number),
  replicas: Schema.optional(Schema.Number),
  updatedReplicas: Schema.optional(Schema.Number),
  readyReplicas: Schema.optional(Schema.Number),
  availableReplicas: Schema.optional(Schema.Number),
  unavailableReplicas: Schema.optional(Schema.Number),
  terminatingReplicas: Schema.optional(Schema.Number),
  collisionCount: Schema.optional(Schema.Number),
  conditions: Schema.optional(Schema.Array(StatusCondition))
}).annotations({ identifier: "DeploymentStatus" })

/**
 * @since 0.1.0
 * @category models
 */
export type DeploymentStatus = typeof DeploymentStatus.Type

/**
 * A deployment.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Deployment = Schema.Struct({
  apiVersion: Schema.optional(Schema.String),
  kind: Schema.optional(Schema.String),
  metadata: Schema.optional(ObjectMeta),
  spec: Schema.optional(DeploymentSpec),
  status: Schema.optional(DeploymentStatus)
}).annotations({ identifier: "Deployment" })

/**
 * @since 0.1.0
 * @category models
 */
export type Deployment = typeof Deployment.Type

/**
 * Deployments: `apps/v1`, namespaced.
 *
 * @since 0.1.0
 * @category resources
 */
export const Deployments = Resource.make({
  apiVersion: "apps/v1",
  kind: "Deployment",
  plural: "deployments",
  namespaced: true,
  schema: Deployment
})

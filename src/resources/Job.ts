/**
 * Jobs (`batch/v1`, namespaced): pods run to completion.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import * as Resource from "../Resource.js"
import { LooseObject, openEnum, Time } from "./internal/schema.js"
import { StatusCondition, LabelSelector, ObjectMeta } from "./Meta.js"
import { PodTemplateSpec } from "./Pod.js"

/**
 * The desired state of a job: the pod template and how many completions to reach.
 *
 * @since 0.1.0
 * @category schemas
 */
export const JobSpec = Schema.Struct({
  template: PodTemplateSpec,
  backoffLimit: Schema.optional(Schema.Number),
  backoffLimitPerIndex: Schema.optional(Schema.Number),
  maxFailedIndexes: Schema.optional(Schema.Number),
  completions: Schema.optional(Schema.Number),
  completionMode: Schema.optional(openEnum("NonIndexed", "Indexed")),
  parallelism: Schema.optional(Schema.Number),
  activeDeadlineSeconds: Schema.optional(Schema.Number),
  ttlSecondsAfterFinished: Schema.optional(Schema.Number),
  selector: Schema.optional(LabelSelector),
  manualSelector: Schema.optional(Schema.Boolean),
  suspend: Schema.optional(Schema.Boolean),
  podFailurePolicy: Schema.optional(LooseObject),
  successPolicy: Schema.optional(LooseObject),
  podReplacementPolicy: Schema.optional(openEnum("TerminatingOrFailed", "Failed")),
  managedBy: Schema.optional(Schema.String)
}).annotations({ identifier: "JobSpec" })

/**
 * @since 0.1.0
 * @category models
 */
export type JobSpec = typeof JobSpec.Type

/**
 * The observed state of a job. It has finished when a condition of type `Complete` or
 * `Failed` has status `"True"`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const JobStatus = Schema.Struct({
  active: Schema.optional(Schema.Number),
  ready: Schema.optional(Schema.Number),
  succeeded: Schema.optional(Schema.Number),
  failed: Schema.optional(Schema.Number),
  terminating: Schema.optional(Schema.Number),
  startTime: Schema.optional(Time),
  completionTime: Schema.optional(Time),
  conditions: Schema.optional(Schema.Array(StatusCondition)),
  completedIndexes: Schema.optional(Schema.String),
  failedIndexes: Schema.optional(Schema.String),
  uncountedTerminatedPods: Schema.optional(LooseObject)
}).annotations({ identifier: "JobStatus" })

/**
 * @since 0.1.0
 * @category models
 */
export type JobStatus = typeof JobStatus.Type

/**
 * A job.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Job = Schema.Struct({
  apiVersion: Schema.optional(Schema.String),
  kind: Schema.optional(Schema.String),
  metadata: Schema.optional(ObjectMeta),
  spec: Schema.optional(JobSpec),
  status: Schema.optional(JobStatus)
}).annotations({ identifier: "Job" })

/**
 * @since 0.1.0
 * @category models
 */
export type Job = typeof Job.Type

/**
 * Jobs: `batch/v1`, namespaced.
 *
 * @since 0.1.0
 * @category resources
 */
export const Jobs = Resource.make({
  apiVersion: "batch/v1",
  kind: "Job",
  plural: "jobs",
  namespaced: true,
  schema: Job
})

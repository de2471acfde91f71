/**
 * Pods (`v1`, namespaced) and the Schemas inside them that other kinds reuse:
 * `Container`, `PodSpec` and `PodTemplateSpec` (the template of Jobs and Deployments).
 *
 * Large sub-objects that are rarely read (affinity, security contexts, probes, volume
 * sources, `valueFrom`) are checked to be objects and kept as they are.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import * as Resource from "../Resource.js"
import { LooseObject, NullableTime, openEnum, StringMap, Time } from "./internal/schema.js"
import { StatusCondition, LocalObjectReference, ObjectMeta, Quantity } from "./Meta.js"

/**
 * One environment variable of a container. `valueFrom` (a ConfigMap, Secret or field
 * reference) is kept as sent.
 *
 * @since 0.1.0
 * @category schemas
 */
export const EnvVar = Schema.Struct({
  name: Schema.String,
  value: Schema.optional(Schema.String),
  valueFrom: Schema.optional(LooseObject)
}).annotations({ identifier: "EnvVar" })

/**
 * @since 0.1.0
 * @category models
 */
export type EnvVar = typeof EnvVar.Type

const EnvFromReference = Schema.Struct({
  name: Schema.optional(Schema.String),
  optional: Schema.optional(Schema.Boolean)
})

/**
 * Environment variables taken from all keys of a ConfigMap or a Secret.
 *
 * @since 0.1.0
 * @category schemas
 */
export const EnvFromSource = Schema.Struct({
  prefix: Schema.optional(Schema.String),
  configMapRef: Schema.optional(EnvFromReference),
  secretRef: Schema.optional(EnvFromReference)
}).annotations({ identifier: "EnvFromSource" })

/**
 * @since 0.1.0
 * @category models
 */
export type EnvFromSource = typeof EnvFromSource.Type

/**
 * A port a container exposes.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ContainerPort = Schema.Struct({
  containerPort: Schema.Number,
  name: Schema.optional(Schema.String),
  protocol: Schema.optional(openEnum("TCP", "UDP", "SCTP")),
  hostPort: Schema.optional(Schema.Number),
  hostIP: Schema.optional(Schema.String)
}).annotations({ identifier: "ContainerPort" })

/**
 * @since 0.1.0
 * @category models
 */
export type ContainerPort = typeof ContainerPort.Type

/**
 * The compute resources of a container: `limits` and `requests` by resource name
 * (`cpu`, `memory`, ...), quantities kept as sent.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ResourceRequirements = Schema.Struct({
  limits: Schema.optional(Schema.Record({ key: Schema.String, value: Quantity })),
  requests: Schema.optional(Schema.Record({ key: Schema.String, value: Quantity })),
  claims: Schema.optional(Schema.Array(LooseObject))
}).annotations({ identifier: "ResourceRequirements" })

/**
 * @since 0.1.0
 * @category models
 */
export type ResourceRequirements = typeof ResourceRequirements.Type

/**
 * Where a volume is mounted in a container.
 *
 * @since 0.1.0
 * @category schemas
 */
export const VolumeMount = Schema.Struct({
  name: Schema.String,
  mountPath: Schema.String,
  subPath: Schema.optional(Schema.String),
  subPathExpr: Schema.optional(Schema.String),
  readOnly: Schema.optional(Schema.Boolean),
  recursiveReadOnly: Schema.optional(Schema.String),
  mountPropagation: Schema.optional(Schema.String)
}).annotations({ identifier: "VolumeMount" })

/**
 * @since 0.1.0
 * @category models
 */
export type VolumeMount = typeof VolumeMount.Type

/**
 * A container of a pod (also used for init containers).
 *
 * @since 0.1.0
 * @category schemas
 */
export const Container = Schema.Struct({
  name: Schema.String,
  image: Schema.optional(Schema.String),
  imagePullPolicy: Schema.optional(openEnum("Always", "IfNotPresent", "Never")),
  terminationMessagePath: Schema.optional(Schema.String),
  terminationMessagePolicy: Schema.optional(openEnum("File", "FallbackToLogsOnError")),
  resources: Schema.optional(ResourceRequirements),
  ports: Schema.optional(Schema.Array(ContainerPort)),
  env: Schema.optional(Schema.Array(EnvVar)),
  volumeMounts: Schema.optional(Schema.Array(VolumeMount)),
  command: Schema.optional(Schema.Array(Schema.String)),
  args: Schema.optional(Schema.Array(Schema.String)),
  readinessProbe: Schema.optional(LooseObject),
  livenessProbe: Schema.optional(LooseObject),
  startupProbe: Schema.optional(LooseObject),
  securityContext: Schema.optional(LooseObject),
  envFrom: Schema.optional(Schema.Array(EnvFromSource)),
  workingDir: Schema.optional(Schema.String),
  lifecycle: Schema.optional(LooseObject),
  volumeDevices: Schema.optional(Schema.Array(LooseObject)),
  restartPolicy: Schema.optional(openEnum("Always")),
  resizePolicy: Schema.optional(Schema.Array(LooseObject)),
  stdin: Schema.optional(Schema.Boolean),
  stdinOnce: Schema.optional(Schema.Boolean),
  tty: Schema.optional(Schema.Boolean)
}).annotations({ identifier: "Container" })

/**
 * @since 0.1.0
 * @category models
 */
export type Container = typeof Container.Type

/**
 * A volume of a pod: its `name` and one volume source (`configMap`, `secret`,
 * `emptyDir`, `persistentVolumeClaim`, ...), sources kept as sent. Any other source
 * the API knows may be given as well.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Volume = Schema.Struct(
  {
    name: Schema.String,
    configMap: Schema.optional(LooseObject),
    secret: Schema.optional(LooseObject),
    emptyDir: Schema.optional(LooseObject),
    persistentVolumeClaim: Schema.optional(LooseObject),
    hostPath: Schema.optional(LooseObject),
    projected: Schema.optional(LooseObject),
    downwardAPI: Schema.optional(LooseObject)
  },
  Schema.Record({ key: Schema.String, value: Schema.Unknown })
).annotations({ identifier: "Volume" })

/**
 * @since 0.1.0
 * @category models
 */
export type Volume = typeof Volume.Type

/**
 * A toleration of a node taint.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Toleration = Schema.Struct({
  key: Schema.optional(Schema.String),
  operator: Schema.optional(openEnum("Exists", "Equal")),
  value: Schema.optional(Schema.String),
  effect: Schema.optional(openEnum("NoSchedule", "PreferNoSchedule", "NoExecute")),
  tolerationSeconds: Schema.optional(Schema.Number)
}).annotations({ identifier: "Toleration" })

/**
 * @since 0.1.0
 * @category models
 */
export type Toleration = typeof Toleration.Type

/**
 * The desired state of a pod.
 *
 * @since 0.1.0
 * @category schemas
 */
export const PodSpec = Schema.Struct({
  containers: Schema.Array(Container),
  volumes: Schema.optional(Schema.Array(Volume)),
  restartPolicy: Schema.optional(openEnum("Always", "OnFailure", "Never")),
  terminationGracePeriodSeconds: Schema.optional(Schema.Number),
  dnsPolicy: Schema.optional(openEnum("ClusterFirst", "ClusterFirstWithHostNet", "Default", "None")),
  serviceAccountName: Schema.optional(Schema.String),
  serviceAccount: Schema.optional(Schema.String),
  nodeName: Schema.optional(Schema.String),
  securityContext: Schema.optional(LooseObject),
  schedulerName: Schema.optional(Schema.String),
  tolerations: Schema.optional(Schema.Array(Toleration)),
  priority: Schema.optional(Schema.Number),
  enableServiceLinks: Schema.optional(Schema.Boolean),
  preemptionPolicy: Schema.optional(Schema.String),
  initContainers: Schema.optional(Schema.Array(Container)),
  nodeSelector: Schema.optional(StringMap),
  affinity: Schema.optional(LooseObject),
  imagePullSecrets: Schema.optional(Schema.Array(LocalObjectReference)),
  automountServiceAccountToken: Schema.optional(Schema.Boolean),
  activeDeadlineSeconds: Schema.optional(Schema.Number),
  priorityClassName: Schema.optional(Schema.String),
  hostname: Schema.optional(Schema.String),
  subdomain: Schema.optional(Schema.String),
  topologySpreadConstraints: Schema.optional(Schema.Array(LooseObject)),
  hostNetwork: Schema.optional(Schema.Boolean),
  hostPID: Schema.optional(Schema.Boolean),
  hostIPC: Schema.optional(Schema.Boolean),
  hostUsers: Schema.optional(Schema.Boolean),
  shareProcessNamespace: Schema.optional(Schema.Boolean),
  setHostnameAsFQDN: Schema.optional(Schema.Boolean),
  hostAliases: Schema.optional(Schema.Array(LooseObject)),
  dnsConfig: Schema.optional(LooseObject),
  runtimeClassName: Schema.optional(Schema.String),
  readinessGates: Schema.optional(Schema.Array(LooseObject)),
  overhead: Schema.optional(Schema.Record({ key: Schema.String, value: Quantity })),
  os: Schema.optional(LooseObject),
  schedulingGates: Schema.optional(Schema.Array(LooseObject)),
  resourceClaims: Schema.optional(Schema.Array(LooseObject)),
  resources: Schema.optional(ResourceRequirements),
  ephemeralContainers: Schema.optional(Schema.Array(LooseObject))
}).annotations({ identifier: "PodSpec" })

/**
 * @since 0.1.0
 * @category models
 */
export type PodSpec = typeof PodSpec.Type

/**
 * The metadata and spec of the pods a Job or a Deployment creates.
 *
 * @since 0.1.0
 * @category schemas
 */
export const PodTemplateSpec = Schema.Struct({
  metadata: Schema.optional(ObjectMeta),
  spec: Schema.optional(PodSpec)
}).annotations({ identifier: "PodTemplateSpec" })

/**
 * @since 0.1.0
 * @category models
 */
export type PodTemplateSpec = typeof PodTemplateSpec.Type

/**
 * The state of a container: exactly one of `waiting`, `running` or `terminated` is set.
 * A terminated container's `exitCode` is what a Job's caller usually wants.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ContainerState = Schema.Struct({
  waiting: Schema.optional(
    Schema.Struct({
      reason: Schema.optional(Schema.String),
      message: Schema.optional(Schema.String)
    })
  ),
  running: Schema.optional(
    Schema.Struct({
      startedAt: Schema.optional(NullableTime)
    })
  ),
  terminated: Schema.optional(
    Schema.Struct({
      exitCode: Schema.Number,
      signal: Schema.optional(Schema.Number),
      reason: Schema.optional(Schema.String),
      message: Schema.optional(Schema.String),
      startedAt: Schema.optional(NullableTime),
      finishedAt: Schema.optional(NullableTime),
      containerID: Schema.optional(Schema.String)
    })
  )
}).annotations({ identifier: "ContainerState" })

/**
 * @since 0.1.0
 * @category models
 */
export type ContainerState = typeof ContainerState.Type

/**
 * The observed state of one container of a pod.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ContainerStatus = Schema.Struct({
  name: Schema.String,
  state: Schema.optional(ContainerState),
  lastState: Schema.optional(ContainerState),
  ready: Schema.Boolean,
  restartCount: Schema.Number,
  image: Schema.String,
  imageID: Schema.String,
  containerID: Schema.optional(Schema.String),
  started: Schema.optional(Schema.Boolean),
  resources: Schema.optional(ResourceRequirements),
  allocatedResources: Schema.optional(Schema.Record({ key: Schema.String, value: Quantity })),
  volumeMounts: Schema.optional(Schema.Array(LooseObject)),
  user: Schema.optional(LooseObject)
}).annotations({ identifier: "ContainerStatus" })

/**
 * @since 0.1.0
 * @category models
 */
export type ContainerStatus = typeof ContainerStatus.Type

/**
 * The phase of a pod in its lifecycle.
 *
 * @since 0.1.0
 * @category schemas
 */
export const PodPhase = Schema.Literal("Pending", "Running", "Succeeded", "Failed", "Unknown")

/**
 * @since 0.1.0
 * @category models
 */
export type PodPhase = typeof PodPhase.Type

const PodIP = Schema.Struct({ ip: Schema.String })

/**
 * The observed state of a pod.
 *
 * @since 0.1.0
 * @category schemas
 */
export const PodStatus = Schema.Struct({
  phase: Schema.optional(PodPhase),
  conditions: Schema.optional(Schema.Array(StatusCondition)),
  hostIP: Schema.optional(Schema.String),
  hostIPs: Schema.optional(Schema.Array(PodIP)),
  podIP: Schema.optional(Schema.String),
  podIPs: Schema.optional(Schema.Array(PodIP)),
  startTime: Schema.optional(Time),
  containerStatuses: Schema.optional(Schema.Array(ContainerStatus)),
  qosClass: Schema.optional(openEnum("Guaranteed", "Burstable", "BestEffort")),
  initContainerStatuses: Schema.optional(Schema.Array(ContainerStatus)),
  observedGeneration: Schema.optional(Schema.Number),
  message: Schema.optional(Schema.String),
  reason: Schema.optional(Schema.String),
  nominatedNodeName: Schema.optional(Schema.String),
  ephemeralContainerStatuses: Schema.optional(Schema.Array(ContainerStatus)),
  resize: Schema.optional(Schema.String),
  resourceClaimStatuses: Schema.optional(Schema.Array(LooseObject))
}).annotations({ identifier: "PodStatus" })

/**
 * @since 0.1.0
 * @category models
 */
export type PodStatus = typeof PodStatus.Type

/**
 * A pod: one or more containers scheduled together on a node.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Pod = Schema.Struct({
  apiVersion: Schema.optional(Schema.String),
  kind: Schema.optional(Schema.String),
  metadata: Schema.optional(ObjectMeta),
  spec: Schema.optional(PodSpec),
  status: Schema.optional(PodStatus)
}).annotations({ identifier: "Pod" })

/**
 * @since 0.1.0
 * @category models
 */
export type Pod = typeof Pod.Type

/**
 * Pods: `v1`, namespaced.
 *
 * @example
 * ```ts
 * import { Kube, Pods } from "effect-kube"
 *
 * const pods = Kube.api(Pods, { namespace: "default" })
 * ```
 * @since 0.1.0
 * @category resources
 */
export const Pods = Resource.make({
  apiVersion: "v1",
  kind: "Pod",
  plural: "pods",
  namespaced: true,
  subresources: ["attach", "binding", "ephemeralcontainers", "eviction", "exec", "log", "portforward", "proxy", "resize", "status"],
  schema: Pod
})

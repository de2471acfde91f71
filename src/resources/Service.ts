/**
 * Services (`v1`, namespaced): a stable address for a set of pods.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import * as Resource from "../Resource.js"
import { LooseObject, openEnum, StringMap } from "./internal/schema.js"
import { StatusCondition, IntOrString, ObjectMeta } from "./Meta.js"

/**
 * One port of a service; `targetPort` is a number or the name of a container port.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ServicePort = Schema.Struct({
  name: Schema.optional(Schema.String),
  protocol: Schema.optional(openEnum("TCP", "UDP", "SCTP")),
  appProtocol: Schema.optional(Schema.String),
  port: Schema.Number,
  targetPort: Schema.optional(IntOrString),
  nodePort: Schema.optional(Schema.Number)
}).annotations({ identifier: "ServicePort" })

/**
 * @since 0.1.0
 * @category models
 */
export type ServicePort = typeof ServicePort.Type

/**
 * The desired state of a service.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ServiceSpec = Schema.Struct({
  type: Schema.optional(openEnum("ClusterIP", "NodePort", "LoadBalancer", "ExternalName")),
  selector: Schema.optional(StringMap),
  ports: Schema.optional(Schema.Array(ServicePort)),
  clusterIP: Schema.optional(Schema.String),
  clusterIPs: Schema.optional(Schema.Array(Schema.String)),
  externalIPs: Schema.optional(Schema.Array(Schema.String)),
  externalName: Schema.optional(Schema.String),
  externalTrafficPolicy: Schema.optional(openEnum("Cluster", "Local")),
  internalTrafficPolicy: Schema.optional(openEnum("Cluster", "Local")),
  healthCheckNodePort: Schema.optional(Schema.Number),
  ipFamilies: Schema.optional(Schema.Array(Schema.String)),
  ipFamilyPolicy: Schema.optional(openEnum("SingleStack", "PreferDualStack", "RequireDualStack")),
  loadBalancerClass: Schema.optional(Schema.String),
  loadBalancerIP: Schema.optional(Schema.String),
  loadBalancerSourceRanges: Schema.optional(Schema.Array(Schema.String)),
  allocateLoadBalancerNodePorts: Schema.optional(Schema.Boolean),
  publishNotReadyAddresses: Schema.optional(Schema.Boolean),
  sessionAffinity: Schema.optional(openEnum("None", "ClientIP")),
  sessionAffinityConfig: Schema.optional(LooseObject),
  trafficDistribution: Schema.optional(Schema.String)
}).annotations({ identifier: "ServiceSpec" })

/**
 * @since 0.1.0
 * @category models
 */
export type ServiceSpec = typeof ServiceSpec.Type

/**
 * One ingress point of a load balancer.
 *
 * @since 0.1.0
 * @category schemas
 */
export const LoadBalancerIngress = Schema.Struct({
  ip: Schema.optional(Schema.String),
  hostname: Schema.optional(Schema.String),
  ipMode: Schema.optional(Schema.String),
  ports: Schema.optional(Schema.Array(LooseObject))
}).annotations({ identifier: "LoadBalancerIngress" })

/**
 * @since 0.1.0
 * @category models
 */
export type LoadBalancerIngress = typeof LoadBalancerIngress.Type

/**
 * The observed state of a service: its load balancer's ingress points, if any.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ServiceStatus = Schema.Struct({
  loadBalancer: Schema.optional(
    Schema.Struct({
      ingress: Schema.optional(Schema.Array(LoadBalancerIngress))
    })
  ),
  conditions: Schema.optional(Schema.Array(StatusCondition))
}).annotations({ identifier: "ServiceStatus" })

/**
 * @since 0.1.0
 * @category models
 */
export type ServiceStatus = typeof ServiceStatus.Type

/**
 * A service.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Service = Schema.Struct({
  apiVersion: Schema.optional(Schema.String),
  kind: Schema.optional(Schema.String),
  metadata: Schema.optional(ObjectMeta),
  spec: Schema.optional(ServiceSpec),
  status: Schema.optional(ServiceStatus)
}).annotations({ identifier: "Service" })

/**
 * @since 0.1.0
 * @category models
 */
export type Service = typeof Service.Type

/**
 * Services: `v1`, namespaced.
 *
 * @since 0.1.0
 * @category resources
 */
export const Services = Resource.make({
  apiVersion: "v1",
  kind: "Service",
  plural: "services",
  namespaced: true,
  schema: Service
})

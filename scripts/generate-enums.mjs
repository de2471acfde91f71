/**
 * The known values of string fields that are enums in the Kubernetes API.
 *
 * The OpenAPI v2 document the generator reads does not carry `enum` lists (they are only in
 * the field descriptions, in prose), so the well-known ones are listed here, by the short
 * name of the definition and the property (`Type.field`, `Type.field[]` for the items of
 * a list). They apply to every group version that has a definition of that name. Every
 * enum is open: these values are what the TypeScript type suggests, any string decodes.
 */
const protocols = ["TCP", "UDP", "SCTP"]
const conditionStatus = ["True", "False", "Unknown"]
const selectorOperators = ["In", "NotIn", "Exists", "DoesNotExist"]
const accessModes = ["ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod"]
const taintEffects = ["NoSchedule", "PreferNoSchedule", "NoExecute"]
const pullPolicies = ["Always", "IfNotPresent", "Never"]
const metricSourceTypes = ["Object", "Pods", "Resource", "ContainerResource", "External"]

/** @type {Record<string, ReadonlyArray<string>>} */
export const enums = {
  "PodStatus.phase": ["Pending", "Running", "Succeeded", "Failed", "Unknown"],
  "PodStatus.qosClass": ["Guaranteed", "Burstable", "BestEffort"],
  "PodSpec.restartPolicy": ["Always", "OnFailure", "Never"],
  "PodSpec.dnsPolicy": ["ClusterFirst", "ClusterFirstWithHostNet", "Default", "None"],
  "PodSpec.preemptionPolicy": ["PreemptLowerPriority", "Never"],
  "Container.imagePullPolicy": pullPolicies,
  "EphemeralContainer.imagePullPolicy": pullPolicies,
  "Container.terminationMessagePolicy": ["File", "FallbackToLogsOnError"],
  "EphemeralContainer.terminationMessagePolicy": ["File", "FallbackToLogsOnError"],
  "Container.restartPolicy": ["Always"],
  "ContainerResizePolicy.restartPolicy": ["NotRequired", "RestartContainer"],
  "ContainerPort.protocol": protocols,
  "ServicePort.protocol": protocols,
  "EndpointPort.protocol": protocols,
  "NetworkPolicyPort.protocol": protocols,
  "PortStatus.protocol": protocols,
  "Toleration.operator": ["Exists", "Equal"],
  "Toleration.effect": taintEffects,
  "Taint.effect": taintEffects,
  "NodeSelectorRequirement.operator": ["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"],
  "LabelSelectorRequirement.operator": selectorOperators,
  "ScopedResourceSelectorRequirement.operator": selectorOperators,
  "SeccompProfile.type": ["Unconfined", "RuntimeDefault", "Localhost"],
  "AppArmorProfile.type": ["Unconfined", "RuntimeDefault", "Localhost"],
  "ServiceSpec.type": ["ClusterIP", "NodePort", "LoadBalancer", "ExternalName"],
  "ServiceSpec.externalTrafficPolicy": ["Cluster", "Local"],
  "ServiceSpec.internalTrafficPolicy": ["Cluster", "Local"],
  "ServiceSpec.ipFamilyPolicy": ["SingleStack", "PreferDualStack", "RequireDualStack"],
  "ServiceSpec.ipFamilies[]": ["IPv4", "IPv6"],
  "ServiceSpec.sessionAffinity": ["None", "ClientIP"],
  "LoadBalancerIngress.ipMode": ["VIP", "Proxy"],
  "NamespaceStatus.phase": ["Active", "Terminating"],
  "NodeAddress.type": ["Hostname", "InternalIP", "ExternalIP", "InternalDNS", "ExternalDNS"],
  "PersistentVolumeClaimStatus.phase": ["Pending", "Bound", "Lost"],
  "PersistentVolumeStatus.phase": ["Pending", "Available", "Bound", "Released", "Failed"],
  "PersistentVolumeSpec.persistentVolumeReclaimPolicy": ["Retain", "Delete", "Recycle"],
  "PersistentVolumeSpec.accessModes[]": accessModes,
  "PersistentVolumeClaimSpec.accessModes[]": accessModes,
  "PersistentVolumeClaimStatus.accessModes[]": accessModes,
  "PersistentVolumeSpec.volumeMode": ["Filesystem", "Block"],
  "PersistentVolumeClaimSpec.volumeMode": ["Filesystem", "Block"],
  "StorageClass.reclaimPolicy": ["Retain", "Delete", "Recycle"],
  "StorageClass.volumeBindingMode": ["Immediate", "WaitForFirstConsumer"],
  "Event.type": ["Normal", "Warning"],
  "Secret.type": [
    "Opaque",
    "kubernetes.io/service-account-token",
    "kubernetes.io/dockerconfigjson",
    "kubernetes.io/dockercfg",
    "kubernetes.io/basic-auth",
    "kubernetes.io/ssh-auth",
    "kubernetes.io/tls",
    "bootstrap.kubernetes.io/token"
  ],
  "LimitRangeItem.type": ["Container", "Pod", "PersistentVolumeClaim"],
  "DeploymentStrategy.type": ["RollingUpdate", "Recreate"],
  "StatefulSetUpdateStrategy.type": ["RollingUpdate", "OnDelete"],
  "DaemonSetUpdateStrategy.type": ["RollingUpdate", "OnDelete"],
  "StatefulSetSpec.podManagementPolicy": ["OrderedReady", "Parallel"],
  "StatefulSetPersistentVolumeClaimRetentionPolicy.whenDeleted": ["Retain", "Delete"],
  "StatefulSetPersistentVolumeClaimRetentionPolicy.whenScaled": ["Retain", "Delete"],
  "JobSpec.completionMode": ["NonIndexed", "Indexed"],
  "JobSpec.podReplacementPolicy": ["TerminatingOrFailed", "Failed"],
  "PodFailurePolicyRule.action": ["FailJob", "FailIndex", "Ignore", "Count"],
  "PodFailurePolicyOnExitCodesRequirement.operator": ["In", "NotIn"],
  "CronJobSpec.concurrencyPolicy": ["Allow", "Forbid", "Replace"],
  "PodDisruptionBudgetSpec.unhealthyPodEvictionPolicy": ["IfHealthyBudget", "AlwaysAllow"],
  "HTTPIngressPath.pathType": ["Exact", "Prefix", "ImplementationSpecific"],
  "NetworkPolicySpec.policyTypes[]": ["Ingress", "Egress"],
  "EndpointSlice.addressType": ["IPv4", "IPv6", "FQDN"],
  "MetricSpec.type": metricSourceTypes,
  "MetricStatus.type": metricSourceTypes,
  "MetricTarget.type": ["Utilization", "Value", "AverageValue"],
  "HPAScalingRules.selectPolicy": ["Max", "Min", "Disabled"],
  "HPAScalingPolicy.type": ["Pods", "Percent"],
  "ManagedFieldsEntry.operation": ["Apply", "Update"],
  "Status.status": ["Success", "Failure"],
  "CustomResourceDefinitionSpec.scope": ["Namespaced", "Cluster"],
  "CustomResourceConversion.strategy": ["None", "Webhook"],
  "ValidatingWebhook.failurePolicy": ["Ignore", "Fail"],
  "MutatingWebhook.failurePolicy": ["Ignore", "Fail"],
  "ValidatingWebhook.sideEffects": ["None", "NoneOnDryRun", "Some", "Unknown"],
  "MutatingWebhook.sideEffects": ["None", "NoneOnDryRun", "Some", "Unknown"],
  "ValidatingWebhook.matchPolicy": ["Exact", "Equivalent"],
  "MutatingWebhook.matchPolicy": ["Exact", "Equivalent"],
  "MutatingWebhook.reinvocationPolicy": ["Never", "IfNeeded"],
  "ValidatingAdmissionPolicySpec.failurePolicy": ["Ignore", "Fail"],
  "RuleWithOperations.operations[]": ["*", "CREATE", "UPDATE", "DELETE", "CONNECT"],
  "RuleWithOperations.scope": ["*", "Cluster", "Namespaced"],
  "CertificateSigningRequestCondition.type": ["Approved", "Denied", "Failed"]
}

/** Any definition whose name ends in `Condition` has the `True`/`False`/`Unknown` status. */
export const conditionStatusValues = conditionStatus

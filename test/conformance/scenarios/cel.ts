/**
 * CEL on both servers: a CRD refused for its rules' estimated cost (unbounded, and by a named factor), a CRD's
 * rules refusing objects (messages, reasons, fieldPath, the per-call cost limit), and a ValidatingAdmissionPolicy
 * denying a write. The CRDs are test/util/celCases.ts's, the ones `CustomResource.validate` is held to.
 */
import { crdOf, factorSchema, gadget, gadgetSchema, tags, unboundedSchema } from "../../util/celCases.js"
import type { Step } from "../client.js"
import type { Scenario } from "../scenarios.js"

const crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
const group = "cel.conformance.effect-kube.dev"
const gadgets = `/apis/${group}/v1/namespaces/{ns}/gadgets`

/** Sent again until the kind is served (a CRD is established at the server's pace). */
const served = (observed: { readonly status: number }) => observed.status !== 404

const createGadget = (name: string, spec: Record<string, unknown>): Step => ({
  method: "POST",
  path: gadgets,
  body: gadget(group, name, spec),
  until: served
})

const policy = {
  apiVersion: "admissionregistration.k8s.io/v1",
  kind: "ValidatingAdmissionPolicy",
  metadata: { name: "cel-conformance-deny" },
  spec: {
    failurePolicy: "Fail",
    matchConstraints: { resourceRules: [{ apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["configmaps"] }] },
    validations: [{ expression: "!has(object.data) || !('forbidden' in object.data)", message: "no forbidden key", reason: "Invalid" }]
  }
}
const binding = {
  apiVersion: "admissionregistration.k8s.io/v1",
  kind: "ValidatingAdmissionPolicyBinding",
  metadata: { name: "cel-conformance-deny" },
  spec: {
    policyName: "cel-conformance-deny",
    validationActions: ["Deny"],
    matchResources: { objectSelector: { matchLabels: { "conformance.effect-kube.dev/cel": "deny" } } }
  }
}

/** @internal */
export const celScenarios: ReadonlyArray<Scenario> = [
  {
    name: "CEL crd-estimated-cost-unbounded",
    group: "CEL",
    steps: [{ method: "POST", path: crds, body: crdOf("unbounded.cel.conformance.effect-kube.dev", "Unbounded", unboundedSchema()) }]
  },
  {
    name: "CEL crd-estimated-cost-factor",
    group: "CEL",
    steps: [{ method: "POST", path: crds, body: crdOf("factor.cel.conformance.effect-kube.dev", "Factor", factorSchema()) }]
  },
  {
    name: "CEL crd-rules",
    group: "CEL",
    steps: [
      { method: "POST", path: crds, body: crdOf(group, "Gadget", gadgetSchema()), pick: ["metadata.name", "spec.versions"] },
      createGadget("over-max", { replicas: 7, owner: "me" }),
      createGadget("several", { replicas: 9, mode: "bad", name: "much-too-long-name" }),
      createGadget("per-call-limit", { replicas: 0, tags: tags(500) }),
      { ...createGadget("accepted", { replicas: 1, owner: "me", name: "short" }), pick: ["metadata.name", "spec"] },
      { method: "DELETE", path: `${crds}/gadgets.${group}`, statusOnly: true }
    ]
  },
  {
    name: "CEL validating-admission-policy-deny",
    group: "CEL",
    steps: [
      { method: "POST", path: "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies", body: policy, pick: ["metadata.name"] },
      { method: "POST", path: "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings", body: binding, pick: ["metadata.name"] },
      {
        method: "POST",
        path: "/api/v1/namespaces/{ns}/configmaps",
        body: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "cel-denied", labels: { "conformance.effect-kube.dev/cel": "deny" } }, data: { forbidden: "x" } },
        // the policy is enforced once the server's admission plugin has read it
        until: (observed) => observed.status === 422
      },
      { method: "DELETE", path: "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings/cel-conformance-deny", statusOnly: true },
      { method: "DELETE", path: "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies/cel-conformance-deny", statusOnly: true }
    ]
  }
]

/**
 * kubectl's own output against both servers: get (default and -o wide, a missing object), apply (created, configured,
 * unchanged), diff (exit code 1 and the diff), delete, wait --for=condition, rollout status. What is compared is the
 * exit code, stdout and stderr, with only the server's address, ages and temporary paths normalised.
 */
import type { Step } from "../client.js"
import type { Scenario } from "../scenarios.js"

const kubectl = (...args: ReadonlyArray<string>): Step => ({ method: "GET", path: "", kubectl: ["-n", "{ns}", ...args] })
const withStdin = (body: string, ...args: ReadonlyArray<string>): Step => ({ ...kubectl(...args), body })

const configMap = (name: string, value: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  labels:\n    conformance.effect-kube.dev/case: "yes"\ndata:\n  a: "${value}"\n`

const deployment = (name: string) => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${name}
  labels:
    conformance.effect-kube.dev/case: "yes"
spec:
  replicas: 1
  selector:
    matchLabels: { app: ${name} }
  template:
    metadata:
      labels: { app: ${name} }
    spec:
      terminationGracePeriodSeconds: 0
      containers:
      - name: c
        image: busybox:1.36
        command: ["sleep", "3600"]
`

const talker = `apiVersion: v1
kind: Pod
metadata:
  name: k-talker
  labels:
    conformance.effect-kube.dev/case: "yes"
spec:
  terminationGracePeriodSeconds: 0
  containers:
  - name: c
    image: busybox:1.36
    command: ["sh", "-c", "echo hello; echo to-stderr >&2; sleep 3600"]
`

const printerCrd = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gizmos.kubectl.conformance.effect-kube.dev
  labels:
    conformance.effect-kube.dev/case: "yes"
spec:
  group: kubectl.conformance.effect-kube.dev
  scope: Namespaced
  names: { plural: gizmos, singular: gizmo, kind: Gizmo, shortNames: [gz] }
  versions:
  - name: v1
    served: true
    storage: true
    additionalPrinterColumns:
    - { name: Size, type: integer, jsonPath: .spec.size }
    - { name: Color, type: string, jsonPath: .spec.color, priority: 1 }
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: { type: object, properties: { size: { type: integer }, color: { type: string } } }
`

const gizmo = `apiVersion: kubectl.conformance.effect-kube.dev/v1
kind: Gizmo
metadata: { name: g1 }
spec: { size: 3, color: blue }
`

export const kubectlScenarios: ReadonlyArray<Scenario> = [
  {
    name: "kubectl logs-and-exec", group: "kubectl",
    steps: [
      withStdin(talker, "apply", "-f", "-"),
      kubectl("wait", "--for=condition=Ready", "pod/k-talker", "--timeout=60s"),
      { ...kubectl("logs", "k-talker"), until: (o) => String((o.body as { stdout?: string }).stdout).includes("hello") },
      kubectl("exec", "k-talker", "--", "echo", "from-exec"),
      kubectl("exec", "k-talker", "--", "sh", "-c", "exit 3"),
      kubectl("logs", "k-talker", "-c", "nothing")
    ]
  },
  {
    name: "kubectl get-crd-printer-columns", group: "kubectl",
    steps: [
      withStdin(printerCrd, "apply", "-f", "-"),
      kubectl("wait", "--for=condition=Established", "crd/gizmos.kubectl.conformance.effect-kube.dev", "--timeout=30s"),
      { ...withStdin(gizmo, "apply", "-f", "-"), until: (o) => o.status === 0 },
      kubectl("get", "gizmos"),
      kubectl("get", "gz", "-o", "wide"),
      kubectl("delete", "crd", "gizmos.kubectl.conformance.effect-kube.dev")
    ]
  },
  {
    name: "kubectl get", group: "kubectl",
    steps: [
      withStdin(configMap("k-get", "1"), "create", "-f", "-"),
      kubectl("get", "configmap", "k-get"),
      kubectl("get", "configmap", "k-get", "-o", "wide"),
      kubectl("get", "configmap", "k-get", "-o", "jsonpath={.data.a}"),
      kubectl("get", "configmap", "k-missing"),
      kubectl("get", "configmaps", "-l", "conformance.effect-kube.dev/case=none")
    ]
  },
  {
    name: "kubectl apply", group: "kubectl",
    steps: [
      withStdin(configMap("k-apply", "1"), "apply", "-f", "-"),
      withStdin(configMap("k-apply", "1"), "apply", "-f", "-"),
      withStdin(configMap("k-apply", "2"), "apply", "-f", "-"),
      withStdin(configMap("k-apply", "3"), "apply", "--server-side", "-f", "-"),
      withStdin(configMap("k-apply", "4"), "apply", "--server-side", "--field-manager", "other", "-f", "-"),
      kubectl("get", "configmap", "k-apply", "-o", "jsonpath={.data.a}")
    ]
  },
  {
    name: "kubectl diff", group: "kubectl",
    steps: [
      withStdin(configMap("k-diff", "1"), "apply", "-f", "-"),
      withStdin(configMap("k-diff", "1"), "diff", "-f", "-"),
      withStdin(configMap("k-diff", "2"), "diff", "-f", "-")
    ]
  },
  {
    name: "kubectl delete", group: "kubectl",
    steps: [
      withStdin(configMap("k-delete", "1"), "create", "-f", "-"),
      kubectl("delete", "configmap", "k-delete"),
      kubectl("delete", "configmap", "k-delete"),
      kubectl("delete", "configmap", "k-delete", "--ignore-not-found")
    ]
  },
  {
    name: "kubectl rollout-and-wait", group: "kubectl",
    steps: [
      withStdin(deployment("k-roll"), "apply", "-f", "-"),
      // waited for first: rollout status prints a "Waiting for…" line for each state it sees on the way
      kubectl("wait", "--for=condition=Available", "deployment/k-roll", "--timeout=60s"),
      {
        ...kubectl("rollout", "status", "deployment/k-roll", "--timeout=60s"),
        until: (o) => !String((o.body as { stdout?: string }).stdout).includes("Waiting")
      },
      kubectl("get", "deployment", "k-roll"),
      kubectl("wait", "--for=condition=Nothing", "deployment/k-roll", "--timeout=1s")
    ]
  }
]

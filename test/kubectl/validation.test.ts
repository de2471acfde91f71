/**
 * kubectl, the reference client, against FakeCluster's validation, pruning, defaulting and
 * no-op writes: what kube-apiserver refuses is refused with its message, unknown fields are
 * refused (Strict) or dropped (Warn), objects come back with the server's defaults, and an
 * apply that changes nothing writes nothing.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { hasKubectl, ok, serveWithToken, session, suiteName } from "../util/kubectl.js"

const deploymentYaml = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 1
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: web
        image: nginx
        ports:
        - containerPort: 80
`

const serviceYaml = `apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector:
    app: web
  ports:
  - port: 80
`

const secretYaml = `apiVersion: v1
kind: Secret
metadata:
  name: creds
stringData:
  user: admin
`

const podWithoutContainers = `apiVersion: v1
kind: Pod
metadata:
  name: empty
spec:
  containers: []
`

const binding = (role: string) => `apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: readers
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: ${role}
subjects:
- kind: User
  name: jane
  apiGroup: rbac.authorization.k8s.io
`

const claimWithoutAccessModes = `apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: data
spec:
  resources:
    requests:
      storage: 1Gi
`

const podWithResources = `apiVersion: v1
kind: Pod
metadata:
  name: tool
spec:
  containers:
  - name: app
    image: nginx
    resources:
      requests:
        cpu: 100m
      limits:
        cpu: 200m
`

const withUnknownField = `apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
data:
  a: "1"
extra: kept?
`

const suite = suiteName("kubectl against FakeCluster's validation, pruning and defaulting")

describe(suite, () => {
  it.live.skipIf(!hasKubectl)("refusals with the server's messages, pruning, defaults and no-op applies", () =>
    Effect.gen(function*() {
      const served = yield* serveWithToken()
      const { dir, run } = yield* session(served.kubeconfigPath, "kubectl-validation")
      const file = (name: string, text: string) => {
        const path = Path.join(dir, name)
        Fs.writeFileSync(path, text)
        return path
      }
      const jsonpath = (resource: string, path: string) => Effect.map(run("get", resource, "-o", `jsonpath=${path}`), ok)

      ok(yield* run("apply", "-f", file("deployment.yaml", deploymentYaml)))
      // 1. what the API server refuses, with its texts
      const negative = yield* run(
        "patch", "deployment", "web", "--subresource=scale", "--type=merge", "-p", `{"spec":{"replicas":-1}}`
      )
      assert.notStrictEqual(negative.code, 0)
      assert.include(negative.stderr, "spec.replicas: Invalid value: -1: must be greater than or equal to 0")
      const selector = yield* run(
        "patch", "deployment", "web", "--type=merge", "-p", `{"spec":{"selector":{"matchLabels":{"app":"other"}}}}`
      )
      assert.notStrictEqual(selector.code, 0)
      assert.include(selector.stderr, "field is immutable")
      const empty = yield* run("apply", "-f", file("empty.yaml", podWithoutContainers))
      assert.notStrictEqual(empty.code, 0)
      assert.include(empty.stderr, "spec.containers: Required value")
      ok(yield* run("apply", "-f", file("binding.yaml", binding("view"))))
      const rebound = yield* run("apply", "-f", file("binding.yaml", binding("edit")))
      assert.notStrictEqual(rebound.code, 0)
      assert.include(
        rebound.stderr,
        `The RoleBinding "readers" is invalid: roleRef: Invalid value: rbac.RoleRef{APIGroup:"rbac.authorization.k8s.io", ` +
          `Kind:"ClusterRole", Name:"edit"}: cannot change roleRef`
      )
      const claim = yield* run("apply", "-f", file("claim.yaml", claimWithoutAccessModes))
      assert.notStrictEqual(claim.code, 0)
      assert.include(
        claim.stderr,
        `The PersistentVolumeClaim "data" is invalid: spec.accessModes: Required value: at least 1 access mode is required`
      )
      // ephemeral containers (kubectl debug) and resizes go through their subresources, by their rules
      ok(yield* run("apply", "-f", file("tool.yaml", podWithResources)))
      ok(yield* run("debug", "pod/tool", "--image=busybox", "--container=debugger", "--target=app"))
      assert.strictEqual(yield* jsonpath("pod/tool", "{.spec.ephemeralContainers[0].targetContainerName}"), "app")
      ok(yield* run(
        "patch", "pod", "tool", "--subresource=resize", "-p",
        `{"spec":{"containers":[{"name":"app","resources":{"requests":{"cpu":"150m"}}}]}}`
      ))
      assert.strictEqual(yield* jsonpath("pod/tool", "{.spec.containers[0].resources.requests.cpu}"), "150m")
      const storage = yield* run(
        "patch", "pod", "tool", "--subresource=resize", "-p",
        `{"spec":{"containers":[{"name":"app","resources":{"requests":{"ephemeral-storage":"1Gi"}}}]}}`
      )
      assert.notStrictEqual(storage.code, 0)
      assert.include(storage.stderr, `The Pod "tool" is invalid: spec: Forbidden: only cpu and memory resources are mutable`)

      // 2. unknown fields: refused under kubectl's default (Strict), warned of and pruned under Warn
      const strict = yield* run("apply", "-f", file("unknown.yaml", withUnknownField))
      assert.notStrictEqual(strict.code, 0)
      assert.include(strict.stderr, `unknown field "extra"`)
      const warned = yield* run("apply", "--validate=warn", "-f", Path.join(dir, "unknown.yaml"))
      assert.strictEqual(warned.code, 0, warned.stderr)
      assert.include(warned.stderr, `unknown field "extra"`)
      // (kubectl's last-applied annotation keeps what was sent; the object has no such field)
      assert.strictEqual(yield* jsonpath("configmap/settings", "{.extra}|{.data.a}"), "|1")

      // 3. defaults, as a reconcile loop diffing desired against live sees them
      assert.strictEqual(
        yield* jsonpath("deployment/web", "{.spec.strategy.type} {.spec.revisionHistoryLimit} {.spec.progressDeadlineSeconds}"),
        "RollingUpdate 10 600"
      )
      assert.strictEqual(
        yield* jsonpath(
          "deployment/web",
          "{.spec.template.spec.containers[0].imagePullPolicy} {.spec.template.spec.containers[0].ports[0].protocol} " +
            "{.spec.template.spec.restartPolicy} {.spec.template.spec.dnsPolicy}"
        ),
        "Always TCP Always ClusterFirst"
      )
      ok(yield* run("apply", "-f", file("service.yaml", serviceYaml)))
      const service = (yield* jsonpath("service/web", "{.spec.type} {.spec.ports[0].targetPort} {.spec.clusterIP}")).split(" ")
      assert.deepStrictEqual(service.slice(0, 2), ["ClusterIP", "80"])
      assert.match(service[2]!, /^\d+\.\d+\.\d+\.\d+$/)
      ok(yield* run("apply", "-f", file("secret.yaml", secretYaml)))
      assert.strictEqual(yield* jsonpath("secret/creds", "{.type} {.data.user}|{.stringData}"), `Opaque ${btoa("admin")}|`)

      // 4. an apply that changes nothing writes nothing: the same resourceVersion
      const applied = file("applied.yaml", deploymentYaml)
      ok(yield* run("apply", "--server-side", "--force-conflicts", "-f", applied))
      // once rolled out, the controllers write no more
      ok(yield* run("rollout", "status", "deployment/web", "--timeout=20s"))
      const before = yield* jsonpath("deployment/web", "{.metadata.resourceVersion}")
      ok(yield* run("apply", "--server-side", "--force-conflicts", "-f", applied))
      ok(yield* run("apply", "--server-side", "--force-conflicts", "-f", applied))
      assert.strictEqual(yield* jsonpath("deployment/web", "{.metadata.resourceVersion}"), before)
    }).pipe(Effect.scoped), 60_000)
})

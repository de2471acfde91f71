/**
 * kubectl, the reference client, against what FakeCluster's controllers and kubelet do
 * on a real clock: `kubectl wait --for condition=established` on a CRD, `kubectl rollout
 * status` and `rollout restart` of a Deployment, `kubectl delete -f` of a file that starts
 * with its Namespace, `kubectl wait --for=condition=complete` of a Job, and `kubectl
 * create token` without `--duration`, whose token kubectl then authenticates with.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { hasKubectl, ok, serveWithToken, session, suiteName } from "../util/kubectl.js"

const crdYaml = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names:
    plural: widgets
    singular: widget
    kind: Widget
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
`

const appYaml = `apiVersion: v1
kind: Namespace
metadata:
  name: shop
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
spec:
  replicas: 2
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
---
apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: shop
spec:
  selector:
    app: web
  ports:
  - port: 80
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: shop
data:
  a: "1"
`

const jobYaml = `apiVersion: batch/v1
kind: Job
metadata:
  name: once
spec:
  completions: 2
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: main
        image: busybox
        command: ["true"]
`

const suite = suiteName("kubectl against FakeCluster's controllers and kubelet")

describe(suite, () => {
  it.live.skipIf(!hasKubectl)(
    "kubectl wait --for condition=established, rollout status and restart, delete -f with its Namespace",
    () =>
      Effect.gen(function*() {
        const served = yield* serveWithToken()
        const { dir, run } = yield* session(served.kubeconfigPath, "kubectl-lifecycle")
        const file = (name: string, text: string) => {
          const path = Path.join(dir, name)
          Fs.writeFileSync(path, text)
          return path
        }

        ok(yield* run("apply", "-f", file("crd.yaml", crdYaml)))
        const established = ok(
          yield* run("wait", "--for", "condition=established", "--timeout=20s", "crd/widgets.example.com")
        )
        assert.include(established, "customresourcedefinition.apiextensions.k8s.io/widgets.example.com condition met")

        const app = file("app.yaml", appYaml)
        ok(yield* run("apply", "-f", app))
        const status = ok(yield* run("rollout", "status", "-n", "shop", "deployment/web", "--timeout=20s"))
        assert.include(status, `deployment "web" successfully rolled out`)
        const ready = ok(yield* run("get", "-n", "shop", "deployment/web", "-o", "jsonpath={.status.readyReplicas}"))
        assert.strictEqual(ready, "2")
        const slices = ok(yield* run("get", "endpointslices", "-n", "shop", "-l", "kubernetes.io/service-name=web",
          "-o", "jsonpath={.items[0].endpoints[*].conditions.ready}"))
        assert.strictEqual(slices, "true true")

        assert.include(ok(yield* run("rollout", "restart", "-n", "shop", "deployment/web")), "deployment.apps/web restarted")
        const restarted = ok(yield* run("rollout", "status", "-n", "shop", "deployment/web", "--timeout=20s"))
        assert.include(restarted, `deployment "web" successfully rolled out`)
        const history = ok(yield* run("rollout", "history", "-n", "shop", "deployment/web"))
        assert.match(history, /^1\s/m)
        assert.match(history, /^2\s/m)

        // the Namespace first: its controller has not emptied it when kubectl deletes the rest
        const deleted = yield* run("delete", "-f", app, "--timeout=30s")
        assert.strictEqual(deleted.code, 0, deleted.stderr)
        assert.include(deleted.stdout, `namespace "shop" deleted`)
        assert.include(deleted.stdout, `deployment.apps "web" deleted`)
        assert.include(deleted.stdout, `configmap "settings" deleted`)
        assert.isUndefined(served.control.get({ apiVersion: "v1", kind: "Namespace", name: "shop" }))
        assert.deepStrictEqual(served.control.list("v1", "Pod", "shop"), [])
      }),
    120_000
  )

  it.live.skipIf(!hasKubectl)(
    "kubectl wait for a Job to complete, and kubectl create token whose token kubectl then uses",
    () =>
      Effect.gen(function*() {
        const served = yield* serveWithToken()
        const { dir, run } = yield* session(served.kubeconfigPath, "kubectl-job")
        const job = Path.join(dir, "job.yaml")
        Fs.writeFileSync(job, jobYaml)
        ok(yield* run("create", "-f", job))
        assert.include(
          ok(yield* run("wait", "--for=condition=complete", "--timeout=20s", "job/once")),
          "job.batch/once condition met"
        )
        assert.strictEqual(ok(yield* run("get", "job/once", "-o", "jsonpath={.status.succeeded}")), "2")

        // without --duration: the server's default hour
        const token = ok(yield* run("create", "token", "default")).trim()
        const [, payload] = token.split(".")
        const claims = JSON.parse(Buffer.from(payload!, "base64url").toString("utf8"))
        assert.strictEqual(claims.sub, "system:serviceaccount:default:default")
        assert.strictEqual(claims.exp - claims.iat, 3600)
        const who = ok(yield* run("auth", "whoami", "--token", token, "-o", "jsonpath={.status.userInfo.username}"))
        assert.strictEqual(who, "system:serviceaccount:default:default")
        // SelfSubjectAccessReview and SelfSubjectRulesReview, which kubectl sends without a name
        assert.strictEqual(ok(yield* run("auth", "can-i", "create", "pods")).trim(), "yes")
        assert.match(ok(yield* run("auth", "can-i", "--list", "-n", "default")), /\*\.\*\s+\[\]\s+\[\]\s+\[\*\]/)
        const listed = yield* run("get", "pods", "--token", token)
        assert.strictEqual(listed.code, 0, listed.stderr)
        const refused = yield* run("get", "pods", "--token", `${token.slice(0, -4)}AAAA`)
        assert.notStrictEqual(refused.code, 0)
        assert.include(refused.stderr, "Unauthorized")
      }),
    120_000
  )
})

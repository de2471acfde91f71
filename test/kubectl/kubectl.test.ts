/**
 * kubectl against the fake cluster served over HTTPS (a generated CA, a bearer token):
 * the fake is faithful enough for a real, unmodified Kubernetes client to discover its
 * API, create, apply server-side, get, list by label and delete.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { hasKubectl, ok, serveWithToken, session, suiteName } from "../util/kubectl.js"

const podYaml = `apiVersion: v1
kind: Pod
metadata:
  name: x
  labels:
    app: x
spec:
  containers:
  - name: main
    image: busybox:1.36
    command: ["sh", "-c", "echo hello"]
`

const configMapYaml = (value: string) => `apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  labels:
    app: x
data:
  mode: "${value}"
`

// kubectl is a system tool, not a dependency: without it this suite cannot run, and its
// name says why it was skipped.
const suite = suiteName("kubectl against FakeCluster.serve")

describe(suite, () => {
  // kubectl delete waits for the kubelet to stop the pod, on the real clock
  it.live.skipIf(!hasKubectl)(
    "get, create -f, apply --server-side, get -o json, get -l and delete work over HTTPS with a token",
    () =>
      Effect.gen(function*() {
        const served = yield* serveWithToken()
        const { dir, run } = yield* session(served.kubeconfigPath, "kubectl")
        const podFile = Path.join(dir, "pod.yaml")
        Fs.writeFileSync(podFile, podYaml)
        const cmFile = Path.join(dir, "cm.yaml")

        const empty = JSON.parse(ok(yield* run("get", "pods", "-o", "json")))
        assert.deepStrictEqual(empty.items, [])

        assert.match(ok(yield* run("create", "-f", podFile)), /^pod\/x created$/m)
        const created = served.control.get({ apiVersion: "v1", kind: "Pod", name: "x" })!
        assert.deepStrictEqual(created.metadata.labels, { app: "x" })
        const again = yield* run("create", "-f", podFile)
        assert.notStrictEqual(again.code, 0)
        assert.include(again.stderr, `pods "x" already exists`)

        Fs.writeFileSync(cmFile, configMapYaml("a"))
        assert.match(ok(yield* run("apply", "--server-side", "-f", cmFile)), /^configmap\/settings serverside-applied$/m)
        Fs.writeFileSync(cmFile, configMapYaml("b"))
        ok(yield* run("apply", "--server-side", "-f", cmFile))
        const applied = served.control.get({ apiVersion: "v1", kind: "ConfigMap", name: "settings" })!
        assert.deepStrictEqual(applied.data, { mode: "b" })
        const managers = (applied.metadata.managedFields as Array<{ manager: string; operation: string }>)
          .map((e) => `${e.manager}/${e.operation}`)
        assert.deepStrictEqual(managers, ["kubectl/Apply"])

        served.control.setPodPhase("default", "x", "Running")
        const pod = JSON.parse(ok(yield* run("get", "pod", "x", "-o", "json")))
        assert.strictEqual(pod.kind, "Pod")
        assert.strictEqual(pod.metadata.name, "x")
        assert.strictEqual(pod.metadata.namespace, "default")
        assert.strictEqual(pod.metadata.uid, created.metadata.uid)
        assert.strictEqual(pod.spec.containers[0].image, "busybox:1.36")
        assert.strictEqual(pod.status.phase, "Running")

        const listed = ok(yield* run("get", "configmaps", "-l", "app=x"))
        assert.match(listed, /^NAME\s+DATA\s+AGE\n/)
        assert.match(listed, /^settings\s+1\s+\d+s$/m)
        const none = yield* run("get", "configmaps", "-l", "app=nothing")
        assert.include(none.stderr, "No resources found in default namespace.")

        assert.match(ok(yield* run("delete", "pod", "x")), /^pod "x" deleted$/m)
        assert.isUndefined(served.control.get({ apiVersion: "v1", kind: "Pod", name: "x" }))
        const gone = yield* run("get", "pod", "x")
        assert.notStrictEqual(gone.code, 0)
        assert.include(gone.stderr, `pods "x" not found`)

        const requests = served.control.requests()
        assert.isTrue(requests.some((r) => r.method === "POST" && r.query.fieldManager === "kubectl-create"))
        assert.isTrue(requests.some((r) => r.method === "PATCH" && r.contentType === "application/apply-patch+yaml"))
      }),
    120_000
  )
})

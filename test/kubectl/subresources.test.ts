/**
 * kubectl against the fake cluster's subresources and field validation: `kubectl scale`
 * (the scale subresource), `kubectl create token` (TokenRequest) and `kubectl create
 * --validate=strict` (server-side Strict field validation).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { hasKubectl, ok, serveWithToken, session, suiteName } from "../util/kubectl.js"

const deploymentYaml = (extra: string) => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: x
spec:
  replicas: 1
  selector:
    matchLabels:
      app: x
  template:
    metadata:
      labels:
        app: x
    spec:
      containers:
      - name: main
        image: nginx
${extra}`

const suite = suiteName("kubectl subresources against FakeCluster.serve")

describe(suite, () => {
  it.effect.skipIf(!hasKubectl)(
    "kubectl scale, kubectl create token and kubectl create --validate=strict",
    () =>
      Effect.gen(function*() {
        const served = yield* serveWithToken()
        const { dir, run } = yield* session(served.kubeconfigPath, "kubectl-sub")
        const file = Path.join(dir, "deployment.yaml")

        // --validate=strict: an unknown field is refused by the server with its message
        Fs.writeFileSync(file, deploymentYaml("  foo: 1\n"))
        const strict = yield* run("create", "--validate=strict", "-f", file)
        assert.notStrictEqual(strict.code, 0)
        assert.include(strict.stderr, `unknown field "spec.foo"`)
        assert.isUndefined(served.control.get({ apiVersion: "apps/v1", kind: "Deployment", name: "x" }))

        Fs.writeFileSync(file, deploymentYaml(""))
        assert.match(ok(yield* run("create", "--validate=strict", "-f", file)), /^deployment.apps\/x created$/m)
        const creates = served.control.requests().filter((r) => r.method === "POST" && r.path.endsWith("/deployments"))
        assert.isTrue(creates.every((r) => r.query.fieldValidation === "Strict"))

        // kubectl scale goes through the scale subresource
        assert.match(ok(yield* run("scale", "deployment/x", "--replicas=3")), /^deployment.apps\/x scaled$/m)
        const scaled = served.control.get({ apiVersion: "apps/v1", kind: "Deployment", name: "x" })!
        assert.strictEqual((scaled.spec as { replicas: number }).replicas, 3)
        assert.isTrue(served.control.requests().some((r) => r.path.endsWith("/deployments/x/scale")))

        // kubectl create token prints the TokenRequest's token
        served.control.seed([{ apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "builder", namespace: "default" } }])
        const token = ok(yield* run("create", "token", "builder", "--duration=20m", "--audience=vault")).trim()
        assert.match(token, /^\S+$/)
        const tokenRequests = served.control.requests().filter((r) => r.path.endsWith("/serviceaccounts/builder/token"))
        assert.deepStrictEqual(tokenRequests.map((r) => r.method), ["POST"])
        const missing = yield* run("create", "token", "nobody")
        assert.notStrictEqual(missing.code, 0)
        assert.include(missing.stderr, `serviceaccounts "nobody" not found`)
      }),
    120_000
  )
})

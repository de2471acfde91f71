/**
 * Sets of manifests against the real control plane: `Manifests.diff` by server-side dry run, `Manifests.apply` with an
 * ApplySet (its parent, the members' labels, prune of what a release drops), `waitReady` and `statusChanges` while the
 * real controllers roll a Deployment out, and what `Template` does on a cluster that does not serve OpenShift's API.
 */
import { assert, it } from "@effect/vitest"
import { Effect, Option, Stream } from "effect"
import { ApiError, Condition, ConfigMaps, Deployments, Errors, Jobs, Kube, Manifests, Secrets, Template } from "./lib.js"
import { layer, testNamespace, uniqueName } from "./support.js"

const release = (image: string, withSettings: boolean) => `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2
  selector:
    matchLabels: { app: web }
  template:
    metadata:
      labels: { app: web }
    spec:
      terminationGracePeriodSeconds: 0
      containers:
        - name: web
          image: ${image}
          command: ["sh", "-c", "sleep 3600"]
---
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector: { app: web }
  ports:
    - port: 80
${
  withSettings
    ? `---
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
data:
  mode: fast
`
    : ""
}`

it.layer(layer, { excludeTestServices: true, timeout: "60 seconds" })("manifests", (it) => {
  it.effect("diff, apply as an ApplySet, wait for the rollout, then a release that changes one object and prunes one", () =>
    Effect.gen(function*() {
      const ns = yield* testNamespace("manifests")
      const options = { namespace: ns, fieldManager: "e2e-deployer", applySet: { name: "shop" }, prune: true } as const
      const first = yield* Manifests.parse(release("busybox:1.36", true))

      const preview = yield* Manifests.diff(first, options)
      assert.deepStrictEqual(preview.map((d) => `${d.action} ${Errors.formatRef(d.ref)}`), [
        `create Deployment ${ns}/web`,
        `create Service ${ns}/web`,
        `create ConfigMap ${ns}/settings`
      ])
      // the dry run created nothing
      assert.isTrue(Option.isNone(yield* Kube.api(Deployments, { namespace: ns }).get("web")))

      const applied = yield* Manifests.apply(first, options)
      assert.strictEqual(applied.created.length, 3)
      assert.match(applied.id, /^applyset-[A-Za-z0-9_-]+-v1$/)
      assert.strictEqual(applied.parent.kind, "Secret")
      const parent = Option.getOrThrow(yield* Kube.api(Secrets, { namespace: ns }).get("shop"))
      assert.strictEqual(parent.metadata?.labels?.["applyset.kubernetes.io/id"], applied.id)
      assert.match(parent.metadata?.annotations?.["applyset.kubernetes.io/tooling"] ?? "", /^effect-kube\//)
      assert.strictEqual(
        parent.metadata?.annotations?.["applyset.kubernetes.io/contains-group-kinds"],
        "ConfigMap,Deployment.apps,Service"
      )
      const deployment = Option.getOrThrow(yield* Kube.api(Deployments, { namespace: ns }).get("web"))
      assert.strictEqual(deployment.metadata?.labels?.["applyset.kubernetes.io/part-of"], applied.id)
      assert.isTrue(deployment.metadata?.managedFields?.some((m) => m.manager === "e2e-deployer" && m.operation === "Apply"))

      // the real deployment controller and the node roll it out: waitReady sees it Current
      const ready = yield* Manifests.waitReady(applied.applied, { namespace: ns, timeout: "90 seconds" })
      assert.deepStrictEqual(ready.map((r) => `${r.ref.kind} ${r.status}`), ["Deployment Current", "Service Current", "ConfigMap Current"])

      // the second release: a new image, the ConfigMap gone
      const second = yield* Manifests.parse(release("busybox:1.37", false))
      const changes = yield* Manifests.diff(second, options)
      const byKind = Object.fromEntries(changes.map((d) => [d.ref.kind, d]))
      assert.strictEqual(byKind["Deployment"]?.action, "change")
      assert.deepStrictEqual(byKind["Deployment"]?.paths, ["spec.template.spec.containers[0].image"])
      assert.include(byKind["Deployment"]?.diff ?? "", "+          image: busybox:1.37")
      assert.strictEqual(byKind["Service"]?.action, "unchanged")
      assert.strictEqual(byKind["ConfigMap"]?.action, "prune")

      const next = yield* Manifests.apply(second, options)
      assert.deepStrictEqual(next.changed.map((r) => r.kind), ["Deployment"])
      assert.deepStrictEqual(next.unchanged.map((r) => r.kind), ["Service"])
      assert.deepStrictEqual(next.pruned.map((r) => `${r.kind} ${r.name}`), ["ConfigMap settings"])
      assert.isTrue(Option.isNone(yield* Kube.api(ConfigMaps, { namespace: ns }).get("settings")))

      // the rollout of the new image, one status change at a time
      const statuses = yield* Manifests.statusChanges(next.applied, { namespace: ns, timeout: "90 seconds" }).pipe(
        Stream.runCollect
      )
      const last = statuses.filter((s) => s.ref.kind === "Deployment").at(-1)
      assert.strictEqual(last?.status, "Current")
      const rolled = Option.getOrThrow(yield* Kube.api(Deployments, { namespace: ns }).get("web"))
      assert.strictEqual(rolled.metadata?.annotations?.["deployment.kubernetes.io/revision"], "2")
      assert.strictEqual(rolled.status?.updatedReplicas, 2)
    }), 180_000)

  // Found here: every kind of a set was resolved by discovery before anything was applied, and a CRD's kind is not
  // served until the server has established the CRD, so a set with a CRD and objects of its kind never applied
  it.effect("a set with a CRD and objects of its kind: the objects are applied once the server serves the kind", () =>
    Effect.gen(function*() {
      const ns = yield* testNamespace("manifests-crd")
      const group = `${uniqueName("e2e")}.effect-kube.dev`
      const objects = yield* Manifests.parse(`
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: { name: widgets.${group} }
spec:
  group: ${group}
  scope: Namespaced
  names: { plural: widgets, singular: widget, kind: Widget }
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec: { type: object, properties: { size: { type: integer } } }
---
apiVersion: ${group}/v1
kind: Widget
metadata: { name: small }
spec: { size: 3 }
`)
      const options = { namespace: ns, clusterScoped: true, fieldManager: "e2e" } as const
      yield* Effect.addFinalizer(() => Effect.ignore(Manifests.delete(objects, options)))
      const applied = yield* Manifests.apply(objects, options)
      assert.deepStrictEqual(applied.map((r) => r.kind), ["CustomResourceDefinition", "Widget"])
      assert.isTrue(applied.every((r) => typeof r.uid === "string"))
      const [, widget] = yield* Manifests.get(applied, options)
      assert.deepStrictEqual((widget as { spec?: unknown }).spec, { size: 3 })
      // and again, now that the server serves it: nothing changes
      const again = yield* Manifests.apply(objects, options)
      assert.deepStrictEqual(again.map((r) => r.uid), applied.map((r) => r.uid))
    }), 60_000)

  it.effect("waitReady reads the real controllers' status: a StatefulSet, a DaemonSet and a Job become Current", () =>
    Effect.gen(function*() {
      const ns = yield* testNamespace("kstatus")
      const objects = yield* Manifests.parse(`
apiVersion: apps/v1
kind: StatefulSet
metadata: { name: db }
spec:
  replicas: 2
  serviceName: db
  selector: { matchLabels: { app: db } }
  template:
    metadata: { labels: { app: db } }
    spec:
      terminationGracePeriodSeconds: 0
      containers: [{ name: db, image: "busybox:1.36", command: ["sh", "-c", "sleep 3600"] }]
---
apiVersion: apps/v1
kind: DaemonSet
metadata: { name: agent }
spec:
  selector: { matchLabels: { app: agent } }
  template:
    metadata: { labels: { app: agent } }
    spec:
      terminationGracePeriodSeconds: 0
      containers: [{ name: agent, image: "busybox:1.36", command: ["sh", "-c", "sleep 3600"] }]
---
apiVersion: batch/v1
kind: Job
metadata: { name: migrate }
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      containers: [{ name: migrate, image: "busybox:1.36", command: ["sh", "-c", "echo migrated"] }]
`)
      const applied = yield* Manifests.apply(objects, { namespace: ns })
      const ready = yield* Manifests.waitReady(applied, { namespace: ns, timeout: "90 seconds" })
      assert.deepStrictEqual(ready.map((r) => `${r.ref.kind} ${r.status}`), ["StatefulSet Current", "DaemonSet Current", "Job Current"])
      const [sts, ds] = yield* Manifests.get(applied, { namespace: ns })
      assert.strictEqual((sts as { status?: { readyReplicas?: number } }).status?.readyReplicas, 2)
      assert.strictEqual((ds as { status?: { numberReady?: number } }).status?.numberReady, 1)
    }), 120_000)

  // a Job is Current once it started (kstatus: it then runs on its own), so waitReady sees this one Failed only once
  // the job controller has said so
  it.effect("a Job the controller marks Failed reads as Failed, and waitReady then fails fast", () =>
    Effect.gen(function*() {
      const ns = yield* testNamespace("kstatus-failed")
      const objects = yield* Manifests.parse(`
apiVersion: batch/v1
kind: Job
metadata: { name: broken }
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      containers: [{ name: c, image: "busybox:1.36", command: ["sh", "-c", "exit 1"] }]
`)
      const applied = yield* Manifests.apply(objects, { namespace: ns })
      yield* Kube.api(Jobs, { namespace: ns }).waitFor("broken", Condition.jobFailed, { timeout: "90 seconds" })
      const [status] = yield* Manifests.status(applied, { namespace: ns })
      assert.strictEqual(status?.status, "Failed")
      const error = yield* Effect.flip(Manifests.waitReady(applied, { namespace: ns, timeout: "90 seconds" }))
      assert.strictEqual(error._tag, "NotReady")
      if (error._tag === "NotReady") {
        assert.strictEqual(error.reason, "Failed")
        assert.strictEqual(error.objects[0]?.status, "Failed")
        assert.include(error.objects[0]?.message ?? "", "BackoffLimitExceeded")
      }
    }), 120_000)

  it.effect("diff of a Secret by server-side dry run names the changed key and masks every value", () =>
    Effect.gen(function*() {
      const ns = yield* testNamespace("diff-secret")
      const secret = (password: string) =>
        Manifests.parse(`
apiVersion: v1
kind: Secret
metadata: { name: creds }
stringData: { password: ${password}, user: ann }
`)
      yield* Manifests.apply(yield* secret("hunter2"), { namespace: ns })
      const [changed] = yield* Manifests.diff(yield* secret("hunter3"), { namespace: ns })
      assert.strictEqual(changed?.action, "change")
      assert.deepStrictEqual(changed?.paths, ["data.password"])
      for (const value of ["hunter2", "hunter3", Buffer.from("hunter2").toString("base64"), Buffer.from("hunter3").toString("base64")]) {
        assert.notInclude(changed?.diff ?? "", value)
      }
      const [same] = yield* Manifests.diff(yield* secret("hunter2"), { namespace: ns })
      assert.strictEqual(same?.action, "unchanged")
    }), 30_000)

  it.effect("a manifest labelled for another set is refused before anything changes", () =>
    Effect.gen(function*() {
      const ns = yield* testNamespace("manifests-foreign")
      const objects = yield* Manifests.parse(`
apiVersion: v1
kind: ConfigMap
metadata:
  name: theirs
  labels: { applyset.kubernetes.io/part-of: applyset-someone-else-v1 }
`)
      const refused = yield* Effect.flip(Manifests.apply(objects, { namespace: ns, applySet: { name: "mine" } }))
      assert.notStrictEqual(refused._tag, "ApiError")
      assert.isTrue(Option.isNone(yield* Kube.api(ConfigMaps, { namespace: ns }).get("theirs")))
    }), 30_000)

  it.effect("Template on a cluster without OpenShift's template API fails with the server's 404", () =>
    Effect.gen(function*() {
      const ns = yield* testNamespace("template")
      const error = yield* Effect.flip(Template.process("web", { NAME: "x" }, { namespace: ns }))
      assert.isTrue(ApiError.isNotFound(error), error.message)
      assert.include(error.message, "/apis/template.openshift.io/v1/namespaces/")
    }), 30_000)

  // Template.apply processes on the server (`processedtemplates`, OpenShift's); on kube-apiserver a Template is
  // rendered here (Template.render) and its objects applied as a set
  it.effect("a Template rendered here, applied as an ApplySet; rendered again with fewer objects, the rest pruned", () =>
    Effect.gen(function*() {
      const ns = yield* testNamespace("template-render")
      const [template] = yield* Manifests.parse(`
apiVersion: template.openshift.io/v1
kind: Template
metadata: { name: settings }
parameters:
  - { name: COLOR, required: true }
  - { name: SIZE, value: "2" }
  - { name: EXTRA, value: "yes" }
objects:
  - apiVersion: v1
    kind: ConfigMap
    metadata: { name: "settings-\${COLOR}" }
    data: { size: "\${SIZE}" }
  - apiVersion: v1
    kind: ConfigMap
    metadata: { name: "extra-\${EXTRA}" }
`)
      const options = { namespace: ns, applySet: { name: "settings" }, prune: true } as const
      const first = yield* Manifests.apply(yield* Template.render(template!, { COLOR: "blue", SIZE: 3 }), options)
      assert.deepStrictEqual(first.created.map((r) => r.name), ["settings-blue", "extra-yes"])
      const cms = Kube.api(ConfigMaps, { namespace: ns })
      assert.deepStrictEqual(Option.getOrThrow(yield* cms.get("settings-blue")).data, { size: "3" })
      const second = yield* Manifests.apply(yield* Template.render(template!, { COLOR: "green" }), options)
      assert.deepStrictEqual(second.created.map((r) => r.name), ["settings-green"])
      assert.deepStrictEqual(second.unchanged.map((r) => r.name), ["extra-yes"])
      assert.deepStrictEqual(second.pruned.map((r) => r.name), ["settings-blue"])
      assert.isTrue(Option.isNone(yield* cms.get("settings-blue")))
      const missing = yield* Effect.flip(Template.render(template!, {}))
      assert.strictEqual(missing._tag, "ValidationError")
      assert.include(missing.message, "COLOR")
    }), 30_000)
})

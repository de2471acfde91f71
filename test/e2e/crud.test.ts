/**
 * Create, read, update, delete and delete-by-selector over the common kinds, and paginated lists, against the real
 * control plane: what the server defaults, assigns and refuses, read back through the public API.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Option, Stream } from "effect"
import {
  ApiError,
  ClusterRoles,
  Condition,
  ConfigMaps,
  Deployments,
  EndpointsResource,
  Jobs,
  Kube,
  Patch,
  Pods,
  RoleBindings,
  Roles,
  Secrets,
  Services,
  ValidationError,
  Warnings
} from "./lib.js"
import { layer, namespaces, testNamespace, uniqueName } from "./support.js"

const container = { name: "c", image: "busybox:1.36", command: ["sh", "-c", "sleep 3600"] }

it.layer(layer, { excludeTestServices: true, timeout: "60 seconds" })("crud", (it) => {
  describe("ConfigMaps", () => {
    it.effect("create, get, list, replace, update, delete: the server's fields come back", () =>
      Effect.gen(function*() {
        const ns = yield* testNamespace("cm")
        const cms = Kube.api(ConfigMaps, { namespace: ns })
        const created = yield* cms.create({ metadata: { name: "settings", labels: { app: "crud" } }, data: { a: "1" } })
        assert.match(created.metadata?.uid ?? "", /^[0-9a-f-]{36}$/)
        assert.match(created.metadata?.resourceVersion ?? "", /^\d+$/)
        assert.isString(created.metadata?.creationTimestamp)
        assert.strictEqual(created.metadata?.namespace, ns)
        // a create without fieldManager is recorded under the user agent's product name, operation Update
        const managed = created.metadata?.managedFields ?? []
        assert.strictEqual(managed.length, 1)
        assert.strictEqual(managed[0]?.manager, "effect-kube")
        assert.strictEqual(managed[0]?.operation, "Update")
        assert.deepStrictEqual(managed[0]?.fieldsV1, { "f:data": { ".": {}, "f:a": {} }, "f:metadata": { "f:labels": { ".": {}, "f:app": {} } } })

        const got = Option.getOrThrow(yield* cms.get("settings"))
        assert.strictEqual(got.metadata?.uid, created.metadata?.uid)
        assert.deepStrictEqual(got.data, { a: "1" })

        yield* cms.create({ metadata: { name: "other", labels: { app: "other" } } })
        const listed = yield* cms.list({ labelSelector: "app=crud" })
        assert.deepStrictEqual(listed.items.map((c) => c.metadata?.name), ["settings"])
        assert.match(listed.metadata.resourceVersion, /^\d+$/)
        const byField = yield* cms.list({ fieldSelector: "metadata.name=other" })
        assert.deepStrictEqual(byField.items.map((c) => c.metadata?.name), ["other"])

        const replaced = yield* cms.replace("settings", { ...got, data: { a: "2" } })
        assert.deepStrictEqual(replaced.data, { a: "2" })
        assert.notStrictEqual(replaced.metadata?.resourceVersion, got.metadata?.resourceVersion)
        // the version read before is stale now: 409 Conflict, with the server's own message
        const stale = yield* Effect.flip(cms.replace("settings", { ...got, data: { a: "3" } }))
        assert.isTrue(ApiError.isConflict(stale))
        assert.include(stale.message, "the object has been modified; please apply your changes to the latest version")

        const updated = yield* cms.update("settings", (cm) => ({ ...cm, data: { ...cm.data, b: "x" } }))
        assert.deepStrictEqual(updated.data, { a: "2", b: "x" })

        assert.isTrue(yield* cms.delete("settings"))
        assert.isFalse(yield* cms.delete("settings"))
        assert.isTrue(Option.isNone(yield* cms.get("settings")))
        const missing = yield* Effect.flip(cms.getOrFail("settings"))
        assert.isTrue(ApiError.isNotFound(missing))
        assert.include(missing.message, `404 NotFound: configmaps "settings" not found`)
      }), 120_000)

    // five writers at once: each attempt of one of them wins, and update tries 6 times (client-go's DefaultRetry)
    it.effect("update retries on the server's 409: five concurrent increments all land", () =>
      Effect.gen(function*() {
        const ns = yield* testNamespace("conflict")
        const cms = Kube.api(ConfigMaps, { namespace: ns })
        yield* cms.create({ metadata: { name: "counter" }, data: { n: "0" } })
        yield* Effect.forEach(
          Array.from({ length: 5 }),
          () => cms.update("counter", (cm) => ({ ...cm, data: { n: String(Number(cm.data?.["n"]) + 1) } })),
          { concurrency: "unbounded", discard: true }
        )
        const counter = Option.getOrThrow(yield* cms.get("counter"))
        assert.strictEqual(counter.data?.["n"], "5")
      }), 30_000)

    it.effect("deleteWithResult: the server's Status for a ConfigMap, the object while a finalizer holds it", () =>
      Effect.gen(function*() {
        const ns = yield* testNamespace("cm-delete")
        const cms = Kube.api(ConfigMaps, { namespace: ns })
        const created = yield* cms.create({ metadata: { name: "gone" } })
        const done = yield* cms.deleteWithResult("gone")
        assert.strictEqual(done._tag, "Status")
        if (done._tag === "Status") {
          assert.strictEqual(done.status.status, "Success")
          assert.strictEqual(done.status.details?.name, "gone")
          assert.strictEqual(done.status.details?.kind, "configmaps")
          assert.strictEqual(done.status.details?.uid, created.metadata?.uid)
        }
        yield* cms.create({ metadata: { name: "held", finalizers: ["e2e.effect-kube.dev/hold"] } })
        const held = yield* cms.deleteWithResult("held")
        assert.strictEqual(held._tag, "Object")
        if (held._tag === "Object") assert.isString(held.object.metadata?.deletionTimestamp)
        // a precondition on a uid that is not the object's: 409, and nothing deleted
        const wrongUid = yield* Effect.flip(cms.delete("held", { preconditions: { uid: "00000000-0000-0000-0000-000000000000" } }))
        assert.isTrue(ApiError.isConflict(wrongUid), wrongUid.message)
        assert.include(wrongUid.message, "the UID in the precondition (00000000-0000-0000-0000-000000000000) does not match the UID in record")
        yield* cms.patch("held", Patch.merge({ metadata: { finalizers: null } }))
        yield* cms.waitFor("held", Condition.deleted, { timeout: "10 seconds" })
        const missing = yield* Effect.flip(cms.deleteWithResult("held"))
        assert.isTrue(ApiError.isNotFound(missing), missing.message)
      }), 30_000)

    it.effect("a deprecated kind answers a Warning header, handed to the Warnings service", () =>
      Effect.gen(function*() {
        const ns = yield* testNamespace("warn")
        const warnings = yield* Effect.gen(function*() {
          const collected = yield* Warnings.Collected
          yield* Kube.api(EndpointsResource, { namespace: ns }).list()
          return yield* collected.warnings
        }).pipe(Effect.provide(Warnings.layerCollect))
        assert.isTrue(
          warnings.some((w) => w._tag === "HeaderWarning" && w.text.includes("v1 Endpoints is deprecated")),
          JSON.stringify(warnings)
        )
      }), 30_000)

    it.effect("a name taken is AlreadyExists; a bad name is refused before any request; an invalid object is 422", () =>
      Effect.gen(function*() {
        const ns = yield* testNamespace("cm-err")
        const cms = Kube.api(ConfigMaps, { namespace: ns })
        yield* cms.create({ metadata: { name: "taken" } })
        const taken = yield* Effect.flip(cms.create({ metadata: { name: "taken" } }))
        assert.isTrue(ApiError.isAlreadyExists(taken))
        assert.strictEqual((taken as ApiError).code, 409)
        assert.include(taken.message, `configmaps "taken" already exists`)

        // a name that would change the path is refused before any request
        const badName = yield* Effect.flip(cms.get("a/b"))
        assert.instanceOf(badName, ValidationError)

        // a data key the server refuses: 422 Invalid, with the field in its causes
        const invalid = yield* Effect.flip(cms.create({ metadata: { name: "bad-key" }, data: { "not valid!": "x" } }))
        assert.isTrue(ApiError.isInvalid(invalid))
        assert.strictEqual((invalid as ApiError).code, 422)
        const causes = (invalid as ApiError).status?.details?.causes ?? []
        assert.isTrue(causes.some((c) => c.field === "data[not valid!]"), JSON.stringify(causes))
      }), 120_000)
  })

  describe("Secrets", () => {
    it.effect("stringData is written as base64 data, and read back as data only", () =>
      Effect.gen(function*() {
        const ns = yield* testNamespace("secret")
        const secrets = Kube.api(Secrets, { namespace: ns })
        const created = yield* secrets.create({ metadata: { name: "creds" }, stringData: { password: "hunter2" } })
        assert.strictEqual(created.type, "Opaque")
        assert.deepStrictEqual(created.data, { password: Buffer.from("hunter2").toString("base64") })
        assert.isUndefined(created.stringData)
        const patched = yield* secrets.update("creds", (s) => ({ ...s, data: { ...s.data, user: Buffer.from("ann").toString("base64") } }))
        assert.deepStrictEqual(Object.keys(patched.data ?? {}).sort(), ["password", "user"])
        // an immutable Secret refuses a change of its data
        yield* secrets.create({ metadata: { name: "frozen" }, immutable: true, data: { k: "dg==" } })
        const frozen = yield* Effect.flip(secrets.update("frozen", (s) => ({ ...s, data: { k: "dw==" } })))
        assert.isTrue(ApiError.isInvalid(frozen), frozen.message)
        assert.include(frozen.message, "field is immutable when `immutable` is set")
      }), 120_000)
  })

  describe("Pods", () => {
    it.effect("a pod is defaulted by the server, scheduled and run; deleteAll counts what it matched", () =>
      Effect.gen(function*() {
        const ns = yield* testNamespace("pod")
        const pods = Kube.api(Pods, { namespace: ns })
        const created = yield* pods.create({
          metadata: { name: "web-1", labels: { app: "web" } },
          spec: { containers: [container], terminationGracePeriodSeconds: 0 }
        })
        // defaults the API server fills in
        assert.strictEqual(created.spec?.restartPolicy, "Always")
        assert.strictEqual(created.spec?.dnsPolicy, "ClusterFirst")
        assert.strictEqual(created.spec?.schedulerName, "default-scheduler")
        assert.strictEqual(created.spec?.containers[0]?.imagePullPolicy, "IfNotPresent")
        assert.strictEqual(created.spec?.containers[0]?.terminationMessagePath, "/dev/termination-log")
        assert.strictEqual(created.spec?.serviceAccountName, "default")
        assert.strictEqual(created.status?.phase, "Pending")
        assert.strictEqual(created.status?.qosClass, "BestEffort")
        yield* pods.create({ metadata: { name: "web-2", labels: { app: "web" } }, spec: { containers: [container], terminationGracePeriodSeconds: 0 } })
        yield* pods.create({ metadata: { name: "db", labels: { app: "db" } }, spec: { containers: [container], terminationGracePeriodSeconds: 0 } })

        const running = Option.getOrThrow(yield* pods.waitFor("web-1", Condition.podReady, { timeout: "60 seconds" }))
        assert.strictEqual(running.status?.phase, "Running")
        assert.isString(running.spec?.nodeName)
        assert.isString(running.status?.podIP)

        assert.strictEqual(yield* pods.deleteAll({ labelSelector: "app=web" }), 2)
        yield* pods.waitFor("web-1", Condition.deleted, { timeout: "60 seconds" })
        yield* pods.waitFor("web-2", Condition.deleted, { timeout: "60 seconds" })
        const left = yield* pods.list()
        assert.deepStrictEqual(left.items.map((p) => p.metadata?.name), ["db"])
        const none = yield* Effect.flip(pods.deleteAll({ labelSelector: "" }))
        assert.instanceOf(none, ValidationError)
      }), 120_000)

    it.effect("a pod without containers is refused with the server's causes", () =>
      Effect.gen(function*() {
        const ns = yield* testNamespace("pod-invalid")
        const pods = Kube.api(Pods, { namespace: ns })
        const refused = yield* Effect.flip(pods.create({ metadata: { name: "empty" }, spec: { containers: [] } }))
        assert.isTrue(ApiError.isInvalid(refused), refused.message)
        assert.include(refused.message, `Pod "empty" is invalid: spec.containers: Required value`)
      }), 120_000)
  })

  describe("Services", () => {
    it.effect("a ClusterIP is allocated and the ports defaulted", () =>
      Effect.gen(function*() {
        const ns = yield* testNamespace("svc")
        const services = Kube.api(Services, { namespace: ns })
        const created = yield* services.create({
          metadata: { name: "web" },
          spec: { selector: { app: "web" }, ports: [{ name: "http", port: 80 }] }
        })
        assert.strictEqual(created.spec?.type, "ClusterIP")
        assert.match(created.spec?.clusterIP ?? "", /^\d+\.\d+\.\d+\.\d+$/)
        assert.deepStrictEqual(created.spec?.clusterIPs, [created.spec?.clusterIP ?? ""])
        assert.strictEqual(created.spec?.ports?.[0]?.protocol, "TCP")
        assert.strictEqual(created.spec?.ports?.[0]?.targetPort, 80)
        assert.strictEqual(created.spec?.sessionAffinity, "None")
        // the clusterIP is immutable
        const moved = yield* Effect.flip(services.update("web", (s) => ({ ...s, spec: { ...s.spec, clusterIP: "10.0.0.99", clusterIPs: ["10.0.0.99"] } })))
        assert.isTrue(ApiError.isInvalid(moved), moved.message)
        assert.include(moved.message, "spec.clusterIP")
        const headless = yield* services.create({ metadata: { name: "headless" }, spec: { clusterIP: "None", selector: { app: "web" } } })
        assert.strictEqual(headless.spec?.clusterIP, "None")
        assert.isTrue(yield* services.delete("web"))
      }), 120_000)
  })

  describe("Jobs", () => {
    it.effect("a Job gets its selector and labels from the server and completes", () =>
      Effect.gen(function*() {
        const ns = yield* testNamespace("job")
        const jobs = Kube.api(Jobs, { namespace: ns })
        const created = yield* jobs.create({
          metadata: { name: "once", labels: { app: "batch" } },
          spec: {
            backoffLimit: 0,
            template: { spec: { restartPolicy: "Never", containers: [{ name: "c", image: "busybox:1.36", command: ["true"] }] } }
          }
        })
        const uid = created.metadata?.uid ?? ""
        assert.deepStrictEqual(created.spec?.selector?.matchLabels, { "batch.kubernetes.io/controller-uid": uid })
        assert.strictEqual(created.spec?.template.metadata?.labels?.["batch.kubernetes.io/job-name"], "once")
        assert.strictEqual(created.spec?.completions, 1)
        assert.strictEqual(created.spec?.parallelism, 1)
        assert.strictEqual(created.spec?.completionMode, "NonIndexed")
        const done = Option.getOrThrow(yield* jobs.waitFor("once", Condition.jobComplete, { timeout: "90 seconds" }))
        assert.strictEqual(done.status?.succeeded, 1)
        // its pod is the controller's, labelled with the job's name
        const pods = yield* Kube.api(Pods, { namespace: ns }).list({ labelSelector: "batch.kubernetes.io/job-name=once" })
        assert.strictEqual(pods.items.length, 1)
        assert.strictEqual(pods.items[0]?.metadata?.ownerReferences?.[0]?.uid, uid)
        assert.strictEqual(yield* jobs.deleteAll({ labelSelector: "app=batch", propagationPolicy: "Background" }), 1)
      }), 120_000)
  })

  describe("Deployments", () => {
    it.effect("a Deployment is defaulted and rolled out by the controllers", () =>
      Effect.gen(function*() {
        const ns = yield* testNamespace("deploy")
        const deployments = Kube.api(Deployments, { namespace: ns })
        const created = yield* deployments.create({
          metadata: { name: "web" },
          spec: {
            replicas: 2,
            selector: { matchLabels: { app: "web" } },
            template: { metadata: { labels: { app: "web" } }, spec: { containers: [container] } }
          }
        })
        assert.strictEqual(created.spec?.strategy?.type, "RollingUpdate")
        assert.strictEqual(created.spec?.strategy?.rollingUpdate?.maxSurge, "25%")
        assert.strictEqual(created.spec?.revisionHistoryLimit, 10)
        assert.strictEqual(created.spec?.progressDeadlineSeconds, 600)
        assert.strictEqual(created.metadata?.generation, 1)
        const ready = Option.getOrThrow(
          yield* deployments.waitFor("web", (d) => d?.status?.readyReplicas === 2, { timeout: "90 seconds" })
        )
        assert.strictEqual(ready.status?.observedGeneration, 1)
        assert.strictEqual(ready.metadata?.annotations?.["deployment.kubernetes.io/revision"], "1")
        const pods = yield* Kube.api(Pods, { namespace: ns }).list({ labelSelector: "app=web" })
        assert.strictEqual(pods.items.length, 2)
        assert.isTrue(pods.items.every((p) => p.metadata?.ownerReferences?.[0]?.kind === "ReplicaSet"))

        // rolloutRestart: the template's restartedAt annotation, and the controllers roll a new ReplicaSet out
        const restarted = yield* Kube.rolloutRestart(deployments, "web")
        assert.isString(restarted.spec?.template.metadata?.annotations?.["kubectl.kubernetes.io/restartedAt"])
        const rolled = Option.getOrThrow(
          yield* deployments.waitFor(
            "web",
            (d) =>
              d?.status?.observedGeneration === 2 && d.status.updatedReplicas === 2 && d.status.readyReplicas === 2 &&
              d.status.replicas === 2,
            { timeout: "90 seconds" }
          )
        )
        assert.strictEqual(rolled.metadata?.annotations?.["deployment.kubernetes.io/revision"], "2")
      }), 120_000)
  })

  describe("RBAC and cluster-scoped kinds", () => {
    it.effect("Role, RoleBinding and ClusterRole round-trip; a RoleBinding's roleRef cannot change", () =>
      Effect.gen(function*() {
        const ns = yield* testNamespace("rbac")
        const roles = Kube.api(Roles, { namespace: ns })
        const bindings = Kube.api(RoleBindings, { namespace: ns })
        const clusterRoles = Kube.api(ClusterRoles)
        const role = yield* roles.create({
          metadata: { name: "reader" },
          rules: [{ apiGroups: [""], resources: ["configmaps"], verbs: ["get", "list"] }]
        })
        assert.deepStrictEqual(role.rules?.[0]?.verbs, ["get", "list"])
        const binding = yield* bindings.create({
          metadata: { name: "reader" },
          roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "reader" },
          subjects: [{ kind: "ServiceAccount", name: "default", namespace: ns }]
        })
        assert.strictEqual(binding.subjects?.[0]?.name, "default")
        const moved = yield* Effect.flip(
          bindings.update("reader", (b) => ({ ...b, roleRef: { ...b.roleRef, name: "writer" } }))
        )
        assert.isTrue(ApiError.isInvalid(moved), moved.message)
        assert.include(moved.message, "cannot change roleRef")

        const label = uniqueName("run")
        const name = uniqueName("e2e-crud-reader")
        const clusterRole = yield* clusterRoles.create({
          metadata: { name, labels: { "effect-kube.dev/e2e-run": label } },
          rules: [{ nonResourceURLs: ["/healthz"], verbs: ["get"] }]
        })
        assert.isUndefined(clusterRole.metadata?.namespace)
        assert.strictEqual(Option.getOrThrow(yield* clusterRoles.get(name)).metadata?.uid, clusterRole.metadata?.uid)
        assert.strictEqual(yield* clusterRoles.deleteAll({ labelSelector: `effect-kube.dev/e2e-run=${label}` }), 1)
        assert.isTrue(Option.isNone(yield* clusterRoles.get(name)))
      }), 120_000)

    it.effect("a Namespace is cluster-scoped; its delete answers it Terminating", () =>
      Effect.gen(function*() {
        const name = uniqueName("e2e-crud-ns")
        const created = yield* namespaces.create({ metadata: { name, labels: { "effect-kube.dev/e2e": "true" } } })
        assert.strictEqual(created.status?.phase, "Active")
        assert.deepStrictEqual(created.spec?.finalizers, ["kubernetes"])
        // the server labels every namespace with its own name
        assert.strictEqual(created.metadata?.labels?.["kubernetes.io/metadata.name"], name)
        const listed = yield* namespaces.list({ labelSelector: `kubernetes.io/metadata.name=${name}` })
        assert.strictEqual(listed.items.length, 1)
        const result = yield* namespaces.deleteWithResult(name)
        assert.strictEqual(result._tag, "Object")
        if (result._tag === "Object") {
          assert.strictEqual(result.object.status?.phase, "Terminating")
          assert.isString(result.object.metadata?.deletionTimestamp)
        }
        // a namespace terminating takes no new objects
        const refused = yield* Effect.flip(Kube.api(ConfigMaps, { namespace: name }).create({ metadata: { name: "late" } }))
        assert.isTrue(ApiError.isForbidden(refused), refused.message)
        assert.include(refused.message, "because it is being terminated")
      }), 120_000)
  })

  describe("lists", () => {
    it.effect("limit and continue page through a list; listStream pulls every page", () =>
      Effect.gen(function*() {
        const ns = yield* testNamespace("pages")
        const cms = Kube.api(ConfigMaps, { namespace: ns })
        yield* Effect.forEach(
          Array.from({ length: 7 }, (_, i) => `cm-${i}`),
          (name) => cms.create({ metadata: { name, labels: { page: "yes" } } }),
          { concurrency: 4 }
        )
        const first = yield* cms.list({ labelSelector: "page=yes", limit: 3 })
        assert.strictEqual(first.items.length, 3)
        assert.isString(first.metadata.continue)
        // with a label selector the server cannot count what is left
        assert.isUndefined(first.metadata.remainingItemCount)
        const second = yield* cms.list({ labelSelector: "page=yes", limit: 3, continue: first.metadata.continue })
        assert.strictEqual(second.items.length, 3)
        // every page is read at the first page's resourceVersion
        assert.strictEqual(second.metadata.resourceVersion, first.metadata.resourceVersion)
        const third = yield* cms.list({ labelSelector: "page=yes", limit: 3, continue: second.metadata.continue })
        assert.strictEqual(third.items.length, 1)
        assert.isUndefined(third.metadata.continue)
        const names = [...first.items, ...second.items, ...third.items].map((c) => c.metadata?.name)
        assert.deepStrictEqual(names, ["cm-0", "cm-1", "cm-2", "cm-3", "cm-4", "cm-5", "cm-6"])

        const streamed = yield* cms.listStream({ labelSelector: "page=yes", pageSize: 2 }).pipe(Stream.runCollect)
        assert.deepStrictEqual(Array.from(streamed, (c) => c.metadata?.name), names)
        // without a selector it counts what the next pages hold (Secrets: the namespace has none of its own)
        const secrets = Kube.api(Secrets, { namespace: ns })
        yield* Effect.forEach(["s-0", "s-1", "s-2", "s-3"], (name) => secrets.create({ metadata: { name } }))
        const counted = yield* secrets.list({ limit: 3 })
        assert.strictEqual(counted.metadata.remainingItemCount, 1)
        // a continue token that does not decode is refused by the server
        const bad = yield* Effect.flip(cms.list({ limit: 3, continue: "not-a-token" }))
        assert.isTrue(ApiError.is(bad) && bad.code === 400, bad.message)
      }), 120_000)

    it.effect("a list over 128 KiB (which kube-apiserver gzips) and across namespaces", () =>
      Effect.gen(function*() {
        const ns = yield* testNamespace("big")
        const cms = Kube.api(ConfigMaps, { namespace: ns })
        const filler = "x".repeat(5_000)
        yield* Effect.forEach(
          Array.from({ length: 40 }, (_, i) => `big-${String(i).padStart(2, "0")}`),
          (name) => cms.create({ metadata: { name, labels: { big: ns } }, data: { filler } }),
          { concurrency: 8, discard: true }
        )
        const listed = yield* cms.list({ labelSelector: `big=${ns}` })
        assert.strictEqual(listed.items.length, 40)
        assert.isTrue(listed.items.every((c) => c.data?.["filler"] === filler))
        const everywhere = yield* cms.list({ labelSelector: `big=${ns}`, allNamespaces: true })
        assert.strictEqual(everywhere.items.length, 40)
        const streamed = yield* cms.listStream({ labelSelector: `big=${ns}`, allNamespaces: true, pageSize: 15 }).pipe(
          Stream.runCollect
        )
        assert.strictEqual(streamed.length, 40)
      }), 60_000)

    // The 410 of an expired continue token is in watch.test.ts's restart test: it needs etcd compacted and the
    // apiserver restarted (kube-apiserver 1.35 continues lists from its watch cache's snapshots), which only the
    // run's own cluster allows.
  })
})

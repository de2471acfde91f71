import { assert, describe, expect, it } from "@effect/vitest"
import * as HttpClient from "effect/http/HttpClient"
import { Effect, Exit, Layer, Option, Redacted, Schema } from "effect"
import { ApiError, ValidationError } from "../packages/effect-kube/src/Errors.js"
import * as Kube from "../packages/effect-kube/src/Kube.js"
import * as KubeConfig from "../packages/effect-kube/src/KubeConfig.js"
import * as Patch from "../packages/effect-kube/src/Patch.js"
import * as Resource from "../packages/effect-kube/src/Resource.js"
import { ConfigMaps, Deployments, Jobs, Namespaces, type Pod, Pods, type Secret, Secrets, Services } from "../packages/effect-kube/src/resources/index.js"
import { FakeCluster } from "@effect-kube/testing"
import { failureOf } from "./util/failure.js"

const pod = (name: string, labels: Record<string, string> = { app: "smoke" }): Pod => ({
  metadata: { name, labels },
  spec: { containers: [{ name: "main", image: "busybox:1.36", command: ["sh", "-c", "echo hi"] }] }
})

const pods = Kube.api(Pods)
const fake = FakeCluster.FakeCluster

describe("Kube.api against the fake cluster", () => {
  // the API server alone: no scheduler nor kubelet take the pods (deleted pods go at once)
  it.layer(FakeCluster.layer({ controllers: false }))((it) => {
    it.effect("creates, gets, lists by selector and deletes all by selector", () =>
      Effect.gen(function*() {
        const created = yield* pods.create(pod("a"))
        assert.strictEqual(created.metadata?.name, "a")
        assert.strictEqual(created.metadata?.namespace, "default")
        assert.isString(created.metadata?.uid)
        assert.isString(created.metadata?.resourceVersion)
        assert.strictEqual(created.kind, "Pod")
        yield* pods.create(pod("b"))
        yield* pods.create(pod("other", { app: "other" }))

        const found = yield* pods.get("a")
        assert.isTrue(Option.isSome(found))
        assert.deepStrictEqual(Option.getOrThrow(found).spec, created.spec)
        assert.isTrue(Option.isNone(yield* pods.get("missing")))

        const listed = yield* pods.list({ labelSelector: "app=smoke" })
        assert.deepStrictEqual(listed.items.map((p) => p.metadata?.name).sort(), ["a", "b"])
        assert.isString(listed.metadata.resourceVersion)
        assert.strictEqual(listed.items[0]?.kind, "Pod")
        const notIn = yield* pods.list({ labelSelector: "app notin (smoke)" })
        assert.deepStrictEqual(notIn.items.map((p) => p.metadata?.name), ["other"])

        assert.strictEqual(yield* pods.deleteAll({ labelSelector: "app=smoke" }), 2)
        assert.deepStrictEqual((yield* pods.list()).items.map((p) => p.metadata?.name), ["other"])
        assert.strictEqual(yield* pods.deleteAll({ labelSelector: "app=smoke" }), 0)
        assert.isTrue(yield* pods.delete("other"))
        assert.isFalse(yield* pods.delete("other"))
      }))

    it.effect("fails create of a taken name with AlreadyExists and the exact message", () =>
      Effect.gen(function*() {
        yield* pods.create(pod("dup"))
        const error = yield* failureOf(pods.create(pod("dup")))
        assert.instanceOf(error, ApiError)
        assert.isTrue(ApiError.isAlreadyExists(error))
        assert.strictEqual(
          error.message,
          "k8s: POST /api/v1/namespaces/default/pods: 409 AlreadyExists: pods \"dup\" already exists"
        )
        assert.strictEqual(error.status?.code, 409)
      }))

    it.effect("replace with a stale resourceVersion fails with Conflict", () =>
      Effect.gen(function*() {
        const cms = Kube.api(ConfigMaps)
        const first = yield* cms.create({ metadata: { name: "cfg" }, data: { a: "1" } })
        const updated = yield* cms.replace("cfg", { ...first, data: { a: "2" } })
        assert.strictEqual(updated.data?.["a"], "2")
        assert.notStrictEqual(updated.metadata?.resourceVersion, first.metadata?.resourceVersion)
        const error = yield* failureOf(cms.replace("cfg", { ...first, data: { a: "3" } }))
        assert.instanceOf(error, ApiError)
        assert.isTrue(ApiError.isConflict(error))
        assert.include(error.message, "k8s: PUT /api/v1/namespaces/default/configmaps/cfg: 409 Conflict: ")
        assert.include(error.message, "the object has been modified")
      }))

    it.effect("patches with merge, JSON, strategic and apply patches", () =>
      Effect.gen(function*() {
        const deployments = Kube.api(Deployments)
        yield* deployments.create({
          metadata: { name: "web" },
          spec: {
            replicas: 1,
            selector: { matchLabels: { app: "web" } },
            template: {
              metadata: { labels: { app: "web" } },
              spec: { containers: [{ name: "web", image: "nginx:1" }, { name: "side", image: "busybox" }] }
            }
          }
        })
        const merged = yield* deployments.patch("web", Patch.merge({ spec: { replicas: 2 } }))
        assert.strictEqual(merged.spec?.replicas, 2)
        const jsonPatched = yield* deployments.patch(
          "web",
          Patch.json([{ op: "replace", path: "/spec/replicas", value: 3 }])
        )
        assert.strictEqual(jsonPatched.spec?.replicas, 3)
        const strategic = yield* deployments.patch(
          "web",
          Patch.strategic({ spec: { template: { spec: { containers: [{ name: "web", image: "nginx:2" }] } } } })
        )
        assert.deepStrictEqual(
          strategic.spec?.template?.spec?.containers.map((c) => `${c.name}=${c.image}`),
          ["web=nginx:2", "side=busybox"]
        )
        const applied = yield* deployments.patch(
          "web",
          Patch.apply(
            { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "web" }, spec: { replicas: 5 } },
            { fieldManager: "tester", force: true }
          )
        )
        assert.strictEqual(applied.spec?.replicas, 5)
        assert.isTrue(applied.metadata?.managedFields?.some((f) => f["manager"] === "tester") ?? false)
        const failedTest = yield* failureOf(
          deployments.patch("web", Patch.json([{ op: "test", path: "/spec/replicas", value: 99 }]))
        )
        assert.instanceOf(failedTest, ApiError)
      }))

    it.effect("server-side applies a whole object, creating then updating it", () =>
      Effect.gen(function*() {
        const services = Kube.api(Services)
        const svc = {
          apiVersion: "v1",
          kind: "Service",
          metadata: { name: "api" },
          spec: { selector: { app: "api" }, ports: [{ port: 80, targetPort: 8080 }] }
        } as const
        const created = yield* services.apply(svc, { fieldManager: "effect-kube-test" })
        assert.strictEqual(created.metadata?.name, "api")
        const updated = yield* services.apply(
          { ...svc, spec: { ...svc.spec, ports: [{ port: 81, targetPort: "http" }] } },
          { fieldManager: "effect-kube-test" }
        )
        assert.strictEqual(updated.spec?.ports?.[0]?.port, 81)
        assert.strictEqual(updated.metadata?.uid, created.metadata?.uid)
      }))

    it.effect("dry-run create persists nothing", () =>
      Effect.gen(function*() {
        const control = yield* fake
        const created = yield* pods.create(pod("dry"), { dryRun: true })
        assert.strictEqual(created.metadata?.name, "dry")
        assert.isTrue(Option.isNone(yield* pods.get("dry")))
        assert.isUndefined(control.get({ apiVersion: "v1", kind: "Pod", name: "dry" }))
      }))

    it.effect("delete honours a uid precondition", () =>
      Effect.gen(function*() {
        yield* pods.create(pod("pre"))
        const error = yield* failureOf(pods.delete("pre", { preconditions: { uid: "not-the-uid" } }))
        assert.instanceOf(error, ApiError)
        assert.strictEqual(error.code, 409)
        assert.isTrue(Option.isSome(yield* pods.get("pre")))
        const live = Option.getOrThrow(yield* pods.get("pre"))
        assert.isTrue(yield* pods.delete("pre", { preconditions: { uid: live.metadata?.uid }, propagationPolicy: "Foreground" }))
      }))

    it.effect("lists across all namespaces and pages with limit/continue", () =>
      Effect.gen(function*() {
        const control = yield* fake
        control.seed([{ apiVersion: "v1", kind: "Namespace", metadata: { name: "other" } }])
        yield* Kube.api(ConfigMaps, { namespace: "other" }).create({ metadata: { name: "x", labels: { page: "y" } } })
        for (const name of ["p1", "p2", "p3"]) {
          yield* Kube.api(ConfigMaps).create({ metadata: { name, labels: { page: "y" } } })
        }
        const all = yield* Kube.api(ConfigMaps).list({ allNamespaces: true, labelSelector: "page=y" })
        assert.deepStrictEqual(all.items.map((c) => `${c.metadata?.namespace}/${c.metadata?.name}`).sort(), [
          "default/p1",
          "default/p2",
          "default/p3",
          "other/x"
        ])
        const first = yield* Kube.api(ConfigMaps).list({ labelSelector: "page=y", limit: 2 })
        assert.strictEqual(first.items.length, 2)
        assert.isString(first.metadata.continue)
        const second = yield* Kube.api(ConfigMaps).list({ labelSelector: "page=y", limit: 2, continue: first.metadata.continue })
        assert.strictEqual(second.items.length, 1)
        assert.isUndefined(second.metadata.continue)
      }))

    it.effect("cluster-scoped kinds take no namespace", () =>
      Effect.gen(function*() {
        const namespaces = Kube.api(Namespaces)
        const created = yield* namespaces.create({ metadata: { name: "team-a" } })
        assert.isUndefined(created.metadata?.namespace)
        assert.isTrue(Option.isSome(yield* namespaces.get("team-a")))
        const error = yield* failureOf(Kube.api(Namespaces, { namespace: "default" }).get("team-a"))
        assert.instanceOf(error, ValidationError)
        assert.include(error.message, "cluster-scoped")
      }))
  })
})

describe("round trip of fields the Schema does not name", () => {
  it.layer(FakeCluster.layer())((it) => {
    it.effect("get then replace keeps every field the server sent", () =>
      Effect.gen(function*() {
        const control = yield* fake
        // a server that knows more than the client's Schema: a custom resource whose CRD keeps unknown fields
        // (a built-in kind's fields the fake's own schema does not know are pruned, as kube-apiserver prunes them)
        control.seed([{
          apiVersion: "apiextensions.k8s.io/v1",
          kind: "CustomResourceDefinition",
          metadata: { name: "gadgets.example.com" },
          spec: {
            group: "example.com",
            scope: "Namespaced",
            names: { plural: "gadgets", singular: "gadget", kind: "Gadget", listKind: "GadgetList" },
            versions: [{
              name: "v1",
              served: true,
              storage: true,
              schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } }
            }]
          }
        }])
        const Gadgets = Resource.make({
          apiVersion: "example.com/v1",
          kind: "Gadget",
          plural: "gadgets",
          namespaced: true,
          schema: Schema.Struct({
            apiVersion: Schema.optional(Schema.String),
            kind: Schema.optional(Schema.String),
            metadata: Schema.Struct({ name: Schema.String, namespace: Schema.optional(Schema.String) }),
            spec: Schema.Struct({ size: Schema.Number })
          })
        })
        const gadgets = Kube.api(Gadgets, { namespace: "default" })
        control.seed([{
          apiVersion: "example.com/v1",
          kind: "Gadget",
          metadata: { name: "future", namespace: "default", annotations: { a: "b" } },
          spec: { size: 1, futureSpecField: "kept", items: [{ name: "c", futureItemField: { deep: [1, 2] } }] },
          futureTopLevel: { x: true }
        }])
        const got = Option.getOrThrow(yield* gadgets.get("future"))
        const replaced = yield* gadgets.replace("future", got)
        const stored = control.get({ apiVersion: "example.com/v1", kind: "Gadget", name: "future" }) as Record<string, any>
        assert.deepStrictEqual(stored["futureTopLevel"], { x: true })
        assert.strictEqual(stored["spec"]["futureSpecField"], "kept")
        assert.deepStrictEqual(stored["spec"]["items"][0]["futureItemField"], { deep: [1, 2] })
        assert.strictEqual(stored["metadata"]["annotations"]["a"], "b")
        assert.deepStrictEqual((replaced as Record<string, any>)["futureTopLevel"], { x: true })
      }))

    it.effect("a raw-JSON resource serves any kind", () =>
      Effect.gen(function*() {
        const raw = Kube.api(Resource.make({ apiVersion: "v1", kind: "ConfigMap", plural: "configmaps", namespaced: true, schema: Schema.Unknown }))
        const created = yield* raw.create({ metadata: { name: "raw" }, data: { k: "v" }, extra: 1 })
        assert.deepStrictEqual((created as { data: unknown }).data, { k: "v" })
        const listed = yield* raw.list()
        assert.isTrue(listed.items.some((o) => (o as { metadata: { name: string } }).metadata.name === "raw"))
      }))
  })
})

describe("input is checked before any request", () => {
  it.layer(FakeCluster.layer())((it) => {
    const badNames = ["", "a/b", "50%", ".", "..", "x".repeat(254), "has space"]
    it.effect("bad names, namespaces and selectors fail with ValidationError and send nothing", () =>
      Effect.gen(function*() {
        const control = yield* fake
        control.reset()
        for (const name of badNames) {
          const errors = [
            yield* failureOf(pods.get(name)),
            yield* failureOf(pods.delete(name)),
            yield* failureOf(pods.create(pod(name))),
            yield* failureOf(pods.replace(name, pod(name))),
            yield* failureOf(pods.patch(name, Patch.merge({})))
          ]
          for (const error of errors) assert.instanceOf(error, ValidationError, `name ${JSON.stringify(name)}`)
        }
        for (const namespace of ["", "Upper", "a/b", "x".repeat(64), ".."]) {
          const error = yield* failureOf(Kube.api(Pods, { namespace }).list())
          assert.instanceOf(error, ValidationError)
          assert.include(error.message, "namespace")
        }
        for (const selector of [{}, { labelSelector: "" }, { labelSelector: "  ", fieldSelector: "" }]) {
          // blank selectors get through the type (and `{}` with a cast): the runtime check refuses them
          const error = yield* failureOf(pods.deleteAll(selector as Kube.DeleteAllOptions))
          assert.instanceOf(error, ValidationError)
          assert.include(error.message, "non-empty")
        }
        const wrongNamespace = yield* failureOf(pods.create({ ...pod("w"), metadata: { name: "w", namespace: "elsewhere" } }))
        assert.instanceOf(wrongNamespace, ValidationError)
        const wrongKind = yield* failureOf(pods.create({ ...pod("k"), kind: "Service" } as unknown as Pod))
        assert.instanceOf(wrongKind, ValidationError)
        const notAPod = yield* failureOf(pods.create({ metadata: { name: "n" }, spec: { containers: "nope" } } as unknown as Pod))
        assert.instanceOf(notAPod, ValidationError)
        assert.include(notAPod.message, ".spec.containers")
        assert.notInclude(notAPod.message, "nope")
        const mismatch = yield* failureOf(pods.replace("one", pod("two")))
        assert.instanceOf(mismatch, ValidationError)
        const noManager = yield* failureOf(pods.patch("x", Patch.apply({}, { fieldManager: "" })))
        assert.instanceOf(noManager, ValidationError)
        const badLimit = yield* failureOf(pods.list({ limit: -1 }))
        assert.instanceOf(badLimit, ValidationError)
        assert.strictEqual(control.requests().length, 0)
      }))
  })
})

describe("credentials", () => {
  it.effect("a 401 makes the auth provider refresh and the request goes once more", () =>
    Effect.gen(function*() {
      const server = FakeCluster.makeServer({ token: "second" })
      let issued = 0
      const auth: KubeConfig.AuthProvider = {
        kind: "exec",
        credentials: Effect.sync(() => ({ token: Redacted.make(issued === 0 ? "first" : "second") })),
        invalidate: Effect.sync(() => {
          issued++
          return true
        })
      }
      const layer = Layer.merge(
        KubeConfig.layerFrom({ server: "http://fake-cluster.local", auth }),
        Layer.succeed(HttpClient.HttpClient, FakeCluster.httpClient(server))
      )
      const got = yield* pods.get("none").pipe(Effect.provide(layer))
      assert.isTrue(Option.isNone(got))
      assert.strictEqual(issued, 1)
      const statuses = server.control.requests().map((r) => r.path)
      assert.strictEqual(statuses.length, 2)
      server.close()
    }))

  it.effect("a rejected token is an Unauthorized ApiError that does not contain the token", () =>
    Effect.gen(function*() {
      const server = FakeCluster.makeServer({ token: "right-token" })
      const layer = Layer.merge(
        KubeConfig.layerFrom({ server: "http://fake-cluster.local", token: "s3cr3t-wrong-token" }),
        Layer.succeed(HttpClient.HttpClient, FakeCluster.httpClient(server))
      )
      const error = yield* failureOf(pods.list().pipe(Effect.provide(layer)))
      assert.instanceOf(error, ApiError)
      assert.isTrue(ApiError.isUnauthorized(error))
      for (const text of [error.message, String(error), JSON.stringify(error)]) {
        expect(text).not.toContain("s3cr3t-wrong-token")
      }
      server.close()
    }))
})

describe("Secrets", () => {
  it.layer(FakeCluster.layer())((it) => {
    it.effect("a Secret that fails its Schema is named by path, never by value", () =>
      Effect.gen(function*() {
        const error = yield* failureOf(
          Kube.api(Secrets).create({ metadata: { name: "s" }, data: { password: 424242 } } as unknown as Secret)
        )
        assert.instanceOf(error, ValidationError)
        assert.include(error.message, ".data.password")
        for (const text of [error.message, String(error), JSON.stringify(error)]) {
          expect(text).not.toContain("424242")
        }
      }))

    it.effect("Secret data never appears in a validation error", () =>
      Effect.gen(function*() {
        const secrets = Kube.api(Secrets)
        const error = yield* failureOf(
          secrets.create({ metadata: { name: "s", namespace: "elsewhere" }, data: { password: "aHVudGVyMg==" } })
        )
        assert.instanceOf(error, ValidationError)
        for (const text of [error.message, String(error), JSON.stringify(error)]) {
          expect(text).not.toContain("aHVudGVyMg==")
        }
      }))
  })
})

describe("server-side apply through patch", () => {
  it.effect("patch(name, Patch.apply(body), { fieldManager }) sends the options' field manager", () =>
    Effect.gen(function*() {
      const cluster = yield* fake
      const cms = Kube.api(ConfigMaps)
      const body = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "cfg" }, data: { a: "1" } }
      const applied = yield* cms.patch("cfg", Patch.apply(body), { fieldManager: "from-options" })
      assert.strictEqual(applied.data?.["a"], "1")
      const patches = () => cluster.requests().filter((r) => r.method === "PATCH")
      assert.strictEqual(patches()[0]?.query["fieldManager"], "from-options")
      assert.strictEqual(patches()[0]?.contentType, "application/apply-patch+yaml")
      assert.deepStrictEqual(applied.metadata?.managedFields?.map((f) => f.manager), ["from-options"])

      // the patch's own manager is used when the options give none, and force goes along
      yield* cms.patch("cfg", Patch.apply(body, { fieldManager: "from-patch", force: true }))
      assert.deepStrictEqual(patches()[1]?.query, { fieldManager: "from-patch", force: "true" })
      // the same manager in both places is fine
      yield* cms.patch("cfg", Patch.apply(body, { fieldManager: "same" }), { fieldManager: "same" })
      assert.strictEqual(patches()[2]?.query["fieldManager"], "same")

      // two different managers, or none, fail before any request
      const before = cluster.requests().length
      const twoManagers = yield* failureOf(cms.patch("cfg", Patch.apply(body, { fieldManager: "a" }), { fieldManager: "b" }))
      assert.instanceOf(twoManagers, ValidationError)
      assert.include(twoManagers.message, "fieldManager")
      const noManager = yield* failureOf(cms.patch("cfg", Patch.apply(body)))
      assert.instanceOf(noManager, ValidationError)
      assert.strictEqual(cluster.requests().length, before)

      // a merge patch sends the options' field manager too
      yield* cms.patch("cfg", Patch.merge({ data: { b: "2" } }), { fieldManager: "merger" })
      assert.strictEqual(patches().at(-1)?.query["fieldManager"], "merger")
    }).pipe(Effect.provide(FakeCluster.layer())))
})

describe("types promise only what the code keeps (compile-time checks)", () => {
  it("logs only where the kind serves \"log\"; deleteAll needs a selector", () => {
    // Never run: the typecheck (tsconfig.test.json covers test/) fails if an expected error is missing.
    const typeOnly = () => {
      const jobs = Kube.api(Jobs)
      // @ts-expect-error Jobs serve no log subresource
      jobs.logs("nightly")
      // @ts-expect-error Jobs serve no log subresource
      jobs.logStream("nightly")
      Kube.api(Pods).logs("web")
      Kube.api(Pods).logStream("web")
      // @ts-expect-error a selector is required
      pods.deleteAll({})
      // @ts-expect-error a selector is required, whatever else is given
      pods.deleteAll({ dryRun: true, propagationPolicy: "Background" })
      pods.deleteAll({ labelSelector: "app=a" })
      pods.deleteAll({ fieldSelector: "metadata.name=a", dryRun: true })
      // an api with logs is still an api
      const plain: Kube.Api<Pod> = Kube.api(Pods)
      return plain
    }
    assert.isFunction(typeOnly)
  })
})

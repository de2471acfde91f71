/**
 * The subresource operations of `Kube.Api` over the real request path (FakeCluster's
 * layer answering real HTTP requests): status, scale, eviction, ephemeral containers,
 * resize, service account tokens, and deleteWithResult.
 */
import { assert, describe, it } from "@effect/vitest"
import { Clock, Effect, Exit, Option, Redacted, Schema } from "effect"
import { ApiError, ValidationError } from "../packages/effect-kube/src/Errors.js"
import * as Kube from "../packages/effect-kube/src/Kube.js"
import * as Patch from "../packages/effect-kube/src/Patch.js"
import * as Resource from "../packages/effect-kube/src/Resource.js"
import {
  ConfigMaps,
  type Deployment,
  type DeploymentApply,
  Deployments,
  Jobs,
  type Pod,
  Pods,
  ReplicaSets,
  ReplicationControllers,
  ServiceAccounts,
  StatefulSets
} from "../packages/effect-kube/src/resources/index.js"
import { FakeCluster } from "@effect-kube/testing"
import { failureOf } from "./util/failure.js"

const deployment = (name: string, replicas = 1): Deployment => ({
  metadata: { name },
  spec: {
    replicas,
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: "c", image: "nginx" }] } }
  }
})

const pod = (name: string, labels: Record<string, string> = { app: "web" }): Pod => ({
  metadata: { name, labels },
  spec: { containers: [{ name: "main", image: "busybox:1.36" }] }
})

const deployments = Kube.api(Deployments)
const pods = Kube.api(Pods)
const fake = FakeCluster.FakeCluster

describe("status subresource", () => {
  // the test writes the status the deployment controller would
  it.layer(FakeCluster.layer({ controllers: { deployment: false } }))((it) => {
    it.effect("replaceStatus, patchStatus and applyStatus change only .status and answer the whole object", () =>
      Effect.gen(function*() {
        const created = yield* deployments.create(deployment("web"))
        // a Deployment's status is a struct: the API server answers a new one with `status: {}`
        assert.deepStrictEqual(created.status, {})

        // replaceStatus: the spec sent along is ignored
        const changedSpec = { ...created, spec: { ...created.spec!, replicas: 9 }, status: { replicas: 1 } }
        const replaced = yield* deployments.replaceStatus("web", changedSpec)
        assert.strictEqual(replaced.status?.replicas, 1)
        assert.strictEqual(replaced.spec?.replicas, 1)
        assert.strictEqual(replaced.metadata?.generation, created.metadata?.generation)

        // patchStatus with each patch kind
        const merged = yield* deployments.patchStatus(
          "web",
          Patch.merge({ status: { readyReplicas: 1 }, spec: { replicas: 5 } })
        )
        assert.strictEqual(merged.status?.readyReplicas, 1)
        assert.strictEqual(merged.spec?.replicas, 1)
        const jsonPatched = yield* deployments.patchStatus(
          "web",
          Patch.json([{ op: "replace", path: "/status/readyReplicas", value: 0 }])
        )
        assert.strictEqual(jsonPatched.status?.readyReplicas, 0)
        const strategic = yield* deployments.patchStatus("web", Patch.strategic({ status: { availableReplicas: 1 } }))
        assert.strictEqual(strategic.status?.availableReplicas, 1)

        // applyStatus: server-side apply of .status only
        const applied = yield* deployments.applyStatus(
          {
            apiVersion: "apps/v1",
            kind: "Deployment",
            metadata: { name: "web" },
            spec: { ...created.spec!, replicas: 7 },
            status: { observedGeneration: 1, replicas: 1 }
          },
          { fieldManager: "status-test" }
        )
        assert.strictEqual(applied.status?.observedGeneration, 1)
        assert.strictEqual(applied.spec?.replicas, 1)

        const read = Option.getOrThrow(yield* deployments.getStatus("web"))
        assert.deepStrictEqual(read.status, applied.status)

        // the main resource ignores .status
        const main = yield* deployments.patch("web", Patch.merge({ status: { replicas: 42 } }))
        assert.strictEqual(main.status?.replicas, 1)

        const control = yield* fake
        const statusRequests = control.requests().filter((r) => r.path.endsWith("/web/status"))
        assert.deepStrictEqual(statusRequests.map((r) => r.method), ["PUT", "PATCH", "PATCH", "PATCH", "PATCH", "GET"])
        assert.strictEqual(statusRequests[4]?.query.fieldManager, "status-test")
        assert.strictEqual(statusRequests[4]?.contentType, "application/apply-patch+yaml")
      }))

    it.effect("a manager applying the status keeps its ownership of the spec", () =>
      Effect.gen(function*() {
        const config: DeploymentApply = {
          apiVersion: "apps/v1",
          kind: "Deployment",
          metadata: { name: "owned" },
          spec: deployment("owned").spec
        }
        yield* deployments.apply(config, { fieldManager: "op" })
        const status = yield* deployments.applyStatus({ ...config, status: { replicas: 1 } }, { fieldManager: "op" })
        const owned = status.metadata?.managedFields?.filter((e) => e.manager === "op") ?? []
        const fields = JSON.stringify(owned.map((e) => e.fieldsV1))
        assert.include(fields, "f:replicas")
        assert.include(fields, "f:template")
        const again = yield* deployments.apply(config, { fieldManager: "op" })
        assert.strictEqual(again.status?.replicas, 1)
        assert.strictEqual(again.spec?.replicas, 1)
      }))

    it.effect("a stale resourceVersion is a Conflict; a missing object is None to getStatus, NotFound to writes", () =>
      Effect.gen(function*() {
        const created = yield* deployments.create(deployment("stale"))
        yield* deployments.patchStatus("stale", Patch.merge({ status: { replicas: 1 } }))
        const conflict = yield* failureOf(deployments.replaceStatus("stale", { ...created, status: { replicas: 2 } }))
        assert.isTrue(ApiError.isConflict(conflict))
        assert.isTrue(Option.isNone(yield* deployments.getStatus("nope")))
        const missingReplace = yield* failureOf(deployments.replaceStatus("nope", deployment("nope")))
        assert.isTrue(ApiError.isNotFound(missingReplace))
        const otherName = yield* failureOf(deployments.replaceStatus("stale", deployment("other")))
        assert.instanceOf(otherName, ValidationError)
        assert.include(otherName.message, "metadata.name is \"other\" but the name given is \"stale\"")
        const missingPatch = yield* failureOf(deployments.patchStatus("nope", Patch.merge({ status: {} })))
        assert.isTrue(ApiError.isNotFound(missingPatch))
        const noManager = yield* failureOf(
          deployments.patchStatus("stale", Patch.apply({ apiVersion: "apps/v1", kind: "Deployment" }))
        )
        assert.instanceOf(noManager, ValidationError)
        const badName = yield* failureOf(deployments.getStatus("Not A Name"))
        assert.instanceOf(badName, ValidationError)
      }))
  })
})

describe("scale subresource", () => {
  it.layer(FakeCluster.layer())((it) => {
    it.effect("getScale, replaceScale and patchScale change spec.replicas only", () =>
      Effect.gen(function*() {
        yield* deployments.create(deployment("web", 2))
        const scale = Option.getOrThrow(yield* deployments.getScale("web"))
        assert.strictEqual(scale.kind, "Scale")
        assert.strictEqual(scale.apiVersion, "autoscaling/v1")
        assert.strictEqual(scale.spec?.replicas, 2)
        assert.strictEqual(scale.status?.selector, "app=web")

        const replaced = yield* deployments.replaceScale("web", { spec: { replicas: 3 } })
        assert.strictEqual(replaced.spec?.replicas, 3)
        const patched = yield* deployments.patchScale("web", Patch.merge({ spec: { replicas: 4 } }))
        assert.strictEqual(patched.spec?.replicas, 4)
        const jsonPatched = yield* deployments.patchScale(
          "web",
          Patch.json([{ op: "replace", path: "/spec/replicas", value: 5 }])
        )
        assert.strictEqual(jsonPatched.spec?.replicas, 5)
        const after = Option.getOrThrow(yield* deployments.get("web"))
        assert.strictEqual(after.spec?.replicas, 5)
        assert.strictEqual(after.spec?.template.spec?.containers[0]?.image, "nginx")
      }))

    it.effect("a stale Scale resourceVersion is a Conflict; a missing object None or NotFound; a bad name never leaves", () =>
      Effect.gen(function*() {
        const created = yield* deployments.create(deployment("rv"))
        const stale = Option.getOrThrow(yield* deployments.getScale("rv"))
        yield* deployments.patchScale("rv", Patch.merge({ spec: { replicas: 2 } }))
        const conflict = yield* failureOf(deployments.replaceScale("rv", { ...stale, spec: { replicas: 3 } }))
        assert.isTrue(ApiError.isConflict(conflict))
        assert.isDefined(created)
        assert.isTrue(Option.isNone(yield* deployments.getScale("none")))
        const missing = yield* failureOf(deployments.replaceScale("none", { spec: { replicas: 1 } }))
        assert.isTrue(ApiError.isNotFound(missing))
        const mismatch = yield* failureOf(deployments.replaceScale("rv", { metadata: { name: "other" } }))
        assert.instanceOf(mismatch, ValidationError)
      }))

    it.effect("StatefulSets, ReplicaSets and ReplicationControllers scale too", () =>
      Effect.gen(function*() {
        const template = { metadata: { labels: { app: "s" } }, spec: { containers: [{ name: "c", image: "nginx" }] } }
        yield* Kube.api(StatefulSets).create({
          metadata: { name: "s" },
          spec: { selector: { matchLabels: { app: "s" } }, serviceName: "s", template }
        })
        yield* Kube.api(ReplicaSets).create({
          metadata: { name: "s" },
          spec: { selector: { matchLabels: { app: "s" } }, template }
        })
        yield* Kube.api(ReplicationControllers).create({
          metadata: { name: "s" },
          spec: { selector: { app: "s" }, template }
        })
        for (
          const scaled of [
            yield* Kube.api(StatefulSets).patchScale("s", Patch.merge({ spec: { replicas: 3 } })),
            yield* Kube.api(ReplicaSets).patchScale("s", Patch.merge({ spec: { replicas: 3 } })),
            yield* Kube.api(ReplicationControllers).patchScale("s", Patch.merge({ spec: { replicas: 3 } }))
          ]
        ) assert.strictEqual(scaled.spec?.replicas, 3)
      }))

    it.effect("a custom resource whose CRD declares a scale subresource", () =>
      Effect.gen(function*() {
        const control = yield* fake
        control.seed([{
          apiVersion: "apiextensions.k8s.io/v1",
          kind: "CustomResourceDefinition",
          metadata: { name: "workers.example.com" },
          spec: {
            group: "example.com",
            scope: "Namespaced",
            names: { plural: "workers", singular: "worker", kind: "Worker", listKind: "WorkerList" },
            versions: [{
              name: "v1",
              served: true,
              storage: true,
              schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
              subresources: {
                status: {},
                scale: { specReplicasPath: ".spec.replicas", statusReplicasPath: ".status.replicas" }
              }
            }]
          }
        }])
        const Worker = Schema.Struct({
          apiVersion: Schema.optional(Schema.String),
          kind: Schema.optional(Schema.String),
          metadata: Schema.optional(Schema.StructWithRest(Schema.Struct({ name: Schema.optional(Schema.String) }), [
            Schema.Record(Schema.String, Schema.Unknown)
          ])),
          spec: Schema.optional(Schema.Struct({ replicas: Schema.optional(Schema.Number) })),
          status: Schema.optional(Schema.Struct({ replicas: Schema.optional(Schema.Number) }))
        })
        const Workers = Resource.make({
          apiVersion: "example.com/v1",
          kind: "Worker",
          plural: "workers",
          namespaced: true,
          subresources: ["scale", "status"],
          schema: Worker
        })
        const workers = Kube.api(Workers)
        yield* workers.create({ metadata: { name: "w" }, spec: { replicas: 1 } })
        const scaled = yield* workers.patchScale("w", Patch.merge({ spec: { replicas: 6 } }))
        assert.strictEqual(scaled.spec?.replicas, 6)
        const stored = Option.getOrThrow(yield* workers.get("w"))
        assert.strictEqual(stored.spec?.replicas, 6)
        const status = yield* workers.patchStatus("w", Patch.merge({ status: { replicas: 6 } }))
        assert.strictEqual(status.status?.replicas, 6)
      }))
  })
})

describe("subresource operations exist only where the kind has the subresource", () => {
  it("is a compile error to call one a kind lacks", () => {
    const configMaps = Kube.api(ConfigMaps)
    const jobs = Kube.api(Jobs)
    const serviceAccounts = Kube.api(ServiceAccounts)
    // @ts-expect-error ConfigMaps have no status subresource
    assert.isFunction(configMaps.getStatus)
    // @ts-expect-error Jobs have no scale subresource
    assert.isFunction(jobs.getScale)
    // @ts-expect-error only Pods are evicted
    assert.isFunction(deployments.evict)
    // @ts-expect-error only ServiceAccounts make tokens
    assert.isFunction(pods.createToken)
    // @ts-expect-error ServiceAccounts have no status
    assert.isFunction(serviceAccounts.patchStatus)
    // @ts-expect-error Deployments have no ephemeral containers
    assert.isFunction(deployments.patchEphemeralContainers)
    // @ts-expect-error Deployments have no resize
    assert.isFunction(deployments.patchResize)
    // the ones they have are offered
    assert.isFunction(jobs.patchStatus)
    assert.isFunction(pods.evict)
    assert.isFunction(pods.patchResize)
    assert.isFunction(pods.getEphemeralContainers)
    assert.isFunction(serviceAccounts.createToken)
    assert.isFunction(deployments.patchScale)
  })
})

const running = (control: FakeCluster.Control, name: string) =>
  control.update({ apiVersion: "v1", kind: "Pod", namespace: "default", name }, {
    status: { phase: "Running", conditions: [{ type: "Ready", status: "True" }] }
  })

describe("pod eviction", () => {
  it.layer(FakeCluster.layer())((it) => {
    it.effect("evicts a pod no budget protects; a budget that would be violated answers 429 with its message", () =>
      Effect.gen(function*() {
        const control = yield* fake
        yield* pods.create(pod("free", { app: "free" }))
        yield* pods.evict("free")
        // a pod deleted with the default grace period is terminating (or gone)
        const evicted = yield* pods.get("free")
        assert.isTrue(Option.isNone(evicted) || Option.getOrThrow(evicted).metadata?.deletionTimestamp !== undefined)

        control.seed([{
          apiVersion: "policy/v1",
          kind: "PodDisruptionBudget",
          metadata: { name: "web-pdb", namespace: "default" },
          spec: { minAvailable: 2, selector: { matchLabels: { app: "web" } } }
        }])
        for (const name of ["web-1", "web-2", "web-3"]) {
          yield* pods.create(pod(name))
          running(control, name)
        }
        // 3 healthy, 2 needed: one may go
        yield* pods.evict("web-1", { deleteOptions: { gracePeriodSeconds: 0 } })
        assert.isTrue(Option.isNone(yield* pods.get("web-1")))
        // 2 healthy, 2 needed: refused, at once (not retried as a throttle)
        const before = control.requests().length
        const blocked = yield* failureOf(pods.evict("web-2"))
        assert.isTrue(ApiError.isTooManyRequests(blocked))
        assert.instanceOf(blocked, ApiError)
        const apiError = blocked as ApiError
        assert.strictEqual(apiError.statusMessage, "Cannot evict pod as it would violate the pod's disruption budget.")
        assert.include(apiError.message, "Cannot evict pod as it would violate the pod's disruption budget.")
        assert.deepStrictEqual(apiError.status?.details?.causes?.map((c) => c.reason), ["DisruptionBudget"])
        assert.include(apiError.status?.details?.causes?.[0]?.message ?? "", "web-pdb needs 2 healthy pods and has 2")
        assert.strictEqual(control.requests().length - before, 1)
        assert.isTrue(Option.isSome(yield* pods.get("web-2")))
        const evictions = control.requests().filter((r) => r.path.endsWith("/eviction"))
        assert.isTrue(evictions.every((r) => r.method === "POST"))
      }))

    it.effect("a missing pod is NotFound, a bad name a ValidationError before any request", () =>
      Effect.gen(function*() {
        const control = yield* fake
        const missing = yield* failureOf(pods.evict("ghost"))
        assert.isTrue(ApiError.isNotFound(missing))
        const before = control.requests().length
        const bad = yield* failureOf(pods.evict("a/b"))
        assert.instanceOf(bad, ValidationError)
        const badGrace = yield* failureOf(pods.evict("ghost", { deleteOptions: { gracePeriodSeconds: -1 } }))
        assert.instanceOf(badGrace, ValidationError)
        assert.strictEqual(control.requests().length, before)
      }))
  })
})

describe("ephemeral containers and resize", () => {
  it.layer(FakeCluster.layer())((it) => {
    it.effect("adds a debug container through ephemeralcontainers; the rest of the pod is kept", () =>
      Effect.gen(function*() {
        yield* pods.create(pod("debug-me"))
        const patched = yield* pods.patchEphemeralContainers(
          "debug-me",
          Patch.strategic({
            spec: { ephemeralContainers: [{ name: "debugger", image: "busybox", stdin: true, tty: true }] }
          })
        )
        assert.deepStrictEqual(patched.spec?.ephemeralContainers?.map((c) => c.name), ["debugger"])
        assert.strictEqual(patched.spec?.containers[0]?.image, "busybox:1.36")
        const read = Option.getOrThrow(yield* pods.getEphemeralContainers("debug-me"))
        assert.deepStrictEqual(read.spec?.ephemeralContainers, patched.spec?.ephemeralContainers)
        // replace keeps the existing one and adds another; the containers sent along are ignored
        const replaced = yield* pods.replaceEphemeralContainers("debug-me", {
          ...read,
          spec: {
            ...read.spec!,
            containers: [{ name: "main", image: "changed" }],
            ephemeralContainers: [...read.spec!.ephemeralContainers!, { name: "second", image: "alpine" }]
          }
        })
        assert.deepStrictEqual(replaced.spec?.ephemeralContainers?.map((c) => c.name), ["debugger", "second"])
        assert.strictEqual(replaced.spec?.containers[0]?.image, "busybox:1.36")
        // an existing ephemeral container cannot be removed
        const removed = yield* failureOf(
          pods.patchEphemeralContainers("debug-me", Patch.json([{ op: "remove", path: "/spec/ephemeralContainers/0" }]))
        )
        assert.isTrue(ApiError.isInvalid(removed))
      }))

    it.effect("resize changes only the containers' resources", () =>
      Effect.gen(function*() {
        // a Burstable pod: a resize may not change its QoS class nor remove a request or a limit
        const burstable = { requests: { cpu: "100m" }, limits: { cpu: "1" } }
        yield* pods.create({
          metadata: { name: "resize-me" },
          spec: { containers: [{ name: "main", image: "busybox:1.36", resources: burstable }] }
        })
        const resized = yield* pods.patchResize(
          "resize-me",
          Patch.strategic({
            spec: { containers: [{ name: "main", image: "ignored", resources: { requests: { cpu: "200m" } } }] }
          })
        )
        assert.deepStrictEqual(resized.spec?.containers[0]?.resources, { requests: { cpu: "200m" }, limits: { cpu: "1" } })
        assert.strictEqual(resized.spec?.containers[0]?.image, "busybox:1.36")
        const read = Option.getOrThrow(yield* pods.getResize("resize-me"))
        const grown = { requests: { cpu: "200m", memory: "1Gi" }, limits: { cpu: "1", memory: "1Gi" } }
        const replaced = yield* pods.replaceResize("resize-me", {
          ...read,
          spec: { ...read.spec!, containers: [{ ...read.spec!.containers[0]!, image: "x", resources: grown }] }
        })
        assert.deepStrictEqual(replaced.spec?.containers[0]?.resources, grown)
        assert.strictEqual(replaced.spec?.containers[0]?.image, "busybox:1.36")
        assert.isTrue(Option.isNone(yield* pods.getResize("none")))
        assert.isTrue(Option.isNone(yield* pods.getEphemeralContainers("none")))
        const missing = yield* failureOf(pods.replaceResize("none", pod("none")))
        assert.isTrue(ApiError.isNotFound(missing))
      }))
  })
})

describe("service account tokens", () => {
  it.layer(FakeCluster.layer())((it) => {
    it.effect("createToken answers a Redacted token and its expiry; the token is never printed", () =>
      Effect.gen(function*() {
        const accounts = Kube.api(ServiceAccounts)
        yield* accounts.create({ metadata: { name: "builder" } })
        const made = yield* accounts.createToken("builder", { audiences: ["vault"], expirationSeconds: 7200 })
        const value = Redacted.value(made.token)
        assert.isTrue(value.length > 0)
        // the fake's time is the Effect Clock's
        const expires = Date.parse(made.expirationTimestamp) - (yield* Clock.currentTimeMillis)
        assert.isTrue(expires > 7000 * 1000 && expires <= 7200 * 1000)
        assert.notInclude(String(made.token), value)
        assert.notInclude(JSON.stringify(made), value)
        assert.notInclude(`${made.token}`, value)
        assert.notInclude(String(made.token), value)

        const control = yield* fake
        const sent = control.requests().filter((r) => r.path.endsWith("/serviceaccounts/builder/token"))
        assert.deepStrictEqual(sent.map((r) => r.method), ["POST"])

        const missing = yield* failureOf(accounts.createToken("nobody"))
        assert.isTrue(ApiError.isNotFound(missing))
        assert.notInclude(String(missing), value)
        const short = yield* failureOf(accounts.createToken("builder", { expirationSeconds: 60 }))
        assert.instanceOf(short, ValidationError)
        const blank = yield* failureOf(accounts.createToken("builder", { audiences: [" "] }))
        assert.instanceOf(blank, ValidationError)
      }))
  })
})

describe("deleteWithResult", () => {
  it.layer(FakeCluster.layer())((it) => {
    it.effect("answers the object while a finalizer holds it, else the Status; delete keeps its boolean", () =>
      Effect.gen(function*() {
        const configMaps = Kube.api(ConfigMaps)
        yield* configMaps.create({ metadata: { name: "held", finalizers: ["example.com/hold"] } })
        const held = yield* configMaps.deleteWithResult("held")
        assert.strictEqual(held._tag, "Object")
        if (held._tag === "Object") assert.isString(held.object.metadata?.deletionTimestamp)
        yield* configMaps.create({ metadata: { name: "plain" } })
        const gone = yield* configMaps.deleteWithResult("plain")
        assert.strictEqual(gone._tag, "Status")
        if (gone._tag === "Status") assert.strictEqual(gone.status.status, "Success")
        const missing = yield* failureOf(configMaps.deleteWithResult("plain"))
        assert.isTrue(ApiError.isNotFound(missing))
        assert.isFalse(yield* configMaps.delete("plain"))
        yield* configMaps.create({ metadata: { name: "pre" } })
        const conflict = yield* failureOf(
          configMaps.deleteWithResult("pre", { preconditions: { resourceVersion: "1" } })
        )
        assert.isTrue(ApiError.isConflict(conflict))
      }))
  })
})

describe("request options", () => {
  it.layer(FakeCluster.layer())((it) => {
    it.effect("fieldValidation Strict refuses an unknown field with the server's message; Warn, Ignore accept it", () =>
      Effect.gen(function*() {
        const control = yield* fake
        // the unknown field gets past the Schema (excess properties are kept) as it would from a YAML file
        const withUnknown = { ...deployment("strict"), spec: { ...deployment("strict").spec!, foo: 1 } } as Deployment
        const strict = yield* failureOf(deployments.create(withUnknown, { fieldValidation: "Strict" }))
        assert.strictEqual((strict as ApiError).code, 400)
        assert.strictEqual(
          (strict as ApiError).statusMessage,
          "Deployment in version \"v1\" cannot be handled as a Deployment: strict decoding error: unknown field \"spec.foo\""
        )
        const nested = {
          ...deployment("nested"),
          spec: {
            ...deployment("nested").spec!,
            template: { spec: { containers: [{ name: "c", image: "nginx", bogus: true }] } }
          }
        } as unknown as Deployment
        const nestedError = yield* failureOf(deployments.create(nested, { fieldValidation: "Strict" }))
        assert.strictEqual(
          (nestedError as ApiError).statusMessage,
          "Deployment in version \"v1\" cannot be handled as a Deployment: " +
            "strict decoding error: unknown field \"spec.template.spec.containers[0].bogus\""
        )
        yield* deployments.create(withUnknown, { fieldValidation: "Warn" })
        const patched = yield* failureOf(
          deployments.patch("strict", Patch.merge({ spec: { bar: 2 } }), { fieldValidation: "Strict" })
        )
        // a patch's strict errors are a 422 on the field "patch", quoting the patched object
        assert.strictEqual((patched as ApiError).code, 422)
        assert.match((patched as ApiError).statusMessage, /strict decoding error: unknown field "spec\.bar"$/)
        const applied = yield* failureOf(deployments.apply(
          { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "strict" }, spec: withUnknown.spec },
          { fieldManager: "t", fieldValidation: "Strict" }
        ))
        // an apply configuration is typed by the field manager, which fails on any undeclared field (a 500)
        assert.strictEqual((applied as ApiError).code, 500)
        assert.strictEqual(
          (applied as ApiError).statusMessage,
          "failed to create typed patch object (default/strict; apps/v1, Kind=Deployment): .spec.foo: field not declared in schema"
        )
        yield* deployments.replace("strict", Option.getOrThrow(yield* deployments.get("strict")), {
          fieldValidation: "Ignore"
        })
        const queries = control.requests().filter((r) => r.path.includes("/deployments")).map((r) => r.query.fieldValidation)
        assert.deepStrictEqual(queries.filter((q) => q !== undefined), [
          "Strict",
          "Strict",
          "Warn",
          "Strict",
          "Strict",
          "Ignore"
        ])

        // Warn answers a Warning header per unknown field
        const response = yield* Effect.promise(() =>
          control.handle(
            new Request(`${control.url}/apis/apps/v1/namespaces/default/deployments?fieldValidation=Warn`, {
              method: "POST",
              headers: { "content-type": "application/json" },
              body: JSON.stringify({
                apiVersion: "apps/v1",
                kind: "Deployment",
                ...deployment("warned"),
                spec: { ...deployment("warned").spec!, foo: 1 }
              })
            })
          )
        )
        assert.strictEqual(response.status, 201)
        assert.strictEqual(response.headers.get("warning"), "299 - \"unknown field \\\"spec.foo\\\"\"")
      }))

    it.effect("get with resourceVersion, list with timeoutSeconds, deleteAll with preconditions and resourceVersion", () =>
      Effect.gen(function*() {
        const control = yield* fake
        const configMaps = Kube.api(ConfigMaps)
        yield* configMaps.create({ metadata: { name: "rv", labels: { set: "a" } } })
        assert.isTrue(Option.isSome(yield* configMaps.get("rv", { resourceVersion: "0" })))
        yield* configMaps.list({ timeoutSeconds: 5 })
        const badTimeout = yield* failureOf(configMaps.list({ timeoutSeconds: -1 }))
        assert.instanceOf(badTimeout, ValidationError)
        const rv = control.resourceVersion()
        assert.strictEqual(
          yield* configMaps.deleteAll({ labelSelector: "set=a", resourceVersion: rv, preconditions: { resourceVersion: "1" } })
            .pipe(Effect.result, Effect.map((e) => e._tag)),
          "Failure"
        )
        assert.isTrue(Option.isSome(yield* configMaps.get("rv")))
        const requests = control.requests().filter((r) => r.path.endsWith("/configmaps") || r.path.endsWith("/rv"))
        const getRequest = requests.find((r) => r.method === "GET" && r.path.endsWith("/rv"))
        assert.strictEqual(getRequest?.query.resourceVersion, "0")
        const listRequest = requests.find((r) => r.method === "GET" && r.query.timeoutSeconds !== undefined)
        assert.strictEqual(listRequest?.query.timeoutSeconds, "5")
        const deleteRequest = requests.find((r) => r.method === "DELETE")
        assert.strictEqual(deleteRequest?.query.resourceVersion, rv)
      }))
  })
})

describe("discovery of the subresources FakeCluster serves", () => {
  it.layer(FakeCluster.layer())((it) => {
    it.effect("lists pods/eviction, pods/ephemeralcontainers, pods/resize and serviceaccounts/token as the API server does", () =>
      Effect.gen(function*() {
        const control = yield* fake
        const response = yield* Effect.promise(() => control.handle(new Request(`${control.url}/api/v1`)))
        const doc = (yield* Effect.promise(() => response.json())) as {
          resources: Array<{ name: string; kind: string; group?: string; verbs: Array<string> }>
        }
        const byName = new Map(doc.resources.map((r) => [r.name, r]))
        assert.deepStrictEqual(byName.get("pods/eviction"), {
          ...byName.get("pods/eviction")!,
          kind: "Eviction",
          group: "policy",
          verbs: ["create"]
        })
        assert.strictEqual(byName.get("serviceaccounts/token")?.kind, "TokenRequest")
        assert.deepStrictEqual(byName.get("serviceaccounts/token")?.verbs, ["create"])
        assert.deepStrictEqual(byName.get("pods/ephemeralcontainers")?.verbs, ["get", "patch", "update"])
        assert.strictEqual(byName.get("pods/resize")?.kind, "Pod")
        assert.isFalse(byName.has("configmaps/status"))
      }))
  })
})

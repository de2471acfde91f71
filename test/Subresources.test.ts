/**
 * The subresource operations of `Kube.Api` over the real request path (FakeCluster's
 * layer answering real HTTP requests): status, scale, eviction, ephemeral containers,
 * resize, service account tokens, and deleteWithResult.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Option, Redacted, Schema } from "effect"
import { ApiError, ValidationError } from "../src/Errors.js"
import * as Kube from "../src/Kube.js"
import * as Patch from "../src/Patch.js"
import * as Resource from "../src/Resource.js"
import {
  ConfigMaps,
  type Deployment,
  Deployments,
  Jobs,
  type Pod,
  Pods,
  ReplicaSets,
  ReplicationControllers,
  ServiceAccounts,
  StatefulSets
} from "../src/resources/index.js"
import * as FakeCluster from "../src/testing/FakeCluster.js"

const failureOf = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.flatMap(Effect.exit(effect), (exit) =>
    Exit.isFailure(exit) && exit.cause._tag === "Fail"
      ? Effect.succeed(exit.cause.error)
      : Effect.dieMessage(`expected a failure, got ${Exit.isSuccess(exit) ? "success" : exit.cause._tag}`))

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
  it.layer(FakeCluster.layer())((it) => {
    it.effect("replaceStatus, patchStatus and applyStatus change only .status and answer the whole object", () =>
      Effect.gen(function*() {
        const created = yield* deployments.create(deployment("web"))
        assert.isUndefined(created.status)

        // replaceStatus: the spec sent along is ignored
        const changedSpec = { ...created, spec: { ...created.spec!, replicas: 9 }, status: { replicas: 1 } }
        const replaced = yield* deployments.replaceStatus(changedSpec)
        assert.strictEqual(replaced.status?.replicas, 1)
        assert.strictEqual(replaced.spec?.replicas, 1)
        assert.strictEqual(replaced.metadata?.generation, created.metadata?.generation)

        // patchStatus with each patch kind
        const merged = yield* deployments.patchStatus("web", Patch.merge({ status: { readyReplicas: 1 }, spec: { replicas: 5 } }))
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

        const read = yield* deployments.getStatus("web")
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

    it.effect("a stale resourceVersion is a Conflict, a missing object NotFound", () =>
      Effect.gen(function*() {
        const created = yield* deployments.create(deployment("stale"))
        yield* deployments.patchStatus("stale", Patch.merge({ status: { replicas: 1 } }))
        const conflict = yield* failureOf(deployments.replaceStatus({ ...created, status: { replicas: 2 } }))
        assert.isTrue(ApiError.isConflict(conflict))
        const missing = yield* failureOf(deployments.getStatus("nope"))
        assert.isTrue(ApiError.isNotFound(missing))
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
        const scale = yield* deployments.getScale("web")
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

    it.effect("a stale Scale resourceVersion is a Conflict; a missing object NotFound; a bad name never leaves", () =>
      Effect.gen(function*() {
        const created = yield* deployments.create(deployment("rv"))
        const stale = yield* deployments.getScale("rv")
        yield* deployments.patchScale("rv", Patch.merge({ spec: { replicas: 2 } }))
        const conflict = yield* failureOf(deployments.replaceScale("rv", { ...stale, spec: { replicas: 3 } }))
        assert.isTrue(ApiError.isConflict(conflict))
        assert.isDefined(created)
        const missing = yield* failureOf(deployments.getScale("none"))
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
        yield* Kube.api(ReplicaSets).create({ metadata: { name: "s" }, spec: { selector: { matchLabels: { app: "s" } }, template } })
        yield* Kube.api(ReplicationControllers).create({ metadata: { name: "s" }, spec: { selector: { app: "s" }, template } })
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
          metadata: Schema.optional(Schema.Struct({ name: Schema.optional(Schema.String) }, {
            key: Schema.String,
            value: Schema.Unknown
          })),
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

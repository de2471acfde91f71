/**
 * Server-side apply of typed apply configurations over the real request path (FakeCluster's
 * layer answering real HTTP requests): a manager applies only the fields it owns, the answer
 * is the whole object, custom resources take a partial of their JSON form, and `Manifests`
 * takes apply configurations as it takes parsed manifests.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Option, Schema } from "effect"
import { ApiError, ValidationError } from "../packages/effect-kube/src/Errors.js"
import * as Kube from "../packages/effect-kube/src/Kube.js"
import * as Manifests from "../packages/effect-kube/src/Manifests.js"
import * as Resource from "../packages/effect-kube/src/Resource.js"
import {
  type ConfigMapApply,
  type DeploymentApply,
  Deployments,
  ObjectMeta,
  type PodApply,
  Pods
} from "../packages/effect-kube/src/resources/index.js"
import { FakeCluster } from "@effect-kube/testing"

const deployments = Kube.api(Deployments, { namespace: "default" })

/** What a deploy tool owns: everything but the replicas, which an autoscaler owns. */
const deployed = (image: string): DeploymentApply => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name: "web", labels: { app: "web" } },
  spec: {
    selector: { matchLabels: { app: "web" } },
    template: { metadata: { labels: { app: "web" } }, spec: { containers: [{ name: "web", image }] } }
  }
})

/** The whole of what the autoscaler applies. */
const replicas = (count: number): DeploymentApply => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name: "web" },
  spec: { replicas: count }
})

const ownedBy = (object: { readonly metadata?: ObjectMeta | undefined }, manager: string): string =>
  JSON.stringify(object.metadata?.managedFields?.filter((entry) => entry.manager === manager).map((e) => e.fieldsV1))

describe("typed apply configurations", () => {
  it.layer(FakeCluster.layer())((it) => {
    it.effect("an autoscaler applies spec.replicas alone and owns nothing else; the answer is the whole Deployment", () =>
      Effect.gen(function*() {
        yield* deployments.apply(deployed("nginx:1.27"), { fieldManager: "deployer" })
        const scaled = yield* deployments.apply(replicas(5), { fieldManager: "autoscaler" })
        assert.strictEqual(scaled.spec?.replicas, 5)
        assert.strictEqual(scaled.spec?.template.spec?.containers[0]?.image, "nginx:1.27")
        assert.deepStrictEqual(scaled.spec?.selector, { matchLabels: { app: "web" } })
        assert.strictEqual(ownedBy(scaled, "autoscaler"), JSON.stringify([{ "f:spec": { "f:replicas": {} } }]))
        assert.notInclude(ownedBy(scaled, "deployer"), "f:replicas")

        // the deploy tool rolls out a new image: the replicas it does not own stay the autoscaler's
        const rolled = yield* deployments.apply(deployed("nginx:1.28"), { fieldManager: "deployer" })
        assert.strictEqual(rolled.spec?.template.spec?.containers[0]?.image, "nginx:1.28")
        assert.strictEqual(rolled.spec?.replicas, 5)

        // setting the autoscaler's field is a conflict unless forced
        const conflict = yield* Effect.flip(deployments.apply(
          { ...deployed("nginx:1.28"), spec: { ...deployed("nginx:1.28").spec, replicas: 1 } },
          { fieldManager: "deployer" }
        ))
        assert.isTrue(ApiError.isConflict(conflict))
        assert.strictEqual(Option.getOrThrow(yield* deployments.get("web")).spec?.replicas, 5)
      }))

    it.effect("a partial entry of a keyed list merges with the entry of that key", () =>
      Effect.gen(function*() {
        const pods = Kube.api(Pods, { namespace: "default" })
        yield* pods.create({
          metadata: { name: "app" },
          spec: { containers: [{ name: "app", image: "busybox" }, { name: "sidecar", image: "envoy" }] }
        })
        const sidecarEnv: PodApply = {
          apiVersion: "v1",
          kind: "Pod",
          metadata: { name: "app" },
          // a pod's spec is immutable but for its images (as the API server validates it)
          spec: { containers: [{ name: "sidecar", image: "envoy:1.31" }] }
        }
        // the image is the creator's (an Update manager's): taking it over is a forced apply
        const applied = yield* pods.apply(sidecarEnv, { fieldManager: "tuner", force: true })
        assert.deepStrictEqual(applied.spec?.containers.map((c) => [c.name, c.image]), [
          ["app", "busybox"],
          ["sidecar", "envoy:1.31"]
        ])
      }))

    it.effect("applyStatus takes an apply configuration of the status alone", () =>
      Effect.gen(function*() {
        yield* deployments.apply({ ...deployed("nginx"), metadata: { name: "status" } }, { fieldManager: "deployer" })
        const reported = yield* deployments.applyStatus(
          { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "status" }, status: { readyReplicas: 2 } },
          { fieldManager: "controller" }
        )
        assert.strictEqual(reported.status?.readyReplicas, 2)
        assert.strictEqual(reported.spec?.template.spec?.containers[0]?.image, "nginx")
      }))

    it.effect("an apply configuration's envelope is checked before any request; its fields are left to the server", () =>
      Effect.gen(function*() {
        const control = yield* FakeCluster.FakeCluster
        const before = control.requests().length
        const wrongKind = yield* Effect.flip(deployments.apply(
          { ...replicas(1), kind: "StatefulSet" } as unknown as DeploymentApply,
          { fieldManager: "m" }
        ))
        assert.instanceOf(wrongKind, ValidationError)
        assert.include(wrongKind.message, "kind is \"StatefulSet\" but this api serves Deployment")
        const noName = yield* Effect.flip(deployments.apply(
          { apiVersion: "apps/v1", kind: "Deployment", metadata: {} } as unknown as DeploymentApply,
          { fieldManager: "m" }
        ))
        assert.instanceOf(noName, ValidationError)
        assert.include(noName.message, "metadata.name")
        const elsewhere = yield* Effect.flip(deployments.apply(
          { ...replicas(1), metadata: { name: "web", namespace: "other" } },
          { fieldManager: "m" }
        ))
        assert.include(elsewhere.message, "metadata.namespace is \"other\" but the operation acts in namespace \"default\"")
        const notAnObject = yield* Effect.flip(deployments.apply("web" as unknown as DeploymentApply, { fieldManager: "m" }))
        assert.include(notAnObject.message, "must be a JSON object, got string")
        assert.strictEqual(control.requests().length, before)
      }))
  })
})

// A custom resource whose Schema transforms: `size` is a number in the program, a string in JSON.
const Widget = Schema.Struct({
  apiVersion: Schema.optional(Schema.String),
  kind: Schema.optional(Schema.String),
  metadata: Schema.optional(ObjectMeta),
  spec: Schema.optional(Schema.Struct({
    size: Schema.FiniteFromString,
    color: Schema.optional(Schema.String),
    tags: Schema.optional(Schema.Array(Schema.String))
  }))
})
const Widgets = Resource.make({
  apiVersion: "example.com/v1",
  kind: "Widget",
  plural: "widgets",
  namespaced: true,
  schema: Widget
})

describe("apply configurations of custom resources", () => {
  it.effect("are a partial of the JSON form; the answer is decoded by the Schema", () =>
    Effect.gen(function*() {
      const control = yield* FakeCluster.FakeCluster
      control.seed([{
        apiVersion: "apiextensions.k8s.io/v1",
        kind: "CustomResourceDefinition",
        metadata: { name: "widgets.example.com" },
        spec: {
          group: "example.com",
          scope: "Namespaced",
          names: { plural: "widgets", singular: "widget", kind: "Widget", listKind: "WidgetList" },
          versions: [{
            name: "v1",
            served: true,
            storage: true,
            schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } }
          }]
        }
      }])
      const widgets = Kube.api(Widgets, { namespace: "default" })
      yield* widgets.create({ metadata: { name: "w" }, spec: { size: 3, color: "red" } })
      // `size` is left out (a partial) and `color` applied; in JSON form `size` would be a string
      const applied = yield* widgets.apply(
        { apiVersion: "example.com/v1", kind: "Widget", metadata: { name: "w" }, spec: { tags: ["a"] } },
        { fieldManager: "tagger" }
      )
      assert.deepStrictEqual(applied.spec, { size: 3, color: "red", tags: ["a"] })
      const resized = yield* widgets.apply(
        { apiVersion: "example.com/v1", kind: "Widget", metadata: { name: "w" }, spec: { size: "4" } },
        { fieldManager: "sizer", force: true } // the create's manager owns size
      )
      assert.strictEqual(resized.spec?.size, 4)
    }).pipe(Effect.provide(FakeCluster.layer())))
})

describe("Manifests takes apply configurations", () => {
  it.effect("applies typed configurations of several kinds, and deletes them as given", () =>
    Effect.gen(function*() {
      const settings: ConfigMapApply = {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "settings" },
        data: { mode: "fast" }
      }
      const refs = yield* Manifests.apply([settings, deployed("nginx")], { namespace: "default", fieldManager: "set" })
      assert.deepStrictEqual(refs.map((r) => `${r.kind}/${r.name}`), ["ConfigMap/settings", "Deployment/web"])
      const live = yield* Manifests.get([settings], { namespace: "default" })
      assert.deepStrictEqual(live[0]?.["data"], { mode: "fast" })
      const deleted = yield* Manifests.delete([settings, deployed("nginx")], { namespace: "default" })
      assert.strictEqual(deleted.length, 2)
    }).pipe(Effect.provide(FakeCluster.layer())))
})

/**
 * Compile-time checks of what the types promise, under the strict options a user writes
 * with (`exactOptionalPropertyTypes`, `noUncheckedIndexedAccess`: tsconfig.base.json): typed
 * apply configurations, and one argument shape per verb family across the main resource and
 * its subresources. The functions below are never run: `tsc -p tsconfig.test.json` (part of
 * `npm run typecheck` and CI) fails if a line marked `@ts-expect-error` compiles, or if any
 * other line does not.
 */
import { assert, describe, it } from "@effect/vitest"
import type * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Kube from "../../packages/effect-kube/src/Kube.js"
import * as Manifests from "../../packages/effect-kube/src/Manifests.js"
import * as Resource from "../../packages/effect-kube/src/Resource.js"
import {
  type ConfigMapApply,
  type Deployment,
  type DeploymentApply,
  Deployments,
  ObjectMeta,
  type Pod,
  type PodApply,
  Pods,
  RoleBindings,
  type Scale
} from "../../packages/effect-kube/src/resources/index.js"

/** `true` when X and Y are the same type. */
type Equals<X, Y> = (<T>() => T extends X ? 1 : 2) extends (<T>() => T extends Y ? 1 : 2) ? true : false
const same = <_T extends true>(): void => undefined

/** The success type of an operation. */
type Answer<T> = T extends Effect.Effect<infer A, infer _E, infer _R> ? A : never

const deployments = Kube.api(Deployments, { namespace: "default" })
const pods = Kube.api(Pods, { namespace: "default" })
const fieldManager = { fieldManager: "types" }

describe("apply configurations (compile-time checks)", () => {
  it("need apiVersion, kind and metadata.name only, and answer the whole object", () => {
    const typeOnly = () => {
      // the autoscaler's apply: nothing but the replicas
      const scaled = deployments.apply(
        { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "web" }, spec: { replicas: 5 } },
        fieldManager
      )
      same<Equals<Answer<typeof scaled>, Deployment>>()
      same<Equals<Resource.ApplyConfiguration<typeof Deployments>, DeploymentApply>>()
      same<Equals<Parameters<typeof deployments.apply>[0], DeploymentApply>>()
      same<Equals<Parameters<typeof deployments.applyStatus>[0], DeploymentApply>>()
      // optional fields may be given as undefined (as the generated object types allow)
      const explicit: DeploymentApply = {
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name: "web" },
        spec: { replicas: undefined }
      }
      // @ts-expect-error apiVersion is required
      const noApiVersion: DeploymentApply = { kind: "Deployment", metadata: { name: "web" } }
      // @ts-expect-error kind is required
      const noKind: DeploymentApply = { apiVersion: "apps/v1", metadata: { name: "web" } }
      // @ts-expect-error metadata.name is required
      const noName: DeploymentApply = { apiVersion: "apps/v1", kind: "Deployment", metadata: { labels: {} } }
      // @ts-expect-error the kind is the resource's
      const otherKind: DeploymentApply = { apiVersion: "apps/v1", kind: "StatefulSet", metadata: { name: "web" } }
      // @ts-expect-error the apiVersion is the resource's
      const otherVersion: DeploymentApply = { apiVersion: "v1", kind: "Deployment", metadata: { name: "web" } }
      const wrongType: DeploymentApply = {
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name: "web" },
        // @ts-expect-error a field keeps its type
        spec: { replicas: "5" }
      }
      // @ts-expect-error an object read back is not an apply configuration (its metadata is optional)
      deployments.apply({} as Deployment, fieldManager)
      return [explicit, noApiVersion, noKind, noName, otherKind, otherVersion, wrongType]
    }
    assert.isFunction(typeOnly)
  })

  it("entries of keyed lists carry their keys; atomic structs and lists are whole", () => {
    const typeOnly = () => {
      const sidecar: PodApply = {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "app" },
        // a container is merged by its name; its port by containerPort (protocol has a default)
        spec: { containers: [{ name: "sidecar", ports: [{ containerPort: 8080 }], env: [{ name: "A", value: "1" }] }] }
      }
      const noContainerName: PodApply = {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "app" },
        // @ts-expect-error a partial container needs its name, the key the server merges containers by
        spec: { containers: [{ image: "busybox" }] }
      }
      const noPort: PodApply = {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "app" },
        // @ts-expect-error a port needs its containerPort
        spec: { containers: [{ name: "app", ports: [{ name: "http" }] }] }
      }
      // a RoleRef is atomic (`x-kubernetes-map-type: atomic`): replaced whole, so given whole
      Kube.api(RoleBindings).apply({
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "RoleBinding",
        metadata: { name: "b" },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "reader" }
      }, fieldManager)
      Kube.api(RoleBindings).apply({
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "RoleBinding",
        metadata: { name: "b" },
        // @ts-expect-error an atomic struct is not partial
        roleRef: { name: "reader" }
      }, fieldManager)
      const noArgs: PodApply = {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "app" },
        // an atomic list of strings is a list of strings
        // @ts-expect-error a list of strings holds strings
        spec: { containers: [{ name: "app", args: [1] }] }
      }
      return [sidecar, noContainerName, noPort, noArgs]
    }
    assert.isFunction(typeOnly)
  })

  it("custom resources take a partial of their JSON form; raw ones any object", () => {
    const Widget = Schema.Struct({
      metadata: Schema.optional(ObjectMeta),
      spec: Schema.optional(Schema.Struct({ size: Schema.FiniteFromString, tags: Schema.Array(Schema.String) }))
    })
    const widgets = Kube.api(
      Resource.make({ apiVersion: "example.com/v1", kind: "Widget", plural: "widgets", namespaced: true, schema: Widget })
    )
    const raw = Kube.api(
      Resource.make({ apiVersion: "example.com/v1", kind: "Gadget", plural: "gadgets", namespaced: true, schema: Schema.Unknown })
    )
    const typeOnly = () => {
      const resized = widgets.apply(
        { apiVersion: "example.com/v1", kind: "Widget", metadata: { name: "w" }, spec: { size: "4" } },
        fieldManager
      )
      same<Equals<Answer<typeof resized>, typeof Widget.Type>>()
      widgets.apply(
        // @ts-expect-error the JSON form: size is a string there
        { apiVersion: "example.com/v1", kind: "Widget", metadata: { name: "w" }, spec: { size: 4 } },
        fieldManager
      )
      // @ts-expect-error metadata.name is required
      widgets.apply({ apiVersion: "example.com/v1", kind: "Widget", metadata: {} }, fieldManager)
      widgets.apply(
        // @ts-expect-error lists are atomic: whole, not partial
        { apiVersion: "example.com/v1", kind: "Widget", metadata: { name: "w" }, spec: { tags: [1] } },
        fieldManager
      )
      raw.apply({ anything: true }, fieldManager)
    }
    assert.isFunction(typeOnly)
  })

  it("Manifests takes apply configurations of several kinds", () => {
    const typeOnly = (deployment: DeploymentApply, configMap: ConfigMapApply, pod: PodApply) => {
      Manifests.apply([deployment, configMap, pod], { fieldManager: "set" })
      Manifests.delete([deployment, configMap])
      Manifests.get([pod])
      // @ts-expect-error a number is not an object to apply
      Manifests.apply([1])
    }
    assert.isFunction(typeOnly)
  })
})

describe("one argument shape per verb family (compile-time checks)", () => {
  it("replace* take the name, then the object", () => {
    const typeOnly = (deployment: Deployment, pod: Pod, scale: Scale) => {
      deployments.replace("web", deployment)
      deployments.replaceStatus("web", deployment)
      deployments.replaceScale("web", scale)
      pods.replaceEphemeralContainers("web", pod)
      pods.replaceResize("web", pod)
      // @ts-expect-error the name comes first
      deployments.replace(deployment)
      // @ts-expect-error the name comes first
      deployments.replaceStatus(deployment)
      // @ts-expect-error the name comes first
      pods.replaceEphemeralContainers(pod)
      // @ts-expect-error the name comes first
      pods.replaceResize(pod)
    }
    assert.isFunction(typeOnly)
  })

  it("get* answer an Option (a 404 is None); getOrFail the object; delete a boolean", () => {
    const typeOnly = () => {
      same<Equals<Answer<ReturnType<typeof deployments.get>>, Option.Option<Deployment>>>()
      same<Equals<Answer<ReturnType<typeof deployments.getStatus>>, Option.Option<Deployment>>>()
      same<Equals<Answer<ReturnType<typeof deployments.getScale>>, Option.Option<Scale>>>()
      same<Equals<Answer<ReturnType<typeof pods.getEphemeralContainers>>, Option.Option<Pod>>>()
      same<Equals<Answer<ReturnType<typeof pods.getResize>>, Option.Option<Pod>>>()
      same<Equals<Answer<ReturnType<typeof deployments.getOrFail>>, Deployment>>()
      same<Equals<Answer<ReturnType<typeof deployments.delete>>, boolean>>()
    }
    assert.isFunction(typeOnly)
  })

  it("patch* take the name, then the patch; apply* the configuration alone", () => {
    const typeOnly = (configuration: DeploymentApply) => {
      same<Equals<Parameters<typeof deployments.patch>, Parameters<typeof deployments.patchStatus>>>()
      same<Equals<Parameters<typeof deployments.patch>, Parameters<typeof deployments.patchScale>>>()
      same<Equals<Parameters<typeof pods.patch>, Parameters<typeof pods.patchEphemeralContainers>>>()
      same<Equals<Parameters<typeof pods.patch>, Parameters<typeof pods.patchResize>>>()
      deployments.apply(configuration, fieldManager)
      deployments.applyStatus(configuration, fieldManager)
      // @ts-expect-error apply takes no name: the configuration names the object
      deployments.apply("web", configuration, fieldManager)
    }
    assert.isFunction(typeOnly)
  })

  it("an Api written without its apply configuration takes every api, and cannot apply", () => {
    const typeOnly = (configuration: DeploymentApply) => {
      const plain: Kube.Api<Deployment> = deployments
      // @ts-expect-error Api<A> does not know what its resource applies
      plain.apply(configuration, fieldManager)
      const whole: Kube.ApiOf<typeof Deployments> = deployments
      whole.apply(configuration, fieldManager)
      whole.getScale("web")
    }
    assert.isFunction(typeOnly)
  })
})

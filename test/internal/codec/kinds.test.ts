/**
 * Every generated kind against the Kubernetes OpenAPI spec it was generated from: an object
 * with every field the spec defines set (enum-like strings holding values no list knows)
 * decodes, encodes back to the identical JSON, and goes through FakeCluster create then get
 * with every field it sent still there. Plus open enums on a large list, and the Resources'
 * own description (scope, subresources) checked against the spec's paths.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Option from "effect/Option"
import * as TestClock from "effect/testing/TestClock"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { pods as benchPods } from "../../../bench/pods.js"
import { codecFor } from "../../../packages/effect-kube/src/internal/codec/codec.js"
import * as Kube from "../../../packages/effect-kube/src/Kube.js"
import * as Resource from "../../../packages/effect-kube/src/Resource.js"
import * as Resources from "../../../packages/effect-kube/src/resources/index.js"
import { definitions as goTypes } from "../../../packages/testing/src/internal/store/generatedTypes.js"
import { FakeCluster } from "@effect-kube/testing"

// -- the spec the kinds were generated from, as the generator reads it ------------------------------------

const specPath = Path.resolve(
  Path.dirname(fileURLToPath(import.meta.url)),
  "../../../spec/kubernetes/swagger-v1.35.0.json"
)

interface SpecProperty {
  readonly type?: string
  readonly format?: string
  readonly $ref?: string
  readonly items?: SpecProperty
  readonly additionalProperties?: SpecProperty
}
interface SpecDefinition extends SpecProperty {
  readonly properties?: Record<string, SpecProperty>
  readonly required?: ReadonlyArray<string>
  readonly "x-kubernetes-group-version-kind"?: ReadonlyArray<{ group: string; version: string; kind: string }>
}
interface Spec {
  readonly definitions: Record<string, SpecDefinition>
  readonly paths: Record<string, unknown>
}
const spec = JSON.parse(Fs.readFileSync(specPath, "utf8")) as Spec

// -- an object with every field set ----------------------------------------------------------------------

const meta = "io.k8s.apimachinery.pkg.apis.meta.v1."
let counter = 0

/** A value for a property: every field of an object set, one item per list and map, strings no enum knows. */
const valueOf = (p: SpecProperty, name: string, stack: ReadonlyArray<string>): unknown => {
  if (p.$ref !== undefined) {
    const ref = p.$ref.replace("#/definitions/", "")
    switch (ref) {
      case "io.k8s.apimachinery.pkg.api.resource.Quantity":
        return "1536Mi"
      case "io.k8s.apimachinery.pkg.util.intstr.IntOrString":
        return counter++ % 2 === 0 ? 8080 : "25%"
      case `${meta}Time`:
        return "2024-05-01T10:00:00Z"
      case `${meta}MicroTime`:
        return "2024-05-01T10:00:00.123456Z"
      case "io.k8s.apimachinery.pkg.runtime.RawExtension":
        return { apiVersion: "example.com/v1", kind: "Embedded", spec: { any: ["thing", 1] } }
      case "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON":
        return { any: ["json", 1, true] }
      case "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrBool":
        return true
      case "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrArray":
      case "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrStringArray":
        return { type: "string" }
    }
    return objectOf(ref, stack)
  }
  switch (p.type) {
    case "string":
      return p.format === "byte" ? "aGVsbG8=" : `future-${name}`
    case "integer":
      return 3
    case "number":
      return 1.5
    case "boolean":
      return true
    case "array":
      return [valueOf(p.items!, name, stack)]
    case "object":
      return p.additionalProperties === undefined
        ? { free: { form: ["object"] } }
        : { [`key-${name}`]: valueOf(p.additionalProperties, name, stack) }
    default:
      return { any: "json" }
  }
}

const objectOf = (def: string, stack: ReadonlyArray<string>): unknown => {
  const d = spec.definitions[def]!
  if (d.properties === undefined) {
    // an empty Go struct (StorageVersionSpec, a CRD's status subresource) keeps no field: kube-apiserver's decoder drops
    // what is sent in it, as the fake's does; a free-form object keeps everything
    const goType = goTypes[def.split(".").slice(-3).join(".")]
    return goType !== undefined && Object.keys(goType[1]).length === 0 ? {} : { free: { form: ["object"] } }
  }
  // a recursive definition (JSONSchemaProps) is filled once, then left empty
  if (stack.includes(def)) return {}
  const out: Record<string, unknown> = {}
  for (const [name, p] of Object.entries(d.properties)) out[name] = valueOf(p, name, [...stack, def])
  return out
}

/** The object of a kind as a client would create it: every field set, a valid name and namespace. */
const fullObject = (resource: Resource.Resource<unknown, unknown, string>, def: string, name: string) => {
  const object = objectOf(def, []) as Record<string, unknown>
  const metadata = object.metadata as Record<string, unknown>
  object.apiVersion = resource.apiVersion
  object.kind = resource.kind
  object.metadata = {
    ...metadata,
    name,
    namespace: resource.namespaced ? "default" : undefined,
    // fields a create must not carry, or that keep an object from ever being deleted
    deletionTimestamp: undefined,
    deletionGracePeriodSeconds: undefined,
    finalizers: undefined
  }
  sameServiceAccount(object)
  return JSON.parse(JSON.stringify(object)) as Record<string, unknown>
}

/** v1's deprecated `serviceAccount` of a pod spec is always written back as its `serviceAccountName`. */
const sameServiceAccount = (value: unknown): void => {
  if (Array.isArray(value)) return value.forEach(sameServiceAccount)
  if (typeof value !== "object" || value === null) return
  const o = value as Record<string, unknown>
  if ("serviceAccount" in o && "serviceAccountName" in o) o.serviceAccount = o.serviceAccountName
  for (const v of Object.values(o)) sameServiceAccount(v)
}

/** The CRD with every field set, with a valid group and names (it registers a kind of its own). */
const crds = Resources.CustomResourceDefinitions as unknown as Resource.Resource<unknown, unknown, string>
const fullCrd = (): Record<string, unknown> => {
  const object = fullObject(crds, definitionOf(crds), "widgets.example.com")
  const spec = object.spec as Record<string, unknown>
  spec.group = "example.com"
  spec.scope = "Namespaced"
  const names = { plural: "widgets", singular: "widget", kind: "Widget", listKind: "WidgetList" }
  spec.names = { ...spec.names as object, ...names }
  const versions = spec.versions as Array<Record<string, unknown>>
  versions[0] = { ...versions[0], name: "v1", served: true, storage: true }
  return object
}

// -- the Resources, matched with their definitions --------------------------------------------------------

const resources = Object.entries(Resources)
  .filter(([, value]) => typeof value === "object" && value !== null && Resource.TypeId in value)
  .map(([exportName, value]) => [exportName, value as Resource.Resource<unknown, unknown, string>] as const)

const definitionOf = (r: Resource.Info): string => {
  const found = Object.entries(spec.definitions).find(([, d]) =>
    (d["x-kubernetes-group-version-kind"] ?? []).some((g) =>
      g.group === r.group && g.version === r.version && g.kind === r.kind
    )
  )
  if (found === undefined) throw new Error(`no definition for ${r.apiVersion} ${r.kind}`)
  return found[0]
}

/** What the spec's paths say about a resource: scope, subresources, verbs. */
const pathsOf = (r: Resource.Info) => {
  const prefix = r.group === "" ? `/api/${r.version}/` : `/apis/${r.group}/${r.version}/`
  const subresources = new Set<string>()
  let namespaced = false
  const verbs = new Set<string>()
  for (const [p, item] of Object.entries(spec.paths)) {
    if (!p.startsWith(prefix)) continue
    const rest = p.slice(prefix.length)
    const m = /^(namespaces\/\{namespace\}\/)?([^/]+)(?:\/\{name\}(?:\/([^/]+))?)?/.exec(rest)
    if (m === null || m[2] !== r.plural || rest.startsWith("watch/")) continue
    if (m[1] !== undefined) namespaced = true
    if (m[3] !== undefined) subresources.add(m[3])
    else {
      for (const op of Object.values(item as Record<string, { "x-kubernetes-action"?: string }>)) {
        if (typeof op === "object" && op["x-kubernetes-action"] !== undefined) verbs.add(op["x-kubernetes-action"])
      }
    }
  }
  return { namespaced, subresources, verbs }
}

/** Every field of `sent` is in `got` with the same value (`got` may have more). */
const missing = (sent: unknown, got: unknown, path = ""): Array<string> => {
  if (Array.isArray(sent)) {
    if (!Array.isArray(got) || got.length !== sent.length) return [path]
    return sent.flatMap((s, i) => missing(s, got[i], `${path}[${i}]`))
  }
  if (typeof sent === "object" && sent !== null) {
    if (typeof got !== "object" || got === null) return [path]
    return Object.entries(sent).flatMap(([k, v]) => missing(v, (got as Record<string, unknown>)[k], `${path}.${k}`))
  }
  return sent === got ? [] : [path]
}

const serverOwned = ["uid", "resourceVersion", "creationTimestamp", "generation", "managedFields", "selfLink"]

const comparable = (resource: Resource.Info, object: Record<string, unknown>, hasStatus: boolean) => {
  const copy = JSON.parse(JSON.stringify(object)) as Record<string, unknown>
  const metadata = copy.metadata as Record<string, unknown>
  for (const key of serverOwned) delete metadata[key]
  // the status of a kind with a status subresource is written through it, not by a create
  if (hasStatus) delete copy.status
  // write-only: the server merges stringData into data
  if (resource.kind === "Secret" && resource.group === "") delete copy.stringData
  // an aggregated ClusterRole's rules are its aggregation controller's to write (the union of the roles it selects)
  if (resource.kind === "ClusterRole" && copy.aggregationRule !== undefined) delete copy.rules
  return copy
}

/**
 * A Pod as the API server's admission plugins leave it: no token volume to mount (its lists
 * would grow), the not-ready and unreachable tolerations there already.
 */
const withAdmissionDone = (pod: Record<string, unknown>): void => {
  const spec = pod.spec as Record<string, unknown>
  spec.automountServiceAccountToken = false
  spec.tolerations = [
    ...(spec.tolerations as Array<unknown>),
    ...["node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"].map((key) => ({
      key,
      operator: "Exists",
      effect: "NoExecute",
      tolerationSeconds: 300
    }))
  ]
}

describe("every generated kind", () => {
  it("there are Resources for every kind the spec serves, each described as its paths say", () => {
    assert.isAbove(resources.length, 90)
    const byApiVersionKind = new Set(resources.map(([, r]) => `${r.apiVersion}/${r.kind}`))
    for (const name of ["StatefulSets", "Ingresses", "Leases", "CustomResourceDefinitions", "HorizontalPodAutoscalers",
      "Nodes", "CronJobs", "RoleBindings", "ClusterRoles", "NetworkPolicies", "PersistentVolumeClaims", "Pods"]) {
      assert.isTrue(name in Resources, name)
    }
    for (const apiVersionKind of ["autoscaling/v1/HorizontalPodAutoscaler", "autoscaling/v2/HorizontalPodAutoscaler",
      "events.k8s.io/v1/Event", "v1/Event", "coordination.k8s.io/v1/Lease"]) {
      assert.isTrue(byApiVersionKind.has(apiVersionKind), apiVersionKind)
    }
    for (const [name, r] of resources) {
      const fromPaths = pathsOf(r)
      assert.strictEqual(r.namespaced, fromPaths.namespaced, `${name} namespaced`)
      assert.deepStrictEqual([...r.subresources].sort(), [...fromPaths.subresources].sort(), `${name} subresources`)
    }
    assert.deepStrictEqual([...Resources.Pods.subresources], [
      "attach", "binding", "ephemeralcontainers", "eviction", "exec", "log", "portforward", "proxy", "resize", "status"
    ])
    assert.deepStrictEqual([...Resources.Deployments.subresources], ["scale", "status"])
  })

  it("names follow the rule: the preferred version plain, others with a suffix", () => {
    assert.strictEqual(Resources.HorizontalPodAutoscalers.apiVersion, "autoscaling/v2")
    assert.strictEqual(Resources.HorizontalPodAutoscalersV1.apiVersion, "autoscaling/v1")
    assert.strictEqual(Resources.Events.apiVersion, "v1")
    assert.strictEqual(Resources.EventsEventsV1.apiVersion, "events.k8s.io/v1")
    assert.strictEqual(Resources.EndpointsResource.plural, "endpoints")
    assert.strictEqual(Resources.Ingresses.plural, "ingresses")
    assert.strictEqual(Resources.NetworkPolicies.plural, "networkpolicies")
  })

  for (const [name, resource] of resources) {
    it(`${name}: an object with every field set decodes, and encodes back to the identical JSON`, () => {
      const object = fullObject(resource, definitionOf(resource), "every-field")
      const codec = codecFor(resource.schema)
      const decoded = codec.decode(object, name)
      assert.isTrue(Result.isSuccess(decoded), Result.isFailure(decoded) ? decoded.failure.message : "")
      const encoded = codec.encode(Result.getOrThrow(decoded), name)
      assert.strictEqual(JSON.stringify(Result.getOrThrow(encoded)), JSON.stringify(object))
      // and so does the same object with a field no version of the spec has, at every depth
      const extended = { ...object, future: { field: 1 }, metadata: { ...object.metadata as object, future: "x" } }
      assert.deepStrictEqual(Result.getOrThrow(codec.decode(extended, name)), extended)
    })
  }

  // made-up values in every field (enums no list knows): a fake that does not validate, as no cluster would take them;
  // its controllers on, which leave alone what they cannot use (a selector with an unknown operator)
  const kinds = FakeCluster.layer({ validation: false })
  it.layer(kinds, { timeout: 120_000 })((it) => {
    for (const [name, resource] of resources) {
      const { verbs } = pathsOf(resource)
      if (!verbs.has("post") || !verbs.has("get")) continue
      // CRDs register a kind of their own: they are created below with a valid group and names
      if (resource.kind === "CustomResourceDefinition") continue
      it.effect(`${name}: FakeCluster create then get keeps every field that was sent`, () =>
        Effect.gen(function*() {
          const object = fullObject(resource, definitionOf(resource), `every-${name.toLowerCase()}`)
          if (name === "Pods") withAdmissionDone(object)
          const api = Kube.api(resource, resource.namespaced ? { namespace: "default" } : {})
          yield* api.create(object)
          const got = Option.getOrThrow(yield* api.get(`every-${name.toLowerCase()}`)) as Record<string, unknown>
          const hasStatus = resource.subresources.includes("status")
          assert.deepStrictEqual(missing(comparable(resource, object, hasStatus), comparable(resource, got, hasStatus)), [])
        }))
    }

    it.effect("CustomResourceDefinitions: a CRD with every field set (valid names) round trips through FakeCluster", () =>
      Effect.gen(function*() {
        const object = fullCrd()
        const api = Kube.api(Resources.CustomResourceDefinitions)
        yield* api.create(object as unknown as Resources.CustomResourceDefinition)
        const got = Option.getOrThrow(yield* api.get("widgets.example.com")) as unknown as Record<string, unknown>
        assert.deepStrictEqual(missing(comparable(crds, object, true), comparable(crds, got, true)), [])
      }))
  })
})

/**
 * The made-up objects as a controller can act on them: selectors of operators it knows
 * (`LabelSelectorAsSelector` takes them), pod templates those selectors select, pods the
 * scheduler binds (no node, scheduler nor gates of their own), nothing paused or suspended.
 */
const actionable = (value: unknown): void => {
  if (Array.isArray(value)) return value.forEach(actionable)
  if (typeof value !== "object" || value === null) return
  const o = value as Record<string, unknown>
  for (const e of Array.isArray(o.matchExpressions) ? o.matchExpressions as Array<Record<string, unknown>> : []) {
    if ("key" in e) Object.assign(e, { operator: "In", values: ["future-values"] })
  }
  if ("containers" in o) {
    // no node has the made-up labels: the scheduler leaves such a pod Unschedulable, as kube-scheduler does
    delete o.nodeSelector
    delete o.nodeName
    delete o.schedulerName
    delete o.schedulingGates
  }
  const spec = o.spec as Record<string, unknown> | undefined
  if (typeof o.metadata === "object" && o.metadata !== null && typeof spec === "object" && "containers" in spec) {
    const labels = { "key-matchLabels": "future-matchLabels", "future-key": "future-values" }
    ;(o.metadata as Record<string, unknown>).labels = labels
  }
  if ("paused" in o) o.paused = false
  if ("suspend" in o) o.suspend = false
  for (const v of Object.values(o)) actionable(v)
}

/** resourceVersion by object, of every kind the fake serves. */
const versions = (control: FakeCluster.Control): Map<string, string> => {
  const out = new Map<string, string>()
  for (const [, r] of resources) {
    if (!pathsOf(r).verbs.has("list")) continue
    for (const o of control.list(r.apiVersion, r.plural) as ReadonlyArray<Record<string, any>>) {
      out.set(`${r.apiVersion}/${r.kind} ${o.metadata.namespace ?? ""}/${o.metadata.name}`, o.metadata.resourceVersion)
    }
  }
  return out
}

// the controllers and the kubelet on the made-up objects of every kind at once, on the TestClock: after they have
// acted (every deadline of the objects is seconds), nothing more is written, as kube-controller-manager writes nothing
// when nothing changed
describe("the controllers settle on objects of every kind with made-up values", () => {
  for (const [variant, prepare] of [["as made up", () => {}], ["made actionable", actionable]] as const) {
    it.effect(`${variant}: no write after the controllers have acted`, () =>
      Effect.gen(function*() {
        const control = yield* FakeCluster.FakeCluster
        for (const [name, resource] of resources) {
          const { verbs } = pathsOf(resource)
          if (!verbs.has("post") || !verbs.has("get") || resource.kind === "CustomResourceDefinition") continue
          const object = fullObject(resource, definitionOf(resource), `every-${name.toLowerCase()}`)
          prepare(object)
          yield* Kube.api(resource, resource.namespaced ? { namespace: "default" } : {}).create(object)
        }
        const crd = fullCrd()
        prepare(crd)
        const crdApi = Kube.api(Resources.CustomResourceDefinitions)
        yield* crdApi.create(crd as unknown as Resources.CustomResourceDefinition)
        yield* TestClock.adjust("10 minutes")
        const acted = versions(control)
        const rv = control.resourceVersion()
        for (let i = 0; i < 6; i++) yield* TestClock.adjust("10 minutes")
        const after = versions(control)
        const changed = [...after].filter(([key, v]) => acted.get(key) !== v).map(([key]) => key)
        const gone = [...acted.keys()].filter((key) => !after.has(key))
        assert.deepStrictEqual({ changed, gone }, { changed: [], gone: [] })
        assert.strictEqual(control.resourceVersion(), rv)
        // and they did act: pods ran, the workloads' statuses were written
        if (variant === "made actionable") {
          const running = (control.list("v1", "pods", "default") as ReadonlyArray<Record<string, any>>)
            .filter((p) => p.status?.phase === "Running")
          assert.isAbove(running.length, 3)
        }
      }).pipe(Effect.provide(FakeCluster.layer({ validation: false }))), { timeout: 60_000 })
  }
})

describe("open enums", () => {
  const objects = benchPods(1000, "default").map((pod, i) =>
    i === 617 ? { ...pod, status: { ...pod.status as object, phase: "Hibernating" } } : pod
  )
  it.layer(FakeCluster.layer({ objects }), { timeout: 60_000 })((it) => {
    it.effect("a list of 1,000 pods where one has a phase this client does not know lists all 1,000", () =>
      Effect.gen(function*() {
        const listed = yield* Kube.api(Resources.Pods, { namespace: "default" }).list()
        assert.strictEqual(listed.items.length, 1000)
        const phases = listed.items.map((p) => p.status?.phase)
        assert.strictEqual(phases.filter((p) => p === "Hibernating").length, 1)
      }))
  })

  it("unknown values of every kind of enum decode and are kept", () => {
    const service = {
      spec: {
        type: "FutureBalancer",
        ipFamilies: ["IPv7"],
        ipFamilyPolicy: "AnyStack",
        ports: [{ port: 1, protocol: "QUIC", targetPort: "web" }]
      }
    }
    assert.deepStrictEqual(Result.getOrThrow(codecFor(Resources.Service).decode(service, "svc")), service)
    const hpa = { spec: { scaleTargetRef: { kind: "X", name: "y" }, maxReplicas: 2, metrics: [{ type: "Quantum" }] } }
    assert.deepStrictEqual(Result.getOrThrow(codecFor(Resources.HorizontalPodAutoscaler).decode(hpa, "hpa")), hpa)
    const node = { status: { conditions: [{ type: "Ready", status: "Perhaps" }], addresses: [{ type: "Quantum", address: "x" }] } }
    assert.deepStrictEqual(Result.getOrThrow(codecFor(Resources.Node).decode(node, "node")), node)
  })
})

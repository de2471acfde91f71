/**
 * The fake's object lifecycle where kube-apiserver's registries decide it per kind (the conformance suite compares the
 * same against a real control plane): a typed list's items without apiVersion and kind, metadata.generation by each
 * kind's rule, the default propagation of a DELETE (ReplicationController and batch/v1 Job orphan, an Event takes
 * none), the PersistentVolumeClaim and PersistentVolume protection finalizers and their controllers, a
 * PersistentVolume's lastPhaseTransitionTime.
 */
import { assert, describe, it } from "@effect/vitest"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as TestClock from "effect/testing/TestClock"
import { Effect } from "effect"
import { FakeCluster } from "@effect-kube/testing"
import * as Kube from "../../packages/effect-kube/src/Kube.js"
import { ConfigMaps } from "../../packages/effect-kube/src/resources/index.js"

interface Answer {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  readonly body: any
}

const call = (method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE", path: string, body?: unknown, contentType?: string) =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    let request = HttpClientRequest.make(method)(`http://fake-cluster.local${path}`)
    if (body !== undefined) {
      request = HttpClientRequest.bodyText(request, JSON.stringify(body), contentType ?? "application/json")
    }
    const response = yield* client.execute(request)
    const text = yield* response.text
    return { status: response.status, headers: response.headers, body: text === "" ? undefined : JSON.parse(text) } as Answer
  }).pipe(Effect.scoped)

const merge = (path: string, body: unknown) => call("PATCH", path, body, "application/merge-patch+json")

const template = { spec: { restartPolicy: "Never", containers: [{ name: "c", image: "busybox" }] } }
const deployments = "/apis/apps/v1/namespaces/default/deployments"
const deployment = (name: string) => ({
  metadata: { name },
  spec: {
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: "c", image: "busybox" }] } }
  }
})

describe("lists", () => {
  it.effect("a built-in list's items leave out apiVersion and kind; the client still knows their kind", () =>
    Effect.gen(function*() {
      assert.strictEqual((yield* call("POST", "/api/v1/namespaces/default/configmaps", { metadata: { name: "a" } })).status, 201)
      const list = yield* call("GET", "/api/v1/namespaces/default/configmaps?fieldSelector=metadata.name%3Da")
      assert.strictEqual(list.body.kind, "ConfigMapList")
      assert.deepStrictEqual(Object.keys(list.body.items[0]), ["metadata"])
      const typed = yield* Kube.api(ConfigMaps, { namespace: "default" }).list({ fieldSelector: "metadata.name=a" })
      assert.strictEqual(typed.items[0]?.kind, "ConfigMap")
      assert.strictEqual(typed.items[0]?.apiVersion, "v1")
      // a Table's rows carry the whole object, converted, with its kind
      const table = yield* Effect.gen(function*() {
        const client = yield* HttpClient.HttpClient
        const response = yield* client.execute(HttpClientRequest.get(
          "http://fake-cluster.local/api/v1/namespaces/default/configmaps?fieldSelector=metadata.name%3Da&includeObject=Object"
        ).pipe(HttpClientRequest.setHeader("accept", "application/json;as=Table;v=v1;g=meta.k8s.io")))
        return JSON.parse(yield* response.text)
      }).pipe(Effect.scoped)
      assert.strictEqual(table.rows[0].object.kind, "ConfigMap")
    }).pipe(Effect.provide(FakeCluster.layer({ controllers: false }))))
})

describe("metadata.generation", () => {
  it.effect("an update that sends the spec without its defaults keeps it; a Deployment's annotations bump it", () =>
    Effect.gen(function*() {
      const created = yield* call("POST", deployments, deployment("web"))
      assert.strictEqual(created.body.metadata.generation, 1)
      const put = yield* call("PUT", `${deployments}/web`, {
        ...deployment("web"), metadata: { name: "web", resourceVersion: created.body.metadata.resourceVersion, labels: { a: "b" } }
      })
      assert.strictEqual(put.status, 200)
      assert.strictEqual(put.body.metadata.generation, 1)
      const annotated = yield* merge(`${deployments}/web`, { metadata: { annotations: { note: "x" } } })
      assert.strictEqual(annotated.body.metadata.generation, 2)
      const scaled = yield* merge(`${deployments}/web`, { spec: { replicas: 3 } })
      assert.strictEqual(scaled.body.metadata.generation, 3)
    }).pipe(Effect.provide(FakeCluster.layer({ controllers: false }))))

  it.effect("an EndpointSlice's labels bump it, a PriorityClass's value never, a HorizontalPodAutoscaler has none", () =>
    Effect.gen(function*() {
      const slices = "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices"
      yield* call("POST", slices, { metadata: { name: "s" }, addressType: "IPv4", endpoints: [], ports: [] })
      assert.strictEqual((yield* merge(`${slices}/s`, { metadata: { labels: { a: "b" } } })).body.metadata.generation, 2)
      const classes = "/apis/scheduling.k8s.io/v1/priorityclasses"
      yield* call("POST", classes, { metadata: { name: "p" }, value: 10 })
      assert.strictEqual((yield* merge(`${classes}/p`, { description: "changed" })).body.metadata.generation, 1)
      const hpas = "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers"
      const hpa = yield* call("POST", hpas, {
        metadata: { name: "h" }, spec: { scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: "web" }, maxReplicas: 3 }
      })
      assert.strictEqual(hpa.status, 201)
      assert.isUndefined(hpa.body.metadata.generation)
      assert.isUndefined((yield* merge(`${hpas}/h`, { spec: { maxReplicas: 4 } })).body.metadata.generation)
    }).pipe(Effect.provide(FakeCluster.layer({ controllers: false }))))
})

describe("default propagation", () => {
  it.effect("a Job deleted without a policy orphans its pods, with the server's warning, even on a 404", () =>
    Effect.gen(function*() {
      const jobs = "/apis/batch/v1/namespaces/default/jobs"
      yield* call("POST", jobs, { metadata: { name: "j" }, spec: { template } })
      yield* TestClock.adjust("1 second")
      const pods = yield* call("GET", "/api/v1/namespaces/default/pods?labelSelector=job-name%3Dj")
      assert.strictEqual(pods.body.items.length, 1)
      const deleted = yield* call("DELETE", `${jobs}/j`)
      assert.strictEqual(deleted.status, 200)
      assert.deepStrictEqual(deleted.body.metadata.finalizers, ["orphan"])
      assert.strictEqual(deleted.body.metadata.generation, 2)
      assert.include(deleted.headers["warning"], "child pods are preserved by default when jobs are deleted")
      yield* TestClock.adjust("1 second")
      assert.strictEqual((yield* call("GET", `${jobs}/j`)).status, 404)
      const left = yield* call("GET", "/api/v1/namespaces/default/pods?labelSelector=job-name%3Dj")
      assert.strictEqual(left.body.items.length, 1)
      assert.isUndefined(left.body.items[0].metadata.ownerReferences)
      const missing = yield* call("DELETE", `${jobs}/nothing`)
      assert.strictEqual(missing.status, 404)
      assert.include(missing.headers["warning"], "propagationPolicy=Background")
      const background = yield* call("DELETE", `${jobs}/nothing`, { propagationPolicy: "Background" })
      assert.isUndefined(background.headers["warning"])
    }).pipe(Effect.provide(FakeCluster.layer({ controllers: { kubelet: false } }))))

  it.effect("a ReplicationController orphans by default; an Event deleted with Orphan is gone at once", () =>
    Effect.gen(function*() {
      const rcs = "/api/v1/namespaces/default/replicationcontrollers"
      yield* call("POST", rcs, { metadata: { name: "rc" }, spec: { replicas: 0, selector: { app: "rc" }, template: { metadata: { labels: { app: "rc" } }, ...template } } })
      const deleted = yield* call("DELETE", `${rcs}/rc`)
      assert.deepStrictEqual(deleted.body.metadata.finalizers, ["orphan"])
      assert.isUndefined(deleted.headers["warning"])
      const events = "/apis/events.k8s.io/v1/namespaces/default/events"
      yield* call("POST", events, {
        metadata: { name: "e" }, eventTime: "2026-01-01T00:00:00.000000Z", reportingController: "c", reportingInstance: "i",
        action: "A", reason: "R", type: "Normal", regarding: { kind: "Pod", name: "p", namespace: "default" }
      })
      const gone = yield* call("DELETE", `${events}/e`, { propagationPolicy: "Orphan" })
      assert.strictEqual(gone.body.kind, "Status")
      assert.strictEqual((yield* call("GET", `${events}/e`)).status, 404)
    }).pipe(Effect.provide(FakeCluster.layer({ controllers: false }))))
})

describe("storage protection", () => {
  const claims = "/api/v1/namespaces/default/persistentvolumeclaims"
  const claim = (name: string) => ({
    metadata: { name }, spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "1Gi" } }, storageClassName: "none" }
  })

  it.effect("a claim gets pvc-protection, and a deleted one stays terminating while a running pod uses it", () =>
    Effect.gen(function*() {
      const created = yield* call("POST", claims, claim("data"))
      assert.deepStrictEqual(created.body.metadata.finalizers, ["kubernetes.io/pvc-protection"])
      yield* call("POST", "/api/v1/namespaces/default/pods", {
        metadata: { name: "user" },
        spec: {
          nodeName: "fake-node", containers: [{ name: "c", image: "busybox" }],
          volumes: [{ name: "v", persistentVolumeClaim: { claimName: "data" } }]
        }
      })
      const deleted = yield* call("DELETE", `${claims}/data`)
      assert.isString(deleted.body.metadata.deletionTimestamp)
      yield* TestClock.adjust("1 second")
      assert.strictEqual((yield* call("GET", `${claims}/data`)).status, 200, "the pod still uses it")
      yield* call("DELETE", "/api/v1/namespaces/default/pods/user", { gracePeriodSeconds: 0 })
      yield* TestClock.adjust("1 second")
      assert.strictEqual((yield* call("GET", `${claims}/data`)).status, 404)
    }).pipe(Effect.provide(FakeCluster.layer({ controllers: { kubelet: false, scheduler: false } }))))

  it.effect("a volume gets pv-protection and lastPhaseTransitionTime; deleted, it goes once not Bound", () =>
    Effect.gen(function*() {
      const volumes = "/api/v1/persistentvolumes"
      const created = yield* call("POST", volumes, {
        metadata: { name: "pv" }, spec: { capacity: { storage: "1Gi" }, accessModes: ["ReadWriteOnce"], hostPath: { path: "/tmp/pv" } }
      })
      assert.deepStrictEqual(created.body.metadata.finalizers, ["kubernetes.io/pv-protection"])
      assert.strictEqual(created.body.status.phase, "Pending")
      assert.isString(created.body.status.lastPhaseTransitionTime)
      yield* TestClock.adjust("10 seconds")
      const bound = yield* merge(`${volumes}/pv/status`, { status: { phase: "Bound" } })
      assert.notStrictEqual(bound.body.status.lastPhaseTransitionTime, created.body.status.lastPhaseTransitionTime)
      yield* call("DELETE", `${volumes}/pv`)
      yield* TestClock.adjust("1 second")
      assert.strictEqual((yield* call("GET", `${volumes}/pv`)).status, 200, "Bound: still protected")
      yield* merge(`${volumes}/pv/status`, { status: { phase: "Released" } })
      yield* TestClock.adjust("1 second")
      assert.strictEqual((yield* call("GET", `${volumes}/pv`)).status, 404)
    }).pipe(Effect.provide(FakeCluster.layer({ controllers: { kubelet: false } }))))

  it.effect("without the protection controllers a claim gets no finalizer", () =>
    Effect.gen(function*() {
      const created = yield* call("POST", claims, claim("bare"))
      assert.isUndefined(created.body.metadata.finalizers)
    }).pipe(Effect.provide(FakeCluster.layer({ controllers: { storageProtection: false } }))))
})

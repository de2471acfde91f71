/**
 * Discovery picks the resource whose verbs fit (OpenShift's Template is served by the
 * create-only `processedtemplates`, listed first, and by `templates`), and lists the
 * server's version and every resource, against FakeCluster over the real request path.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import * as Discovery from "../packages/effect-kube/src/Discovery.js"
import * as Kube from "../packages/effect-kube/src/Kube.js"
import * as Manifests from "../packages/effect-kube/src/Manifests.js"
import * as RequestPolicy from "../packages/effect-kube/src/RequestPolicy.js"
import { FakeCluster } from "@effect-kube/testing"
import * as Http from "node:http"
import { failureOf } from "./util/failure.js"
import * as Loopback from "./util/loopback.js"

const fake = (options?: FakeCluster.Options) => {
  const cluster = FakeCluster.layer(options)
  return Layer.merge(cluster, Discovery.layer.pipe(Layer.provide(cluster)))
}

const template = {
  apiVersion: "template.openshift.io/v1",
  kind: "Template",
  metadata: { name: "redis-ephemeral", namespace: "default" },
  parameters: [{ name: "NAME", value: "redis" }],
  objects: [{ apiVersion: "v1", kind: "Service", metadata: { name: "${NAME}" }, spec: { ports: [{ port: 6379 }] } }]
}

describe("a kind served by two resources", () => {
  it.effect("the fake lists processedtemplates first, as OpenShift does", () =>
    Effect.gen(function*() {
      const doc = (yield* Kube.request({ method: "GET", path: "/apis/template.openshift.io/v1" })) as {
        resources: ReadonlyArray<{ name: string; kind: string; verbs: ReadonlyArray<string> }>
      }
      const templates = doc.resources.filter((r) => r.kind === "Template")
      assert.deepStrictEqual(templates.map((r) => r.name), ["processedtemplates", "templates"])
      assert.deepStrictEqual(templates[0]!.verbs, ["create"])
    }).pipe(Effect.provide(fake())))

  it.effect("Manifests.apply of a Template stores it in templates (a PATCH there), get and delete find it", () =>
    Effect.gen(function*() {
      const control = yield* FakeCluster.FakeCluster
      const applied = yield* Manifests.apply([template], { fieldManager: "test" })
      assert.strictEqual(applied.length, 1)
      const patches = control.requests().filter((r) => r.method === "PATCH")
      assert.deepStrictEqual(patches.map((r) => r.path), [
        "/apis/template.openshift.io/v1/namespaces/default/templates/redis-ephemeral"
      ])
      assert.isTrue(control.requests().every((r) => !r.path.includes("processedtemplates")))
      const stored = control.get({
        apiVersion: "template.openshift.io/v1",
        kind: "Template",
        namespace: "default",
        name: "redis-ephemeral"
      })
      assert.isDefined(stored)
      const live = yield* Manifests.get([template])
      assert.strictEqual((live[0] as { metadata: { name: string } }).metadata.name, "redis-ephemeral")
      yield* Manifests.delete([template])
      assert.isTrue(control.requests().some((r) =>
        r.method === "DELETE" && r.path === "/apis/template.openshift.io/v1/namespaces/default/templates/redis-ephemeral"
      ))
      assert.isUndefined(control.get({
        apiVersion: "template.openshift.io/v1",
        kind: "Template",
        namespace: "default",
        name: "redis-ephemeral"
      }))
    }).pipe(Effect.provide(fake())))

  it.effect("resolve takes the verbs asked for: create finds processedtemplates; a verb none serves fails", () =>
    Effect.gen(function*() {
      const discovery = yield* Discovery.Discovery
      const stored = yield* discovery.resolve("template.openshift.io/v1", "Template")
      assert.strictEqual(stored.plural, "templates")
      const processing = yield* discovery.resolve("template.openshift.io/v1", "Template", { verbs: ["create"] })
      assert.strictEqual(processing.plural, "processedtemplates")
      const review = yield* discovery.resolve("authorization.k8s.io/v1", "SubjectAccessReview")
      assert.strictEqual(review.plural, "subjectaccessreviews")
      const error = yield* failureOf(discovery.resolve("authorization.k8s.io/v1", "SubjectAccessReview", { verbs: ["get"] }))
      assert.strictEqual(error._tag, "ValidationError")
      assert.include(error.message, "subjectaccessreviews: create")
    }).pipe(Effect.provide(fake())))
})

describe("Discovery.serverVersion and resources", () => {
  it.effect("serverVersion reads /version", () =>
    Effect.gen(function*() {
      const discovery = yield* Discovery.Discovery
      const version = yield* discovery.serverVersion
      assert.strictEqual(version.major, "1")
      assert.match(version.gitVersion, /^v1\./)
    }).pipe(Effect.provide(fake())))

  it.effect("resources lists every group, version, kind, verb, short name, subresource and preferred version", () =>
    Effect.gen(function*() {
      const control = yield* FakeCluster.FakeCluster
      const discovery = yield* Discovery.Discovery
      const { failed, groups, resources } = yield* discovery.resources()
      assert.deepStrictEqual(failed, [])
      const core = groups.find((g) => g.name === "")!
      assert.deepStrictEqual(core.versions, ["v1"])
      const apps = groups.find((g) => g.name === "apps")!
      assert.strictEqual(apps.preferredVersion, "v1")
      const pods = resources.find((r) => r.apiVersion === "v1" && r.plural === "pods")!
      assert.strictEqual(pods.kind, "Pod")
      assert.isTrue(pods.namespaced)
      assert.include(pods.shortNames, "po")
      assert.include(pods.verbs, "watch")
      assert.include(pods.subresources, "log")
      assert.isTrue(pods.preferred)
      assert.isFalse(resources.some((r) => r.plural.includes("/")), "subresources are not resources")
      const deployments = resources.find((r) => r.group === "apps" && r.kind === "Deployment")!
      assert.include(deployments.subresources, "scale")
      assert.include(deployments.shortNames, "deploy")
      const namespaces = resources.find((r) => r.plural === "namespaces")!
      assert.isFalse(namespaces.namespaced)
      // a later resolve uses the documents already read
      const before = control.requests().length
      yield* discovery.resolve("apps/v1", "Deployment")
      assert.strictEqual(control.requests().length, before)
    }).pipe(Effect.provide(fake())))

  it.effect("a group version that answers 503 is reported in failed; others are listed", () =>
    Effect.gen(function*() {
      const control = yield* FakeCluster.FakeCluster
      const discovery = yield* Discovery.Discovery
      control.failNext({ status: 503, count: 10, match: (m, path) => m === "GET" && path === "/apis/batch/v1" })
      const { failed, resources } = yield* discovery.resources()
      assert.deepStrictEqual(failed.map((f) => f.apiVersion), ["batch/v1"])
      assert.isFalse(resources.some((r) => r.group === "batch"))
      assert.isTrue(resources.some((r) => r.kind === "Pod"))
      control.clearFaults()
    }).pipe(
      // a group version's own document is read on a server without aggregated discovery (and for a Stale one)
      Effect.provide(fake({ features: { aggregatedDiscovery: false } })),
      Effect.provide(RequestPolicy.layer({ readRetries: Schedule.recurs(0) }))
    ))

  it.effect("a 403 on the group list fails the whole call with the ApiError", () =>
    Effect.gen(function*() {
      const control = yield* FakeCluster.FakeCluster
      const discovery = yield* Discovery.Discovery
      control.failNext({ status: 403, match: (_m, path) => path === "/apis" })
      const error = yield* failureOf(discovery.resources())
      assert.strictEqual(error._tag === "ApiError" ? error.code : 0, 403)
    }).pipe(Effect.provide(fake())))
})

describe("an aggregated discovery server of the v2beta1 era (kube-apiserver 1.26 to 1.32), on loopback", () => {
  const resource = (resource: string, kind: string, scope: "Namespaced" | "Cluster") => ({
    resource,
    responseKind: { group: "", version: "", kind },
    scope,
    singularResource: resource.slice(0, -1),
    verbs: ["get", "list", "watch"]
  })
  const document = (items: ReadonlyArray<unknown>) =>
    JSON.stringify({ kind: "APIGroupDiscoveryList", apiVersion: "apidiscovery.k8s.io/v2beta1", metadata: {}, items })
  const answer = (res: Http.ServerResponse, status: number, contentType: string, body: string) => {
    res.writeHead(status, { "content-type": contentType })
    res.end(body)
  }
  const beta = "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList"
  /** Answers v2beta1 when the Accept allows it; metrics.k8s.io is Stale and its own document 503. */
  const handler: Http.RequestListener = (req, res) => {
    const accept = req.headers.accept ?? ""
    if (req.url === "/api" && accept.includes("v=v2beta1")) {
      return answer(res, 200, beta, document([{ metadata: {}, versions: [{ version: "v1", resources: [resource("pods", "Pod", "Namespaced")], freshness: "Current" }] }]))
    }
    if (req.url === "/apis" && accept.includes("v=v2beta1")) {
      return answer(res, 200, beta, document([
        { metadata: { name: "apps" }, versions: [{ version: "v1", resources: [resource("deployments", "Deployment", "Namespaced")], freshness: "Current" }] },
        { metadata: { name: "metrics.k8s.io" }, versions: [{ version: "v1beta1", resources: [], freshness: "Stale" }] }
      ]))
    }
    if (req.url === "/apis/metrics.k8s.io/v1beta1") {
      return answer(res, 503, "application/json", JSON.stringify({ kind: "Status", apiVersion: "v1", status: "Failure", code: 503, reason: "ServiceUnavailable", message: "the server is currently unable to handle the request" }))
    }
    answer(res, 404, "text/plain", "404 page not found\n")
  }

  it.live("reads v2beta1 when v2 is not served; a Stale group version is asked for by its own document, and failed", () =>
    Effect.gen(function*() {
      const server = yield* Loopback.serve(handler)
      const program = Effect.gen(function*() {
        const discovery = yield* Discovery.make
        const deployments = yield* discovery.resolve("apps/v1", "Deployment")
        assert.deepInclude(deployments, { plural: "deployments", namespaced: true })
        const { failed, groups, resources } = yield* discovery.resources()
        assert.deepStrictEqual(resources.map((r) => r.apiVersion + " " + r.plural), ["v1 pods", "apps/v1 deployments"])
        assert.deepStrictEqual(groups.map((g) => g.name), ["", "apps", "metrics.k8s.io"])
        assert.deepStrictEqual(failed.map((f) => [f.apiVersion, f.error._tag === "ApiError" ? f.error.code : 0]), [["metrics.k8s.io/v1beta1", 503]])
        const stale = yield* failureOf(discovery.resolve("metrics.k8s.io/v1beta1", "PodMetrics"))
        assert.strictEqual(stale._tag === "ApiError" ? stale.code : 0, 503)
      })
      yield* program.pipe(
        Effect.provide(Loopback.layer(server.url)),
        Effect.provide(RequestPolicy.layer({ readRetries: Schedule.recurs(0) }))
      )
      // resolve: /apis; resources(): both roots afresh (at once) and the Stale group version; then the Stale one again
      assert.deepStrictEqual([...server.requests].sort(), ["GET /api", "GET /apis", "GET /apis", "GET /apis/metrics.k8s.io/v1beta1", "GET /apis/metrics.k8s.io/v1beta1"])
    }))
})

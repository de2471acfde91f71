/**
 * `table` (the server's printer columns and rows, `as=Table;v=v1;g=meta.k8s.io`) and `proxy` (the proxy subresource
 * of pods, services and nodes), against FakeCluster over the real request path.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import * as RequestPolicy from "../packages/effect-kube/src/RequestPolicy.js"
import { ValidationError } from "../packages/effect-kube/src/Errors.js"
import * as Kube from "../packages/effect-kube/src/Kube.js"
import * as Resource from "../packages/effect-kube/src/Resource.js"
import * as Schema from "effect/Schema"
import { Deployments, Nodes, Pods, Services } from "../packages/effect-kube/src/resources/index.js"
import { FakeCluster } from "@effect-kube/testing"
import { failureOf } from "./util/failure.js"

const pods = Kube.api(Pods, { namespace: "default" })
const pod = (name: string) => ({ metadata: { name, labels: { app: "web" } }, spec: { containers: [{ name: "c", image: "nginx" }] } })

describe("table", () => {
  it.effect("a list as a Table: the kind's columns, a row per object, what includeObject asks for", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      yield* pods.create(pod("web-1"))
      yield* pods.create(pod("web-2"))
      const table = yield* pods.table({ labelSelector: "app=web" })
      assert.strictEqual(table.kind, "Table")
      assert.deepStrictEqual(table.columnDefinitions.slice(0, 5).map((c) => c.name), ["Name", "Ready", "Status", "Restarts", "Age"])
      assert.strictEqual(table.columnDefinitions[0]!.format, "name")
      assert.isAbove(table.columnDefinitions.filter((c) => c.priority > 0).length, 0, "the -o wide columns")
      assert.deepStrictEqual(table.rows.map((r) => r.cells[0]), ["web-1", "web-2"])
      // Metadata by default: PartialObjectMetadata
      assert.strictEqual((table.rows[0]!.object as { kind?: string }).kind, "PartialObjectMetadata")
      const whole = yield* pods.table({ includeObject: "Object", limit: 1 })
      assert.strictEqual(whole.rows.length, 1)
      assert.strictEqual((whole.rows[0]!.object as { kind?: string }).kind, "Pod")
      assert.isString(whole.metadata.continue)
      const none = yield* pods.table({ includeObject: "None" })
      assert.isUndefined(none.rows[0]!.object)
      const one = yield* pods.table({ name: "web-2" })
      assert.deepStrictEqual(one.rows.map((r) => r.cells[0]), ["web-2"])
      const last = cluster.requests().at(-1)!
      assert.strictEqual(last.path, "/api/v1/namespaces/default/pods/web-2")
      const deployments = yield* Kube.api(Deployments).table({ allNamespaces: true })
      assert.deepStrictEqual(deployments.columnDefinitions.slice(0, 4).map((c) => c.name), ["Name", "Ready", "Up-to-date", "Available"])
      assert.deepStrictEqual(deployments.rows, [])
    }).pipe(Effect.provide(FakeCluster.layer())))

  it.effect("a custom resource's additionalPrinterColumns", () =>
    Effect.gen(function*() {
      const crd = {
        apiVersion: "apiextensions.k8s.io/v1",
        kind: "CustomResourceDefinition",
        metadata: { name: "crontabs.stable.example.com" },
        spec: {
          group: "stable.example.com",
          scope: "Namespaced",
          names: { plural: "crontabs", singular: "crontab", kind: "CronTab" },
          versions: [{
            name: "v1",
            served: true,
            storage: true,
            schema: { openAPIV3Schema: { type: "object", properties: { spec: { type: "object", properties: { cronSpec: { type: "string" }, replicas: { type: "integer" } } } } } },
            additionalPrinterColumns: [
              { name: "Spec", type: "string", jsonPath: ".spec.cronSpec" },
              { name: "Replicas", type: "integer", jsonPath: ".spec.replicas", priority: 1 }
            ]
          }]
        }
      }
      yield* Kube.request({ method: "POST", path: "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", body: crd })
      const crontabs = Kube.api(Resource.make({ apiVersion: "stable.example.com/v1", kind: "CronTab", plural: "crontabs", namespaced: true, schema: Schema.Unknown }), { namespace: "default" })
      yield* crontabs.create({ apiVersion: "stable.example.com/v1", kind: "CronTab", metadata: { name: "nightly" }, spec: { cronSpec: "0 3 * * *", replicas: 2 } })
      const table = yield* crontabs.table()
      assert.deepStrictEqual(table.columnDefinitions.map((c) => [c.name, c.type, c.priority]), [
        ["Name", "string", 0],
        ["Spec", "string", 0],
        ["Replicas", "integer", 1]
      ])
      assert.deepStrictEqual(table.rows[0]!.cells.slice(0, 3), ["nightly", "0 3 * * *", 2])
    }).pipe(Effect.provide(FakeCluster.layer())))

  it.effect("bad options are refused before a request", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      const include = yield* failureOf(pods.table({ includeObject: "All" as "None" }))
      assert.instanceOf(include, ValidationError)
      assert.match(include.message, /includeObject: must be "None", "Metadata" or "Object"/)
      assert.instanceOf(yield* failureOf(pods.table({ limit: -1 })), ValidationError)
      assert.instanceOf(yield* failureOf(pods.table({ name: "../x" })), ValidationError)
      assert.deepStrictEqual(cluster.requests(), [])
    }).pipe(Effect.provide(FakeCluster.layer())))
})

describe("proxy", () => {
  it.effect("a request to a pod, a service and a node through the API server's proxy, with method, path and body", () =>
    Effect.gen(function*() {
      yield* pods.create(pod("web"))
      yield* Kube.api(Services, { namespace: "default" }).create({ metadata: { name: "web" }, spec: { ports: [{ name: "http", port: 80 }] } })
      yield* Kube.api(Nodes).create({ metadata: { name: "node-1" } })
      const answer = yield* pods.proxy("web", { port: 8080, path: "/api/items", method: "POST", body: "hello", query: { q: "1" } })
      assert.strictEqual(answer.status, 201)
      assert.strictEqual(answer.body, "pods web 8080 POST /api/items q=1 hello")
      assert.strictEqual(answer.headers["x-seen"], "yes")
      const service = yield* Kube.api(Services, { namespace: "default" }).proxy("web", { port: "http", scheme: "https", path: "/healthz" })
      assert.strictEqual(service.body, "services web http GET /healthz  ")
      const node = yield* Kube.api(Nodes).proxy("node-1", { port: 10250, path: "/stats/summary" })
      assert.strictEqual(node.body, "nodes node-1 10250 GET /stats/summary  ")
    }).pipe(Effect.provide(FakeCluster.layer({
      proxy: (request) => ({
        status: request.method === "POST" ? 201 : 200,
        headers: { "x-seen": "yes" },
        body: `${request.resource} ${request.object.metadata.name} ${request.port} ${request.method} ${request.path} ${request.query} ${request.body}`
      })
    }))))

  it.effect("a missing object is a 404, nothing listening a 503 (an ApiError); bad ports and paths are refused unsent", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      const services = Kube.api(Services, { namespace: "default" })
      const missing = yield* failureOf(pods.proxy("absent", { port: 80 }))
      assert.strictEqual(missing._tag === "ApiError" ? missing.code : 0, 404)
      yield* services.create({ metadata: { name: "web" }, spec: { ports: [{ port: 80 }] } })
      // as the API server: a service without Endpoints is "not found", one whose endpoints are not ready a 503
      const noEndpoints = yield* failureOf(services.proxy("web", { port: 80 }))
      assert.strictEqual(noEndpoints._tag === "ApiError" ? noEndpoints.code : 0, 404)
      assert.match(noEndpoints.message, /services "web" not found/)
      yield* Kube.request({
        method: "POST",
        path: "/api/v1/namespaces/default/endpoints",
        body: { metadata: { name: "web" }, subsets: [{ notReadyAddresses: [{ ip: "192.0.2.1" }], ports: [{ port: 80 }] }] }
      })
      const unavailable = yield* failureOf(services.proxy("web", { port: 80 }))
      assert.strictEqual(unavailable._tag === "ApiError" ? unavailable.code : 0, 503)
      assert.match(unavailable.message, /no endpoints available for service "web:80"/)
      const before = cluster.requests().length
      for (const [options, message] of [
        [{ port: 70000 }, /port: must be a port number \(1 to 65535\) or a port's name/],
        [{ port: "no spaces" }, /port: must be a port number/],
        [{ path: "healthz" }, /path: must start with \//],
        [{ path: "/../secrets" }, /must be a plain path without a query, fragment, spaces or "\.\."/],
        [{ path: "/a?b=c" }, /give the query as `query`/],
        [{ method: "GET", body: "x" }, /a GET request takes no body/]
      ] as const) {
        const error = yield* failureOf(services.proxy("web", options))
        assert.instanceOf(error, ValidationError)
        assert.match(error.message, message)
        assert.match(error.message, /^proxy to Service default\/web/)
      }
      assert.strictEqual(cluster.requests().length, before)
    }).pipe(
      Effect.provide(FakeCluster.layer()),
      // a GET through the proxy is a read: a 503 would be tried again
      Effect.provide(RequestPolicy.layer({ readRetries: Schedule.recurs(0) }))
    ))
})

/**
 * Typed Tables and the proxy subresource against the real kube-apiserver v1.35: `table` decodes the server's own
 * printer columns and rows (a built-in kind's, and a CRD's additionalPrinterColumns), with the same answers from the
 * fake; `proxy` reaches a pod's HTTP server through the API server (the pod's IP set to this machine's, where the test
 * listens), and the server's refusals for a service without endpoints and a node on loopback are typed ApiErrors.
 */
import { assert, it } from "@effect/vitest"
import { Effect, Layer, Option, Schedule, Schema } from "effect"
import * as Http from "node:http"
import type * as Net from "node:net"
import * as Os from "node:os"
import { FakeCluster } from "@effect-kube/testing"
import { CustomResourceDefinitions, Kube, Nodes, Patch, Pods, RequestPolicy, Resource, Services } from "./lib.js"
import { layer, testNamespace, uniqueName } from "./support.js"

/** This machine's first non-loopback IPv4 address: the API server refuses to proxy to loopback. */
const outsideAddress = (): string | undefined =>
  Object.values(Os.networkInterfaces()).flat().find((a) => a !== undefined && a.family === "IPv4" && !a.internal)?.address

/** An HTTP server on every address for the scope, answering what it was asked. */
const listen = Effect.acquireRelease(
  Effect.callback<Http.Server>((resume) => {
    const server = Http.createServer((req, res) => {
      let body = ""
      req.on("data", (chunk) => (body += chunk))
      req.on("end", () => {
        res.writeHead(req.method === "POST" ? 201 : 200, { "content-type": "text/plain", "x-seen": "yes" })
        res.end(`${req.method} ${req.url} ${body}`)
      })
    })
    server.listen(0, "0.0.0.0", () => resume(Effect.succeed(server)))
  }),
  (server) =>
    Effect.callback<void>((resume) => {
      server.close(() => resume(Effect.void))
    })
)

const crd = (group: string) => ({
  apiVersion: "apiextensions.k8s.io/v1" as const,
  kind: "CustomResourceDefinition" as const,
  metadata: { name: `gadgets.${group}` },
  spec: {
    group,
    scope: "Namespaced" as const,
    names: { plural: "gadgets", singular: "gadget", kind: "Gadget" },
    versions: [{
      name: "v1",
      served: true,
      storage: true,
      schema: {
        openAPIV3Schema: {
          type: "object",
          properties: { spec: { type: "object", properties: { size: { type: "string" }, count: { type: "integer" } } } }
        }
      },
      additionalPrinterColumns: [
        { name: "Size", type: "string", jsonPath: ".spec.size" },
        { name: "Count", type: "integer", jsonPath: ".spec.count", priority: 1 },
        { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" }
      ]
    }]
  }
})

it.layer(layer, { excludeTestServices: true, timeout: "90 seconds" })("tables and proxy", (it) => {
  it.effect("table: a built-in kind's and a CRD's columns and rows, as the fake prints them too", () =>
    Effect.gen(function*() {
      const ns = yield* testNamespace("tables")
      const pods = Kube.api(Pods, { namespace: ns })
      yield* pods.create({ metadata: { name: "web", labels: { app: "web" } }, spec: { containers: [{ name: "c", image: "busybox:1.36" }] } })
      const real = yield* pods.table({ labelSelector: "app=web", includeObject: "None" })
      assert.deepStrictEqual(real.columnDefinitions.slice(0, 5).map((c) => c.name), ["Name", "Ready", "Status", "Restarts", "Age"])
      assert.strictEqual(real.columnDefinitions[0]!.format, "name")
      assert.deepStrictEqual(real.rows.map((r) => r.cells[0]), ["web"])
      assert.isUndefined(real.rows[0]!.object)
      const whole = yield* pods.table({ name: "web", includeObject: "Object" })
      assert.strictEqual((whole.rows[0]!.object as { kind?: string }).kind, "Pod")

      const group = `${uniqueName("tbl")}.example.com`
      const crds = Kube.api(CustomResourceDefinitions)
      yield* Effect.acquireRelease(crds.create(crd(group)), () => Effect.ignore(crds.delete(`gadgets.${group}`)))
      const gadgets = Kube.api(Resource.make({ apiVersion: `${group}/v1`, kind: "Gadget", plural: "gadgets", namespaced: true, schema: Schema.Unknown }), { namespace: ns })
      const gadget = { apiVersion: `${group}/v1`, kind: "Gadget", metadata: { name: "g1" }, spec: { size: "large", count: 3 } }
      // the CRD serves a moment after its create
      yield* gadgets.create(gadget).pipe(Effect.retry({ schedule: Schedule.spaced("200 millis"), times: 50 }))
      const realCustom = yield* gadgets.table()
      const columns = (t: Kube.Table) => t.columnDefinitions.map((c) => [c.name, c.type, c.priority])
      assert.deepStrictEqual(columns(realCustom), [["Name", "string", 0], ["Size", "string", 0], ["Count", "integer", 1], ["Age", "date", 0]])
      assert.deepStrictEqual(realCustom.rows[0]!.cells.slice(0, 3), ["g1", "large", 3])

      const fake = yield* Effect.gen(function*() {
        yield* Kube.api(CustomResourceDefinitions).create(crd(group))
        yield* Kube.request({ method: "POST", path: "/api/v1/namespaces", body: { metadata: { name: ns } } })
        yield* gadgets.create(gadget)
        yield* pods.create({ metadata: { name: "web", labels: { app: "web" } }, spec: { containers: [{ name: "c", image: "busybox:1.36" }] } })
        return { custom: yield* gadgets.table(), pods: yield* pods.table({ labelSelector: "app=web", includeObject: "None" }) }
      }).pipe(Effect.provide(Layer.fresh(FakeCluster.layer())))
      assert.deepStrictEqual(columns(fake.custom), columns(realCustom))
      assert.deepStrictEqual(fake.custom.rows[0]!.cells.slice(0, 3), realCustom.rows[0]!.cells.slice(0, 3))
      assert.deepStrictEqual(columns(fake.pods), columns(real))
    }), 60_000)

  it.effect("proxy: a pod's server reached through the API server; a service without endpoints and a loopback node refused", () =>
    Effect.gen(function*() {
      const ns = yield* testNamespace("proxy")
      const pods = Kube.api(Pods, { namespace: ns })
      const services = Kube.api(Services, { namespace: ns })
      yield* services.create({ metadata: { name: "nothing" }, spec: { ports: [{ name: "http", port: 80 }] } })
      // the API server looks the service's address up in its Endpoints: none is "not found", none ready a 503
      const noEndpoints = yield* Effect.flip(services.proxy("nothing", { port: "http", path: "/" }))
      assert.strictEqual(noEndpoints._tag === "ApiError" ? noEndpoints.code : 0, 404, noEndpoints.message)
      assert.match(noEndpoints.message, /services "nothing" not found/)
      yield* Kube.request({
        method: "POST",
        path: `/api/v1/namespaces/${ns}/endpoints`,
        body: { metadata: { name: "nothing" }, subsets: [{ notReadyAddresses: [{ ip: "192.0.2.1" }], ports: [{ name: "http", port: 80 }] }] }
      })
      const unavailable = yield* Effect.flip(services.proxy("nothing", { port: "http", path: "/" }))
      assert.strictEqual(unavailable._tag === "ApiError" ? unavailable.code : 0, 503, unavailable.message)
      assert.match(unavailable.message, /no endpoints available for service "nothing:http"/)
      const nodeName = (yield* Kube.api(Nodes).list()).items[0]!.metadata!.name!
      const node = yield* Effect.flip(Kube.api(Nodes).proxy(nodeName, { port: 10250, path: "/healthz" }))
      assert.strictEqual(node._tag === "ApiError" ? node.code : 0, 400)
      assert.match(node.message, /address not allowed/)

      const address = outsideAddress()
      if (address === undefined) return // no address but loopback here: the API server would refuse every target
      const server = yield* listen
      const port = (server.address() as Net.AddressInfo).port
      yield* pods.create({ metadata: { name: "web" }, spec: { containers: [{ name: "c", image: "busybox:1.36" }] } })
      yield* pods.waitFor("web", (p) => p?.status?.phase === "Running", { timeout: "30 seconds" })
      // the pod's IP is where this test listens (the simulated node's pods have none that route)
      yield* pods.patchStatus("web", Patch.merge({ status: { podIP: address, podIPs: [{ ip: address }] } }))
      const answer = yield* pods.proxy("web", { port, method: "POST", path: "/api/items", query: { q: "1" }, body: "hello" })
      assert.strictEqual(answer.status, 201)
      assert.strictEqual(answer.headers["x-seen"], "yes")
      assert.strictEqual(answer.body, "POST /api/items?q=1 hello")
      const read = yield* pods.proxy("web", { port, path: "/a/b/" })
      assert.strictEqual(read.body, "GET /a/b/ ")
      assert.isTrue(Option.isSome(yield* pods.get("web")))
    }).pipe(Effect.provide(RequestPolicy.layer({ readRetries: Schedule.recurs(0) }))), 60_000)
})

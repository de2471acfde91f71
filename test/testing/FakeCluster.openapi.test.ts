/**
 * FakeCluster's OpenAPI documents over HTTP, as kube-apiserver serves them: /openapi/v2 in JSON with the v1.35
 * spec's definitions (406 where only protobuf is accepted), /openapi/v3 group versions with `components.schemas`
 * closed under their `$ref`s, a CRD's published schema in both, and the v3 index's hash following a CRD's schema.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { createHash } from "node:crypto"
import * as Fs from "node:fs"
import { FakeCluster } from "@effect-kube/testing"

type Json = Record<string, any>

const get = (url: string, accept?: string) =>
  Effect.promise(async () => {
    const r = await fetch(url, accept === undefined ? {} : { headers: { accept } })
    return { status: r.status, headers: r.headers, text: await r.text() }
  })

const send = (url: string, method: string, body: unknown, contentType = "application/json") =>
  Effect.promise(async () => {
    const r = await fetch(url, { method, headers: { "content-type": contentType }, body: JSON.stringify(body) })
    assert.isBelow(r.status, 300, await r.clone().text())
    return r.json() as Promise<Json>
  })

const crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
const crd = {
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: "gizmos.openapi.test.dev" },
  spec: {
    group: "openapi.test.dev",
    scope: "Namespaced",
    names: { plural: "gizmos", singular: "gizmo", kind: "Gizmo", listKind: "GizmoList" },
    versions: [{
      name: "v1", served: true, storage: true,
      schema: {
        openAPIV3Schema: {
          type: "object",
          properties: {
            spec: {
              type: "object",
              properties: {
                size: { type: "integer", default: 1 },
                note: { type: "string", nullable: true },
                port: { "x-kubernetes-int-or-string": true, anyOf: [{ type: "integer" }, { type: "string" }] }
              }
            }
          }
        }
      }
    }]
  }
}

/** Every definition name a document refers to. */
const refs = (value: unknown, into = new Set<string>()): Set<string> => {
  if (Array.isArray(value)) for (const v of value) refs(v, into)
  else if (value !== null && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) {
      if (k === "$ref" && typeof v === "string") into.add(v)
      else refs(v, into)
    }
  }
  return into
}

const hashOf = (index: Json, path: string): string => {
  const url = String(index.paths[path]?.serverRelativeURL)
  assert.match(url, new RegExp(`^/openapi/v3/${path.replace(/\./g, "\\.")}\\?hash=[0-9A-F]{128}$`))
  return url.slice(url.indexOf("hash=") + 5)
}

describe("FakeCluster OpenAPI documents", () => {
  it.effect("/openapi/v2: the v1.35 spec's definitions in JSON, with an ETag; 406 where only protobuf is accepted", () =>
    Effect.gen(function*() {
      const served = yield* FakeCluster.serve()
      const json = yield* get(`${served.url}/openapi/v2`)
      assert.strictEqual(json.status, 200)
      assert.strictEqual(json.headers.get("content-type"), "application/json")
      assert.strictEqual(json.headers.get("etag"), `"${createHash("sha512").update(json.text).digest("hex").toUpperCase()}"`)
      const doc = JSON.parse(json.text) as Json
      assert.strictEqual(doc.swagger, "2.0")
      assert.deepStrictEqual(doc.info, { title: "Kubernetes", version: "1.35" })
      const spec = JSON.parse(Fs.readFileSync("spec/kubernetes/swagger-v1.35.0.json", "utf8")) as Json
      assert.deepStrictEqual(doc.definitions["io.k8s.api.core.v1.Pod"], spec.definitions["io.k8s.api.core.v1.Pod"])
      assert.deepStrictEqual(doc.paths["/api/v1/namespaces/{namespace}/pods"], spec.paths["/api/v1/namespaces/{namespace}/pods"])

      const protobuf = yield* get(`${served.url}/openapi/v2`, "application/com.github.proto-openapi.spec.v2@v1.0+protobuf")
      assert.strictEqual(protobuf.status, 406)
      assert.strictEqual(protobuf.text, "")
      // client-go names protobuf first and JSON after it: JSON it gets
      const either = yield* get(
        `${served.url}/openapi/v2`,
        "application/com.github.proto-openapi.spec.v2@v1.0+protobuf, application/json;q=0.9"
      )
      assert.strictEqual(either.status, 200)
      assert.strictEqual(either.headers.get("content-type"), "application/json")
    }).pipe(Effect.scoped))

  it.effect("/openapi/v3/apis/apps/v1: the group version's kinds in components.schemas, every $ref resolved", () =>
    Effect.gen(function*() {
      const served = yield* FakeCluster.serve()
      const doc = JSON.parse((yield* get(`${served.url}/openapi/v3/apis/apps/v1`)).text) as Json
      const schemas = doc.components.schemas as Json
      const deployment = schemas["io.k8s.api.apps.v1.Deployment"]
      assert.deepStrictEqual(deployment["x-kubernetes-group-version-kind"], [{ group: "apps", kind: "Deployment", version: "v1" }])
      // a $ref with a description beside it is wrapped in allOf, as kube-openapi writes v3
      assert.deepStrictEqual(deployment.properties.spec.allOf, [{ $ref: "#/components/schemas/io.k8s.api.apps.v1.DeploymentSpec" }])
      assert.include(Object.keys(schemas), "io.k8s.api.core.v1.Container")
      for (const ref of refs(doc)) {
        assert.match(ref, /^#\/components\/schemas\//)
        assert.property(schemas, ref.slice("#/components/schemas/".length), `${ref} is in the document`)
      }
      assert.notProperty(schemas, "io.k8s.api.batch.v1.Job")
    }).pipe(Effect.scoped))

  it.live("a CRD's schema is published in v2 and v3, and the v3 index's hash follows its changes", () =>
    Effect.gen(function*() {
      const served = yield* FakeCluster.serve()
      const before = JSON.parse((yield* get(`${served.url}/openapi/v3`)).text) as Json
      assert.notProperty(before.paths, "apis/openapi.test.dev/v1")
      yield* send(`${served.url}${crds}`, "POST", crd)

      const v2 = JSON.parse((yield* get(`${served.url}/openapi/v2`)).text) as Json
      const gizmo = v2.definitions["dev.test.openapi.v1.Gizmo"]
      assert.deepStrictEqual(gizmo["x-kubernetes-group-version-kind"], [{ group: "openapi.test.dev", kind: "Gizmo", version: "v1" }])
      assert.deepStrictEqual(gizmo.properties.metadata.$ref, "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")
      assert.deepStrictEqual(Object.keys(gizmo.properties).sort(), ["apiVersion", "kind", "metadata", "spec"])
      // what OpenAPI v2 cannot say is left out: defaults, nullable (and the type it would refuse null by), anyOf
      assert.deepStrictEqual(gizmo.properties.spec.properties, {
        size: { type: "integer" },
        note: {},
        port: { "x-kubernetes-int-or-string": true }
      })
      assert.property(v2.definitions, "dev.test.openapi.v1.GizmoList")

      const index = JSON.parse((yield* get(`${served.url}/openapi/v3`)).text) as Json
      const first = hashOf(index, "apis/openapi.test.dev/v1")
      const apps = hashOf(index, "apis/apps/v1")
      const v3 = JSON.parse((yield* get(`${served.url}/openapi/v3/apis/openapi.test.dev/v1`)).text) as Json
      assert.deepStrictEqual(v3.info, { title: "Kubernetes CRD Swagger", version: "v0.1.0" })
      const published = v3.components.schemas["dev.test.openapi.v1.Gizmo"]
      assert.deepStrictEqual(published.properties.spec, crd.spec.versions[0]!.schema.openAPIV3Schema.properties.spec)
      assert.deepStrictEqual(published.properties.metadata.allOf, [{ $ref: "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta" }])
      for (const ref of refs(v3)) assert.property(v3.components.schemas, ref.slice("#/components/schemas/".length))

      // a label on the CRD changes no schema: the same hash; a new field does, in this group version only
      yield* send(`${served.url}${crds}/${crd.metadata.name}`, "PATCH", { metadata: { labels: { a: "b" } } }, "application/merge-patch+json")
      assert.strictEqual(hashOf(JSON.parse((yield* get(`${served.url}/openapi/v3`)).text), "apis/openapi.test.dev/v1"), first)
      yield* send(`${served.url}${crds}/${crd.metadata.name}`, "PATCH", [{
        op: "add",
        path: "/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties/weight",
        value: { type: "number" }
      }], "application/json-patch+json")
      const after = JSON.parse((yield* get(`${served.url}/openapi/v3`)).text) as Json
      assert.notStrictEqual(hashOf(after, "apis/openapi.test.dev/v1"), first)
      assert.strictEqual(hashOf(after, "apis/apps/v1"), apps)
      const changed = JSON.parse((yield* get(`${served.url}/openapi/v3/apis/openapi.test.dev/v1`)).text) as Json
      assert.deepStrictEqual(changed.components.schemas["dev.test.openapi.v1.Gizmo"].properties.spec.properties.weight, { type: "number" })

      // the CRD gone (its finalizer run, at the fake's pace), its documents go
      yield* Effect.promise(() => fetch(`${served.url}${crds}/${crd.metadata.name}`, { method: "DELETE" }))
      for (let i = 0; i < 100; i++) {
        if ((yield* get(`${served.url}${crds}/${crd.metadata.name}`)).status === 404) break
        yield* Effect.sleep("20 millis")
      }
      const gone = JSON.parse((yield* get(`${served.url}/openapi/v2`)).text) as Json
      assert.notProperty(gone.definitions, "dev.test.openapi.v1.Gizmo")
      assert.strictEqual((yield* get(`${served.url}/openapi/v3/apis/openapi.test.dev/v1`)).status, 404)
    }).pipe(Effect.scoped))
})

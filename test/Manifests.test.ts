import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { ValidationError } from "../src/Errors.js"
import * as Manifests from "../src/Manifests.js"
import type { Pod } from "../src/resources/index.js"

const parseError = (text: string) =>
  Effect.flip(Manifests.parse(text)).pipe(
    Effect.tap((e) => assert.instanceOf(e, ValidationError))
  )

describe("Manifests.parse", () => {
  it.effect("reads multi-document YAML, skipping empty documents", () =>
    Effect.gen(function*() {
      const objects = yield* Manifests.parse(`
---
apiVersion: v1
kind: ConfigMap
metadata: { name: a }
data: { on: "yes", count: "1" }
---
# only a comment
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: b
---
`)
      assert.deepStrictEqual(objects.map((o) => [o.apiVersion, o.kind, o.metadata?.name]), [
        ["v1", "ConfigMap", "a"],
        ["apps/v1", "Deployment", "b"]
      ])
      // YAML 1.2 core schema: `on`/`yes` stay strings, as Kubernetes reads them.
      assert.deepStrictEqual(objects[0]!["data"], { on: "yes", count: "1" })
    }))

  it.effect("reads JSON: one object, an array, and Lists (flattened, nested too)", () =>
    Effect.gen(function*() {
      const one = yield* Manifests.parse(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}}`)
      assert.deepStrictEqual(one.map((o) => o.metadata?.name), ["a"])
      const array = yield* Manifests.parse(JSON.stringify([
        { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a" } },
        { apiVersion: "v1", kind: "Secret", metadata: { name: "b" } }
      ]))
      assert.deepStrictEqual(array.map((o) => o.kind), ["ConfigMap", "Secret"])
      const list = yield* Manifests.parse(JSON.stringify({
        apiVersion: "v1",
        kind: "List",
        items: [
          { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a" } },
          {
            apiVersion: "v1",
            kind: "ServiceList",
            items: [{ apiVersion: "v1", kind: "Service", metadata: { name: "s" } }]
          }
        ]
      }))
      assert.deepStrictEqual(list.map((o) => `${o.kind}/${o.metadata?.name}`), ["ConfigMap/a", "Service/s"])
      assert.deepStrictEqual(yield* Manifests.parse(""), [])
      assert.deepStrictEqual(yield* Manifests.parse("null"), [])
    }))

  it.effect("a YAML List document is flattened too", () =>
    Effect.gen(function*() {
      const objects = yield* Manifests.parse(`
apiVersion: v1
kind: PodList
items:
  - { apiVersion: v1, kind: Pod, metadata: { name: p1 } }
  - { apiVersion: v1, kind: Pod, metadata: { name: p2 } }
`)
      assert.deepStrictEqual(objects.map((o) => o.metadata?.name), ["p1", "p2"])
    }))

  it.effect("a document that is not YAML is named by index, with its line, and its text is not quoted", () =>
    Effect.gen(function*() {
      const e = yield* parseError(`apiVersion: v1
kind: Secret
metadata: { name: ok }
---
apiVersion: v1
kind: Secret
stringData:
  password: "s3cr3t-value
`)
      assert.strictEqual(e.subject, "document[1]")
      assert.match(e.detail, /not valid YAML/)
      assert.match(e.detail, /line \d+, column \d+/)
      assert.notInclude(e.message, "s3cr3t-value")
      assert.notInclude(JSON.stringify(e), "s3cr3t-value")
    }))

  it.effect("an object without apiVersion or kind, or a document that is not an object, is named", () =>
    Effect.gen(function*() {
      const noVersion = yield* parseError(`apiVersion: v1
kind: ConfigMap
metadata: { name: a }
---
kind: ConfigMap
metadata: { name: b }
`)
      assert.strictEqual(noVersion.subject, "document[1]")
      assert.match(noVersion.detail, /apiVersion/)

      const noKind = yield* parseError(JSON.stringify([{ apiVersion: "v1", kind: "ConfigMap" }, { apiVersion: "v1" }]))
      assert.strictEqual(noKind.subject, "document[0][1]")
      assert.match(noKind.detail, /kind/)

      const scalar = yield* parseError("apiVersion: v1\nkind: ConfigMap\n---\njust text\n")
      assert.strictEqual(scalar.subject, "document[1]")
      assert.match(scalar.detail, /expected an object, got a string/)

      const inList = yield* parseError(`apiVersion: v1
kind: List
items:
  - { apiVersion: v1, kind: ConfigMap }
  - 42
`)
      assert.strictEqual(inList.subject, "document[0].items[1]")
    }))

  it.effect("a broken JSON document falls back to YAML and says where it breaks", () =>
    Effect.gen(function*() {
      const e = yield* parseError(`{"apiVersion": "v1", "kind": "ConfigMap",, }`)
      assert.strictEqual(e.subject, "document[0]")
      assert.match(e.detail, /line 1/)
    }))

  it.effect("duplicate keys and alias bombs are refused", () =>
    Effect.gen(function*() {
      const duplicate = yield* parseError("apiVersion: v1\nkind: ConfigMap\nkind: Secret\n")
      assert.strictEqual(duplicate.subject, "document[0]")
      const bomb = yield* parseError(`a: &a [x, x, x, x, x, x, x, x, x, x]
b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]
c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]
d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]
e: [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]
`)
      assert.strictEqual(bomb.subject, "document[0]")
    }))

  it("accepts typed objects as input (type-level)", () => {
    const pod: Pod = { apiVersion: "v1", kind: "Pod", metadata: { name: "p" }, spec: { containers: [] } }
    const manifests: ReadonlyArray<Manifests.Manifest> = [pod]
    assert.strictEqual(manifests.length, 1)
  })
})

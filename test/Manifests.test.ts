import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { ApiError, ApplyFailed, DeleteFailed, type ObjectRef, ValidationError } from "../packages/effect-kube/src/Errors.js"
import type * as Kube from "../packages/effect-kube/src/Kube.js"
import * as Manifests from "../packages/effect-kube/src/Manifests.js"
import { FakeCluster } from "@effect-kube/testing"
import type { Pod } from "../packages/effect-kube/src/resources/index.js"
import { configMap, deployment, secret, secretValue, service, withCluster, writes } from "./util/manifests.js"

const parseError = (text: string) =>
  Effect.flip(Manifests.parse(text)).pipe(
    Effect.tap((e) => Effect.sync(() => assert.instanceOf(e, ValidationError)))
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
      // kubectl's YAML 1.1 rules: an unquoted `on` key is the boolean true, written "true"; quoted values stay.
      assert.deepStrictEqual(objects[0]!["data"], { true: "yes", count: "1" })
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

// -- against the fake cluster --------------------------------------------------------------------------------------

const stored = (cluster: FakeCluster.Service, ref: ObjectRef) => cluster.get(ref)

describe("Manifests.apply", () => {
  it.effect("applies in order with server-side apply and returns references with the uids the server answered", () =>
    withCluster((cluster) =>
      Effect.gen(function*() {
        const refs = yield* Manifests.apply(
          [configMap("settings"), secret("credentials"), service("web"), deployment("web")],
          { namespace: "apps" }
        )
        assert.deepStrictEqual(writes(cluster), [
          "PATCH /api/v1/namespaces/apps/configmaps/settings",
          "PATCH /api/v1/namespaces/apps/secrets/credentials",
          "PATCH /api/v1/namespaces/apps/services/web",
          "PATCH /apis/apps/v1/namespaces/apps/deployments/web"
        ])
        for (const request of cluster.requests().filter((r) => r.method === "PATCH")) {
          assert.strictEqual(request.contentType, "application/apply-patch+yaml")
          assert.deepStrictEqual(request.query, { fieldManager: "effect-kube" })
        }
        assert.deepStrictEqual(refs.map((r) => [r.apiVersion, r.kind, r.namespace, r.name]), [
          ["v1", "ConfigMap", "apps", "settings"],
          ["v1", "Secret", "apps", "credentials"],
          ["v1", "Service", "apps", "web"],
          ["apps/v1", "Deployment", "apps", "web"]
        ])
        for (const ref of refs) {
          const live = stored(cluster, ref)
          assert.isDefined(live)
          assert.isString(ref.uid)
          assert.strictEqual(ref.uid, live!.metadata.uid)
        }
      })
    ))

  it.effect("uses the KubeConfig's namespace by default, and passes fieldManager, force and dryRun", () =>
    withCluster((cluster) =>
      Effect.gen(function*() {
        const [ref] = yield* Manifests.apply([configMap("a")])
        assert.strictEqual(ref!.namespace, "team")
        assert.isDefined(cluster.get({ apiVersion: "v1", kind: "ConfigMap", name: "a", namespace: "team" }))
        cluster.reset()
        yield* Manifests.apply([configMap("b")], { fieldManager: "scheduler", force: true, dryRun: true })
        assert.deepStrictEqual(cluster.requests().filter((r) => r.method === "PATCH").map((r) => r.query), [
          { fieldManager: "scheduler", force: "true", dryRun: "All" }
        ])
        assert.isUndefined(cluster.get({ apiVersion: "v1", kind: "ConfigMap", name: "b", namespace: "team" }))
        // An empty namespace, or the target's own, is the target.
        const refs = yield* Manifests.apply([
          { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c", namespace: "" } },
          { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "d", namespace: "apps" } }
        ], { namespace: "apps" })
        assert.deepStrictEqual(refs.map((r) => r.namespace), ["apps", "apps"])
        assert.isDefined(cluster.get({ apiVersion: "v1", kind: "ConfigMap", name: "c", namespace: "apps" }))
      }), { namespace: "team" }))

  it.effect("applies copies without server-managed fields, so an object read back can be applied again", () =>
    withCluster((cluster) =>
      Effect.gen(function*() {
        const [first] = yield* Manifests.apply([configMap("settings")], { namespace: "apps" })
        // An object as `get` returns it: uid, resourceVersion, managedFields, status...
        const [live] = yield* Manifests.get([first!], { namespace: "apps" })
        cluster.update(first!, { data: { key: "changed elsewhere" } })
        const edited: Manifests.Manifest = {
          ...live!,
          metadata: { ...live!.metadata, resourceVersion: "1", uid: "someone-elses-uid" },
          status: { phase: "whatever" },
          data: { key: "mine" }
        }
        const snapshot = structuredClone(edited)
        const [second] = yield* Manifests.apply([edited], { namespace: "apps", force: true })
        assert.deepStrictEqual(edited, snapshot, "the input is not changed")
        assert.strictEqual(second!.uid, first!.uid)
        const after = stored(cluster, second!)!
        assert.deepStrictEqual(after["data"], { key: "mine" })
        assert.isUndefined(after["status"])
      })
    ))

  it.effect("turns a v1 Secret's stringData into base64 data, stringData winning over data", () =>
    withCluster((cluster) =>
      Effect.gen(function*() {
        const given: Manifests.Manifest = {
          apiVersion: "v1",
          kind: "Secret",
          metadata: { name: "credentials" },
          data: { user: Buffer.from("admin").toString("base64"), password: Buffer.from("old").toString("base64") },
          stringData: { password: "pässwörd", empty: "" }
        }
        const [ref] = yield* Manifests.apply([given], { namespace: "apps" })
        const live = stored(cluster, ref!)!
        assert.isUndefined(live["stringData"])
        const data = live["data"] as Record<string, string>
        assert.deepStrictEqual(
          Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v, "base64").toString("utf8")])),
          { user: "admin", password: "pässwörd", empty: "" }
        )
        assert.isDefined(given["stringData"], "the input keeps its stringData")
      })
    ))

  it.effect("stops at the first failure with ApplyFailed listing what was applied; nothing after it is sent", () =>
    withCluster((cluster) =>
      Effect.gen(function*() {
        cluster.failNext({ status: 422, message: "rejected", match: (method, path) => method === "PATCH" && path.includes("/secrets/") })
        const error = yield* Effect.flip(
          Manifests.apply([configMap("one"), configMap("two"), secret("three"), configMap("four")], { namespace: "apps" })
        )
        assert.instanceOf(error, ApplyFailed)
        const failed = error as ApplyFailed
        assert.deepStrictEqual(failed.applied.map((r) => r.name), ["one", "two"])
        for (const ref of failed.applied) assert.strictEqual(ref.uid, stored(cluster, ref)!.metadata.uid)
        assert.deepStrictEqual(failed.failed.ref, { apiVersion: "v1", kind: "Secret", name: "three", namespace: "apps" })
        assert.instanceOf(failed.failed.error, ApiError)
        assert.strictEqual((failed.failed.error as ApiError).code, 422)
        assert.deepStrictEqual(writes(cluster), [
          "PATCH /api/v1/namespaces/apps/configmaps/one",
          "PATCH /api/v1/namespaces/apps/configmaps/two",
          "PATCH /api/v1/namespaces/apps/secrets/three"
        ])
        assert.isUndefined(cluster.get({ apiVersion: "v1", kind: "ConfigMap", name: "four", namespace: "apps" }))
        assert.match(failed.message, /apply stopped at Secret apps\/three after 2 applied/)
        // Identities only: the Secret's value appears nowhere, in any encoding.
        for (const text of [failed.message, JSON.stringify(failed), String(failed)]) {
          assert.notInclude(text, secretValue)
          assert.notInclude(text, Buffer.from(secretValue).toString("base64"))
        }
      })
    ))

  it.effect("a field owned by another manager is a 409 Conflict unless force is given", () =>
    withCluster((cluster) =>
      Effect.gen(function*() {
        yield* Manifests.apply([configMap("shared", { key: "theirs" })], { namespace: "apps", fieldManager: "other" })
        const error = yield* Effect.flip(
          Manifests.apply([configMap("shared", { key: "mine" })], { namespace: "apps", fieldManager: "me" })
        )
        assert.instanceOf(error, ApplyFailed)
        assert.isTrue(ApiError.isConflict((error as ApplyFailed).failed.error))
        const [ref] = yield* Manifests.apply([configMap("shared", { key: "mine" })], {
          namespace: "apps",
          fieldManager: "me",
          force: true
        })
        assert.deepStrictEqual(stored(cluster, ref!)!["data"], { key: "mine" })
      })
    ))

  it.effect("cluster-scoped kinds go first, are refused with clusterScoped: false, and their references have no namespace", () =>
    withCluster((cluster) =>
      Effect.gen(function*() {
        const namespace = { apiVersion: "v1", kind: "Namespace", metadata: { name: "team-x" } }
        const refused = yield* Effect.flip(
          Manifests.apply([configMap("a"), namespace], { namespace: "apps", clusterScoped: false })
        )
        assert.instanceOf(refused, ValidationError)
        assert.match(refused.message, /objects\[1\] \(Namespace team-x\)/)
        assert.match(refused.message, /clusterScoped is false: leave clusterScoped out/)
        assert.strictEqual(cluster.mutations(), 0)
        const refs = yield* Manifests.apply([configMap("a"), namespace], { namespace: "apps" })
        assert.deepStrictEqual(refs.map((r) => [r.kind, r.namespace]), [["Namespace", undefined], ["ConfigMap", "apps"]])
        assert.isFalse("namespace" in refs[0]!)
        assert.isDefined(cluster.get({ apiVersion: "v1", kind: "Namespace", name: "team-x" }))
      })
    ))

  const rejected: ReadonlyArray<readonly [string, unknown, RegExp, Manifests.ApplyOptions?]> = [
    ["no apiVersion", { kind: "ConfigMap", metadata: { name: "x" } }, /objects\[1\].*apiVersion/],
    ["a malformed apiVersion", { apiVersion: "apps/v1/x", kind: "Deployment", metadata: { name: "x" } }, /apiVersion/],
    ["no kind", { apiVersion: "v1", metadata: { name: "x" } }, /objects\[1\].*kind/],
    ["no metadata", { apiVersion: "v1", kind: "ConfigMap" }, /objects\[1\].*metadata/],
    ["no name", { apiVersion: "v1", kind: "ConfigMap", metadata: {} }, /has no metadata.name/],
    ["generateName", { apiVersion: "v1", kind: "ConfigMap", metadata: { generateName: "x-" } }, /generateName/],
    ["a name that is no name", { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a/b" } }, /metadata.name must not contain "\/"/],
    [
      "another namespace",
      { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "x", namespace: "prod" } },
      /metadata.namespace is "prod" but the namespace option is "apps" \(as kubectl refuses with --namespace\): pass namespace: "prod", or leave namespace out/
    ],
    [
      "a Secret value that is not text",
      { apiVersion: "v1", kind: "Secret", metadata: { name: "x" }, stringData: { n: 1 } },
      /stringData.n must be a string/
    ],
    ["not an object", "just text", /objects\[1\]: expected an object/],
    ["a duplicate", configMap("first"), /objects\[1\] \(ConfigMap first\): is the same object as objects\[0\]/],
    ["an unknown kind", { apiVersion: "v1", kind: "Frobnicator", metadata: { name: "x" } }, /v1 Frobnicator.*no kind Frobnicator/],
    ["an unserved group", { apiVersion: "example.com/v1", kind: "Widget", metadata: { name: "x" } }, /does not serve example.com\/v1/],
    [
      "a cluster-scoped kind with clusterScoped: false",
      { apiVersion: "v1", kind: "Namespace", metadata: { name: "x" } },
      /cluster-scoped and clusterScoped is false/,
      { namespace: "apps", clusterScoped: false }
    ],
    ["a non-boolean enforceNamespace", configMap("x"), /enforceNamespace: must be true or false/, {
      namespace: "apps",
      enforceNamespace: "yes" as unknown as boolean
    }],
    ["an empty fieldManager", configMap("x"), /fieldManager/, { namespace: "apps", fieldManager: " " }],
    ["a bad target namespace", configMap("x"), /namespace: must be a DNS-1123 label/, { namespace: "Apps!" }]
  ]

  for (const [what, bad, message, options] of rejected) {
    it.effect(`refuses ${what} before changing anything`, () =>
      withCluster((cluster) =>
        Effect.gen(function*() {
          const error = yield* Effect.flip(
            Manifests.apply([configMap("first"), bad as Manifests.Manifest], options ?? { namespace: "apps" })
          )
          assert.instanceOf(error, ValidationError)
          assert.match(error.message, message)
          assert.strictEqual(cluster.mutations(), 0)
          assert.deepStrictEqual(writes(cluster), [])
          // Checks that need no server send nothing at all; kinds are resolved with reads only.
          for (const request of cluster.requests()) assert.match(request.path, /^\/apis?(\/|$)/)
          assert.isUndefined(cluster.get({ apiVersion: "v1", kind: "ConfigMap", name: "first", namespace: "apps" }))
        })
      ))
  }

  it.effect("a misspelt kind gets the closest kind discovery serves in its group version", () =>
    withCluster((cluster) =>
      Effect.gen(function*() {
        const objects = yield* Manifests.parse(`
apiVersion: apps/v1
kind: Deploymnet
metadata: { name: web }
`)
        const typo = yield* Effect.flip(Manifests.apply(objects, { namespace: "apps" }))
        assert.instanceOf(typo, ValidationError)
        assert.strictEqual(
          typo.message,
          "objects[0] (Deploymnet web): apps/v1 Deploymnet: the server serves no kind Deploymnet in apps/v1: " +
            "did you mean Deployment?"
        )
        const cases: ReadonlyArray<readonly [string, string, string]> = [
          ["v1", "configmap", ": did you mean ConfigMap?"], // case
          ["v1", "Secrets", ": did you mean Secret?"],
          ["apps/v1", "StatefullSet", ": did you mean StatefulSet?"],
          ["v1", "Frobnicator", ""] // nothing close: no guess
        ]
        for (const [apiVersion, kind, hint] of cases) {
          const error = yield* Effect.flip(
            Manifests.apply([{ apiVersion, kind, metadata: { name: "x" } }], { namespace: "apps" })
          )
          assert.isTrue(error.message.endsWith(`the server serves no kind ${kind} in ${apiVersion}${hint}`), error.message)
        }
        assert.strictEqual(cluster.mutations(), 0)
      })
    ))

  it.effect("checks that need no server send no request at all", () =>
    withCluster((cluster) =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(
          Manifests.apply([configMap("a"), { apiVersion: "v1", kind: "ConfigMap", metadata: { generateName: "b-" } }], {
            namespace: "apps"
          })
        )
        assert.instanceOf(error, ValidationError)
        assert.deepStrictEqual(cluster.requests(), [])
      })
    ))
})

describe("Manifests.get", () => {
  it.effect("reads the live objects in order, from references or objects", () =>
    withCluster((cluster) =>
      Effect.gen(function*() {
        const refs = yield* Manifests.apply([configMap("a"), secret("b"), deployment("c")], { namespace: "apps" })
        cluster.update(refs[0]!, { data: { key: "changed" } })
        const live = yield* Manifests.get(refs, { namespace: "apps" })
        assert.deepStrictEqual(live.map((o) => `${o.kind}/${o.metadata?.name}`), ["ConfigMap/a", "Secret/b", "Deployment/c"])
        assert.deepStrictEqual(live[0]!["data"], { key: "changed" })
        assert.deepStrictEqual(live.map((o) => o.metadata?.uid), refs.map((r) => r.uid))
        const fromObjects = yield* Manifests.get([configMap("a"), deployment("c")], { namespace: "apps" })
        assert.deepStrictEqual(fromObjects.map((o) => o.metadata?.uid), [refs[0]!.uid, refs[2]!.uid])
      })
    ))

  it.effect("a missing object fails with the server's NotFound naming it", () =>
    withCluster(() =>
      Effect.gen(function*() {
        yield* Manifests.apply([configMap("a")], { namespace: "apps" })
        const error = yield* Effect.flip(
          Manifests.get([{ apiVersion: "v1", kind: "ConfigMap", name: "a" }, { apiVersion: "v1", kind: "ConfigMap", name: "gone" }], {
            namespace: "apps"
          })
        )
        assert.isTrue(ApiError.isNotFound(error))
        assert.include(error.message, "/namespaces/apps/configmaps/gone")
      })
    ))
})

describe("Manifests.delete", () => {
  it.effect("deletes in reverse order and returns the references in the order deleted", () =>
    withCluster((cluster) =>
      Effect.gen(function*() {
        const refs = yield* Manifests.apply([configMap("a"), secret("b"), service("c"), deployment("d")], {
          namespace: "apps"
        })
        cluster.reset()
        const deleted = yield* Manifests.delete(refs, { namespace: "apps" })
        assert.deepStrictEqual(writes(cluster), [
          "DELETE /apis/apps/v1/namespaces/apps/deployments/d",
          "DELETE /api/v1/namespaces/apps/services/c",
          "DELETE /api/v1/namespaces/apps/secrets/b",
          "DELETE /api/v1/namespaces/apps/configmaps/a"
        ])
        assert.deepStrictEqual(deleted, [...refs].reverse())
        for (const ref of refs) assert.isUndefined(cluster.get(ref))
      })
    ))

  it.effect("an object already gone counts as deleted", () =>
    withCluster((cluster) =>
      Effect.gen(function*() {
        const refs = yield* Manifests.apply([configMap("a"), configMap("b"), configMap("c")], { namespace: "apps" })
        assert.isTrue(cluster.remove(refs[1]!))
        const deleted = yield* Manifests.delete(refs, { namespace: "apps" })
        assert.deepStrictEqual(deleted.map((r) => r.name), ["c", "b", "a"])
        // And objects (as parsed from the same manifests) delete just as well, again without error.
        const again = yield* Manifests.delete([configMap("a"), configMap("b")], { namespace: "apps" })
        assert.deepStrictEqual(again.map((r) => r.name), ["b", "a"])
      })
    ))

  it.effect("goes on past failures and ends with DeleteFailed listing deleted and failed references", () =>
    withCluster((cluster) =>
      Effect.gen(function*() {
        const refs = yield* Manifests.apply([configMap("a"), secret("b"), configMap("c")], { namespace: "apps" })
        cluster.failNext({
          status: 403,
          message: "forbidden here",
          match: (method, path) => method === "DELETE" && path.includes("/secrets/")
        })
        const error = yield* Effect.flip(Manifests.delete(refs, { namespace: "apps" }))
        assert.instanceOf(error, DeleteFailed)
        const failed = error as DeleteFailed
        assert.deepStrictEqual(failed.deleted.map((r) => r.name), ["c", "a"])
        assert.strictEqual(failed.failures.length, 1)
        assert.deepStrictEqual(failed.failures[0]!.ref, refs[1])
        assert.isTrue(ApiError.isForbidden(failed.failures[0]!.error))
        assert.isUndefined(cluster.get(refs[0]!))
        assert.isDefined(cluster.get(refs[1]!))
        assert.isUndefined(cluster.get(refs[2]!))
        assert.match(failed.message, /delete failed for 1 object\(s\) \(2 deleted\): Secret apps\/b: /)
        for (const text of [failed.message, JSON.stringify(failed), String(failed)]) {
          assert.notInclude(text, secretValue)
          assert.notInclude(text, Buffer.from(secretValue).toString("base64"))
        }
      })
    ))

  it.effect("a reference with a uid never deletes a replacement of the same name", () =>
    withCluster((cluster) =>
      Effect.gen(function*() {
        const refs = yield* Manifests.apply([configMap("a"), configMap("b")], { namespace: "apps" })
        // Someone deletes `b` and makes a new one with the same name (a new uid).
        cluster.remove(refs[1]!)
        const [replacement] = yield* Manifests.apply([configMap("b", { key: "new" })], { namespace: "apps" })
        assert.notStrictEqual(replacement!.uid, refs[1]!.uid)
        const error = yield* Effect.flip(Manifests.delete(refs, { namespace: "apps" }))
        assert.instanceOf(error, DeleteFailed)
        const failed = error as DeleteFailed
        assert.deepStrictEqual(failed.failures.map((f) => f.ref), [refs[1]!])
        assert.strictEqual((failed.failures[0]!.error as ApiError).code, 409)
        assert.deepStrictEqual(failed.deleted, [refs[0]!])
        assert.strictEqual(cluster.get(refs[1]!)?.metadata.uid, replacement!.uid)
        // A reference without a uid means "whatever has that name".
        const { uid: _uid, ...byName } = refs[1]!
        assert.deepStrictEqual(yield* Manifests.delete([byName], { namespace: "apps" }), [byName])
        assert.isUndefined(cluster.get(refs[1]!))
      })
    ))

  it.effect("checks every reference before deleting anything", () =>
    withCluster((cluster) =>
      Effect.gen(function*() {
        const refs = yield* Manifests.apply([configMap("a"), configMap("b")], { namespace: "apps" })
        cluster.reset()
        const cases: ReadonlyArray<readonly [unknown, RegExp, Manifests.DeleteOptions?]> = [
          [{ apiVersion: "v1", kind: "ConfigMap" }, /refs\[2\].*has no metadata/],
          [{ apiVersion: "v1", kind: "ConfigMap", name: "" }, /refs\[2\].*name must not be empty/],
          [{ apiVersion: "v1", kind: "ConfigMap", name: "x", namespace: "other" }, /"other" but the namespace option is "apps"/],
          [{ apiVersion: "v1", kind: "ConfigMap", name: "x", uid: 7 }, /uid must be a non-empty string/],
          [{ apiVersion: "v1", kind: "Namespace", name: "apps" }, /cluster-scoped/, { namespace: "apps", clusterScoped: false }],
          [{ apiVersion: "v1", kind: "Nope", name: "x" }, /no kind Nope/],
          [
            { apiVersion: "v1", kind: "ConfigMap", name: "x" },
            /propagationPolicy/,
            { namespace: "apps", propagationPolicy: "Never" as "Orphan" }
          ]
        ]
        for (const [bad, message, options] of cases) {
          const error = yield* Effect.flip(Manifests.delete([...refs, bad as ObjectRef], options ?? { namespace: "apps" }))
          assert.instanceOf(error, ValidationError)
          assert.match(error.message, message)
        }
        assert.strictEqual(cluster.mutations(), 0)
        for (const ref of refs) assert.isDefined(cluster.get(ref))
      })
    ))

  it.effect("cluster-scoped objects are deleted (here with clusterScoped: true)", () =>
    withCluster((cluster) =>
      Effect.gen(function*() {
        const namespace = { apiVersion: "v1", kind: "Namespace", metadata: { name: "team-x" } }
        const refs = yield* Manifests.apply([namespace], { clusterScoped: true })
        const deleted = yield* Manifests.delete(refs, { clusterScoped: true, propagationPolicy: "Foreground" })
        assert.deepStrictEqual(deleted, refs)
        assert.deepStrictEqual(writes(cluster).slice(-1), ["DELETE /api/v1/namespaces/team-x"])
      })
    ))
})

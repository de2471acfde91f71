/**
 * The fake API server, checked through real HTTP requests: the layer's in-memory
 * HttpClient (HttpClientRequest in, HttpClientResponse out) and the loopback server
 * with Node's `fetch`. Bodies are compared with what the Kubernetes API server sends.
 */
import { assert, describe, it } from "@effect/vitest"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as TestClock from "effect/testing/TestClock"
import { Effect, Fiber, Redacted, Result, Stream } from "effect"
import * as Fs from "node:fs"
import * as Http from "node:http"
import * as Https from "node:https"
import * as KubeConfig from "../../packages/effect-kube/src/KubeConfig.js"
import { FakeCluster } from "@effect-kube/testing"
import { pki } from "../util/pki.js"

const base = "http://fake-cluster.local"

interface Answer {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly text: string
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  readonly body: any
}

/** Sends one request through the layer's HttpClient. */
const call = (
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE",
  path: string,
  options: { readonly body?: unknown; readonly contentType?: string; readonly headers?: Record<string, string> } = {}
) =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    let request = HttpClientRequest.make(method)(`${base}${path}`).pipe(
      HttpClientRequest.setHeaders(options.headers ?? {})
    )
    if (options.body !== undefined) {
      request = HttpClientRequest.bodyText(
        request,
        typeof options.body === "string" ? options.body : JSON.stringify(options.body),
        options.contentType ?? "application/json"
      )
    }
    const response = yield* client.execute(request)
    const text = yield* response.text
    let body: unknown = undefined
    try {
      body = text === "" ? undefined : JSON.parse(text)
    } catch {
      body = undefined
    }
    return { status: response.status, headers: response.headers, text, body } as Answer
  }).pipe(Effect.scoped)

const get = (path: string) => call("GET", path)
const post = (path: string, body: unknown) => call("POST", path, { body })
const patch = (path: string, body: unknown, contentType: string) => call("PATCH", path, { body, contentType })

/**
 * The API server alone, as envtest runs one: no controllers nor kubelet write beside the
 * test (FakeClusterControllers.test.ts checks those), unless a test turns them on.
 */
const withCluster = <A, E>(
  effect: Effect.Effect<A, E, FakeCluster.FakeCluster | HttpClient.HttpClient | KubeConfig.KubeConfig>,
  options?: FakeCluster.Options
) => Effect.provide(effect, FakeCluster.layer({ controllers: false, ...options }))

const cluster = FakeCluster.FakeCluster

const pod = (name: string, labels: Record<string, string> = {}, extra: Record<string, unknown> = {}) => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name, labels },
  spec: { containers: [{ name: "main", image: "busybox" }] },
  ...extra
})

const configMap = (name: string, labels: Record<string, string> = {}, data: Record<string, string> = { a: "1" }) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, labels },
  data
})

const pods = "/api/v1/namespaces/default/pods"
const configmaps = "/api/v1/namespaces/default/configmaps"

describe("FakeCluster layer", () => {
  it.effect("provides a KubeConfig for its in-memory server with a token provider", () =>
    withCluster(
      Effect.gen(function*() {
        const config = yield* KubeConfig.KubeConfig
        assert.strictEqual(config.server, base)
        assert.strictEqual(config.namespace, "team-a")
        assert.isFalse(config.tls.insecureSkipTlsVerify)
        assert.strictEqual(config.auth.kind, "token")
        const credentials = yield* config.auth.credentials
        assert.strictEqual(Redacted.value(credentials.token!), "s3cret")
        assert.isFalse(yield* config.auth.invalidate)
      }),
      { namespace: "team-a", token: "s3cret" }
    ))
})

describe("CRUD", () => {
  it.effect("create fills in uid, one global resourceVersion counter, creationTimestamp, generation", () =>
    withCluster(Effect.gen(function*() {
      const a = yield* post(pods, pod("a"))
      assert.strictEqual(a.status, 201)
      assert.match(a.body.metadata.uid, /^[0-9a-f-]{36}$/)
      assert.match(a.body.metadata.creationTimestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/)
      assert.strictEqual(a.body.metadata.generation, 1)
      assert.strictEqual(a.body.metadata.namespace, "default")
      assert.deepStrictEqual(a.body.status, { phase: "Pending", qosClass: "BestEffort" })
      const b = yield* post(configmaps, configMap("b"))
      assert.strictEqual(Number(b.body.metadata.resourceVersion), Number(a.body.metadata.resourceVersion) + 1)
      assert.notStrictEqual(a.body.metadata.uid, b.body.metadata.uid)
      const read = yield* get(`${pods}/a`)
      assert.strictEqual(read.status, 200)
      assert.deepStrictEqual(read.body, a.body)
    })))

  it.effect("a missing object is a 404 Status exactly as the API server writes it", () =>
    withCluster(Effect.gen(function*() {
      const missing = yield* get(`${pods}/x`)
      assert.strictEqual(missing.status, 404)
      assert.strictEqual(missing.headers["content-type"], "application/json")
      assert.strictEqual(
        missing.text,
        `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"pods \\"x\\" not found","reason":"NotFound","details":{"name":"x","kind":"pods"},"code":404}`
      )
      const deployment = yield* get("/apis/apps/v1/namespaces/default/deployments/web")
      assert.deepStrictEqual(deployment.body, {
        kind: "Status",
        apiVersion: "v1",
        metadata: {},
        status: "Failure",
        message: `deployments.apps "web" not found`,
        reason: "NotFound",
        details: { name: "web", group: "apps", kind: "deployments" },
        code: 404
      })
      // a built-in group's unknown resource is a Status; a group no built-in kind is in falls through kube-apiserver's
      // CRD handler to the mux's plain-text 404
      const unknownResource = yield* get("/apis/apps/v1/namespaces/default/widgets")
      assert.strictEqual(unknownResource.status, 404)
      assert.strictEqual(unknownResource.body.message, "the server could not find the requested resource")
      const unknown = yield* get("/apis/example.com/v1/namespaces/default/widgets")
      assert.strictEqual(unknown.status, 404)
      assert.strictEqual(unknown.headers["content-type"], "text/plain; charset=utf-8")
      assert.strictEqual(unknown.text, "404 page not found\n")
    })))

  it.effect("create refuses a taken name (409 AlreadyExists), a missing or invalid name (422), and a wrong kind (400)", () =>
    withCluster(Effect.gen(function*() {
      yield* post(pods, pod("a"))
      const taken = yield* post(pods, pod("a"))
      assert.strictEqual(taken.status, 409)
      assert.deepStrictEqual(taken.body, {
        kind: "Status",
        apiVersion: "v1",
        metadata: {},
        status: "Failure",
        message: `pods "a" already exists`,
        reason: "AlreadyExists",
        details: { name: "a", kind: "pods" },
        code: 409
      })
      const unnamed = yield* post(configmaps, { apiVersion: "v1", kind: "ConfigMap", metadata: {} })
      assert.strictEqual(unnamed.status, 422)
      assert.strictEqual(unnamed.body.reason, "Invalid")
      assert.strictEqual(
        unnamed.body.message,
        `ConfigMap "" is invalid: metadata.name: Required value: name or generateName is required`
      )
      assert.deepStrictEqual(unnamed.body.details.causes, [{
        reason: "FieldValueRequired",
        field: "metadata.name",
        message: "Required value: name or generateName is required"
      }])
      const invalid = yield* post(configmaps, configMap("Not_Valid"))
      assert.strictEqual(invalid.status, 422)
      assert.match(
        invalid.body.message,
        /^ConfigMap "Not_Valid" is invalid: metadata.name: Invalid value: "Not_Valid": a lowercase RFC 1123 subdomain/
      )
      const wrongKind = yield* post(pods, configMap("c"))
      assert.strictEqual(wrongKind.status, 400)
      assert.strictEqual(wrongKind.body.reason, "BadRequest")
      const otherNamespace = yield* post(pods, { ...pod("d"), metadata: { name: "d", namespace: "elsewhere" } })
      assert.strictEqual(otherNamespace.status, 400)
      assert.strictEqual(
        otherNamespace.body.message,
        "the namespace of the provided object does not match the namespace sent on the request"
      )
      const notJson = yield* call("POST", pods, { body: "{nope" })
      assert.strictEqual(notJson.status, 400)
      // the URL supplies what the body leaves out, as on the API server
      const bare = yield* post(configmaps, { metadata: { name: "bare" }, data: { a: "1" } })
      assert.strictEqual(bare.status, 201)
      assert.deepStrictEqual(Object.keys(bare.body).slice(0, 2), ["apiVersion", "kind"])
      assert.strictEqual(bare.body.kind, "ConfigMap")
    })))

  it.effect("generateName gets a 5 character suffix; dryRun=All answers the object and persists nothing", () =>
    withCluster(Effect.gen(function*() {
      const control = yield* cluster
      const generated = yield* post(configmaps, {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { generateName: "job-" }
      })
      assert.strictEqual(generated.status, 201)
      assert.match(generated.body.metadata.name, /^job-[bcdfghjklmnpqrstvwxz2456789]{5}$/)
      const rv = control.resourceVersion()
      const dry = yield* post(`${configmaps}?dryRun=All`, configMap("dry"))
      assert.strictEqual(dry.status, 201)
      assert.strictEqual(dry.body.metadata.name, "dry")
      assert.isString(dry.body.metadata.uid)
      assert.strictEqual((yield* get(`${configmaps}/dry`)).status, 404)
      assert.strictEqual(control.resourceVersion(), rv)
    })))

  it.effect("replace: a stale resourceVersion is a 409 Conflict with the API server's message", () =>
    withCluster(Effect.gen(function*() {
      const created = (yield* post(configmaps, configMap("c"))).body
      const replaced = yield* call("PUT", `${configmaps}/c`, { body: { ...created, data: { a: "2" } } })
      assert.strictEqual(replaced.status, 200)
      assert.strictEqual(replaced.body.data.a, "2")
      assert.isAbove(Number(replaced.body.metadata.resourceVersion), Number(created.metadata.resourceVersion))
      assert.strictEqual(replaced.body.metadata.uid, created.metadata.uid)
      const stale = yield* call("PUT", `${configmaps}/c`, { body: { ...created, data: { a: "3" } } })
      assert.strictEqual(stale.status, 409)
      assert.deepStrictEqual(stale.body, {
        kind: "Status",
        apiVersion: "v1",
        metadata: {},
        status: "Failure",
        message:
          `Operation cannot be fulfilled on configmaps "c": the object has been modified; please apply your changes to the latest version and try again`,
        reason: "Conflict",
        details: { name: "c", kind: "configmaps" },
        code: 409
      })
      const missing = yield* call("PUT", `${configmaps}/nope`, { body: configMap("nope") })
      assert.strictEqual(missing.status, 404)
      const renamed = yield* call("PUT", `${configmaps}/c`, { body: configMap("other") })
      assert.strictEqual(renamed.status, 400)
      assert.strictEqual(renamed.body.message, "the name of the object (other) does not match the name on the URL (c)")
    })))

  it.effect("replace bumps generation only for spec changes, keeps a pod's status, and a no-op write keeps the resourceVersion", () =>
    withCluster(Effect.gen(function*() {
      const control = yield* cluster
      yield* post(pods, pod("p"))
      control.setPodPhase("default", "p", "Running")
      const live = (yield* get(`${pods}/p`)).body
      const relabelled = (yield* call("PUT", `${pods}/p`, {
        body: { ...live, metadata: { ...live.metadata, labels: { x: "y" } }, status: { phase: "Failed" } }
      })).body
      assert.strictEqual(relabelled.metadata.generation, 1)
      assert.strictEqual(relabelled.status.phase, "Running")
      // a pod's spec is immutable but for images (and a few more): a new image is a spec change
      const respecced = (yield* call("PUT", `${pods}/p`, {
        body: {
          ...relabelled,
          spec: { ...relabelled.spec, containers: [{ ...relabelled.spec.containers[0], image: "nginx:2" }] }
        }
      })).body
      assert.strictEqual(respecced.metadata.generation, 2)
      // the kubelet may have answered the new image since: PUT back what is stored now
      const current = (yield* get(`${pods}/p`)).body
      const same = (yield* call("PUT", `${pods}/p`, { body: current })).body
      assert.strictEqual(same.metadata.resourceVersion, current.metadata.resourceVersion)
    })))

  it.effect("delete answers the pod, a Success Status for other kinds, 404 when absent", () =>
    withCluster(Effect.gen(function*() {
      const created = (yield* post(pods, pod("p"))).body
      const deleted = yield* call("DELETE", `${pods}/p`)
      assert.strictEqual(deleted.status, 200)
      assert.strictEqual(deleted.body.kind, "Pod")
      assert.strictEqual(deleted.body.metadata.uid, created.metadata.uid)
      assert.isString(deleted.body.metadata.deletionTimestamp)
      assert.strictEqual((yield* get(`${pods}/p`)).status, 404)
      const cm = (yield* post(configmaps, configMap("c"))).body
      const gone = yield* call("DELETE", `${configmaps}/c`, {
        body: { kind: "DeleteOptions", apiVersion: "v1", propagationPolicy: "Background", gracePeriodSeconds: 0 }
      })
      assert.deepStrictEqual(gone.body, {
        kind: "Status",
        apiVersion: "v1",
        metadata: {},
        status: "Success",
        details: { name: "c", kind: "configmaps", uid: cm.metadata.uid }
      })
      const again = yield* call("DELETE", `${configmaps}/c`)
      assert.strictEqual(again.status, 404)
      assert.strictEqual(again.body.message, `configmaps "c" not found`)
    })))

  it.effect("delete preconditions: a uid or resourceVersion mismatch is a 409 and the object stays", () =>
    withCluster(Effect.gen(function*() {
      const cm = (yield* post(configmaps, configMap("c"))).body
      const wrongUid = yield* call("DELETE", `${configmaps}/c`, { body: { preconditions: { uid: "other-uid" } } })
      assert.strictEqual(wrongUid.status, 409)
      assert.strictEqual(wrongUid.body.reason, "Conflict")
      assert.strictEqual(
        wrongUid.body.message,
        // kube-apiserver's store words it with the Kind, not the resource
        `Operation cannot be fulfilled on ConfigMap "c": the UID in the precondition (other-uid) does not match the UID in record (${cm.metadata.uid}). The object might have been deleted and then recreated`
      )
      const wrongRv = yield* call("DELETE", `${configmaps}/c`, { body: { preconditions: { resourceVersion: "1" } } })
      assert.strictEqual(wrongRv.status, 409)
      assert.match(wrongRv.body.message, /the ResourceVersion in the precondition \(1\) does not match the ResourceVersion in record \(\d+\)/)
      const dry = yield* call("DELETE", `${configmaps}/c?dryRun=All`, {
        body: { preconditions: { uid: cm.metadata.uid } }
      })
      assert.strictEqual(dry.status, 200)
      assert.strictEqual((yield* get(`${configmaps}/c`)).status, 200)
      const ok = yield* call("DELETE", `${configmaps}/c`, { body: { preconditions: { uid: cm.metadata.uid } } })
      assert.strictEqual(ok.status, 200)
      assert.strictEqual((yield* get(`${configmaps}/c`)).status, 404)
    })))

  it.effect("an object with finalizers stays, marked for deletion, until they are removed", () =>
    withCluster(Effect.gen(function*() {
      yield* post(configmaps, { ...configMap("f"), metadata: { name: "f", finalizers: ["example.com/keep"] } })
      const marked = yield* call("DELETE", `${configmaps}/f`)
      assert.strictEqual(marked.status, 200)
      const live = (yield* get(`${configmaps}/f`)).body
      assert.isString(live.metadata.deletionTimestamp)
      const released = yield* patch(`${configmaps}/f`, { metadata: { finalizers: null } }, "application/merge-patch+json")
      assert.strictEqual(released.status, 200)
      assert.strictEqual((yield* get(`${configmaps}/f`)).status, 404)
    })))

  it.effect("deletecollection deletes what the selector matches and answers their List", () =>
    withCluster(Effect.gen(function*() {
      for (const [name, app] of [["a", "x"], ["b", "x"], ["c", "y"]]) {
        yield* post(configmaps, configMap(name!, { app: app! }))
      }
      const deleted = yield* call("DELETE", `${configmaps}?labelSelector=app%3Dx`)
      assert.strictEqual(deleted.status, 200)
      assert.strictEqual(deleted.body.kind, "ConfigMapList")
      assert.deepStrictEqual(deleted.body.items.map((i: { metadata: { name: string } }) => i.metadata.name), ["a", "b"])
      const left = (yield* get(configmaps)).body
      assert.deepStrictEqual(left.items.map((i: { metadata: { name: string } }) => i.metadata.name), ["c"])
    })))

  it.effect("namespaces are Active; autoCreateNamespaces: a write into a new one creates it; deleting one removes its objects", () =>
    withCluster(Effect.gen(function*() {
      const initial = (yield* get("/api/v1/namespaces")).body
      assert.deepStrictEqual(
        initial.items.map((n: { metadata: { name: string } }) => n.metadata.name),
        ["default", "kube-node-lease", "kube-public", "kube-system"]
      )
      assert.strictEqual(initial.items[0].status.phase, "Active")
      assert.strictEqual((yield* post("/api/v1/namespaces/team/configmaps", configMap("c"))).status, 201)
      const team = (yield* get("/api/v1/namespaces/team")).body
      assert.strictEqual(team.status.phase, "Active")
      const deleted = yield* call("DELETE", "/api/v1/namespaces/team")
      assert.strictEqual(deleted.body.kind, "Namespace")
      assert.strictEqual(deleted.body.status.phase, "Terminating")
      // the namespace controller empties it after its start delay, on the clock
      yield* TestClock.adjust("1 second")
      assert.strictEqual((yield* get("/api/v1/namespaces/team/configmaps/c")).status, 404)
      assert.strictEqual((yield* get("/api/v1/namespaces/team")).status, 404)
    }), { autoCreateNamespaces: true, controllers: { namespace: { contentDeletionDelayMs: 500 } } }))
})

const names = (answer: Answer): Array<string> =>
  answer.body.items.map((i: { metadata: { name: string } }) => i.metadata.name)

describe("lists", () => {
  it.effect("a list has <Kind>List, apiVersion, the current resourceVersion and items without apiVersion and kind", () =>
    withCluster(Effect.gen(function*() {
      const control = yield* cluster
      yield* post(pods, pod("b"))
      yield* post(pods, pod("a"))
      yield* post("/api/v1/namespaces/other/pods", pod("c"))
      const list = yield* get(pods)
      assert.strictEqual(list.body.kind, "PodList")
      assert.strictEqual(list.body.apiVersion, "v1")
      assert.strictEqual(list.body.metadata.resourceVersion, control.resourceVersion())
      assert.deepStrictEqual(names(list), ["a", "b"])
      // as kube-apiserver encodes a typed list: the items' kind is the list's
      assert.isFalse("apiVersion" in list.body.items[0])
      assert.isFalse("kind" in list.body.items[0])
      const everywhere = yield* get("/api/v1/pods")
      assert.deepStrictEqual(names(everywhere), ["a", "b", "c"])
      const deployments = yield* get("/apis/apps/v1/deployments")
      assert.deepStrictEqual(deployments.body, {
        kind: "DeploymentList",
        apiVersion: "apps/v1",
        metadata: { resourceVersion: control.resourceVersion() },
        items: []
      })
    }), { namespaces: ["other"] }))

  it.effect("label selectors: = == != in notin exists !key and commas", () =>
    withCluster(Effect.gen(function*() {
      yield* post(configmaps, configMap("web", { app: "web", tier: "front" }))
      yield* post(configmaps, configMap("api", { app: "api", tier: "back" }))
      yield* post(configmaps, configMap("db", { app: "db" }))
      yield* post(configmaps, configMap("bare"))
      const select = (selector: string) =>
        Effect.map(get(`${configmaps}?labelSelector=${encodeURIComponent(selector)}`), names)
      assert.deepStrictEqual(yield* select("app=web"), ["web"])
      assert.deepStrictEqual(yield* select("app==api"), ["api"])
      assert.deepStrictEqual(yield* select("app!=web"), ["api", "bare", "db"])
      assert.deepStrictEqual(yield* select("app in (web, db)"), ["db", "web"])
      assert.deepStrictEqual(yield* select("app notin (web,db)"), ["api", "bare"])
      assert.deepStrictEqual(yield* select("tier"), ["api", "web"])
      assert.deepStrictEqual(yield* select("!tier"), ["bare", "db"])
      assert.deepStrictEqual(yield* select("app,!tier"), ["db"])
      assert.deepStrictEqual(yield* select("app in (web,api),tier=back"), ["api"])
      const bad = yield* get(`${configmaps}?labelSelector=${encodeURIComponent("app=(x")}`)
      assert.strictEqual(bad.status, 400)
      assert.strictEqual(bad.body.reason, "BadRequest")
    })))

  it.effect("field selectors: metadata.name, metadata.namespace, a pod's status.phase; others are a 400", () =>
    withCluster(Effect.gen(function*() {
      const control = yield* cluster
      yield* post(pods, pod("a"))
      yield* post(pods, pod("b"))
      yield* post("/api/v1/namespaces/other/pods", pod("a"))
      control.setPodPhase("default", "b", "Running")
      const select = (path: string, selector: string) =>
        Effect.map(get(`${path}?fieldSelector=${encodeURIComponent(selector)}`), (a) =>
          a.body.items.map((i: { metadata: { namespace: string; name: string } }) =>
            `${i.metadata.namespace}/${i.metadata.name}`
          ))
      assert.deepStrictEqual(yield* select(pods, "metadata.name=a"), ["default/a"])
      assert.deepStrictEqual(yield* select("/api/v1/pods", "metadata.name==a"), ["default/a", "other/a"])
      assert.deepStrictEqual(yield* select("/api/v1/pods", "metadata.namespace!=default"), ["other/a"])
      assert.deepStrictEqual(yield* select("/api/v1/pods", "status.phase=Running"), ["default/b"])
      assert.deepStrictEqual(
        yield* select("/api/v1/pods", "status.phase!=Running,metadata.name=a"),
        ["default/a", "other/a"]
      )
      const bad = yield* get(`${configmaps}?fieldSelector=data.a%3D1`)
      assert.strictEqual(bad.status, 400)
      assert.strictEqual(bad.body.message, "field label not supported: data.a")
    }), { namespaces: ["other"] }))

  it.effect("limit/continue pages in key order at one resourceVersion; remainingItemCount; 410 once compacted", () =>
    withCluster(Effect.gen(function*() {
      const control = yield* cluster
      control.seed(Array.from({ length: 25 }, (_, i) => configMap(`cm-${String(i).padStart(2, "0")}`)))
      const first = yield* get(`${configmaps}?limit=10`)
      assert.deepStrictEqual(names(first), Array.from({ length: 10 }, (_, i) => `cm-${String(i).padStart(2, "0")}`))
      assert.strictEqual(first.body.metadata.remainingItemCount, 15)
      const rv = first.body.metadata.resourceVersion
      const token = first.body.metadata.continue
      assert.isString(token)
      yield* post(configmaps, configMap("zz-new"))
      const second = yield* get(`${configmaps}?limit=10&continue=${encodeURIComponent(token)}`)
      assert.strictEqual(names(second)[0], "cm-10")
      assert.strictEqual(second.body.metadata.resourceVersion, rv)
      const third = yield* get(`${configmaps}?limit=10&continue=${encodeURIComponent(second.body.metadata.continue)}`)
      assert.deepStrictEqual(names(third).slice(-2), ["cm-24", "zz-new"])
      assert.isUndefined(third.body.metadata.continue)
      const filtered = yield* get(`${configmaps}?limit=1&labelSelector=missing`)
      assert.deepStrictEqual(names(filtered), [])

      control.compact()
      const expired = yield* get(`${configmaps}?limit=10&continue=${encodeURIComponent(token)}`)
      assert.strictEqual(expired.status, 410)
      assert.strictEqual(expired.body.reason, "Expired")
      assert.strictEqual(expired.body.code, 410)
      assert.match(expired.body.message, /^The provided continue parameter is too old/)
      const garbage = yield* get(`${configmaps}?limit=10&continue=not-a-token`)
      assert.strictEqual(garbage.status, 400)
      assert.match(garbage.body.message, /^continue key is not valid/)
    })))
})

describe("patches", () => {
  it.effect("JSON merge patch (RFC 7386): objects merge, null removes, lists replace", () =>
    withCluster(Effect.gen(function*() {
      yield* post(configmaps, { ...configMap("c", { a: "1", b: "2" }), data: { x: "1", y: "2" } })
      const patched = yield* patch(
        `${configmaps}/c`,
        { metadata: { labels: { a: null, c: "3" } }, data: { y: null, z: "3" } },
        "application/merge-patch+json"
      )
      assert.strictEqual(patched.status, 200)
      assert.deepStrictEqual(patched.body.metadata.labels, { b: "2", c: "3" })
      assert.deepStrictEqual(patched.body.data, { x: "1", z: "3" })
    })))

  it.effect("JSON patch (RFC 6902) with test: a failed test is a 422 and changes nothing", () =>
    withCluster(Effect.gen(function*() {
      const created = (yield* post(configmaps, configMap("c"))).body
      const ok = yield* patch(`${configmaps}/c`, [
        { op: "test", path: "/data/a", value: "1" },
        { op: "replace", path: "/data/a", value: "2" },
        // an empty labels map is not stored (Go's omitempty, as on kube-apiserver): the patch makes it first
        { op: "add", path: "/metadata/labels", value: {} },
        { op: "add", path: "/metadata/labels/app.kubernetes.io~1name", value: "x" },
        { op: "copy", from: "/data/a", path: "/data/b" },
        { op: "move", from: "/data/b", path: "/data/c" }
      ], "application/json-patch+json")
      assert.strictEqual(ok.status, 200)
      assert.deepStrictEqual(ok.body.data, { a: "2", c: "2" })
      assert.deepStrictEqual(ok.body.metadata.labels, { "app.kubernetes.io/name": "x" })
      const failed = yield* patch(`${configmaps}/c`, [
        { op: "replace", path: "/data/a", value: "3" },
        { op: "test", path: "/data/a", value: "1" }
      ], "application/json-patch+json")
      assert.strictEqual(failed.status, 422)
      assert.strictEqual(failed.body.reason, "Invalid")
      assert.strictEqual((yield* get(`${configmaps}/c`)).body.data.a, "2")
      const optimistic = yield* patch(
        `${configmaps}/c`,
        { metadata: { resourceVersion: created.metadata.resourceVersion }, data: { a: "9" } },
        "application/merge-patch+json"
      )
      assert.strictEqual(optimistic.status, 409)
    })))

  it.effect("strategic merge patch merges containers, env and ports by key and honours $patch: delete", () =>
    withCluster(Effect.gen(function*() {
      // a Deployment's template: a pod's own containers could not be removed nor its tolerations replaced
      const deployments = "/apis/apps/v1/namespaces/default/deployments"
      yield* post(deployments, {
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name: "d" },
        spec: {
          selector: { matchLabels: { app: "d" } },
          template: {
            metadata: { labels: { app: "d" } },
            spec: {
              containers: [
                {
                  name: "app",
                  image: "app:1",
                  env: [{ name: "A", value: "1" }, { name: "B", value: "2" }],
                  ports: [{ containerPort: 80 }]
                },
                { name: "sidecar", image: "side:1" }
              ],
              tolerations: [{ key: "a" }]
            }
          }
        }
      })
      const patched = yield* patch(`${deployments}/d`, {
        spec: {
          template: {
            spec: {
              containers: [
                {
                  name: "app",
                  image: "app:2",
                  env: [{ name: "B", value: "20" }, { name: "C", value: "3" }],
                  ports: [{ containerPort: 80, name: "http" }]
                },
                { name: "sidecar", $patch: "delete" }
              ],
              tolerations: [{ key: "b" }]
            }
          }
        }
      }, "application/strategic-merge-patch+json")
      assert.strictEqual(patched.status, 200)
      const [app, ...others] = patched.body.spec.template.spec.containers
      assert.strictEqual(others.length, 0)
      assert.strictEqual(app.image, "app:2")
      assert.deepStrictEqual(app.env, [{ name: "A", value: "1" }, { name: "B", value: "20" }, { name: "C", value: "3" }])
      // the port's protocol is the API server's default
      assert.deepStrictEqual(app.ports, [{ containerPort: 80, name: "http", protocol: "TCP" }])
      assert.deepStrictEqual(patched.body.spec.template.spec.tolerations, [{ key: "b" }])
      const unsupported = yield* patch(`${deployments}/d`, {}, "text/plain")
      assert.strictEqual(unsupported.status, 415)
      assert.strictEqual(unsupported.body.reason, "UnsupportedMediaType")
    })))

  it.effect("strategic merge patch of a custom resource is a 415, like the API server", () =>
    withCluster(Effect.gen(function*() {
      const path = "/apis/example.com/v1/namespaces/default/widgets"
      yield* post(path, { apiVersion: "example.com/v1", kind: "Widget", metadata: { name: "w" }, spec: { size: 1 } })
      const strategic = yield* patch(`${path}/w`, { spec: { size: 2 } }, "application/strategic-merge-patch+json")
      assert.strictEqual(strategic.status, 415)
      const merge = yield* patch(`${path}/w`, { spec: { size: 2 } }, "application/merge-patch+json")
      assert.strictEqual(merge.body.spec.size, 2)
    }), { resources: [{ apiVersion: "example.com/v1", kind: "Widget", plural: "widgets", namespaced: true }] }))
})

const applyPatch = (path: string, yaml: string, query: string) =>
  call("PATCH", `${path}?${query}`, { body: yaml, contentType: "application/apply-patch+yaml" })

describe("server-side apply", () => {
  it.effect("needs a fieldManager (422 as on the API server), creates, then merges and records the manager", () =>
    withCluster(Effect.gen(function*() {
      const yaml = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  labels:\n    app: x\ndata:\n  a: '1'\n"
      const noManager = yield* applyPatch(`${configmaps}/c`, yaml, "")
      assert.strictEqual(noManager.status, 422)
      assert.strictEqual(
        noManager.body.message,
        `PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch`
      )
      const created = yield* applyPatch(`${configmaps}/c`, yaml, "fieldManager=tool")
      assert.strictEqual(created.status, 201)
      assert.deepStrictEqual(created.body.data, { a: "1" })
      const entry = created.body.metadata.managedFields[0]
      assert.strictEqual(entry.manager, "tool")
      assert.strictEqual(entry.operation, "Apply")
      assert.strictEqual(entry.fieldsType, "FieldsV1")
      assert.deepStrictEqual(entry.fieldsV1, { "f:data": { "f:a": {} }, "f:metadata": { "f:labels": { "f:app": {} } } })
      const more = JSON.stringify(configMap("c", { app: "x" }, { a: "1", b: "2" }))
      const merged = yield* applyPatch(`${configmaps}/c`, more, "fieldManager=tool")
      assert.strictEqual(merged.status, 200)
      assert.deepStrictEqual(merged.body.data, { a: "1", b: "2" })
      assert.strictEqual(merged.body.metadata.uid, created.body.metadata.uid)
    })))

  it.effect("a field owned by another manager with a different value is a 409 conflict unless force", () =>
    withCluster(Effect.gen(function*() {
      const deployments = "/apis/apps/v1/namespaces/default/deployments"
      const manifest = (replicas: number) =>
        JSON.stringify({
          apiVersion: "apps/v1",
          kind: "Deployment",
          metadata: { name: "web" },
          spec: {
            replicas,
            selector: { matchLabels: { app: "web" } },
            template: { metadata: { labels: { app: "web" } }, spec: { containers: [{ name: "web", image: "web:1" }] } }
          }
        })
      assert.strictEqual((yield* applyPatch(`${deployments}/web`, manifest(1), "fieldManager=other-manager")).status, 201)
      const same = yield* applyPatch(`${deployments}/web`, manifest(1), "fieldManager=mine")
      assert.strictEqual(same.status, 200)
      const conflict = yield* applyPatch(`${deployments}/web`, manifest(3), "fieldManager=mine")
      assert.strictEqual(conflict.status, 409)
      assert.strictEqual(conflict.body.reason, "Conflict")
      assert.strictEqual(conflict.body.message, `Apply failed with 1 conflict: conflict with "other-manager": .spec.replicas`)
      assert.deepStrictEqual(conflict.body.details.causes, [{
        reason: "FieldManagerConflict",
        message: `conflict with "other-manager"`,
        field: ".spec.replicas"
      }])
      const forced = yield* applyPatch(`${deployments}/web`, manifest(3), "fieldManager=mine&force=true")
      assert.strictEqual(forced.status, 200)
      assert.strictEqual(forced.body.spec.replicas, 3)
      const other = forced.body.metadata.managedFields.find((e: { manager: string }) => e.manager === "other-manager")
      assert.isUndefined(other.fieldsV1["f:spec"]["f:replicas"])
      const back = yield* applyPatch(`${deployments}/web`, manifest(2), "fieldManager=other-manager")
      assert.strictEqual(back.status, 409)
      assert.strictEqual(back.body.message, `Apply failed with 1 conflict: conflict with "mine": .spec.replicas`)
    })))

  it.effect("conflicts inside keyed list elements are named by key; several are listed per manager", () =>
    withCluster(Effect.gen(function*() {
      const deployments = "/apis/apps/v1/namespaces/default/deployments"
      const manifest = (image: string, replicas: number, extra: Array<Record<string, unknown>> = []) =>
        JSON.stringify({
          apiVersion: "apps/v1",
          kind: "Deployment",
          metadata: { name: "web" },
          spec: {
            replicas,
            selector: { matchLabels: { app: "web" } },
            template: { metadata: { labels: { app: "web" } }, spec: { containers: [{ name: "web", image }, ...extra] } }
          }
        })
      yield* applyPatch(`${deployments}/web`, manifest("web:1", 1), "fieldManager=a")
      const one = yield* applyPatch(`${deployments}/web`, manifest("web:2", 1), "fieldManager=b")
      assert.strictEqual(
        one.body.message,
        `Apply failed with 1 conflict: conflict with "a": .spec.template.spec.containers[name="web"].image`
      )
      const two = yield* applyPatch(`${deployments}/web`, manifest("web:2", 2), "fieldManager=b")
      assert.strictEqual(
        two.body.message,
        `Apply failed with 2 conflicts: conflicts with "a":\n- .spec.replicas\n- .spec.template.spec.containers[name="web"].image`
      )
      const sidecar = yield* applyPatch(
        `${deployments}/web`,
        manifest("web:1", 1, [{ name: "sidecar", image: "side:1" }]),
        "fieldManager=b"
      )
      assert.strictEqual(sidecar.status, 200)
      assert.deepStrictEqual(
        sidecar.body.spec.template.spec.containers.map((c: { name: string }) => c.name),
        ["web", "sidecar"]
      )
      const b = sidecar.body.metadata.managedFields.find((e: { manager: string }) => e.manager === "b")
      assert.deepStrictEqual(
        Object.keys(b.fieldsV1["f:spec"]["f:template"]["f:spec"]["f:containers"]).sort(),
        [`k:{"name":"sidecar"}`, `k:{"name":"web"}`]
      )
      const withdrawn = yield* applyPatch(`${deployments}/web`, manifest("web:1", 1), "fieldManager=b")
      assert.deepStrictEqual(
        withdrawn.body.spec.template.spec.containers.map((c: { name: string }) => c.name),
        ["web"]
      )
    })))

  it.effect("an update by another writer takes ownership of what it changed; fields the applier stops sending are removed", () =>
    withCluster(Effect.gen(function*() {
      const yaml = (data: Record<string, string>) => JSON.stringify(configMap("c", {}, data))
      yield* applyPatch(`${configmaps}/c`, yaml({ a: "1", b: "2" }), "fieldManager=tool")
      const scaled = yield* patch(
        `${configmaps}/c?fieldManager=kubectl-edit`,
        { data: { a: "9" } },
        "application/merge-patch+json"
      )
      const updater = scaled.body.metadata.managedFields.find((e: { manager: string }) => e.manager === "kubectl-edit")
      assert.strictEqual(updater.operation, "Update")
      const conflict = yield* applyPatch(`${configmaps}/c`, yaml({ a: "1", b: "2" }), "fieldManager=tool")
      assert.strictEqual(conflict.status, 409)
      assert.match(
        conflict.body.message,
        /^Apply failed with 1 conflict: conflict with "kubectl-edit" using v1 at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ: \.data\.a$/
      )
      const dropped = yield* applyPatch(`${configmaps}/c`, yaml({ a: "9" }), "fieldManager=tool")
      assert.strictEqual(dropped.status, 200)
      assert.deepStrictEqual(dropped.body.data, { a: "9" })
    })))

  it.effect("fieldsV1 is written as structured-merge-diff writes it: a list element's \".\" first, then members sorted", () =>
    withCluster(Effect.gen(function*() {
      const created = yield* post(pods, {
        ...pod("ordered", { zone: "a", app: "x" }),
        spec: {
          containers: [
            { name: "web", image: "nginx", ports: [{ containerPort: 80 }], env: [{ name: "B", value: "2" }] },
            { name: "db", image: "postgres" }
          ]
        }
      })
      assert.strictEqual(created.status, 201)
      // the order of the answer's text, as a client reads it
      const fieldsV1 = JSON.parse(created.text).metadata.managedFields[0].fieldsV1
      const misordered: Array<string> = []
      const check = (node: Record<string, Record<string, unknown>>, path: string) => {
        const keys = Object.keys(node)
        const expected = [...keys].sort()
        if (keys.join() !== expected.join()) misordered.push(`${path}: ${keys.join(" ")}`)
        for (const k of keys) check(node[k] as Record<string, Record<string, unknown>>, `${path}/${k}`)
      }
      check(fieldsV1, "")
      assert.deepStrictEqual(misordered, [])
      const containers = fieldsV1["f:spec"]["f:containers"]
      assert.deepStrictEqual(Object.keys(containers), ['k:{"name":"db"}', 'k:{"name":"web"}'])
      assert.deepStrictEqual(Object.keys(containers['k:{"name":"web"}']).slice(0, 2), [".", "f:env"])
      const [port] = Object.values(containers['k:{"name":"web"}']["f:ports"]) as Array<Record<string, unknown>>
      assert.deepStrictEqual(Object.keys(port!), [".", "f:containerPort", "f:protocol"])
      // an Update owns the labels map itself too (its "." first), as kube-apiserver writes it
      assert.deepStrictEqual(fieldsV1["f:metadata"], { "f:labels": { ".": {}, "f:app": {}, "f:zone": {} } })
      assert.deepStrictEqual(Object.keys(fieldsV1["f:metadata"]["f:labels"]), [".", "f:app", "f:zone"])
    })))
})

describe("discovery", () => {
  it.effect("serves /api, /apis, group versions with short names, /version and OpenAPI v2", () =>
    withCluster(Effect.gen(function*() {
      const api = (yield* get("/api")).body
      assert.strictEqual(api.kind, "APIVersions")
      assert.deepStrictEqual(api.versions, ["v1"])
      const v1 = (yield* get("/api/v1")).body
      assert.strictEqual(v1.kind, "APIResourceList")
      assert.strictEqual(v1.groupVersion, "v1")
      const resource = (name: string, list = v1) => list.resources.find((r: { name: string }) => r.name === name)
      const podsDoc = resource("pods")
      assert.strictEqual(podsDoc.kind, "Pod")
      assert.strictEqual(podsDoc.singularName, "pod")
      assert.isTrue(podsDoc.namespaced)
      assert.deepStrictEqual(podsDoc.shortNames, ["po"])
      assert.deepStrictEqual(podsDoc.verbs, ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"])
      assert.isDefined(resource("pods/log"))
      assert.deepStrictEqual(resource("services").shortNames, ["svc"])
      assert.deepStrictEqual(resource("configmaps").shortNames, ["cm"])
      assert.isFalse(resource("namespaces").namespaced)
      assert.deepStrictEqual(resource("namespaces").shortNames, ["ns"])
      const apis = (yield* get("/apis")).body
      assert.strictEqual(apis.kind, "APIGroupList")
      const groups = apis.groups.map((g: { name: string }) => g.name)
      for (const g of ["apps", "batch", "rbac.authorization.k8s.io", "apiextensions.k8s.io", "template.openshift.io", "example.com"]) {
        assert.include(groups, g)
      }
      const apps = (yield* get("/apis/apps/v1")).body
      assert.deepStrictEqual(resource("deployments", apps).shortNames, ["deploy"])
      const widgets = resource("widgets", (yield* get("/apis/example.com/v1")).body)
      assert.strictEqual(widgets.kind, "Widget")
      const version = (yield* get("/version")).body
      assert.strictEqual(version.major, "1")
      assert.isString(version.minor)
      assert.match(version.gitVersion, /^v1\./)
      // its documents in detail: FakeCluster.openapi.test.ts
      const v2 = (yield* get("/openapi/v2")).body
      assert.strictEqual(v2.swagger, "2.0")
      // a kind registered through the options has no CRD: its schema takes any fields
      assert.isTrue(v2.definitions["com.example.v1.Widget"]["x-kubernetes-preserve-unknown-fields"])
      assert.strictEqual((yield* get("/apis/nope.example.com/v1")).status, 404)
    }), { resources: [{ apiVersion: "example.com/v1", kind: "Widget", plural: "widgets", namespaced: true }] }))

  it.effect("a CustomResourceDefinition created later is served and listed in discovery", () =>
    withCluster(Effect.gen(function*() {
      assert.strictEqual((yield* get("/apis/stable.example.com/v1")).status, 404)
      const crd = yield* post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", {
        apiVersion: "apiextensions.k8s.io/v1",
        kind: "CustomResourceDefinition",
        metadata: { name: "crontabs.stable.example.com" },
        spec: {
          group: "stable.example.com",
          scope: "Cluster",
          names: { plural: "crontabs", singular: "crontab", kind: "CronTab", shortNames: ["ct"] },
          versions: [{
            name: "v1",
            served: true,
            storage: true,
            // the API server prunes what the schema does not declare
            schema: {
              openAPIV3Schema: {
                type: "object",
                properties: { spec: { type: "object", properties: { cronSpec: { type: "string" } } } }
              }
            }
          }]
        }
      })
      assert.strictEqual(crd.status, 201)
      const doc = (yield* get("/apis/stable.example.com/v1")).body
      assert.deepStrictEqual(
        doc.resources.map((r: { name: string; kind: string; namespaced: boolean }) => [r.name, r.kind, r.namespaced]),
        [["crontabs", "CronTab", false]]
      )
      const created = yield* post("/apis/stable.example.com/v1/crontabs", {
        apiVersion: "stable.example.com/v1",
        kind: "CronTab",
        metadata: { name: "nightly" },
        spec: { cronSpec: "0 0 * * *" }
      })
      assert.strictEqual(created.status, 201)
      assert.strictEqual((yield* get("/apis/stable.example.com/v1/crontabs/nightly")).body.spec.cronSpec, "0 0 * * *")
      yield* call("DELETE", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/crontabs.stable.example.com")
      yield* TestClock.adjust("1 second")
      assert.strictEqual((yield* get("/apis/stable.example.com/v1/crontabs")).status, 404)
    }), { controllers: { crd: true } }))
})

describe("controls", () => {
  it.effect("seed, get, list, update and remove work on snapshots and bump resourceVersions", () =>
    withCluster(Effect.gen(function*() {
      const control = yield* cluster
      const [seeded] = control.seed([{ ...pod("p", { app: "x" }), status: { phase: "Running" } }])
      assert.strictEqual(seeded!.metadata.namespace, "default")
      assert.strictEqual((seeded!.status as { phase: string }).phase, "Running")
      const copy = control.get({ apiVersion: "v1", kind: "Pod", name: "p" })!
      ;(copy.metadata.labels as Record<string, string>).app = "changed"
      assert.strictEqual(control.get({ apiVersion: "v1", kind: "pods", name: "p" })!.metadata.labels!.app, "x")
      const updated = control.update({ apiVersion: "v1", kind: "Pod", name: "p" }, { metadata: { labels: { app: "y" } } })
      assert.isAbove(Number(updated.metadata.resourceVersion), Number(seeded!.metadata.resourceVersion))
      assert.strictEqual((yield* get(`${pods}/p`)).body.metadata.labels.app, "y")
      control.update({ apiVersion: "v1", kind: "Pod", name: "p" }, (p) => {
        ;(p.spec as { containers: Array<{ image: string }> }).containers[0]!.image = "nginx"
      })
      assert.strictEqual(control.get({ apiVersion: "v1", kind: "Pod", name: "p" })!.metadata.generation, 2)
      assert.deepStrictEqual(control.list("v1", "Pod").map((p) => p.metadata.name), ["p"])
      assert.deepStrictEqual(control.list("v1", "pods", "elsewhere"), [])
      assert.isTrue(control.remove({ apiVersion: "v1", kind: "Pod", name: "p" }))
      assert.isFalse(control.remove({ apiVersion: "v1", kind: "Pod", name: "p" }))
      assert.throws(() => control.update({ apiVersion: "v1", kind: "Pod", name: "p" }, {}))
    })))

  it.effect("an update function may change anything of its copy in place, managedFields too: the stored versions keep theirs", () =>
    withCluster(Effect.gen(function*() {
      const control = yield* cluster
      const created = yield* post(`${configmaps}?fieldManager=writer`, configMap("c"))
      assert.strictEqual(created.body.metadata.managedFields[0].manager, "writer")
      control.update({ apiVersion: "v1", kind: "ConfigMap", name: "c" }, (c) => {
        const entry = (c.metadata.managedFields as Array<{ manager: string; fieldsV1: Record<string, unknown> }>)[0]!
        entry.manager = "changed in place"
        entry.fieldsV1["f:data"] = { "f:changed": {} }
        ;(c as unknown as { data: Record<string, string> }).data.a = "2"
      })
      const read = yield* get(`${configmaps}/c`)
      assert.strictEqual(read.body.data.a, "2")
      // the fake's own change keeps the managers it had
      assert.deepStrictEqual(read.body.metadata.managedFields, created.body.metadata.managedFields)
      const other = yield* post(`${configmaps}?fieldManager=writer`, configMap("d"))
      // the empty labels map is not stored (Go's omitempty), so nobody owns it; the data map itself is the writer's
      assert.deepStrictEqual(other.body.metadata.managedFields[0].fieldsV1, { "f:data": { ".": {}, "f:a": {} } })
    })))

  it.effect("the request log and the mutation count see every request; reset clears them", () =>
    withCluster(Effect.gen(function*() {
      const control = yield* cluster
      yield* get(`${pods}?labelSelector=a%3Db&limit=5`)
      yield* post(configmaps, configMap("c"))
      yield* patch(`${configmaps}/c`, { data: { b: "2" } }, "application/merge-patch+json")
      yield* call("DELETE", `${configmaps}/missing`)
      assert.deepStrictEqual(control.requests().map((r) => [r.method, r.path]), [
        ["GET", pods],
        ["POST", configmaps],
        ["PATCH", `${configmaps}/c`],
        ["DELETE", `${configmaps}/missing`]
      ])
      assert.deepStrictEqual(control.requests()[0]!.query, { labelSelector: "a=b", limit: "5" })
      assert.strictEqual(control.requests()[2]!.contentType, "application/merge-patch+json")
      assert.strictEqual(control.mutations(), 3)
      control.reset()
      assert.deepStrictEqual(control.requests(), [])
      assert.strictEqual(control.mutations(), 0)
    })))

  it.effect("with a token, requests without it are a 401 Status; setToken changes it", () =>
    withCluster(Effect.gen(function*() {
      const control = yield* cluster
      const bearer = (token: string) => call("GET", pods, { headers: { authorization: `Bearer ${token}` } })
      const none = yield* get(pods)
      assert.strictEqual(none.status, 401)
      assert.strictEqual(
        none.text,
        `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}`
      )
      assert.strictEqual((yield* bearer("t1")).status, 200)
      control.setToken("t2")
      assert.strictEqual((yield* bearer("t1")).status, 401)
      assert.strictEqual((yield* bearer("t2")).status, 200)
    }), { token: "t1" }))

  it.effect("failNext answers the API server's Status for the code (with Retry-After) for matching requests only", () =>
    withCluster(Effect.gen(function*() {
      const control = yield* cluster
      control.failNext({ status: 429, retryAfterSeconds: 2, count: 2, match: (method) => method === "GET" })
      const throttled = yield* get(pods)
      assert.strictEqual(throttled.status, 429)
      assert.strictEqual(throttled.headers["retry-after"], "2")
      assert.deepStrictEqual(throttled.body, {
        kind: "Status",
        apiVersion: "v1",
        metadata: {},
        status: "Failure",
        message: "Too many requests, please try again later.",
        reason: "TooManyRequests",
        details: { retryAfterSeconds: 2 },
        code: 429
      })
      assert.strictEqual((yield* post(configmaps, configMap("c"))).status, 201)
      assert.strictEqual((yield* get(pods)).status, 429)
      assert.strictEqual((yield* get(pods)).status, 200)
      control.failNext({ status: 503 })
      const unavailable = yield* post(configmaps, configMap("d"))
      assert.strictEqual(unavailable.status, 503)
      assert.strictEqual(unavailable.body.reason, "ServiceUnavailable")
      assert.strictEqual((yield* get(`${configmaps}/d`)).status, 404)
      assert.strictEqual(control.mutations(), 1)
    })))
})

describe("served on loopback", () => {
  it.effect("answers over HTTPS with a bearer token, writes a kubeconfig, and closes its sockets", () =>
    Effect.gen(function*() {
      const { ca, server } = pki()
      const served = yield* FakeCluster.serve({ token: "tok", tls: { cert: server.cert, key: server.key, ca: ca.cert } })
      assert.match(served.url, /^https:\/\/127\.0\.0\.1:\d+$/)
      assert.include(served.kubeconfig, `server: ${served.url}`)
      assert.include(served.kubeconfig, `certificate-authority-data: ${Buffer.from(ca.cert).toString("base64")}`)
      assert.include(served.kubeconfig, "namespace: default")
      assert.strictEqual(Fs.readFileSync(served.kubeconfigPath, "utf8"), served.kubeconfig)
      const agent = new Https.Agent({ ca: ca.cert, keepAlive: true })
      const request = (path: string, init: { method?: string; body?: string; token?: string } = {}) =>
        Effect.promise(() =>
          new Promise<{ status: number; body: Record<string, unknown> }>((resolve, reject) => {
            const req = Https.request(`${served.url}${path}`, {
              method: init.method ?? "GET",
              agent,
              headers: {
                ...(init.token !== undefined ? { authorization: `Bearer ${init.token}` } : {}),
                ...(init.body !== undefined ? { "content-type": "application/json" } : {})
              }
            }, (res) => {
              let text = ""
              res.setEncoding("utf8")
              res.on("data", (c: string) => (text += c))
              res.on("end", () => resolve({ status: res.statusCode!, body: JSON.parse(text) }))
            })
            req.on("error", reject)
            req.end(init.body)
          })
        )
      const denied = yield* request(pods)
      assert.strictEqual(denied.status, 401)
      assert.strictEqual(denied.body.reason, "Unauthorized")
      const created = yield* request(pods, { method: "POST", body: JSON.stringify(pod("p")), token: "tok" })
      assert.strictEqual(created.status, 201)
      const stored = served.control.get({ apiVersion: "v1", kind: "Pod", name: "p" })!
      assert.strictEqual(stored.metadata.uid, (created.body.metadata as { uid: string }).uid)
      const missing = yield* request(`${pods}/nope`, { token: "tok" })
      assert.strictEqual(missing.status, 404)
      assert.strictEqual(missing.body.message, `pods "nope" not found`)
      assert.strictEqual(served.openConnections(), 1)
      yield* Effect.promise(() => served.close())
      agent.destroy()
      assert.strictEqual(served.openConnections(), 0)
      assert.isFalse(Fs.existsSync(served.kubeconfigPath))
    }))

  it.effect("answers Node's fetch over plain HTTP", () =>
    Effect.gen(function*() {
      const served = yield* FakeCluster.serve()
      const created = yield* Effect.promise(() =>
        fetch(`${served.url}${configmaps}`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(configMap("c"))
        })
      )
      assert.strictEqual(created.status, 201)
      const list = yield* Effect.promise(() => fetch(`${served.url}${configmaps}`).then((r) => r.json()))
      // serve() runs the controllers: the root CA publisher's ConfigMap is there, as on a cluster
      assert.deepStrictEqual(
        list.items.map((i: { metadata: { name: string } }) => i.metadata.name),
        ["c", "kube-root-ca.crt"]
      )
    }))
})

// ---------------------------------------------------------------------------
// Stage 2: watches, logs, pod and job lifecycle, faults
// ---------------------------------------------------------------------------

interface WatchEvent {
  readonly type: string
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  readonly object: any
}

/** Opens a watch (the request is answered now) and returns its events as a stream. */
const openWatch = (path: string) =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    const response = yield* client.execute(HttpClientRequest.get(`${base}${path}`))
    assert.strictEqual(response.status, 200)
    assert.strictEqual(response.headers["content-type"], "application/json")
    return response.stream.pipe(
      Stream.decodeText(),
      Stream.splitLines,
      Stream.map((line) => JSON.parse(line) as WatchEvent)
    )
  })

const take = (events: Stream.Stream<WatchEvent, unknown>, n: number) =>
  Stream.runCollect(Stream.take(events, n))

const summary = (events: ReadonlyArray<WatchEvent>) => events.map((e) => `${e.type} ${e.object.metadata?.name ?? ""}`)

describe("watch", () => {
  it.effect("without a resourceVersion: ADDED for what exists, then every change as it happens", () =>
    withCluster(Effect.gen(function*() {
      const control = yield* cluster
      yield* post(configmaps, configMap("b"))
      yield* post(configmaps, configMap("a"))
      yield* post("/api/v1/namespaces/other/configmaps", configMap("elsewhere"))
      const events = yield* openWatch(`${configmaps}?watch=true`)
      assert.strictEqual(control.openWatches(), 1)
      yield* post(configmaps, configMap("c"))
      yield* patch(`${configmaps}/a`, { data: { a: "2" } }, "application/merge-patch+json")
      yield* post("/api/v1/namespaces/other/configmaps", configMap("ignored"))
      const deleted = yield* call("DELETE", `${configmaps}/b`)
      const seen = yield* take(events, 5)
      assert.deepStrictEqual(summary(seen), ["ADDED a", "ADDED b", "ADDED c", "MODIFIED a", "DELETED b"])
      assert.strictEqual(seen[3]!.object.data.a, "2")
      assert.strictEqual(seen[0]!.object.kind, "ConfigMap")
      assert.strictEqual(seen[0]!.object.apiVersion, "v1")
      const rvs = seen.slice(2).map((e) => Number(e.object.metadata.resourceVersion))
      assert.deepStrictEqual([...rvs].sort((x, y) => x - y), rvs)
      assert.strictEqual(seen[4]!.object.metadata.resourceVersion, control.resourceVersion())
      assert.strictEqual(deleted.body.status, "Success")
      assert.strictEqual(control.openWatches(), 0)
    })))

  it.effect("from a resourceVersion: replays every change after it, then goes on live", () =>
    withCluster(Effect.gen(function*() {
      const control = yield* cluster
      yield* post(configmaps, configMap("a"))
      const from = control.resourceVersion()
      yield* patch(`${configmaps}/a`, { data: { a: "2" } }, "application/merge-patch+json")
      yield* post(configmaps, configMap("b"))
      yield* call("DELETE", `${configmaps}/a`)
      const events = yield* openWatch(`${configmaps}?watch=1&resourceVersion=${from}`)
      yield* post(configmaps, configMap("c"))
      assert.deepStrictEqual(summary(yield* take(events, 4)), ["MODIFIED a", "ADDED b", "DELETED a", "ADDED c"])
    })))

  it.effect("a resourceVersion older than the compaction window: an ERROR event with a 410 Expired Status ends the stream", () =>
    withCluster(Effect.gen(function*() {
      const control = yield* cluster
      yield* post(configmaps, configMap("a"))
      const old = control.resourceVersion()
      for (const v of ["2", "3", "4", "5"]) {
        yield* patch(`${configmaps}/a`, { data: { a: v } }, "application/merge-patch+json")
      }
      const events = yield* openWatch(`${configmaps}?watch=true&resourceVersion=${old}`)
      const all = yield* Stream.runCollect(events)
      assert.strictEqual(all.length, 1)
      assert.strictEqual(all[0]!.type, "ERROR")
      assert.deepInclude(all[0]!.object, { kind: "Status", apiVersion: "v1", status: "Failure", reason: "Expired", code: 410 })
      assert.match(all[0]!.object.message, /^too old resource version: \d+ \(\d+\)$/)
      // inside the window a watch works
      const recent = yield* openWatch(`${configmaps}?watch=true&resourceVersion=${Number(control.resourceVersion()) - 1}`)
      assert.deepStrictEqual(summary(yield* take(recent, 1)), ["MODIFIED a"])
      control.compact()
      const compacted = yield* openWatch(`${configmaps}?watch=true&resourceVersion=${Number(control.resourceVersion()) - 1}`)
      assert.strictEqual((yield* take(compacted, 1))[0]!.object.code, 410)
    }), { compactionWindow: 3 }))

  it.effect("selectors: an object that starts matching is ADDED, one that stops matching is DELETED at the new resourceVersion", () =>
    withCluster(Effect.gen(function*() {
      const control = yield* cluster
      yield* post(configmaps, configMap("a", { app: "x" }))
      yield* post(configmaps, configMap("b", { app: "y" }))
      const events = yield* openWatch(`${configmaps}?watch=true&labelSelector=app%3Dx`)
      yield* patch(`${configmaps}/b`, { metadata: { labels: { app: "x" } } }, "application/merge-patch+json")
      const left = yield* patch(`${configmaps}/a`, { metadata: { labels: { app: "z" } } }, "application/merge-patch+json")
      yield* patch(`${configmaps}/a`, { data: { unseen: "1" } }, "application/merge-patch+json")
      yield* patch(`${configmaps}/b`, { data: { seen: "1" } }, "application/merge-patch+json")
      const seen = yield* take(events, 4)
      assert.deepStrictEqual(summary(seen), ["ADDED a", "ADDED b", "DELETED a", "MODIFIED b"])
      assert.strictEqual(seen[2]!.object.metadata.resourceVersion, left.body.metadata.resourceVersion)
      assert.strictEqual(seen[2]!.object.metadata.labels.app, "x")
      const byName = yield* openWatch(`${configmaps}?watch=true&fieldSelector=metadata.name%3Db`)
      control.update({ apiVersion: "v1", kind: "ConfigMap", name: "a" }, { data: { x: "1" } })
      control.update({ apiVersion: "v1", kind: "ConfigMap", name: "b" }, { data: { x: "1" } })
      assert.deepStrictEqual(summary(yield* take(byName, 2)), ["ADDED b", "MODIFIED b"])
    })))

  it.effect("bookmarks carry only apiVersion, kind and resourceVersion, and only when allowed", () =>
    withCluster(Effect.gen(function*() {
      const control = yield* cluster
      const from = control.resourceVersion()
      const withBookmarks = yield* openWatch(`${pods}?watch=true&allowWatchBookmarks=true&resourceVersion=${from}`)
      const without = yield* openWatch(`${pods}?watch=true&resourceVersion=${from}`)
      yield* post(configmaps, configMap("unrelated"))
      control.bookmark()
      yield* post(pods, pod("p"))
      const seen = yield* take(withBookmarks, 2)
      assert.deepStrictEqual(seen[0], {
        type: "BOOKMARK",
        object: { kind: "Pod", apiVersion: "v1", metadata: { resourceVersion: String(Number(control.resourceVersion()) - 1) } }
      })
      assert.deepStrictEqual(summary(seen.slice(1)), ["ADDED p"])
      assert.deepStrictEqual(summary(yield* take(without, 1)), ["ADDED p"])
    })))

  it.effect("sendInitialEvents=true: ADDED for what exists, then a BOOKMARK marking the end of the initial events", () =>
    withCluster(Effect.gen(function*() {
      const control = yield* cluster
      yield* post(pods, pod("a"))
      const events = yield* openWatch(
        `${pods}?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true`
      )
      const seen = yield* take(events, 2)
      assert.deepStrictEqual(summary(seen), ["ADDED a", "BOOKMARK "])
      assert.deepStrictEqual(seen[1]!.object.metadata, {
        resourceVersion: control.resourceVersion(),
        annotations: { "k8s.io/initial-events-end": "true" }
      })
      const refused = yield* get(`${pods}?watch=true&sendInitialEvents=true`)
      assert.strictEqual(refused.status, 422)
    })))

  it.effect("timeoutSeconds ends the stream cleanly and the watch is dropped", () =>
    withCluster(Effect.gen(function*() {
      const control = yield* cluster
      const events = yield* openWatch(`${pods}?watch=true&timeoutSeconds=1`)
      const all = yield* Stream.runCollect(events)
      assert.strictEqual(all.length, 0)
      assert.strictEqual(control.openWatches(), 0)
    })))

  it.effect("dropWatchesAfter ends each watch after N events without a final event; expireWatches sends 410 mid-stream", () =>
    withCluster(Effect.gen(function*() {
      const control = yield* cluster
      control.dropWatchesAfter(2)
      const dropped = yield* openWatch(`${configmaps}?watch=true`)
      for (const name of ["a", "b", "c"]) yield* post(configmaps, configMap(name))
      assert.deepStrictEqual(summary(yield* Stream.runCollect(dropped)), ["ADDED a", "ADDED b"])
      control.dropWatchesAfter(undefined)
      const live = yield* openWatch(`${configmaps}?watch=true&resourceVersion=${control.resourceVersion()}`)
      yield* post(configmaps, configMap("d"))
      control.expireWatches()
      const seen = yield* Stream.runCollect(live)
      assert.deepStrictEqual(seen.map((e) => e.type), ["ADDED", "ERROR"])
      assert.strictEqual(seen[1]!.object.code, 410)
      assert.strictEqual(seen[1]!.object.reason, "Expired")
      assert.strictEqual(control.openWatches(), 0)
    })))

  it.effect("interrupting the client's stream drops the watch on the server", () =>
    withCluster(Effect.gen(function*() {
      const control = yield* cluster
      const events = yield* openWatch(`${pods}?watch=true`)
      const fiber = yield* Effect.forkChild(Stream.runDrain(events))
      yield* Effect.yieldNow
      assert.strictEqual(control.openWatches(), 1)
      yield* Fiber.interrupt(fiber)
      assert.strictEqual(control.openWatches(), 0)
    })))

  it.effect("on loopback, a client that disconnects closes its watch and its socket", () =>
    Effect.gen(function*() {
      const served = yield* FakeCluster.serve()
      const { first, request } = yield* Effect.promise(() =>
        new Promise<{ first: string; request: Http.ClientRequest }>((resolve, reject) => {
          const request = Http.get(`${served.url}${pods}?watch=true`, { agent: false }, (res) => {
            res.setEncoding("utf8")
            res.once("data", (chunk: string) => resolve({ first: chunk, request }))
          })
          request.on("error", reject)
          request.on("response", () => served.control.seed([pod("p")]))
        })
      )
      assert.strictEqual(JSON.parse(first).type, "ADDED")
      assert.strictEqual(served.control.openWatches(), 1)
      assert.strictEqual(served.openConnections(), 1)
      request.destroy()
      yield* waitUntil(() => served.control.openWatches() === 0 && served.openConnections() === 0)
    }))
})

/** Polls a condition a real server settles asynchronously (socket close events). */
const waitUntil = (condition: () => boolean) =>
  Effect.gen(function*() {
    for (let i = 0; i < 200 && !condition(); i++) yield* Effect.promise(() => new Promise((r) => setTimeout(r, 5)))
    assert.isTrue(condition(), "condition not reached")
  })

const logPath = (pod: string, query = "") => `${pods}/${pod}/log${query === "" ? "" : `?${query}`}`

const coreEvents = "/api/v1/namespaces/default/events"
const newEvents = "/apis/events.k8s.io/v1/namespaces/default/events"

/** An events.k8s.io Event with every field its conversion maps. */
const newEvent = (name: string) => ({
  apiVersion: "events.k8s.io/v1",
  kind: "Event",
  metadata: { name },
  eventTime: "2026-12-01T10:00:00.123456Z",
  series: { count: 2, lastObservedTime: "2026-12-01T10:05:00.000000Z" },
  reportingController: "example.com/scheduler",
  reportingInstance: "scheduler-1",
  action: "Binding",
  reason: "Scheduled",
  regarding: { apiVersion: "v1", kind: "Pod", name: "web", namespace: "default", uid: "u-1" },
  related: { apiVersion: "v1", kind: "Node", name: "node-1" },
  note: "Successfully assigned default/web to node-1",
  type: "Normal"
})

/** A core v1 Event as a kubelet of the old API records it. */
const oldEvent = (name: string) => ({
  apiVersion: "v1",
  kind: "Event",
  metadata: { name },
  involvedObject: { kind: "Pod", name: "web", namespace: "default", fieldPath: "spec.containers{main}" },
  reason: "BackOff",
  message: "Back-off restarting failed container",
  source: { component: "kubelet", host: "node-1" },
  firstTimestamp: "2026-12-01T09:00:00Z",
  lastTimestamp: "2026-12-01T09:30:00Z",
  count: 4,
  type: "Warning"
})

const eventFields = (e: Record<string, unknown>) => {
  const { apiVersion: _apiVersion, kind: _kind, metadata: _metadata, ...fields } = e
  return fields
}

describe("Events: one resource served as core v1 and events.k8s.io/v1", () => {
  it.effect("written through either API, read through the other: the same object, resourceVersion and uid, converted", () =>
    withCluster(Effect.gen(function*() {
      const created = yield* post(newEvents, newEvent("scheduled"))
      assert.strictEqual(created.status, 201)
      const asCore = yield* get(`${coreEvents}/scheduled`)
      assert.strictEqual(asCore.status, 200)
      assert.strictEqual(asCore.body.apiVersion, "v1")
      assert.strictEqual(asCore.body.metadata.uid, created.body.metadata.uid)
      assert.strictEqual(asCore.body.metadata.resourceVersion, created.body.metadata.resourceVersion)
      // Convert_v1_Event_To_core_Event, written as the core Go struct writes it (zero values included)
      assert.deepStrictEqual(eventFields(asCore.body), {
        involvedObject: { apiVersion: "v1", kind: "Pod", name: "web", namespace: "default", uid: "u-1" },
        reason: "Scheduled",
        message: "Successfully assigned default/web to node-1",
        source: {},
        firstTimestamp: null,
        lastTimestamp: null,
        type: "Normal",
        eventTime: "2026-12-01T10:00:00.123456Z",
        series: { count: 2, lastObservedTime: "2026-12-01T10:05:00.000000Z" },
        action: "Binding",
        related: { apiVersion: "v1", kind: "Node", name: "node-1" },
        reportingComponent: "example.com/scheduler",
        reportingInstance: "scheduler-1"
      })
      // and back: what the events.k8s.io API answers is what it was sent, with the Go struct's zero values
      assert.deepStrictEqual(eventFields(created.body), {
        ...eventFields(newEvent("scheduled")),
        deprecatedSource: {},
        deprecatedFirstTimestamp: null,
        deprecatedLastTimestamp: null
      })
      assert.deepStrictEqual((yield* get(`${newEvents}/scheduled`)).body, created.body)

      const old = yield* post(coreEvents, oldEvent("backoff"))
      assert.strictEqual(old.status, 201)
      const asNew = yield* get(`${newEvents}/backoff`)
      assert.strictEqual(asNew.body.apiVersion, "events.k8s.io/v1")
      assert.strictEqual(asNew.body.metadata.resourceVersion, old.body.metadata.resourceVersion)
      assert.deepStrictEqual(eventFields(asNew.body), {
        eventTime: null,
        reason: "BackOff",
        regarding: { kind: "Pod", name: "web", namespace: "default", fieldPath: "spec.containers{main}" },
        note: "Back-off restarting failed container",
        type: "Warning",
        deprecatedSource: { component: "kubelet", host: "node-1" },
        deprecatedFirstTimestamp: "2026-12-01T09:00:00Z",
        deprecatedLastTimestamp: "2026-12-01T09:30:00Z",
        deprecatedCount: 4
      })
      assert.deepStrictEqual(old.body.reportingComponent, "")

      // both lists hold both, in each API's form
      const listedNew = (yield* get(newEvents)).body
      const listedCore = (yield* get(coreEvents)).body
      assert.deepStrictEqual(listedNew.items.map((e: { metadata: { name: string } }) => e.metadata.name), ["backoff", "scheduled"])
      assert.deepStrictEqual(listedNew.items.map((e: { note: string }) => e.note), [asNew.body.note, created.body.note])
      assert.deepStrictEqual(listedCore.items.map((e: { message: string }) => e.message), [old.body.message, asCore.body.message])
      assert.strictEqual(listedNew.metadata.resourceVersion, listedCore.metadata.resourceVersion)

      // a change through the old API is the new API's too; the new API's own checks hold for its writes
      const bumped = yield* patch(`${coreEvents}/backoff`, { count: 5, lastTimestamp: "2026-12-01T09:40:00Z" }, "application/merge-patch+json")
      assert.strictEqual(bumped.status, 200)
      const reread = (yield* get(`${newEvents}/backoff`)).body
      assert.strictEqual(reread.deprecatedCount, 5)
      assert.strictEqual(reread.metadata.resourceVersion, bumped.body.metadata.resourceVersion)
      const series = yield* patch(
        `${newEvents}/scheduled`,
        { series: { count: 3, lastObservedTime: "2026-12-01T10:10:00.000000Z" } },
        "application/merge-patch+json"
      )
      assert.strictEqual(series.status, 200)
      assert.strictEqual((yield* get(`${coreEvents}/scheduled`)).body.series.count, 3)
      const immutable = yield* patch(`${newEvents}/scheduled`, { note: "changed" }, "application/merge-patch+json")
      assert.strictEqual(immutable.status, 422)
      assert.include(immutable.body.message, `message: Invalid value: "changed": field is immutable`)
      // the same PUT again is no write
      const same = yield* call("PUT", `${newEvents}/scheduled`, { body: series.body })
      assert.strictEqual(same.body.metadata.resourceVersion, series.body.metadata.resourceVersion)
      // the old API does not check what the new one requires
      const loose = yield* post(coreEvents, { metadata: { name: "loose" }, involvedObject: { kind: "Pod", name: "web" } })
      assert.strictEqual(loose.status, 201)
      const strict = yield* post(newEvents, { metadata: { name: "strict" }, regarding: { kind: "Pod", name: "web" } })
      assert.strictEqual(strict.status, 422)

      // deleted through one API, gone from both
      assert.strictEqual((yield* call("DELETE", `${newEvents}/backoff`)).status, 200)
      assert.strictEqual((yield* get(`${coreEvents}/backoff`)).status, 404)
      assert.strictEqual((yield* call("DELETE", `${coreEvents}/scheduled`)).status, 200)
      assert.strictEqual((yield* get(`${newEvents}/scheduled`)).status, 404)
    })))

  it.effect("each API's field selectors, mapped onto the one storage; watches see writes through the other API", () =>
    withCluster(Effect.gen(function*() {
      const control = yield* cluster
      const from = control.resourceVersion()
      const newWatch = yield* openWatch(`${newEvents}?watch=true&resourceVersion=${from}`)
      const coreWatch = yield* openWatch(`${coreEvents}?watch=true&resourceVersion=${from}&fieldSelector=reason%3DScheduled`)
      yield* post(newEvents, newEvent("scheduled"))
      yield* post(coreEvents, oldEvent("backoff"))
      yield* call("DELETE", `${newEvents}/scheduled`)

      const seenNew = yield* take(newWatch, 3)
      assert.deepStrictEqual(summary(seenNew), ["ADDED scheduled", "ADDED backoff", "DELETED scheduled"])
      for (const e of seenNew) assert.strictEqual(e.object.apiVersion, "events.k8s.io/v1")
      assert.strictEqual(seenNew[1]!.object.note, "Back-off restarting failed container")
      assert.strictEqual(seenNew[1]!.object.deprecatedCount, 4)
      const seenCore = yield* take(coreWatch, 2)
      assert.deepStrictEqual(summary(seenCore), ["ADDED scheduled", "DELETED scheduled"])
      assert.strictEqual(seenCore[0]!.object.message, "Successfully assigned default/web to node-1")
      assert.strictEqual(seenCore[0]!.object.reportingComponent, "example.com/scheduler")

      yield* post(newEvents, newEvent("scheduled"))
      const names = (path: string, selector: string) =>
        get(`${path}?fieldSelector=${encodeURIComponent(selector)}`).pipe(
          Effect.map((a) => a.status === 200 ? a.body.items.map((e: { metadata: { name: string } }) => e.metadata.name) : a.body.message)
        )
      assert.deepStrictEqual(yield* names(newEvents, "regarding.name=web"), ["backoff", "scheduled"])
      assert.deepStrictEqual(yield* names(newEvents, "regarding.fieldPath=spec.containers{main}"), ["backoff"])
      assert.deepStrictEqual(yield* names(newEvents, "reportingController=example.com/scheduler"), ["scheduled"])
      assert.deepStrictEqual(yield* names(newEvents, "type=Warning"), ["backoff"])
      // `source` is the source's component, else the reporting controller, through either API
      assert.deepStrictEqual(yield* names(newEvents, "source=kubelet"), ["backoff"])
      assert.deepStrictEqual(yield* names(coreEvents, "source=example.com/scheduler"), ["scheduled"])
      assert.deepStrictEqual(yield* names(coreEvents, "involvedObject.uid=u-1"), ["scheduled"])
      assert.deepStrictEqual(yield* names(coreEvents, "reportingComponent=example.com/scheduler"), ["scheduled"])
      // each API knows only its own labels
      assert.strictEqual(yield* names(newEvents, "involvedObject.name=web"), "field label not supported: involvedObject.name")
      assert.strictEqual(yield* names(coreEvents, "regarding.name=web"), "field label not supported: regarding.name")
    })))

  it.effect("the in-memory controls read, seed and change either form", () =>
    withCluster(Effect.gen(function*() {
      const control = yield* cluster
      control.seed([newEvent("seeded"), oldEvent("old")])
      const core = control.get({ apiVersion: "v1", kind: "Event", name: "seeded", namespace: "default" }) as Record<string, unknown>
      assert.strictEqual(core["message"], "Successfully assigned default/web to node-1")
      assert.strictEqual(core["reportingComponent"], "example.com/scheduler")
      const asNew = control.list("events.k8s.io/v1", "Event", "default") as ReadonlyArray<Record<string, unknown>>
      assert.deepStrictEqual(asNew.map((e) => e["note"]), ["Back-off restarting failed container", "Successfully assigned default/web to node-1"])
      assert.strictEqual(control.list("v1", "Event", "default").length, 2)
      const changed = control.update({ apiVersion: "events.k8s.io/v1", kind: "Event", name: "old", namespace: "default" }, {
        deprecatedCount: 9
      }) as Record<string, unknown>
      assert.strictEqual(changed["deprecatedCount"], 9)
      assert.strictEqual((yield* get(`${coreEvents}/old`)).body.count, 9)
      assert.isTrue(control.remove({ apiVersion: "events.k8s.io/v1", kind: "Event", name: "seeded", namespace: "default" }))
      assert.strictEqual((yield* get(`${coreEvents}/seeded`)).status, 404)
    })))
})

describe("pod logs", () => {
  it.effect("reads the log with tailLines, timestamps, limitBytes and sinceSeconds; 404 for a missing pod", () =>
    withCluster(Effect.gen(function*() {
      const control = yield* cluster
      yield* post(pods, pod("p"))
      control.appendLog("default", "p", ["one", "two", "three"])
      control.appendLog("default", "p", "four\nfi")
      assert.strictEqual((yield* get(logPath("p"))).text, "one\ntwo\nthree\nfour\nfi")
      assert.strictEqual((yield* get(logPath("p"))).headers["content-type"], "text/plain")
      assert.strictEqual((yield* get(logPath("p", "tailLines=2"))).text, "four\nfi")
      assert.strictEqual((yield* get(logPath("p", "limitBytes=6"))).text, "one\ntw")
      assert.strictEqual((yield* get(logPath("p", "sinceSeconds=60"))).text, "one\ntwo\nthree\nfour\nfi")
      const stamped = (yield* get(logPath("p", "timestamps=true&tailLines=1"))).text
      assert.match(stamped, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z fi$/)
      const missing = yield* get(logPath("nope"))
      assert.strictEqual(missing.status, 404)
      assert.strictEqual(missing.body.message, `pods "nope" not found`)
    })))

  it.effect("with several containers one must be named; previous needs a restarted container", () =>
    withCluster(Effect.gen(function*() {
      const control = yield* cluster
      yield* post(pods, { ...pod("p"), spec: { containers: [{ name: "a", image: "x" }, { name: "b", image: "x" }] } })
      control.appendLog("default", "p", ["from a"], { container: "a" })
      control.appendLog("default", "p", ["from b"], { container: "b" })
      const unnamed = yield* get(logPath("p"))
      assert.strictEqual(unnamed.status, 400)
      assert.strictEqual(unnamed.body.message, "a container name must be specified for pod p, choose one of: [a b]")
      assert.strictEqual((yield* get(logPath("p", "container=b"))).text, "from b\n")
      assert.strictEqual((yield* get(logPath("p", "container=c"))).status, 400)
      assert.strictEqual((yield* get(logPath("p", "container=a&previous=true"))).status, 400)
      control.endContainer("default", "p", { container: "a", exitCode: 1, restart: true })
      control.appendLog("default", "p", ["again"], { container: "a" })
      assert.strictEqual((yield* get(logPath("p", "container=a&previous=true"))).text, "from a\n")
      assert.strictEqual((yield* get(logPath("p", "container=a"))).text, "again\n")
      const status = control.get({ apiVersion: "v1", kind: "Pod", name: "p" })!.status as {
        containerStatuses: Array<{ name: string; restartCount: number; lastState: { terminated: { exitCode: number } } }>
      }
      const a = status.containerStatuses.find((c) => c.name === "a")!
      assert.strictEqual(a.restartCount, 1)
      assert.strictEqual(a.lastState.terminated.exitCode, 1)
    })))

  it.effect("follow=true streams what is appended, partial lines included, until the container ends", () =>
    withCluster(Effect.gen(function*() {
      const control = yield* cluster
      yield* post(pods, pod("p"))
      control.appendLog("default", "p", ["before"])
      const client = yield* HttpClient.HttpClient
      const response = yield* client.execute(HttpClientRequest.get(`${base}${logPath("p", "follow=true")}`))
      assert.strictEqual(control.openLogStreams(), 1)
      control.appendLog("default", "p", "par")
      control.appendLog("default", "p", "tial\nnext ✓\n")
      control.endContainer("default", "p")
      control.appendLog("default", "p", ["after the end"])
      const text = yield* response.text
      assert.strictEqual(text, "before\npartial\nnext ✓\n")
      assert.strictEqual(control.openLogStreams(), 0)
      const ended = control.get({ apiVersion: "v1", kind: "Pod", name: "p" })!.status as {
        containerStatuses: Array<{ state: { terminated: { exitCode: number; reason: string } } }>
      }
      assert.deepInclude(ended.containerStatuses[0]!.state.terminated, { exitCode: 0, reason: "Completed" })
      const afterEnd = yield* client.execute(HttpClientRequest.get(`${base}${logPath("p", "follow=true")}`))
      assert.strictEqual(yield* afterEnd.text, "before\npartial\nnext ✓\nafter the end\n")
    })))

  it.effect("a followed log ends when the pod is deleted, and interrupting the client drops the follower", () =>
    withCluster(Effect.gen(function*() {
      const control = yield* cluster
      yield* post(pods, pod("p"))
      const client = yield* HttpClient.HttpClient
      const followed = yield* client.execute(
        HttpClientRequest.get(`${base}${logPath("p", "follow=true&timestamps=true")}`)
      )
      control.appendLog("default", "p", ["x"])
      yield* call("DELETE", `${pods}/p`)
      assert.match(yield* followed.text, /^\S+Z x\n$/)
      yield* post(pods, pod("q"))
      const abandoned = yield* client.execute(HttpClientRequest.get(`${base}${logPath("q", "follow=true")}`))
      const fiber = yield* Effect.forkChild(Stream.runDrain(abandoned.stream))
      yield* Effect.yieldNow
      assert.strictEqual(control.openLogStreams(), 1)
      yield* Fiber.interrupt(fiber)
      assert.strictEqual(control.openLogStreams(), 0)
    })))
})

describe("pods and jobs", () => {
  it.effect("setPodPhase writes the phase, conditions and container statuses a kubelet would", () =>
    withCluster(Effect.gen(function*() {
      const control = yield* cluster
      yield* post(pods, pod("p"))
      const events = yield* openWatch(`${pods}?watch=true&resourceVersion=${control.resourceVersion()}`)
      const running = control.setPodPhase("default", "p", "Running")
      const status = running.status as {
        phase: string
        conditions: Array<{ type: string; status: string }>
        containerStatuses: Array<{ name: string; ready: boolean; state: { running?: unknown } }>
        podIP: string
        startTime: string
      }
      assert.strictEqual(status.phase, "Running")
      assert.deepInclude(status.conditions, { ...status.conditions.find((c) => c.type === "Ready")!, status: "True" })
      assert.isTrue(status.containerStatuses[0]!.ready)
      assert.isDefined(status.containerStatuses[0]!.state.running)
      assert.isString(status.podIP)
      const done = control.setPodPhase("default", "p", "Succeeded").status as typeof status
      assert.strictEqual(done.conditions.find((c) => c.type === "Ready")!.status, "False")
      assert.deepStrictEqual(summary(yield* take(events, 2)), ["MODIFIED p", "MODIFIED p"])
    })))

  it.effect("completeJob and failJob set the conditions a job controller sets", () =>
    withCluster(Effect.gen(function*() {
      const control = yield* cluster
      const jobs = "/apis/batch/v1/namespaces/default/jobs"
      const job = (name: string) => ({
        apiVersion: "batch/v1",
        kind: "Job",
        metadata: { name },
        spec: { template: { spec: { restartPolicy: "Never", containers: [{ name: "main", image: "busybox" }] } } }
      })
      yield* post(jobs, job("ok"))
      yield* post(jobs, job("bad"))
      control.completeJob("default", "ok")
      control.failJob("default", "bad")
      const ok = (yield* get(`${jobs}/ok`)).body.status
      assert.strictEqual(ok.succeeded, 1)
      assert.isString(ok.completionTime)
      assert.deepStrictEqual(
        ok.conditions.map((c: { type: string; status: string }) => `${c.type}=${c.status}`),
        ["SuccessCriteriaMet=True", "Complete=True"]
      )
      const bad = (yield* get(`${jobs}/bad`)).body.status
      assert.strictEqual(bad.failed, 1)
      assert.deepStrictEqual(bad.conditions.map((c: { type: string; reason: string }) => `${c.type}:${c.reason}`), [
        "FailureTarget:BackoffLimitExceeded",
        "Failed:BackoffLimitExceeded"
      ])
    })))

  // the kubelet runs on the Effect Clock: this test lets it run on the live one
  it.live("simulate: a created pod goes Pending -> Running -> Succeeded and writes its log; a Job runs a pod and completes", () =>
    withCluster(Effect.gen(function*() {
      const control = yield* cluster
      const events = yield* openWatch(`${pods}?watch=true&resourceVersion=${control.resourceVersion()}`)
      yield* post(pods, {
        ...pod("s"),
        spec: {
          restartPolicy: "Never",
          containers: [{ name: "main", image: "busybox", command: ["sh", "-c", "echo hello"] }]
        }
      })
      const phases = yield* events.pipe(
        Stream.map((e) => e.object.status?.phase as string),
        Stream.takeUntil((phase) => phase === "Succeeded"),
        Stream.runCollect
      )
      // scheduling and the kubelet's pod status are changes of a Pending pod, as on a cluster
      const steps = Array.from(phases).filter((phase, i, all) => i === 0 || all[i - 1] !== phase)
      assert.deepStrictEqual(steps, ["Pending", "Running", "Succeeded"])
      // what `echo hello` prints, and nothing made up: a cluster's log holds only what the container wrote
      assert.strictEqual((yield* get(logPath("s"))).text, "hello\n")

      const jobs = "/apis/batch/v1/namespaces/default/jobs"
      const jobEvents = yield* openWatch(`${jobs}?watch=true&resourceVersion=${control.resourceVersion()}`)
      yield* post(jobs, {
        apiVersion: "batch/v1",
        kind: "Job",
        metadata: { name: "j" },
        spec: {
          template: {
            metadata: { labels: { app: "j" } },
            spec: { restartPolicy: "Never", containers: [{ name: "main", image: "busybox" }] }
          }
        }
      })
      yield* jobEvents.pipe(
        Stream.takeUntil((e) => (e.object.status?.conditions ?? []).some((c: { type: string }) => c.type === "Complete")),
        Stream.runDrain
      )
      const jobPods = (yield* get(`${pods}?labelSelector=job-name%3Dj`)).body.items
      assert.strictEqual(jobPods.length, 1)
      assert.strictEqual(jobPods[0].status.phase, "Succeeded")
      assert.strictEqual(jobPods[0].metadata.labels.app, "j")
      assert.strictEqual(jobPods[0].metadata.ownerReferences[0].kind, "Job")
      yield* call("DELETE", `${jobs}/j?propagationPolicy=Background`)
      assert.deepStrictEqual((yield* get(`${pods}?labelSelector=job-name%3Dj`)).body.items, [])
    }), { controllers: true, simulate: { podStartMs: 5, podRunMs: 5 } }))
})

describe("faults", () => {
  it.effect("resetNext carries the request out, then fails it before the answer or part way through the body", () =>
    withCluster(Effect.gen(function*() {
      const control = yield* cluster
      control.resetNext()
      const lost = yield* Effect.result(post(configmaps, configMap("a")))
      assert.isTrue(
        Result.isFailure(lost) && lost.failure._tag === "HttpClientError" && lost.failure.reason._tag === "TransportError"
      )
      assert.isDefined(control.get({ apiVersion: "v1", kind: "ConfigMap", name: "a" }))
      assert.strictEqual(control.mutations(), 1)
      control.resetNext({ afterBytes: 10, match: (method) => method === "GET" })
      const cut = yield* Effect.result(get(configmaps))
      assert.isTrue(Result.isFailure(cut) && cut.failure._tag === "HttpClientError" && cut.failure.reason._tag === "DecodeError")
      assert.strictEqual((yield* get(configmaps)).status, 200)
    })))

  it.effect("resetNext on a watch cuts the stream after the given bytes", () =>
    withCluster(Effect.gen(function*() {
      const control = yield* cluster
      yield* post(configmaps, configMap("a"))
      control.resetNext({ afterBytes: 5 })
      const client = yield* HttpClient.HttpClient
      const response = yield* client.execute(HttpClientRequest.get(`${base}${configmaps}?watch=true`))
      const parts = yield* Stream.runCollect(Stream.result(Stream.decodeText(response.stream)))
      assert.strictEqual(parts.length, 2)
      assert.deepStrictEqual(parts[0], Result.succeed(`{"typ`))
      assert.isTrue(Result.isFailure(parts[1]!))
      assert.strictEqual(control.openWatches(), 0)
    })))

  it.effect("on loopback a reset destroys the socket part way through the answer", () =>
    Effect.gen(function*() {
      const served = yield* FakeCluster.serve()
      served.control.seed([configMap("a")])
      served.control.resetNext({ afterBytes: 20 })
      const cut = yield* Effect.promise(() =>
        fetch(`${served.url}${configmaps}`).then((r) => r.text()).then(() => "complete", (e: Error) => `failed: ${e.message}`)
      )
      assert.match(cut, /^failed: /)
      served.control.resetNext()
      const before = yield* Effect.promise(() => fetch(`${served.url}${configmaps}`).then(() => "answered", () => "reset"))
      assert.strictEqual(before, "reset")
      const fine = yield* Effect.promise(() => fetch(`${served.url}${configmaps}`).then((r) => r.status))
      assert.strictEqual(fine, 200)
    }))

  it.effect("stallNext never answers and never acts; the client giving up ends it", () =>
    withCluster(Effect.gen(function*() {
      const control = yield* cluster
      control.stallNext()
      const fiber = yield* Effect.forkChild(post(configmaps, configMap("stalled")))
      yield* Effect.yieldNow
      yield* Fiber.interrupt(fiber)
      assert.isUndefined(control.get({ apiVersion: "v1", kind: "ConfigMap", name: "stalled" }))
      assert.strictEqual(control.mutations(), 0)
      assert.strictEqual((yield* post(configmaps, configMap("next"))).status, 201)
    })))

  it.effect("delayNext acts at once and answers later", () =>
    Effect.gen(function*() {
      const served = yield* FakeCluster.serve()
      served.control.delayNext({ ms: 50 })
      const pending = fetch(`${served.url}${configmaps}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(configMap("late"))
      })
      yield* waitUntil(() => served.control.get({ apiVersion: "v1", kind: "ConfigMap", name: "late" }) !== undefined)
      const response = yield* Effect.promise(() => pending)
      assert.strictEqual(response.status, 201)
    }))
})

// ---------------------------------------------------------------------------
// Stage 3: OpenShift templates (apply ownership and CRD discovery are above)
// ---------------------------------------------------------------------------

describe("OpenShift templates", () => {
  const templates = "/apis/template.openshift.io/v1/namespaces/default/templates"
  const processed = "/apis/template.openshift.io/v1/namespaces/default/processedtemplates"
  const template = (parameters: ReadonlyArray<Record<string, unknown>>) => ({
    apiVersion: "template.openshift.io/v1",
    kind: "Template",
    metadata: { name: "app" },
    labels: { template: "app-${NAME}" },
    parameters,
    objects: [
      {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "${NAME}-config", labels: { own: "yes" } },
        data: { greeting: "hello ${NAME}, token ${TOKEN}", replicas: "${{REPLICAS}}" }
      },
      {
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name: "${NAME}", namespace: "pinned" },
        spec: {
          replicas: "${{REPLICAS}}",
          paused: "${{PAUSED}}",
          template: { spec: { containers: [{ name: "c", image: "img:${TAG}" }] } }
        }
      }
    ]
  })

  it.effect("templates are stored like any namespaced kind and listed in discovery", () =>
    withCluster(Effect.gen(function*() {
      const created = yield* post(templates, template([{ name: "NAME", value: "x" }]))
      assert.strictEqual(created.status, 201)
      assert.strictEqual((yield* get(`${templates}/app`)).body.parameters[0].name, "NAME")
      const doc = (yield* get("/apis/template.openshift.io/v1")).body
      const byName = (n: string) => doc.resources.find((r: { name: string }) => r.name === n)
      assert.deepInclude(byName("templates"), { kind: "Template", namespaced: true })
      assert.deepStrictEqual(byName("processedtemplates").verbs, ["create"])
      assert.strictEqual((yield* get(processed)).status, 405)
    })))

  it.effect("processedtemplates fills parameters, interpolates ${NAME}, substitutes ${{NAME}} values and adds labels", () =>
    withCluster(Effect.gen(function*() {
      const control = yield* cluster
      const answer = yield* post(processed, template([
        { name: "NAME", value: "web" },
        { name: "TOKEN", generate: "expression", from: "[a-z0-9]{8}" },
        { name: "REPLICAS", value: "3" },
        { name: "PAUSED", value: "true" },
        { name: "TAG", value: "v1", description: "image tag" },
        { name: "GIVEN", value: "kept", generate: "expression", from: "[A-Z]{4}" }
      ]))
      assert.strictEqual(answer.status, 201)
      const body = answer.body
      assert.strictEqual(body.kind, "Template")
      const token = body.parameters.find((p: { name: string }) => p.name === "TOKEN").value
      assert.match(token, /^[a-z0-9]{8}$/)
      assert.strictEqual(body.parameters.find((p: { name: string }) => p.name === "GIVEN").value, "kept")
      const [config, deployment] = body.objects
      assert.strictEqual(config.metadata.name, "web-config")
      assert.isUndefined(config.metadata.namespace)
      assert.deepStrictEqual(config.metadata.labels, { template: "app-web", own: "yes" })
      assert.strictEqual(config.data.greeting, `hello web, token ${token}`)
      assert.strictEqual(config.data.replicas, 3)
      // a hard-coded namespace is dropped, as oc process does: objects go to the namespace processed in
      assert.isUndefined(deployment.metadata.namespace)
      assert.strictEqual(deployment.spec.replicas, 3)
      assert.strictEqual(deployment.spec.paused, true)
      assert.strictEqual(deployment.spec.template.spec.containers[0].image, "img:v1")
      assert.strictEqual(control.mutations(), 0)
      assert.deepStrictEqual(control.list("v1", "ConfigMap"), [])
      const other = (yield* post(processed, template([
        { name: "NAME", value: "web" },
        { name: "TOKEN", generate: "expression", from: "[a-z0-9]{8}" },
        { name: "REPLICAS", value: "1" },
        { name: "PAUSED", value: "false" },
        { name: "TAG", value: "v1" }
      ]))).body
      assert.notStrictEqual(other.parameters.find((p: { name: string }) => p.name === "TOKEN").value, token)
    })))

  it.effect("a required parameter without a value is a 422 Invalid naming it", () =>
    withCluster(Effect.gen(function*() {
      const answer = yield* post(processed, template([{ name: "NAME", required: true }]))
      assert.strictEqual(answer.status, 422)
      assert.strictEqual(answer.body.reason, "Invalid")
      assert.strictEqual(
        answer.body.message,
        `Template.template.openshift.io "app" is invalid: template.parameters[0]: Required value: template.parameters[0]: parameter NAME is required and must be specified`
      )
      const badGenerator = yield* post(processed, template([{ name: "NAME", generate: "expression", from: "[z-a]{3}" }]))
      assert.strictEqual(badGenerator.status, 422)
    })))
})

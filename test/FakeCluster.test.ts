/**
 * The fake API server, checked through real HTTP requests: the layer's in-memory
 * HttpClient (HttpClientRequest in, HttpClientResponse out) and the loopback server
 * with Node's `fetch`. Bodies are compared with what the Kubernetes API server sends.
 */
import { assert, describe, it } from "@effect/vitest"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import { Effect, Redacted } from "effect"
import * as Fs from "node:fs"
import * as Https from "node:https"
import * as KubeConfig from "../src/KubeConfig.js"
import * as FakeCluster from "../src/testing/FakeCluster.js"
import { pki } from "./util/pki.js"

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

const withCluster = <A, E>(
  effect: Effect.Effect<A, E, FakeCluster.FakeCluster | HttpClient.HttpClient | KubeConfig.KubeConfig>,
  options?: FakeCluster.Options
) => Effect.provide(effect, FakeCluster.layer(options))

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
      const unknown = yield* get("/apis/example.com/v1/namespaces/default/widgets")
      assert.strictEqual(unknown.status, 404)
      assert.strictEqual(unknown.body.message, "the server could not find the requested resource")
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
      assert.match(invalid.body.message, /^ConfigMap "Not_Valid" is invalid: metadata.name: Invalid value: "Not_Valid": a lowercase RFC 1123 subdomain/)
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
    })))

  it.effect("generateName gets a 5 character suffix; dryRun=All answers the object and persists nothing", () =>
    withCluster(Effect.gen(function*() {
      const control = yield* cluster
      const generated = yield* post(configmaps, { apiVersion: "v1", kind: "ConfigMap", metadata: { generateName: "job-" } })
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
      const respecced = (yield* call("PUT", `${pods}/p`, {
        body: { ...relabelled, spec: { containers: [{ name: "main", image: "nginx" }] } }
      })).body
      assert.strictEqual(respecced.metadata.generation, 2)
      const same = (yield* call("PUT", `${pods}/p`, { body: respecced })).body
      assert.strictEqual(same.metadata.resourceVersion, respecced.metadata.resourceVersion)
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
        `Operation cannot be fulfilled on configmaps "c": Precondition failed: UID in precondition: other-uid, UID in object meta: ${cm.metadata.uid}`
      )
      const wrongRv = yield* call("DELETE", `${configmaps}/c`, { body: { preconditions: { resourceVersion: "1" } } })
      assert.strictEqual(wrongRv.status, 409)
      assert.match(wrongRv.body.message, /ResourceVersion in precondition: 1, ResourceVersion in object meta: \d+$/)
      const dry = yield* call("DELETE", `${configmaps}/c?dryRun=All`, { body: { preconditions: { uid: cm.metadata.uid } } })
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
      for (const [name, app] of [["a", "x"], ["b", "x"], ["c", "y"]]) yield* post(configmaps, configMap(name!, { app: app! }))
      const deleted = yield* call("DELETE", `${configmaps}?labelSelector=app%3Dx`)
      assert.strictEqual(deleted.status, 200)
      assert.strictEqual(deleted.body.kind, "ConfigMapList")
      assert.deepStrictEqual(deleted.body.items.map((i: { metadata: { name: string } }) => i.metadata.name), ["a", "b"])
      const left = (yield* get(configmaps)).body
      assert.deepStrictEqual(left.items.map((i: { metadata: { name: string } }) => i.metadata.name), ["c"])
    })))

  it.effect("namespaces are Active; a write into a new namespace creates it; deleting one removes its objects", () =>
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
      assert.strictEqual((yield* get("/api/v1/namespaces/team/configmaps/c")).status, 404)
      assert.strictEqual((yield* get("/api/v1/namespaces/team")).status, 404)
    })))
})

const names = (answer: Answer): Array<string> => answer.body.items.map((i: { metadata: { name: string } }) => i.metadata.name)

describe("lists", () => {
  it.effect("a list has <Kind>List, apiVersion, the current resourceVersion and items with apiVersion and kind", () =>
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
      assert.strictEqual(list.body.items[0].apiVersion, "v1")
      assert.strictEqual(list.body.items[0].kind, "Pod")
      const everywhere = yield* get("/api/v1/pods")
      assert.deepStrictEqual(names(everywhere), ["a", "b", "c"])
      const deployments = yield* get("/apis/apps/v1/deployments")
      assert.deepStrictEqual(deployments.body, {
        kind: "DeploymentList",
        apiVersion: "apps/v1",
        metadata: { resourceVersion: control.resourceVersion() },
        items: []
      })
    })))

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
          a.body.items.map((i: { metadata: { namespace: string; name: string } }) => `${i.metadata.namespace}/${i.metadata.name}`))
      assert.deepStrictEqual(yield* select(pods, "metadata.name=a"), ["default/a"])
      assert.deepStrictEqual(yield* select("/api/v1/pods", "metadata.name==a"), ["default/a", "other/a"])
      assert.deepStrictEqual(yield* select("/api/v1/pods", "metadata.namespace!=default"), ["other/a"])
      assert.deepStrictEqual(yield* select("/api/v1/pods", "status.phase=Running"), ["default/b"])
      assert.deepStrictEqual(yield* select("/api/v1/pods", "status.phase!=Running,metadata.name=a"), ["default/a", "other/a"])
      const bad = yield* get(`${configmaps}?fieldSelector=data.a%3D1`)
      assert.strictEqual(bad.status, 400)
      assert.strictEqual(bad.body.message, "field label not supported: data.a")
    })))

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
      const optimistic = yield* patch(`${configmaps}/c`, { metadata: { resourceVersion: created.metadata.resourceVersion }, data: { a: "9" } }, "application/merge-patch+json")
      assert.strictEqual(optimistic.status, 409)
    })))

  it.effect("strategic merge patch merges containers, env and ports by key and honours $patch: delete", () =>
    withCluster(Effect.gen(function*() {
      yield* post(pods, {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "p" },
        spec: {
          containers: [
            { name: "app", image: "app:1", env: [{ name: "A", value: "1" }, { name: "B", value: "2" }], ports: [{ containerPort: 80 }] },
            { name: "sidecar", image: "side:1" }
          ],
          tolerations: [{ key: "a" }]
        }
      })
      const patched = yield* patch(`${pods}/p`, {
        spec: {
          containers: [
            { name: "app", image: "app:2", env: [{ name: "B", value: "20" }, { name: "C", value: "3" }], ports: [{ containerPort: 80, name: "http" }] },
            { name: "sidecar", $patch: "delete" }
          ],
          tolerations: [{ key: "b" }]
        }
      }, "application/strategic-merge-patch+json")
      assert.strictEqual(patched.status, 200)
      assert.deepStrictEqual(patched.body.spec.containers, [{
        name: "app",
        image: "app:2",
        env: [{ name: "A", value: "1" }, { name: "B", value: "20" }, { name: "C", value: "3" }],
        ports: [{ containerPort: 80, name: "http" }]
      }])
      assert.deepStrictEqual(patched.body.spec.tolerations, [{ key: "b" }])
      const unsupported = yield* patch(`${pods}/p`, {}, "text/plain")
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
      const merged = yield* applyPatch(`${configmaps}/c`, JSON.stringify(configMap("c", { app: "x" }, { a: "1", b: "2" })), "fieldManager=tool")
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
          spec: { replicas, selector: { matchLabels: { app: "web" } } }
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

  it.effect("an update by another writer takes ownership of what it changed; fields the applier stops sending are removed", () =>
    withCluster(Effect.gen(function*() {
      const yaml = (data: Record<string, string>) => JSON.stringify(configMap("c", {}, data))
      yield* applyPatch(`${configmaps}/c`, yaml({ a: "1", b: "2" }), "fieldManager=tool")
      const scaled = yield* patch(`${configmaps}/c?fieldManager=kubectl-edit`, { data: { a: "9" } }, "application/merge-patch+json")
      const updater = scaled.body.metadata.managedFields.find((e: { manager: string }) => e.manager === "kubectl-edit")
      assert.strictEqual(updater.operation, "Update")
      const conflict = yield* applyPatch(`${configmaps}/c`, yaml({ a: "1", b: "2" }), "fieldManager=tool")
      assert.strictEqual(conflict.status, 409)
      assert.match(conflict.body.message, /^Apply failed with 1 conflict: conflict with "kubectl-edit" using v1 at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ: \.data\.a$/)
      const dropped = yield* applyPatch(`${configmaps}/c`, yaml({ a: "9" }), "fieldManager=tool")
      assert.strictEqual(dropped.status, 200)
      assert.deepStrictEqual(dropped.body.data, { a: "9" })
    })))
})

describe("discovery", () => {
  it.effect("serves /api, /apis, group versions with short names and /version; no OpenAPI v2", () =>
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
      assert.strictEqual((yield* get("/openapi/v2")).status, 404)
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
          versions: [{ name: "v1", served: true, storage: true, schema: { openAPIV3Schema: { type: "object" } } }]
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
      assert.strictEqual((yield* get("/apis/stable.example.com/v1/crontabs")).status, 404)
    })))
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
  it.scoped("answers over HTTPS with a bearer token, writes a kubeconfig, and closes its sockets", () =>
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

  it.scoped("answers Node's fetch over plain HTTP", () =>
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
      assert.deepStrictEqual(list.items.map((i: { metadata: { name: string } }) => i.metadata.name), ["c"])
    }))
})

/**
 * Pins: the `_tag` and the exact `message` of every public error the library produces,
 * for representative cases reached through real calls (FakeCluster answering real HTTP
 * requests, a loopback server, kubeconfig files on disk, a real exec plugin).
 *
 * Effect 4 changes what several of these messages are built from: Schema's issue
 * formatter (`ParseResult.ArrayFormatter` becomes `SchemaIssue`'s), `Duration.format`, and
 * the Data.TaggedError base. Callers match on these texts and tags, so they must not move
 * by accident. `HttpClientError` is deliberately not pinned: its shape changes on purpose.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/testing/TestClock"
import * as Fs from "node:fs"
import * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Yaml from "yaml"
import * as Condition from "../../packages/effect-kube/src/Condition.js"
import * as Exec from "../../packages/effect-kube/src/Exec.js"
import * as Kube from "../../packages/effect-kube/src/Kube.js"
import * as KubeConfig from "../../packages/effect-kube/src/KubeConfig.js"
import * as Manifests from "../../packages/effect-kube/src/Manifests.js"
import * as NodeKube from "../../packages/effect-kube/src/NodeKube.js"
import * as Patch from "../../packages/effect-kube/src/Patch.js"
import * as RequestPolicy from "../../packages/effect-kube/src/RequestPolicy.js"
import * as Resource from "../../packages/effect-kube/src/Resource.js"
import { ConfigMaps, Deployments, Namespaces, type Pod, Pods } from "../../packages/effect-kube/src/resources/index.js"
import { FakeCluster } from "@effect-kube/testing"
import * as Warnings from "../../packages/effect-kube/src/Warnings.js"
import * as Loopback from "../util/loopback.js"
import { writeExecPlugin } from "../util/execPlugin.js"
import { apiServerOnly } from "../util/apiServerOnly.js"

const pods = Kube.api(Pods, { namespace: "default" })
const configMaps = Kube.api(ConfigMaps, { namespace: "default" })

/** The tag and message of an error, the two things pinned. */
const shown = (error: { readonly _tag: string; readonly message: string }) => ({
  tag: error._tag,
  message: error.message
})

const pod = (name: string) => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name, namespace: "default" },
  spec: { containers: [{ name: "app", image: "busybox" }] }
})
const configMap = (name: string, data: Record<string, unknown> = {}) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace: "default" },
  data
})

const Sized = Schema.Struct({
  apiVersion: Schema.optional(Schema.String),
  kind: Schema.optional(Schema.String),
  metadata: Schema.Struct({ name: Schema.String, namespace: Schema.optional(Schema.String) }),
  // Effect 3's NumberFromString, which fails on a string that is not a number (Effect 4's decodes it to NaN)
  data: Schema.Struct({ size: Schema.FiniteFromString })
})
const SizedMaps = Resource.make({
  apiVersion: "v1",
  kind: "ConfigMap",
  plural: "configmaps",
  namespaced: true,
  schema: Sized
})
const sized = Kube.api(SizedMaps, { namespace: "default" })

const realSleep = (ms: number) => Effect.promise(() => new Promise<void>((resolve) => setTimeout(resolve, ms)))

const tempDir = Effect.acquireRelease(
  Effect.sync(() => Fs.mkdtempSync(Path.join(Os.tmpdir(), "effect-kube-pin-errors-"))),
  (dir) => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true }))
)

const kubeconfig = (user: object, extra: object = {}) =>
  Yaml.stringify({
    apiVersion: "v1",
    kind: "Config",
    "current-context": "ctx",
    clusters: [{ name: "c", cluster: { server: "https://127.0.0.1:6443" } }],
    users: [{ name: "u", user }],
    contexts: [{ name: "ctx", context: { cluster: "c", user: "u", namespace: "default" } }],
    ...extra
  })

describe("ValidationError", () => {
  it.effect("a name that cannot be used in a path, before any request", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      const slash = yield* Effect.flip(pods.get("web/../secrets"))
      assert.deepStrictEqual(shown(slash), {
        tag: "ValidationError",
        message: `Pod default/web/../secrets: name: must not contain "/" (got "web/../secrets")`
      })
      const empty = yield* Effect.flip(pods.delete(""))
      assert.deepStrictEqual(shown(empty), { tag: "ValidationError", message: "Pod default/: name: must not be empty" })
      const dots = yield* Effect.flip(configMaps.create({ metadata: { name: ".." } }))
      assert.deepStrictEqual(shown(dots), {
        tag: "ValidationError",
        message: `ConfigMap default/..: metadata.name: must not be ".."`
      })
      assert.strictEqual(cluster.requests().length, 0)
      // A name that is only not a DNS name (Errors.ts's own example) is the server's to refuse: sent, 404.
      assert.isTrue(Option.isNone(yield* pods.get("Web_1")))
      assert.strictEqual(cluster.requests().length, 1)
    }).pipe(Effect.provide(FakeCluster.layer(apiServerOnly))))

  it.effect("a missing namespace: an empty one given, and an empty one from the kubeconfig", () =>
    Effect.gen(function*() {
      const given = yield* Effect.flip(Kube.api(Pods, { namespace: "" }).list())
      assert.deepStrictEqual(shown(given), { tag: "ValidationError", message: "namespace: must not be empty" })
      const fromConfig = yield* Effect.flip(Kube.api(Pods).get("web"))
      assert.deepStrictEqual(shown(fromConfig), {
        tag: "ValidationError",
        message: "namespace (from the kubeconfig): must not be empty"
      })
      const clusterScoped = yield* Effect.flip(Kube.api(Namespaces, { namespace: "default" }).get("x"))
      assert.deepStrictEqual(shown(clusterScoped), {
        tag: "ValidationError",
        message: `namespace: Namespace is cluster-scoped, so no namespace may be given (got "default")`
      })
    }).pipe(Effect.provide(FakeCluster.layer({ ...apiServerOnly, namespace: "" }))))

  it.effect("an empty selector for deleteAll", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(pods.deleteAll({ labelSelector: "" }))
      assert.deepStrictEqual(shown(error), {
        tag: "ValidationError",
        message: "deleteAll of Pod: needs a non-empty labelSelector or fieldSelector (an empty one would delete " +
          "every object)"
      })
      const blank = yield* Effect.flip(pods.deleteAll({ labelSelector: " ", fieldSelector: "" }))
      assert.deepStrictEqual(shown(blank), {
        tag: "ValidationError",
        message: "deleteAll of Pod: needs a non-empty labelSelector or fieldSelector (an empty one would delete " +
          "every object)"
      })
    }).pipe(Effect.provide(FakeCluster.layer(apiServerOnly))))

  it.effect("a written object that names another namespace, or another name", () =>
    Effect.gen(function*() {
      const other = yield* Effect.flip(configMaps.create({ metadata: { name: "a", namespace: "prod" } }))
      assert.deepStrictEqual(shown(other), {
        tag: "ValidationError",
        message: `ConfigMap default/a: metadata.namespace is "prod" but the operation acts in namespace "default"`
      })
      const renamed = yield* Effect.flip(configMaps.replace("a", { metadata: { name: "b" } }))
      assert.deepStrictEqual(shown(renamed), {
        tag: "ValidationError",
        message: `ConfigMap default/b: metadata.name is "b" but the name given is "a"`
      })
    }).pipe(Effect.provide(FakeCluster.layer(apiServerOnly))))

  it.effect("a response that fails a generated Schema names the object, the request and the path", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      cluster.seed([configMap("bad", { size: 5 })])
      const got = yield* Effect.flip(configMaps.get("bad"))
      assert.deepStrictEqual(shown(got), {
        tag: "ValidationError",
        message: "answer to GET /api/v1/namespaces/default/configmaps/bad: ConfigMap default/bad: does not match its " +
          "schema: .data.size Expected string"
      })
      const listed = yield* Effect.flip(configMaps.list())
      assert.deepStrictEqual(shown(listed), {
        tag: "ValidationError",
        message: "answer to GET /api/v1/namespaces/default/configmaps: ConfigMap default/bad: does not match its " +
          "schema: .data.size Expected string"
      })
      cluster.seed([{ ...pod("odd"), spec: { containers: [{ name: 7, image: "busybox" }] } }])
      const nested = yield* Effect.flip(pods.get("odd"))
      assert.deepStrictEqual(shown(nested), {
        tag: "ValidationError",
        message: "answer to GET /api/v1/namespaces/default/pods/odd: Pod default/odd: does not match its schema: " +
          ".spec.containers[0].name Expected string"
      })
      const nestedList = yield* Effect.flip(pods.list())
      assert.deepStrictEqual(shown(nestedList), {
        tag: "ValidationError",
        message: "answer to GET /api/v1/namespaces/default/pods: Pod default/odd: does not match its schema: " +
          ".spec.containers[0].name Expected string"
      })
    }).pipe(Effect.provide(FakeCluster.layer(apiServerOnly))))

  it.effect("a response that fails the user's transforming Schema; an object it cannot encode", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      cluster.seed([configMap("big", { size: "big" }), configMap("none", {})])
      const decoded = yield* Effect.flip(sized.get("big"))
      // Effect 3 quoted the value at fault here (Schema's own Transformation message: `Unable to decode "big" into a
      // number`); a ValidationError never carries a found value now (it may be Secret data): the coordinator's call.
      assert.deepStrictEqual(shown(decoded), {
        tag: "ValidationError",
        message: `answer to GET /api/v1/namespaces/default/configmaps/big: ConfigMap default/big: does not match its ` +
          `schema: .data.size Expected a finite number`
      })
      const missing = yield* Effect.flip(sized.get("none"))
      assert.deepStrictEqual(shown(missing), {
        tag: "ValidationError",
        message: "answer to GET /api/v1/namespaces/default/configmaps/none: ConfigMap default/none: does not match " +
          "its schema: .data.size is missing"
      })
      const encoded = yield* Effect.flip(
        sized.create({ metadata: { name: "nan" }, data: { size: "x" as unknown as number } })
      )
      assert.deepStrictEqual(shown(encoded), {
        tag: "ValidationError",
        message: "ConfigMap default/nan: cannot be encoded: .data.size Expected number"
      })
    }).pipe(Effect.provide(FakeCluster.layer(apiServerOnly))))

  it.effect("a manifest that is not YAML, or has no kind", () =>
    Effect.gen(function*() {
      const broken = yield* Effect.flip(Manifests.parse("apiVersion: v1\nkind: [ConfigMap\n"))
      assert.deepStrictEqual(shown(broken), {
        tag: "ValidationError",
        message: "document[0]: is not valid YAML: Flow sequence in block collection must be sufficiently indented " +
          "and end with a ] (BAD_INDENT) (line 3, column 1)"
      })
      const kindless = yield* Effect.flip(Manifests.parse("apiVersion: v1\nmetadata: { name: a }\n"))
      assert.deepStrictEqual(shown(kindless), {
        tag: "ValidationError",
        message: "document[0]: has no kind (a non-empty string)"
      })
    }))
})

describe("ApiError: k8s: <METHOD> <path>: <code> <reason>: <message>", () => {
  it.effect("404 on getOrFail and patchStatus, 409 AlreadyExists on create, 409 Conflict on a stale replace", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      const deployments = Kube.api(Deployments, { namespace: "default" })
      // getStatus answers None for a missing object (as get does); a write to it is the server's 404
      const notFound = yield* Effect.flip(deployments.patchStatus("nope", Patch.merge({ status: { replicas: 1 } })))
      assert.deepStrictEqual(shown(notFound), {
        tag: "ApiError",
        message: `k8s: PATCH /apis/apps/v1/namespaces/default/deployments/nope/status: 404 NotFound: deployments.apps ` +
          `"nope" not found`
      })
      const mustExist = yield* Effect.flip(deployments.getOrFail("nope"))
      assert.deepStrictEqual(shown(mustExist), {
        tag: "ApiError",
        message: `k8s: GET /apis/apps/v1/namespaces/default/deployments/nope: 404 NotFound: deployments.apps "nope" not found`
      })
      cluster.seed([configMap("taken")])
      const exists = yield* Effect.flip(configMaps.create({ metadata: { name: "taken" } }))
      assert.deepStrictEqual(shown(exists), {
        tag: "ApiError",
        message: `k8s: POST /api/v1/namespaces/default/configmaps: 409 AlreadyExists: configmaps "taken" already exists`
      })
      const stale = yield* Effect.flip(
        configMaps.replace("taken", { metadata: { name: "taken", resourceVersion: "1" } })
      )
      assert.deepStrictEqual(shown(stale), {
        tag: "ApiError",
        message: `k8s: PUT /api/v1/namespaces/default/configmaps/taken: 409 Conflict: Operation cannot be fulfilled ` +
          `on configmaps "taken": the object has been modified; please apply your changes to the latest version and ` +
          `try again`
      })
      const gone = yield* Effect.flip(configMaps.deleteWithResult("nope"))
      assert.deepStrictEqual(shown(gone), {
        tag: "ApiError",
        message: `k8s: DELETE /api/v1/namespaces/default/configmaps/nope: 404 NotFound: configmaps "nope" not found`
      })
    }).pipe(Effect.provide(FakeCluster.layer(apiServerOnly))))

  it.effect("a Status the server chose (403, 422), and a strict unknown field", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      cluster.failNext({ status: 403, message: "configmaps is forbidden: User \"jane\" cannot list resource" })
      const forbidden = yield* Effect.flip(configMaps.list())
      assert.deepStrictEqual(shown(forbidden), {
        tag: "ApiError",
        message: `k8s: GET /api/v1/namespaces/default/configmaps: 403 Forbidden: configmaps is forbidden: User ` +
          `"jane" cannot list resource`
      })
      const typo = { metadata: { name: "t" }, dta: { mode: "fast" } } as Parameters<typeof configMaps.create>[0]
      const strict = yield* Effect.flip(configMaps.create(typo, { fieldValidation: "Strict" }))
      assert.deepStrictEqual(shown(strict), {
        tag: "ApiError",
        // the server's own text: the decoder names the kind and version it could not decode
        message: `k8s: POST /api/v1/namespaces/default/configmaps?fieldValidation=Strict: 400 BadRequest: ConfigMap in ` +
          `version "v1" cannot be handled as a ConfigMap: strict decoding error: unknown field "dta"`
      })
      cluster.failNext({ status: 422, message: `Pod "p" is invalid: spec.containers: Required value` })
      const invalid = yield* Effect.flip(pods.create({ metadata: { name: "p" }, spec: { containers: [] } }))
      assert.deepStrictEqual(shown(invalid), {
        tag: "ApiError",
        message: `k8s: POST /api/v1/namespaces/default/pods: 422 Invalid: Pod "p" is invalid: spec.containers: ` +
          `Required value`
      })
    }).pipe(Effect.provide(FakeCluster.layer(apiServerOnly))))

  it.effect("a watch from a compacted resourceVersion: 410 Expired", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      cluster.seed([pod("a")])
      cluster.compact()
      const expired = yield* Effect.flip(Stream.runDrain(pods.watch({ resourceVersion: "1" })))
      assert.deepStrictEqual(shown(expired), {
        tag: "ApiError",
        message: "k8s: GET /api/v1/namespaces/default/pods?watch=true&resourceVersion=1: 410 Expired: too old " +
          "resource version: 1 (6)"
      })
    }).pipe(Effect.provide(FakeCluster.layer(apiServerOnly))))

  // The body is named by its type and length, not quoted: a proxy that echoes the request would echo the token.
  it.effect("an answer that is not a Status: its content type and length", () =>
    Effect.gen(function*() {
      const server = yield* Loopback.serve((_req, res) => {
        res.statusCode = 502
        res.setHeader("content-type", "text/html")
        res.end("<html><body><h1>502 Bad Gateway</h1></body></html>\n")
      })
      const error = yield* Effect.flip(configMaps.create({ metadata: { name: "a" } }).pipe(
        Effect.provide(Loopback.layer(server.url))
      ))
      assert.deepStrictEqual(shown(error), {
        tag: "ApiError",
        message: "k8s: POST /api/v1/namespaces/default/configmaps: 502 Unknown: server error " +
          "(a text/html body of 51 bytes)"
      })
    }))
})

describe("KubeConfigError: kubeconfig (<source>, context <name>, <field>): <detail>", () => {
  it.effect("a missing context, a bad field, a removed auth provider", () =>
    Effect.gen(function*() {
      const missing = yield* Effect.flip(KubeConfig.fromString(kubeconfig({ token: "t" }), { context: "nope" }))
      assert.deepStrictEqual(shown(missing), {
        tag: "KubeConfigError",
        message: `kubeconfig (<string>, context nope, contexts): context "nope" not found (known: ctx)`
      })
      const badEnv = yield* Effect.flip(KubeConfig.fromString(kubeconfig({
        exec: { apiVersion: "client.authentication.k8s.io/v1", command: "x", env: [{ name: "A", value: 1 }] }
      })))
      assert.deepStrictEqual(shown(badEnv), {
        tag: "KubeConfigError",
        message: "kubeconfig (<string>, context ctx, users[u].user.exec.env[0]): must have a string name and value"
      })
      const alpha = yield* Effect.flip(KubeConfig.fromString(kubeconfig({
        exec: { apiVersion: "client.authentication.k8s.io/v1alpha1", command: "x" }
      })))
      assert.deepStrictEqual(shown(alpha), {
        tag: "KubeConfigError",
        message: "kubeconfig (<string>, context ctx, users[u].user.exec.apiVersion): " +
          "client.authentication.k8s.io/v1alpha1 was removed from Kubernetes (and kubectl) in 1.24: set it to " +
          "client.authentication.k8s.io/v1beta1 (what most plugins speak) or client.authentication.k8s.io/v1"
      })
      const gcp = yield* Effect.flip(KubeConfig.fromString(kubeconfig({ "auth-provider": { name: "gcp" } })))
      assert.deepStrictEqual(shown(gcp), {
        tag: "KubeConfigError",
        message: "kubeconfig (<string>, context ctx, users[u].user.auth-provider.name): auth-provider gcp is not " +
          "supported: kubectl removed it; install gke-gcloud-auth-plugin and use its exec entry (gcloud container " +
          "clusters get-credentials writes it)"
      })
      const noServer = yield* Effect.flip(KubeConfig.fromString(kubeconfig({ token: "t" }, {
        clusters: [{ name: "c", cluster: {} }]
      })))
      assert.deepStrictEqual(shown(noServer), {
        tag: "KubeConfigError",
        message: "kubeconfig (<string>, context ctx, clusters[c].cluster.server): is required"
      })
    }).pipe(Effect.provide(NodeKube.layerPlatform)))

  it.effect("an exec plugin that exits non-zero, or is not found, on a real request", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      writeExecPlugin(Path.join(dir, "bin", "plugin"))
      const path = Path.join(dir, "kubeconfig")
      const exec = (extra: object) => ({
        exec: {
          apiVersion: "client.authentication.k8s.io/v1",
          command: "./bin/plugin",
          interactiveMode: "Never",
          env: [{ name: "PLUGIN_STATE_DIR", value: dir }, { name: "PLUGIN_EXIT", value: "3" }],
          ...extra
        }
      })
      Fs.writeFileSync(path, kubeconfig(exec({})))
      const exited = yield* Effect.flip(configMaps.get("a").pipe(Effect.provide(NodeKube.layerFromFile({ path }))))
      assert.deepStrictEqual(shown(exited), {
        tag: "KubeConfigError",
        message: `kubeconfig (${path}, context ctx, users[u].user.exec): the exec plugin ./bin/plugin exited with ` +
          `code 3`
      })
      const installHint = "Install it with:\n  brew install it\n"
      Fs.writeFileSync(path, kubeconfig(exec({ command: "effect-kube-no-such-plugin", installHint })))
      const notFound = yield* Effect.flip(configMaps.get("a").pipe(Effect.provide(NodeKube.layerFromFile({ path }))))
      assert.deepStrictEqual(shown(notFound), {
        tag: "KubeConfigError",
        message: `kubeconfig (${path}, context ctx, users[u].user.exec): the exec plugin effect-kube-no-such-plugin ` +
          `was not found\nInstall it with:\n  brew install it`
      })
    }))
})

describe("WaitTimeout, RequestTimeout (Duration.format)", () => {
  it.effect("waitFor running out of time", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      cluster.seed([pod("web")])
      const fiber = yield* Effect.forkChild(
        Effect.flip(pods.waitFor("web", Condition.podReady, { timeout: "2 minutes" }))
      )
      yield* realSleep(50) // waitFor is watching, its timeout on the TestClock
      yield* TestClock.adjust("2 minutes")
      const error = yield* Fiber.join(fiber)
      assert.deepStrictEqual(shown(error), {
        tag: "WaitTimeout",
        message: "timed out after 2m waiting for Pod default/web to be Ready"
      })
      const fiber2 = yield* Effect.forkChild(Effect.flip(
        pods.waitFor("web", (p: Pod | undefined) => p === undefined, { timeout: "90500 millis" })
      ))
      yield* realSleep(50) // waitFor is watching, its timeout on the TestClock
      yield* TestClock.adjust("90500 millis")
      const error2 = yield* Fiber.join(fiber2)
      assert.deepStrictEqual(shown(error2), {
        tag: "WaitTimeout",
        message: "timed out after 1m 30s 500ms waiting for Pod default/web to be predicate"
      })
    }).pipe(Effect.provide(FakeCluster.layer(apiServerOnly))))

  it.effect("a request with no answer within the policy's timeout (default 30 s, and 1.5 s)", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      cluster.stallNext({ count: 2 })
      const fiber = yield* Effect.forkChild(Effect.flip(configMaps.create({ metadata: { name: "slow" } })))
      yield* realSleep(50) // the request is sent and its timeout's sleep is on the TestClock
      yield* TestClock.adjust("30 seconds")
      const error = yield* Fiber.join(fiber)
      assert.deepStrictEqual(shown(error), {
        tag: "RequestTimeout",
        message: "k8s: POST /api/v1/namespaces/default/configmaps: no complete answer within 30s (request timeout)"
      })
      const short = yield* Effect.forkChild(Effect.flip(configMaps.create({ metadata: { name: "slow" } }).pipe(
        Effect.provide(RequestPolicy.layer({ timeout: "1500 millis" }))
      )))
      yield* realSleep(50) // the request is sent and its timeout's sleep is on the TestClock
      yield* TestClock.adjust("1500 millis")
      const error2 = yield* Fiber.join(short)
      assert.deepStrictEqual(shown(error2), {
        tag: "RequestTimeout",
        message: "k8s: POST /api/v1/namespaces/default/configmaps: no complete answer within 1s 500ms (request timeout)"
      })
    }).pipe(Effect.provide(FakeCluster.layer(apiServerOnly))))
})

describe("ServerWarning, ExecFailed", () => {
  it.effect("a warning under Warnings.layerFail", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      cluster.warnNext({ text: "v1 ConfigMap is deprecated, use \"v2\"" })
      const error = yield* Effect.flip(configMaps.create({ metadata: { name: "w" } }))
      assert.deepStrictEqual(shown(error), {
        tag: "ServerWarning",
        message: `k8s: POST /api/v1/namespaces/default/configmaps: the server warned: v1 ConfigMap is deprecated, ` +
          `use "v2"`
      })
    }).pipe(Effect.provide(Layer.merge(FakeCluster.layer(apiServerOnly), Warnings.layerFail))))

  it.effect("a command that exits non-zero under execOrFail", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      cluster.seed([pod("web")])
      const error = yield* Effect.flip(Exec.execOrFail(pods, "web", ["migrate", "--all"]))
      assert.deepStrictEqual(shown(error), {
        tag: "ExecFailed",
        message: `command "migrate" in pod web exited with code 3: migration 7 failed: table exists`
      })
    }).pipe(Effect.provide(FakeCluster.layer({
  ...apiServerOnly,
      exec: (_pod, _container, command, io) =>
        command[0] === "migrate" ? Effect.as(io.stderr("  migration 7 failed: table exists\n"), 3) : undefined
    }))))
})

describe("ApplyFailed, DeleteFailed (Manifests)", () => {
  it.effect("apply stops at the first failure; delete goes on and lists the failures", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      cluster.failNext({
        status: 422,
        message: "rejected by policy",
        match: (method, path) => method === "PATCH" && path.endsWith("/two")
      })
      const applyFailed = yield* Effect.flip(Manifests.apply([configMap("one"), configMap("two"), configMap("three")]))
      assert.deepStrictEqual(shown(applyFailed), {
        tag: "ApplyFailed",
        message: "apply stopped at ConfigMap default/two after 1 applied: k8s: PATCH " +
          "/api/v1/namespaces/default/configmaps/two?fieldManager=effect-kube: 422 Invalid: rejected by policy"
      })
      const refs = yield* Manifests.apply([configMap("one"), configMap("two"), configMap("three")])
      cluster.failNext({
        status: 403,
        count: 2,
        message: "no deletes here",
        match: (method, path) => method === "DELETE" && !path.endsWith("/two")
      })
      const deleteFailed = yield* Effect.flip(Manifests.delete(refs))
      assert.deepStrictEqual(shown(deleteFailed), {
        tag: "DeleteFailed",
        message: "delete failed for 2 object(s) (1 deleted): ConfigMap default/three: k8s: DELETE " +
          "/api/v1/namespaces/default/configmaps/three: 403 Forbidden: no deletes here; ConfigMap default/one: k8s: " +
          "DELETE /api/v1/namespaces/default/configmaps/one: 403 Forbidden: no deletes here"
      })
    }).pipe(Effect.provide(FakeCluster.layer(apiServerOnly))))
})

describe("FakeClusterError", () => {
  it.effect("serve on a port in use, or with a kubeconfig directory that does not exist", () =>
    Effect.gen(function*() {
      const blocker = Net.createServer()
      const port = yield* Effect.acquireRelease(
        Effect.promise(() =>
          new Promise<number>((resolve) =>
            blocker.listen(0, "127.0.0.1", () => resolve((blocker.address() as Net.AddressInfo).port))
          )
        ),
        () => Effect.promise(() => new Promise<void>((resolve) => blocker.close(() => resolve())))
      )
      const inUse = yield* Effect.flip(FakeCluster.serve({ ...apiServerOnly, port }))
      assert.deepStrictEqual(shown(inUse), {
        tag: "FakeClusterError",
        message: `FakeCluster could not listen on 127.0.0.1:${port}: listen EADDRINUSE: address already in use ` +
          `127.0.0.1:${port}`
      })
      const noDir = yield* Effect.flip(FakeCluster.serve({ ...apiServerOnly, kubeconfigDir: "/nonexistent/effect-kube-pin" }))
      assert.deepStrictEqual({ tag: noDir._tag, message: noDir.message.replace(/:\d+/, ":<port>") }, {
        tag: "FakeClusterError",
        message: "FakeCluster could not write the kubeconfig for http://127.0.0.1:<port>: ENOENT: no such file or " +
          "directory, open '/nonexistent/effect-kube-pin/kubeconfig'"
      })
    }))
})

/**
 * Property tests (fast-check): random and hostile kubeconfigs, manifests, names,
 * namespaces, selectors and label values fed to the public API. Every outcome must be
 * a success or one of the tagged errors (never a defect), a ValidationError must come
 * before any request, a request must target exactly the object named, and no token,
 * password, key or Secret value may appear in any error's message, String() or JSON
 * (nor in its causes).
 */
import { afterAll, assert, describe, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import fc from "fast-check"
import * as Yaml from "yaml"
import { KubeConfigError, ValidationError } from "../../packages/effect-kube/src/Errors.js"
import * as Kube from "../../packages/effect-kube/src/Kube.js"
import * as KubeConfig from "../../packages/effect-kube/src/KubeConfig.js"
import * as Manifests from "../../packages/effect-kube/src/Manifests.js"
import * as NodeKube from "../../packages/effect-kube/src/NodeKube.js"
import * as Patch from "../../packages/effect-kube/src/Patch.js"
import * as RequestPolicy from "../../packages/effect-kube/src/RequestPolicy.js"
import { ConfigMaps, Pods } from "../../packages/effect-kube/src/resources/index.js"
import { FakeCluster } from "@effect-kube/testing"
import { pki } from "../util/pki.js"
import { makeCounts, publicErrorTags, renderings, report, serveTls } from "../util/reliability.js"

const counts = makeCounts()
afterAll(() => report("properties", counts))

/** The secret every hostile input carries: it must never come back in an error. */
const SECRET = "Zq9xSECRETmarker4f1c"
const secretBase64 = Buffer.from(`pw=${SECRET}`).toString("base64")
const forbidden = [SECRET, secretBase64]

/**
 * Why an exit is not acceptable: a defect or an interruption, a failure that is not one
 * of the public tagged errors, or a rendering that holds a secret.
 */
const problemWith = (exit: Exit.Exit<unknown, unknown>, extraTags: ReadonlyArray<string> = []): string | undefined => {
  if (Exit.isSuccess(exit)) return undefined
  const failure = Cause.findErrorOption(exit.cause)
  if (Option.isNone(failure) || Cause.hasDies(exit.cause) || Cause.hasInterrupts(exit.cause)) {
    return `not a typed failure: ${Cause.pretty(exit.cause)}`
  }
  const error = failure.value as { readonly _tag?: unknown }
  if (typeof error._tag !== "string" || !(publicErrorTags.has(error._tag) || extraTags.includes(error._tag))) {
    return `not a public tagged error: ${String(error._tag)}`
  }
  for (const text of renderings(error)) {
    for (const secret of forbidden) {
      if (text.includes(secret)) return `a ${error._tag} shows a secret: ${text.slice(0, 300)}`
    }
  }
  return undefined
}

/** The tag of an exit's error (with the reason of an HttpClientError: `HttpClientError/TransportError`). */
const tagOf = (exit: Exit.Exit<unknown, unknown>): string =>
  Exit.isSuccess(exit)
    ? "Success"
    : Option.match(Cause.findErrorOption(exit.cause), {
      onNone: () => "Defect",
      onSome: (e) => {
        const error = e as { readonly _tag?: unknown; readonly reason?: { readonly _tag?: unknown } }
        return error._tag === "HttpClientError" ? `HttpClientError/${String(error.reason?._tag)}` : String(error._tag)
      }
    })

/**
 * Runs a fast-check property whose predicate is an Effect, from inside a test's Effect
 * and with its services. Counts each outcome's tag in `seen`, so a test can check that
 * the inputs reached the cases that matter and did not all stop at the first check.
 */
const check = <T, R>(
  arbitrary: fc.Arbitrary<T>,
  predicate: (value: T) => Effect.Effect<string, string, R>,
  numRuns: number
): Effect.Effect<Record<string, number>, never, R> =>
  Effect.flatMap(Effect.context<R>(), (context) => {
    const seen: Record<string, number> = {}
    return Effect.promise(() =>
      fc.assert(
        fc.asyncProperty(arbitrary, (value) =>
          Effect.runPromiseWith(context)(Effect.result(predicate(value))).then((result) => {
            if (result._tag === "Failure") throw new Error(result.failure)
            seen[result.success] = (seen[result.success] ?? 0) + 1
          })),
        { numRuns }
      )
    ).pipe(Effect.as(seen))
  })

// ---------------------------------------------------------------------------------------------------------------------
// Names, namespaces, selectors, label values
// ---------------------------------------------------------------------------------------------------------------------

const hostileStrings = [
  "",
  ".",
  "..",
  "a/b",
  "..\\secrets\\x",
  "a\\status",
  "a?b=c",
  "a#b",
  "%2e%2e",
  "a%2Fb",
  "a b",
  "a\tb",
  "a\nb",
  "a\u0000b",
  "__proto__",
  "constructor",
  "toString",
  "hasOwnProperty",
  "système",
  "✓",
  "a".repeat(254),
  "a".repeat(64),
  "-a",
  "a-",
  "A",
  "a:b",
  "a@b",
  "a;b",
  "a=b",
  "a,b",
  "a&b=c",
  "\uD800",
  "\u200B",
  "ｆｕｌｌ／ｗｉｄｔｈ"
]

const nameArb = fc.oneof(
  { weight: 3, arbitrary: fc.stringMatching(/^[a-z0-9]([-a-z0-9.]{0,20}[a-z0-9])?$/) },
  { weight: 3, arbitrary: fc.constantFrom(...hostileStrings) },
  { weight: 2, arbitrary: fc.string({ maxLength: 12 }) },
  { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 8 }) }
)

const namespaceArb = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom("default", "other", "kube-system") },
  { weight: 2, arbitrary: fc.constantFrom(...hostileStrings) },
  { weight: 1, arbitrary: fc.string({ maxLength: 10 }) }
)

const selectorArb = fc.oneof(
  fc.constantFrom(
    "app=web",
    "app in (a,b)",
    "!app",
    "app,tier!=db",
    "app==",
    "=",
    "in (",
    "app=web&x=1",
    "metadata.name=a",
    "a=b#c",
    " ",
    "app notin ()",
    "x".repeat(400)
  ),
  fc.string({ maxLength: 16 }),
  fc.constant(undefined)
)

const labelValueArb = fc.oneof(
  fc.constantFrom("web", "", "a b", "ü", "a".repeat(64), "-x-"),
  fc.string({ maxLength: 10 })
)

const limitArb = fc.oneof(
  fc.constant(undefined),
  fc.constantFrom(0, -1, 1.5, Number.NaN, Infinity, 1e20, 3),
  fc.integer()
)

interface Call {
  readonly op: "get" | "delete" | "create" | "replace" | "patch" | "list" | "deleteAll" | "logs" | "listStream"
  readonly namespace: string
  readonly name: string
  readonly labelSelector: string | undefined
  readonly fieldSelector: string | undefined
  readonly labels: Record<string, string>
  readonly limit: number | undefined
}

const callArb: fc.Arbitrary<Call> = fc.record({
  op: fc.constantFrom("get", "delete", "create", "replace", "patch", "list", "deleteAll", "logs", "listStream"),
  namespace: namespaceArb,
  name: nameArb,
  labelSelector: selectorArb,
  fieldSelector: selectorArb,
  labels: fc.dictionary(
    fc.oneof(fc.constantFrom("app", "a/b", "", "x".repeat(70), "__proto__"), fc.string({ maxLength: 6 })),
    labelValueArb,
    { maxKeys: 3 }
  ),
  limit: limitArb
})

/** Runs one call and checks its outcome and what the fake received. */
const runCall = (call: Call, control: FakeCluster.Control): Effect.Effect<string, string, Kube.Requirements> =>
  Effect.gen(function*() {
    const cms = Kube.api(ConfigMaps, { namespace: call.namespace })
    const pods = Kube.api(Pods, { namespace: call.namespace })
    const object = { metadata: { name: call.name, labels: call.labels } }
    const selectors = { labelSelector: call.labelSelector, fieldSelector: call.fieldSelector }
    const effect: Effect.Effect<unknown, Kube.Error, Kube.Requirements> = {
      get: cms.get(call.name),
      delete: cms.delete(call.name),
      create: cms.create(object),
      replace: cms.replace(call.name, object),
      patch: cms.patch(call.name, Patch.merge({ metadata: { labels: call.labels } })),
      list: cms.list({ ...selectors, limit: call.limit }),
      // arbitrary selectors, missing ones included: the runtime check is what is tested
      deleteAll: cms.deleteAll(selectors as Kube.DeleteAllOptions),
      logs: pods.logs(call.name, { container: call.labels["app"], tailLines: call.limit }),
      listStream: Stream.runDrain(cms.listStream({ ...selectors, pageSize: call.limit }))
    }[call.op]
    const before = control.requests().length
    const exit = yield* Effect.exit(effect)
    const sent = control.requests().slice(before)
    counts.badInputs++
    counts.requests += sent.length
    const problem = problemWith(exit)
    if (problem !== undefined) return yield* Effect.fail(`${call.op}: ${problem}`)
    if (tagOf(exit) === "ValidationError" && sent.length > 0) {
      return yield* Effect.fail(`${call.op}: a ValidationError after ${sent.length} request(s) (${sent[0]!.path})`)
    }
    // every request went to the collection named, and an object request to exactly the object named
    const plural = call.op === "logs" ? "pods" : "configmaps"
    const collection = `/api/v1/namespaces/${call.namespace}/${plural}`
    for (const request of sent) {
      if (request.path !== collection && !request.path.startsWith(`${collection}/`)) {
        return yield* Effect.fail(`${call.op}: sent ${request.method} ${request.path}, outside ${collection}`)
      }
      if (["get", "delete", "replace", "patch", "logs"].includes(call.op)) {
        const rest = request.path.slice(collection.length + 1).split("/")
        if (decodeURIComponent(rest[0]!) !== call.name || rest.length > (call.op === "logs" ? 2 : 1)) {
          return yield* Effect.fail(`${call.op}: sent ${request.path} for the name ${JSON.stringify(call.name)}`)
        }
      }
      if ((call.op === "list" || call.op === "deleteAll") && call.labelSelector?.trim()) {
        if (request.query["labelSelector"] !== call.labelSelector) {
          const arrived = JSON.stringify(request.query["labelSelector"])
          return yield* Effect.fail(`${call.op}: the labelSelector arrived as ${arrived}`)
        }
      }
    }
    return sent.length > 0 ? `sent, ${tagOf(exit)}` : tagOf(exit)
  })

describe("names, namespaces, selectors and label values", () => {
  it.live("in memory: success or a tagged error, ValidationError before any request, requests aimed exactly", () =>
    Effect.gen(function*() {
      const control = yield* FakeCluster.FakeCluster
      control.seed([
        { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a", namespace: "default" } },
        { apiVersion: "v1", kind: "Secret", metadata: { name: "x", namespace: "default" }, data: { k: secretBase64 } }
      ])
      const seen = yield* check(callArb, (call) => runCall(call, control), 1_500)
      console.log("names in memory:", seen)
      assert.isAbove(seen["sent, Success"] ?? 0, 150, "many calls reached the fake and succeeded")
      assert.isAbove(seen["sent, ApiError"] ?? 0, 150, "many reached the fake and were refused by it")
      assert.isAbove(seen["ValidationError"] ?? 0, 300, "many were refused before any request")
      assert.isDefined(control.get({ apiVersion: "v1", kind: "Secret", name: "x" }), "the Secret was never touched")
    }).pipe(
      Effect.provide(Layer.merge(FakeCluster.layer(), RequestPolicy.layer({ readRetries: Schedule.recurs(0) })))
    ))

  it.live("over loopback HTTPS through the Node transport: the same", () =>
    Effect.scoped(Effect.gen(function*() {
      const served = yield* serveTls()
      served.control.seed([{ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a", namespace: "default" } }])
      const layer = Layer.merge(
        NodeKube.layerFromFile({ path: served.kubeconfigPath }).pipe(Layer.orDie),
        RequestPolicy.layer({ readRetries: Schedule.recurs(0) })
      )
      yield* Effect.flatMap(Layer.build(layer), (context) =>
        check(callArb, (call) => Effect.provide(runCall(call, served.control), context), 300)).pipe(
          Effect.tap((seen) => Effect.sync(() => console.log("names over HTTPS:", seen)))
        )
    })))
})

// ---------------------------------------------------------------------------------------------------------------------
// Kubeconfigs
// ---------------------------------------------------------------------------------------------------------------------

const pem = (label: string, body: string) => `-----BEGIN ${label}-----\n${body}\n-----END ${label}-----\n`
const b64 = (text: string) => Buffer.from(text).toString("base64")

const secretArb = fc.constantFrom(
  SECRET,
  `${SECRET}\n`,
  `${SECRET}é✓`,
  `"${SECRET}'`,
  `${SECRET}: [`,
  `&anchor ${SECRET}`,
  `*${SECRET}`,
  `${SECRET}\u0000`,
  `${SECRET}\r\nX-Injected: 1`,
  ` ${SECRET} `
)

/** An exec plugin that really runs: node printing something built around the secret. */
const nodePlugin = (printed: string) => ({
  apiVersion: "client.authentication.k8s.io/v1",
  command: process.execPath,
  args: ["-e", `process.stdout.write(${JSON.stringify(printed)})`],
  interactiveMode: "Never"
})

const badCert = pem("CERTIFICATE", "AAAA")

const credential = (status: unknown) =>
  JSON.stringify({ apiVersion: "client.authentication.k8s.io/v1", kind: "ExecCredential", status })

const execArb = fc.oneof(
  { weight: 6, arbitrary: fc.record({
    apiVersion: fc.constantFrom("client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1", "v0"),
    command: fc.constantFrom("/nonexistent/effect-kube-plugin", "", "relative-plugin-that-is-not-there"),
    args: fc.array(fc.oneof(secretArb, fc.string({ maxLength: 5 })), { maxLength: 2 }),
    env: fc.oneof(
      fc.constant([{ name: "TOKEN", value: SECRET }]),
      fc.constant([{ name: "TOKEN" }]),
      fc.constant(SECRET),
      fc.constant(null)
    ),
    interactiveMode: fc.constantFrom("Never", "IfAvailable", "Always", "Sometimes"),
    installHint: fc.constantFrom(undefined, "brew install it")
  }, { requiredKeys: ["command"] }) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      nodePlugin(`not json ${SECRET}`),
      nodePlugin(credential({ token: `${SECRET}\n` })),
      nodePlugin(credential({ token: SECRET, expirationTimestamp: `soon ${SECRET}` })),
      nodePlugin(credential({ clientCertificateData: badCert, clientKeyData: pem("PRIVATE KEY", SECRET) })),
      nodePlugin(credential({ clientKeyData: SECRET })),
      nodePlugin(JSON.stringify({ kind: "ExecCredential", apiVersion: SECRET, status: { token: SECRET } }))
    )
  }
)

/** A user with one way to authenticate, as most kubeconfigs have. */
const coherentUserArb = fc.oneof(
  fc.record({ token: secretArb }),
  fc.record({ username: fc.constant("admin"), password: secretArb }),
  fc.constant({ "client-certificate-data": b64(pki().client.cert), "client-key-data": b64(pki().client.key) }),
  fc.constant({ "client-certificate-data": b64(pki().client.cert), "client-key-data": b64(pki().client2.key) }),
  fc.constant({ "client-certificate-data": b64(badCert), "client-key-data": b64(pem("PRIVATE KEY", SECRET)) }),
  fc.record({ exec: execArb }),
  fc.constant({ tokenFile: "/nonexistent/token" }),
  fc.record({
    "auth-provider": fc.record({ name: fc.constant("oidc"), config: fc.record({ "id-token": secretArb }) })
  }),
  fc.constant({})
)

const randomUserArb = fc.record({
  token: fc.oneof(secretArb, fc.constant(42), fc.constant(["list"])),
  username: fc.constantFrom("admin", "", 7),
  password: fc.oneof(secretArb, fc.constant(12345)),
  "client-certificate-data": fc.constantFrom(b64(badCert), "%%%", b64(SECRET), b64(pki().client.cert)),
  "client-key-data": fc.constantFrom(b64(pem("PRIVATE KEY", SECRET)), SECRET, b64(SECRET), b64(pki().client.key)),
  tokenFile: fc.constantFrom("/nonexistent/token", ""),
  exec: execArb,
  "auth-provider": fc.record({
    name: fc.constantFrom("oidc", "gcp", "azure"),
    config: fc.record(
      { "id-token": secretArb, "client-secret": secretArb, "refresh-token": secretArb },
      { requiredKeys: [] }
    )
  }),
  as: fc.constantFrom("admin", "system:serviceaccount:x:y")
}, { requiredKeys: [] })

const userArb = fc.oneof({ weight: 4, arbitrary: coherentUserArb }, { weight: 1, arbitrary: randomUserArb })

const clusterArb = (urls: ReadonlyArray<string>) =>
  fc.oneof(
    {
      weight: 3,
      arbitrary: fc.record({
        server: fc.constantFrom(...urls),
        "certificate-authority-data": fc.constant(b64(pki().ca.cert))
      })
    },
    {
      weight: 1,
      arbitrary: fc.record({ server: fc.constantFrom(...urls), "insecure-skip-tls-verify": fc.constant(true) })
    },
    { weight: 1, arbitrary: randomClusterArb(urls) }
  )

const randomClusterArb = (urls: ReadonlyArray<string>) =>
  fc.record({
    server: fc.oneof(
      { weight: 6, arbitrary: fc.constantFrom(...urls) },
      {
        weight: 2,
        arbitrary: fc.constantFrom(
          "http://127.0.0.1:1",
          "not a url",
          "ftp://host",
          `https://user:${SECRET}@127.0.0.1:1`,
          `https://127.0.0.1:1/?token=${SECRET}`,
          `https://127.0.0.1:1/#${SECRET}`,
          ""
        )
      },
      { weight: 1, arbitrary: fc.string({ maxLength: 10 }) }
    ),
    "certificate-authority-data": fc.constantFrom(b64(pki().ca.cert), b64(badCert), "%%%", b64(SECRET)),
    "insecure-skip-tls-verify": fc.constantFrom(true, false, "yes", 1),
    "tls-server-name": fc.constantFrom("localhost", "", "kube.internal.test", 5),
    "proxy-url": fc.constantFrom(undefined, undefined, undefined, "http://proxy:3128")
  }, { requiredKeys: ["server"] })

const contextArb = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      cluster: fc.constant("c"),
      user: fc.constant("u"),
      namespace: fc.constantFrom("default", "other")
    })
  },
  {
    weight: 1,
    arbitrary: fc.record({
      cluster: fc.constantFrom("c", "missing", 3),
      user: fc.constantFrom("u", "missing", ""),
      namespace: fc.oneof(fc.constantFrom("default", "other", "Bad NS", ""), fc.string({ maxLength: 5 }))
    }, { requiredKeys: [] })
  }
)

const kubeconfigArb = (urls: ReadonlyArray<string>) =>
  fc.record({
    root: fc.oneof(
      {
        weight: 8,
        arbitrary: fc.record({
          // first, so that a text cut short still names its context
          "current-context": fc.oneof(
            { weight: 8, arbitrary: fc.constant("ctx") },
            fc.constantFrom("nope", undefined, 5)
          ),
          apiVersion: fc.constant("v1"),
          kind: fc.constant("Config"),
          clusters: fc.oneof(
            { weight: 8, arbitrary: clusterArb(urls).map((cluster) => [{ name: "c", cluster }]) },
            { weight: 1, arbitrary: fc.constantFrom("not a list", [{ cluster: {} }]) }
          ),
          users: fc.oneof(
            { weight: 8, arbitrary: userArb.map((user) => [{ name: "u", user }]) },
            {
              weight: 1,
              arbitrary: fc.constantFrom(
                [{ name: "u", user: SECRET }],
                [{ name: "u", user: { token: SECRET } }, { name: "u", user: { token: SECRET } }]
              )
            }
          ),
          contexts: contextArb.map((context) => [{ name: "ctx", context }])
        }, { requiredKeys: ["clusters", "users", "contexts", "current-context"] })
      },
      { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) }
    ),
    form: fc.constantFrom("yaml", "yaml", "yaml", "yaml", "json", "json", "cut", "spliced"),
    at: fc.nat(),
    splice: fc.constantFrom(": [", "\t", "&a", "*b", "{", "\"", "- ", "\n  - ", "%YAML 9\n", "!!binary ")
  }).map(({ at, form, root, splice }) => {
    const yaml = Yaml.stringify(root)
    const position = yaml.length === 0 ? 0 : at % yaml.length
    switch (form) {
      case "yaml":
        return yaml
      case "json":
        return JSON.stringify(root) ?? "null"
      case "cut":
        return yaml.slice(0, position)
      case "spliced":
        return yaml.slice(0, position) + splice + yaml.slice(position)
    }
  })

describe("kubeconfigs", () => {
  it.live("exec plugins that print the secret wrongly: each a tagged error that does not show it", () =>
    Effect.scoped(Effect.gen(function*() {
      const served = yield* serveTls()
      const outputs = [
        `not json ${SECRET}`,
        credential({ token: `${SECRET}\n` }),
        credential({ token: `${SECRET}\u00ff\u0100` }),
        credential({ token: SECRET, expirationTimestamp: `soon ${SECRET}` }),
        credential({ clientCertificateData: pem("CERTIFICATE", "AAAA"), clientKeyData: pem("PRIVATE KEY", SECRET) }),
        credential({ clientCertificateData: pki().client.cert, clientKeyData: pki().client2.key }),
        credential({ clientKeyData: SECRET }),
        JSON.stringify({ kind: "ExecCredential", apiVersion: SECRET, status: { token: SECRET } })
      ]
      const tags: Array<string> = []
      for (const output of outputs) {
        counts.badInputs++
        const text = Yaml.stringify({
          clusters: [{ name: "c", cluster: { server: served.url, "certificate-authority-data": b64(pki().ca.cert) } }],
          users: [{ name: "u", user: { exec: nodePlugin(output) } }],
          contexts: [{ name: "ctx", context: { cluster: "c", user: "u" } }],
          "current-context": "ctx"
        })
        const exit = yield* Effect.exit(
          Kube.api(ConfigMaps).get("a").pipe(
            Effect.provide(NodeKube.layerFromKubeConfig(KubeConfig.layerFromString(text))),
            Effect.provide(RequestPolicy.layer({ readRetries: Schedule.recurs(0) }))
          )
        )
        const problem = problemWith(exit)
        assert.isUndefined(problem, `${output.slice(0, 60)}: ${problem}`)
        assert.isTrue(Exit.isFailure(exit), output.slice(0, 60))
        tags.push(tagOf(exit))
      }
      assert.deepStrictEqual(tags, [
        "KubeConfigError",
        "KubeConfigError",
        "KubeConfigError",
        "KubeConfigError",
        "HttpClientError/TransportError",
        "HttpClientError/TransportError",
        "KubeConfigError",
        "KubeConfigError"
      ])
    })))

  it("the checker itself sees a leak, a defect and an untagged failure", () => {
    assert.isDefined(problemWith(Exit.fail(new KubeConfigError({ source: "x", detail: `token ${SECRET}` }))))
    const hiddenInCause = new ValidationError({ subject: "s", detail: "d", cause: new Error(secretBase64) })
    assert.isDefined(problemWith(Exit.fail(hiddenInCause)))
    assert.isDefined(problemWith(Exit.die(new Error("boom"))))
    assert.isDefined(problemWith(Exit.fail(new Error("untagged"))))
    assert.isUndefined(problemWith(Exit.fail(new ValidationError({ subject: "s", detail: "d" }))))
  })

  it.live("random and hostile kubeconfigs: loading and a request end in success or a tagged error, no secret", () =>
    Effect.scoped(Effect.gen(function*() {
      const tls = yield* serveTls()
      const plain = yield* FakeCluster.serve({})
      const cms = Kube.api(ConfigMaps)
      const policy = RequestPolicy.layer({ timeout: "3 seconds", readRetries: Schedule.recurs(0) })
      const seen = yield* check(kubeconfigArb([tls.url, plain.url]), (text) =>
        Effect.gen(function*() {
          counts.badInputs++
          const loaded = yield* Effect.exit(Effect.provide(KubeConfig.fromString(text), NodeKube.layerPlatform))
          const problem = problemWith(loaded)
          if (problem !== undefined) return yield* Effect.fail(`fromString: ${problem}`)
          if (Exit.isFailure(loaded)) {
            if (tagOf(loaded) !== "KubeConfigError") {
              return yield* Effect.fail(`fromString failed with ${tagOf(loaded)}`)
            }
            return "not loaded"
          }
          const layer = Layer.merge(
            NodeKube.layerFromKubeConfig(Layer.succeed(KubeConfig.KubeConfig, loaded.value)),
            policy
          )
          const requested = yield* Effect.exit(Effect.provide(cms.get("a"), layer))
          counts.requests++
          const requestProblem = problemWith(requested)
          if (requestProblem !== undefined) return yield* Effect.fail(`get: ${requestProblem}`)
          return `get: ${tagOf(requested)}`
        }), 400)
      console.log("kubeconfigs:", seen)
      const requests = Object.entries(seen).filter(([k]) => k.startsWith("get: ")).reduce((n, [, v]) => n + v, 0)
      assert.isAbove(requests, 60, "many kubeconfigs loaded and sent a request")
      assert.isAbove(seen["get: Success"] ?? 0, 10, "some reached the fake with credentials it took")
    })))
})

// ---------------------------------------------------------------------------------------------------------------------
// Manifests
// ---------------------------------------------------------------------------------------------------------------------

const secretDataArb = fc.oneof(
  fc.constant({ password: secretBase64 }),
  fc.constant({ password: SECRET }),
  fc.constant({ password: 42 }),
  fc.constant(SECRET),
  fc.constant([secretBase64])
)

/** An object that parses and is applicable, apart from what the values do. */
const coherentManifestArb: fc.Arbitrary<unknown> = fc.oneof(
  fc.record({
    apiVersion: fc.constant("v1"),
    kind: fc.constant("Secret"),
    metadata: fc.record({
      name: nameArb,
      labels: fc.dictionary(fc.string({ maxLength: 5 }), labelValueArb, { maxKeys: 2 })
    }),
    data: secretDataArb,
    stringData: fc.oneof(fc.constant({ password: SECRET }), fc.constant({ "tls.key": `${SECRET}\n` })),
    type: fc.constantFrom("Opaque", "kubernetes.io/tls", "bad type")
  }, { requiredKeys: ["apiVersion", "kind", "metadata"] }),
  fc.record({
    apiVersion: fc.constant("v1"),
    kind: fc.constant("ConfigMap"),
    metadata: fc.record(
      { name: nameArb, namespace: fc.constantFrom(undefined, "default", "other") },
      { requiredKeys: ["name"] }
    ),
    data: fc.dictionary(
      fc.string({ maxLength: 5 }),
      fc.oneof(fc.string({ maxLength: 5 }), fc.integer()),
      { maxKeys: 2 }
    )
  }, { requiredKeys: ["apiVersion", "kind", "metadata"] })
)

const randomManifestArb: fc.Arbitrary<unknown> = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.record({
      apiVersion: fc.oneof(
        fc.constantFrom("v1", "v1", "v1", "apps/v1", "batch/v1", "example.com/v1", "", "v2", "a/b/c"),
        fc.constant(undefined),
        fc.integer()
      ),
      kind: fc.oneof(
        fc.constantFrom("Secret", "Secret", "ConfigMap", "Pod", "Namespace", "Deployment", "Widget", "SecretList", ""),
        fc.constant(undefined)
      ),
      metadata: fc.oneof(
        {
          weight: 6,
          arbitrary: fc.record({
            name: fc.oneof(nameArb, fc.constant(5)),
            namespace: fc.constantFrom(undefined, "default", "other", "Bad NS", ""),
            generateName: fc.constantFrom(undefined, "gen-"),
            uid: fc.constantFrom(undefined, "uid-1"),
            labels: fc.dictionary(fc.string({ maxLength: 5 }), labelValueArb, { maxKeys: 2 }),
            annotations: fc.constant({ note: "not secret" })
          }, { requiredKeys: ["name"] })
        },
        { weight: 1, arbitrary: fc.constantFrom(undefined, null, SECRET, [SECRET]) }
      ),
      data: secretDataArb,
      stringData: fc.oneof(fc.constant({ password: SECRET }), fc.constant({ password: 7 }), fc.constant(SECRET)),
      type: fc.constantFrom("Opaque", "other"),
      items: fc.constant([
        { apiVersion: "v1", kind: "Secret", metadata: { name: "inner" }, stringData: { k: SECRET } }
      ]),
      spec: fc.jsonValue({ maxDepth: 2 })
    }, { requiredKeys: ["apiVersion", "kind", "metadata"] })
  },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) }
)

const manifestArb = fc.oneof({ weight: 3, arbitrary: coherentManifestArb }, { weight: 1, arbitrary: randomManifestArb })

const manifestsTextArb = fc.record({
  objects: fc.array(manifestArb, { maxLength: 4 }),
  form: fc.constantFrom("yaml", "yaml", "yaml", "json", "json", "cut", "spliced"),
  at: fc.nat(),
  splice: fc.constantFrom(": [", "\t", "&a", "*b", "{", "\"", "---\n", "\n  - ", "!!binary ", "...\n")
}).map(({ at, form, objects, splice }) => {
  const yaml = objects.map((o) => Yaml.stringify(o)).join("---\n")
  const position = yaml.length === 0 ? 0 : at % yaml.length
  switch (form) {
    case "yaml":
      return yaml
    case "json":
      return JSON.stringify(objects)
    case "cut":
      return yaml.slice(0, position)
    case "spliced":
      return yaml.slice(0, position) + splice + yaml.slice(position)
  }
})

describe("manifests", () => {
  it.live("random manifests with Secret values: parse, apply, get, delete: success or tagged, no value shown", () =>
    check(
      fc.record({ text: manifestsTextArb, clusterScoped: fc.boolean(), dryRun: fc.boolean(), force: fc.boolean() }),
      ({ clusterScoped, dryRun, force, text }) =>
        Effect.gen(function*() {
          counts.badInputs++
          const parsed = yield* Effect.exit(Manifests.parse(text))
          const parseProblem = problemWith(parsed)
          if (parseProblem !== undefined) return yield* Effect.fail(`parse: ${parseProblem}`)
          if (Exit.isFailure(parsed)) return "not parsed"
          const control = yield* FakeCluster.FakeCluster
          const options = { namespace: "default", clusterScoped }
          const steps: ReadonlyArray<readonly [string, Effect.Effect<unknown, unknown, Kube.Requirements>]> = [
            ["apply", Manifests.apply(parsed.value, { ...options, dryRun, force, fieldManager: "properties" })],
            ["get", Manifests.get(parsed.value, options)],
            ["delete", Manifests.delete(parsed.value, options)]
          ]
          const tags: Array<string> = []
          for (const [name, step] of steps) {
            const exit = yield* Effect.exit(step)
            const problem = problemWith(exit)
            if (problem !== undefined) return yield* Effect.fail(`${name}: ${problem}`)
            tags.push(tagOf(exit))
          }
          counts.requests += control.requests().length
          return `apply ${tags[0]}`
        }).pipe(Effect.provide(FakeCluster.layer())),
      400
    ).pipe(Effect.map((seen) => {
      console.log("manifests:", seen)
      assert.isAbove(seen["apply Success"] ?? 0, 30, "many sets were applied")
      assert.isAbove(seen["apply ApplyFailed"] ?? 0, 5, "some stopped part way")
    })))
})

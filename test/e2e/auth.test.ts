/**
 * Identities against the real control plane: a service account's token from the TokenRequest API used as a
 * kubeconfig's bearer token (RBAC answers 403 for what its Role does not grant, and allows what it does), a token the
 * server does not accept (401), and impersonation of a user and a group through the admin's kubeconfig.
 */
import { assert, it } from "@effect/vitest"
import { Effect, Layer, Option, Redacted, Schedule, Schema, Stream } from "effect"
import * as tls from "node:tls"
import {
  ApiError,
  ConfigMaps,
  connectionProblem,
  Kube,
  KubeConfig,
  NodeKube,
  RoleBindings,
  Roles,
  Secrets,
  ServiceAccounts
} from "./lib.js"
import { layer, testNamespace } from "./support.js"

/** The admin's server and CA with other credentials: what a program given only a token would configure. */
const asIdentity = (
  base: KubeConfig.Service,
  identity: { readonly token?: Redacted.Redacted<string>; readonly impersonate?: KubeConfig.MakeOptions["impersonate"] }
) =>
  NodeKube.layerFromKubeConfig(
    Layer.effect(
      KubeConfig.KubeConfig,
      identity.token !== undefined
        ? KubeConfig.make({
          server: base.server,
          namespace: base.namespace,
          tls: { ca: base.tls.ca, serverName: base.tls.serverName, insecureSkipTlsVerify: base.tls.insecureSkipTlsVerify },
          token: identity.token
        })
        : Effect.succeed({
          ...base,
          impersonate: {
            user: identity.impersonate!.user,
            uid: identity.impersonate!.uid,
            groups: identity.impersonate!.groups ?? [],
            extra: identity.impersonate!.extra ?? {}
          }
        })
    )
  )

const WhoAmI = Schema.Struct({
  status: Schema.Struct({
    userInfo: Schema.Struct({
      username: Schema.String,
      uid: Schema.optional(Schema.String),
      groups: Schema.optional(Schema.Array(Schema.String)),
      extra: Schema.optional(Schema.Record(Schema.String, Schema.Array(Schema.String)))
    })
  })
})

const whoAmI = Kube.request({
  method: "POST",
  path: "/apis/authentication.k8s.io/v1/selfsubjectreviews",
  body: { apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview" }
}).pipe(Effect.flatMap(Schema.decodeUnknownEffect(WhoAmI)), Effect.map((r) => r.status.userInfo))

/** RBAC is read from the authorizer's cache: a binding just made may take a moment to count. */
const onceAllowed = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.retry(effect, { schedule: Schedule.spaced("200 millis"), times: 25, while: (e) => ApiError.isForbidden(e) })

const readConfigMaps = (ns: string) =>
  Kube.api(Roles, { namespace: ns }).create({
    metadata: { name: "cm-reader" },
    rules: [{ apiGroups: [""], resources: ["configmaps"], verbs: ["get", "list", "watch"] }]
  })

it.layer(layer, { excludeTestServices: true, timeout: "60 seconds" })("auth", (it) => {
  it.effect("a service account's token: its Role's verbs are allowed, the rest is 403 with the server's reason", () =>
    Effect.gen(function*() {
      const ns = yield* testNamespace("rbac-sa")
      const base = yield* KubeConfig.KubeConfig
      yield* Kube.api(ServiceAccounts, { namespace: ns }).create({ metadata: { name: "limited" } })
      yield* readConfigMaps(ns)
      yield* Kube.api(RoleBindings, { namespace: ns }).create({
        metadata: { name: "limited-reads" },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "cm-reader" },
        subjects: [{ kind: "ServiceAccount", name: "limited", namespace: ns }]
      })
      yield* Kube.api(ConfigMaps, { namespace: ns }).create({ metadata: { name: "visible" } })
      const { token } = yield* Kube.api(ServiceAccounts, { namespace: ns }).createToken("limited", { expirationSeconds: 600 })

      yield* Effect.gen(function*() {
        const me = yield* whoAmI
        assert.strictEqual(me.username, `system:serviceaccount:${ns}:limited`)
        assert.includeMembers([...(me.groups ?? [])], ["system:serviceaccounts", `system:serviceaccounts:${ns}`, "system:authenticated"])
        const cms = Kube.api(ConfigMaps, { namespace: ns })
        const listed = yield* onceAllowed(cms.list())
        assert.include(listed.items.map((c) => c.metadata?.name), "visible")

        const create = yield* Effect.flip(cms.create({ metadata: { name: "nope" } }))
        assert.isTrue(ApiError.isForbidden(create), create.message)
        assert.strictEqual((create as ApiError).code, 403)
        assert.include(
          create.message,
          `configmaps is forbidden: User "system:serviceaccount:${ns}:limited" cannot create resource "configmaps" in API group "" in the namespace "${ns}"`
        )
        const secrets = yield* Effect.flip(Kube.api(Secrets, { namespace: ns }).list())
        assert.isTrue(ApiError.isForbidden(secrets), secrets.message)
        // a watch refused by RBAC fails the same way
        const watch = yield* Effect.flip(Stream.runDrain(Kube.api(Secrets, { namespace: ns }).watch({ timeoutSeconds: 1 })))
        assert.isTrue(ApiError.isForbidden(watch), watch.message)
        // a get in another namespace
        const elsewhere = yield* Effect.flip(Kube.api(ConfigMaps, { namespace: "default" }).list())
        assert.isTrue(ApiError.isForbidden(elsewhere), elsewhere.message)
        assert.include(elsewhere.message, `in the namespace "default"`)
      }).pipe(Effect.provide(asIdentity(base, { token })))
    }), 60_000)

  // Found here: a second client provided inside a program that already had one was the first one's HttpClient (its
  // CA, TLS settings, proxy and connections), for NodeKube.layerFromKubeConfig's HttpClient layer was memoized by
  // identity; the HTTP/2 test's client of its own opened no connection of its own
  it.effect("a second client inside a program that has one brings its own TLS: a CA that did not sign the server fails", () =>
    Effect.gen(function*() {
      const base = yield* KubeConfig.KubeConfig
      yield* Kube.api(ConfigMaps, { namespace: "default" }).list()
      const otherCa = tls.rootCertificates[0]!
      const error = yield* Effect.flip(
        Kube.api(ConfigMaps, { namespace: "default" }).list().pipe(
          Effect.provide(NodeKube.layerFromKubeConfig(KubeConfig.layerFrom({ server: base.server, tls: { ca: otherCa }, token: "x" })))
        )
      )
      assert.strictEqual(connectionProblem(error), "CertificateUntrusted", String(error))
    }), 30_000)

  it.effect("a token the server does not accept is 401 Unauthorized", () =>
    Effect.gen(function*() {
      const base = yield* KubeConfig.KubeConfig
      const error = yield* Effect.flip(
        Kube.api(ConfigMaps, { namespace: "default" }).list().pipe(
          Effect.provide(asIdentity(base, { token: Redacted.make("not-a-token") }))
        )
      )
      assert.isTrue(ApiError.isUnauthorized(error), error.message)
      assert.strictEqual((error as ApiError).code, 401)
      assert.notInclude(error.message, "not-a-token")
    }), 30_000)

  it.effect("impersonation of a uid and extras: keys with / and % reach the server as written", () =>
    Effect.gen(function*() {
      const base = yield* KubeConfig.KubeConfig
      const me = yield* whoAmI.pipe(
        Effect.provide(asIdentity(base, {
          impersonate: {
            user: "ann",
            uid: "uid-1234",
            groups: ["g1", "g2"],
            extra: { "example.com/team": ["blue", "green"], "scopes%": ["read"] }
          }
        }))
      )
      assert.strictEqual(me.username, "ann")
      assert.strictEqual(me.uid, "uid-1234")
      assert.includeMembers([...(me.groups ?? [])], ["g1", "g2"])
      assert.deepStrictEqual(me.extra, { "example.com/team": ["blue", "green"], "scopes%": ["read"] })
    }), 30_000)

  it.effect("impersonation: the server acts as the user and groups named, and RBAC judges them", () =>
    Effect.gen(function*() {
      const ns = yield* testNamespace("impersonate")
      const base = yield* KubeConfig.KubeConfig
      yield* readConfigMaps(ns)
      yield* Kube.api(ConfigMaps, { namespace: ns }).create({ metadata: { name: "visible" } })
      const group = `e2e-readers-${ns}`
      const asJane = asIdentity(base, { impersonate: { user: "jane", groups: [group] } })

      const before = yield* Effect.gen(function*() {
        const me = yield* whoAmI
        assert.strictEqual(me.username, "jane")
        assert.includeMembers([...(me.groups ?? [])], [group, "system:authenticated"])
        return yield* Effect.flip(Kube.api(ConfigMaps, { namespace: ns }).list())
      }).pipe(Effect.provide(asJane))
      assert.isTrue(ApiError.isForbidden(before), before.message)
      assert.include(before.message, `User "jane" cannot list resource "configmaps"`)

      yield* Kube.api(RoleBindings, { namespace: ns }).create({
        metadata: { name: "group-reads" },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "cm-reader" },
        subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "Group", name: group }]
      })
      const after = yield* onceAllowed(Kube.api(ConfigMaps, { namespace: ns }).list()).pipe(Effect.provide(asJane))
      assert.deepStrictEqual(after.items.map((c) => c.metadata?.name).filter((n) => n === "visible"), ["visible"])
      const write = yield* Effect.flip(
        Kube.api(ConfigMaps, { namespace: ns }).create({ metadata: { name: "by-jane" } }).pipe(Effect.provide(asJane))
      )
      assert.isTrue(ApiError.isForbidden(write), write.message)
      assert.isTrue(Option.isNone(yield* Kube.api(ConfigMaps, { namespace: ns }).get("by-jane")))
    }), 60_000)
})

/**
 * The fake's RBAC authorizer, through the client's real request path: the scenario's cases
 * (the same ones test/e2e/rbac.test.ts asks the real control plane) answered as
 * kube-apiserver 1.35 answers them, wording included (each expected message below was read
 * from the real server's answer).
 */
import { assert, it } from "@effect/vitest"
import { Effect } from "effect"
import { ApiError, ConfigMaps, Kube, KubeConfig, RoleBindings, Roles, ServiceAccounts } from "effect-kube"
import { FakeCluster } from "@effect-kube/testing"
import { answers, settled, setup } from "./rbacScenario.js"

const ns = "rbac-cases"

it.effect("the scenario's cases are answered as the real control plane answers them", () =>
  Effect.gen(function*() {
    yield* setup(ns)
    yield* settled(ns)
    const got = new Map(yield* answers(ns))
    const message = (label: string) => {
      const a = got.get(label)
      return a !== undefined && "message" in a ? a.message : `no message: ${JSON.stringify(a)}`
    }
    assert.deepStrictEqual(got.get("alice lists configmaps"), { ok: true })
    assert.strictEqual(
      message("alice creates a configmap"),
      `configmaps is forbidden: User "alice" cannot create resource "configmaps" in API group "" in the namespace "${ns}"`
    )
    assert.strictEqual(
      message("alice applies (creates) a configmap"),
      `configmaps "applied" is forbidden: User "alice" cannot create resource "configmaps" in API group "" in the namespace "${ns}"`
    )
    assert.strictEqual(got.get("alice gets the pod she may (absent)")!.hasOwnProperty("code") && (got.get("alice gets the pod she may (absent)") as { code: number }).code, 404)
    assert.strictEqual(message("alice lists nodes"), `nodes is forbidden: User "alice" cannot list resource "nodes" in API group "" at the cluster scope`)
    assert.strictEqual(message("alice reads /metrics"), `forbidden: User "alice" cannot get path "/metrics"`)
    assert.deepStrictEqual(got.get("alice lists secrets (aggregated)"), { ok: true })
    assert.deepStrictEqual(got.get("a team member lists namespaces"), { ok: true })
    assert.strictEqual(
      message("bob lists configmaps (his role is missing)"),
      `configmaps is forbidden: User "bob" cannot list resource "configmaps" in API group "" in the namespace "${ns}": RBAC: role.rbac.authorization.k8s.io "missing" not found`
    )
    assert.strictEqual(
      message("alice creates a role that escalates"),
      `roles.rbac.authorization.k8s.io "escalates" is forbidden: user "alice" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n` +
        `{APIGroups:[""], Resources:["configmaps"], ResourceNames:["x"], Verbs:["delete"]}\n` +
        `{APIGroups:["apps"], Resources:["deployments"], Verbs:["get" "list"]}\n` +
        `{APIGroups:["apps"], Resources:["deployments/scale"], Verbs:["get" "list"]}`
    )
    assert.deepStrictEqual(got.get("alice binds a cluster role she holds"), { ok: true })
    assert.strictEqual(message("alice binds a missing role"), `rolebindings.rbac.authorization.k8s.io "nothing" not found`)
    assert.deepStrictEqual(got.get("alice asks whether she may get configmaps "), {
      review: { allowed: true, reason: `RBAC: allowed by RoleBinding "reader/${ns}" of Role "reader" to User "alice"` }
    })
    assert.deepStrictEqual(got.get("alice asks whether she may delete configmaps "), { review: { allowed: false } })
  }).pipe(Effect.provide(FakeCluster.layer({ authorization: "RBAC", namespaces: [ns] }))))

const whoAmI = Kube.request({
  method: "POST",
  path: "/apis/authentication.k8s.io/v1/selfsubjectreviews",
  body: { apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview" }
}).pipe(Effect.map((r) => (r as { status: { userInfo: { username: string; groups: ReadonlyArray<string> } } }).status.userInfo))

const impersonating = (user: string, groups: ReadonlyArray<string>) =>
<A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.flatMap(KubeConfig.KubeConfig, (base) =>
    Effect.provideService(effect, KubeConfig.KubeConfig, { ...base, impersonate: { user, uid: undefined, groups, extra: {} } }))

it.effect("impersonation: the user and each group as sent, system:authenticated added; a user who may not impersonate is refused", () =>
  Effect.gen(function*() {
    const me = yield* impersonating("alice", ["g1", "g2"])(whoAmI)
    assert.deepStrictEqual(me, { username: "alice", groups: ["g1", "g2", "system:authenticated"] })
    const sa = yield* impersonating("system:serviceaccount:shop:app", [])(whoAmI)
    assert.deepStrictEqual(sa.groups, ["system:serviceaccounts", "system:serviceaccounts:shop", "system:authenticated"])
    // alice, not an admin, may not impersonate bob
    const refused = yield* Effect.flip(
      Kube.api(ConfigMaps, { namespace: "default" }).list().pipe(
        impersonating("bob", []),
        Effect.provide(FakeCluster.layer({ user: { name: "alice" } }))
      )
    )
    assert.strictEqual(
      (refused as ApiError).statusMessage,
      `users "bob" is forbidden: User "alice" cannot impersonate resource "users" in API group "" at the cluster scope`
    )
  }).pipe(Effect.provide(FakeCluster.layer({ authorization: "RBAC" }))))

it.effect("a service-account token the fake issued is that account, authorized by its bindings", () =>
  Effect.gen(function*() {
    yield* Kube.api(ServiceAccounts, { namespace: "default" }).create({ metadata: { name: "reader" } })
    const { token } = yield* Kube.api(ServiceAccounts, { namespace: "default" }).createToken("reader")
    const base = yield* KubeConfig.KubeConfig
    const asReader = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
      Effect.provideService(effect, KubeConfig.KubeConfig, {
        ...base,
        auth: { kind: "token", credentials: Effect.succeed({ token }), invalidate: Effect.succeed(false) }
      })
    const denied = yield* Effect.flip(asReader(Kube.api(ConfigMaps, { namespace: "default" }).list()))
    assert.strictEqual(
      (denied as ApiError).statusMessage,
      `configmaps is forbidden: User "system:serviceaccount:default:reader" cannot list resource "configmaps" in API group "" in the namespace "default"`
    )
    yield* Kube.api(Roles, { namespace: "default" }).create({
      metadata: { name: "cm" },
      rules: [{ apiGroups: [""], resources: ["configmaps"], verbs: ["list"] }]
    })
    yield* Kube.api(RoleBindings, { namespace: "default" }).create({
      metadata: { name: "cm" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "cm" },
      subjects: [{ kind: "ServiceAccount", name: "reader" }]
    })
    const listed = yield* asReader(Kube.api(ConfigMaps, { namespace: "default" }).list())
    assert.deepStrictEqual(listed.items.map((c) => c.metadata?.name), ["kube-root-ca.crt"])
  }).pipe(Effect.provide(FakeCluster.layer({ authorization: "RBAC" }))))

/**
 * The fake's RBAC authorizer, through the client's real request path: the scenario's cases
 * (the same ones test/e2e/rbac.test.ts asks the real control plane) answered as
 * kube-apiserver 1.35 answers them, wording included (each expected message below was read
 * from the real server's answer).
 */
import { assert, it } from "@effect/vitest"
import { Effect } from "effect"
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

/**
 * RBAC on the real control plane and on the fake, case by case: test/testing/rbacScenario.ts
 * sets up one namespace's roles and bindings and asks, as impersonated subjects, what
 * kube-apiserver's RBAC authorizer decides (403 Status bodies, escalation and bind checks,
 * aggregation, access and rules reviews); the fake with `authorization: "RBAC"` must answer
 * every case identically. Then the least privilege `Rbac.required` writes from a fake run of
 * test/testing/rbacProgram.ts, applied to the real control plane: the program runs as a
 * service account with it, and fails with a 403 without any one of its rules.
 */
import { assert, it } from "@effect/vitest"
import { Effect, Exit, Layer, type Redacted, Schedule } from "effect"
import { FakeCluster, Rbac } from "@effect-kube/testing"
import { cleanup, program } from "../testing/rbacProgram.js"
import { answers, settled, setup, teardown } from "../testing/rbacScenario.js"
import { ApiError, ClusterRoleBindings, ClusterRoles, Kube, KubeConfig, Manifests, NodeKube, Roles, ServiceAccounts } from "./lib.js"
import { layer, testNamespace } from "./support.js"

it.layer(layer, { excludeTestServices: true, timeout: "120 seconds" })("rbac", (it) => {
  it.effect("every case is answered by the fake as by kube-apiserver's RBAC authorizer", () =>
    Effect.gen(function*() {
      const ns = yield* testNamespace("rbac-cases")
      yield* Effect.addFinalizer(() => teardown(ns))
      yield* setup(ns)
      yield* settled(ns)
      const real = yield* answers(ns)
      const fake = yield* Effect.gen(function*() {
        yield* setup(ns)
        yield* settled(ns)
        return yield* answers(ns)
      }).pipe(Effect.provide(FakeCluster.layer({ authorization: "RBAC", namespaces: [ns] })))
      assert.strictEqual(fake.length, real.length)
      const differing = real.flatMap(([label, answer], i) =>
        JSON.stringify(answer) === JSON.stringify(fake[i]![1]) ? [] : [{ label, real: answer, fake: fake[i]![1] }]
      )
      assert.deepStrictEqual(differing, [], JSON.stringify(differing, null, 2))
      assert.strictEqual(real.length, 33)
    }), 120_000)
})

/** The program's client as the service account, with the admin's server and CA. */
const asToken = (base: KubeConfig.Service, token: Redacted.Redacted<string>) =>
  NodeKube.layerFromKubeConfig(Layer.effect(
    KubeConfig.KubeConfig,
    KubeConfig.make({
      server: base.server,
      namespace: base.namespace,
      tls: { ca: base.tls.ca, serverName: base.tls.serverName, insecureSkipTlsVerify: base.tls.insecureSkipTlsVerify },
      token
    })
  ))

/** Whether the service account may do what a rule's first verb, resource and name say (as a SubjectAccessReview). */
const mayDo = (user: string, ns: string, rule: Rbac.PolicyRule, namespaced: boolean) => {
  const [resource, subresource] = rule.resources![0]!.split("/")
  return Kube.request({
    method: "POST",
    path: "/apis/authorization.k8s.io/v1/subjectaccessreviews",
    body: {
      apiVersion: "authorization.k8s.io/v1",
      kind: "SubjectAccessReview",
      spec: {
        user,
        groups: ["system:serviceaccounts", `system:serviceaccounts:${ns}`, "system:authenticated"],
        resourceAttributes: {
          ...(namespaced ? { namespace: ns } : {}),
          verb: rule.verbs[0],
          group: rule.apiGroups![0],
          resource,
          ...(subresource !== undefined ? { subresource } : {}),
          ...(rule.resourceNames !== undefined ? { name: rule.resourceNames[0] } : {})
        }
      }
    }
  }).pipe(Effect.map((r) => (r as { status: { allowed: boolean } }).status.allowed))
}

/** Until the authorizer's caches agree that every rule is (or one is not) granted. */
const until = (check: Effect.Effect<boolean, unknown, Kube.Requirements>) =>
  check.pipe(
    Effect.flatMap((ok) => (ok ? Effect.void : Effect.fail("pending" as const))),
    Effect.retry({ schedule: Schedule.spaced("100 millis"), times: 100 }),
    Effect.orDie
  )

it.layer(layer, { excludeTestServices: true, timeout: "300 seconds" })("rbac from a fake run", (it) => {
  it.effect("the RBAC written from a fake run lets the program run as a service account with no denial; without any one rule it is refused", () =>
    Effect.gen(function*() {
      const ns = yield* testNamespace("rbac-program")
      const name = `${ns}-app`
      const user = `system:serviceaccount:${ns}:app`
      const objects = yield* Effect.gen(function*() {
        yield* program(ns)
        return yield* Rbac.required({ name, subject: { kind: "ServiceAccount", namespace: ns, name: "app" } })
      }).pipe(Effect.provide(FakeCluster.layer({ namespaces: [ns] })))
      assert.deepStrictEqual(objects.map((o) => o.kind), ["ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"])
      yield* Effect.addFinalizer(() =>
        Effect.all([Effect.ignore(Kube.api(ClusterRoles).delete(name)), Effect.ignore(Kube.api(ClusterRoleBindings).delete(name))])
      )
      // applied as a user would apply the YAML: the text, parsed
      yield* Manifests.apply(yield* Manifests.parse(Rbac.toYaml(objects)), { fieldManager: "rbac-e2e" })
      yield* Kube.api(ServiceAccounts, { namespace: ns }).create({ metadata: { name: "app" } })
      const roles = objects.filter((o) => o.kind === "Role" || o.kind === "ClusterRole")
      const everyRule = Effect.map(
        Effect.forEach(roles.flatMap((r) => r.rules!.map((rule) => [rule, r.kind === "Role"] as const)), ([rule, namespaced]) =>
          mayDo(user, ns, rule, namespaced)),
        (all) => all.every((a) => a)
      )
      yield* until(everyRule)
      const base = yield* KubeConfig.KubeConfig
      const { token } = yield* Kube.api(ServiceAccounts, { namespace: ns }).createToken("app", { expirationSeconds: 600 })
      const asApp = asToken(base, token)

      const full = yield* Effect.exit(program(ns).pipe(Effect.provide(asApp)))
      assert.isTrue(Exit.isSuccess(full), String(full))

      let refused = 0
      for (const role of roles) {
        for (const [index, rule] of role.rules!.entries()) {
          const fewer = role.rules!.filter((_, i) => i !== index)
          const replace = (rules: ReadonlyArray<Rbac.PolicyRule>) =>
            role.kind === "Role"
              ? Kube.api(Roles, { namespace: ns }).apply({ ...role, kind: "Role", rules: [...rules] } as never, { fieldManager: "rbac-e2e", force: true })
              : Kube.api(ClusterRoles).apply({ ...role, kind: "ClusterRole", rules: [...rules] } as never, { fieldManager: "rbac-e2e", force: true })
          yield* replace(fewer)
          yield* until(Effect.map(mayDo(user, ns, rule, role.kind === "Role"), (ok) => !ok))
          yield* cleanup(ns)
          const exit = yield* Effect.exit(program(ns).pipe(Effect.provide(asApp)))
          assert.isTrue(Exit.isFailure(exit), `without ${JSON.stringify(rule)} the program still ran`)
          if (Exit.isFailure(exit)) {
            const error = exit.cause.reasons.map((r) => ("error" in r ? r.error : undefined)).find(ApiError.is)
            assert.isTrue(ApiError.isForbidden(error), String(exit.cause))
            refused++
          }
          yield* replace(role.rules!)
          yield* until(everyRule)
        }
      }
      assert.strictEqual(refused, roles.flatMap((r) => r.rules!).length)
      assert.strictEqual(refused, 8)
    }), 300_000)
})

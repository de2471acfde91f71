/**
 * `Rbac.required`: the least-privilege Role, ClusterRole and bindings written from what a
 * program asked the fake for, checked by running the program again on a fake that enforces
 * RBAC with exactly those objects (no denial), and with each rule removed (a denial).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import { ApiError } from "effect-kube"
import { FakeCluster, Rbac } from "@effect-kube/testing"
import { program } from "./rbacProgram.js"

const ns = "shop"
const subject = { kind: "ServiceAccount", namespace: ns, name: "app" } as const
const user = { serviceAccount: { namespace: ns, name: "app" } } as const

const recorded = Effect.gen(function*() {
  yield* program(ns)
  return yield* Rbac.required({ name: "shop-app", subject })
}).pipe(Effect.provide(FakeCluster.layer({ namespaces: [ns] })))

/** The program on a fake that enforces RBAC with `objects`, and the denials it met. */
const enforced = (objects: ReadonlyArray<unknown>) =>
  Effect.gen(function*() {
    const exit = yield* Effect.exit(program(ns))
    const fake = yield* FakeCluster.FakeCluster
    return { exit, denials: fake.accessLog().filter((a) => !a.allowed) }
  }).pipe(Effect.provide(FakeCluster.layer({ user, namespaces: [ns], objects })))

describe("Rbac", () => {
  it.effect("writes the least privilege a run used: namespaced, named where every use named, cluster-wide where listed across", () =>
    Effect.gen(function*() {
      const objects = yield* recorded
      assert.deepStrictEqual(objects.map((o) => `${o.kind} ${o.metadata.namespace ?? ""}/${o.metadata.name}`), [
        "ClusterRole /shop-app",
        "ClusterRoleBinding /shop-app",
        "Role shop/shop-app",
        "RoleBinding shop/shop-app"
      ])
      assert.deepStrictEqual(objects[0]!.rules, [{ apiGroups: [""], resources: ["namespaces"], verbs: ["list"] }])
      assert.deepStrictEqual(objects[2]!.rules, [
        // POST to the collection names nothing; the apply that created names "applied"
        { apiGroups: [""], resources: ["configmaps"], verbs: ["create"] },
        { apiGroups: [""], resources: ["configmaps"], resourceNames: ["settings"], verbs: ["delete", "get", "watch"] },
        { apiGroups: [""], resources: ["configmaps"], resourceNames: ["applied", "settings"], verbs: ["patch"] },
        { apiGroups: [""], resources: ["pods"], verbs: ["list"] },
        { apiGroups: [""], resources: ["secrets"], resourceNames: ["absent"], verbs: ["get"] },
        { apiGroups: ["apps"], resources: ["deployments"], verbs: ["create"] },
        { apiGroups: ["apps"], resources: ["deployments/scale"], resourceNames: ["web"], verbs: ["get"] }
      ])
      assert.deepStrictEqual(objects[3]!.subjects, [{ kind: "ServiceAccount", name: "app", namespace: ns }])
      const yaml = Rbac.toYaml(objects)
      assert.include(yaml, "kind: ClusterRoleBinding\n")
      assert.strictEqual(yaml.split("---\n").length, 4)
    }))

  it.effect("the written RBAC lets the program run on a fake that enforces it, with no denial", () =>
    Effect.gen(function*() {
      const objects = yield* recorded
      const { denials, exit } = yield* enforced(objects)
      assert.isTrue(Exit.isSuccess(exit), String(exit))
      assert.deepStrictEqual(denials, [])
    }))

  it.effect("without any one of its rules the program is refused", () =>
    Effect.gen(function*() {
      const objects = yield* recorded
      let checked = 0
      for (const [index, object] of objects.entries()) {
        for (const [rule] of (object.rules ?? []).entries()) {
          const fewer = objects.map((o, i) => (i === index ? { ...o, rules: o.rules!.filter((_, r) => r !== rule) } : o))
          const { denials, exit } = yield* enforced(fewer)
          assert.isTrue(Exit.isFailure(exit), `rule ${rule} of ${object.kind}`)
          if (Exit.isFailure(exit)) {
            const error = exit.cause.reasons.map((r) => ("error" in r ? r.error : undefined)).find(ApiError.is)
            assert.isTrue(ApiError.isForbidden(error), String(exit.cause))
          }
          assert.isAtLeast(denials.length, 1)
          checked++
        }
      }
      assert.strictEqual(checked, 8)
    }))

  it.effect("resourceNames: false restricts nothing; an apply that created is logged as its create too", () =>
    Effect.gen(function*() {
      const objects = yield* Effect.gen(function*() {
        yield* program(ns)
        const fake = yield* FakeCluster.FakeCluster
        const creates = fake.accessLog().filter((a) => a.verb === "create" && a.resourceRequest && a.resource === "configmaps")
        assert.deepStrictEqual(creates.map((a) => (a.resourceRequest ? a.name : "")), ["", "applied"])
        return yield* Rbac.required({ name: "shop-app", subject, resourceNames: false })
      }).pipe(Effect.provide(FakeCluster.layer({ namespaces: [ns] })))
      assert.isTrue(objects.every((o) => (o.rules ?? []).every((r) => r.resourceNames === undefined)))
      assert.deepStrictEqual(objects[2]!.rules![0], { apiGroups: [""], resources: ["configmaps"], verbs: ["create", "delete", "get", "patch", "watch"] })
    }))

  it.effect("under RBAC without the written objects the first request is the API server's 403", () =>
    Effect.gen(function*() {
      const { denials, exit } = yield* enforced([])
      assert.isTrue(Exit.isFailure(exit))
      assert.deepInclude(denials[0], { user: `system:serviceaccount:${ns}:app`, verb: "create", resource: "configmaps", namespace: ns })
    }))
})

/**
 * RBAC on the real control plane and on the fake, case by case: test/testing/rbacScenario.ts
 * sets up one namespace's roles and bindings and asks, as impersonated subjects, what
 * kube-apiserver's RBAC authorizer decides (403 Status bodies, escalation and bind checks,
 * aggregation, access and rules reviews); the fake with `authorization: "RBAC"` must answer
 * every case identically.
 */
import { assert, it } from "@effect/vitest"
import { Effect } from "effect"
import { FakeCluster } from "@effect-kube/testing"
import { answers, settled, setup, teardown } from "../testing/rbacScenario.js"
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
      if (process.env.RBAC_DUMP !== undefined) console.log(JSON.stringify(real, null, 1))
      assert.strictEqual(fake.length, real.length)
      const differing = real.flatMap(([label, answer], i) =>
        JSON.stringify(answer) === JSON.stringify(fake[i]![1]) ? [] : [{ label, real: answer, fake: fake[i]![1] }]
      )
      assert.deepStrictEqual(differing, [], JSON.stringify(differing, null, 2))
      assert.isAtLeast(real.length, 25)
    }), 120_000)
})

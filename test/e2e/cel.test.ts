/**
 * `CustomResource.validate` against kube-apiserver: CRDs with CEL rules created on the real control plane, the
 * server's answer to each write (accepted, or its 422's causes) compared with what `validate` answers for the same
 * object without a server — rules of every kind, a CRD refused for its rules' estimated cost (unbounded, and by a
 * named factor), an expensive rule over the per-call limit on a long list, and rules that together run out of the
 * object's runtime budget.
 */
import { assert, it } from "@effect/vitest"
import { Effect } from "effect"
import {
  type Answer,
  budgetSchema,
  crdOf,
  factorSchema,
  gadget,
  gadgetCases,
  gadgetSchema,
  installCrd,
  removeCrd,
  tags,
  words,
  unboundedSchema,
  validateAnswer,
  writeCase
} from "../util/celCases.js"
import { layer, testNamespace, uniqueName } from "./support.js"

// a group of its own per run: a CRD is cluster-wide
const group = `${uniqueName("cel")}.effect-kube.dev`

it.layer(layer, { excludeTestServices: true, timeout: "120 seconds" })("CEL rules: validate agrees with kube-apiserver", (it) => {
  it.effect("a CRD's rules of every kind: each write accepted or refused with the server's causes", () =>
    Effect.gen(function*() {
      const crd = crdOf(group, "Gadget", gadgetSchema())
      yield* Effect.addFinalizer(() => removeCrd(crd))
      const installed = yield* installCrd(crd)
      assert.deepStrictEqual(installed, { _tag: "Accepted" } satisfies Answer)
      assert.deepStrictEqual(yield* validateAnswer(crd, {}), { _tag: "Accepted" } satisfies Answer)
      const namespace = yield* testNamespace("cel")
      const differences: Array<string> = []
      for (const c of gadgetCases()) {
        const name = `g-${c.name}`
        const object = gadget(group, name, c.object)
        const { answer, stored } = yield* writeCase(group, "Gadget", namespace, name, object, c.old === undefined ? undefined : gadget(group, name, c.old))
        const ours = yield* validateAnswer(crd, object, stored)
        if (JSON.stringify(ours) !== JSON.stringify(answer)) {
          differences.push(`${c.name}: server ${JSON.stringify(answer)}, validate ${JSON.stringify(ours)}`)
        }
      }
      assert.deepStrictEqual(differences, [])
    }).pipe(Effect.scoped))

  it.effect("a rule over the estimated cost limit: the CRD refused, with the server's causes", () =>
    Effect.gen(function*() {
      for (const [kind, schema] of [["Unbounded", unboundedSchema()], ["Factor", factorSchema()]] as const) {
        const crd = crdOf(group, kind, schema)
        yield* Effect.addFinalizer(() => removeCrd(crd))
        const answer = yield* installCrd(crd)
        assert.strictEqual(answer._tag, "Refused", kind)
        assert.deepStrictEqual(yield* validateAnswer(crd, {}), answer, `${kind}: ${JSON.stringify(answer)}`)
      }
    }).pipe(Effect.scoped))

  it.effect("rules each within their limits that together run out of the object's runtime budget", () =>
    Effect.gen(function*() {
      const crd = crdOf(group, "Budget", budgetSchema())
      yield* Effect.addFinalizer(() => removeCrd(crd))
      assert.deepStrictEqual(yield* installCrd(crd), { _tag: "Accepted" } satisfies Answer)
      const namespace = yield* testNamespace("cel")
      for (const n of [5, 20]) {
        const object = { apiVersion: `${group}/v1`, kind: "Budget", metadata: { name: `b-${n}` }, spec: { words: words(n, n === 5 ? 10 : 1000) } }
        const { answer } = yield* writeCase(group, "Budget", namespace, `b-${n}`, object)
        assert.strictEqual(answer._tag, n === 5 ? "Accepted" : "Refused", `${n} tags: ${JSON.stringify(answer)}`)
        assert.deepStrictEqual(yield* validateAnswer(crd, object), answer, `${n} tags: ${JSON.stringify(answer)}`)
      }
    }).pipe(Effect.scoped))
})

/**
 * `CustomResource.validate`: a CRD's CEL rules run on the client, without a server, with the API server's
 * messages and cost limits — and FakeCluster (the same engine, shared) answering the same writes alike over
 * real HTTP. The causes expected here are kube-apiserver's, as test/e2e/cel.test.ts checks on the real
 * control plane.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { CustomResource } from "../packages/effect-kube/src/index.js"
import { FakeCluster } from "@effect-kube/testing"
import {
  type Answer,
  budgetSchema,
  crdOf,
  factorSchema,
  gadget,
  gadgetCases,
  gadgetSchema,
  installCrd,
  tags,
  words,
  unboundedSchema,
  validateAnswer,
  writeCase
} from "./util/celCases.js"

const group = "cel.example.com"
const crd = crdOf(group, "Gadget", gadgetSchema())
/** A FieldValueInvalid cause: the value as Go prints it (`undefined` for an object, which the server leaves out). */
const invalid = (field: string, value: string | undefined, message: string) => ({
  field,
  reason: "FieldValueInvalid",
  message: value === undefined ? `Invalid value: ${message}` : `Invalid value: ${value}: ${message}`
})
const refused = (...causes: Answer extends infer _ ? ReadonlyArray<{ field: string; reason: string; message: string }> : never): Answer => ({ _tag: "Refused", causes })
const accepted: Answer = { _tag: "Accepted" }

/** kube-apiserver's answer to each gadget case (test/e2e/cel.test.ts holds validate to the real server's). */
const expected: Record<string, Answer> = {
  "accepted": accepted,
  "over-max": refused(invalid("spec", undefined, "replicas over max")),
  "default-max": accepted,
  "message-expression": refused(invalid("spec.name", `"much-too-long-name"`, "name much-too-long-name is too long")),
  "forbidden-field-path": refused({ field: "spec.mode", reason: "FieldValueForbidden", message: "Forbidden: mode bad is forbidden" }),
  "required-field-path": refused({ field: "spec.owner", reason: "FieldValueRequired", message: "Required value: an owner is required" }),
  "several": refused(
    invalid("spec", undefined, "replicas over max"),
    { field: "spec.mode", reason: "FieldValueForbidden", message: "Forbidden: mode bad is forbidden" },
    { field: "spec.owner", reason: "FieldValueRequired", message: "Required value: an owner is required" },
    invalid("spec.name", `"much-too-long-name"`, "name much-too-long-name is too long")
  ),
  // an error of cost names the schema's type where a false rule names the value, as the server does
  "per-call-limit": refused(invalid(
    "spec",
    `"object"`,
    "'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: tags"
  )),
  "transition": refused(invalid("spec.class", `"silver"`, "class is immutable")),
  "transition-unchanged": accepted,
  "optional-old-self": refused(invalid("spec.counter", "4", "counter only grows")),
  "optional-old-self-create": accepted
}

const hint = "(try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)"

describe("CustomResource.validate", () => {
  it.effect("answers each case as kube-apiserver does: field, reason, message", () =>
    Effect.gen(function*() {
      for (const c of gadgetCases()) {
        const object = gadget(group, `g-${c.name}`, c.object)
        const old = c.old === undefined ? undefined : gadget(group, `g-${c.name}`, c.old)
        assert.deepStrictEqual(yield* validateAnswer(crd, object, old), expected[c.name], c.name)
      }
    }))

  it.effect("a passing object: the warnings and the runtime cost it spent", () =>
    Effect.gen(function*() {
      const small = yield* CustomResource.validate(crd, gadget(group, "a", { replicas: 0 }))
      const large = yield* CustomResource.validate(crd, gadget(group, "a", { replicas: 0, tags: tags(100) }))
      assert.deepStrictEqual(small.warnings, [])
      assert.isAbove(large.cost, small.cost * 100)
    }))

  it.effect("a rule over the per-call limit is a RuleCostExceeded naming the rule and its cost", () =>
    Effect.gen(function*() {
      const e = yield* Effect.flip(CustomResource.validate(crd, gadget(group, "a", { replicas: 0, tags: tags(500) })))
      assert.strictEqual(e._tag, "RuleCostExceeded")
      if (e._tag !== "RuleCostExceeded") return
      assert.strictEqual(e.limit, "perCall")
      assert.strictEqual(e.field, "spec")
      assert.match(e.rule, /self\.tags\.all/)
      assert.isAbove(e.cost, 1_000_000)
      assert.include(e.message, "over the per-call limit")
    }))

  it.effect("rules within their limits one by one that run out of the object's budget together", () =>
    Effect.gen(function*() {
      const budget = crdOf(group, "Budget", budgetSchema())
      assert.deepStrictEqual(yield* validateAnswer(budget, { spec: { words: words(5, 10) } }), accepted)
      const e = yield* Effect.flip(CustomResource.validate(budget, { spec: { words: words(20, 1000) } }))
      assert.strictEqual(e._tag, "RuleCostExceeded")
      if (e._tag !== "RuleCostExceeded") return
      // each word costs its six rules 6 x 101 x 1000 (about 0.6M): the 17th finds the budget spent
      assert.strictEqual(e.limit, "budget")
      assert.deepStrictEqual<ReadonlyArray<unknown>>(e.causes, [
        invalid("spec.words[16]", `"string"`, "validation failed due to running out of cost budget, no further validation rules will be run")
      ])
    }))

  it.effect("a CRD the server refuses for its rules' estimated cost is InvalidRules with the server's causes", () =>
    Effect.gen(function*() {
      const unbounded = yield* Effect.flip(CustomResource.validate(crdOf(group, "Unbounded", unboundedSchema()), {}))
      assert.strictEqual(unbounded._tag, "InvalidRules")
      const rule = "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule"
      assert.deepStrictEqual((unbounded as CustomResource.InvalidRules).causes, [
        { field: rule, reason: "FieldValueForbidden", message: `Forbidden: estimated rule cost exceeds budget by factor of more than 100x ${hint}` },
        { field: rule, reason: "FieldValueForbidden", message: "Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema" },
        {
          field: "spec.validation.openAPIV3Schema",
          reason: "FieldValueForbidden",
          message: `Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of more than 100x ${hint}`
        }
      ])
      const factor = yield* Effect.flip(CustomResource.validate(crdOf(group, "Factor", factorSchema()), {}))
      assert.deepStrictEqual((factor as CustomResource.InvalidRules).causes, [{
        field: "spec.validation.openAPIV3Schema.properties[spec].properties[names].items.x-kubernetes-validations[0].rule",
        reason: "FieldValueForbidden",
        message: `Forbidden: estimated rule cost exceeds budget by factor of 5.6x ${hint}`
      }])
    }))

  it.effect("takes a CustomResource or a bare schema as well as a CRD", () =>
    Effect.gen(function*() {
      const Backends = CustomResource.make({
        group,
        version: "v1",
        kind: "Backend",
        scope: "Namespaced",
        spec: Schema.Struct({ replicas: Schema.Number }).annotate({
          "x-kubernetes-validations": [{ rule: "self.replicas <= 10", message: "at most 10 replicas" }]
        })
      })
      const object = { apiVersion: `${group}/v1`, kind: "Backend", metadata: { name: "web" }, spec: { replicas: 12 } }
      const e = yield* Effect.flip(CustomResource.validate(Backends, object))
      assert.strictEqual(e._tag, "RuleViolation")
      assert.strictEqual(e.message, `Backend.${group} "web" is invalid: spec: Invalid value: at most 10 replicas`)
      assert.deepStrictEqual(yield* validateAnswer(gadgetSchema(), gadget(group, "a", { replicas: 7, owner: "me" })), expected["over-max"])
    }))

  it.effect("a schema without rules passes without loading anything", () =>
    Effect.map(CustomResource.validate({ type: "object" }, { spec: {} }), (r) => assert.deepStrictEqual(r, { warnings: [], cost: 0 })))
})

describe("FakeCluster answers as validate does (the shared engine, over real HTTP)", () => {
  it.effect("the gadget cases, the over-budget CRDs and the runtime budget", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* installCrd(crd), accepted)
      for (const c of gadgetCases()) {
        const name = `g-${c.name}`
        const object = gadget(group, name, c.object)
        const { answer, stored } = yield* writeCase(group, "Gadget", "default", name, object, c.old === undefined ? undefined : gadget(group, name, c.old))
        assert.deepStrictEqual(answer, yield* validateAnswer(crd, object, stored), c.name)
        assert.deepStrictEqual(answer, expected[c.name], c.name)
      }
      for (const [kind, schema] of [["Unbounded", unboundedSchema()], ["Factor", factorSchema()]] as const) {
        const refusedCrd = crdOf(group, kind, schema)
        const answer = yield* installCrd(refusedCrd)
        assert.strictEqual(answer._tag, "Refused", kind)
        assert.deepStrictEqual(answer, yield* validateAnswer(refusedCrd, {}), kind)
      }
      const budget = crdOf(group, "Budget", budgetSchema())
      assert.deepStrictEqual(yield* installCrd(budget), accepted)
      for (const n of [5, 20]) {
        const object = { apiVersion: `${group}/v1`, kind: "Budget", metadata: { name: `b-${n}` }, spec: { words: words(n, n === 5 ? 10 : 1000) } }
        const { answer } = yield* writeCase(group, "Budget", "default", `b-${n}`, object)
        assert.deepStrictEqual(answer, yield* validateAnswer(budget, object), `${n} tags`)
      }
    }).pipe(Effect.provide(FakeCluster.layer())))
})

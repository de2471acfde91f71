/**
 * Every fuzzer-filled object of kubernetes/api's serialization fixtures whose kind this package types decodes
 * and encodes back identical (every field, at every depth, in its order) through the exported Schemas, as
 * users call them: `Schema.decodeUnknownSync`, `Schema.encodeSync`, `Schema.is`. The fixtures are the Go
 * module `k8s.io/api`'s: v0.35.4 (the release of this package's spec, and of the control plane in `cluster/`)
 * and v0.37.2, whose newest Pod carries a field of a shape the 1.35 spec does not have
 * (`nodeAllocatableResourceClaimStatuses[0].resources` left out): a newer server's object.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { isDeepStrictEqual } from "node:util"
import * as Resources from "../../../packages/effect-kube/src/resources/index.js"
import { type Mismatch, objectDecoder } from "../../../packages/effect-kube/src/internal/codec/codec.js"
import { compile } from "../../../packages/effect-kube/src/internal/codec/validator.js"
import { type Fixture, fixtures } from "../../util/kubernetesApi.js"

type AnySchema = Schema.Codec<unknown>

interface Typed {
  readonly schema: AnySchema
  /** The Resource, for the kinds the client serves (the others are subresources and meta types). */
  readonly resource?: { readonly apiVersion: string; readonly kind: string; readonly schema: AnySchema } | undefined
}

const typed = new Map<string, Typed>()
for (const value of Object.values(Resources) as Array<unknown>) {
  const r = value as { apiVersion?: unknown; kind?: unknown; plural?: unknown; schema?: AnySchema }
  if (typeof r.apiVersion === "string" && typeof r.kind === "string" && typeof r.plural === "string" && r.schema) {
    typed.set(`${r.apiVersion}/${r.kind}`, { schema: r.schema, resource: r as Typed["resource"] })
  }
}
// kinds with a Schema that no path serves as a resource (subresources, meta types)
for (
  const [gvk, schema] of [
    ["authentication.k8s.io/v1/TokenRequest", Resources.TokenRequestAuthenticationV1],
    ["autoscaling/v1/Scale", Resources.Scale],
    ["policy/v1/Eviction", Resources.Eviction],
    ["v1/APIGroup", Resources.APIGroup],
    ["v1/APIVersions", Resources.APIVersions],
    ["v1/DeleteOptions", Resources.DeleteOptions],
    ["v1/Status", Resources.Status]
  ] as const
) typed.set(gvk, { schema: schema as AnySchema })

const typedOf = (fixture: Fixture): Typed | undefined =>
  typed.get(`${fixture.object["apiVersion"]}/${fixture.object["kind"]}`)

const spec = { method: "GET", path: "/fixture", query: {} } as const

const roundTrip = (fixture: Fixture, entry: Typed): void => {
  const name = `${fixture.release}/${fixture.file}`
  const original = JSON.stringify(fixture.object)
  const input = JSON.parse(original)
  const decoded = Schema.decodeUnknownSync(entry.schema)(input)
  const encoded = Schema.encodeSync(entry.schema)(decoded)
  // identical: every field, and in the order it came (what a diff of the written manifest shows)
  assert.strictEqual(JSON.stringify(encoded), original, name)
  assert.isTrue(isDeepStrictEqual(encoded, JSON.parse(original)), name)
  assert.isTrue(Schema.is(entry.schema)(input), `${name}: Schema.is`)
  Schema.asserts(entry.schema, input)
  // the client's own read path keeps the same object, and reports a mismatch exactly when the object does not
  // fit the spec's types (a newer server's object)
  if (entry.resource !== undefined) {
    const mismatches: Array<Mismatch> = []
    const clientInput = JSON.parse(original)
    const read = objectDecoder(entry.resource, spec, (m) => mismatches.push(m))(clientInput)
    assert.isTrue(Result.isSuccess(read), `${name}: the client path`)
    assert.strictEqual(Result.getOrThrow(read), clientInput, `${name}: the client path keeps the object it read`)
    const fits = compile(entry.resource.schema.ast)!(clientInput)
    assert.strictEqual(mismatches.length, fits ? 0 : 1, `${name}: a mismatch is reported iff the object does not fit`)
  }
}

describe("kubernetes/api fixtures through the exported Schemas", () => {
  for (const [version, atLeast] of [["v0.35.4", 94], ["v0.37.2", 98]] as const) {
    it(`k8s.io/api@${version}: every object of a kind with a Schema decodes and encodes back identical`, () => {
      const all = fixtures(version)
      const covered = new Map<string, number>()
      for (const fixture of all) {
        const entry = typedOf(fixture)
        if (entry === undefined) continue
        roundTrip(fixture, entry)
        covered.set(fixture.release, (covered.get(fixture.release) ?? 0) + 1)
      }
      // the HEAD folder holds one object per kind of that release: every kind the 1.35 spec serves is there
      assert.isAtLeast(covered.get("HEAD") ?? 0, atLeast, "objects of HEAD with a Schema")
      assert.isAtLeast(covered.size, 3, "release folders")
    }, 120_000)
  }

  it("a newer server's Pod (k8s.io/api@v0.37.2) decodes through Pods.schema as the client path delivers it", () => {
    const pod = fixtures("v0.37.2").find((f) => f.release === "HEAD" && f.file === "core.v1.Pod.json")!.object
    const status = pod["status"] as { nodeAllocatableResourceClaimStatuses?: ReadonlyArray<object> }
    // what makes it a newer server's: a field the 1.35 spec calls required is left out
    assert.isFalse(compile(Resources.Pod.ast)!(pod))
    assert.isFalse("resources" in status.nodeAllocatableResourceClaimStatuses![0]!)
    assert.strictEqual(Schema.decodeUnknownSync(Resources.Pods.schema)(pod), pod)
    const mismatches: Array<Mismatch> = []
    assert.strictEqual(Result.getOrThrow(objectDecoder(Resources.Pods, spec, (m) => mismatches.push(m))(pod)), pod)
    assert.include(mismatches[0]!.error.message, ".status.nodeAllocatableResourceClaimStatuses[0].resources is missing")
    // the strict call says what does not fit
    const strict = Schema.decodeUnknownResult(Resources.Pods.schema, { onExcessProperty: "error" })(pod)
    assert.isTrue(Result.isFailure(strict))
  })
})

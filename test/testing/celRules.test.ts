/**
 * CRD validation rules (`x-kubernetes-validations`) enforced by FakeCluster on create and update, with the
 * API server's messages (a false rule names the value as Go prints it, an object's left out; an error of
 * evaluation names the schema's type, as kube-apiserver does, test/e2e/cel.test.ts): `self`, transition rules with `oldSelf`, `messageExpression`, `reason`, `fieldPath`,
 * ratcheting of unchanged values, rules that do not parse refusing the CRD, and the Kubernetes CEL library
 * functions rules use (quantity, url, ip, cidr, regex, lists, format, sets, optionals).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import { ApiError, CustomResource, CustomResourceDefinitions, Kube, Warnings } from "../../packages/effect-kube/src/index.js"
import { FakeCluster } from "@effect-kube/testing"
import { failureOf } from "../util/failure.js"

const Limits = CustomResource.make({
  group: "example.com",
  version: "v1",
  kind: "Limit",
  scope: "Namespaced",
  spec: Schema.Struct({
    replicas: Schema.Number.check(Schema.isInt()),
    maxReplicas: Schema.Number.check(Schema.isInt()),
    storageClass: Schema.optional(Schema.String.annotate({
      "x-kubernetes-validations": [{ rule: "self == oldSelf", message: "storageClass is immutable" }]
    })),
    memory: Schema.optional(Schema.String.annotate({
      "x-kubernetes-validations": [{
        rule: "isQuantity(self) && quantity(self).isLessThan(quantity('4Gi'))",
        messageExpression: "'memory ' + self + ' must be less than 4Gi'"
      }]
    })),
    owner: Schema.optional(Schema.String),
    ports: Schema.optional(
      Schema.Array(Schema.Struct({
        name: Schema.String,
        port: Schema.Number.check(Schema.isInt()).annotate({
          "x-kubernetes-validations": [{ rule: "self == oldSelf", message: "a port's number is immutable" }]
        })
      })).annotate({ "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"] })
    )
  }).annotate({
    "x-kubernetes-validations": [
      { rule: "self.replicas <= self.maxReplicas", message: "replicas must not exceed maxReplicas" },
      {
        rule: "!has(self.owner) || self.owner.matches('^[a-z]+@example\\\\.com$')",
        reason: "FieldValueForbidden",
        fieldPath: ".owner",
        message: "owner must be an example.com address"
      }
    ]
  }),
  status: Schema.Struct({ phase: Schema.optional(Schema.String) }),
  validations: [{ rule: "self.metadata.name.startsWith('lim-')", message: "names start with lim-" }]
})

const limits = Kube.api(Limits, { namespace: "default" })
const install = Effect.flatMap(Limits.crd(), (crd) => Kube.api(CustomResourceDefinitions).create(crd))
const ok = { metadata: { name: "lim-a" }, spec: { replicas: 1, maxReplicas: 3 } }

const statusOf = <A, R>(effect: Effect.Effect<A, unknown, R>) =>
  Effect.map(failureOf(effect), (e) => {
    assert.instanceOf(e, ApiError)
    return e as ApiError
  })

const fake = Layer.merge(FakeCluster.layer(), Warnings.layerCollect)

describe("CRD validation rules on FakeCluster", () => {
  it.effect("a false rule refuses the create with the API server's Status", () =>
    Effect.gen(function*() {
      yield* install
      yield* limits.create(ok)
      const error = yield* statusOf(limits.create({ metadata: { name: "lim-b" }, spec: { replicas: 5, maxReplicas: 3 } }))
      assert.strictEqual(error.code, 422)
      assert.strictEqual(error.reason, "Invalid")
      assert.strictEqual(
        error.statusMessage,
        `Limit.example.com "lim-b" is invalid: spec: Invalid value: replicas must not exceed maxReplicas`
      )
      assert.deepStrictEqual(error.status?.details?.causes, [{
        reason: "FieldValueInvalid",
        field: "spec",
        message: `Invalid value: replicas must not exceed maxReplicas`
      }])
      // the root rule sees metadata.name; its errors have no field, as the server's `<nil>`
      const root = yield* statusOf(limits.create({ metadata: { name: "other" }, spec: { replicas: 1, maxReplicas: 1 } }))
      assert.strictEqual(root.statusMessage, `Limit.example.com "other" is invalid: <nil>: Invalid value: names start with lim-`)
      // several errors are listed in brackets
      const both = yield* statusOf(limits.create({ metadata: { name: "x" }, spec: { replicas: 2, maxReplicas: 1 } }))
      assert.strictEqual(
        both.statusMessage,
        `Limit.example.com "x" is invalid: [<nil>: Invalid value: names start with lim-, spec: Invalid value: replicas must not exceed maxReplicas]`
      )
      // a dry run is checked too
      const dry = yield* statusOf(limits.create({ metadata: { name: "lim-c" }, spec: { replicas: 9, maxReplicas: 3 } }, { dryRun: true }))
      assert.strictEqual(dry.code, 422)
    }).pipe(Effect.provide(fake)))

  it.effect("reason, fieldPath and messageExpression shape the error", () =>
    Effect.gen(function*() {
      yield* install
      const owner = yield* statusOf(limits.create({ ...ok, spec: { ...ok.spec, owner: "Bob" } }))
      assert.deepStrictEqual(owner.status?.details?.causes, [{
        reason: "FieldValueForbidden",
        field: "spec.owner",
        message: "Forbidden: owner must be an example.com address"
      }])
      yield* limits.create({ ...ok, metadata: { name: "lim-o" }, spec: { ...ok.spec, owner: "bob@example.com" } })
      const memory = yield* statusOf(limits.create({ ...ok, spec: { ...ok.spec, memory: "8Gi" } }))
      assert.strictEqual(
        memory.statusMessage,
        `Limit.example.com "lim-a" is invalid: spec.memory: Invalid value: "8Gi": memory 8Gi must be less than 4Gi`
      )
      yield* limits.create({ ...ok, spec: { ...ok.spec, memory: "512Mi" } })
    }).pipe(Effect.provide(fake)))

  it.effect("transition rules compare with the stored object on update, and correlate map-list items by key", () =>
    Effect.gen(function*() {
      yield* install
      yield* limits.create({ ...ok, spec: { ...ok.spec, storageClass: "fast", ports: [{ name: "http", port: 80 }] } })
      const changed = yield* statusOf(limits.patch("lim-a", { _tag: "Merge", body: { spec: { storageClass: "slow" } } }))
      assert.strictEqual(
        changed.statusMessage,
        `Limit.example.com "lim-a" is invalid: spec.storageClass: Invalid value: "slow": storageClass is immutable`
      )
      const port = yield* statusOf(limits.patch("lim-a", { _tag: "Merge", body: { spec: { ports: [{ name: "http", port: 8080 }] } } }))
      assert.strictEqual(
        port.statusMessage,
        `Limit.example.com "lim-a" is invalid: spec.ports[0].port: Invalid value: 8080: a port's number is immutable`
      )
      // a new item has no old value: its transition rules do not run
      yield* limits.patch("lim-a", { _tag: "Merge", body: { spec: { ports: [{ name: "http", port: 80 }, { name: "https", port: 443 }] } } })
      yield* limits.patch("lim-a", { _tag: "Merge", body: { spec: { replicas: 2 } } })
    }).pipe(Effect.provide(fake)))

  it.effect("an unchanged invalid value is ratcheted: the update goes through with a warning", () =>
    Effect.gen(function*() {
      yield* install
      const cluster = yield* FakeCluster.FakeCluster
      yield* limits.create(ok)
      // the fake's own change bypasses validation, as an object stored before the rule was added would
      cluster.update({ apiVersion: "example.com/v1", kind: "Limit", name: "lim-a", namespace: "default" }, { spec: { replicas: 5 } })
      const updated = yield* limits.patch("lim-a", { _tag: "Merge", body: { metadata: { labels: { a: "b" } } } })
      assert.deepStrictEqual(updated.metadata?.labels, { a: "b" })
      const collected = yield* Warnings.Collected
      const texts = (yield* collected.warnings).map((w) => (w as { text?: string }).text)
      assert.include(texts, `spec: Invalid value: replicas must not exceed maxReplicas`)
      // changing the value makes it an error again
      const error = yield* statusOf(limits.patch("lim-a", { _tag: "Merge", body: { spec: { replicas: 6 } } }))
      assert.strictEqual(error.code, 422)
    }).pipe(Effect.provide(fake)))

  it.effect("the status subresource is checked with the whole object", () =>
    Effect.gen(function*() {
      const StatusRules = CustomResource.make({
        group: "example.com",
        version: "v1",
        kind: "Job2",
        scope: "Namespaced",
        spec: Schema.Struct({}),
        status: Schema.Struct({ phase: Schema.optional(Schema.Literals(["A", "B"])) }).annotate({
          "x-kubernetes-validations": [{ rule: "!has(oldSelf.phase) || oldSelf.phase != 'B' || self.phase == 'B'", message: "B is final" }]
        })
      })
      yield* Kube.api(CustomResourceDefinitions).create(yield* StatusRules.crd())
      const jobs = Kube.api(StatusRules, { namespace: "default" })
      yield* jobs.create({ metadata: { name: "j" }, spec: {} })
      yield* jobs.patchStatus("j", { _tag: "Merge", body: { status: { phase: "B" } } })
      const error = yield* statusOf(jobs.patchStatus("j", { _tag: "Merge", body: { status: { phase: "A" } } }))
      assert.strictEqual(error.statusMessage, `Job2.example.com "j" is invalid: status: Invalid value: B is final`)
    }).pipe(Effect.provide(fake)))

  it.effect("a CRD whose rule does not parse is refused on the rule's field", () =>
    Effect.gen(function*() {
      const crds = Kube.api(CustomResourceDefinitions)
      const crd = yield* Limits.crd()
      const broken = {
        ...crd,
        spec: {
          ...crd.spec,
          versions: crd.spec.versions.map((v) => ({
            ...v,
            schema: {
              openAPIV3Schema: {
                ...v.schema!.openAPIV3Schema!,
                "x-kubernetes-validations": [{ rule: "self.metadata.name ==" }]
              }
            }
          }))
        }
      }
      const error = yield* statusOf(crds.create(broken))
      assert.strictEqual(error.code, 422)
      const cause = error.status?.details?.causes?.[0]
      assert.strictEqual(cause?.field, "spec.validation.openAPIV3Schema.x-kubernetes-validations[0].rule")
      assert.match(cause?.message ?? "", /^Invalid value: "apiextensions\.ValidationRule\{Rule:\\"self\.metadata\.name ==\\".*compilation failed: ERROR: /)
    }).pipe(Effect.provide(fake)))

  it.effect("an evaluation error reads as the server's, and a wrong-typed operand as a missing overload", () =>
    Effect.gen(function*() {
      const Errs = CustomResource.make({
        group: "example.com",
        version: "v1",
        kind: "Err",
        scope: "Cluster",
        spec: Schema.Struct({
          labels: Schema.Record(Schema.String, Schema.String).annotate({
            "x-kubernetes-validations": [{ rule: "self.team != ''" }]
          }),
          value: Schema.Union([Schema.Number, Schema.String]).annotate({
            "x-kubernetes-validations": [{ rule: "self > 0" }]
          })
        })
      })
      yield* Kube.api(CustomResourceDefinitions).create(yield* Errs.crd())
      const errs = Kube.api(Errs)
      const missing = yield* statusOf(errs.create({ metadata: { name: "e" }, spec: { labels: {}, value: 1 } }))
      assert.strictEqual(
        missing.statusMessage,
        `Err.example.com "e" is invalid: spec.labels: Invalid value: "object": no such key: team evaluating rule: self.team != ''`
      )
      const overload = yield* statusOf(errs.create({ metadata: { name: "e" }, spec: { labels: { team: "a" }, value: "x" } }))
      assert.strictEqual(
        overload.statusMessage,
        `Err.example.com "e" is invalid: spec.value: Invalid value: "": 'no such overload': call arguments did not match a supported operator, function or macro signature for rule: self > 0`
      )
    }).pipe(Effect.provide(fake)))
})

/** One rule on a string field, checked against a value: true when the create goes through. */
const libraryCase = (rule: string, value: unknown, type: Schema.Codec<any, any> = Schema.Unknown) =>
  Effect.gen(function*() {
    const Probe = CustomResource.make({
      group: "probe.example.com",
      version: "v1",
      kind: "Probe",
      scope: "Cluster",
      spec: Schema.Struct({ v: type.annotate({ "x-kubernetes-validations": [{ rule }] }) })
    })
    const crds = Kube.api(CustomResourceDefinitions)
    yield* crds.apply(yield* Probe.crd(), { fieldManager: "t", force: true })
    const probes = Kube.api(Probe)
    yield* probes.delete("p").pipe(Effect.ignore)
    return yield* probes.create({ metadata: { name: "p" }, spec: { v: value } }).pipe(
      Effect.as(true),
      Effect.catchIf((e) => e instanceof ApiError && e.code === 422, () => Effect.succeed(false))
    )
  })

describe("the Kubernetes CEL library", () => {
  const cases: ReadonlyArray<readonly [string, unknown, Schema.Codec<any, any>, boolean]> = [
    ["self.isSorted()", ["a", "b", "c"], Schema.Array(Schema.String), true],
    ["self.isSorted()", [3, 1], Schema.Array(Schema.Number.check(Schema.isInt())), false],
    ["self.sum() == 6 && self.min() == 1 && self.max() == 3", [1, 2, 3], Schema.Array(Schema.Number.check(Schema.isInt())), true],
    ["self.indexOf('b') == 1 && self.lastIndexOf('a') == 2", ["a", "b", "a"], Schema.Array(Schema.String), true],
    ["self.find('[0-9]+') == '123' && self.findAll('[a-z]') == ['a', 'b']", "a123b", Schema.String, true],
    ["self.matches('(?i)^abc$') && matches(self, '^[A-Z]+$')", "ABC", Schema.String, true],
    ["url(self).getHost() == 'example.com:8080' && url(self).getPort() == '8080' && url(self).getScheme() == 'https'", "https://example.com:8080/x?y=1", Schema.String, true],
    ["isURL(self)", "not a url", Schema.String, false],
    ["quantity(self).isGreaterThan(quantity('1')) && quantity(self).add(1).compareTo(quantity('2500m')) == 0", "1500m", Schema.String, true],
    ["quantity(self) == quantity('1')", "1000m", Schema.String, true],
    ["isIP(self) && ip(self).family() == 6 && ip.isCanonical('2001:db8::1')", "2001:db8::1", Schema.String, true],
    ["isIP(self)", "1.2.3.04", Schema.String, false],
    ["cidr(self).containsIP('10.1.2.3') && cidr(self).prefixLength() == 8 && !cidr(self).containsCIDR('11.0.0.0/16')", "10.0.0.0/8", Schema.String, true],
    ["!format.dns1123Label().validate(self).hasValue()", "my-name", Schema.String, true],
    ["!format.dns1123Label().validate(self).hasValue()", "My_Name", Schema.String, false],
    ["format.named('dns1035Label').value().validate(self).value()[0].startsWith('a DNS-1035 label')", "1abc", Schema.String, true],
    ["sets.contains(self, ['a']) && sets.intersects(self, ['z', 'b']) && !sets.equivalent(self, ['a'])", ["a", "b"], Schema.Array(Schema.String), true],
    ["semver(self).isGreaterThan(semver('1.2.3')) && semver(self).major() == 1", "1.10.0", Schema.String, true],
    ["'%s has %d items'.format([self, 2]) == 'x has 2 items' && self.upperAscii() == 'X' && 'a,b'.split(',').size() == 2", "x", Schema.String, true],
    ["optional.of(self).orValue('z') == self && optional.none().orValue('z') == 'z'", "x", Schema.String, true],
    ["timestamp(self) > timestamp('2020-01-01T00:00:00Z')", "2024-05-01T00:00:00Z", Schema.String, true],
    ["self > timestamp('2020-01-01T00:00:00Z')", "2024-05-01T00:00:00Z", Schema.String.annotate({ format: "date-time" }), true],
    ["self == 1.0 && self > 0", 1, Schema.Number.check(Schema.isInt()), true]
  ]
  for (const [rule, value, type, expected] of cases) {
    it.effect(`${rule} on ${JSON.stringify(value)} is ${expected}`, () =>
      Effect.map(libraryCase(rule, value, type), (result) => assert.strictEqual(result, expected)).pipe(
        Effect.provide(FakeCluster.layer())
      ))
  }
})

/**
 * ValidatingAdmissionPolicy and ValidatingAdmissionPolicyBinding enforced by FakeCluster on the kinds they
 * match, with the API server's answers: Deny (422 Invalid, or the validation's reason), Warn (a Warning
 * header), Audit (an audit annotation), params by name and selector with parameterNotFoundAction,
 * matchConstraints with operations, selectors and exclusions, matchConditions, variables, messageExpression,
 * failurePolicy; and Gateway API's published policy against its own CRDs.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import {
  ApiError,
  ConfigMaps,
  CustomResourceDefinitions,
  Deployments,
  Kube,
  Manifests,
  Namespaces,
  ValidatingAdmissionPolicies,
  ValidatingAdmissionPolicyBindings,
  Warnings
} from "../../packages/effect-kube/src/index.js"
import { FakeCluster } from "@effect-kube/testing"
import { failureOf } from "../util/failure.js"

const deployment = (name: string, replicas: number, labels: Record<string, string> = {}) => ({
  metadata: { name, labels },
  spec: {
    replicas,
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: "main", image: "nginx" }] } }
  }
})

const deploymentsRule = {
  apiGroups: ["apps"],
  apiVersions: ["v1"],
  operations: ["CREATE", "UPDATE"],
  resources: ["deployments"]
}

const policy = (name: string, spec: Record<string, unknown>) => ({
  metadata: { name },
  spec: { matchConstraints: { resourceRules: [deploymentsRule] }, ...spec }
})

const binding = (name: string, policyName: string, spec: Record<string, unknown> = {}) => ({
  metadata: { name },
  spec: { policyName, validationActions: ["Deny"], ...spec }
})

const install = (p: ReturnType<typeof policy>, b: ReturnType<typeof binding>) =>
  Effect.gen(function*() {
    yield* Kube.api(ValidatingAdmissionPolicies).create(p as never)
    yield* Kube.api(ValidatingAdmissionPolicyBindings).create(b as never)
  })

const deployments = Kube.api(Deployments, { namespace: "default" })

const apiError = <A, R>(effect: Effect.Effect<A, unknown, R>) =>
  Effect.map(failureOf(effect), (e) => {
    assert.instanceOf(e, ApiError)
    return e as ApiError
  })

const fake = Layer.merge(FakeCluster.layer(), Warnings.layerCollect)

const warningTexts = Effect.gen(function*() {
  const collected = yield* Warnings.Collected
  return (yield* collected.warnings).map((w) => (w as { text?: string }).text ?? "")
})

describe("ValidatingAdmissionPolicy on FakeCluster", () => {
  it.effect("Deny refuses a matching write with the API server's Status; other kinds are not matched", () =>
    Effect.gen(function*() {
      yield* install(
        policy("max-replicas", { validations: [{ expression: "object.spec.replicas <= 5", message: "at most 5 replicas" }] }),
        binding("max-replicas-binding", "max-replicas")
      )
      yield* deployments.create(deployment("small", 2))
      const error = yield* apiError(deployments.create(deployment("big", 6)))
      assert.strictEqual(error.code, 422)
      assert.strictEqual(error.reason, "Invalid")
      const message = "ValidatingAdmissionPolicy 'max-replicas' with binding 'max-replicas-binding' denied request: at most 5 replicas"
      assert.strictEqual(error.statusMessage, `deployments.apps "big" is forbidden: ${message}`)
      assert.deepStrictEqual(error.status?.details, { name: "big", group: "apps", kind: "deployments", causes: [{ message }] })
      // on update too, dry runs included
      const update = yield* apiError(deployments.patch("small", { _tag: "Merge", body: { spec: { replicas: 9 } } }, { dryRun: true }))
      assert.strictEqual(update.code, 422)
      yield* Kube.api(ConfigMaps, { namespace: "default" }).create({ metadata: { name: "any" }, data: { replicas: "99" } })
    }).pipe(Effect.provide(fake)))

  it.effect("a validation's reason, messageExpression and a missing message", () =>
    Effect.gen(function*() {
      yield* install(
        policy("named", {
          validations: [
            { expression: "object.metadata.name.startsWith('web-')", reason: "Forbidden", messageExpression: "'name ' + object.metadata.name + ' must start with web-'" },
            { expression: "object.spec.replicas != 3" }
          ]
        }),
        binding("named", "named")
      )
      const forbidden = yield* apiError(deployments.create(deployment("api", 1)))
      assert.strictEqual(forbidden.code, 403)
      assert.strictEqual(forbidden.reason, "Forbidden")
      assert.include(forbidden.statusMessage, "denied request: name api must start with web-")
      const plain = yield* apiError(deployments.create(deployment("web-a", 3)))
      assert.include(plain.statusMessage, "denied request: failed expression: object.spec.replicas != 3")
    }).pipe(Effect.provide(fake)))

  it.effect("Warn answers a warning and Audit records an annotation, and neither refuses", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      yield* install(
        policy("soft", {
          validations: [{ expression: "object.spec.replicas <= 5", message: "more than 5 replicas" }],
          auditAnnotations: [{ key: "replicas", valueExpression: "'replicas: ' + string(object.spec.replicas)" }]
        }),
        binding("soft-binding", "soft", { validationActions: ["Warn", "Audit"] })
      )
      yield* deployments.create(deployment("big", 8))
      assert.include(
        yield* warningTexts,
        "Validation failed for ValidatingAdmissionPolicy 'soft' with binding 'soft-binding': more than 5 replicas"
      )
      const audits = cluster.auditAnnotations()
      assert.deepStrictEqual(audits.map((a) => a.key), ["soft/replicas", "validation.policy.admission.k8s.io/validation_failure"])
      assert.strictEqual(audits[0]!.value, "replicas: 8")
      assert.deepStrictEqual(JSON.parse(audits[1]!.value), [{
        message: "more than 5 replicas",
        policy: "soft",
        binding: "soft-binding",
        expressionIndex: 0,
        validationActions: ["Warn", "Audit"]
      }])
      assert.strictEqual(audits[1]!.name, "big")
      assert.strictEqual(audits[1]!.operation, "CREATE")
    }).pipe(Effect.provide(fake)))

  it.effect("params: by name in the request's namespace, by selector, and parameterNotFoundAction", () =>
    Effect.gen(function*() {
      const configMaps = Kube.api(ConfigMaps, { namespace: "default" })
      yield* install(
        policy("limits", {
          paramKind: { apiVersion: "v1", kind: "ConfigMap" },
          validations: [{
            expression: "object.spec.replicas <= int(params.data.maxReplicas)",
            messageExpression: "'replicas must be at most ' + params.data.maxReplicas"
          }]
        }),
        binding("limits", "limits", { paramRef: { name: "limits", parameterNotFoundAction: "Deny" } })
      )
      const missing = yield* apiError(deployments.create(deployment("a", 1)))
      assert.include(
        missing.statusMessage,
        "ValidatingAdmissionPolicy 'limits' with binding 'limits' denied request: failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction"
      )
      yield* configMaps.create({ metadata: { name: "limits" }, data: { maxReplicas: "4" } })
      yield* deployments.create(deployment("a", 4))
      const over = yield* apiError(deployments.create(deployment("b", 5)))
      assert.include(over.statusMessage, "denied request: replicas must be at most 4")
      // a selector: every selected param must pass
      yield* Kube.api(ValidatingAdmissionPolicyBindings).patch("limits", {
        _tag: "Merge",
        body: { spec: { paramRef: { name: null, selector: { matchLabels: { kind: "limit" } }, parameterNotFoundAction: "Allow" } } }
      })
      yield* deployments.create(deployment("c", 50)) // none selected: Allow
      yield* configMaps.create({ metadata: { name: "l1", labels: { kind: "limit" } }, data: { maxReplicas: "10" } })
      yield* configMaps.create({ metadata: { name: "l2", labels: { kind: "limit" } }, data: { maxReplicas: "3" } })
      const selected = yield* apiError(deployments.create(deployment("d", 5)))
      assert.include(selected.statusMessage, "denied request: replicas must be at most 3")
    }).pipe(Effect.provide(fake)))

  it.effect("matchConstraints: operations, namespace and object selectors, exclusions; matchConditions and variables", () =>
    Effect.gen(function*() {
      yield* Kube.api(Namespaces).create({ metadata: { name: "prod", labels: { env: "prod" } } })
      yield* install(
        {
          metadata: { name: "prod-only" },
          spec: {
            matchConstraints: {
              resourceRules: [{ ...deploymentsRule, operations: ["UPDATE"] }],
              namespaceSelector: { matchExpressions: [{ key: "env", operator: "In", values: ["prod"] }] },
              objectSelector: { matchLabels: { tier: "web" } }
            },
            matchConditions: [{ name: "not-system", expression: "!object.metadata.name.startsWith('system-')" }],
            variables: [{ name: "grew", expression: "object.spec.replicas > oldObject.spec.replicas" }],
            validations: [{ expression: "!variables.grew", message: "replicas may not grow in prod" }]
          }
        } as never,
        binding("prod-only", "prod-only")
      )
      const prod = Kube.api(Deployments, { namespace: "prod" })
      const grow = { _tag: "Merge" as const, body: { spec: { replicas: 3 } } }
      yield* prod.create(deployment("web", 1, { tier: "web" })) // CREATE is not matched
      assert.include((yield* apiError(prod.patch("web", grow))).statusMessage, "replicas may not grow in prod")
      yield* prod.create(deployment("db", 1, { tier: "db" }))
      yield* prod.patch("db", grow) // the object selector does not select it
      yield* prod.create(deployment("system-web", 1, { tier: "web" }))
      yield* prod.patch("system-web", grow) // the match condition excludes it
      yield* deployments.create(deployment("web", 1, { tier: "web" }))
      yield* deployments.patch("web", grow) // the default namespace is not prod
    }).pipe(Effect.provide(fake)))

  it.effect("failurePolicy: an expression that fails to evaluate denies (Fail) or is ignored (Ignore)", () =>
    Effect.gen(function*() {
      yield* install(
        policy("broken", { validations: [{ expression: "object.spec.missing > 1" }] }),
        binding("broken", "broken")
      )
      const error = yield* apiError(deployments.create(deployment("a", 1)))
      assert.include(
        error.statusMessage,
        "ValidatingAdmissionPolicy 'broken' with binding 'broken' denied request: expression 'object.spec.missing > 1' resulted in error: no such key: missing"
      )
      yield* Kube.api(ValidatingAdmissionPolicies).patch("broken", { _tag: "Merge", body: { spec: { failurePolicy: "Ignore" } } })
      yield* deployments.create(deployment("a", 1))
    }).pipe(Effect.provide(fake)))
})

describe("Gateway API's published ValidatingAdmissionPolicy (safe-upgrades)", () => {
  const dir = Path.resolve(import.meta.dirname, "../fixtures/crds/gateway-api/crds")
  const read = (file: string) => Effect.runSync(Manifests.parse(Fs.readFileSync(Path.join(dir, file)))) as Array<Record<string, any>>

  it.effect("refuses CRDs of an old bundle version and experimental CRDs over standard ones", () =>
    Effect.gen(function*() {
      const [vap, vapBinding] = read("gateway.networking.k8s.io_vap_safeupgrades.yaml")
      yield* Kube.api(ValidatingAdmissionPolicies).create(vap as never)
      yield* Kube.api(ValidatingAdmissionPolicyBindings).create(vapBinding as never)
      const crds = Kube.api(CustomResourceDefinitions)
      const [crd] = read("gateway.networking.k8s.io_referencegrants.yaml")
      // the repository's own CRDs carry bundle version v0.0.0-dev
      const old = yield* apiError(crds.create(crd as never))
      assert.strictEqual(old.code, 422)
      assert.include(old.statusMessage, "customresourcedefinitions.apiextensions.k8s.io \"referencegrants.gateway.networking.k8s.io\" is forbidden: ValidatingAdmissionPolicy 'safe-upgrades.gateway.networking.k8s.io' with binding 'safe-upgrades.gateway.networking.k8s.io' denied request: Installing CRDs with version before v1.5.0 is prohibited by default.")
      const released = { ...crd, metadata: { ...crd!.metadata, annotations: { ...crd!.metadata.annotations, "gateway.networking.k8s.io/bundle-version": "v1.5.0" } } }
      yield* crds.create(released as never)
      const experimental = yield* apiError(crds.patch("referencegrants.gateway.networking.k8s.io", {
        _tag: "Merge",
        body: { metadata: { annotations: { "gateway.networking.k8s.io/channel": "experimental" } } }
      }))
      assert.include(experimental.statusMessage, "Installing experimental CRDs on top of standard channel CRDs is prohibited by default.")
      // CRDs of other groups are not its business
      yield* crds.create({
        apiVersion: "apiextensions.k8s.io/v1",
        kind: "CustomResourceDefinition",
        metadata: { name: "things.example.com" },
        spec: { group: "example.com", scope: "Namespaced", names: { kind: "Thing", plural: "things" }, versions: [{ name: "v1", served: true, storage: true, schema: { openAPIV3Schema: { type: "object" } } }] }
      })
    }).pipe(Effect.provide(fake)))
})

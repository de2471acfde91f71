/**
 * CRDs with CEL validation rules and the objects written against them, shared by the client-side test
 * (`CustomResource.validate` and FakeCluster), the e2e test (kube-apiserver) and the conformance scenarios:
 * one set of cases, so the three answer the same questions. Built by functions (not at module top level),
 * as the big lists are.
 */
import { Effect, Schema } from "effect"
import {
  ApiError,
  CustomResource,
  type CustomResourceDefinition,
  CustomResourceDefinitions,
  type JSONSchemaProps,
  Kube,
  Resource
} from "../../packages/effect-kube/src/index.js"

/** A CRD of one version (`v1`, namespaced) with this `openAPIV3Schema`. */
export const crdOf = (group: string, kind: string, schema: JSONSchemaProps): CustomResourceDefinition => {
  const plural = `${kind.toLowerCase()}s`
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `${plural}.${group}` },
    spec: {
      group,
      scope: "Namespaced",
      names: { kind, listKind: `${kind}List`, plural, singular: kind.toLowerCase() },
      versions: [{ name: "v1", served: true, storage: true, schema: { openAPIV3Schema: schema } }]
    }
  }
}

/** Rules of every kind the server has: self, messageExpression, reason, fieldPath, oldSelf, optionalOldSelf. */
export const gadgetSchema = (): JSONSchemaProps => ({
  type: "object",
  properties: {
    spec: {
      type: "object",
      properties: {
        replicas: { type: "integer" },
        max: { type: "integer", default: 5 },
        name: {
          type: "string",
          maxLength: 64,
          "x-kubernetes-validations": [{ rule: "size(self) < 10", messageExpression: "'name ' + self + ' is too long'" }]
        },
        mode: { type: "string", maxLength: 16 },
        owner: { type: "string", maxLength: 64 },
        class: {
          type: "string",
          maxLength: 16,
          "x-kubernetes-validations": [{ rule: "self == oldSelf", message: "class is immutable" }]
        },
        counter: {
          type: "integer",
          "x-kubernetes-validations": [{
            rule: "!oldSelf.hasValue() || self >= oldSelf.value()",
            optionalOldSelf: true,
            message: "counter only grows"
          }]
        },
        tags: { type: "array", maxItems: 500, items: { type: "string", maxLength: 10 } }
      },
      "x-kubernetes-validations": [
        { rule: "self.replicas <= self.max", message: "replicas over max" },
        { rule: "!has(self.mode) || self.mode != 'bad'", reason: "FieldValueForbidden", fieldPath: ".mode", message: "mode bad is forbidden" },
        { rule: "has(self.owner) || self.replicas == 0", reason: "FieldValueRequired", fieldPath: ".owner", message: "an owner is required" },
        // quadratic on a list of at most 500: under the estimated limit (3.75M < 10M), over the per-call
        // limit (1M) at runtime once the list is long
        { rule: "!has(self.tags) || self.tags.all(x, self.tags.all(y, x == y || x != y))", message: "tags" }
      ]
    }
  }
})

/** A rule the server refuses at CRD create: a regex on every item of an unbounded list of unbounded strings. */
export const unboundedSchema = (): JSONSchemaProps => ({
  type: "object",
  properties: {
    spec: {
      type: "object",
      properties: {
        names: { type: "array", items: { type: "string" } }
      },
      "x-kubernetes-validations": [{ rule: "self.names.all(n, n.matches('^[a-z]+$'))" }]
    }
  }
})

/**
 * A rule on each item of an unbounded list, bounded strings: each run is cheap (79), but it may run 1,048,576
 * times, 82.8M estimated, over 10M: the server names the factor (8.3x).
 */
export const factorSchema = (): JSONSchemaProps => ({
  type: "object",
  properties: {
    spec: {
      type: "object",
      properties: {
        names: {
          type: "array",
          items: { type: "string", maxLength: 63, "x-kubernetes-validations": [{ rule: "self.matches('^[a-z]+$')" }] }
        }
      }
    }
  }
})

/**
 * A pattern of 4,000 characters that matches lowercase words: a regex's cost grows with its length, and a
 * character class repeating its letters compiles to one class (cheap for Go's regexp and for RE2 alike).
 */
const longPattern = (): string => `^[a-z${"a".repeat(3992)}]*$`

/**
 * Bounded rules that pass the estimate one by one but run out of the object's runtime budget together: six
 * regexes of 4,000 characters on each of at most 20 words of at most 1,000 characters (each rule estimated
 * 401 x 1000 x 20 = 8.0M < 10M, 48M together < 100M); on 20 words of 1,000 characters each match costs
 * 101 x 1000 (under the per-call limit), 2.0M a rule, 12.1M together: over the 10M budget.
 */
export const budgetSchema = (): JSONSchemaProps => ({
  type: "object",
  properties: {
    spec: {
      type: "object",
      properties: {
        words: {
          type: "array",
          maxItems: 20,
          items: {
            type: "string",
            maxLength: 1000,
            "x-kubernetes-validations": Array.from({ length: 6 }, (_, i) => ({ rule: `self.matches('${longPattern()}')`, message: `rule ${i}` }))
          }
        }
      }
    }
  }
})

/** `n` words of `length` lowercase letters. */
export const words = (n: number, length: number): Array<string> => Array.from({ length: n }, () => "a".repeat(length))

/** `n` distinct tags of at most 10 characters. */
export const tags = (n: number): Array<string> => Array.from({ length: n }, (_, i) => `t${i}`)

/** An object of the gadget kind. */
export const gadget = (group: string, name: string, spec: Record<string, unknown>) => ({
  apiVersion: `${group}/v1`,
  kind: "Gadget",
  metadata: { name },
  spec
})

/** The writes each case makes: a create, or a create then an update from `old` to `object`. */
export interface GadgetCase {
  readonly name: string
  readonly object: Record<string, unknown>
  readonly old?: Record<string, unknown>
}

/** The gadget cases: accepted ones and refused ones, each naming the rule it is about. */
export const gadgetCases = (): ReadonlyArray<GadgetCase> => [
  { name: "accepted", object: { replicas: 1, owner: "me", name: "short", tags: tags(20) } },
  { name: "over-max", object: { replicas: 7, owner: "me" } },
  { name: "default-max", object: { replicas: 5, owner: "me" } },
  { name: "message-expression", object: { replicas: 0, name: "much-too-long-name" } },
  { name: "forbidden-field-path", object: { replicas: 0, mode: "bad" } },
  { name: "required-field-path", object: { replicas: 2 } },
  { name: "several", object: { replicas: 9, mode: "bad", name: "much-too-long-name" } },
  { name: "per-call-limit", object: { replicas: 0, tags: tags(500) } },
  { name: "transition", old: { replicas: 0, class: "gold" }, object: { replicas: 0, class: "silver" } },
  { name: "transition-unchanged", old: { replicas: 0, class: "gold" }, object: { replicas: 0, class: "gold", counter: 3 } },
  { name: "optional-old-self", old: { replicas: 0, counter: 5 }, object: { replicas: 0, counter: 4 } },
  { name: "optional-old-self-create", object: { replicas: 0, counter: 4 } }
]

/** What a write (or `validate`) came to: accepted, or refused with the causes of its 422. */
export type Answer =
  | { readonly _tag: "Accepted" }
  | { readonly _tag: "Refused"; readonly causes: ReadonlyArray<{ readonly field: string; readonly reason: string; readonly message: string }> }

const accepted: Answer = { _tag: "Accepted" }

/** A server's answer to a write: a 422's causes, or accepted; any other failure fails the test. */
export const serverAnswer = <A, R>(write: Effect.Effect<A, unknown, R>): Effect.Effect<Answer, unknown, R> =>
  write.pipe(
    Effect.as(accepted),
    Effect.catch((e: unknown) =>
      e instanceof ApiError && e.status?.code === 422
        ? Effect.succeed<Answer>({
          _tag: "Refused",
          causes: (e.status.details?.causes ?? []).map((c) => ({ field: c.field ?? "", reason: c.reason ?? "", message: c.message ?? "" }))
        })
        : Effect.fail(e)
    )
  )

/** `CustomResource.validate`'s answer, in the same terms. */
export const validateAnswer = (
  source: Parameters<typeof CustomResource.validate>[0],
  object: unknown,
  old?: unknown
): Effect.Effect<Answer> =>
  CustomResource.validate(source, object, old === undefined ? undefined : { old }).pipe(
    Effect.as(accepted),
    Effect.catchTags({
      RuleViolation: (e) => Effect.succeed<Answer>({ _tag: "Refused", causes: e.causes }),
      RuleCostExceeded: (e) => Effect.succeed<Answer>({ _tag: "Refused", causes: e.causes }),
      InvalidRules: (e) => Effect.succeed<Answer>({ _tag: "Refused", causes: e.causes })
    }),
    Effect.orDie
  )

const crds = Kube.api(CustomResourceDefinitions)

/** Creates a CRD and, when accepted, waits until it is served. */
export const installCrd = (crd: CustomResourceDefinition) =>
  Effect.gen(function*() {
    const answer = yield* serverAnswer(crds.create(crd))
    if (answer._tag === "Accepted") {
      yield* crds.waitFor(
        crd.metadata?.name ?? "",
        (c) => c?.status?.conditions?.some((x) => x.type === "Established" && x.status === "True") === true,
        { timeout: "30 seconds" }
      )
    }
    return answer
  })

/** Deletes a CRD, ignoring what happens. */
export const removeCrd = (crd: CustomResourceDefinition) => Effect.ignore(crds.delete(crd.metadata?.name ?? ""))

/** A kind of `group`/v1 as raw JSON, to send what a typed api would refuse before sending. */
export const rawKind = (group: string, kind: string) =>
  Resource.make({ apiVersion: `${group}/v1`, kind, plural: `${kind.toLowerCase()}s`, namespaced: true, schema: Schema.Unknown })

/**
 * A case's write on a server: its create, or its `old` created and then replaced by `object`; the answer to
 * the last write, with what the server stored before it (the `old` `validate` is to compare against).
 */
export const writeCase = (group: string, kind: string, namespace: string, name: string, object: unknown, old?: unknown) =>
  Effect.gen(function*() {
    const api = Kube.api(rawKind(group, kind), { namespace })
    if (old === undefined) return { answer: yield* serverAnswer(api.create(object)), stored: undefined }
    const stored = yield* api.create(old)
    const metadata = (stored as { metadata?: { resourceVersion?: string } }).metadata
    const replacement = { ...(object as Record<string, unknown>), metadata: { name, resourceVersion: metadata?.resourceVersion } }
    return { answer: yield* serverAnswer(api.replace(name, replacement)), stored }
  })

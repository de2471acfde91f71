/**
 * The exported Schemas keep what they do not name, at every depth, through every effect/Schema call, and
 * take a newer server's object as the client's own reads do. Generated objects (effect/Arbitrary, from the
 * Schemas) get fields no Schema names at random depths 1 to 6, and mutations of the kind a newer server's
 * object has; the exported Schemas and the client path must agree on every one, and give the object back.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Arbitrary from "effect/Arbitrary"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as SchemaAST from "effect/SchemaAST"
import fc from "fast-check"
import { CustomResource } from "../../../packages/effect-kube/src/index.js"
import * as Resources from "../../../packages/effect-kube/src/resources/index.js"
import {
  codecFor,
  type Mismatch,
  objectDecoder,
  prepareObject
} from "../../../packages/effect-kube/src/internal/codec/codec.js"
import { compile } from "../../../packages/effect-kube/src/internal/codec/validator.js"

type AnySchema = Schema.Codec<unknown>
type Json = Record<string, unknown>

const clone = <A>(a: A): A => JSON.parse(JSON.stringify(a))

const spec = { method: "GET", path: "/generated", query: {} } as const

// ---------------------------------------------------------------------------------------------------------------------
// Where a field can go
// ---------------------------------------------------------------------------------------------------------------------

/** The member of a type a value is of (for an optional field, `X` of `X | undefined`), or undefined. */
const typeFor = (ast: SchemaAST.AST, value: unknown): SchemaAST.AST | undefined => {
  switch (ast._tag) {
    case "Suspend":
      return typeFor(ast.thunk(), value)
    case "Union":
      for (const member of ast.types) {
        const found = typeFor(member, value)
        if (found !== undefined) return found
      }
      return undefined
    case "Objects":
      return typeof value === "object" && value !== null && !Array.isArray(value) ? ast : undefined
    case "Arrays":
      return Array.isArray(value) ? ast : undefined
    default:
      return undefined
  }
}

interface Place {
  readonly object: Json
  /** 1 for a field of the object itself, 2 for one of `metadata`, ...: objects counted, not arrays. */
  readonly depth: number
  readonly declared: ReadonlySet<string>
}

/** Every struct in a value (an object the Schema declares fields of: not a map, nor an object kept whole). */
const structsIn = (ast: SchemaAST.AST, value: unknown, depth: number, out: Array<Place>): Array<Place> => {
  const type = typeFor(ast, value)
  if (type === undefined) return out
  if (type._tag === "Arrays") {
    const item = type.rest[0]
    if (item !== undefined) for (const element of value as Array<unknown>) structsIn(item, element, depth, out)
    return out
  }
  if (type._tag !== "Objects" || type.propertySignatures.length === 0) return out
  const object = value as Json
  out.push({ object, depth, declared: new Set(type.propertySignatures.map((ps) => String(ps.name))) })
  for (const ps of type.propertySignatures) {
    if (Object.hasOwn(object, ps.name)) structsIn(ps.type, object[ps.name as string], depth + 1, out)
  }
  return out
}

interface Addition {
  readonly depth: number
  readonly pick: number
  readonly key: string
  readonly value: unknown
}

/** Adds fields no Schema names, each at the depth asked for (or the deepest struct there is); the depths reached. */
const addUnknown = (ast: SchemaAST.AST, root: Json, additions: ReadonlyArray<Addition>): Array<number> => {
  const reached: Array<number> = []
  for (const addition of additions) {
    const places = structsIn(ast, root, 1, [])
    const deepest = Math.min(addition.depth, Math.max(...places.map((p) => p.depth)))
    const at = places.filter((p) => p.depth === deepest)
    const place = at[addition.pick % at.length]!
    // a name the spec never uses: `future` and an upper-case letter no field name of Kubernetes has after it
    const key = `futureQ${addition.key}`
    if (place.declared.has(key)) continue
    place.object[key] = addition.value
    reached.push(deepest)
  }
  return reached
}

const addition: fc.Arbitrary<Addition> = fc.record({
  depth: fc.integer({ min: 1, max: 6 }),
  pick: fc.nat(),
  key: fc.stringMatching(/^[a-z0-9]{0,6}$/),
  value: fc.jsonValue({ maxDepth: 2 })
})

// ---------------------------------------------------------------------------------------------------------------------
// Generated objects
// ---------------------------------------------------------------------------------------------------------------------

interface Kind {
  readonly name: string
  readonly resource: { readonly apiVersion: string; readonly kind: string; readonly schema: AnySchema }
  readonly samples: ReadonlyArray<Json>
}

const kinds: ReadonlyArray<Kind> = (
  [
    ["Pods", Resources.Pods],
    ["Deployments", Resources.Deployments],
    ["CronJobs", Resources.CronJobs],
    ["StatefulSets", Resources.StatefulSets],
    ["Services", Resources.Services],
    ["PersistentVolumes", Resources.PersistentVolumes],
    ["CustomResourceDefinitions", Resources.CustomResourceDefinitions]
  ] as const
).map(([name, r]) => {
  const resource = r as unknown as Kind["resource"]
  // small: at the default size one generated object of some kinds runs to gigabytes
  const fits = compile(resource.schema.ast)!
  const samples = Effect.runSync(Arbitrary.sampleEffect(Arbitrary.schema(resource.schema), { count: 16, size: 10 }))
    .map((sample) => ({ ...clone(sample as Json), apiVersion: resource.apiVersion, kind: resource.kind }))
    // as JSON: a NaN or an infinity a number field was generated with is `null` then, which no longer fits
    .filter(fits)
  if (samples.length < 4) throw new Error(`${name}: too few generated objects fit as JSON`)
  return { name, resource, samples }
})

const decoders = new Map(kinds.map((k) => [k.name, objectDecoder(k.resource, spec, (m) => found.push(m))]))
const found: Array<Mismatch> = []

/** What the client's own read path makes of an object: what it delivers (or its failure), and whether it warned. */
const clientRead = (
  kind: Kind,
  u: Json
): { readonly result: Result.Result<unknown, unknown>; readonly warned: boolean } => {
  found.length = 0
  const result = decoders.get(kind.name)!(u)
  return { result, warned: found.length > 0 }
}

describe("unknown fields at depths 1 to 6", () => {
  it("are kept by decode, encode and is of the exported Schemas, and by the client path, for generated objects", () => {
    const depths = new Set<number>()
    fc.assert(
      fc.property(
        fc.constantFrom(...kinds).chain((kind) => fc.tuple(fc.constant(kind), fc.constantFrom(...kind.samples))),
        fc.array(addition, { minLength: 1, maxLength: 5 }),
        ([kind, sample], additions) => {
          const schema = kind.resource.schema
          const input = clone(sample)
          for (const depth of addUnknown(schema.ast, input, additions)) depths.add(depth)
          const text = JSON.stringify(input)
          // the object fits its Schema but for the added fields
          const decoded = Schema.decodeUnknownSync(schema)(input)
          assert.strictEqual(decoded, input, `${kind.name}: decode gives the object itself`)
          assert.strictEqual(JSON.stringify(Schema.encodeSync(schema)(decoded)), text, `${kind.name}: encode`)
          assert.strictEqual(JSON.stringify(Schema.encodeUnknownSync(schema)(JSON.parse(text))), text)
          assert.isTrue(Schema.is(schema)(input))
          // the client path: the same object, no warning (a field the Schema does not name is no mismatch)
          const client = JSON.parse(text)
          const read = clientRead(kind, client)
          assert.strictEqual(Result.getOrThrow(read.result), client)
          assert.isFalse(read.warned, `${kind.name}: the client path warned`)
          assert.strictEqual(JSON.stringify(client), text)
          // the client's write path encodes it unchanged
          assert.strictEqual(JSON.stringify(Result.getOrThrow(codecFor(schema).encode(JSON.parse(text), "w"))), text)
          // the strict call refuses them
          assert.isTrue(Result.isFailure(Schema.decodeUnknownResult(schema, { onExcessProperty: "error" })(input)))
        }
      ),
      { numRuns: 300 }
    )
    for (const depth of [1, 2, 3, 4, 5, 6]) assert.isTrue(depths.has(depth), `a field was added at depth ${depth}`)
  })

  it("the exported Schemas and the client path agree on a newer server's object, and on one that does not fit", () => {
    // what a mutation puts in place of a declared field of a struct: nothing (a required field left out), a
    // value of another JSON shape, or a scalar of another type
    const replacement = fc.oneof(
      fc.constant(undefined),
      fc.constant(null),
      fc.constant([]),
      fc.constant({ futureQx: 1 }),
      fc.constant("text"),
      fc.constant(7),
      fc.constant(true)
    )
    let kept = 0
    let refused = 0
    fc.assert(
      fc.property(
        fc.constantFrom(...kinds).chain((kind) => fc.tuple(fc.constant(kind), fc.constantFrom(...kind.samples))),
        fc.array(addition, { maxLength: 3 }),
        fc.nat(),
        fc.nat(),
        replacement,
        ([kind, sample], additions, pickStruct, pickField, value) => {
          const schema = kind.resource.schema
          const input = clone(sample)
          addUnknown(schema.ast, input, additions)
          const places = structsIn(schema.ast, input, 1, [])
          const place = places[pickStruct % places.length]!
          // the envelope is the client's to check against the request (a Pod where a Service was asked for, a
          // kind filled in when absent): the Schema types `apiVersion` and `kind` as any string
          const names = [...place.declared].filter((n) => place.depth > 1 || (n !== "apiVersion" && n !== "kind"))
          if (names.length === 0) return
          const name = names[pickField % names.length]!
          if (value === undefined) delete place.object[name]
          else place.object[name] = value
          const text = JSON.stringify(input)
          const exported = Schema.decodeUnknownResult(schema)(input)
          const client = JSON.parse(text)
          const read = clientRead(kind, client)
          assert.strictEqual(Result.isSuccess(exported), Result.isSuccess(read.result), `${kind.name}: ${name}`)
          assert.strictEqual(Schema.is(schema)(input), Result.isSuccess(exported))
          if (Result.isSuccess(exported)) {
            kept++
            assert.strictEqual(exported.success, input)
            assert.strictEqual(Result.getOrThrow(read.result), client)
            assert.strictEqual(JSON.stringify(Schema.encodeSync(schema)(exported.success)), text)
            // the client warns exactly when the object does not fit the spec's types
            assert.strictEqual(read.warned, !compile(schema.ast)!(input), `${kind.name}: warned iff it does not fit`)
          } else {
            refused++
            assert.throws(() => Schema.asserts(schema, input))
          }
        }
      ),
      { numRuns: 300 }
    )
    assert.isAbove(kept, 0)
    assert.isAbove(refused, 0)
  })
})

// ---------------------------------------------------------------------------------------------------------------------
// As users reach for them
// ---------------------------------------------------------------------------------------------------------------------

describe("the exported Schemas as users call them", () => {
  it("the issue's Pod comes back as it was given", () => {
    const pod = {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "a", futureMeta: 1 },
      spec: {
        futureSpec: { x: 1 },
        containers: [{ name: "c", image: "i", livenessProbe: { httpGet: { port: 80, protocol: "HTTP3" } } }]
      }
    }
    const text = JSON.stringify(pod)
    const out = Schema.encodeSync(Resources.Pods.schema)(Schema.decodeUnknownSync(Resources.Pods.schema)(pod))
    assert.strictEqual(JSON.stringify(out), text)
    assert.deepStrictEqual(out, JSON.parse(text))
  })

  it("a user's Struct embedding PodTemplateSpec keeps what the template carries, at every depth", () => {
    const Workload = Schema.Struct({
      name: Schema.String,
      template: Resources.PodTemplateSpec,
      sidecars: Schema.optional(Schema.Array(Resources.Container))
    })
    const template = {
      metadata: { labels: { app: "a" }, futureMeta: [1] },
      spec: {
        futureSpec: true,
        containers: [{ name: "c", futureContainer: "x", livenessProbe: { grpc: { port: 1, mode: "future" } } }]
      },
      futureTemplate: { deep: { deeper: 1 } }
    }
    const input = { name: "w", template, sidecars: [{ name: "s", futureSidecar: 1 }] }
    const text = JSON.stringify(input)
    const decoded = Schema.decodeUnknownSync(Workload)(input)
    assert.strictEqual(decoded.template, template)
    assert.strictEqual(JSON.stringify(Schema.encodeSync(Workload)(decoded)), text)
    assert.isTrue(Schema.is(Workload)(input))
    // nested definitions are strict about their own fields: a container without a name is refused
    const nameless = { name: "w", template: { spec: { containers: [{ image: "i" }] } } }
    assert.isTrue(Result.isFailure(Schema.decodeUnknownResult(Workload)(nameless)))
    assert.isFalse(Schema.is(Workload)(nameless))
  })

  it("a CustomResource whose Schema transforms keeps what it does not name at every depth, on both paths", () => {
    class Size extends Schema.Class<Size>("Size")({ cpu: Schema.NumberFromString }) {}
    const Widgets = CustomResource.make({
      group: "example.com",
      version: "v1",
      kind: "Widget",
      scope: "Namespaced",
      spec: Schema.Struct({
        size: Size,
        replicas: Schema.NumberFromString,
        template: Schema.optional(Resources.PodTemplateSpec)
      }),
      status: Schema.Struct({ ready: Schema.optional(Schema.Boolean) })
    })
    const widget = {
      apiVersion: "example.com/v1",
      kind: "Widget",
      metadata: { name: "w", namespace: "default", futureMeta: 1 },
      spec: {
        size: { cpu: "2", futureSize: "kept" },
        replicas: "3",
        template: { spec: { containers: [{ name: "c", futureContainer: {} }] } },
        futureSpec: [1, 2]
      },
      status: { ready: true, futureStatus: "s" },
      futureTop: "t"
    }
    const decoded = Schema.decodeUnknownSync(Widgets.schema)(clone(widget)) as any
    assert.instanceOf(decoded.spec.size, Size)
    assert.strictEqual(decoded.spec.size.cpu, 2)
    assert.strictEqual(decoded.spec.replicas, 3)
    assert.deepStrictEqual(decoded.spec.futureSpec, [1, 2])
    assert.strictEqual(decoded.futureTop, "t")
    const encoded = Schema.encodeSync(Widgets.schema)(decoded)
    assert.deepStrictEqual(encoded, widget)
    // the client's own read and write paths give the same
    const read = Result.getOrThrow(objectDecoder(Widgets, spec)(clone(widget))) as any
    assert.deepStrictEqual(Result.getOrThrow(codecFor(Widgets.schema).encode(read, "w")), widget)
    assert.deepStrictEqual(Result.getOrThrow(codecFor(Widgets.schema).encode(decoded, "w")), widget)
  })

  it("a kind whose Schema holds a recursive one (a CRD's JSONSchemaProps) keeps what it does not name", () => {
    const crd = {
      apiVersion: "apiextensions.k8s.io/v1",
      kind: "CustomResourceDefinition",
      metadata: { name: "widgets.example.com" },
      spec: {
        group: "example.com",
        names: { kind: "Widget", plural: "widgets" },
        scope: "Namespaced",
        versions: [{
          name: "v1",
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: {
              type: "object",
              futureRoot: 1,
              properties: { spec: { type: "object", properties: { a: { type: "string", futureDeep: [true] } } } }
            }
          }
        }]
      }
    }
    const text = JSON.stringify(crd)
    const schema = Resources.CustomResourceDefinitions.schema
    assert.strictEqual(JSON.stringify(Schema.encodeSync(schema)(Schema.decodeUnknownSync(schema)(crd))), text)
    assert.strictEqual(JSON.stringify(Schema.encodeUnknownSync(Resources.JSONSchemaProps)(
      crd.spec.versions[0]!.schema.openAPIV3Schema
    )), JSON.stringify(crd.spec.versions[0]!.schema.openAPIV3Schema))
    assert.isTrue(Schema.is(schema)(crd))
  })

  it("the client's writes check strictly: a newer server's object is refused before it is sent", () => {
    const newer = { apiVersion: "v1", kind: "Pod", metadata: { name: "a" }, spec: { containers: [{ image: "i" }] } }
    assert.strictEqual<unknown>(Schema.encodeSync(Resources.Pods.schema)(newer as never), newer)
    const written = Effect.runSync(Effect.result(prepareObject(Resources.Pods, "default", newer as never, {})))
    assert.isTrue(Result.isFailure(written))
    if (Result.isFailure(written)) assert.include(written.failure.message, ".spec.containers[0].name is missing")
    const unknown = { ...newer, spec: { containers: [{ name: "c", futureContainer: 1 }] } }
    const sent = Result.getOrThrow(Effect.runSync(Effect.result(prepareObject(Resources.Pods, "default", unknown, {}))))
    assert.deepStrictEqual(sent.spec, unknown.spec)
  })

  it("an annotated generated Schema keeps what it does not name as the original does", () => {
    const Annotated = Resources.PodSpec.annotate({ description: "the pod of a widget" })
    const podSpec = { containers: [{ name: "c" }], futurePodSpec: 1 }
    assert.strictEqual(Schema.decodeUnknownSync(Annotated)(podSpec), podSpec)
    assert.strictEqual(Schema.decodeUnknownSync(Schema.Struct({ pod: Annotated }))({ pod: podSpec }).pod, podSpec)
  })

  it("the strict call (onExcessProperty: \"error\") refuses unknown fields, and a newer server's object", () => {
    const strict = { onExcessProperty: "error" } as const
    const pod = { apiVersion: "v1", kind: "Pod", metadata: { name: "a" }, spec: { containers: [{ name: "c" }] } }
    assert.strictEqual(Schema.decodeUnknownSync(Resources.Pods.schema, strict)(pod).metadata?.name, "a")
    const unknown = { ...pod, spec: { containers: [{ name: "c", futureContainer: 1 }] } }
    assert.isTrue(Result.isFailure(Schema.decodeUnknownResult(Resources.Pods.schema, strict)(unknown)))
    const newer = { ...pod, spec: { containers: [{ image: "i" }] } }
    assert.strictEqual<unknown>(Schema.decodeUnknownSync(Resources.Pods.schema)(newer), newer)
    assert.isTrue(Result.isFailure(Schema.decodeUnknownResult(Resources.Pods.schema, strict)(newer)))
    // and every call refuses what a newer server does not explain: a scalar of another type, a bad metadata
    for (const bad of [{ ...pod, spec: { containers: [{ name: 1 }] } }, { ...pod, metadata: { name: 1 } }]) {
      assert.isTrue(Result.isFailure(Schema.decodeUnknownResult(Resources.Pods.schema)(bad)))
      assert.isFalse(Schema.is(Resources.Pods.schema)(bad))
      assert.isTrue(Result.isFailure(Schema.encodeUnknownResult(Resources.Pods.schema)(bad)))
    }
  })
})

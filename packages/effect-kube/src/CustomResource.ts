/**
 * Custom resources described once, by their Schema: `CustomResource.make` gives the typed `Resource` to pass
 * to `Kube.api` *and* the CustomResourceDefinition that serves it, its structural `openAPIV3Schema` derived
 * from the same Schema, as kube-rs's `#[derive(CustomResource)]` does for Rust types. The two cannot drift.
 *
 * The schema says what the Schema says: types, required fields, literals as enums, checks as constraints
 * (`Schema.isInt()` an integer, `isGreaterThanOrEqualTo` a minimum, `isPattern` a pattern, `isMinLength` a
 * minimum length or item count), `Schema.NullOr` nullable, a union of a number and a string int-or-string,
 * `Schema.Unknown` and records of unknown values kept as sent (`x-kubernetes-preserve-unknown-fields`). The
 * annotations `description`, `format` and `default` and every `x-kubernetes-*` key are copied as they are,
 * so list types, map keys and CEL validation rules sit on the fields they describe:
 *
 * @example
 * ```ts
 * import { Effect, Schema } from "effect"
 * import { CustomResource, CustomResourceDefinitions, Kube } from "effect-kube"
 *
 * const Port = Schema.Struct({ name: Schema.String, port: Schema.Number.check(Schema.isInt()) })
 *
 * const Backends = CustomResource.make({
 *   group: "example.com",
 *   version: "v1",
 *   kind: "Backend",
 *   scope: "Namespaced",
 *   spec: Schema.Struct({
 *     replicas: Schema.Number.check(Schema.isInt(), Schema.isGreaterThanOrEqualTo(0)).annotate({ default: 1 }),
 *     ports: Schema.Array(Port).annotate({ "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"] })
 *   }).annotate({
 *     "x-kubernetes-validations": [{ rule: "self.replicas <= 10", message: "at most 10 replicas" }]
 *   }),
 *   status: Schema.Struct({ ready: Schema.optional(Schema.Number) }),
 *   printerColumns: [{ name: "Replicas", type: "integer", jsonPath: ".spec.replicas" }]
 * })
 *
 * const install = Effect.gen(function* () {
 *   const crd = yield* Backends.crd()
 *   yield* Kube.api(CustomResourceDefinitions).apply(crd, { fieldManager: "backend-operator", force: true })
 * })
 * const backends = Kube.api(Backends, { namespace: "default" }) // typed: spec.replicas is a number
 * ```
 *
 * @since 0.2.0
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { ValidationError } from "./Errors.js"
import { keepingUndeclared } from "./internal/codec/codec.js"
import { acceptsUndefined, schemaAt, structuralSchema } from "./internal/crd/structural.js"
import * as Resource from "./Resource.js"
import { openEnum as openEnumSchema } from "./resources/internal/schema.js"
import {
  type CustomResourceColumnDefinition,
  type CustomResourceDefinition,
  type CustomResourceDefinitionVersion,
  type JSONSchemaProps,
  ObjectMeta,
  type ValidationRule
} from "./resources/generated.js"

declare module "effect/Schema" {
  // the OpenAPI extensions of a CRD schema, as annotations of the fields they describe
  namespace Annotations {
    interface Annotations {
      /** `atomic` (the default), `set` (unique scalars) or `map` (objects keyed by `x-kubernetes-list-map-keys`). */
      readonly "x-kubernetes-list-type"?: "atomic" | "set" | "map" | undefined
      /** The fields that key the items of a `map` list: scalar fields, required or defaulted. */
      readonly "x-kubernetes-list-map-keys"?: ReadonlyArray<string> | undefined
      /** `granular` (the default) or `atomic` (replaced whole by server-side apply). */
      readonly "x-kubernetes-map-type"?: "granular" | "atomic" | undefined
      /** CEL rules the API server checks on this field's value (`self`, and `oldSelf` on updates). */
      readonly "x-kubernetes-validations"?: ReadonlyArray<ValidationRule> | undefined
      /** Keep fields the schema does not name, instead of pruning them. */
      readonly "x-kubernetes-preserve-unknown-fields"?: boolean | undefined
      /** An embedded object with apiVersion, kind and metadata of its own. */
      readonly "x-kubernetes-embedded-resource"?: boolean | undefined
    }
  }
}

/**
 * @since 0.2.0
 * @category type ids
 */
export const TypeId: unique symbol = Symbol.for("effect-kube/CustomResource")

/**
 * @since 0.2.0
 * @category type ids
 */
export type TypeId = typeof TypeId

/**
 * An object of a custom resource: the envelope every kind has, its `spec` and, when it has one, its `status`.
 *
 * @since 0.2.0
 * @category models
 */
export type Object<Spec, Status> =
  & {
    readonly apiVersion?: string | undefined
    readonly kind?: string | undefined
    readonly metadata?: ObjectMeta | undefined
    readonly spec: Spec
  }
  & ([Status] extends [never] ? {} : { readonly status?: Status | undefined })

/**
 * A column `kubectl get` prints for the kind (`additionalPrinterColumns`).
 *
 * @since 0.2.0
 * @category models
 */
export interface PrinterColumn {
  readonly name: string
  readonly type: "integer" | "number" | "string" | "boolean" | "date"
  /** A simple JSON path into the object, e.g. `.spec.replicas`. */
  readonly jsonPath: string
  readonly description?: string | undefined
  readonly format?: string | undefined
  /** 0 (the default) shows in the standard view, higher only in `-o wide`. */
  readonly priority?: number | undefined
}

/**
 * The scale subresource: where the replica counts live, so that `kubectl scale` and autoscalers work.
 *
 * @since 0.2.0
 * @category models
 */
export interface Scale {
  /** An integer field under `.spec`, e.g. `.spec.replicas`. */
  readonly specReplicasPath: string
  /** An integer field under `.status`, e.g. `.status.replicas`. */
  readonly statusReplicasPath: string
  /** A string field holding a serialized label selector, under `.spec` or `.status`. */
  readonly labelSelectorPath?: string | undefined
}

/**
 * What `CustomResource.make` takes: the kind's names and scope, the Schemas of its `spec` and `status`, and what
 * the CRD says besides (columns, scale, selectable fields, CEL rules on the whole object).
 *
 * @since 0.2.0
 * @category models
 */
export interface Options<
  Spec extends Schema.Codec<unknown, unknown>,
  Status extends Schema.Codec<unknown, unknown>,
  HasScale extends Scale | undefined
> {
  /** The API group, a DNS subdomain with at least one dot (`example.com`). */
  readonly group: string
  /** The version, e.g. `v1`, `v1beta1`. */
  readonly version: string
  /** The kind, in CamelCase: `Backend`. */
  readonly kind: string
  /** The lower-case plural used in paths; by default the kind's, lower case (`backends`, `policies`). */
  readonly plural?: string | undefined
  /** The lower-case singular; by default the kind in lower case. */
  readonly singular?: string | undefined
  readonly scope: "Namespaced" | "Cluster"
  readonly spec: Spec
  /** With a status, the kind has a status subresource: writes to the object keep it, `/status` writes only it. */
  readonly status?: Status | undefined
  readonly shortNames?: ReadonlyArray<string> | undefined
  /** Groups such as `all` that `kubectl get <category>` lists. */
  readonly categories?: ReadonlyArray<string> | undefined
  readonly printerColumns?: ReadonlyArray<PrinterColumn> | undefined
  readonly scale?: HasScale | undefined
  /** JSON paths (`.spec.color`) of string, integer or boolean fields that field selectors may name. */
  readonly selectableFields?: ReadonlyArray<string> | undefined
  /** CEL rules on the whole object (`self.spec`, `self.metadata.name`). */
  readonly validations?: ReadonlyArray<ValidationRule> | undefined
  /** Whether objects are stored in this version (the one version of a CRD of one version is). */
  readonly storage?: boolean | undefined
  /** Whether the API serves this version (default true). */
  readonly served?: boolean | undefined
  /** Marks the version deprecated: `true`, or the warning the server sends with each request to it. */
  readonly deprecated?: boolean | string | undefined
}

/**
 * The CustomResourceDefinition `crd()` makes: a whole object, with the apiVersion, kind and name that server-side
 * apply needs, so it is also the apply configuration to give `Kube.api(CustomResourceDefinitions).apply`.
 *
 * @since 0.2.0
 * @category models
 */
export interface Definition extends CustomResourceDefinition {
  readonly apiVersion: "apiextensions.k8s.io/v1"
  readonly kind: "CustomResourceDefinition"
  readonly metadata: ObjectMeta & { readonly name: string }
}

/**
 * A custom resource: a `Resource` for `Kube.api`, typed by its Schemas, and the CustomResourceDefinition that
 * serves it (`crd()`). `CustomResource.crd([v1, v2])` joins several versions of one kind.
 *
 * @since 0.2.0
 * @category models
 */
export interface CustomResource<A, I = A, S extends string = never> extends Resource.Resource<A, I, S> {
  readonly [TypeId]: {
    readonly options: Options<Schema.Codec<unknown, unknown>, Schema.Codec<unknown, unknown>, Scale | undefined>
  }
  readonly scope: "Namespaced" | "Cluster"
  readonly singular: string
  /** The CustomResourceDefinition with this one version, stored: what to apply to a cluster to serve the kind. */
  readonly crd: () => Effect.Effect<Definition, ValidationError>
}

const dns1035Label = /^[a-z]([-a-z0-9]*[a-z0-9])?$/
const dns1123Label = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/
const dns1123Subdomain = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/

/** The plural of a lower-case kind, by the English rules kubebuilder's names follow. */
const pluralOf = (singular: string): string =>
  /(s|x|z|ch|sh)$/.test(singular)
    ? `${singular}es`
    : /[^aeiou]y$/.test(singular)
    ? `${singular.slice(0, -1)}ies`
    : `${singular}s`

/**
 * A custom resource of one version, from the Schemas of its `spec` and `status`. Names are checked when the
 * CRD is made (`crd()`), as the API server checks them.
 *
 * @since 0.2.0
 * @category constructors
 */
export const make = <
  Spec extends Schema.Codec<any, any>,
  Status extends Schema.Codec<any, any> = never,
  const HasScale extends Scale | undefined = undefined
>(
  options: Options<Spec, Status, HasScale>
): CustomResource<
  Object<Spec["Type"], Status["Type"]>,
  Object<Spec["Encoded"], Status["Encoded"]>,
  ([Status] extends [never] ? never : "status") | (HasScale extends Scale ? "scale" : never)
> => {
  const singular = options.singular ?? options.kind.toLowerCase()
  const plural = options.plural ?? pluralOf(singular)
  const fields = {
    apiVersion: Schema.optional(Schema.String),
    kind: Schema.optional(Schema.String),
    metadata: Schema.optional(ObjectMeta),
    spec: options.spec,
    ...(options.status !== undefined ? { status: Schema.optional(options.status) } : {})
  }
  const subresources = [
    ...(options.status !== undefined ? ["status"] : []),
    ...(options.scale !== undefined ? ["scale"] : [])
  ]
  const resource = Resource.make({
    apiVersion: `${options.group}/${options.version}`,
    kind: options.kind,
    plural,
    namespaced: options.scope === "Namespaced",
    subresources,
    // the envelope's fields are fixed; its type is the one declared for the Schemas given. It keeps the fields
    // it does not name, at every depth (the Schemas given included: another version of the CRD, or a field
    // this one prunes not yet, may send more), through every effect/Schema call, as the client's own reads do
    schema: Schema.make(keepingUndeclared(Schema.Struct(fields).ast)) as unknown as Schema.Codec<
      Object<Spec["Type"], Status["Type"]>,
      Object<Spec["Encoded"], Status["Encoded"]>
    >
  })
  const self = {
    ...resource,
    [TypeId]: { options: options as Options<any, any, any> },
    scope: options.scope,
    singular,
    crd: () => crd([self])
  }
  return self as CustomResource<
    Object<Spec["Type"], Status["Type"]>,
    Object<Spec["Encoded"], Status["Encoded"]>,
    ([Status] extends [never] ? never : "status") | (HasScale extends Scale ? "scale" : never)
  >
}

/**
 * A string field whose known values the type suggests while any string decodes, as the built-in kinds' enums
 * are (and `crd-gen` writes a CRD's `enum`): a newer server's value must not fail a list or a watch.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { CustomResource } from "effect-kube"
 *
 * const Phase = CustomResource.openEnum("Pending", "Ready") // Codec<"Pending" | "Ready" | (string & {})>
 * assert.strictEqual(Schema.decodeUnknownSync(Phase)("Unknown"), "Unknown")
 * ```
 * @since 0.2.0
 * @category schemas
 */
export const openEnum: <const Values extends ReadonlyArray<string>>(
  ...values: Values
) => Schema.Codec<Values[number] | (string & {})> = openEnumSchema

/**
 * Whether a value is a custom resource made by `CustomResource.make`.
 *
 * @since 0.2.0
 * @category guards
 */
export const isCustomResource = (u: unknown): u is CustomResource<unknown, unknown, string> =>
  typeof u === "object" && u !== null && TypeId in u

type Any = CustomResource<any, any, any>

const fail = (subject: string, detail: string) => Result.fail(new ValidationError({ subject, detail }))

const checkNames = (resource: Any, subject: string): Result.Result<void, ValidationError> => {
  const options = resource[TypeId].options
  if (!dns1123Subdomain.test(options.group) || !options.group.includes(".")) {
    return fail(subject, `group ${JSON.stringify(options.group)} must be a DNS subdomain with at least one dot`)
  }
  if (!dns1035Label.test(options.version)) {
    return fail(subject, `version ${JSON.stringify(options.version)} must be a DNS-1035 label (e.g. v1, v1beta1)`)
  }
  if (!/^[A-Za-z][A-Za-z0-9]*$/.test(options.kind)) {
    return fail(subject, `kind ${JSON.stringify(options.kind)} must be CamelCase letters and digits`)
  }
  for (const [what, name] of [["plural", resource.plural], ["singular", resource.singular]] as const) {
    if (!dns1123Label.test(name)) return fail(subject, `${what} ${JSON.stringify(name)} must be a lower-case DNS label`)
  }
  for (const name of options.shortNames ?? []) {
    if (!dns1123Label.test(name)) return fail(subject, `short name ${JSON.stringify(name)} must be a lower-case DNS label`)
  }
  return Result.void
}

const printerColumns = (
  columns: ReadonlyArray<PrinterColumn>,
  subject: string
): Result.Result<ReadonlyArray<CustomResourceColumnDefinition>, ValidationError> => {
  const out: Array<CustomResourceColumnDefinition> = []
  for (const column of columns) {
    if (!column.jsonPath.startsWith(".")) {
      return fail(subject, `printer column ${JSON.stringify(column.name)}: jsonPath must start with "."`)
    }
    out.push({
      name: column.name,
      type: column.type,
      jsonPath: column.jsonPath,
      ...(column.description !== undefined ? { description: column.description } : {}),
      ...(column.format !== undefined ? { format: column.format } : {}),
      ...(column.priority !== undefined ? { priority: column.priority } : {})
    })
  }
  return Result.succeed(out)
}

/** A path such as `.spec.replicas` to a field of one of `types`, under one of `roots`. */
const checkPath = (
  schema: JSONSchemaProps,
  path: string,
  roots: ReadonlyArray<string>,
  types: ReadonlyArray<string>,
  what: string,
  subject: string
): Result.Result<void, ValidationError> => {
  if (!roots.some((root) => path.startsWith(`${root}.`))) {
    return fail(subject, `${what} ${path} must be a path under ${roots.join(" or ")}`)
  }
  const field = schemaAt(schema, path)
  if (field === undefined) return fail(subject, `${what} ${path} names no field of the schema`)
  if (field.type === undefined || !types.includes(field.type)) {
    return fail(subject, `${what} ${path} must be a field of type ${types.join(" or ")}, not ${field.type ?? "any"}`)
  }
  return Result.void
}

/** The version entry of one custom resource's CRD. */
const versionOf = (
  resource: Any,
  storage: boolean
): Result.Result<CustomResourceDefinitionVersion, ValidationError> =>
  Result.gen(function*() {
    const options = resource[TypeId].options
    const subject = `CustomResource ${resource.plural}.${resource.group}/${resource.version}`
    yield* checkNames(resource, subject)
    const spec = yield* structuralSchema(options.spec.ast, "spec", subject)
    const status = options.status !== undefined
      ? yield* structuralSchema(options.status.ast, "status", subject)
      : undefined
    const root: JSONSchemaProps = {
      type: "object",
      properties: {
        apiVersion: { type: "string" },
        kind: { type: "string" },
        metadata: { type: "object" },
        spec,
        ...(status !== undefined ? { status } : {})
      },
      ...(acceptsUndefined(options.spec.ast) ? {} : { required: ["spec"] }),
      ...(options.validations !== undefined && options.validations.length > 0
        ? { "x-kubernetes-validations": options.validations }
        : {})
    }
    if (options.scale !== undefined) {
      const scale = options.scale
      yield* checkPath(root, scale.specReplicasPath, [".spec"], ["integer"], "specReplicasPath", subject)
      yield* checkPath(root, scale.statusReplicasPath, [".status"], ["integer"], "statusReplicasPath", subject)
      if (scale.labelSelectorPath !== undefined) {
        yield* checkPath(root, scale.labelSelectorPath, [".spec", ".status"], ["string"], "labelSelectorPath", subject)
      }
    }
    for (const path of options.selectableFields ?? []) {
      yield* checkPath(root, path, [".spec", ".status"], ["string", "integer", "boolean"], "selectable field", subject)
    }
    const columns = options.printerColumns !== undefined
      ? yield* printerColumns(options.printerColumns, subject)
      : undefined
    const subresources = {
      ...(options.status !== undefined ? { status: {} } : {}),
      ...(options.scale !== undefined
        ? {
          scale: {
            specReplicasPath: options.scale.specReplicasPath,
            statusReplicasPath: options.scale.statusReplicasPath,
            ...(options.scale.labelSelectorPath !== undefined
              ? { labelSelectorPath: options.scale.labelSelectorPath }
              : {})
          }
        }
        : {})
    }
    return {
      name: options.version,
      served: options.served ?? true,
      storage,
      ...(options.deprecated !== undefined && options.deprecated !== false ? { deprecated: true } : {}),
      ...(typeof options.deprecated === "string" ? { deprecationWarning: options.deprecated } : {}),
      schema: { openAPIV3Schema: root },
      ...(Object.keys(subresources).length > 0 ? { subresources } : {}),
      ...(columns !== undefined && columns.length > 0 ? { additionalPrinterColumns: columns } : {}),
      ...(options.selectableFields !== undefined && options.selectableFields.length > 0
        ? { selectableFields: options.selectableFields.map((jsonPath) => ({ jsonPath })) }
        : {})
    }
  })

/**
 * The CustomResourceDefinition serving several versions of one kind: the same group, kind, plural and scope,
 * exactly one of them marked `storage: true` (a single version is the stored one anyway). Fails with a
 * ValidationError naming the version or field at fault, before anything is sent.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { CustomResource } from "effect-kube"
 *
 * const v1alpha1 = CustomResource.make({
 *   group: "example.com", version: "v1alpha1", kind: "Widget", scope: "Namespaced",
 *   spec: Schema.Struct({ size: Schema.String }), deprecated: "example.com/v1alpha1 Widget is deprecated; use v1"
 * })
 * const v1 = CustomResource.make({
 *   group: "example.com", version: "v1", kind: "Widget", scope: "Namespaced",
 *   spec: Schema.Struct({ size: Schema.String, color: Schema.optional(Schema.String) }), storage: true
 * })
 * const definition = CustomResource.crd([v1alpha1, v1]) // Effect<CustomResource.Definition, ValidationError>
 * ```
 * @since 0.2.0
 * @category constructors
 */
export const crd = (
  versions: readonly [Any, ...ReadonlyArray<Any>]
): Effect.Effect<Definition, ValidationError> =>
  Effect.fromResult(Result.gen(function*() {
    const first = versions[0]
    const subject = `CustomResourceDefinition ${first.plural}.${first.group}`
    for (const other of versions) {
      if (
        other.group !== first.group || other.kind !== first.kind || other.plural !== first.plural ||
        other.scope !== first.scope
      ) {
        return yield* fail(subject, `version ${other.version} is not of the same group, kind, plural and scope`)
      }
    }
    const names = new Set(versions.map((v) => v.version))
    if (names.size !== versions.length) return yield* fail(subject, "a version is listed twice")
    const marked = versions.filter((v) => v[TypeId].options.storage === true)
    if (marked.length > 1) {
      return yield* fail(subject, `only one version may be stored; ${marked.map((v) => v.version).join(", ")} are`)
    }
    if (marked.length === 0 && versions.length > 1) {
      return yield* fail(subject, "mark the version objects are stored in with storage: true")
    }
    const stored = marked[0] ?? first
    const entries: Array<CustomResourceDefinitionVersion> = []
    for (const version of versions) entries.push(yield* versionOf(version, version === stored))
    const options = first[TypeId].options
    return {
      apiVersion: "apiextensions.k8s.io/v1",
      kind: "CustomResourceDefinition",
      metadata: { name: `${first.plural}.${first.group}` },
      spec: {
        group: first.group,
        scope: first.scope,
        names: {
          kind: first.kind,
          listKind: `${first.kind}List`,
          plural: first.plural,
          singular: first.singular,
          ...(options.shortNames !== undefined && options.shortNames.length > 0
            ? { shortNames: options.shortNames }
            : {}),
          ...(options.categories !== undefined && options.categories.length > 0
            ? { categories: options.categories }
            : {})
        },
        versions: entries
      }
    } satisfies Definition
  }))

// ---------------------------------------------------------------------------------------------------------------------
// validate: the CRD's CEL rules, on the client

/**
 * One rule an object failed, as kube-apiserver reports it in a 422's `details.causes`: the field (the rule's
 * field, or its `fieldPath` under it), the reason the rule names (FieldValueInvalid unless `reason` says
 * Forbidden, Required or Duplicate), and the message (`Invalid value: "<value>": <message>`, the value left out
 * for an object or a list; the message from `messageExpression` when it evaluates to a string, else
 * `message`, else `failed rule: <rule>`).
 *
 * @since 0.2.0
 * @category models
 */
export interface RuleCause {
  readonly field: string
  readonly reason: "FieldValueInvalid" | "FieldValueForbidden" | "FieldValueRequired" | "FieldValueDuplicate"
  readonly message: string
}

/**
 * What `validate` found on an object that passed: the warnings the server would send with it (errors of
 * rules on unchanged values, ratcheted) and the rules' runtime cost, out of the budget of 10,000,000.
 *
 * @since 0.2.0
 * @category models
 */
export interface Validated {
  readonly warnings: ReadonlyArray<string>
  readonly cost: number
}

/**
 * An object the CRD's `x-kubernetes-validations` refuse: the causes, as the API server's 422 Invalid
 * lists them.
 *
 * @since 0.2.0
 * @category errors
 */
export class RuleViolation extends Data.TaggedError("RuleViolation")<{
  readonly kind: string
  readonly name: string
  readonly causes: ReadonlyArray<RuleCause>
  readonly warnings: ReadonlyArray<string>
}> {
  override get message(): string {
    return `${this.kind} "${this.name}" is invalid: ${this.causes.map((c) => `${c.field}: ${c.message}`).join(", ")}`
  }
}

/**
 * A rule that went over the server's runtime cost limits on this object: over `PerCallLimit` (1,000,000)
 * alone (`limit: "perCall"`), or over what was left of the object's `RuntimeCELCostBudget` (10,000,000,
 * `limit: "budget"`). The API server stops validating there and refuses the object with `causes`.
 *
 * @since 0.2.0
 * @category errors
 */
export class RuleCostExceeded extends Data.TaggedError("RuleCostExceeded")<{
  readonly rule: string
  readonly field: string
  readonly cost: number
  readonly limit: "perCall" | "budget"
  readonly causes: ReadonlyArray<RuleCause>
}> {
  override get message(): string {
    return this.limit === "perCall"
      ? `rule ${JSON.stringify(this.rule)} at ${this.field} costs ${this.cost}, over the per-call limit of 1000000`
      : `rule ${JSON.stringify(this.rule)} at ${this.field} costs ${this.cost}, over the object's remaining cost budget`
  }
}

/**
 * Rules the API server would refuse the CRD for: rules that do not compile, and rules whose estimated cost
 * (times how many times they may run) is over 10,000,000 each or 100,000,000 together. `causes` are the
 * CRD's fields and messages, as its 422 gives them.
 *
 * @since 0.2.0
 * @category errors
 */
export class InvalidRules extends Data.TaggedError("InvalidRules")<{
  readonly causes: ReadonlyArray<RuleCause>
}> {
  override get message(): string {
    return `the CRD's validation rules are refused: ${this.causes.map((c) => `${c.field}: ${c.message}`).join(", ")}`
  }
}

/** Where the rules come from: a CRD (one of its versions), a `CustomResource`, or a version's schema. */
type RuleSource = CustomResourceDefinition | Any | JSONSchemaProps

const schemaOf = (
  source: RuleSource,
  version: string | undefined
): Result.Result<{ schema: JSONSchemaProps; field: string; kind: string }, ValidationError> => {
  if (isCustomResource(source)) {
    return Result.map(versionOf(source, true), (v) => ({
      schema: v.schema?.openAPIV3Schema ?? {},
      field: "spec.validation.openAPIV3Schema",
      kind: `${source.kind}.${source.group}`
    }))
  }
  const crd = source as CustomResourceDefinition
  if (crd.kind === "CustomResourceDefinition" && crd.spec !== undefined) {
    const versions = crd.spec.versions ?? []
    const at = version === undefined ? 0 : versions.findIndex((v) => v.name === version)
    const picked = versions[at]
    if (picked === undefined) return fail(`CustomResourceDefinition ${crd.metadata?.name ?? ""}`, `no version ${version ?? ""}`)
    // versions of one schema are validated as the CRD's spec.validation, as the API server names them
    const first = JSON.stringify(versions[0]?.schema?.openAPIV3Schema)
    const shared = versions.every((v) => JSON.stringify(v.schema?.openAPIV3Schema) === first)
    return Result.succeed({
      schema: picked.schema?.openAPIV3Schema ?? {},
      field: shared ? "spec.validation.openAPIV3Schema" : `spec.versions[${at}].schema.openAPIV3Schema`,
      kind: `${crd.spec.names.kind}.${crd.spec.group}`
    })
  }
  return Result.succeed({ schema: source as JSONSchemaProps, field: "openAPIV3Schema", kind: "object" })
}

/**
 * Runs a CRD's `x-kubernetes-validations` on an object without a server, as kube-apiserver runs them on
 * create (and, with `old`, on update): `self` on each field that has rules, transition rules (`oldSelf`)
 * where an old value correlates, `optionalOldSelf`, `messageExpression`, `reason` and `fieldPath`, on the
 * object with its schema's defaults filled in. It is the engine `FakeCluster` uses, so the fake and this
 * answer alike, with the server's cost limits: the CRD's estimated cost (refused as the server refuses
 * the CRD: InvalidRules) and each rule's runtime cost (RuleCostExceeded). The CEL evaluator is loaded on
 * the first call, so a program that never validates does not carry it; its packages are optional peer
 * dependencies (`npm install @bufbuild/cel @bufbuild/protobuf @bufbuild/re2`; `@effect-kube/testing`
 * brings them), and without them `validate` fails with a `ValidationError` saying so.
 *
 * The runtime cost follows Kubernetes' cost model over the object's sizes; it is an upper bound of cel-go's
 * count where `&&`, `||` or `?:` short-circuit (see docs/custom-resources.md).
 *
 * @example
 * ```ts
 * import { Effect, Schema } from "effect"
 * import { CustomResource } from "effect-kube"
 *
 * const Backends = CustomResource.make({
 *   group: "example.com", version: "v1", kind: "Backend", scope: "Namespaced",
 *   spec: Schema.Struct({ replicas: Schema.Number }).annotate({
 *     "x-kubernetes-validations": [{ rule: "self.replicas <= 10", message: "at most 10 replicas" }]
 *   })
 * })
 *
 * const program = CustomResource.validate(Backends, {
 *   apiVersion: "example.com/v1", kind: "Backend", metadata: { name: "web" }, spec: { replicas: 12 }
 * }).pipe(
 *   Effect.catchTag("RuleViolation", (e) => Effect.succeed(e.causes.map((c) => `${c.field}: ${c.message}`)))
 * )
 * Effect.runPromise(program).then(console.log)
 * // [ 'spec: Invalid value: at most 10 replicas' ]
 * ```
 * @since 0.2.0
 * @category validation
 */
export const validate = (
  source: RuleSource,
  object: unknown,
  options?: { readonly old?: unknown; readonly version?: string }
): Effect.Effect<Validated, RuleViolation | RuleCostExceeded | InvalidRules | ValidationError> =>
  Effect.gen(function*() {
    const { field, kind, schema } = yield* Effect.fromResult(schemaOf(source, options?.version))
    const engine = yield* Effect.promise(() => import("./internal/cel/rules.js"))
    if (!engine.anyRules(schema)) return { warnings: [], cost: 0 }
    // the evaluator's packages are optional peers: a client that never validates does not install them
    const { runtime } = yield* Effect.promise(() => import("./internal/cel/runtime.js"))
    yield* Effect.try({
      try: runtime,
      catch: (cause) =>
        new ValidationError({
          subject: "CustomResource.validate",
          detail: "needs the CEL evaluator's packages, which effect-kube leaves optional: " +
            "npm install @bufbuild/cel @bufbuild/protobuf @bufbuild/re2",
          cause
        })
    })
    const rules = yield* Effect.sync(() => engine.compile(schema, field))
    const invalid: Array<RuleCause> = rules.errors.map((e) => ({
      field: e.field,
      reason: "FieldValueInvalid" as const,
      message: e.detail
    }))
    for (const e of rules.costErrors) invalid.push({ field: e.field, reason: "FieldValueForbidden", message: `Forbidden: ${e.message}` })
    if (invalid.length > 0) return yield* new InvalidRules({ causes: invalid })
    const findings = yield* Effect.sync(() => engine.check(rules, object, options?.old))
    const causes = findings.errors.map((e) => ({ field: e.field, reason: e.reason as RuleCause["reason"], message: e.message }))
    if (findings.exceeded !== undefined) {
      const { cost, field: at, limit, rule } = findings.exceeded
      return yield* new RuleCostExceeded({ rule, field: at, cost, limit, causes })
    }
    const metadata = typeof object === "object" && object !== null ? (object as { metadata?: { name?: unknown } }).metadata : undefined
    if (causes.length > 0) {
      return yield* new RuleViolation({ kind, name: String(metadata?.name ?? ""), causes, warnings: findings.warnings })
    }
    return { warnings: findings.warnings, cost: findings.cost }
  })

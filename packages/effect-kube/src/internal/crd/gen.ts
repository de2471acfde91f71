/**
 * TypeScript modules from CustomResourceDefinitions, as kopium makes Rust types from them: per CRD one
 * module, per served version its Schemas and types (every object of the schema a named struct, its
 * description as TSDoc, its default noted) and a typed `Resource`. The mapping is the built-in kinds' (see
 * scripts/generate.mjs): decoded = JSON, nothing transformed; string enums open (`"A" | "B" | (string & {})`,
 * any string decodes); `x-kubernetes-int-or-string` is `IntOrString`; objects with
 * `x-kubernetes-preserve-unknown-fields` and no properties, or with `additionalProperties`, are records;
 * `nullable` is `| null`; a field with a default may be left out (the server fills it in).
 *
 * The version objects are stored in gets the plain names (`Certificate`, `Certificates`); the other served
 * versions get theirs suffixed (`CertificateV1alpha2`).
 *
 * @internal
 */
import type { JSONSchemaProps } from "../../resources/generated.js"

/** A generated module: its file name (`certificates.cert-manager.io.ts`) and text. @internal */
export interface Module {
  readonly file: string
  readonly source: string
}

/** What `generate` needs besides the CRDs. @internal */
export interface Options {
  /** The module the generated code imports effect-kube from (default `effect-kube`). */
  readonly importFrom?: string | undefined
  /** The command line that generated the modules, for their header. */
  readonly command?: string | undefined
}

/** A CRD that cannot be generated, and why. @internal */
export class GenerateError extends Error {}

interface Crd {
  readonly name: string
  readonly group: string
  readonly kind: string
  readonly plural: string
  readonly namespaced: boolean
  readonly versions: ReadonlyArray<{
    readonly name: string
    readonly storage: boolean
    readonly schema: JSONSchemaProps
    readonly subresources: ReadonlyArray<string>
    readonly deprecationWarning: string | undefined
  }>
}

const isObject = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

const readCrd = (u: unknown): Crd => {
  if (!isObject(u) || u.kind !== "CustomResourceDefinition" || !isObject(u.spec)) {
    throw new GenerateError("not a CustomResourceDefinition")
  }
  const spec = u.spec
  const names = isObject(spec.names) ? spec.names : {}
  const metadata = isObject(u.metadata) ? u.metadata : {}
  if (typeof spec.group !== "string" || typeof names.kind !== "string" || typeof names.plural !== "string") {
    throw new GenerateError(`${String(metadata.name)}: spec.group, spec.names.kind and spec.names.plural are required`)
  }
  const versions = (Array.isArray(spec.versions) ? spec.versions : []).filter(isObject).filter((v) =>
    v.served !== false && typeof v.name === "string"
  ).map((v) => {
    const schema = isObject(v.schema) && isObject(v.schema.openAPIV3Schema)
      ? (v.schema.openAPIV3Schema as JSONSchemaProps)
      : (isObject(spec.validation) && isObject(spec.validation.openAPIV3Schema)
        ? (spec.validation.openAPIV3Schema as JSONSchemaProps)
        : { type: "object", "x-kubernetes-preserve-unknown-fields": true })
    const subresources = isObject(v.subresources) ? Object.keys(v.subresources).filter((s) => s === "status" || s === "scale") : []
    return {
      name: v.name as string,
      storage: v.storage === true,
      schema,
      subresources,
      deprecationWarning: typeof v.deprecationWarning === "string"
        ? v.deprecationWarning
        : v.deprecated === true
        ? `${spec.group as string}/${v.name as string} ${names.kind as string} is deprecated`
        : undefined
    }
  })
  if (versions.length === 0) throw new GenerateError(`${String(metadata.name)}: no served version`)
  return {
    name: typeof metadata.name === "string" ? metadata.name : `${names.plural}.${spec.group}`,
    group: spec.group,
    kind: names.kind,
    plural: names.plural,
    namespaced: spec.scope !== "Cluster",
    versions
  }
}

const pascal = (s: string): string =>
  s.split(/[^A-Za-z0-9]+/).filter((p) => p !== "").map((p) => p.charAt(0).toUpperCase() + p.slice(1)).join("")

const quoteKey = (k: string): string => (/^[A-Za-z_$][A-Za-z0-9_$]*$/.test(k) ? k : JSON.stringify(k))

const docComment = (lines: ReadonlyArray<string>, indent: string): string => {
  const text = lines.flatMap((l) => l.replace(/\*\//g, "*\\/").split("\n")).map((l) => l.trimEnd())
  while (text.length > 0 && text[text.length - 1] === "") text.pop()
  while (text.length > 0 && text[0] === "") text.shift()
  if (text.length === 0) return ""
  if (text.length === 1) return `${indent}/** ${text[0]} */\n`
  return `${indent}/**\n${text.map((l) => (l === "" ? `${indent} *` : `${indent} * ${l}`)).join("\n")}\n${indent} */\n`
}

const docOf = (schema: JSONSchemaProps): Array<string> => {
  const lines: Array<string> = []
  if (schema.description !== undefined) lines.push(schema.description)
  if (schema.default !== undefined) {
    if (lines.length > 0) lines.push("")
    lines.push(`@defaultValue \`${JSON.stringify(schema.default)}\` (filled in by the API server when left out)`)
  }
  return lines
}

/** The names the generated module imports: a definition must not take one. */
const taken = new Set(["Schema", "Resource", "CustomResource", "ObjectMeta", "IntOrString"])

interface Mapped {
  readonly ts: string
  readonly rt: string
}

/** The definitions of one module, in the order they must be written (a struct after the structs it uses). */
class Definitions {
  private readonly names = new Set<string>(taken)
  readonly out: Array<string> = []

  name(hint: string): string {
    let name = /^[0-9]/.test(hint) ? `_${hint}` : hint
    if (this.names.has(name)) {
      let i = 2
      while (this.names.has(`${name}${i}`)) i++
      name = `${name}${i}`
    }
    this.names.add(name)
    return name
  }

  /** The TypeScript type and the Schema of a node; objects with properties become named structs. */
  map(schema: JSONSchemaProps | undefined, hint: string): Mapped {
    if (schema === undefined) return { ts: "unknown", rt: "Schema.Unknown" }
    const base = this.mapType(schema, hint)
    return schema.nullable === true ? { ts: `${base.ts} | null`, rt: `Schema.NullOr(${base.rt})` } : base
  }

  private mapType(schema: JSONSchemaProps, hint: string): Mapped {
    if (schema["x-kubernetes-int-or-string"] === true) return { ts: "IntOrString", rt: "IntOrString" }
    switch (schema.type) {
      case "string": {
        const values = (schema.enum ?? []).filter((v): v is string => typeof v === "string")
        if (values.length === 0) return { ts: "string", rt: "Schema.String" }
        const literals = values.map((v) => JSON.stringify(v))
        return {
          ts: `${literals.join(" | ")} | (string & {})`,
          rt: `CustomResource.openEnum(${literals.join(", ")})`
        }
      }
      case "integer":
      case "number":
        return { ts: "number", rt: "Schema.Number" }
      case "boolean":
        return { ts: "boolean", rt: "Schema.Boolean" }
      case "array": {
        const item = this.map(schema.items as JSONSchemaProps | undefined, hint)
        return { ts: `ReadonlyArray<${item.ts}>`, rt: `Schema.Array(${item.rt})` }
      }
      case "object": {
        const properties = schema.properties ?? {}
        if (Object.keys(properties).length > 0) return this.struct(schema, hint)
        const additional = schema.additionalProperties
        if (isObject(additional)) {
          const value = this.map(additional as JSONSchemaProps, hint)
          return { ts: `{ readonly [key: string]: ${value.ts} }`, rt: `Schema.Record(Schema.String, ${value.rt})` }
        }
        return { ts: "{ readonly [key: string]: unknown }", rt: "Schema.Record(Schema.String, Schema.Unknown)" }
      }
      default:
        return { ts: "unknown", rt: "Schema.Unknown" }
    }
  }

  /** A struct: `overrides` replaces the mapping of some properties (the root's apiVersion, kind, metadata). */
  struct(
    schema: JSONSchemaProps,
    hint: string,
    overrides: Readonly<Record<string, Mapped & { readonly optional: boolean }>> = {},
    doc: ReadonlyArray<string> = docOf(schema)
  ): Mapped {
    const name = this.name(hint)
    const required = new Set(schema.required ?? [])
    const fields: Array<{ key: string; doc: Array<string>; optional: boolean; mapped: Mapped }> = []
    for (const [key, property] of Object.entries(schema.properties ?? {})) {
      const override = overrides[key]
      if (override !== undefined) {
        fields.push({ key, doc: docOf(property), optional: override.optional, mapped: override })
        continue
      }
      fields.push({
        key,
        doc: docOf(property),
        optional: !required.has(key) || property.default !== undefined,
        mapped: this.map(property, `${name}${pascal(key)}`)
      })
    }
    for (const [key, override] of Object.entries(overrides)) {
      if (schema.properties?.[key] === undefined) fields.push({ key, doc: [], optional: override.optional, mapped: override })
    }
    let text = docComment(doc, "")
    text += `export interface ${name} {\n`
    for (const f of fields) {
      text += docComment(f.doc, "  ")
      text += `  readonly ${quoteKey(f.key)}${f.optional ? "?" : ""}: ${f.mapped.ts}${f.optional ? " | undefined" : ""}\n`
    }
    text += "}\n\n"
    text += `/** The Schema of {@link ${name}}. */\n`
    text += `export const ${name}: Schema.Codec<${name}> = Schema.Struct({\n`
    text += fields.map((f) => `  ${quoteKey(f.key)}: ${f.optional ? `Schema.optional(${f.mapped.rt})` : f.mapped.rt}`).join(",\n")
    text += "\n})\n"
    this.out.push(text)
    return { ts: name, rt: name }
  }
}

/** The plural a Resource is named by: the kind with the plural's ending (`HTTPRoute`, `httproutes`: `HTTPRoutes`). */
const resourceName = (kind: string, plural: string): string => {
  let i = 0
  while (i < kind.length && i < plural.length && kind[i]!.toLowerCase() === plural[i]) i++
  const name = kind.slice(0, i) + plural.slice(i)
  return name === kind ? `${kind}Resource` : name
}

const generateOne = (crd: Crd, options: Options): Module => {
  const from = options.importFrom ?? "effect-kube"
  const preferred = crd.versions.find((v) => v.storage) ?? crd.versions[0]!
  const defs = new Definitions()
  const resources: Array<string> = []
  for (const version of [preferred, ...crd.versions.filter((v) => v !== preferred)]) {
    const suffix = version === preferred ? "" : pascal(version.name)
    const apiVersion = `${crd.group}/${version.name}`
    const envelope = {
      apiVersion: { ts: "string", rt: "Schema.String", optional: true },
      kind: { ts: "string", rt: "Schema.String", optional: true },
      metadata: { ts: "ObjectMeta", rt: "ObjectMeta", optional: true }
    }
    const root = version.schema.properties === undefined
      ? { ...version.schema, type: "object", properties: {} }
      : version.schema
    const object = defs.struct(root, `${crd.kind}${suffix}`, envelope, [
      ...(root.description !== undefined ? [root.description, ""] : []),
      `A ${crd.kind} (\`${apiVersion}\`).`
    ])
    const name = `${resourceName(crd.kind, crd.plural)}${suffix}`
    const subresources = version.subresources.length > 0
      ? `  subresources: [${version.subresources.map((s) => JSON.stringify(s)).join(", ")}],\n`
      : ""
    resources.push(
      docComment([
        `${crd.kind} objects: \`${apiVersion}\`, ${crd.namespaced ? "namespaced" : "cluster-scoped"}, plural \`${crd.plural}\`` +
        (version.subresources.length > 0 ? `; subresources ${version.subresources.map((s) => `\`${s}\``).join(", ")}` : "") + ".",
        ...(version.deprecationWarning !== undefined ? ["", `@deprecated ${version.deprecationWarning}`] : [])
      ], "") +
        `export const ${name} = Resource.make({\n` +
        `  apiVersion: ${JSON.stringify(apiVersion)},\n` +
        `  kind: ${JSON.stringify(crd.kind)},\n` +
        `  plural: ${JSON.stringify(crd.plural)},\n` +
        `  namespaced: ${crd.namespaced},\n` +
        subresources +
        `  schema: ${object.rt}\n})\n`
    )
  }
  const body = [...defs.out, ...resources].join("\n")
  const uses = (name: string) => new RegExp(`\\b${name}\\b`).test(body)
  const imports = ["CustomResource", "IntOrString", "ObjectMeta", "Resource"].filter(uses)
  const header = `// Generated by effect-kube crd-gen from the CustomResourceDefinition ${crd.name}` +
    (options.command !== undefined ? ` (${options.command})` : "") + ". Do not edit.\n"
  const source = header +
    docComment([`${crd.kind} (\`${crd.group}\`): ${crd.versions.map((v) => v.name).join(", ")}.`], "") +
    `import * as Schema from "effect/Schema"\n` +
    `import { ${imports.join(", ")} } from ${JSON.stringify(from)}\n\n` +
    body
  return { file: `${crd.name}.ts`, source }
}

/** The modules of some CRDs, one each, or a GenerateError naming the CRD at fault. @internal */
export const generate = (crds: ReadonlyArray<unknown>, options: Options = {}): ReadonlyArray<Module> =>
  crds.map((u) => generateOne(readCrd(u), options))

/**
 * Writes packages/testing/src/internal/protocols/protobuf/schema.ts: the protobuf layout of the built-in kinds
 * kubectl's typed clients send (`Content-Type: application/vnd.kubernetes.protobuf`), read
 * from the Go types of k8s.io/api and k8s.io/apimachinery: for each struct, each field's
 * JSON name and options (omitempty, omitzero, a pointer), protobuf number and wire type, and
 * what it holds. The fake decodes such request bodies into the JSON the API server would
 * have stored.
 *
 *   node scripts/generate-protobuf.mjs <k8s.io/api checkout> <k8s.io/apimachinery checkout>
 *
 * (both at the tag of the OpenAPI spec in spec/kubernetes/). Only the structs reachable from
 * the kinds of the group versions below are written.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const [apiDir, machineryDir] = process.argv.slice(2)
if (apiDir === undefined || machineryDir === undefined) {
  console.error("usage: node scripts/generate-protobuf.mjs <k8s.io/api dir> <k8s.io/apimachinery dir>")
  process.exit(2)
}

/** The group versions whose kinds are roots (kubectl's typed commands use these). */
const roots = [
  "core/v1",
  "apps/v1",
  "batch/v1",
  "rbac/v1",
  "networking/v1",
  "policy/v1",
  "scheduling/v1",
  "authentication/v1",
  "authorization/v1",
  "coordination/v1",
  "autoscaling/v1",
  "autoscaling/v2",
  "storage/v1",
  "certificates/v1",
  "discovery/v1",
  "events/v1",
  "node/v1"
]

/** Types the decoder reads itself (their layout is fixed by apimachinery). */
const special = new Set([
  "meta/v1.Time",
  "meta/v1.MicroTime",
  "meta/v1.Duration",
  "meta/v1.FieldsV1",
  "resource.Quantity",
  "intstr.IntOrString",
  "runtime.RawExtension"
])

const importToPackage = (importPath) => {
  if (importPath.startsWith("k8s.io/api/")) return importPath.slice("k8s.io/api/".length)
  const machinery = {
    "k8s.io/apimachinery/pkg/apis/meta/v1": "meta/v1",
    "k8s.io/apimachinery/pkg/api/resource": "resource",
    "k8s.io/apimachinery/pkg/util/intstr": "intstr",
    "k8s.io/apimachinery/pkg/runtime": "runtime",
    "k8s.io/apimachinery/pkg/types": "types"
  }
  return machinery[importPath]
}

const packageDirs = new Map([
  ["meta/v1", path.join(machineryDir, "pkg/apis/meta/v1")],
  ["types", path.join(machineryDir, "pkg/types")]
])

/** pkg -> name -> { kind: "struct", fields } | { kind: "alias", type } */
const packages = new Map()

const loadPackage = (pkg) => {
  if (packages.has(pkg)) return packages.get(pkg)
  const dir = packageDirs.get(pkg) ?? path.join(apiDir, pkg)
  const types = new Map()
  packages.set(pkg, types)
  if (!fs.existsSync(dir)) return types
  for (const file of fs.readdirSync(dir).filter((f) => f.endsWith(".go") && !f.endsWith("_test.go"))) {
    const text = fs.readFileSync(path.join(dir, file), "utf8")
    const imports = new Map()
    for (const m of text.matchAll(/^\s*(?:(\w+)\s+)?"(k8s\.io\/[^"]+)"/gm)) {
      const alias = m[1] ?? m[2].split("/").pop()
      imports.set(alias, importToPackage(m[2]))
    }
    for (const m of text.matchAll(/^type (\w+) struct \{\n([\s\S]*?)^\}/gm)) {
      const fields = []
      for (const line of m[2].split("\n")) {
        const f = /^\t(?:(\w+)\s+)?([^\s`]+)\s+`([^`]*)`/.exec(line)
        if (f === null) continue
        fields.push({ goName: f[1], type: f[2], tags: f[3], imports })
      }
      types.set(m[1], { kind: "struct", fields, imports })
    }
    for (const m of text.matchAll(/^type (\w+) ([^\s{][^\n]*)$/gm)) {
      if (m[2].startsWith("struct") || m[2].startsWith("interface") || m[2].startsWith("func")) continue
      if (!types.has(m[1])) types.set(m[1], { kind: "alias", type: m[2].trim(), imports })
    }
  }
  return types
}

const tag = (tags, name) => new RegExp(`(?:^|\\s)${name}:"([^"]*)"`).exec(tags)?.[1]

/** A Go type expression as what the decoder needs: `{ pointer, repeated, map, kind, ref }`. */
const resolve = (expr, pkg, imports) => {
  let pointer = false
  let repeated = false
  let t = expr
  if (t.startsWith("*")) {
    pointer = true
    t = t.slice(1)
  }
  if (t === "[]byte") return { pointer, repeated, kind: "y" }
  if (t.startsWith("[]")) {
    repeated = true
    t = t.slice(2)
    if (t.startsWith("*")) t = t.slice(1)
  }
  const map = /^map\[([^\]]+)\](.+)$/.exec(t)
  if (map !== null) {
    const value = resolve(map[2], pkg, imports)
    return { pointer, repeated, kind: "map", value }
  }
  const scalar = { string: "s", int32: "i", int64: "i", uint32: "i", uint64: "i", int: "i", uint16: "i", bool: "b", float64: "f", float32: "f" }
  if (scalar[t] !== undefined) return { pointer, repeated, kind: scalar[t] }
  let target = pkg
  let name = t
  const dot = t.indexOf(".")
  if (dot !== -1) {
    target = imports.get(t.slice(0, dot))
    name = t.slice(dot + 1)
    if (target === undefined) throw new Error(`unknown package of ${t} in ${pkg}`)
  }
  const ref = `${target}.${name}`
  if (special.has(ref)) return { pointer, repeated, kind: "m", ref }
  const decl = loadPackage(target).get(name)
  if (decl === undefined) throw new Error(`${ref} is not declared`)
  if (decl.kind === "alias") {
    const inner = resolve(decl.type, target, decl.imports)
    return { ...inner, pointer: pointer || inner.pointer, repeated: repeated || inner.repeated }
  }
  return { pointer, repeated, kind: "m", ref }
}

const wanted = new Set()
const queue = []
const want = (ref) => {
  if (special.has(ref) || wanted.has(ref)) return
  wanted.add(ref)
  queue.push(ref)
}

for (const pkg of roots) {
  for (const [name, decl] of loadPackage(pkg)) {
    if (decl.kind !== "struct" || name.endsWith("List")) continue
    if (decl.fields.some((f) => f.goName === undefined && f.type === "metav1.TypeMeta")) want(`${pkg}.${name}`)
  }
}

const out = {}
while (queue.length > 0) {
  const ref = queue.shift()
  const dot = ref.lastIndexOf(".")
  const pkg = ref.slice(0, dot)
  const decl = loadPackage(pkg).get(ref.slice(dot + 1))
  const encoded = []
  for (const field of decl.fields) {
    const proto = tag(field.tags, "protobuf")
    if (proto === undefined) continue
    const [, number] = proto.split(",")
    const json = tag(field.tags, "json") ?? ""
    const [jsonName, ...options] = json.split(",")
    const type = resolve(field.type, pkg, field.imports)
    const flags = [
      type.pointer ? "p" : "",
      type.repeated ? "r" : "",
      options.includes("omitempty") ? "o" : "",
      options.includes("omitzero") ? "z" : ""
    ].join("")
    const what = (t) => {
      if (t.kind === "m") {
        want(t.ref)
        return t.ref
      }
      if (t.kind === "map") return `{${what(t.value)}${t.value.repeated ? "[]" : ""}}`
      return t.kind
    }
    encoded.push(`${jsonName || field.goName}:${number}:${what(type)}:${flags}`)
  }
  out[ref] = encoded.join(" ")
}

const lines = Object.keys(out).sort().map((k) => `  ${JSON.stringify(k)}: ${JSON.stringify(out[k])}`)
fs.writeFileSync(
  path.join(root, "packages/testing/src/internal/protocols/protobuf/schema.ts"),
  `/**
 * The protobuf layout of the built-in kinds' Go types (k8s.io/api, k8s.io/apimachinery at the
 * spec's tag), as scripts/generate-protobuf.mjs reads them: do not edit. Each struct is its
 * fields, space-separated, each \`json:number:type:flags\` where type is s (string), i (an
 * integer), b (bool), f (float), y (bytes), a struct's \`package.Name\`, or \`{type}\` for a map
 * of string keys; flags p (a pointer), r (repeated), o (omitempty), z (omitzero).
 *
 * @internal
 */

/** @internal */
export const schema: Readonly<Record<string, string>> = {
${lines.join(",\n")}
}
`
)
console.log(`${Object.keys(out).length} structs`)

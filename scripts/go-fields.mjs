/**
 * What the OpenAPI spec does not say of the built-in types and the fake's decoder needs: which fields are Go pointers
 * and which carry `omitempty` (or `omitzero`), read from the Go sources of k8s.io/api, apimachinery's meta/v1,
 * apiextensions-apiserver and kube-aggregator at the spec's release. The result, scripts/go-fields.json, is committed
 * beside the spec and read by scripts/generate.mjs (the generator needs no Go); run this again for another release:
 *
 *   node scripts/go-fields.mjs [GOMODCACHE]      (default: $GOMODCACHE, else ~/go/pkg/mod)
 *
 * Per struct (`apps.v1.DeploymentSpec`), per JSON field: `p` a pointer, `o` omitempty, `z` omitzero.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const cache = process.argv[2] ?? process.env.GOMODCACHE ?? path.join(os.homedir(), "go", "pkg", "mod")
const version = "v0.35.4"
const k8s = path.join(cache, "k8s.io")

/** [directory, the key prefix the generator's short definition names use] */
const dirs = []
const api = path.join(k8s, `api@${version}`)
for (const group of fs.readdirSync(api)) {
  const g = path.join(api, group)
  if (!fs.statSync(g).isDirectory()) continue
  for (const v of fs.readdirSync(g)) {
    if (/^v\d/.test(v) && fs.statSync(path.join(g, v)).isDirectory()) dirs.push([path.join(g, v), `${group}.${v}`])
  }
}
dirs.push([path.join(k8s, `apimachinery@${version}`, "pkg/apis/meta/v1"), "meta.v1"])
dirs.push([path.join(k8s, `apiextensions-apiserver@${version}`, "pkg/apis/apiextensions/v1"), "apiextensions.v1"])
dirs.push([path.join(k8s, `kube-aggregator@${version}`, "pkg/apis/apiregistration/v1"), "apiregistration.v1"])

const out = {}
const inlines = {}
for (const [dir, prefix] of dirs) {
  for (const file of fs.readdirSync(dir).sort()) {
    if (!file.endsWith(".go") || file.endsWith("_test.go") || file.startsWith("zz_generated") || file.startsWith("generated")) continue
    const text = fs.readFileSync(path.join(dir, file), "utf8")
    const structRe = /^type (\w+) struct \{\n([\s\S]*?)^\}/gm
    for (const m of text.matchAll(structRe)) {
      const fields = {}
      for (const line of m[2].split("\n")) {
        // a named field (`Replicas *int32 \`json:...\``) or an embedded one (`RuleWithOperations \`json:",inline"\``)
        const f = /^\s+\w+\s+(\S+)\s+`[^`]*json:"([^"]*)"/.exec(line) ?? /^\s+()(\*?[\w.]+)\s+`[^`]*json:"([^"]*)"/.exec(line)?.slice(1)
        if (f == null) continue
        const [name, ...opts] = f[2].split(",")
        if (name === "" && opts.includes("inline")) {
          // an embedded struct's fields are the struct's own (`RuleWithOperations`, `LocalObjectReference`)
          const type = f[1].replace(/^\*/, "")
          ;(inlines[`${prefix}.${m[1]}`] ??= []).push(type.includes(".") ? `${type.startsWith("metav1.") ? "meta.v1" : prefix}.${type.slice(type.indexOf(".") + 1)}` : `${prefix}.${type}`)
          continue
        }
        if (name === "" || name === "-") continue
        const flags = (f[1].startsWith("*") ? "p" : "") + (opts.includes("omitempty") ? "o" : "") + (opts.includes("omitzero") ? "z" : "")
        fields[name] = flags
      }
      out[`${prefix}.${m[1]}`] = fields
    }
  }
}
const flatten = (key, seen = new Set()) => {
  if (seen.has(key)) return out[key] ?? {}
  seen.add(key)
  for (const inner of inlines[key] ?? []) out[key] = { ...flatten(inner, seen), ...out[key] }
  delete inlines[key]
  return out[key] ?? {}
}
for (const key of Object.keys(inlines)) flatten(key)
const sorted = Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.localeCompare(b)))
fs.writeFileSync(path.join(root, "scripts", "go-fields.json"), `${JSON.stringify(sorted, null, 0).replace(/\},"/g, "},\n\"")}\n`)
console.log(`go-fields: ${Object.keys(sorted).length} structs from ${dirs.length} packages`)

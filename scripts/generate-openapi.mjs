// Writes the OpenAPI v2 spec that FakeCluster serves (/openapi/v2, and the schemas of /openapi/v3) as a
// compact gzipped asset beside the module that reads it: the 4 MB spec minified and gzipped is ~0.3 MB in the
// published package, and the fake reads it only on the first openapi request.
import { readFileSync, writeFileSync } from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { gzipSync } from "node:zlib"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const spec = JSON.parse(readFileSync(path.join(root, "spec/kubernetes/swagger-v1.35.0.json"), "utf8"))
const out = path.join(root, "packages/testing/src/internal/discovery/openapi-v1.35.0.json.gz")
// gzip's header carries no time here (mtime 0), so the asset is the same bytes on every run
writeFileSync(out, gzipSync(JSON.stringify(spec), { level: 9 }))
console.log(`wrote ${path.relative(root, out)}`)

// Builds each package's dist/esm (ES modules with their declarations) from its src: the client
// (packages/effect-kube) first, then the fake (packages/testing), which is compiled against the
// client's declarations as a published install sees them. There is no CommonJS build: effect 4,
// which every module here imports, is published as ES modules only, and Node 22's require(esm)
// loads the ES build for `require("effect-kube")` callers.
import { execFileSync } from "node:child_process"
import { chmodSync, copyFileSync, rmSync, writeFileSync } from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const tsc = path.join(root, "node_modules/typescript/bin/tsc")

for (const name of ["effect-kube", "testing"]) {
  const dir = path.join(root, "packages", name)
  rmSync(path.join(dir, "dist"), { recursive: true, force: true })
  execFileSync(process.execPath, [tsc, "-p", path.join(dir, "tsconfig.json")], { stdio: "inherit" })
  writeFileSync(path.join(dir, "dist/esm/package.json"), JSON.stringify({ type: "module" }) + "\n")
  // what npm pack takes from the package's own directory (copies, ignored by git)
  copyFileSync(path.join(root, "LICENSE"), path.join(dir, "LICENSE"))
}
// the OpenAPI spec FakeCluster serves, which its dist module reads beside itself (tsc copies no data files)
copyFileSync(
  path.join(root, "packages/testing/src/internal/discovery/openapi-v1.35.0.json.gz"),
  path.join(root, "packages/testing/dist/esm/internal/discovery/openapi-v1.35.0.json.gz")
)
copyFileSync(path.join(root, "README.md"), path.join(root, "packages/effect-kube/README.md"))
// `npx effect-kube` and the installed bin run the file itself: tsc writes it without its run bit
chmodSync(path.join(root, "packages/effect-kube/dist/esm/bin/effect-kube.js"), 0o755)

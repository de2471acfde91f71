// Builds dist/esm (ES modules with their declarations) from src. There is no CommonJS build:
// effect 4, which every module here imports, is published as ES modules only, and Node 22's
// require(esm) loads the ES build for `require("effect-kube")` callers.
import { execFileSync } from "node:child_process"
import { rmSync, writeFileSync } from "node:fs"

rmSync("dist", { recursive: true, force: true })
execFileSync(process.execPath, ["node_modules/typescript/bin/tsc", "-p", "tsconfig.json"], { stdio: "inherit" })
writeFileSync("dist/esm/package.json", JSON.stringify({ type: "module" }) + "\n")

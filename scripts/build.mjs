// Builds ESM (dist/esm) and CommonJS (dist/cjs) from the same sources, so that both
// `import` and `require` users get the package with its declarations.
import { execFileSync } from "node:child_process"
import { mkdirSync, rmSync, writeFileSync } from "node:fs"

rmSync("dist", { recursive: true, force: true })
const tsc = (project) => execFileSync(process.execPath, ["node_modules/typescript/bin/tsc", "-p", project], { stdio: "inherit" })
tsc("tsconfig.json")
tsc("tsconfig.cjs.json")
mkdirSync("dist/cjs", { recursive: true })
writeFileSync("dist/cjs/package.json", JSON.stringify({ type: "commonjs" }) + "\n")
writeFileSync("dist/esm/package.json", JSON.stringify({ type: "module" }) + "\n")

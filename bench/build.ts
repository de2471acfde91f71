/**
 * The build the benchmarks measure where users get it (`dist/esm`: cold start, bundle size),
 * made again when any file of `src` is newer than it: a stale build would measure old code.
 */
import { execFileSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

const root = Path.join(Path.dirname(fileURLToPath(import.meta.url)), "..")

const newestIn = (dir: string): number => {
  let newest = 0
  for (const entry of Fs.readdirSync(dir, { withFileTypes: true })) {
    const path = Path.join(dir, entry.name)
    newest = Math.max(newest, entry.isDirectory() ? newestIn(path) : Fs.statSync(path).mtimeMs)
  }
  return newest
}

/** Runs `npm run build` unless `dist/esm` was built after the last change to `src`. */
export const ensureBuild = (): void => {
  // scripts/build.mjs writes dist/esm/package.json last
  const stamp = Path.join(root, "packages", "effect-kube", "dist", "esm", "package.json")
  if (Fs.existsSync(stamp) && Fs.statSync(stamp).mtimeMs > newestIn(Path.join(root, "packages", "effect-kube", "src"))) return
  execFileSync("npm", ["run", "build"], { cwd: root, stdio: ["ignore", process.stderr, "inherit"] })
}

/**
 * The README's Install section, tried as a new user tries it: packs the repository's packages
 * that the section's `npm install` lines name (`effect-kube`, `@effect-kube/testing`: the
 * workspace's packages, found from the root package.json's `workspaces`, or the root package
 * alone), runs those lines in an empty project (our packages from their tarballs, every other
 * package from the registry), then type-checks the section's program and test under strict
 * TypeScript, runs the program and runs the test with vitest.
 *
 *   node scripts/check-install.mjs      (needs a build: npm run build)
 *
 * Fails when a line no longer installs, the versions it names do not work together, or the
 * program or the test no longer compiles or passes.
 */
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const readme = fs.readFileSync(path.join(root, "README.md"), "utf8")

const section = (() => {
  const start = readme.indexOf("\n## Install\n")
  if (start === -1) throw new Error("check-install: README.md has no '## Install' section")
  const end = readme.indexOf("\n## ", start + 1)
  return readme.slice(start, end === -1 ? undefined : end)
})()

const blocks = (lang) => [...section.matchAll(new RegExp("```" + lang + "\\n([\\s\\S]*?)```", "g"))].map((m) => m[1])
const installLines = blocks("sh")[0]?.split("\n").map((line) => line.replace(/#.*$/, "").trim()).filter(Boolean) ?? []
const [program, testFile] = blocks("ts")
if (installLines.length === 0 || program === undefined || testFile === undefined) {
  throw new Error("check-install: the Install section needs a sh block of npm lines, a program and a test")
}

const run = (command, args, cwd) => {
  console.log(`$ ${[command, ...args].join(" ")}`)
  return execFileSync(command, args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] })
}

const manifestOf = (dir) => JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8"))
const rootManifest = manifestOf(root)

/** The directories of the repository's packages: each `workspaces` entry (`dir` or `dir/*`), or the root alone. */
const packageDirs = (() => {
  const workspaces = Array.isArray(rootManifest.workspaces) ? rootManifest.workspaces : rootManifest.workspaces?.packages
  if (workspaces === undefined) return [root]
  return workspaces.flatMap((entry) => {
    if (!entry.endsWith("/*")) return [path.join(root, entry)]
    const parent = path.join(root, entry.slice(0, -2))
    return fs.readdirSync(parent).map((name) => path.join(parent, name))
  }).filter((dir) => fs.existsSync(path.join(dir, "package.json")))
})()
/** Our packages by name, and their manifests. */
const ours = new Map(packageDirs.map((dir) => [manifestOf(dir).name, dir]))

/** A package name as an install line writes it, without a version (`effect@^4.1.0` is `effect`). */
const nameOf = (word) => word.replace(/(.)@.*$/, "$1")

const project = fs.mkdtempSync(path.join(os.tmpdir(), "effect-kube-install-"))
try {
  const tarballs = new Map()
  const tarballOf = (name) => {
    if (!tarballs.has(name)) {
      const [packed] = JSON.parse(run("npm", ["pack", "--json", "--ignore-scripts", "--pack-destination", project], ours.get(name)))
      tarballs.set(name, path.join(project, packed.filename))
    }
    return tarballs.get(name)
  }
  fs.writeFileSync(path.join(project, "package.json"), JSON.stringify({ name: "first-program", type: "module" }))

  for (const line of installLines) {
    const words = line.split(/\s+/)
    if (words[0] !== "npm" || words[1] !== "install") throw new Error(`check-install: not an npm install line: ${line}`)
    const args = words.slice(1).map((word) => {
      const name = nameOf(word)
      if (ours.has(name)) return tarballOf(name)
      if (name === "effect-kube" || name.startsWith("@effect-kube/")) {
        throw new Error(`check-install: README.md installs ${name}, which no package of this repository is`)
      }
      return word
    })
    run("npm", [...args, "--no-audit", "--no-fund"], project)
  }
  // What a TypeScript project has anyway; the versions the repository itself is checked with.
  const own = [rootManifest, ...packageDirs.map(manifestOf)].find((m) => m.devDependencies?.typescript !== undefined)
    .devDependencies
  run("npm", ["install", "--save-dev", `typescript@${own.typescript}`, `@types/node@${own["@types/node"]}`, "--no-audit", "--no-fund"], project)

  fs.writeFileSync(path.join(project, "main.ts"), program)
  fs.writeFileSync(path.join(project, "first.test.ts"), testFile)
  fs.writeFileSync(
    path.join(project, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        exactOptionalPropertyTypes: true,
        noUncheckedIndexedAccess: true,
        module: "NodeNext",
        moduleResolution: "NodeNext",
        target: "ES2022",
        types: ["node"],
        outDir: "out"
      },
      include: ["main.ts", "first.test.ts"]
    })
  )
  run(path.join(project, "node_modules/.bin/tsc"), ["-p", "tsconfig.json"], project)
  const printed = run(process.execPath, [path.join(project, "out/main.js")], project)
  process.stdout.write(printed)
  if (printed.trim() === "") throw new Error("check-install: the program printed nothing")
  run(path.join(project, "node_modules/.bin/vitest"), ["run", "first.test.ts"], project)
  console.log("check-install: the README's install lines give a program and a test that type-check and pass")
} finally {
  fs.rmSync(project, { recursive: true, force: true })
}

/**
 * The README's Install section, tried as a new user tries it: packs both packages of the
 * workspace (the client, effect-kube, and the fake, @effect-kube/testing), runs the section's
 * `npm install` lines in an empty project (the two packages from their tarballs, every other
 * package from the registry), then type-checks the section's program and test under strict
 * TypeScript, runs the program and runs the test with vitest. It also checks what the client
 * brings into a production install: none of the fake's CEL, protobuf or RE2 packages, and its
 * bin with its run bit. The packs start with no dist/, as from a fresh clone: the build is the
 * packages' prepack.
 *
 *   node scripts/check-install.mjs      (builds both packages itself, in the client's prepack)
 *
 * Fails when a line no longer installs, the versions it names do not work together, the
 * client's install carries a package of the fake's, or the program or the test no longer
 * compiles or passes.
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

const project = fs.mkdtempSync(path.join(os.tmpdir(), "effect-kube-install-"))

// With effect-kube alone (its CEL packages are optional peers, not installed), CustomResource.validate of an object
// with rules fails with the ValidationError that names what to install, not a crash.
const validateWithoutCel = () => {
  fs.writeFileSync(
    path.join(project, "validate.mjs"),
    [
      `import { Effect, Schema } from "effect"`,
      `import { CustomResource } from "effect-kube"`,
      `const Backends = CustomResource.make({ group: "example.com", version: "v1", kind: "Backend", scope: "Namespaced",`,
      `  spec: Schema.Struct({ replicas: Schema.Number }).annotate({ "x-kubernetes-validations": [{ rule: "self.replicas <= 10" }] }) })`,
      `const object = { apiVersion: "example.com/v1", kind: "Backend", metadata: { name: "web" }, spec: { replicas: 12 } }`,
      `const error = await Effect.runPromise(Effect.flip(CustomResource.validate(Backends, object)))`,
      `console.log(error._tag + ": " + error.message)`
    ].join("\n")
  )
  const said = run(process.execPath, ["validate.mjs"], project).trim()
  if (!said.startsWith("ValidationError: ") || !said.includes("npm install @bufbuild/cel @bufbuild/protobuf @bufbuild/re2")) {
    throw new Error(`check-install: CustomResource.validate without the CEL packages said ${said || "(nothing)"}`)
  }
  console.log(`check-install: without the CEL packages validate says ${said}`)
}
try {
  // As from a clone that was never built: no dist/ in either package, so the client's pack
  // builds both in its prepack (the fake's own prepack would do the same; it is skipped as
  // redundant), and each tarball must hold its dist/ (issue 41.5: a pack without a build gave
  // a tarball that installs and then fails with ERR_MODULE_NOT_FOUND).
  for (const name of ["effect-kube", "testing"]) fs.rmSync(path.join(root, "packages", name, "dist"), { recursive: true, force: true })
  const pack = (name, scripts) => {
    const [packed] = JSON.parse(
      run(
        "npm",
        ["pack", "--json", ...(scripts ? [] : ["--ignore-scripts"]), "--pack-destination", project],
        path.join(root, "packages", name)
      ).replace(/^[\s\S]*?^(?=\[)/m, "") // prepack's output comes before the JSON
    )
    if (!packed.files.some((file) => file.path === "dist/esm/index.js")) {
      throw new Error(`check-install: the ${name} tarball has no dist/esm/index.js: is its prepack the build?`)
    }
    return path.join(project, packed.filename)
  }
  const tarballs = new Map([["effect-kube", pack("effect-kube", true)], ["@effect-kube/testing", pack("testing", false)]])
  fs.writeFileSync(path.join(project, "package.json"), JSON.stringify({ name: "first-program", type: "module" }))

  for (const [index, line] of installLines.entries()) {
    const words = line.split(/\s+/)
    if (words[0] !== "npm" || words[1] !== "install") throw new Error(`check-install: not an npm install line: ${line}`)
    run("npm", [...words.slice(1).map((word) => (tarballs.get(word) ?? word)), "--no-audit", "--no-fund"], project)
    if (index === 0) validateWithoutCel()
  }
  // The client's install holds none of the fake's packages (its CEL, protobuf and RE2), however
  // deep: the packages effect-kube needs, followed through the project's lockfile (the CEL ones are
  // effect-kube's optional peers, which its install leaves out: checked above, before the fake's install).
  const lock = JSON.parse(fs.readFileSync(path.join(project, "package-lock.json"), "utf8")).packages
  const needed = new Set()
  const follow = (at) => {
    if (needed.has(at)) return
    needed.add(at)
    const entry = lock[at]
    // an optional peer (effect-kube's CEL packages) is the user's choice, not part of the install
    const optionalPeers = new Set(Object.keys(entry?.peerDependenciesMeta ?? {}).filter((name) => entry.peerDependenciesMeta[name].optional))
    const names = Object.keys({ ...entry?.dependencies, ...entry?.peerDependencies, ...entry?.optionalDependencies })
    for (const name of names.filter((name) => !optionalPeers.has(name))) {
      // a package's own node_modules first, then each parent's, as Node resolves
      for (let dir = at; ; dir = dir.slice(0, Math.max(0, dir.lastIndexOf("/node_modules/")))) {
        const candidate = `${dir === "" ? "" : `${dir}/`}node_modules/${name}`
        if (lock[candidate] !== undefined) {
          follow(candidate)
          break
        }
        if (dir === "") break
      }
    }
  }
  follow("node_modules/effect-kube")
  const fakeOnly = [...needed].filter((at) => /node_modules\/@bufbuild\//.test(at))
  if (needed.size < 2 || fakeOnly.length > 0) {
    throw new Error(`check-install: effect-kube's install needs the fake's packages: ${fakeOnly.join(", ") || "(none found at all)"}`)
  }
  const bin = path.join(project, "node_modules/effect-kube/dist/esm/bin/effect-kube.js")
  if ((fs.statSync(bin).mode & 0o111) === 0) throw new Error(`check-install: ${bin} is not executable`)
  console.log(`check-install: effect-kube needs ${needed.size - 1} packages, none of the fake's; its bin is executable`)

  // What a TypeScript project has anyway; the versions the repository itself is checked with.
  const own = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")).devDependencies
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

  // The section quotes what TypeScript says of the program without its layer: it still does.
  const [missingLayerMessage] = blocks("text")
  const withoutLayer = program.replace(/\.pipe\(Effect\.provide\([^\n]*\)\)\)$/m, ")")
  if (missingLayerMessage === undefined || withoutLayer === program) {
    throw new Error("check-install: the Install section needs the program's Effect.provide line and a text block of the error without it")
  }
  fs.writeFileSync(path.join(project, "missing-layer.ts"), withoutLayer)
  const tsconfig = JSON.parse(fs.readFileSync(path.join(project, "tsconfig.json"), "utf8"))
  fs.writeFileSync(
    path.join(project, "tsconfig.missing-layer.json"),
    JSON.stringify({ compilerOptions: { ...tsconfig.compilerOptions, noEmit: true }, include: ["missing-layer.ts"] })
  )
  let said = ""
  try {
    run(path.join(project, "node_modules/.bin/tsc"), ["-p", "tsconfig.missing-layer.json"], project)
  } catch (error) {
    said = String(error.stdout ?? "")
  }
  const saidWithoutPosition = said.replace(/^missing-layer\.ts\(\d+,\d+\): /gm, "").trim()
  if (saidWithoutPosition !== missingLayerMessage.trim()) {
    throw new Error(`check-install: without its layer the program gets\n${saidWithoutPosition || "(no error)"}\nnot what the README quotes:\n${missingLayerMessage}`)
  }
  console.log("check-install: without its layer the program gets the error the README quotes")

  const printed = run(process.execPath, [path.join(project, "out/main.js")], project)
  process.stdout.write(printed)
  if (printed.trim() === "") throw new Error("check-install: the program printed nothing")
  run(path.join(project, "node_modules/.bin/vitest"), ["run", "first.test.ts"], project)
  console.log("check-install: the README's install lines give a program and a test that type-check and pass")
} finally {
  fs.rmSync(project, { recursive: true, force: true })
}

/**
 * V8's parser marks a function literal assigned straight to a property (`o.f = () => x`)
 * as a method, and allocates every closure made there in the old generation. A dead
 * old-generation closure keeps what it captures alive through every young collection until
 * the next full one, so on a hot path each one promotes its captures: Effect's
 * `Channel.fromEffect` (`op.effect = () => effect`) does it per chunk of every
 * `Stream.runForEach`, promoting every watch event (see bench/README.md). The source
 * here never writes one.
 */
import { assert, describe, it } from "@effect/vitest"
import { execFileSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"

const sourceFiles = (dir: string): Array<string> =>
  Fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = Path.join(dir, entry.name)
    return entry.isDirectory() ? sourceFiles(path) : entry.name.endsWith(".ts") ? [path] : []
  })

// `x.y = () =>`, `x.y = (a, b) =>`, `x.y = a =>`, `x.y = function`, `x.y = async ...`
const assignedFunction =
  /\.[A-Za-z_$][\w$]*\s*=\s*(?:async\s+)?(?:function\b|\([^()]*\)\s*(?::[^=]+)?=>|[A-Za-z_$][\w$]*\s*=>)/

describe("closures on hot paths stay in the young generation", () => {
  it("V8 allocates a function literal assigned to a property in the old generation, not one in a literal", () => {
    const script = `
      const inYoung = new Function("o", "return %InYoungGeneration(o)")
      const assigned = (x) => { const o = { f: null }; o.f = () => x; return o.f }
      const returned = (x) => () => x
      const inLiteral = (x) => ({ f: () => x }).f
      console.log(JSON.stringify([inYoung(assigned(1)), inYoung(returned(1)), inYoung(inLiteral(1))]))`
    const out = execFileSync(process.execPath, ["--allow-natives-syntax", "-e", script], { encoding: "utf8" })
    assert.deepStrictEqual(JSON.parse(out), [false, true, true])
  })

  it("src never assigns a function literal to a property", () => {
    // the sources of both packages of the workspace, the client's and the fake's
    const root = Path.join(import.meta.dirname, "..", "..", "packages")
    const sources = ["effect-kube", "testing"].flatMap((name) => sourceFiles(Path.join(root, name, "src")))
    const offending = sources.flatMap((file) =>
      Fs.readFileSync(file, "utf8").split("\n").flatMap((line, i) =>
        !line.trimStart().startsWith("*") && !line.trimStart().startsWith("//") && assignedFunction.test(line)
          ? [`${Path.relative(root, file)}:${i + 1}: ${line.trim()}`]
          : []
      )
    )
    assert.deepStrictEqual(offending, [])
  })
})

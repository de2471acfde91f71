/**
 * The serialization fixtures of kubernetes/api (`testdata/<release>/<group>.<version>.<Kind>.json`: one
 * fuzzer-filled object per kind, every field set), read where the Go module `k8s.io/api` lies once Go has
 * downloaded it. They are not copied into this repository: `go mod download` fetches the module (from the
 * module cache after the first time), and a test that needs them fails, saying why, when Go or the module
 * cannot be had.
 */
import { execFileSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"

/** One fixture: the release folder it is in (`HEAD`, `v1.34.0`), its file name, and the object. */
export interface Fixture {
  readonly release: string
  readonly file: string
  readonly object: Record<string, unknown>
}

const goBinary = (): string => {
  const candidates = [process.env["GO"], "go", "/usr/local/go/bin/go"].filter((c): c is string => c !== undefined)
  for (const candidate of candidates) {
    try {
      execFileSync(candidate, ["version"], { stdio: "ignore" })
      return candidate
    } catch {
      // the next one
    }
  }
  throw new Error(
    "the kubernetes/api fixtures need Go to download the module k8s.io/api: no `go` on PATH, in $GO or at " +
      "/usr/local/go/bin/go (install Go, or set GO to its binary)"
  )
}

/** The directory of the module `k8s.io/api` at `version`, downloaded by Go if it is not in the module cache. */
export const moduleDir = (version: string): string => {
  const go = goBinary()
  let out: string
  try {
    out = execFileSync(go, ["mod", "download", "-json", `k8s.io/api@${version}`], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
      timeout: 300_000
    })
  } catch (e) {
    const stdout = (e as { stdout?: string }).stdout ?? ""
    throw new Error(
      `\`go mod download k8s.io/api@${version}\` failed (is the Go module proxy reachable?): ${stdout}${String(e)}`
    )
  }
  const dir = (JSON.parse(out) as { Dir?: string; Error?: string }).Dir
  if (dir === undefined || !Fs.existsSync(Path.join(dir, "testdata"))) {
    throw new Error(`\`go mod download k8s.io/api@${version}\` gave no directory with testdata: ${out}`)
  }
  return dir
}

/** Every JSON fixture of the module at `version`, in every release folder. */
export const fixtures = (version: string): ReadonlyArray<Fixture> => {
  const testdata = Path.join(moduleDir(version), "testdata")
  const out: Array<Fixture> = []
  for (const release of Fs.readdirSync(testdata).sort()) {
    const folder = Path.join(testdata, release)
    if (!Fs.statSync(folder).isDirectory()) continue
    for (const file of Fs.readdirSync(folder).sort()) {
      if (!file.endsWith(".json")) continue
      out.push({ release, file, object: JSON.parse(Fs.readFileSync(Path.join(folder, file), "utf8")) })
    }
  }
  return out
}

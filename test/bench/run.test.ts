/**
 * `bench/run.ts` as a person runs it: `--help` prints the options and exits at once, starting
 * nothing; a command line that cannot run fails before anything starts; and a run without
 * `--write` prints its tables and writes no file (README.md, bench/README.md and
 * bench/results.json are left as they were).
 */
import { assert, describe, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import * as Crypto from "node:crypto"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

const root = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "..", "..")
const watched = ["README.md", "bench/README.md", "bench/results.json"]

/** Each watched file's content hash and modification time (`missing` when there is none). */
const snapshot = () =>
  Object.fromEntries(watched.map((file) => {
    const path = Path.join(root, file)
    if (!Fs.existsSync(path)) return [file, "missing"]
    const hash = Crypto.createHash("sha256").update(Fs.readFileSync(path)).digest("hex")
    return [file, `${hash} ${Fs.statSync(path).mtimeMs}`]
  }))

const bench = (args: ReadonlyArray<string>, timeout: number) => {
  const started = Date.now()
  const result = spawnSync(process.execPath, ["--import", "tsx", Path.join(root, "bench", "run.ts"), ...args], {
    cwd: root,
    encoding: "utf8",
    timeout
  })
  return { ...result, ms: Date.now() - started }
}

describe("bench/run.ts", () => {
  it("--help prints the options and exits 0 at once, writing nothing", { timeout: 60_000 }, () => {
    const before = snapshot()
    const run = bench(["--help"], 30_000)
    assert.strictEqual(run.status, 0, run.stderr)
    assert.match(run.stdout, /^Usage: npm run bench/)
    for (const option of ["--quick", "--only", "--reps", "--clients", "--profile", "--write"]) {
      assert.include(run.stdout, option)
    }
    assert.strictEqual(run.stderr, "")
    // a measurement takes seconds; starting the script (tsx compiling it) is all this may take
    assert.isBelow(run.ms, 30_000)
    assert.deepStrictEqual(snapshot(), before)
  })

  it("an unknown option, a missing value or --write with a partial run fail with exit 2 before anything starts", {
    timeout: 60_000
  }, () => {
    const before = snapshot()
    for (
      const [args, message] of [
        [["--wirte"], "unknown option --wirte"],
        [["--only"], "--only needs a value"],
        [["--write", "--quick"], "--write needs a full run"],
        [["--write", "--only", "get"], "--write needs a full run"]
      ] as const
    ) {
      const run = bench(args, 30_000)
      assert.strictEqual(run.status, 2, `${args.join(" ")}: ${run.stderr}`)
      assert.include(run.stderr, message)
      assert.include(run.stderr, "Usage:")
      assert.strictEqual(run.stdout, "")
    }
    assert.deepStrictEqual(snapshot(), before)
  })

  it("a run without --write prints its table and writes no file", { timeout: 120_000 }, () => {
    const before = snapshot()
    // the cheapest measure: one process of 1,000 rounds on the in-memory fake
    const run = bench(["--quick", "--only", "fake-round", "--clients", "effect-kube"], 110_000)
    assert.strictEqual(run.status, 0, run.stderr)
    assert.include(run.stdout, "| one round on `FakeCluster.layer()` (µs CPU) |")
    assert.deepStrictEqual(snapshot(), before)
  })
})

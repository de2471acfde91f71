/**
 * npm test's global setup: the run's own temp directory. Every worker (and every process a
 * test starts) gets it as TMPDIR, so `os.tmpdir()` is private to the run; at the end of the
 * run it must hold no private key (a `*.key` file or a PEM `PRIVATE KEY` block): a test that
 * writes one removes it in its own teardown (issue 41.8: the PKI's cleanup ran on process
 * exit, which vitest's workers never reach, and left CA and client keys in /tmp). Whatever
 * is left is removed, keys first; a key found fails the run, naming the files.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

const privateKey = /-----BEGIN [A-Z ]*PRIVATE KEY-----/

/**
 * Caches of compiled sources, which hold the repository's own text (a test's PEM literal
 * included), not keys a test wrote: Node's compile cache and tsx's.
 */
const caches = /^(node-compile-cache|tsx-[^/]*)(\/|$)/

/** The files under `dir` that hold a private key. */
export const keyFiles = (dir: string): ReadonlyArray<string> => {
  const found: Array<string> = []
  for (const entry of fs.readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue
    const file = path.join(entry.parentPath, entry.name)
    if (caches.test(path.relative(dir, file))) continue
    if (entry.name.endsWith(".key")) {
      found.push(file)
      continue
    }
    try {
      const { size } = fs.statSync(file)
      if (size < 1 << 20 && privateKey.test(fs.readFileSync(file, "latin1"))) found.push(file)
    } catch {
      // gone meanwhile, or not readable: nothing to find
    }
  }
  return found
}

export default function setup() {
  const outer = process.env["TMPDIR"]
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "effect-kube-test-"))
  process.env["TMPDIR"] = dir
  process.env["EFFECT_KUBE_TEST_TMPDIR"] = dir
  return () => {
    if (outer === undefined) delete process.env["TMPDIR"]
    else process.env["TMPDIR"] = outer
    const keys = keyFiles(dir)
    for (const file of keys) fs.rmSync(file, { force: true })
    fs.rmSync(dir, { recursive: true, force: true })
    if (keys.length > 0) {
      throw new Error(
        `the run left ${keys.length} private key file(s) in its temp directory (removed now): ` +
          keys.map((file) => path.relative(dir, file)).join(", ") +
          ": the test that wrote each must remove it in its own teardown"
      )
    }
  }
}

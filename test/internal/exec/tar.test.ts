/**
 * The tar format of `Copy`, against GNU tar on this machine: what we write, tar lists and unpacks; what tar writes
 * (ustar, GNU long names, PAX), we read, however it is cut into chunks.
 */
import { assert, describe, it } from "@effect/vitest"
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Tar from "../../../packages/effect-kube/src/internal/exec/tar.js"

const encoder = new TextEncoder()

const archive = (entries: ReadonlyArray<{ readonly header: Tar.Header; readonly data?: Uint8Array }>): Buffer => {
  const parts: Array<Uint8Array> = []
  for (const { header, data } of entries) {
    parts.push(Tar.header(header))
    if (data !== undefined) {
      parts.push(data, Tar.padding(data.length))
    }
  }
  parts.push(Tar.end())
  return Buffer.concat(parts)
}

const file = (name: string, text: string): { header: Tar.Header; data: Uint8Array } => {
  const data = encoder.encode(text)
  return { header: { name, type: "file", size: data.length, mode: 0o640, mtime: 1_700_000_000, linkname: "" }, data }
}

const tempDir = () => Fs.mkdtempSync(Path.join(Os.tmpdir(), "effect-kube-tar-"))

/** Every entry of an archive read in chunks of `size` bytes: name, type, link and content. */
const readAll = (bytes: Uint8Array, size: number) => {
  const reader = Tar.reader()
  const out: Array<{ name: string; type: string; linkname: string; content: string; mode: number }> = []
  let chunks: Array<Uint8Array> = []
  let header: Tar.Header | undefined
  for (let at = 0; at < bytes.length; at += size) {
    for (const event of reader.push(bytes.subarray(at, at + size))) {
      if (event._tag === "Entry") {
        header = event.header
        chunks = []
      } else if (event._tag === "Data") chunks.push(event.bytes)
      else {
        out.push({
          name: header!.name,
          type: header!.type,
          linkname: header!.linkname,
          content: Buffer.concat(chunks).toString(),
          mode: header!.mode
        })
      }
    }
  }
  reader.finish()
  return out
}

describe("tar", () => {
  it("GNU tar unpacks what we write: files, folders, symlinks, a 150-byte name (PAX), modes and times", () => {
    const long = `d/${"n".repeat(150)}`
    const bytes = archive([
      { header: { name: "d/", type: "directory", size: 0, mode: 0o755, mtime: 1_700_000_000, linkname: "" } },
      file("d/a.txt", "alpha\n"),
      file(long, "long name\n"),
      { header: { name: "d/link", type: "symlink", size: 0, mode: 0o777, mtime: 1_700_000_000, linkname: "a.txt" } },
      file("d/empty", "")
    ])
    const dir = tempDir()
    ChildProcess.execFileSync("tar", ["-xf", "-", "-C", dir], { input: bytes })
    assert.strictEqual(Fs.readFileSync(Path.join(dir, "d/a.txt"), "utf8"), "alpha\n")
    assert.strictEqual(Fs.readFileSync(Path.join(dir, long), "utf8"), "long name\n")
    assert.strictEqual(Fs.readlinkSync(Path.join(dir, "d/link")), "a.txt")
    assert.strictEqual(Fs.readFileSync(Path.join(dir, "d/empty"), "utf8"), "")
    assert.strictEqual(Fs.statSync(Path.join(dir, "d/a.txt")).mode & 0o777, 0o640)
    assert.strictEqual(Fs.statSync(Path.join(dir, "d/a.txt")).mtimeMs, 1_700_000_000_000)
    // and tar finds nothing wrong with the archive
    const listed = ChildProcess.execFileSync("tar", ["-tf", "-"], { input: bytes }).toString().trim().split("\n")
    assert.deepStrictEqual(listed, ["d/", "d/a.txt", long, "d/link", "d/empty"])
    Fs.rmSync(dir, { recursive: true })
  })

  for (const format of ["gnu", "ustar", "pax"] as const) {
    it(`reads what GNU tar writes (--format=${format}), in any chunking`, () => {
      const dir = tempDir()
      const deep = format === "ustar" ? "s".repeat(90) : "s".repeat(120)
      Fs.mkdirSync(Path.join(dir, "src", deep), { recursive: true })
      Fs.writeFileSync(Path.join(dir, "src", "a.txt"), "alpha\n")
      Fs.writeFileSync(Path.join(dir, "src", deep, "b.bin"), Buffer.alloc(1300, 7))
      Fs.symlinkSync("a.txt", Path.join(dir, "src", "link"))
      const bytes = ChildProcess.execFileSync("tar", [`--format=${format}`, "-cf", "-", "-C", dir, "src"])
      const expected = ChildProcess.execFileSync("tar", ["-tf", "-"], { input: bytes }).toString().trim().split("\n")
      for (const size of [1, 7, 512, 10_240, bytes.length]) {
        const entries = readAll(bytes, size)
        assert.deepStrictEqual(entries.map((e) => e.name), expected, `chunks of ${size}`)
        const byName = new Map(entries.map((e) => [e.name, e]))
        assert.strictEqual(byName.get("src/a.txt")?.content, "alpha\n")
        assert.strictEqual(byName.get(`src/${deep}/b.bin`)?.content, Buffer.alloc(1300, 7).toString())
        assert.strictEqual(byName.get("src/link")?.type, "symlink")
        assert.strictEqual(byName.get("src/link")?.linkname, "a.txt")
        assert.strictEqual(byName.get("src/")?.type, "directory")
      }
      Fs.rmSync(dir, { recursive: true })
    })
  }

  it("a corrupted header and an archive cut inside an entry are errors", () => {
    const bytes = archive([file("a.txt", "x".repeat(2000))])
    const corrupt = Buffer.from(bytes)
    corrupt[10] = corrupt[10]! ^ 0xff
    assert.throws(() => Tar.reader().push(corrupt), /bad checksum/)
    const reader = Tar.reader()
    reader.push(bytes.subarray(0, 1024))
    assert.throws(() => reader.finish(), /ended inside an entry/)
  })
})

/**
 * Copy over the real request path: FakeCluster's layer answering exec over its channel protocol, with containers
 * whose `tar` is this machine's GNU tar run in a folder of the test's own (the container's filesystem), so both
 * directions go through a real tar. A container without the handler has no tar, as an image without one.
 */
import { NodeFileSystem, NodePath } from "@effect/platform-node-shared"
import { afterAll, assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Stream } from "effect"
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Copy from "../packages/effect-kube/src/Copy.js"
import { ValidationError } from "../packages/effect-kube/src/Errors.js"
import * as Kube from "../packages/effect-kube/src/Kube.js"
import { Pods } from "../packages/effect-kube/src/resources/index.js"
import { FakeCluster } from "@effect-kube/testing"
import { failureOf } from "./util/failure.js"

const pods = Kube.api(Pods, { namespace: "default" })

const made: Array<string> = []
const tempDir = (prefix: string) => {
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), `effect-kube-${prefix}-`))
  made.push(dir)
  return dir
}
afterAll(() => {
  for (const dir of made) Fs.rmSync(dir, { recursive: true, force: true })
})

/** The container's filesystems, one folder per pod. */
const roots = new Map<string, string>()
const rootOf = (pod: string) => {
  let root = roots.get(pod)
  if (root === undefined) {
    root = tempDir(`pod-${pod}`)
    roots.set(pod, root)
  }
  return root
}

/**
 * Runs the host's tar as the container's: container paths are under the pod's folder. `hostile` pods answer `tar c`
 * with members renamed by `--transform` (and kept as given, `-P`), as a container under someone else's control could.
 */
const runTar = (root: string, args: ReadonlyArray<string>, stdin: Stream.Stream<Uint8Array>, transform?: string) =>
  Effect.gen(function*() {
    const mapped: Array<string> = []
    for (let i = 0; i < args.length; i++) {
      const arg = args[i]!
      if (arg === "-C") {
        mapped.push("-C", Path.join(root, args[++i]!))
      } else mapped.push(arg.startsWith("/") ? arg.slice(1) : arg)
    }
    if (transform !== undefined) mapped.push("-P", `--transform=${transform}`)
    const child = ChildProcess.spawn("tar", mapped, { cwd: root })
    child.stdin.on("error", () => {})
    const out: Array<Buffer> = []
    const err: Array<Buffer> = []
    child.stdout.on("data", (b: Buffer) => out.push(b))
    child.stderr.on("data", (b: Buffer) => err.push(b))
    const closed = new Promise<number>((resolve) => child.on("close", (code) => resolve(code ?? 1)))
    yield* Stream.runForEach(stdin, (chunk) => Effect.sync(() => child.stdin.write(chunk)))
    child.stdin.end()
    const code = yield* Effect.promise(() => closed)
    return { code, stdout: Buffer.concat(out), stderr: Buffer.concat(err) }
  })

const transforms: Record<string, string> = {
  "hostile-outside": "s,^data/out,../escape,",
  "hostile-climb": "s,^data/out/a.txt,data/out/../../evil.txt,"
}

const layer = Layer.mergeAll(
  FakeCluster.layer({
    exec: (pod, _container, command, io) => {
      const name = (pod.metadata as { name: string }).name
      if (command[0] !== "tar" || name === "no-tar") return undefined
      return runTar(rootOf(name), command.slice(1), io.stdin, transforms[name]).pipe(
        Effect.tap((result) => io.stdout(result.stdout)),
        Effect.tap((result) => io.stderr(result.stderr)),
        Effect.map((result) => result.code)
      )
    }
  }),
  NodeFileSystem.layer,
  NodePath.layer
)

const makePod = (name: string) =>
  pods.create({ metadata: { name }, spec: { containers: [{ name: "c", image: "busybox:1.36" }] } }).pipe(
    Effect.andThen(
      pods.waitFor(name, (p) => p?.status?.phase === "Running", { timeout: "10 seconds" })
    )
  )

/** A local tree: a file, a nested file, a binary file of 70 KB and a symlink. */
const localTree = () => {
  const dir = tempDir("local")
  const src = Path.join(dir, "site")
  Fs.mkdirSync(Path.join(src, "css", "deep"), { recursive: true })
  Fs.writeFileSync(Path.join(src, "index.html"), "<h1>hi</h1>\n")
  Fs.writeFileSync(Path.join(src, "css", "deep", "main.css"), "body{}\n")
  Fs.writeFileSync(Path.join(src, "blob.bin"), Buffer.alloc(70_000, 0xab))
  Fs.symlinkSync("index.html", Path.join(src, "home.html"))
  return { dir, src }
}

const leftovers = (dir: string) => Fs.readdirSync(dir).filter((name) => name.includes("effect-kube-cp"))

describe("Copy", () => {
  it.layer(layer, { excludeTestServices: true })((it) => {
    it.effect("toPod sends a folder (symlinks as symlinks) and fromPod brings it back, byte for byte", () =>
      Effect.gen(function*() {
        yield* makePod("web")
        const { dir, src } = localTree()
        const root = rootOf("web")
        Fs.mkdirSync(Path.join(root, "srv"))
        const sent = yield* Copy.toPod(pods, "web", src, "/srv/site")
        assert.deepStrictEqual(sent, { files: 3, bytes: 12 + 7 + 70_000, skipped: [] })
        assert.strictEqual(Fs.readFileSync(Path.join(root, "srv/site/index.html"), "utf8"), "<h1>hi</h1>\n")
        assert.strictEqual(Fs.readFileSync(Path.join(root, "srv/site/css/deep/main.css"), "utf8"), "body{}\n")
        assert.isTrue(Fs.readFileSync(Path.join(root, "srv/site/blob.bin")).equals(Buffer.alloc(70_000, 0xab)))
        assert.strictEqual(Fs.readlinkSync(Path.join(root, "srv/site/home.html")), "index.html")

        // a single file, into a folder named with a trailing "/"
        yield* Copy.toPod(pods, "web", Path.join(src, "index.html"), "/srv/")
        assert.strictEqual(Fs.readFileSync(Path.join(root, "srv/index.html"), "utf8"), "<h1>hi</h1>\n")

        const back = Path.join(dir, "back")
        const copied = yield* Copy.fromPod(pods, "web", "/srv/site", back)
        assert.strictEqual(copied.files, 3)
        assert.strictEqual(copied.bytes, 12 + 7 + 70_000)
        // links are not made locally, as kubectl: listed instead
        assert.deepStrictEqual(copied.skipped, [{ path: "srv/site/home.html", reason: "symlink to index.html" }])
        assert.strictEqual(Fs.readFileSync(Path.join(back, "index.html"), "utf8"), "<h1>hi</h1>\n")
        assert.strictEqual(Fs.readFileSync(Path.join(back, "css/deep/main.css"), "utf8"), "body{}\n")
        assert.isTrue(Fs.readFileSync(Path.join(back, "blob.bin")).equals(Buffer.alloc(70_000, 0xab)))
        assert.isFalse(Fs.existsSync(Path.join(back, "home.html")))
        assert.deepStrictEqual(leftovers(dir), [])

        // one file to a new name, then into a folder that is there
        yield* Copy.fromPod(pods, "web", "/srv/index.html", Path.join(dir, "one.html"))
        assert.strictEqual(Fs.readFileSync(Path.join(dir, "one.html"), "utf8"), "<h1>hi</h1>\n")
        yield* Copy.fromPod(pods, "web", "/srv/index.html", back)
        assert.strictEqual(Fs.readFileSync(Path.join(back, "index.html"), "utf8"), "<h1>hi</h1>\n")
        assert.deepStrictEqual(leftovers(dir), [])
      }))

    it.effect("an image without tar is CopyFailed NoTar both ways, and nothing is written locally", () =>
      Effect.gen(function*() {
        yield* makePod("no-tar")
        const { dir, src } = localTree()
        const to = yield* failureOf(Copy.toPod(pods, "no-tar", src, "/srv/site"))
        assert.instanceOf(to, Copy.CopyFailed)
        assert.strictEqual((to as Copy.CopyFailed).reason, "NoTar")
        assert.include((to as Copy.CopyFailed).message, "copy with pod no-tar: /srv/site: the container has no tar")
        const from = yield* failureOf(Copy.fromPod(pods, "no-tar", "/srv/site", Path.join(dir, "back")))
        assert.instanceOf(from, Copy.CopyFailed)
        assert.strictEqual((from as Copy.CopyFailed).reason, "NoTar")
        assert.isFalse(Fs.existsSync(Path.join(dir, "back")))
        assert.deepStrictEqual(leftovers(dir), [])
      }))

    it.effect("a member that leaves the target fails the copy with PathEscapes, naming it; nothing is left behind", () =>
      Effect.gen(function*() {
        for (const [pod, member] of [["hostile-outside", "../escape/"], ["hostile-climb", "data/out/../../evil.txt"]]) {
          yield* makePod(pod!)
          const root = rootOf(pod!)
          Fs.mkdirSync(Path.join(root, "data/out"), { recursive: true })
          Fs.writeFileSync(Path.join(root, "data/out/a.txt"), "a\n")
          const dir = tempDir("escape")
          const target = Path.join(dir, "inner", "out")
          Fs.mkdirSync(Path.dirname(target))
          const failed = yield* failureOf(Copy.fromPod(pods, pod!, "/data/out", target))
          assert.instanceOf(failed, Copy.CopyFailed)
          const error = failed as Copy.CopyFailed
          assert.strictEqual(error.reason, "PathEscapes")
          assert.strictEqual(error.path, member)
          assert.include(error.message, `the archive's member "${member}" leaves ${target}`)
          assert.isFalse(Fs.existsSync(target))
          assert.deepStrictEqual(Fs.readdirSync(dir), ["inner"])
          assert.deepStrictEqual(Fs.readdirSync(Path.join(dir, "inner")), [])
        }
      }))

    it.effect("tar failing in the container is TarFailed with its stderr; a container path with .. a ValidationError", () =>
      Effect.gen(function*() {
        yield* makePod("plain")
        const dir = tempDir("missing")
        const missing = yield* failureOf(Copy.fromPod(pods, "plain", "/no/such/path", Path.join(dir, "x")))
        assert.instanceOf(missing, Copy.CopyFailed)
        assert.strictEqual((missing as Copy.CopyFailed).reason, "TarFailed")
        assert.include((missing as Copy.CopyFailed).detail, "no/such/path: Cannot stat: No such file or directory")
        assert.deepStrictEqual(Fs.readdirSync(dir), [])
        const climbing = yield* failureOf(Copy.toPod(pods, "plain", dir, "/srv/../etc"))
        assert.instanceOf(climbing, ValidationError)
        const local = yield* failureOf(Copy.toPod(pods, "plain", Path.join(dir, "nope"), "/srv/x"))
        assert.instanceOf(local, Copy.CopyFailed)
        assert.strictEqual((local as Copy.CopyFailed).reason, "Local")
      }))
  })
})

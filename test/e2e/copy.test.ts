/**
 * Copy against the real control plane: the container's tar is the real one (the node stand-in runs commands in the
 * pod's sandbox, with the host's /usr), and kubectl cp reads back what we wrote and writes what we read. An image
 * without tar is played by a container whose PATH has no tar in it (the runtime's exec then fails as for a missing
 * binary). An archive with members leaving the target cannot come from a real tar: that case runs against
 * FakeCluster (test/Copy.test.ts).
 */
import { NodeFileSystem, NodePath } from "@effect/platform-node-shared"
import { assert, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { Condition, Copy, Kube, Pods } from "./lib.js"
import { kubectl } from "./setup/cluster.js"
import { layer, testNamespace } from "./support.js"

const withFiles = Layer.mergeAll(layer, NodeFileSystem.layer, NodePath.layer)

const tempDir = (prefix: string) => Fs.mkdtempSync(Path.join(Os.tmpdir(), `effect-kube-e2e-${prefix}-`))

it.layer(withFiles, { excludeTestServices: true, timeout: "90 seconds" })("copy", (it) => {
  it.effect("toPod and fromPod through the container's tar, both read back by kubectl cp; no tar is NoTar", () =>
    Effect.gen(function*() {
      const ns = yield* testNamespace("copy")
      const pods = Kube.api(Pods, { namespace: ns })
      const sleeper = { name: "c", image: "busybox:1.36", command: ["sh", "-c", "sleep 3600"] }
      yield* pods.create({ metadata: { name: "box" }, spec: { terminationGracePeriodSeconds: 0, containers: [sleeper] } })
      yield* pods.create({
        metadata: { name: "bare" },
        spec: {
          terminationGracePeriodSeconds: 0,
          containers: [{ ...sleeper, command: ["/bin/sh", "-c", "sleep 3600"], env: [{ name: "PATH", value: "/no-tools" }] }]
        }
      })
      yield* pods.waitFor("box", Condition.podReady, { timeout: "60 seconds" })
      yield* pods.waitFor("bare", Condition.podReady, { timeout: "60 seconds" })

      const dir = tempDir("copy")
      const src = Path.join(dir, "site")
      Fs.mkdirSync(Path.join(src, "css"), { recursive: true })
      Fs.writeFileSync(Path.join(src, "index.html"), "<h1>hi</h1>\n")
      Fs.writeFileSync(Path.join(src, "css", "main.css"), "body{}\n")
      Fs.writeFileSync(Path.join(src, "blob.bin"), Buffer.alloc(300_000, 0x5a))
      Fs.symlinkSync("index.html", Path.join(src, "home.html"))
      const long = "n".repeat(140)
      Fs.writeFileSync(Path.join(src, long), "long\n")

      const sent = yield* Copy.toPod(pods, "box", src, "/tmp/site")
      assert.strictEqual(sent.files, 4)
      const listed = yield* pods.execOrFail("box", ["sh", "-c", "cd /tmp/site && cat index.html css/main.css && readlink home.html && wc -c < blob.bin && cat " + long])
      assert.strictEqual(listed.stdout.replace(/ +/g, ""), "<h1>hi</h1>\nbody{}\nindex.html\n300000\nlong\n")

      // kubectl cp reads what we wrote
      const byKubectl = Path.join(dir, "by-kubectl")
      yield* Effect.promise(() => kubectl(["cp", "-n", ns, "box:/tmp/site", byKubectl]))
      assert.strictEqual(Fs.readFileSync(Path.join(byKubectl, "css", "main.css"), "utf8"), "body{}\n")
      assert.isTrue(Fs.readFileSync(Path.join(byKubectl, "blob.bin")).equals(Buffer.alloc(300_000, 0x5a)))

      // and we read what kubectl cp wrote
      Fs.writeFileSync(Path.join(dir, "note.txt"), "from kubectl\n")
      yield* Effect.promise(() => kubectl(["cp", "-n", ns, Path.join(dir, "note.txt"), "box:/tmp/site/note.txt"]))
      const back = Path.join(dir, "back")
      const copied = yield* Copy.fromPod(pods, "box", "/tmp/site", back)
      assert.strictEqual(copied.files, 5)
      assert.deepStrictEqual(copied.skipped, [{ path: "tmp/site/home.html", reason: "symlink to index.html" }])
      assert.strictEqual(Fs.readFileSync(Path.join(back, "note.txt"), "utf8"), "from kubectl\n")
      assert.strictEqual(Fs.readFileSync(Path.join(back, long), "utf8"), "long\n")
      assert.isTrue(Fs.readFileSync(Path.join(back, "blob.bin")).equals(Buffer.alloc(300_000, 0x5a)))
      assert.deepStrictEqual(Fs.readdirSync(dir).filter((n) => n.includes("effect-kube-cp")), [])

      // a path that is not there: tar's own complaint; nothing written locally
      const missing = yield* Effect.flip(Copy.fromPod(pods, "box", "/tmp/nothing-here", Path.join(dir, "missing")))
      assert.instanceOf(missing, Copy.CopyFailed)
      assert.strictEqual((missing as Copy.CopyFailed).reason, "TarFailed")
      assert.include((missing as Copy.CopyFailed).detail, "nothing-here")
      assert.isFalse(Fs.existsSync(Path.join(dir, "missing")))

      // an image without tar; when the server's reset discards the exit status while the archive is still being
      // written, the copy asks again without stdin (test/internal/exec/copy.test.ts), so it is NoTar either way
      const noTar = yield* Effect.flip(Copy.toPod(pods, "bare", src, "/tmp/site"))
      assert.instanceOf(noTar, Copy.CopyFailed)
      assert.strictEqual((noTar as Copy.CopyFailed).reason, "NoTar")
      // the runtime's own words: nsenter could not run tar (exit 127)
      assert.include(noTar.message, "copy with pod bare: /tmp/site: the container has no tar (exit 127:")
      const noTarBack = yield* Effect.flip(Copy.fromPod(pods, "bare", "/etc/hostname", Path.join(dir, "h")))
      assert.strictEqual((noTarBack as Copy.CopyFailed).reason, "NoTar")
      assert.isFalse(Fs.existsSync(Path.join(dir, "h")))
      Fs.rmSync(dir, { recursive: true })
    }))
})

/**
 * A copy into a container whose exec loses its exit status: a WebSocket server on loopback (the `ws` package, the
 * v5 channel protocol) plays a kubelet whose `tar -xmf` connection is torn down mid-archive, with no status frame,
 * as kube-apiserver's reset can discard one (a fresh CI run saw it against the real control plane). The copy asks a
 * second exec without stdin and reports what it says, never the connection's error when tar is missing.
 */
import { NodeFileSystem, NodePath } from "@effect/platform-node-shared"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as Fs from "node:fs"
import * as Http from "node:http"
import type * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { WebSocketServer } from "ws"
import * as Copy from "../../../packages/effect-kube/src/Copy.js"
import * as Kube from "../../../packages/effect-kube/src/Kube.js"
import * as KubeConfig from "../../../packages/effect-kube/src/KubeConfig.js"
import * as NodeKube from "../../../packages/effect-kube/src/NodeKube.js"
import { Pods } from "../../../packages/effect-kube/src/resources/index.js"

const pods = Kube.api(Pods, { namespace: "default" })

const statusFrame = (status: unknown) => Buffer.concat([Buffer.from([3]), Buffer.from(JSON.stringify(status))])
const exited = (code: number) =>
  code === 0 ? { metadata: {}, status: "Success" } : {
    metadata: {},
    status: "Failure",
    message: `command terminated with non-zero exit code: exit status ${code}`,
    reason: "NonZeroExitCode",
    details: { causes: [{ reason: "ExitCode", message: String(code) }] }
  }

/**
 * `tar -xmf` reads one stdin frame and then the connection is destroyed (no close frame, no status); the probe's
 * `tar --version` answers as the image has it: `missing` exits 127 with a shell's complaint, else GNU tar's banner.
 */
const kubelet = (tar: "missing" | "present") =>
  Effect.acquireRelease(
    Effect.callback<{ url: string; commands: Array<string>; close: () => void }>((resume) => {
      const commands: Array<string> = []
      const server = Http.createServer((_req, res) => {
        res.writeHead(404).end()
      })
      const sockets = new Set<Net.Socket>()
      server.on("connection", (socket: Net.Socket) => {
        sockets.add(socket)
        socket.on("close", () => sockets.delete(socket))
      })
      const wss = new WebSocketServer({ server, handleProtocols: (offered) => offered.has("v5.channel.k8s.io") ? "v5.channel.k8s.io" : false })
      wss.on("connection", (ws, req) => {
        const command = new URL(req.url!, "http://x").searchParams.getAll("command")
        commands.push(command.join(" "))
        if (command[1] === "--version") {
          if (tar === "missing") {
            ws.send(Buffer.concat([Buffer.from([2]), Buffer.from("sh: tar: not found\n")]))
            ws.send(statusFrame(exited(127)))
          } else {
            ws.send(Buffer.concat([Buffer.from([1]), Buffer.from("tar (GNU tar) 1.35\n")]))
            ws.send(statusFrame(exited(0)))
          }
          ws.close(1000)
          return
        }
        ws.once("message", () => ws.terminate())
      })
      server.listen(0, "127.0.0.1", () => {
        const { port } = server.address() as Net.AddressInfo
        resume(Effect.succeed({
          url: `http://127.0.0.1:${port}`,
          commands,
          close: () => {
            for (const socket of sockets) socket.destroy()
            wss.close()
            server.close()
          }
        }))
      })
    }),
    ({ close }) => Effect.sync(close)
  )

const layerFor = (url: string) =>
  Layer.mergeAll(
    NodeKube.layerFromKubeConfig(KubeConfig.layerFrom({ server: url, namespace: "default" })).pipe(Layer.orDie),
    NodeFileSystem.layer,
    NodePath.layer
  )

const localFile = () => {
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "effect-kube-copy-lost-"))
  const file = Path.join(dir, "blob.bin")
  Fs.writeFileSync(file, Buffer.alloc(200_000, 0xab))
  return { dir, file }
}

describe("Copy.toPod when the exec's exit status is lost", () => {
  it.live("an image without tar: NoTar from the probe's exit, after one probe", () =>
    Effect.gen(function*() {
      const server = yield* kubelet("missing")
      const { dir, file } = localFile()
      const error = yield* Effect.flip(Copy.toPod(pods, "bare", file, "/tmp/blob.bin").pipe(Effect.provide(layerFor(server.url))))
      Fs.rmSync(dir, { recursive: true })
      assert.instanceOf(error, Copy.CopyFailed)
      assert.strictEqual((error as Copy.CopyFailed).reason, "NoTar")
      assert.include(error.message, "copy with pod bare: /tmp/blob.bin: the container has no tar (exit 127: sh: tar: not found)")
      assert.deepStrictEqual(server.commands, ["tar -xmf - -C /tmp", "tar --version"])
    }).pipe(Effect.scoped))

  it.live("an image with tar: the connection's own error, not a guess", () =>
    Effect.gen(function*() {
      const server = yield* kubelet("present")
      const { dir, file } = localFile()
      const error = yield* Effect.flip(Copy.toPod(pods, "box", file, "/tmp/blob.bin").pipe(Effect.provide(layerFor(server.url))))
      Fs.rmSync(dir, { recursive: true })
      assert.notInstanceOf(error, Copy.CopyFailed)
      assert.include(error.message, "connection ended before the exit status arrived")
      assert.deepStrictEqual(server.commands, ["tar -xmf - -C /tmp", "tar --version"])
    }).pipe(Effect.scoped))
})

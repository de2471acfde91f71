/**
 * The streaming protocols of FakeCluster.serve as kube-apiserver and the kubelet speak
 * them, seen by clients no one here wrote (`ws`, @kubernetes/client-node) and by a small
 * SPDY/3.1 client over a raw socket: the subprotocol agreed for each offer, the channel
 * framings (binary, base64), the status each protocol ends with and its text, resizes,
 * a terminal's CRLF, requests without an upgrade, and port-forward over SPDY (plain and
 * tunnelled in a WebSocket).
 */
import { assert, describe, it } from "@effect/vitest"
import * as k8s from "@kubernetes/client-node"
import { Effect, Fiber, Stream } from "effect"
import * as Net from "node:net"
import * as NodeStream from "node:stream"
import * as Zlib from "node:zlib"
import WebSocket from "ws"
import { FakeCluster } from "@effect-kube/testing"
import { pki } from "../util/pki.js"

const pod = (name: string) => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name },
  spec: { containers: [{ name: "main", image: "busybox:1.36" }] },
  status: { phase: "Running" }
})

interface Message {
  readonly text: boolean
  readonly data: Buffer
}

type Opened =
  | { readonly protocol: string; readonly messages: ReadonlyArray<Message>; readonly closeCode: number }
  | { readonly refused: number; readonly body: string }

/** A `ws` client: sends `send` on open, collects every message until the close (or the HTTP refusal). */
const open = (url: string, protocols: ReadonlyArray<string>, send: ReadonlyArray<Uint8Array | string> = []) =>
  Effect.promise(() =>
    new Promise<Opened>((resolve, reject) => {
      const ws = new WebSocket(url, [...protocols])
      const messages: Array<Message> = []
      ws.on("open", () => {
        for (const m of send) ws.send(m)
      })
      ws.on("message", (raw, isBinary) => messages.push({ text: !isBinary, data: raw as Buffer }))
      ws.on("close", (code) => resolve({ protocol: ws.protocol, messages, closeCode: code }))
      ws.on("unexpected-response", (_req, res) => {
        let body = ""
        res.on("data", (c: Buffer) => (body += c.toString()))
        res.on("end", () => resolve({ refused: res.statusCode ?? 0, body }))
      })
      ws.on("error", reject)
    })
  )

const opened = (o: Opened) => {
  assert.isTrue("messages" in o, JSON.stringify(o))
  return o as Extract<Opened, { messages: unknown }>
}

/** A binary channel protocol's messages as [channel, text]. */
const channels = (o: Opened): Array<[number, string]> =>
  opened(o).messages.map((m) => [m.data[0]!, m.data.subarray(1).toString()])

/** A base64 protocol's messages as [channel, decoded text]. */
const base64Channels = (o: Opened): Array<[number, string]> =>
  opened(o).messages.map((m) => {
    assert.isTrue(m.text, "base64 protocols send text messages")
    const text = m.data.toString()
    return [text.charCodeAt(0) - 48, Buffer.from(text.slice(1), "base64").toString()]
  })

const frame = (channel: number, data: string | Uint8Array) => Buffer.concat([Buffer.from([channel]), Buffer.from(data)])

const serve = (options: FakeCluster.ServeOptions = {}) =>
  FakeCluster.serve({ objects: [pod("web")], controllers: false, ...options })

const execUrl = (served: FakeCluster.Served, query: string) =>
  `${served.url.replace(/^http/, "ws")}/api/v1/namespaces/default/pods/web/exec?${query}`

describe("exec: the subprotocol agreed, as the API server and the kubelet pick it", () => {
  it.effect("v5 wherever it is offered; otherwise the kubelet's pick in the client's order; none offered is the plain channel protocol", () =>
    Effect.gen(function*() {
      const served = yield* serve()
      const url = execUrl(served, "command=true&stdout=true")
      const agreed = (o: Opened) => opened(o).protocol
      assert.strictEqual(agreed(yield* open(url, ["v4.channel.k8s.io", "v5.channel.k8s.io"])), "v5.channel.k8s.io")
      assert.strictEqual(agreed(yield* open(url, ["v4.channel.k8s.io", "channel.k8s.io"])), "v4.channel.k8s.io")
      assert.strictEqual(agreed(yield* open(url, ["v3.channel.k8s.io", "base64.channel.k8s.io"])), "base64.channel.k8s.io")
      assert.strictEqual(agreed(yield* open(url, ["v4.base64.channel.k8s.io"])), "v4.base64.channel.k8s.io")
      assert.strictEqual(agreed(yield* open(url, ["channel.k8s.io"])), "channel.k8s.io")
      assert.strictEqual(agreed(yield* open(url, [])), "")
      // nothing the kubelet speaks: its WebSocket handshake fails, 403 with no body
      assert.deepStrictEqual(yield* open(url, ["v3.channel.k8s.io", "v2.channel.k8s.io"]), { refused: 403, body: "" })
    }))

  it.effect("an empty message opens the lowest output channel; each protocol ends in its own form and text", () =>
    Effect.gen(function*() {
      const served = yield* serve()
      const exit3 = "command=sh&command=-c&command=echo%20out%3B%20exit%203&stdout=true&stderr=true"
      const v5 = channels(yield* open(execUrl(served, exit3), ["v5.channel.k8s.io"]))
      assert.deepStrictEqual(v5[0], [1, ""])
      assert.deepStrictEqual(v5.slice(1, 2), [[1, "out\n"]])
      // the API server's translator reads the kubelet's status through SPDY and says it again
      assert.deepStrictEqual(JSON.parse(v5[2]![1]), {
        metadata: {},
        status: "Failure",
        message: "command terminated with non-zero exit code: command terminated with exit code 3",
        reason: "NonZeroExitCode",
        details: { causes: [{ reason: "ExitCode", message: "3" }] }
      })
      const v4 = channels(yield* open(execUrl(served, exit3), ["v4.channel.k8s.io"]))
      // the kubelet's status, with the container runtime's words
      assert.strictEqual(
        JSON.parse(v4[2]![1]).message,
        "command terminated with non-zero exit code: error executing command [sh -c echo out; exit 3], exit code 3"
      )
      // before v4 the status channel carries the message as text, and nothing for a success
      const plain = channels(yield* open(execUrl(served, exit3), ["channel.k8s.io"]))
      assert.deepStrictEqual(plain[2], [
        3,
        "command terminated with non-zero exit code: error executing command [sh -c echo out; exit 3], exit code 3"
      ])
      const ok = channels(yield* open(execUrl(served, "command=echo&command=hi&stdout=true"), ["channel.k8s.io"]))
      assert.deepStrictEqual(ok, [[1, ""], [1, "hi\n"]])
      const okV4 = channels(yield* open(execUrl(served, "command=echo&command=hi&stdout=true"), ["v4.channel.k8s.io"]))
      assert.deepStrictEqual(okV4.at(-1), [3, `{"metadata":{},"status":"Success"}`])
      // base64: text messages, '0' + channel, the data in base64
      const b64 = base64Channels(yield* open(execUrl(served, exit3), ["v4.base64.channel.k8s.io"]))
      assert.deepStrictEqual(b64.slice(0, 2), [[1, ""], [1, "out\n"]])
      assert.strictEqual(JSON.parse(b64[2]![1]).reason, "NonZeroExitCode")
      // without stdout, the empty opening message goes to stderr, then to the status channel
      const quiet = channels(yield* open(execUrl(served, "command=true&stderr=true"), ["v4.channel.k8s.io"]))
      assert.deepStrictEqual(quiet[0], [2, ""])
      const none = channels(yield* open(execUrl(served, "command=true&stdin=true"), ["v4.channel.k8s.io"]))
      assert.deepStrictEqual(none[0], [3, ""])
    }))

  it.effect("an executable that is not there is the runtime's InternalError, not an exit code (v5 says it twice)", () =>
    Effect.gen(function*() {
      const served = yield* serve()
      const url = execUrl(served, "command=no-such-tool&stdout=true")
      const runtime = /^error executing command in container: failed to exec in container: failed to start exec "[0-9a-f]{64}": OCI runtime exec failed: exec failed: unable to start container process: exec: "no-such-tool": executable file not found in \$PATH: unknown$/
      const v4 = JSON.parse(channels(yield* open(url, ["v4.channel.k8s.io"])).at(-1)![1])
      assert.deepStrictEqual(Object.keys(v4), ["metadata", "status", "message", "reason", "details", "code"])
      assert.strictEqual(v4.reason, "InternalError")
      assert.strictEqual(v4.code, 500)
      assert.match(v4.details.causes[0].message, runtime)
      assert.strictEqual(v4.message, `Internal error occurred: ${v4.details.causes[0].message}`)
      const v5 = JSON.parse(channels(yield* open(url, ["v5.channel.k8s.io"])).at(-1)![1])
      assert.strictEqual(v5.reason, "InternalError")
      assert.match(v5.details.causes[0].message, /^Internal error occurred: error executing command in container: /)
      assert.strictEqual(v5.message, `Internal error occurred: ${v5.details.causes[0].message}`)
      // a shell that cannot find a command reports it and exits 127, as a shell does
      const sh = channels(
        yield* open(execUrl(served, "command=sh&command=-c&command=nope&stdout=true&stderr=true"), ["v4.channel.k8s.io"])
      )
      assert.deepInclude(sh, [2, "sh: nope: not found\n"])
      assert.strictEqual(JSON.parse(sh.at(-1)![1]).details.causes[0].message, "127")
    }))

  it.effect("attach ends with a success whatever the process exits with; its failure is the kubelet's attach error", () =>
    Effect.gen(function*() {
      const served = yield* serve({
        attach: (_pod, _container, _command, io) =>
          io.tty ? Effect.fail(new Error("container not running")) : Effect.as(io.stdout("bye\n"), 9)
      })
      const url = (tty: boolean) =>
        `${served.url.replace(/^http/, "ws")}/api/v1/namespaces/default/pods/web/attach?stdout=true&tty=${tty}`
      const ended = channels(yield* open(url(false), ["v5.channel.k8s.io"]))
      assert.deepStrictEqual(ended.at(-1), [3, `{"metadata":{},"status":"Success"}`])
      const failed = JSON.parse(channels(yield* open(url(true), ["v4.channel.k8s.io"])).at(-1)![1])
      assert.strictEqual(failed.message, "Internal error occurred: error attaching to container: container not running")
    }))
})

describe("exec: terminals and resizes", () => {
  it.effect("resize keys are read in any case, as the kubelet's JSON decoder does; a bad one stops the resizes; tty output has CRLF", () =>
    Effect.gen(function*() {
      const served = yield* serve({
        exec: (_pod, _container, _command, io) =>
          io.resizes.pipe(
            Stream.take(3),
            Stream.runForEach((s) => io.stdout(`${s.columns}x${s.rows}\n`)),
            Effect.timeout("300 millis"),
            Effect.ignore,
            Effect.andThen(io.stdout("end\n")),
            Effect.as(0)
          )
      })
      const resize = (size: unknown) => frame(4, typeof size === "string" ? size : JSON.stringify(size))
      const out = channels(
        yield* open(execUrl(served, "command=stty&stdout=true&stdin=true&tty=true"), ["v5.channel.k8s.io"], [
          resize({ width: 80, height: 24 }),
          resize({ Width: 100, HEIGHT: 30 }),
          resize(`{"width":1`),
          resize(`20,"height":40}{"width":-1,"height":5}`),
          resize({ width: 200, height: 50 })
        ])
      )
      const stdout = out.filter(([c]) => c === 1).map(([, t]) => t).join("")
      assert.strictEqual(stdout, "80x24\r\n100x30\r\n120x40\r\nend\r\n")
    }))

  it.live("@kubernetes/client-node's exec (v5, its {width, height} resizes) and attach over v4", () =>
    Effect.gen(function*() {
      const sizes: Array<string> = []
      let firstSize: () => void = () => undefined
      const sized = new Promise<void>((resolve) => (firstSize = resolve))
      const { ca, server } = pki()
      const tls = { cert: server.cert, key: server.key, ca: ca.cert }
      const served = yield* serve({
        tls,
        exec: (_pod, _container, command, io) =>
          command[0] === "stty"
            ? io.resizes.pipe(
              Stream.take(2),
              Stream.runForEach((s) =>
                Effect.sync(() => {
                  sizes.push(`${s.columns}x${s.rows}`)
                  firstSize()
                })
              ),
              Effect.andThen(io.stdout("sized\n")),
              Effect.as(0)
            )
            : undefined
      })
      const config = new k8s.KubeConfig()
      config.loadFromFile(served.kubeconfigPath)
      const collect = () => {
        const chunks: Array<Buffer> = []
        const stream = new NodeStream.PassThrough()
        stream.on("data", (c: Buffer) => chunks.push(c))
        return { stream, text: () => Buffer.concat(chunks).toString() }
      }
      const run = (command: Array<string>, tty: boolean, stdout: NodeStream.Writable) =>
        Effect.promise(() =>
          new Promise<k8s.V1Status>((resolve, reject) => {
            new k8s.Exec(config).exec("default", "web", "main", command, stdout, null, null, tty, resolve).catch(reject)
          })
        )
      const out = collect()
      const status = yield* run(["sh", "-c", "echo one; exit 4"], false, out.stream)
      assert.strictEqual(out.text(), "one\n")
      assert.strictEqual(status.reason, "NonZeroExitCode")
      assert.strictEqual(status.message, "command terminated with non-zero exit code: command terminated with exit code 4")

      // a terminal: client-node sends {"height", "width"} in lower case, and the size again on "resize"
      const terminal = Object.assign(collect(), {})
      const resizable = Object.assign(terminal.stream, { columns: 132, rows: 43 })
      const pending = run(["stty"], true, resizable)
      const fiber = yield* Effect.forkChild(pending)
      // once the first size has arrived, client-node listens for the terminal's resizes
      yield* Effect.promise(() => sized)
      resizable.columns = 80
      resizable.rows = 24
      resizable.emit("resize")
      const ended = yield* Fiber.join(fiber)
      assert.strictEqual(ended.status, "Success")
      assert.deepStrictEqual(sizes, ["132x43", "80x24"])
      assert.strictEqual(terminal.text(), "sized\r\n")

      // against a server that speaks v4 only, client-node's attach agrees v4
      const old = yield* serve({ tls, execProtocols: ["v4.channel.k8s.io"] })
      const oldConfig = new k8s.KubeConfig()
      oldConfig.loadFromFile(old.kubeconfigPath)
      const attached = collect()
      const ws = yield* Effect.promise(() =>
        new k8s.Attach(oldConfig).attach("default", "web", "main", attached.stream, null, null, false)
      )
      assert.strictEqual((ws as WebSocket).protocol, "v4.channel.k8s.io")
    }))
})

describe("exec, attach and port-forward without an upgrade", () => {
  it.effect("a GET or POST is 400 Upgrade request required, after the same checks (a missing pod is 404); PUT is 405", () =>
    Effect.gen(function*() {
      const served = yield* serve()
      const request = (method: string, path: string) =>
        Effect.promise(async () => {
          const response = await fetch(`${served.url}${path}`, { method })
          return { status: response.status, body: await response.json() as { message: string; reason: string } }
        })
      for (const path of ["/exec?command=ls&stdout=true", "/attach?stdout=true", "/portforward?ports=80"]) {
        const get = yield* request("GET", `/api/v1/namespaces/default/pods/web${path}`)
        assert.deepStrictEqual([get.status, get.body.reason, get.body.message], [400, "BadRequest", "Upgrade request required"])
        const post = yield* request("POST", `/api/v1/namespaces/default/pods/web${path}`)
        assert.strictEqual(post.body.message, "Upgrade request required")
      }
      const missing = yield* request("GET", "/api/v1/namespaces/default/pods/gone/exec?command=ls")
      assert.deepStrictEqual([missing.status, missing.body.message], [404, `pods "gone" not found`])
      const put = yield* request("PUT", "/api/v1/namespaces/default/pods/web/exec?command=ls")
      assert.strictEqual(put.status, 405)
      const noStreams = yield* Effect.promise(() => fetch(`${served.url}/api/v1/namespaces/default/pods/web/exec?command=ls`))
      assert.strictEqual(noStreams.status, 400)
    }))
})

// ---------------------------------------------------------------------------
// SPDY/3.1: a small client over a raw socket
// ---------------------------------------------------------------------------

const dictionaryWords = [
  "options", "head", "post", "put", "delete", "trace", "accept", "accept-charset", "accept-encoding",
  "accept-language", "accept-ranges", "age", "allow", "authorization", "cache-control", "connection",
  "content-base", "content-encoding", "content-language", "content-length", "content-location", "content-md5",
  "content-range", "content-type", "date", "etag", "expect", "expires", "from", "host", "if-match",
  "if-modified-since", "if-none-match", "if-range", "if-unmodified-since", "last-modified", "location",
  "max-forwards", "pragma", "proxy-authenticate", "proxy-authorization", "range", "referer", "retry-after",
  "server", "te", "trailer", "transfer-encoding", "upgrade", "user-agent", "vary", "via", "warning",
  "www-authenticate", "method", "get", "status", "200 OK", "version", "HTTP/1.1", "url", "public", "set-cookie",
  "keep-alive", "origin"
]
const dictionary = Buffer.concat([
  ...dictionaryWords.flatMap((w) => [Buffer.from([0, 0, 0, w.length]), Buffer.from(w)]),
  Buffer.from(
    "100101201202205206300302303304305306307402405406407408409410411412413414415416417502504505" +
      "203 Non-Authoritative Information204 No Content301 Moved Permanently400 Bad Request401 Unauthorized" +
      "403 Forbidden404 Not Found500 Internal Server Error501 Not Implemented503 Service Unavailable" +
      "Jan Feb Mar Apr May Jun Jul Aug Sept Oct Nov Dec 00:00:00 Mon, Tue, Wed, Thu, Fri, Sat, Sun, GMT" +
      "chunked,text/html,image/png,image/jpg,image/gif,application/xml,application/xhtml+xml,text/plain," +
      "text/javascript,publicprivatemax-age=gzip,deflate,sdchcharset=utf-8charset=iso-8859-1,utf-,*,enq=0."
  )
])

const u32 = (...values: ReadonlyArray<number>) => {
  const b = Buffer.alloc(values.length * 4)
  values.forEach((v, i) => b.writeUInt32BE(v >>> 0, i * 4))
  return b
}

/** A SPDY client's side: header blocks through one zlib stream with the SPDY dictionary, as Go's framer writes them. */
const spdyClient = (write: (bytes: Buffer) => void) => {
  const deflate = Zlib.createDeflate({ dictionary, level: 9 })
  const compressed: Array<Buffer> = []
  deflate.on("data", (c: Buffer) => compressed.push(c))
  const block = (headers: Record<string, string>) =>
    new Promise<Buffer>((resolve) => {
      const entries = Object.entries(headers)
      deflate.write(Buffer.concat([
        u32(entries.length),
        ...entries.flatMap(([k, v]) => [u32(k.length), Buffer.from(k), u32(v.length), Buffer.from(v)])
      ]))
      deflate.flush(Zlib.constants.Z_SYNC_FLUSH, () => resolve(Buffer.concat(compressed.splice(0))))
    })
  const control = (type: number, flags: number, payload: Buffer) =>
    Buffer.concat([Buffer.from([0x80, 3, 0, type]), u32((flags << 24) | payload.length), payload])
  return {
    synStream: async (id: number, headers: Record<string, string>, fin = false) =>
      write(control(1, fin ? 1 : 0, Buffer.concat([u32(id, 0), Buffer.from([0, 0]), await block(headers)]))),
    data: (id: number, data: string, fin = false) =>
      write(Buffer.concat([u32(id), u32(((fin ? 1 : 0) << 24) | Buffer.byteLength(data)), Buffer.from(data)])),
    ping: (id: number) => write(control(6, 0, u32(id)))
  }
}

interface ServerFrame {
  readonly type: "data" | "synReply" | "rstStream" | "ping" | "goAway" | string
  readonly streamId: number
  readonly fin: boolean
  readonly data: Buffer
}

/** Splits what the server sent into frames. */
const serverFrames = (bytes: Buffer): Array<ServerFrame> => {
  const frames: Array<ServerFrame> = []
  let offset = 0
  while (offset + 8 <= bytes.length) {
    const first = bytes.readUInt32BE(offset)
    const flags = bytes[offset + 4]!
    const length = bytes.readUInt32BE(offset + 4) & 0xffffff
    const payload = bytes.subarray(offset + 8, offset + 8 + length)
    offset += 8 + length
    if ((first & 0x80000000) === 0) {
      frames.push({ type: "data", streamId: first, fin: (flags & 1) === 1, data: payload })
    } else {
      const type = ({ 2: "synReply", 3: "rstStream", 6: "ping", 7: "goAway" } as Record<number, string>)[first & 0xffff] ??
        String(first & 0xffff)
      frames.push({ type, streamId: payload.readUInt32BE(0) & 0x7fffffff, fin: (flags & 1) === 1, data: payload })
    }
  }
  return frames
}

/**
 * A WebSocket client of its own (RFC 6455 framing, binary messages only): the handshake
 * offering one subprotocol, masked frames out, the server's binary messages collected.
 */
const rawWebSocket = (base: string, path: string, protocol: string) =>
  Effect.acquireRelease(
    Effect.promise(() =>
      new Promise<{ head: string; messages: Array<Buffer>; send: (data: Buffer) => void; socket: Net.Socket }>(
        (resolve, reject) => {
          const { port } = new URL(base)
          const socket = Net.connect(Number(port), "127.0.0.1")
          const messages: Array<Buffer> = []
          let buffer = Buffer.alloc(0)
          let head: string | undefined
          const send = (data: Buffer) => {
            const mask = Buffer.from([1, 2, 3, 4])
            const length = data.length < 126
              ? Buffer.from([0x80 | data.length])
              : data.length < 65536
              ? Buffer.from([0x80 | 126, data.length >> 8, data.length & 0xff])
              : Buffer.concat([Buffer.from([0x80 | 127, 0, 0, 0, 0]), u32(data.length)])
            const masked = Buffer.from(data.map((b, i) => b ^ mask[i % 4]!))
            socket.write(Buffer.concat([Buffer.from([0x82]), length, mask, masked]))
          }
          socket.on("data", (chunk: Buffer) => {
            buffer = Buffer.concat([buffer, chunk])
            if (head === undefined) {
              const end = buffer.indexOf("\r\n\r\n")
              if (end === -1) return
              head = buffer.subarray(0, end).toString()
              buffer = buffer.subarray(end + 4)
              if (!head.startsWith("HTTP/1.1 101")) return reject(new Error(head))
              resolve({ head, messages, send, socket })
            }
            // the server's frames are not masked
            while (buffer.length >= 2) {
              let length = buffer[1]! & 0x7f
              let offset = 2
              if (length === 126) {
                length = buffer.readUInt16BE(2)
                offset = 4
              } else if (length === 127) {
                length = Number(buffer.readBigUInt64BE(2))
                offset = 10
              }
              if (buffer.length < offset + length) return
              if ((buffer[0]! & 0x0f) === 2) messages.push(buffer.subarray(offset, offset + length))
              buffer = buffer.subarray(offset + length)
            }
          })
          socket.on("error", reject)
          socket.write(
            `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n` +
              "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n" +
              `Sec-WebSocket-Protocol: ${protocol}\r\n\r\n`
          )
        }
      )
    ),
    (ws) => Effect.sync(() => ws.socket.destroy())
  )

describe("port-forward over SPDY/3.1", () => {
  it.live("a plain Upgrade: SPDY/3.1 (kubectl's fallback): 101, stream pairs by requestid, an echo, FIN, pings, a bad stream reset", () =>
    Effect.gen(function*() {
      const served = yield* serve()
      const { port } = new URL(served.url)
      const received: Array<Buffer> = []
      const socket = Net.connect(Number(port), "127.0.0.1")
      yield* Effect.addFinalizer(() => Effect.sync(() => socket.destroy()))
      const head = yield* Effect.promise(() =>
        new Promise<string>((resolve) => {
          let text = Buffer.alloc(0)
          const onData = (chunk: Buffer) => {
            text = Buffer.concat([text, chunk])
            const end = text.indexOf("\r\n\r\n")
            if (end === -1) return
            socket.off("data", onData)
            if (end + 4 < text.length) received.push(text.subarray(end + 4))
            socket.on("data", (c: Buffer) => received.push(c))
            resolve(text.subarray(0, end).toString())
          }
          socket.on("data", onData)
          socket.write(
            "POST /api/v1/namespaces/default/pods/web/portforward HTTP/1.1\r\nHost: fake\r\nConnection: Upgrade\r\n" +
              "Upgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: portforward.k8s.io\r\nContent-Length: 0\r\n\r\n"
          )
        })
      )
      assert.match(head, /^HTTP\/1\.1 101 Switching Protocols\r\n/)
      assert.include(head, "Upgrade: SPDY/3.1")
      assert.include(head, "X-Stream-Protocol-Version: portforward.k8s.io")
      const client = spdyClient((bytes) => socket.write(bytes))
      yield* Effect.promise(() => client.synStream(1, { streamtype: "error", port: "8080", requestid: "0" }))
      yield* Effect.promise(() => client.synStream(3, { streamtype: "data", port: "8080", requestid: "0" }))
      client.data(3, "hello over spdy")
      client.ping(1)
      yield* Effect.promise(() => client.synStream(5, { streamtype: "data" }))
      yield* Effect.sleep("100 millis")
      client.data(3, "", true)
      yield* Effect.sleep("100 millis")
      const frames = serverFrames(Buffer.concat(received))
      assert.deepStrictEqual(frames.filter((f) => f.type === "synReply").map((f) => f.streamId), [1, 3])
      const echoed = frames.filter((f) => f.type === "data" && f.streamId === 3).map((f) => f.data.toString()).join("")
      assert.strictEqual(echoed, "hello over spdy")
      // the echo is done when the client half-closes: both streams get their FIN, the error stream empty
      assert.isTrue(frames.some((f) => f.type === "data" && f.streamId === 3 && f.fin))
      assert.isTrue(frames.some((f) => f.type === "data" && f.streamId === 1 && f.fin && f.data.length === 0))
      assert.deepStrictEqual(frames.filter((f) => f.type === "ping").map((f) => f.data.readUInt32BE(0)), [1])
      // a stream without its port header is refused
      const reset = frames.find((f) => f.type === "rstStream")!
      assert.deepStrictEqual([reset.streamId, reset.data.readUInt32BE(4)], [5, 3])
      assert.deepInclude(served.control.requests().map((r) => `${r.method} ${r.path}`), "POST /api/v1/namespaces/default/pods/web/portforward")
    }).pipe(Effect.scoped))

  it.live("the SPDY tunnel in a WebSocket (SPDY/3.1+portforward.k8s.io) carries the same session; a handler's failure is the runtime's error", () =>
    Effect.gen(function*() {
      const served = yield* serve({
        portForward: (_pod, port, connection) =>
          port === 9 ? Effect.fail(new Error("connect: connection refused")) : connection.write(`port ${port}`)
      })
      // `ws` and the WHATWG WebSocket refuse a subprotocol that is no HTTP token: a hand-made client offers it
      const tunnel = yield* rawWebSocket(served.url, "/api/v1/namespaces/default/pods/web/portforward", "SPDY/3.1+portforward.k8s.io")
      assert.include(tunnel.head, "Sec-WebSocket-Protocol: SPDY/3.1+portforward.k8s.io")
      const received = tunnel.messages
      const client = spdyClient((bytes) => tunnel.send(bytes))
      yield* Effect.promise(() => client.synStream(1, { streamtype: "error", port: "80", requestid: "7" }, true))
      yield* Effect.promise(() => client.synStream(3, { streamtype: "data", port: "80", requestid: "7" }))
      yield* Effect.promise(() => client.synStream(5, { streamtype: "error", port: "9", requestid: "8" }, true))
      yield* Effect.promise(() => client.synStream(7, { streamtype: "data", port: "9", requestid: "8" }))
      yield* Effect.sleep("100 millis")
      const frames = serverFrames(Buffer.concat(received))
      const on = (id: number) => frames.filter((f) => f.type === "data" && f.streamId === id).map((f) => f.data.toString()).join("")
      assert.strictEqual(on(3), "port 80")
      assert.strictEqual(on(1), "")
      assert.match(on(5), /^error forwarding port 9 to pod [0-9a-f]{64}, uid : connect: connection refused$/)
      assert.isTrue(frames.some((f) => f.type === "data" && f.streamId === 7 && f.fin))
    }).pipe(Effect.scoped))

  it.effect("refusals: no X-Stream-Protocol-Version is 400, another protocol 403 naming what the server accepts", () =>
    Effect.gen(function*() {
      const served = yield* serve()
      const { port } = new URL(served.url)
      const ask = (headers: string) =>
        Effect.promise(() =>
          new Promise<string>((resolve) => {
            const socket = Net.connect(Number(port), "127.0.0.1")
            let text = ""
            socket.on("data", (c: Buffer) => (text += c.toString()))
            socket.on("close", () => resolve(text))
            socket.write(
              "POST /api/v1/namespaces/default/pods/web/portforward HTTP/1.1\r\nHost: fake\r\nConnection: Upgrade\r\n" +
                `Upgrade: SPDY/3.1\r\n${headers}Content-Length: 0\r\n\r\n`
            )
          })
        )
      const missing = yield* ask("")
      assert.match(missing, /^HTTP\/1\.1 400 Bad Request\r\n/)
      assert.include(missing, "unable to upgrade: X-Stream-Protocol-Version is required")
      const other = yield* ask("X-Stream-Protocol-Version: v4.channel.k8s.io\r\n")
      assert.match(other, /^HTTP\/1\.1 403 Forbidden\r\n/)
      assert.include(other, "x-accepted-stream-protocol-versions: portforward.k8s.io")
      assert.include(
        other,
        "unable to upgrade: unable to negotiate protocol: client supports [v4.channel.k8s.io], server accepts [portforward.k8s.io]"
      )
    }))
})

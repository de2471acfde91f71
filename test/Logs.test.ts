import { assert, describe, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Stream from "effect/Stream"
import type * as Http from "node:http"
import * as Kube from "../src/Kube.js"
import { splitLines } from "../src/internal/lines.js"
import { Pods } from "../src/resources/Pod.js"
import * as Loopback from "./util/loopback.js"

const pods = Kube.api(Pods, { namespace: "default" })

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Writes the pieces one by one with a pause between them, so they leave as separate packets. */
const writeSlowly = async (res: Http.ServerResponse, pieces: ReadonlyArray<Uint8Array>, end: boolean) => {
  res.writeHead(200, { "content-type": "text/plain" })
  for (const piece of pieces) {
    res.write(piece)
    await sleep(15)
  }
  if (end) res.end()
}

const utf8 = (s: string) => new TextEncoder().encode(s)

describe("line splitting", () => {
  it.effect("gives the same lines wherever the bytes are cut, multi-byte characters included", () =>
    Effect.gen(function*() {
      const text = "héllo wörld\r\n日本語のログ\n\n🙂 emoji\nlast line without newline"
      const bytes = utf8(text)
      const expected = ["héllo wörld", "日本語のログ", "", "🙂 emoji", "last line without newline"]
      for (let cut = 0; cut <= bytes.length; cut++) {
        for (const second of [cut, Math.min(bytes.length, cut + 1), Math.min(bytes.length, cut + 3)]) {
          const pieces = [bytes.subarray(0, cut), bytes.subarray(cut, second), bytes.subarray(second)]
          const lines = yield* Stream.fromIterable(pieces).pipe(splitLines(true), Stream.runCollect)
          assert.deepStrictEqual(Chunk.toReadonlyArray(lines), expected, `cut at ${cut} and ${second}`)
        }
      }
    }))

  it.effect("emits nothing for an empty body and keeps a lone final line", () =>
    Effect.gen(function*() {
      const none = yield* Stream.fromIterable<Uint8Array>([]).pipe(splitLines(true), Stream.runCollect)
      assert.strictEqual(Chunk.size(none), 0)
      const one = yield* Stream.make(utf8("only")).pipe(splitLines(true), Stream.runCollect)
      assert.deepStrictEqual(Chunk.toReadonlyArray(one), ["only"])
    }))
})

describe("logStream over a real connection", () => {
  it.scopedLive("handles lines and a UTF-8 character split across packets, and a last line without newline", () =>
    Effect.gen(function*() {
      const server = yield* Loopback.serve((_req, res) => {
        const whole = utf8("first line\nhé")
        const rest = utf8("llo\r\nthird ")
        void writeSlowly(res, [
          whole.subarray(0, whole.length - 1), // ends in the middle of "é"
          whole.subarray(whole.length - 1),
          rest,
          utf8("part\nlast")
        ], true)
      })
      const lines = yield* pods.logStream("web", { container: "app", tailLines: 10, timestamps: true }).pipe(
        Stream.runCollect,
        Effect.provide(Loopback.layer(server.url))
      )
      assert.deepStrictEqual(Chunk.toReadonlyArray(lines), ["first line", "héllo", "third part", "last"])
      assert.deepStrictEqual(server.requests, [
        "GET /api/v1/namespaces/default/pods/web/log?container=app&follow=true&tailLines=10&timestamps=true"
      ])
    }))

  it.scopedLive("closes the connection when the consumer stops early or is interrupted", () =>
    Effect.gen(function*() {
      const server = yield* Loopback.serve((_req, res) => {
        res.writeHead(200, { "content-type": "text/plain" })
        res.write("one\ntwo\n")
        // never ends: a container that keeps running
      })
      const layer = Loopback.layer(server.url)
      const firstTwo = yield* pods.logStream("web").pipe(Stream.take(2), Stream.runCollect, Effect.provide(layer))
      assert.deepStrictEqual(Chunk.toReadonlyArray(firstTwo), ["one", "two"])
      assert.isTrue(yield* Loopback.eventually(() => server.openResponses() === 0), "closed after take(2)")

      const fiber = yield* pods.logStream("web").pipe(Stream.runDrain, Effect.provide(layer), Effect.fork)
      assert.isTrue(yield* Loopback.eventually(() => server.openResponses() === 1), "follow is open")
      yield* Fiber.interrupt(fiber)
      assert.isTrue(yield* Loopback.eventually(() => server.openResponses() === 0), "closed after interrupt")
    }))
})

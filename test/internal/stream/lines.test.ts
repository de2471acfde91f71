/**
 * Line splitting of streamed answers (internal/stream/lines.ts), whatever the chunking. Moved out
 * of the logs tests, which test the public API.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { splitLines } from "../../../packages/effect-kube/src/internal/stream/lines.js"

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
          assert.deepStrictEqual(lines, expected, `cut at ${cut} and ${second}`)
        }
      }
    }))

  it.effect("emits nothing for an empty body and keeps a lone final line", () =>
    Effect.gen(function*() {
      const none = yield* Stream.fromIterable<Uint8Array>([]).pipe(splitLines(true), Stream.runCollect)
      assert.strictEqual(none.length, 0)
      const one = yield* Stream.make(utf8("only")).pipe(splitLines(true), Stream.runCollect)
      assert.deepStrictEqual(one, ["only"])
    }))

  it.effect("joins a line begun in earlier chunks the same way, kept in one run or many, split in a character or not", () =>
    Effect.gen(function*() {
      // a BOM first, CRLF, characters of 2 to 4 bytes at every offset, empty lines, and a line of 5,000 bytes
      // (pieces of it are kept as they came, not copied into a slab)
      const long = "x".repeat(4999) + "é"
      const text = `\ufeffé\r\nab日\n\n${long}\r\n🙂\n\r\nlast é`
      const bytes = utf8(text)
      const expected = ["é", "ab日", "", long, "🙂", "", "last é"]
      for (const size of [1, 2, 3, 5, 7, 64, 4095, 4096, 4097]) {
        const pieces: Array<Uint8Array> = []
        for (let at = 0; at < bytes.length; at += size) pieces.push(bytes.subarray(at, at + size))
        const lines = yield* Stream.fromIterable(pieces).pipe(splitLines(true), Stream.runCollect)
        assert.deepStrictEqual(lines, expected, `pieces of ${size} bytes`)
      }
    }))

  it.effect("ends with the limit's error at a line joined from kept bytes, after the lines before it", () =>
    Effect.gen(function*() {
      const pieces = [utf8("short\nbegun "), utf8("x".repeat(20)), utf8("y\nnever")]
      const result = yield* Stream.fromIterable(pieces).pipe(
        splitLines(true, 16, () => "too long" as const),
        Stream.runCollect,
        Effect.flip
      )
      assert.strictEqual(result, "too long")
      const seen: Array<string> = []
      yield* Stream.fromIterable(pieces).pipe(
        splitLines(true, 16, () => "too long" as const),
        Stream.runForEach((line) => Effect.sync(() => seen.push(line))),
        Effect.ignore
      )
      assert.deepStrictEqual(seen, ["short"])
      // within the limit, the same pieces give every line
      const all = yield* Stream.fromIterable(pieces).pipe(splitLines(true, 64), Stream.runCollect)
      assert.deepStrictEqual(all, ["short", `begun ${"x".repeat(20)}y`, "never"])
    }))
})

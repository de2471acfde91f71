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
})

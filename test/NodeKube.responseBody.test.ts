/**
 * How the Node transport reads a one-shot answer's body (src/internal/undiciHttpClient.ts):
 * the bytes as sent, however the server cuts them, with or without a content-length, a
 * byte order mark dropped; the text read once and kept nowhere afterwards, so that a large
 * page of a list dies young instead of waiting, promoted, for the next full collection.
 */
import * as HttpClient from "effect/http/HttpClient"
import { assert, describe, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import type * as Http from "node:http"
import * as V8 from "node:v8"
import { it as vitestIt } from "vitest"
import * as Vm from "node:vm"
import * as Kube from "../packages/effect-kube/src/Kube.js"
import { Pods } from "../packages/effect-kube/src/resources/index.js"
import * as Loopback from "./util/loopback.js"
import { pod } from "./util/pods.js"

const pods = Kube.api(Pods, { namespace: "default" })

/** A PodList of `count` pods whose names carry multi-byte characters. */
const podList = (count: number, padding = 0) =>
  JSON.stringify({
    kind: "PodList",
    apiVersion: "v1",
    metadata: { resourceVersion: "7" },
    items: Array.from({ length: count }, (_, i) => ({
      ...pod(`pöd-ü-${i}`),
      metadata: { name: `pöd-ü-${i}`, namespace: "default", annotations: { pad: "é".repeat(padding) } }
    }))
  })

/** Writes `bytes` in pieces of `size` bytes (cutting characters in two), one per tick. */
const writeInPieces = (res: Http.ServerResponse, bytes: Buffer, size: number, halfway?: () => void) => {
  let offset = 0
  const next = () => {
    if (offset >= bytes.length) return res.end()
    res.write(bytes.subarray(offset, offset + size))
    if (offset < bytes.length / 2 && offset + size >= bytes.length / 2) halfway?.()
    offset += size
    setImmediate(next)
  }
  next()
}

const listWith = (answer: (res: Http.ServerResponse) => void) =>
  Effect.gen(function*() {
    const server = yield* Loopback.serve((_req, res) => answer(res))
    return yield* pods.list().pipe(Effect.provide(Loopback.layer(server.url)))
  })

describe("the body of a one-shot answer", () => {
  const body = Buffer.from(podList(40, 50))

  it.live("with a content-length, written in pieces that cut characters in two", () =>
    Effect.gen(function*() {
      const list = yield* listWith((res) => {
        res.writeHead(200, { "content-type": "application/json", "content-length": body.length })
        writeInPieces(res, body, 333)
      })
      assert.strictEqual(list.items.length, 40)
      assert.strictEqual(list.items[39]!.metadata?.name, "pöd-ü-39")
      assert.strictEqual(list.items[0]!.metadata?.annotations?.["pad"], "é".repeat(50))
    }))

  it.live("without a content-length (chunked)", () =>
    Effect.gen(function*() {
      const list = yield* listWith((res) => {
        res.writeHead(200, { "content-type": "application/json" })
        writeInPieces(res, body, 1001)
      })
      assert.strictEqual(list.items.length, 40)
      assert.strictEqual(list.items[17]!.metadata?.name, "pöd-ü-17")
    }))

  it.live("a UTF-8 byte order mark is dropped, as fetch's text() drops it", () =>
    Effect.gen(function*() {
      const withBom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), body])
      const list = yield* listWith((res) => {
        res.writeHead(200, { "content-type": "application/json", "content-length": withBom.length })
        res.end(withBom)
      })
      assert.strictEqual(list.items.length, 40)
    }))

  it.live("a body cut short of its content-length fails to decode, rather than giving a truncated text", () =>
    Effect.gen(function*() {
      const exit = yield* Effect.exit(listWith((res) => {
        res.writeHead(200, { "content-type": "application/json", "content-length": body.length })
        res.write(body.subarray(0, 1000), () => res.destroy())
      }))
      assert.isTrue(Exit.isFailure(exit))
      if (Exit.isFailure(exit)) {
        const error = Option.getOrUndefined(Cause.findErrorOption(exit.cause))
        assert.strictEqual(error?._tag, "HttpClientError", String(exit.cause))
        assert.strictEqual((error as { reason?: { _tag: string } } | undefined)?.reason?._tag, "DecodeError")
      }
    }))

  it.live("the text is read once: a second read fails instead of keeping the text on the response", () =>
    Effect.gen(function*() {
      const server = yield* Loopback.serve((_req, res) => {
        res.writeHead(200, { "content-type": "text/plain", "content-length": 5 })
        res.end("hello")
      })
      yield* Effect.gen(function*() {
        const client = yield* HttpClient.HttpClient
        const response = yield* client.get(`${server.url}/x`)
        assert.strictEqual(yield* response.text, "hello")
        const again = yield* Effect.exit(response.text)
        assert.isTrue(Exit.isFailure(again))
      }).pipe(Effect.provide(Loopback.layer(server.url)))
    }))

  // Run outside @effect/vitest's test runtime, as a program runs.
  vitestIt("the text of a large page is not kept past the answer: it dies in a young collection", () =>
    Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      V8.setFlagsFromString("--expose-gc")
      const gc = Vm.runInNewContext("gc") as (options?: { type: "major" | "minor"; execution: "sync" }) => void
      // ~3 MB of JSON, read as one string: a large object, young when made
      const big = Buffer.from(podList(1500, 1000))
      const server = yield* Loopback.serve((_req, res) => {
        res.writeHead(200, { "content-type": "application/json", "content-length": big.length })
        // young collections while the body arrives make the response (and undici's body) old,
        // as a real transfer of a few MB does
        writeInPieces(res, big, 64 * 1024, () => {
          gc({ type: "minor", execution: "sync" })
          gc({ type: "minor", execution: "sync" })
        })
      })
      const layer = Loopback.layer(server.url)
      const largeObjects = () =>
        V8.getHeapSpaceStatistics().filter((s) => s.space_name === "large_object_space")[0]!.space_used_size
      let promoted = 0
      for (let round = 0; round < 3; round++) {
        gc({ type: "major", execution: "sync" })
        const before = largeObjects()
        const list = yield* pods.list().pipe(Effect.provide(layer))
        assert.strictEqual(list.items.length, 1500)
        gc({ type: "minor", execution: "sync" })
        promoted = Math.max(promoted, largeObjects() - before)
      }
      assert.isBelow(promoted, big.length / 2, `${promoted} bytes of large objects survived a young collection`)
    }))))
})

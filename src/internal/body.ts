/**
 * The body of a streamed answer (a watch, a followed log) as a stream of byte chunks.
 *
 * `@effect/platform-node`'s undici response reads its body through `NodeStream.fromReadable`:
 * paused mode, a latch per `readable` event and `read()` calls that concatenate Node's
 * buffered chunks into a new Buffer. On a watch that costs as much CPU as undici's own
 * parsing of the bytes (measured with `bench/stream-micro.ts`: 6-15 µs per 4 KB event
 * against 2 µs for undici's body in flowing mode). Where the response is backed by a Node
 * `Readable` (the Node transport), it is read here in flowing mode instead: every chunk that
 * arrived while the consumer was busy is handed on in one `Chunk`, and the socket is paused
 * once `highWaterMark` bytes wait unread, so a slow consumer never makes the client buffer
 * a whole watch. Any other response (fetch-based runtimes) keeps the platform's stream.
 */
import * as HttpClientError from "@effect/platform/HttpClientError"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Channel from "effect/Channel"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"

/** Bytes read ahead of the consumer before the socket is paused. */
const highWaterMark = 512 * 1024

interface NodeReadable {
  on(event: string, listener: (value?: unknown) => void): unknown
  off(event: string, listener: (value?: unknown) => void): unknown
  pause(): unknown
  resume(): unknown
  destroy(): unknown
  readonly readableEnded?: boolean
  readonly destroyed?: boolean
}

const isNodeReadable = (u: unknown): u is NodeReadable => {
  if (typeof u !== "object" || u === null) return false
  const r = u as Record<string, unknown>
  return typeof r["on"] === "function" && typeof r["off"] === "function" && typeof r["pause"] === "function" &&
    typeof r["resume"] === "function" && typeof r["destroy"] === "function"
}

/** The Node Readable behind a response of `@effect/platform-node`'s undici client, if that is what it is. */
const nodeBodyOf = (response: HttpClientResponse.HttpClientResponse): NodeReadable | undefined => {
  const source = (response as { readonly source?: { readonly body?: unknown } }).source
  const body = typeof source === "object" && source !== null ? source.body : undefined
  return isNodeReadable(body) ? body : undefined
}

/**
 * A Node Readable as a stream of its chunks. Failures of the body become `onError(cause)`;
 * a body that closes without ending is a failure too (the connection went away). When the
 * stream ends early (the consumer stopped, or was interrupted) the body is destroyed, which
 * closes its connection.
 */
export const fromNodeReadable = <E>(
  readable: NodeReadable,
  onError: (cause: unknown) => E
): Stream.Stream<Uint8Array, E> =>
  Stream.suspend(() => {
    let queue: Array<Uint8Array> = []
    let queued = 0
    let paused = false
    let ended = readable.readableEnded === true
    let failure: { readonly cause: unknown } | undefined = undefined
    let wake: (() => void) | undefined = undefined
    const notify = () => {
      const resume = wake
      if (resume !== undefined) {
        wake = undefined
        resume()
      }
    }
    const onData = (chunk: unknown) => {
      const bytes = chunk as Uint8Array
      queue.push(bytes)
      queued += bytes.length
      if (queued >= highWaterMark && !paused) {
        paused = true
        readable.pause()
      }
      notify()
    }
    const onEnd = () => {
      ended = true
      notify()
    }
    const onFailure = (cause: unknown) => {
      if (failure === undefined) failure = { cause }
      notify()
    }
    const onClose = () => {
      if (!ended && failure === undefined) failure = { cause: new Error("the body closed before it ended") }
      notify()
    }
    const waitForData = Effect.async<void>((resume) => {
      wake = () => resume(Effect.void)
      return Effect.sync(() => {
        wake = undefined
      })
    })
    const pull: Channel.Channel<Chunk.Chunk<Uint8Array>, unknown, E, unknown, void, unknown> = Channel.suspend(() => {
      if (queue.length > 0) {
        const batch = queue
        queue = []
        queued = 0
        if (paused) {
          paused = false
          readable.resume()
        }
        return Channel.zipRight(Channel.write(Chunk.unsafeFromArray(batch)), pull)
      }
      if (failure !== undefined) return Channel.fail(onError(failure.cause))
      if (ended) return Channel.void
      return Channel.zipRight(Channel.fromEffect(waitForData), pull)
    })
    const start = Channel.suspend(() => {
      if (!ended) {
        readable.on("data", onData)
        readable.on("end", onEnd)
        readable.on("error", onFailure)
        readable.on("close", onClose)
      }
      return pull
    })
    return Stream.fromChannel(Channel.ensuring(
      start,
      Effect.sync(() => {
        readable.off("data", onData)
        readable.off("end", onEnd)
        readable.off("error", onFailure)
        readable.off("close", onClose)
        if (!ended && readable.destroyed !== true) readable.destroy()
      })
    ))
  })

/** The body of a response as byte chunks: read directly when it is a Node Readable, else the platform's stream. */
export const bodyStream = (
  response: HttpClientResponse.HttpClientResponse
): Stream.Stream<Uint8Array, HttpClientError.ResponseError> => {
  const body = nodeBodyOf(response)
  return body === undefined ? response.stream : fromNodeReadable(body, (cause) =>
    new HttpClientError.ResponseError({
      request: response.request,
      response,
      reason: "Decode",
      cause
    }))
}

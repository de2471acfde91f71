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
import type * as Duration from "effect/Duration"
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
 * A stateful decoder of a body's bytes, run by `decodedBody`: bytes are handed in as they
 * arrive, outputs are taken out a batch at a time, so a consumer never holds more than one
 * batch of decoded values (a batch of parsed watch events is garbage in the young
 * generation by the time the next is parsed).
 */
export interface BodyDecoder<Out, E> {
  /** Takes in one chunk of the body's bytes (never empty). */
  readonly push: (bytes: Uint8Array) => void
  /** Whether `take` has anything to hand out. */
  readonly ready: () => boolean
  /** Whether what was pushed makes a whole batch already (more bytes are then left undecoded, as bytes). */
  readonly full: () => boolean
  /** Moves the next batch into `out`; an error ends the stream once `out` is emitted. */
  readonly take: (out: Array<Out>) => E | undefined
  /** The body ended (or went idle): the last outputs, or an error. */
  readonly end: (out: Array<Out>) => E | undefined
}

/** Options of `decodedBody`. */
export interface DecodedBodyOptions<E> {
  /** Ends the body, as if it had ended, when no bytes arrive for this long while the consumer waits for them. */
  readonly idleTimeout?: Duration.Duration | undefined
  /** What a failure of the body becomes (its error carries the request: scrub it). */
  readonly onError: (error: HttpClientError.ResponseError) => E
}

const emit = <Out, E, InElem, InErr, InDone>(
  out: Array<Out>,
  error: E | undefined,
  next: Channel.Channel<Chunk.Chunk<Out>, InElem, E, InErr, void, InDone>
): Channel.Channel<Chunk.Chunk<Out>, InElem, E, InErr, void, InDone> => {
  if (error !== undefined) {
    return out.length === 0
      ? Channel.fail(error)
      : Channel.zipRight(Channel.write(Chunk.unsafeFromArray(out)), Channel.fail(error))
  }
  return out.length === 0 ? next : Channel.zipRight(Channel.write(Chunk.unsafeFromArray(out)), next)
}

const bodyFailure = (response: HttpClientResponse.HttpClientResponse, cause: unknown) =>
  new HttpClientError.ResponseError({ request: response.request, response, reason: "Decode", cause })

/**
 * The body of a response through a `BodyDecoder`, as one channel: where the body is a Node
 * Readable it is read in flowing mode (see the module's comment) and the decoder runs in
 * the same loop that waits for bytes, with no stream stage per step; the idle timeout is a
 * timer only while the consumer waits for bytes, never one per pull. Any other body goes
 * through the platform's stream.
 */
export const decodedBody = <Out, E, E2>(
  response: HttpClientResponse.HttpClientResponse,
  make: () => BodyDecoder<Out, E>,
  options: DecodedBodyOptions<E2>
): Stream.Stream<Out, E | E2> =>
  Stream.suspend(() => {
    // a decoder (and, for a Node body, the reading state) for each run of the stream
    const decoder = make()
    const readable = nodeBodyOf(response)
    return readable === undefined
      ? platformDecoded(response, decoder, options)
      : nodeDecoded(readable, response, decoder, options)
  })

const nodeDecoded = <Out, E, E2>(
  readable: NodeReadable,
  response: HttpClientResponse.HttpClientResponse,
  decoder: BodyDecoder<Out, E>,
  options: DecodedBodyOptions<E2>
): Stream.Stream<Out, E | E2> => {
  const idleTimeout = options.idleTimeout
  // bytes not yet decoded: Buffers live outside the JS heap, text and objects do not, so
  // bytes are decoded a batch at a time, as the consumer pulls
  let queue: Array<Uint8Array> = []
  let head = 0
  let queued = 0
  let paused = false
  let ended = readable.readableEnded === true
  let idle = false
  let failure: { readonly cause: unknown } | undefined = undefined
  let wake: (() => void) | undefined = undefined
  // A waiting consumer is woken once per turn of the event loop, after its I/O: a socket
  // read brings several TLS records, each a chunk of its own, and a wake per chunk (the
  // fiber resumed, the channels run to the next wait) cost more than the chunks' bytes
  // (a followed log's CPU time halved with one wake for all of them).
  let wakeScheduled = false
  const wakeNow = () => {
    wakeScheduled = false
    const resume = wake
    if (resume !== undefined) {
      wake = undefined
      resume()
    }
  }
  const notify = () => {
    if (wake !== undefined && !wakeScheduled) {
      wakeScheduled = true
      setImmediate(wakeNow)
    }
  }
  const onData = (chunk: unknown) => {
    const bytes = chunk as Uint8Array
    if (bytes.length === 0) return
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
  const arrival = Effect.async<void>((resume) => {
    wake = () => resume(Effect.void)
    return Effect.sync(() => {
      wake = undefined
    })
  })
  const waitForData = idleTimeout === undefined ? arrival : Effect.asVoid(
    Effect.tap(Effect.timeoutOption(arrival, idleTimeout), (arrived) => {
      if (arrived._tag === "None") idle = true
    })
  )
  type Loop = Channel.Channel<Chunk.Chunk<Out>, unknown, E | E2, unknown, void, unknown>
  const pull: Loop = Channel.suspend((): Loop => {
    while (head < queue.length && !(decoder.ready() && decoder.full())) {
      const bytes = queue[head]!
      queue[head++] = undefined as unknown as Uint8Array
      queued -= bytes.length
      if (head === queue.length) {
        queue = []
        head = 0
      }
      decoder.push(bytes)
    }
    if (paused && queued < highWaterMark / 2) {
      paused = false
      readable.resume()
    }
    if (decoder.ready()) {
      const out: Array<Out> = []
      return emit(out, decoder.take(out), pull)
    }
    if (failure !== undefined) return Channel.fail(options.onError(bodyFailure(response, failure.cause)))
    if (ended || idle) {
      const out: Array<Out> = []
      return emit(out, decoder.end(out), Channel.void)
    }
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
}

const platformDecoded = <Out, E, E2>(
  response: HttpClientResponse.HttpClientResponse,
  decoder: BodyDecoder<Out, E>,
  options: DecodedBodyOptions<E2>
): Stream.Stream<Out, E | E2> => {
  type Loop = Channel.Channel<Chunk.Chunk<Out>, Chunk.Chunk<Uint8Array>, E | E2, E2, unknown, unknown>
  const drain = (next: Loop): Loop =>
    Channel.suspend(() => {
      if (!decoder.ready()) return next
      const out: Array<Out> = []
      return emit(out, decoder.take(out), drain(next))
    })
  const loop: Loop = Channel.readWithCause({
    onInput: (input: Chunk.Chunk<Uint8Array>) => {
      for (const bytes of input) if (bytes.length > 0) decoder.push(bytes)
      return drain(loop)
    },
    onFailure: (cause) => Channel.failCause(cause),
    onDone: () => {
      const out: Array<Out> = []
      return emit<Out, E | E2, Chunk.Chunk<Uint8Array>, E2, unknown>(out, decoder.end(out), Channel.void)
    }
  })
  const body = Stream.mapError(response.stream, options.onError)
  const timed = options.idleTimeout === undefined ? body : Stream.timeout(body, options.idleTimeout)
  return Stream.pipeThroughChannelOrFail(timed, loop)
}

/** Hands the bytes on as they came: every chunk that arrived while the consumer was busy, in one batch. */
const passBytes = (): BodyDecoder<Uint8Array, never> => {
  let pending: Array<Uint8Array> = []
  return {
    push: (bytes) => {
      pending.push(bytes)
    },
    ready: () => pending.length > 0,
    full: () => false,
    take: (out) => {
      for (const bytes of pending) out.push(bytes)
      pending = []
      return undefined
    },
    end: () => undefined
  }
}

/** The body of a response as its byte chunks (see the module's comment). */
export const bodyStream = (
  response: HttpClientResponse.HttpClientResponse
): Stream.Stream<Uint8Array, HttpClientError.ResponseError> =>
  decodedBody(response, passBytes, { onError: (error) => error })

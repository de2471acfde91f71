/**
 * The body of a streamed answer (a watch, a followed log) as a stream of byte chunks.
 *
 * Effect's `NodeStream.fromReadable` reads a body in paused mode: a latch per `readable`
 * event and a `read()` per buffered chunk. Where the response is backed by a Node
 * `Readable` (the Node transport), it is read here in flowing mode instead: every chunk
 * that arrived while the consumer was busy is handed on in one batch, and the socket is
 * paused once `highWaterMark` bytes wait unread, so a slow consumer never makes the client
 * buffer a whole watch. Any other response (fetch-based runtimes) keeps the platform's
 * stream.
 *
 * Both readers are one `Pull` (`Stream.fromPull` / `Stream.transformPull`): each pull hands
 * out one decoded batch (an array of events, lines or byte chunks) and the stream ends with
 * `Cause.done()`, with no stream stage per step.
 */
import type { NonEmptyReadonlyArray } from "effect/Array"
import * as Cause from "effect/Cause"
import * as Channel from "effect/Channel"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as HttpClientError from "effect/http/HttpClientError"
import type * as HttpClientResponse from "effect/http/HttpClientResponse"
import * as Option from "effect/Option"
import * as Pull from "effect/Pull"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { ByteRuns } from "./lines.js"
import { LimitReached, nodeBodyOf, type NodeReadable, readTextWithin } from "../transport/contract.js"
import { describedBody } from "../transport/transportCause.js"

/** Bytes read ahead of the consumer before the socket is paused. */
const highWaterMark = 512 * 1024

/**
 * Chunks shorter than this wait in the queue copied into a slab with the ones beside them: a
 * body sent a byte a frame waits as its bytes, not a `Uint8Array` a byte (about 110 bytes of
 * heap each). Pausing sooner instead would not help: a paused `Http2Stream` keeps what comes
 * (up to the stream's window) as Node's Buffers, one a frame.
 */
const smallChunk = 4096

/** The size of a slab small chunks are copied into. */
const slabBytes = 16 * 1024

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
  /**
   * Ends the body when nothing is decoded for this long while the consumer waits: bytes that
   * complete no output (a server trickling a byte a second) do not count. What was not decoded
   * yet is dropped (the client ended the body, not the server).
   */
  readonly idleTimeout?: Duration.Duration | undefined
  /** Ends the body as `idleTimeout` does once it has been read for this long, whatever comes. */
  readonly maxLifetime?: Duration.Duration | undefined
  /** What a failure of the body becomes (its error carries the request: scrub it). */
  readonly onError: (error: HttpClientError.HttpClientError) => E
  /**
   * Called before each batch is handed on: an Effect to run first (reporting what decoding
   * the batch found), or `undefined` when there is nothing to do. It runs in the pull that
   * hands the batch on, so it costs no stream stage.
   */
  readonly beforeEmit?: (() => Effect.Effect<void, E> | undefined) | undefined
}

/**
 * What a pull answers for a decoded batch (`out`, possibly empty) and, when the body is
 * over, `terminal`: the batch, else `terminal`, after `beforeEmit`'s Effect if it has one.
 */
const handOn = <Out, E, E2>(
  out: Array<Out>,
  terminal: Effect.Effect<never, E | E2 | Cause.Done> | undefined,
  beforeEmit: (() => Effect.Effect<void, E2> | undefined) | undefined
): Pull.Pull<NonEmptyReadonlyArray<Out>, E | E2> | undefined => {
  const answer = out.length > 0 ? Effect.succeed(out as unknown as NonEmptyReadonlyArray<Out>) : terminal
  if (answer === undefined) return undefined
  const before = beforeEmit?.()
  return before === undefined ? answer : Effect.andThen(before, answer)
}

const bodyFailure = (response: HttpClientResponse.HttpClientResponse, cause: unknown) =>
  new HttpClientError.HttpClientError({
    reason: new HttpClientError.DecodeError(describedBody({ request: response.request, response, cause }))
  })

/**
 * The body of a response through a `BodyDecoder`, as one pull: where the body is a Node
 * Readable it is read in flowing mode (see the module's comment) and the decoder runs in
 * the same loop that waits for bytes; the idle timeout is a timer only while the consumer
 * waits for bytes, never one per pull. Any other body goes through the platform's stream.
 * The decoder (and the reading state) is made for each run of the stream.
 */
export const decodedBody = <Out, E, E2>(
  response: HttpClientResponse.HttpClientResponse,
  make: () => BodyDecoder<Out, E>,
  options: DecodedBodyOptions<E2>
): Stream.Stream<Out, E | E2> => {
  const readable = nodeBodyOf(response)
  return readable === undefined
    ? platformDecoded(response, make, options)
    : Stream.fromChannel(Channel.fromTransform((_, scope) => nodeDecoded(readable, response, make(), options, scope)))
}

/** The class of the default (live) Clock: under it an idle wait is one Node timer rather than a race of fibers. */
const LiveClock = (Clock.Clock.defaultValue() as object).constructor

/** The longest delay a Node timer takes (a longer one fires at once): longer idle timeouts go through the Clock. */
const maxTimerMillis = 2 ** 31 - 1

const nodeDecoded = <Out, E, E2>(
  readable: NodeReadable,
  response: HttpClientResponse.HttpClientResponse,
  decoder: BodyDecoder<Out, E>,
  options: DecodedBodyOptions<E2>,
  scope: Scope.Scope
): Effect.Effect<Pull.Pull<NonEmptyReadonlyArray<Out>, E | E2>> => {
  const beforeEmit = options.beforeEmit
  // bytes not yet decoded: Buffers live outside the JS heap, text and objects do not, so
  // bytes are decoded a batch at a time, as the consumer pulls
  let queue: Array<Uint8Array> = []
  let head = 0
  let queued = 0
  let paused = false
  let ended = readable.readableEnded === true
  let idle = false
  let failure: { readonly cause: unknown } | undefined = undefined
  // once set, what every later pull answers: the end, or the failure after the last batch
  let terminal: Effect.Effect<never, E | E2 | Cause.Done> | undefined = undefined
  let wake: (() => void) | undefined = undefined
  // A waiting consumer is woken once per turn of the event loop, after its I/O: a socket
  // read brings several TLS records, each a chunk of its own, and a wake per chunk (the
  // fiber resumed, the pull run to the next wait) cost more than the chunks' bytes (a
  // followed log's CPU time halved with one wake for all of them).
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
  // the slab small chunks are being copied into, and how much of it they fill
  let slab: Uint8Array | undefined = undefined
  let slabUsed = 0
  const sealSlab = () => {
    if (slabUsed === 0) return
    queue.push(slab!.subarray(0, slabUsed))
    // a new slab for the next ones: the decoder may keep a run of this one
    slab = undefined
    slabUsed = 0
  }
  const onData = (chunk: unknown) => {
    const bytes = chunk as Uint8Array
    const size = bytes.length
    if (size === 0) return
    if (size < smallChunk) {
      if (slab !== undefined && slabUsed + size > slab.length) sealSlab()
      slab ??= new Uint8Array(slabBytes)
      slab.set(bytes, slabUsed)
      slabUsed += size
    } else {
      sealSlab()
      queue.push(bytes)
    }
    queued += size
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
  const arrival = Effect.callback<void>((resume) => {
    wake = () => resume(Effect.void)
    return Effect.sync(() => {
      wake = undefined
    })
  })
  const idleMillis = options.idleTimeout === undefined ? Infinity : Duration.toMillis(options.idleTimeout)
  const lifeMillis = options.maxLifetime === undefined ? Infinity : Duration.toMillis(options.maxLifetime)
  // the idle time is counted from the last batch handed on, not the last bytes: taken at the wait after it
  let clock: Clock.Clock | undefined = undefined
  let endsAt = Infinity
  let progressAt = 0
  let progressed = true
  const onIdle = () => {
    idle = true
    const resume = wake
    if (resume !== undefined) {
      wake = undefined
      resume()
    }
  }
  // under the live Clock: one Node timer per wait, cleared when bytes come
  const arrivalOrIdle = (millis: number) =>
    Effect.callback<void>((resume) => {
      const timer = setTimeout(onIdle, millis)
      wake = () => {
        clearTimeout(timer)
        resume(Effect.void)
      }
      return Effect.sync(() => {
        clearTimeout(timer)
        wake = undefined
      })
    })
  // under any other Clock (a TestClock), or past a Node timer's range: a race with its sleep
  const arrivalOrSleep = (millis: number) =>
    Effect.map(Effect.timeoutOption(arrival, millis), (arrived) => {
      if (Option.isNone(arrived)) idle = true
    })
  const timedWait = Effect.withFiber((fiber) => {
    clock ??= fiber.getRef(Clock.Clock)
    const now = clock.currentTimeMillisUnsafe()
    if (endsAt === Infinity) endsAt = now + lifeMillis
    if (progressed) {
      progressed = false
      progressAt = now
    }
    const left = Math.min(progressAt + idleMillis, endsAt) - now
    if (left <= 0) {
      idle = true
      return Effect.void
    }
    return left <= maxTimerMillis && clock instanceof LiveClock ? arrivalOrIdle(left) : arrivalOrSleep(left)
  })
  const waitForData: Effect.Effect<void> = Number.isFinite(idleMillis) || Number.isFinite(lifeMillis)
    ? timedWait
    : arrival
  /** Whether the body has been read for `maxLifetime` (checked as batches are handed on: a flood never waits). */
  const pastLifetime = (): boolean =>
    clock !== undefined && endsAt !== Infinity && clock.currentTimeMillisUnsafe() >= endsAt
  const step = (): Pull.Pull<NonEmptyReadonlyArray<Out>, E | E2> => {
    if (terminal !== undefined) return terminal
    for (;;) {
      sealSlab()
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
        const error = decoder.take(out)
        if (error !== undefined) terminal = Effect.fail(error)
        else if (out.length > 0) {
          progressed = true
          if (pastLifetime()) terminal = Cause.done()
        }
        const answer = handOn(out, terminal, beforeEmit)
        if (answer !== undefined) return answer
        continue
      }
      if (failure !== undefined) return terminal = Effect.fail(options.onError(bodyFailure(response, failure.cause)))
      // ended by the client (idle, or past its lifetime): a line in progress is dropped, not a truncated answer
      if (idle) return terminal = Cause.done()
      if (ended) {
        const out: Array<Out> = []
        const error = decoder.end(out)
        terminal = error === undefined ? Cause.done() : Effect.fail(error)
        return handOn(out, terminal, beforeEmit)!
      }
      return waitThenPull
    }
  }
  const pull: Pull.Pull<NonEmptyReadonlyArray<Out>, E | E2> = Effect.suspend(step)
  const waitThenPull = Effect.flatMap(waitForData, () => pull)
  if (!ended) {
    readable.on("data", onData)
    readable.on("end", onEnd)
    readable.on("error", onFailure)
    readable.on("close", onClose)
  }
  // the scope of the stream: it closes when the stream ends, fails or is interrupted
  return Effect.as(
    Scope.addFinalizer(
      scope,
      Effect.sync(() => {
        readable.off("data", onData)
        readable.off("end", onEnd)
        readable.off("error", onFailure)
        readable.off("close", onClose)
        if (!ended && readable.destroyed !== true) readable.destroy()
      })
    ),
    pull
  )
}

const platformDecoded = <Out, E, E2>(
  response: HttpClientResponse.HttpClientResponse,
  make: () => BodyDecoder<Out, E>,
  options: DecodedBodyOptions<E2>
): Stream.Stream<Out, E | E2> => {
  const body = Stream.mapError(response.stream, options.onError)
  const decoded = Stream.transformPull(body, (upstream) =>
    Effect.sync(() => {
      const decoder = make()
      const beforeEmit = options.beforeEmit
      let terminal: Effect.Effect<never, E | E2 | Cause.Done> | undefined = undefined
      const step = (): Pull.Pull<NonEmptyReadonlyArray<Out>, E | E2> => {
        if (terminal !== undefined) return terminal
        while (decoder.ready()) {
          const out: Array<Out> = []
          const error = decoder.take(out)
          if (error !== undefined) terminal = Effect.fail(error)
          const answer = handOn(out, terminal, beforeEmit)
          if (answer !== undefined) return answer
        }
        return readThenPull
      }
      const pull: Pull.Pull<NonEmptyReadonlyArray<Out>, E | E2> = Effect.suspend(step)
      const onInput = (input: NonEmptyReadonlyArray<Uint8Array>) => {
        for (const bytes of input) if (bytes.length > 0) decoder.push(bytes)
        return pull
      }
      const onEnd = (): Pull.Pull<NonEmptyReadonlyArray<Out>, E | E2> => {
        const out: Array<Out> = []
        const error = decoder.end(out)
        terminal = error === undefined ? Cause.done() : Effect.fail(error)
        return handOn(out, terminal, beforeEmit)!
      }
      const onFailure = (cause: Cause.Cause<E2 | Cause.Done>): Pull.Pull<NonEmptyReadonlyArray<Out>, E | E2> => {
        if (Pull.isDoneCause(cause)) return onEnd()
        return terminal = Effect.failCause(cause as Cause.Cause<E2>)
      }
      // a match, not a catch around the continuation: a run of chunks with no output adds no frame each
      const readThenPull = Effect.matchCauseEffect(upstream, { onSuccess: onInput, onFailure })
      return pull
    }))
  // the idle time counted in outputs, as `nodeDecoded` does, and the lifetime from the first pull
  const idle = options.idleTimeout === undefined ? decoded : Stream.timeout(decoded, options.idleTimeout)
  return options.maxLifetime === undefined ? idle : Stream.haltWhen(idle, Effect.sleep(options.maxLifetime))
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
): Stream.Stream<Uint8Array, HttpClientError.HttpClientError> =>
  decodedBody(response, passBytes, { onError: (error) => error })

const utf8Text = new TextDecoder("utf-8")

/**
 * The text of a body read through its stream (what the platform hands on, decoded from
 * gzip where it does that itself), within `maxBytes`: past it the stream is ended, which
 * cancels the body and its connection, and the read fails with `LimitReached`. For a
 * transport whose platform reads bodies whole without a bound (`fetch`'s `text()`).
 */
export const textWithin = (
  response: HttpClientResponse.HttpClientResponse,
  maxBytes: number
): Effect.Effect<string, HttpClientError.HttpClientError> => {
  const tooLarge = () => bodyFailure(response, new LimitReached("maxResponseBytes", maxBytes, "the answer"))
  const chunks = new ByteRuns()
  return Effect.map(
    Stream.runForEachArray(response.stream, (batch) => {
      for (const chunk of batch) {
        if (chunks.length + chunk.length > maxBytes) return Effect.fail(tooLarge())
        chunks.push(chunk)
      }
      return Effect.void
    }),
    () => utf8Text.decode(chunks.take())
  )
}

/**
 * A response whose whole-body reads (`text`, `json`, `arrayBuffer`) go through
 * `textWithin` with `maxBytes`, and which the request path can read within less (an error
 * answer's body): everything else is the response's own.
 */
export const bounded = (
  response: HttpClientResponse.HttpClientResponse,
  maxBytes: number
): HttpClientResponse.HttpClientResponse => {
  const text = (max: number) => textWithin(response, max)
  const decodeError = (cause: unknown) => bodyFailure(response, cause)
  return Object.create(response, {
    [readTextWithin]: { value: text },
    text: { get: () => text(maxBytes) },
    json: {
      get: () =>
        Effect.flatMap(text(maxBytes), (body) =>
          Effect.try({ try: () => (body === "" ? null : JSON.parse(body)), catch: decodeError }))
    },
    arrayBuffer: {
      get: () => Effect.map(text(maxBytes), (body) => new TextEncoder().encode(body).buffer as ArrayBuffer)
    }
  }) as HttpClientResponse.HttpClientResponse
}

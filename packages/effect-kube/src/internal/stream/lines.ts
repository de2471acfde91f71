/**
 * Line splitting for streamed answers (watch events, followed logs). Work is done once
 * per chunk of bytes, not once per line through the Stream machinery, because a watch of
 * tens of thousands of events per second spends its time here.
 */
import type { NonEmptyReadonlyArray } from "effect/Array"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Pull from "effect/Pull"
import * as Stream from "effect/Stream"
import type { BodyDecoder } from "./body.js"

interface NodeBuffer {
  toString(encoding: "utf8", start?: number, end?: number): string
}

interface NodeBufferConstructor {
  from(buffer: ArrayBufferLike, byteOffset: number, length: number): NodeBuffer
  isBuffer(u: unknown): boolean
}

const NodeBuffer = (globalThis as { readonly Buffer?: NodeBufferConstructor }).Buffer

/**
 * Decodes the complete UTF-8 of `bytes` from `start` to `end` (invalid sequences become
 * U+FFFD). Where the runtime has Node's `Buffer` (Node, Bun) it decodes the range in place,
 * without a view of it (a Buffer's `subarray` costs more than a line's decoding): its UTF-8
 * path is faster than `TextDecoder`'s, which a watch of tens of thousands of events per second
 * and a followed log of hundreds of thousands of lines pay on every byte.
 */
const utf8Range: (bytes: Uint8Array, start: number, end: number) => string = NodeBuffer !== undefined
  ? (bytes, start, end) =>
    NodeBuffer.isBuffer(bytes)
      ? (bytes as unknown as NodeBuffer).toString("utf8", start, end)
      : NodeBuffer.from(bytes.buffer, bytes.byteOffset + start, end - start).toString("utf8")
  : (() => {
    const decoder = new TextDecoder("utf-8", { ignoreBOM: true })
    return (bytes, start, end) => decoder.decode(bytes.subarray(start, end))
  })()

const utf8 = (bytes: Uint8Array): string => utf8Range(bytes, 0, bytes.length)

/** A chunk shorter than this is copied into a slab rather than kept as it came. */
const smallChunk = 4096

/** The size of the slabs small chunks are copied into. */
const slabBytes = 64 * 1024

/**
 * Bytes collected chunk by chunk until they are wanted whole. A chunk of `smallChunk` bytes
 * or more is kept as it came; a smaller one is copied into a shared slab, so that a body
 * sent a byte a frame costs its bytes and not a `Uint8Array` a byte (about 110 bytes of
 * heap each, with which a 12 MB line in 1-byte HTTP/2 frames filled a 1 GB heap before
 * `maxLineBytes` was reached). What is held is at most its bytes, a slab, and one view per
 * 4 KiB; chunks of usual sizes (a TLS record, a 16 KiB frame) are never copied, and a small
 * tail of one (what follows the last newline) is copied once.
 *
 * @internal
 */
export class ByteRuns {
  private parts: Array<Uint8Array> = []
  private slab: Uint8Array | undefined = undefined
  /** Where the run of the slab not yet in `parts` starts, and where the slab's used part ends. */
  private runStart = 0
  private slabEnd = 0
  /** The bytes held. */
  length = 0

  push(bytes: Uint8Array): void {
    const size = bytes.length
    if (size === 0) return
    this.length += size
    if (size >= smallChunk) {
      this.seal()
      this.parts.push(bytes)
      return
    }
    let slab = this.slab
    if (slab === undefined || this.slabEnd + size > slab.length) {
      this.seal()
      slab = this.slab = new Uint8Array(slabBytes)
      this.runStart = this.slabEnd = 0
    }
    slab.set(bytes, this.slabEnd)
    this.slabEnd += size
  }

  /** The bytes held and `tail` after them, as one array (the chunk itself when there is one); holds nothing after. */
  take(tail?: Uint8Array): Uint8Array {
    this.seal()
    const parts = this.parts
    const size = this.length + (tail === undefined ? 0 : tail.length)
    let out: Uint8Array
    if (parts.length === 0) out = tail ?? new Uint8Array(0)
    else if (parts.length === 1 && (tail === undefined || tail.length === 0)) {
      // a run of the slab is copied out: the slab takes the next bytes
      out = parts[0]!.buffer === this.slab?.buffer ? parts[0]!.slice() : parts[0]!
    }
    else {
      out = new Uint8Array(size)
      let offset = 0
      for (const part of parts) {
        out.set(part, offset)
        offset += part.length
      }
      if (tail !== undefined) out.set(tail, offset)
    }
    this.clear()
    return out
  }

  /**
   * The bytes held when they are one run (the common case: the tail of one chunk), as a view
   * that is valid until the next `push` (decode it at once), and holds nothing after; else
   * `undefined`, and the bytes are still held.
   */
  takeRun(): Uint8Array | undefined {
    this.seal()
    if (this.parts.length !== 1) return undefined
    const run = this.parts[0]!
    this.clear()
    return run
  }

  /** Lets go of what is held (the slab is kept, for the next bytes). */
  clear(): void {
    this.parts = []
    this.length = 0
    this.runStart = this.slabEnd = 0
  }

  private seal(): void {
    if (this.slabEnd > this.runStart) {
      this.parts.push(this.slab!.subarray(this.runStart, this.slabEnd))
      this.runStart = this.slabEnd
    }
  }
}

/**
 * Turns UTF-8 bytes into lines. A line may span chunks and a multi-byte character may be
 * split between two chunks: the bytes after the last newline of a chunk are kept, as
 * bytes, until a newline completes them (a newline byte is never inside a multi-byte
 * character), so only complete text is ever decoded, once, and without streaming state.
 * A byte-order mark at the very start is dropped, as `TextDecoder` does.
 *
 * The bytes kept are in a `ByteRuns`, so a line sent in tiny pieces costs its bytes.
 * A line longer than `maxLineBytes` (counted in bytes while it waits for its newline, in
 * characters once it is decoded) sets `overflowed`: what was kept is let go and nothing
 * more is decoded, so a server that never sends a newline cannot fill memory.
 */
export class LineDecoder {
  /** The bytes after the last newline, not yet decoded. */
  private readonly rest = new ByteRuns()
  private started = false
  /** A line passed `maxLineBytes`: the lines before it were handed out, nothing after it is. */
  overflowed = false

  constructor(
    private readonly stripCarriageReturn: boolean,
    private readonly maxLineBytes: number = Number.POSITIVE_INFINITY
  ) {}

  /**
   * Appends the lines completed by `bytes` to `out`, without their line ending. The chunk is
   * decoded in place from its first whole line to its last newline, once; only a line begun
   * in earlier chunks is put together from bytes (its kept bytes and the chunk's up to its
   * first newline), so a chunk is never copied to join what came before it.
   */
  push(bytes: Uint8Array, out: Array<string>): void {
    if (this.overflowed) return
    const last = bytes.lastIndexOf(10)
    if (last === -1) {
      this.keep(bytes)
      return
    }
    const max = this.maxLineBytes
    let from = 0
    if (this.rest.length > 0) {
      const first = bytes.indexOf(10)
      // kept bytes that end on a character's end (an ASCII byte last) are decoded where they are,
      // and the chunk's start where it is; else they are joined first, a character split between them
      const run = this.rest.takeRun()
      const line = run !== undefined && run[run.length - 1]! < 0x80
        ? this.unmarked(utf8(run)) + utf8Range(bytes, 0, first)
        : this.unmarked(utf8(run !== undefined ? concatBytes([run, bytes.subarray(0, first)]) : this.rest.take(bytes.subarray(0, first))))
      if (line.length > max) return this.overflow()
      this.emit(line, out)
      from = first + 1
    }
    if (from <= last) {
      const text = this.unmarked(utf8Range(bytes, from, last))
      let start = 0
      let newline: number
      while ((newline = text.indexOf("\n", start)) !== -1) {
        if (newline - start > max) return this.overflow()
        this.emit(text.slice(start, newline), out)
        start = newline + 1
      }
      if (text.length - start > max) return this.overflow()
      this.emit(start === 0 ? text : text.slice(start), out)
    }
    if (last + 1 < bytes.length) this.keep(bytes.subarray(last + 1))
  }

  private overflow(): void {
    this.overflowed = true
    this.rest.clear()
  }

  /** What is left after the last newline once the bytes have ended, if anything. */
  end(): string | undefined {
    if (this.rest.length === 0) return undefined
    const rest = this.unmarked(utf8(this.rest.take()))
    if (rest === "") return undefined
    return this.stripCarriageReturn && rest.endsWith("\r") ? rest.slice(0, -1) : rest
  }

  private keep(bytes: Uint8Array): void {
    if (bytes.length === 0) return
    if (this.rest.length + bytes.length > this.maxLineBytes) return this.overflow()
    this.rest.push(bytes)
  }

  private unmarked(text: string): string {
    if (this.started) return text
    this.started = true
    return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text
  }

  private emit(line: string, out: Array<string>): void {
    out.push(this.stripCarriageReturn && line.charCodeAt(line.length - 1) === 13 ? line.slice(0, -1) : line)
  }
}

/** A stateful step over whole chunks: fills `out`, and returns an error to stop with one. */
export interface ChunkStep<In, Out, E> {
  readonly onChunk: (input: NonEmptyReadonlyArray<In>, out: Array<Out>) => E | undefined
  readonly onEnd: (out: Array<Out>) => E | undefined
}

/**
 * Runs a chunk step over a stream, as one pull over the stream's pull. What was produced
 * before an error is emitted first, so a consumer sees every event up to the one that
 * failed. `make` is called once per run of the stream, so the step's state is never shared
 * between runs.
 */
export const transformChunks = <In, Out, E2>(make: () => ChunkStep<In, Out, E2>) =>
<E, R>(self: Stream.Stream<In, E, R>): Stream.Stream<Out, E | E2, R> =>
  Stream.transformPull(self, (upstream) =>
    Effect.sync(() => {
      const step = make()
      // once set, what every later pull answers: the end, or the failure after the last batch
      let terminal: Effect.Effect<never, E | E2 | Cause.Done> | undefined = undefined
      const finish = (out: Array<Out>, error: E2 | undefined): Pull.Pull<NonEmptyReadonlyArray<Out>, E | E2> => {
        terminal = error === undefined ? Cause.done() : Effect.fail(error)
        return out.length === 0 ? terminal : Effect.succeed(out as unknown as NonEmptyReadonlyArray<Out>)
      }
      const onInput = (input: NonEmptyReadonlyArray<In>): Pull.Pull<NonEmptyReadonlyArray<Out>, E | E2> => {
        const out: Array<Out> = []
        const error = step.onChunk(input, out)
        if (error !== undefined) return finish(out, error)
        return out.length === 0 ? pull : Effect.succeed(out as unknown as NonEmptyReadonlyArray<Out>)
      }
      const onFailure = (cause: Cause.Cause<E | Cause.Done>): Pull.Pull<NonEmptyReadonlyArray<Out>, E | E2> => {
        if (!Pull.isDoneCause(cause)) return terminal = Effect.failCause(cause as Cause.Cause<E>)
        const out: Array<Out> = []
        return finish(out, step.onEnd(out))
      }
      // a match, not a catch around the continuation: a run of chunks with no output adds no frame each
      const read = Effect.matchCauseEffect(upstream, { onSuccess: onInput, onFailure })
      const pull: Pull.Pull<NonEmptyReadonlyArray<Out>, E | E2> = Effect.suspend(() => terminal ?? read)
      return pull
    }))

/**
 * The lines of a byte stream, without their newline (and without a `\r` before it when
 * `stripCarriageReturn`); a last line without a newline is emitted too. A line longer
 * than `maxLineBytes` ends the stream with `tooLong()`, after the lines before it.
 */
export const splitLines = <E = never>(
  stripCarriageReturn: boolean,
  maxLineBytes: number = Number.POSITIVE_INFINITY,
  tooLong?: () => E
) =>
  transformChunks<Uint8Array, string, E>(() => {
    const decoder = new LineDecoder(stripCarriageReturn, maxLineBytes)
    return {
      onChunk: (input, out) => {
        for (const bytes of input) decoder.push(bytes, out)
        return decoder.overflowed ? tooLong?.() : undefined
      },
      onEnd: (out) => {
        const rest = decoder.end()
        if (rest !== undefined) out.push(rest)
        return undefined
      }
    }
  })

/** Characters of lines handed on in one batch by `lineBatches`, about. */
const batchCharacters = 64 * 1024

/**
 * The lines of a body as a `BodyDecoder` (for `decodedBody`): the lines completed by the
 * bytes pushed, handed on all at once (about `batchCharacters` of them; a last line
 * without a newline is handed on at the end). A line longer than `maxLineBytes` ends the
 * body with `tooLong()`, after the lines before it.
 */
export const lineBatches = <E>(stripCarriageReturn: boolean, maxLineBytes: number, tooLong: () => E) =>
(): BodyDecoder<string, E> => {
  const decoder = new LineDecoder(stripCarriageReturn, maxLineBytes)
  let lines: Array<string> = []
  let pending = 0
  return {
    push: (bytes) => {
      pending += bytes.length
      decoder.push(bytes, lines)
    },
    ready: () => lines.length > 0 || decoder.overflowed,
    full: () => pending >= batchCharacters || decoder.overflowed,
    take: (out) => {
      for (let i = 0; i < lines.length; i++) out.push(lines[i]!)
      lines = []
      pending = 0
      return decoder.overflowed ? tooLong() : undefined
    },
    end: (out) => {
      const rest = decoder.end()
      if (rest !== undefined) out.push(rest)
      return undefined
    }
  }
}

/** The chunks as one array (the chunk itself when there is one). @internal */
export const concatBytes = (chunks: ReadonlyArray<Uint8Array>): Uint8Array => {
  if (chunks.length === 1) return chunks[0]!
  let size = 0
  for (const chunk of chunks) size += chunk.length
  const out = new Uint8Array(size)
  let offset = 0
  for (const chunk of chunks) {
    out.set(chunk, offset)
    offset += chunk.length
  }
  return out
}

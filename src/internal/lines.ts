/**
 * Line splitting for streamed answers (watch events, followed logs). Work is done once
 * per chunk of bytes, not once per line through the Stream machinery, because a watch of
 * tens of thousands of events per second spends its time here.
 */
import * as Channel from "effect/Channel"
import * as Chunk from "effect/Chunk"
import * as Stream from "effect/Stream"

/**
 * Turns UTF-8 bytes into lines. A line may span chunks and a multi-byte character may be
 * split between two chunks: the decoder keeps what is incomplete until the rest arrives.
 */
export class LineDecoder {
  private readonly decoder = new TextDecoder()
  private pending = ""

  constructor(private readonly stripCarriageReturn: boolean) {}

  /** Appends the lines completed by `bytes` to `out`, without their line ending. */
  push(bytes: Uint8Array, out: Array<string>): void {
    const text = this.decoder.decode(bytes, { stream: true })
    let newline = text.indexOf("\n")
    if (newline === -1) {
      this.pending = this.pending === "" ? text : this.pending + text
      return
    }
    this.emit(this.pending === "" ? text.slice(0, newline) : this.pending + text.slice(0, newline), out)
    let start = newline + 1
    while ((newline = text.indexOf("\n", start)) !== -1) {
      this.emit(text.slice(start, newline), out)
      start = newline + 1
    }
    this.pending = start === text.length ? "" : text.slice(start)
  }

  /** What is left after the last newline once the bytes have ended, if anything. */
  end(): string | undefined {
    const rest = this.pending + this.decoder.decode()
    this.pending = ""
    if (rest === "") return undefined
    return this.stripCarriageReturn && rest.endsWith("\r") ? rest.slice(0, -1) : rest
  }

  private emit(line: string, out: Array<string>): void {
    out.push(this.stripCarriageReturn && line.endsWith("\r") ? line.slice(0, -1) : line)
  }
}

/** A stateful step over whole chunks: fills `out`, and returns an error to stop with one. */
export interface ChunkStep<In, Out, E> {
  readonly onChunk: (input: Chunk.Chunk<In>, out: Array<Out>) => E | undefined
  readonly onEnd: (out: Array<Out>) => E | undefined
}

/**
 * Runs a chunk step over a stream. What was produced before an error is emitted first,
 * so a consumer sees every event up to the one that failed. `make` is called once per
 * run of the stream, so the step's state is never shared between runs.
 */
export const transformChunks = <In, Out, E2>(make: () => ChunkStep<In, Out, E2>) =>
<E, R>(self: Stream.Stream<In, E, R>): Stream.Stream<Out, E | E2, R> =>
  Stream.suspend(() => {
    const step = make()
    const finish = (out: Array<Out>, error: E2 | undefined): Channel.Channel<Chunk.Chunk<Out>, unknown, E2> => {
      const written = out.length === 0 ? Channel.void : Channel.write(Chunk.unsafeFromArray(out))
      return error === undefined ? written : Channel.zipRight(written, Channel.fail(error))
    }
    const loop: Channel.Channel<Chunk.Chunk<Out>, Chunk.Chunk<In>, E | E2, E, unknown, unknown> = Channel
      .readWithCause({
        onInput: (input: Chunk.Chunk<In>) => {
          const out: Array<Out> = []
          const error = step.onChunk(input, out)
          return error === undefined
            ? (out.length === 0 ? loop : Channel.zipRight(Channel.write(Chunk.unsafeFromArray(out)), loop))
            : finish(out, error)
        },
        onFailure: (cause) => Channel.failCause(cause),
        onDone: () => {
          const out: Array<Out> = []
          const error = step.onEnd(out)
          return finish(out, error)
        }
      })
    return Stream.pipeThroughChannelOrFail(self, loop)
  })

/**
 * The lines of a byte stream, without their newline (and without a `\r` before it when
 * `stripCarriageReturn`); a last line without a newline is emitted too.
 */
export const splitLines = (stripCarriageReturn: boolean) =>
  transformChunks<Uint8Array, string, never>(() => {
    const decoder = new LineDecoder(stripCarriageReturn)
    return {
      onChunk: (input, out) => {
        for (const bytes of input) decoder.push(bytes, out)
        return undefined
      },
      onEnd: (out) => {
        const rest = decoder.end()
        if (rest !== undefined) out.push(rest)
        return undefined
      }
    }
  })

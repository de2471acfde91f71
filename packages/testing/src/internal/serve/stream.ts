/**
 * Streaming response bodies (watch events, followed logs), written once and adapted
 * to a web `ReadableStream` (the layer) or to a `node:http` response (serve).
 *
 * @internal
 */

/** Where a streaming body writes. @internal */
export interface Sink {
  write(chunk: string | Uint8Array): void
  /** Ends the body cleanly. */
  end(): void
  /** Ends the body abruptly: the connection is reset, the client sees an error. */
  fail(error: Error): void
}

/** A body produced over time. `start` is called once; `cancel` when the client goes away. @internal */
export interface StreamBody {
  readonly _tag: "Stream"
  start(sink: Sink): void
  cancel(): void
}

const FLUSH_BYTES = 256 * 1024

/**
 * Collects writes and hands them to the sink once per tick (or once enough piled up),
 * so a burst of thousands of events costs a few large writes instead of thousands of
 * small ones.
 *
 * @internal
 */
export class Batcher {
  private pending: Array<string> = []
  private size = 0
  private scheduled = false
  private done = false

  constructor(private readonly sink: Sink) {}

  get closed(): boolean {
    return this.done
  }

  write(chunk: string): void {
    if (this.done) return
    this.pending.push(chunk)
    this.size += chunk.length
    if (this.size >= FLUSH_BYTES) this.flush()
    else if (!this.scheduled) {
      this.scheduled = true
      setImmediate(this.onTick)
    }
  }

  private readonly onTick = (): void => {
    this.scheduled = false
    this.flush()
  }

  flush(): void {
    if (this.pending.length === 0 || this.done) return
    const chunk = this.pending.length === 1 ? this.pending[0]! : this.pending.join("")
    this.pending = []
    this.size = 0
    this.sink.write(chunk)
  }

  end(): void {
    if (this.done) return
    this.flush()
    this.done = true
    this.sink.end()
  }

  fail(error: Error): void {
    if (this.done) return
    this.done = true
    this.pending = []
    this.sink.fail(error)
  }

  /** The client went away: drop everything, write nothing more. */
  abandon(): void {
    this.done = true
    this.pending = []
  }
}

/**
 * Wraps a sink so that the connection is reset after `afterBytes` bytes (fault
 * injection): the bytes before the cut are written, then the sink fails.
 *
 * @internal
 */
export const cutAfter = (sink: Sink, afterBytes: number, onCut: () => void): Sink => {
  let remaining = afterBytes
  let cut = false
  const doCut = () => {
    cut = true
    onCut()
    sink.fail(new Error("connection reset by the fake cluster (injected fault)"))
  }
  return {
    write(chunk) {
      if (cut) return
      const bytes = typeof chunk === "string" ? Buffer.byteLength(chunk) : chunk.byteLength
      if (bytes < remaining) {
        remaining -= bytes
        sink.write(chunk)
        return
      }
      const buffer = (typeof chunk === "string" ? Buffer.from(chunk) : chunk).subarray(0, remaining)
      if (buffer.length > 0) sink.write(buffer)
      doCut()
    },
    end() {
      if (!cut) doCut()
    },
    fail(error) {
      if (!cut) {
        cut = true
        sink.fail(error)
      }
    }
  }
}

/** A one-shot body as a stream, so that a cut can happen part way through it. @internal */
export const fromString = (text: string): StreamBody => ({
  _tag: "Stream",
  start(sink) {
    sink.write(text)
    sink.end()
  },
  cancel() {}
})

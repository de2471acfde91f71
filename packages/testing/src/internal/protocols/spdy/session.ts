/**
 * The server side of a SPDY/3.1 session, as much of it as Kubernetes streaming needs
 * (kubectl's port-forward, over a plain `Upgrade: SPDY/3.1` or tunnelled in a WebSocket):
 * the client opens streams (SYN_STREAM with headers), the server accepts each with a
 * SYN_REPLY or refuses it with RST_STREAM; both sides send DATA and half-close with FIN;
 * the client's PINGs are echoed; GOAWAY ends the session. Flow control is not enforced,
 * as spdystream (the Go implementation on both ends of a real cluster) does not.
 *
 * Transport-free: bytes go in with `receive`, out through `send`.
 *
 * @internal
 */
import { HeaderError, type Headers, HeaderReader, HeaderWriter } from "./headers.js"

const version = 3

const FrameType = {
  synStream: 1,
  synReply: 2,
  rstStream: 3,
  settings: 4,
  ping: 6,
  goAway: 7,
  headers: 8,
  windowUpdate: 9
} as const

const flagFin = 0x01

/** RST_STREAM status codes. @internal */
export const RstStatus = { protocolError: 1, invalidStream: 2, refusedStream: 3, cancel: 5, internalError: 6 } as const

/** The most a DATA frame the fake sends carries. */
const maxData = 64 * 1024

/** One stream, as the server's handler sees it. @internal */
export interface Stream {
  readonly id: number
  readonly headers: Headers
  /** The first value of a header (names are lower-case on the wire). */
  readonly header: (name: string) => string | undefined
  /** Sends data; nothing once this side is closed or the stream reset. */
  readonly write: (data: Uint8Array) => void
  /** Half-closes this side (FIN). */
  readonly close: () => void
  /** Ends the stream at once (RST_STREAM). */
  readonly reset: (status?: number) => void
  /** Data from the client; FIN (or a reset, or the session's end) calls `onEnd`. */
  onData: (data: Uint8Array) => void
  onEnd: () => void
}

/** What a session's owner provides: where bytes go, and what to do with new streams. @internal */
export interface SessionHandlers {
  readonly send: (bytes: Uint8Array) => void
  /** The session is over (GOAWAY, a protocol error): the transport should close. */
  readonly close: () => void
  /** A new stream: accept it (the reply is sent after) or throw to refuse it with RST_STREAM. */
  readonly stream: (stream: Stream) => void
}

const controlFrame = (type: number, flags: number, payload: Uint8Array): Uint8Array => {
  const out = new Uint8Array(8 + payload.length)
  const view = new DataView(out.buffer)
  view.setUint16(0, 0x8000 | version)
  view.setUint16(2, type)
  view.setUint32(4, (flags << 24) | payload.length)
  out.set(payload, 8)
  return out
}

const dataFrame = (streamId: number, flags: number, payload: Uint8Array): Uint8Array => {
  const out = new Uint8Array(8 + payload.length)
  const view = new DataView(out.buffer)
  view.setUint32(0, streamId & 0x7fffffff)
  view.setUint32(4, (flags << 24) | payload.length)
  out.set(payload, 8)
  return out
}

const words = (...values: ReadonlyArray<number>): Uint8Array => {
  const out = new Uint8Array(values.length * 4)
  const view = new DataView(out.buffer)
  values.forEach((v, i) => view.setUint32(i * 4, v >>> 0))
  return out
}

interface StreamState {
  /** The client's side is done (FIN or reset). */
  remoteDone: boolean
  /** The server's side is done (FIN sent or reset). */
  localDone: boolean
}

interface Open {
  readonly stream: Stream
  readonly state: StreamState
}

/** A server session. @internal */
export class Session {
  private buffer: Uint8Array = new Uint8Array(0)
  private readonly streams = new Map<number, Open>()
  private readonly reader = new HeaderReader()
  private readonly writer = new HeaderWriter()
  private lastStreamId = 0
  private ended = false

  constructor(private readonly handlers: SessionHandlers) {}

  /** Bytes from the client, in any pieces. */
  receive(bytes: Uint8Array): void {
    if (this.ended) return
    this.buffer = this.buffer.length === 0 ? bytes : concat(this.buffer, bytes)
    while (!this.ended && this.buffer.length >= 8) {
      const view = new DataView(this.buffer.buffer, this.buffer.byteOffset, this.buffer.byteLength)
      const length = view.getUint32(4) & 0xffffff
      if (this.buffer.length < 8 + length) return
      const frame = this.buffer.subarray(0, 8 + length)
      this.buffer = this.buffer.subarray(8 + length)
      try {
        this.frame(frame)
      } catch (e) {
        if (!(e instanceof HeaderError)) throw e
        this.goAway(1)
      }
    }
  }

  /** The transport is gone: every stream ends. */
  closed(): void {
    if (this.ended) return
    this.ended = true
    for (const open of this.streams.values()) this.endRemote(open)
    this.streams.clear()
  }

  private frame(frame: Uint8Array): void {
    const view = new DataView(frame.buffer, frame.byteOffset, frame.byteLength)
    const first = view.getUint32(0)
    const flags = frame[4]!
    const payload = frame.subarray(8)
    if ((first & 0x80000000) === 0) return this.data(first & 0x7fffffff, flags, payload)
    const type = first & 0xffff
    const words = new DataView(payload.buffer, payload.byteOffset, payload.byteLength)
    switch (type) {
      case FrameType.synStream:
        return this.synStream(words.getUint32(0) & 0x7fffffff, flags, payload.subarray(10))
      case FrameType.rstStream: {
        const open = this.streams.get(words.getUint32(0) & 0x7fffffff)
        if (open !== undefined) {
          open.state.localDone = true
          this.endRemote(open)
          this.streams.delete(open.stream.id)
        }
        return
      }
      case FrameType.ping:
        // the client's pings have odd ids; the fake sends none of its own
        if ((words.getUint32(0) & 1) === 1) this.handlers.send(frame.slice())
        return
      case FrameType.goAway:
        this.closed()
        this.handlers.close()
        return
      case FrameType.headers:
        // read to keep the header stream in step; the fake has no use for late headers
        this.reader.read(payload.subarray(4))
        return
      case FrameType.synReply:
      case FrameType.settings:
      case FrameType.windowUpdate:
      default:
        return
    }
  }

  private synStream(id: number, flags: number, block: Uint8Array): void {
    // the headers are read whatever becomes of the stream: the zlib stream runs across them all
    const headers = this.reader.read(block)
    if (id === 0 || id % 2 === 0 || id <= this.lastStreamId) {
      this.handlers.send(controlFrame(FrameType.rstStream, 0, words(id, RstStatus.protocolError)))
      return
    }
    this.lastStreamId = id
    const state: StreamState = { remoteDone: false, localDone: false }
    const stream: Stream = {
      id,
      headers,
      header: (name) => headers.get(name.toLowerCase())?.[0],
      write: (data) => {
        if (state.localDone || this.ended) return
        for (let offset = 0; offset < data.length; offset += maxData) {
          this.handlers.send(dataFrame(id, 0, data.subarray(offset, offset + maxData)))
        }
      },
      close: () => {
        if (state.localDone || this.ended) return
        state.localDone = true
        this.handlers.send(dataFrame(id, flagFin, new Uint8Array(0)))
        if (state.remoteDone) this.streams.delete(id)
      },
      reset: (status = RstStatus.cancel) => {
        if (this.ended || (state.localDone && state.remoteDone)) return
        state.localDone = true
        this.handlers.send(controlFrame(FrameType.rstStream, 0, words(id, status)))
        this.endRemote(open)
        this.streams.delete(id)
      },
      onData: () => undefined,
      onEnd: () => undefined
    }
    const open: Open = { stream, state }
    try {
      this.handlers.stream(stream)
    } catch {
      this.handlers.send(controlFrame(FrameType.rstStream, 0, words(id, RstStatus.refusedStream)))
      return
    }
    this.streams.set(id, open)
    this.handlers.send(controlFrame(FrameType.synReply, 0, concat(words(id), this.writer.write([]))))
    if ((flags & flagFin) !== 0) this.endRemote(open)
  }

  private data(id: number, flags: number, payload: Uint8Array): void {
    const open = this.streams.get(id)
    if (open === undefined || open.state.remoteDone) return
    if (payload.length > 0) open.stream.onData(payload.slice())
    if ((flags & flagFin) !== 0) {
      this.endRemote(open)
      if (open.state.localDone) this.streams.delete(id)
    }
  }

  private endRemote(open: Open): void {
    if (open.state.remoteDone) return
    open.state.remoteDone = true
    open.stream.onEnd()
  }

  private goAway(status: number): void {
    if (this.ended) return
    this.handlers.send(controlFrame(FrameType.goAway, 0, words(this.lastStreamId, status)))
    this.closed()
    this.handlers.close()
  }
}

const concat = (a: Uint8Array, b: Uint8Array): Uint8Array => {
  const out = new Uint8Array(a.length + b.length)
  out.set(a, 0)
  out.set(b, a.length)
  return out
}

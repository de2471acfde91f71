/**
 * An HTTP/2 server on loopback TLS that writes its frames by hand, for what `node:http2`
 * will not do: DATA frames of one byte each, empty DATA frames without end, a body trickled a
 * byte at a time, `SETTINGS_MAX_CONCURRENT_STREAMS = 0`, a `RST_STREAM` of any code before
 * the answer. It honours the client's flow control (a sender past the window is a protocol
 * error), acknowledges SETTINGS and PINGs, and hands each request's stream to the test in the
 * order the requests came (it does not decode their HPACK: the test knows what it sent).
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type * as Net from "node:net"
import * as Tls from "node:tls"
import { pki } from "./pki.js"

const preface = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")

const frame = (type: number, flags: number, stream: number, payload: Uint8Array): Buffer => {
  const out = Buffer.allocUnsafe(9 + payload.length)
  out.writeUIntBE(payload.length, 0, 3)
  out[3] = type
  out[4] = flags
  out.writeUInt32BE(stream & 0x7fffffff, 5)
  out.set(payload, 9)
  return out
}

/** An HPACK integer with an `n`-bit prefix whose high bits are `high`. */
const hpackInteger = (value: number, n: number, high: number): Array<number> => {
  const max = (1 << n) - 1
  if (value < max) return [high | value]
  const out = [high | max]
  let rest = value - max
  while (rest >= 128) {
    out.push((rest & 0x7f) | 0x80)
    rest = Math.floor(rest / 128)
  }
  out.push(rest)
  return out
}

/** A header block of literals without indexing (no Huffman, no table): what any decoder reads. */
export const headerBlock = (headers: ReadonlyArray<readonly [string, string]>): Buffer => {
  const parts: Array<Buffer> = []
  for (const [name, value] of headers) {
    const n = Buffer.from(name)
    const v = Buffer.from(value)
    parts.push(Buffer.from([0x00, ...hpackInteger(n.length, 7, 0)]), n, Buffer.from(hpackInteger(v.length, 7, 0)), v)
  }
  return Buffer.concat(parts)
}

/** One request's stream, as the test answers it. */
export interface RawStream {
  readonly id: number
  /** The answer's head (`:status` and the headers given), in one HEADERS frame. */
  readonly respond: (status: number, headers?: Record<string, string>, endStream?: boolean) => void
  /** Sends `bytes` in DATA frames of `frameSize` bytes each, as the client's windows allow; resolves once written. */
  readonly send: (bytes: Uint8Array, frameSize: number) => Promise<void>
  /** An empty DATA frame with END_STREAM. */
  readonly end: () => void
  /** `RST_STREAM` with this code. */
  readonly reset: (code: number) => void
  /** A frame as given (type, flags, payload) on this stream. */
  readonly raw: (type: number, flags: number, payload: Uint8Array) => void
  /** Whether the client has reset the stream or the connection has closed. */
  readonly closed: () => boolean
}

export interface RawH2Server {
  readonly url: string
  /** Connections accepted. */
  readonly connections: () => number
  /** Requests (HEADERS frames) received. */
  readonly requests: () => number
  /** Bytes written to the clients. */
  readonly written: () => number
}

export interface RawH2Options {
  /** SETTINGS the server sends first (id, value), e.g. `[[0x3, 0]]` for no concurrent streams. */
  readonly settings?: ReadonlyArray<readonly [number, number]> | undefined
}

/** Starts the server for the scope; `onStream` is called for each request, with its index (0 for the first). */
export const serveRawH2 = (
  onStream: (stream: RawStream, index: number) => void,
  options: RawH2Options = {}
): Effect.Effect<RawH2Server, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.callback<{ readonly server: Tls.Server; readonly sockets: Set<Net.Socket>; readonly raw: RawH2Server }>(
      (resume) => {
        const { server: pair } = pki()
        const sockets = new Set<Net.Socket>()
        let connections = 0
        let requests = 0
        let written = 0
        const server = Tls.createServer({ cert: pair.cert, key: pair.key, ALPNProtocols: ["h2"] }, (socket) => {
          connections++
          sockets.add(socket)
          socket.on("error", () => undefined)
          let open = true
          socket.on("close", () => {
            open = false
            sockets.delete(socket)
          })
          const write = (bytes: Buffer) => {
            if (!open) return true
            written += bytes.length
            return socket.write(bytes)
          }
          const settings = options.settings ?? []
          const payload = Buffer.alloc(6 * settings.length)
          settings.forEach(([id, value], i) => {
            payload.writeUInt16BE(id, i * 6)
            payload.writeUInt32BE(value, i * 6 + 2)
          })
          write(frame(0x4, 0, 0, payload))
          let initialWindow = 65_535
          let connectionWindow = 65_535
          const streamWindows = new Map<number, number>()
          const resetStreams = new Set<number>()
          const senders: Array<() => void> = []
          const pump = () => {
            for (const sender of senders.slice()) sender()
          }
          const rawStream = (id: number): RawStream => ({
            id,
            respond: (status, headers = {}, endStream = false) => {
              const block = headerBlock([[":status", String(status)], ...Object.entries(headers)])
              write(frame(0x1, 0x4 | (endStream ? 0x1 : 0), id, block))
            },
            send: (bytes, frameSize) =>
              new Promise((done) => {
                let offset = 0
                const sender = () => {
                  const out: Array<Buffer> = []
                  let batch = 0
                  while (offset < bytes.length && open && !resetStreams.has(id)) {
                    const size = Math.min(frameSize, bytes.length - offset)
                    const window = streamWindows.get(id) ?? initialWindow
                    if (size > window || size > connectionWindow) break
                    streamWindows.set(id, window - size)
                    connectionWindow -= size
                    out.push(frame(0x0, 0, id, bytes.subarray(offset, offset + size)))
                    offset += size
                    batch += size + 9
                    if (batch >= 256 * 1024) break
                  }
                  if (out.length > 0) {
                    const flushed = write(Buffer.concat(out))
                    if (offset < bytes.length && open && !resetStreams.has(id)) {
                      // on: after the socket drains, or at once for what the windows still allow
                      if (flushed) setImmediate(sender)
                      else socket.once("drain", sender)
                      return
                    }
                  }
                  if (offset >= bytes.length || !open || resetStreams.has(id)) {
                    const index = senders.indexOf(sender)
                    if (index !== -1) senders.splice(index, 1)
                    done()
                  }
                  // else: waiting for a WINDOW_UPDATE, which pumps
                }
                senders.push(sender)
                sender()
              }),
            end: () => void write(frame(0x0, 0x1, id, Buffer.alloc(0))),
            reset: (code) => {
              const body = Buffer.alloc(4)
              body.writeUInt32BE(code)
              write(frame(0x3, 0, id, body))
            },
            raw: (type, flags, payload) => void write(frame(type, flags, id, payload)),
            closed: () => !open || resetStreams.has(id)
          })
          let buffered: Buffer = Buffer.alloc(0)
          let sawPreface = false
          socket.on("data", (chunk: Buffer) => {
            buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk])
            if (!sawPreface) {
              if (buffered.length < preface.length) return
              sawPreface = true
              buffered = buffered.subarray(preface.length)
            }
            let consumed = 0
            while (buffered.length - consumed >= 9) {
              const length = buffered.readUIntBE(consumed, 3)
              if (buffered.length - consumed < 9 + length) break
              const type = buffered[consumed + 3]!
              const flags = buffered[consumed + 4]!
              const id = buffered.readUInt32BE(consumed + 5) & 0x7fffffff
              const body = buffered.subarray(consumed + 9, consumed + 9 + length)
              consumed += 9 + length
              if (type === 0x4 && (flags & 0x1) === 0) {
                for (let i = 0; i + 6 <= body.length; i += 6) {
                  if (body.readUInt16BE(i) !== 0x4) continue
                  const next = body.readUInt32BE(i + 2)
                  for (const [stream, window] of streamWindows) streamWindows.set(stream, window + next - initialWindow)
                  initialWindow = next
                }
                write(frame(0x4, 0x1, 0, Buffer.alloc(0)))
                pump()
              } else if (type === 0x8) {
                const increment = body.readUInt32BE(0) & 0x7fffffff
                if (id === 0) connectionWindow += increment
                else streamWindows.set(id, (streamWindows.get(id) ?? initialWindow) + increment)
                pump()
              } else if (type === 0x6 && (flags & 0x1) === 0) {
                write(frame(0x6, 0x1, 0, body))
              } else if (type === 0x3) {
                resetStreams.add(id)
              } else if (type === 0x0 && length > 0) {
                // the client's upload: its windows given back at once
                const increment = Buffer.alloc(4)
                increment.writeUInt32BE(length)
                write(frame(0x8, 0, 0, increment))
                write(frame(0x8, 0, id, increment))
              } else if (type === 0x1) {
                onStream(rawStream(id), requests++)
              }
            }
            buffered = buffered.subarray(consumed)
          })
        })
        server.listen(0, "127.0.0.1", () =>
          resume(Effect.succeed({
            server,
            sockets,
            raw: {
              url: `https://127.0.0.1:${(server.address() as Net.AddressInfo).port}`,
              connections: () => connections,
              requests: () => requests,
              written: () => written
            }
          })))
      }
    ),
    ({ server, sockets }) =>
      Effect.callback<void>((resume) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resume(Effect.void))
      })
  ).pipe(Effect.map(({ raw }) => raw))

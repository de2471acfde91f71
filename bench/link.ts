/**
 * A simulated network link on loopback: a TCP proxy that paces the bytes of each direction
 * to a bandwidth (shared by every connection through it, as one link is) and delivers each
 * piece a fixed latency after it has gone through, in order. `bench/run.ts` puts one in
 * front of the benchmark's server for `list-slow` (100 Mbit/s, 1 ms one way).
 *
 * Pieces of at most 16 KiB are paced one after the other (store and forward: a piece
 * leaves when its last bit has been sent, then arrives `latencyMs` later); a direction
 * that has more than 1 MiB in flight pauses its source until it drains.
 */
import * as Net from "node:net"
import { performance } from "node:perf_hooks"

export interface LinkOptions {
  /** Where the link leads. */
  readonly host: string
  readonly port: number
  readonly bitsPerSecond: number
  /** One way. */
  readonly latencyMs: number
}

export interface Link {
  /** The port to connect to on 127.0.0.1. */
  readonly port: number
  /** Bytes carried so far, each way. */
  readonly carried: () => { readonly up: number; readonly down: number }
  readonly close: () => Promise<void>
}

const pieceSize = 16 * 1024
const highWater = 1024 * 1024

/** The shared state of one direction of the link: when it is free to send the next bit. */
interface Direction {
  nextFree: number
  bytes: number
}

const pace = (from: Net.Socket, to: Net.Socket, direction: Direction, options: LinkOptions): void => {
  const msPerByte = (8 * 1000) / options.bitsPerSecond
  const queue: Array<{ readonly at: number; readonly piece: Buffer }> = []
  let queued = 0
  let timer: NodeJS.Timeout | undefined
  let ended = false

  const pump = () => {
    timer = undefined
    const now = performance.now()
    while (queue.length > 0 && queue[0]!.at <= now) {
      const { piece } = queue.shift()!
      queued -= piece.length
      if (!to.destroyed) to.write(piece)
    }
    if (queued < highWater / 2 && from.isPaused()) from.resume()
    if (queue.length > 0) timer = setTimeout(pump, Math.max(0, queue[0]!.at - now))
    else if (ended && !to.destroyed) to.end()
  }

  from.on("data", (chunk: Buffer) => {
    for (let offset = 0; offset < chunk.length; offset += pieceSize) {
      const piece = chunk.subarray(offset, offset + pieceSize)
      const start = Math.max(performance.now(), direction.nextFree)
      direction.nextFree = start + piece.length * msPerByte
      direction.bytes += piece.length
      queue.push({ at: direction.nextFree + options.latencyMs, piece })
      queued += piece.length
    }
    if (queued > highWater) from.pause()
    if (timer === undefined) timer = setTimeout(pump, Math.max(0, queue[0]!.at - performance.now()))
  })
  from.on("end", () => {
    ended = true
    if (queue.length === 0 && timer === undefined && !to.destroyed) to.end()
  })
}

/** Starts a link to `options.host:options.port` on a free loopback port. */
export const startLink = (options: LinkOptions): Promise<Link> =>
  new Promise((resolve, reject) => {
    const up: Direction = { nextFree: 0, bytes: 0 }
    const down: Direction = { nextFree: 0, bytes: 0 }
    const sockets = new Set<Net.Socket>()
    // Half-open allowed: an end is passed on once what came before it has gone through.
    const server = Net.createServer({ allowHalfOpen: true }, (client) => {
      const upstream = Net.connect({ host: options.host, port: options.port, allowHalfOpen: true })
      for (const socket of [client, upstream]) {
        sockets.add(socket)
        socket.setNoDelay(true)
        socket.on("close", () => sockets.delete(socket))
      }
      client.on("error", () => upstream.destroy())
      upstream.on("error", () => client.destroy())
      client.on("close", (hadError) => hadError && upstream.destroy())
      upstream.on("close", (hadError) => hadError && client.destroy())
      pace(client, upstream, up, options)
      pace(upstream, client, down, options)
    })
    server.on("error", reject)
    server.listen(0, "127.0.0.1", () => {
      resolve({
        port: (server.address() as Net.AddressInfo).port,
        carried: () => ({ up: up.bytes, down: down.bytes }),
        close: () =>
          new Promise<void>((done) => {
            for (const socket of sockets) socket.destroy()
            server.close(() => done())
          })
      })
    })
  })

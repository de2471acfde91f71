/**
 * Port-forward sessions as the kubelet's streaming server runs them, each forwarded
 * connection running the test's handler (or an echo):
 *
 * - WebSocket `v4.channel.k8s.io` (or its base64 form, or no subprotocol): the ports are
 *   in the query, two channels per port (data, error) each opened by the port number.
 * - SPDY/3.1 (`kubectl port-forward`, tunnelled in a WebSocket or over a plain upgrade):
 *   the client opens an error and a data stream per local connection, paired by their
 *   `requestid`, the port in their headers; both streams are closed when the handler is
 *   done, the error stream carrying its error first.
 *
 * A handler's failure is reported as the runtime reports a failed forward:
 * `error forwarding port 80 to pod <sandbox id>, uid : <message>`.
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"
import * as Crypto from "node:crypto"
import { type Codec, type Peer, type Session } from "./channels.js"
import * as Spdy from "../protocols/spdy/session.js"
import type { FakeObject, PortConnection, PortForwardHandler } from "../types.js"

const encoder = new TextEncoder()
const bytes = (data: Uint8Array | string): Uint8Array => (typeof data === "string" ? encoder.encode(data) : data)
const messageOf = (u: unknown): string => (u instanceof Error ? u.message : String(u))

/** The id the container runtime knows the pod's sandbox by (stable per pod). @internal */
export const sandboxId = (pod: FakeObject): string =>
  Crypto.createHash("sha256").update(String(pod.metadata.uid ?? pod.metadata.name)).digest("hex")

const forwardError = (pod: FakeObject, port: number, cause: Cause.Cause<unknown>): string =>
  `error forwarding port ${port} to pod ${sandboxId(pod)}, uid : ${messageOf(Cause.squash(cause))}`

const echo: PortForwardHandler = (_pod, _port, connection) => Stream.runForEach(connection.read, connection.write)

/** The two bytes (little-endian) that open each channel of a port. */
const portPrefix = (port: number): Uint8Array => Uint8Array.of(port & 0xff, (port >> 8) & 0xff)

/**
 * Runs the handler for one forwarded connection; `done` gets the failure's message, if
 * any, once it is over.
 */
const forward = (
  pod: FakeObject,
  port: number,
  handler: PortForwardHandler,
  connection: PortConnection,
  done: (error: string | undefined) => void
): Fiber.Fiber<void> =>
  Effect.runFork(
    handler(pod, port, connection).pipe(
      Effect.matchCause({ onSuccess: () => done(undefined), onFailure: (cause) => done(forwardError(pod, port, cause)) })
    )
  )

/** A WebSocket port-forward (v4 channel protocol): the ports of the query, on channels 2i and 2i+1. @internal */
export const websocketSession = (
  pod: FakeObject,
  ports: ReadonlyArray<number>,
  handler: PortForwardHandler | undefined,
  codec: Codec,
  peer: Peer
): Session => {
  const inputs = ports.map(() => Effect.runSync(Queue.unbounded<Uint8Array, Cause.Done>()))
  const send = (channel: number, data: Uint8Array) => peer.send(codec.encode(channel, data)).catch(() => undefined)
  let gone = false
  let running = ports.length
  const fibers = ports.map((port, i) => {
    const dataChannel = 2 * i
    const errorChannel = 2 * i + 1
    const opening = Promise.all([send(dataChannel, portPrefix(port)), send(errorChannel, portPrefix(port))])
    const connection: PortConnection = {
      read: Stream.fromQueue(inputs[i]!),
      write: (data) => Effect.promise(() => send(dataChannel, bytes(data)))
    }
    return Effect.runFork(
      Effect.andThen(
        Effect.promise(() => opening),
        Effect.callback<void>((resume) => {
          const fiber = forward(pod, port, handler ?? echo, connection, (error) => {
            const reported = error === undefined ? Promise.resolve() : send(errorChannel, encoder.encode(error))
            reported.then(() => resume(Effect.void))
          })
          return Fiber.interrupt(fiber)
        })
      )
    )
  })
  // the connection ends when every port's handler is done, as a kubelet's does
  for (const fiber of fibers) {
    fiber.addObserver(() => {
      running--
      if (running === 0 && !gone) peer.close()
    })
  }
  return {
    receive: (message) => {
      const frame = codec.decode(message)
      if (frame === undefined || frame.data.length === 0) return
      const index = frame.channel / 2
      if (Number.isInteger(index) && index < inputs.length) Queue.offerUnsafe(inputs[index]!, frame.data)
    },
    closed: () => {
      gone = true
      for (const input of inputs) Queue.endUnsafe(input)
      for (const fiber of fibers) Effect.runFork(Fiber.interrupt(fiber))
    }
  }
}

interface Pair {
  data?: { readonly stream: Spdy.Stream; readonly input: Queue.Queue<Uint8Array, Cause.Done> }
  error?: Spdy.Stream
}

/** The queue of what the client sends on a data stream, filled from the moment it is accepted. */
const inputOf = (stream: Spdy.Stream): Queue.Queue<Uint8Array, Cause.Done> => {
  const input = Effect.runSync(Queue.unbounded<Uint8Array, Cause.Done>())
  // closures made in a literal, not assigned straight to a property (see test/pretenure.test.ts)
  const handlers: Pick<Spdy.Stream, "onData" | "onEnd"> = {
    onData: (chunk) => Queue.offerUnsafe(input, chunk),
    onEnd: () => Queue.endUnsafe(input)
  }
  Object.assign(stream, handlers)
  return input
}

const portOf = (stream: Spdy.Stream): number => {
  const text = stream.header("port")
  if (text === undefined || text === "") throw new Error(`"port" header is required`)
  const port = Number(text)
  if (!/^\d+$/.test(text) || port > 65535) throw new Error(`unable to parse "${text}" as a port`)
  if (port < 1) throw new Error(`port "${text}" must be > 0`)
  return port
}

/**
 * A SPDY port-forward: each pair of streams (error, data) with one `requestid` is one
 * forwarded connection. Bytes in and out through `peer` (a socket or a tunnel's messages).
 *
 * @internal
 */
export const spdySession = (pod: FakeObject, handler: PortForwardHandler | undefined, peer: Peer): Session => {
  const pairs = new Map<string, Pair>()
  const fibers = new Set<Fiber.Fiber<void>>()
  const start = (port: number, data: Spdy.Stream, input: Queue.Queue<Uint8Array, Cause.Done>, error: Spdy.Stream) => {
    const connection: PortConnection = {
      read: Stream.fromQueue(input),
      write: (chunk) => Effect.sync(() => data.write(bytes(chunk)))
    }
    const fiber = forward(pod, port, handler ?? echo, connection, (message) => {
      if (message !== undefined) error.write(encoder.encode(message))
      data.close()
      error.close()
    })
    fibers.add(fiber)
    fiber.addObserver(() => fibers.delete(fiber))
  }
  const session = new Spdy.Session({
    send: (chunk) => {
      peer.send(chunk).catch(() => undefined)
    },
    close: () => peer.close(),
    stream: (stream) => {
      const port = portOf(stream)
      const type = stream.header("streamtype")
      if (type !== "error" && type !== "data") {
        throw new Error(type === undefined ? `"streamType" header is required` : `invalid stream type "${type}"`)
      }
      // an old client sends no request id: its streams come in (error, data) order, two ids apart
      const requestId = stream.header("requestid") ?? String(type === "error" ? stream.id : stream.id - 2)
      const pair = pairs.get(requestId) ?? {}
      if (pair[type] !== undefined) throw new Error(`${type} stream already assigned`)
      if (type === "data") pair.data = { stream, input: inputOf(stream) }
      else pair.error = stream
      pairs.set(requestId, pair)
      if (pair.data !== undefined && pair.error !== undefined) {
        pairs.delete(requestId)
        const { data, error } = pair
        // after the reply to this stream has gone out: data sent before it would be dropped
        queueMicrotask(() => start(port, data.stream, data.input, error))
      }
    }
  })
  return {
    receive: (chunk) => session.receive(chunk),
    closed: () => {
      session.closed()
      for (const fiber of [...fibers]) Effect.runFork(Fiber.interrupt(fiber))
    }
  }
}

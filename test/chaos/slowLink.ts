/**
 * A slow, lossy link in user space, for a kernel without `sch_netem`: a TCP relay on loopback (a node process of its
 * own, so that the client's event loop cannot slow it) between the client and the apiserver. Each direction is
 * delayed by `delayMs`; each segment (`segmentBytes` of the stream) is "lost" with probability `loss`, and a lost one
 * arrives `rtoMs` later, as a retransmission would. Bytes are never dropped, changed or reordered: TCP delivers in
 * order, so a lost segment holds back every byte behind it (head-of-line blocking), and TLS would refuse any change.
 *
 * What it does not emulate: TCP's own window and slow start (the relay reads at once on loopback, so the sender's
 * congestion window never limits it). HTTP/2's flow-control windows are emulated, since their WINDOW_UPDATE frames
 * cross the relay with the delay.
 */
import { Effect } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

export interface Impairment {
  /** One-way delay of each direction (ms): the round trip is twice it. */
  readonly delayMs: number
  /** The probability that a segment is lost (0.02 for 2 %). */
  readonly loss: number
  /** How much later a lost segment arrives (ms): the retransmission timeout. */
  readonly rtoMs: number
  /** The size of a segment (bytes): an MSS on a 1,500-byte MTU with TCP timestamps. */
  readonly segmentBytes: number
}

/**
 * 100 ms each way (200 ms round trip) and 2 % loss; a lost segment comes 400 ms later: Linux's retransmission timeout
 * at a 200 ms round trip is srtt + max(4 × rttvar, 200 ms), 400 ms on a steady link. A bulk flow gets most of its
 * losses repaired by fast retransmit, sooner (about a round trip): this is the harsher end.
 */
export const slowLossy: Impairment = { delayMs: 100, loss: 0.02, rtoMs: 400, segmentBytes: 1448 }

/** The relay without impairment: what the relay itself costs. */
export const clean: Impairment = { delayMs: 0, loss: 0, rtoMs: 0, segmentBytes: 1448 }

const script = `
const net = require("node:net")
const [toHost, toPort, delayMs, loss, rtoMs, segmentBytes] = process.argv.slice(2)
const delay = Number(delayMs), lossP = Number(loss), rto = Number(rtoMs), mss = Number(segmentBytes)
const stats = { segments: 0, lost: 0, bytes: 0 }
// one direction: segments released in order, each no sooner than its time
const direction = (from, to) => {
  const queue = []
  let last = 0
  let timer = undefined
  let queued = 0
  const pump = () => {
    timer = undefined
    const now = performance.now()
    while (queue.length > 0 && queue[0].at <= now + 0.5) {
      const { bytes } = queue.shift()
      queued -= bytes.length
      to.write(bytes)
    }
    if (queued < 8 * 1024 * 1024 && from.isPaused()) from.resume()
    if (queue.length > 0) timer = setTimeout(pump, Math.max(0, queue[0].at - performance.now()))
  }
  from.on("data", (chunk) => {
    const now = performance.now()
    for (let i = 0; i < chunk.length; i += mss) {
      const bytes = chunk.subarray(i, Math.min(chunk.length, i + mss))
      stats.segments++
      stats.bytes += bytes.length
      let at = now + delay
      if (lossP > 0 && Math.random() < lossP) {
        stats.lost++
        at += rto
      }
      // in order: nothing overtakes a segment that waits
      at = Math.max(at, last)
      last = at
      queue.push({ at, bytes })
      queued += bytes.length
    }
    if (queued > 32 * 1024 * 1024) from.pause()
    if (timer === undefined) timer = setTimeout(pump, Math.max(0, queue[0].at - performance.now()))
  })
  from.on("end", () => {
    const ending = () => queue.length === 0 ? to.end() : setTimeout(ending, 5)
    ending()
  })
}
const server = net.createServer((client) => {
  const upstream = net.connect(Number(toPort), toHost)
  client.setNoDelay(true)
  upstream.setNoDelay(true)
  direction(client, upstream)
  direction(upstream, client)
  const end = () => { client.destroy(); upstream.destroy() }
  client.on("error", end); upstream.on("error", end); client.on("close", end); upstream.on("close", end)
})
process.on("message", () => process.send(stats))
server.listen(0, "127.0.0.1", () => console.log(String(server.address().port)))
`

export interface Link {
  /** `https://127.0.0.1:<port>`: the apiserver through the relay. */
  readonly server: string
  /** Segments carried, segments delayed as lost, bytes carried, so far. */
  readonly stats: () => Effect.Effect<{ readonly segments: number; readonly lost: number; readonly bytes: number }>
}

/** The relay to `apiserver` with `impairment`, stopped when the scope closes. */
export const make = (apiserver: URL, impairment: Impairment) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "chaos-slow-"))
      const file = path.join(dir, "relay.cjs")
      fs.writeFileSync(file, script)
      const child: ChildProcess = spawn(process.execPath, [
        file,
        apiserver.hostname,
        apiserver.port,
        String(impairment.delayMs),
        String(impairment.loss),
        String(impairment.rtoMs),
        String(impairment.segmentBytes)
      ], { stdio: ["ignore", "pipe", "inherit", "ipc"] })
      const port = await new Promise<number>((resolve, reject) => {
        child.stdout!.once("data", (data: Buffer) => resolve(Number(data.toString().trim())))
        child.once("exit", (code) => reject(new Error(`chaos: the slow-link relay exited (${code})`)))
      })
      return { child, dir, port }
    }),
    ({ child, dir }) =>
      Effect.sync(() => {
        child.kill("SIGKILL")
        fs.rmSync(dir, { recursive: true, force: true })
      })
  ).pipe(Effect.map(({ child, port }): Link => ({
    server: `https://127.0.0.1:${port}`,
    stats: () =>
      Effect.promise(() =>
        new Promise((resolve) => {
          child.once("message", (m) => resolve(m as { segments: number; lost: number; bytes: number }))
          child.send("stats")
        })
      )
  })))

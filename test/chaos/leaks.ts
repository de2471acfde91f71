/**
 * "0 leaked", measured: what the process holds (open file descriptors, active handles, timers, sockets, HTTP/2
 * client streams) before a case opens its clients and after their scope has ended. A case wrapped in `leakChecked`
 * records the difference (`<case>:leaks` in .tmp/chaos/results.json) and fails when anything is left over.
 *
 * The after-snapshot is taken again every 250 ms until the figures are back to the baseline, for at most 10 s: what
 * the process lets go of by itself in that time is no leak. That is Node's and undici's own bookkeeping, which
 * needs a moment after a scope ends: a socket destroyed closes its fd on the next turn of the loop, and the global
 * `fetch` dispatcher (the etcd gateway, the cluster's control endpoint) keeps an idle socket for its keep-alive of 4 s.
 * No tolerance is allowed beyond that: every figure must come back to what it was.
 */
import { Effect, Exit } from "effect"
import * as diagnostics from "node:diagnostics_channel"
import * as fs from "node:fs"
import { record } from "./support.js"

// HTTP/2 client streams opened and closed in this process (Node 22's `http2.client.stream.*` diagnostics channels):
// the transport's own streams, counted without reaching into it. Subscribed at import, before a case opens a client.
let streamsOpened = 0
let streamsClosed = 0
diagnostics.subscribe("http2.client.stream.created", () => {
  streamsOpened++
})
diagnostics.subscribe("http2.client.stream.close", () => {
  streamsClosed++
})

/** What the process holds at one moment. */
export interface Snapshot {
  /** entries of /proc/self/fd */
  readonly fds: number
  /** `process.getActiveResourcesInfo()`: every handle and request keeping the loop alive, timers included */
  readonly handles: number
  /** of those, `Timeout`s */
  readonly timers: number
  /** of those, TCP and TLS sockets (an HTTP/2 session is one) */
  readonly sockets: number
  /** HTTP/2 client streams opened and not yet closed */
  readonly h2Streams: number
  /** the handles by kind, to name what was left */
  readonly kinds: Readonly<Record<string, number>>
}

export const snapshot = (): Snapshot => {
  const resources = process.getActiveResourcesInfo()
  const kinds: Record<string, number> = {}
  for (const r of resources) kinds[r] = (kinds[r] ?? 0) + 1
  return {
    fds: fs.readdirSync("/proc/self/fd").length,
    handles: resources.length,
    timers: kinds["Timeout"] ?? 0,
    sockets: (kinds["TCPSocketWrap"] ?? 0) + (kinds["TLSWrap"] ?? 0),
    h2Streams: streamsOpened - streamsClosed,
    kinds
  }
}

/** The open fds' targets (`socket:[inode]`, paths), to name a leaked one. */
const fdTargets = (): Array<string> =>
  fs.readdirSync("/proc/self/fd").flatMap((fd) => {
    try {
      return [fs.readlinkSync(`/proc/self/fd/${fd}`)]
    } catch {
      return [] // the fd of readdir itself, closed by now
    }
  })

/** A socket's inode to its TCP endpoints and state, from /proc/net/tcp and tcp6 (hex addresses, as the kernel has them). */
const tcpSockets = (): Map<string, string> => {
  const out = new Map<string, string>()
  for (const file of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    if (!fs.existsSync(file)) continue
    for (const line of fs.readFileSync(file, "utf8").split("\n").slice(1)) {
      const f = line.trim().split(/\s+/)
      if (f.length > 9) out.set(f[9]!, `${f[1]} -> ${f[2]} state ${f[3]}`)
    }
  }
  return out
}

/** What the fds `after` has and `before` had not are: files, or sockets with their endpoints. */
const extraFds = (before: ReadonlyArray<string>, after: ReadonlyArray<string>): Array<string> => {
  const had = new Map<string, number>()
  for (const t of before) had.set(t, (had.get(t) ?? 0) + 1)
  const extra = after.filter((t) => {
    const n = had.get(t) ?? 0
    if (n > 0) had.set(t, n - 1)
    return n === 0
  })
  const tcp = extra.some((t) => t.startsWith("socket:")) ? tcpSockets() : new Map<string, string>()
  return extra.map((t) => {
    const inode = /^socket:\[(\d+)\]$/.exec(t)?.[1]
    return inode !== undefined && tcp.has(inode) ? `${t} ${tcp.get(inode)}` : t
  })
}

/** What `after` holds more than `before`, per figure (0 where it holds as much or less). */
export const leaked = (before: Snapshot, after: Snapshot) => ({
  fds: Math.max(0, after.fds - before.fds),
  handles: Math.max(0, after.handles - before.handles),
  timers: Math.max(0, after.timers - before.timers),
  sockets: Math.max(0, after.sockets - before.sockets),
  h2Streams: Math.max(0, after.h2Streams - before.h2Streams)
})

const nothing = (l: ReturnType<typeof leaked>) => Object.values(l).every((n) => n === 0)

/** The kinds of handle `after` holds more of than `before`, e.g. `{ TLSWrap: 1 }`. */
const extraKinds = (before: Snapshot, after: Snapshot) =>
  Object.fromEntries(
    Object.entries(after.kinds).filter(([k, n]) => n > (before.kinds[k] ?? 0)).map((
      [k, n]
    ) => [k, n - (before.kinds[k] ?? 0)])
  )

/**
 * Runs `self` (a whole case, its clients' layers and scopes inside it) between two snapshots; records
 * `<name>:leaks` and dies when anything is left once it has settled. A case that failed keeps its own failure (its
 * figures are recorded, not asserted).
 */
export const leakChecked = (name: string, settleSeconds = 10) => <A, E, R>(self: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const before = snapshot()
    const beforeFds = fdTargets()
    const exit = yield* Effect.exit(self)
    const t0 = performance.now()
    let after = snapshot()
    while (!nothing(leaked(before, after)) && performance.now() - t0 < settleSeconds * 1000) {
      yield* Effect.sleep("250 millis")
      after = snapshot()
    }
    const left = leaked(before, after)
    yield* record(`${name}:leaks`, {
      leaked: left,
      settledMs: Math.round(performance.now() - t0),
      before: { fds: before.fds, handles: before.handles, timers: before.timers, sockets: before.sockets },
      after: { fds: after.fds, handles: after.handles, timers: after.timers, sockets: after.sockets },
      h2StreamsOpened: streamsOpened,
      extra: extraKinds(before, after),
      ...(after.fds > before.fds ? { extraFds: extraFds(beforeFds, fdTargets()) } : {})
    })
    if (Exit.isFailure(exit)) return yield* exit
    if (!nothing(left)) {
      return yield* Effect.die(
        new Error(`chaos ${name}: leaked ${JSON.stringify(left)} (${JSON.stringify(extraKinds(before, after))})`)
      )
    }
    return exit.value
  })

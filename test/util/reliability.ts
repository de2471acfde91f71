/**
 * Shared pieces of the reliability suite (`test/reliability/`): the fake cluster served
 * on loopback HTTPS with the test PKI and a bearer token, a NodeKube layer for it, the
 * counts each file prints at the end, and small helpers to look at failures.
 */
import type * as HttpClient from "effect/http/HttpClient"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as TestClock from "effect/testing/TestClock"
import type * as Scope from "effect/Scope"
import * as Http from "node:http"
import type * as Net from "node:net"
import * as Util from "node:util"
import * as KubeConfig from "../../packages/effect-kube/src/KubeConfig.js"
import * as NodeKube from "../../packages/effect-kube/src/NodeKube.js"
import { FakeCluster } from "@effect-kube/testing"
import { pki } from "./pki.js"
import { apiServerOnly } from "./apiServerOnly.js"

/** The token the served fake demands: it must never appear in an error. */
export const servedToken = "reliability-token-0123456789abcdef"

/** What a file did, printed in its `afterAll` so the README can state it. */
export interface Counts {
  faults: number
  requests: number
  events: number
  badInputs: number
}

export const makeCounts = (): Counts => ({ faults: 0, requests: 0, events: 0, badInputs: 0 })

const format = (n: number) => n.toLocaleString("en-US")

/** `reliability (faults): 12 faults injected, 340 requests, 1,200 events checked, 0 bad inputs` */
export const report = (file: string, counts: Counts): void => {
  console.log(
    `reliability (${file}): ${format(counts.faults)} faults injected, ${format(counts.requests)} requests, ` +
      `${format(counts.events)} events checked, ${format(counts.badInputs)} bad inputs`
  )
}

/** The fake on loopback HTTPS (server certificate from the test CA, token required). */
export const serveTls = (
  options: Omit<FakeCluster.ServeOptions, "tls"> = {}
): Effect.Effect<FakeCluster.Served, never, Scope.Scope> => {
  const { ca, server } = pki()
  const tls = { cert: server.cert, key: server.key, ca: ca.cert }
  return FakeCluster.serve({ ...apiServerOnly, token: servedToken, ...options, tls })
    .pipe(Effect.orDie)
}

/** KubeConfig and the Node HttpClient for a served fake, from the kubeconfig file it wrote. */
export const nodeLayer = (
  served: FakeCluster.Served
): Layer.Layer<KubeConfig.KubeConfig | HttpClient.HttpClient> =>
  NodeKube.layerFromFile({ path: served.kubeconfigPath }).pipe(Layer.orDie)

/** The error an effect failed with; a defect, an interruption or a success fails the test. */
export { failureOf } from "./failure.js"

/** Real time passing, whatever clock the test runs with: only for waiting on a real server. */
export const realSleep = (ms: number): Effect.Effect<void> =>
  Effect.promise(() => new Promise<void>((resolve) => setTimeout(resolve, ms)))

/** Polls (in real time) until `check` holds, for at most `ms`; returns whether it did. */
export const eventually = (check: () => boolean, ms = 5_000): Effect.Effect<boolean> =>
  Effect.gen(function*() {
    const deadline = Date.now() + ms
    while (Date.now() < deadline) {
      if (check()) return true
      yield* realSleep(5)
    }
    return check()
  })

/** The tags of the errors the public API may fail with. */
export const publicErrorTags: ReadonlySet<string> = new Set([
  "ValidationError",
  "ApiError",
  "KubeConfigError",
  "ApplyFailed",
  "DeleteFailed",
  "HttpClientError",
  "RequestTimeout",
  "ServerWarning"
])

/** Every text an error shows: its message, String(), util.inspect (console.log) and JSON, and those of its causes. */
export const renderings = (error: unknown): ReadonlyArray<string> => {
  const out: Array<string> = []
  const seen = new Set<unknown>()
  const visit = (e: unknown, depth: number) => {
    if (e === null || e === undefined || depth > 4 || seen.has(e)) return
    seen.add(e)
    if (typeof e !== "object") {
      out.push(String(e))
      return
    }
    const message = (e as { message?: unknown }).message
    if (typeof message === "string") out.push(message)
    out.push(String(e))
    out.push(Util.inspect(e, { depth: 10 }))
    try {
      out.push(JSON.stringify(e))
    } catch {
      // a cycle: message and String() above still count
    }
    visit((e as { cause?: unknown }).cause, depth + 1)
    const failed = (e as { failed?: { error?: unknown } }).failed
    if (failed !== undefined) visit(failed.error, depth + 1)
    const failures = (e as { failures?: ReadonlyArray<{ error?: unknown }> }).failures
    if (Array.isArray(failures)) for (const f of failures) visit(f.error, depth + 1)
  }
  visit(error, 0)
  return out
}

/** The TestClock of a test, recording the sleeps registered on it (see `recordingSleeps`). */
interface RecordingClock extends TestClock.TestClock {
  readonly pending: Array<{ readonly at: number }>
}

const recordingClocks = new WeakSet<object>()

/**
 * Runs `self` with the test's TestClock wrapped so that every sleep registered on it is
 * recorded until it ends (woken or interrupted): `sleeps` reads them. Effect 4's TestClock
 * does not show its sleeps (Effect 3's `TestClock.sleeps()`); this is the same list, taken
 * where the sleeps are made. Everything else is the TestClock's own (`TestClock.adjust`
 * moves it, a sleep is woken by it).
 */
export const recordingSleeps = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.withFiber((fiber) => {
    const testClock = fiber.getRef(Clock.Clock) as TestClock.TestClock
    // under the live clock (`it.live`) there is nothing to record: the clock stays the live one
    if (recordingClocks.has(testClock) || typeof testClock.adjust !== "function") return self
    const pending: Array<{ readonly at: number }> = []
    const clock: RecordingClock = Object.assign(Object.create(testClock) as TestClock.TestClock, {
      pending,
      sleep: (duration: Duration.Duration) =>
        Effect.acquireUseRelease(
          Effect.sync(() => {
            const entry = { at: testClock.currentTimeMillisUnsafe() + Duration.toMillis(duration) }
            // a sleep that ends at once is not registered by the TestClock either
            if (entry.at > testClock.currentTimeMillisUnsafe()) pending.push(entry)
            return entry
          }),
          () => testClock.sleep(duration),
          (entry) =>
            Effect.sync(() => {
              const index = pending.indexOf(entry)
              if (index !== -1) pending.splice(index, 1)
            })
        )
    })
    recordingClocks.add(clock)
    return Effect.provideService(self, Clock.Clock, clock)
  })

/** When each sleep waiting on the clock ends (epoch ms of the TestClock), under `recordingSleeps`. */
export const sleeps: Effect.Effect<ReadonlyArray<number>> = Clock.clockWith((clock) =>
  recordingClocks.has(clock)
    ? Effect.sync(() => (clock as RecordingClock).pending.map((entry) => entry.at))
    : Effect.die(new Error("sleeps: run the test under recordingSleeps"))
)

/**
 * The delay until the earliest sleep registered on the clock since `before` (a snapshot
 * of `sleeps`), once there is one; `None` when `fiber` ends first. The snapshot matters:
 * sleeps that were already waiting must not be taken for new ones. Polls in real time,
 * since requests travel through a real fake. Under `recordingSleeps`.
 */
export const newSleep = <A, E>(
  before: ReadonlyArray<number>,
  fiber?: Fiber.Fiber<A, E> | undefined
): Effect.Effect<Option.Option<number>> =>
  Effect.gen(function*() {
    for (let i = 0; i < 2_500; i++) {
      const remaining = [...before]
      const fresh: Array<number> = []
      for (const at of yield* sleeps) {
        const known = remaining.indexOf(at)
        if (known === -1) fresh.push(at)
        else remaining.splice(known, 1)
      }
      if (fresh.length > 0) return Option.some(Math.min(...fresh) - (yield* Clock.currentTimeMillis))
      if (fiber !== undefined && fiber.pollUnsafe() !== undefined) return Option.none()
      yield* realSleep(2)
    }
    return yield* Effect.die(new Error("nothing new waits on the clock, and the fiber goes on"))
  })

/** A loopback `node:http` server that answers whatever the test says, for malformed answers. */
export interface RawServer {
  readonly url: string
  /** Every request seen, as `METHOD /path?query`. */
  readonly requests: Array<string>
  /** What answers the next requests; replace it between cases. */
  answer: Http.RequestListener
  /** Sockets currently open to the server. */
  readonly openConnections: () => number
}

/** Starts a raw server for the scope; it destroys its sockets when the scope closes. */
export const rawServer: Effect.Effect<RawServer, never, Scope.Scope> = Effect.acquireRelease(
  Effect.callback<{ server: Http.Server; sockets: Set<Net.Socket>; raw: RawServer }>((resume) => {
    const sockets = new Set<Net.Socket>()
    const raw: RawServer = {
      url: "",
      requests: [],
      answer: (_req, res) => res.end(),
      openConnections: () => sockets.size
    }
    const server = Http.createServer((req, res) => {
      raw.requests.push(`${req.method} ${req.url}`)
      // the body is read before answering, so that a cut answer is the only fault
      req.resume()
      req.on("end", () => raw.answer(req, res))
    })
    server.on("connection", (socket: Net.Socket) => {
      sockets.add(socket)
      socket.on("close", () => sockets.delete(socket))
    })
    server.listen(0, "127.0.0.1", () => {
      const address = server.address() as Net.AddressInfo
      resume(Effect.succeed({ server, sockets, raw: Object.assign(raw, { url: `http://127.0.0.1:${address.port}` }) }))
    })
  }),
  ({ server, sockets }) =>
    Effect.callback<void>((resume) => {
      for (const socket of sockets) socket.destroy()
      server.close(() => resume(Effect.void))
    })
).pipe(Effect.map(({ raw }) => raw))

/** KubeConfig (namespace `default`, a token) and the Node HttpClient for a raw server. */
export const rawLayer = (
  url: string,
  token = servedToken
): Layer.Layer<KubeConfig.KubeConfig | HttpClient.HttpClient> =>
  Layer.provideMerge(NodeKube.httpClientLayer, KubeConfig.layerFrom({ server: url, namespace: "default", token }))
    .pipe(Layer.orDie)

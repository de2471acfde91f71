/**
 * HTTP/2 to the cluster, where its server offers it by ALPN (kube-apiserver does): every
 * request and stream (watches, log follows) is a stream on one TLS connection, as with
 * client-go. Undici speaks it (`allowH2`), but three things are added here:
 *
 * - **Streams per connection.** An undici Client runs at most `pipelining` requests at once
 *   (1 unless told), on HTTP/2 too. Once a connection's SETTINGS have come its Client is
 *   given what the server allows (`SETTINGS_MAX_CONCURRENT_STREAMS`; 100 when it says
 *   nothing); the pool opens a second connection only when a first is full. A connection that
 *   negotiated HTTP/1.1 keeps 1 (no HTTP/1.1 pipelining). Known gap: when a burst goes past a
 *   small limit (tens of streams), undici's pool can queue a request or two on a full
 *   connection, where they wait for one of its streams to end; kube-apiserver's limit (100 or
 *   more) makes that rare, and `http2: false` avoids it.
 * - **One connection from a cold start.** A pool opens a connection for every request that
 *   arrives while the first is still connecting, so a burst of a thousand would open as many
 *   as the cap allows before knowing the server speaks h2; the same when a full connection
 *   needs a second, or after GOAWAY. `Negotiated` holds requests while a connection is being
 *   dialled, until it has negotiated; then everything goes on h2, or, on HTTP/1.1,
 *   long-running requests go to their own pool as before.
 * - **A ping health check**, as client-go's (`ReadIdleTimeout` 30 s, `PingTimeout` 15 s): a
 *   connection is pinged every `pingIntervalMs`, and one whose ping is not answered within
 *   `pingTimeoutMs` (a peer gone behind a NAT, a dead node) is destroyed: its streams fail
 *   (watchers resume on a new connection) and the next request dials again. Undici's own
 *   ping only reports a ping that failed, never one left unanswered, so it is off.
 *
 * Undici keeps the session and socket of a Client under its own symbols (`clientInternals`,
 * of the pinned undici version); they are read only here.
 *
 * Undici ends a connection as soon as it receives GOAWAY, failing the streams still open on
 * it rather than letting them finish: watches resume and reads are retried, but a mutation
 * in flight then fails (see the README).
 *
 * @internal
 */
import * as Undici from "./undici.js"

/** @internal */
export interface Health {
  /** How often a connection is pinged (ms); 0 turns the health check off. */
  readonly pingIntervalMs: number
  /** How long an answer to a ping may take (ms) before the connection is given up. */
  readonly pingTimeoutMs: number
}

/** client-go's `ReadIdleTimeout` and `PingTimeout`. @internal */
export const defaultHealth: Health = { pingIntervalMs: 30_000, pingTimeoutMs: 15_000 }

/** The streams a connection is given before the server's SETTINGS say (Go's assumption, RFC 9113's floor). */
const initialStreams = 100

/** What a Client reports of its connections. */
interface Hooks {
  readonly dialing: (client: object) => void
  readonly negotiated: (client: object, protocol: "h2" | "http/1.1") => void
  readonly failed: (client: object) => void
}

interface Http2Session {
  readonly closed: boolean
  readonly destroyed: boolean
  on(event: "remoteSettings", listener: (settings: { readonly maxConcurrentStreams?: number }) => void): void
  once(event: "close", listener: () => void): void
  ping(callback: (error: Error | null) => void): boolean
}

const streamsFor = (settings: { readonly maxConcurrentStreams?: number }): number => {
  const announced = settings.maxConcurrentStreams
  return announced !== undefined && announced > 0 ? Math.min(announced, 2 ** 31 - 1) : initialStreams
}

/** Pings a session every interval; a ping unanswered within the timeout destroys the socket. */
const watchHealth = (session: Http2Session, socket: { destroy(error?: Error): void }, health: Health): void => {
  if (health.pingIntervalMs <= 0) return
  let deadline: ReturnType<typeof setTimeout> | undefined
  const interval = setInterval(() => {
    if (session.closed || session.destroyed || deadline !== undefined) return
    deadline = setTimeout(() => {
      socket.destroy(new Error(`HTTP/2: the server did not answer a ping within ${health.pingTimeoutMs} ms`))
    }, health.pingTimeoutMs)
    deadline.unref()
    try {
      session.ping(() => {
        clearTimeout(deadline)
        deadline = undefined
      })
    } catch {
      // the session is closing: its close stops the timers
    }
  }, health.pingIntervalMs)
  interval.unref()
  session.once("close", () => {
    clearInterval(interval)
    clearTimeout(deadline)
  })
}

/** The connector a Pool hands its Clients (undici's `buildConnector`). */
type Connector = (options: object, callback: (...args: Array<unknown>) => void) => unknown

const makeClient = (origin: URL | string, options: Undici.Client.Options, health: Health, hooks: Hooks) => {
  const connect = options.connect as unknown as Connector
  const client: InstanceType<typeof Undici.Client> = new Undici.Client(origin, {
    ...options,
    pingInterval: 0,
    // called as a connection is dialled, whether by a new Client or by one whose connection ended
    connect: ((connectOptions: object, callback: (...args: Array<unknown>) => void) => {
      hooks.dialing(client)
      return connect(connectOptions, callback)
    }) as unknown as Undici.buildConnector.connector
  })
  const internals = client as unknown as Record<symbol, unknown>
  client.on("connect", () => {
    const session = internals[Undici.clientInternals.session] as Http2Session | null | undefined
    if (session === null || session === undefined) {
      client.pipelining = 1
      return hooks.negotiated(client, "http/1.1")
    }
    client.pipelining = 1
    // what was held waits for the server's SETTINGS, so that it is spread by the real limit
    session.on("remoteSettings", (settings) => {
      client.pipelining = streamsFor(settings)
      hooks.negotiated(client, "h2")
    })
    const socket = internals[Undici.clientInternals.socket] as { destroy(error?: Error): void }
    watchHealth(session, socket, health)
  })
  client.on("connectionError", () => hooks.failed(client))
  client.on("disconnect", () => hooks.failed(client))
  return client
}

/**
 * What undici 7's HTTP/2 needs of a request:
 * - `idempotent: true`, else a mutation waits until no other stream runs on its connection
 *   (HTTP/1.1 pipelining's rule, which undici applies to h2 too): with a watch open, forever.
 *   Undici retries nothing itself; whether a request is sent again is the request path's call.
 * - a DELETE body (DeleteOptions) as an iterable: undici drops the length of a DELETE's body
 *   and then refuses a buffer without one (an assertion that breaks the connection).
 */
const forH2 = (options: Undici.Dispatcher.DispatchOptions): Undici.Dispatcher.DispatchOptions => {
  const body = options.body
  return options.method === "DELETE" && body instanceof Uint8Array
    ? { ...options, idempotent: true, body: [body] as unknown as Uint8Array }
    : { ...options, idempotent: true }
}

/**
 * Sends requests to an h2-capable pool and, unless the server is known to speak HTTP/1.1,
 * holds them while a connection is being dialled, until it has negotiated (on h2, until the
 * server's SETTINGS have come), so that a burst never dials a connection a request. On h2
 * everything goes to that pool; on HTTP/1.1 long-running requests (`isLongRunning`) go to
 * `streams`. It only routes:
 * its dispatchers are closed by their owner.
 *
 * @internal
 */
export class Negotiated extends Undici.DispatcherBase {
  private protocol: "h2" | "http/1.1" | undefined = undefined
  /** The Clients dialling a connection; while there are any (and not on HTTP/1.1), requests are held. */
  private readonly dialing = new Set<object>()
  private held: Array<readonly [Undici.Dispatcher.DispatchOptions, Undici.Dispatcher.DispatchHandler]> = []
  readonly shared: Undici.Dispatcher

  constructor(
    connect: object,
    connections: number | null,
    readonly streams: Undici.Dispatcher,
    readonly isLongRunning: (path: string) => boolean,
    health: Health = defaultHealth
  ) {
    super()
    const hooks: Hooks = {
      dialing: (client) => {
        this.dialing.add(client)
      },
      negotiated: (client, protocol) => {
        this.protocol = protocol
        this.dialed(client)
      },
      failed: (client) => this.dialed(client)
    }
    this.shared = new Undici.Agent({
      connect: { ...connect },
      allowH2: true,
      connections,
      bodyTimeout: 0,
      headersTimeout: 0,
      factory: (origin, options) =>
        new Undici.Pool(origin, {
          ...options,
          factory: (origin, options) => makeClient(origin, options as Undici.Client.Options, health, hooks)
        })
    })
  }

  /** Whether the cluster's connections speak HTTP/2 (`undefined` before the first has negotiated). */
  get negotiated(): "h2" | "http/1.1" | undefined {
    return this.protocol
  }

  override dispatch(given: Undici.Dispatcher.DispatchOptions, handler: Undici.Dispatcher.DispatchHandler): boolean {
    if (this.protocol === "http/1.1") return this.route(given, handler)
    const options = forH2(given)
    if (this.dialing.size > 0) {
      this.held.push([options, handler])
      return true
    }
    return this.route(options, handler)
  }

  private route(options: Undici.Dispatcher.DispatchOptions, handler: Undici.Dispatcher.DispatchHandler): boolean {
    return (this.protocol === "http/1.1" && this.isLongRunning(options.path) ? this.streams : this.shared)
      .dispatch(options, handler)
  }

  /**
   * A dial has ended (negotiated or failed): once none is left, what was held is sent, each
   * held again if it makes the pool dial once more.
   */
  private dialed(client: object): void {
    if (!this.dialing.delete(client) || this.dialing.size > 0) return
    // after undici's own 'drain' (a microtask of the Client that just connected): sent before
    // it, requests would fill the Client, and its late 'drain' would mark it free again
    setImmediate(() => {
      if (this.dialing.size > 0) return
      const held = this.held
      this.held = []
      for (const [options, handler] of held) this.dispatch(options, handler)
    })
  }
}

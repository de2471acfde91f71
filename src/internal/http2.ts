/**
 * HTTP/2 to the cluster, where its server offers it by ALPN (kube-apiserver does): every
 * request and stream (watches, log follows) is a stream on one TLS connection, as with
 * client-go. Undici speaks it (`allowH2`); what is added here:
 *
 * - **Streams per connection.** An undici Client runs at most `pipelining` requests at once
 *   (1 unless told), on HTTP/2 too. Once a connection's SETTINGS have come its Client is
 *   given what the server allows (`SETTINGS_MAX_CONCURRENT_STREAMS`; 100 when it says
 *   nothing), and a request goes to a connection with a free stream or, when all are full,
 *   to a new one (as client-go does). A connection that negotiated HTTP/1.1 keeps 1 (no
 *   HTTP/1.1 pipelining). The pool is our own (`Negotiated`): undici's Pool takes a Client's
 *   'drain' (emitted a microtask late) as the word that it has room, so after a burst it
 *   sends a request or two to a connection that is full again by then, where they wait for
 *   one of its streams to end, and it cannot leave a connection to drain after GOAWAY.
 * - **One connection from a cold start.** A pool opens a connection for every request that
 *   arrives while the first is still connecting, so a burst of a thousand would open as many
 *   as the cap allows before knowing the server speaks h2; the same when a full connection
 *   needs a second, or after GOAWAY. Requests are held while a connection is being dialled,
 *   until it has negotiated; then everything goes on h2, or, on HTTP/1.1, long-running
 *   requests go to their own pool as before.
 * - **GOAWAY drains** (RFC 9113 §6.8, as Go's transport does): the streams the server took
 *   run to their end (a mutation in flight succeeds, a watch goes on until the server ends
 *   it), new requests go to a new connection, and the old one closes once its last stream
 *   has. Undici 7 would end the connection at once, failing them (`drainOnGoAway`).
 * - **A refused request is sent again** (RFC 9113 §8.7, as Go's transport does): a stream
 *   above a GOAWAY's last stream id, or one reset with REFUSED_STREAM, was never processed
 *   by the server, so it goes again on a connection with room, a mutation too, at most
 *   `maxReplays` times (`Replaying`). Nothing else is sent twice: a stream the server took
 *   and then lost (a reset connection, a GOAWAY with an error) fails as it did.
 * - **A ping health check**, as client-go's (`ReadIdleTimeout` 30 s, `PingTimeout` 15 s): a
 *   connection is pinged every `pingIntervalMs`, and one whose ping is not answered within
 *   `pingTimeoutMs` (a peer gone behind a NAT, a dead node) is destroyed: its streams fail
 *   (watchers resume on a new connection) and the next request dials again. Undici's own
 *   ping only reports a ping that failed, never one left unanswered, so it is off.
 *
 * Undici keeps the session, socket and state of a Client under its own symbols
 * (`clientInternals`, of the pinned undici version); they are read only here.
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

/**
 * The flow-control windows the client gives the server: per stream and for the whole
 * connection, Go's transport's (client-go's; `transportDefaultStreamFlow` 4 MiB and
 * `transportDefaultConnFlow` 1 GiB). Undici's (256 KiB and 512 KiB) let the server send at
 * most that much a round trip: through a link of 1 Gbit/s and 20 ms round trip, a 2 MB
 * page of 500 pods took 289 ms against 165 ms over HTTP/1.1, and four at once 1,108 ms
 * against 489 (the connection's window shared by every stream on it); with these, 155 and
 * 647 ms (`bench/h2-window.ts`). A stream whose reader is slow holds at most its window in
 * memory.
 */
const streamWindowBytes = 4 * 1024 * 1024
const connectionWindowBytes = 1024 * 1024 * 1024

/** The streams a connection is given before the server's SETTINGS say (Go's assumption, RFC 9113's floor). */
const initialStreams = 100

/** What a Client reports of its connections. */
interface Hooks {
  readonly dialing: (client: Client) => void
  readonly negotiated: (client: Client, protocol: "h2" | "http/1.1") => void
  readonly failed: (client: Client) => void
  /** The connection ended (closed by either side, or its request was abandoned). */
  readonly disconnected: (client: Client) => void
  /** The server sent GOAWAY: the connection takes no new stream; those it has finish. */
  readonly goingAway: (client: Client) => void
}

type Client = InstanceType<typeof Undici.Client>

interface Http2Session {
  readonly closed: boolean
  readonly destroyed: boolean
  on(event: "remoteSettings", listener: (settings: { readonly maxConcurrentStreams?: number }) => void): void
  on(event: "goaway", listener: (errorCode: number, ...rest: Array<unknown>) => void): void
  once(event: "close", listener: () => void): void
  listeners(event: "goaway"): Array<(this: Http2Session, errorCode: number, ...rest: Array<unknown>) => void>
  removeAllListeners(event: "goaway"): void
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

const internalsOf = (client: Client) => client as unknown as Record<symbol, unknown>

/** Whether a Client takes no request now: its streams (or its one HTTP/1.1 request) are all in use, or it is dialling. */
const isBusy = (client: Client): boolean => internalsOf(client)[Undici.clientInternals.busy] === true

/**
 * Undici 7 ends a connection as soon as GOAWAY arrives, destroying its socket and with it
 * every stream still open, those the server has promised to finish (RFC 9113 §6.8) too, so
 * a mutation in flight fails. On a GOAWAY without error its listener is not called: Node's
 * session closes gracefully by itself (streams up to the last one the server took run to
 * their end, later ones are refused), and the connection is marked as taking no new stream
 * (its context always busy), which leaves its Client free to dial a new one only for a
 * request queued on it before. The pool sends nothing more to it (`goingAway`), whatever the
 * GOAWAY's code.
 */
/** The `busy` of a connection's context once GOAWAY has come. */
const takesNoStream = (): boolean => true

const drainOnGoAway = (client: Client, session: Http2Session, goingAway: () => void): void => {
  const undicis = session.listeners("goaway")
  session.removeAllListeners("goaway")
  session.on("goaway", (errorCode, ...rest) => {
    goingAway()
    // a GOAWAY with an error: Node destroys the session, and undici's own handling of it stands
    if (errorCode !== 0) return undicis.forEach((listener) => listener.call(session, errorCode, ...rest))
    const context = internalsOf(client)[Undici.clientInternals.context] as { busy: (request: unknown) => boolean } | null
    if (context !== null && context !== undefined) context.busy = takesNoStream
  })
}

const makeClient = (
  origin: string,
  options: Undici.Client.Options,
  connect: Undici.buildConnector.connector,
  health: Health,
  hooks: Hooks
): Client => {
  const client: Client = new Undici.Client(origin, {
    ...options,
    pingInterval: 0,
    // called as a connection is dialled, whether by a new Client or by one whose connection ended
    connect: ((connectOptions, callback) => {
      hooks.dialing(client)
      return connect(connectOptions, callback)
    }) as Undici.buildConnector.connector
  })
  const internals = internalsOf(client)
  client.on("connect", () => {
    const session = internals[Undici.clientInternals.session] as Http2Session | null | undefined
    client.pipelining = 1
    if (session === null || session === undefined) return hooks.negotiated(client, "http/1.1")
    // what was held waits for the server's SETTINGS, so that it is spread by the real limit
    session.on("remoteSettings", (settings) => {
      client.pipelining = streamsFor(settings)
      hooks.negotiated(client, "h2")
    })
    drainOnGoAway(client, session, () => hooks.goingAway(client))
    const socket = internals[Undici.clientInternals.socket] as { destroy(error?: Error): void }
    watchHealth(session, socket, health)
  })
  client.on("connectionError", () => hooks.failed(client))
  client.on("disconnect", () => hooks.disconnected(client))
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

type Held = readonly [Undici.Dispatcher.DispatchOptions, Undici.Dispatcher.DispatchHandler]

/** How many times a request the server refused unprocessed is sent again (Go's transport: up to 6, backing off). */
const maxReplays = 3

/** The wait before the second replay (ms), doubled for each one after; the first is sent at once. */
const replayBackoffMs = 100

/**
 * Whether a request failed on a stream the server never processed (RFC 9113 §8.7): one it
 * reset with REFUSED_STREAM, or one above the last stream id of its GOAWAY, which Node's
 * HTTP/2 closes with that code too. Node names the code only in the message of its
 * `ERR_HTTP2_STREAM_ERROR` (`Stream closed with error code NGHTTP2_REFUSED_STREAM`), which
 * undici passes on as it is.
 */
const isRefused = (error: unknown): boolean =>
  error instanceof Error && (error as { readonly code?: unknown }).code === "ERR_HTTP2_STREAM_ERROR" &&
  error.message.endsWith("NGHTTP2_REFUSED_STREAM")

/** Whether a request can be sent again as it was: no body, or one in memory (a stream is used up by the first send). */
const canReplay = (options: Undici.Dispatcher.DispatchOptions, handler: Undici.Dispatcher.DispatchHandler): boolean => {
  const body = options.body
  // undici's own request API gives handlers of the callback kind; a controller kind is sent as it comes
  return handler.onRequestStart === undefined && handler.onError !== undefined &&
    (body === null || body === undefined || typeof body === "string" || body instanceof Uint8Array ||
      Array.isArray(body))
}

/** The abort given to the request's handler: it aborts the send in flight, or the replay waiting for its turn. */
const abortOf = (replaying: Replaying) => (reason?: Error) => replaying.abort(reason)

/**
 * A request's handler that sends the request again when the server refused it unprocessed
 * (`isRefused`), as Go's transport does (client-go's): safe for a mutation too, as the
 * server never saw it. Only before any answer has come, at most `maxReplays` times, and
 * never for any other failure (a reset connection, a GOAWAY with an error, a timeout): a
 * stream the server may have processed is never sent twice. Everything else is passed on
 * to the request's own handler, which sees one request.
 */
class Replaying implements Undici.Dispatcher.DispatchHandler {
  private replays = 0
  private answered = false
  /** The request's handler has been told it failed. */
  private failed = false
  private aborted: Error | undefined = undefined
  /** The abort of the send in flight; none between a refusal and the replay's start. */
  private abortSend: ((reason?: Error) => void) | undefined = undefined
  private waiting: ReturnType<typeof setTimeout> | undefined = undefined

  constructor(
    private readonly options: Undici.Dispatcher.DispatchOptions,
    private readonly handler: Undici.Dispatcher.DispatchHandler,
    private readonly resend: (options: Undici.Dispatcher.DispatchOptions, handler: Replaying) => void
  ) {}

  abort(given?: Error): void {
    if (this.aborted !== undefined) return
    const reason = given ?? new Error("the request was aborted")
    this.aborted = reason
    if (this.abortSend !== undefined) return this.abortSend(reason)
    // between two sends (the request's handler has no abort before the first has started): fail it now,
    // and the replay, if it was sent already, is aborted as it starts
    clearTimeout(this.waiting)
    this.waiting = undefined
    this.fail(reason)
  }

  onConnect(abort: (reason?: Error) => void): void {
    if (this.aborted !== undefined) return abort(this.aborted)
    this.abortSend = abort
    if (this.replays === 0) this.handler.onConnect?.(abortOf(this))
  }

  onResponseStarted(): void {
    this.handler.onResponseStarted?.()
  }

  onHeaders(statusCode: number, headers: Array<Buffer>, resume: () => void, statusText: string): boolean {
    this.answered = true
    return this.handler.onHeaders?.(statusCode, headers, resume, statusText) ?? true
  }

  onData(chunk: Buffer): boolean {
    return this.handler.onData?.(chunk) ?? true
  }

  onComplete(trailers: Array<string> | null): void {
    this.handler.onComplete?.(trailers)
  }

  onBodySent(chunkSize: number, totalBytesSent: number): void {
    this.handler.onBodySent?.(chunkSize, totalBytesSent)
  }

  onError(error: Error): void {
    if (this.answered || this.aborted !== undefined || this.replays >= maxReplays || !isRefused(error)) {
      return this.fail(error)
    }
    this.abortSend = undefined
    const delay = this.replays === 0 ? 0 : replayBackoffMs * 2 ** (this.replays - 1)
    this.replays++
    // not from inside the refused stream's own events
    this.waiting = setTimeout(() => {
      this.waiting = undefined
      this.resend(this.options, this)
    }, delay)
  }

  private fail(error: Error): void {
    if (this.failed) return
    this.failed = true
    this.handler.onError!(error)
  }
}

/**
 * The cluster's connections, h2 where the server offers it: a pool of undici Clients (one
 * connection each) of our own, as undici's Pool cannot leave a connection that got GOAWAY
 * to drain while new requests go to a new one, nor be told when a connection is full.
 *
 * A request goes to the first connection with a free stream (on HTTP/1.1: an idle
 * connection); when every one is full a new one is dialled (client-go opens a new
 * connection when the streams of its others are used up), up to `connections`, after which
 * requests wait for a stream in the order they came. Unless the server is known to speak
 * HTTP/1.1, requests are held while a connection is being dialled, until it has negotiated
 * (on h2, until the server's SETTINGS have come), so that a burst never dials a connection
 * a request. On h2 everything goes to this pool; on HTTP/1.1 long-running requests
 * (`isLongRunning`) go to `streams`, which its owner closes.
 *
 * @internal
 */
export class Negotiated extends Undici.DispatcherBase {
  private protocol: "h2" | "http/1.1" | undefined = undefined
  /** The Clients dialling a connection; while there are any (and not on HTTP/1.1), requests are held. */
  private readonly dialing = new Set<Client>()
  /** Requests held while dialling, or waiting for a stream once `connections` are full, oldest first. */
  private waiting: Array<Held> = []
  /** The Clients new requests go to, in the order they were made. */
  private readonly clients: Array<Client> = []
  /** Every Client not yet closed: those of `clients`, and those draining after GOAWAY. */
  private readonly open = new Set<Client>()
  private readonly hooks: Hooks
  private readonly connector: Undici.buildConnector.connector
  private readonly clientOptions: Undici.Client.Options
  /** Why no request is sent any more: the pool was closed or destroyed. */
  private ended: Error | undefined = undefined

  constructor(
    readonly origin: string,
    connect: Undici.buildConnector.BuildOptions,
    readonly connections: number | null,
    readonly streams: Undici.Dispatcher,
    readonly isLongRunning: (path: string) => boolean,
    readonly health: Health = defaultHealth,
    maxHeaderSize?: number
  ) {
    super()
    this.connector = Undici.buildConnector({ ...connect, allowH2: true })
    this.clientOptions = {
      allowH2: true,
      initialWindowSize: streamWindowBytes,
      connectionWindowSize: connectionWindowBytes,
      bodyTimeout: 0,
      headersTimeout: 0,
      ...(maxHeaderSize !== undefined ? { maxHeaderSize } : {})
    }
    this.hooks = {
      dialing: (client) => {
        this.dialing.add(client)
      },
      negotiated: (client, protocol) => {
        this.protocol = protocol
        this.dialed(client)
      },
      failed: (client) => this.dialed(client),
      disconnected: (client) => {
        this.dialed(client)
        // An abandoned HTTP/1.1 request ends its connection, and undici's Client then dials a new one
        // for the abandoned request before it sees the request is gone: an idle connection nobody asked
        // for. A Client holds one HTTP/1.1 request at a time, which the disconnect has already failed,
        // so destroying it here loses nothing; the next request makes a new Client.
        if (this.protocol !== "http/1.1") return
        const index = this.clients.indexOf(client)
        if (index !== -1) this.clients.splice(index, 1)
        this.open.delete(client)
        client.destroy().catch(() => undefined)
      },
      goingAway: (client) => {
        const index = this.clients.indexOf(client)
        if (index !== -1) this.clients.splice(index, 1)
        this.dialed(client)
        // once its streams have ended; a Client closed takes no new request
        client.close().then(() => this.open.delete(client), () => this.open.delete(client))
      }
    }
  }

  /** Whether the cluster's connections speak HTTP/2 (`undefined` before the first has negotiated). */
  get negotiated(): "h2" | "http/1.1" | undefined {
    return this.protocol
  }

  override dispatch(given: Undici.Dispatcher.DispatchOptions, handler: Undici.Dispatcher.DispatchHandler): boolean {
    if (this.protocol === "http/1.1") return this.route(given, handler)
    const options = forH2(given)
    return this.route(options, canReplay(options, handler) ? new Replaying(options, handler, this.resend) : handler)
  }

  /** Sends a request again (`Replaying`), to a connection other than one going away. */
  private readonly resend = (options: Undici.Dispatcher.DispatchOptions, handler: Replaying): void => {
    // a replay after the pool was closed would dial a connection nobody closes
    if (this.ended !== undefined) return handler.onError(this.ended)
    this.route(options, handler)
  }

  /** Sends a request now, or holds it while a connection is dialled or all are full. */
  private route(options: Undici.Dispatcher.DispatchOptions, handler: Undici.Dispatcher.DispatchHandler): boolean {
    if (this.waiting.length > 0 || (this.dialing.size > 0 && this.protocol !== "http/1.1")) {
      this.waiting.push([options, handler])
      return true
    }
    if (!this.send(options, handler)) this.waiting.push([options, handler])
    return true
  }

  /** Sends a request to a connection with room, dialling one if none has it; false when every one allowed is full. */
  private send(options: Undici.Dispatcher.DispatchOptions, handler: Undici.Dispatcher.DispatchHandler): boolean {
    if (this.protocol === "http/1.1" && this.isLongRunning(options.path)) {
      this.streams.dispatch(options, handler)
      return true
    }
    let client: Client | undefined
    for (const each of this.clients) {
      if (!isBusy(each)) {
        client = each
        break
      }
    }
    if (client === undefined) {
      if (this.connections !== null && this.clients.length >= this.connections) return false
      client = makeClient(this.origin, this.clientOptions, this.connector, this.health, this.hooks)
      client.on("drain", () => this.flush())
      this.clients.push(client)
      this.open.add(client)
    }
    client.dispatch(options, handler)
    return true
  }

  /** Sends what waits, as long as connections have room (and, unless on HTTP/1.1, none is being dialled). */
  private flush(): void {
    let sent = 0
    while (sent < this.waiting.length && (this.dialing.size === 0 || this.protocol === "http/1.1")) {
      const [options, handler] = this.waiting[sent]!
      if (!this.send(options, handler)) break
      sent++
    }
    if (sent > 0) this.waiting = this.waiting.slice(sent)
  }

  /** A dial has ended (negotiated or failed): once none is left, what was held is sent. */
  private dialed(client: Client): void {
    if (!this.dialing.delete(client) || this.dialing.size > 0) return
    // after the Client's own resume, which follows its 'connect'
    queueMicrotask(() => this.flush())
  }

  override close(): Promise<void>
  override close(callback: () => void): void
  override close(callback?: () => void): Promise<void> | void {
    this.ended ??= new Error("the cluster's connections were closed")
    const closed = Promise.all([...this.open].map((client) => client.close())).then(() => undefined)
    if (callback === undefined) return closed
    closed.then(callback, callback)
  }

  override destroy(): Promise<void>
  override destroy(error: Error | null): Promise<void>
  override destroy(callback: () => void): void
  override destroy(error: Error | null, callback: () => void): void
  override destroy(first?: Error | null | (() => void), second?: () => void): Promise<void> | void {
    const error = typeof first === "function" || first === undefined || first === null
      ? new Error("the cluster's connections were closed")
      : first
    const callback = typeof first === "function" ? first : second
    this.ended ??= error
    const waiting = this.waiting
    this.waiting = []
    for (const [, handler] of waiting) (handler as { onError?: (error: Error) => void }).onError?.(error)
    const destroyed = Promise.all([...this.open].map((client) => client.destroy(error))).then(() => undefined)
    if (callback === undefined) return destroyed
    destroyed.then(callback, callback)
  }
}

/**
 * HTTP/2 to the cluster, where its server offers it by ALPN (kube-apiserver does): every
 * request and stream (watches, log follows) is a stream on one TLS connection, as with
 * client-go. The connections are `node:http2` sessions of our own, and a request's answer is
 * its `Http2Stream` as it comes (the HttpClient reads the stream itself): undici 7's HTTP/2
 * put a request handler, a body wrapper, a queue and headers turned into arrays of Buffers
 * and back between the two, which cost ~0.35 ms and ~480 µs of CPU per GET more. Undici
 * stays for a cluster that speaks HTTP/1.1 and for proxies. What the pool (`Negotiated`) does:
 *
 * - **Streams per connection.** A connection takes as many streams at once as the server's
 *   `SETTINGS_MAX_CONCURRENT_STREAMS` allows (100 until it says), counted here; a request
 *   goes to the first connection with a free stream or, when all are full, to a new one (as
 *   client-go does), up to `cap` (`maxConnections`), after which requests wait in the order they came.
 * - **One connection from a cold start.** Requests are held while a connection is being
 *   dialled, until it has negotiated (on h2, until the server's SETTINGS have come), so a
 *   burst of a thousand dials one connection, not one a request; the same when a full
 *   connection needs a second, or after GOAWAY. A server that answers ALPN with HTTP/1.1
 *   gets every request from then on through undici, as with `http2: false`: short requests
 *   on at most `cap` connections (the one dialled is the first either pool dials), long-running
 *   ones (`isLongRunning`) on connections of their own.
 * - **GOAWAY drains** (RFC 9113 §6.8, as Go's transport does): the streams the server took
 *   run to their end (a mutation in flight succeeds, a watch goes on until the server ends
 *   it), new requests go to a new connection, and the old one closes after its last stream
 *   (Node's session does that part itself).
 * - **A refused request is sent again** (RFC 9113 §8.7, as Go's transport does): a stream
 *   above a GOAWAY's last stream id, or one reset with REFUSED_STREAM (Node closes both with
 *   that code), was never processed by the server, so it goes again on a connection with
 *   room, a mutation too, at most `maxReplays` times, when its body is in memory. Nothing
 *   else is sent twice: a stream the server took and then lost (a reset connection, a GOAWAY
 *   with an error, a timeout) fails as it did.
 * - **A ping health check**, as client-go's (`ReadIdleTimeout` 30 s, `PingTimeout` 15 s): a
 *   connection is pinged every `pingIntervalMs`, and one whose ping is not answered within
 *   `pingTimeoutMs` (a peer gone behind a NAT, a dead node) is destroyed: its streams fail as
 *   a connection reset (watchers resume on a new connection) and the next request dials again.
 * - **Aborts** reset the stream (RST_STREAM CANCEL), before or after the answer, and fail the
 *   request or the reading of its body as undici's `RequestAbortedError` does.
 * - **The head of an answer** is bounded by `maxHeaderSize`, measured here: past it the stream
 *   fails as undici's `HeadersOverflowError` does. Node itself is given a larger bound
 *   (`nodeHeaderListSize`), so that a stream it resets with ENHANCE_YOUR_CALM is not taken
 *   for one: that code is what an overloaded peer resets a stream with (Go's servers do), and
 *   what Node used for a session past its `maxSessionMemory` (10 MB by default, which 16
 *   uploads of 0.9 MB queued on one connection reached), which is raised here.
 * - **A server that allows no streams** (SETTINGS_MAX_CONCURRENT_STREAMS = 0) fails the
 *   requests waiting for the connection at once, saying so, rather than holding them until
 *   their timeouts.
 *
 * @internal
 */
import * as NodeHttp2 from "node:http2"
import * as NodeStreams from "node:stream"
import type * as Tls from "node:tls"
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
 * `transportDefaultConnFlow` 1 GiB). Smaller ones (undici's were 256 KiB and 512 KiB) let
 * the server send at most that much a round trip: through a link of 1 Gbit/s and 20 ms round
 * trip, a 2 MB page of 500 pods took 289 ms against 165 ms over HTTP/1.1, and four at once
 * 1,108 ms against 489 (the connection's window shared by every stream on it); with these,
 * 155 and 647 ms (`bench/h2-window.ts`). A stream whose reader is slow holds at most its
 * window in memory.
 */
const streamWindowBytes = 4 * 1024 * 1024
const connectionWindowBytes = 1024 * 1024 * 1024

/** The streams a connection is given before the server's SETTINGS say (Go's assumption, RFC 9113's floor). */
const initialStreams = 100

/** How long the connection dialled to learn a cluster speaks HTTP/1.1 waits for undici to take it (its keep-alive). */
const handoffMs = 4_000

/** The most headers an answer may have; their size is what is bounded (`maxHeaderSize`). */
const maxHeaderPairs = 64 * 1024

/** How many times a request the server refused unprocessed is sent again (Go's transport: up to 6, backing off). */
const maxReplays = 3

/** The wait before the second replay (ms), doubled for each one after; the first is sent at once. */
const replayBackoffMs = 100

const { NGHTTP2_CANCEL, NGHTTP2_ENHANCE_YOUR_CALM, NGHTTP2_REFUSED_STREAM } = NodeHttp2.constants

/**
 * Node's bound on what a session holds (MB): 10 by default, past which nghttp2 refuses the
 * answers of other streams with ENHANCE_YOUR_CALM. What a session holds is bounded here
 * already: what it receives by the windows (`connectionWindowBytes`), what it sends by the
 * bodies, which the caller has in memory.
 */
const sessionMemoryMegabytes = 4096

/**
 * The head Node takes before it resets a stream (SETTINGS_MAX_HEADER_LIST_SIZE): well above
 * `maxHeaderSize`, which is measured here, so that a reset with ENHANCE_YOUR_CALM is not taken
 * for a head past it. nghttp2 takes no head in more than 9 frames (~144 KiB) whatever this says.
 */
const nodeHeaderListSize = (maxHeaderSize: number): number =>
  Math.min(Math.max(4 * maxHeaderSize, 1024 * 1024), 2 ** 32 - 1)

/** The streams the server allows on a connection: 0 is 0 (`SETTINGS_MAX_CONCURRENT_STREAMS` = 0 allows none). */
const streamsFor = (settings: NodeHttp2.Settings): number => {
  const announced = settings.maxConcurrentStreams
  return announced !== undefined ? Math.min(announced, 2 ** 31 - 1) : initialStreams
}

/**
 * A failure with the code `transportCause.ts` reads, for the ones Node has no error of its own;
 * `unsent` when the request never reached the server (a mutation is then known not to have happened).
 */
const failure = (message: string, code: string, unsent = false): Error =>
  Object.assign(new Error(message), unsent ? { code, unsent } : { code })

/** The server's SETTINGS allow no stream: what waits for its connection fails with this. */
const noStreams = (): Error =>
  failure(
    "the server allows no HTTP/2 streams (its SETTINGS_MAX_CONCURRENT_STREAMS is 0): the request was not sent",
    "ERR_HTTP2_NO_STREAMS",
    true
  )

/** A stream reset with ENHANCE_YOUR_CALM before its answer: by an overloaded peer, or by Node (a head past its bound). */
const calmDown = (maxHeaderSize: number): Error =>
  failure(
    "the stream was reset with ENHANCE_YOUR_CALM before its answer: the server refused it as overloaded (or sent a " +
      `head of more than ${nodeHeaderListSize(maxHeaderSize)} bytes)`,
    "ERR_HTTP2_ENHANCE_YOUR_CALM"
  )

/** nghttp2's failure of a session for a head in more CONTINUATION frames than it takes (CVE-2024-27316's bound). */
const isContinuationFlood = (error: Error | undefined): boolean =>
  error !== undefined && (error as { readonly code?: unknown }).code === "ERR_HTTP2_ERROR" &&
  /CONTINUATION/.test(error.message)

/**
 * An answer's head past `maxHeaderSize`, with the code of undici's `HeadersOverflowError` (which
 * `isHeadersOverflow` reads). Node resets such a stream with ENHANCE_YOUR_CALM itself.
 */
const headersOverflow = (): Error => failure("the answer's headers are too large", "UND_ERR_HEADERS_OVERFLOW")

/** Pings a session every interval; a ping unanswered within the timeout destroys it, failing its streams. */
const watchHealth = (session: NodeHttp2.ClientHttp2Session, health: Health): void => {
  if (health.pingIntervalMs <= 0) return
  let deadline: ReturnType<typeof setTimeout> | undefined
  const interval = setInterval(() => {
    if (session.closed || session.destroyed || deadline !== undefined) return
    deadline = setTimeout(() => {
      session.destroy(
        failure(`the server did not answer an HTTP/2 ping within ${health.pingTimeoutMs} ms`, "ERR_HTTP2_PING_TIMEOUT")
      )
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

/** One h2 connection and the streams open on it. */
class Connection {
  streams = 0
  /** Streams sent and not yet answered (nor closed). */
  unanswered = 0
  /** How many were unanswered when the first of them was lost with the connection. */
  unansweredAtLoss: number | undefined = undefined
  limit = initialStreams
  /** The server sent GOAWAY: it takes no new stream, those it has run to their end. */
  goingAway = false
  constructor(readonly session: NodeHttp2.ClientHttp2Session) {}

  get hasRoom(): boolean {
    return this.streams < this.limit && !this.goingAway && !this.session.closed && !this.session.destroyed
  }
}

/** Headers HTTP/2 forbids (RFC 9113 §8.2.2); `host` becomes `:authority`. */
const connectionHeaders = new Set(["connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade"])

type Body = Undici.Dispatcher.RequestOptions["body"]

/** A body that can be written again as it was: none, or one in memory (a stream is used up by the first send). */
const inMemory = (body: Body): body is string | Uint8Array | null | undefined =>
  body === null || body === undefined || typeof body === "string" || body instanceof Uint8Array

/** The pseudo-headers and headers of a request on h2 (`session.request` copies them). */
const headersOf = (options: Undici.Dispatcher.RequestOptions, length: number | undefined) => {
  const headers: NodeHttp2.OutgoingHttpHeaders = { ":method": options.method, ":path": options.path }
  const given = options.headers as Readonly<Record<string, string | ReadonlyArray<string> | undefined>> | null
  let hasLength = false
  for (const name in given) {
    const value = given[name]
    if (value === undefined) continue
    // lowercase already (effect's Headers, undici's request options as the HttpClient gives them)
    if (connectionHeaders.has(name)) continue
    if (name === "host") headers[":authority"] = value as string
    else if (name === "te" && value !== "trailers") continue
    else {
      if (name === "content-length") hasLength = true
      headers[name] = value as string | Array<string>
    }
  }
  if (length !== undefined && !hasLength) headers["content-length"] = length
  return headers
}

/**
 * A request on h2: sent on a connection, sent again when the server refused it unprocessed,
 * answered with its stream.
 */
class Exchange {
  private replays = 0
  private stream: NodeHttp2.ClientHttp2Stream | undefined = undefined
  private streamError: Error | undefined = undefined
  private answered = false
  private settled = false
  private aborted = false
  private timer: ReturnType<typeof setTimeout> | undefined = undefined

  constructor(
    readonly options: Undici.Dispatcher.RequestOptions,
    private readonly resolve: (answer: Undici.Answer) => void,
    private readonly reject: (error: Error) => void,
    private readonly pool: Negotiated
  ) {
    const signal = options.signal as { addEventListener(type: "abort", listener: () => void): void } | undefined | null
    signal?.addEventListener("abort", () => this.abort())
  }

  /** Answers the request with what undici got for it (replayed after the cluster turned out to speak HTTP/1.1). */
  relay(answer: Undici.Answer): void {
    if (this.settled) return void answer.body.destroy()
    this.settled = true
    this.answered = true
    this.resolve(answer)
  }

  /** Fails the request now, unless it was answered or has failed already. */
  fail(error: Error): void {
    if (this.settled) return
    this.settled = true
    this.reject(error)
  }

  /** Opens the request's stream on a connection with room. */
  send(connection: Connection): void {
    const { body } = this.options
    // a form is sent encoded as fetch encodes it, with the boundary its content-type names
    const form = body instanceof FormData ? new Response(body) : undefined
    const length = typeof body === "string"
      ? Buffer.byteLength(body)
      : body instanceof Uint8Array
      ? body.byteLength
      : undefined
    let stream: NodeHttp2.ClientHttp2Stream
    try {
      const headers = headersOf(this.options, length)
      if (form !== undefined) headers["content-type"] = form.headers.get("content-type")!
      stream = connection.session.request(headers, { endStream: body == null })
    } catch (error) {
      // the headers cannot be sent (Node's messages may quote a value: only the code is kept)
      const code = (error as { readonly code?: unknown }).code
      return this.fail(failure(`the request cannot be sent on HTTP/2 (${String(code)})`, String(code)))
    }
    connection.streams++
    connection.unanswered++
    this.stream = stream
    this.streamError = undefined
    let answered = false
    stream.on("error", (error) => {
      this.streamError = error
    })
    stream.once("response", (headers) => {
      answered = true
      connection.unanswered--
      this.answer(stream, headers)
    })
    stream.once("close", () => {
      connection.streams--
      this.closed(stream, connection)
      if (!answered) connection.unanswered--
      this.pool.streamEnded()
    })
    if (body === null || body === undefined) return
    if (inMemory(body)) stream.end(body)
    else {
      const readable = form !== undefined
        ? NodeStreams.Readable.fromWeb(form.body! as import("node:stream/web").ReadableStream)
        : body instanceof NodeStreams.Readable
        ? body
        : NodeStreams.Readable.from(body as Iterable<Uint8Array> | AsyncIterable<Uint8Array>)
      NodeStreams.pipeline(readable, stream, noop)
    }
  }

  private answer(stream: NodeHttp2.ClientHttp2Stream, given: NodeHttp2.IncomingHttpHeaders): void {
    this.answered = true
    if (this.settled) return
    const headers: Record<string, string | Array<string>> = {}
    // RFC 9113's size of a header list (§6.5.2), which Node enforces too, but not on a stream opened before
    // the server acknowledged the client's SETTINGS
    let size = 0
    for (const name in given) {
      const value = given[name]!
      // `:status` is a number
      size += name.length + 32 +
        (typeof value === "string" ? value.length : Array.isArray(value) ? value.join().length : 3)
      if (name.charCodeAt(0) !== 58) headers[name] = value
    }
    if (size > this.pool.maxHeaderSize) {
      stream.close(NGHTTP2_CANCEL)
      return this.fail(headersOverflow())
    }
    this.settled = true
    failCutEnds(stream)
    this.resolve({ statusCode: given[":status"] as unknown as number, headers, body: stream })
  }

  /** The stream has closed: before an answer it fails the request, unless the server refused it unprocessed. */
  private closed(stream: NodeHttp2.ClientHttp2Stream, connection: Connection): void {
    if (this.answered || this.settled) return
    if (stream.session?.destroyed === true || isContinuationFlood(this.streamError)) {
      connection.unansweredAtLoss ??= connection.unanswered
    }
    const refused = stream.rstCode === NGHTTP2_REFUSED_STREAM
    if (refused && this.replays < maxReplays && !this.aborted && inMemory(this.options.body)) {
      const delay = this.replays === 0 ? 0 : replayBackoffMs * 2 ** (this.replays - 1)
      this.replays++
      this.stream = undefined
      // not from inside the refused stream's own events
      this.timer = setTimeout(() => {
        this.timer = undefined
        this.pool.resend(this)
      }, delay)
      return
    }
    // a head past nghttp2's frames fails the session: it is this stream's when no other one waited for an answer
    if (isContinuationFlood(this.streamError) && connection.unansweredAtLoss === 1) return this.fail(headersOverflow())
    this.fail(
      stream.rstCode === NGHTTP2_ENHANCE_YOUR_CALM ? calmDown(this.pool.maxHeaderSize) : this.streamError ??
        (stream.session?.destroyed === true || stream.session?.closed === true
          ? failure("the connection closed before the answer came", "ERR_HTTP2_STREAM_CANCEL")
          : failure(`the server closed the stream before answering (code ${stream.rstCode})`, "ERR_HTTP2_STREAM_ERROR"))
    )
  }

  /** Resets the stream (RST_STREAM CANCEL) and fails the request, or the reading of its answer's body. */
  private abort(): void {
    if (this.aborted) return
    this.aborted = true
    const error = new Undici.RequestAbortedError()
    clearTimeout(this.timer)
    this.timer = undefined
    const stream = this.stream
    if (stream === undefined) {
      this.pool.forget(this)
      return this.fail(error)
    }
    if (!stream.closed) stream.close(NGHTTP2_CANCEL)
    if (this.answered) stream.destroy(error)
    else this.fail(error)
  }
}

const noop = (): void => undefined

/**
 * Node ends an answered stream ('end') when its connection closes under it (the server killed, a FIN and no
 * END_STREAM), its rstCode CANCEL and its session gone: read as the end, a followed log cut by a dead apiserver looked
 * like its container had ended, a body cut short like a whole one. Such an end is emitted as an error here, so
 * every reader of the body fails with a transport error; a stream the server ended (END_STREAM) ends as before.
 */
const failCutEnds = (stream: NodeHttp2.ClientHttp2Stream): void => {
  stream.emit = cutEndsFailing(stream, stream.emit)
}

// made by a function that returns it, not assigned as a literal: see test/package/pretenure.test.ts
const cutEndsFailing = (
  stream: NodeHttp2.ClientHttp2Stream,
  emit: NodeHttp2.ClientHttp2Stream["emit"]
): NodeHttp2.ClientHttp2Stream["emit"] =>
  function(this: NodeHttp2.ClientHttp2Stream, event: string | symbol, ...args: Array<unknown>) {
    if (event === "end" && (stream.session === undefined || (stream.rstCode ?? 0) !== 0)) {
      stream.emit = emit
      // the stream is destroyed already (its 'close' comes next): its readers hear an error in place of the end
      return emit.call(this, "error", failure("the connection closed before the answer's end", "ERR_HTTP2_STREAM_CANCEL"))
    }
    return emit.call(this, event, ...args)
  } as NodeHttp2.ClientHttp2Stream["emit"]

/**
 * The cluster's connections, h2 where the server offers it (see the module comment).
 *
 * A request goes to the first connection with a free stream; when every one is full a new
 * one is dialled, up to `cap`, after which requests wait for a stream in the order
 * they came. Requests are held while a connection is being dialled, until it has negotiated,
 * so that a burst never dials a connection a request. On HTTP/1.1 every request goes
 * through undici: short ones to a pool of at most `cap` connections, long-running ones
 * (`isLongRunning`) to one without a cap.
 *
 * @internal
 */
export class Negotiated implements Undici.Requester {
  private protocol: "h2" | "http/1.1" | undefined = undefined
  /** How many connections are being dialled; while any is, requests are held. */
  private dialing = 0
  /** Requests held while dialling, or waiting for a stream once `connections` are full, oldest first. */
  private waiting: Array<Exchange> = []
  /** The connections new requests go to, in the order they were made. */
  private readonly connections: Array<Connection> = []
  /** Every connection not yet closed: those of `connections`, and those draining after GOAWAY. */
  private readonly live = new Set<Connection>()
  /** The pools of short and long-running requests, once the cluster is known to speak HTTP/1.1. */
  private http1: { readonly short: Undici.Dispatcher; readonly streams: Undici.Dispatcher } | undefined = undefined
  /** The HTTP/1.1 connection dialled to negotiate, until undici's pool takes it. */
  private spare: Tls.TLSSocket | undefined = undefined
  private readonly connector: Undici.buildConnector.connector
  private readonly url: URL
  /** Why no request is sent any more: the pool was closed or destroyed. */
  private ended: Error | undefined = undefined

  constructor(
    readonly origin: string,
    private readonly connect: Undici.buildConnector.BuildOptions,
    readonly cap: number | null,
    readonly isLongRunning: (path: string) => boolean,
    readonly health: Health,
    readonly maxHeaderSize: number
  ) {
    this.connector = Undici.buildConnector({ ...connect, allowH2: true })
    this.url = new URL(origin)
  }

  /** Whether the cluster's connections speak HTTP/2 (`undefined` before the first has negotiated). */
  get negotiated(): "h2" | "http/1.1" | undefined {
    return this.protocol
  }

  request(options: Undici.Dispatcher.RequestOptions): Promise<Undici.Answer> {
    if (this.protocol === "http/1.1") return this.overHttp1(options)
    return new Promise((resolve, reject) => {
      if (this.ended !== undefined) return reject(this.ended)
      const signal = options.signal as { readonly aborted?: boolean } | null | undefined
      if (signal?.aborted === true) return reject(new Undici.RequestAbortedError())
      this.route(new Exchange(options, resolve, reject, this))
    })
  }

  private overHttp1(options: Undici.Dispatcher.RequestOptions): Promise<Undici.Answer> {
    return (this.isLongRunning(options.path) ? this.http1!.streams : this.http1!.short).request(options)
  }

  /** Sends a request again (its stream was refused), to a connection other than one going away. */
  resend(exchange: Exchange): void {
    // a replay after the pool was closed would dial a connection nobody closes
    if (this.ended !== undefined) return exchange.fail(this.ended)
    if (this.protocol === "http/1.1") {
      return void this.overHttp1(exchange.options).then(
        (answer) => exchange.relay(answer),
        (error) => exchange.fail(error)
      )
    }
    this.route(exchange)
  }

  /** A request aborted while it waits is taken out of the line. */
  forget(exchange: Exchange): void {
    const index = this.waiting.indexOf(exchange)
    if (index !== -1) this.waiting.splice(index, 1)
  }

  /** A stream has closed, or a connection left: what waits may go. */
  streamEnded(): void {
    if (this.waiting.length > 0) this.flush()
  }

  /** Sends a request now, or holds it while a connection is dialled or all are full. */
  private route(exchange: Exchange): void {
    if (this.waiting.length > 0 || this.dialing > 0 || !this.start(exchange)) this.waiting.push(exchange)
  }

  /** Sends a request on a connection with room, dialling one if none has it; false when it has to wait. */
  private start(exchange: Exchange): boolean {
    for (const connection of this.connections) {
      if (connection.hasRoom) {
        exchange.send(connection)
        return true
      }
    }
    if (this.cap === null || this.connections.length < this.cap) this.dial()
    return false
  }

  /** Sends what waits, as long as connections have room and none is being dialled. */
  private flush(): void {
    if (this.protocol === "http/1.1") {
      const waiting = this.waiting
      this.waiting = []
      for (const exchange of waiting) this.resend(exchange)
      return
    }
    let sent = 0
    while (sent < this.waiting.length && this.dialing === 0) {
      if (!this.start(this.waiting[sent]!)) break
      sent++
    }
    if (sent > 0) this.waiting = this.waiting.slice(sent)
  }

  private dial(): void {
    this.dialing++
    const { hostname, host, port } = this.url
    this.connector({ hostname, host, protocol: "https:", port: port === "" ? "443" : port }, (error, socket) => {
      if (error !== null) return this.dialed(error)
      const tls = socket as Tls.TLSSocket
      if (this.ended !== undefined) {
        tls.destroy()
        return this.dialed(this.ended)
      }
      if (tls.alpnProtocol === "h2") return this.open(tls)
      this.toHttp1(tls)
      this.dialed(undefined)
    })
  }

  /** A dial has ended (negotiated, or failed with `error`): once none is left, what was held is sent or failed. */
  private dialed(error: Error | undefined): void {
    this.dialing--
    if (this.dialing > 0) return
    if (error !== undefined && !this.connections.some((connection) => connection.hasRoom)) {
      // nothing could take them: they fail with the dial, as undici fails the requests queued on a connection
      const waiting = this.waiting
      this.waiting = []
      for (const exchange of waiting) exchange.fail(error)
      return
    }
    this.flush()
  }

  /** An h2 connection: taken into the pool once the server's SETTINGS have come. */
  private open(socket: Tls.TLSSocket): void {
    const session = NodeHttp2.connect(this.origin, {
      createConnection: () => socket,
      settings: {
        enablePush: false,
        initialWindowSize: streamWindowBytes,
        maxHeaderListSize: nodeHeaderListSize(this.maxHeaderSize)
      },
      // undici counts no headers, only their bytes; Node's default is 128
      maxHeaderListPairs: maxHeaderPairs,
      maxSessionMemory: sessionMemoryMegabytes
    })
    const connection = new Connection(session)
    this.live.add(connection)
    let negotiated = false
    // a session's failures reach its streams; one before its SETTINGS fails the dial
    let sessionError: Error | undefined
    session.on("error", (error) => {
      sessionError = error
    })
    session.once("connect", () => session.setLocalWindowSize(connectionWindowBytes))
    session.on("remoteSettings", (settings) => {
      connection.limit = streamsFor(settings)
      if (negotiated) {
        // a limit raised (from 0, say): what waits may go
        if (connection.hasRoom) this.streamEnded()
        return
      }
      negotiated = true
      this.protocol = "h2"
      if (connection.limit === 0) {
        // no stream will ever go on it: what waits fails now, not at its timeout, and the next request dials again
        session.close()
        return this.dialed(noStreams())
      }
      this.connections.push(connection)
      this.dialed(undefined)
    })
    session.on("goaway", () => {
      connection.goingAway = true
      this.leave(connection)
    })
    session.once("close", () => {
      this.leave(connection)
      this.live.delete(connection)
      if (negotiated) return
      negotiated = true
      this.dialed(sessionError ?? failure("the connection closed before HTTP/2 was set up", "ECONNRESET"))
    })
    watchHealth(session, this.health)
  }

  /** A connection takes no new stream: new requests go to another, and what waits may dial one in its place. */
  private leave(connection: Connection): void {
    const index = this.connections.indexOf(connection)
    if (index === -1) return
    this.connections.splice(index, 1)
    this.streamEnded()
  }

  /**
   * The cluster speaks HTTP/1.1: from now on undici carries every request, short ones on at
   * most `cap` connections, long-running ones on as many as they need. The connection
   * dialled to learn it is the first either pool dials.
   */
  private toHttp1(socket: Tls.TLSSocket): void {
    this.protocol = "http/1.1"
    const taken = (): Tls.TLSSocket | undefined => {
      const spare = this.spare
      this.spare = undefined
      if (spare === undefined) return undefined
      clearTimeout(expiry)
      spare.off("error", noop)
      return spare.destroyed ? undefined : spare
    }
    this.spare = socket
    socket.on("error", noop)
    const expiry = setTimeout(() => taken()?.destroy(), handoffMs)
    expiry.unref()
    const connect = withSpare(taken, Undici.buildConnector({ ...this.connect, allowH2: false }))
    this.http1 = {
      short: http1Pool(this.origin, this.cap, connect, this.maxHeaderSize),
      streams: http1Pool(this.origin, null, connect, this.maxHeaderSize)
    }
  }

  close(): Promise<void> {
    this.ended ??= new Error("the cluster's connections were closed")
    this.failWaiting(this.ended)
    this.spare?.destroy()
    return Promise.all([
      ...[...this.live].map((connection) => closeSession(connection.session)),
      ...(this.http1 === undefined ? [] : [this.http1.short.close(), this.http1.streams.close()])
    ]).then(noop)
  }

  destroy(error?: Error): Promise<void> {
    const reason = error ?? new Error("the cluster's connections were closed")
    this.ended ??= reason
    this.failWaiting(reason)
    this.spare?.destroy()
    for (const connection of this.live) connection.session.destroy(reason)
    return Promise.all([
      ...[...this.live].map((connection) => closeSession(connection.session)),
      ...(this.http1 === undefined ? [] : [this.http1.short.destroy(reason), this.http1.streams.destroy(reason)])
    ]).then(noop)
  }

  private failWaiting(error: Error): void {
    const waiting = this.waiting
    this.waiting = []
    for (const exchange of waiting) exchange.fail(error)
  }
}

/** A connector that hands over the connection `spare` gives, when there is one, and else dials. */
const withSpare = (
  spare: () => Tls.TLSSocket | undefined,
  dial: Undici.buildConnector.connector
): Undici.buildConnector.connector =>
(options, callback) => {
  const socket = spare()
  // later, as a dial is: undici's Client drops the resume of a connection that comes within its own
  if (socket !== undefined) return queueMicrotask(() => callback(null, socket))
  dial(options, callback)
}

/**
 * An HTTP/1.1 pool of undici's. An abandoned request (aborted by its timeout or an interrupt)
 * ends its connection, and undici's Client then dials a new one for it before it sees the
 * request is gone: an idle connection nobody asked for. A Client holds one request at a
 * time, which the disconnect has failed already, so it is dropped from the pool there; the
 * next request makes a new one.
 */
const http1Pool = (
  origin: string,
  connections: number | null,
  connect: Undici.buildConnector.connector,
  maxHeaderSize: number
): Undici.Dispatcher => {
  const pool = new Undici.Pool(origin, { connections, bodyTimeout: 0, headersTimeout: 0, maxHeaderSize, connect })
  pool.on("disconnect", (_origin, targets) => {
    const client = targets[1]
    if (client === undefined) return
    Undici.removeFromPool(pool, client)
    client.destroy().catch(noop)
  })
  return pool
}

/** Closes a session once its streams have ended; resolves when it has closed. */
const closeSession = (session: NodeHttp2.ClientHttp2Session): Promise<void> =>
  new Promise((resolve) => {
    if (session.destroyed) return resolve()
    session.once("close", () => resolve())
    if (!session.closed) session.close()
  })

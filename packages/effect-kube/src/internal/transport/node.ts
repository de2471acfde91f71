/**
 * The Node transport: an HttpClient (`undiciHttpClient.ts`) over dispatchers (undici's, or
 * the HTTP/2 pool of `http2.ts`) that carry the kubeconfig's TLS material and keep
 * connections alive. The cluster's TLS (CA,
 * client certificate, server name, `insecure-skip-tls-verify`) applies to the cluster's
 * origin only: this client is the application's HttpClient, and a request to any other
 * origin goes through a dispatcher with the platform's defaults (system roots, no client
 * certificate), so a third party never sees the cluster's certificate. Undici rather than
 * `node:https`: a GET costs about half as much (measured on loopback TLS: p50 0.63 ms
 * against 1.05 ms for the whole operation).
 *
 * A client certificate may come from an exec plugin and change after a 401, and a
 * certificate is bound to a dispatcher's connections, so there is one dispatcher per
 * distinct certificate: each request goes through the dispatcher of its credentials'
 * certificate. The request path obtains the credentials once per request and passes them
 * in `currentCredentials`; only a request sent by someone else makes this layer ask the
 * auth provider. Static credentials make this a map lookup.
 *
 * The cluster's origin is reached through its proxy when it has one (`proxy-url`), else
 * through the one `HTTPS_PROXY` / `NO_PROXY` give it (client-go's rules, see
 * `proxyEnvironment.ts`): a CONNECT tunnel through an http(s) proxy, or SOCKS5. No other
 * origin goes through that proxy.
 *
 * Connections to the cluster come from two pools. Short requests (gets, lists, writes)
 * share at most `maxConnections` HTTP/1.1 connections (default 32); more wait for a free
 * one, as with client-go's `MaxConnsPerHost`, so that a burst of a thousand requests does
 * not open hundreds of TLS connections. Long-running requests, those kube-apiserver itself
 * counts as long-running (watches, logs, exec, attach, port-forward, proxy), hold their
 * connection for as long as they last: they have a pool of their own, without a cap, so
 * that fifty open watches never leave a short request waiting (`isLongRunning`). A proxied
 * cluster has the same two pools, both through the proxy.
 *
 * Over HTTP/2, the default where the cluster offers it by ALPN and is not reached through a
 * proxy, every request is a stream on a `node:http2` session of `Http2.Negotiated`: at most
 * `maxConnections` of them, each with as many streams as the server allows, watches and
 * logs included. A cluster that answers ALPN with HTTP/1.1 gets the two pools above.
 *
 * Undici's own body and header timeouts are off: a quiet watch or log follow must never
 * be cut by the transport, and non-streaming requests are timed by `RequestPolicy`.
 *
 * Requests to the cluster ask for compressed answers (`Accept-Encoding: gzip`, as client-go
 * does; kube-apiserver gzips answers over 128 KiB) unless the cluster says
 * `disable-compression: true` or the request names an encoding itself; the HttpClient
 * decodes gzip answers as a stream (`undiciHttpClient.ts`).
 *
 * The Authorization header is not added here: the request path (`client.ts`) adds it
 * and handles 401 -> invalidate -> retry. This layer is TLS and connection reuse only.
 *
 * @internal
 */
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientError from "effect/http/HttpClientError"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import type * as HttpClientResponse from "effect/http/HttpClientResponse"
import * as Redacted from "effect/Redacted"
import type * as Scope from "effect/Scope"
import * as Tls from "node:tls"
import * as Http2 from "./http2.js"
import * as Undici from "./undici.js"
import * as UndiciHttpClient from "./undiciHttpClient.js"
import type { Credentials, ProxyOptions, Service } from "../../KubeConfig.js"
import { currentCredentials } from "./contract.js"
import { transportReason } from "./transportCause.js"
import { clusterProxy } from "./proxyEnvironment.js"

/** @internal */
export interface Options {
  /** How many distinct client certificates keep an agent at once (older ones are retired). Default 2. */
  readonly maxCertificateAgents?: number | undefined
  /**
   * The most connections to the cluster for short requests, per client certificate
   * (`Infinity`: no cap). Long-running requests are not counted. Default `defaultMaxConnections`.
   */
  readonly maxConnections?: number | undefined
  /** The most bytes of an answer's head (undici's `maxHeaderSize`). Default `defaultMaxHeaderBytes`. */
  readonly maxHeaderBytes?: number | undefined
  /** HTTP/2 where the cluster offers it (`http2.ts`); default true, unless `DISABLE_HTTP2` is set. */
  readonly http2?: boolean | undefined
  /** The HTTP/2 ping health check; default client-go's (`Http2.defaultHealth`). */
  readonly http2Health?: Http2.Health | undefined
}

/**
 * The default bound on an answer's status line and headers: four times Node's own
 * (`--max-http-header-size`, 16 KiB), for proxies that add cookies; a kube-apiserver
 * answer's headers are well under 8 KiB (its warnings are cut at 4 KiB in all).
 *
 * @internal
 */
export const defaultMaxHeaderBytes = 64 * 1024

/**
 * The default cap on connections for short requests. On loopback TLS (2 CPUs), 1,000
 * concurrent GETs cost about the same client CPU over 8, 32 or 64 connections, and about
 * half of what the ~1,000 connections of an uncapped pool cost (the benchmark's `load`
 * rows); 32 leaves room for a server farther away, where more requests are in flight per
 * connection's round trip. client-go keeps 25 idle HTTP/1.1 connections per host.
 *
 * @internal
 */
export const defaultMaxConnections = 32

/** Subresources kube-apiserver serves as long-running, as the last segment of a path. */
const longRunningSubresources = new Set(["log", "exec", "attach", "portforward", "proxy"])

/** `watch=true` or `follow=true` (or `1`, `t`: Go's `ParseBool`), anywhere in a query. */
const streamingQuery = /(?:^|&)(?:watch|follow)=(?:1|t|true)(?:&|#|$)/i

/**
 * Whether a request (its path and query, as the dispatcher gets them) holds its connection
 * for long: a watch (`watch=true`, or a legacy `/watch/` path), a log (followed or not),
 * exec, attach, port-forward, or the proxy subresource (`.../proxy` or `.../proxy/...`),
 * which are the requests kube-apiserver counts as long-running. `prefix` is the length of
 * the server URL's own path (`https://host/k8s/clusters/c-1`), which is not looked at.
 * A false positive costs nothing (the stream pool serves any request); a miss would let a
 * stream hold one of the capped connections.
 *
 * @internal
 */
export const isLongRunning = (path: string, prefix: number = 0): boolean => {
  const query = path.indexOf("?")
  if (query !== -1 && streamingQuery.test(path.slice(query + 1))) return true
  const hash = path.indexOf("#")
  const end = query !== -1 && (hash === -1 || query < hash) ? query : hash !== -1 ? hash : path.length
  const pathname = prefix === 0 && end === path.length ? path : path.slice(prefix, end)
  if (pathname.includes("/watch/") || pathname.includes("/proxy/")) return true
  return longRunningSubresources.has(pathname.slice(pathname.lastIndexOf("/") + 1))
}

/**
 * A dispatcher sending long-running requests (`isLongRunning`) to one dispatcher and every
 * other request to another. It only routes: its two dispatchers are closed by their owner.
 */
class Routed extends Undici.DispatcherBase {
  constructor(
    readonly short: Undici.Dispatcher,
    readonly streams: Undici.Dispatcher,
    readonly prefix: number
  ) {
    super()
  }

  override dispatch(options: Undici.Dispatcher.DispatchOptions, handler: Undici.Dispatcher.DispatchHandler): boolean {
    return (isLongRunning(options.path, this.prefix) ? this.streams : this.short).dispatch(options, handler)
  }
}

/** What holds connections: an undici dispatcher, or the h2 pool. */
interface Pool {
  /** Closes once the requests in flight are done. */
  close(): Promise<void>
  destroy(): Promise<void>
}

interface Slot {
  /** The dispatcher requests go through. */
  readonly dispatcher: Undici.Requester
  /** What holds the connections, closed with the slot. */
  readonly pools: ReadonlyArray<Pool>
  readonly client: HttpClient.HttpClient
  /** Why the certificate cannot be used, when Node refuses it. */
  readonly unusable?: string | undefined
}

/**
 * Node throws while connecting when a client certificate or key is not valid PEM of one
 * key pair, which inside the transport would be a defect: check them once, up front.
 * The message never includes OpenSSL's text, in case it ever quotes key material.
 */
const certificateProblem = (certificate: NonNullable<Credentials["clientCertificate"]>): string | undefined => {
  try {
    Tls.createSecureContext({ cert: certificate.cert, key: Redacted.value(certificate.key) })
    return undefined
  } catch {
    return "the client certificate and key cannot be used: " +
      "they are not a valid PEM certificate and private key of one pair"
  }
}

/** Retires dispatchers without cutting requests in flight: each closes once its requests are done. */
const retire = (dispatchers: ReadonlyArray<Pool>, retired: Set<Pool>): void => {
  for (const dispatcher of dispatchers) {
    retired.add(dispatcher)
    dispatcher.close().then(() => retired.delete(dispatcher), () => undefined)
  }
}

/**
 * Whether a URL is on the cluster's origin. Requests the operations build start with the
 * server URL as given, so a prefix test settles almost all; any other spelling is parsed.
 */
const onOrigin = (origin: string | undefined) => (url: string): boolean => {
  if (origin === undefined) return false
  if (url.startsWith(origin)) {
    const next = url.charCodeAt(origin.length)
    // End of URL, "/", "?" or "#": the authority ended where the origin does.
    if (Number.isNaN(next) || next === 47 || next === 63 || next === 35) return true
  }
  try {
    return new URL(url).origin === origin
  } catch {
    return false
  }
}

/**
 * Undici's per-connection timeouts, off for every request (see the module comment). The
 * SOCKS5 agent builds each origin's pool from its first request's options, so the cap on
 * connections travels with the requests too (`null`: no cap).
 */
const socksOptions =
  (connections: number | null, maxHeaderSize: number): Undici.Dispatcher.DispatcherComposeInterceptor =>
  (dispatch) =>
  (options, handler) =>
    dispatch(
      { ...options, bodyTimeout: 0, headersTimeout: 0, connections, maxHeaderSize } as typeof options,
      handler
    )

/**
 * A dispatcher reaching the cluster through a proxy: a CONNECT tunnel through an http(s)
 * proxy, or a SOCKS5 one, with the cluster's TLS inside it. An https proxy is verified
 * against the platform's roots and, as client-go would, the cluster's CA; it is never
 * shown the client certificate.
 */
const proxyDispatcher = (
  proxy: ProxyOptions,
  connect: object,
  ca: string | undefined,
  connections: number | null,
  maxHeaderSize: number
): Undici.Dispatcher => {
  const credentials = proxy.credentials === undefined ? undefined : Redacted.value(proxy.credentials)
  if (proxy.url.startsWith("socks5:")) {
    const options: Undici.Socks5ProxyAgent.Options & { readonly requestTls: object } = {
      requestTls: { ...connect },
      ...(credentials !== undefined ? { username: credentials.username, password: credentials.password } : {})
    }
    return new Undici.Socks5ProxyAgent(proxy.url, options).compose(socksOptions(connections, maxHeaderSize))
  }
  return new Undici.ProxyAgent({
    uri: proxy.url,
    requestTls: { ...connect },
    ...(ca !== undefined && proxy.url.startsWith("https:") ? { proxyTls: { ca: [...Tls.rootCertificates, ca] } } : {}),
    ...(credentials !== undefined
      ? { token: `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`).toString("base64")}` }
      : {}),
    // Given to the agent inside, which gives it to each origin's pool.
    connections,
    maxHeaderSize,
    bodyTimeout: 0,
    headersTimeout: 0
  })
}

/** @internal */
export const make = (
  config: Service,
  options: Options = {}
): Effect.Effect<HttpClient.HttpClient, never, Scope.Scope> =>
  Effect.gen(function*() {
    const maxCertificateAgents = Math.max(1, options.maxCertificateAgents ?? 2)
    const maxConnections = options.maxConnections ?? defaultMaxConnections
    const maxHeaderSize = options.maxHeaderBytes ?? defaultMaxHeaderBytes
    const clientOptions: UndiciHttpClient.Options = { maxHeaderBytes: maxHeaderSize }
    // undici's `connections`: null is no cap
    const cap = Number.isFinite(maxConnections) ? Math.max(1, Math.floor(maxConnections)) : null
    type Connect = {
      readonly rejectUnauthorized: boolean
      readonly ca?: string
      readonly servername?: string
      readonly cert?: string
      readonly key?: string
    }
    const tlsOptions: Connect = {
      rejectUnauthorized: !config.tls.insecureSkipTlsVerify,
      ...(config.tls.ca !== undefined ? { ca: config.tls.ca } : {}),
      ...(config.tls.serverName !== undefined ? { servername: config.tls.serverName } : {})
    }
    let clusterUrl: URL | undefined
    try {
      clusterUrl = new URL(config.server)
    } catch {
      clusterUrl = undefined
    }
    const isCluster = onOrigin(clusterUrl?.origin)
    const clusterIsHttps = clusterUrl?.protocol === "https:"

    // The cluster's proxy: its own, else the one the environment gives (client-go's rules).
    const proxied = yield* clusterProxy(config)
    const pool = (connect: Connect, connections: number | null): Undici.Dispatcher =>
      proxied.proxy === undefined
        ? new Undici.Agent({ connect: { ...connect }, connections, maxHeaderSize, bodyTimeout: 0, headersTimeout: 0 })
        : proxyDispatcher(proxied.proxy, connect, config.tls.ca, connections, maxHeaderSize)
    // The server URL's own path, which `isLongRunning` does not look at.
    const prefix = clusterUrl === undefined ? 0 : clusterUrl.pathname.replace(/\/+$/, "").length
    // HTTP/2 is offered by ALPN on TLS; through a proxy the cluster is spoken to over HTTP/1.1
    const http2 = options.http2 !== false && clusterIsHttps && proxied.proxy === undefined &&
      (yield* Effect.orElseSucceed(Config.String("DISABLE_HTTP2"), () => "")) === ""
    const pools = (connect: Connect): Pick<Slot, "dispatcher" | "pools"> => {
      if (http2) {
        const longRunning = (path: string) => isLongRunning(path, prefix)
        const negotiated = new Http2.Negotiated(
          clusterUrl!.origin,
          connect,
          cap,
          longRunning,
          options.http2Health ?? Http2.defaultHealth,
          maxHeaderSize
        )
        return { dispatcher: negotiated, pools: [negotiated] }
      }
      const streams = pool(connect, null)
      const short = pool(connect, cap)
      return { dispatcher: new Routed(short, streams, prefix), pools: [short, streams] }
    }
    // Insertion order is recency order: a hit is moved to the end, the first is evicted.
    const slots = new Map<string, Slot>()
    const retired = new Set<Pool>()
    // Every other origin: the platform's defaults (what NodeHttpClient.layerUndici builds),
    // made on first use. None of the cluster's TLS, certificates or proxy reaches them.
    let others: { readonly dispatcher: Undici.Dispatcher; readonly client: HttpClient.HttpClient } | undefined
    const otherClient = (): HttpClient.HttpClient => {
      if (others === undefined) {
        const agent = new Undici.Agent()
        others = { dispatcher: agent, client: UndiciHttpClient.make(agent) }
      }
      return others.client
    }

    yield* Effect.addFinalizer(() =>
      Effect.promise(() =>
        Promise.all(
          [
            ...[...slots.values()].flatMap((slot) => slot.pools),
            ...retired,
            ...(others === undefined ? [] : [others.dispatcher])
          ].map((d) => d.destroy())
        )
      ).pipe(Effect.ensuring(Effect.sync(() => {
        slots.clear()
        retired.clear()
        others = undefined
      })))
    )

    const slotFor = (certificate: Credentials["clientCertificate"]): Slot => {
      const key = certificate === undefined ? "" : certificate.cert
      const existing = slots.get(key)
      if (existing !== undefined) {
        slots.delete(key)
        slots.set(key, existing)
        return existing
      }
      const unusable = certificate === undefined ? undefined : certificateProblem(certificate)
      const connection = pools(
        certificate === undefined || unusable !== undefined
          ? tlsOptions
          : { ...tlsOptions, cert: certificate.cert, key: Redacted.value(certificate.key) }
      )
      const slot: Slot = { ...connection, client: UndiciHttpClient.make(connection.dispatcher, clientOptions), unusable }
      slots.set(key, slot)
      // The no-certificate agent is not counted: it is the one static setups use.
      const withCertificates = [...slots.keys()].filter((k) => k !== "")
      if (withCertificates.length > maxCertificateAgents) {
        const oldest = withCertificates[0]!
        const evicted = slots.get(oldest)!
        slots.delete(oldest)
        retire(evicted.pools, retired)
      }
      return slot
    }

    const plain = slotFor(undefined).client

    const compress = config.disableCompression !== true
    const transportError = (
      request: HttpClientRequest.HttpClientRequest,
      failure: { readonly cause: unknown } | { readonly description: string }
    ) =>
      new HttpClientError.HttpClientError({
        reason: "cause" in failure
          ? transportReason(request, failure.cause)
          : new HttpClientError.TransportError({ request, ...failure })
      })
    const execute = (
      given: HttpClientRequest.HttpClientRequest
    ): Effect.Effect<HttpClientResponse.HttpClientResponse, HttpClientError.HttpClientError> => {
      if (!isCluster(given.url)) return otherClient().execute(given)
      const request = compress && given.headers["accept-encoding"] === undefined
        ? HttpClientRequest.setHeader(given, "accept-encoding", "gzip")
        : given
      if (proxied.problem !== undefined) {
        return Effect.fail(
          transportError(request, { description: `${proxied.problem}, so the cluster cannot be reached through it` })
        )
      }
      if (!clusterIsHttps) return plain.execute(request)
      const withCertificateOf = (credentials: Credentials) => {
        const slot = slotFor(credentials.clientCertificate)
        return slot.unusable === undefined
          ? slot.client.execute(request)
          : Effect.fail(transportError(request, { description: slot.unusable }))
      }
      // The request path has obtained them for this request already; anyone else's request asks.
      return Effect.withFiber((fiber) => {
        const given = fiber.getRef(currentCredentials)
        return given !== undefined ? withCertificateOf(given) : config.auth.credentials.pipe(
          Effect.mapError((cause) => transportError(request, { cause })),
          Effect.flatMap(withCertificateOf)
        )
      })
    }
    return UndiciHttpClient.fromExecute(execute)
  })

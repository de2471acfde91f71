/**
 * The parts of undici the Node transport uses, loaded from undici's own files: `undici`'s
 * entry module loads every part of undici (fetch, WebSocket, EventSource, caches, mocks:
 * about 110 files) where the transport needs the dispatchers and their request API (about
 * 35), so a fresh process starts about 60 ms sooner. undici 7 has no `exports` map, and
 * these are the files its entry module requires; the types are undici's public ones.
 *
 * The entry module also copies the request API (`request`, `stream`, `pipeline`, `upgrade`,
 * `connect`) onto `Dispatcher.prototype`, which `ProxyAgent` relies on (`connect`) and the
 * HttpClient uses (`request`): this module does the same, with the same functions, so it
 * changes nothing when undici's entry module is loaded too.
 *
 * @internal
 */
import type * as Undici from "undici"
// @ts-expect-error undici's internal files have no declarations; they are typed below
import DispatcherImpl from "undici/lib/dispatcher/dispatcher.js"
// @ts-expect-error see above
import api from "undici/lib/api/index.js"
// @ts-expect-error see above
import AgentImpl from "undici/lib/dispatcher/agent.js"
// @ts-expect-error see above
import PoolImpl from "undici/lib/dispatcher/pool.js"
// @ts-expect-error see above
import ClientImpl from "undici/lib/dispatcher/client.js"
// @ts-expect-error see above
import symbols from "undici/lib/core/symbols.js"
// @ts-expect-error see above
import buildConnectorImpl from "undici/lib/core/connect.js"
// @ts-expect-error see above
import ProxyAgentImpl from "undici/lib/dispatcher/proxy-agent.js"
// @ts-expect-error see above
import Socks5ProxyAgentImpl from "undici/lib/dispatcher/socks5-proxy-agent.js"

Object.assign((DispatcherImpl as { prototype: object }).prototype, api as object)

/** @internal */
export type { Dispatcher } from "undici"

/** Undici's base dispatcher class (what `Agent` and the others extend), for dispatchers of our own. @internal */
export const DispatcherBase: typeof Undici.Dispatcher = DispatcherImpl

/** @internal */
export const Agent: typeof Undici.Agent = AgentImpl

/** @internal */
export const Pool: typeof Undici.Pool = PoolImpl

/** @internal */
export const Client: typeof Undici.Client = ClientImpl

/** The TLS connector a Pool builds for its Clients, for a pool of our own (`http2.ts`). @internal */
export const buildConnector: typeof Undici.buildConnector = buildConnectorImpl

/** @internal */
export declare namespace buildConnector {
  /** @internal */
  export type connector = Undici.buildConnector.connector
  /** @internal */
  export type BuildOptions = Undici.buildConnector.BuildOptions
}

/** @internal */
export declare namespace Client {
  /** @internal */
  export type Options = Undici.Client.Options
}

/**
 * Where a Client keeps its HTTP/2 session, its socket, its protocol context (HTTP/1.1 or h2)
 * and whether it takes no more requests now (undici's own symbols, of the version pinned in
 * package.json): `http2.ts` reads them to follow the server's SETTINGS, to ping, to pick a
 * connection with a free stream and to drain one after GOAWAY, which undici's public API
 * does not offer.
 *
 * @internal
 */
export const clientInternals: {
  readonly session: symbol
  readonly socket: symbol
  readonly context: symbol
  readonly busy: symbol
} = {
  session: (symbols as { kHTTP2Session: symbol }).kHTTP2Session,
  socket: (symbols as { kSocket: symbol }).kSocket,
  context: (symbols as { kHTTPContext: symbol }).kHTTPContext,
  busy: (symbols as { kBusy: symbol }).kBusy
}

/** @internal */
export const ProxyAgent: typeof Undici.ProxyAgent = ProxyAgentImpl

/** @internal */
export const Socks5ProxyAgent: typeof Undici.Socks5ProxyAgent = Socks5ProxyAgentImpl

/** @internal */
export declare namespace Socks5ProxyAgent {
  /** @internal */
  export type Options = Undici.Socks5ProxyAgent.Options
}

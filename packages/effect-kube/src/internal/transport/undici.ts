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
import type * as NodeStreams from "node:stream"
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
import errors from "undici/lib/core/errors.js"
// @ts-expect-error see above
import buildConnectorImpl from "undici/lib/core/connect.js"
// @ts-expect-error see above
import poolBase from "undici/lib/dispatcher/pool-base.js"
// @ts-expect-error see above
import ProxyAgentImpl from "undici/lib/dispatcher/proxy-agent.js"
// @ts-expect-error see above
import Socks5ProxyAgentImpl from "undici/lib/dispatcher/socks5-proxy-agent.js"

Object.assign((DispatcherImpl as { prototype: object }).prototype, api as object)

/** @internal */
export type { Dispatcher } from "undici"

/** Undici's base dispatcher class (what `Agent` and the others extend), for dispatchers of our own. @internal */
export const DispatcherBase: typeof Undici.Dispatcher = DispatcherImpl

/** What a dispatcher's `request` answers that the HttpClient reads: undici's `ResponseData`, or ours on h2. @internal */
export interface Answer {
  readonly statusCode: number
  /** Lowercase names, no pseudo-headers; several `set-cookie` as an array. */
  readonly headers: Readonly<Record<string, string | ReadonlyArray<string> | undefined>>
  readonly body: NodeStreams.Readable
}

/** What the HttpClient sends requests through: an undici dispatcher, or the h2 pool (`http2.ts`). @internal */
export interface Requester {
  request(options: Undici.Dispatcher.RequestOptions): Promise<Answer>
}

/** What undici fails an aborted request (or the reading of its body) with. @internal */
export const RequestAbortedError: new(message?: string) => Error = (errors as {
  RequestAbortedError: new(message?: string) => Error
}).RequestAbortedError

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

const poolClients = (poolBase as { kClients: symbol }).kClients

/**
 * Takes a Client out of a Pool's own list (undici's symbol, of the version pinned in
 * package.json): its public API cannot drop a connection that should not be dialled again
 * (`http2.ts`). The Pool makes a new Client when it needs one.
 *
 * @internal
 */
export const removeFromPool = (pool: Undici.Pool, client: Undici.Dispatcher): void => {
  const clients = (pool as unknown as Record<symbol, Array<Undici.Dispatcher>>)[poolClients]!
  const index = clients.indexOf(client)
  if (index !== -1) clients.splice(index, 1)
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

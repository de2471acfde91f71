/**
 * The contract between the request path (`client/`) and the transports (`node.ts`,
 * `undiciHttpClient.ts`, `http2.ts`, `fetch.ts`): what they hand each other beyond
 * Effect's `HttpClient` and `HttpClientResponse`, in one place that both sides import.
 *
 * - Into the transport, through the fiber's context while a request of the Kubernetes client
 *   is executed: its credentials (`currentCredentials`: a client certificate is presented
 *   during the TLS handshake, so the transport reads them here instead of asking the auth
 *   provider a second time) and its deadline (`currentDeadline`, for the clients in
 *   `enforcesDeadline`). A request sent through the HttpClient by anyone else finds nothing.
 * - Out of the transport, on its responses: what a `TransportResponse` may offer (the Node
 *   Readable of its body, a bounded text read, an abort, one header without converting all),
 *   each looked up where it is used, so that any other HttpClient's response still works;
 *   and `LimitReached`, the cause a transport fails with when an answer passes a limit.
 *
 * @internal
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as HttpClientError from "effect/http/HttpClientError"
import type * as HttpClientResponse from "effect/http/HttpClientResponse"
import { formatBytes, type Limit } from "../../Errors.js"
import type { Credentials } from "../../KubeConfig.js"

/**
 * A Reference (a key, not state): two copies of this module share what is set, since
 * the value lives in the fiber's context under this key.
 *
 * @internal
 */
export const currentCredentials: Context.Reference<Credentials | undefined> = Context.Reference<
  Credentials | undefined
>("effect-kube/internal/currentCredentials", { defaultValue: () => undefined })

/**
 * The timeout of a request, when the transport enforces it itself: the request path arms
 * one timer, which sets `expired` and calls `abort`; the transport sets `abort` to cancel
 * the request it has in flight (its answer and its body). Cheaper than racing the request
 * against a sleep, which forks fibers. Set only for clients in `enforcesDeadline`.
 *
 * @internal
 */
export interface Deadline {
  /** Epoch milliseconds at which the request times out. */
  readonly expiresAt: number
  expired: boolean
  abort: (() => void) | undefined
}

/**
 * A response that can abort its request (the Node transport's, for the Kubernetes client's
 * requests): `sendScoped` aborts it when its scope closes, which `HttpClient.withScope`
 * cannot do for a request the transport rebuilt on the way.
 *
 * @internal
 */
export const abortRequest: unique symbol = Symbol.for("effect-kube/internal/abortRequest")

/**
 * A response that reads one header of its answer without converting them all: the Node
 * transport's answer converts its headers to Effect's `Headers` only when `headers` is
 * read, and the request path looks for a `Warning` on every answer. Arrays (a header sent
 * twice) are joined as `Headers` joins them.
 *
 * @internal
 */
export const headerOf: unique symbol = Symbol.for("effect-kube/internal/headerOf")

/**
 * One header of an answer (a lowercase name), through `headerOf` where the response has it.
 *
 * @internal
 */
export const responseHeader = (response: HttpClientResponse.HttpClientResponse, name: string): string | undefined => {
  const read = (response as TransportResponse)[headerOf]
  return typeof read === "function" ? read.call(response, name) : response.headers[name]
}

/** @internal */
export const currentDeadline: Context.Reference<Deadline | undefined> = Context.Reference<Deadline | undefined>(
  "effect-kube/internal/currentDeadline",
  { defaultValue: () => undefined }
)

/**
 * The HttpClients that enforce `currentDeadline` on every request they send (the Node
 * transport's, which fails at once or goes through `undiciHttpClient.ts`). Any other
 * client, a wrapper of this one included, gets a timeout that interrupts it.
 *
 * @internal
 */
export const enforcesDeadline: WeakSet<object> = ((globalThis as Record<symbol, unknown>)[
  Symbol.for("effect-kube/internal/enforcesDeadline")
] ??= new WeakSet<object>()) as WeakSet<object>

// -- what a transport's response may offer the request path ------------------------------------------

/**
 * A response whose body can be read as text within a number of bytes (after gunzip): the
 * Node transport's, and the fetch transport's for the cluster. The request path reads an
 * error answer's body through it with a smaller bound than a 2xx answer's.
 *
 * @internal
 */
export const readTextWithin: unique symbol = Symbol.for("effect-kube/internal/readTextWithin")

/** @internal */
export interface BoundedText {
  readonly [readTextWithin]: (maxBytes: number) => Effect.Effect<string, HttpClientError.HttpClientError>
}

/** @internal */
export const isBoundedText = (u: unknown): u is BoundedText =>
  typeof (u as { readonly [readTextWithin]?: unknown })[readTextWithin] === "function"

/** The Node Readable of a body, as the streamed-body reader drives it (`stream/body.ts`). @internal */
export interface NodeReadable {
  on(event: string, listener: (value?: unknown) => void): unknown
  off(event: string, listener: (value?: unknown) => void): unknown
  pause(): unknown
  resume(): unknown
  destroy(): unknown
  readonly readableEnded?: boolean
  readonly destroyed?: boolean
}

/** @internal */
export const isNodeReadable = (u: unknown): u is NodeReadable => {
  if (typeof u !== "object" || u === null) return false
  const r = u as Record<string, unknown>
  return typeof r["on"] === "function" && typeof r["off"] === "function" && typeof r["pause"] === "function" &&
    typeof r["resume"] === "function" && typeof r["destroy"] === "function"
}

/** The Node Readable behind a response of the Node transport (`undiciHttpClient.ts`), if that is what it is. */
export const nodeBodyOf = (response: HttpClientResponse.HttpClientResponse): NodeReadable | undefined => {
  const source = (response as TransportResponse).source
  const body = typeof source === "object" && source !== null ? source.body : undefined
  return isNodeReadable(body) ? body : undefined
}

/**
 * What a transport's response may offer beyond `HttpClientResponse`, each member looked up
 * where it is used (a response of any other HttpClient has none of them):
 * the Node transport's (`undiciHttpClient.ts`) has them all; the fetch transport's, the
 * bounded text read.
 *
 * @internal
 */
export interface TransportResponse {
  /** The answer as the transport got it: its `body` is the Node Readable that streamed bodies read directly. */
  readonly source?: { readonly body?: unknown } | undefined
  /** Reads the body as text within a number of bytes (after gunzip): see `readTextWithin`. */
  readonly [readTextWithin]?: ((maxBytes: number) => Effect.Effect<string, HttpClientError.HttpClientError>) | undefined
  /** Aborts the request and its body: see `abortRequest`. */
  readonly [abortRequest]?: (() => void) | undefined
  /** One header of the answer, a lowercase name: see `headerOf`. */
  readonly [headerOf]?: ((name: string) => string | undefined) | undefined
}

// -- what a transport fails with when an answer passes a limit ----------------------------------------

/**
 * A limit crossed, found where no request is known (the transport, a decoder): the cause
 * of the transport's `HttpClientError`, turned into a `LimitExceeded` by the request path.
 * Tagged rather than matched by class, so that two copies of this module agree.
 *
 * @internal
 */
export class LimitReached {
  readonly _tag = "LimitReached"
  constructor(
    readonly limit: Limit,
    readonly value: number,
    /** What crossed it, as the error says it: `the answer`, `a watch line`. */
    readonly subject: string
  ) {}

  get message(): string {
    return `${this.subject} is larger than ${this.limit} (${formatBytes(this.value)})`
  }
}

const isLimitReached = (u: unknown): u is LimitReached =>
  typeof u === "object" && u !== null && (u as { readonly _tag?: unknown })._tag === "LimitReached"

/** The limit a transport failure reports, if it reports one. @internal */
export const reachedIn = (error: unknown): LimitReached | undefined => {
  if (!HttpClientError.isHttpClientError(error)) return undefined
  const cause = error.reason.cause
  return isLimitReached(cause) ? cause : undefined
}

/** What undici fails a request with when the answer's headers pass its `maxHeaderSize`. @internal */
export const isHeadersOverflow = (cause: unknown): boolean =>
  typeof cause === "object" && cause !== null && (cause as { readonly code?: unknown }).code === "UND_ERR_HEADERS_OVERFLOW"

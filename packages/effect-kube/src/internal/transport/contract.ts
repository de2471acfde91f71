/**
 * The credentials the request path obtained for the request it is sending, so that a
 * transport which needs them too (a client certificate is presented during the TLS
 * handshake) reads them here instead of asking the auth provider a second time. Set
 * only while a request of the Kubernetes client is executed; a request sent through the
 * HttpClient by anyone else finds nothing here.
 *
 * @internal
 */
import * as Context from "effect/Context"
import type * as HttpClientResponse from "effect/http/HttpClientResponse"
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
  const read = (response as { readonly [headerOf]?: (name: string) => string | undefined })[headerOf]
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

/**
 * The credentials the request path obtained for the request it is sending, so that a
 * transport which needs them too (a client certificate is presented during the TLS
 * handshake) reads them here instead of asking the auth provider a second time. Set
 * only while a request of the Kubernetes client is executed; a request sent through the
 * HttpClient by anyone else finds nothing here.
 *
 * @internal
 */
import * as FiberRef from "effect/FiberRef"
import { globalValue } from "effect/GlobalValue"
import type { Credentials } from "../KubeConfig.js"

/** @internal */
export const currentCredentials: FiberRef.FiberRef<Credentials | undefined> = globalValue(
  Symbol.for("effect-kube/internal/currentCredentials"),
  () => FiberRef.unsafeMake<Credentials | undefined>(undefined)
)

/**
 * A transport over the runtime's own `fetch` (Bun, Deno), for runtimes where undici's
 * dispatchers are not the native client. The cluster's TLS material (CA, client
 * certificate, server name, `insecure-skip-tls-verify`) is given to `fetch` only for
 * requests to the cluster's origin; every other origin gets the runtime's defaults,
 * untouched. The material travels as `fetch` options (`RequestInit`), which each
 * runtime spells its own way: `tlsInit` makes them from the current client certificate.
 *
 * The cluster's answers are read whole within `RequestPolicy`'s `maxResponseBytes`
 * (`body.ts`'s `bounded`), through their stream, since `fetch`'s own `text()` has no bound.
 *
 * A header sent once per value (`Impersonate-Group` with several groups) cannot go
 * through `fetch`, which joins the values with commas, and the API server would read
 * the joined text as one group: such a request fails instead of impersonating the
 * wrong group.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientError from "effect/http/HttpClientError"
import type { Credentials, ProxyOptions, Service } from "../../KubeConfig.js"
import { type Policy, RequestPolicy } from "../../RequestPolicy.js"
import { bounded } from "../stream/body.js"
import { clusterProxy } from "./proxyEnvironment.js"
import { described, transportReason } from "./transportCause.js"

/**
 * `fetch` options for requests to the cluster, for the current client certificate and the
 * proxy the cluster is reached through (its `proxy-url`, else the environment's by client-go's
 * rules). @internal
 */
export type TlsInit = (certificate: Credentials["clientCertificate"], proxy: ProxyOptions | undefined) => RequestInit

/** @internal */
export const make = (
  config: Service,
  tlsInit: TlsInit,
  /** Why this runtime's `fetch` cannot use the proxy, if it cannot: requests to the cluster fail with it. */
  unsupported: (proxy: ProxyOptions) => string | undefined = () => undefined
): Effect.Effect<HttpClient.HttpClient> =>
  Effect.gen(function*() {
    const origin = new URL(config.server).origin
    const base = yield* Effect.provide(HttpClient.HttpClient, FetchHttpClient.layer)
    const found = yield* clusterProxy(config)
    const problem = found.problem !== undefined
      ? `${found.problem}, so the cluster cannot be reached through it`
      : found.proxy === undefined
      ? undefined
      : unsupported(found.proxy)
    return HttpClient.makeWith<never, never, HttpClientError.HttpClientError, never>(
      Effect.flatMap((request) => {
        let target: string
        try {
          target = new URL(request.url).origin
        } catch {
          return base.execute(request)
        }
        if (target !== origin) return Effect.mapError(base.execute(request), described)
        if (problem !== undefined) {
          return Effect.fail(
            new HttpClientError.HttpClientError({
              reason: new HttpClientError.TransportError({
                request,
                description: problem
              })
            })
          )
        }
        for (const name of Object.keys(request.headers)) {
          if (Array.isArray(request.headers[name])) {
            return Effect.fail(
              new HttpClientError.HttpClientError({
                reason: new HttpClientError.TransportError({
                  request,
                  description: `the ${name} header must be sent once per value, which fetch cannot do ` +
                    "(it joins the values with commas); use the Node transport (NodeKube) for this"
                })
              })
            )
          }
        }
        return config.auth.credentials.pipe(
          Effect.mapError((cause) => new HttpClientError.HttpClientError({ reason: transportReason(request, cause) })),
          Effect.flatMap((credentials) =>
            Effect.provideService(
              Effect.mapError(base.execute(request), described),
              FetchHttpClient.RequestInit,
              tlsInit(credentials.clientCertificate, found.proxy)
            )
          ),
          // `fetch` reads a body whole without a bound: the cluster's answers are read within the policy's
          Effect.flatMap((response) =>
            Effect.map(RequestPolicy, (policy: Policy) => bounded(response, policy.maxResponseBytes))
          )
        )
      }),
      Effect.succeed
    )
  })

/**
 * The Node transport: `@effect/platform-node`'s HttpClient over agents that carry the
 * kubeconfig's TLS material and keep connections alive.
 *
 * A client certificate may come from an exec plugin and change after a 401, and Node
 * binds a certificate to an agent, so there is one https agent per distinct
 * certificate: each request asks the auth provider for its current credentials and
 * goes through the agent of that certificate. Static credentials make this a map
 * lookup.
 *
 * The Authorization header is not added here: the request path (`client.ts`) adds it
 * and handles 401 -> invalidate -> retry. This layer is TLS and connection reuse only.
 *
 * Not yet: a per-request timeout option (would go into `Options` and wrap `execute`
 * with `Effect.timeout`, distinguishing watches, which must not time out).
 *
 * @internal
 */
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientError from "@effect/platform/HttpClientError"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import type * as Scope from "effect/Scope"
import * as Http from "node:http"
import * as Https from "node:https"
import * as Tls from "node:tls"
import type { Credentials, Service } from "../KubeConfig.js"

/** @internal */
export interface Options {
  /** How many distinct client certificates keep an agent at once (older ones are retired). Default 2. */
  readonly maxCertificateAgents?: number | undefined
}

interface Slot {
  readonly https: Https.Agent
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

/**
 * Retires an agent without cutting requests in flight: idle sockets are closed now,
 * busy ones when their response is done (Node closes a freed socket of an agent whose
 * `keepAlive` is off).
 */
const retire = (agent: Https.Agent): void => {
  Reflect.set(agent, "keepAlive", false)
  for (const sockets of Object.values(agent.freeSockets)) {
    for (const socket of sockets ?? []) socket.destroy()
  }
}

/** @internal */
export const make = (
  config: Service,
  options: Options = {}
): Effect.Effect<HttpClient.HttpClient, never, Scope.Scope> =>
  Effect.gen(function*() {
    const maxCertificateAgents = Math.max(1, options.maxCertificateAgents ?? 2)
    const tlsOptions: Https.AgentOptions = {
      keepAlive: true,
      rejectUnauthorized: !config.tls.insecureSkipTlsVerify,
      ...(config.tls.ca !== undefined ? { ca: config.tls.ca } : {}),
      ...(config.tls.serverName !== undefined ? { servername: config.tls.serverName } : {})
    }
    const http = new Http.Agent({ keepAlive: true })
    // Insertion order is recency order: a hit is moved to the end, the first is evicted.
    const slots = new Map<string, Slot>()
    const retired = new Set<Https.Agent>()

    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        http.destroy()
        for (const slot of slots.values()) slot.https.destroy()
        for (const agent of retired) agent.destroy()
        slots.clear()
        retired.clear()
      })
    )

    const clientFor = (agent: NodeHttpClient.HttpAgent): HttpClient.HttpClient =>
      Effect.runSync(Effect.provideService(NodeHttpClient.make, NodeHttpClient.HttpAgent, agent))

    const slotFor = (certificate: Credentials["clientCertificate"]): Slot => {
      const key = certificate === undefined ? "" : certificate.cert
      const existing = slots.get(key)
      if (existing !== undefined) {
        slots.delete(key)
        slots.set(key, existing)
        return existing
      }
      const https = new Https.Agent(
        certificate === undefined
          ? tlsOptions
          : { ...tlsOptions, cert: certificate.cert, key: Redacted.value(certificate.key) }
      )
      const slot: Slot = {
        https,
        client: clientFor({ [NodeHttpClient.HttpAgentTypeId]: NodeHttpClient.HttpAgentTypeId, http, https }),
        unusable: certificate === undefined ? undefined : certificateProblem(certificate)
      }
      slots.set(key, slot)
      // The no-certificate agent is not counted: it is the one static setups use.
      const withCertificates = [...slots.keys()].filter((k) => k !== "")
      if (withCertificates.length > maxCertificateAgents) {
        const oldest = withCertificates[0]!
        const evicted = slots.get(oldest)!
        slots.delete(oldest)
        retire(evicted.https)
        retired.add(evicted.https)
        // Retired agents whose last request is done hold nothing: forget them.
        for (const agent of retired) if (Object.keys(agent.sockets).length === 0) retired.delete(agent)
      }
      return slot
    }

    const plain = slotFor(undefined).client

    return HttpClient.makeWith<never, never, HttpClientError.HttpClientError, never>(
      Effect.flatMap((request) => {
        if (!/^https:/i.test(request.url)) return plain.execute(request)
        return config.auth.credentials.pipe(
          Effect.mapError((cause) => new HttpClientError.RequestError({ request, reason: "Transport", cause })),
          Effect.flatMap((credentials) => {
            const slot = slotFor(credentials.clientCertificate)
            return slot.unusable === undefined
              ? slot.client.execute(request)
              : Effect.fail(
                new HttpClientError.RequestError({ request, reason: "Transport", description: slot.unusable })
              )
          })
        )
      }),
      Effect.succeed
    )
  })

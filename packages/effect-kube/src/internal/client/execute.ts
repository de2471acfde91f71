/**
 * The request path shared by every operation: build a request from a pure description,
 * add the server URL, headers and credentials, send it through the user's HttpClient,
 * and turn non-2xx answers into ApiError. A 401 makes the auth provider forget cached
 * credentials and the request is sent once more, because exec plugins and rotated token
 * files can go stale between two refreshes; any other failure is returned as it is.
 *
 * Requests are described by `request/` (pure); this module is the one place that sends
 * them, so the timeout, the retries, the spans and metrics (`telemetry.ts`) and the
 * scrubbing of secrets from errors apply to every operation alike. Each concern is a module
 * beside this one: `authHeaders.ts`, `statusMapping.ts` (non-2xx answers as ApiError),
 * `retry.ts`, `rateLimit.ts`, `deadlines.ts`, `telemetry.ts`, `warnings.ts`; the names other
 * rooms use are re-exported here.
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { constTrue } from "effect/Function"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientError from "effect/http/HttpClientError"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import type * as HttpClientResponse from "effect/http/HttpClientResponse"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import { ApiError, KubeConfigError, RequestTimeout } from "../../Errors.js"
import { KubeConfig, type Credentials, type Service as KubeConfigService } from "../../KubeConfig.js"
import { RequestPolicy } from "../../RequestPolicy.js"
import { malformed } from "../codec/codec.js"
import {
  abortRequest,
  currentCredentials,
  currentDeadline,
  type Deadline,
  reachedIn,
  responseHeader,
  type TransportResponse
} from "../transport/contract.js"
import * as Impersonate from "../kubeconfig/impersonate.js"
import { pathWithQuery, type Spec, toHttpRequest } from "../request/spec.js"
import { authorizationOf } from "./authHeaders.js"
import { withTimeout } from "./deadlines.js"
import { exceeded } from "./limits.js"
import { rateLimited } from "./rateLimit.js"
import type { RequestError } from "./requestError.js"
import { retrying } from "./retry.js"
import { redactText, scrub, type Secrets, secretsOf } from "./scrub.js"
import { errorBody, failFor } from "./statusMapping.js"
import * as telemetry from "./telemetry.js"
import { measured, traceHeaders } from "./telemetry.js"
import { reportWarnings } from "./warnings.js"

export type { Spec } from "../request/spec.js"
export { scrub } from "./scrub.js"
export { authorizationHeader } from "./authHeaders.js"
export type { RequestError } from "./requestError.js"
export { apiErrorFrom, apiErrorFromStatus } from "./statusMapping.js"
export { throttleWait } from "./retry.js"

/**
 * Executes one Kubernetes request with these credentials. It runs in the operation's
 * `kube.<verb>` span, which carries the HTTP attributes (`telemetry.ts`): the request takes
 * the Authorization header and the trace context from it here, and
 * `HttpClient.TracerDisabledWhen` tells the HttpClient (any built with
 * `HttpClient.make`: FakeCluster's, the fetch transport's) to add no `http.client` span of
 * its own. The transport finds the credentials in `currentCredentials` (a client
 * certificate is presented during the TLS handshake) rather than asking the auth
 * provider again; the Node transport sends a request that has them directly. A deadline
 * (`withDeadline`) is put in the same context, for the transport to abort the request by.
 *
 * The request is made here from the spec, with its Authorization header in it: without a
 * span to carry (no tracer, the usual case) its headers are made once. With one, the trace
 * context is asked for with the request as it is before the credentials are added (what
 * `HttpClient.TracerDisabledWhen` is shown), as `HttpClient.make` would ask.
 */
const executeKube = <R>(
  client: HttpClient.HttpClient.With<HttpClientError.HttpClientError, R>,
  config: KubeConfigService,
  spec: Spec,
  credentials: Credentials,
  deadline: Deadline | undefined
): Effect.Effect<HttpClientResponse.HttpClientResponse, RequestError, R> =>
  Effect.withFiber<HttpClientResponse.HttpClientResponse, RequestError, R>((fiber) => {
    const authorization = authorizationOf(credentials, config)
    if (authorization instanceof KubeConfigError) return Effect.fail(authorization)
    let sent: HttpClientRequest.HttpClientRequest
    if (fiber.cache.span === undefined) {
      sent = Impersonate.apply(toHttpRequest(config.server, spec, authorization), config.impersonate)
    } else {
      const impersonated = Impersonate.apply(toHttpRequest(config.server, spec), config.impersonate)
      const trace = traceHeaders(fiber, impersonated)
      sent = authorization === undefined
        ? trace === undefined ? impersonated : HttpClientRequest.setHeaders(impersonated, trace)
        : HttpClientRequest.setHeaders(impersonated, { ...trace, authorization })
    }
    return Effect.updateContext(
      client.execute(sent),
      (context: Context.Context<R>) => {
        const added = Context.add(
          Context.add(context, currentCredentials, credentials),
          HttpClient.TracerDisabledWhen,
          constTrue
        )
        return deadline === undefined ? added : Context.add(added, currentDeadline, deadline)
      }
    )
  })

/**
 * Obtains the credentials once for this request: the Authorization header is added here,
 * and the transport finds them in `currentCredentials` (for a client certificate) rather
 * than asking the auth provider again.
 */
const sendOnce = <A, R>(
  client: HttpClient.HttpClient.With<HttpClientError.HttpClientError, R>,
  config: KubeConfigService,
  spec: Spec,
  deadline: Deadline | undefined,
  then: (response: HttpClientResponse.HttpClientResponse, credentials: Credentials) => Effect.Effect<A, RequestError, R>
): Effect.Effect<A, RequestError, R> =>
  Effect.flatMap(config.auth.credentials, (credentials) =>
    Effect.flatMap(
      executeKube(client, config, spec, credentials, deadline),
      (response) => then(response, credentials)
    ))

/**
 * Sends a request and returns the 2xx response, its body unread. A 401 makes the auth
 * provider refresh and the request goes once more when fresh credentials may differ.
 */
const sendWith = <R>(
  client: HttpClient.HttpClient.With<HttpClientError.HttpClientError, R>,
  config: KubeConfigService,
  spec: Spec,
  deadline: Deadline | undefined,
  used?: (credentials: Credentials) => void
): Effect.Effect<HttpClientResponse.HttpClientResponse, RequestError, R> => {
  // a server's text that quotes the request's secrets back shows `<redacted>` in their place (`scrub.ts`)
  const checked = (response: HttpClientResponse.HttpClientResponse, credentials: Credentials) => {
    used?.(credentials)
    const ok = response.status >= 200 && response.status < 300
    const answer = ok ? Effect.succeed(response) : failFor(spec, response, secretsOf(credentials))
    // the warnings of any answer, 2xx or not, reach the Warnings service (or the log)
    const warning = responseHeader(response, "warning")
    return warning === undefined
      ? answer
      : Effect.andThen(reportWarnings(spec, redactText(warning, secretsOf(credentials)), deadline), answer)
  }
  return sendOnce(client, config, spec, deadline, (response, credentials) =>
    response.status === 401
      ? Effect.flatMap(
        config.auth.invalidate,
        (fresh) =>
          fresh
            // the refused answer's body is read (and dropped) so that its connection is free again
            ? Effect.andThen(
              Effect.ignore(errorBody(response)),
              sendOnce(client, config, spec, deadline, checked)
            )
            : checked(response, credentials)
      )
      : checked(response, credentials))
}

/**
 * Runs one exchange (request and body) under the policy: a timeout on the whole of it,
 * throttle retries for every verb and transient-failure retries for reads only.
 */
const exchange = <A>(
  spec: Spec,
  read: (response: HttpClientResponse.HttpClientResponse) => Effect.Effect<A, RequestError>
): Effect.Effect<A, RequestError, KubeConfig | HttpClient.HttpClient> =>
  // The services are read from the fiber at once rather than yielded one by one: this runs for every request.
  Effect.withFiber((fiber) => {
    const context = fiber.context as Context.Context<KubeConfig | HttpClient.HttpClient>
    const config = Context.get(context, KubeConfig)
    const client = Context.get(context, HttpClient.HttpClient)
    const policy = fiber.getRef(RequestPolicy)
    const attempt = (deadline: Deadline | undefined) =>
      Effect.flatMap(measured(spec, sendWith(client, config, spec, deadline)), read)
    const timed = policy.timeout === undefined ? attempt(undefined) : withTimeout(
      attempt,
      policy.timeout,
      () =>
        new RequestTimeout({
          method: spec.method,
          path: pathWithQuery(spec),
          timeout: Duration.format(policy.timeout!)
        }),
      fiber.getRef(Clock.Clock),
      client,
      config
    )
    const run = Effect.mapError(
      retrying(rateLimited(timed, policy), policy, spec.method === "GET"),
      (error) => shown(spec, error)
    )
    return telemetry.withSpan(fiber, spec, config.server, run)
  })

/**
 * A failure as it leaves an operation: a limit the transport found becomes the
 * `LimitExceeded` naming the request; any other transport failure is scrubbed.
 */
const shown = (spec: Spec, error: RequestError): RequestError => {
  const reached = reachedIn(error)
  return reached !== undefined ? exceeded(spec.method, pathWithQuery(spec), reached) : scrub(error)
}

/**
 * Sends a request whose connection lives as long as the scope: for watches and log
 * follows, so closing the scope closes the connection. No timeout and no retry: the
 * stream's owner decides. The span is the stream's (`telemetry.scopedStreamInSpan`).
 */
export const sendScoped = (
  spec: Spec
): Effect.Effect<
  HttpClientResponse.HttpClientResponse,
  RequestError,
  KubeConfig | HttpClient.HttpClient | Scope.Scope
> =>
  Effect.gen(function*() {
    const config = yield* KubeConfig
    const client = HttpClient.withScope(yield* HttpClient.HttpClient)
    let credentials: Credentials | undefined
    const response = yield* Effect.mapError(
      rateLimited(
        measured(
          spec,
          sendWith(client, config, spec, undefined, (used) => {
            credentials = used
          })
        ),
        yield* RequestPolicy
      ),
      (error) => shown(spec, error)
    )
    if (credentials !== undefined) streamSecrets.set(response, secretsOf(credentials))
    const abort = (response as TransportResponse)[abortRequest]
    if (typeof abort === "function") yield* Effect.addFinalizer(() => Effect.sync(() => abort.call(response)))
    return response
  })

/** The secrets of the credentials a streamed answer (`sendScoped`) was asked with, for what its body says. */
const streamSecrets = new WeakMap<HttpClientResponse.HttpClientResponse, Secrets>()

/** The secrets a streamed answer's server text must not show (a watch's ERROR event): `scrub.ts`. */
export const secretsFor = (response: HttpClientResponse.HttpClientResponse): Secrets =>
  streamSecrets.get(response) ?? []

/** Sends a request and parses its JSON body. */
export const sendJson = (spec: Spec): Effect.Effect<unknown, RequestError, KubeConfig | HttpClient.HttpClient> =>
  exchange(spec, (response) =>
    Effect.flatMap(response.text, (text) => {
      try {
        return Effect.succeed(JSON.parse(text) as unknown)
      } catch {
        return Effect.fail(malformed(spec, `is not JSON (${text.length} bytes)`))
      }
    }))

/** Sends a request and parses its JSON body, with the answer's status code (201 when an apply created the object). */
export const sendJsonWithStatus = (
  spec: Spec
): Effect.Effect<{ readonly status: number; readonly json: unknown }, RequestError, KubeConfig | HttpClient.HttpClient> =>
  exchange(spec, (response) =>
    Effect.flatMap(response.text, (text) =>
      Effect.try({
        try: () => ({ status: response.status, json: JSON.parse(text) as unknown }),
        catch: () => malformed(spec, `is not JSON (${text.length} bytes)`)
      })))

/** Sends a request and returns its status, headers and body as text (a proxied answer). */
export const sendTextWithStatus = (
  spec: Spec
): Effect.Effect<
  { readonly status: number; readonly headers: Readonly<Record<string, string>>; readonly text: string },
  RequestError,
  KubeConfig | HttpClient.HttpClient
> =>
  exchange(spec, (response) =>
    Effect.map(response.text, (text) => ({ status: response.status, headers: { ...response.headers }, text })))

/** Sends a request and returns its body as text (pod logs). */
export const sendText = (spec: Spec): Effect.Effect<string, RequestError, KubeConfig | HttpClient.HttpClient> =>
  exchange(spec, (response) => response.text)

/** Sends a request and returns `None` for a 404. */
export const sendJsonOption = (
  spec: Spec
): Effect.Effect<Option.Option<unknown>, RequestError, KubeConfig | HttpClient.HttpClient> =>
  sendJson(spec).pipe(
    Effect.map(Option.some),
    Effect.catchIf(ApiError.isNotFound, () => Effect.succeed(Option.none()))
  )

/**
 * Sends a request and returns its body: parsed when the answer says it is JSON, else its
 * text (`/readyz` answers `ok`); an empty JSON answer is `undefined`.
 */
export const sendAny = (spec: Spec): Effect.Effect<unknown, RequestError, KubeConfig | HttpClient.HttpClient> =>
  exchange(spec, (response) =>
    Effect.flatMap(response.text, (text) => {
      const type = response.headers["content-type"] ?? ""
      if (!/[/+]json\b/i.test(type)) return Effect.succeed<unknown>(text)
      if (text.trim() === "") return Effect.succeed<unknown>(undefined)
      return Effect.try({
        try: () => JSON.parse(text) as unknown,
        catch: () => malformed(spec, `says it is JSON but is not (${text.length} bytes)`)
      })
    }))

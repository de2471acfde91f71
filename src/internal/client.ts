/**
 * The request path shared by every operation: build a request from a pure description,
 * add the server URL, headers and credentials, send it through the user's HttpClient,
 * and turn non-2xx answers into ApiError. A 401 makes the auth provider forget cached
 * credentials and the request is sent once more, because exec plugins and rotated token
 * files can go stale between two refreshes; any other failure is returned as it is.
 *
 * Requests are described by `request/` (pure); this module is the one place that sends
 * them, so the timeout, the retries, the spans and metrics (`telemetry.ts`) and the
 * scrubbing of secrets from errors apply to every operation alike.
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Base64 from "effect/encoding/Base64"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import { constTrue } from "effect/Function"
import * as Headers from "effect/http/Headers"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientError from "effect/http/HttpClientError"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import type * as HttpClientResponse from "effect/http/HttpClientResponse"
import type * as HttpMethod from "effect/http/HttpMethod"
import * as HttpTraceContext from "effect/http/HttpTraceContext"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import type * as Scope from "effect/Scope"
import * as Tracer from "effect/Tracer"
import {
  ApiError,
  ConnectionFailure,
  KubeConfigError,
  reasonFor,
  RequestTimeout,
  type ServerWarning,
  type Status,
  type ValidationError
} from "../Errors.js"
import { KubeConfig, type Credentials, type Service as KubeConfigService } from "../KubeConfig.js"
import { type Policy, RequestPolicy } from "../RequestPolicy.js"
import { malformed } from "./codec.js"
import { abortRequest, currentCredentials, currentDeadline, type Deadline, enforcesDeadline } from "./credentials.js"
import * as Impersonate from "./kubeconfig/impersonate.js"
import { pathWithQuery, type Spec, toHttpRequest } from "./request/spec.js"
import * as telemetry from "./telemetry.js"
import * as warnings from "./warnings.js"

export type { Spec } from "./request/spec.js"

/** What a failed request can fail with. */
export type RequestError =
  | ApiError
  | HttpClientError.HttpClientError
  | KubeConfigError
  | ValidationError
  | RequestTimeout
  | ServerWarning

/** What Node refuses in a header value (it throws, which would be a defect): line breaks, controls, beyond Latin-1. */
const invalidHeaderCharacter = /[^\t\x20-\x7e\x80-\xff]/

/**
 * The `Authorization` header of a request with these credentials (a bearer token, or basic
 * auth), if any: shared by HTTP requests and exec/attach/port-forward dials. A token that
 * cannot be sent in a header fails without naming it.
 */
export const authorizationHeader = (
  credentials: Credentials,
  config: KubeConfigService
): Effect.Effect<string | undefined, KubeConfigError> => {
  if (credentials.token !== undefined) {
    const token = Redacted.value(credentials.token)
    if (invalidHeaderCharacter.test(token)) {
      return Effect.fail(
        new KubeConfigError({
          source: config.source,
          context: config.context,
          detail: "the bearer token holds a character that cannot be sent in an HTTP header " +
            "(a line break, a control character or one beyond Latin-1)"
        })
      )
    }
    return Effect.succeed(`Bearer ${token}`)
  }
  if (credentials.basic !== undefined) {
    const pair = `${credentials.basic.username}:${Redacted.value(credentials.basic.password)}`
    return Effect.succeed(`Basic ${Base64.encode(pair)}`)
  }
  return Effect.succeed(undefined)
}

const authorize = (
  request: HttpClientRequest.HttpClientRequest,
  credentials: Credentials,
  config: KubeConfigService
): Effect.Effect<HttpClientRequest.HttpClientRequest, KubeConfigError> =>
  credentials.token === undefined && credentials.basic === undefined
    ? Effect.succeed(request)
    : Effect.map(
      authorizationHeader(credentials, config),
      (header) => header === undefined ? request : HttpClientRequest.setHeader(request, "authorization", header)
    )

const bodySummaryLimit = 300

const isStatus = (u: unknown): u is Status =>
  typeof u === "object" && u !== null && (u as { kind?: unknown }).kind === "Status"

/**
 * The seconds a Retry-After asks for: a number of seconds, or an HTTP date counted from
 * `now` (the Clock's time, so that TestClock drives it), else the Status's own
 * `retryAfterSeconds`.
 */
const parseRetryAfter = (header: string | undefined, status: Status | undefined, now: number): number | undefined => {
  if (header !== undefined) {
    const seconds = Number(header)
    if (header.trim() !== "" && Number.isFinite(seconds) && seconds >= 0) return seconds
    const date = Date.parse(header)
    if (!Number.isNaN(date)) return Math.max(0, Math.ceil((date - now) / 1000))
  }
  return status?.details?.retryAfterSeconds
}

/**
 * Builds the ApiError for an answer from its code, headers and body text. `now` is the
 * time in milliseconds that an HTTP-date Retry-After is counted from.
 */
export const apiErrorFrom = (
  spec: Pick<Spec, "method" | "path" | "query">,
  code: number,
  bodyText: string,
  retryAfterHeader?: string | undefined,
  now = 0
): ApiError => {
  let parsed: unknown = undefined
  try {
    parsed = bodyText === "" ? undefined : JSON.parse(bodyText)
  } catch {
    parsed = undefined
  }
  const status = isStatus(parsed) ? parsed : undefined
  const body = status === undefined && bodyText !== "" ? bodyText.slice(0, bodySummaryLimit) : undefined
  const statusMessage = status?.message ?? (body !== undefined && body.trim() !== "" ? body.trim() : httpText(code))
  return new ApiError({
    method: spec.method,
    path: pathWithQuery(spec),
    code,
    reason: reasonFor(code, status),
    statusMessage,
    status,
    body,
    retryAfter: parseRetryAfter(retryAfterHeader, status, now)
  })
}

/** An ApiError from a Status that arrived inside a 2xx answer (a watch's ERROR event). */
export const apiErrorFromStatus = (spec: Pick<Spec, "method" | "path" | "query">, status: Status): ApiError =>
  new ApiError({
    method: spec.method,
    path: pathWithQuery(spec),
    code: status.code ?? 500,
    reason: reasonFor(status.code ?? 500, status),
    statusMessage: status.message ?? httpText(status.code ?? 500),
    status,
    retryAfter: status.details?.retryAfterSeconds
  })

const httpText = (code: number): string => (code >= 500 ? "server error" : code >= 400 ? "request failed" : "unexpected answer")

/**
 * The trace context of the current span (the operation's `kube.<verb>` span), as
 * `HttpClient.make` would send it: none when the tracer is off, propagation is turned off
 * (`HttpClient.TracerPropagationEnabled`, `Tracer.DisablePropagation`), the application's
 * `HttpClient.TracerDisabledWhen` matches the request, or there is no span to carry.
 */
const traceHeaders = (
  fiber: Fiber.Fiber<unknown, unknown>,
  request: HttpClientRequest.HttpClientRequest
): Headers.Headers | undefined => {
  if (
    !fiber.cache.tracerEnabled || !fiber.getRef(HttpClient.TracerPropagationEnabled) ||
    fiber.getRef(Tracer.DisablePropagation) || fiber.getRef(HttpClient.TracerDisabledWhen)(request)
  ) {
    return undefined
  }
  const span = fiber.cache.span
  return span !== undefined && span._tag === "Span" && !Context.get(span.annotations, Tracer.DisablePropagation)
    ? HttpTraceContext.toHeaders(span)
    : undefined
}

/**
 * Executes one Kubernetes request. It runs in the operation's `kube.<verb>` span, which
 * carries the HTTP attributes (`telemetry.ts`): the request takes the trace context from
 * it here and `HttpClient.TracerDisabledWhen` tells the HttpClient (any built with
 * `HttpClient.make`: FakeCluster's, the fetch transport's) to add no `http.client` span of
 * its own. The transport finds the credentials in `currentCredentials` (a client
 * certificate is presented during the TLS handshake) rather than asking the auth
 * provider again; the Node transport sends a request that has them directly.
 */
const executeKube = <R>(
  client: HttpClient.HttpClient.With<HttpClientError.HttpClientError, R>,
  request: HttpClientRequest.HttpClientRequest,
  credentials: Credentials
): Effect.Effect<HttpClientResponse.HttpClientResponse, HttpClientError.HttpClientError, R> =>
  Effect.withFiber((fiber) => {
    const trace = traceHeaders(fiber, request)
    return Effect.updateContext(
      client.execute(trace === undefined ? request : HttpClientRequest.setHeaders(request, trace)),
      (context: Context.Context<R>) =>
        Context.add(Context.add(context, currentCredentials, credentials), HttpClient.TracerDisabledWhen, constTrue)
    )
  })

/**
 * Obtains the credentials once for this request: the Authorization header is added here,
 * and the transport finds them in `currentCredentials` (for a client certificate) rather
 * than asking the auth provider again.
 */
const sendOnce = <R>(
  client: HttpClient.HttpClient.With<HttpClientError.HttpClientError, R>,
  config: KubeConfigService,
  request: HttpClientRequest.HttpClientRequest
): Effect.Effect<HttpClientResponse.HttpClientResponse, RequestError, R> =>
  Effect.flatMap(
    config.auth.credentials,
    (credentials) =>
      Effect.flatMap(
        authorize(Impersonate.apply(request, config.impersonate), credentials, config),
        (authorized) => executeKube(client, authorized, credentials)
      )
  )

/**
 * The ApiError of a non-2xx answer. A body that cannot be read (the connection broke
 * while it came) is said so in the message, rather than taken for an empty one.
 */
const failFor = (spec: Spec, response: HttpClientResponse.HttpClientResponse): Effect.Effect<never, ApiError> =>
  Effect.flatMap(
    Effect.result(response.text),
    (text) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => {
        if (text._tag === "Success") {
          return Effect.fail(apiErrorFrom(spec, response.status, text.success, response.headers["retry-after"], now))
        }
        const error = apiErrorFrom(spec, response.status, "", response.headers["retry-after"], now)
        const why = text.failure.reason.description ?? reasonWord(text.failure.reason)
        return Effect.fail(
          new ApiError({ ...error, statusMessage: `${error.statusMessage} (the body could not be read: ${why})` })
        )
      })
  )

/** A failure's reason in one word (`Transport`, `Decode`, ...), as the error's message names it. */
const reasonWord = (reason: HttpClientError.HttpClientErrorReason): string =>
  reason._tag.endsWith("Error") ? reason._tag.slice(0, -5) : reason._tag

/**
 * Sends a request and returns the 2xx response, its body unread. A 401 makes the auth
 * provider refresh and the request goes once more when fresh credentials may differ.
 */
const sendWith = <R>(
  client: HttpClient.HttpClient.With<HttpClientError.HttpClientError, R>,
  config: KubeConfigService,
  spec: Spec,
  request: HttpClientRequest.HttpClientRequest
): Effect.Effect<HttpClientResponse.HttpClientResponse, RequestError, R> =>
  sendOnce(client, config, request).pipe(
    Effect.flatMap((response) =>
      response.status === 401
        ? Effect.flatMap(
          config.auth.invalidate,
          (fresh) =>
            fresh
              // the refused answer's body is read (and dropped) so that its connection is free again
              ? Effect.andThen(Effect.ignore(response.text), sendOnce(client, config, request))
              : Effect.succeed(response)
        )
        : Effect.succeed(response)
    ),
    Effect.flatMap((response) => {
      const checked = response.status >= 200 && response.status < 300
        ? Effect.succeed(response)
        : failFor(spec, response)
      // the warnings of any answer, 2xx or not, reach the Warnings service (or the log)
      const warning = response.headers["warning"]
      return warning === undefined ? checked : Effect.andThen(reportWarnings(spec, warning), checked)
    })
  )

/** The server said it did not act on the request: any verb may send it again. */
const isThrottled = (error: RequestError): error is ApiError =>
  error._tag === "ApiError" &&
  ((error.code === 429 && !isDisruptionBudget(error)) || (error.code === 503 && error.retryAfter !== undefined))

/**
 * An eviction that a PodDisruptionBudget refused (429 with a `DisruptionBudget` cause):
 * a refusal, not a throttle, so it goes to the caller at once (as `kubectl drain` retries
 * evictions on its own schedule).
 */
const isDisruptionBudget = (error: ApiError): boolean =>
  error.status?.details?.causes?.some((cause) => cause.reason === "DisruptionBudget") === true

/**
 * A read may be sent again after a transport failure, a timeout, a broken answer or a
 * 5xx. A throttle is not one of them: `retryThrottled` already spent `throttleRetries` on
 * it, and retrying it here too would multiply the bound. An invalid URL or a body that
 * cannot be encoded fails the same way every time.
 */
const isTransient = (error: RequestError): boolean => {
  switch (error._tag) {
    case "HttpClientError": {
      const tag = error.reason._tag
      return tag !== "InvalidUrlError" && tag !== "EncodeError"
    }
    case "RequestTimeout":
      return true
    case "ApiError":
      return error.code >= 500 && !isThrottled(error)
    default:
      return false
  }
}

/**
 * Runs one exchange (request and body) under the policy: a timeout on the whole of it,
 * throttle retries for every verb and transient-failure retries for reads only.
 */
const exchange = <A>(
  spec: Spec,
  read: (response: HttpClientResponse.HttpClientResponse) => Effect.Effect<A, RequestError>
): Effect.Effect<A, RequestError, KubeConfig | HttpClient.HttpClient> =>
  Effect.flatMap(KubeConfig, (config) => exchangeWith(config, spec, read))

const exchangeWith = <A>(
  config: KubeConfigService,
  spec: Spec,
  read: (response: HttpClientResponse.HttpClientResponse) => Effect.Effect<A, RequestError>
): Effect.Effect<A, RequestError, HttpClient.HttpClient> =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    const policy = yield* RequestPolicy
    const request = toHttpRequest(config.server, spec)
    const once = Effect.flatMap(measured(spec, sendWith(client, config, spec, request)), read)
    const timed = policy.timeout === undefined ? once : withTimeout(
      once,
      policy.timeout,
      () =>
        new RequestTimeout({
          method: spec.method,
          path: pathWithQuery(spec),
          timeout: Duration.format(policy.timeout!)
        }),
      client,
      config
    )
    const throttled = retryThrottled(timed, policy)
    return yield* (spec.method === "GET" ? retryTransient(throttled, policy) : throttled).pipe(Effect.mapError(scrub))
  }).pipe(telemetry.withSpan(spec, config.server))

/** The Clock every program has unless it provides another (a TestClock, say): the Reference's default. */
const liveClock = Context.get(Context.empty(), Clock.Clock)

/** The longest delay a JS timer takes; the live Clock treats a longer sleep as never ending. */
const maxTimerMillis = 2 ** 31 - 1

/**
 * Auth providers whose credentials never wait on something that may hang (a process, the
 * network): with them, the whole of a request until its transport takes the deadline is
 * in memory or a local file.
 */
const settledAuth: ReadonlySet<string> = new Set(["none", "token", "tokenFile", "basic", "clientCertificate"])

/**
 * Fails with `onTimeout()` when `effect` (one exchange: credentials, request, body) has
 * not completed within `timeout`.
 *
 * `Effect.timeoutOrElse` races the effect against a sleep, with fibers forked per request
 * and joined back (on Effect 3 the largest cost of a GET after the span). Under the live
 * Clock it is not needed:
 * - the Node transport (`enforcesDeadline`) with settled credentials: one timer, which
 *   aborts the request and the reading of its body through `currentDeadline`; no fiber;
 * - any other client: the request is forked (one fiber, not two) and the timer interrupts it.
 * Either way the answer is the request's own when it completed (even at the deadline), and
 * once the timer has fired its failure becomes the timeout, after its finalizers ran (the
 * connection it was waiting on is closed). Any other Clock (a TestClock) gets
 * `Effect.timeoutOrElse`, which follows that Clock.
 */
const withTimeout = <A, E, R>(
  effect: Effect.Effect<A, E, R>,
  timeout: Duration.Duration,
  onTimeout: () => RequestTimeout,
  client: object,
  config: KubeConfigService
): Effect.Effect<A, E | RequestTimeout, R> =>
  Effect.clockWith((clock) => {
    if (clock !== liveClock) {
      return Effect.timeoutOrElse(effect, { duration: timeout, orElse: () => Effect.fail(onTimeout()) })
    }
    const millis = Duration.toMillis(timeout)
    if (!(millis <= maxTimerMillis)) return effect
    return enforcesDeadline.has(client) && settledAuth.has(config.auth.kind)
      ? withDeadline(effect, millis, onTimeout)
      : withTimer(effect, millis, onTimeout)
  })

const withDeadline = <A, E, R>(
  effect: Effect.Effect<A, E, R>,
  millis: number,
  onTimeout: () => RequestTimeout
): Effect.Effect<A, E | RequestTimeout, R> =>
  Effect.suspend(() => {
    const deadline: Deadline = { expiresAt: Date.now() + millis, expired: false, abort: undefined }
    const timer = setTimeout(() => {
      deadline.expired = true
      deadline.abort?.()
    }, millis)
    return Effect.provideService(effect, currentDeadline, deadline).pipe(
      Effect.onExit(() => Effect.sync(() => clearTimeout(timer))),
      Effect.catch((error) => Effect.fail(deadline.expired ? onTimeout() : error))
    )
  })

const withTimer = <A, E, R>(
  effect: Effect.Effect<A, E, R>,
  millis: number,
  onTimeout: () => RequestTimeout
): Effect.Effect<A, E | RequestTimeout, R> =>
  Effect.flatMap(Effect.forkChild(effect), (fiber) =>
    Effect.callback<A, E | RequestTimeout>((resume) => {
      let timedOut = false
      const timer = setTimeout(() => {
        timedOut = true
        fiber.interruptUnsafe(fiber.id)
      }, millis)
      fiber.addObserver((exit) => {
        clearTimeout(timer)
        resume(timedOut && Exit.isFailure(exit) ? Effect.fail(onTimeout()) : exit)
      })
      return Effect.asVoid(Fiber.interrupt(fiber))
    }))

/**
 * Reports an answer's warnings. Under a transport-enforced deadline nothing interrupts the
 * report, so a `Warnings` service that takes too long is cut at the deadline here.
 */
const reportWarnings = (spec: Spec, header: string): Effect.Effect<void, RequestError> =>
  Effect.withFiber((fiber) => {
    const deadline = fiber.getRef(currentDeadline)
    const report = warnings.reportHeader(spec.method, pathWithQuery(spec), header)
    return deadline === undefined ? report : Effect.timeoutOrElse(report, {
      duration: Duration.millis(Math.max(0, deadline.expiresAt - Date.now())),
      orElse: () => {
        deadline.expired = true
        return Effect.fail(new RequestTimeout({ method: spec.method, path: pathWithQuery(spec), timeout: "" }))
      }
    })
  })

/**
 * Sends a read again after a transient failure, on the policy's schedule. The schedule is
 * set up only once a first attempt has failed (`Effect.retry` steps its schedule on every
 * call, which a request that succeeds at once need not pay): the first failure is handed
 * to `Effect.retry` as its first, so the schedule sees the same sequence as before.
 */
const retryTransient = <A, R>(
  effect: Effect.Effect<A, RequestError, R>,
  policy: Policy
): Effect.Effect<A, RequestError, R> =>
  Effect.catchIf(effect, isTransient, (first) => {
    let replayed = false
    const again = Effect.suspend(() => {
      if (replayed) return effect
      replayed = true
      return Effect.fail(first)
    })
    return Effect.retry(again, { schedule: policy.readRetries, while: isTransient })
  })

/** Counts one request sent and how long its answer took, and puts the status code on the span. */
const measured = <R>(
  spec: Spec,
  send: Effect.Effect<HttpClientResponse.HttpClientResponse, RequestError, R>
): Effect.Effect<HttpClientResponse.HttpClientResponse, RequestError, R> =>
  Effect.clockWith((clock) => {
    const start = clock.currentTimeNanosUnsafe()
    return Effect.onExit(send, (exit) => {
      const code = Exit.isSuccess(exit) ? exit.value.status : codeOf(exit)
      return telemetry.record(spec, start, clock.currentTimeNanosUnsafe(), code)
    })
  })

/** The status code of a request that failed with an ApiError alone (a non-2xx answer); none without an answer. */
const codeOf = (exit: Exit.Failure<unknown, RequestError>): number | undefined => {
  const reasons = exit.cause.reasons
  if (reasons.length !== 1) return undefined
  const reason = reasons[0]!
  return reason._tag === "Fail" && reason.error._tag === "ApiError" ? reason.error.code : undefined
}

const retryThrottled = <A, R>(
  effect: Effect.Effect<A, RequestError, R>,
  policy: Policy,
  attempt = 0
): Effect.Effect<A, RequestError, R> =>
  Effect.catchIf(effect, (e) => isThrottled(e) && attempt < policy.throttleRetries, (error) => {
    const asked = (error as ApiError).retryAfter
    const wait = asked === undefined
      ? Duration.millis(500 * 2 ** attempt)
      : Duration.min(Duration.seconds(asked), policy.maxRetryAfter)
    return Effect.andThen(Effect.sleep(wait), retryThrottled(effect, policy, attempt + 1))
  })

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
    const response = yield* Effect.mapError(
      measured(spec, sendWith(client, config, spec, toHttpRequest(config.server, spec))),
      scrub
    )
    const abort = (response as { readonly [abortRequest]?: () => void })[abortRequest]
    if (typeof abort === "function") yield* Effect.addFinalizer(() => Effect.sync(() => abort.call(response)))
    return response
  })

/** Headers an error may show; any other (Authorization, a header given to `Kube.request`) may hold a secret. */
const shownHeader = (name: string): boolean =>
  name === "accept" || name === "user-agent" || name === "content-type" || name.startsWith("impersonate-")

/** A request as errors show it: only the headers known to be harmless, and no body (it may hold Secret data). */
const shownRequest = (request: HttpClientRequest.HttpClientRequest): HttpClientRequest.HttpClientRequest =>
  HttpClientRequest.make(request.method as HttpMethod.HttpMethod)(request.url, {
    urlParams: request.urlParams,
    headers: Headers.removeMany(request.headers, Object.keys(request.headers).filter((name) => !shownHeader(name)))
  })

/** The response as errors show it: its status and the shown request, never its body. */
const shownResponse = (
  response: HttpClientResponse.HttpClientResponse,
  request: HttpClientRequest.HttpClientRequest
): HttpClientResponse.HttpClientResponse =>
  Object.create(response, {
    request: { value: request, enumerable: true },
    toJSON: {
      value: () => ({ _id: "effect/http/HttpClientResponse", request: request.toJSON(), status: response.status })
    }
  })

/**
 * Transport errors carry the request they failed on (`error.request`, `error.reason.request`)
 * with its headers and body: `console.log(error)` or an inspection of the cause would show
 * the bearer token and the body (a Secret's data). Every HttpClientError that leaves an
 * operation goes through here, and comes out with the same reason around a request that
 * holds neither.
 */
export const scrub = <E>(error: E): E => {
  if (!HttpClientError.isHttpClientError(error)) return error
  const { reason } = error
  const request = shownRequest(reason.request)
  const fields = {
    request,
    ...(reason.cause !== undefined ? { cause: reason.cause } : {}),
    ...(reason.description !== undefined ? { description: reason.description } : {})
  }
  return new HttpClientError.HttpClientError({ reason: scrubbedReason(reason, fields) }) as E
}

const scrubbedReason = (
  reason: HttpClientError.HttpClientErrorReason,
  fields: {
    readonly request: HttpClientRequest.HttpClientRequest
    readonly cause?: unknown
    readonly description?: string
  }
): HttpClientError.HttpClientErrorReason => {
  const { request } = fields
  switch (reason._tag) {
    case "TransportError":
      return reason instanceof ConnectionFailure
        ? new ConnectionFailure({ ...fields, description: reason.description, problem: reason.problem, code: reason.code })
        : new HttpClientError.TransportError(fields)
    case "EncodeError":
      return new HttpClientError.EncodeError(fields)
    case "InvalidUrlError":
      return new HttpClientError.InvalidUrlError(fields)
    case "StatusCodeError":
      return new HttpClientError.StatusCodeError({ ...fields, response: shownResponse(reason.response, request) })
    case "DecodeError":
      return new HttpClientError.DecodeError({ ...fields, response: shownResponse(reason.response, request) })
    case "EmptyBodyError":
      return new HttpClientError.EmptyBodyError({ ...fields, response: shownResponse(reason.response, request) })
  }
}

/** Sends a request and parses its JSON body. */
export const sendJson = (spec: Spec): Effect.Effect<unknown, RequestError, KubeConfig | HttpClient.HttpClient> =>
  exchange(spec, (response) =>
    Effect.flatMap(response.text, (text) =>
      Effect.try({
        try: () => JSON.parse(text) as unknown,
        catch: () => malformed(spec, `is not JSON (${text.length} bytes)`)
      })))

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

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
import type * as Headers from "effect/http/Headers"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientError from "effect/http/HttpClientError"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import type * as HttpClientResponse from "effect/http/HttpClientResponse"
import * as HttpTraceContext from "effect/http/HttpTraceContext"
import * as Option from "effect/Option"
import * as Pull from "effect/Pull"
import * as Redacted from "effect/Redacted"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import * as Tracer from "effect/Tracer"
import {
  ApiError,
  formatBytes,
  KubeConfigError,
  type LimitExceeded,
  reasonFor,
  RequestTimeout,
  type ServerWarning,
  type Status,
  type ValidationError
} from "../Errors.js"
import { KubeConfig, type Credentials, type Service as KubeConfigService } from "../KubeConfig.js"
import { type Policy, RequestPolicy } from "../RequestPolicy.js"
import { malformed } from "./codec.js"
import {
  abortRequest,
  currentCredentials,
  currentDeadline,
  type Deadline,
  enforcesDeadline,
  responseHeader
} from "./credentials.js"
import * as Impersonate from "./kubeconfig/impersonate.js"
import { errorBodyBytes, exceeded, isBoundedText, reachedIn, readTextWithin } from "./limits.js"
import { pathWithQuery, type Spec, toHttpRequest } from "./request/spec.js"
import { bodySummary, scrub } from "./scrub.js"
import { redactApiError, redactText, type Secrets, secretsOf } from "./secrets.js"
import { isSeconds, readStatus, statusOf } from "./status.js"
import * as telemetry from "./telemetry.js"
import * as warnings from "./warnings.js"

export type { Spec } from "./request/spec.js"
export { scrub } from "./scrub.js"

/** What a failed request can fail with. */
export type RequestError =
  | ApiError
  | HttpClientError.HttpClientError
  | KubeConfigError
  | ValidationError
  | RequestTimeout
  | ServerWarning
  | LimitExceeded

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
  const header = authorizationOf(credentials, config)
  return header instanceof KubeConfigError ? Effect.fail(header) : Effect.succeed(header)
}

/** `authorizationHeader` without an Effect, for the request path (it runs for every request). */
const authorizationOf = (credentials: Credentials, config: KubeConfigService): string | undefined | KubeConfigError => {
  if (credentials.token !== undefined) {
    const token = Redacted.value(credentials.token)
    if (invalidHeaderCharacter.test(token)) {
      return new KubeConfigError({
        source: config.source,
        context: config.context,
        detail: "the bearer token holds a character that cannot be sent in an HTTP header " +
          "(a line break, a control character or one beyond Latin-1)"
      })
    }
    return `Bearer ${token}`
  }
  if (credentials.basic !== undefined) {
    const pair = `${credentials.basic.username}:${Redacted.value(credentials.basic.password)}`
    return `Basic ${Base64.encode(pair)}`
  }
  return undefined
}

/** How much of an error body that is not a Status is kept on the ApiError, where it does not print. */
const bodyKept = 4096

/**
 * The seconds a Retry-After asks for: a number of seconds, or an HTTP date counted from
 * `now` (the Clock's time, so that TestClock drives it), else the Status's own
 * `retryAfterSeconds`.
 */
const parseRetryAfter = (header: string | undefined, status: Status | undefined, now: number): number | undefined => {
  if (header !== undefined) {
    const seconds = Number(header)
    if (header.trim() !== "" && isSeconds(seconds)) return seconds
    const date = Date.parse(header)
    if (!Number.isNaN(date)) return Math.max(0, Math.ceil((date - now) / 1000))
  }
  return status?.details?.retryAfterSeconds
}

/** The UTF-8 length of a text, in bytes (without encoding it). */
const utf8Length = (text: string): number => {
  let bytes = text.length
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c >= 0x80) bytes += c >= 0x800 && (c < 0xd800 || c > 0xdfff) ? 2 : 1
  }
  return bytes
}

/**
 * Builds the ApiError for an answer from its code, headers and body text. `now` is the
 * time in milliseconds that an HTTP-date Retry-After is counted from. The message keeps a
 * Status's own message; of any other body it says the content type and the length only.
 */
export const apiErrorFrom = (
  spec: Pick<Spec, "method" | "path" | "query">,
  code: number,
  bodyText: string,
  retryAfterHeader?: string | undefined,
  now = 0,
  contentType?: string | undefined,
  flowControl: FlowControl = {}
): ApiError => {
  let parsed: unknown = undefined
  try {
    parsed = bodyText === "" ? undefined : JSON.parse(bodyText)
  } catch {
    parsed = undefined
  }
  const status = readStatus(parsed)
  const body = status === undefined && bodyText !== "" ? bodyText.slice(0, bodyKept) : undefined
  const statusMessage = status?.message ??
    (body !== undefined ? `${httpText(code)} (${bodySummary(utf8Length(bodyText), contentType)})` : httpText(code))
  return new ApiError({
    method: spec.method,
    path: pathWithQuery(spec),
    code,
    reason: reasonFor(code, status),
    statusMessage,
    status,
    body,
    retryAfter: parseRetryAfter(retryAfterHeader, status, now),
    ...flowControl
  })
}

/** What API Priority and Fairness said of a request: the UIDs of its FlowSchema and PriorityLevelConfiguration. */
interface FlowControl {
  readonly flowSchemaUid?: string
  readonly priorityLevelUid?: string
}

/**
 * The APF headers of an answer, as ApiError fields and on the span (`kube.apf.flow_schema_uid`,
 * `kube.apf.priority_level_uid`). Read for error answers only: reading a header of every
 * answer would cost each request its headers' conversion (undici's answer is converted lazily).
 */
const flowControlOf = (headers: Headers.Headers): Effect.Effect<FlowControl> => {
  const flowSchemaUid = headers["x-kubernetes-pf-flowschema-uid"]
  const priorityLevelUid = headers["x-kubernetes-pf-prioritylevel-uid"]
  if (flowSchemaUid === undefined && priorityLevelUid === undefined) return Effect.succeed({})
  const fields: FlowControl = {
    ...(flowSchemaUid !== undefined ? { flowSchemaUid } : {}),
    ...(priorityLevelUid !== undefined ? { priorityLevelUid } : {})
  }
  return Effect.as(
    telemetry.annotate({
      ...(flowSchemaUid !== undefined ? { "kube.apf.flow_schema_uid": flowSchemaUid } : {}),
      ...(priorityLevelUid !== undefined ? { "kube.apf.priority_level_uid": priorityLevelUid } : {})
    }),
    fields
  )
}

/**
 * An ApiError from a Status that arrived inside a 2xx answer (a watch's ERROR event, the
 * status channel of exec), read from whatever value came (see `status.ts`).
 */
export const apiErrorFromStatus = (spec: Pick<Spec, "method" | "path" | "query">, value: unknown): ApiError => {
  const status: Status = statusOf(value)
  const code = status.code ?? 500
  return new ApiError({
    method: spec.method,
    path: pathWithQuery(spec),
    code,
    reason: reasonFor(code, status),
    statusMessage: status.message ?? httpText(code),
    status,
    retryAfter: status.details?.retryAfterSeconds
  })
}

const httpText = (code: number): string => (code >= 500 ? "server error" : code >= 400 ? "request failed" : "unexpected answer")

/**
 * The trace context of the current span (the operation's `kube.<verb>` span), as
 * `HttpClient.make` would send it: none when the tracer is off, propagation is turned off
 * (`HttpClient.TracerPropagationEnabled`, `Tracer.DisablePropagation`), the application's
 * `HttpClient.TracerDisabledWhen` matches the request, or there is no span to carry (asked
 * first: without a tracer and outside a span, the usual case, nothing else is looked up).
 */
const traceHeaders = (
  fiber: Fiber.Fiber<unknown, unknown>,
  request: HttpClientRequest.HttpClientRequest
): Headers.Headers | undefined => {
  if (
    fiber.cache.span === undefined || !fiber.cache.tracerEnabled ||
    !fiber.getRef(HttpClient.TracerPropagationEnabled) ||
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
  Effect.flatMap(
    config.auth.credentials,
    (credentials) =>
      Effect.flatMap(executeKube(client, config, spec, credentials, deadline), (response) => then(response, credentials))
  )

/**
 * The body of an error answer as text, within `errorBodyBytes` (a Status is a few KB)
 * where the transport can bound the read; past it the body is not read and its
 * connection is closed.
 */
const errorBody = (response: HttpClientResponse.HttpClientResponse): Effect.Effect<string, HttpClientError.HttpClientError> =>
  isBoundedText(response)
    ? Effect.flatMap(
      RequestPolicy,
      (policy: Policy) => response[readTextWithin](Math.min(errorBodyBytes, policy.maxResponseBytes))
    )
    : response.text

/**
 * The ApiError of a non-2xx answer. A body that cannot be read (the connection broke
 * while it came, or it was too large to read) is said so in the message, rather than
 * taken for an empty one.
 */
const failFor = (
  spec: Spec,
  response: HttpClientResponse.HttpClientResponse,
  secrets: Secrets
): Effect.Effect<never, ApiError> =>
  Effect.mapError(failWith(spec, response), (error) => redactApiError(error, secrets))

const failWith = (spec: Spec, response: HttpClientResponse.HttpClientResponse): Effect.Effect<never, ApiError> =>
  Effect.flatMap(
    Effect.result(errorBody(response)),
    (text) =>
      Effect.flatMap(Effect.zip(Clock.currentTimeMillis, flowControlOf(response.headers)), ([now, flowControl]) => {
        const retryAfter = response.headers["retry-after"]
        if (text._tag === "Success") {
          return Effect.fail(
            apiErrorFrom(spec, response.status, text.success, retryAfter, now, response.headers["content-type"], flowControl)
          )
        }
        const error = apiErrorFrom(spec, response.status, "", retryAfter, now, undefined, flowControl)
        const reached = reachedIn(text.failure)
        const why = reached !== undefined
          ? `a body of more than ${formatBytes(reached.value)}, not read`
          : `the body could not be read: ${text.failure.reason.description ?? reasonWord(text.failure.reason)}`
        return Effect.fail(new ApiError({ ...error, statusMessage: `${error.statusMessage} (${why})` }))
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
  deadline: Deadline | undefined,
  used?: (credentials: Credentials) => void
): Effect.Effect<HttpClientResponse.HttpClientResponse, RequestError, R> => {
  // a server's text that quotes the request's secrets back shows `<redacted>` in their place (`secrets.ts`)
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
 * 5xx. A throttle is not one of them (it has a count of its own), nor an invalid URL, a
 * body that cannot be encoded or an answer past a limit, which fail the same way every time.
 */
const isTransient = (error: RequestError): boolean => {
  switch (error._tag) {
    case "HttpClientError": {
      const tag = error.reason._tag
      return tag !== "InvalidUrlError" && tag !== "EncodeError" && reachedIn(error) === undefined
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
 * Waits for the client-side rate limit (`RequestPolicy`'s token bucket) before each attempt,
 * retries included, as client-go's `tryThrottle` does. The wait comes before the request's
 * timeout starts: the timeout bounds the exchange with the server, not the queue in front of
 * it. A wait is put on the span (`kube.client_throttle_ms`).
 */
const rateLimited = <A, E, R>(effect: Effect.Effect<A, E, R>, policy: Policy): Effect.Effect<A, E, R> => {
  const limiter = policy.rateLimiter
  return limiter === undefined ? effect : Effect.flatMap(
    limiter.take,
    (waited) => waited > 0 ? Effect.andThen(telemetry.annotate({ "kube.client_throttle_ms": waited }), effect) : effect
  )
}

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
 * not completed within `timeout` by `clock` (the fiber's).
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
  attempt: (deadline: Deadline | undefined) => Effect.Effect<A, E, R>,
  timeout: Duration.Duration,
  onTimeout: () => RequestTimeout,
  clock: Clock.Clock,
  client: object,
  config: KubeConfigService
): Effect.Effect<A, E | RequestTimeout, R> => {
  if (clock !== liveClock) {
    return Effect.timeoutOrElse(attempt(undefined), { duration: timeout, orElse: () => Effect.fail(onTimeout()) })
  }
  const millis = Duration.toMillis(timeout)
  if (!(millis <= maxTimerMillis)) return attempt(undefined)
  return enforcesDeadline.has(client) && settledAuth.has(config.auth.kind)
    ? withDeadline(attempt, millis, onTimeout)
    : withTimer(attempt(undefined), millis, onTimeout)
}

/**
 * One idle timer (unref'd: it keeps no process alive) per deadline length in use, so that
 * Node's list of timers of that length outlives each request's own: arming and clearing a
 * request's timer is then a list append and removal, where a lone timer creates the list,
 * queues it and reschedules libuv's timer, and clearing it drops the list again (per
 * sequential GET, ~10 µs of a profile's CPU). The idle timer re-arms itself while requests
 * used its length since it last fired, and goes away after a quiet spell. Where timers are
 * not Node's (a runtime whose `setTimeout` gives a number), nothing is kept.
 */
const timerLists = new Map<number, { readonly timer: ReturnType<typeof setTimeout>; used: boolean }>()

/** At most this many lengths keep a list: a deadline of another length arms its timer alone. */
const maxKeptTimerLists = 4

const keepTimerList = (millis: number): void => {
  const kept = timerLists.get(millis)
  if (kept !== undefined) {
    kept.used = true
    return
  }
  if (timerLists.size >= maxKeptTimerLists) return
  const timer = setTimeout(() => {
    if (entry.used) {
      entry.used = false
      timer.refresh()
    } else {
      timerLists.delete(millis)
    }
  }, millis)
  if (typeof timer !== "object" || typeof timer.refresh !== "function" || typeof timer.unref !== "function") {
    return clearTimeout(timer)
  }
  timer.unref()
  const entry = { timer, used: false }
  timerLists.set(millis, entry)
}

/** Each attempt gets a deadline of its own, which the request path hands to the transport (`executeKube`). */
const withDeadline = <A, E, R>(
  attempt: (deadline: Deadline) => Effect.Effect<A, E, R>,
  millis: number,
  onTimeout: () => RequestTimeout
): Effect.Effect<A, E | RequestTimeout, R> =>
  Effect.suspend(() => {
    const deadline: Deadline = { expiresAt: Date.now() + millis, expired: false, abort: undefined }
    keepTimerList(millis)
    const timer = setTimeout(() => {
      deadline.expired = true
      deadline.abort?.()
    }, millis)
    return Effect.catch(
      Effect.onExit(attempt(deadline), () => {
        clearTimeout(timer)
        return Effect.void
      }),
      (error) => Effect.fail(deadline.expired ? onTimeout() : error)
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
const reportWarnings = (
  spec: Spec,
  header: string,
  deadline: Deadline | undefined
): Effect.Effect<void, RequestError> =>
  Effect.suspend(() => {
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
 * How long to wait before a throttled request goes again: what the server asked
 * (`Retry-After`, `retryAfterSeconds`), at most the policy's `maxRetryAfter`, else 500 ms
 * doubling with each attempt. Every wait a server's answer asks for goes through here
 * (the watcher's too), so that no answer can make the client sleep for longer.
 */
export const throttleWait = (error: ApiError, attempt: number, policy: Policy): Duration.Duration => {
  const asked = error.retryAfter
  const cap = Duration.toMillis(policy.maxRetryAfter)
  return Duration.millis(Math.min(asked === undefined ? 500 * 2 ** attempt : asked * 1000, cap))
}

/**
 * Sends a request again while the policy allows, as one budget for the operation: a
 * throttle (429, or 503 with Retry-After) for any verb, `throttleRetries` times at most,
 * after `throttleWait`; a transient failure of a read (`isTransient`) on the `readRetries`
 * schedule. The two add up rather than multiply: at most 1 + `throttleRetries` + the
 * schedule's recurrences attempts (7 by default). Nothing of this is built until an
 * attempt has failed (`Effect.retry` steps its schedule on every call, which a request
 * that succeeds at once need not pay).
 */
const retrying = <A, R>(
  effect: Effect.Effect<A, RequestError, R>,
  policy: Policy,
  read: boolean
): Effect.Effect<A, RequestError, R> => {
  const retryable = (error: RequestError) =>
    (isThrottled(error) && policy.throttleRetries > 0) || (read && isTransient(error))
  return Effect.catchIf(effect, retryable, (first) =>
    Effect.gen(function*() {
      let error = first
      let throttles = 0
      let step: ((now: number, input: unknown) => Pull.Pull<[unknown, Duration.Duration], never, unknown>) | undefined
      for (;;) {
        let wait: Duration.Duration
        if (isThrottled(error)) {
          if (throttles >= policy.throttleRetries) return yield* Effect.fail(error)
          wait = throttleWait(error, throttles++, policy)
        } else {
          step ??= yield* Schedule.toStep(policy.readRetries)
          const decision = yield* Pull.catchDone(step(yield* Clock.currentTimeMillis, error), () => Effect.undefined)
          if (decision === undefined) return yield* Effect.fail(error)
          wait = decision[1]
        }
        yield* Effect.sleep(wait)
        const again = yield* Effect.result(effect)
        if (again._tag === "Success") return again.success
        error = again.failure
        if (!retryable(error)) return yield* Effect.fail(error)
      }
    }))
}

/**
 * Counts one request sent and how long its answer took, and puts the status code on the span.
 * The time is the Clock's monotonic one: a duration, which a change of the wall clock must not
 * bend (and one `hrtime` read, where the wall time in nanoseconds costs several BigInts).
 */
const measured = <R>(
  spec: Spec,
  send: Effect.Effect<HttpClientResponse.HttpClientResponse, RequestError, R>
): Effect.Effect<HttpClientResponse.HttpClientResponse, RequestError, R> =>
  Effect.withFiber((fiber) => {
    const clock = fiber.getRef(Clock.Clock)
    const start = clock.monotonicTimeNanosUnsafe()
    return Effect.onExit(send, (exit) => {
      const code = Exit.isSuccess(exit) ? exit.value.status : codeOf(exit)
      telemetry.recordUnsafe(fiber, spec, start, clock.monotonicTimeNanosUnsafe(), code)
      return Effect.void
    })
  })

/** The status code of a request that failed with an ApiError alone (a non-2xx answer); none without an answer. */
const codeOf = (exit: Exit.Failure<unknown, RequestError>): number | undefined => {
  const reasons = exit.cause.reasons
  if (reasons.length !== 1) return undefined
  const reason = reasons[0]!
  return reason._tag === "Fail" && reason.error._tag === "ApiError" ? reason.error.code : undefined
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
    const abort = (response as { readonly [abortRequest]?: () => void })[abortRequest]
    if (typeof abort === "function") yield* Effect.addFinalizer(() => Effect.sync(() => abort.call(response)))
    return response
  })

/** The secrets of the credentials a streamed answer (`sendScoped`) was asked with, for what its body says. */
const streamSecrets = new WeakMap<HttpClientResponse.HttpClientResponse, Secrets>()

/** The secrets a streamed answer's server text must not show (a watch's ERROR event): `secrets.ts`. */
export const secretsFor = (response: HttpClientResponse.HttpClientResponse): Secrets => streamSecrets.get(response) ?? []

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

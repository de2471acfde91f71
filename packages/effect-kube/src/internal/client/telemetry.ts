/**
 * Spans and metrics of the requests to the Kubernetes API. Every operation runs in one
 * span named for what it does (`kube.get`, `kube.list`, `kube.watch`, ...) with the
 * kind, namespace, name and verb, and OpenTelemetry's HTTP attributes
 * (`http.request.method`, `url.full` without the query, `url.path`,
 * `http.response.status_code`) as attributes: it is the only span of a request (the
 * request path sets `HttpClient.TracerDisabledWhen` for it, see `execute.ts`), so it says
 * what Effect's `http.client` span would have, without the headers. Every request
 * sent (each retry included) counts in `kube_client_requests_total` by verb and code
 * and its time to an answer in `kube_client_request_duration_seconds` by verb, as
 * client-go's rest_client metrics do. Nothing here forks a fiber: a request costs one
 * span (without a captured stack trace), two metric updates and two clock reads. The span
 * is made only when a tracer is installed: Effect's native tracer, the default, keeps its
 * spans where nothing reads them.
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Fiber from "effect/Fiber"
import type * as Headers from "effect/http/Headers"
import * as HttpClient from "effect/http/HttpClient"
import type * as HttpClientRequest from "effect/http/HttpClientRequest"
import type * as HttpClientResponse from "effect/http/HttpClientResponse"
import * as HttpTraceContext from "effect/http/HttpTraceContext"
import * as Metric from "effect/Metric"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Tracer from "effect/Tracer"
import type { Spec } from "../request/spec.js"
import type { RequestError } from "./requestError.js"

const requestsName = "kube_client_requests_total"
const requestsOptions = {
  description: "Requests sent to the Kubernetes API, by verb, HTTP method and status code",
  incremental: true
} as const

const durationName = "kube_client_request_duration_seconds"
const durationOptions = {
  description: "Time from sending a request to the Kubernetes API to its answer, by verb",
  boundaries: Metric.exponentialBoundaries({ start: 0.001, factor: 2, count: 16 })
} as const

/**
 * Requests sent, by `verb` (`get`, `list`, ...), `method` (HTTP) and `code` (the status, or `error` without one):
 * read a series with `Metric.withAttributes(requests, { verb, method, code })`.
 */
export const requests: Metric.Counter<number> = Metric.counter(requestsName, requestsOptions)

/** Seconds from sending a request to its answer's status (the body excluded), by `verb`. */
export const duration: Metric.Histogram<number> = Metric.histogram(durationName, durationOptions)

// One metric per attribute set, made once: the same series as `Metric.withAttributes(requests, ...)`
// (a series is named by the metric's name, description and attributes), but an update does not merge
// the attributes and rebuild the series key each time (measured: ~0.5 against ~2.7 µs of CPU per request).
// Looked up by verb, method and code in turn, so that finding one makes no string.
const counters = new Map<string, Map<string, Map<number | undefined, Metric.Counter<number>>>>()
const histograms = new Map<string, Metric.Histogram<number>>()

/** The counter found last: sequential requests of one operation ask for the same one (no lookup at all then). */
const last: { verb: string; method: string; code: number | undefined; metric: Metric.Counter<number> | undefined } = {
  verb: "",
  method: "",
  code: undefined,
  metric: undefined
}

const counterFor = (verb: string, method: string, code: number | undefined): Metric.Counter<number> => {
  if (last.metric !== undefined && last.code === code && last.verb === verb && last.method === method) {
    return last.metric
  }
  const metric = lookUpCounter(verb, method, code)
  last.verb = verb
  last.method = method
  last.code = code
  last.metric = metric
  return metric
}

const lookUpCounter = (verb: string, method: string, code: number | undefined): Metric.Counter<number> => {
  let byMethod = counters.get(verb)
  if (byMethod === undefined) counters.set(verb, byMethod = new Map())
  let byCode = byMethod.get(method)
  if (byCode === undefined) byMethod.set(method, byCode = new Map())
  let metric = byCode.get(code)
  if (metric === undefined) {
    const attributes = { verb, method, code: code === undefined ? "error" : String(code) }
    metric = Metric.counter(requestsName, { ...requestsOptions, attributes })
    byCode.set(code, metric)
  }
  return metric
}

const histogramFor = (verb: string): Metric.Histogram<number> => {
  let metric = histograms.get(verb)
  if (metric === undefined) {
    metric = Metric.histogram(durationName, { ...durationOptions, attributes: { verb } })
    histograms.set(verb, metric)
  }
  return metric
}

/** The span's name for a request: `kube.<verb>`. */
export const spanName = (spec: Spec): string => `kube.${spec.operation.verb}`

/**
 * The span's attributes: what the request acts on, never a body. `url.full` (given the
 * server URL, which a kubeconfig cannot give with credentials or a query) leaves the query
 * out: a request made with `Kube.request` may put anything there.
 */
export const spanAttributes = (spec: Spec, server?: string): Record<string, unknown> => {
  const { operation } = spec
  const attributes: Record<string, unknown> = {
    "kube.verb": operation.verb,
    "http.request.method": spec.method,
    "url.path": spec.path
  }
  if (server !== undefined) attributes["url.full"] = `${server}${spec.path}`
  if (operation.kind !== undefined) attributes["kube.kind"] = operation.kind
  if (operation.namespace !== undefined) attributes["kube.namespace"] = operation.namespace
  if (operation.name !== undefined) attributes["kube.name"] = operation.name
  return attributes
}

// No stack trace: capturing one per request costs more than the rest of the span.
const spanOptions = (spec: Spec, server?: string): Tracer.SpanOptions => ({
  kind: "client",
  attributes: spanAttributes(spec, server),
  captureStackTrace: false
})

/**
 * Whether a tracer is installed (`Effect.withTracer`, an OpenTelemetry layer): without one,
 * the fiber's cache holds none and a span would be Effect's native one, which nothing exports
 * or reads (`Tracer.nativeTracer`'s own advice: skip what only a backend could observe).
 */
const tracing = (fiber: Fiber.Fiber<unknown, unknown>): boolean =>
  fiber.cache.tracer !== undefined && fiber.cache.tracerEnabled

/**
 * Runs an operation (about to run on `fiber`) in its span; `server` (the cluster's URL)
 * makes `url.full`. With no tracer installed it runs without one: the span (its attributes,
 * clock reads, context switch and trace headers) cost a sequential GET over TLS ~120 µs of
 * client CPU in turns (~15 µs from memory), for a span nobody sees.
 */
export const withSpan = <A, E, R>(
  fiber: Fiber.Fiber<unknown, unknown>,
  spec: Spec,
  server: string | undefined,
  effect: Effect.Effect<A, E, R>
): Effect.Effect<A, E, R> =>
  tracing(fiber) ? Effect.withSpan(effect, spanName(spec), spanOptions(spec, server)) : effect

/**
 * A streaming operation (a watch, a followed log) in its span, which lasts as long as the
 * stream: `open` (the request, in a scope that lasts as long as the stream) runs under the
 * span, the pulls do not. `Stream.withSpan` would provide the span to the whole stream,
 * and a provided stream provides it again to every effect each pull runs (a context
 * switch per wait for bytes; on Effect 3 ~60 µs per chunk of a followed log).
 */
export const scopedStreamInSpan = <A, E, R, E2, R2>(
  spec: Spec,
  open: Effect.Effect<Stream.Stream<A, E, R>, E2, R2>
): Stream.Stream<A, E | E2, R | Exclude<R2, Scope.Scope>> =>
  Stream.unwrap(
    Effect.withFiber((fiber): Effect.Effect<Stream.Stream<A, E, R>, E2, R2 | Scope.Scope> =>
      tracing(fiber)
        ? Effect.flatMap(
          Effect.makeSpanScoped(spanName(spec), spanOptions(spec)),
          (span) => Effect.withParentSpan(open, span)
        )
        : open
    )
  )

/**
 * Counts one request and its time to an answer, and puts its status code on the
 * operation's span. `code` is undefined when no answer came (a transport failure). The
 * metrics are updated in one step with the fiber's context (so with the attributes the
 * application set in `Metric.CurrentMetricAttributes`, as `Metric.update` would), not
 * through an Effect per metric: this runs for every request.
 */
export const recordUnsafe = (
  fiber: Fiber.Fiber<unknown, unknown>,
  spec: Spec,
  startNanos: bigint,
  endNanos: bigint,
  code: number | undefined
): void => {
  const { verb } = spec.operation
  const context = fiber.context
  counterFor(verb, spec.method, code).updateUnsafe(1, context)
  histogramFor(verb).updateUnsafe(Number(endNanos - startNanos) / 1e9, context)
  const span = fiber.cache.span
  // without a tracer the span in context is not this request's (it has none) but the caller's
  if (code !== undefined && span !== undefined && span._tag === "Span" && tracing(fiber)) {
    span.attribute("http.response.status_code", code)
  }
}

/** Puts attributes on the current span (the operation's), when there is one that records and a tracer to see it. */
export const annotate = (attributes: Record<string, unknown>): Effect.Effect<void> =>
  Effect.withFiber((fiber) => {
    const span = fiber.cache.span
    if (span !== undefined && span._tag === "Span" && tracing(fiber)) {
      for (const name in attributes) span.attribute(name, attributes[name])
    }
    return Effect.void
  })

/**
 * The trace context of the current span (the operation's `kube.<verb>` span), as
 * `HttpClient.make` would send it: none when the tracer is off, propagation is turned off
 * (`HttpClient.TracerPropagationEnabled`, `Tracer.DisablePropagation`), the application's
 * `HttpClient.TracerDisabledWhen` matches the request, or there is no span to carry (asked
 * first: without a tracer and outside a span, the usual case, nothing else is looked up).
 */
export const traceHeaders = (
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
 * Counts one request sent and how long its answer took, and puts the status code on the span.
 * The time is the Clock's monotonic one: a duration, which a change of the wall clock must not
 * bend (and one `hrtime` read, where the wall time in nanoseconds costs several BigInts).
 */
export const measured = <R>(
  spec: Spec,
  send: Effect.Effect<HttpClientResponse.HttpClientResponse, RequestError, R>
): Effect.Effect<HttpClientResponse.HttpClientResponse, RequestError, R> =>
  Effect.withFiber((fiber) => {
    const clock = fiber.getRef(Clock.Clock)
    const start = clock.monotonicTimeNanosUnsafe()
    return Effect.onExit(send, (exit) => {
      const code = Exit.isSuccess(exit) ? exit.value.status : codeOf(exit)
      recordUnsafe(fiber, spec, start, clock.monotonicTimeNanosUnsafe(), code)
      return Effect.void
    })
  })

/** The status code of a request that failed with an ApiError alone (a non-2xx answer); none without an answer. */
export const codeOf = (exit: Exit.Failure<unknown, RequestError>): number | undefined => {
  const reasons = exit.cause.reasons
  if (reasons.length !== 1) return undefined
  const reason = reasons[0]!
  return reason._tag === "Fail" && reason.error._tag === "ApiError" ? reason.error.code : undefined
}

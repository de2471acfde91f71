/**
 * Spans and metrics of the requests to the Kubernetes API. Every operation runs in one
 * span named for what it does (`kube.get`, `kube.list`, `kube.watch`, ...) with the
 * kind, namespace, name and verb, and OpenTelemetry's HTTP attributes
 * (`http.request.method`, `url.full` without the query, `url.path`,
 * `http.response.status_code`) as attributes: with the Node transport it is the only
 * span of a request (see `undiciHttpClient.ts`), so it says what `@effect/platform`'s
 * `http.client` span would have, without the headers. Every request
 * sent (each retry included) counts in `kube_client_requests_total` by verb and code
 * and its time to an answer in `kube_client_request_duration_seconds` by verb, as
 * client-go's rest_client metrics do. Nothing here forks a fiber: a request costs one
 * span (without a captured stack trace), two metric updates and two clock reads.
 */
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as Metric from "effect/Metric"
import * as MetricBoundaries from "effect/MetricBoundaries"
import type * as MetricHook from "effect/MetricHook"
import * as MetricKey from "effect/MetricKey"
import * as MetricLabel from "effect/MetricLabel"
import type * as Scope from "effect/Scope"
import type * as Stream from "effect/Stream"
import type * as Tracer from "effect/Tracer"
import type { Spec } from "./request/spec.js"
import { unwrapScoped } from "./streams.js"

const requestsKey = MetricKey.counter("kube_client_requests_total", {
  description: "Requests sent to the Kubernetes API, by verb, HTTP method and status code",
  incremental: true
})

const durationKey = MetricKey.histogram(
  "kube_client_request_duration_seconds",
  MetricBoundaries.exponential({ start: 0.001, factor: 2, count: 16 }),
  "Time from sending a request to the Kubernetes API to its answer, by verb"
)

/** Requests sent, by `verb` (`get`, `list`, ...), `method` (HTTP) and `code` (the status, or `error` without one). */
export const requests = Metric.fromMetricKey(requestsKey)

/** Seconds from sending a request to its answer's status (the body excluded), by `verb`. */
export const duration = Metric.fromMetricKey(durationKey)

// The registry's hooks are looked up once per tag set, not once per request (a lookup
// builds and hashes a tagged key).
const counterHooks = new Map<string, MetricHook.MetricHook.Counter<number>>()
const histogramHooks = new Map<string, MetricHook.MetricHook.Histogram>()

const labelsOf = (verb: string, method: string, code: string) => [
  MetricLabel.make("verb", verb),
  MetricLabel.make("method", method),
  MetricLabel.make("code", code)
]

const counterHook = (verb: string, method: string, code: string) => {
  const key = `${verb} ${method} ${code}`
  let hook = counterHooks.get(key)
  if (hook === undefined) {
    hook = Metric.globalMetricRegistry.getCounter(MetricKey.taggedWithLabels(requestsKey, labelsOf(verb, method, code)))
    counterHooks.set(key, hook)
  }
  return hook
}

const histogramHook = (verb: string) => {
  let hook = histogramHooks.get(verb)
  if (hook === undefined) {
    hook = Metric.globalMetricRegistry.getHistogram(MetricKey.taggedWithLabels(durationKey, [MetricLabel.make("verb", verb)]))
    histogramHooks.set(verb, hook)
  }
  return hook
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

/** Runs an operation in its span; `server` (the cluster's URL) makes `url.full`. */
export const withSpan =
  (spec: Spec, server?: string) => <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.withSpan(effect, spanName(spec), spanOptions(spec, server))

/**
 * A streaming operation (a watch, a followed log) in its span, which lasts as long as the
 * stream: `open` (the request, in a scope that lasts as long as the stream) runs under the
 * span, the pulls do not. `Stream.withSpan` would provide the span to the whole stream,
 * and a provided stream provides it again to every effect each pull runs (an
 * `Effect.provide`, with its FiberRef writes, per wait for bytes: ~60 µs per chunk of a
 * followed log).
 */
export const scopedStreamInSpan = <A, E, R, E2, R2>(
  spec: Spec,
  open: Effect.Effect<Stream.Stream<A, E, R>, E2, R2>
): Stream.Stream<A, E | E2, R | Exclude<R2, Scope.Scope>> =>
  unwrapScoped(
    Effect.flatMap(
      Effect.makeSpanScoped(spanName(spec), spanOptions(spec)),
      (span) => Effect.withParentSpan(open, span)
    )
  )

/**
 * Counts one request and its time to an answer, and puts its status code on the
 * operation's span. `code` is undefined when no answer came (a transport failure). The
 * metrics are updated in one step (with the fiber's metric labels, as `Metric.update`
 * would), not through an Effect per metric: this runs for every request.
 */
export const record = (spec: Spec, startNanos: bigint, endNanos: bigint, code: number | undefined): Effect.Effect<void> =>
  Effect.withFiberRuntime((fiber) => {
    const labels = fiber.getFiberRef(FiberRef.currentMetricLabels)
    const { verb } = spec.operation
    const codeText = code === undefined ? "error" : String(code)
    const seconds = Number(endNanos - startNanos) / 1e9
    if (labels.length === 0) {
      counterHook(verb, spec.method, codeText).update(1)
      histogramHook(verb).update(seconds)
    } else {
      // labels added with Effect.tagMetrics: the general (slower) path
      requests.unsafeUpdate(1, [...labels, ...labelsOf(verb, spec.method, codeText)])
      duration.unsafeUpdate(seconds, [...labels, MetricLabel.make("verb", verb)])
    }
    const span = fiber.currentSpan
    if (code !== undefined && span !== undefined && span._tag === "Span") {
      span.attribute("http.response.status_code", code)
    }
    return Effect.void
  })

/**
 * Exports the spans and metrics of effect-kube through OpenTelemetry (@effect/opentelemetry's
 * NodeSdk), against the embedded fake cluster. Every operation is one span named for what
 * it does (`kube.create`, `kube.get`, `kube.list`, `kube.watch`, ...) with the kind,
 * namespace, name, verb and status code as attributes; every request counts in
 * `kube_client_requests_total` (by verb, method and code) and
 * `kube_client_request_duration_seconds` (by verb).
 *
 *   npm run example:observability
 *
 * Swap the exporters for OTLP ones (`@opentelemetry/exporter-trace-otlp-http`) to send
 * them to a collector instead of the console.
 */
import * as NodeSdk from "@effect/opentelemetry/NodeSdk"
import { InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"
import { Console, Effect, Metric, Stream } from "effect"
import { Condition, Kube, Pods } from "effect-kube"
import { FakeCluster } from "@effect-kube/testing"

const spans = new InMemorySpanExporter()

const Observability = NodeSdk.layer(() => ({
  resource: { serviceName: "effect-kube-example" },
  spanProcessor: new SimpleSpanProcessor(spans)
  // metricReader: a PeriodicExportingMetricReader exports Effect's metrics, kube_client_* among them
}))

const pods = Kube.api(Pods)

const program = Effect.gen(function*() {
  const fake = yield* FakeCluster.FakeCluster
  yield* pods.create({ metadata: { name: "traced" }, spec: { containers: [{ name: "main", image: "busybox" }] } })
  yield* pods.get("traced")
  yield* pods.get("missing") // a 404: Option.none, and a span with http.status_code 404
  yield* pods.list({ labelSelector: "app=web" })
  fake.setPodPhase("default", "traced", "Succeeded")
  yield* pods.waitFor("traced", Condition.podSucceeded, { timeout: "10 seconds" })
  yield* pods.watch({ timeoutSeconds: 1 }).pipe(Stream.take(1), Stream.runDrain)
  yield* pods.delete("traced")
}).pipe(Effect.withSpan("example"))

const main = Effect.gen(function*() {
  yield* program.pipe(Effect.provide(FakeCluster.layer()))
  yield* Console.log("spans (one per operation; the kube.* span carries the HTTP attributes):")
  for (const span of spans.getFinishedSpans().filter((s) => s.name.startsWith("kube."))) {
    const attributes = Object.entries(span.attributes).map(([key, value]) => `${key}=${String(value)}`).join(" ")
    yield* Console.log(`  ${span.name.padEnd(12)} ${attributes}`)
  }
  yield* Console.log("metrics:")
  for (const metric of yield* Metric.snapshot) {
    if (!metric.id.startsWith("kube_client_")) continue
    const attributes = Object.entries(metric.attributes ?? {}).map(([key, value]) => `${key}=${value}`).join(",")
    if (metric.type === "Counter" || metric.type === "Histogram") {
      yield* Console.log(`  ${metric.id}{${attributes}} ${metric.state.count}`)
    }
  }
})

Effect.runPromise(main.pipe(Effect.provide(Observability)))

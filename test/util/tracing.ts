/**
 * A tracer for tests that records every span it makes (over Effect's own), so that a test can
 * read the names and attributes of the spans an operation made.
 */
import * as Effect from "effect/Effect"
import * as Tracer from "effect/Tracer"

export const recordingTracer = (spans: Array<Tracer.Span>): Effect.Effect<Tracer.Tracer> =>
  Effect.map(Effect.tracer, (native) =>
    Tracer.make({
      span: (options) => {
        const span = native.span(options)
        spans.push(span)
        return span
      },
      context: native.context
    }))

/**
 * `Kube.request` and `Kube.requestStream`: a request the library does not model, sent
 * through the one executor (credentials, TLS, timeouts, retries of reads, ApiError from
 * a Status, scrubbing of secrets) like every operation.
 */
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { ValidationError } from "../../Errors.js"
import type * as Kube from "../../Kube.js"
import { RequestPolicy } from "../../RequestPolicy.js"
import * as client from "../client/execute.js"
import { lineTooLong } from "../client/limits.js"
import { splitLines } from "../stream/lines.js"
import { raw, type RawOptions } from "../request/rawRequest.js"
import * as telemetry from "../client/telemetry.js"

/** One request; its parsed JSON answer, or its text when the answer is not JSON. */
export const request = (options: RawOptions): Effect.Effect<unknown, Kube.Error, Kube.Requirements> =>
  Effect.suspend(() => {
    const spec = raw(options)
    return spec instanceof ValidationError ? Effect.fail(spec) : client.sendAny(spec)
  })

/** One streaming request: the lines of its answer as they come, until the server ends it. */
export const requestStream = (options: RawOptions): Stream.Stream<string, Kube.Error, Kube.Requirements> =>
  Stream.suspend(() => {
    const spec = raw(options)
    if (spec instanceof ValidationError) return Stream.fail(spec)
    return telemetry.scopedStreamInSpan(
      spec,
      Effect.flatMap(client.sendScoped(spec), (response) =>
        Effect.map(RequestPolicy, (policy) =>
          splitLines(true, policy.maxLineBytes, lineTooLong(spec, policy.maxLineBytes, "a line of the answer"))(
            // body failures carry the authorized request: scrubbed like every transport error
            Stream.mapError(response.stream, client.scrub)
          )))
    )
  })

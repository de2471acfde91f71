/**
 * Pod logs: the whole log as a string, or followed as a stream of lines. The log
 * endpoint answers plain text, which is streamed as it comes; lines are cut once per
 * chunk of bytes, not through a stream stage per line.
 */
import type * as HttpClientResponse from "effect/http/HttpClientResponse"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { ApiError, ValidationError } from "../../Errors.js"
import type * as Kube from "../../Kube.js"
import { bodyStream, decodedBody } from "../stream/body.js"
import { type Policy, RequestPolicy } from "../../RequestPolicy.js"
import * as client from "../client/execute.js"
import { lineTooLong } from "../client/limits.js"
import { lineBatches } from "../stream/lines.js"
import * as request from "../request/verbs.js"
import type { Spec } from "../request/spec.js"
import * as telemetry from "../client/telemetry.js"
import { checkName, checkPositive, resolveNamed, type Target } from "../request/inputChecks.js"

const rfc3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/

const sinceTimeText = (sinceTime: string | Date | undefined): Effect.Effect<string | undefined, ValidationError> => {
  if (sinceTime === undefined) return Effect.succeed(undefined)
  if (sinceTime instanceof Date) {
    return Number.isNaN(sinceTime.getTime())
      ? Effect.fail(new ValidationError({ subject: "sinceTime", detail: "is an invalid Date" }))
      : Effect.succeed(sinceTime.toISOString())
  }
  return typeof sinceTime === "string" && rfc3339.test(sinceTime) && !Number.isNaN(Date.parse(sinceTime))
    ? Effect.succeed(sinceTime)
    : Effect.fail(
      new ValidationError({
        subject: "sinceTime",
        detail: `must be an RFC 3339 time such as 2024-01-02T03:04:05Z, or a Date (got ${JSON.stringify(sinceTime)})`
      })
    )
}

/** Checks the options and builds the Spec of a log request, before any request. */
export const logSpec = <A, I>(
  target: Target<A, I>,
  name: string,
  options: Kube.LogOptions,
  follow: boolean
): Effect.Effect<Spec, ValidationError, Kube.Requirements> =>
  Effect.gen(function*() {
    const { resource } = target
    if (resource.group !== "" || resource.plural !== "pods") {
      return yield* new ValidationError({
        subject: `logs of ${resource.kind}`,
        detail: "logs are served for pods only (the core v1 pods resource)"
      })
    }
    const namespace = yield* resolveNamed(target, name)
    if (options.container !== undefined) yield* checkName(options.container, "container")
    if (options.sinceSeconds !== undefined && options.sinceTime !== undefined) {
      return yield* new ValidationError({
        subject: "sinceSeconds",
        detail: "sinceSeconds and sinceTime exclude each other: give one of them"
      })
    }
    yield* checkPositive(options.tailLines, "tailLines", true)
    yield* checkPositive(options.sinceSeconds, "sinceSeconds")
    yield* checkPositive(options.limitBytes, "limitBytes")
    const sinceTime = yield* sinceTimeText(options.sinceTime)
    return request.log(resource, namespace, name, {
      container: options.container,
      follow,
      tailLines: options.tailLines,
      sinceSeconds: options.sinceSeconds,
      sinceTime,
      timestamps: options.timestamps,
      previous: options.previous,
      limitBytes: options.limitBytes
    })
  })

/**
 * A 404 of a log request that is not the pod's own NotFound (`pods "web" not found`, the
 * Status naming the pod: there is no such pod) but the kubelet's (the API server relays it
 * as NotFound for `pods/log`): the pod is there and its log is gone (its containers removed
 * from the node, the node gone). That log is empty; a pod that does not exist is an error
 * that names it, so a mistyped name never reads as an empty log.
 */
const isLogGone = (name: string) => (error: Kube.Error): error is ApiError => {
  if (!ApiError.isNotFound(error)) return false
  const details = error.status?.details
  return !(details?.kind === "pods" && details.group === undefined && details.name === name)
}

/** `logs` on a bound api: `""` when the pod's log is gone; a pod that does not exist is ApiError NotFound. */
export const logs = <A, I>(
  target: Target<A, I>,
  name: string,
  options: Kube.LogOptions
): Effect.Effect<string, Kube.Error, Kube.Requirements> =>
  Effect.gen(function*() {
    const spec = yield* logSpec(target, name, options, false)
    return yield* client.sendText(spec).pipe(
      Effect.catchIf(isLogGone(name), () => Effect.succeed(""))
    )
  })

/** A followed log's answer through `toStream` (whole lines, or the bytes themselves). */
const followed = <A, I, B>(
  target: Target<A, I>,
  name: string,
  options: Kube.LogOptions,
  toStream: (response: HttpClientResponse.HttpClientResponse, spec: Spec, policy: Policy) => Stream.Stream<B, Kube.Error>
): Stream.Stream<B, Kube.Error, Kube.Requirements> =>
  Stream.unwrap(
    Effect.map(logSpec(target, name, options, true), (spec) =>
      telemetry.scopedStreamInSpan(
        spec,
        client.sendScoped(spec).pipe(
          Effect.flatMap((response) => Effect.map(RequestPolicy, (policy) => toStream(response, spec, policy))),
          Effect.catchIf(isLogGone(name), () => Effect.succeed(Stream.empty))
        )
      ))
  )

/**
 * `logStream` on a bound api: the lines of a followed log until the server ends it
 * (the container ended, or the pod was deleted). A pod whose log is gone has no lines, and one
 * that does not exist fails with ApiError NotFound, as with `logs`. Lines are cut
 * in the loop that reads the body, and handed on a batch (about 64 KiB of text) per pull.
 */
export const logStream = <A, I>(
  target: Target<A, I>,
  name: string,
  options: Kube.LogOptions
): Stream.Stream<string, Kube.Error, Kube.Requirements> =>
  followed(target, name, options, (response, spec, policy) =>
    decodedBody(
      response,
      lineBatches(true, policy.maxLineBytes, lineTooLong(spec, policy.maxLineBytes, "a log line")),
      // body failures carry the authorized request: scrubbed like every transport error
      { onError: client.scrub }
    ))

/** `logBytes` on a bound api: the bytes of a followed log as they arrive, lines not cut. */
export const logBytes = <A, I>(
  target: Target<A, I>,
  name: string,
  options: Kube.LogOptions
): Stream.Stream<Uint8Array, Kube.Error, Kube.Requirements> =>
  followed(target, name, options, (response) => Stream.mapError(bodyStream(response), client.scrub))

/**
 * The subresource operations of `Kube.Api` (status, scale, pod eviction, ephemeral
 * containers and resize, service account tokens) and `deleteWithResult`: each checks its
 * input, builds its request with `request/operations.ts` and sends it through the one
 * executor (`client.ts`). Which kinds offer which operation is decided by the type
 * (`Kube.SubresourceOperations`); a server that lacks one answers 404.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { ValidationError } from "../../Errors.js"
import type * as Kube from "../../Kube.js"
import type * as Patch from "../../Patch.js"
import * as Patches from "../../Patch.js"
import { Scale, type Scale as ScaleObject } from "../../resources/generated.js"
import * as client from "../client/execute.js"
import {
  codecFor,
  decodeObject,
  describe,
  isObject,
  malformed,
  metadataOf,
  prepareApplyConfiguration,
  prepareObject
} from "../codec/codec.js"
import * as Resource from "../../Resource.js"
import { fieldManagerOf } from "./operations.js"
import { raw } from "../request/rawRequest.js"
import * as request from "../request/verbs.js"
import type { Spec, SubresourceVerb } from "../request/spec.js"
import { checkPositive, resolveNamed, resolveNamespace, type Target } from "../request/inputChecks.js"

type Result<A> = Effect.Effect<A, Kube.Error, Kube.Requirements>

/** Sends a spec whose answer is one object of the resource, and decodes it. */
const objectRequest = <A, I>(target: Target<A, I>, spec: Spec): Result<A> =>
  Effect.flatMap(client.sendJson(spec), (json) => decodeObject(target.resource, json, spec))

/** The verbs of a subresource whose answer is the whole object. */
interface ObjectVerbs {
  readonly get: SubresourceVerb
  readonly replace: SubresourceVerb
  readonly patch: SubresourceVerb
}

/** Reads through a subresource, decoding the answer with `decode`; a 404 is `None`, as for `get`. */
const getOptionVia = <A, I, B>(
  target: Target<A, I>,
  subresource: string,
  verb: SubresourceVerb,
  name: string,
  decode: (json: unknown, spec: Spec) => Result<B>
): Result<Option.Option<B>> =>
  Effect.gen(function*() {
    const namespace = yield* resolveNamed(target, name)
    const spec = request.getSubresource(target.resource, namespace, name, subresource, verb)
    const found = yield* client.sendJsonOption(spec)
    return Option.isNone(found) ? Option.none() : Option.some(yield* decode(found.value, spec))
  })

/** Replaces through a subresource, as `replace` does: the name given, and `metadata.name` equal to it if set. */
const replaceVia = <A, I>(
  target: Target<A, I>,
  subresource: string,
  verb: SubresourceVerb,
  name: string,
  object: A,
  options: Kube.WriteOptions = {}
): Result<A> =>
  Effect.gen(function*() {
    const namespace = yield* resolveNamed(target, name)
    const body = yield* prepareObject(target.resource, namespace, object, { name })
    return yield* objectRequest(
      target,
      request.replaceSubresource(target.resource, namespace, name, subresource, body, options, verb)
    )
  })

/** Patches through a subresource, with any patch kind (apply needs a field manager). */
const patchVia = <A, I>(
  target: Target<A, I>,
  subresource: string,
  verb: SubresourceVerb,
  name: string,
  thePatch: Patch.Patch,
  options: Kube.WriteOptions = {}
): Result<A> =>
  Effect.gen(function*() {
    const namespace = yield* resolveNamed(target, name)
    const fieldManager = yield* fieldManagerOf(describe(target.resource, namespace, name), thePatch, options)
    return yield* objectRequest(
      target,
      request.patchSubresource(target.resource, namespace, name, subresource, thePatch, {
        ...options,
        fieldManager
      }, verb)
    )
  })

const objectSubresource = <A, I>(target: Target<A, I>, subresource: string, verbs: ObjectVerbs) => ({
  get: (name: string) =>
    getOptionVia(target, subresource, verbs.get, name, (json, spec) => decodeObject(target.resource, json, spec)),
  replace: (name: string, object: A, options?: Kube.WriteOptions) =>
    replaceVia(target, subresource, verbs.replace, name, object, options),
  patch: (name: string, thePatch: Patch.Patch, options?: Kube.WriteOptions) =>
    patchVia(target, subresource, verbs.patch, name, thePatch, options)
})

/** The `status` subresource. */
export const status = <A, I>(target: Target<A, I>): Kube.StatusOperations<A, unknown> => {
  const ops = objectSubresource(target, "status", { get: "getStatus", replace: "replaceStatus", patch: "patchStatus" })
  return {
    getStatus: ops.get,
    replaceStatus: ops.replace,
    patchStatus: ops.patch,
    applyStatus: (configuration, options) =>
      Effect.gen(function*() {
        const namespace = yield* resolveNamespace(target)
        const body = yield* prepareApplyConfiguration(target.resource, namespace, configuration)
        const name = metadataOf(body)["name"] as string
        return yield* patchVia(target, "status", "applyStatus", name, Patches.apply(body, options), {
          dryRun: options.dryRun,
          fieldValidation: options.fieldValidation
        })
      })
  }
}

/** The `ephemeralcontainers` subresource of pods. */
export const ephemeralContainers = <A, I>(target: Target<A, I>): Kube.EphemeralContainersOperations<A> => {
  const ops = objectSubresource(target, "ephemeralcontainers", {
    get: "getEphemeralContainers",
    replace: "replaceEphemeralContainers",
    patch: "patchEphemeralContainers"
  })
  return {
    getEphemeralContainers: ops.get,
    replaceEphemeralContainers: ops.replace,
    patchEphemeralContainers: ops.patch
  }
}

/** The `resize` subresource of pods. */
export const resize = <A, I>(target: Target<A, I>): Kube.ResizeOperations<A> => {
  const ops = objectSubresource(target, "resize", { get: "getResize", replace: "replaceResize", patch: "patchResize" })
  return { getResize: ops.get, replaceResize: ops.replace, patchResize: ops.patch }
}

const scaleResource = { kind: "Scale", apiVersion: "autoscaling/v1", schema: Scale } as const

const decodeScale = (json: unknown, spec: Spec): Result<ScaleObject> => decodeObject(scaleResource, json, spec)

const scaleRequest = (spec: Spec): Result<ScaleObject> =>
  Effect.flatMap(client.sendJson(spec), (json) => decodeScale(json, spec))

/** The `scale` subresource, as an autoscaling/v1 Scale. */
export const scale = <A, I>(target: Target<A, I>): Kube.ScaleOperations => ({
  getScale: (name) => getOptionVia(target, "scale", "getScale", name, decodeScale),
  replaceScale: (name, theScale, options = {}) =>
    Effect.gen(function*() {
      const namespace = yield* resolveNamed(target, name)
      const subject = `Scale of ${describe(target.resource, namespace, name)}`
      const encoded = yield* Effect.fromResult(codecFor(Scale).encode(theScale, subject))
      const given = metadataOf(encoded)
      if (given["name"] !== undefined && given["name"] !== name) {
        return yield* new ValidationError({
          subject,
          detail: `metadata.name is ${JSON.stringify(given["name"])} but the name given is ${JSON.stringify(name)}`
        })
      }
      const body = {
        ...encoded,
        apiVersion: "autoscaling/v1",
        kind: "Scale",
        metadata: { ...given, name, ...(namespace !== undefined ? { namespace } : {}) }
      }
      return yield* scaleRequest(
        request.replaceSubresource(target.resource, namespace, name, "scale", body, options, "replaceScale")
      )
    }),
  patchScale: (name, thePatch, options = {}) =>
    Effect.gen(function*() {
      const namespace = yield* resolveNamed(target, name)
      const fieldManager = yield* fieldManagerOf(describe(target.resource, namespace, name), thePatch, options)
      return yield* scaleRequest(
        request.patchSubresource(target.resource, namespace, name, "scale", thePatch, {
          ...options,
          fieldManager
        }, "patchScale")
      )
    })
})

/** Pod eviction: a 429 (a disruption budget) is the server's ApiError, never retried here. */
export const eviction = <A, I>(target: Target<A, I>): Kube.EvictionOperations => ({
  evict: (name, options = {}) =>
    Effect.gen(function*() {
      const namespace = yield* resolveNamed(target, name)
      yield* checkPositive(options.deleteOptions?.gracePeriodSeconds, "deleteOptions.gracePeriodSeconds", true)
      yield* client.sendJson(request.evict(target.resource, namespace, name, options))
    })
})

/** The shortest token lifetime the API server accepts. */
const minimumExpirationSeconds = 600

/** Service account tokens: the answer's token goes straight into a Redacted. */
export const token = <A, I>(target: Target<A, I>): Kube.TokenOperations => ({
  createToken: (name, options = {}) =>
    Effect.gen(function*() {
      const namespace = yield* resolveNamed(target, name)
      const subject = `createToken for ${describe(target.resource, namespace, name)}`
      const seconds = options.expirationSeconds
      if (seconds !== undefined && !(Number.isSafeInteger(seconds) && seconds >= minimumExpirationSeconds)) {
        return yield* new ValidationError({
          subject: `${subject}: expirationSeconds`,
          detail: `must be a whole number of at least ${minimumExpirationSeconds} (got ${seconds})`
        })
      }
      const audiences = options.audiences ?? []
      const blank = audiences.findIndex((a) => typeof a !== "string" || a.trim() === "")
      if (blank !== -1) {
        return yield* new ValidationError({ subject: `${subject}: audiences[${blank}]`, detail: "must not be blank" })
      }
      const spec = request.createToken(target.resource, namespace, name, options)
      const json = yield* client.sendJson(spec)
      const status = isObject(json) && isObject(json["status"]) ? json["status"] : undefined
      const value = status?.["token"]
      const expiry = status?.["expirationTimestamp"]
      // the answer is never shown: it holds the token
      if (typeof value !== "string" || value === "" || typeof expiry !== "string") {
        return yield* malformed(spec, "expected a TokenRequest with status.token and status.expirationTimestamp")
      }
      return { token: Redacted.make(value), expirationTimestamp: expiry }
    })
})

/** A delete that answers what the server said: the object while it terminates, or the Status. */
export const deleteWithResult = <A, I>(
  target: Target<A, I>,
  name: string,
  options: Kube.DeleteOptions = {}
): Result<Kube.DeleteResult<A>> =>
  Effect.gen(function*() {
    const namespace = yield* resolveNamed(target, name)
    yield* checkPositive(options.gracePeriodSeconds, "gracePeriodSeconds", true)
    const spec = request.del(target.resource, namespace, name, options)
    const json = yield* client.sendJson(spec)
    if (isObject(json) && json["kind"] === "Status") {
      return { _tag: "Status", status: json as Kube.Status } as const
    }
    const object = yield* decodeObject(target.resource, json, spec)
    return { _tag: "Object", object } as const
  })

// A port is a number or an IANA service name (letters, digits and dashes, at least one letter)
const portName = /^(?=.*[a-z])[a-z0-9]([a-z0-9-]*[a-z0-9])?$/

/** `[scheme:]name[:port]`, the name segment of a proxy path. */
const proxyTarget = (name: string, options: Kube.ProxyOptions, subject: string): string | ValidationError => {
  const port = options.port
  if (port !== undefined) {
    const valid = typeof port === "number"
      ? Number.isInteger(port) && port >= 1 && port <= 65535
      : typeof port === "string" && port.length <= 15 && (portName.test(port) || /^[1-9][0-9]{0,4}$/.test(port) && Number(port) <= 65535)
    if (!valid) {
      return new ValidationError({
        subject: `${subject}: port`,
        detail: `must be a port number (1 to 65535) or a port's name (got ${JSON.stringify(port)})`
      })
    }
  }
  if (options.scheme !== undefined && options.scheme !== "http" && options.scheme !== "https") {
    return new ValidationError({
      subject: `${subject}: scheme`,
      detail: `must be "http" or "https" (got ${JSON.stringify(options.scheme)})`
    })
  }
  const withPort = port === undefined ? name : `${name}:${port}`
  return options.scheme === undefined ? withPort : `${options.scheme}:${withPort}`
}

/** The `proxy` subresource of pods, services and nodes. */
export const proxy = <A, I>(target: Target<A, I>): Kube.ProxyOperations => ({
  proxy: (name, options = {}) =>
    Effect.gen(function*() {
      const namespace = yield* resolveNamed(target, name)
      const subject = `proxy to ${describe(target.resource, namespace, name)}`
      const segment = proxyTarget(name, options, subject)
      if (segment instanceof ValidationError) return yield* segment
      const path = options.path ?? "/"
      if (typeof path !== "string" || !path.startsWith("/")) {
        return yield* new ValidationError({
          subject: `${subject}: path`,
          detail: `must start with / (got ${JSON.stringify(path)})`
        })
      }
      const built = raw({
        method: options.method ?? "GET",
        path: `${Resource.objectPath(target.resource, namespace, segment, "proxy")}${path}`,
        query: options.query,
        body: options.body,
        contentType: options.body !== undefined && typeof options.body === "string" && options.contentType === undefined
          ? "text/plain"
          : options.contentType,
        accept: options.accept ?? "*/*",
        headers: options.headers
      })
      if (built instanceof ValidationError) {
        return yield* new ValidationError({ subject: `${subject}: ${built.subject}`, detail: built.detail })
      }
      const spec: Spec = { ...built, operation: { verb: "proxy", kind: target.resource.kind, namespace, name } }
      const answer = yield* client.sendTextWithStatus(spec)
      return { status: answer.status, headers: answer.headers, body: answer.text }
    })
})

/**
 * The one-shot operations of `Kube.Api` (get, list, create, replace, patch, apply,
 * delete, deleteAll): each checks its input, builds its request with `request/`, sends
 * it through the executor and decodes the answer with the resource's Schema. Nothing
 * here retries a mutation. Runtime modules (manifests) use these directly, never the
 * facade.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { ApiError, ValidationError } from "../../Errors.js"
import type * as Kube from "../../Kube.js"
import type * as Patch from "../../Patch.js"
import * as Patches from "../../Patch.js"
import * as client from "../client/execute.js"
import {
  decodeList,
  decodeObject,
  describe,
  isObject,
  malformed,
  metadataOf,
  prepareApplyConfiguration,
  prepareObject
} from "../codec/codec.js"
import { skipInvalid } from "../codec/invalid.js"
import * as request from "../request/verbs.js"
import type { Spec } from "../request/spec.js"
import { checkPositive, resolveNamed, resolveNamespace, type Target } from "../request/inputChecks.js"

/** Sends a spec whose answer is one object of the resource, and decodes it. */
const objectRequest = <A, I>(target: Target<A, I>, spec: Spec) =>
  Effect.flatMap(client.sendJson(spec), (json) => decodeObject(target.resource, json, spec))

const checkGracePeriod = (seconds: number | undefined) => checkPositive(seconds, "gracePeriodSeconds", true)

/** Reads one object; a 404 is `None`. Written without `Effect.gen`: a generator costs a GET a few µs. */
export const get = <A, I>(
  target: Target<A, I>,
  name: string,
  options: Kube.GetOptions = {}
): Effect.Effect<Option.Option<A>, Kube.Error, Kube.Requirements> =>
  Effect.flatMap(resolveNamed(target, name), (namespace) => {
    const spec = request.get(target.resource, namespace, name, options)
    // the 404 is caught around the decoding too (which never fails with an ApiError): one Option made, not two
    return Effect.catchIf(
      Effect.flatMap(
        client.sendJson(spec),
        (json) => Effect.map(decodeObject(target.resource, json, spec), Option.some)
      ),
      ApiError.isNotFound,
      () => Effect.succeed(Option.none<A>())
    )
  })

/** Reads one object that must exist: a 404 is the server's ApiError NotFound. */
export const getOrFail = <A, I>(
  target: Target<A, I>,
  name: string,
  options: Kube.GetOptions = {}
): Effect.Effect<A, Kube.Error, Kube.Requirements> =>
  Effect.flatMap(
    resolveNamed(target, name),
    (namespace) => objectRequest(target, request.get(target.resource, namespace, name, options))
  )

/** Lists one page (or all, without `limit`). */
export const list = <A, I>(
  target: Target<A, I>,
  options: Kube.ListOptions = {}
): Effect.Effect<Kube.ListResult<A>, Kube.Error, Kube.Requirements> =>
  Effect.gen(function*() {
    yield* checkPositive(options.limit, "limit")
    yield* checkPositive(options.timeoutSeconds, "timeoutSeconds")
    const namespace = yield* resolveNamespace(target, options.allNamespaces)
    return yield* listIn(target, namespace, options)
  })

/** Lists in a namespace already resolved (the watcher's pages). */
export const listIn = <A, I>(
  target: Target<A, I>,
  namespace: string | undefined,
  options: Kube.ListOptions
): Effect.Effect<Kube.ListResult<A>, Kube.Error, Kube.Requirements> => {
  const spec = request.list(target.resource, namespace, options)
  const invalid = options.invalid ?? "fail"
  const decoded = Effect.flatMap(client.sendJson(spec), (json) => decodeList(target.resource, json, spec, invalid))
  return invalid === "skip" ? Effect.flatMap(decoded, (result) => skipInvalid(spec, result)) : decoded
}

/** Creates an object (a `generateName` is allowed). */
export const create = <A, I>(
  target: Target<A, I>,
  object: A,
  options: Kube.WriteOptions = {}
): Effect.Effect<A, Kube.Error, Kube.Requirements> =>
  Effect.gen(function*() {
    const namespace = yield* resolveNamespace(target)
    const body = yield* prepareObject(target.resource, namespace, object, { allowGenerateName: true })
    return yield* objectRequest(target, request.create(target.resource, namespace, body, options))
  })

/** Replaces an object. */
export const replace = <A, I>(
  target: Target<A, I>,
  name: string,
  object: A,
  options: Kube.WriteOptions = {}
): Effect.Effect<A, Kube.Error, Kube.Requirements> =>
  Effect.gen(function*() {
    const namespace = yield* resolveNamed(target, name)
    const body = yield* prepareObject(target.resource, namespace, object, { name })
    return yield* objectRequest(target, request.replace(target.resource, namespace, name, body, options))
  })

const blank = (s: string | undefined): boolean => s === undefined || s.trim() === ""

/**
 * The field manager a patch is sent with: the options' or the apply patch's. Server-side
 * apply needs one, and two different ones are refused rather than one silently winning.
 */
export const fieldManagerOf = (
  subject: string,
  thePatch: Patch.Patch,
  options: Kube.WriteOptions
): Effect.Effect<string | undefined, ValidationError> => {
  const given = options.fieldManager
  if (thePatch._tag !== "Apply") return Effect.succeed(given)
  const own = thePatch.fieldManager
  if (!blank(own) && !blank(given) && own !== given) {
    return Effect.fail(
      new ValidationError({
        subject: `${subject}: fieldManager`,
        detail: `the apply patch names ${JSON.stringify(own)} and the options ${JSON.stringify(given)}: give one`
      })
    )
  }
  const manager = blank(given) ? own : given
  return blank(manager)
    ? Effect.fail(
      new ValidationError({
        subject: `${subject}: fieldManager`,
        detail: "server-side apply needs a non-empty fieldManager (in Patch.apply or in the options)"
      })
    )
    : Effect.succeed(manager)
}

/** Patches an object with one of the `Patch` kinds. */
export const patch = <A, I>(
  target: Target<A, I>,
  name: string,
  thePatch: Patch.Patch,
  options: Kube.WriteOptions = {}
): Effect.Effect<A, Kube.Error, Kube.Requirements> =>
  Effect.gen(function*() {
    const namespace = yield* resolveNamed(target, name)
    const fieldManager = yield* fieldManagerOf(describe(target.resource, namespace, name), thePatch, options)
    return yield* objectRequest(
      target,
      request.patch(target.resource, namespace, name, thePatch, {
        dryRun: options.dryRun,
        fieldManager,
        fieldValidation: options.fieldValidation
      })
    )
  })

/** Server-side applies an apply configuration (a partial object, sent as JSON). */
export const apply = <A, I>(
  target: Target<A, I>,
  configuration: unknown,
  options: Kube.ApplyOptions
): Effect.Effect<A, Kube.Error, Kube.Requirements> =>
  Effect.gen(function*() {
    const namespace = yield* resolveNamespace(target)
    const body = yield* prepareApplyConfiguration(target.resource, namespace, configuration)
    const name = metadataOf(body)["name"] as string
    return yield* patch(target, name, Patches.apply(body, options), {
      dryRun: options.dryRun,
      fieldValidation: options.fieldValidation
    })
  })

/** Deletes an object: `true`, or `false` when there was none (404). */
export const del = <A, I>(
  target: Target<A, I>,
  name: string,
  options: Kube.DeleteOptions = {}
): Effect.Effect<boolean, Kube.Error, Kube.Requirements> =>
  Effect.gen(function*() {
    const namespace = yield* resolveNamed(target, name)
    yield* checkGracePeriod(options.gracePeriodSeconds)
    return yield* client.sendJson(request.del(target.resource, namespace, name, options)).pipe(
      Effect.as(true),
      Effect.catchIf(ApiError.isNotFound, () => Effect.succeed(false))
    )
  })

/** Deletes every object a non-empty selector matches; how many there were. */
export const deleteAll = <A, I>(
  target: Target<A, I>,
  options: Kube.DeleteAllOptions
): Effect.Effect<number, Kube.Error, Kube.Requirements> =>
  Effect.gen(function*() {
    // The type asks for a selector; an empty or blank string still gets through it.
    const selectors = options as Kube.Selectors
    if (!request.nonEmpty(selectors.labelSelector) && !request.nonEmpty(selectors.fieldSelector)) {
      return yield* new ValidationError({
        subject: `deleteAll of ${target.resource.kind}`,
        detail: "needs a non-empty labelSelector or fieldSelector (an empty one would delete every object)"
      })
    }
    yield* checkGracePeriod(options.gracePeriodSeconds)
    const namespace = yield* resolveNamespace(target)
    const spec = request.deleteCollection(target.resource, namespace, options)
    return yield* client.sendJson(spec).pipe(
      Effect.flatMap((json) =>
        isObject(json) && Array.isArray(json["items"])
          ? Effect.succeed(json["items"].length)
          : Effect.fail(malformed(spec, "expected the list of deleted objects"))
      ),
      // Some kinds do not serve deletecollection: delete what the selector matches one by one.
      Effect.catchIf(
        (e): e is ApiError => e instanceof ApiError && e.reason === "MethodNotAllowed",
        () => deleteEach(target, namespace, options)
      )
    )
  })

const deleteEach = <A, I>(target: Target<A, I>, namespace: string | undefined, options: Kube.DeleteAllOptions) =>
  Effect.gen(function*() {
    const selectors = options as Kube.Selectors
    const { items } = yield* listIn(target, namespace, {
      labelSelector: selectors.labelSelector,
      fieldSelector: selectors.fieldSelector
    })
    const deleted = yield* Effect.forEach(items, (item) => del(target, metadataOf(item)["name"] as string, options))
    return deleted.filter((existed) => existed).length
  })

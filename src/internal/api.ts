/**
 * The implementation of `Kube.api`: each operation checks its input, builds a Spec,
 * sends it through the shared request path and decodes the answer with the resource's
 * Schema. Nothing here retries a mutation.
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import type * as Stream from "effect/Stream"
import { ApiError, ValidationError } from "../Errors.js"
import type * as Kube from "../Kube.js"
import { KubeConfig } from "../KubeConfig.js"
import * as Patch from "../Patch.js"
import * as Resource from "../Resource.js"
import * as client from "./client.js"
import { codecFor } from "./codec.js"
import * as logs from "./logs.js"
import * as waitFor from "./waitFor.js"
import * as watch from "./watch.js"
import * as watcher from "./watcher.js"
import { checkName, checkNamespace } from "./validate.js"

type JsonObject = Record<string, unknown>

const isObject = (u: unknown): u is JsonObject => typeof u === "object" && u !== null && !Array.isArray(u)

const metadataOf = (u: unknown): JsonObject => {
  const metadata = isObject(u) ? u["metadata"] : undefined
  return isObject(metadata) ? metadata : {}
}

/** Everything an operation needs to know about where it acts. */
export interface Target<A, I> {
  readonly resource: Resource.Resource<A, I>
  /** The namespace given to `api`, unchecked. */
  readonly namespace: string | undefined
}

/** `Pod default/web`, `Namespace prod`: how objects are named in messages. */
export const describe = (resource: Pick<Resource.Info, "kind">, namespace: string | undefined, name?: string) =>
  `${resource.kind} ${namespace === undefined ? "" : `${namespace}/`}${name ?? "<unnamed>"}`

/**
 * The namespace an operation acts in: `undefined` for cluster-scoped kinds and for
 * all-namespaces reads, else the given one or the KubeConfig's, checked.
 */
export const resolveNamespace = <A, I>(
  target: Target<A, I>,
  allNamespaces?: boolean | undefined
): Effect.Effect<string | undefined, ValidationError, KubeConfig> => {
  const { namespace, resource } = target
  if (!resource.namespaced) {
    return namespace === undefined
      ? Effect.succeed(undefined)
      : Effect.fail(
        new ValidationError({
          subject: "namespace",
          detail: `${resource.kind} is cluster-scoped, so no namespace may be given (got ${JSON.stringify(namespace)})`
        })
      )
  }
  if (allNamespaces === true) return Effect.succeed(undefined)
  if (namespace !== undefined) return checkNamespace(namespace)
  return Effect.flatMap(KubeConfig, (config) => checkNamespace(config.namespace, "namespace (from the kubeconfig)"))
}

/** Decodes an object the server sent, naming it in the error when it does not fit. */
export const decodeObject = <A, I>(
  resource: Resource.Resource<A, I>,
  u: unknown,
  spec: client.Spec
): Either.Either<A, ValidationError> => {
  if (!isObject(u)) return Either.left(client.malformed(spec, `expected a ${resource.kind}, got ${describeJson(u)}`))
  if (u["kind"] === "Status") {
    return Either.left(client.malformed(spec, `expected a ${resource.kind}, got a Status`))
  }
  const kind = u["kind"]
  if (kind !== undefined && kind !== resource.kind) {
    const got = typeof kind === "string" ? `a ${kind}` : `a kind that is ${describeJson(kind)}`
    return Either.left(client.malformed(spec, `expected a ${resource.kind}, got ${got}`))
  }
  fillType(resource, u)
  const metadata = metadataOf(u)
  const subject = describe(resource, metadata["namespace"] as string | undefined, metadata["name"] as string | undefined)
  const decoded = codecFor(resource.schema).decode(u, subject)
  // The request is named only on failure: this runs once per item of a list.
  return Either.isRight(decoded) ? decoded : Either.left(inAnswer(spec, decoded.left))
}

/** Says that an object failing its Schema came from the server, in the answer to which request. */
export const inAnswer = (spec: client.Spec, error: ValidationError): ValidationError =>
  new ValidationError({
    subject: `answer to ${spec.method} ${client.pathWithQuery(spec)}: ${error.subject}`,
    detail: error.detail
  })

const describeJson = (u: unknown): string => (u === null ? "null" : Array.isArray(u) ? "an array" : typeof u)

/** List items arrive without apiVersion and kind; set them so a get-then-replace round-trips. */
const fillType = (resource: Resource.Info, u: JsonObject) => {
  if (u["apiVersion"] === undefined) u["apiVersion"] = resource.apiVersion
  if (u["kind"] === undefined) u["kind"] = resource.kind
}

/**
 * Encodes an object the user gave and checks it: its kind and apiVersion (filled when
 * absent), its name (unless `generateName` is allowed), its namespace (filled, or equal
 * to the target's).
 */
export const prepareObject = <A, I>(
  resource: Resource.Resource<A, I>,
  namespace: string | undefined,
  object: A,
  options: { readonly name?: string | undefined; readonly allowGenerateName?: boolean | undefined }
): Effect.Effect<JsonObject, ValidationError> =>
  Effect.gen(function*() {
    const given = metadataOf(object)
    const subject = describe(resource, namespace, (given["name"] as string | undefined) ?? options.name)
    const encoded = yield* codecFor(resource.schema).encode(object, subject)
    if (!isObject(encoded)) {
      return yield* new ValidationError({ subject, detail: `must be a JSON object, got ${describeJson(encoded)}` })
    }
    if (encoded["apiVersion"] !== undefined && encoded["apiVersion"] !== resource.apiVersion) {
      return yield* new ValidationError({
        subject,
        detail: `apiVersion is ${JSON.stringify(encoded["apiVersion"])} but this api serves ${resource.apiVersion}`
      })
    }
    if (encoded["kind"] !== undefined && encoded["kind"] !== resource.kind) {
      return yield* new ValidationError({
        subject,
        detail: `kind is ${JSON.stringify(encoded["kind"])} but this api serves ${resource.kind}`
      })
    }
    const metadata = { ...metadataOf(encoded) }
    const name = metadata["name"]
    if (options.name !== undefined) {
      if (name !== undefined && name !== options.name) {
        return yield* new ValidationError({
          subject,
          detail: `metadata.name is ${JSON.stringify(name)} but the name given is ${JSON.stringify(options.name)}`
        })
      }
      metadata["name"] = options.name
    } else if (name === undefined && options.allowGenerateName === true && metadata["generateName"] !== undefined) {
      yield* checkName(`${String(metadata["generateName"])}x`, `${subject}: metadata.generateName`)
    } else {
      yield* checkName(name, `${subject}: metadata.name`)
    }
    if (resource.namespaced) {
      const own = metadata["namespace"]
      if (own !== undefined && own !== "" && own !== namespace) {
        return yield* new ValidationError({
          subject,
          detail: `metadata.namespace is ${JSON.stringify(own)} but the operation acts in namespace ${JSON.stringify(namespace)}`
        })
      }
      metadata["namespace"] = namespace
    } else if (metadata["namespace"] !== undefined && metadata["namespace"] !== "") {
      return yield* new ValidationError({
        subject,
        detail: `${resource.kind} is cluster-scoped, so metadata.namespace must not be set`
      })
    }
    return { ...encoded, apiVersion: resource.apiVersion, kind: resource.kind, metadata }
  })

const dryRunQuery = (dryRun: boolean | undefined) => (dryRun === true ? "All" : undefined)

const nonEmpty = (s: string | undefined): s is string => s !== undefined && s.trim() !== ""

/** Sends a spec whose answer is one object of the resource, and decodes it. */
const objectRequest = <A, I>(resource: Resource.Resource<A, I>, spec: client.Spec) =>
  Effect.flatMap(client.sendJson(spec), (json) => decodeObject(resource, json, spec))

/** Decodes a list answer, item by item, into a ListResult. */
export const decodeList = <A, I>(
  resource: Resource.Resource<A, I>,
  json: unknown,
  spec: client.Spec
): Effect.Effect<Kube.ListResult<A>, ValidationError> => {
  if (!isObject(json) || !Array.isArray(json["items"])) {
    return Effect.fail(client.malformed(spec, `expected a ${resource.kind}List, got ${isObject(json) ? `a ${String(json["kind"])}` : describeJson(json)}`))
  }
  const rawItems = json["items"] as Array<unknown>
  const items: Array<A> = new Array(rawItems.length)
  for (let i = 0; i < rawItems.length; i++) {
    const decoded = decodeObject(resource, rawItems[i], spec)
    if (Either.isLeft(decoded)) return Effect.fail(decoded.left)
    items[i] = decoded.right
  }
  const metadata = metadataOf(json)
  const continueToken = metadata["continue"]
  const remaining = metadata["remainingItemCount"]
  return Effect.succeed({
    items,
    metadata: {
      resourceVersion: typeof metadata["resourceVersion"] === "string" ? metadata["resourceVersion"] : "",
      ...(typeof continueToken === "string" && continueToken !== "" ? { continue: continueToken } : {}),
      ...(typeof remaining === "number" ? { remainingItemCount: remaining } : {})
    }
  })
}

/** The Spec of a list request. */
export const listSpec = (
  resource: Resource.Info,
  namespace: string | undefined,
  options: Kube.ListOptions
): client.Spec => ({
  method: "GET",
  path: Resource.collectionPath(resource, namespace),
  query: {
    labelSelector: nonEmpty(options.labelSelector) ? options.labelSelector : undefined,
    fieldSelector: nonEmpty(options.fieldSelector) ? options.fieldSelector : undefined,
    limit: options.limit,
    continue: options.continue,
    resourceVersion: options.resourceVersion,
    resourceVersionMatch: options.resourceVersionMatch
  }
})

const checkLimit = (limit: number | undefined): Effect.Effect<void, ValidationError> =>
  limit === undefined || (Number.isSafeInteger(limit) && limit > 0)
    ? Effect.void
    : Effect.fail(new ValidationError({ subject: "limit", detail: `must be a positive whole number (got ${limit})` }))

/** Lists one page. */
export const list = <A, I>(target: Target<A, I>, options: Kube.ListOptions = {}) =>
  Effect.gen(function*() {
    yield* checkLimit(options.limit)
    const namespace = yield* resolveNamespace(target, options.allNamespaces)
    const spec = listSpec(target.resource, namespace, options)
    const json = yield* client.sendJson(spec)
    return yield* decodeList(target.resource, json, spec)
  })

const deleteBody = (options: Kube.DeleteOptions | Kube.DeleteAllOptions) => {
  const preconditions = "preconditions" in options ? options.preconditions : undefined
  return client.jsonBody({
    kind: "DeleteOptions",
    apiVersion: "v1",
    ...(options.propagationPolicy !== undefined ? { propagationPolicy: options.propagationPolicy } : {}),
    ...(options.gracePeriodSeconds !== undefined ? { gracePeriodSeconds: options.gracePeriodSeconds } : {}),
    ...(preconditions !== undefined ? { preconditions } : {}),
    ...(options.dryRun === true ? { dryRun: ["All"] } : {})
  })
}

const checkGracePeriod = (seconds: number | undefined): Effect.Effect<void, ValidationError> =>
  seconds === undefined || (Number.isSafeInteger(seconds) && seconds >= 0)
    ? Effect.void
    : Effect.fail(
      new ValidationError({ subject: "gracePeriodSeconds", detail: `must be a whole number >= 0 (got ${seconds})` })
    )

/** Builds the operations for a resource. */
export const make = <A, I>(
  resource: Resource.Resource<A, I>,
  options?: { readonly namespace?: string | undefined }
): Kube.Api<A> => {
  const target: Target<A, I> = { resource, namespace: options?.namespace }
  const named = (name: string) =>
    Effect.flatMap(resolveNamespace(target), (namespace) =>
      Effect.map(
        checkName(name, `${describe(resource, namespace, String(name))}: name`),
        () => namespace
      ))

  const create = (object: A, writeOptions: Kube.WriteOptions = {}) =>
    Effect.gen(function*() {
      const namespace = yield* resolveNamespace(target)
      const body = yield* prepareObject(resource, namespace, object, { allowGenerateName: true })
      return yield* objectRequest(resource, {
        method: "POST",
        path: Resource.collectionPath(resource, namespace),
        query: { dryRun: dryRunQuery(writeOptions.dryRun), fieldManager: writeOptions.fieldManager },
        body: client.jsonBody(body)
      })
    })

  const get = (name: string) =>
    Effect.gen(function*() {
      const namespace = yield* named(name)
      const spec: client.Spec = { method: "GET", path: Resource.objectPath(resource, namespace, name) }
      const found = yield* client.sendJsonOption(spec)
      if (Option.isNone(found)) return Option.none<A>()
      return Option.some(yield* decodeObject(resource, found.value, spec))
    })

  const replace = (name: string, object: A, writeOptions: Kube.WriteOptions = {}) =>
    Effect.gen(function*() {
      const namespace = yield* named(name)
      const body = yield* prepareObject(resource, namespace, object, { name })
      return yield* objectRequest(resource, {
        method: "PUT",
        path: Resource.objectPath(resource, namespace, name),
        query: { dryRun: dryRunQuery(writeOptions.dryRun), fieldManager: writeOptions.fieldManager },
        body: client.jsonBody(body)
      })
    })

  const patch = (name: string, thePatch: Patch.Patch, writeOptions: Kube.WriteOptions = {}) =>
    Effect.gen(function*() {
      const namespace = yield* named(name)
      if (thePatch._tag === "Apply" && !nonEmpty(thePatch.fieldManager)) {
        return yield* new ValidationError({
          subject: `${describe(resource, namespace, name)}: fieldManager`,
          detail: "server-side apply needs a non-empty fieldManager"
        })
      }
      const fieldManager = thePatch._tag === "Apply" ? thePatch.fieldManager : writeOptions.fieldManager
      return yield* objectRequest(resource, {
        method: "PATCH",
        path: Resource.objectPath(resource, namespace, name),
        query: {
          dryRun: dryRunQuery(writeOptions.dryRun),
          fieldManager,
          force: thePatch._tag === "Apply" && thePatch.force ? true : undefined
        },
        body: { contentType: Patch.contentType(thePatch), text: Patch.bodyText(thePatch) }
      })
    })

  const apply = (object: A, applyOptions: Kube.ApplyOptions) =>
    Effect.gen(function*() {
      const namespace = yield* resolveNamespace(target)
      const body = yield* prepareObject(resource, namespace, object, {})
      const name = metadataOf(body)["name"] as string
      return yield* patch(name, Patch.apply(body, applyOptions), { dryRun: applyOptions.dryRun })
    })

  const del = (name: string, deleteOptions: Kube.DeleteOptions = {}) =>
    Effect.gen(function*() {
      const namespace = yield* named(name)
      yield* checkGracePeriod(deleteOptions.gracePeriodSeconds)
      return yield* client.sendJson({
        method: "DELETE",
        path: Resource.objectPath(resource, namespace, name),
        body: deleteBody(deleteOptions)
      }).pipe(
        Effect.as(true),
        Effect.catchIf(ApiError.isNotFound, () => Effect.succeed(false))
      )
    })

  const deleteAll = (deleteOptions: Kube.DeleteAllOptions) =>
    Effect.gen(function*() {
      if (!nonEmpty(deleteOptions.labelSelector) && !nonEmpty(deleteOptions.fieldSelector)) {
        return yield* new ValidationError({
          subject: `deleteAll of ${resource.kind}`,
          detail: "needs a non-empty labelSelector or fieldSelector (an empty one would delete every object)"
        })
      }
      yield* checkGracePeriod(deleteOptions.gracePeriodSeconds)
      const namespace = yield* resolveNamespace(target)
      const spec: client.Spec = {
        ...listSpec(resource, namespace, deleteOptions),
        method: "DELETE",
        body: deleteBody(deleteOptions)
      }
      return yield* client.sendJson(spec).pipe(
        Effect.flatMap((json) =>
          isObject(json) && Array.isArray(json["items"])
            ? Effect.succeed(json["items"].length)
            : Effect.fail(client.malformed(spec, "expected the list of deleted objects"))
        ),
        // Some kinds do not serve deletecollection: delete what the selector matches one by one.
        Effect.catchIf(
          (e): e is ApiError => e instanceof ApiError && e.reason === "MethodNotAllowed",
          () => deleteEach(deleteOptions)
        )
      )
    })

  const deleteEach = (deleteOptions: Kube.DeleteAllOptions) =>
    Effect.gen(function*() {
      const { items } = yield* list(target, {
        labelSelector: deleteOptions.labelSelector,
        fieldSelector: deleteOptions.fieldSelector
      })
      const deleted = yield* Effect.forEach(items, (item) => del(metadataOf(item)["name"] as string, deleteOptions))
      return deleted.filter((existed) => existed).length
    })

  return {
    resource: resource as Resource.Resource<A, unknown>,
    namespace: options?.namespace,
    create,
    get,
    list: (listOptions) => list(target, listOptions),
    replace,
    patch,
    apply,
    delete: del,
    deleteAll,
    watch: (watchOptions): Stream.Stream<Kube.WatchEvent<A>, Kube.Error, Kube.Requirements> =>
      watch.watch(target, watchOptions ?? {}),
    listStream: (streamOptions) => watch.listStream(target, streamOptions ?? {}),
    watcher: (watcherOptions) => watcher.watcher(target, watcherOptions ?? {}),
    logs: (name, logOptions) => logs.logs(target, name, logOptions ?? {}),
    logStream: (name, logOptions) => logs.logStream(target, name, logOptions ?? {}),
    waitFor: (name, condition, waitOptions) => waitFor.waitFor(target, name, condition, waitOptions)
  }
}

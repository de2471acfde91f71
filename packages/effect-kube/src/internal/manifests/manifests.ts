/**
 * The implementation of `Manifests`. Each operation runs in three steps: checks that
 * need no server (shapes, names, namespaces), then discovery of every kind (reads
 * only), then the requests. So bad input fails before anything changes, and no error
 * quotes an object's content: subjects are positions and identities.
 */
import type * as HttpClient from "effect/http/HttpClient"
import * as Effect from "effect/Effect"
import * as Base64 from "effect/encoding/Base64"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as Discovery from "../../Discovery.js"
import {
  ApplyFailed,
  DeleteFailed,
  formatBytes,
  formatRef,
  type ObjectRef,
  type RefFailure,
  ValidationError
} from "../../Errors.js"
import type * as Kube from "../../Kube.js"
import { KubeConfig } from "../../KubeConfig.js"
import type * as Manifests from "../../Manifests.js"
import * as Patch from "../../Patch.js"
import * as Resource from "../../Resource.js"
import * as client from "../client/execute.js"
import { decodeObject, isObject, type JsonObject } from "../codec/codec.js"
import * as discovery from "../api/discovery.js"
import * as operations from "../api/operations.js"
import * as request from "../request/verbs.js"
import { checkNamespace, nameProblem, namespaceProblem } from "../request/inputChecks.js"
import * as yaml from "./yaml.js"

const describeJson = (u: unknown): string =>
  u === null ? "null" : Array.isArray(u) ? "an array" : typeof u === "object" ? "an object" : `a ${typeof u}`

// ---------------------------------------------------------------------------------------------------------------------
// parse
// ---------------------------------------------------------------------------------------------------------------------

/**
 * Adds the objects a parsed document holds. As kubectl does, an object with an `items`
 * field is a list, whatever its kind, and gives its items (none when `items` is null);
 * beyond kubectl, an array gives its elements and a list nested in a list is flattened.
 */
const collect = (value: unknown, subject: string, into: Array<Manifests.Manifest>): ValidationError | undefined => {
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const problem = collect(value[i], `${subject}[${i}]`, into)
      if (problem !== undefined) return problem
    }
    return undefined
  }
  if (!isObject(value)) {
    return new ValidationError({ subject, detail: `expected an object, got ${describeJson(value)}` })
  }
  if (Object.hasOwn(value, "items")) {
    const items = value["items"]
    if (items === null || items === undefined) return undefined
    if (!Array.isArray(items)) {
      return new ValidationError({ subject, detail: `has items that are ${describeJson(items)}, not a list` })
    }
    return collect(items, `${subject}.items`, into)
  }
  const apiVersion = value["apiVersion"]
  if (typeof apiVersion !== "string" || apiVersion === "") {
    return new ValidationError({ subject, detail: "has no apiVersion (a non-empty string)" })
  }
  const kind = value["kind"]
  if (typeof kind !== "string" || kind === "") {
    return new ValidationError({ subject, detail: "has no kind (a non-empty string)" })
  }
  into.push(value as Manifests.Manifest)
  return undefined
}

/** A number JSON.parse read as Infinity (`1e400`), which kubectl refuses. Its values nest no deeper than `maxDepth`. */
const hasInfinity = (value: unknown): boolean => {
  if (typeof value === "number") return !Number.isFinite(value)
  if (Array.isArray(value)) return value.some(hasInfinity)
  if (isObject(value)) return Object.values(value).some(hasInfinity)
  return false
}

/** Whether JSON text nests brackets deeper than `max` (those in double-quoted strings do not count). */
const nestsDeeperThan = (text: string, max: number): boolean => {
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 0x5c) i++
      else if (c === 0x22) inString = false
    } else if (c === 0x22) inString = true
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) return true
    } else if (c === 0x7d || c === 0x5d) depth--
  }
  return false
}

/** The default of `ParseOptions.maxBytes`. */
const defaultMaxBytes = 16 * 1024 * 1024

/**
 * The JSON values of a text that is JSON: one value, or objects one after another, as
 * kubectl reads a stream that starts with `{`. None when it is not JSON (then it is YAML).
 */
const parseJson = (text: string, maxDocuments: number, maxDepth: number): Option.Option<ReadonlyArray<unknown>> => {
  const trimmed = text.trimStart()
  if (!trimmed.startsWith("{") && !trimmed.startsWith("[")) return Option.none()
  // JSON.parse of a few MB of `[` takes seconds and hundreds of MB before it fails: too deep
  // a text is left to the YAML reader, which stops at maxDepth (and knows YAML's quotes)
  if (nestsDeeperThan(trimmed, maxDepth)) return Option.none()
  try {
    return Option.some([JSON.parse(text) as unknown])
  } catch {
    // Several JSON values one after another, or YAML (which says where it is broken).
  }
  if (!trimmed.startsWith("{")) return Option.none()
  const values: Array<unknown> = []
  let depth = 0
  let inString = false
  let start = 0
  for (let i = 0; i < trimmed.length; i++) {
    const c = trimmed[i]
    if (inString) {
      if (c === "\\") i++
      else if (c === "\"") inString = false
    } else if (c === "\"") inString = true
    else if (c === "{" || c === "[") {
      if (depth === 0 && trimmed.slice(start, i).trim() !== "") return Option.none()
      if (depth === 0) start = i
      depth++
    } else if (c === "}" || c === "]") {
      depth--
      if (depth < 0) return Option.none()
      if (depth === 0) {
        // one more than the limit is enough to refuse the stream
        if (values.length > maxDocuments) break
        try {
          values.push(JSON.parse(trimmed.slice(start, i + 1)))
        } catch {
          return Option.none()
        }
        start = i + 1
      }
    }
  }
  return values.length > maxDocuments || (depth === 0 && trimmed.slice(start).trim() === "")
    ? Option.some(values)
    : Option.none()
}

const describeInput = (input: unknown): string =>
  input === null ? "null" : typeof input === "object" ? "an object" : `a ${typeof input}`

export const parse = (
  input: string | Uint8Array,
  options: Manifests.ParseOptions = {}
): Effect.Effect<ReadonlyArray<Manifests.Manifest>, ValidationError> =>
  Effect.suspend(() => {
    if (typeof input !== "string" && !(input instanceof Uint8Array)) {
      return Effect.fail(
        new ValidationError({ subject: "manifests", detail: `expected text or bytes, got ${describeInput(input)}` })
      )
    }
    const maxBytes = options.maxBytes ?? defaultMaxBytes
    if (input.length > maxBytes) {
      return Effect.fail(
        new ValidationError({
          subject: "manifests",
          detail: `are ${input.length.toLocaleString("en-US")} ` +
            `${typeof input === "string" ? "characters" : "bytes"}, ` +
            `more than maxBytes (${formatBytes(maxBytes)})`
        })
      )
    }
    const maxDocuments = options.maxDocuments ?? yaml.defaultMaxDocuments
    const maxDepth = options.maxDepth ?? yaml.defaultMaxDepth
    const text = yaml.decodeText(input)
    if (yaml.looksLikeMisreadUtf16(text)) {
      return Effect.fail(
        new ValidationError({
          subject: "manifests",
          detail: typeof input === "string"
            ? "looks like UTF-16 read as UTF-8: pass the file's bytes (a Uint8Array) instead of a string"
            : "looks like UTF-16 without a byte order mark: save it as UTF-8 (kubectl cannot read it either)"
        })
      )
    }
    const objects: Array<Manifests.Manifest> = []
    const json = parseJson(text, maxDocuments, maxDepth)
    if (Option.isSome(json)) {
      for (let i = 0; i < json.value.length; i++) {
        const value = json.value[i]
        const subject = `document[${i}]`
        if (i >= maxDocuments) {
          return Effect.fail(
            new ValidationError({
              subject,
              detail: `is one document more than maxDocuments (${maxDocuments.toLocaleString("en-US")})`
            })
          )
        }
        if (hasInfinity(value)) {
          return Effect.fail(new ValidationError({ subject, detail: "holds a number too large for JSON" }))
        }
        const problem = value === null ? undefined : collect(value, subject, objects)
        if (problem !== undefined) return Effect.fail(problem)
      }
      return Effect.succeed(objects)
    }
    const documents = yaml.parseAll(text, {
      uniqueKeys: true,
      maxDocuments,
      maxDepth,
      maxNodes: options.maxNodes
    })
    for (let i = 0; i < documents.length; i++) {
      const document = documents[i]!
      const subject = `document[${i}]`
      if (Result.isFailure(document)) {
        const where = yaml.formatPosition(document.failure)
        const detail = where === "" ? document.failure.detail : `${document.failure.detail} (${where})`
        return Effect.fail(new ValidationError({ subject, detail }))
      }
      if (document.success === undefined) continue
      const problem = collect(document.success, subject, objects)
      if (problem !== undefined) return Effect.fail(problem)
    }
    return Effect.succeed(objects)
  })

// ---------------------------------------------------------------------------------------------------------------------
// checks that need no server
// ---------------------------------------------------------------------------------------------------------------------

/** An object or reference reduced to what locates it, not yet resolved. */
interface Located {
  readonly index: number
  readonly subject: string
  readonly apiVersion: string
  readonly kind: string
  readonly name: string
  /** The namespace it names, if any (`""` counts as none). */
  readonly namespace: string | undefined
  readonly uid: string | undefined
  /** `metadata.namespace` or `namespace`, for messages. */
  readonly namespaceField: string
  /** The object itself, for `apply`. */
  readonly object: JsonObject | undefined
}

/** `objects[2] (Secret ns/web)`: a position, plus the identity as far as it is known. */
const subjectFor = (list: string, index: number, item: unknown): string => {
  const value = isObject(item) ? item : {}
  const metadata = isObject(value["metadata"]) ? value["metadata"] : value
  const kind = typeof value["kind"] === "string" ? value["kind"] : undefined
  const name = typeof metadata["name"] === "string" ? metadata["name"] : undefined
  const namespace = typeof metadata["namespace"] === "string" ? metadata["namespace"] : undefined
  if (kind === undefined && name === undefined) return `${list}[${index}]`
  const ref = { apiVersion: "", kind: kind ?? "<no kind>", name: name ?? "<no name>", namespace }
  return `${list}[${index}] (${formatRef(ref)})`
}

export const invalid = (subject: string, detail: string) => Effect.fail(new ValidationError({ subject, detail }))

/**
 * The namespace a set acts in, and whether objects may name another. As `kubectl apply -f`:
 * an object's own namespace wins and `namespace` fills in the others; only a namespace the
 * caller chose (`namespace`, as kubectl's `--namespace`) or `enforceNamespace: true` holds
 * every object to it.
 */
export interface Target {
  readonly namespace: string
  readonly enforce: boolean
  /** Where `namespace` came from, for messages. */
  readonly from: "option" | "kubeconfig"
}

/** Why an object in another namespace is refused, and the two ways out. */
const namespaceConflict = (field: string, namespace: string, target: Target): string => {
  const own = JSON.stringify(namespace)
  const set = JSON.stringify(target.namespace)
  return target.from === "option"
    ? `${field} is ${own} but the namespace option is ${set} (as kubectl refuses with --namespace): ` +
      `pass namespace: ${own}, or leave namespace out to apply each object in the namespace it names`
    : `${field} is ${own} but enforceNamespace: true holds the set to the kubeconfig's namespace ${set}: ` +
      `pass namespace: ${own}, or leave enforceNamespace out to apply each object in the namespace it names`
}

/**
 * Checks what every set operation needs: apiVersion, kind, a usable name, a usable
 * namespace, and a uid that is a string when there is one. Whether the namespace may
 * differ from an enforced target is known once the kind is resolved (see `resolveAll`).
 */
const locate = (
  list: string,
  index: number,
  item: unknown,
  form: "object" | "objectOrRef"
): Effect.Effect<Located, ValidationError> =>
  Effect.gen(function*() {
    const subject = subjectFor(list, index, item)
    if (!isObject(item)) return yield* invalid(subject, `expected an object, got ${describeJson(item)}`)
    const apiVersion = item["apiVersion"]
    const versionProblem = discovery.apiVersionProblem(apiVersion)
    if (versionProblem !== undefined) return yield* invalid(subject, `apiVersion ${versionProblem}`)
    const kind = item["kind"]
    const kindProblem = discovery.kindProblem(kind)
    if (kindProblem !== undefined) return yield* invalid(subject, `kind ${kindProblem}`)
    const isRef = form === "objectOrRef" && item["metadata"] === undefined && item["name"] !== undefined
    const metadata = isRef ? item : item["metadata"]
    const field = isRef ? "" : "metadata."
    if (!isObject(metadata)) return yield* invalid(subject, "has no metadata (an object with a name)")
    if (form === "object" && metadata["generateName"] !== undefined) {
      return yield* invalid(
        subject,
        "uses metadata.generateName, which gives a new name on every apply: set a stable metadata.name instead"
      )
    }
    const name = metadata["name"]
    if (name === undefined) return yield* invalid(subject, `has no ${field}name`)
    const problem = nameProblem(name)
    if (problem !== undefined) return yield* invalid(subject, `${field}name ${problem}`)
    const namespace = metadata["namespace"]
    if (namespace !== undefined && namespace !== "") {
      const namespaceIssue = namespaceProblem(namespace)
      if (namespaceIssue !== undefined) return yield* invalid(subject, `${field}namespace ${namespaceIssue}`)
    }
    const uid = metadata["uid"]
    if (uid !== undefined && (typeof uid !== "string" || uid === "")) {
      return yield* invalid(subject, `${field}uid must be a non-empty string`)
    }
    return {
      index,
      subject,
      apiVersion: apiVersion as string,
      kind: kind as string,
      name: name as string,
      namespace: namespace === "" ? undefined : namespace as string | undefined,
      uid: uid as string | undefined,
      namespaceField: `${field}namespace`,
      object: isRef ? undefined : item
    }
  })

const isCoreSecret = (located: Pick<Located, "apiVersion" | "kind">) =>
  located.apiVersion === "v1" && located.kind === "Secret"

/** A Secret's `data` and `stringData` must map keys to strings; the check names keys, never values. */
const checkSecret = (located: Located): Effect.Effect<void, ValidationError> => {
  const object = located.object!
  for (const field of ["data", "stringData"] as const) {
    const map = object[field]
    if (map === undefined || map === null) continue
    if (!isObject(map)) return invalid(located.subject, `${field} must be an object of strings`)
    for (const key of Object.keys(map)) {
      if (typeof map[key] !== "string") {
        return invalid(located.subject, `${field}.${key} must be a string (got ${describeJson(map[key])})`)
      }
    }
  }
  return Effect.void
}

// ---------------------------------------------------------------------------------------------------------------------
// discovery of every kind
// ---------------------------------------------------------------------------------------------------------------------

export interface Resolved extends Located {
  readonly resource: Resource.Resource<unknown>
  /** The reference of the object: the namespace filled in (none for cluster-scoped kinds), the uid as given. */
  readonly ref: ObjectRef
  /**
   * The CRD of the set that serves this kind, when the server does not serve it yet: apply waits until the server has
   * established it (kube-apiserver serves a new CRD's kind a moment after the CRD is created, not at once).
   */
  readonly awaitsCrd?: string | undefined
}

/**
 * A CRD of the set, before `item`, that serves its kind, as the Resource discovery would give once the server
 * serves it; undefined when none does.
 */
const servedByCrdOf = (
  item: Located,
  earlier: ReadonlyArray<Located>
): { readonly crd: string; readonly resource: Resource.Resource<unknown> } | undefined => {
  const slash = item.apiVersion.indexOf("/")
  if (slash === -1) return undefined
  const group = item.apiVersion.slice(0, slash)
  const version = item.apiVersion.slice(slash + 1)
  for (const other of earlier) {
    if (other.apiVersion !== "apiextensions.k8s.io/v1" || other.kind !== "CustomResourceDefinition") continue
    const spec = other.object?.["spec"]
    if (!isObject(spec) || spec["group"] !== group) continue
    const names = spec["names"]
    if (!isObject(names) || names["kind"] !== item.kind || typeof names["plural"] !== "string") continue
    const versions = spec["versions"]
    if (!Array.isArray(versions) || !versions.some((v) => isObject(v) && v["name"] === version && v["served"] !== false)) {
      continue
    }
    const resource = Resource.make({
      apiVersion: item.apiVersion,
      kind: item.kind,
      plural: names["plural"],
      namespaced: spec["scope"] !== "Cluster",
      schema: Schema.Unknown
    })
    return { crd: other.name, resource }
  }
  return undefined
}

const isEstablished = (crd: unknown): boolean => {
  const status = isObject(crd) ? crd["status"] : undefined
  const conditions = isObject(status) ? status["conditions"] : undefined
  return Array.isArray(conditions) &&
    conditions.some((c) => isObject(c) && c["type"] === "Established" && c["status"] === "True")
}

/** Waits (at most 30 s) until the server has established a CRD: then it serves the CRD's kind. */
const untilEstablished = (name: string): Effect.Effect<void, Kube.Error, Kube.Requirements> =>
  client.sendJson({
    method: "GET",
    path: `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`,
    operation: { verb: "get", kind: "CustomResourceDefinition", name }
  }).pipe(
    Effect.flatMap((crd) => isEstablished(crd) ? Effect.void : Effect.fail("pending" as const)),
    Effect.retry({ schedule: Schedule.spaced("100 millis"), times: 300, while: (e) => e === "pending" }),
    Effect.catch((e) =>
      e === "pending"
        ? invalid(`CustomResourceDefinition ${name}`, "was not established by the server within 30s")
        : Effect.fail(e)
    )
  )

/** The Discovery in context, or one for this operation alone. */
export const discoveryService = Effect.flatMap(
  Effect.serviceOption(Discovery.Discovery),
  Option.match({ onNone: () => discovery.make, onSome: Effect.succeed })
)

const resolveAll = (
  located: ReadonlyArray<Located>,
  target: Target,
  clusterScoped: boolean | undefined
): Effect.Effect<ReadonlyArray<Resolved>, Kube.Error, KubeConfig | HttpClient.HttpClient> =>
  Effect.gen(function*() {
    const service = yield* discoveryService
    const resolved: Array<Resolved> = []
    for (let i = 0; i < located.length; i++) {
      const item = located[i]!
      // a kind the server does not serve yet may be one a CRD earlier in the set serves once applied
      const fromCrd = yield* service.resolve(item.apiVersion, item.kind).pipe(
        Effect.map((resource) => ({ resource, crd: undefined as string | undefined })),
        Effect.catchIf(
          (e) => e._tag === "ValidationError" && servedByCrdOf(item, located.slice(0, i)) !== undefined,
          () => Effect.succeed(servedByCrdOf(item, located.slice(0, i))!)
        ),
        Effect.mapError((e) =>
          e._tag === "ValidationError" ? new ValidationError({ subject: item.subject, detail: e.message }) : e
        )
      )
      const resource = fromCrd.resource
      if (!resource.namespaced && clusterScoped === false) {
        return yield* invalid(
          item.subject,
          `${item.kind} is cluster-scoped and clusterScoped is false: leave clusterScoped out (or true) to act on ` +
            "cluster-scoped objects, or take it out of the set"
        )
      }
      // Known once the kind is: a cluster-scoped object's metadata.namespace means nothing (the API server
      // clears it, and kubectl's --namespace does not conflict with it).
      if (resource.namespaced && target.enforce && item.namespace !== undefined && item.namespace !== target.namespace) {
        return yield* invalid(item.subject, namespaceConflict(item.namespaceField, item.namespace, target))
      }
      const ref: ObjectRef = {
        apiVersion: item.apiVersion,
        kind: item.kind,
        name: item.name,
        ...(resource.namespaced ? { namespace: item.namespace ?? target.namespace } : {}),
        ...(item.uid !== undefined ? { uid: item.uid } : {})
      }
      resolved.push({ ...item, resource, ref, ...(fromCrd.crd === undefined ? {} : { awaitsCrd: fromCrd.crd }) })
    }
    return resolved
  })

/**
 * The namespace a set acts in: the one given (checked), else the KubeConfig's; enforced when
 * given, unless `enforceNamespace` says otherwise.
 */
const targetNamespace = (options: Manifests.Options): Effect.Effect<Target, ValidationError, KubeConfig> =>
  Effect.gen(function*() {
    yield* checkOptionalBoolean(options.enforceNamespace, "enforceNamespace")
    if (options.namespace !== undefined) {
      const namespace = yield* checkNamespace(options.namespace, "namespace")
      return { namespace, enforce: options.enforceNamespace ?? true, from: "option" }
    }
    const config = yield* KubeConfig
    const namespace = yield* checkNamespace(config.namespace, "namespace (from the kubeconfig)")
    return { namespace, enforce: options.enforceNamespace === true, from: "kubeconfig" }
  })

/**
 * The order a set is applied in (and deleted in, reversed): Namespaces first, then the other
 * cluster-scoped objects (CRDs, cluster roles...), then the namespaced ones, each group in
 * the order given, so a file that creates its own namespace works wherever the Namespace is.
 */
const applyRank = (item: Resolved): number =>
  item.resource.namespaced ? 2 : item.resource.group === "" && item.kind === "Namespace" ? 0 : 1

export const inApplyOrder = (resolved: ReadonlyArray<Resolved>): ReadonlyArray<Resolved> =>
  resolved.map((item, at) => ({ item, at, rank: applyRank(item) }))
    .sort((a, b) => a.rank - b.rank || a.at - b.at)
    .map(({ item }) => item)

export const checkOptionalBoolean = (value: unknown, subject: string): Effect.Effect<void, ValidationError> =>
  value === undefined || typeof value === "boolean" ? Effect.void : invalid(subject, "must be true or false")

const toArray = <A>(items: Iterable<A>, subject: string): Effect.Effect<ReadonlyArray<A>, ValidationError> =>
  items !== null && typeof items === "object" && Symbol.iterator in items
    ? Effect.succeed(Array.from(items))
    : invalid(subject, `expected a list, got ${describeJson(items)}`)

/** Locates and resolves every reference of a get or delete, before any of them is sent. */
export const prepareRefs = (
  refs: Iterable<ObjectRef | Manifests.Applicable>,
  options: Manifests.Options
) =>
  Effect.gen(function*() {
    yield* checkOptionalBoolean(options.clusterScoped, "clusterScoped")
    const items = yield* toArray(refs, "refs")
    const target = yield* targetNamespace(options)
    const located: Array<Located> = []
    for (let i = 0; i < items.length; i++) located.push(yield* locate("refs", i, items[i], "objectOrRef"))
    return yield* resolveAll(located, target, options.clusterScoped)
  })

/** Where the operations on a resolved object act. */
export const targetOf = (item: Resolved) => ({ resource: item.resource, namespace: item.ref.namespace })

// ---------------------------------------------------------------------------------------------------------------------
// apply
// ---------------------------------------------------------------------------------------------------------------------

const serverManagedMetadata = [
  "uid",
  "resourceVersion",
  "managedFields",
  "creationTimestamp",
  "generation",
  "deletionTimestamp",
  "deletionGracePeriodSeconds",
  "selfLink"
] as const

/** The copy that is applied: no server-managed fields, the namespace filled in, a Secret's stringData as data. */
export const applyBody = (item: Resolved): JsonObject => {
  const { status: _status, ...object } = item.object!
  const metadata: JsonObject = { ...(object["metadata"] as JsonObject) }
  for (const field of serverManagedMetadata) delete metadata[field]
  if (item.ref.namespace !== undefined) metadata["namespace"] = item.ref.namespace
  else delete metadata["namespace"]
  const body: JsonObject = { ...object, metadata }
  if (isCoreSecret(item) && isObject(body["stringData"])) {
    const data: Record<string, string> = { ...(isObject(body["data"]) ? body["data"] as Record<string, string> : {}) }
    const stringData = body["stringData"] as Record<string, string>
    for (const key of Object.keys(stringData)) data[key] = Base64.encode(stringData[key]!)
    delete body["stringData"]
    body["data"] = data
  }
  return body
}

export const identityKey = (item: Pick<Resolved, "resource" | "kind" | "ref" | "name">) =>
  `${item.resource.group}/${item.kind}/${item.ref.namespace ?? ""}/${item.name}`

export const uidOf = (object: unknown): string | undefined => {
  const metadata = isObject(object) ? object["metadata"] : undefined
  const uid = isObject(metadata) ? metadata["uid"] : undefined
  return typeof uid === "string" && uid !== "" ? uid : undefined
}

/** A failure of one object, reduced to what RefFailure holds. */
export const asRefError = (error: Kube.Error): RefFailure["error"] => error

/** A set checked and resolved for apply: every object with its kind, and the copy that is sent. */
export interface PreparedApply {
  readonly fieldManager: string
  /** The set's namespace: the option's, else the kubeconfig's (an ApplySet's parent goes there by default). */
  readonly target: string
  /** In the order they are applied ({@link inApplyOrder}). */
  readonly resolved: ReadonlyArray<Resolved>
  readonly bodies: ReadonlyArray<JsonObject>
}

/** Every check of an apply, and discovery of every kind, before anything is sent that changes anything. */
export const prepareApply = (
  objects: Iterable<Manifests.Applicable>,
  options: Manifests.ApplyOptions | Manifests.ApplySetOptions
): Effect.Effect<PreparedApply, Kube.Error, Kube.Requirements> =>
  Effect.gen(function*() {
    const fieldManager = options.fieldManager ?? "effect-kube"
    if (typeof fieldManager !== "string" || fieldManager.trim() === "") {
      return yield* invalid("fieldManager", "must be a non-empty string")
    }
    yield* checkOptionalBoolean(options.force, "force")
    yield* checkOptionalBoolean(options.dryRun, "dryRun")
    yield* checkOptionalBoolean(options.clusterScoped, "clusterScoped")
    const items = yield* toArray(objects, "objects")
    const target = yield* targetNamespace(options)
    const located: Array<Located> = []
    for (let i = 0; i < items.length; i++) {
      const item = yield* locate("objects", i, items[i], "object")
      if (isCoreSecret(item)) yield* checkSecret(item)
      located.push(item)
    }
    const resolved = inApplyOrder(yield* resolveAll(located, target, options.clusterScoped))
    const seen = new Map<string, string>()
    for (const item of resolved) {
      const key = identityKey(item)
      const earlier = seen.get(key)
      if (earlier !== undefined) return yield* invalid(item.subject, `is the same object as ${earlier}`)
      seen.set(key, item.subject)
    }
    return { fieldManager, target: target.namespace, resolved, bodies: resolved.map(applyBody) }
  })

/** The server-side apply of one object of a set: the object answered and whether it was created (201). */
export const applyOne = (
  item: Resolved,
  body: JsonObject,
  options: { readonly fieldManager: string; readonly force?: boolean | undefined; readonly dryRun?: boolean | undefined }
): Effect.Effect<{ readonly object: unknown; readonly created: boolean }, Kube.Error, Kube.Requirements> => {
  const spec = request.patch(
    item.resource,
    item.ref.namespace,
    item.name,
    Patch.apply(body, { fieldManager: options.fieldManager, force: options.force === true }),
    { dryRun: options.dryRun, fieldManager: options.fieldManager }
  )
  const sent = Effect.map(client.sendJsonWithStatus(spec), ({ json, status }) => ({ object: json, created: status === 201 }))
  return item.awaitsCrd === undefined || options.dryRun === true ? sent : Effect.andThen(untilEstablished(item.awaitsCrd), sent)
}

/** The reference `apply` answers for an object: as given, without a uid given, with the uid the server answered. */
export const appliedRef = (item: Resolved, object: unknown): ObjectRef => {
  const { uid: _given, ...ref } = item.ref
  const uid = uidOf(object)
  return uid === undefined ? ref : { ...ref, uid }
}

export const apply = (
  objects: Iterable<Manifests.Applicable>,
  options: Manifests.ApplyOptions = {}
): Effect.Effect<ReadonlyArray<ObjectRef>, ApplyFailed | Kube.Error, Kube.Requirements> =>
  Effect.gen(function*() {
    if ((options as { readonly prune?: unknown }).prune !== undefined) {
      return yield* invalid("prune", "needs an applySet: only the members of an ApplySet can be told from other objects")
    }
    const { bodies, fieldManager, resolved } = yield* prepareApply(objects, options)
    const applied: Array<ObjectRef> = []
    for (let i = 0; i < resolved.length; i++) {
      const item = resolved[i]!
      const result = yield* Effect.result(applyOne(item, bodies[i]!, { ...options, fieldManager }))
      if (Result.isFailure(result)) {
        const { uid: _given, ...ref } = item.ref
        return yield* new ApplyFailed({ applied, failed: { ref, error: asRefError(result.failure) } })
      }
      applied.push(appliedRef(item, result.success.object))
    }
    return applied
  })

// ---------------------------------------------------------------------------------------------------------------------
// get
// ---------------------------------------------------------------------------------------------------------------------

export const get = (
  refs: Iterable<ObjectRef | Manifests.Applicable>,
  options: Manifests.Options = {}
): Effect.Effect<ReadonlyArray<Manifests.Manifest>, Kube.Error, Kube.Requirements> =>
  Effect.gen(function*() {
    const resolved = yield* prepareRefs(refs, options)
    return yield* Effect.forEach(resolved, (item) => {
      const spec = request.get(item.resource, item.ref.namespace, item.name)
      return Effect.flatMap(
        client.sendJson(spec),
        (json) => decodeObject(item.resource, json, spec) as Effect.Effect<Manifests.Manifest, ValidationError>
      )
    })
  })

// ---------------------------------------------------------------------------------------------------------------------
// delete
// ---------------------------------------------------------------------------------------------------------------------

const propagationPolicies: ReadonlySet<unknown> = new Set(["Foreground", "Background", "Orphan"])

/** The propagation policy of a delete or a prune: the one given (checked), else `"Background"`. */
export const checkPropagationPolicy = (
  given: Manifests.DeleteOptions["propagationPolicy"]
): Effect.Effect<"Foreground" | "Background" | "Orphan", ValidationError> => {
  const policy = given ?? "Background"
  return propagationPolicies.has(policy)
    ? Effect.succeed(policy)
    : invalid("propagationPolicy", `must be Foreground, Background or Orphan (got ${String(policy)})`)
}

export const del = (
  refs: Iterable<ObjectRef | Manifests.Applicable>,
  options: Manifests.DeleteOptions = {}
): Effect.Effect<ReadonlyArray<ObjectRef>, DeleteFailed | Kube.Error, Kube.Requirements> =>
  Effect.gen(function*() {
    const propagationPolicy = yield* checkPropagationPolicy(options.propagationPolicy)
    yield* checkOptionalBoolean(options.dryRun, "dryRun")
    const resolved = inApplyOrder(yield* prepareRefs(refs, options))

    const deleted: Array<ObjectRef> = []
    const failures: Array<RefFailure> = []
    for (let i = resolved.length - 1; i >= 0; i--) {
      const item = resolved[i]!
      const result = yield* Effect.result(
        operations.del(targetOf(item), item.name, {
          propagationPolicy,
          dryRun: options.dryRun,
          ...(item.uid !== undefined ? { preconditions: { uid: item.uid } } : {})
        })
      )
      // `false` (the object was already gone) counts as deleted.
      if (Result.isFailure(result)) failures.push({ ref: item.ref, error: asRefError(result.failure) })
      else deleted.push(item.ref)
    }
    if (failures.length > 0) return yield* new DeleteFailed({ deleted, failures })
    return deleted
  })

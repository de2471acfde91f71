/**
 * What the client does with what the server warns about, as client-go's
 * WarningHandler: the `Warning: 299 - "..."` headers of any answer (deprecated API
 * versions, unknown fields under `fieldValidation: "Warn"`), the objects an
 * `invalid: "skip"` list or watch dropped because they did not fit their Schema, and
 * the objects of a built-in kind kept although they do not fit (a newer server's).
 *
 * Without a `Warnings` service in context they are logged with `Effect.logWarning`.
 * Provide `layerCollect` to gather them, `layerIgnore` to drop them, `layerFail` to
 * turn them into failures, or `layer(handler)` for your own.
 *
 * @example
 * ```ts
 * import { Effect, Layer } from "effect"
 * import { ConfigMaps, Kube, Warnings } from "effect-kube"
 * import { FakeCluster } from "@effect-kube/testing"
 *
 * const program = Effect.gen(function* () {
 *   const fake = yield* FakeCluster.FakeCluster
 *   fake.warnNext({ text: "v1 ConfigMap is deprecated" }) // as a server would say of an old API version
 *   yield* Kube.api(ConfigMaps).list()
 *   const collected = yield* Warnings.Collected
 *   const warnings = yield* collected.warnings
 *   assert.deepStrictEqual(warnings.map((w) => w._tag), ["HeaderWarning"])
 * })
 *
 * Effect.runPromise(program.pipe(Effect.provide(Layer.merge(FakeCluster.layer(), Warnings.layerCollect))))
 * ```
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import { ServerWarning, type ValidationError } from "./Errors.js"

/**
 * A warning the server sent in a `Warning` header (code 299), on the answer to
 * `method` `path`.
 *
 * @since 0.1.0
 * @category models
 */
export interface HeaderWarning {
  readonly _tag: "HeaderWarning"
  readonly method: string
  /** The path with its query. */
  readonly path: string
  readonly text: string
}

/**
 * An object left out of a list or watch (`invalid: "skip"`) because it did not fit its
 * Schema: the error names the object and what is wrong.
 *
 * @since 0.1.0
 * @category models
 */
export interface InvalidObject {
  readonly _tag: "InvalidObject"
  readonly method: string
  readonly path: string
  readonly text: string
  readonly error: ValidationError
}

/**
 * An object of a built-in kind delivered as the server sent it although it does not
 * fit the kind's Schema below its metadata: what a server newer than the spec sends (a
 * field the spec calls required left out, a value of a shape the spec does not know).
 * The error names the object and the paths that do not fit, never their values; the
 * text is the error's message.
 *
 * @since 0.1.0
 * @category models
 */
export interface MismatchedObject {
  readonly _tag: "MismatchedObject"
  readonly method: string
  /** The path with its query. */
  readonly path: string
  readonly text: string
  readonly error: ValidationError
}

/**
 * What the service is told about.
 *
 * @since 0.1.0
 * @category models
 */
export type Warning = HeaderWarning | InvalidObject | MismatchedObject

/**
 * What a handler may fail with: the failure then ends the operation that got the
 * warning.
 *
 * @since 0.1.0
 * @category models
 */
export type Failure = ServerWarning | ValidationError

/**
 * The handler of warnings.
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  readonly report: (warning: Warning) => Effect.Effect<void, Failure>
}

/**
 * The `Warnings` service tag; when absent, warnings are logged.
 *
 * @since 0.1.0
 * @category tags
 */
export class Warnings extends Context.Service<Warnings, Service>()("effect-kube/Warnings") {}

/**
 * Logs a warning with `Effect.logWarning` (what happens when no service is provided).
 *
 * @since 0.1.0
 * @category constructors
 */
export const log = (warning: Warning): Effect.Effect<void> =>
  Effect.logWarning(`k8s: ${warning.method} ${warning.path}: ${warning.text}`).pipe(
    Effect.annotateLogs({ "k8s.warning": warning._tag, "k8s.method": warning.method, "k8s.path": warning.path })
  )

/**
 * A handler of your own, e.g. to count warnings in a metric.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (report: (warning: Warning) => Effect.Effect<void, Failure>): Layer.Layer<Warnings> =>
  Layer.succeed(Warnings, { report })

/**
 * Logs warnings with `Effect.logWarning` (the default).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerLog: Layer.Layer<Warnings> = layer(log)

/**
 * Drops warnings.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerIgnore: Layer.Layer<Warnings> = layer(() => Effect.void)

/**
 * Turns every warning into a failure of the operation that got it: a header into a
 * `ServerWarning`, a skipped or a mismatched object into its `ValidationError`. The
 * request was carried out all the same (a warned write is written).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerFail: Layer.Layer<Warnings> = layer((warning) =>
  warning._tag === "HeaderWarning"
    ? Effect.fail(new ServerWarning({ method: warning.method, path: warning.path, text: warning.text }))
    : Effect.fail(warning.error)
)

/**
 * The warnings gathered by `layerCollect`.
 *
 * @since 0.1.0
 * @category models
 */
export interface Collector {
  /** Every warning so far, oldest first. */
  readonly warnings: Effect.Effect<ReadonlyArray<Warning>>
  readonly clear: Effect.Effect<void>
}

/**
 * The tag of the warnings gathered by `layerCollect`.
 *
 * @since 0.1.0
 * @category tags
 */
export class Collected extends Context.Service<Collected, Collector>()("effect-kube/Warnings/Collected") {}

/**
 * Gathers warnings (read them from `Collected`) instead of logging them.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerCollect: Layer.Layer<Warnings | Collected> = Layer.effectContext(
  Effect.map(Ref.make<ReadonlyArray<Warning>>([]), (ref) =>
    Context.make(Warnings, { report: (warning) => Ref.update(ref, (all) => [...all, warning]) }).pipe(
      Context.add(Collected, { warnings: Ref.get(ref), clear: Ref.set(ref, []) })
    ))
)

/**
 * OpenShift Templates (`template.openshift.io/v1`): render a stored Template with
 * parameter values, and apply, read or delete the objects it renders as one set.
 *
 * Every parameter the server would otherwise generate must be given a value, so that
 * the same name and parameters always render the same objects: a delete after a
 * restart needs nothing but what the apply was given.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { NodeKube, Template } from "effect-kube"
 *
 * const parameters = { NAME: "run-42", REPLICAS: 2, DEBUG: false }
 *
 * const program = Effect.gen(function* () {
 *   const refs = yield* Template.apply("batch-job", parameters, { namespace: "batch", templateNamespace: "templates" })
 *   // ... later, from a fresh process:
 *   yield* Template.delete("batch-job", parameters, { namespace: "batch", templateNamespace: "templates" })
 *   return refs
 * })
 *
 * // call main() to run it against the cluster your kubeconfig names
 * const main = () => Effect.runPromise(program.pipe(Effect.provide(NodeKube.layer)))
 * ```
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import type {
  ApplyFailed,
  ApplySetError,
  DeleteFailed,
  NotReady,
  ObjectReadiness,
  ObjectRef,
  PruneFailed,
  ValidationError
} from "./Errors.js"
import * as internal from "./internal/manifests/template.js"
import type * as Kube from "./Kube.js"
import * as Manifests from "./Manifests.js"

/**
 * Parameter values by name: text as given, booleans as `true`/`false`, finite numbers
 * as their decimal text.
 *
 * @since 0.1.0
 * @category models
 */
export type Parameters = Readonly<Record<string, string | number | boolean>>

/**
 * Where to render: `namespace` (default: the KubeConfig's) is where the objects go;
 * the Template is read from `templateNamespace` (default: `namespace`).
 *
 * @since 0.1.0
 * @category models
 */
export interface ProcessOptions {
  readonly namespace?: string | undefined
  readonly templateNamespace?: string | undefined
}

/**
 * Renders Template `name` with `parameters` and returns its objects, without creating
 * them. Fails with a `ValidationError` (naming the parameter, never its value) when a
 * value is null or not a finite number, a name is not a parameter of the template, a
 * parameter with a generator or a required one is left without a value.
 *
 * @since 0.1.0
 * @category operations
 */
export const process: (
  name: string,
  parameters: Parameters,
  options?: ProcessOptions
) => Effect.Effect<ReadonlyArray<Manifests.Manifest>, Kube.Error, Kube.Requirements> = internal.process

/**
 * Renders a Template you hold (read from a file with `Manifests.parse`, say) here, with no
 * server: what `oc process --local` does, for a cluster that does not serve OpenShift's
 * template API. The same rules as `process` (every value text, a boolean or a finite
 * number; no parameter left to a generator; required ones given), then the same rendering
 * as `processedtemplates`: `${NAME}` in every string, `${{NAME}}` as a whole JSON value, an
 * object's hard-coded namespace dropped, the template's labels on every object. Apply what
 * it returns with `Manifests.apply`.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Manifests, Template } from "effect-kube"
 *
 * const template = {
 *   apiVersion: "template.openshift.io/v1",
 *   kind: "Template",
 *   metadata: { name: "settings" },
 *   parameters: [{ name: "COLOR", required: true }, { name: "SIZE", value: "2" }],
 *   objects: [{ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "settings-${COLOR}" }, data: { size: "${SIZE}" } }]
 * }
 *
 * const objects = Effect.runSync(Template.render(template, { COLOR: "blue" }))
 * console.log(JSON.stringify(objects))
 * // [{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"settings-blue"},"data":{"size":"2"}}]
 *
 * // then, against a cluster: Manifests.apply(objects, { namespace: "demo" })
 * ```
 * @since 0.2.0
 * @category operations
 */
export const render: (
  template: Manifests.Manifest,
  parameters: Parameters
) => Effect.Effect<ReadonlyArray<Manifests.Manifest>, ValidationError> = internal.render

const processThen = <A, E>(
  name: string,
  parameters: Parameters,
  options: ProcessOptions,
  then: (objects: ReadonlyArray<Manifests.Manifest>) => Effect.Effect<A, E, Kube.Requirements>
) =>
  Effect.flatMap(
    internal.process(name, parameters, { namespace: options.namespace, templateNamespace: options.templateNamespace }),
    then
  )

/**
 * Renders the template, then `Manifests.apply`s its objects in `namespace`. With an
 * `applySet` the objects are an ApplySet, and with `prune: true` a later apply of the
 * template rendering fewer objects (other parameters, a new template version) deletes
 * those it no longer renders: a scheduler that re-processes a template keeps the cluster
 * in step with it.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Template } from "effect-kube"
 *
 * const run = Template.apply("batch-job", { NAME: "run-42", WORKERS: 2 }, {
 *   namespace: "batch",
 *   applySet: { name: "run-42" },
 *   prune: true
 * })
 * ```
 * @since 0.1.0
 * @category operations
 */
export const apply: {
  (
    name: string,
    parameters: Parameters,
    options: ProcessOptions & Manifests.ApplySetOptions
  ): Effect.Effect<
    Manifests.ApplySetResult,
    ApplyFailed | PruneFailed | ApplySetError | Kube.Error,
    Kube.Requirements
  >
  (
    name: string,
    parameters: Parameters,
    options?: ProcessOptions & Manifests.ApplyOptions
  ): Effect.Effect<ReadonlyArray<ObjectRef>, ApplyFailed | Kube.Error, Kube.Requirements>
} = ((name: string, parameters: Parameters, options: ProcessOptions & Manifests.ApplyOptions = {}) =>
  processThen(name, parameters, options, (objects) => Manifests.apply(objects, options))) as typeof apply

/**
 * Renders the template, then `Manifests.diff`s its objects: what an apply with the same
 * options would create, change and prune.
 *
 * @since 0.2.0
 * @category operations
 */
export const diff = (
  name: string,
  parameters: Parameters,
  options: ProcessOptions & Manifests.DiffOptions = {}
): Effect.Effect<ReadonlyArray<Manifests.ObjectDiff>, ApplySetError | Kube.Error, Kube.Requirements> =>
  processThen(name, parameters, options, (objects) => Manifests.diff(objects, options))

/**
 * Renders the template, then says how ready each object it names is (`Manifests.status`).
 *
 * @since 0.2.0
 * @category readiness
 */
export const status = (
  name: string,
  parameters: Parameters,
  options: ProcessOptions & Manifests.Options = {}
): Effect.Effect<ReadonlyArray<ObjectReadiness>, Kube.Error, Kube.Requirements> =>
  processThen(name, parameters, options, (objects) => Manifests.status(objects, options))

/**
 * Renders the template, then waits until every object it names is Current
 * (`Manifests.waitReady`).
 *
 * @since 0.2.0
 * @category readiness
 */
export const waitReady = (
  name: string,
  parameters: Parameters,
  options: ProcessOptions & Manifests.WaitOptions = {}
): Effect.Effect<ReadonlyArray<ObjectReadiness>, NotReady | Kube.Error, Kube.Requirements> =>
  processThen(name, parameters, options, (objects) => Manifests.waitReady(objects, options))

/**
 * Renders the template, then `Manifests.get`s the live objects it names.
 *
 * @since 0.1.0
 * @category operations
 */
export const get = (
  name: string,
  parameters: Parameters,
  options: ProcessOptions & Manifests.Options = {}
): Effect.Effect<ReadonlyArray<Manifests.Manifest>, Kube.Error, Kube.Requirements> =>
  processThen(name, parameters, options, (objects) => Manifests.get(objects, options))

const del = (
  name: string,
  parameters: Parameters,
  options: ProcessOptions & Manifests.DeleteOptions = {}
): Effect.Effect<ReadonlyArray<ObjectRef>, DeleteFailed | Kube.Error, Kube.Requirements> =>
  processThen(name, parameters, options, (objects) => Manifests.delete(objects, options))

export {
  /**
   * Renders the template, then `Manifests.delete`s the objects it names (in reverse
   * order). The same name and parameters as the apply are all it needs.
   *
   * @since 0.1.0
   * @category operations
   */
  del as delete
}

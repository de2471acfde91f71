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
import type { ApplyFailed, DeleteFailed, ObjectRef } from "./Errors.js"
import * as internal from "./internal/template.js"
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
 * Renders the template, then `Manifests.apply`s its objects in `namespace`.
 *
 * @since 0.1.0
 * @category operations
 */
export const apply = (
  name: string,
  parameters: Parameters,
  options: ProcessOptions & Manifests.ApplyOptions = {}
): Effect.Effect<ReadonlyArray<ObjectRef>, ApplyFailed | Kube.Error, Kube.Requirements> =>
  processThen(name, parameters, options, (objects) => Manifests.apply(objects, options))

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

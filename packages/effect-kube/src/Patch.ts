/**
 * The four ways to patch an object, each sent with its own content type.
 *
 * @example
 * ```ts
 * import { Kube, Patch, Deployments } from "effect-kube"
 *
 * Kube.api(Deployments).patch("web", Patch.merge({ spec: { replicas: 3 } }))
 * Kube.api(Deployments).patch("web", Patch.json([{ op: "replace", path: "/spec/replicas", value: 3 }]))
 * ```
 * @since 0.1.0
 */

/**
 * One RFC 6902 operation.
 *
 * @since 0.1.0
 * @category models
 */
export type JsonPatchOperation =
  | { readonly op: "add" | "replace" | "test"; readonly path: string; readonly value: unknown }
  | { readonly op: "remove"; readonly path: string }
  | { readonly op: "move" | "copy"; readonly from: string; readonly path: string }

/**
 * A patch and how the server should read it.
 *
 * @since 0.1.0
 * @category models
 */
export type Patch =
  | { readonly _tag: "Merge"; readonly body: unknown }
  | { readonly _tag: "Json"; readonly operations: ReadonlyArray<JsonPatchOperation> }
  | { readonly _tag: "Strategic"; readonly body: unknown }
  | {
    readonly _tag: "Apply"
    readonly body: unknown
    /** When undefined, the `fieldManager` of the call's options is used. */
    readonly fieldManager: string | undefined
    readonly force: boolean
  }

/**
 * An RFC 7386 JSON merge patch (`application/merge-patch+json`): objects merge, `null`
 * removes a field, lists are replaced whole.
 *
 * @since 0.1.0
 * @category constructors
 */
export const merge = (body: unknown): Patch => ({ _tag: "Merge", body })

/**
 * An RFC 6902 JSON patch (`application/json-patch+json`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const json = (operations: ReadonlyArray<JsonPatchOperation>): Patch => ({ _tag: "Json", operations })

/**
 * A strategic merge patch (`application/strategic-merge-patch+json`): like a merge
 * patch, but lists such as containers merge by their key. Built-in kinds only.
 *
 * @since 0.1.0
 * @category constructors
 */
export const strategic = (body: unknown): Patch => ({ _tag: "Strategic", body })

/**
 * A server-side apply patch (`application/apply-patch+yaml`): the fields the field
 * manager wants to own. With `force`, fields owned by other managers are taken over
 * instead of failing with a 409 Conflict.
 *
 * The field manager is given here or in the options of `patch` (as kube-rs's
 * `PatchParams::apply`); one of the two is required, and two different ones are
 * refused with a ValidationError.
 *
 * @example
 * ```ts
 * import { Deployments, Kube, Patch } from "effect-kube"
 *
 * const deployments = Kube.api(Deployments, { namespace: "default" })
 * // only the fields this manager owns
 * const desired = { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "web" }, spec: { replicas: 3 } }
 *
 * deployments.patch("web", Patch.apply(desired, { force: true }), { fieldManager: "my-controller" })
 * deployments.patch("web", Patch.apply(desired, { fieldManager: "my-controller" }))
 * ```
 * @since 0.1.0
 * @category constructors
 */
export const apply = (
  body: unknown,
  options?: { readonly fieldManager?: string | undefined; readonly force?: boolean | undefined }
): Patch => ({
  _tag: "Apply",
  body,
  fieldManager: options?.fieldManager,
  force: options?.force ?? false
})

/**
 * The content type a patch is sent with.
 *
 * @since 0.1.0
 * @category getters
 */
export const contentType = (patch: Patch): string => {
  switch (patch._tag) {
    case "Merge":
      return "application/merge-patch+json"
    case "Json":
      return "application/json-patch+json"
    case "Strategic":
      return "application/strategic-merge-patch+json"
    case "Apply":
      return "application/apply-patch+yaml"
  }
}

/**
 * The body a patch is sent with (JSON; YAML is a superset, so apply patches are JSON too).
 *
 * @since 0.1.0
 * @category getters
 */
export const bodyText = (patch: Patch): string => JSON.stringify(patch._tag === "Json" ? patch.operations : patch.body)

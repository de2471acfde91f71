/**
 * `kubectl rollout restart` for Deployments, DaemonSets and StatefulSets: the pod template
 * gets a `kubectl.kubernetes.io/restartedAt` annotation (the time, RFC 3339), so that the
 * controller rolls every pod, as kubectl does it: a strategic merge patch of the template's
 * annotations, refused for a paused Deployment.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { ValidationError } from "../../Errors.js"
import type * as Kube from "../../Kube.js"
import * as Patch from "../../Patch.js"
import { describe, isObject } from "../codec/codec.js"

const restartable = new Set(["deployments", "daemonsets", "statefulsets"])

/** The annotation kubectl writes, read by nothing but changing the template. */
export const restartedAt = "kubectl.kubernetes.io/restartedAt"

export const rolloutRestart = <A>(
  api: Pick<Kube.Operations<A>, "resource" | "namespace" | "getOrFail" | "patch">,
  name: string
): Effect.Effect<A, Kube.Error, Kube.Requirements> =>
  Effect.gen(function*() {
    const { resource } = api
    if (resource.group !== "apps" || !restartable.has(resource.plural)) {
      return yield* new ValidationError({
        subject: `rollout restart of ${describe(resource, api.namespace, name)}`,
        detail: "only Deployments, DaemonSets and StatefulSets (apps) restart their pods by a rollout"
      })
    }
    const current = yield* api.getOrFail(name)
    const spec = isObject(current) && isObject(current["spec"]) ? current["spec"] : {}
    if (resource.plural === "deployments" && spec["paused"] === true) {
      return yield* new ValidationError({
        subject: `rollout restart of ${describe(resource, api.namespace, name)}`,
        detail: "the Deployment is paused: resume it (spec.paused: false) first, as kubectl asks"
      })
    }
    const now = new Date(yield* Clock.currentTimeMillis).toISOString().replace(/\.\d{3}Z$/, "Z")
    return yield* api.patch(
      name,
      Patch.strategic({ spec: { template: { metadata: { annotations: { [restartedAt]: now } } } } })
    )
  })

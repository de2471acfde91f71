/**
 * Waiting for a condition on one object: a `get`, then (when the condition does not
 * hold yet) a watcher on that name that starts from the object's resourceVersion, so a
 * change made between the two is delivered by the watch. When the object is absent, or
 * its resourceVersion is too old to watch from (410), the watcher lists it by name
 * and tests the listing, whose resourceVersion is current.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { WaitTimeout } from "../Errors.js"
import type * as Kube from "../Kube.js"
import type * as Watcher from "../Watcher.js"
import * as Resource from "../Resource.js"
import { decodeObject, describe, resolveNamespace, type Target } from "./api.js"
import * as client from "./client.js"
import { checkName } from "./validate.js"
import * as watcher from "./watcher.js"

const resourceVersionOf = (object: unknown): string | undefined => {
  const metadata = typeof object === "object" && object !== null
    ? (object as { readonly metadata?: { readonly resourceVersion?: unknown } }).metadata
    : undefined
  const rv = metadata?.resourceVersion
  return typeof rv === "string" && rv !== "" ? rv : undefined
}

/** `waitFor` on a bound api. */
export const waitFor = <A, I>(
  target: Target<A, I>,
  name: string,
  condition: Kube.Condition<A>,
  options: { readonly timeout: Duration.DurationInput } & Watcher.Options
): Effect.Effect<A | undefined, Kube.Error | WaitTimeout, Kube.Requirements> =>
  Effect.gen(function*() {
    const namespace = yield* resolveNamespace(target)
    yield* checkName(name, `${describe(target.resource, namespace, String(name))}: name`)
    const timeout = Duration.decode(options.timeout)
    const wait = Effect.gen(function*() {
      const spec: client.Spec = { method: "GET", path: Resource.objectPath(target.resource, namespace, name) }
      const json = yield* client.sendJsonOption(spec)
      const found = Option.isSome(json) ? yield* decodeObject(target.resource, json.value, spec) : undefined
      if (condition.test(found)) return found
      const resourceVersion = resourceVersionOf(found)
      // Without a resourceVersion to start from, the watcher lists the name first.
      const start = resourceVersion === undefined ? undefined : { resourceVersion }
      let listed: A | undefined = undefined
      const met = yield* watcher.make(target.resource, namespace, {
        ...options,
        labelSelector: undefined,
        fieldSelector: `metadata.name=${name}`
      }, start).pipe(
        Stream.filterMap((event): Option.Option<A | undefined> => {
          switch (event._tag) {
            case "Init":
              listed = undefined
              return Option.none()
            case "InitApply":
              listed = event.object
              return Option.none()
            case "InitDone":
              return condition.test(listed) ? Option.some(listed) : Option.none()
            case "Apply":
              return condition.test(event.object) ? Option.some(event.object) : Option.none()
            case "Delete":
              return condition.test(undefined) ? Option.some(undefined) : Option.none()
          }
        }),
        Stream.runHead
      )
      // The watcher never ends on its own; an end here means it was cut short.
      return Option.getOrUndefined(met)
    })
    return yield* Effect.timeoutFail(wait, {
      duration: timeout,
      onTimeout: () =>
        new WaitTimeout({
          kind: target.resource.kind,
          name,
          namespace,
          condition: condition.name,
          timeout: Duration.format(timeout)
        })
    })
  })

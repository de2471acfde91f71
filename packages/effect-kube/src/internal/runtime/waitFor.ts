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
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import { WaitTimeout } from "../../Errors.js"
import type * as Kube from "../../Kube.js"
import type * as Watcher from "../../Watcher.js"
import { resourceVersionOf } from "../codec/codec.js"
import { get } from "../api/operations.js"
import { resolveNamed, type Target } from "../request/inputChecks.js"
import * as watcher from "./watcher.js"

/** A Condition, or a plain predicate (named "predicate" in the timeout error). */
const asCondition = <A>(
  condition: Kube.Condition<A> | ((object: A | undefined) => boolean)
): Kube.Condition<A> =>
  typeof condition === "function" ? { name: "predicate", test: condition } : condition

/** `waitFor` on a bound api: the object that satisfied the condition, `None` when its absence did. */
export const waitFor = <A, I>(
  target: Target<A, I>,
  name: string,
  condition: Kube.Condition<A> | ((object: A | undefined) => boolean),
  options: { readonly timeout: Duration.Input } & Watcher.Options
): Effect.Effect<Option.Option<A>, Kube.Error | WaitTimeout, Kube.Requirements> =>
  Effect.gen(function*() {
    const { name: conditionName, test } = asCondition(condition)
    const namespace = yield* resolveNamed(target, name)
    const timeout = Duration.fromInputUnsafe(options.timeout)
    const wait = Effect.gen(function*() {
      const found = Option.getOrUndefined(yield* get(target, name))
      if (test(found)) return Option.fromNullishOr(found)
      const resourceVersion = resourceVersionOf(found)
      // Without a resourceVersion to start from, the watcher lists the name first.
      const start = resourceVersion === undefined ? undefined : { resourceVersion }
      let listed: A | undefined = undefined
      const met = yield* watcher.make(target, namespace, {
        ...options,
        labelSelector: undefined,
        fieldSelector: `metadata.name=${name}`,
        // one object: a list by name costs what a watch-list does, and keeps waitFor's requests as documented
        watchList: false
      }, start).pipe(
        Stream.filterMap((event): Result.Result<Option.Option<A>, void> => {
          switch (event._tag) {
            case "Init":
              listed = undefined
              return Result.failVoid
            case "InitApply":
              listed = event.object
              return Result.failVoid
            case "InitDone":
              return test(listed) ? Result.succeed(Option.fromNullishOr(listed)) : Result.failVoid
            case "Apply":
              return test(event.object) ? Result.succeed(Option.some(event.object)) : Result.failVoid
            case "Delete":
              return test(undefined) ? Result.succeed(Option.none()) : Result.failVoid
          }
        }),
        Stream.runHead
      )
      // The watcher never ends on its own; an end here means it was cut short.
      return Option.flatten(met)
    })
    return yield* Effect.timeoutOrElse(wait, {
      duration: timeout,
      orElse: () =>
        Effect.fail(
          new WaitTimeout({
            kind: target.resource.kind,
            name,
            namespace,
            condition: conditionName,
            timeout: Duration.format(timeout)
          })
        )
    })
  })

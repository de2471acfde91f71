/**
 * `Manifests.status`, `statusChanges` and `waitReady`: the kstatus readiness of every
 * object of a set, read with one GET per object, and polled on the Effect Clock (as the
 * cli-utils poller does) until every object is Current, one fails, or the time runs out.
 * Reads only: nothing here changes anything, and reads may retry as every GET does. A wait
 * that ends unready reads the set once more, down what it owns, to say why (explain.ts).
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import { NotReady, type ObjectRef, type ObjectReadiness } from "../../Errors.js"
import type * as Kube from "../../Kube.js"
import type * as Manifests from "../../Manifests.js"
import * as client from "../client/execute.js"
import * as explaining from "./explain.js"
import * as kstatus from "./kstatus.js"
import * as manifests from "./manifests.js"
import * as request from "../request/verbs.js"

export const statusOf = (object: Manifests.Manifest): Omit<ObjectReadiness, "ref"> =>
  kstatus.compute(object, Date.now())

const readAll = (resolved: ReadonlyArray<manifests.Resolved>) =>
  Effect.flatMap(Clock.currentTimeMillis, (now) =>
    Effect.forEach(
      resolved,
      (item) => {
        const { uid: _uid, ...ref }: ObjectRef = item.ref
        return Effect.map(
          client.sendJsonOption(request.get(item.resource, item.ref.namespace, item.name)),
          Option.match({
            onNone: (): ObjectReadiness => ({ ref, status: "NotFound", message: "not found" }),
            onSome: (object): ObjectReadiness => ({ ref, ...kstatus.compute(object, now) })
          })
        )
      },
      { concurrency: 4 }
    ))

export const status = (
  refs: Iterable<ObjectRef | Manifests.Applicable>,
  options: Manifests.Options = {}
): Effect.Effect<ReadonlyArray<ObjectReadiness>, Kube.Error, Kube.Requirements> =>
  Effect.flatMap(manifests.prepareRefs(refs, options), readAll)

const notCurrent = (statuses: ReadonlyArray<ObjectReadiness>) => statuses.filter((s) => s.status !== "Current")

const decodeDuration = (value: Duration.Input | undefined, fallback: Duration.Duration, subject: string) => {
  const decoded = Duration.fromInput(value ?? fallback)
  return Option.isNone(decoded) || Duration.isNegative(decoded.value)
    ? manifests.invalid(subject, "must be a duration of zero or more (\"30 seconds\", 30_000)")
    : Effect.succeed(decoded.value)
}

const defaultInterval = Duration.seconds(2)
const defaultTimeout = Duration.minutes(5)

type Step =
  | { readonly _tag: "Change"; readonly readiness: ObjectReadiness }
  | { readonly _tag: "Ready" }
  | { readonly _tag: "Failed"; readonly statuses: ReadonlyArray<ObjectReadiness> }

const keyOf = (ref: ObjectRef) => `${ref.apiVersion}/${ref.kind}/${ref.namespace ?? ""}/${ref.name}`

export const statusChanges = (
  refs: Iterable<ObjectRef | Manifests.Applicable>,
  options: Manifests.WaitOptions = {}
): Stream.Stream<ObjectReadiness, NotReady | Kube.Error, Kube.Requirements> =>
  Stream.unwrap(Effect.gen(function*() {
    const interval = yield* decodeDuration(options.interval, defaultInterval, "interval")
    const timeout = yield* decodeDuration(options.timeout, defaultTimeout, "timeout")
    yield* manifests.checkOptionalBoolean(options.failFast, "failFast")
    const failFast = options.failFast !== false
    const resolved = yield* manifests.prepareRefs(refs, options)
    const latest = yield* Ref.make<ReadonlyArray<ObjectReadiness>>([])
    const polls = Stream.fromEffectSchedule(
      Effect.tap(readAll(resolved), (statuses) => Ref.set(latest, statuses)),
      Schedule.spaced(interval)
    )
    const deadline = Effect.sleep(timeout).pipe(
      Effect.andThen(Ref.get(latest)),
      Effect.flatMap((statuses) =>
        explaining.explainFailure(
          resolved,
          new NotReady({
            reason: "Timeout",
            objects: notCurrent(statuses),
            timeout: Duration.format(timeout)
          })
        )
      ),
      Effect.flatMap(Effect.fail)
    )
    return polls.pipe(
      // one step per object whose status or message changed since the poll before, then the verdict
      Stream.mapAccum(() => new Map<string, string>(), (seen, statuses) => {
        const next = new Map<string, string>()
        const steps: Array<Step> = []
        for (const readiness of statuses) {
          const key = keyOf(readiness.ref)
          const shown = `${readiness.status}\n${readiness.message}`
          next.set(key, shown)
          if (seen.get(key) !== shown) steps.push({ _tag: "Change", readiness })
        }
        if (statuses.every((s) => s.status === "Current")) steps.push({ _tag: "Ready" })
        else if (failFast && statuses.some((s) => s.status === "Failed")) steps.push({ _tag: "Failed", statuses })
        return [next, steps] as const
      }),
      Stream.takeWhile((step) => step._tag !== "Ready"),
      Stream.mapEffect((step) => {
        switch (step._tag) {
          case "Change":
            return Effect.succeed(step.readiness)
          case "Failed":
            return Effect.flatMap(
              explaining.explainFailure(resolved, new NotReady({ reason: "Failed", objects: notCurrent(step.statuses) })),
              Effect.fail
            )
        }
      }),
      Stream.interruptWhen(deadline)
    )
  }))

export const waitReady = (
  refs: Iterable<ObjectRef | Manifests.Applicable>,
  options: Manifests.WaitOptions = {}
): Effect.Effect<ReadonlyArray<ObjectReadiness>, NotReady | Kube.Error, Kube.Requirements> =>
  Effect.gen(function*() {
    const statuses = new Map<string, ObjectReadiness>()
    yield* Stream.runForEach(statusChanges(refs, options), (readiness) =>
      Effect.sync(() => {
        statuses.set(keyOf(readiness.ref), readiness)
      }))
    return [...statuses.values()]
  })

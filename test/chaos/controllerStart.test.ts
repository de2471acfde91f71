/**
 * Case 7's start, focused: the soak's one unseen write was the first one, made while the Controller started on 1,000
 * objects. Here a Controller is started many times on the real apiserver (its informer's watch-list: the initial
 * events, the initial-events-end bookmark, then live events) while writes race its start, and each time every object
 * must be reconciled at the state a list shows once those writes are answered, or a later one. That is the
 * level-triggered promise (client-go's): a reconcile sees every object's newest state, not every intermediate one.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { type ConfigMap, ConfigMaps, Controller, Kube } from "./lib.js"
import { record, layer, retrying, size, testNamespace } from "./support.js"

const objects = size(300, 200)
const rounds = size(20, 6)
const racing = 12

const rv = (cm: ConfigMap) => Number(cm.metadata?.resourceVersion ?? "0")

describe("chaos: a controller's start", () => {
  it.live(`${rounds} starts on ${objects} objects with ${racing} writes racing each: every object reconciled`, () =>
    Effect.gen(function*() {
      const ns = yield* testNamespace("start")
      const cms = Kube.api(ConfigMaps, { namespace: ns })
      const names = Array.from({ length: objects }, (_, i) => `start-${i}`)
      yield* Effect.forEach(names, (name) => retrying(cms.create({ metadata: { name }, data: { v: "0" } })), {
        concurrency: 16,
        discard: true
      })
      // names in the order the watch-list sends them (etcd's key order): the first ones are those a worker can take
      // before the listing ends
      const ordered = [...names].sort()
      const missedPerRound: Array<number> = []
      const missedNames: Array<string> = []
      for (let round = 1; round <= rounds; round++) {
        // the newest resourceVersion each object was reconciled at, this round
        const reconciledAt = new Map<string, number>()
        const controller = Controller.make({
          name: `chaos.effect-kube.dev/start-${round}`,
          api: cms,
          concurrency: 4,
          reconcile: (cm: ConfigMap) =>
            Effect.sync(() => {
              const name = cm.metadata!.name!
              reconciledAt.set(name, Math.max(reconciledAt.get(name) ?? 0, rv(cm)))
              return Controller.done
            })
        })
        const missed = yield* Effect.scoped(Effect.gen(function*() {
          const run = yield* Effect.forkScoped(Controller.run(controller))
          // the writes race the start: the first objects of the listing, and some others
          const targets = [...ordered.slice(0, racing / 2), ...ordered.slice(-racing / 2)]
          yield* Effect.forEach(
            targets,
            (name) => retrying(cms.patch(name, { _tag: "Merge", body: { data: { v: String(round) } } })),
            { concurrency: racing, discard: true }
          )
          const want = new Map(
            (yield* retrying(cms.list())).items.map((cm) => [cm.metadata!.name!, rv(cm)] as const)
          )
          const behind = () => [...want].filter(([name, at]) => (reconciledAt.get(name) ?? 0) < at).map(([n]) => n)
          // generous: on a loaded machine 300 reconciles may take seconds; a dropped key never comes
          const deadline = Date.now() + 30_000
          while (behind().length > 0 && Date.now() < deadline) yield* Effect.sleep("100 millis")
          yield* Fiber.interrupt(run)
          return behind()
        }))
        missedPerRound.push(missed.length)
        missedNames.push(...missed.slice(0, 5).map((n) => `${round}:${n}`))
      }
      yield* record("controllerStart", {
        objects,
        rounds,
        racingWritesPerRound: racing,
        objectsNotReconciledAtTheirState: missedPerRound.reduce((a, b) => a + b, 0),
        missedPerRound,
        missed: missedNames.slice(0, 20)
      })
      assert.deepStrictEqual(missedNames, [], "every object reconciled at its state after the start, or a later one")
    }).pipe(Effect.scoped, Effect.provide(layer())), { timeout: 900_000 })
})

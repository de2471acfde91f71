/**
 * The controller runtime against the real control plane: a `Controller` with an owned kind, a `Finalizer` and its
 * `EventRecorder` events (events.k8s.io, whose times the server checks), shared `Informers`, and `LeaderElection` on a
 * real coordination.k8s.io Lease passed from one candidate to another.
 */
import { assert, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Option, Ref } from "effect"
import {
  ConfigMaps,
  Controller,
  EventRecorder,
  EventsEventsV1,
  Finalizer,
  Informers,
  Kube,
  LeaderElection,
  Leases,
  Secrets
} from "./lib.js"
import { eventually, layer, testNamespace } from "./support.js"

const finalizer = "e2e.effect-kube.dev/cleanup"

it.layer(layer, { excludeTestServices: true, timeout: "60 seconds" })("runtime", (it) => {
  it.effect("a controller reconciles, owns its copies, records events, and cleans up through its finalizer", () =>
    Effect.gen(function*() {
      const ns = yield* testNamespace("controller")
      const cms = Kube.api(ConfigMaps, { namespace: ns })
      const secrets = Kube.api(Secrets, { namespace: ns })
      const cleaned = yield* Ref.make<ReadonlyArray<string>>([])
      const controller = Controller.make({
        name: "e2e.effect-kube.dev/copier",
        api: cms,
        labelSelector: "copy=yes",
        owns: [secrets],
        finalizer: {
          name: finalizer,
          cleanup: (cm) => Ref.update(cleaned, (names) => [...names, cm.metadata?.name ?? ""])
        },
        reconcile: (cm, ctx) =>
          Effect.gen(function*() {
            const name = `${cm.metadata?.name}-copy`
            yield* ctx.api.resource === cms.resource ? Effect.void : Effect.die("wrong api")
            yield* secrets.apply(
              {
                apiVersion: "v1",
                kind: "Secret",
                metadata: {
                  name,
                  ownerReferences: [{
                    apiVersion: "v1",
                    kind: "ConfigMap",
                    name: cm.metadata?.name ?? "",
                    uid: cm.metadata?.uid ?? "",
                    controller: true,
                    blockOwnerDeletion: true
                  }]
                },
                stringData: cm.data ?? {}
              },
              { fieldManager: "e2e-copier", force: true }
            )
            yield* ctx.recorder.normal("Copied", `copied into Secret ${name}`)
            return Controller.done
          })
      })
      const running = yield* Effect.forkChild(Controller.run(controller))

      yield* cms.create({ metadata: { name: "src", labels: { copy: "yes" } }, data: { k: "v" } })
      const copy = yield* eventually(secrets.get("src-copy"))
      assert.deepStrictEqual(copy.data, { k: Buffer.from("v").toString("base64") })
      assert.strictEqual(copy.metadata?.ownerReferences?.[0]?.name, "src")
      const withFinalizer = Option.getOrThrow(yield* cms.get("src"))
      assert.isTrue(Finalizer.has(withFinalizer, finalizer))

      // the event, as the server stored it: events.k8s.io/v1 with a MicroTime eventTime
      const events = Kube.api(EventsEventsV1, { namespace: ns })
      const event = yield* eventually(
        events.list({ fieldSelector: "regarding.name=src" }).pipe(
          Effect.map((list) => Option.fromNullishOr(list.items.find((e) => e.reason === "Copied")))
        )
      )
      assert.strictEqual(event.type, "Normal")
      assert.strictEqual(event.reportingController, "e2e.effect-kube.dev/copier")
      assert.strictEqual(event.regarding?.kind, "ConfigMap")
      assert.strictEqual(event.regarding?.uid, withFinalizer.metadata?.uid)
      assert.match(event.eventTime ?? "", /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/)

      // a change to the owned Secret reconciles its owner: the copy comes back
      yield* secrets.delete("src-copy")
      yield* eventually(secrets.get("src-copy"))

      // deleting the ConfigMap runs the cleanup once, then the finalizer goes and the object with it
      yield* cms.delete("src")
      yield* cms.waitFor("src", (cm) => cm === undefined, { timeout: "30 seconds" })
      assert.deepStrictEqual(yield* Ref.get(cleaned), ["src"])
      yield* Fiber.interrupt(running)
    }), 90_000)

  it.effect("an EventRecorder folds repeats into one Event with a series the server accepts", () =>
    Effect.gen(function*() {
      const ns = yield* testNamespace("events")
      const cms = Kube.api(ConfigMaps, { namespace: ns })
      const cm = yield* cms.create({ metadata: { name: "noisy" } })
      const recorder = yield* EventRecorder.make({ reportingController: "e2e.effect-kube.dev/recorder", reportingInstance: "e2e-0" })
      const regarding = EventRecorder.reference(ConfigMaps, cm)
      yield* recorder.warning(regarding, "Flapping", "it flaps")
      yield* recorder.warning(regarding, "Flapping", "it flaps")
      yield* recorder.warning(regarding, "Flapping", "it flaps")
      const events = Kube.api(EventsEventsV1, { namespace: ns })
      const stored = yield* eventually(
        events.list({ fieldSelector: "regarding.name=noisy" }).pipe(
          Effect.map((list) => Option.fromNullishOr(list.items.find((e) => (e.series?.count ?? 0) >= 3)))
        ),
        25
      )
      const all = yield* events.list({ fieldSelector: "regarding.name=noisy" })
      assert.strictEqual(all.items.length, 1)
      assert.strictEqual(stored.type, "Warning")
      assert.strictEqual(stored.reportingInstance, "e2e-0")
      assert.match(stored.series?.lastObservedTime ?? "", /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/)
    }), 30_000)

  it.effect("informers share one watch per resource and keep their stores in step", () =>
    Effect.gen(function*() {
      const ns = yield* testNamespace("informers")
      const cms = Kube.api(ConfigMaps, { namespace: ns })
      yield* cms.create({ metadata: { name: "a", labels: { i: "yes" } } })
      const informers = yield* Informers.make
      const one = yield* informers.subscribe(cms, { labelSelector: "i=yes" })
      const two = yield* informers.subscribe(cms, { labelSelector: "i=yes" })
      assert.strictEqual(informers.active(), 1)
      yield* one.store.ready
      yield* two.store.ready
      assert.deepStrictEqual((yield* two.store.list()).map((c) => c.metadata?.name), ["a"])
      yield* cms.create({ metadata: { name: "b", labels: { i: "yes" } } })
      yield* eventually(one.store.get("b", ns))
      assert.strictEqual((yield* two.store.list()).length, 2)
    }), 30_000)

  it.effect("leader election: one candidate leads on a real Lease, the other takes over when it lets go", () =>
    Effect.gen(function*() {
      const ns = yield* testNamespace("leader")
      const timing = { leaseDuration: "4 seconds", renewDeadline: "3 seconds", retryPeriod: "500 millis" } as const
      const leases = Kube.api(Leases, { namespace: ns })
      const aLeads = yield* Deferred.make<void>()
      const bLeads = yield* Deferred.make<void>()
      const a = yield* Effect.forkChild(
        LeaderElection.run(Effect.andThen(Deferred.succeed(aLeads, undefined), Effect.never), {
          lease: { name: "e2e", namespace: ns },
          identity: "candidate-a",
          ...timing
        })
      )
      yield* Deferred.await(aLeads)
      const b = yield* Effect.forkChild(
        LeaderElection.run(Effect.andThen(Deferred.succeed(bLeads, undefined), Effect.never), {
          lease: { name: "e2e", namespace: ns },
          identity: "candidate-b",
          ...timing
        })
      )
      const held = Option.getOrThrow(yield* leases.get("e2e"))
      assert.strictEqual(held.spec?.holderIdentity, "candidate-a")
      assert.strictEqual(held.spec?.leaseDurationSeconds, 4)
      assert.match(held.spec?.renewTime ?? "", /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/)
      // b stands by while a renews
      yield* Effect.sleep("2 seconds")
      assert.isFalse(yield* Deferred.isDone(bLeads))
      const renewed = Option.getOrThrow(yield* leases.get("e2e"))
      assert.notStrictEqual(renewed.spec?.renewTime, held.spec?.renewTime)

      // a lets go (interrupted: it releases the lease) and b leads at once, well before the lease would expire
      const released = Date.now()
      yield* Fiber.interrupt(a)
      yield* Deferred.await(bLeads)
      assert.isBelow(Date.now() - released, 3_000)
      const taken = Option.getOrThrow(yield* leases.get("e2e"))
      assert.strictEqual(taken.spec?.holderIdentity, "candidate-b")
      assert.strictEqual(taken.spec?.leaseTransitions, (held.spec?.leaseTransitions ?? 0) + 1)
      yield* Fiber.interrupt(b)
    }), 60_000)
})

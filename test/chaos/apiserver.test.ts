/**
 * Case 1: kube-apiserver SIGKILLed and started again on the same etcd while a program has a watcher, a reflector, an
 * Informers-based Controller, a LeaderElection holder, a followed log and an exec session open, and writes go on.
 * After each restart: the reflector's store equals a full list (0 lost, 0 duplicated), the controller converges,
 * leadership changed hands at most once per restart and never had two holders at once, the log follow and the exec
 * session ended with a tagged error (never a hang). Times are measured.
 */
import { assert, describe, it } from "@effect/vitest"
import { Cause, Duration, Effect, Exit, Fiber, Layer, Option, Ref, Stream } from "effect"
import { startPiece, stopPiece } from "../e2e/setup/cluster.js"
import { Condition, type ConfigMap, ConfigMaps, Controller, Exec, Kube, LeaderElection, Pods } from "./lib.js"
import { churn, difference, layer, record, retrying, same, since, size, testNamespace } from "./support.js"
import { leakChecked } from "./leaks.js"

const restarts = size(3, 2)
const controlled = size(100, 40)

/** The tag of a failure, or what ended otherwise. */
const outcome = (exit: Exit.Exit<unknown, unknown>): string => {
  if (Exit.isSuccess(exit)) return "ended"
  const failure = Cause.findErrorOption(exit.cause)
  if (Option.isSome(failure)) {
    const e = failure.value as { readonly _tag?: string; readonly reason?: unknown }
    return `${e._tag ?? "untagged"}${typeof e.reason === "string" ? `(${e.reason})` : ""}`
  }
  return Cause.hasInterruptsOnly(exit.cause) ? "interrupted" : "defect"
}

describe("chaos: kube-apiserver killed", () => {
  it.live("every open stream and loop survives or ends tagged; the store equals the cluster after each restart", () =>
    Effect.gen(function*() {
      const ns = yield* testNamespace("apiserver")
      const cms = Kube.api(ConfigMaps, { namespace: ns })
      const pods = Kube.api(Pods, { namespace: ns })

      // a pod to follow the log of and exec into
      yield* pods.create({
        metadata: { name: "ticker" },
        spec: {
          containers: [{ name: "c", image: "busybox", command: ["sh", "-c", "while true; do echo tick; sleep 0.2; done"] }]
        }
      })
      yield* pods.waitFor("ticker", Condition.podReady, { timeout: "90 seconds" })

      // the controller's objects: it copies data.v into the annotation chaos/observed
      yield* Effect.forEach(
        Array.from({ length: controlled }, (_, i) => i),
        (i) => cms.create({ metadata: { name: `ctl-${i}`, labels: { ctl: "yes" } }, data: { v: "0" } }),
        { concurrency: 8, discard: true }
      )
      const reconciles = yield* Ref.make(0)
      const controller = Controller.make({
        name: "chaos.effect-kube.dev/observer",
        api: cms,
        labelSelector: "ctl=yes",
        concurrency: 4,
        reconcile: (cm: ConfigMap, ctx) =>
          Effect.gen(function*() {
            yield* Ref.update(reconciles, (n) => n + 1)
            if (cm.metadata?.annotations?.["chaos/observed"] !== cm.data?.["v"]) {
              yield* ctx.api.patch(
                cm.metadata!.name!,
                { _tag: "Merge", body: { metadata: { annotations: { "chaos/observed": cm.data?.["v"] ?? "" } } } }
              )
            }
            return Controller.done
          })
      })
      yield* Effect.forkScoped(Controller.run(controller))
      const converged = (v: string) =>
        Effect.map(cms.list({ labelSelector: "ctl=yes" }), (l) =>
          l.items.length === controlled &&
          l.items.every((c) => c.data?.["v"] === v && c.metadata?.annotations?.["chaos/observed"] === v))

      // the reflector, and a bare watcher counting its listings
      const store = yield* cms.reflector()
      yield* store.ready
      const listings = yield* Ref.make(0)
      yield* cms.watcher().pipe(
        Stream.runForEach((e) => e._tag === "Init" ? Ref.update(listings, (n) => n + 1) : Effect.void),
        Effect.forkScoped
      )

      // two candidates for one lease; each records when it starts and stops acting
      const acting = yield* Ref.make<ReadonlyArray<{ readonly who: string; readonly on: boolean; readonly t: number }>>([])
      const candidate = (who: string) =>
        LeaderElection.run(
          Effect.acquireRelease(
            Ref.update(acting, (a) => [...a, { who, on: true, t: performance.now() }]),
            () => Ref.update(acting, (a) => [...a, { who, on: false, t: performance.now() }])
          ).pipe(Effect.andThen(Effect.never), Effect.scoped),
          {
            lease: { name: "chaos-leader", namespace: ns },
            identity: who,
            leaseDuration: "6 seconds",
            renewDeadline: "4 seconds",
            retryPeriod: "1 second"
          }
        )
      yield* Effect.forkScoped(candidate("a"))
      yield* Effect.forkScoped(candidate("b"))

      // writes all along
      const writes = yield* Ref.make(0)
      const failures = yield* Ref.make(0)
      const churning = yield* Effect.forkScoped(churn(ns, { objects: 100, perSecond: 40, concurrency: 8 }, { writes, failures }))
      yield* Effect.sleep("3 seconds")

      const rounds: Array<Record<string, unknown>> = []
      for (let round = 1; round <= restarts; round++) {
        // a followed log and an exec session, open when the apiserver goes
        const logLines = yield* Ref.make(0)
        const log = yield* Effect.forkScoped(
          Stream.runForEach(pods.logStream("ticker", { tailLines: 1 }), () => Ref.update(logLines, (n) => n + 1))
        )
        const session = yield* Exec.execStream(pods, "ticker", ["sh", "-c", "sleep 3600"], { stdin: false })
        const exec = yield* Effect.forkScoped(session.exit)
        yield* Effect.sleep("1 second")
        assert.isAbove(yield* Ref.get(logLines), 0, "the log follow delivers before the kill")

        // an edit of every controlled object just before the kill
        yield* Effect.forEach(
          Array.from({ length: controlled }, (_, i) => i),
          (i) => Effect.ignore(cms.patch(`ctl-${i}`, { _tag: "Merge", body: { data: { v: String(round) } } })),
          { concurrency: 8, discard: true }
        )

        const t0 = performance.now()
        yield* Effect.promise(() => stopPiece("apiserver", "KILL"))
        const killed = since(t0)
        const logExit = yield* Effect.timeoutOption(Fiber.await(log), "60 seconds")
        const logEnded = since(t0)
        const execExit = yield* Effect.timeoutOption(Fiber.await(exec), "60 seconds")
        const execEnded = since(t0)
        assert.isTrue(Option.isSome(logExit), "the log follow ended (no hang)")
        assert.isTrue(Option.isSome(execExit), "the exec session ended (no hang)")
        const logOutcome = outcome(Option.getOrThrow(logExit))
        const execOutcome = outcome(Option.getOrThrow(execExit))

        yield* Effect.sleep("2 seconds") // down a while, the watchers retrying
        const t1 = performance.now()
        yield* Effect.promise(() => startPiece("apiserver"))
        const started = since(t1)

        // the controlled objects get their round's value (edits lost to the kill are made again)
        yield* Effect.forEach(
          Array.from({ length: controlled }, (_, i) => i),
          (i) => retrying(cms.patch(`ctl-${i}`, { _tag: "Merge", body: { data: { v: String(round) } } })),
          { concurrency: 8, discard: true }
        )
        const t2 = performance.now()
        while (!(yield* Effect.orElseSucceed(converged(String(round)), () => false))) {
          if (performance.now() - t2 > 90_000) assert.fail("the controller did not converge within 90 s")
          yield* Effect.sleep("200 millis")
        }
        const convergedAfter = since(t2)

        // the store against a full list, while the churn goes on: equal within a while (it lags by the watch delay)
        const t3 = performance.now()
        let diff = difference([], [])
        while (true) {
          const list = yield* retrying(cms.list())
          const items = list.items
          diff = difference(yield* store.list(), items)
          if (same(diff) || performance.now() - t3 > 60_000) break
          yield* Effect.sleep("100 millis")
        }
        rounds.push({
          round,
          killMs: killed,
          logEndedMs: logEnded,
          log: logOutcome,
          execEndedMs: execEnded,
          exec: execOutcome,
          apiserverReadyMs: started,
          controllerConvergedMs: convergedAfter,
          storeEqualMs: since(t3)
        })
        assert.notStrictEqual(logOutcome, "defect")
        assert.notStrictEqual(execOutcome, "defect")
        assert.notStrictEqual(execOutcome, "ended", "an exec cut by the kill is an error, not an exit")
      }

      // the final check: churn stopped, the store equals a full list exactly
      yield* Fiber.interrupt(churning)
      yield* Effect.sleep("1 second")
      const t4 = performance.now()
      let diff = difference([], [])
      while (true) {
        diff = difference(yield* store.list(), (yield* retrying(cms.list())).items)
        if (same(diff) || performance.now() - t4 > 30_000) break
        yield* Effect.sleep("200 millis")
      }
      const events = yield* Ref.get(acting)
      let holders = 0
      let most = 0
      for (const e of [...events].sort((x, y) => x.t - y.t)) {
        holders += e.on ? 1 : -1
        most = Math.max(most, holders)
      }
      const acquisitions = events.filter((e) => e.on).length
      yield* record("apiserver-kill", {
        restarts,
        controlled,
        rounds,
        writes: yield* Ref.get(writes),
        failedWrites: yield* Ref.get(failures),
        reconciles: yield* Ref.get(reconciles),
        watcherListings: yield* Ref.get(listings),
        leaderAcquisitions: acquisitions,
        mostHoldersAtOnce: most,
        storeObjects: (yield* store.list()).length,
        lost: diff.missing.length + diff.stale.length,
        duplicated: diff.extra.length
      })
      assert.deepStrictEqual(diff, { missing: [], extra: [], stale: [] })
      assert.isAtMost(most, 1, "never two leaders at once")
      assert.isAtLeast(acquisitions, 1)
      assert.isAtMost(acquisitions, 1 + restarts, "leadership regained at most once per restart")
      assert.isTrue(Option.isNone(yield* store.failure))
    }).pipe(Effect.scoped, Effect.provide(layer()), leakChecked("apiserver-kill")), { timeout: 600_000 })
})

/**
 * The explorer's engine: one schedule run step by step over a fresh in-process fake on a
 * TestClock, the search over seeded schedules, and the shrinking of a failing one.
 *
 * Every request of an actor (a controller replica, the workload) waits at its actor's
 * HttpClient until a step releases it, and every watch event waits in the fake (the
 * hooks) until a step releases it; a step releases one of them, moves the clock, or
 * injects a fault. Between steps the event loop runs until nothing moves, so a run is a
 * function of its decisions: the same decisions give the same run.
 *
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as HttpClient from "effect/http/HttpClient"
import type * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as References from "effect/References"
import * as Cause from "effect/Cause"
import * as TestClock from "effect/testing/TestClock"
import * as fc from "fast-check"
import * as FakeCluster from "../../FakeCluster.js"
import { type Hooks, HooksId, type WatchHandle } from "./hooks.js"

/** A fault the explorer may inject. @internal */
export type FaultKind = "conflict" | "expire" | "reset" | "leaseLost" | "podFailure"

/** @internal */
export const faultKinds: ReadonlyArray<FaultKind> = ["conflict", "expire", "reset", "leaseLost", "podFailure"]

/** One request an actor made, as the explorer recorded it. @internal */
export interface Action {
  /** The step in which its answer came (1 for the first step). */
  readonly step: number
  readonly actor: string
  readonly method: string
  readonly path: string
  /** The API group (`""` for the core group). */
  readonly group: string
  /** The resource's plural, e.g. `configmaps`. */
  readonly resource: string
  readonly namespace: string | undefined
  readonly name: string | undefined
  readonly subresource: string | undefined
  readonly watch: boolean
  /** The HTTP status of the answer; 0 when there was none (a reset, an interruption). */
  readonly status: number
}

/** What an invariant looks at after a step. @internal */
export interface View {
  readonly cluster: FakeCluster.Service
  /** Every request the actors made so far, in the order their answers came. */
  readonly actions: ReadonlyArray<Action>
  readonly step: number
}

/** @internal */
export type Invariant =
  | ((view: View) => boolean)
  | { readonly _tag: "Eventually"; readonly check: (view: View) => boolean }

/** @internal */
export type Runnable<R> = Effect.Effect<unknown, unknown, R> | Layer.Layer<never, unknown, R>

/** @internal */
export interface Config<R> {
  readonly seed: number
  readonly schedules: number
  readonly steps: number
  readonly quiet: number
  readonly tickMillis: number
  readonly faults: ReadonlySet<FaultKind>
  readonly cluster: FakeCluster.Options
  readonly setup: ((cluster: FakeCluster.Service) => void) | undefined
  readonly controllers: Readonly<Record<string, Runnable<R>>>
  readonly workload: Effect.Effect<unknown, unknown, R> | undefined
  readonly invariants: Readonly<Record<string, Invariant>>
  readonly maxShrinks: number
}

/** How a run ended. @internal */
export interface Outcome {
  /** The broken invariant (or `<actor> failed`), undefined when the run passed. */
  readonly broken: string | undefined
  readonly detail: string | undefined
  /** The step it broke at (1 for the first). */
  readonly step: number
  /** What each step did, readably. */
  readonly trace: ReadonlyArray<string>
  readonly actions: number
}

/** The largest decision: the choice within a kind of step is `decision / kinds`. */
export const maxDecision = 20 * 64 - 1

interface Pending {
  readonly id: number
  readonly actor: string
  readonly method: string
  readonly path: string
  readonly watch: boolean
  readonly gate: Deferred.Deferred<void>
}

const parsePath = (path: string) => {
  const parts = path.split("/").filter((s) => s !== "")
  let rest = parts[0] === "api" ? parts.slice(2) : parts[0] === "apis" ? parts.slice(3) : parts
  const group = parts[0] === "apis" ? parts[1] ?? "" : ""
  let namespace: string | undefined
  if (rest[0] === "namespaces" && rest.length >= 3) {
    namespace = rest[1]
    rest = rest.slice(2)
  }
  return { group, resource: rest[0] ?? "", namespace, name: rest[1], subresource: rest[2] }
}

/** A write a 409 Conflict answers on a cluster: an update, whose resourceVersion is a precondition. */
const isUpdate = (method: string) => method === "PUT"

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

const describeRequest = (p: Pending) => `${p.watch ? "WATCH" : p.method} ${p.path} (${p.actor})`

const microTime = (ms: number) => new Date(ms).toISOString().replace(/Z$/, "000Z")

/** One run of `decisions` (then `quiet` steps of releasing in turn), checking the invariants after each step. */
export const runOnce = <R>(config: Config<R>, decisions: ReadonlyArray<number>): Effect.Effect<Outcome, never, R> =>
  Effect.scoped(Effect.gen(function*() {
    const context = yield* Layer.build(FakeCluster.layer(config.cluster))
    const cluster = Context.get(context, FakeCluster.FakeCluster)
    const hooks = (cluster as unknown as { readonly [HooksId]: Hooks })[HooksId]
    const base = Context.get(context, HttpClient.HttpClient)
    config.setup?.(cluster)
    hooks.hold(true)

    const pending: Array<Pending> = []
    const actions: Array<Action> = []
    const trace: Array<string> = []
    let nextId = 0
    let step = 0
    let answered = 0
    let over = false
    /** The answer's status of each request by id, for the trace. */
    const statusOf = new Map<number, number>()
    let sent: Pending | undefined

    const gated = (actor: string): HttpClient.HttpClient =>
      HttpClient.transform(base, (effect, request: HttpClientRequest.HttpClientRequest) =>
        Effect.gen(function*() {
          const url = new URL(request.url)
          const watch = url.searchParams.get("watch") === "true" ||
            request.urlParams.params.some(([k, v]) => k === "watch" && (v === "true" || v === "1"))
          const gate = yield* Deferred.make<void>()
          const id = nextId++
          // once the run is over, what the actors still send (a lease released on interruption) goes at once
          if (!over) {
            pending.push({ id, actor, method: request.method, path: url.pathname, watch, gate })
            yield* Deferred.await(gate)
          }
          const record = (status: number) => {
            answered++
            statusOf.set(id, status)
            actions.push({ step, actor, method: request.method, path: url.pathname, watch, status, ...parsePath(url.pathname) })
          }
          return yield* effect.pipe(
            Effect.tap((response) => Effect.sync(() => record(response.status))),
            Effect.onError(() => Effect.sync(() => record(0)))
          )
        }))

    // what the actors log goes into the trace, under the step it happened in, instead of the console
    let logs: Array<string> = []
    const loggerOf = (actor: string) =>
      Logger.make(({ logLevel, message }) => {
        const text = (Array.isArray(message) ? message : [message]).map((m) => typeof m === "string" ? m : String(m)).join(" ")
        logs.push(`${actor} ${logLevel.toUpperCase()}: ${text}`)
      })
    const fibers: Array<readonly [string, Fiber.Fiber<unknown, unknown>]> = []
    const start = (actor: string, runnable: Runnable<R>) =>
      Effect.gen(function*() {
        const effect: Effect.Effect<unknown, unknown, R> = Layer.isLayer(runnable)
          ? Layer.launch(runnable as Layer.Layer<never, unknown, R>)
          : runnable as Effect.Effect<unknown, unknown, R>
        const actorContext = Context.add(context, HttpClient.HttpClient, gated(actor))
        const fiber = yield* Effect.forkChild(
          Effect.provideContext(effect, actorContext as Context.Context<never>).pipe(
            Effect.provideService(References.CurrentLoggers, new Set([loggerOf(actor)]))
          )
        )
        fibers.push([actor, fiber as Fiber.Fiber<unknown, unknown>])
      })
    for (const [actor, runnable] of Object.entries(config.controllers)) yield* start(actor, runnable)
    let workload: Fiber.Fiber<unknown, unknown> | undefined
    if (config.workload !== undefined) {
      yield* start("workload", config.workload)
      workload = fibers[fibers.length - 1]![1]
    }

    const heldEvents = () => hooks.watches().filter((w) => w.held > 0)
    const signature = () => {
      let held = 0
      for (const w of hooks.watches()) held += w.held
      return `${pending.length}/${nextId}/${answered}/${held}/${cluster.resourceVersion()}`
    }
    // the event loop runs until nothing moves for a few turns: every released request answered, every
    // reaction made (and its next request waiting at its gate)
    const settle = Effect.gen(function*() {
      let last = ""
      let stable = 0
      for (let i = 0; i < 400 && stable < 3; i++) {
        yield* Effect.promise(() => new Promise<void>((resolve) => setImmediate(resolve)))
        const now = signature()
        if (now === last) stable++
        else {
          stable = 0
          last = now
        }
      }
    })
    // what waits, in an order the schedule alone decides: by actor, then in the order each actor asked. Arrival order
    // across actors is the event loop's (two actors woken by one clock step ask in either order under load), so a
    // choice by arrival would not replay
    const waiting = (): ReadonlyArray<Pending> =>
      [...pending].sort((a, b) => (a.actor < b.actor ? -1 : a.actor > b.actor ? 1 : a.id - b.id))
    let lastActor: string | undefined
    const release = (p: Pending) =>
      Effect.gen(function*() {
        lastActor = p.actor
        sent = p
        pending.splice(pending.indexOf(p), 1)
        yield* Deferred.succeed(p.gate, void 0)
      })
    const advance = Effect.gen(function*() {
      yield* TestClock.adjust(Duration.millis(config.tickMillis))
      return `clock +${config.tickMillis} ms`
    })

    /** Releases item `index` of what waits: requests first (oldest first), then watches with held events. */
    const releaseItem = (index: number): Effect.Effect<string> =>
      Effect.gen(function*() {
        const watches = heldEvents()
        const requests = waiting()
        const count = requests.length + watches.length
        if (count === 0) return yield* advance
        const i = index % count
        if (i < requests.length) {
          const p = requests[i]!
          yield* release(p)
          return `send ${describeRequest(p)}`
        }
        const w = watches[i - requests.length]!
        const head = w.head
        w.release()
        return `deliver ${head} to the watch of ${w.what}`
      })

    const calmest = () => {
      const same = waiting().findIndex((p) => p.actor === lastActor)
      return same === -1 ? 0 : same
    }

    const openWatches = () => hooks.watches().filter((w) => w.open)
    const fault = (kind: FaultKind, choice: number): Effect.Effect<string | undefined> =>
      Effect.gen(function*() {
        if (!config.faults.has(kind)) return undefined
        switch (kind) {
          case "conflict": {
            const writes = waiting().filter((p) => isUpdate(p.method) && p.actor !== "workload")
            if (writes.length === 0) return undefined
            const p = writes[choice % writes.length]!
            cluster.failNext({
              status: 409,
              method: p.method,
              path: new RegExp(`^${escape(p.path)}$`),
              message: "Operation cannot be fulfilled: the object has been modified; please apply your changes to " +
                "the latest version and try again (injected by Explore)"
            })
            yield* release(p)
            return `409 Conflict to ${describeRequest(p)}`
          }
          case "expire":
          case "reset": {
            const watches = openWatches()
            if (watches.length === 0) return undefined
            const w: WatchHandle = watches[choice % watches.length]!
            if (kind === "expire") w.expire()
            else w.reset()
            return kind === "expire" ? `410 Gone to the watch of ${w.what}` : `connection reset of the watch of ${w.what}`
          }
          case "leaseLost": {
            const leases = cluster.list("coordination.k8s.io/v1", "leases").filter((l) => {
              const spec = l.spec as { holderIdentity?: string } | undefined
              return l.metadata.namespace !== "kube-node-lease" && spec?.holderIdentity !== undefined &&
                spec.holderIdentity !== "" && spec.holderIdentity !== "explore-intruder"
            })
            if (leases.length === 0) return undefined
            const lease = leases[choice % leases.length]!
            const now = microTime(yield* Clock.currentTimeMillis)
            cluster.update(
              { apiVersion: "coordination.k8s.io/v1", kind: "Lease", name: lease.metadata.name, namespace: lease.metadata.namespace },
              (l) => {
                const spec = (l.spec ?? {}) as Record<string, unknown>
                return {
                  ...l,
                  spec: {
                    ...spec,
                    holderIdentity: "explore-intruder",
                    acquireTime: now,
                    renewTime: now,
                    leaseTransitions: (typeof spec.leaseTransitions === "number" ? spec.leaseTransitions : 0) + 1
                  }
                }
              }
            )
            return `lease ${lease.metadata.namespace}/${lease.metadata.name} taken by explore-intruder`
          }
          case "podFailure": {
            const pods = cluster.list("v1", "pods").filter((p) => {
              const phase = (p.status as { phase?: string } | undefined)?.phase
              return phase !== "Failed" && phase !== "Succeeded"
            })
            if (pods.length === 0) return undefined
            const pod = pods[choice % pods.length]!
            cluster.setPodPhase(pod.metadata.namespace!, pod.metadata.name, "Failed", {
              reason: "Error",
              message: "container crashed (injected by Explore)"
            })
            return `pod ${pod.metadata.namespace}/${pod.metadata.name} failed`
          }
        }
      })

    /** A decision: `decision % 20` is the kind of step, `decision / 20` the choice within it; 0 is the calmest. */
    const decide = (decision: number): Effect.Effect<string> =>
      Effect.gen(function*() {
        const kind = decision % 20
        const choice = Math.floor(decision / 20)
        if (kind < 12) return yield* releaseItem(choice)
        if (kind < 15) return yield* advance
        const injected = yield* fault(faultKinds[kind - 15]!, choice)
        return injected ?? (yield* releaseItem(choice))
      })

    const view = (): View => ({ cluster, actions, step })
    const failedActor = (): readonly [string, string] | undefined => {
      for (const [actor, fiber] of fibers) {
        const exit = fiber.pollUnsafe()
        if (exit === undefined || Exit.isSuccess(exit)) continue
        if (Cause.hasInterruptsOnly(exit.cause)) continue
        return [actor, Cause.pretty(exit.cause)]
      }
      return undefined
    }
    const check = (eventually: boolean): readonly [string, string | undefined] | undefined => {
      const failed = failedActor()
      if (failed !== undefined) return [`${failed[0]} failed`, failed[1]]
      for (const [name, invariant] of Object.entries(config.invariants)) {
        const isEventually = typeof invariant !== "function"
        if (isEventually !== eventually) continue
        let ok: boolean
        let detail: string | undefined
        try {
          ok = isEventually ? invariant.check(view()) : invariant(view())
        } catch (e) {
          ok = false
          detail = e instanceof Error ? e.message : String(e)
        }
        if (!ok) return [name, detail]
      }
      return undefined
    }

    // the run over, nothing waits any more and the actors are stopped, before the fake closes
    yield* Effect.addFinalizer(() =>
      Effect.gen(function*() {
        over = true
        hooks.hold(false)
        for (const p of pending.splice(0)) yield* Deferred.succeed(p.gate, void 0)
        yield* Fiber.interruptAll(fibers.map(([, fiber]) => fiber))
      })
    )
    yield* settle
    const total = decisions.length + config.quiet
    for (step = 1; step <= total; step++) {
      const inSchedule = step <= decisions.length
      // in the quiet steps nothing contends: the actor that last sent goes on while it has a request waiting,
      // else the oldest request goes, then held events; no faults, and the clock moves when nothing waits
      sent = undefined
      const did = inSchedule ? yield* decide(decisions[step - 1]!) : yield* releaseItem(calmest())
      yield* settle
      // set by the release, if the step sent a request
      const justSent = sent as Pending | undefined
      const status = justSent === undefined ? undefined : statusOf.get(justSent.id)
      const answer = justSent === undefined ? "" : status === undefined ? " → no answer yet" : ` → ${status === 0 ? "failed" : status}`
      trace.push([`${inSchedule ? did : `(quiet) ${did}`}${answer}`, ...logs.map((l) => `           ${l}`)].join("\n"))
      logs = []
      const broken = check(false)
      if (broken !== undefined) {
        return { broken: broken[0], detail: broken[1], step, trace, actions: actions.length }
      }
    }
    step = total
    const workloadExit = workload?.pollUnsafe()
    if (workload !== undefined && workloadExit === undefined) {
      return {
        broken: "workload finished",
        detail: `the workload had not finished after ${config.quiet} quiet steps`,
        step,
        trace,
        actions: actions.length
      }
    }
    const broken = check(true)
    if (broken !== undefined) return { broken: broken[0], detail: broken[1], step, trace, actions: actions.length }
    return { broken: undefined, detail: undefined, step, trace, actions: actions.length }
  })).pipe(
    Effect.provide(TestClock.layer()),
    Effect.orDie
  ) as Effect.Effect<Outcome, never, R>

/** The schedules of a seed: `count` lists of `steps` decisions, the same for the same seed. @internal */
export const arbitrary = (steps: number) =>
  fc.array(fc.nat({ max: maxDecision }), { minLength: 0, maxLength: steps })

/** @internal */
export const schedulesOf = (seed: number, count: number, steps: number): ReadonlyArray<ReadonlyArray<number>> =>
  fc.sample(fc.array(fc.nat({ max: maxDecision }), { minLength: steps, maxLength: steps }), { seed, numRuns: count })

/**
 * Shrinks a failing schedule with fast-check's array shrinker (fewer decisions, smaller ones), keeping a
 * candidate when it breaks the same invariant; at most `maxRuns` runs.
 *
 * @internal
 */
export const shrink = <R>(
  config: Config<R>,
  failing: ReadonlyArray<number>,
  outcome: Outcome
): Effect.Effect<{ readonly schedule: ReadonlyArray<number>; readonly outcome: Outcome; readonly runs: number }, never, R> =>
  Effect.gen(function*() {
    // the decisions after the step that broke never ran: without them the run is the same
    let current: ReadonlyArray<number> = failing.slice(0, Math.min(failing.length, outcome.step))
    const arb = arbitrary(current.length)
    let currentOutcome = outcome
    let runs = 0
    let improved = true
    while (improved && runs < config.maxShrinks) {
      improved = false
      for (const candidate of arb.shrink(current as Array<number>, undefined)) {
        if (runs >= config.maxShrinks) break
        runs++
        const result = yield* runOnce(config, candidate.value)
        if (result.broken === currentOutcome.broken) {
          current = candidate.value
          currentOutcome = result
          improved = true
          break
        }
      }
    }
    return { schedule: current, outcome: currentOutcome, runs }
  })

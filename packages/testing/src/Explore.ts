/**
 * `Explore`: seeded exploration of controllers' interleavings. A controller's bugs live
 * in the order things happen (a watch event delivered late, a 409 between read and
 * write, a 410 in the middle of a re-list, a lease lost mid-reconcile, a pod crashing);
 * `explore` runs the controllers over a fresh in-process `FakeCluster` on a `TestClock`
 * and, step by step, decides what happens next:
 *
 * - which waiting request of which actor is sent (every request of a controller replica
 *   or of the workload waits at its actor's HttpClient until a step sends it), or which
 *   held watch event is delivered (each watch's events keep their order; between
 *   watches, any order, and one can wait while others go);
 * - a 409 Conflict to a controller's update (a PUT), a 410 Gone or a connection reset of one
 *   watch, the Lease taken by another holder, a pod's phase set Failed;
 * - the clock moved by `tick`.
 *
 * After every step the invariants are checked (predicates over the fake's store and the
 * record of the actors' requests); `eventually` ones after the schedule and `quiet` calm
 * steps. A broken invariant is shrunk with fast-check to a minimal schedule and fails
 * with `ExploreFailure`, carrying the seed, the schedule (give it to `replay` to run that
 * interleaving again exactly) and a readable trace of its steps. The same seed explores
 * the same schedules with the same result.
 *
 * @example
 * ```ts
 * import { Effect, Option } from "effect"
 * import { ConfigMaps, Kube } from "effect-kube"
 * import { Explore, type FakeCluster } from "@effect-kube/testing"
 *
 * const counter = Kube.api(ConfigMaps, { namespace: "default" })
 * // a lost update: read, add one, write the whole object back without its resourceVersion
 * const increment = Effect.gen(function*() {
 *   const cm = Option.getOrThrow(yield* counter.get("counter"))
 *   const n = Number(cm.data?.n ?? "0") + 1
 *   yield* counter.replace("counter", { metadata: { name: "counter" }, data: { n: String(n) } })
 * })
 * const valueOf = (cluster: FakeCluster.Service) =>
 *   (cluster.get({ apiVersion: "v1", kind: "ConfigMap", name: "counter", namespace: "default" })?.data as
 *     | { readonly n?: string }
 *     | undefined)?.n
 *
 * const options = {
 *   setup: (cluster: FakeCluster.Service) =>
 *     cluster.seed([{ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "counter" }, data: { n: "0" } }]),
 *   controllers: { "writer-a": increment, "writer-b": increment },
 *   invariants: { "no increment is lost": Explore.eventually(({ cluster }) => valueOf(cluster) === "2") }
 * }
 *
 * const program = Effect.gen(function*() {
 *   const failure = yield* Effect.flip(Explore.explore({ ...options, seed: 7, schedules: 200 }))
 *   assert.strictEqual(failure.invariant, "no increment is lost")
 *   // the printed schedule replays the same interleaving: both read 0, both write 1
 *   const again = yield* Effect.flip(Explore.explore({ ...options, replay: failure.schedule }))
 *   assert.deepStrictEqual(again.trace, failure.trace)
 * })
 *
 * Effect.runPromise(program)
 * ```
 * @since 0.2.0
 */
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as HttpClient from "effect/http/HttpClient"
import type * as Layer from "effect/Layer"
import type { KubeConfig } from "effect-kube"
import type * as FakeCluster from "./FakeCluster.js"
import * as Engine from "./internal/explore/engine.js"

export type {
  /**
   * One request an actor made, as the explorer recorded it when its answer came: the step, the
   * actor, method and path, the resource it named (group, plural, namespace, name,
   * subresource), whether it was a watch, and the answer's status (0: none came).
   *
   * @since 0.2.0
   * @category models
   */
  Action,
  /**
   * What an invariant looks at: the fake's controls (its store), the actions so far, the step.
   *
   * @since 0.2.0
   * @category models
   */
  View,
  /**
   * A fault the explorer may inject: `"conflict"` (a 409 to a controller's update, a PUT),
   * `"expire"` (a 410 Gone on a watch), `"reset"` (a watch's connection reset), `"leaseLost"`
   * (another holder takes a Lease), `"podFailure"` (a pod's phase set Failed).
   *
   * @since 0.2.0
   * @category models
   */
  FaultKind
} from "./internal/explore/engine.js"

/**
 * A predicate checked after every step (a plain function), or after the quiet steps
 * (`eventually`). A thrown error counts as broken and its message is reported.
 *
 * @since 0.2.0
 * @category models
 */
export type Invariant = Engine.Invariant

/**
 * An invariant that must hold once the schedule has run and `quiet` calm steps followed:
 * "converges within N steps of quiet".
 *
 * @since 0.2.0
 * @category constructors
 */
export const eventually = (check: (view: Engine.View) => boolean): Invariant => ({ _tag: "Eventually", check })

/**
 * What `explore` provides each actor: the fake's `KubeConfig`, an `HttpClient` of its own
 * (whose requests wait for the explorer) and the `FakeCluster` controls.
 *
 * @since 0.2.0
 * @category models
 */
export type Provided = FakeCluster.FakeCluster | KubeConfig.KubeConfig | HttpClient.HttpClient

/**
 * Options of `explore`.
 *
 * @since 0.2.0
 * @category models
 */
export interface Options<R> {
  /** The seed of the schedules (default 0). */
  readonly seed?: number | undefined
  /** How many schedules to try (default 100); the first failing one is shrunk and reported. */
  readonly schedules?: number | undefined
  /** Decisions per schedule (default 60). */
  readonly steps?: number | undefined
  /** Calm steps after each schedule: what waits is released in turn, the clock moves when nothing does (default 60). */
  readonly quiet?: number | undefined
  /** How far a clock step moves the TestClock (default 1 second). */
  readonly tick?: Duration.Input | undefined
  /** The faults to inject, each `true` by default. */
  readonly faults?: { readonly [K in Engine.FaultKind]?: boolean | undefined } | undefined
  /** Options of the fake each run starts with (its namespaces, custom resources, controllers). */
  readonly cluster?: FakeCluster.Options | undefined
  /** Prepares each run's fake before the actors start (seed objects). */
  readonly setup?: ((cluster: FakeCluster.Service) => void) | undefined
  /** The controllers, by name: each an Effect or a Layer, run as its own actor until the run ends. */
  readonly controllers: { readonly [name: string]: Effect.Effect<unknown, unknown, R> | Layer.Layer<never, unknown, R> }
  /** What users do meanwhile (its requests are scheduled too); it must finish within the quiet steps. */
  readonly workload?: Effect.Effect<unknown, unknown, R> | undefined
  /** The invariants, by name. */
  readonly invariants: { readonly [name: string]: Invariant }
  /** Runs this schedule (an `ExploreFailure`'s) once instead of exploring, and reports it unshrunk. */
  readonly replay?: ReadonlyArray<number> | undefined
  /** At most this many runs to shrink a failing schedule (default 100). */
  readonly maxShrinks?: number | undefined
}

/**
 * Every explored schedule kept every invariant.
 *
 * @since 0.2.0
 * @category models
 */
export interface Passed {
  readonly _tag: "Passed"
  readonly seed: number
  /** Schedules run. */
  readonly schedules: number
  /** Requests the actors made in the last run: a sign the controllers did something. */
  readonly actions: number
}

/**
 * A schedule broke an invariant (or a controller or the workload failed): the seed and the
 * schedule found (shrunk), what each of its steps did, the invariant and the step.
 * `replay: schedule` runs it again exactly.
 *
 * @since 0.2.0
 * @category errors
 */
export class ExploreFailure extends Data.TaggedError("ExploreFailure")<{
  readonly seed: number
  /** The decisions of the failing schedule, shrunk: give them to `replay`. */
  readonly schedule: ReadonlyArray<number>
  /** The broken invariant's name, or `<actor> failed`, or `workload finished`. */
  readonly invariant: string
  /** What the invariant threw, or how the actor failed. */
  readonly detail: string | undefined
  /** The step it broke at (1 for the first). */
  readonly step: number
  /** What each step did, readably. */
  readonly trace: ReadonlyArray<string>
  /** Which schedule of the seed failed first (1 for the first); 0 for a replay. */
  readonly found: number
  /** How long the schedule was before shrinking, and how many runs shrinking took. */
  readonly shrunkFrom: number
  readonly shrinkRuns: number
}> {
  override get message(): string {
    const origin = this.found === 0
      ? "replayed"
      : `schedule ${this.found} of seed ${this.seed}, shrunk from ${this.shrunkFrom} to ${this.schedule.length} decisions in ${this.shrinkRuns} runs`
    // a run of the same step (the clock moving through the quiet steps) is one line
    const lines: Array<string> = []
    for (let i = 0; i < this.trace.length;) {
      let j = i
      while (j + 1 < this.trace.length && this.trace[j + 1] === this.trace[i]) j++
      const at = j === i ? String(i + 1) : `${i + 1}-${j + 1}`
      lines.push(`  ${at.padStart(7)}. ${this.trace[i]}${j === i ? "" : ` (x${j - i + 1})`}`)
      i = j + 1
    }
    return [
      `invariant "${this.invariant}" broken at step ${this.step} (${origin})`,
      ...(this.detail === undefined ? [] : [`  ${this.detail.split("\n").join("\n  ")}`]),
      `replay: [${this.schedule.join(", ")}]`,
      ...lines
    ].join("\n")
  }
}

/**
 * Explores the interleavings of `controllers` (and `workload`) over a fresh fake per
 * schedule, checking `invariants` after every step; fails with the shrunk
 * `ExploreFailure` of the first schedule that breaks one.
 *
 * @since 0.2.0
 * @category running
 */
export const explore = <R>(
  options: Options<R>
): Effect.Effect<Passed, ExploreFailure, Exclude<R, Provided>> =>
  Effect.gen(function*() {
    const seed = options.seed ?? 0
    const steps = options.steps ?? 60
    const config: Engine.Config<R> = {
      seed,
      schedules: options.schedules ?? 100,
      steps,
      quiet: options.quiet ?? 60,
      tickMillis: Duration.toMillis(Duration.fromInputUnsafe(options.tick ?? "1 second")),
      faults: new Set(Engine.faultKinds.filter((k) => options.faults?.[k] !== false)),
      cluster: options.cluster ?? {},
      setup: options.setup,
      controllers: options.controllers,
      workload: options.workload,
      invariants: options.invariants,
      maxShrinks: options.maxShrinks ?? 100
    }
    const fail = (schedule: ReadonlyArray<number>, outcome: Engine.Outcome, found: number, from: number, runs: number) =>
      new ExploreFailure({
        seed,
        schedule,
        invariant: outcome.broken!,
        detail: outcome.detail,
        step: outcome.step,
        trace: outcome.trace,
        found,
        shrunkFrom: from,
        shrinkRuns: runs
      })
    if (options.replay !== undefined) {
      const outcome = yield* Engine.runOnce(config, options.replay)
      if (outcome.broken !== undefined) return yield* fail(options.replay, outcome, 0, options.replay.length, 0)
      return { _tag: "Passed", seed, schedules: 1, actions: outcome.actions } satisfies Passed
    }
    const schedules = Engine.schedulesOf(seed, config.schedules, steps)
    let actions = 0
    for (let i = 0; i < schedules.length; i++) {
      const outcome = yield* Engine.runOnce(config, schedules[i]!)
      actions = outcome.actions
      if (outcome.broken !== undefined) {
        const shrunk = yield* Engine.shrink(config, schedules[i]!, outcome)
        return yield* fail(shrunk.schedule, shrunk.outcome, i + 1, schedules[i]!.length, shrunk.runs)
      }
    }
    return { _tag: "Passed", seed, schedules: schedules.length, actions } satisfies Passed
  }) as Effect.Effect<Passed, ExploreFailure, Exclude<R, Provided>>

/**
 * The controller loop: triggers from shared informers feed a work queue; `concurrency`
 * workers take keys, reconcile the cached object (through its finalizer when there is
 * one) and schedule what comes next (requeue after, per-key backoff).
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberSet from "effect/FiberSet"
import * as Metric from "effect/Metric"
import * as Option from "effect/Option"
import * as Pull from "effect/Pull"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import type * as Controller from "../../Controller.js"
import * as EventRecorder from "../../EventRecorder.js"
import * as Finalizer from "../../Finalizer.js"
import { Informers } from "../../Informers.js"
import * as Kube from "../../Kube.js"
import * as InformersInternal from "./informers.js"
import * as meta from "./objectMeta.js"
import * as WorkQueue from "./queue.js"

const reconcilesTotal = Metric.counter("effect_kube_controller_reconciles_total", {
  description: "Reconciles, by controller and result (success, requeue, error)",
  incremental: true
})
const reconcileDuration = Metric.histogram("effect_kube_controller_reconcile_duration_seconds", {
  description: "Time spent in reconcile",
  boundaries: Metric.exponentialBoundaries({ start: 0.001, factor: 2, count: 18 })
})
const queueDepth = Metric.gauge("effect_kube_controller_queue_depth", { description: "Keys waiting to be reconciled" })
const retriesTotal = Metric.counter("effect_kube_controller_retries_total", {
  description: "Keys requeued after a failed reconcile",
  incremental: true
})

/** client-go's per-item rate limiter: 5 ms doubling, capped at 1000 s. @internal */
export const defaultErrorPolicy: Schedule.Schedule<unknown, unknown> = Schedule.min([
  Schedule.exponential("5 millis", 2),
  Schedule.spaced("1000 seconds")
])

/** FNV-1a (32 bit) of the key, modulo count. @internal */
export const shardOfKey = (key: string, count: number): number => {
  let hash = 0x811c9dc5
  for (let i = 0; i < key.length; i++) {
    hash ^= key.charCodeAt(i)
    hash = Math.imul(hash, 0x01000193) >>> 0
  }
  return hash % count
}

/** @internal */
export const metrics = {
  reconciles: reconcilesTotal,
  reconcileDuration,
  queueDepth,
  retries: retriesTotal
}

/** One key's progress through the error policy (`Schedule.toStep`): the delay before its next try, or done. */
type Step = (now: number, input: unknown) => Pull.Pull<[unknown, Duration.Duration], never, unknown>

const splitKey = (key: string): Controller.ObjectKey => {
  const slash = key.indexOf("/")
  const namespace = key.slice(0, slash)
  return { name: key.slice(slash + 1), ...(namespace === "" ? {} : { namespace }) }
}

/** Runs a controller until interrupted. @internal */
export const run = <A, E, R>(
  controller: Controller.Controller<A, E, R>
): Effect.Effect<never, Kube.Error, R | Kube.Requirements> =>
  Effect.scoped(Effect.gen(function*() {
    const options = controller.options
    const api = options.api
    const resource = api.resource
    const informers = yield* Effect.serviceOption(Informers).pipe(
      Effect.flatMap(Option.match({
        onSome: Effect.succeed,
        onNone: () =>
          Effect.gen(function*() {
            const context = yield* Effect.context<Kube.Requirements>()
            return InformersInternal.make(context, yield* Effect.scope)
          })
      }))
    )
    const tags = { controller: options.name }
    const taggedReconciles = (result: string) => Metric.withAttributes(reconcilesTotal, { ...tags, result })
    const succeeded = taggedReconciles("success")
    const requeued = taggedReconciles("requeue")
    const failed = taggedReconciles("error")
    const depthGauge = Metric.withAttributes(queueDepth, tags)
    const durationHistogram = Metric.withAttributes(reconcileDuration, tags)
    const retries = Metric.withAttributes(retriesTotal, tags)
    // the gauge is set from the synchronous trigger handlers, with the context the controller runs in
    const metricContext = yield* Effect.context<never>()
    const updateDepth = () => depthGauge.updateUnsafe(queue.depth(), metricContext)

    const queue = yield* WorkQueue.make
    const recorder = yield* EventRecorder.make({
      reportingController: options.name,
      reportingInstance: options.instance ?? `${options.name.replace(/[^a-zA-Z0-9.-]/g, "-")}-${
        Math.random().toString(36).slice(2, 8)
      }`
    })
    const errorPolicy = (options.errorPolicy ?? defaultErrorPolicy) as Schedule.Schedule<unknown, unknown>
    /** The error policy's step of every key that is backing off: its own progress through the schedule. */
    const backoff = new Map<string, Step>()
    const fibers = yield* FiberSet.make<unknown, Kube.Error>()

    const primary = yield* informers.subscribe(api, {
      labelSelector: options.labelSelector,
      fieldSelector: options.fieldSelector,
      allNamespaces: options.allNamespaces
    })

    const shard = options.shard
    const enqueue = (key: string) => {
      if (shard !== undefined && shardOfKey(key, shard.count) !== shard.index) return
      queue.add(key)
      updateDepth()
    }

    // primary triggers: every listed or changed object; deletions only through finalizers. A listed object
    // is enqueued once its listing is done: until then the store still answers from the previous listing (or
    // none), and a worker taking the key at once would find nothing and drop it (Explore found this when the
    // listing's events came in separate chunks, as a paged list or a slow watch-list does)
    let listed: Array<string> | undefined
    yield* FiberSet.run(
      fibers,
      Stream.runForEach(primary.events, (event) =>
        Effect.sync(() => {
          if (event._tag === "Init") listed = []
          else if (event._tag === "InitApply") {
            const key = InformersInternal.keyOf(event.object)
            if (listed !== undefined) listed.push(key)
            else enqueue(key)
          } else if (event._tag === "InitDone") {
            for (const key of listed ?? []) enqueue(key)
            listed = undefined
          } else if (event._tag === "Apply") enqueue(InformersInternal.keyOf(event.object))
        }))
    )

    // owned objects: their controlling owner of the primary kind
    for (const owned of options.owns ?? []) {
      const spec: Controller.Owns = "api" in owned ? owned : { api: owned }
      const informer = yield* informers.subscribe(spec.api as Kube.Api<unknown>, {
        labelSelector: spec.labelSelector,
        fieldSelector: spec.fieldSelector,
        allNamespaces: spec.allNamespaces
      })
      yield* FiberSet.run(
        fibers,
        Stream.runForEach(informer.events, (event) =>
          Effect.sync(() => {
            if (event._tag === "Init" || event._tag === "InitDone") return
            const m = meta.metadataOf(event.object)
            for (const ref of m.ownerReferences ?? []) {
              if (ref.controller !== true || ref.kind !== resource.kind) continue
              if (ref.apiVersion.split("/").length === 2 && ref.apiVersion.split("/")[0] !== resource.group) continue
              enqueue(`${resource.namespaced ? m.namespace ?? "" : ""}/${ref.name}`)
            }
          }))
      )
    }

    // other triggers, through their mappers
    for (const watch of options.watches ?? []) {
      const informer = yield* informers.subscribe(watch.api as Kube.Api<unknown>, {
        labelSelector: watch.labelSelector,
        fieldSelector: watch.fieldSelector,
        allNamespaces: watch.allNamespaces
      })
      const mapper = watch.mapper as (object: unknown) => ReadonlyArray<Controller.ObjectKey>
      yield* FiberSet.run(
        fibers,
        Stream.runForEach(informer.events, (event) =>
          Effect.sync(() => {
            if (event._tag === "Init" || event._tag === "InitDone") return
            for (const key of mapper(event.object)) enqueue(`${key.namespace ?? ""}/${key.name}`)
          }))
      )
    }

    // periodic resync, off by default
    if (options.resync !== undefined) {
      yield* FiberSet.run(
        fibers,
        Effect.flatMap(primary.store.list(), (objects) =>
          Effect.sync(() => {
            for (const object of objects) enqueue(InformersInternal.keyOf(object))
          })).pipe(Effect.delay(options.resync), Effect.forever)
      )
    }

    const contextFor = (key: Controller.ObjectKey, object: A): Controller.Context<A> => {
      const bound = resource.namespaced && key.namespace !== undefined && key.namespace !== api.namespace
        ? Kube.api(resource, { namespace: key.namespace })
        : api
      return {
        key,
        api: bound,
        store: primary.store,
        recorder: {
          normal: (reason, note, action) => recorder.normal(meta.referenceOf(resource, object), reason, note, action),
          warning: (reason, note, action) => recorder.warning(meta.referenceOf(resource, object), reason, note, action)
        }
      }
    }

    const reconcileOne = (key: string): Effect.Effect<Controller.Action, E, R | Kube.Requirements> =>
      Effect.gen(function*() {
        const objectKey = splitKey(key)
        const cached = yield* primary.store.get(objectKey.name, objectKey.namespace ?? "")
        if (Option.isNone(cached)) return { _tag: "Done" } as const
        const object = cached.value
        const context = contextFor(objectKey, object)
        const finalizer = options.finalizer
        if (finalizer === undefined) return yield* options.reconcile(object, context)
        const result = yield* Finalizer.reconcile(context.api, finalizer.name, object, {
          apply: (current) => options.reconcile(current, contextFor(objectKey, current)),
          cleanup: (current) => finalizer.cleanup(current, contextFor(objectKey, current))
        }) as Effect.Effect<Option.Option<Controller.Action>, E, R | Kube.Requirements>
        return Option.getOrElse(result, () => ({ _tag: "Done" }) as const)
      }).pipe(
        Effect.withSpan("Controller.reconcile", {
          attributes: {
            "k8s.controller": options.name,
            "k8s.kind": resource.kind,
            "k8s.namespace": splitKey(key).namespace ?? "",
            "k8s.name": splitKey(key).name
          }
        })
      )

    const afterFailure = (key: string, error: unknown) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        let step = backoff.get(key)
        if (step === undefined) {
          step = yield* Schedule.toStep(errorPolicy)
          backoff.set(key, step)
        }
        const decision = yield* Pull.catchDone(step(now, error), () => Effect.undefined)
        if (decision === undefined) {
          backoff.delete(key)
          yield* Effect.logWarning(`Controller ${options.name}: giving up on ${key} until its next change`)
          return
        }
        yield* Metric.update(retries, 1)
        yield* queue.addAfter(key, Math.max(0, Duration.toMillis(decision[1])))
      })

    const worker = Effect.gen(function*() {
      const key = yield* queue.take
      updateDepth()
      const start = yield* Clock.currentTimeMillis
      const exit = yield* Effect.exit(reconcileOne(key))
      const elapsed = (yield* Clock.currentTimeMillis) - start
      yield* Metric.update(durationHistogram, elapsed / 1000)
      if (Exit.isSuccess(exit)) {
        backoff.delete(key)
        const action = exit.value
        if (action._tag === "RequeueAfter") {
          yield* Metric.update(requeued, 1)
          yield* queue.addAfter(key, Duration.toMillis(action.delay))
        } else {
          yield* Metric.update(succeeded, 1)
        }
      } else if (!Cause.hasInterruptsOnly(exit.cause)) {
        yield* Metric.update(failed, 1)
        yield* Effect.logDebug(`Controller ${options.name}: reconcile of ${key} failed`, exit.cause)
        const failure = Cause.findErrorOption(exit.cause)
        yield* afterFailure(key, Option.isSome(failure) ? failure.value : Cause.squash(exit.cause))
      }
      queue.done(key)
    }).pipe(Effect.annotateLogs(tags), Effect.forever)

    const concurrency = Math.max(1, Math.floor(options.concurrency ?? 1))
    for (let i = 0; i < concurrency; i++) yield* FiberSet.run(fibers, worker)
    return yield* FiberSet.join(fibers).pipe(Effect.andThen(Effect.never))
  }))


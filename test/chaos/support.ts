/**
 * What the chaos cases share: the client on the run's cluster, a namespace per case, a churn of writes, the check
 * that a store equals the cluster, and the record of every figure (printed, and kept in .tmp/chaos/results.json for
 * docs/reliability-chaos.md).
 */
import { Effect, Option, Ref, Schedule } from "effect"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { type ConfigMap, ConfigMaps, Kube, KubeConfig, Namespaces, NodeKube } from "./lib.js"

/** `EFFECT_KUBE_CHAOS=ci`: the short version (`npm run test:chaos:ci`), what `.ci/run` runs. */
export const ci = process.env["EFFECT_KUBE_CHAOS"] === "ci"

/** The full run's figure, or the CI one. */
export const size = <A>(full: A, short: A): A => (ci ? short : full)

export const kubeconfigPath = (): string => {
  const p = process.env["KUBECONFIG"]
  if (p === undefined || p === "") throw new Error("KUBECONFIG is not set: run through npm run test:chaos")
  return p
}

/** A client of its own (its own connections), as a user's program makes one. */
export const layer = (options?: NodeKube.Options) => layerFor(kubeconfigPath(), options)

/** A client of its own on the kubeconfig at `path`, with the Node transport's `options`. */
export const layerFor = (path: string, options?: NodeKube.Options) =>
  NodeKube.layerFromKubeConfig(KubeConfig.layerFromFile({ path }), options ?? {})

export const uniqueName = (prefix: string): string => `${prefix}-${crypto.randomBytes(3).toString("hex")}`

const namespaces = Kube.api(Namespaces)

/** A namespace for one case, deleted when its scope closes. */
export const testNamespace = (prefix: string) =>
  Effect.acquireRelease(
    Effect.gen(function*() {
      const name = uniqueName(`chaos-${prefix}`)
      yield* retrying(namespaces.create({ metadata: { name } }))
      return name
    }),
    (name) => Effect.ignore(namespaces.delete(name))
  )

/** Retries any failure every 250 ms for up to `seconds` (the cluster may be coming back). */
export const retrying = <A, E, R>(effect: Effect.Effect<A, E, R>, seconds = 60) =>
  Effect.retry(effect, { schedule: Schedule.spaced("250 millis"), times: seconds * 4 })

/** Polls until `effect` answers Some, every 250 ms, for at most `seconds`; fails with `what` after that. */
export const eventually = <A, E, R>(what: string, effect: Effect.Effect<Option.Option<A>, E, R>, seconds = 60) =>
  Effect.gen(function*() {
    const deadline = Date.now() + seconds * 1000
    while (true) {
      const found = yield* Effect.option(effect)
      if (Option.isSome(found) && Option.isSome(found.value)) return found.value.value
      if (Date.now() > deadline) return yield* Effect.die(new Error(`chaos: ${what} not within ${seconds} s`))
      yield* Effect.sleep("250 millis")
    }
  })

/** How a store differs from the cluster's list: names missing from it, names it has that are gone, stale values. */
export interface Difference {
  readonly missing: ReadonlyArray<string>
  readonly extra: ReadonlyArray<string>
  readonly stale: ReadonlyArray<string>
}

export const difference = (
  store: ReadonlyArray<ConfigMap>,
  cluster: ReadonlyArray<ConfigMap>
): Difference => {
  const key = (c: ConfigMap) => `${c.metadata?.namespace}/${c.metadata?.name}`
  const want = new Map(cluster.map((c) => [key(c), c] as const))
  const have = new Map(store.map((c) => [key(c), c] as const))
  const missing = [...want.keys()].filter((k) => !have.has(k))
  const extra = [...have.keys()].filter((k) => !want.has(k))
  const stale = [...want.entries()].filter(([k, c]) =>
    have.has(k) && have.get(k)!.metadata?.resourceVersion !== c.metadata?.resourceVersion
  ).map(([k]) => k)
  return { missing, extra, stale }
}

export const same = (d: Difference) => d.missing.length === 0 && d.extra.length === 0 && d.stale.length === 0

/**
 * Writes ConfigMaps `churn-0..objects-1` in `namespace` at `perSecond` (created first, then merge patches, and a
 * delete and re-create of one object in ten), until interrupted. Failures (the cluster is down) are counted, not
 * fatal. `writes` counts the writes the server confirmed.
 *
 * Open loop, as a cluster's many clients write: a pacer starts each write when its time comes, without waiting for
 * the ones before it to be answered, so that the rate does not hang on one write's latency (a worker that awaited
 * each write before the next reached 53-152 writes/s of 250 on a busy machine, its latency the limit). At most
 * `concurrency` writes are in flight (streams on the client's HTTP/2 connections); a write whose time comes while
 * that many are still unanswered is not sent, and is counted in `skipped` when given: the rate reached is
 * the confirmed writes', never the asked one.
 */
export const churn = (
  namespace: string,
  options: { readonly objects: number; readonly perSecond: number; readonly concurrency?: number | undefined },
  counters: {
    readonly writes: Ref.Ref<number>
    readonly failures: Ref.Ref<number>
    readonly skipped?: Ref.Ref<number> | undefined
  }
) => {
  const cms = Kube.api(ConfigMaps, { namespace })
  const concurrency = options.concurrency ?? 16
  let inFlight = 0
  const one = (i: number) => {
    const name = `churn-${i % options.objects}`
    const write = i < options.objects
      ? cms.create({ metadata: { name }, data: { v: String(i) } })
      : i % 10 === 9
      ? Effect.andThen(cms.delete(name), cms.create({ metadata: { name }, data: { v: String(i) } }))
      : cms.patch(name, { _tag: "Merge", body: { data: { v: String(i) } } })
    return Effect.match(write, { onFailure: () => false, onSuccess: () => true }).pipe(
      Effect.flatMap((ok) => Ref.update(ok ? counters.writes : counters.failures, (n) => n + 1)),
      Effect.ensuring(Effect.sync(() => inFlight--))
    )
  }
  return Effect.gen(function*() {
    const t0 = performance.now()
    let due = 0
    // the writes sent, in order: the first `objects` create (a skipped slot is no write, so no object goes uncreated)
    let next = 0
    // every 10 ms, the writes whose time has come since (a late timer under load starts several at once)
    while (true) {
      const target = Math.floor(((performance.now() - t0) * options.perSecond) / 1000)
      for (; due < target; due++) {
        if (inFlight >= concurrency) {
          if (counters.skipped !== undefined) yield* Ref.update(counters.skipped, (n) => n + 1)
          continue
        }
        inFlight++
        // a child of the pacer: interrupting the churn interrupts the writes in flight
        yield* Effect.forkChild(one(next++))
      }
      yield* Effect.sleep("10 millis")
    }
  })
}

const resultsFile = path.resolve(import.meta.dirname, "../../.tmp/chaos/results.json")

/** Records one case's figures: printed, and merged into .tmp/chaos/results.json under `name`. */
export const record = (name: string, figures: Record<string, unknown>) =>
  Effect.sync(() => {
    fs.mkdirSync(path.dirname(resultsFile), { recursive: true })
    const all = fs.existsSync(resultsFile) ? JSON.parse(fs.readFileSync(resultsFile, "utf8")) : {}
    all[name] = { ...figures, mode: ci ? "ci" : "full", at: new Date().toISOString() }
    fs.writeFileSync(resultsFile, JSON.stringify(all, null, 2) + "\n")
    console.log(`chaos ${name}: ${JSON.stringify(figures)}`)
  })

/** Milliseconds since `t0`, to one decimal. */
export const since = (t0: number) => Math.round((performance.now() - t0) * 10) / 10

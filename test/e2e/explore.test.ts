/**
 * Explore against the real control plane. Its finding is a real bug: the lost update it finds on the fake (two writers, each reading the counter,
 * then each writing it back without its resourceVersion) is replayed on kube-apiserver in the same
 * interleaving, request for request, and loses an increment there too; the write with its resourceVersion
 * (Kube.api's update) keeps both through the same interleaving, as exploration said. And examples/operator.ts,
 * which passes exploration, keeps the same invariants on kube-apiserver: two replicas, the same workload, one
 * leader acting, nothing deleted that it does not own, converged.
 */
import { assert, it } from "@effect/vitest"
import { Deferred, Duration, Effect, Exit, Fiber, Option, Schedule } from "effect"
import * as HttpClient from "effect/http/HttpClient"
import { Explore } from "@effect-kube/testing"
import * as Operator from "../../examples/operator.js"
import { convergedOf, mirrorLabel, type Names, operatorOneLeader, workloadOf } from "../testing/exploreOperator.js"
import { ApiError, ConfigMaps, CustomResourceDefinitions, Kube } from "./lib.js"
import { layer, testNamespace } from "./support.js"

/** An HttpClient that records each request's answer as Explore's actions are recorded, for the same invariants. */
const recording = (base: HttpClient.HttpClient, actor: string, actions: Array<Explore.Action>) =>
  HttpClient.transform(base, (effect, request) =>
    Effect.tap(effect, (response) =>
      Effect.sync(() => {
        const url = new URL(request.url)
        const parts = url.pathname.split("/").filter((p) => p !== "")
        let rest = parts[0] === "api" ? parts.slice(2) : parts.slice(3)
        let namespace: string | undefined
        if (rest[0] === "namespaces" && rest.length >= 3) {
          namespace = rest[1]
          rest = rest.slice(2)
        }
        actions.push({
          step: 0,
          actor,
          method: request.method,
          path: url.pathname,
          group: parts[0] === "apis" ? parts[1]! : "",
          resource: rest[0] ?? "",
          namespace,
          name: rest[1],
          subresource: rest[2],
          watch: url.searchParams.get("watch") === "true",
          status: response.status
        })
      })))

const writerOf = (namespace: string, blind: boolean) => {
  const counters = Kube.api(ConfigMaps, { namespace })
  return blind
    ? Effect.gen(function*() {
      const cm = Option.getOrThrow(yield* counters.get("counter"))
      const n = Number(cm.data?.n ?? "0") + 1
      yield* counters.replace("counter", { metadata: { name: "counter" }, data: { n: String(n) } })
    })
    : counters.update("counter", (cm) => ({ ...cm, data: { n: String(Number(cm.data?.n ?? "0") + 1) } }))
}

/** The writers of a failing trace, in the order their requests were sent (`send ... (writer-a)`). */
const orderOf = (trace: ReadonlyArray<string>): ReadonlyArray<string> =>
  trace.flatMap((line) => {
    const sent = /^(?:\(quiet\) )?send .* \((writer-[ab])\)/.exec(line)
    return sent === null ? [] : [sent[1]!]
  })

/**
 * Per writer, an HttpClient whose requests go out in `order` (each after the previous one's answer came); once
 * the order is used up, as they come.
 */
const sequenced = (base: HttpClient.HttpClient, order: ReadonlyArray<string>) => {
  let next = 0
  const waiting = new Map<string, Deferred.Deferred<void>>()
  const wake = () => {
    for (const [actor, deferred] of waiting) {
      if (next >= order.length || order[next] === actor) {
        waiting.delete(actor)
        Deferred.doneUnsafe(deferred, Exit.void)
        return
      }
    }
  }
  return (actor: string) =>
    HttpClient.transform(base, (effect) =>
      Effect.gen(function*() {
        const turn = yield* Deferred.make<void>()
        waiting.set(actor, turn)
        wake()
        yield* Deferred.await(turn)
        return yield* effect.pipe(Effect.ensuring(Effect.sync(() => {
          next++
          wake()
        })))
      }))
}

const exploration = (blind: boolean) => ({
  seed: 7,
  schedules: 1000,
  setup: (cluster: Parameters<NonNullable<Explore.Options<never>["setup"]>>[0]) =>
    cluster.seed([{ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "counter" }, data: { n: "0" } }]),
  controllers: { "writer-a": writerOf("default", blind), "writer-b": writerOf("default", blind) },
  invariants: {
    "no increment is lost": Explore.eventually(({ cluster }) =>
      (cluster.get({ apiVersion: "v1", kind: "ConfigMap", name: "counter", namespace: "default" })?.data as
        | { n?: string }
        | undefined)?.n === "2")
  }
})

it.layer(layer, { excludeTestServices: true, timeout: "120 seconds" })("explore", (it) => {
  it.effect("the lost update found on the fake, replayed in its interleaving on kube-apiserver, loses an increment there", () =>
    Effect.gen(function*() {
      const failure = yield* Effect.flip(Explore.explore(exploration(true)))
      const order = orderOf(failure.trace)
      // both read, then both write (which writer goes first is the seed's)
      assert.strictEqual(order.length, 4, failure.message)
      assert.sameMembers(order.slice(0, 2), ["writer-a", "writer-b"], failure.message)
      assert.sameMembers(order.slice(2), ["writer-a", "writer-b"], failure.message)
      const base = yield* HttpClient.HttpClient
      const race = (blind: boolean) =>
        Effect.gen(function*() {
          const ns = yield* testNamespace("explore")
          const counters = Kube.api(ConfigMaps, { namespace: ns })
          yield* counters.create({ metadata: { name: "counter" }, data: { n: "0" } })
          const client = sequenced(base, order)
          yield* Effect.all(
            ["writer-a", "writer-b"].map((actor) =>
              Effect.provideService(writerOf(ns, blind), HttpClient.HttpClient, client(actor))
            ),
            { concurrency: 2 }
          )
          return Option.getOrThrow(yield* counters.get("counter")).data?.n
        })
      // the blind writes: both read 0, both write 1
      assert.strictEqual(yield* race(true), "1")
      // the same interleaving with the resourceVersion: the second write gets a 409, reads again, writes 2
      assert.strictEqual(yield* race(false), "2")
      // and exploration agrees that the update keeps both
      const passed = yield* Explore.explore({ ...exploration(false), schedules: 50 })
      assert.strictEqual(passed.schedules, 50)
    }).pipe(Effect.scoped))

  it.effect("examples/operator.ts keeps the invariants it passes exploration with: two replicas on kube-apiserver", () =>
    Effect.gen(function*() {
      const mirrors = Kube.api(Operator.ConfigMirrors)
      yield* Kube.api(CustomResourceDefinitions).apply(yield* Operator.ConfigMirrors.crd(), { fieldManager: "e2e", force: true })
      yield* Effect.retry(mirrors.list({ limit: 1 }), {
        while: (e) => ApiError.isNotFound(e),
        schedule: Schedule.max([Schedule.spaced(Duration.seconds(1)), Schedule.recurs(30)])
      })
      const source = yield* testNamespace("explore-src")
      const names: Names = {
        source,
        mirror: `settings-${source}`,
        a: yield* testNamespace("explore-a"),
        b: yield* testNamespace("explore-b"),
        c: yield* testNamespace("explore-c")
      }
      yield* Kube.api(ConfigMaps, { namespace: names.a }).create({ metadata: { name: "keep" }, data: { mine: "yes" } })
      const base = yield* HttpClient.HttpClient
      const actions: Array<Explore.Action> = []
      const replicas = yield* Effect.all(["replica-a", "replica-b"].map((identity) =>
        Effect.forkChild(Effect.provideService(Operator.operator(source, identity), HttpClient.HttpClient, recording(base, identity, actions)))
      ))
      yield* Effect.provideService(workloadOf(names), HttpClient.HttpClient, recording(base, "workload", actions))
      const converged = Effect.gen(function*() {
        const copies = (yield* Kube.api(ConfigMaps).list({ labelSelector: `${mirrorLabel}=${names.mirror}`, allNamespaces: true })).items
        const mirror = Option.getOrUndefined(yield* mirrors.get(names.mirror))
        return convergedOf(names, copies.map((cm) => [cm.metadata?.namespace, cm.data?.color] as const), mirror?.status)
      })
      let ok = false
      for (let i = 0; i < 120 && !ok; i++) {
        ok = yield* converged
        if (!ok) yield* Effect.sleep("500 millis")
      }
      assert.isTrue(ok, "converged: copies in b and c, green, status Ready")
      assert.isTrue(operatorOneLeader({ actions } as unknown as Explore.View), "one leader acting")
      assert.isTrue(Option.isSome(yield* Kube.api(ConfigMaps, { namespace: names.a }).get("keep")), "the user's ConfigMap is kept")
      assert.isTrue(
        actions.every((a) => a.method !== "DELETE" || a.actor === "workload" || a.resource !== "configmaps" || a.name === "settings"),
        "deletes only its copies"
      )
      // the finalizer needs the operator: delete the mirror while it runs, then stop it
      yield* mirrors.delete(names.mirror)
      for (let i = 0; i < 120 && Option.isSome(yield* mirrors.get(names.mirror)); i++) yield* Effect.sleep("500 millis")
      yield* Fiber.interruptAll(replicas)
    }).pipe(Effect.scoped), { timeout: 180_000 })
})

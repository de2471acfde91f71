/**
 * Case 4: a slow, lossy link, emulated in user space (./slowLink.ts: this machine's kernel has no `sch_netem`): 100 ms
 * each way, 2 % of segments held back a retransmission timeout. Through it a client lists N pods (paged as informers
 * list, and in one request), GETs objects one after another and keeps a watcher, whose events are timed from the
 * write (made on loopback) to their arrival; the same through the relay unimpaired and straight to the apiserver, for
 * the figures beside each other.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Queue, Stream } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { ConfigMaps, Kube, Pods, RequestPolicy } from "./lib.js"
import * as SlowLink from "./slowLink.js"
import { ci, kubeconfigPath, layer, layerFor, record, retrying, since, size, testNamespace } from "./support.js"
import { leakChecked } from "./leaks.js"

const pods = size(10_000, 200)
const gets = size(50, 10)
const watchWrites = size(30, 5)

const quantile = (xs: ReadonlyArray<number>, q: number) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length === 0 ? 0 : Math.round(s[Math.min(s.length - 1, Math.floor(q * s.length))]! * 10) / 10
}

const apiserverUrl = () => new URL(/server: (\S+)/.exec(fs.readFileSync(kubeconfigPath(), "utf8"))![1]!)

/** The admin kubeconfig pointed at `server`, the certificate checked for `localhost`. */
const kubeconfigVia = (server: string, dir: string, name: string): string => {
  const text = fs.readFileSync(kubeconfigPath(), "utf8").replace(/server: \S+/, `server: ${server}\n    tls-server-name: localhost`)
  const file = path.join(dir, name)
  fs.writeFileSync(file, text)
  return file
}

/** What a program sees over one link: lists, GETs and a watch, each timed. */
const measure = (ns: string, names: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const podsApi = Kube.api(Pods, { namespace: ns })
    const cms = Kube.api(ConfigMaps, { namespace: ns })
    // the watch first, so that it is open while the rest runs
    const arrivals = yield* Queue.unbounded<string>()
    const ready = yield* Queue.unbounded<void>()
    yield* cms.watcher().pipe(
      Stream.runForEach((e) =>
        e._tag === "InitDone"
          ? Queue.offer(ready, undefined)
          : e._tag === "Apply"
          ? Queue.offer(arrivals, e.object.metadata?.name ?? "")
          : Effect.void
      ),
      Effect.forkScoped
    )
    yield* Queue.take(ready)

    const t0 = performance.now()
    let paged = 0
    yield* podsApi.listStream({ pageSize: 500 }).pipe(Stream.runForEach(() => Effect.sync(() => paged++)))
    const pagedMs = since(t0)
    // one request for everything: past the default 30 s timeout on the slow link, so without one
    const t1 = performance.now()
    const whole = yield* Effect.provideService(
      podsApi.list(),
      RequestPolicy.RequestPolicy,
      RequestPolicy.make({ timeout: null })
    )
    const unpagedMs = since(t1)

    const getMs: Array<number> = []
    for (let i = 0; i < gets; i++) {
      const t = performance.now()
      const got = yield* podsApi.get(names[(i * 7919) % names.length]!)
      getMs.push(performance.now() - t)
      assert.isTrue(got._tag === "Some")
    }

    // writes on loopback (the admin's own client), each timed until the watch over this link has it
    const eventMs: Array<number> = []
    const writer = Kube.api(ConfigMaps, { namespace: ns })
    for (let i = 0; i < watchWrites; i++) {
      const name = `w-${crypto.randomUUID().slice(0, 8)}`
      const t = performance.now()
      yield* Effect.provide(writer.create({ metadata: { name } }), layer())
      while ((yield* Queue.take(arrivals)) !== name) {
        // an earlier write's later event
      }
      eventMs.push(performance.now() - t)
    }
    return {
      listedPaged: paged,
      listPagedMs: pagedMs,
      listedUnpaged: whole.items.length,
      listUnpagedMs: unpagedMs,
      getP50Ms: quantile(getMs, 0.5),
      getP99Ms: quantile(getMs, 0.99),
      watchEventP50Ms: quantile(eventMs, 0.5),
      watchEventP99Ms: quantile(eventMs, 0.99),
      watchEvents: eventMs.length
    }
  }).pipe(Effect.scoped)

describe("chaos: a slow, lossy link (user space: 100 ms each way, 2 % of segments a retransmission late)", () => {
  it.live(`lists ${pods} pods, GETs and a watch keep working; beside the relay unimpaired and the direct link`, () =>
    Effect.gen(function*() {
      const ns = yield* testNamespace("slow")
      const podsApi = Kube.api(Pods, { namespace: ns })
      const names = Array.from({ length: pods }, (_, i) => `p-${String(i).padStart(5, "0")}`)
      const t0 = performance.now()
      // held by a scheduling gate: never scheduled, so nothing else writes to them
      yield* Effect.forEach(
        names,
        (name) =>
          retrying(podsApi.create({
            metadata: { name },
            spec: {
              schedulingGates: [{ name: "chaos.effect-kube.dev/hold" }],
              containers: [{ name: "c", image: "registry.k8s.io/pause:3.10" }]
            }
          })),
        { concurrency: 32, discard: true }
      )
      const createdMs = since(t0)
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "chaos-slow-kc-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true })))

      const direct = yield* measure(ns, names)
      // what the relay itself costs: the full run only (CI keeps to its 5 minutes)
      const relayed = ci ? undefined : yield* Effect.gen(function*() {
        const link = yield* SlowLink.make(apiserverUrl(), SlowLink.clean)
        return yield* Effect.provide(measure(ns, names), layerFor(kubeconfigVia(link.server, dir, "clean")))
      }).pipe(Effect.scoped)
      const slow = yield* Effect.gen(function*() {
        const link = yield* SlowLink.make(apiserverUrl(), SlowLink.slowLossy)
        const figures = yield* Effect.provide(measure(ns, names), layerFor(kubeconfigVia(link.server, dir, "slow")))
        return { ...figures, relay: yield* link.stats() }
      }).pipe(Effect.scoped)

      yield* record("slow-lossy-link", {
        link: "userspace relay: 100 ms each way, 2 % of 1448-byte segments 400 ms late, in order",
        pods,
        createdMs,
        direct,
        ...(relayed === undefined ? {} : { relayUnimpaired: relayed }),
        slowLossy: slow
      })
      for (const figures of relayed === undefined ? [direct, slow] : [direct, relayed, slow]) {
        assert.strictEqual(figures.listedPaged, pods)
        assert.strictEqual(figures.listedUnpaged, pods)
        assert.strictEqual(figures.watchEvents, watchWrites)
      }
      // the impairment was there: a GET is at least a round trip (200 ms), and segments were held back
      assert.isAtLeast(slow.getP50Ms, 200)
      // 2 % at random: over 500 segments or more none lost has odds under 1 in 20,000 (CI's few dozen may lose none)
      if (slow.relay.segments >= 500) assert.isAbove(slow.relay.lost, 0)
    }).pipe(Effect.scoped, Effect.provide(layer()), leakChecked("slow-lossy-link")), { timeout: 1_800_000 })
})

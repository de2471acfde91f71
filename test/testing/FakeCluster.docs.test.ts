/**
 * The Logs and Fault injection examples of docs/testing.md, as written there (issue 41.2 and
 * 41.3): a simulated pod's log, and failNext before a read under it.effect. The test below
 * them checks that the docs still hold these very blocks.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import * as fs from "node:fs"
import * as TestClock from "effect/testing/TestClock"
import { ApiError, ConfigMaps, Kube, Pods } from "effect-kube"
import { FakeCluster } from "@effect-kube/testing"

const pods = Kube.api(Pods, { namespace: "default" })

it.effect("a simulated pod's log is what its command prints", () =>
  Effect.gen(function* () {
    yield* pods.create({
      metadata: { name: "counter" },
      spec: {
        restartPolicy: "Never",
        containers: [{ name: "main", image: "busybox", command: ["sh", "-c", "for i in 1 2 3; do echo tick $i; sleep 1; done"] }]
      }
    })
    yield* TestClock.adjust("1 second") // the kubelet starts it after podStartMs, on the clock
    assert.strictEqual(yield* pods.logs("counter"), "tick 1\ntick 2\ntick 3\n")
  }).pipe(Effect.provide(FakeCluster.layer({ simulate: true }))))

const configMaps = Kube.api(ConfigMaps, { namespace: "default" })

it.effect("a read retries a 500 once the clock moves; writes fail as told", () =>
  Effect.gen(function* () {
    const fake = yield* FakeCluster.FakeCluster
    fake.failNext({ status: 500, method: "GET" }) // the next GET: { status, count?, method?, path?, match? }
    const read = yield* Effect.forkChild(configMaps.list())
    yield* TestClock.adjust("1 minute") // the backoff before the retry is on the TestClock
    assert.isTrue(Array.isArray((yield* Fiber.join(read)).items))

    fake.failNext({ status: 409, method: "POST", count: Infinity }) // until clearFaults()
    const refused = yield* Effect.flip(configMaps.create({ metadata: { name: "a" } }))
    assert.instanceOf(refused, ApiError)
    fake.clearFaults()
    yield* configMaps.create({ metadata: { name: "a" } })
  }).pipe(Effect.provide(FakeCluster.layer())))

describe("docs/testing.md", () => {
  it("holds these examples as written here", () => {
    const docs = fs.readFileSync(new URL("../../docs/testing.md", import.meta.url), "utf8")
    const here = fs.readFileSync(new URL(import.meta.url), "utf8")
    const blocks = [...docs.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!)
      .filter((b) => b.includes("a simulated pod's log is what its command prints") || b.includes("a read retries a 500"))
    assert.strictEqual(blocks.length, 2)
    for (const block of blocks) {
      for (const line of block.split("\n").filter((l) => l !== "" && !l.startsWith("import "))) {
        assert.include(here, line)
      }
    }
  })
})

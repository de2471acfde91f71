/**
 * Follows a pod's log as a Stream of lines until its container ends.
 *
 *   npx tsx examples/logs.ts                                   # a pod on the embedded fake cluster
 *   npx tsx examples/logs.ts --kubeconfig ~/.kube/config --pod web-0 [--namespace ns] [--container c]
 */
import { Console, Effect, Stream } from "effect"
import { Kube, NodeKube, Pods } from "effect-kube"
import { FakeCluster } from "@effect-kube/testing"

const flag = (name: string): string | undefined => {
  const at = process.argv.indexOf(name)
  return at === -1 ? undefined : process.argv[at + 1]
}

const follow = (pod: string, namespace: string | undefined) =>
  Kube.api(Pods, { namespace }).logStream(pod, { container: flag("--container"), tailLines: 100 }).pipe(
    Stream.runForEach((line) => Console.log(`${pod} | ${line}`))
  )

/** On the fake cluster, a pod whose "container" writes a line every 100 ms, then ends. */
const onFakeCluster = Effect.gen(function*() {
  const fake = yield* FakeCluster.FakeCluster
  yield* Kube.api(Pods).create({
    metadata: { name: "counter" },
    spec: { containers: [{ name: "main", image: "busybox", command: ["sh", "-c", "for i in 1 2 3 4 5; do echo tick $i; sleep 0.1; done"] }] }
  })
  fake.setPodPhase("default", "counter", "Running")
  const writer = Effect.forEach([1, 2, 3, 4, 5], (i) =>
    Effect.sync(() => fake.appendLog("default", "counter", [`tick ${i}`])).pipe(Effect.delay("100 millis")))
  yield* Effect.forkChild(writer.pipe(Effect.andThen(Effect.sync(() => fake.endContainer("default", "counter")))))
  yield* follow("counter", undefined)
  yield* Console.log("the container ended, so did the stream")
})

const kubeconfig = flag("--kubeconfig")
const pod = flag("--pod")

const program: Effect.Effect<void, unknown> = kubeconfig !== undefined && pod !== undefined
  ? follow(pod, flag("--namespace")).pipe(Effect.provide(NodeKube.layerFromFile({ path: kubeconfig })))
  : onFakeCluster.pipe(Effect.provide(FakeCluster.layer()))

Effect.runPromise(program).catch((error) => {
  console.error(`logs failed: ${error instanceof Error ? error.message : String(error)}`)
  process.exit(1)
})

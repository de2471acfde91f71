/**
 * The whole flow against a cluster: create a pod labelled app=smoke, read it back, list
 * by selector, watch until it has Succeeded, print its log, delete all by selector.
 *
 *   npm run demo                          # the embedded fake cluster
 *   npm run demo -- --kubeconfig ~/.kube/config [--context name]
 *   KUBECONFIG=~/.kube/config npm run demo
 */
import { Console, Duration, Effect, Layer, Option, Stream } from "effect"
import { Kube, NodeKube, type Pod, Pods } from "effect-kube"
import { FakeCluster } from "@effect-kube/testing"

const flag = (name: string): string | undefined => {
  const at = process.argv.indexOf(name)
  return at === -1 ? undefined : process.argv[at + 1]
}

const kubeconfig = flag("--kubeconfig")
const context = flag("--context")
const cluster: Layer.Layer<Kube.Requirements, unknown> = kubeconfig !== undefined
  ? NodeKube.layerFromFile({ path: kubeconfig, context })
  : process.env["KUBECONFIG"] !== undefined && process.env["KUBECONFIG"] !== ""
  ? NodeKube.layer
  : FakeCluster.layer({ simulate: true })

const where = kubeconfig ?? (process.env["KUBECONFIG"] || "the embedded fake cluster")

const smokePod: Pod = {
  metadata: { name: "effect-kube-smoke", labels: { app: "smoke" } },
  spec: {
    restartPolicy: "Never",
    containers: [{
      name: "main",
      image: "busybox:1.36",
      command: ["sh", "-c", "echo hello from effect-kube; echo the pod ran to completion"]
    }]
  }
}

const pods = Kube.api(Pods)

const smoke = Effect.gen(function*() {
  yield* Console.log(`effect-kube smoke test against ${where}`)

  const created = yield* pods.create(smokePod)
  yield* Console.log(`created  pod/${created.metadata?.name} (uid ${created.metadata?.uid})`)

  const found = yield* pods.get("effect-kube-smoke")
  yield* Console.log(`get      pod/effect-kube-smoke: phase ${Option.match(found, {
    onNone: () => "absent",
    onSome: (pod) => pod.status?.phase ?? "unknown"
  })}`)

  const listed = yield* pods.list({ labelSelector: "app=smoke" })
  yield* Console.log(`list     app=smoke: ${listed.items.map((p) => p.metadata?.name).join(", ")}`)

  yield* pods.watch({ labelSelector: "app=smoke" }).pipe(
    Stream.tap((event) =>
      event.type === "BOOKMARK" ? Effect.void : Console.log(`watch    ${event.type} phase=${event.object.status?.phase}`)
    ),
    Stream.takeUntil((event) => event.type !== "BOOKMARK" && event.object.status?.phase === "Succeeded"),
    Stream.runDrain,
    Effect.timeoutOrElse({
      duration: Duration.minutes(3),
      orElse: () => Effect.fail(new Error("the pod did not succeed within 3 minutes"))
    })
  )

  const log = yield* pods.logs("effect-kube-smoke")
  yield* Console.log(`logs     ${log.trimEnd().split("\n").join("\n         ")}`)

  const deleted = yield* pods.deleteAll({ labelSelector: "app=smoke", gracePeriodSeconds: 0 })
  yield* Console.log(`deleted  ${deleted} pod(s) with app=smoke`)
})

Effect.runPromise(smoke.pipe(Effect.provide(cluster))).then(
  () => console.log("smoke test passed"),
  (error) => {
    console.error(`smoke test failed: ${error instanceof Error ? error.message : String(error)}`)
    process.exit(1)
  }
)

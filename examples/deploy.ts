/**
 * A deploy script: preview a release with a server-side diff, apply it as an ApplySet
 * with prune (so objects a release drops are deleted), then wait until everything is
 * ready, printing a line per status change. It deploys examples/manifests/app.yaml, then
 * a second release without the one-off migration Job, which is pruned.
 *
 *   npx tsx examples/deploy.ts                                      # the embedded fake cluster
 *   npx tsx examples/deploy.ts --kubeconfig ~/.kube/config --namespace demo
 *
 * On a real cluster the namespace must exist. The embedded fake has no deployment
 * controller yet: in that mode a stand-in below writes the rollout status a controller
 * would, so that the wait can end.
 */
import { Console, Effect, Schedule, Stream } from "effect"
import * as fs from "node:fs"
import { fileURLToPath } from "node:url"
import { Discovery, Errors, Manifests, NodeKube } from "../src/index.js"
import { FakeCluster } from "../src/testing/index.js"

const flag = (name: string): string | undefined => {
  const at = process.argv.indexOf(name)
  return at === -1 ? undefined : process.argv[at + 1]
}

const kubeconfig = flag("--kubeconfig")
const namespace = flag("--namespace") ?? "demo"
const file = fileURLToPath(new URL("./manifests/app.yaml", import.meta.url))

/** What a deployment controller would write once the replicas are up (the fake has none yet). */
const standInController = Effect.gen(function*() {
  const cluster = yield* FakeCluster.FakeCluster
  for (const d of cluster.list("apps/v1", "Deployment", namespace)) {
    const replicas = (d["spec"] as { replicas?: number }).replicas ?? 1
    const generation = d.metadata.generation ?? 1
    if ((d["status"] as { observedGeneration?: number } | undefined)?.observedGeneration === generation) continue
    cluster.update({ apiVersion: "apps/v1", kind: "Deployment", name: d.metadata.name, namespace }, {
      status: {
        observedGeneration: generation,
        replicas,
        updatedReplicas: replicas,
        readyReplicas: replicas,
        availableReplicas: replicas,
        conditions: [
          { type: "Available", status: "True", reason: "MinimumReplicasAvailable" },
          { type: "Progressing", status: "True", reason: "NewReplicaSetAvailable" }
        ]
      }
    })
  }
}).pipe(Effect.delay("1 second"), Effect.repeat(Schedule.forever))

const release = (objects: ReadonlyArray<Manifests.Manifest>, name: string) =>
  Effect.gen(function*() {
    const options = { namespace, fieldManager: "deployer", applySet: { name: "demo" }, prune: true } as const
    yield* Console.log(`\n== ${name}`)
    for (const d of yield* Manifests.diff(objects, options)) {
      if (d.action === "unchanged") continue
      yield* Console.log(`  would ${d.action} ${Errors.formatRef(d.ref)}${d.paths.length > 0 ? `: ${d.paths.join(", ")}` : ""}`)
    }
    const result = yield* Manifests.apply(objects, options)
    yield* Console.log(
      `  applied: ${result.created.length} created, ${result.changed.length} changed, ` +
        `${result.unchanged.length} unchanged, ${result.pruned.length} pruned ` +
        `(${result.pruned.map(Errors.formatRef).join(", ") || "none"})`
    )
    yield* Manifests.statusChanges(result.applied, { namespace, interval: "1 second", timeout: "5 minutes" }).pipe(
      Stream.runForEach((s) => Console.log(`  ${Errors.formatRef(s.ref)}: ${s.status} (${s.message})`))
    )
    yield* Console.log("  ready")
  })

const program = Effect.gen(function*() {
  const objects = yield* Manifests.parse(fs.readFileSync(file))
  yield* release(objects, "release 1: everything, with the migration Job")
  yield* release(objects.filter((o) => o.kind !== "Job"), "release 2: the Job is gone from the manifests")
})

// One Discovery for every operation, so each group version is fetched once.
const deploy = program.pipe(Effect.provide(Discovery.layer))

const main = kubeconfig !== undefined
  ? deploy.pipe(Effect.provide(NodeKube.layerFromFile({ path: kubeconfig, context: flag("--context") })))
  : Effect.gen(function*() {
    yield* Effect.forkChild(standInController)
    return yield* deploy
  }).pipe(Effect.provide(FakeCluster.layer({ simulate: { podRunMs: 300 } })))

Effect.runPromise(main).then(
  () => console.log("\ndeployed"),
  (error) => {
    console.error(`deploy failed: ${error instanceof Error ? error.message : String(error)}`)
    process.exit(1)
  }
)

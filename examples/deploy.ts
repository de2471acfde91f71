/**
 * A deploy script: preview a release with a server-side diff, apply it as an ApplySet
 * with prune (so objects a release drops are deleted), then wait until everything is
 * ready, printing a line per status change. It deploys examples/manifests/app.yaml, then
 * a second release without the one-off migration Job, which is pruned.
 *
 *   npx tsx examples/deploy.ts                                      # the embedded fake cluster
 *   npx tsx examples/deploy.ts --kubeconfig ~/.kube/config --namespace demo
 *
 * The namespace must exist, on a real cluster as on the embedded fake (which is made with
 * it); the fake's Deployment controller and kubelet roll the release out, so the wait ends
 * as it would on a cluster.
 */
import { Console, Effect, Stream } from "effect"
import * as fs from "node:fs"
import { fileURLToPath } from "node:url"
import { Discovery, Errors, Manifests, NodeKube } from "effect-kube"
import { FakeCluster } from "@effect-kube/testing"

const flag = (name: string): string | undefined => {
  const at = process.argv.indexOf(name)
  return at === -1 ? undefined : process.argv[at + 1]
}

const kubeconfig = flag("--kubeconfig")
const namespace = flag("--namespace") ?? "demo"
const file = fileURLToPath(new URL("./manifests/app.yaml", import.meta.url))

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
  : deploy.pipe(Effect.provide(FakeCluster.layer({ namespaces: [namespace] })))

Effect.runPromise(main).then(
  () => console.log("\ndeployed"),
  (error) => {
    console.error(`deploy failed: ${error instanceof Error ? error.message : String(error)}`)
    process.exit(1)
  }
)

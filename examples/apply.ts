/**
 * Applies a YAML file of objects as one set, reads them back, and deletes them again,
 * printing the references at each step. Objects are named by identity only: the
 * Secret's values are never printed.
 *
 *   npx tsx examples/apply.ts                                   # examples/manifests/app.yaml, embedded fake
 *   npx tsx examples/apply.ts my-app.yaml --namespace demo      # another file
 *   npx tsx examples/apply.ts --kubeconfig ~/.kube/config [--context name] [--namespace demo]
 *   KUBECONFIG=~/.kube/config npx tsx examples/apply.ts
 *   npx tsx examples/apply.ts examples/manifests/shop.yaml      # a file with its own Namespace
 *
 * As on a cluster, the fake refuses writes into a namespace that does not exist (404): the
 * namespace given with --namespace must exist already, or the file creates its own with a
 * Namespace object (applied before what goes in it), as shop.yaml does. Objects that name
 * their namespace go there; the others go to --namespace, else the kubeconfig's.
 */
import { Console, Effect, Layer } from "effect"
import * as fs from "node:fs"
import { fileURLToPath } from "node:url"
import { Discovery, Errors, Manifests, NodeKube, type Kube, type ObjectRef } from "effect-kube"
import { FakeCluster } from "@effect-kube/testing"

const flag = (name: string): string | undefined => {
  const at = process.argv.indexOf(name)
  return at === -1 ? undefined : process.argv[at + 1]
}

const positional = process.argv.slice(2).filter((arg, i, all) => !arg.startsWith("--") && !all[i - 1]?.startsWith("--"))
const file = positional[0] ?? fileURLToPath(new URL("./manifests/app.yaml", import.meta.url))
const kubeconfig = flag("--kubeconfig")
const namespace = flag("--namespace")

const cluster: Layer.Layer<Kube.Requirements, unknown> = kubeconfig !== undefined
  ? NodeKube.layerFromFile({ path: kubeconfig, context: flag("--context") })
  : process.env["KUBECONFIG"] !== undefined && process.env["KUBECONFIG"] !== ""
  ? NodeKube.layer
  : FakeCluster.layer()

const where = kubeconfig ?? (process.env["KUBECONFIG"] || "the embedded fake cluster")

const describe = (ref: ObjectRef) => `${Errors.formatRef(ref)} (${ref.apiVersion}${ref.uid ? `, uid ${ref.uid}` : ""})`

const show = (verb: string, refs: ReadonlyArray<ObjectRef>) =>
  Console.log(refs.map((ref) => `${verb.padEnd(8)} ${describe(ref)}`).join("\n"))

const program = Effect.gen(function*() {
  yield* Console.log(`applying ${file} on ${where}`)
  const objects = yield* Manifests.parse(fs.readFileSync(file, "utf8"))

  const applied = yield* Manifests.apply(objects, { namespace, fieldManager: "effect-kube-example" })
  yield* show("applied", applied)

  const live = yield* Manifests.get(applied, { namespace })
  const line = (o: Manifests.Manifest) =>
    `live     ${o.kind} ${o.metadata?.namespace}/${o.metadata?.name} rv=${o.metadata?.["resourceVersion"]}`
  yield* Console.log(live.map(line).join("\n"))

  // Delete from the parsed objects, as a later run with nothing stored would.
  const deleted = yield* Manifests.delete(objects, { namespace })
  yield* show("deleted", deleted)
})

// One Discovery for the three operations, so each group version is fetched once.
Effect.runPromise(program.pipe(Effect.provide(Discovery.layer), Effect.provide(cluster))).then(
  () => console.log("done"),
  (error) => {
    console.error(`failed: ${error instanceof Error ? error.message : String(error)}`)
    process.exit(1)
  }
)

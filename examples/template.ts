/**
 * OpenShift Templates on the embedded fake cluster: seed the Template of
 * examples/manifests/template.yaml, render it, apply the objects it renders, and delete
 * them again with nothing but the template's name and the same parameters, as a batch
 * scheduler would after a restart.
 *
 *   npx tsx examples/template.ts                                            # the embedded fake
 *   npx tsx examples/template.ts --kubeconfig ~/.kube/config --namespace batch
 *
 * A vanilla Kubernetes cluster does not serve OpenShift's template API: given a kubeconfig,
 * the example renders the template here (`Template.render`, what `oc process --local` does)
 * and applies and deletes what it renders with `Manifests`, in a namespace that must exist.
 */
import { Console, Effect } from "effect"
import * as fs from "node:fs"
import { Errors, Manifests, NodeKube, Template } from "effect-kube"
import { FakeCluster } from "@effect-kube/testing"

const templateFile = new URL("./manifests/template.yaml", import.meta.url)

const options = { namespace: "batch", templateNamespace: "templates" }

// Every parameter the template would generate is given: the same inputs render the same names.
const parameters = { RUN: "nightly-2024-06-01", PARALLELISM: 2, TOKEN: "0123456789abcdef" }

const program = Effect.gen(function*() {
  const cluster = yield* FakeCluster.FakeCluster
  const [template] = yield* Manifests.parse(fs.readFileSync(templateFile, "utf8"))
  cluster.seed([{ ...template, metadata: { ...template!.metadata, namespace: "templates" } }])
  yield* Console.log("seeded   Template templates/batch-run")

  // Left to its generator, TOKEN would differ on every processing: refused.
  const { TOKEN: _token, ...withoutToken } = parameters
  const refused = yield* Effect.flip(Template.process("batch-run", withoutToken, options))
  yield* Console.log(`refused  ${refused.message}`)

  const rendered = yield* Template.process("batch-run", parameters, options)
  yield* Console.log(rendered.map((o) => `rendered ${o.kind} ${o.metadata?.name}`).join("\n"))

  const applied = yield* Template.apply("batch-run", parameters, { ...options, fieldManager: "scheduler" })
  yield* Console.log(applied.map((ref) => `applied  ${Errors.formatRef(ref)} (uid ${ref.uid})`).join("\n"))

  const deleted = yield* Template.delete("batch-run", parameters, options)
  yield* Console.log(deleted.map((ref) => `deleted  ${Errors.formatRef(ref)}`).join("\n"))
})

const flag = (name: string): string | undefined => {
  const at = process.argv.indexOf(name)
  return at === -1 ? undefined : process.argv[at + 1]
}

/** On a cluster without OpenShift's API: render here, then apply and delete the objects as a set. */
const rendered = (namespace: string) =>
  Effect.gen(function*() {
    const [template] = yield* Manifests.parse(fs.readFileSync(templateFile, "utf8"))
    const objects = yield* Template.render(template!, parameters)
    yield* Console.log(objects.map((o) => `rendered ${o.kind} ${o.metadata?.name}`).join("\n"))
    const applied = yield* Manifests.apply(objects, { namespace, fieldManager: "scheduler" })
    yield* Console.log(applied.map((ref) => `applied  ${Errors.formatRef(ref)} (uid ${ref.uid})`).join("\n"))
    const deleted = yield* Manifests.delete(objects, { namespace })
    yield* Console.log(deleted.map((ref) => `deleted  ${Errors.formatRef(ref)}`).join("\n"))
  })

const kubeconfig = flag("--kubeconfig")
const main: Effect.Effect<void, unknown> = kubeconfig !== undefined
  ? rendered(flag("--namespace") ?? "batch").pipe(
    Effect.provide(NodeKube.layerFromFile({ path: kubeconfig, context: flag("--context") }))
  )
  // Both namespaces exist, as on a cluster: the template's and the one its objects go to.
  : program.pipe(Effect.provide(FakeCluster.layer({ namespaces: ["templates", "batch"] })))

Effect.runPromise(main).then(
  () => console.log("done"),
  (error) => {
    console.error(`failed: ${error instanceof Error ? error.message : String(error)}`)
    process.exit(1)
  }
)

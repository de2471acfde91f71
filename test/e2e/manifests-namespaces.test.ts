/**
 * Issue 41.1 against a real control plane: a YAML with its own Namespace, applied through
 * `Manifests.apply` with default options, lands where `kubectl apply -f` puts the same file
 * (an object's own namespace wins, the kubeconfig's fills in the others); a `namespace`
 * given explicitly conflicts as `--namespace` does, and a file with its Namespace last takes
 * one apply where kubectl needs two. Each run uses its own names, so kubectl's copy and
 * ours never meet; the comparison replaces the run's name by `<ns>`.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { Manifests, NodeKube, ValidationError } from "effect-kube"
import { kubeconfigPath, kubectl } from "./setup/cluster.js"

/** The file, for one namespace name: the Namespace first (as kubectl needs it), objects in it and one that names none. */
const shopYaml = (ns: string, namespaceLast = false) => {
  const namespace = `apiVersion: v1
kind: Namespace
metadata:
  name: ${ns}
`
  const members = `apiVersion: v1
kind: ConfigMap
metadata:
  name: ${ns}-settings
  namespace: ${ns}
data:
  CURRENCY: EUR
---
apiVersion: v1
kind: Secret
metadata:
  name: ${ns}-credentials
  namespace: ${ns}
stringData:
  password: not-a-real-one
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: ${ns}-no-namespace
data:
  WHERE: kubeconfig
`
  return namespaceLast ? `${members}---\n${namespace}` : `${namespace}---\n${members}`
}

const unique = (what: string) => `e2e-${what}-${Date.now().toString(36)}${Math.floor(Math.random() * 1e4)}`

interface Placed {
  readonly kind: string
  readonly namespace: string
  readonly name: string
}

/** Where kubectl sees the file's objects: kind, namespace and name, the run's name replaced. */
const placedByKubectl = async (ns: string, yaml: string): Promise<ReadonlyArray<string>> => {
  const listed = JSON.parse(await kubectl(["get", "-f", "-", "-o", "json"], { input: yaml })) as {
    readonly items: ReadonlyArray<{ readonly kind: string; readonly metadata: { namespace?: string; name: string } }>
  }
  return normalize(ns, listed.items.map((o) => ({ kind: o.kind, namespace: o.metadata.namespace ?? "", name: o.metadata.name })))
}

const normalize = (ns: string, placed: ReadonlyArray<Placed>): ReadonlyArray<string> =>
  placed.map((p) => `${p.kind} ${p.namespace}/${p.name}`.replaceAll(ns, "<ns>")).sort()

const cleanUp = async (ns: string, yaml: string) => {
  await kubectl(["delete", "-f", "-", "--ignore-not-found", "--wait=false"], { input: yaml }).catch(() => "")
}

const layer = () => NodeKube.layerFromFile({ path: kubeconfigPath() })

describe("Manifests.apply and kubectl apply -f on a file with its own Namespace", () => {
  it.live("places every object where kubectl does, with default options", () =>
    Effect.gen(function*() {
      const theirs = unique("kubectl")
      const ours = unique("ours")
      const theirYaml = shopYaml(theirs)
      const ourYaml = shopYaml(ours)
      yield* Effect.addFinalizer(() => Effect.promise(() => Promise.all([cleanUp(theirs, theirYaml), cleanUp(ours, ourYaml)])))

      yield* Effect.promise(() => kubectl(["apply", "-f", "-"], { input: theirYaml }))
      const byKubectl = yield* Effect.promise(() => placedByKubectl(theirs, theirYaml))

      const applied = yield* Manifests.apply(yield* Manifests.parse(ourYaml)).pipe(Effect.provide(layer()))
      const byUs = normalize(ours, applied.map((r) => ({ kind: r.kind, namespace: r.namespace ?? "", name: r.name })))
      assert.deepStrictEqual(byUs, byKubectl)
      // and kubectl agrees on where ours are
      assert.deepStrictEqual(yield* Effect.promise(() => placedByKubectl(ours, ourYaml)), byKubectl)
      assert.deepStrictEqual(byKubectl, [
        "ConfigMap <ns>/<ns>-settings",
        "ConfigMap default/<ns>-no-namespace",
        "Namespace /<ns>",
        "Secret <ns>/<ns>-credentials"
      ])
      // the Namespace was applied first
      assert.strictEqual(applied[0]?.kind, "Namespace")
    }).pipe(Effect.scoped))

  it.live("an explicit namespace conflicts as --namespace does, and the matching one fills in the others", () =>
    Effect.gen(function*() {
      const ns = unique("explicit")
      const yaml = shopYaml(ns)
      yield* Effect.addFinalizer(() => Effect.promise(() => cleanUp(ns, yaml)))

      const kubectlSays = yield* Effect.promise(() =>
        kubectl(["apply", "-n", "default", "-f", "-"], { input: yaml }).then(
          () => "",
          (e: { readonly stderr?: string }) => e.stderr ?? ""
        )
      )
      assert.include(kubectlSays, `the namespace from the provided object "${ns}" does not match the namespace "default"`)
      const refused = yield* Effect.flip(
        Manifests.apply(yield* Manifests.parse(yaml), { namespace: "default" }).pipe(Effect.provide(layer()))
      )
      assert.instanceOf(refused, ValidationError)
      assert.include(refused.message, `metadata.namespace is "${ns}" but the namespace option is "default"`)
      assert.include(refused.message, `pass namespace: "${ns}"`)

      // kubectl applies the Namespace before it meets the conflict; we refuse before any write
      yield* Effect.promise(() => kubectl(["delete", "namespace", ns, "--ignore-not-found", "--wait=true"]))
      const applied = yield* Manifests.apply(yield* Manifests.parse(yaml), { namespace: ns }).pipe(Effect.provide(layer()))
      const listed = yield* Effect.promise(() => kubectl(["apply", "-n", ns, "-f", "-", "--dry-run=server", "-o", "name"], { input: yaml }))
      assert.deepStrictEqual(
        applied.map((r) => `${r.kind.toLowerCase()}/${r.name}`).sort(),
        listed.trim().split("\n").sort()
      )
      assert.deepStrictEqual(applied.find((r) => r.name === `${ns}-no-namespace`)?.namespace, ns)
    }).pipe(Effect.scoped))

  it.live("a file with its Namespace last: kubectl fails the objects before it on a first run, we apply it in one", () =>
    Effect.gen(function*() {
      const theirs = unique("kubectl-last")
      const ours = unique("ours-last")
      const theirYaml = shopYaml(theirs, true)
      const ourYaml = shopYaml(ours, true)
      yield* Effect.addFinalizer(() => Effect.promise(() => Promise.all([cleanUp(theirs, theirYaml), cleanUp(ours, ourYaml)])))

      const first = yield* Effect.promise(() =>
        kubectl(["apply", "-f", "-"], { input: theirYaml }).then(() => "", (e: { readonly stderr?: string }) => e.stderr ?? "")
      )
      assert.include(first, `namespaces "${theirs}" not found`)
      yield* Effect.promise(() => kubectl(["apply", "-f", "-"], { input: theirYaml }))
      const byKubectl = yield* Effect.promise(() => placedByKubectl(theirs, theirYaml))

      yield* Manifests.apply(yield* Manifests.parse(ourYaml)).pipe(Effect.provide(layer()))
      assert.deepStrictEqual(yield* Effect.promise(() => placedByKubectl(ours, ourYaml)), byKubectl)
    }).pipe(Effect.scoped))
})

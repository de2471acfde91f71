/**
 * `effect-kube crd-gen`: CustomResourceDefinitions, from manifest files or from a cluster, turned into
 * TypeScript modules in a directory (see `gen.ts` for what a module holds).
 *
 *   effect-kube crd-gen <file or directory>... --out <dir> [--import <module>]
 *   effect-kube crd-gen --from-cluster [--kubeconfig <path>] [--context <name>] [--only <crd-name>]... --out <dir>
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { ValidationError } from "../../Errors.js"
import * as Kube from "../../Kube.js"
import * as Manifests from "../../Manifests.js"
import { CustomResourceDefinitions } from "../../resources/generated.js"
import { generate, GenerateError } from "./gen.js"

/** The parsed command line of `crd-gen`. @internal */
export interface Arguments {
  readonly inputs: ReadonlyArray<string>
  readonly fromCluster: boolean
  readonly out: string
  readonly importFrom: string | undefined
  readonly kubeconfig: string | undefined
  readonly context: string | undefined
  readonly only: ReadonlyArray<string>
}

/** How to run it, for `--help` and for a command line that is wrong. @internal */
export const usage = `usage:
  effect-kube crd-gen <file or directory>... --out <dir> [--import <module>]
  effect-kube crd-gen --from-cluster [--kubeconfig <path>] [--context <name>] [--only <crd name>]... --out <dir>

Writes one TypeScript module per CustomResourceDefinition: per served version its Schemas, types and a
typed Resource. Files may hold several YAML or JSON documents; directories are read for *.yaml, *.yml
and *.json files. --import sets the module the generated code imports effect-kube from.`

const bad = (detail: string) => new ValidationError({ subject: "crd-gen", detail: `${detail}\n\n${usage}` })

/** Reads `crd-gen`'s arguments (those after the command's name). @internal */
export const parseArguments = (args: ReadonlyArray<string>): Effect.Effect<Arguments, ValidationError> =>
  Effect.suspend(() => {
    const inputs: Array<string> = []
    const only: Array<string> = []
    let out: string | undefined
    let importFrom: string | undefined
    let kubeconfig: string | undefined
    let context: string | undefined
    let fromCluster = false
    for (let i = 0; i < args.length; i++) {
      const arg = args[i]!
      const value = () => {
        const next = args[++i]
        if (next === undefined || next.startsWith("--")) throw bad(`${arg} needs a value`)
        return next
      }
      if (arg === "--out" || arg === "-o") out = value()
      else if (arg === "--import") importFrom = value()
      else if (arg === "--kubeconfig") kubeconfig = value()
      else if (arg === "--context") context = value()
      else if (arg === "--only") only.push(value())
      else if (arg === "--from-cluster") fromCluster = true
      else if (arg.startsWith("-")) throw bad(`unknown option ${arg}`)
      else inputs.push(arg)
    }
    if (out === undefined) throw bad("--out <dir> is required")
    if (!fromCluster && inputs.length === 0) throw bad("give CRD files or directories, or --from-cluster")
    return Effect.succeed({ inputs, fromCluster, out, importFrom, kubeconfig, context, only })
  }).pipe(Effect.catchDefect((e) => (e instanceof ValidationError ? Effect.fail(e) : Effect.die(e))))

const manifestFiles = (input: string): Array<string> => {
  const stat = Fs.statSync(input)
  if (!stat.isDirectory()) return [input]
  return Fs.readdirSync(input).filter((f) => /\.(ya?ml|json)$/.test(f)).sort().map((f) => Path.join(input, f))
}

const readFiles = (inputs: ReadonlyArray<string>): Effect.Effect<Array<unknown>, ValidationError> =>
  Effect.gen(function*() {
    const crds: Array<unknown> = []
    for (const input of inputs) {
      const files = yield* Effect.try({
        try: () => manifestFiles(input),
        catch: (cause) => new ValidationError({ subject: input, detail: "cannot be read", cause })
      })
      for (const file of files) {
        const bytes = yield* Effect.try({
          try: () => Fs.readFileSync(file),
          catch: (cause) => new ValidationError({ subject: file, detail: "cannot be read", cause })
        })
        const manifests = yield* Effect.mapError(Manifests.parse(bytes), (e) =>
          new ValidationError({ subject: file, detail: e.message, cause: e }))
        crds.push(...manifests.filter((m) => (m as { kind?: unknown }).kind === "CustomResourceDefinition"))
      }
    }
    return crds
  })

/**
 * Runs `crd-gen` and answers what it wrote, a line per module. `cluster` is the layer `--from-cluster` reads
 * the CRDs through (the bin's is the kubeconfig's, `NodeKube`).
 *
 * @internal
 */
export const crdGen = <E>(
  args: Arguments,
  cluster: (args: Arguments) => Layer.Layer<Kube.Requirements, E>
): Effect.Effect<ReadonlyArray<string>, ValidationError | E | Kube.Error> =>
  Effect.gen(function*() {
    const crds = args.fromCluster
      ? yield* Kube.api(CustomResourceDefinitions).list().pipe(
        Effect.map((list) => list.items as ReadonlyArray<unknown>),
        Effect.provide(cluster(args))
      )
      : yield* readFiles(args.inputs)
    const chosen = args.only.length === 0
      ? crds
      : crds.filter((c) => args.only.includes(String((c as { metadata?: { name?: unknown } }).metadata?.name)))
    if (chosen.length === 0) return yield* Effect.fail(new ValidationError({ subject: "crd-gen", detail: "found no CustomResourceDefinition" }))
    const modules = yield* Effect.try({
      try: () =>
        generate(chosen, {
          importFrom: args.importFrom,
          command: args.fromCluster ? "--from-cluster" : undefined
        }),
      catch: (e) =>
        e instanceof GenerateError
          ? new ValidationError({ subject: "crd-gen", detail: e.message })
          : new ValidationError({ subject: "crd-gen", detail: "generation failed", cause: e })
    })
    yield* Effect.try({
      try: () => {
        Fs.mkdirSync(args.out, { recursive: true })
        for (const m of modules) Fs.writeFileSync(Path.join(args.out, m.file), m.source)
      },
      catch: (cause) => new ValidationError({ subject: args.out, detail: "cannot be written", cause })
    })
    return modules.map((m) => `wrote ${Path.join(args.out, m.file)}`)
  })

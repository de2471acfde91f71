/**
 * `effect-kube crd-gen`: CustomResourceDefinitions, from manifest files or from a cluster, turned into
 * TypeScript modules in a directory (see `gen.ts` for what a module holds).
 *
 *   effect-kube crd-gen <file or directory>... [--recursive] --out <dir> [--import <module>]
 *   effect-kube crd-gen --help
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
  /** Read directories' sub-folders too (`--recursive`, `-R`, as kubectl's `-f dir -R`). */
  readonly recursive: boolean
  /** `--help` or `-h`: print {@link usage} and do nothing else. */
  readonly help: boolean
}

/** The commands of the `effect-kube` bin, for `effect-kube --help`. @internal */
export const commandsUsage = `usage: effect-kube <command> [options]

commands:
  crd-gen   TypeScript modules (Schemas, types, typed Resources) from CustomResourceDefinitions
  help      this text; \`effect-kube help <command>\` or \`effect-kube <command> --help\` for a command's own`

/** How to run it, for `--help` and for a command line that is wrong. @internal */
export const usage = `usage:
  effect-kube crd-gen <file or directory>... [--recursive] --out <dir> [--import <module>]
  effect-kube crd-gen --from-cluster [--kubeconfig <path>] [--context <name>] [--only <crd name>]... --out <dir>
  effect-kube crd-gen --help

Writes one TypeScript module per CustomResourceDefinition: per served version its Schemas, types and a
typed Resource. Files may hold several YAML or JSON documents; a directory is read for its *.yaml, *.yml
and *.json files, and with --recursive (-R, as kubectl's) for those of its sub-folders too (without it,
sub-folders are skipped and the output says how many). --import sets the module the generated code
imports effect-kube from; --only keeps the CRDs of those names.`

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
    let recursive = false
    if (args.includes("--help") || args.includes("-h")) {
      return Effect.succeed({
        inputs,
        fromCluster,
        out: "",
        importFrom,
        kubeconfig,
        context,
        only,
        recursive,
        help: true
      })
    }
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
      else if (arg === "--recursive" || arg === "-R") recursive = true
      else if (arg.startsWith("-")) throw bad(`unknown option ${arg} (--help lists them)`)
      else inputs.push(arg)
    }
    if (out === undefined) throw bad("--out <dir> is required")
    if (!fromCluster && inputs.length === 0) throw bad("give CRD files or directories, or --from-cluster")
    return Effect.succeed({ inputs, fromCluster, out, importFrom, kubeconfig, context, only, recursive, help: false })
  }).pipe(Effect.catchDefect((e) => (e instanceof ValidationError ? Effect.fail(e) : Effect.die(e))))

const manifestPattern = /\.(ya?ml|json)$/

/** The manifest files of an input (a file, or a directory's, sorted, its sub-folders' with `recursive`), and the sub-folders skipped. */
const manifestFiles = (input: string, recursive: boolean): { files: Array<string>; skipped: Array<string> } => {
  if (!Fs.statSync(input).isDirectory()) return { files: [input], skipped: [] }
  const files: Array<string> = []
  const skipped: Array<string> = []
  const visit = (dir: string) => {
    const entries = Fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    for (const entry of entries) {
      const path = Path.join(dir, entry.name)
      if (entry.isDirectory()) {
        if (recursive) visit(path)
        else skipped.push(path)
      } else if (manifestPattern.test(entry.name)) files.push(path)
    }
  }
  visit(input)
  return { files, skipped }
}

const readFiles = (
  inputs: ReadonlyArray<string>,
  recursive: boolean
): Effect.Effect<{ crds: Array<unknown>; skipped: Array<string> }, ValidationError> =>
  Effect.gen(function*() {
    const crds: Array<unknown> = []
    const skipped: Array<string> = []
    for (const input of inputs) {
      const found = yield* Effect.try({
        try: () => manifestFiles(input, recursive),
        catch: (cause) => new ValidationError({ subject: input, detail: "cannot be read", cause })
      })
      skipped.push(...found.skipped)
      const files = found.files
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
    return { crds, skipped }
  })

/** The line that says which sub-folders were not read, if any. */
const skippedLine = (skipped: ReadonlyArray<string>): string =>
  `skipped ${skipped.length} sub-folder${skipped.length === 1 ? "" : "s"} (${skipped.join(", ")}): ` +
  "pass --recursive to read them too"

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
    const { crds, skipped } = args.fromCluster
      ? yield* Kube.api(CustomResourceDefinitions).list().pipe(
        Effect.map((list) => ({ crds: list.items as ReadonlyArray<unknown>, skipped: [] })),
        Effect.provide(cluster(args))
      )
      : yield* readFiles(args.inputs, args.recursive)
    const chosen = args.only.length === 0
      ? crds
      : crds.filter((c) => args.only.includes(String((c as { metadata?: { name?: unknown } }).metadata?.name)))
    if (chosen.length === 0) {
      return yield* Effect.fail(
        new ValidationError({
          subject: "crd-gen",
          detail: `found no CustomResourceDefinition${skipped.length > 0 ? `; ${skippedLine(skipped)}` : ""}`
        })
      )
    }
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
    const wrote = modules.map((m) => `wrote ${Path.join(args.out, m.file)}`)
    return skipped.length > 0 ? [...wrote, skippedLine(skipped)] : wrote
  })

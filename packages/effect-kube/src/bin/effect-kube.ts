#!/usr/bin/env node
/**
 * The `effect-kube` command (`npx effect-kube crd-gen ...`): for now one subcommand, `crd-gen`, which
 * turns CustomResourceDefinitions into TypeScript modules (Schemas, types and typed Resources).
 *
 * @since 0.2.0
 */
import * as NodeRuntime from "@effect/platform-node-shared/NodeRuntime"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import { commandsUsage, crdGen, parseArguments, usage } from "../internal/crd/cli.js"
import * as NodeKube from "../NodeKube.js"

const [command, ...rest] = process.argv.slice(2)

/** Each command's own help, for `effect-kube <command> --help` and `effect-kube help <command>`. */
const commands: Record<string, string> = { "crd-gen": usage }

const program = Effect.gen(function*() {
  if (command === undefined || command === "--help" || command === "-h" || command === "help") {
    const topic = command === "help" ? rest[0] : undefined
    if (topic === undefined) return yield* Console.log(commandsUsage)
    const text = commands[topic]
    if (text !== undefined) return yield* Console.log(text)
    yield* Console.error(`effect-kube help: unknown command ${topic}\n\n${commandsUsage}`)
    return yield* Effect.sync(() => process.exit(2))
  }
  if (command !== "crd-gen") {
    yield* Console.error(`effect-kube: unknown command ${command}\n\n${commandsUsage}`)
    return yield* Effect.sync(() => process.exit(2))
  }
  const args = yield* parseArguments(rest)
  if (args.help) return yield* Console.log(usage)
  const written = yield* crdGen(args, (a) =>
    a.kubeconfig !== undefined || a.context !== undefined
      ? NodeKube.layerFromFile({
        ...(a.kubeconfig !== undefined ? { path: a.kubeconfig } : {}),
        ...(a.context !== undefined ? { context: a.context } : {})
      })
      : NodeKube.layer)
  for (const line of written) yield* Console.log(line)
}).pipe(
  Effect.catch((error) =>
    Effect.flatMap(
      // a command-line error's subject is the command itself: said once
      Console.error(
        `effect-kube crd-gen: ${error._tag === "ValidationError" && error.subject === "crd-gen" ? error.detail : error.message}`
      ),
      () => Effect.sync(() => process.exit(1))
    )
  )
)

NodeRuntime.runMain(program, { disableErrorReporting: true })

/**
 * The smoke flow of examples/smoke.ts, runtime-neutral: given a layer (BunKube,
 * DenoKube), create a pod, read it, list it, watch it to Succeeded, read its log and
 * delete it, printing one line per step. The pod is `smoke-<runtime>`, labelled
 * `app=smoke-<runtime>`, so that runtimes can share one cluster at the same time. An
 * `other` URL is also asked through the same HttpClient: it must not be given the
 * cluster's CA.
 */
import * as Console from "effect/Console"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as HttpClient from "effect/http/HttpClient"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import * as Kube from "../../packages/effect-kube/src/Kube.js"
import type { Pod } from "../../packages/effect-kube/src/resources/index.js"
import { Pods } from "../../packages/effect-kube/src/resources/index.js"

const pods = Kube.api(Pods)

const flow = (id: string, other: string | undefined) =>
  Effect.gen(function*() {
    const name = `smoke-${id}`
    const selector = `app=${name}`
    const smokePod: Pod = {
      metadata: { name, labels: { app: name } },
      spec: {
        restartPolicy: "Never",
        containers: [{ name: "main", image: "busybox:1.36", command: ["sh", "-c", "echo hello from effect-kube"] }]
      }
    }
    const created = yield* pods.create(smokePod)
    yield* Console.log(`created  pod/${created.metadata?.name} (uid ${created.metadata?.uid})`)
    const found = yield* pods.get(name)
    yield* Console.log(`get      ${Option.isSome(found) ? "found" : "absent"}`)
    const listed = yield* pods.list({ labelSelector: selector })
    yield* Console.log(`list     ${selector}: ${listed.items.map((p) => p.metadata?.name).join(", ")}`)
    yield* pods.watch({ labelSelector: selector }).pipe(
      Stream.takeUntil((event) => event.type !== "BOOKMARK" && event.object.status?.phase === "Succeeded"),
      Stream.runDrain,
      Effect.timeoutOrElse({
        duration: Duration.seconds(20),
        orElse: () => Effect.fail(new Error("no Succeeded within 20 s"))
      })
    )
    yield* Console.log("watch    phase=Succeeded")
    const log = yield* pods.logs(name)
    yield* Console.log(`logs     ${log.trim()}`)
    const deleted = yield* pods.deleteAll({ labelSelector: selector, gracePeriodSeconds: 0 })
    yield* Console.log(`deleted  ${deleted}`)
    if (other !== undefined) {
      const client = yield* HttpClient.HttpClient
      const answer = yield* Effect.result(client.get(other))
      const outcome = Result.isFailure(answer)
        ? `failed (${answer.failure.reason._tag})`
        : `status ${answer.success.status}`
      yield* Console.log(`other    ${outcome}`)
    }
  })

/** Runs the flow with `layer` and exits 0 on success, 1 with the error's message on failure. */
export const main = (
  id: string,
  runtime: string,
  layer: Layer.Layer<Kube.Requirements, unknown>,
  other: string | undefined
) =>
  Effect.runPromise(Effect.provide(flow(id, other), layer)).then(
    () => console.log(`smoke passed on ${runtime}`),
    (error) => {
      console.error(`smoke failed on ${runtime}: ${error instanceof Error ? error.message : String(error)}`)
      ;(globalThis as { process?: { exit(code: number): void } }).process?.exit(1)
    }
  )

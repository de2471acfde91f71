/**
 * What every e2e test shares: the layer that talks to the real control plane the global setup started (or the one
 * `KUBECONFIG` names), and a namespace of its own per test.
 */
import { Effect, Layer, Option, Schedule, Stream } from "effect"
import * as crypto from "node:crypto"
import { Kube, Namespaces, NodeKube } from "./lib.js"

/** The kubeconfig of the cluster under test: the global setup sets KUBECONFIG before the test files run. */
export const kubeconfigPath = (): string => {
  const path = process.env.KUBECONFIG
  if (path === undefined || path === "") throw new Error("KUBECONFIG is not set: run through npm run test:e2e")
  return path
}

/** A new client (its own connections) from the kubeconfig, as a user's program makes one. */
export const freshLayer = () => NodeKube.layerFromFile({ path: kubeconfigPath() })

/**
 * The client a test file shares. Files give it to `it.layer(layer, { excludeTestServices: true })`: the tests talk
 * to a real server in real time, so they run on the live Clock, not the TestClock.
 */
export const layer = Layer.suspend(freshLayer)

/** A DNS-1123 name no other test (or run) uses. */
export const uniqueName = (prefix: string): string => `${prefix}-${crypto.randomBytes(4).toString("hex")}`

/** Namespaces, cluster-scoped. */
export const namespaces = Kube.api(Namespaces)

/**
 * A namespace created for one test and deleted when its scope closes. A real server terminates namespaces
 * asynchronously (its namespace controller empties them first); the release does not wait for that.
 */
export const testNamespace = (prefix: string) =>
  Effect.acquireRelease(
    Effect.gen(function*() {
      const name = uniqueName(`e2e-${prefix}`)
      yield* namespaces.create({ metadata: { name, labels: { "effect-kube.dev/e2e": "true" } } })
      return name
    }),
    (name) => Effect.ignore(namespaces.delete(name))
  )

/** Polls `effect` until it answers `Some`, every 200 ms, for at most `attempts` tries. */
export const eventually = <A, E, R>(effect: Effect.Effect<Option.Option<A>, E, R>, attempts = 100) =>
  effect.pipe(
    Effect.flatMap((found) => Option.isSome(found) ? Effect.succeed(found.value) : Effect.fail("pending" as const)),
    Effect.retry({ schedule: Schedule.spaced("200 millis"), times: attempts, while: (e) => e === "pending" })
  )

const textDecoder = new TextDecoder()

/** A byte stream read to its end as UTF-8 text. */
export const allText = <E, R>(bytes: Stream.Stream<Uint8Array, E, R>) =>
  bytes.pipe(
    Stream.map((chunk) => textDecoder.decode(chunk)),
    Stream.runFold(() => "", (text, chunk) => text + chunk)
  )

/** A byte stream read as UTF-8 text until the text holds `marker` (or the stream ends): the text so far. */
export const textUntil = <E, R>(bytes: Stream.Stream<Uint8Array, E, R>, marker: string) =>
  bytes.pipe(
    Stream.map((chunk) => textDecoder.decode(chunk)),
    Stream.scan(() => "", (text, chunk) => text + chunk),
    Stream.takeUntil((text) => text.includes(marker)),
    Stream.runLast,
    Effect.map(Option.getOrElse(() => ""))
  )

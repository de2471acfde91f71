/**
 * Run as a child process by test/NodeKube.test.ts, with `NODE_EXTRA_CA_CERTS` naming a
 * CA that the platform trusts only in that process (Node reads it at start-up): builds
 * `NodeKube.layerFromFile` for the kubeconfig given, sends one GET to the cluster and
 * one to another origin through the same HttpClient, and prints what each returned (the
 * loopback servers answer with what they saw of the client) or how it failed.
 *
 * Usage: node --import tsx test/util/otherOrigin.ts <kubeconfig> <cluster url> <other url>
 */
import * as HttpClient from "effect/http/HttpClient"
import * as Effect from "effect/Effect"
import * as NodeKube from "../../packages/effect-kube/src/NodeKube.js"

const [kubeconfig, clusterUrl, otherUrl] = process.argv.slice(2) as [string, string, string]

const get = (url: string) =>
  Effect.flatMap(HttpClient.HttpClient, (client) => Effect.flatMap(client.get(url), (response) => response.json)).pipe(
    Effect.map((seen) => ({ ok: true, seen })),
    Effect.catch((error) => Effect.succeed({ ok: false, error: String(error) }))
  )

const program = Effect.all({ cluster: get(clusterUrl), other: get(otherUrl) })

Effect.runPromise(Effect.provide(program, NodeKube.layerFromFile({ path: kubeconfig }))).then(
  (result) => console.log(JSON.stringify(result)),
  (error) => {
    console.error(String(error))
    process.exit(1)
  }
)

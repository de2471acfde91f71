/**
 * `npx tsx bench/get-layers.ts [n] [variant ...]`: where a sequential GET's client CPU goes, layer by layer, over
 * HTTP/1.1 and HTTP/2. One client process against `bench/server.ts` in its own (loopback HTTPS, a token file), the
 * variants taking turns in blocks of 50 so that load from elsewhere falls on all alike; each prints p50, p99 (and their
 * ratio to the floor's) and the client's CPU per GET. Each variant adds one layer to the one before:
 * - `floor`: `node:https` keep-alive + `JSON.parse` (`bench/clients.ts`'s floor);
 * - `undici-h1`, `undici-h2`: undici's own `request` + `body.text()` + `JSON.parse`, HTTP/2 by ALPN for the second;
 * - `node-h2`: one bare `node:http2` session, a `session.request` + `JSON.parse` per GET (what the HTTP/2 pool of
 *   `http2.ts` is built on: the floor of our h2 transport);
 * - `transport-h1`, `transport-h2`: the Node transport (`nodeTransport.ts`: the dispatcher for the credentials,
 *   `Negotiated` on h2, gzip accepted) and its HttpClient (`undiciHttpClient.ts`), one `Effect.runPromise` per GET,
 *   with the credentials set as the request path sets them;
 * - `request-h1`, `request-h2`: the request path (`client.ts`'s `sendJson`: credentials, headers, span, metrics,
 *   timeout, retries, warnings), `runtime.runPromise` per GET;
 * - `get-h1`, `get-h2`: `Kube.api(Pods).get` through the NodeKube layer, as `bench/clients.ts` measures it (the above
 *   plus the Pod's decoding and check).
 * Names on the command line pick variants (the floor always runs).
 */
import * as Fs from "node:fs"
import * as Http2 from "node:http2"
import * as Https from "node:https"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Effect from "effect/Effect"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import * as Kube from "../packages/effect-kube/src/Kube.js"
import * as KubeConfig from "../packages/effect-kube/src/KubeConfig.js"
import * as NodeKube from "../packages/effect-kube/src/NodeKube.js"
import { Pods } from "../packages/effect-kube/src/resources/index.js"
import * as Client from "../packages/effect-kube/src/internal/client/execute.js"
import { currentCredentials } from "../packages/effect-kube/src/internal/transport/contract.js"
import * as NodeTransport from "../packages/effect-kube/src/internal/transport/node.js"
import * as Undici from "../packages/effect-kube/src/internal/transport/undici.js"
import { writeTokenFileKubeconfig } from "./kubeconfig.js"
import { printTurns, startServer, takeTurns, turn, type Turn } from "./turns.js"

const [count, ...picked] = process.argv.slice(2)
const n = Number(count ?? 1000)
const token = "bench-token"

const main = async () => {
  const { ca, child, ready } = await startServer(token)
  process.on("exit", () => child.kill())
  const podName = ready.podNames["default"]![0]!
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "effect-kube-layers-"))
  const kubeconfig = writeTokenFileKubeconfig(dir, ready.url, token, ca)
  const path = `/api/v1/namespaces/default/pods/${podName}`
  const url = `${ready.url}${path}`
  const headers = { authorization: `Bearer ${token}`, accept: "application/json" }
  const variants: Array<Turn> = []
  const add = (name: string, get: () => Promise<unknown>) => {
    if (name === "floor" || picked.length === 0 || picked.includes(name)) variants.push(turn(name, get))
  }

  const agent = new Https.Agent({ keepAlive: true, ca })
  add("floor", () =>
    new Promise((resolve, reject) => {
      const req = Https.get(url, { agent, headers }, (res) => {
        const chunks: Array<Buffer> = []
        res.on("data", (c: Buffer) => chunks.push(c))
        res.on("end", () => resolve(JSON.parse(Buffer.concat(chunks).toString("utf8"))))
        res.on("error", reject)
      })
      req.on("error", reject)
    }))

  const origin = new URL(ready.url).origin
  for (const h2 of [false, true]) {
    const raw = new Undici.Agent({ connect: { ca }, bodyTimeout: 0, headersTimeout: 0, allowH2: h2 })
    add(`undici-${h2 ? "h2" : "h1"}`, async () => {
      const res = await raw.request({ origin, path, method: "GET", headers })
      return JSON.parse(await res.body.text())
    })
  }

  const session = Http2.connect(origin, { ca })
  add("node-h2", () =>
    new Promise((resolve, reject) => {
      const stream = session.request({ ":method": "GET", ":path": path, ...headers })
      const chunks: Array<Buffer> = []
      stream.on("data", (chunk: Buffer) => chunks.push(chunk))
      stream.on("end", () => resolve(JSON.parse(Buffer.concat(chunks).toString("utf8"))))
      stream.on("error", reject)
    }))

  const scope = await Effect.runPromise(Scope.make())
  for (const http2 of [false, true]) {
    const suffix = http2 ? "h2" : "h1"
    const layer = NodeKube.layerFromKubeConfig(KubeConfig.layerFromFile({ path: kubeconfig }), { http2 })
    const runtime = ManagedRuntime.make(layer)
    await runtime.context()
    const kubeConfig = await runtime.runPromise(Effect.gen(function*() {
      return yield* KubeConfig.KubeConfig
    }))
    const credentials = await runtime.runPromise(kubeConfig.auth.credentials)
    const transport = await Effect.runPromise(Scope.provide(scope)(NodeTransport.make(kubeConfig, { http2 })))
    const viaTransport = Effect.provideService(
      Effect.flatMap(
        Effect.flatMap(transport.execute(HttpClientRequest.get(url, { headers })), (response) => response.text),
        (text) => Effect.sync(() => JSON.parse(text) as unknown)
      ),
      currentCredentials,
      credentials
    )
    add(`transport-${suffix}`, () => Effect.runPromise(viaTransport))
    const spec: Client.Spec = {
      method: "GET",
      path,
      operation: { verb: "get", kind: "Pod", namespace: "default", name: podName }
    }
    const viaRequestPath = Client.sendJson(spec)
    add(`request-${suffix}`, () => runtime.runPromise(viaRequestPath))
    const pods = Kube.api(Pods, { namespace: "default" })
    const viaApi = Effect.map(pods.get(podName), Option.getOrThrow)
    add(`get-${suffix}`, () => runtime.runPromise(viaApi))
  }

  await takeTurns(variants, n)
  printTurns(variants)
  Fs.rmSync(dir, { recursive: true, force: true })
  process.exit(0)
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})

/**
 * Discovery of a cluster with 50 CRD groups (beside the built-in ones): every group
 * version's resources, as `kubectl api-resources` reads them, from a FakeCluster served
 * over loopback HTTPS in a process of its own (aggregated discovery on, or off as on a
 * server before it). One process per client and mode:
 *
 *   tsx bench/discovery.ts serve                               # prints {"kubeconfig"} and serves
 *   tsx bench/discovery.ts run <client> <kubeconfig> <rounds>  # against it, or a real cluster's kubeconfig
 *
 * Clients: `effect-kube` (`Discovery.make` then `resources()`: aggregated, `/api` and
 * `/apis`), `effect-kube-per-group` (the same, its Accept of `/api` and `/apis` made plain
 * JSON below the library, so the server answers as one without aggregated discovery: one
 * request per group version), `client-node` (2.x has no aggregated discovery: `/api`,
 * `/apis`, then `KubernetesObjectApi`'s per-group-version lookup), `floor` (`node:https`:
 * the two aggregated documents, parsed) and `floor-per-group` (the index and every group
 * version's document). Each run prints one line of JSON: the median wall time of a
 * discovery (a fresh cache each), the requests one sent and the resources it found.
 * For a real cluster, `seed` prints the 50 CRDs (`tsx bench/discovery.ts seed | kubectl apply -f -`).
 */
import { Effect, ManagedRuntime } from "effect"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as Fs from "node:fs"
import * as Https from "node:https"
import * as Yaml from "yaml"
import * as k8s from "@kubernetes/client-node"
import { Discovery, NodeKube } from "effect-kube"
import { FakeCluster } from "@effect-kube/testing"

export const crdGroups = 50

const [command = "", ...rest] = process.argv.slice(2)

export const crdManifest = (): string =>
  Array.from({ length: crdGroups }, (_, i) =>
    `---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.group${i}.bench.example.com}
spec:
  group: group${i}.bench.example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget}
  versions:
  - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}
`).join("")

const serve = async () => {
  const resources = Array.from({ length: crdGroups }, (_, i) => [
    { apiVersion: `group${i}.bench.example.com/v1`, kind: `Widget${i}`, plural: `widgets${i}`, namespaced: true },
    { apiVersion: `group${i}.bench.example.com/v1`, kind: `Gadget${i}`, plural: `gadgets${i}`, namespaced: false }
  ]).flat()
  const fake = FakeCluster.makeServer({ token: "bench-discovery", resources, controllers: false })
  const listening = await FakeCluster.listen(fake, { tls: "self-signed" })
  process.stdout.write(`${JSON.stringify({ kubeconfig: listening.kubeconfigPath })}\n`)
}

/** A client: one discovery with a fresh cache, returning how many resources it found and the requests it sent. */
type Discover = () => Promise<{ readonly resources: number; readonly requests: number }>

const effectKube = (kubeconfig: string, perGroup: boolean): Discover => {
  // one client for the program, as an application holds it; each discovery starts with an empty cache
  const runtime = ManagedRuntime.make(NodeKube.layerFromFile({ path: kubeconfig }))
  let requests = 0
  const program = Effect.flatMap(Discovery.make, (discovery) => discovery.resources()).pipe(
    Effect.updateService(HttpClient.HttpClient, (client) =>
      HttpClient.mapRequest(client, (request) => {
        requests++
        const root = /\/apis?$/.test(new URL(request.url).pathname)
        return perGroup && root ? HttpClientRequest.setHeader(request, "accept", "application/json") : request
      }))
  )
  return async () => {
    requests = 0
    const found = await runtime.runPromise(program)
    return { resources: found.resources.length, requests }
  }
}

const clientNode = (kubeconfig: string): Discover => {
  const kc = new k8s.KubeConfig()
  kc.loadFromFile(kubeconfig)
  const core = kc.makeApiClient(k8s.CoreApi)
  const apis = kc.makeApiClient(k8s.ApisApi)
  return async () => {
    // a new KubernetesObjectApi: its cache of group version documents starts empty
    const objects = k8s.KubernetesObjectApi.makeApiClient(kc) as unknown as {
      resource(apiVersion: string, kind: string): Promise<unknown>
      apiVersionResourceCache: Record<string, { resources: ReadonlyArray<unknown> }>
    }
    const [coreVersions, groups] = await Promise.all([core.getAPIVersions(), apis.getAPIVersions()])
    const versions = [
      ...coreVersions.versions,
      ...groups.groups.flatMap((g) => g.versions.map((v) => v.groupVersion))
    ]
    await Promise.all(versions.map((v) => objects.resource(v, "Anything")))
    return {
      resources: Object.values(objects.apiVersionResourceCache).reduce((n, list) => n + list.resources.length, 0),
      requests: 2 + versions.length
    }
  }
}

const floor = (kubeconfig: string, perGroup: boolean): Discover => {
  const doc = Yaml.parse(Fs.readFileSync(kubeconfig, "utf8")) as {
    clusters: Array<{ cluster: Record<string, string> }>
    users: Array<{ user: Record<string, string> }>
  }
  const cluster = doc.clusters[0]!.cluster
  const user = doc.users[0]!.user
  const pem = (field: string, data: Record<string, string>) =>
    data[`${field}-data`] !== undefined ? Buffer.from(data[`${field}-data`]!, "base64") : data[field] !== undefined ? Fs.readFileSync(data[field]!) : undefined
  const agent = new Https.Agent({
    ca: pem("certificate-authority", cluster),
    cert: pem("client-certificate", user),
    key: pem("client-key", user),
    keepAlive: true
  })
  const headers = (accept: string) => ({ accept, ...(user["token"] !== undefined ? { authorization: `Bearer ${user["token"]}` } : {}) })
  const aggregated = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
  const get = <A>(path: string, accept: string) =>
    new Promise<A>((resolve, reject) => {
      Https.get(`${cluster["server"]}${path}`, { agent, headers: headers(accept) }, (res) => {
        const chunks: Array<Buffer> = []
        res.on("data", (c: Buffer) => chunks.push(c))
        res.on("end", () => resolve(JSON.parse(Buffer.concat(chunks).toString("utf8")) as A))
      }).on("error", reject)
    })
  type Aggregated = { items: ReadonlyArray<{ versions: ReadonlyArray<{ resources: ReadonlyArray<unknown> }> }> }
  if (!perGroup) {
    return async () => {
      const lists = await Promise.all([get<Aggregated>("/api", aggregated), get<Aggregated>("/apis", aggregated)])
      return { resources: lists.flatMap((l) => l.items.flatMap((g) => g.versions.flatMap((v) => v.resources))).length, requests: 2 }
    }
  }
  return async () => {
    const [core, groups] = await Promise.all([
      get<{ versions: ReadonlyArray<string> }>("/api", "application/json"),
      get<{ groups: ReadonlyArray<{ versions: ReadonlyArray<{ groupVersion: string }> }> }>("/apis", "application/json")
    ])
    const paths = [...core.versions.map((v) => `/api/${v}`), ...groups.groups.flatMap((g) => g.versions.map((v) => `/apis/${v.groupVersion}`))]
    const lists = await Promise.all(paths.map((p) => get<{ resources: ReadonlyArray<{ name: string }> }>(p, "application/json")))
    return { resources: lists.flatMap((l) => l.resources.filter((r) => !r.name.includes("/"))).length, requests: 2 + paths.length }
  }
}

const makeClient = (client: string, kubeconfig: string): Discover => {
  switch (client) {
    case "effect-kube":
      return effectKube(kubeconfig, false)
    case "effect-kube-per-group":
      return effectKube(kubeconfig, true)
    case "client-node":
      return clientNode(kubeconfig)
    case "floor":
      return floor(kubeconfig, false)
    case "floor-per-group":
      return floor(kubeconfig, true)
  }
  throw new Error(`no client ${client}`)
}

const run = async (client: string, kubeconfig: string, rounds: number) => {
  const discover = makeClient(client, kubeconfig)
  const first = await discover() // warm: connections, JIT
  const times: Array<number> = []
  for (let i = 0; i < rounds; i++) {
    const began = performance.now()
    await discover()
    times.push(performance.now() - began)
  }
  times.sort((a, b) => a - b)
  process.stdout.write(`${JSON.stringify({ client, ...first, medianMs: times[Math.floor(times.length / 2)] })}\n`)
  process.exit(0)
}

if (command === "seed") process.stdout.write(crdManifest())
else if (command === "serve") void serve()
else if (command === "run") void run(rest[0]!, rest[1]!, Number(rest[2] ?? "20"))
else throw new Error("usage: discovery.ts serve | run <client> <kubeconfig> <rounds>")

/**
 * A reflector holding 10,000 pods, with and without a transform that drops
 * `metadata.managedFields` before caching (client-go's `SetTransform`; the ask behind
 * client-node #494 and client-go #1272): the process's RSS and heap once the store is
 * ready and garbage collected. The pods are bench/pods.ts's with the managedFields a real
 * fake writes on a create through the API (half of each object's JSON, as on a real cluster's
 * pods), served by a FakeCluster over loopback HTTPS in a process of its own. One process per client:
 *
 *   tsx bench/transform.ts serve <count>                       # prints {"kubeconfig"} and serves
 *   node --expose-gc --import tsx bench/transform.ts run <client> <kubeconfig>
 *
 * Clients: `effect-kube` (`reflector()`), `effect-kube-transform` (`reflector({ transform:
 * Watcher.dropManagedFields })`), `client-node` (2.x `makeInformer`: no transform),
 * `floor` (the list parsed into a Map) and `floor-transform` (the same, managedFields deleted).
 * The base (the RSS once the client's modules are loaded, before the first request) is reported
 * beside the RSS: under tsx it is about 140 MiB for effect-kube (from its build under tsx, 130;
 * from its build under plain node, about 100), which both modes carry alike.
 */
import * as Fs from "node:fs"
import * as Https from "node:https"

// Each process imports only what its client needs (dynamic imports below): the RSS measured is
// the client's process, not one that also carries the other clients and the fake cluster (with
// them all loaded, the base was 212 MiB under tsx, more than the 10,000 pods' 123).

const [command = "", ...rest] = process.argv.slice(2)
const namespace = "bench"

/** server-side apply's `fieldsV1` for a value: every field as `f:<name>`, list items by name where they have one. */
const fieldsOf = (value: unknown): Record<string, unknown> => {
  if (typeof value !== "object" || value === null) return {}
  if (Array.isArray(value)) {
    const out: Record<string, unknown> = {}
    value.forEach((item, i) => {
      const name = typeof item === "object" && item !== null ? (item as { name?: unknown }).name : undefined
      out[typeof name === "string" ? `k:{"name":${JSON.stringify(name)}}` : `i:${i}`] = { ".": {}, ...fieldsOf(item) }
    })
    return out
  }
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [`f:${k}`, fieldsOf(v)]))
}

/** A bench pod with the managedFields a real cluster gives it. */
export const podWithManagedFields = async (i: number): Promise<Record<string, unknown>> => {
  const { pod } = await import("./pods.js")
  const p = pod(i, namespace) as { metadata: Record<string, unknown>; spec: unknown; status: unknown }
  const { name: _n, namespace: _ns, uid: _u, resourceVersion: _rv, creationTimestamp: _c, ...ownMetadata } = p.metadata
  const time = p.metadata["creationTimestamp"]
  return {
    ...p,
    metadata: {
      ...p.metadata,
      managedFields: [
        {
          manager: "kube-controller-manager",
          operation: "Update",
          apiVersion: "v1",
          time,
          fieldsType: "FieldsV1",
          fieldsV1: { "f:metadata": fieldsOf(ownMetadata), "f:spec": fieldsOf(p.spec) }
        },
        {
          manager: "kubelet",
          operation: "Update",
          apiVersion: "v1",
          time,
          fieldsType: "FieldsV1",
          fieldsV1: { "f:status": fieldsOf(p.status) },
          subresource: "status"
        }
      ]
    }
  }
}

const serve = async (count: number) => {
  const { FakeCluster } = await import("@effect-kube/testing")
  const fake = FakeCluster.makeServer({ namespaces: [namespace], controllers: false, validation: false, bookmarkIntervalMs: 0 })
  // written through the API (a seed is stored without managedFields): the managedFields are kept as sent
  for (let i = 0; i < count; i++) {
    const body = (await podWithManagedFields(i)) as { metadata: Record<string, unknown> }
    const { uid: _u, resourceVersion: _rv, ...metadata } = body.metadata
    const answer = await fake.handle(new Request(`http://fake/api/v1/namespaces/${namespace}/pods`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ ...body, metadata })
    }))
    if (answer.status !== 201) throw new Error(`create ${i}: ${answer.status} ${await answer.text()}`)
  }
  const listening = await FakeCluster.listen(fake, { tls: "self-signed" })
  process.stdout.write(`${JSON.stringify({ kubeconfig: listening.kubeconfigPath })}\n`)
}

const settle = async () => {
  const gc = (globalThis as { gc?: () => void }).gc
  for (let i = 0; i < 4; i++) {
    gc?.()
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  const memory = process.memoryUsage()
  const mib = (bytes: number) => Math.round((bytes / 2 ** 20) * 10) / 10
  return {
    rssMiB: memory.rss / 2 ** 20,
    heapMiB: memory.heapUsed / 2 ** 20,
    // what V8 keeps committed (the listing's high-water mark stays here), Buffers, and the process's peak
    heapTotalMiB: mib(memory.heapTotal),
    externalMiB: mib(memory.external),
    peakRssMiB: mib(process.resourceUsage().maxRSS * 1024)
  }
}

/** The process's RSS once its client's modules are loaded, before any request: what the store adds is over it. */
let baseRssMiB = Number.NaN
const baseline = async () => {
  baseRssMiB = (await settle()).rssMiB
}

/** Holds the store until the figures are read; returns how many objects it holds. */
const effectKube = async (kubeconfig: string, transform: boolean) => {
  const { Effect, Scope } = await import("effect")
  const { Kube, NodeKube, Pods, Watcher } = await import("effect-kube")
  await baseline()
  const scope = Effect.runSync(Scope.make())
  const store = await Effect.runPromise(
    Kube.api(Pods, { namespace }).reflector(transform ? { transform: Watcher.dropManagedFields } : {}).pipe(
      Effect.tap((s) => s.ready),
      Effect.provide(NodeKube.layerFromFile({ path: kubeconfig })),
      Scope.provide(scope)
    )
  )
  const objects = (await Effect.runPromise(store.list())).length
  return { objects, hold: store }
}

const clientNode = async (kubeconfig: string) => {
  const k8s = await import("@kubernetes/client-node")
  await baseline()
  const kc = new k8s.KubeConfig()
  kc.loadFromFile(kubeconfig)
  const core = kc.makeApiClient(k8s.CoreV1Api)
  const informer = k8s.makeInformer(kc, `/api/v1/namespaces/${namespace}/pods`, () => core.listNamespacedPod({ namespace }))
  // resolves once the first list is in the cache
  await informer.start()
  return { objects: informer.list().length, hold: informer }
}

const floor = async (kubeconfig: string, transform: boolean) => {
  const Yaml = await import("yaml")
  await baseline()
  const doc = Yaml.parse(Fs.readFileSync(kubeconfig, "utf8")) as {
    clusters: Array<{ cluster: Record<string, string> }>
    users: Array<{ user: Record<string, string> }>
  }
  const cluster = doc.clusters[0]!.cluster
  const token = doc.users[0]!.user["token"]
  const ca = Buffer.from(cluster["certificate-authority-data"]!, "base64")
  const text = await new Promise<string>((resolve, reject) => {
    Https.get(`${cluster["server"]}/api/v1/namespaces/${namespace}/pods`, {
      ca,
      headers: { accept: "application/json", ...(token !== undefined ? { authorization: `Bearer ${token}` } : {}) }
    }, (res) => {
      const chunks: Array<Buffer> = []
      res.on("data", (c: Buffer) => chunks.push(c))
      res.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
    }).on("error", reject)
  })
  const store = new Map<string, { metadata: { name: string; managedFields?: unknown } }>()
  for (const item of (JSON.parse(text) as { items: Array<{ metadata: { name: string; managedFields?: unknown } }> }).items) {
    if (transform) delete item.metadata.managedFields
    store.set(item.metadata.name, item)
  }
  return { objects: store.size, hold: store }
}

const run = async (client: string, kubeconfig: string) => {
  const held = client === "effect-kube"
    ? await effectKube(kubeconfig, false)
    : client === "effect-kube-transform"
    ? await effectKube(kubeconfig, true)
    : client === "client-node"
    ? await clientNode(kubeconfig)
    : await floor(kubeconfig, client === "floor-transform")
  const figures = await settle()
  process.stdout.write(`${JSON.stringify({ client, objects: held.objects, ...figures, baseRssMiB })}\n`)
  void held.hold
  process.exit(0)
}

if (command === "serve") void serve(Number(rest[0] ?? "10000"))
else if (command === "run") void run(rest[0]!, rest[1]!)
else throw new Error("usage: transform.ts serve <count> | run <client> <kubeconfig>")

/**
 * The benchmark's cluster: a FakeCluster preloaded with realistic pods, served over
 * loopback HTTPS with a bearer token, in a process of its own so that its work does not
 * share an event loop with the client being measured.
 *
 * `node --import tsx bench/server.ts '<json ServerConfig>'` prints one line of JSON (a
 * `ServerReady`) once it listens. A second, plain-HTTP loopback server takes the
 * benchmark's controls (POST), each answered once the work is done:
 * - `/rv?namespace=` the current resourceVersion;
 * - `/touch?namespace=&count=` modifies `count` pods of the namespace in a tight loop,
 *   round robin, each change reaching open watches as a MODIFIED event;
 * - `/log?namespace=&pod=&count=` appends `count` lines to container `app` of a pod;
 * - `/connections` how many connections the API server has accepted so far (TLS handshakes
 *   done): the `load` measure's count of connections a client opens.
 * - `/gzipped` how many answers the compressing listener has sent gzipped so far.
 *
 * The same fake is also served by a second, compressing listener (`gzipUrl`, gzip over
 * 128 KiB for clients that ask, as kube-apiserver does), for `list-slow`.
 */
import * as Http from "node:http"
import type * as Net from "node:net"
import { FakeCluster } from "@effect-kube/testing"
import { pod } from "./pods.js"

export interface ServerConfig {
  readonly tls: { readonly cert: string; readonly key: string; readonly ca: string }
  readonly token: string
  /** Namespaces and how many pods each holds. */
  readonly seed: ReadonlyArray<{ readonly namespace: string; readonly pods: number }>
}

export interface ServerReady {
  readonly url: string
  readonly kubeconfigPath: string
  readonly control: string
  /** The same fake, served with compression (gzip over 128 KiB for clients that ask). */
  readonly gzipUrl: string
  readonly gzipKubeconfigPath: string
  /** The pod names of each seeded namespace, in order. */
  readonly podNames: Readonly<Record<string, ReadonlyArray<string>>>
}

const logLine = (i: number): string =>
  `2025-01-01T12:00:${String(i % 60).padStart(2, "0")}.${String(i % 1000).padStart(3, "0")}Z INFO ` +
  `request handled method=GET path=/api/items/${i} status=200 duration_ms=${i % 97} bytes=${(i * 7919) % 65536}`

const main = async () => {
  const config = JSON.parse(process.argv[2]!) as ServerConfig
  const fake = FakeCluster.makeServer({
    token: config.token,
    namespaces: config.seed.map((s) => s.namespace),
    // A watch is opened from the resourceVersion of a moment before the bulk of changes.
    compactionWindow: 100_000,
    bookmarkIntervalMs: 0
  })
  const podNames: Record<string, Array<string>> = {}
  for (const { namespace, pods } of config.seed) {
    const objects = Array.from({ length: pods }, (_, i) => pod(i, namespace))
    fake.control.seed(objects)
    podNames[namespace] = objects.map((o) => (o["metadata"] as { name: string }).name)
  }
  // Uncompressed, as the floor asks: client-node's fetch and effect-kube ask for gzip, which a
  // compressing server would grant them alone; the loopback figures compare the same bytes.
  const listening = await FakeCluster.listen(fake, { tls: config.tls, compression: false })
  const compressing = await FakeCluster.listen(fake, { tls: config.tls, compression: true })

  const touched: Record<string, number> = {}
  const control = Http.createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://control")
    const namespace = url.searchParams.get("namespace") ?? ""
    const count = Number(url.searchParams.get("count") ?? "1")
    try {
      let answer = ""
      switch (url.pathname) {
        case "/gzipped":
          answer = String(compressing.gzippedAnswers())
          break
        case "/rv":
          answer = fake.control.resourceVersion()
          break
        case "/connections":
          answer = String(listening.connectionsOpened())
          break
        case "/touch": {
          const names = podNames[namespace] ?? []
          let n = touched[namespace] ?? 0
          for (let i = 0; i < count; i++, n++) {
            fake.control.update(
              { apiVersion: "v1", kind: "Pod", namespace, name: names[n % names.length]! },
              (obj) => {
                const metadata = obj.metadata as { labels?: Record<string, string> }
                metadata.labels = { ...metadata.labels, "bench/touch": String(n) }
              }
            )
          }
          touched[namespace] = n
          answer = fake.control.resourceVersion()
          break
        }
        case "/log": {
          const name = url.searchParams.get("pod") ?? ""
          const lines = new Array<string>(count)
          for (let i = 0; i < count; i++) lines[i] = logLine(i)
          // Appended in slices, as a busy container writes: followers get many chunks, not one.
          for (let i = 0; i < count; i += 1000) {
            fake.control.appendLog(namespace, name, lines.slice(i, i + 1000), { container: "app" })
          }
          break
        }
        default:
          res.writeHead(404).end()
          return
      }
      res.writeHead(200, { "content-type": "text/plain" }).end(answer)
    } catch (error) {
      res.writeHead(500, { "content-type": "text/plain" }).end(String(error))
    }
  })
  await new Promise<void>((resolve) => control.listen(0, "127.0.0.1", resolve))
  const port = (control.address() as Net.AddressInfo).port

  const ready: ServerReady = {
    url: listening.url,
    kubeconfigPath: listening.kubeconfigPath,
    control: `http://127.0.0.1:${port}`,
    gzipUrl: compressing.url,
    gzipKubeconfigPath: compressing.kubeconfigPath,
    podNames
  }
  process.stdout.write(`${JSON.stringify(ready)}\n`)

  const stop = async () => {
    control.close()
    fake.close()
    await listening.close()
    await compressing.close()
    process.exit(0)
  }
  process.on("SIGTERM", () => void stop())
  process.on("SIGINT", () => void stop())
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack ?? error.message : String(error)}\n`)
  process.exit(1)
})

/**
 * The real control plane of `npm run bench -- --only real` (see bench/real.ts): starting one
 * (`.cluster/bin/kube-cluster up`, cluster/README.md) or reading the kubeconfig of another,
 * and the writes that prepare it (seeding pods, a burst of changes, pods that log), made over
 * one `node:http2` session with the kubeconfig's client certificate, many requests at once.
 * Nothing here is measured.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Http2 from "node:http2"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import * as Yaml from "yaml"

const root = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "..")
const bin = Path.join(root, ".cluster", "bin", "kube-cluster")

/** The cluster and user of a kubeconfig's current context: the server, its CA and the credentials, as PEM. */
export interface Credentials {
  readonly server: string
  readonly ca: string | undefined
  readonly cert: string | undefined
  readonly key: string | undefined
  readonly token: string | undefined
}

/** A `*-data` field (base64) or its file (relative to the kubeconfig), as text. */
const material = (entry: Record<string, unknown>, field: string, dir: string): string | undefined => {
  const data = entry[`${field}-data`]
  if (typeof data === "string") return Buffer.from(data, "base64").toString("utf8")
  const file = entry[field]
  return typeof file === "string" ? Fs.readFileSync(Path.resolve(dir, file), "utf8") : undefined
}

/** What the floor needs of a kubeconfig: the current context's server, CA and client certificate (or token). */
export const readCredentials = (kubeconfig: string): Credentials => {
  const doc = Yaml.parse(Fs.readFileSync(kubeconfig, "utf8")) as {
    "current-context"?: string
    contexts?: Array<{ name: string; context: { cluster: string; user: string } }>
    clusters?: Array<{ name: string; cluster: Record<string, unknown> }>
    users?: Array<{ name: string; user: Record<string, unknown> }>
  }
  const context = doc.contexts?.find((c) => c.name === doc["current-context"])?.context ?? doc.contexts?.[0]?.context
  if (context === undefined) throw new Error(`${kubeconfig}: no context`)
  const cluster = doc.clusters?.find((c) => c.name === context.cluster)?.cluster
  const user = doc.users?.find((u) => u.name === context.user)?.user ?? {}
  if (cluster === undefined || typeof cluster["server"] !== "string") throw new Error(`${kubeconfig}: no server`)
  const dir = Path.dirname(kubeconfig)
  const token = typeof user["token"] === "string"
    ? user["token"]
    : typeof user["tokenFile"] === "string"
    ? Fs.readFileSync(Path.resolve(dir, user["tokenFile"]), "utf8").trim()
    : undefined
  return {
    server: cluster["server"].replace(/\/$/, ""),
    ca: material(cluster, "certificate-authority", dir),
    cert: material(user, "client-certificate", dir),
    key: material(user, "client-key", dir),
    token
  }
}

/** A running cluster of our own, and how to stop it (SIGTERM: `up` stops its pieces and removes its folder). */
export interface Cluster {
  readonly kubeconfig: string
  /** The pid of `kube-cluster up` (its pieces are its children: `piecePid` finds them). */
  readonly pid: number
  readonly startMs: number
  readonly stop: () => Promise<void>
}

/** Builds the cluster binary if needed (cached: milliseconds), as the e2e suite does. */
export const buildCluster = (): void => {
  const r = spawnSync(process.execPath, [Path.join(root, "scripts", "cluster-build.mjs")], {
    stdio: ["ignore", "inherit", "inherit"]
  })
  if (r.status !== 0) throw new Error("bench: npm run cluster:build failed (its last line above says why)")
}

/** `kube-cluster up`, resolved once it has printed KUBECONFIG (ready). */
export const startCluster = (timeoutMs = 120_000): Promise<Cluster> =>
  new Promise((resolve, reject) => {
    const began = performance.now()
    const up: ChildProcess = spawn(bin, ["up"], { stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    let settled = false
    const stop = () =>
      new Promise<void>((done) => {
        if (up.exitCode !== null || up.signalCode !== null) return done()
        const kill = setTimeout(() => up.kill("SIGKILL"), 20_000)
        up.once("exit", () => {
          clearTimeout(kill)
          done()
        })
        up.kill("SIGTERM")
      })
    const fail = (error: Error) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      void stop().then(() => reject(error))
    }
    const timer = setTimeout(
      () => fail(new Error(`bench: the cluster was not ready within ${timeoutMs / 1000} s:\n${stderr}`)),
      timeoutMs
    )
    up.stderr!.setEncoding("utf8").on("data", (s: string) => (stderr += s))
    up.stdout!.setEncoding("utf8").on("data", (s: string) => {
      stdout += s
      const line = stdout.split("\n").slice(0, -1).find((l) => l.startsWith("KUBECONFIG="))
      if (line !== undefined && !settled) {
        settled = true
        clearTimeout(timer)
        resolve({ kubeconfig: line.slice("KUBECONFIG=".length), pid: up.pid!, startMs: performance.now() - began, stop })
      }
    })
    up.on("error", (e) => fail(new Error(`bench: cannot start ${bin}: ${e.message}`)))
    up.on("exit", (code, signal) => fail(new Error(`bench: the cluster exited (${signal ?? code}): ${stderr.trim()}`)))
  })

/**
 * The pid of a piece of our cluster (`apiserver`, `etcd`): the child of `kube-cluster up` (pid
 * `upPid`) whose command line is `kube-cluster <piece> …`, so another cluster on the machine is
 * never read. Linux only (/proc); `undefined` when there is none.
 */
export const piecePid = (upPid: number, piece: string): number | undefined => {
  for (const entry of Fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = Fs.readFileSync(`/proc/${entry}/stat`, "utf8")
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1])
      if (ppid !== upPid) continue
      const args = Fs.readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0")
      if (args[1] === piece) return Number(entry)
    } catch {
      // the process ended meanwhile
    }
  }
  return undefined
}

/** The CPU time (user + system, ms) a process has used so far, from /proc/<pid>/stat (clock ticks of 10 ms). */
export const processCpuMs = (pid: number): number => {
  const stat = Fs.readFileSync(`/proc/${pid}/stat`, "utf8")
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  // utime and stime are the 14th and 15th fields of stat, the 12th and 13th after the command
  return (Number(fields[11]) + Number(fields[12])) * 10
}

/** One HTTP/2 session to the apiserver with the kubeconfig's credentials, for the writes that prepare the bench. */
export const adminSession = (credentials: Credentials) => {
  const session = Http2.connect(credentials.server, {
    ...(credentials.ca === undefined ? {} : { ca: credentials.ca }),
    ...(credentials.cert === undefined ? {} : { cert: credentials.cert }),
    ...(credentials.key === undefined ? {} : { key: credentials.key })
  })
  session.on("error", () => {})
  const request = (
    method: string,
    path: string,
    body?: unknown,
    contentType = "application/json"
  ): Promise<{ status: number; text: string }> =>
    new Promise((resolve, reject) => {
      const headers: Http2.OutgoingHttpHeaders = {
        ":method": method,
        ":path": path,
        accept: "application/json",
        ...(credentials.token === undefined ? {} : { authorization: `Bearer ${credentials.token}` }),
        ...(body === undefined ? {} : { "content-type": contentType })
      }
      const stream = session.request(headers)
      let status = 0
      let text = ""
      stream.setEncoding("utf8")
      stream.on("response", (h) => (status = Number(h[":status"])))
      stream.on("data", (chunk: string) => (text += chunk))
      stream.on("end", () => resolve({ status, text }))
      stream.on("error", reject)
      stream.end(body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body))
    })
  /** `request`, failing on an answer other than 2xx (or the statuses `allow` lists). */
  const must = async (method: string, path: string, body?: unknown, contentType?: string, allow: Array<number> = []) => {
    const answer = await request(method, path, body, contentType)
    if ((answer.status < 200 || answer.status > 299) && !allow.includes(answer.status)) {
      throw new Error(`bench: ${method} ${path}: ${answer.status} ${answer.text.slice(0, 300)}`)
    }
    return answer
  }
  return { request, must, close: () => session.close() }
}

export type AdminSession = ReturnType<typeof adminSession>

/** Runs `work(i)` for i in [0, count), at most `width` at a time. */
export const inParallel = async (count: number, width: number, work: (i: number) => Promise<unknown>) => {
  let next = 0
  await Promise.all(Array.from({ length: Math.min(width, count) }, async () => {
    while (next < count) await work(next++)
  }))
}

/** Creates the namespace and waits for its `default` ServiceAccount (made by the controller-manager; pods need it). */
export const namespace = async (admin: AdminSession, name: string): Promise<void> => {
  await admin.must("POST", "/api/v1/namespaces", { apiVersion: "v1", kind: "Namespace", metadata: { name } }, undefined, [
    409
  ])
  const deadline = performance.now() + 60_000
  while ((await admin.request("GET", `/api/v1/namespaces/${name}/serviceaccounts/default`)).status !== 200) {
    if (performance.now() > deadline) throw new Error(`bench: no default ServiceAccount in ${name} after 60 s`)
    await new Promise((r) => setTimeout(r, 200))
  }
}

/** The resourceVersion of a list of pods of the namespace now (a watch from it sees what is written after). */
export const podsResourceVersion = async (admin: AdminSession, ns: string): Promise<string> => {
  const { text } = await admin.must("GET", `/api/v1/namespaces/${ns}/pods?limit=1`)
  return (JSON.parse(text) as { metadata: { resourceVersion: string } }).metadata.resourceVersion
}

/** `must`, trying again (up to 5 times, backing off) on an answer that says to: 429, 500, 503, 504. */
export const persist = async (
  admin: AdminSession,
  method: string,
  path: string,
  body?: unknown,
  contentType?: string
): Promise<{ status: number; text: string }> => {
  for (let attempt = 0;; attempt++) {
    const answer = await admin.request(method, path, body, contentType)
    if (answer.status >= 200 && answer.status <= 299) return answer
    if (attempt >= 5 || ![429, 500, 503, 504].includes(answer.status)) {
      throw new Error(`bench: ${method} ${path}: ${answer.status} ${answer.text.slice(0, 300)}`)
    }
    await new Promise((r) => setTimeout(r, 200 * 2 ** attempt))
  }
}

/**
 * Reads a watch until `count` events have come (the apiserver's watch cache replays what came
 * after `resourceVersion`), then closes it: proves the burst is all in the cache before the
 * clients read it (a 410 or an ERROR event says the cache no longer holds it), and makes the
 * apiserver serialize each event once before any client is measured.
 */
export const readWatch = (
  credentials: Credentials,
  path: string,
  count: number,
  timeoutMs = 120_000
): Promise<{ readonly events: number; readonly ms: number }> =>
  new Promise((resolve, reject) => {
    const began = performance.now()
    const session = Http2.connect(credentials.server, {
      ...(credentials.ca === undefined ? {} : { ca: credentials.ca }),
      ...(credentials.cert === undefined ? {} : { cert: credentials.cert }),
      ...(credentials.key === undefined ? {} : { key: credentials.key })
    })
    let events = 0
    let pending = ""
    let done = false
    const finish = (error?: Error) => {
      if (done) return
      done = true
      clearTimeout(timer)
      session.destroy()
      if (error) reject(error)
      else resolve({ events, ms: performance.now() - began })
    }
    const timer = setTimeout(() => finish(new Error(`bench: watch ${path}: ${events} of ${count} events in ${timeoutMs / 1000} s`)), timeoutMs)
    session.on("error", (e) => finish(e))
    const stream = session.request({
      ":method": "GET",
      ":path": path,
      accept: "application/json",
      ...(credentials.token === undefined ? {} : { authorization: `Bearer ${credentials.token}` })
    })
    stream.setEncoding("utf8")
    stream.on("response", (h) => {
      if (Number(h[":status"]) !== 200) finish(new Error(`bench: watch ${path}: ${h[":status"]}`))
    })
    stream.on("data", (chunk: string) => {
      const text = pending + chunk
      let start = 0
      let newline: number
      while ((newline = text.indexOf("\n", start)) !== -1) {
        const line = text.slice(start, newline)
        start = newline + 1
        if (line.startsWith(`{"type":"ERROR"`)) return finish(new Error(`bench: watch ${path}: ${line.slice(0, 300)}`))
        if (++events >= count) return finish()
      }
      pending = text.slice(start)
    })
    stream.on("error", (e) => finish(e))
    stream.on("end", () => finish(new Error(`bench: watch ${path} ended after ${events} of ${count} events`)))
  })

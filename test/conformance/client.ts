/**
 * The conformance suite's client: raw HTTPS requests with a kubeconfig's credentials, answered with everything a
 * client can observe (status, the headers users read, the body; a watch's events), so both servers are asked the
 * very same bytes and answer through the same code.
 */
import { KubeConfig } from "@kubernetes/client-node"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as https from "node:https"
import * as os from "node:os"
import * as path from "node:path"

/** One request of a scenario. `{ns}` in the path and in string values of the body is the scenario's namespace. */
export interface Step {
  readonly method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE"
  readonly path: string
  /**
   * Instead of a request: kubectl with these arguments (`{ns}` filled) against the endpoint's kubeconfig, `body` (a
   * string) on its stdin; observed as its exit code (`status`) and `{ stdout, stderr }`.
   */
  readonly kubectl?: ReadonlyArray<string>
  readonly query?: Readonly<Record<string, string>>
  /** An object is sent as JSON (or YAML's JSON subset), a string as it is. */
  readonly body?: unknown
  readonly contentType?: string
  readonly accept?: string
  readonly headers?: Readonly<Record<string, string>>
  /** A watch: read this many events (then hang up), or what came within `watchMs`. */
  readonly watchEvents?: number
  readonly watchMs?: number
  /** Compare only these dotted paths of the body (for fields a controller or the scheduler sets at its own pace). */
  readonly pick?: ReadonlyArray<string>
  /** Compare only the status code and the Status's reason (what a real server words its own way is not compared). */
  readonly statusOnly?: boolean
  /** Before sending: wait this long (a controller's work on both servers). */
  readonly delayMs?: number
  /** Send again (every 200 ms, 15 s at most) until the answer satisfies this (a controller converging). */
  readonly until?: (observed: Observed) => boolean
}

/** What a client observes of one answer. */
export interface Observed {
  readonly status: number
  readonly contentType: string | undefined
  readonly warning: string | undefined
  readonly retryAfter: string | undefined
  readonly body: unknown
  /** A watch: the events read, in order. */
  readonly events?: ReadonlyArray<unknown>
}

export interface Endpoint {
  readonly name: string
  readonly server: string
  readonly kubeconfigPath: string
  readonly request: (step: Step, vars: Readonly<Record<string, string>>) => Promise<Observed>
  readonly close: () => void
}

/** `{ns}`, `{rv}` (the last object's resourceVersion) and `{name}` (its name) replaced by their values. */
export const fill = (s: string, vars: Readonly<Record<string, string>>): string =>
  s.replace(/\{(ns|rv0|rv|name|uid)\}/g, (whole, key: string) => vars[key] ?? whole)

const substitute = (value: unknown, ns: Readonly<Record<string, string>>): unknown =>
  typeof value === "string"
    ? fill(value, ns)
    : Array.isArray(value)
    ? value.map((v) => substitute(v, ns))
    : value !== null && typeof value === "object"
    ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substitute(v, ns)]))
    : value

/**
 * kubectl's output with what differs by server only: the server's address, ages in tables (`0s`, `3m2s`), the diff's
 * temporary directories and timestamps.
 */
const kubectlText = (text: string, host: string): string =>
  text.replaceAll(host, "<server>")
    .replace(/(?<=\s)\d+(?:\.\d+)?(?:s|m\d*s?|h\d*m?)(?=\s|$)/gm, "<age>")
    .replace(/\/tmp\/[A-Za-z0-9._-]+/g, "<tmp>")
    .replace(/^(\+\+\+|---) (\S+)\t.*$/gm, "$1 $2")

const parse = (text: string): unknown => {
  if (text === "") return undefined
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

/** An endpoint for the cluster a kubeconfig names (its current context). */
export const connect = async (name: string, kubeconfigPath: string): Promise<Endpoint> => {
  const kc = new KubeConfig()
  kc.loadFromFile(kubeconfigPath)
  const cluster = kc.getCurrentCluster()
  if (cluster === null) throw new Error(`${kubeconfigPath}: no current cluster`)
  const base: https.RequestOptions = {}
  await kc.applyToHTTPSOptions(base)
  const agent = new https.Agent({ keepAlive: false, maxSockets: 32, ...(base as https.AgentOptions) })
  const server = new URL(cluster.server)

  const once = (step: Step, ns: Readonly<Record<string, string>>): Promise<Observed> =>
    new Promise((resolve, reject) => {
      const query = new URLSearchParams(
        Object.entries(step.query ?? {}).map(([k, v]) => [k, fill(v, ns)])
      ).toString()
      const path = fill(step.path, ns) + (query === "" ? "" : `?${query}`)
      const body = step.body === undefined
        ? undefined
        : typeof step.body === "string"
        ? fill(step.body, ns)
        : JSON.stringify(substitute(step.body, ns))
      const headers: Record<string, string> = {
        ...base.headers as Record<string, string>,
        "User-Agent": "conformance/1.0",
        Accept: step.accept ?? "application/json",
        ...(body === undefined ? {} : {
          "Content-Length": String(Buffer.byteLength(body)),
          "Content-Type": step.contentType ?? (step.method === "PATCH"
            ? "application/merge-patch+json"
            : "application/json")
        }),
        ...step.headers
      }
      const watching = step.watchEvents !== undefined || step.watchMs !== undefined
      const req = https.request({
        ...base,
        agent,
        host: server.hostname,
        port: server.port,
        method: step.method,
        path,
        headers
      }, (res) => {
        const observed = (text: string, events?: ReadonlyArray<unknown>): Observed => ({
          status: res.statusCode ?? 0,
          contentType: res.headers["content-type"],
          warning: typeof res.headers["warning"] === "string" ? res.headers["warning"] : undefined,
          retryAfter: res.headers["retry-after"] as string | undefined,
          body: events === undefined ? parse(text) : undefined,
          ...(events === undefined ? {} : { events })
        })
        res.setEncoding("utf8")
        let text = ""
        if (watching && res.statusCode === 200) {
          const events: Array<unknown> = []
          let done = false
          const finish = () => {
            if (done) return
            done = true
            clearTimeout(timer)
            res.destroy()
            req.destroy()
            resolve(observed("", events))
          }
          const timer = setTimeout(finish, step.watchMs ?? 5_000)
          res.on("data", (chunk: string) => {
            text += chunk
            let at: number
            while ((at = text.indexOf("\n")) >= 0) {
              const line = text.slice(0, at)
              text = text.slice(at + 1)
              if (line.trim() !== "") events.push(parse(line))
              if (step.watchEvents !== undefined && events.length >= step.watchEvents) return finish()
            }
          })
          res.on("end", finish)
          res.on("error", finish)
          return
        }
        res.on("data", (chunk: string) => {
          text += chunk
        })
        res.on("end", () => resolve(observed(text)))
        res.on("error", reject)
      })
      req.on("error", (e) => {
        if (!req.destroyed || !watching) reject(e)
      })
      req.setTimeout(30_000, () => req.destroy(new Error(`${step.method} ${path}: no answer within 30 s`)))
      req.end(body)
    })

  const runKubectl = (step: Step, vars: Readonly<Record<string, string>>): Promise<Observed> =>
    new Promise((resolve, reject) => {
      const bin = process.env["KUBECTL"] ?? "kubectl"
      const args = ["--kubeconfig", kubeconfigPath, "--cache-dir", cacheDir, ...step.kubectl!.map((a) => fill(a, vars))]
      const child = spawn(bin, args, { stdio: ["pipe", "pipe", "pipe"], env: { ...process.env, HOME: cacheDir, KUBECTL_EXTERNAL_DIFF: "" } })
      let stdout = ""
      let stderr = ""
      child.stdout.setEncoding("utf8").on("data", (d: string) => stdout += d)
      child.stderr.setEncoding("utf8").on("data", (d: string) => stderr += d)
      const timer = setTimeout(() => child.kill(), 60_000)
      child.on("error", reject)
      child.on("close", (code) => {
        clearTimeout(timer)
        resolve({
          status: code ?? -1, contentType: undefined, warning: undefined, retryAfter: undefined,
          body: { stdout: kubectlText(stdout, server.host), stderr: kubectlText(stderr, server.host) }
        })
      })
      child.stdin.end(typeof step.body === "string" ? fill(step.body, vars) : undefined)
    })
  const cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), `conformance-kubectl-${name}-`))

  const request = async (step: Step, ns: Readonly<Record<string, string>>): Promise<Observed> => {
    if (step.delayMs !== undefined) await new Promise((r) => setTimeout(r, step.delayMs))
    const one = (s: Step, v: Readonly<Record<string, string>>) => s.kubectl !== undefined ? runKubectl(s, v) : once(s, v)
    if (step.until === undefined) return one(step, ns)
    const deadline = Date.now() + 15_000
    for (;;) {
      const observed = await one(step, ns)
      if (step.until(observed) || Date.now() > deadline) return observed
      await new Promise((r) => setTimeout(r, 200))
    }
  }

  return { name, server: cluster.server, kubeconfigPath, request, close: () => agent.destroy() }
}

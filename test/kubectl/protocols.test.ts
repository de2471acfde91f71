/**
 * kubectl, unmodified, against FakeCluster.serve over HTTPS with a token: the columns
 * `kubectl get` prints (the server's Table printers, a CRD's additionalPrinterColumns,
 * a watch), and `kubectl port-forward` with a request through it, over the SPDY tunnel
 * in a WebSocket (kubectl's first choice) and over a plain SPDY/3.1 upgrade (its fallback).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Stream } from "effect"
import { spawn } from "node:child_process"
import * as Http from "node:http"
import { FakeCluster } from "@effect-kube/testing"
import { hasKubectl, kubectlPath, ok, session, suiteName } from "../util/kubectl.js"
import { pki } from "../util/pki.js"

const ago = (ms: number): string => new Date(Date.now() - ms).toISOString().replace(/\.\d{3}Z$/, "Z")

const web = {
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name: "web", creationTimestamp: ago(20 * 60_000), labels: { app: "web" } },
  spec: { containers: [{ name: "main", image: "nginx:1.27" }] },
  status: {
    phase: "Running",
    conditions: [{ type: "Ready", status: "True" }],
    containerStatuses: [{ name: "main", ready: true, restartCount: 0, state: { running: {} } }]
  }
}

const deployment = {
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name: "web", creationTimestamp: ago(20 * 60_000) },
  spec: {
    replicas: 3,
    selector: { matchLabels: { app: "web" } },
    template: { metadata: { labels: { app: "web" } }, spec: { containers: [{ name: "main", image: "nginx:1.27" }] } }
  },
  status: { replicas: 3, updatedReplicas: 3, readyReplicas: 2, availableReplicas: 2 }
}

const crontabs = {
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: "crontabs.stable.example.com" },
  spec: {
    group: "stable.example.com",
    scope: "Namespaced",
    names: { plural: "crontabs", singular: "crontab", kind: "CronTab", shortNames: ["ct"] },
    versions: [{
      name: "v1",
      served: true,
      storage: true,
      schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
      additionalPrinterColumns: [
        { name: "Spec", type: "string", jsonPath: ".spec.cronSpec" },
        { name: "Replicas", type: "integer", jsonPath: ".spec.replicas" },
        { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" }
      ]
    }]
  }
}

const crontab = {
  apiVersion: "stable.example.com/v1",
  kind: "CronTab",
  metadata: { name: "nightly", creationTimestamp: ago(20 * 60_000) },
  spec: { cronSpec: "0 3 * * *", replicas: 2 }
}

/** kubectl's output split into lines of columns (two or more spaces apart). */
const table = (text: string): Array<Array<string>> =>
  text.trimEnd().split("\n").map((line) => line.trim().split(/\s{2,}/))

const serveTls = (options: FakeCluster.Options = {}) => {
  const { ca, server } = pki()
  return FakeCluster.serve({
    token: "kubectl-token",
    tls: { cert: server.cert, key: server.key, ca: ca.cert },
    controllers: false,
    ...options
  })
}

/** A kubectl that keeps running (port-forward): its output so far, and a way to stop it. */
const background = (kubeconfig: string, dir: string, args: ReadonlyArray<string>, env: Record<string, string> = {}) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const child = spawn(kubectlPath, ["--kubeconfig", kubeconfig, "--cache-dir", dir, ...args], {
        stdio: ["ignore", "pipe", "pipe"],
        env: { ...process.env, HOME: dir, ...env }
      })
      const output = { stdout: "", stderr: "", exited: false }
      child.stdout.on("data", (d: Buffer) => (output.stdout += d.toString()))
      child.stderr.on("data", (d: Buffer) => (output.stderr += d.toString()))
      child.on("exit", () => (output.exited = true))
      return { child, output }
    }),
    ({ child }) => Effect.sync(() => child.kill())
  )

/** Waits (real time) until `check` holds, for at most `ms`. */
const until = (check: () => boolean, ms = 20_000) =>
  Effect.promise(() =>
    new Promise<boolean>((resolve) => {
      const started = Date.now()
      const poll = () => (check() ? resolve(true) : Date.now() - started > ms ? resolve(false) : setTimeout(poll, 20))
      poll()
    })
  )

/** A plain HTTP GET through the forwarded local port. */
const httpGet = (port: number, path: string) =>
  Effect.promise(() =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const request = Http.get({ host: "127.0.0.1", port, path, agent: false }, (response) => {
        let body = ""
        response.on("data", (c: Buffer) => (body += c.toString()))
        response.on("end", () => resolve({ status: response.statusCode ?? 0, body }))
      })
      request.on("error", reject)
    })
  )

/** What listens on the pod's port: an HTTP server that names the path it was asked for. */
const httpHandler: FakeCluster.Options["portForward"] = (pod, port, connection) =>
  Effect.gen(function*() {
    let head = ""
    yield* Stream.runForEachWhile(connection.read, (chunk) =>
      Effect.sync(() => {
        head += Buffer.from(chunk).toString()
        return !head.includes("\r\n\r\n")
      }))
    if (port === 81) return yield* Effect.fail(new Error("connect: connection refused"))
    const path = head.split(" ")[1]
    const body = `${pod.metadata.name}:${port} ${path}`
    yield* connection.write(`HTTP/1.1 200 OK\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`)
  })

describe(suiteName("kubectl get against FakeCluster.serve prints the server's columns"), () => {
  it.live.skipIf(!hasKubectl)("pods, deployments and a CRD's additionalPrinterColumns", () =>
    Effect.gen(function*() {
      const served = yield* serveTls({ objects: [web, deployment, crontabs, crontab] })
      const { run } = yield* session(served.kubeconfigPath, "kubectl-get")
      assert.deepStrictEqual(table(ok(yield* run("get", "pods"))), [
        ["NAME", "READY", "STATUS", "RESTARTS", "AGE"],
        ["web", "1/1", "Running", "0", "20m"]
      ])
      assert.deepStrictEqual(table(ok(yield* run("get", "pods", "-o", "wide")))[0], [
        "NAME",
        "READY",
        "STATUS",
        "RESTARTS",
        "AGE",
        "IP",
        "NODE",
        "NOMINATED NODE",
        "READINESS GATES"
      ])
      assert.deepStrictEqual(table(ok(yield* run("get", "deploy"))), [
        ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"],
        ["web", "2/3", "3", "2", "20m"]
      ])
      assert.deepStrictEqual(table(ok(yield* run("get", "crontabs"))), [
        ["NAME", "SPEC", "REPLICAS", "AGE"],
        ["nightly", "0 3 * * *", "2", "20m"]
      ])
      assert.deepStrictEqual(table(ok(yield* run("get", "ct", "nightly"))).length, 2)
    }), 60_000)

  it.live.skipIf(!hasKubectl)("get pods -w prints the header once, then a row per change", () =>
    Effect.gen(function*() {
      const served = yield* serveTls({ objects: [web] })
      const { dir } = yield* session(served.kubeconfigPath, "kubectl-watch")
      const watching = yield* background(served.kubeconfigPath, dir, ["get", "pods", "-w"])
      assert.isTrue(yield* until(() => watching.output.stdout.split("\n").length > 2), watching.output.stderr)
      served.control.seed([{ ...web, metadata: { name: "api", creationTimestamp: ago(0) }, status: { phase: "Pending" } }])
      served.control.setPodPhase("default", "api", "Running")
      assert.isTrue(yield* until(() => watching.output.stdout.trimEnd().split("\n").length >= 4), watching.output.stdout)
      const lines = table(watching.output.stdout)
      assert.deepStrictEqual(lines[0], ["NAME", "READY", "STATUS", "RESTARTS", "AGE"])
      assert.deepStrictEqual(lines.slice(1, 4).map((l) => l.slice(0, 3)), [
        ["web", "1/1", "Running"],
        ["api", "0/1", "Pending"],
        ["api", "1/1", "Running"]
      ])
      assert.isFalse(lines.slice(1).some((l) => l[0] === "NAME"), "the header is printed once")
    }), 60_000)
})

describe(suiteName("kubectl port-forward against FakeCluster.serve"), () => {
  const forward = (env: Record<string, string>, expectedMethod: "GET" | "POST") =>
    Effect.gen(function*() {
      const served = yield* serveTls({ objects: [web], portForward: httpHandler })
      const { dir } = yield* session(served.kubeconfigPath, "kubectl-port-forward")
      const forwarding = yield* background(served.kubeconfigPath, dir, ["port-forward", "pod/web", ":80", ":81"], env)
      const ready = yield* until(() => (forwarding.output.stdout.match(/Forwarding from 127\.0\.0\.1:/g) ?? []).length === 2)
      assert.isTrue(ready, forwarding.output.stderr)
      const ports = [...forwarding.output.stdout.matchAll(/Forwarding from 127\.0\.0\.1:(\d+) -> (\d+)/g)]
      const local = Object.fromEntries(ports.map((m) => [m[2], Number(m[1])]))
      const first = yield* httpGet(local["80"]!, "/index.html")
      assert.deepStrictEqual(first, { status: 200, body: "web:80 /index.html" })
      // every local connection is forwarded on its own
      const second = yield* httpGet(local["80"]!, "/healthz")
      assert.deepStrictEqual(second, { status: 200, body: "web:80 /healthz" })
      const upgrades = served.control.requests().filter((r) => r.path.endsWith("/portforward"))
      assert.deepStrictEqual(upgrades.map((r) => r.method), [expectedMethod])
      // the pod side refuses: kubectl reports the runtime's error for the forward
      yield* Effect.promise(() => new Promise((resolve) => {
        Http.get({ host: "127.0.0.1", port: local["81"]!, path: "/", agent: false }).on("error", resolve).on("close", resolve)
      }))
      assert.isTrue(
        yield* until(() => forwarding.output.stderr.includes("an error occurred forwarding")),
        forwarding.output.stderr
      )
      assert.match(
        forwarding.output.stderr,
        /an error occurred forwarding \d+ -> 81: error forwarding port 81 to pod [0-9a-f]{64}, uid : connect: connection refused/
      )
    })

  it.live.skipIf(!hasKubectl)("over the SPDY tunnel in a WebSocket (kubectl's default): a request through it", () =>
    forward({}, "GET"), 60_000)

  it.live.skipIf(!hasKubectl)("over a plain SPDY/3.1 upgrade (KUBECTL_PORT_FORWARD_WEBSOCKETS=false): a request through it", () =>
    forward({ KUBECTL_PORT_FORWARD_WEBSOCKETS: "false" }, "POST"), 60_000)
})

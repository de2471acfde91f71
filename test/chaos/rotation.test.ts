/**
 * Case 5: rotations. The apiserver's serving certificate replaced by a new one from the same CA (the apiserver
 * reloads its files): a watch open before goes on, new connections get the new certificate and succeed. A
 * service-account token file rewritten in place: the next requests (within the file's recheck, or at once after a
 * 401) use the new token. A kubeconfig whose CA is not the cluster's, and a client certificate from another CA: a
 * clear error at once, not a retry loop.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Layer, Option, Ref, Stream } from "effect"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as tls from "node:tls"
import { clusterDir, kubectl } from "../e2e/setup/cluster.js"
import { pki } from "../util/pki.js"
import { ConfigMaps, Kube, KubeConfig, NodeKube, SelfSubjectReviews } from "./lib.js"
import { eventually, kubeconfigPath, layer, record, since, testNamespace } from "./support.js"
import { leakChecked } from "./leaks.js"

/** The admin kubeconfig's server and CA (PEM). */
const cluster = () => {
  const text = fs.readFileSync(kubeconfigPath(), "utf8")
  const server = /server: (\S+)/.exec(text)![1]!
  const ca = Buffer.from(/certificate-authority-data: (\S+)/.exec(text)![1]!, "base64").toString("utf8")
  return { server, ca }
}

/** The serial of the certificate the apiserver presents to a new connection. */
const servingSerial = (server: string, ca: string): Promise<string> =>
  new Promise((resolve, reject) => {
    const url = new URL(server)
    const socket = tls.connect({ host: url.hostname, port: Number(url.port), ca, servername: "localhost" }, () => {
      const serial = socket.getPeerCertificate().serialNumber
      socket.end()
      resolve(serial)
    })
    socket.on("error", reject)
  })

/** A new serving certificate for the apiserver from the cluster's CA, written over its files (as a rotation does). */
const rotateServing = (dir: string): void => {
  const pkiDir = path.join(dir, "pki")
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "chaos-serving-"))
  const ssl = (args: ReadonlyArray<string>) => execFileSync("openssl", args, { cwd: work, stdio: ["ignore", "ignore", "pipe"] })
  ssl(["req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", "new.key", "-out",
    "new.csr", "-subj", "/CN=kube-apiserver"])
  fs.writeFileSync(
    path.join(work, "new.ext"),
    "subjectAltName=IP:127.0.0.1,IP:::1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default," +
      "DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,IP:10.96.0.1\n" +
      "extendedKeyUsage=serverAuth,clientAuth\nkeyUsage=critical,digitalSignature\n"
  )
  ssl(["x509", "-req", "-in", "new.csr", "-CA", path.join(pkiDir, "ca.crt"), "-CAkey", path.join(pkiDir, "ca.key"),
    "-CAcreateserial", "-CAserial", path.join(work, "ca.srl"), "-out", "new.crt", "-days", "30", "-extfile", "new.ext"])
  // key and certificate renamed into place (the apiserver watches both files and reloads the pair)
  fs.copyFileSync(path.join(work, "new.key"), path.join(pkiDir, "apiserver.key.new"))
  fs.copyFileSync(path.join(work, "new.crt"), path.join(pkiDir, "apiserver.crt.new"))
  fs.renameSync(path.join(pkiDir, "apiserver.key.new"), path.join(pkiDir, "apiserver.key"))
  fs.renameSync(path.join(pkiDir, "apiserver.crt.new"), path.join(pkiDir, "apiserver.crt"))
  fs.rmSync(work, { recursive: true, force: true })
}

const kubeconfigFile = (dir: string, name: string, cluster: { readonly server: string; readonly ca: string }, user: string) => {
  const file = path.join(dir, name)
  fs.writeFileSync(
    file,
    [
      "apiVersion: v1",
      "kind: Config",
      "clusters:",
      "- name: c",
      "  cluster:",
      `    server: ${cluster.server}`,
      `    certificate-authority-data: ${Buffer.from(cluster.ca).toString("base64")}`,
      "users:",
      "- name: u",
      "  user:",
      user,
      "contexts:",
      "- name: c",
      "  context: {cluster: c, user: u}",
      "current-context: c",
      ""
    ].join("\n")
  )
  return file
}

const whoami = Effect.map(
  Kube.api(SelfSubjectReviews).create({ apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview" }),
  (r) => r.status?.userInfo?.username ?? ""
)

describe("chaos: rotations", () => {
  it.live("the serving certificate rotated from the same CA: open streams go on, new connections succeed", () =>
    Effect.gen(function*() {
      const dir = clusterDir()
      if (dir === undefined) return
      const { server, ca } = cluster()
      const ns = yield* testNamespace("serving")
      const cms = Kube.api(ConfigMaps, { namespace: ns })
      const store = yield* cms.reflector()
      yield* store.ready
      const events = yield* Ref.make(0)
      yield* Effect.forkScoped(Stream.runForEach(cms.watch(), () => Ref.update(events, (n) => n + 1)))
      const before = yield* Effect.promise(() => servingSerial(server, ca))
      const t0 = performance.now()
      yield* Effect.sync(() => rotateServing(dir))
      const after = yield* eventually(
        "the apiserver presents the new certificate",
        Effect.promise(() => servingSerial(server, ca)).pipe(Effect.map((s) => s !== before ? Option.some(s) : Option.none())),
        120
      )
      const pickedUp = since(t0)
      // the old connection's watch and reflector still hear changes
      yield* cms.create({ metadata: { name: "after-rotation" } })
      yield* eventually("the reflector sees a change after the rotation", store.get("after-rotation"), 30)
      // a new client (a new connection, the new certificate) works
      const fresh = yield* Effect.provide(cms.list(), layer())
      assert.isTrue(fresh.items.some((c) => c.metadata?.name === "after-rotation"))
      yield* record("rotation-serving-certificate", {
        oldSerial: before,
        newSerial: after,
        newCertificateServedAfterMs: pickedUp,
        watchEventsOnOldConnection: yield* Ref.get(events)
      })
      assert.isAbove(yield* Ref.get(events), 0, "the watch open before the rotation delivered the change")
    }).pipe(Effect.scoped, Effect.provide(layer()), leakChecked("rotation-serving-certificate")), { timeout: 300_000 })

  it.live("a service-account token file rewritten in place is used at the next requests, at once after a 401", () =>
    Effect.gen(function*() {
      const ns = yield* testNamespace("token")
      yield* Effect.promise(() => kubectl(["-n", ns, "create", "serviceaccount", "chaos-a"]))
      yield* Effect.promise(() => kubectl(["-n", ns, "create", "serviceaccount", "chaos-b"]))
      const token = (sa: string) => Effect.promise(() => kubectl(["-n", ns, "create", "token", sa]).then((t) => t.trim()))
      const a = yield* token("chaos-a")
      const b = yield* token("chaos-b")
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "chaos-token-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true })))
      const tokenPath = path.join(dir, "token")
      fs.writeFileSync(tokenPath, a)
      const file = kubeconfigFile(dir, "kubeconfig", cluster(), `    tokenFile: ${tokenPath}`)
      const sa = (name: string) => `system:serviceaccount:${ns}:${name}`
      yield* Effect.gen(function*() {
        assert.strictEqual(yield* whoami, sa("chaos-a"))
        // rotated in place: seen once the file is checked again
        const t0 = performance.now()
        fs.writeFileSync(tokenPath + ".new", b)
        fs.renameSync(tokenPath + ".new", tokenPath)
        let requests = 0
        while ((yield* whoami) !== sa("chaos-b")) {
          requests++
          yield* Effect.sleep("100 millis")
        }
        const rotatedAfter = since(t0)
        // a token that is no longer valid: a 401, and the file read again at once; the new token then works
        fs.writeFileSync(tokenPath, "not-a-valid-token")
        yield* Effect.sleep("5100 millis") // past the recheck: the bad token is in use
        const unauthorized = yield* Effect.exit(whoami)
        fs.writeFileSync(tokenPath, a)
        const t1 = performance.now()
        const again = yield* whoami
        const afterUnauthorizedMs = since(t1)
        const failure = Exit.isFailure(unauthorized) ? String(unauthorized.cause) : "none"
        yield* record("rotation-token-file", {
          rotatedTokenUsedAfterMs: rotatedAfter,
          requestsWithTheOldTokenMeanwhile: requests,
          badTokenAnswer: /Unauthorized|401/.test(failure) ? "401 Unauthorized" : failure.slice(0, 200),
          goodTokenAfterA401Ms: afterUnauthorizedMs
        })
        assert.isTrue(Exit.isFailure(unauthorized))
        assert.strictEqual(again, sa("chaos-a"))
        assert.isBelow(rotatedAfter, 7_000)
      }).pipe(Effect.provide(NodeKube.layerFromFile({ path: file })))
    }).pipe(Effect.scoped, Effect.provide(layer()), leakChecked("rotation-token-file")), { timeout: 120_000 })

  it.live("a CA that is not the cluster's, and a client certificate of another CA: a clear error at once", () =>
    Effect.gen(function*() {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "chaos-ca-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true })))
      const { server, ca } = cluster()
      const other = pki()
      const b64 = (s: string) => Buffer.from(s).toString("base64")
      const adminText = fs.readFileSync(kubeconfigPath(), "utf8")
      const cert = /client-certificate-data: (\S+)/.exec(adminText)![1]!
      const key = /client-key-data: (\S+)/.exec(adminText)![1]!
      const wrongCa = kubeconfigFile(dir, "wrong-ca", { server, ca: other.otherCa.cert },
        `    client-certificate-data: ${cert}\n    client-key-data: ${key}`)
      const foreignClient = kubeconfigFile(dir, "foreign-client", { server, ca },
        `    client-certificate-data: ${b64(other.client.cert)}\n    client-key-data: ${b64(other.client.key)}`)
      const attempt = (file: string) =>
        Effect.gen(function*() {
          const t0 = performance.now()
          const exit = yield* Effect.exit(Effect.provide(Kube.api(ConfigMaps, { namespace: "default" }).list(), NodeKube.layerFromFile({ path: file })))
          return { ms: since(t0), exit }
        })
      const a = yield* attempt(wrongCa)
      const b = yield* attempt(foreignClient)
      const text = (exit: Exit.Exit<unknown, unknown>) => Exit.isFailure(exit) ? String(exit.cause) : "succeeded"
      yield* record("rotation-ca-changed", {
        wrongServerCaMs: a.ms,
        wrongServerCaError: text(a.exit).split("\n")[0]!.slice(0, 240),
        foreignClientCertificateMs: b.ms,
        foreignClientCertificateError: text(b.exit).split("\n")[0]!.slice(0, 240)
      })
      assert.isTrue(Exit.isFailure(a.exit))
      assert.match(text(a.exit), /certificate|self.signed|verify/i)
      assert.isBelow(a.ms, 5_000, "no retry loop")
      assert.isTrue(Exit.isFailure(b.exit))
      assert.match(text(b.exit), /Unauthorized|401/)
      assert.isBelow(b.ms, 5_000, "no retry loop")
    }).pipe(Effect.scoped, leakChecked("rotation-ca-changed")), { timeout: 60_000 })
})

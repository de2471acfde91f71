/**
 * Pins: a kubeconfig exec credential plugin runs in the user's environment. It is found
 * by a bare name through the user's PATH, and sees PATH, HOME and any other variable of
 * process.env, plus the kubeconfig's own `env` entries (which win over process.env), plus
 * KUBERNETES_EXEC_INFO (which the client sets, whatever process.env says). Its stdin is
 * at end of file at once (it runs non-interactively) and it runs in our working directory.
 *
 * Today the plugin is started with @effect/platform's `Command`, whose `extendEnv`
 * defaults to true. Effect 4's `ChildProcess` defaults to `extendEnv: false`, where `env`
 * replaces the environment: a mechanical port would run aws, gke-gcloud-auth-plugin or
 * kubelogin without PATH (not found, or unable to start its own tools) and without HOME
 * (no cached login).
 *
 * The plugin is a real Node script in a temporary directory, run for a real request: a
 * FakeCluster served on loopback that accepts only the token the plugin prints.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Yaml from "yaml"
import * as Kube from "../../packages/effect-kube/src/Kube.js"
import * as NodeKube from "../../packages/effect-kube/src/NodeKube.js"
import { ConfigMaps } from "../../packages/effect-kube/src/resources/index.js"
import { FakeCluster } from "@effect-kube/testing"

const pluginName = "effect-kube-pin-plugin"
const token = "pin-exec-token"

/**
 * Records what it was started with into `$PIN_STATE_DIR/seen.json` and prints an
 * ExecCredential with the token. Its interpreter is named by absolute path, so that the
 * script itself starts whatever its environment: a lost PATH shows in what it records.
 */
const script = `#!${process.execPath}
const fs = require("node:fs")
const path = require("node:path")
let stdin = null
try { stdin = fs.readFileSync(0, "utf8") } catch (e) { stdin = "error: " + e.code }
const pick = (name) => process.env[name] === undefined ? null : process.env[name]
const seen = {
  PATH: pick("PATH"),
  HOME: pick("HOME"),
  PIN_FROM_PROCESS: pick("PIN_FROM_PROCESS"),
  PIN_OVERRIDDEN: pick("PIN_OVERRIDDEN"),
  PIN_FROM_KUBECONFIG: pick("PIN_FROM_KUBECONFIG"),
  KUBERNETES_EXEC_INFO: pick("KUBERNETES_EXEC_INFO"),
  args: process.argv.slice(2),
  cwd: process.cwd(),
  stdin
}
fs.writeFileSync(path.join(process.env.PIN_STATE_DIR, "seen.json"), JSON.stringify(seen))
let apiVersion = "client.authentication.k8s.io/v1"
try { apiVersion = JSON.parse(process.env.KUBERNETES_EXEC_INFO).apiVersion } catch {}
const status = { token: ${JSON.stringify(token)} }
process.stdout.write(JSON.stringify({ apiVersion, kind: "ExecCredential", status }))
`

interface Seen {
  readonly PATH: string | null
  readonly HOME: string | null
  readonly PIN_FROM_PROCESS: string | null
  readonly PIN_OVERRIDDEN: string | null
  readonly PIN_FROM_KUBECONFIG: string | null
  readonly KUBERNETES_EXEC_INFO: string | null
  readonly args: ReadonlyArray<string>
  readonly cwd: string
  readonly stdin: string | null
}

const tempDir = Effect.acquireRelease(
  Effect.sync(() => Fs.mkdtempSync(Path.join(Os.tmpdir(), "effect-kube-pin-exec-"))),
  (dir) => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true }))
)

/** Sets variables of process.env for the scope, and puts back what was there. */
const withProcessEnv = (vars: Readonly<Record<string, string>>) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const before = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]))
      Object.assign(process.env, vars)
      return before
    }),
    (before) =>
      Effect.sync(() => {
        for (const [k, v] of Object.entries(before)) {
          if (v === undefined) delete process.env[k]
          else process.env[k] = v
        }
      })
  )

/** A plugin in `<dir>/bin`, a kubeconfig naming it by its bare name, and a loopback cluster that wants its token. */
const setup = (exec: Readonly<Record<string, unknown>>) =>
  Effect.gen(function*() {
    const dir = yield* tempDir
    const bin = Path.join(dir, "bin")
    const home = Path.join(dir, "home")
    Fs.mkdirSync(bin)
    Fs.mkdirSync(home)
    Fs.writeFileSync(Path.join(bin, pluginName), script, { mode: 0o755 })
    const cluster = yield* FakeCluster.serve({
      token,
      objects: [{ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a" } }]
    })
    const path = Path.join(dir, "kubeconfig")
    Fs.writeFileSync(
      path,
      Yaml.stringify({
        apiVersion: "v1",
        kind: "Config",
        "current-context": "ctx",
        clusters: [{ name: "c", cluster: { server: cluster.url } }],
        users: [{
          name: "u",
          user: {
            exec: {
              apiVersion: "client.authentication.k8s.io/v1",
              command: pluginName,
              args: ["--region", "eu-1"],
              interactiveMode: "Never",
              ...exec,
              env: [
                { name: "PIN_STATE_DIR", value: dir },
                { name: "PIN_OVERRIDDEN", value: "from-kubeconfig" },
                { name: "PIN_FROM_KUBECONFIG", value: "only-in-kubeconfig" }
              ]
            }
          }
        }],
        contexts: [{ name: "ctx", context: { cluster: "c", user: "u", namespace: "default" } }]
      })
    )
    const userPath = `${bin}${Path.delimiter}${process.env["PATH"] ?? ""}`
    yield* withProcessEnv({
      PATH: userPath,
      HOME: home,
      PIN_FROM_PROCESS: "only-in-process-env",
      PIN_OVERRIDDEN: "from-process-env",
      KUBERNETES_EXEC_INFO: "from-process-env"
    })
    const seen = (): Seen => JSON.parse(Fs.readFileSync(Path.join(dir, "seen.json"), "utf8"))
    return { dir, home, path, userPath, seen }
  })

describe("exec credential plugins", () => {
  it.live("a plugin named by a bare name is found through the user's PATH", () =>
    Effect.gen(function*() {
      const { path, seen, userPath } = yield* setup({})
      // the request succeeds only with the token the plugin printed
      const found = yield* Kube.api(ConfigMaps).get("a").pipe(Effect.provide(NodeKube.layerFromFile({ path })))
      assert.strictEqual(Option.getOrThrow(found).metadata?.name, "a")
      assert.strictEqual(seen().PATH, userPath)
    }))

  it.live("sees PATH, HOME, the user's variables, the kubeconfig's env (winning), our KUBERNETES_EXEC_INFO", () =>
    Effect.gen(function*() {
      // named by a path (resolved against the kubeconfig's directory): it starts whatever its environment
      const { home, path, seen, userPath } = yield* setup({ command: `./bin/${pluginName}` })
      const found = yield* Effect.exit(
        Kube.api(ConfigMaps).get("a").pipe(Effect.provide(NodeKube.layerFromFile({ path })))
      )
      const got = seen()
      assert.strictEqual(got.PATH, userPath)
      assert.strictEqual(got.HOME, home)
      assert.strictEqual(got.PIN_FROM_PROCESS, "only-in-process-env")
      assert.strictEqual(got.PIN_OVERRIDDEN, "from-kubeconfig")
      assert.strictEqual(got.PIN_FROM_KUBECONFIG, "only-in-kubeconfig")
      assert.strictEqual(
        got.KUBERNETES_EXEC_INFO,
        `{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","spec":{"interactive":false}}`
      )
      assert.deepStrictEqual(got.args, ["--region", "eu-1"])
      assert.strictEqual(got.stdin, "")
      assert.strictEqual(got.cwd, process.cwd())
      assert.isTrue(Exit.isSuccess(found) && Option.isSome(found.value), "the request went through with its token")
    }))

  it.live("KUBERNETES_EXEC_INFO carries the cluster with provideClusterInfo (v1beta1), exactly", () =>
    Effect.gen(function*() {
      const { path, seen } = yield* setup({
        apiVersion: "client.authentication.k8s.io/v1beta1",
        provideClusterInfo: true
      })
      const layer = NodeKube.layerFromFile({ path })
      const found = yield* Kube.api(ConfigMaps).get("a").pipe(Effect.provide(layer))
      assert.isTrue(Option.isSome(found))
      const got = seen()
      const server = JSON.parse(got.KUBERNETES_EXEC_INFO ?? "null").spec.cluster.server as string
      assert.match(server, /^http:\/\/127\.0\.0\.1:\d+$/)
      assert.strictEqual(
        got.KUBERNETES_EXEC_INFO,
        JSON.stringify({
          apiVersion: "client.authentication.k8s.io/v1beta1",
          kind: "ExecCredential",
          spec: { interactive: false, cluster: { server } }
        })
      )
      assert.strictEqual(got.PATH, process.env["PATH"])
      assert.strictEqual(got.PIN_OVERRIDDEN, "from-kubeconfig")
    }))
})

/**
 * The kubeconfig loader (internal/kubeconfig/load.ts): a KUBECONFIG path list merged as kubectl
 * merges it, read from files on disk. Moved out of KubeConfig.test.ts, which tests the public module.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { execFileSync } from "node:child_process"
import * as Path from "node:path"
import { KubeConfigError } from "../../../packages/effect-kube/src/Errors.js"
import * as KubeConfig from "../../../packages/effect-kube/src/KubeConfig.js"
import * as Load from "../../../packages/effect-kube/src/internal/kubeconfig/load.js"
import * as NodeKube from "../../../packages/effect-kube/src/NodeKube.js"
import { single, tempDir, token, write } from "../../util/kubeconfigFiles.js"

layer(NodeKube.layerPlatform)("KubeConfig", (it) => {
  describe("merging a KUBECONFIG path list", () => {
    const files = (dir: string) => {
      const a = write(Path.join(dir, "a.yaml"), {
        clusters: [{ name: "shared", cluster: { server: "https://a.example:6443/" } }],
        users: [{ name: "alice", user: { token: "token-a" } }],
        contexts: [{ name: "one", context: { cluster: "shared", user: "alice", namespace: "from-a" } }]
      })
      const b = write(Path.join(dir, "b.yaml"), {
        "current-context": "two",
        clusters: [
          { name: "shared", cluster: { server: "https://b.example:6443" } },
          { name: "bee", cluster: { server: "https://bee.example" } }
        ],
        users: [{ name: "alice", user: { token: "token-b" } }],
        contexts: [
          { name: "one", context: { cluster: "bee", user: "alice", namespace: "from-b" } },
          { name: "two", context: { cluster: "shared", user: "alice" } }
        ]
      })
      const c = write(Path.join(dir, "c.yaml"), {
        "current-context": "one",
        clusters: [{ name: "sea", cluster: { server: "https://c.example" } }],
        contexts: [{ name: "three", context: { cluster: "sea", namespace: "from-c" } }]
      })
      const missing = Path.join(dir, "missing.yaml")
      return [a, missing, b, c].join(Path.delimiter)
    }

    it.effect("the first file to define a name wins; current-context from the first file that sets it", () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        const env = { KUBECONFIG: files(dir) }
        const current = yield* Load.fromFile({ env, homeDir: dir })
        assert.strictEqual(current.context, "two", "current-context from b.yaml, not c.yaml")
        assert.strictEqual(current.server, "https://a.example:6443", "cluster shared from a.yaml, no trailing slash")
        assert.strictEqual(current.namespace, "default")
        assert.strictEqual(current.source, Path.join(dir, "b.yaml"))
        assert.strictEqual(yield* token(current), "token-a", "user alice from a.yaml")

        const one = yield* Load.fromFile({ env, homeDir: dir, context: "one" })
        assert.strictEqual(one.namespace, "from-a", "context one from a.yaml, b.yaml's ignored")
        assert.strictEqual(one.server, "https://a.example:6443")

        const three = yield* Load.fromFile({ env, homeDir: dir, context: "three" })
        assert.strictEqual(three.server, "https://c.example")
        assert.strictEqual(three.namespace, "from-c")
        assert.strictEqual(three.auth.kind, "none")
      }))

    it.effect("agrees with kubectl on the merged context", () =>
      Effect.gen(function*() {
        let kubectl = true
        try {
          execFileSync("kubectl", ["version", "--client"], { stdio: "ignore" })
        } catch {
          kubectl = false
        }
        if (!kubectl) {
          console.warn("skipped: kubectl is not installed, so the merge cannot be compared with it")
          return
        }
        const dir = yield* tempDir
        const list = files(dir)
        const view = JSON.parse(
          execFileSync("kubectl", ["config", "view", "--minify", "--raw", "-o", "json"], {
            env: { ...process.env, KUBECONFIG: list, HOME: dir },
            encoding: "utf8"
          })
        )
        const ours = yield* Load.fromFile({ env: { KUBECONFIG: list }, homeDir: dir })
        assert.strictEqual(ours.context, view["current-context"])
        assert.strictEqual(`${ours.server}/`, view.clusters[0].cluster.server)
        assert.strictEqual(yield* token(ours), view.users[0].user.token)
      }))

    it.effect("without KUBECONFIG, ~/.kube/config is read", () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        write(Path.join(dir, ".kube", "config"), single({ token: "home-token" }))
        const service = yield* Load.fromFile({ env: {}, homeDir: dir })
        assert.strictEqual(yield* token(service), "home-token")
        assert.strictEqual(service.source, Path.join(dir, ".kube", "config"))
      }))

    it.effect("no file at all is a KubeConfigError listing the paths", () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        const error = yield* Effect.flip(Load.fromFile({ env: { KUBECONFIG: Path.join(dir, "nope") }, homeDir: dir }))
        assert.instanceOf(error, KubeConfigError)
        assert.include(error.message, Path.join(dir, "nope"))
      }))

    it.effect("a name twice in one file is an error, as in kubectl", () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        const path = write(Path.join(dir, "dup.yaml"), {
          clusters: [
            { name: "c", cluster: { server: "https://a" } },
            { name: "c", cluster: { server: "https://b" } }
          ]
        })
        const error = yield* Effect.flip(KubeConfig.fromFile({ path }))
        assert.strictEqual(error.field, "clusters[c]")
        assert.strictEqual(error.source, path)
      }))
  })
})

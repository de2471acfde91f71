/**
 * The auth providers (internal/kubeconfig/auth.ts) on a token file and in a pod: the token is read
 * again after `tokenFileRecheckMillis` (stepped with TestClock), as client-go rereads it. Moved out
 * of KubeConfig.test.ts, which tests the public module.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as TestClock from "effect/testing/TestClock"
import * as Fs from "node:fs"
import * as Path from "node:path"
import * as KubeConfig from "../../../packages/effect-kube/src/KubeConfig.js"
import * as Auth from "../../../packages/effect-kube/src/internal/kubeconfig/auth.js"
import * as Load from "../../../packages/effect-kube/src/internal/kubeconfig/load.js"
import * as Kube from "../../../packages/effect-kube/src/Kube.js"
import * as NodeKube from "../../../packages/effect-kube/src/NodeKube.js"
import { Pods } from "../../../packages/effect-kube/src/resources/index.js"
import { FakeCluster } from "@effect-kube/testing"
import { pki } from "../../util/pki.js"
import { single, tempDir, token, write } from "../../util/kubeconfigFiles.js"

layer(NodeKube.layerPlatform)("KubeConfig", (it) => {
  describe("token file", () => {
    it.effect("is re-read when it is rewritten or replaced", () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        const tokenPath = write(Path.join(dir, "token"), "first")
        const path = write(Path.join(dir, "kubeconfig"), single({ tokenFile: "token" }))
        const service = yield* KubeConfig.fromFile({ path })
        assert.strictEqual(service.auth.kind, "tokenFile")
        assert.strictEqual(yield* token(service), "first")
        assert.strictEqual(yield* token(service), "first")

        // Not looked at again until the interval has passed (TestClock: no real waiting).
        Fs.writeFileSync(tokenPath, "second-token")
        assert.strictEqual(yield* token(service), "first")
        yield* TestClock.adjust(Auth.tokenFileRecheckMillis - 1)
        assert.strictEqual(yield* token(service), "first")
        yield* TestClock.adjust(1)
        assert.strictEqual(yield* token(service), "second-token")

        // Projected volumes swap the file atomically (a new inode), as a rename does.
        write(Path.join(dir, "token.new"), "third-token!")
        Fs.renameSync(Path.join(dir, "token.new"), tokenPath)
        yield* TestClock.adjust(Auth.tokenFileRecheckMillis)
        assert.strictEqual(yield* token(service), "third-token!")

        // After a 401 the file is read at once, whatever the interval.
        Fs.writeFileSync(tokenPath, "fourth")
        assert.strictEqual(yield* token(service), "third-token!")
        assert.isTrue(yield* service.auth.invalidate)
        assert.strictEqual(yield* token(service), "fourth")
      }))

    it.effect("is not looked at on every request: a file gone within the interval is noticed after it", () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        const tokenPath = write(Path.join(dir, "token"), "here")
        const path = write(Path.join(dir, "kubeconfig"), single({ tokenFile: "token" }))
        const service = yield* KubeConfig.fromFile({ path })
        assert.strictEqual(yield* token(service), "here")
        Fs.rmSync(tokenPath)
        assert.strictEqual(yield* token(service), "here")
        yield* TestClock.adjust(Auth.tokenFileRecheckMillis)
        const error = yield* Effect.flip(service.auth.credentials)
        assert.include(error.message, "ENOENT")
      }))

    it.effect("a 401 makes the request path read the rotated token at once and send the request again", () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        const served = yield* FakeCluster.serve({ token: "old-token" })
        const tokenPath = write(Path.join(dir, "token"), "old-token")
        const path = write(Path.join(dir, "kubeconfig"), single({ tokenFile: "token" }, { server: served.url }))
        const program = Effect.gen(function*() {
          const pods = Kube.api(Pods, { namespace: "default" })
          assert.isTrue(Option.isNone(yield* pods.get("nothing")))
          // The server and the file rotate together, well within the re-check interval.
          served.control.setToken("new-token")
          Fs.writeFileSync(tokenPath, "new-token")
          assert.isTrue(Option.isNone(yield* pods.get("nothing")))
        })
        yield* Effect.provide(program, NodeKube.layerFromFile({ path }))
      }))

    it.effect("a token file that disappears fails with a KubeConfigError", () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        const tokenPath = write(Path.join(dir, "token"), "here")
        const path = write(Path.join(dir, "kubeconfig"), single({ tokenFile: "token" }))
        const service = yield* KubeConfig.fromFile({ path })
        Fs.rmSync(tokenPath)
        const error = yield* Effect.flip(service.auth.credentials)
        assert.strictEqual(error.field, "users[u].user.tokenFile")
        assert.include(error.message, "ENOENT")
      }))
  })

  describe("in-cluster", () => {
    const serviceAccount = (dir: string, namespace?: string) => {
      write(Path.join(dir, "token"), "sa-token\n")
      write(Path.join(dir, "ca.crt"), pki().ca.cert)
      if (namespace !== undefined) write(Path.join(dir, "namespace"), namespace)
      return dir
    }
    const env = { KUBERNETES_SERVICE_HOST: "10.96.0.1", KUBERNETES_SERVICE_PORT: "443" }

    it.effect("server from the env, token, CA and namespace from the service-account directory", () =>
      Effect.gen(function*() {
        const dir = serviceAccount(yield* tempDir, "team-a\n")
        const service = yield* Effect.provide(
          KubeConfig.KubeConfig,
          KubeConfig.layerInClusterFrom({ dir, env })
        )
        assert.strictEqual(service.server, "https://10.96.0.1")
        assert.strictEqual(service.namespace, "team-a")
        assert.strictEqual(service.tls.ca, pki().ca.cert)
        assert.strictEqual(service.source, "<in-cluster>")
        assert.strictEqual(yield* token(service), "sa-token")
        Fs.writeFileSync(Path.join(dir, "token"), "rotated-token")
        yield* TestClock.adjust(Auth.tokenFileRecheckMillis)
        assert.strictEqual(yield* token(service), "rotated-token")

        const v6 = yield* KubeConfig.inCluster({
          dir,
          env: { KUBERNETES_SERVICE_HOST: "fd00::1", KUBERNETES_SERVICE_PORT: "6443" }
        })
        assert.strictEqual(v6.server, "https://[fd00::1]:6443")
      }))

    it.effect("the default lookup prefers in-cluster, and falls back to the kubeconfig", () =>
      Effect.gen(function*() {
        const dir = serviceAccount(yield* tempDir)
        write(Path.join(dir, "home", ".kube", "config"), single({ token: "home-token" }))
        const homeDir = Path.join(dir, "home")

        const pod = yield* Load.fromEnvironment({ env, inClusterDir: dir, homeDir })
        assert.strictEqual(pod.source, "<in-cluster>")
        assert.strictEqual(pod.namespace, "default", "no namespace file")

        const laptop = yield* Load.fromEnvironment({ env: {}, inClusterDir: dir, homeDir })
        assert.strictEqual(yield* token(laptop), "home-token")

        // The env vars alone do not make a pod: the token must be there too.
        const noToken = yield* Load.fromEnvironment({ env, inClusterDir: Path.join(dir, "nope"), homeDir })
        assert.strictEqual(noToken.context, "ctx")
      }))

    it.effect("outside a pod, layerInCluster says what is missing", () =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(KubeConfig.inCluster({ env: {} }))
        assert.strictEqual(error.source, "<in-cluster>")
        assert.strictEqual(error.field, "KUBERNETES_SERVICE_HOST")
      }))
  })
})

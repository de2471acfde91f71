/**
 * Subresources against the real control plane: status (only the status half is written), scale, eviction under a
 * PodDisruptionBudget, service account tokens from the TokenRequest API, ephemeral containers and in-place resize.
 */
import { assert, it } from "@effect/vitest"
import { Effect, Option, Redacted } from "effect"
import {
  ApiError,
  Condition,
  Deployments,
  Kube,
  Patch,
  PodDisruptionBudgets,
  Pods,
  ServiceAccounts,
  Services
} from "./lib.js"
import { layer, testNamespace } from "./support.js"

const sleeper = { name: "c", image: "busybox:1.36", command: ["sh", "-c", "sleep 3600"] }

const deployment = (replicas: number) => ({
  metadata: { name: "web" },
  spec: {
    replicas,
    selector: { matchLabels: { app: "web" } },
    template: { metadata: { labels: { app: "web" } }, spec: { containers: [sleeper], terminationGracePeriodSeconds: 0 } }
  }
})

it.layer(layer, { excludeTestServices: true, timeout: "60 seconds" })("subresources", (it) => {
  it.effect("status: a write to the object leaves its status, a status write leaves its spec", () =>
    Effect.gen(function*() {
      const ns = yield* testNamespace("status")
      // a LoadBalancer Service: no controller of this cluster writes its status under us (no cloud provider)
      const services = Kube.api(Services, { namespace: ns })
      yield* services.create({ metadata: { name: "lb" }, spec: { type: "LoadBalancer", selector: { app: "lb" }, ports: [{ port: 80 }] } })
      const patched = yield* services.patchStatus(
        "lb",
        Patch.merge({ spec: { ports: [{ port: 81 }] }, status: { loadBalancer: { ingress: [{ ip: "192.0.2.10" }] } } })
      )
      // the spec half of a status patch is ignored
      assert.strictEqual(patched.spec?.ports?.[0]?.port, 80)
      assert.strictEqual(patched.status?.loadBalancer?.ingress?.[0]?.ip, "192.0.2.10")
      const status = Option.getOrThrow(yield* services.getStatus("lb"))
      assert.strictEqual(status.metadata?.resourceVersion, patched.metadata?.resourceVersion)
      // and the status half of an object write is ignored
      const replaced = yield* services.replace("lb", { ...status, status: { loadBalancer: {} } })
      assert.strictEqual(replaced.status?.loadBalancer?.ingress?.[0]?.ip, "192.0.2.10")
      // applyStatus: a manager of its own for the status, recorded on the status subresource
      const applied = yield* services.applyStatus(
        {
          apiVersion: "v1",
          kind: "Service",
          metadata: { name: "lb" },
          status: { loadBalancer: { ingress: [{ ip: "192.0.2.11" }] } }
        },
        { fieldManager: "status-writer", force: true }
      )
      const entry = applied.metadata?.managedFields?.find((m) => m.manager === "status-writer")
      assert.strictEqual(entry?.subresource, "status")
      assert.strictEqual(entry?.operation, "Apply")
      assert.deepStrictEqual(applied.status?.loadBalancer?.ingress?.map((i) => i.ip), ["192.0.2.11"])
      const replacedStatus = yield* services.replaceStatus("lb", { ...applied, status: { loadBalancer: {} } })
      assert.isUndefined(replacedStatus.status?.loadBalancer?.ingress)
      assert.isTrue(Option.isNone(yield* services.getStatus("absent")))
    }), 60_000)

  it.effect("scale: read and patched as an autoscaling/v1 Scale; the controllers follow", () =>
    Effect.gen(function*() {
      const ns = yield* testNamespace("scale")
      const deployments = Kube.api(Deployments, { namespace: ns })
      yield* deployments.create(deployment(1))
      const scale = Option.getOrThrow(yield* deployments.getScale("web"))
      assert.strictEqual(scale.apiVersion, "autoscaling/v1")
      assert.strictEqual(scale.kind, "Scale")
      assert.strictEqual(scale.spec?.replicas, 1)
      const patched = yield* deployments.patchScale("web", Patch.merge({ spec: { replicas: 3 } }))
      assert.strictEqual(patched.spec?.replicas, 3)
      // without a resourceVersion the scale is replaced whatever the controllers wrote in between
      const replaced = yield* deployments.replaceScale("web", {
        apiVersion: "autoscaling/v1",
        kind: "Scale",
        metadata: { name: "web", namespace: ns },
        spec: { replicas: 2 }
      })
      assert.strictEqual(replaced.spec?.replicas, 2)
      const scaled = Option.getOrThrow(
        yield* deployments.waitFor("web", (d) => d?.status?.readyReplicas === 2, { timeout: "60 seconds" })
      )
      assert.strictEqual(scaled.spec?.replicas, 2)
      const after = Option.getOrThrow(yield* deployments.getScale("web"))
      assert.strictEqual(after.status?.replicas, 2)
      assert.strictEqual(after.status?.selector, "app=web")
      const missing = yield* Effect.flip(deployments.patchScale("absent", Patch.merge({ spec: { replicas: 1 } })))
      assert.isTrue(ApiError.isNotFound(missing), missing.message)
    }), 90_000)

  it.effect("eviction: refused with 429 while a PodDisruptionBudget forbids it, done once it allows it", () =>
    Effect.gen(function*() {
      const ns = yield* testNamespace("evict")
      const pods = Kube.api(Pods, { namespace: ns })
      const pdbs = Kube.api(PodDisruptionBudgets, { namespace: ns })
      yield* pods.create({ metadata: { name: "guarded", labels: { app: "guarded" } }, spec: { containers: [sleeper], terminationGracePeriodSeconds: 0 } })
      yield* pods.waitFor("guarded", Condition.podReady, { timeout: "60 seconds" })
      yield* pdbs.create({ metadata: { name: "keep-one" }, spec: { minAvailable: 1, selector: { matchLabels: { app: "guarded" } } } })
      // the disruption controller must have counted the pod first
      yield* pdbs.waitFor("keep-one", (p) => p?.status?.observedGeneration === 1 && p.status.currentHealthy === 1, {
        timeout: "60 seconds"
      })
      const refused = yield* Effect.flip(pods.evict("guarded"))
      assert.isTrue(ApiError.isTooManyRequests(refused), refused.message)
      assert.include(refused.message, "Cannot evict pod as it would violate the pod's disruption budget.")
      assert.isTrue(Option.isSome(yield* pods.get("guarded")))

      yield* pdbs.patch("keep-one", Patch.merge({ spec: { minAvailable: 0 } }))
      yield* pdbs.waitFor("keep-one", (p) => p?.status?.observedGeneration === 2 && p.status.disruptionsAllowed === 1, {
        timeout: "60 seconds"
      })
      yield* pods.evict("guarded", { deleteOptions: { gracePeriodSeconds: 0 } })
      yield* pods.waitFor("guarded", Condition.deleted, { timeout: "60 seconds" })
      const gone = yield* Effect.flip(pods.evict("guarded"))
      assert.isTrue(ApiError.isNotFound(gone), gone.message)
    }), 120_000)

  it.effect("createToken: a JWT for the service account, with the audience and expiry asked for", () =>
    Effect.gen(function*() {
      const ns = yield* testNamespace("token")
      const accounts = Kube.api(ServiceAccounts, { namespace: ns })
      yield* accounts.create({ metadata: { name: "builder" } })
      const { expirationTimestamp, token } = yield* accounts.createToken("builder", {
        audiences: ["vault"],
        expirationSeconds: 3600
      })
      assert.strictEqual(String(token), "<redacted>")
      const [, payload] = Redacted.value(token).split(".")
      const claims = JSON.parse(Buffer.from(payload ?? "", "base64url").toString("utf8"))
      assert.strictEqual(claims.sub, `system:serviceaccount:${ns}:builder`)
      assert.deepStrictEqual(claims.aud, ["vault"])
      assert.strictEqual(claims.exp - claims.iat, 3600)
      assert.strictEqual(Math.floor(new Date(expirationTimestamp).getTime() / 1000), claims.exp)
      const tooShort = yield* Effect.flip(accounts.createToken("builder", { expirationSeconds: 60 }))
      // kube-apiserver's minimum is 10 minutes; the library refuses less before sending
      assert.strictEqual(tooShort._tag, "ValidationError", tooShort.message)
      const missing = yield* Effect.flip(accounts.createToken("nobody"))
      assert.isTrue(ApiError.isNotFound(missing), missing.message)
    }), 30_000)

  it.effect("ephemeral containers are added through their subresource, never through the pod", () =>
    Effect.gen(function*() {
      const ns = yield* testNamespace("ephemeral")
      const pods = Kube.api(Pods, { namespace: ns })
      yield* pods.create({ metadata: { name: "app" }, spec: { containers: [sleeper] } })
      const direct = yield* Effect.flip(
        pods.patch("app", Patch.strategic({ spec: { ephemeralContainers: [{ name: "debug", image: "busybox:1.36" }] } }))
      )
      assert.isTrue(ApiError.isInvalid(direct), direct.message)
      const debugged = yield* pods.patchEphemeralContainers(
        "app",
        Patch.strategic({ spec: { ephemeralContainers: [{ name: "debug", image: "busybox:1.36", stdin: true, tty: true }] } })
      )
      const added = debugged.spec?.ephemeralContainers ?? []
      assert.deepStrictEqual(added.map((c) => c.name), ["debug"])
      // defaulted as a container is
      assert.strictEqual(added[0]?.terminationMessagePolicy, "File")
      const read = Option.getOrThrow(yield* pods.getEphemeralContainers("app"))
      assert.deepStrictEqual(read.spec?.ephemeralContainers?.map((c) => c.name), ["debug"])
      // one cannot be removed
      const removed = yield* Effect.flip(pods.replaceEphemeralContainers("app", { ...read, spec: { ...read.spec!, ephemeralContainers: [] } }))
      assert.isTrue(ApiError.isInvalid(removed), removed.message)
    }), 30_000)

  // The pod is kept off the node: kube-apiserver refuses to resize a running pod whose container statuses carry no
  // `resources` (it takes that for a kubelet without in-place resize: "Pod running on node without support for
  // resize"), and the e2e node stand-in does not report them
  it.effect("resize: a pod's resources change through the resize subresource only", () =>
    Effect.gen(function*() {
      const ns = yield* testNamespace("resize")
      const pods = Kube.api(Pods, { namespace: ns })
      const resources = { requests: { cpu: "100m", memory: "32Mi" }, limits: { cpu: "200m", memory: "64Mi" } }
      yield* pods.create({
        metadata: { name: "app" },
        spec: { nodeSelector: { "e2e.effect-kube.dev/no-such-node": "true" }, containers: [{ ...sleeper, resources }] }
      })
      const direct = yield* Effect.flip(
        pods.patch("app", Patch.strategic({ spec: { containers: [{ name: "c", resources: { limits: { cpu: "300m" } } }] } }))
      )
      assert.isTrue(ApiError.isInvalid(direct), direct.message)
      const resized = yield* pods.patchResize(
        "app",
        Patch.strategic({ spec: { containers: [{ name: "c", resources: { requests: { cpu: "150m" }, limits: { cpu: "300m" } } }] } })
      )
      assert.deepStrictEqual(resized.spec?.containers[0]?.resources?.limits, { cpu: "300m", memory: "64Mi" })
      assert.deepStrictEqual(resized.spec?.containers[0]?.resources?.requests, { cpu: "150m", memory: "32Mi" })
      // a resize that would change the pod's QoS class is refused
      const qos = yield* Effect.flip(
        pods.patchResize("app", Patch.strategic({ spec: { containers: [{ name: "c", resources: { requests: { cpu: "300m", memory: "64Mi" } } }] } }))
      )
      assert.isTrue(ApiError.isInvalid(qos), qos.message)
      assert.match(qos.message, /qos class/i)
      const read = Option.getOrThrow(yield* pods.getResize("app"))
      assert.strictEqual(read.spec?.containers[0]?.resources?.limits?.["cpu"], "300m")
    }), 30_000)
})

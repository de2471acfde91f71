/**
 * Writes that merge, against the real control plane: server-side apply with typed apply configurations (ownership,
 * conflicts, `force`, managedFields as the server records them, fields a manager stops applying), merge, JSON and
 * strategic merge patches, dry runs, and field validation.
 */
import { assert, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import {
  ApiError,
  ConfigMaps,
  type DeploymentApply,
  Deployments,
  Kube,
  Patch,
  Pods,
  Secrets,
  Warnings
} from "./lib.js"
import { layer, testNamespace } from "./support.js"

const web = (image: string, replicas?: number): DeploymentApply => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name: "web", labels: { tier: "front" } },
  spec: {
    ...(replicas === undefined ? {} : { replicas }),
    selector: { matchLabels: { app: "web" } },
    template: {
      metadata: { labels: { app: "web" } },
      spec: { containers: [{ name: "web", image, command: ["sh", "-c", "sleep 3600"] }] }
    }
  }
})

it.layer(layer, { excludeTestServices: true, timeout: "60 seconds" })("apply", (it) => {
  it.effect("apply creates, records the manager's fields, conflicts with another manager, and force takes them", () =>
    Effect.gen(function*() {
      const ns = yield* testNamespace("ssa")
      const deployments = Kube.api(Deployments, { namespace: ns })
      const created = yield* deployments.apply(web("busybox:1.36", 2), { fieldManager: "deployer" })
      assert.strictEqual(created.spec?.replicas, 2)
      const entry = created.metadata?.managedFields?.find((m) => m.manager === "deployer")
      assert.strictEqual(entry?.operation, "Apply")
      assert.strictEqual(entry?.apiVersion, "apps/v1")
      assert.strictEqual(entry?.fieldsType, "FieldsV1")
      assert.isString(entry?.time)
      const fields = entry?.fieldsV1 as Record<string, any>
      assert.deepStrictEqual(fields["f:metadata"], { "f:labels": { "f:tier": {} } })
      assert.deepStrictEqual(fields["f:spec"]["f:replicas"], {})
      assert.deepStrictEqual(
        Object.keys(fields["f:spec"]["f:template"]["f:spec"]["f:containers"]),
        [`k:{"name":"web"}`]
      )

      // another manager setting the same field to another value: 409, naming the owner and the field
      const conflict = yield* Effect.flip(
        deployments.apply(
          { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "web" }, spec: { replicas: 5 } },
          { fieldManager: "autoscaler" }
        )
      )
      assert.isTrue(ApiError.isConflict(conflict), conflict.message)
      assert.include(conflict.message, `Apply failed with 1 conflict: conflict with "deployer": .spec.replicas`)
      assert.strictEqual((conflict as ApiError).status?.details?.causes?.[0]?.field, ".spec.replicas")

      // the same value is no conflict: both managers own it
      const shared = yield* deployments.apply(
        { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "web" }, spec: { replicas: 2 } },
        { fieldManager: "autoscaler" }
      )
      assert.isDefined(shared.metadata?.managedFields?.find((m) => m.manager === "autoscaler"))

      const forced = yield* deployments.apply(
        { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "web" }, spec: { replicas: 5 } },
        { fieldManager: "autoscaler", force: true }
      )
      assert.strictEqual(forced.spec?.replicas, 5)
      const deployer = forced.metadata?.managedFields?.find((m) => m.manager === "deployer")
      const autoscaler = forced.metadata?.managedFields?.find((m) => m.manager === "autoscaler")
      assert.isUndefined((deployer?.fieldsV1 as any)["f:spec"]["f:replicas"])
      assert.deepStrictEqual((autoscaler?.fieldsV1 as any)["f:spec"], { "f:replicas": {} })

      // the deployer applies again without replicas and without its label: the label goes, the replicas stay
      const next = web("busybox:1.37")
      const reapplied = yield* deployments.apply(
        { ...next, metadata: { name: "web" } },
        { fieldManager: "deployer" }
      )
      assert.strictEqual(reapplied.spec?.replicas, 5)
      assert.strictEqual(reapplied.spec?.template.spec?.containers[0]?.image, "busybox:1.37")
      assert.isUndefined(reapplied.metadata?.labels?.["tier"])
      // two spec changes since the create: the forced replicas and the new image
      assert.strictEqual(reapplied.metadata?.generation, 3)
    }), 60_000)

  it.effect("Patch.apply through patch; a body naming another object, or no field manager, is refused", () =>
    Effect.gen(function*() {
      const ns = yield* testNamespace("ssa-raw")
      const cms = Kube.api(ConfigMaps, { namespace: ns })
      const applied = yield* cms.patch(
        "raw",
        Patch.apply({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "raw" }, data: { a: "1" } }),
        { fieldManager: "raw-tool" }
      )
      assert.deepStrictEqual(applied.data, { a: "1" })
      assert.strictEqual(applied.metadata?.managedFields?.[0]?.manager, "raw-tool")
      // a body naming another object than the path: the server refuses it
      const mismatch = yield* Effect.flip(
        cms.patch("raw", Patch.apply({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "other" } }), {
          fieldManager: "raw-tool"
        })
      )
      assert.isTrue(ApiError.is(mismatch) && mismatch.code === 400, mismatch.message)
      // apply without a field manager: the server would refuse it (400), the library refuses it before sending
      const unnamed = yield* Effect.flip(
        cms.patch("raw", Patch.apply({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "raw" } }))
      )
      assert.strictEqual(unnamed._tag, "ValidationError", unnamed.message)
    }), 30_000)

  it.effect("merge, JSON and strategic merge patches do what the server defines", () =>
    Effect.gen(function*() {
      const ns = yield* testNamespace("patch")
      const cms = Kube.api(ConfigMaps, { namespace: ns })
      yield* cms.create({ metadata: { name: "p" }, data: { a: "1", b: "2" } })
      // merge: null deletes a key
      const merged = yield* cms.patch("p", Patch.merge({ data: { a: null, c: "3" } }))
      assert.deepStrictEqual(merged.data, { b: "2", c: "3" })
      // JSON patch: operations in order, a failed test refuses the whole patch
      const patched = yield* cms.patch(
        "p",
        Patch.json([
          { op: "test", path: "/data/b", value: "2" },
          { op: "replace", path: "/data/b", value: "22" },
          { op: "add", path: "/metadata/labels", value: { patched: "json" } },
          { op: "remove", path: "/data/c" }
        ])
      )
      assert.deepStrictEqual(patched.data, { b: "22" })
      assert.deepStrictEqual(patched.metadata?.labels, { patched: "json" })
      const failed = yield* Effect.flip(cms.patch("p", Patch.json([{ op: "test", path: "/data/b", value: "nope" }])))
      assert.isTrue(ApiError.is(failed), failed.message)
      // 422 Invalid, and kube-apiserver says no more than that
      assert.strictEqual((failed as ApiError).code, 422, failed.message)
      assert.include(failed.message, "the server rejected our request due to an error in our request")
      assert.deepStrictEqual(Option.getOrThrow(yield* cms.get("p")).data, { b: "22" })
      // a merge patch with a stale resourceVersion precondition: 409
      const stale = yield* Effect.flip(cms.patch("p", Patch.merge({ metadata: { resourceVersion: "1" }, data: { x: "y" } })))
      assert.isTrue(ApiError.isConflict(stale), stale.message)

      // strategic merge: containers merge by name, $patch: delete removes one
      const pods = Kube.api(Pods, { namespace: ns })
      yield* pods.create({
        metadata: { name: "two" },
        spec: {
          containers: [
            { name: "a", image: "busybox:1.36", command: ["sleep", "3600"] },
            { name: "b", image: "busybox:1.36", command: ["sleep", "3600"] }
          ]
        }
      })
      const retagged = yield* pods.patch("two", Patch.strategic({ spec: { containers: [{ name: "b", image: "busybox:1.37" }] } }))
      assert.deepStrictEqual(retagged.spec?.containers.map((c) => `${c.name}=${c.image}`), ["a=busybox:1.36", "b=busybox:1.37"])
      // the same patch as a merge patch replaces the whole list, which a pod refuses (containers cannot be added or removed)
      const replacedList = yield* Effect.flip(pods.patch("two", Patch.merge({ spec: { containers: [{ name: "b", image: "busybox:1.36" }] } })))
      assert.isTrue(ApiError.isInvalid(replacedList), replacedList.message)
      const labelled = yield* pods.patch(
        "two",
        Patch.strategic({ metadata: { labels: { x: "1", y: "2" } } })
      )
      const unlabelled = yield* pods.patch("two", Patch.strategic({ metadata: { labels: { x: null } } }))
      assert.deepStrictEqual(labelled.metadata?.labels, { x: "1", y: "2" })
      assert.deepStrictEqual(unlabelled.metadata?.labels, { y: "2" })
    }), 60_000)

  it.effect("dry runs answer what would be written and change nothing", () =>
    Effect.gen(function*() {
      const ns = yield* testNamespace("dryrun")
      const cms = Kube.api(ConfigMaps, { namespace: ns })
      const dry = yield* cms.create({ metadata: { name: "maybe" }, data: { a: "1" } }, { dryRun: true })
      assert.strictEqual(dry.metadata?.name, "maybe")
      assert.deepStrictEqual(dry.data, { a: "1" })
      assert.isTrue(Option.isNone(yield* cms.get("maybe")))

      const real = yield* cms.create({ metadata: { name: "real" }, data: { a: "1" } })
      const dryPatch = yield* cms.patch("real", Patch.merge({ data: { a: "2" } }), { dryRun: true })
      assert.deepStrictEqual(dryPatch.data, { a: "2" })
      const dryApply = yield* cms.apply(
        { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "real" }, data: { b: "3" } },
        { fieldManager: "dry", dryRun: true }
      )
      assert.deepStrictEqual(dryApply.data, { a: "1", b: "3" })
      assert.isTrue(yield* cms.delete("real", { dryRun: true }))
      const after = Option.getOrThrow(yield* cms.get("real"))
      assert.deepStrictEqual(after.data, { a: "1" })
      assert.strictEqual(after.metadata?.resourceVersion, real.metadata?.resourceVersion)
    }), 30_000)

  it.effect("fieldValidation: Strict refuses an unknown field, Warn answers a warning, Ignore drops it", () =>
    Effect.gen(function*() {
      const ns = yield* testNamespace("validation")
      const cms = Kube.api(ConfigMaps, { namespace: ns })
      type ConfigMapInput = Parameters<typeof cms.create>[0]
      const typo = (name: string) => ({ metadata: { name }, dta: { a: "1" } }) as unknown as ConfigMapInput

      const strict = yield* Effect.flip(cms.create(typo("strict"), { fieldValidation: "Strict" }))
      assert.isTrue(ApiError.is(strict) && strict.code === 400, strict.message)
      assert.include(strict.message, `strict decoding error: unknown field "dta"`)
      assert.isTrue(Option.isNone(yield* cms.get("strict")))

      const warned = yield* Effect.gen(function*() {
        const collected = yield* Warnings.Collected
        yield* cms.create(typo("warned"), { fieldValidation: "Warn" })
        return yield* collected.warnings
      }).pipe(Effect.provide(Warnings.layerCollect))
      assert.isTrue(
        warned.some((w) => w._tag === "HeaderWarning" && w.text.includes(`unknown field "dta"`)),
        JSON.stringify(warned)
      )
      const kept = Option.getOrThrow(yield* cms.get("warned"))
      assert.isUndefined((kept as Record<string, unknown>)["dta"])

      const ignored = yield* Effect.gen(function*() {
        const collected = yield* Warnings.Collected
        yield* cms.create(typo("ignored"), { fieldValidation: "Ignore" })
        return yield* collected.warnings
      }).pipe(Effect.provide(Warnings.layerCollect))
      assert.deepStrictEqual(ignored.filter((w) => w._tag === "HeaderWarning"), [])

      // Strict also applies to patches (422 Invalid, the patched object quoted) and to apply (a 500: the typed
      // patch cannot be built, the server's own code for it)
      const strictPatch = yield* Effect.flip(cms.patch("warned", Patch.merge({ dta: { b: "2" } }), { fieldValidation: "Strict" }))
      assert.isTrue(ApiError.isInvalid(strictPatch), strictPatch.message)
      assert.include(strictPatch.message, `strict decoding error: unknown field "dta"`)
      const strictApply = yield* Effect.flip(
        cms.apply({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "warned" }, dta: {} } as never, {
          fieldManager: "strict",
          fieldValidation: "Strict"
        })
      )
      assert.isTrue(ApiError.is(strictApply) && strictApply.code === 500, strictApply.message)
      assert.include(strictApply.message, ".dta: field not declared in schema")
    }), 30_000)

  // Found here: kube-apiserver quotes the value it refused, and for a patch of a Secret that is the patch or the
  // whole patched Secret, data included; ApiError.message carried it
  it.effect("an error about a Secret never carries its data, though the server's Status quotes it", () =>
    Effect.gen(function*() {
      const ns = yield* testNamespace("secret-errors")
      const secrets = Kube.api(Secrets, { namespace: ns })
      yield* secrets.create({ metadata: { name: "creds" }, stringData: { password: "hunter2" } })
      const encoded = Buffer.from("hunter2").toString("base64")
      const strict = yield* Effect.flip(
        secrets.patch("creds", Patch.merge({ dta: { x: "y" } }), { fieldValidation: "Strict" })
      )
      assert.isTrue(ApiError.isInvalid(strict), strict.message)
      assert.include(strict.message, `strict decoding error: unknown field "dta"`)
      const badValue = yield* Effect.flip(secrets.patch("creds", Patch.strategic({ data: { password: "!!hunter3" } })))
      assert.isTrue(ApiError.isInvalid(badValue), badValue.message)
      assert.include(badValue.message, "illegal base64 data")
      for (const error of [strict, badValue]) {
        for (const text of [error.message, String(error), JSON.stringify(error), JSON.stringify((error as ApiError).status)]) {
          assert.notInclude(text, encoded)
          assert.notInclude(text, "hunter")
        }
      }
    }), 30_000)
})

/**
 * The examples of docs/rbac.md, as written there: a program's least-privilege RBAC written
 * from a fake run, and the same program on a fake that enforces it. The last test checks
 * that the docs still hold these very blocks.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Stream } from "effect"
import * as fs from "node:fs"
import { ApiError, ConfigMaps, Kube, Namespaces } from "effect-kube"
import { FakeCluster, Rbac } from "@effect-kube/testing"

// the program under test: what it asks for is what its Role must hold
const program = Effect.gen(function* () {
  const configMaps = Kube.api(ConfigMaps, { namespace: "shop" })
  yield* configMaps.create({ metadata: { name: "settings" }, data: { mode: "fast" } })
  yield* configMaps.watch({ fieldSelector: "metadata.name=settings" }).pipe(Stream.take(1), Stream.runDrain)
  yield* Kube.api(Namespaces).list()
})

const subject = { kind: "ServiceAccount", namespace: "shop", name: "shop-app" } as const

it.effect("writes the Role a program needs", () =>
  Effect.gen(function* () {
    yield* program // on a fake that allows everything (the default), logging every access
    const objects = yield* Rbac.required({ name: "shop-app", subject })
    const yaml = Rbac.toYaml(objects) // commit it next to the program's manifests
    assert.include(yaml, "resourceNames:\n      - settings") // the watch named one object
    assert.deepStrictEqual(objects.map((o) => o.kind), ["ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"])
  }).pipe(Effect.provide(FakeCluster.layer({ namespaces: ["shop"] }))))

// a fake whose token is the service account's: giving a user turns RBAC on
const asShopApp = { user: { serviceAccount: { namespace: "shop", name: "shop-app" } }, namespaces: ["shop"] }

it.effect("runs the program as its service account, RBAC enforced", () =>
  Effect.gen(function* () {
    const objects = yield* program.pipe(
      Effect.andThen(Rbac.required({ name: "shop-app", subject })),
      Effect.provide(FakeCluster.layer({ namespaces: ["shop"] }))
    )
    yield* program.pipe(Effect.provide(FakeCluster.layer({ ...asShopApp, objects }))) // no denial

    const without = objects.filter((o) => o.kind !== "ClusterRole") // drop the namespaces rule
    const denied = yield* Effect.flip(program.pipe(Effect.provide(FakeCluster.layer({ ...asShopApp, objects: without }))))
    assert.isTrue(ApiError.isForbidden(denied))
    // namespaces is forbidden: User "system:serviceaccount:shop:shop-app" cannot list resource "namespaces" in API group "" at the cluster scope
  }))

describe("docs/rbac.md", () => {
  it("holds these examples as written here", () => {
    const docs = fs.readFileSync(new URL("../../docs/rbac.md", import.meta.url), "utf8")
    const here = fs.readFileSync(new URL(import.meta.url), "utf8")
    const blocks = [...docs.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!)
    assert.strictEqual(blocks.length, 1)
    for (const block of blocks) {
      for (const line of block.split("\n").filter((l) => l !== "" && !l.startsWith("import "))) {
        assert.include(here, line)
      }
    }
  })
})

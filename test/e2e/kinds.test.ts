/**
 * Every built-in kind against the objects a real control plane holds: each generated Resource that the server serves
 * and can list is listed across namespaces, and every object the server sends must decode by its generated Schema
 * without a mismatch (the Schemas are generated from the OpenAPI spec; the real objects say whether they fit).
 */
import { assert, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Library from "./lib.js"
import { Discovery, Kube, Resource, Warnings } from "./lib.js"
import { layer } from "./support.js"

const builtIns = (Object.values(Library) as ReadonlyArray<unknown>).filter(
  (value): value is Resource.Resource<unknown, unknown, string> =>
    typeof value === "object" && value !== null && Resource.TypeId in value
)

it.layer(layer, { excludeTestServices: true, timeout: "60 seconds" })("kinds", (it) => {
  it.effect("every object of every served kind decodes by its generated Schema", () =>
    Effect.gen(function*() {
      const discovery = yield* Discovery.make
      const { resources } = yield* discovery.resources()
      const listable = builtIns.filter((r) =>
        resources.some((served) =>
          served.apiVersion === r.apiVersion && served.plural === r.plural && served.verbs.includes("list")
        )
      )
      assert.isAtLeast(listable.length, 50, `${listable.length} of ${builtIns.length} kinds served`)
      const collected = yield* Effect.gen(function*() {
        const warnings = yield* Warnings.Collected
        let objects = 0
        for (const resource of listable) {
          const api = Kube.api(resource)
          const list = yield* api.list({ allNamespaces: resource.namespaced ? true : undefined, limit: 100 })
          objects += list.items.length
        }
        return { objects, warnings: yield* warnings.warnings }
      }).pipe(Effect.provide(Warnings.layerCollect))
      assert.isAtLeast(collected.objects, 100)
      const mismatches = collected.warnings.filter((w) => w._tag !== "HeaderWarning")
      assert.deepStrictEqual(mismatches.map((w) => `${w.path}: ${w.text}`), [])
    }), 60_000)
})

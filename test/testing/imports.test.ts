/**
 * The fake's modules form no import cycle (type-only imports count): each concern
 * depends on the shared state below it, never on a module that depends on it back.
 */
import { assert, describe, it } from "@effect/vitest"

interface Graph {
  readonly circular: () => ReadonlyArray<ReadonlyArray<string>>
  readonly obj: () => Readonly<Record<string, ReadonlyArray<string>>>
}
type Madge = (
  paths: ReadonlyArray<string>,
  config: { readonly fileExtensions: ReadonlyArray<string> }
) => Promise<Graph>

// madge ships no types: loaded by a specifier TypeScript does not resolve
const madgeModule = "madge"

describe("fake cluster modules", () => {
  it("have no import cycles among the modules of packages/testing/src", async () => {
    const madge = (await import(madgeModule)).default as Madge
    const graph = await madge(["packages/testing/src"], { fileExtensions: ["ts"] })
    // the graph follows effect-kube into the client (its dist, once built): cycles of the fake's own modules count
    const fake = graph.circular().filter((cycle) => cycle.some((file) => !file.startsWith("../")))
    assert.deepStrictEqual(fake, [])
    // the graph was read: the fake's modules are in it
    assert.include(Object.keys(graph.obj()), "internal/serve/server.ts")
  }, 180_000) // madge parses every module of the package: 40-60 s on two loaded cores
})

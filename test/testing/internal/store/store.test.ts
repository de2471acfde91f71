/**
 * The fake's object store keeps a few recently used objects parsed. That cache belongs
 * to one store: two fakes in one process (parallel tests, a test beside a benchmark
 * server) must not evict each other's objects, nor keep a closed fake's objects alive.
 */
import { assert, describe, it } from "@effect/vitest"
import type { JsonObject } from "../../../../packages/testing/src/internal/store/json.js"
import { builtinKinds } from "../../../../packages/testing/src/internal/store/kinds.js"
import { type Entry, Store } from "../../../../packages/testing/src/internal/store/store.js"

const podKind = builtinKinds.find((k) => k.group === "" && k.kind === "Pod")!

const writePod = (store: Store, name: string): Entry =>
  store.write(store.collection(podKind), "default", name, (rv) => ({
    obj: {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name, namespace: "default", uid: `uid-${name}`, resourceVersion: String(rv) },
      spec: { containers: [{ name: "main", image: "busybox" }] }
    } as JsonObject,
    managers: []
  }))

describe("fake store", () => {
  it("keeps its recently parsed objects to itself: another store's writes do not evict them", () => {
    const a = new Store(1000)
    const b = new Store(1000)
    const entry = writePod(a, "kept")
    const parsed = entry.obj
    for (let i = 0; i < a.recent.capacity + 50; i++) writePod(b, `other-${i}`)
    // still the same parsed object: nothing of store b touched store a's cache
    assert.strictEqual(entry.obj, parsed)
  })

  it("evicts its own least recently parsed objects once full", () => {
    const a = new Store(1000)
    const entry = writePod(a, "first")
    const parsed = entry.obj
    for (let i = 0; i < a.recent.capacity + 50; i++) writePod(a, `next-${i}`)
    // parsed again from the stored JSON: an equal object, not the same one
    assert.notStrictEqual(entry.obj, parsed)
    assert.deepStrictEqual(entry.obj, parsed)
  })
})

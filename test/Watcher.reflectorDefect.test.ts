/**
 * A watcher that dies of a defect fails its store, instead of leaving `ready` waiting and
 * `failure` at None (issue 22). No answer of a server causes a defect any more; a bug in a
 * user's own Schema transformation still can, and the store must say so.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as SchemaGetter from "effect/SchemaGetter"
import * as Kube from "../packages/effect-kube/src/Kube.js"
import * as Resource from "../packages/effect-kube/src/Resource.js"
import { ConfigMaps } from "../packages/effect-kube/src/resources/index.js"
import { FakeCluster } from "@effect-kube/testing"
import * as Watcher from "../packages/effect-kube/src/Watcher.js"

/** ConfigMaps read through a Schema whose transformation throws on one value: a user's bug. */
const Buggy = Resource.make({
  apiVersion: "v1",
  kind: "ConfigMap",
  plural: "configmaps",
  namespaced: true,
  schema: Schema.Struct({
    data: Schema.optional(Schema.Struct({
      mode: Schema.String.pipe(Schema.decodeTo(Schema.String, {
        decode: SchemaGetter.transform((mode: string) => {
          if (mode === "boom") throw new Error("a bug in a transformation")
          return mode
        }),
        encode: SchemaGetter.transform((mode: string) => mode)
      }))
    }))
  })
})

describe("a reflector whose watcher dies of a defect", () => {
  it.live("fails ready and stopped, and reports the failure, naming the defect's class", () =>
    Effect.gen(function*() {
      yield* Kube.api(ConfigMaps, { namespace: "default" }).create({ metadata: { name: "a" }, data: { mode: "boom" } })
      const store = yield* Watcher.reflector(Kube.api(Buggy, { namespace: "default" }))
      // within the timeout, failing with the store's failure (a TimeoutError would be the bug)
      const ready = yield* Effect.flip(Effect.timeout(store.ready, "5 seconds"))
      assert.strictEqual(ready._tag, "ValidationError", "ready ends with the failure")
      const failure = yield* store.failure
      assert.isTrue(Option.isSome(failure), "failure is Some")
      const error = Option.getOrThrow(failure)
      assert.strictEqual(error._tag, "ValidationError")
      assert.include(error.message, "watcher of ConfigMap: stopped on a defect (Error)")
      const stopped = yield* Effect.flip(Effect.timeout(store.stopped, "5 seconds"))
      assert.strictEqual(stopped, error, "stopped ends with the same failure")
    }).pipe(Effect.scoped, Effect.provide(FakeCluster.layer())))
})

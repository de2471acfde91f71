/** Bursts of concurrent GETs over the ConfigMaps `cm-0` … `cm-19` of `default`, each answer checked. */
import { assert } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Kube from "../../packages/effect-kube/src/Kube.js"
import { ConfigMaps } from "../../packages/effect-kube/src/resources/index.js"

const cms = Kube.api(ConfigMaps, { namespace: "default" })

/** `count` GETs at once, each checked. */
export const burst = (count: number) =>
  Effect.forEach(
    Array.from({ length: count }, (_, i) => i),
    (i) =>
      Effect.map(cms.get(`cm-${i % 20}`), (found) => {
        assert.strictEqual(Option.getOrThrow(found).data?.["name"], `cm-${i % 20}`)
      }),
    { concurrency: "unbounded", discard: true }
  )

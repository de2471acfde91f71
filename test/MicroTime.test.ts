import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as TestClock from "effect/testing/TestClock"
import * as Kube from "../packages/effect-kube/src/Kube.js"
import { Leases } from "../packages/effect-kube/src/resources/index.js"
import * as MicroTime from "../packages/effect-kube/src/MicroTime.js"
import { FakeCluster } from "@effect-kube/testing"

const leases = Kube.api(Leases, { namespace: "default" })

describe("MicroTime", () => {
  it("formats with exactly six fractional digits, in UTC", () => {
    assert.strictEqual(MicroTime.format(new Date(Date.UTC(2024, 4, 1, 12, 0, 0, 123))), "2024-05-01T12:00:00.123000Z")
    assert.strictEqual(MicroTime.format(0), "1970-01-01T00:00:00.000000Z")
    assert.match(MicroTime.format(Date.now()), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/)
  })

  it("parses six digits and zones, refuses three digits, none, and impossible dates", () => {
    assert.strictEqual(Option.getOrThrow(MicroTime.parse("2024-05-01T12:00:00.123456Z")).getTime(), Date.UTC(2024, 4, 1, 12, 0, 0, 123))
    assert.strictEqual(
      Option.getOrThrow(MicroTime.parse("2024-05-01T14:00:00.000000+02:00")).getTime(),
      Date.UTC(2024, 4, 1, 12)
    )
    for (const bad of ["2024-05-01T12:00:00.123Z", "2024-05-01T12:00:00Z", "2024-02-31T12:00:00.000000Z", "2024-13-01T00:00:00.000000Z", "yesterday"]) {
      assert.isTrue(Option.isNone(MicroTime.parse(bad)), bad)
      assert.isFalse(MicroTime.isMicroTime(bad), bad)
    }
  })

  it.effect("now follows the Effect Clock", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.UTC(2030, 0, 2, 3, 4, 5, 6))
      assert.strictEqual(yield* MicroTime.now, "2030-01-02T03:04:05.006000Z")
    }))

  it.effect("the fake is as strict as the API server: a Lease with three-digit times is a 400, six digits pass", () =>
    Effect.gen(function*() {
      const bad = yield* leases.create({
        metadata: { name: "bad" },
        spec: { holderIdentity: "a", acquireTime: new Date(0).toISOString(), renewTime: MicroTime.format(0) }
      }).pipe(Effect.flip)
      assert.strictEqual(bad._tag, "ApiError")
      if (bad._tag === "ApiError") {
        assert.strictEqual(bad.code, 400)
        assert.strictEqual(bad.reason, "BadRequest")
        assert.include(bad.message, "acquireTime")
      }
      const good = yield* leases.create({
        metadata: { name: "good" },
        spec: { holderIdentity: "a", acquireTime: MicroTime.format(0), renewTime: MicroTime.format(1) }
      })
      assert.strictEqual(good.spec?.renewTime, "1970-01-01T00:00:00.001000Z")
      const patched = yield* leases.patch("good", { _tag: "Merge", body: { spec: { renewTime: "2024-01-01T00:00:00.5Z" } } })
        .pipe(Effect.flip)
      assert.strictEqual(patched._tag === "ApiError" && patched.code, 400)
    }).pipe(Effect.provide(FakeCluster.layer())))
})

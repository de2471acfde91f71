/**
 * Server warnings on the request path (internal/client/warnings.ts): the `Warning` header as it is
 * parsed, and the report of objects of a built-in kind that do not fit their Schema. Moved out of
 * Warnings.test.ts, which tests the public module.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Option from "effect/Option"
import * as Kube from "../../../packages/effect-kube/src/Kube.js"
import { Pods } from "../../../packages/effect-kube/src/resources/index.js"
import { FakeCluster } from "@effect-kube/testing"
import * as Warnings from "../../../packages/effect-kube/src/Warnings.js"
import { parseWarningHeader, reportMismatch } from "../../../packages/effect-kube/src/internal/client/warnings.js"
import { ValidationError } from "../../../packages/effect-kube/src/Errors.js"
import { failureOf } from "../../util/failure.js"

const fake = FakeCluster.FakeCluster

describe("the Warning header", () => {
  it("parses 299 warnings, quoted and escaped, several in one header; other codes are left out", () => {
    assert.deepStrictEqual(parseWarningHeader(`299 - "a \\"quoted\\" word"`), [`a "quoted" word`])
    assert.deepStrictEqual(
      parseWarningHeader(`299 - "first, with a comma", 299 kube-apiserver "second" "Sat, 01 Jan 2000 00:00:00 GMT"`),
      ["first, with a comma", "second"]
    )
    assert.deepStrictEqual(parseWarningHeader(`199 - "misc"`), [])
    assert.deepStrictEqual(parseWarningHeader(`garbage`), [])
  })
})

describe("objects of a built-in kind that do not fit (a newer server's)", () => {
  const pods = Kube.api(Pods, { namespace: "default" })
  // a newer server's Pod: no spec.containers (the spec says required), and a status field of a shape it does not know,
  // whose value must never be printed
  const newer = {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "newer", namespace: "default" },
    spec: { nodeName: "n1" },
    status: { phase: { since: "s3cr3t-value" } }
  }

  it.effect("a get and a list deliver it as it came, and report a MismatchedObject naming the object and paths", () =>
    Effect.gen(function*() {
      const control = yield* fake
      control.seed([newer])
      const got = Option.getOrUndefined(yield* pods.get("newer"))
      assert.deepStrictEqual(got?.status as unknown, newer.status, "delivered as the server sent it")
      const listed = yield* pods.list()
      assert.deepStrictEqual(listed.items.map((p) => p.metadata?.name), ["newer"])
      const all = yield* (yield* Warnings.Collected).warnings
      assert.deepStrictEqual(all.map((w) => [w._tag, w.method, w.path]), [
        ["MismatchedObject", "GET", "/api/v1/namespaces/default/pods/newer"],
        ["MismatchedObject", "GET", "/api/v1/namespaces/default/pods"]
      ])
      for (const warning of all) {
        assert.include(warning.text, "kept as the server sent it")
        assert.include(warning.text, "Pod default/newer")
        assert.include(warning.text, ".spec.containers")
        assert.include(warning.text, ".status.phase")
        assert.notInclude(warning.text, "s3cr3t-value")
        assert.notInclude(JSON.stringify(warning), "s3cr3t-value")
        assert.instanceOf(warning._tag === "MismatchedObject" ? warning.error : undefined, ValidationError)
      }
    }).pipe(Effect.provide(Layer.merge(FakeCluster.layer(), Warnings.layerCollect))))

  it.effect("logged without a Warnings service (without the value), a failure under layerFail", () =>
    Effect.gen(function*() {
      const error = new ValidationError({
        subject: "answer to GET /api/v1/namespaces/default/pods/newer: Pod default/newer",
        detail: "does not match its schema: .spec.containers is missing"
      })
      const logs: Array<string> = []
      const logger = Logger.make(({ logLevel, message }) => void logs.push(`${logLevel} ${String(message)}`))
      yield* reportMismatch("GET", "/api/v1/namespaces/default/pods/newer", error).pipe(
        Effect.provide(Logger.layer([logger]))
      )
      assert.deepStrictEqual(logs, [
        "Warn k8s: GET /api/v1/namespaces/default/pods/newer: kept as the server sent it: " +
        "answer to GET /api/v1/namespaces/default/pods/newer: Pod default/newer: " +
        "does not match its schema: .spec.containers is missing"
      ])
      const failed = yield* failureOf(
        reportMismatch("GET", "/api/v1/namespaces/default/pods/newer", error).pipe(Effect.provide(Warnings.layerFail))
      )
      assert.strictEqual(failed, error)
    }))
})

/**
 * `Kube.request` and `Kube.requestStream` against FakeCluster over the real request
 * path: the paths the library does not model (/version, /readyz, reviews), Status
 * answers as ApiError, bad input refused before anything is sent, reads retried and
 * mutations not, and a streamed watch as lines.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Fiber, Inspectable, Layer, Schedule, Stream } from "effect"
import * as TestClock from "effect/testing/TestClock"
import * as Kube from "../packages/effect-kube/src/Kube.js"
import * as RequestPolicy from "../packages/effect-kube/src/RequestPolicy.js"
import { FakeCluster } from "@effect-kube/testing"
import { failureOf } from "./util/failure.js"

const fake = FakeCluster.FakeCluster

const retrying = RequestPolicy.layer({ readRetries: Schedule.recurs(2) })

describe("Kube.request", () => {
  it.layer(Layer.merge(FakeCluster.layer(), retrying))((it) => {
    it.effect("reads /version as JSON and /readyz as text", () =>
      Effect.gen(function*() {
        const control = yield* fake
        control.reset()
        const version = (yield* Kube.request({ method: "GET", path: "/version" })) as Record<string, unknown>
        assert.isString(version["gitVersion"])
        assert.isString(version["major"])
        assert.strictEqual(yield* Kube.request({ method: "GET", path: "/readyz" }), "ok")
        assert.deepStrictEqual(control.requests().map((r) => r.path), ["/version", "/readyz"])
      }))

    it.effect("POSTs a SubjectAccessReview and gets its status; the body and query are sent", () =>
      Effect.gen(function*() {
        const control = yield* fake
        control.reset()
        const answer = (yield* Kube.request({
          method: "POST",
          path: "/apis/authorization.k8s.io/v1/subjectaccessreviews",
          query: { dryRun: "All" },
          body: {
            apiVersion: "authorization.k8s.io/v1",
            kind: "SubjectAccessReview",
            spec: { user: "jane", resourceAttributes: { verb: "list", resource: "pods", namespace: "default" } }
          }
        })) as { kind: string; status: { allowed: boolean }; spec: { user: string } }
        assert.strictEqual(answer.kind, "SubjectAccessReview")
        assert.strictEqual(answer.status.allowed, true)
        assert.strictEqual(answer.spec.user, "jane")
        const [sent] = control.requests()
        assert.strictEqual(sent!.method, "POST")
        assert.strictEqual(sent!.contentType, "application/json")
        assert.deepStrictEqual(sent!.query, { dryRun: "All" })
      }))

    it.effect("a review without attributes is a 422 ApiError carrying the server's Status", () =>
      Effect.gen(function*() {
        const error = yield* failureOf(Kube.request({
          method: "POST",
          path: "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
          body: { apiVersion: "authorization.k8s.io/v1", kind: "SelfSubjectAccessReview", spec: {} }
        }))
        assert.strictEqual(error._tag, "ApiError")
        if (error._tag === "ApiError") {
          assert.strictEqual(error.code, 422)
          assert.strictEqual(error.reason, "Invalid")
          assert.include(error.message, "exactly one of nonResourceAttributes or resourceAttributes")
          assert.strictEqual(error.status?.kind, "Status")
        }
      }))

    it.effect("a missing object is an ApiError NotFound naming the method and path; plain 404 too", () =>
      Effect.gen(function*() {
        const error = yield* failureOf(Kube.request({ method: "GET", path: "/api/v1/namespaces/default/pods/nope" }))
        assert.strictEqual(error._tag, "ApiError")
        if (error._tag === "ApiError") {
          assert.strictEqual(error.code, 404)
          assert.strictEqual(error.reason, "NotFound")
          assert.include(error.message, "k8s: GET /api/v1/namespaces/default/pods/nope: 404 NotFound")
        }
        const plain = yield* failureOf(Kube.request({ method: "GET", path: "/nowhere" }))
        assert.strictEqual(plain._tag === "ApiError" ? plain.code : 0, 404)
      }))

    it.effect("bad input fails with a ValidationError before anything is sent", () =>
      Effect.gen(function*() {
        const control = yield* fake
        control.reset()
        const bad: ReadonlyArray<[Kube.RequestOptions, string]> = [
          [{ method: "GET", path: "version" }, "path"],
          [{ method: "GET", path: "/api?watch=1" }, "path"],
          [{ method: "GET", path: "/api/../version" }, "path"],
          [{ method: "TRACE" as "GET", path: "/version" }, "method"],
          [{ method: "GET", path: "/version", body: {} }, "body"],
          [{ method: "GET", path: "/version", headers: { Authorization: "Bearer x" } }, "header Authorization"],
          [{ method: "GET", path: "/version", headers: { "X-Token": "secret\nvalue" } }, "header X-Token"],
          [{ method: "GET", path: "/version", headers: { "Bearer secret-token": "x" } }, "headers"],
          [{ method: "GET", path: "/version?token=secret" }, "path"]
        ]
        for (const [options, subject] of bad) {
          const error = yield* failureOf(Kube.request(options))
          assert.strictEqual(error._tag, "ValidationError")
          if (error._tag === "ValidationError") assert.strictEqual(error.subject, subject)
          assert.notInclude(error.message, "secret")
        }
        assert.strictEqual(control.requests().length, 0)
      }))

    it.effect("a read is retried after a 500; a POST is sent once", () =>
      Effect.gen(function*() {
        const control = yield* fake
        control.reset()
        control.failNext({ status: 500, match: (m) => m === "GET" })
        assert.strictEqual(yield* Kube.request({ method: "GET", path: "/readyz" }), "ok")
        assert.strictEqual(control.requests().length, 2)
        control.reset()
        control.failNext({ status: 500, match: (m) => m === "POST" })
        const error = yield* failureOf(Kube.request({
          method: "POST",
          path: "/api/v1/namespaces/default/configmaps",
          body: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "once" } }
        }))
        assert.strictEqual(error._tag === "ApiError" ? error.code : 0, 500)
        assert.strictEqual(control.requests().length, 1)
      }))

    it.effect("headers and a merge patch reach the server; the answer is the patched object", () =>
      Effect.gen(function*() {
        const control = yield* fake
        control.seed([{ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "p", namespace: "default" } }])
        control.reset()
        const patched = (yield* Kube.request({
          method: "PATCH",
          path: "/api/v1/namespaces/default/configmaps/p",
          body: { data: { a: "1" } },
          contentType: "application/merge-patch+json",
          headers: { "X-Request-Id": "42" }
        })) as { data: Record<string, string> }
        assert.deepStrictEqual(patched.data, { a: "1" })
        assert.strictEqual(control.requests()[0]!.contentType, "application/merge-patch+json")
      }))
  })

  it.effect("the token is sent, and a wrong token is a 401 ApiError without the token in it", () =>
    Effect.gen(function*() {
      const control = yield* fake
      const ok = yield* Kube.request({ method: "GET", path: "/api/v1/namespaces" })
      assert.strictEqual((ok as { kind: string }).kind, "NamespaceList")
      control.setToken("another-token")
      const error = yield* failureOf(Kube.request({ method: "GET", path: "/api/v1/namespaces" }))
      assert.strictEqual(error._tag === "ApiError" ? error.code : 0, 401)
      assert.notInclude(JSON.stringify(error), "fake-cluster-token")
      assert.notInclude(String(error), "fake-cluster-token")
    }).pipe(Effect.provide(FakeCluster.layer())))
})

describe("Kube.request under the request policy", () => {
  it.effect("a silent server: RequestTimeout naming the method, path and limit; a POST is sent once", () =>
    Effect.gen(function*() {
      const control = yield* fake
      control.stallNext({ match: (m) => m === "POST" })
      const fiber = yield* Effect.forkChild(Kube.request({
        method: "POST",
        path: "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
        body: { spec: { resourceAttributes: { verb: "get", resource: "pods" } } }
      }))
      yield* TestClock.adjust("2 seconds")
      const error = yield* failureOf(Fiber.join(fiber))
      assert.strictEqual(error._tag, "RequestTimeout")
      assert.strictEqual(
        error.message,
        "k8s: POST /apis/authorization.k8s.io/v1/selfsubjectaccessreviews: no complete answer within 2s (request timeout)"
      )
      assert.strictEqual(control.requests().length, 1)
    }).pipe(Effect.provide(Layer.merge(FakeCluster.layer(), RequestPolicy.layer({ timeout: "2 seconds" })))))

  it.effect("a header given to Kube.request never shows in a transport error, nor the token", () =>
    Effect.gen(function*() {
      const control = yield* fake
      control.resetNext()
      const error = yield* failureOf(Kube.request({
        method: "POST",
        path: "/api/v1/namespaces/default/configmaps",
        body: { metadata: { name: "x" } },
        headers: { "X-Api-Key": "very-secret-key" }
      }))
      assert.strictEqual(error._tag, "HttpClientError")
      assert.strictEqual(error._tag === "HttpClientError" && error.reason._tag, "TransportError")
      for (const text of [JSON.stringify(error), String(error), Inspectable.toStringUnknown(error)]) {
        assert.notInclude(text, "very-secret-key")
        assert.notInclude(text, "fake-cluster-token")
      }
    }).pipe(Effect.provide(FakeCluster.layer())))
})

describe("Kube.requestStream", () => {
  it.layer(FakeCluster.layer())((it) => {
    it.effect("streams a watch as lines, one JSON event each", () =>
      Effect.gen(function*() {
        const control = yield* fake
        control.seed([{ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "w", namespace: "default" } }])
        const lines = yield* Kube.requestStream({
          method: "GET",
          path: "/api/v1/namespaces/default/configmaps",
          // only w: the namespace also holds the kube-root-ca.crt kube-controller-manager publishes
          query: { watch: true, resourceVersion: "0", fieldSelector: "metadata.name=w" }
        }).pipe(Stream.take(1), Stream.runCollect)
        const event = JSON.parse([...lines][0]!) as { type: string; object: { metadata: { name: string } } }
        assert.strictEqual(event.type, "ADDED")
        assert.strictEqual(event.object.metadata.name, "w")
      }))

    it.effect("a refused stream is an ApiError; bad input a ValidationError", () =>
      Effect.gen(function*() {
        const error = yield* failureOf(
          Kube.requestStream({ method: "GET", path: "/apis/nope.example.com/v1/things", query: { watch: true } })
            .pipe(Stream.runDrain)
        )
        assert.strictEqual(error._tag === "ApiError" ? error.code : 0, 404)
        const bad = yield* failureOf(Kube.requestStream({ method: "GET", path: "relative" }).pipe(Stream.runDrain))
        assert.strictEqual(bad._tag, "ValidationError")
      }))
  })
})

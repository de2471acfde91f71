/**
 * OpenShift's processedtemplates on the fake, as library-go's templateprocessing (what
 * `oc process` asks the server for) does it: namespaces, `${NAME}` in every string (map
 * keys, labels, the message), `${{NAME}}` only as a whole value, labels over an object's own.
 */
import { assert, describe, it } from "@effect/vitest"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import { Effect } from "effect"
import { FakeCluster } from "@effect-kube/testing"

const processed = "http://fake-cluster.local/apis/template.openshift.io/v1/namespaces/default/processedtemplates"

const process = (template: unknown) =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    const response = yield* client.execute(
      HttpClientRequest.bodyText(HttpClientRequest.post(processed), JSON.stringify(template), "application/json")
    )
    return { status: response.status, body: JSON.parse(yield* response.text) }
  }).pipe(Effect.scoped, Effect.provide(FakeCluster.layer()))

describe("processedtemplates", () => {
  it.effect("namespaces: a hard-coded one is dropped, a parameterised one is kept and substituted", () =>
    Effect.gen(function*() {
      const { body, status } = yield* process({
        apiVersion: "template.openshift.io/v1",
        kind: "Template",
        metadata: { name: "t" },
        message: "created ${NAME} in ${NS}; ${UNKNOWN} stays",
        labels: { "app.example.com/${NAME}": "${NAME}-v${TAG}", team: "platform" },
        parameters: [{ name: "NAME", value: "web" }, { name: "NS", value: "apps" }, { name: "TAG", value: "2" }],
        objects: [
          { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a", namespace: "hard-coded" } },
          { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "b", namespace: "${NS}", labels: { team: "own" } } },
          {
            apiVersion: "v1",
            kind: "ConfigMap",
            metadata: { name: "c" },
            data: {
              "${NAME}.conf": "name=${NAME} tag=${TAG}",
              inline: "a-${{TAG}}-b",
              whole: "${{TAG}}",
              unknown: "${NOPE} and ${{NOPE}}"
            }
          }
        ]
      })
      assert.strictEqual(status, 201)
      const [a, b, c] = body.objects
      assert.isFalse("namespace" in a.metadata)
      assert.strictEqual(b.metadata.namespace, "apps")
      assert.strictEqual(body.message, "created web in apps; ${UNKNOWN} stays")
      assert.deepStrictEqual(body.labels, { "app.example.com/web": "web-v2", team: "platform" })
      // the template's labels are set on every object, over its own
      assert.deepStrictEqual(b.metadata.labels, { "app.example.com/web": "web-v2", team: "platform" })
      assert.deepStrictEqual(c.data, {
        "web.conf": "name=web tag=2",
        // ${{NAME}} is a whole value only: inside a string it is left as it is
        inline: "a-${{TAG}}-b",
        whole: 2,
        unknown: "${NOPE} and ${{NOPE}}"
      })
    }))
})

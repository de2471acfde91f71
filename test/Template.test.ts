import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { ApiError, ValidationError } from "../packages/effect-kube/src/Errors.js"
import type * as Kube from "../packages/effect-kube/src/Kube.js"
import * as Manifests from "../packages/effect-kube/src/Manifests.js"
import * as NodeKube from "../packages/effect-kube/src/NodeKube.js"
import * as Template from "../packages/effect-kube/src/Template.js"
import { FakeCluster } from "@effect-kube/testing"
import { apiServerOnly } from "./util/apiServerOnly.js"

const secretValue = "hunter2-TOPSECRET"

/** One batch run: every name comes from RUN; TOKEN is left to a generator unless given. */
const batchRun = (namespace: string) => ({
  apiVersion: "template.openshift.io/v1",
  kind: "Template",
  metadata: { name: "batch-run", namespace },
  labels: { template: "batch-run" },
  parameters: [
    { name: "RUN", required: true },
    { name: "IMAGE", value: "busybox:1.36" },
    { name: "PARALLELISM", value: "1" },
    { name: "DEBUG", value: "false" },
    { name: "TOKEN", generate: "expression", from: "[a-z0-9]{16}" }
  ],
  objects: [
    {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "${RUN}-token" },
      stringData: { token: "${TOKEN}" }
    },
    {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "${RUN}-settings" },
      data: { debug: "${DEBUG}", image: "${IMAGE}" }
    },
    {
      apiVersion: "batch/v1",
      kind: "Job",
      metadata: { name: "${RUN}" },
      spec: {
        parallelism: "${{PARALLELISM}}",
        template: {
          spec: { restartPolicy: "Never", containers: [{ name: "run", image: "${IMAGE}" }] }
        }
      }
    }
  ]
})

const parameters = { RUN: "run-42", TOKEN: secretValue, PARALLELISM: 3, DEBUG: true }

const withCluster = <A, E>(
  body: (cluster: FakeCluster.Service) => Effect.Effect<A, E, FakeCluster.FakeCluster | Kube.Requirements>
) =>
  Effect.flatMap(FakeCluster.FakeCluster, (cluster) => {
    cluster.seed([batchRun("templates")])
    cluster.reset()
    return body(cluster)
  }).pipe(Effect.provide(FakeCluster.layer({ ...apiServerOnly, namespace: "batch" })))

const paths = (cluster: FakeCluster.Service) => cluster.requests().map((r) => `${r.method} ${r.path}`)

const names = (objects: ReadonlyArray<Manifests.Manifest>) => objects.map((o) => `${o.kind}/${o.metadata?.name}`)

describe("Template.process", () => {
  it.effect("renders a template with values as text, booleans and numbers, and creates nothing", () =>
    withCluster((cluster) =>
      Effect.gen(function*() {
        const objects = yield* Template.process("batch-run", parameters, { namespace: "batch", templateNamespace: "templates" })
        assert.deepStrictEqual(names(objects), ["Secret/run-42-token", "ConfigMap/run-42-settings", "Job/run-42"])
        assert.deepStrictEqual(objects[0]!["stringData"], { token: secretValue })
        assert.deepStrictEqual(objects[1]!["data"], { debug: "true", image: "busybox:1.36" })
        assert.strictEqual((objects[2]!["spec"] as { parallelism: unknown }).parallelism, 3)
        assert.deepStrictEqual(objects[2]!.metadata?.["labels"], { template: "batch-run" })
        assert.deepStrictEqual(paths(cluster), [
          "GET /apis/template.openshift.io/v1/namespaces/templates/templates/batch-run",
          "POST /apis/template.openshift.io/v1/namespaces/batch/processedtemplates"
        ])
        assert.deepStrictEqual(cluster.list("v1", "Secret", "batch"), [])
      })
    ))

  it.effect("reads the template from the target namespace, by default the KubeConfig's", () =>
    withCluster((cluster) =>
      Effect.gen(function*() {
        cluster.seed([batchRun("batch")])
        cluster.reset()
        const objects = yield* Template.process("batch-run", parameters)
        assert.strictEqual(objects.length, 3)
        assert.deepStrictEqual(paths(cluster), [
          "GET /apis/template.openshift.io/v1/namespaces/batch/templates/batch-run",
          "POST /apis/template.openshift.io/v1/namespaces/batch/processedtemplates"
        ])
      })
    ))

  it.effect("a value given for a generated parameter is used as it is, and the same inputs render the same objects", () =>
    withCluster(() =>
      Effect.gen(function*() {
        const options = { namespace: "batch", templateNamespace: "templates" }
        const first = yield* Template.process("batch-run", parameters, options)
        const second = yield* Template.process("batch-run", parameters, options)
        assert.deepStrictEqual(first, second)
        // Finite numbers as their decimal text, whatever parameter they fill.
        const numbered = yield* Template.process("batch-run", { ...parameters, TOKEN: 1.5e3, IMAGE: "x" }, options)
        assert.deepStrictEqual(numbered[0]!["stringData"], { token: "1500" })
      })
    ))

  it.effect("refuses a parameter left to its generator, before rendering anything", () =>
    withCluster((cluster) =>
      Effect.gen(function*() {
        const { TOKEN: _token, ...withoutToken } = parameters
        const error = yield* Effect.flip(
          Template.process("batch-run", withoutToken, { namespace: "batch", templateNamespace: "templates" })
        )
        assert.instanceOf(error, ValidationError)
        assert.strictEqual(error.subject, "Template templates/batch-run: parameter TOKEN")
        assert.match(error.message, /generated/)
        assert.deepStrictEqual(paths(cluster), ["GET /apis/template.openshift.io/v1/namespaces/templates/templates/batch-run"])
        // A value given, even an empty one, replaces the generator: the same text every time.
        const empty = yield* Template.process("batch-run", { ...parameters, TOKEN: "" }, {
          namespace: "batch",
          templateNamespace: "templates"
        })
        assert.deepStrictEqual(empty[0]!["stringData"], { token: "" })
      })
    ))

  it.effect("refuses a required parameter without a value", () =>
    withCluster((cluster) =>
      Effect.gen(function*() {
        const { RUN: _run, ...withoutRun } = parameters
        const error = yield* Effect.flip(
          Template.process("batch-run", withoutRun, { namespace: "batch", templateNamespace: "templates" })
        )
        assert.instanceOf(error, ValidationError)
        assert.match(error.message, /parameter RUN: is required/)
        assert.isFalse(paths(cluster).some((p) => p.startsWith("POST")))
      })
    ))

  it.effect("refuses names the template does not declare, naming them but never the values", () =>
    withCluster((cluster) =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(
          Template.process("batch-run", { ...parameters, PASSWROD: secretValue }, {
            namespace: "batch",
            templateNamespace: "templates"
          })
        )
        assert.instanceOf(error, ValidationError)
        assert.strictEqual(
          error.message,
          "Template templates/batch-run: parameter PASSWROD: is not a parameter of this template " +
            "(it has RUN, IMAGE, PARALLELISM, DEBUG, TOKEN)"
        )
        assert.notInclude(JSON.stringify(error), secretValue)
        assert.isFalse(paths(cluster).some((p) => p.startsWith("POST")))
      })
    ))

  it.effect("refuses null, non-finite and non-scalar values before any request", () =>
    withCluster((cluster) =>
      Effect.gen(function*() {
        const bad: ReadonlyArray<readonly [unknown, string]> = [
          [null, "null"],
          [undefined, "undefined"],
          [Number.NaN, "a non-finite number"],
          [Number.POSITIVE_INFINITY, "a non-finite number"],
          [{ nested: secretValue }, "a object"],
          [[secretValue], "an array"]
        ]
        for (const [value, described] of bad) {
          const error = yield* Effect.flip(
            Template.process("batch-run", { ...parameters, IMAGE: value as string }, {
              namespace: "batch",
              templateNamespace: "templates"
            })
          )
          assert.instanceOf(error, ValidationError)
          assert.strictEqual(
            error.message,
            `Template templates/batch-run: parameter IMAGE: must be a string, a boolean or a finite number (got ${described})`
          )
          assert.notInclude(JSON.stringify(error), secretValue)
        }
        const badNames = yield* Effect.flip(Template.process("a/b", parameters, { namespace: "batch" }))
        assert.instanceOf(badNames, ValidationError)
        const badNamespace = yield* Effect.flip(Template.process("batch-run", parameters, { templateNamespace: "No!" }))
        assert.match(badNamespace.message, /templateNamespace/)
        assert.deepStrictEqual(cluster.requests(), [])
      })
    ))

  it.effect("a missing template is the server's NotFound", () =>
    withCluster(() =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(Template.process("nope", {}, { namespace: "batch" }))
        assert.isTrue(ApiError.isNotFound(error))
        assert.include(error.message, "/namespaces/batch/templates/nope")
      })
    ))
})

describe("Template.render (here, with no server)", () => {
  it.effect("renders what the server's processedtemplates renders, sending nothing", () =>
    withCluster((cluster) =>
      Effect.gen(function*() {
        const options = { namespace: "batch", templateNamespace: "templates" }
        const served = yield* Template.process("batch-run", parameters, options)
        cluster.reset()
        const local = yield* Template.render(batchRun("templates"), parameters)
        assert.deepStrictEqual(local, served)
        assert.deepStrictEqual(paths(cluster), [])
      })
    ))

  it.effect("a hard-coded namespace is dropped, a parameterised one kept; ${{X}} that is not JSON stays text", () =>
    Effect.gen(function*() {
      const objects = yield* Template.render({
        apiVersion: "template.openshift.io/v1",
        kind: "Template",
        metadata: { name: "t" },
        parameters: [{ name: "NS", value: "team-a" }, { name: "WORD", value: "plain" }],
        objects: [
          { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a", namespace: "fixed" } },
          { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "b", namespace: "${NS}" }, data: { w: "${{WORD}}" } }
        ]
      }, {})
      assert.deepStrictEqual(objects, [
        { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a" } },
        { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "b", namespace: "team-a" }, data: { w: "plain" } }
      ])
    }))

  it.effect("refuses what process refuses, and what is not a Template, naming the parameter but never a value", () =>
    Effect.gen(function*() {
      const { TOKEN: _token, ...withoutToken } = parameters
      const generated = yield* Effect.flip(Template.render(batchRun("templates"), withoutToken))
      assert.instanceOf(generated, ValidationError)
      assert.include(generated.message, "parameter TOKEN")
      assert.include(generated.message, "generated anew on every processing")
      const { RUN: _, ...withoutRun } = parameters
      const required = yield* Effect.flip(Template.render(batchRun("templates"), withoutRun))
      assert.include(required.message, "parameter RUN")
      assert.include(required.message, "is required")
      const unknown = yield* Effect.flip(Template.render(batchRun("templates"), { ...parameters, COLOUR: secretValue }))
      assert.include(unknown.message, "parameter COLOUR")
      assert.notInclude(unknown.message, secretValue)
      const notTemplate = yield* Effect.flip(Template.render({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c" } }, {}))
      assert.include(notTemplate.message, "is a ConfigMap of v1, not a template.openshift.io Template")
    }))
})

describe("Template.apply, get and delete", () => {
  it.effect("apply renders then applies the objects as a set (stringData as base64 data)", () =>
    withCluster((cluster) =>
      Effect.gen(function*() {
        const refs = yield* Template.apply("batch-run", parameters, {
          namespace: "batch",
          templateNamespace: "templates",
          fieldManager: "scheduler"
        })
        assert.deepStrictEqual(refs.map((r) => `${r.kind} ${r.namespace}/${r.name}`), [
          "Secret batch/run-42-token",
          "ConfigMap batch/run-42-settings",
          "Job batch/run-42"
        ])
        const secret = cluster.get(refs[0]!)!
        assert.deepStrictEqual(secret["data"], { token: Buffer.from(secretValue).toString("base64") })
        assert.deepStrictEqual(
          cluster.requests().filter((r) => r.method === "PATCH").map((r) => r.query["fieldManager"]),
          ["scheduler", "scheduler", "scheduler"]
        )
      })
    ))

  it.effect("a template's cluster-scoped kinds go first, and clusterScoped: false refuses them, as in any set", () =>
    withCluster((cluster) =>
      Effect.gen(function*() {
        const template = batchRun("templates")
        cluster.seed([{
          ...template,
          metadata: { name: "with-namespace", namespace: "templates" },
          objects: [...template.objects, { apiVersion: "v1", kind: "Namespace", metadata: { name: "${RUN}-scratch" } }]
        }])
        cluster.reset()
        const error = yield* Effect.flip(
          Template.apply("with-namespace", parameters, {
            namespace: "batch",
            templateNamespace: "templates",
            clusterScoped: false
          })
        )
        assert.instanceOf(error, ValidationError)
        assert.match(error.message, /Namespace run-42-scratch.*cluster-scoped and clusterScoped is false/)
        assert.strictEqual(cluster.requests().filter((r) => r.method === "PATCH").length, 0)
        const applied = yield* Template.apply("with-namespace", parameters, {
          namespace: "batch",
          templateNamespace: "templates"
        })
        assert.deepStrictEqual(applied[0]?.kind, "Namespace")
        assert.deepStrictEqual(applied[0]?.name, "run-42-scratch")
      })
    ))

  it.effect("replays after a restart: a fresh client with only the name and parameters finds and deletes the objects", () =>
    Effect.gen(function*() {
      const served = yield* FakeCluster.serve({ ...apiServerOnly, namespace: "batch" })
      served.control.seed([batchRun("templates")])
      const options = { namespace: "batch", templateNamespace: "templates" }
      // Each "process" has its own client layer: nothing but the kubeconfig is shared.
      const processA = NodeKube.layerFromFile({ path: served.kubeconfigPath })
      const processB = NodeKube.layerFromFile({ path: served.kubeconfigPath })

      const applied = yield* Template.apply("batch-run", parameters, options).pipe(Effect.provide(processA))
      const live = yield* Template.get("batch-run", parameters, options).pipe(Effect.provide(processB))
      assert.deepStrictEqual(live.map((o) => o.metadata?.uid), applied.map((r) => r.uid))

      const deleted = yield* Template.delete("batch-run", parameters, options).pipe(
        Effect.provide(NodeKube.layerFromFile({ path: served.kubeconfigPath }))
      )
      assert.deepStrictEqual(deleted.map((r) => r.name), ["run-42", "run-42-settings", "run-42-token"])
      for (const ref of applied) assert.isUndefined(served.control.get(ref))
      // Deleting again finds nothing left, and is not an error.
      const again = yield* Template.delete("batch-run", parameters, options).pipe(Effect.provide(processB))
      assert.strictEqual(again.length, 3)
    }))
})

describe("Template with an ApplySet: apply with prune, diff, status", () => {
  it.effect("re-processing a template that renders fewer objects prunes what it dropped", () =>
    withCluster((cluster) =>
      Effect.gen(function*() {
        const options = {
          namespace: "batch",
          templateNamespace: "templates",
          fieldManager: "scheduler",
          applySet: { name: "run-42" },
          prune: true
        }
        const first = yield* Template.apply("batch-run", parameters, options)
        assert.deepStrictEqual(first.created.map((r) => r.name), ["run-42-token", "run-42-settings", "run-42"])
        const job = { apiVersion: "batch/v1", kind: "Job", name: "run-42", namespace: "batch" }
        assert.strictEqual(cluster.get(job)!.metadata.labels!["applyset.kubernetes.io/part-of"], first.id)

        // the template's next version renders no settings ConfigMap
        const template = batchRun("templates")
        cluster.update({ apiVersion: "template.openshift.io/v1", kind: "Template", name: "batch-run", namespace: "templates" }, {
          objects: template.objects.filter((o) => o.kind !== "ConfigMap")
        })
        const diffs = yield* Template.diff("batch-run", parameters, options)
        assert.deepStrictEqual(diffs.map((d) => `${d.action} ${d.ref.kind}/${d.ref.name}`), [
          "unchanged Secret/run-42-token",
          "unchanged Job/run-42",
          "prune ConfigMap/run-42-settings"
        ])
        assert.notInclude(JSON.stringify(diffs), secretValue)
        const second = yield* Template.apply("batch-run", parameters, options)
        assert.deepStrictEqual(second.pruned.map((r) => r.name), ["run-42-settings"])
        assert.isUndefined(cluster.get({ apiVersion: "v1", kind: "ConfigMap", name: "run-42-settings", namespace: "batch" }))

        const statuses = yield* Template.status("batch-run", parameters, options)
        assert.deepStrictEqual(statuses.map((s) => `${s.ref.kind} ${s.status}`), ["Secret Current", "Job InProgress"])
        cluster.completeJob("batch", "run-42")
        const ready = yield* Template.waitReady("batch-run", parameters, { ...options, timeout: "1 second" })
        assert.deepStrictEqual(ready.map((s) => s.status), ["Current", "Current"])
      })
    ))
})

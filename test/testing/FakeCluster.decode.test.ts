/**
 * FakeCluster's typed decode of built-in objects (src/internal/validation/decode.ts) over real HTTP
 * (`FakeCluster.listen`, `fetch`): each expected text is kube-apiserver v1.35's answer to the same body (sent to the
 * e2e control plane while the decoder was written): a value its Go type cannot hold is a 400 whatever the field
 * validation, an unknown field deep in a struct the effect Schemas leave loose is found, and what is stored is what
 * Go's decode and encode leave of nulls, empty lists and absent structs.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { FakeCluster } from "@effect-kube/testing"

let listening: FakeCluster.Listening

beforeAll(async () => {
  listening = await FakeCluster.listen(FakeCluster.makeServer())
})

afterAll(() => listening.close())

const post = async (path: string, body: unknown, query = "") => {
  const response = await fetch(`${listening.url}${path}${query}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body)
  })
  return { status: response.status, body: await response.json() as Record<string, any>, warning: response.headers.get("warning") }
}

let counter = 0
const template = { metadata: { labels: { app: "a" } }, spec: { containers: [{ name: "c", image: "nginx" }] } }
const deployment = (spec: object) => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name: `d${counter++}` },
  spec: { selector: { matchLabels: { app: "a" } }, template, ...spec }
})
const deployments = "/apis/apps/v1/namespaces/default/deployments"
const prefix = `Deployment in version "v1" cannot be handled as a Deployment: `
const withContainer = (container: object) => ({
  template: { ...template, spec: { containers: [{ name: "c", image: "nginx", ...container }] } }
})

const refused = async (path: string, body: unknown, message: string, query = "") => {
  const answer = await post(path, body, query)
  assert.strictEqual(answer.status, 400, JSON.stringify(answer.body))
  assert.strictEqual(answer.body.reason, "BadRequest")
  assert.strictEqual(answer.body.message, message)
}

describe("FakeCluster decodes built-in objects as kube-apiserver's typed decoder", () => {
  it("a value of the wrong JSON type, a fraction or an out-of-range number: 400 with Go's words", async () => {
    const cases: ReadonlyArray<readonly [object, string]> = [
      [{ replicas: "3" }, "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32"],
      [{ replicas: 1.5 }, "json: cannot unmarshal number 1.5 into Go struct field DeploymentSpec.spec.replicas of type int32"],
      [
        { replicas: 2 ** 40 },
        "json: cannot unmarshal number 1099511627776 into Go struct field DeploymentSpec.spec.replicas of type int32"
      ],
      [
        withContainer({ image: 7 }),
        "json: cannot unmarshal number into Go struct field Container.spec.template.spec.containers.image of type string"
      ],
      [
        { template: { metadata: { labels: { app: 7 } }, spec: template.spec } },
        "json: cannot unmarshal number into Go struct field ObjectMeta.spec.template.metadata.labels of type string"
      ],
      [
        { template: "x" },
        "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.template of type v1.PodTemplateSpec"
      ],
      [
        { template: { ...template, spec: { containers: {} } } },
        "json: cannot unmarshal object into Go struct field PodSpec.spec.template.spec.containers of type []v1.Container"
      ],
      [
        { strategy: { rollingUpdate: { maxSurge: true } } },
        "json: cannot unmarshal bool into Go struct field RollingUpdateDeployment.spec.strategy.rollingUpdate.maxSurge of type int32"
      ],
      [
        withContainer({ resources: { limits: { cpu: "x" } } }),
        "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
      ]
    ]
    for (const [spec, message] of cases) {
      // Ignore does not let it through: the decode fails before field validation
      await refused(deployments, deployment(spec), `${prefix}${message}`, "?fieldValidation=Ignore")
    }
    await refused(
      "/api/v1/namespaces/default/secrets",
      { metadata: { name: "s" }, data: { a: "!!!" } },
      `Secret in version "v1" cannot be handled as a Secret: illegal base64 data at input byte 0`
    )
    await refused(
      "/api/v1/namespaces/default/configmaps",
      { metadata: { name: "c", creationTimestamp: 5 } },
      `ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal number into Go struct field ` +
        `ObjectMeta.metadata.creationTimestamp of type string`
    )
  })

  it("an unknown field inside a probe (a struct the effect Schemas keep loose) is refused under Strict, warned of under Warn", async () => {
    const body = () => deployment(withContainer({ livenessProbe: { exec: { command: ["x"] }, bogus: 1 } }))
    await refused(
      deployments,
      body(),
      `${prefix}strict decoding error: unknown field "spec.template.spec.containers[0].livenessProbe.bogus"`,
      "?fieldValidation=Strict"
    )
    const warned = await post(deployments, body())
    assert.strictEqual(warned.status, 201)
    assert.strictEqual(warned.warning, `299 - "unknown field \\"spec.template.spec.containers[0].livenessProbe.bogus\\""`)
    assert.notProperty(warned.body.spec.template.spec.containers[0].livenessProbe, "bogus")
  })

  it("a write refused after the decode (422) still carries its unknown-field warnings", async () => {
    const answer = await post("/api/v1/namespaces/default/configmaps", {
      metadata: { name: "warned", labels: { "a b": "c" } },
      bogus: 1
    })
    assert.strictEqual(answer.status, 422)
    assert.strictEqual(answer.warning, `299 - "unknown field \\"bogus\\""`)
  })

  it("a Quantity sent as a number is stored as its string", async () => {
    const quota = await post("/api/v1/namespaces/default/resourcequotas", {
      metadata: { name: "numbers" },
      spec: { hard: { pods: 7, cpu: 1.5 } }
    })
    assert.deepStrictEqual(quota.body.spec.hard, { cpu: "1500m", pods: "7" })
  })

  it("stores what Go's decode and encode leave: nulls and empty lists of optional fields gone, required ones zero", async () => {
    const policy = await post("/apis/networking.k8s.io/v1/namespaces/default/networkpolicies", {
      metadata: { name: "np", labels: null },
      spec: { podSelector: null, ingress: [] }
    })
    assert.strictEqual(policy.status, 201, JSON.stringify(policy.body))
    // podSelector is no pointer: kube-apiserver writes it as {}
    assert.deepStrictEqual(policy.body.spec.podSelector, {})
    assert.notProperty(policy.body.spec, "ingress")
    assert.notProperty(policy.body.metadata, "labels")
    const map = await post("/api/v1/namespaces/default/configmaps", { metadata: { name: "nulls" }, data: { a: null } })
    assert.deepStrictEqual(map.body.data, { a: "" })
    const role = await post("/apis/rbac.authorization.k8s.io/v1/clusterroles", { metadata: { name: "empty" } })
    assert.strictEqual(role.body.rules, null)
  })
})

/**
 * Manifests.parse against kubectl itself: for every file under test/fixtures/yaml, and for
 * generated YAML 1.1 edge cases, `kubectl create --dry-run=client -o json -f` (against
 * FakeCluster.serve, for discovery) must print the objects Manifests.parse gives, and a
 * file kubectl refuses must be refused. Without kubectl on PATH this suite is skipped, and
 * its name says why; test/Yaml.test.ts checks each rule without kubectl.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import fc from "fast-check"
import { execFile } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import * as Manifests from "../../packages/effect-kube/src/Manifests.js"
import { FakeCluster } from "@effect-kube/testing"
import { hasKubectl, kubectlPath } from "../util/kubectl.js"

const fixtures = fileURLToPath(new URL("../fixtures/yaml", import.meta.url))
const refused = Path.join(fixtures, "refused")
const filesIn = (dir: string) => Fs.readdirSync(dir).filter((f) => /\.(ya?ml|json)$/.test(f)).sort()

interface Run {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

let served: FakeCluster.Listening | undefined
let server: FakeCluster.Server | undefined
let dir = ""

/** Runs `kubectl create --dry-run=client -o json` on a file or directory: nothing is sent but discovery. */
const kubectlCreate = (target: string): Promise<Run> =>
  new Promise((resolve) => {
    execFile(
      kubectlPath,
      [
        "--kubeconfig",
        served!.kubeconfigPath,
        "--cache-dir",
        Path.join(dir, "cache"),
        "create",
        "--dry-run=client",
        "--validate=false",
        "-o",
        "json",
        "-f",
        target
      ],
      { encoding: "utf8", timeout: 60_000, env: { ...process.env, HOME: dir }, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => resolve({ code: error === null ? 0 : Number(error.code ?? 1), stdout, stderr })
    )
  })

/** kubectl prints each object as indented JSON, one after another. */
const kubectlObjects = (stdout: string): Array<Record<string, unknown>> =>
  stdout.split(/^}$/m).filter((chunk) => chunk.trim() !== "").map((chunk) => JSON.parse(`${chunk}}`))

/**
 * kubectl fills in the namespace of namespaced kinds (`default`, from the kubeconfig);
 * Manifests.parse leaves that to apply. Everything else must be equal.
 */
const withoutDefaultNamespace = (object: Record<string, unknown>, parsed: Record<string, unknown> | undefined) => {
  const metadata = object["metadata"] as Record<string, unknown> | undefined
  const parsedMetadata = parsed?.["metadata"] as Record<string, unknown> | undefined
  if (metadata?.["namespace"] === "default" && parsedMetadata?.["namespace"] === undefined) {
    const { namespace: _namespace, ...rest } = metadata
    return { ...object, metadata: rest }
  }
  return object
}

/** What Manifests.parse gives, as plain JSON (kubectl's objects come from JSON too). */
const parseFile = (path: string) =>
  Effect.runSync(Effect.result(Manifests.parse(new Uint8Array(Fs.readFileSync(path))))).pipe(
    Result.map((objects) => JSON.parse(JSON.stringify(objects)) as Array<Record<string, unknown>>)
  )

const suite = hasKubectl
  ? "Manifests.parse reads files as kubectl does"
  : "Manifests.parse reads files as kubectl does (skipped: no kubectl on PATH)"

describe.skipIf(!hasKubectl)(suite, () => {
  beforeAll(async () => {
    dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "effect-kube-yaml-"))
    server = FakeCluster.makeServer({
      resources: [{ apiVersion: "yaml.test/v1", kind: "Probe", plural: "probes", namespaced: false }]
    })
    served = await FakeCluster.listen(server, { kubeconfigDir: dir })
  })
  afterAll(async () => {
    await served?.close()
    server?.close()
    if (dir !== "") Fs.rmSync(dir, { recursive: true, force: true })
  })

  for (const file of filesIn(fixtures)) {
    it(`${file}: the same objects as kubectl`, async () => {
      const path = Path.join(fixtures, file)
      const run = await kubectlCreate(path)
      const parsed = parseFile(path)
      if (Result.isFailure(parsed)) assert.fail(`Manifests.parse failed: ${parsed.failure.message}`)
      const ours = parsed.success
      if (run.code !== 0 && /no objects passed to create/.test(run.stderr)) {
        assert.deepStrictEqual(ours, [])
        return
      }
      assert.strictEqual(run.code, 0, `kubectl failed: ${run.stderr}`)
      const theirs = kubectlObjects(run.stdout)
      assert.isAbove(ours.length, 0)
      assert.deepStrictEqual(ours, theirs.map((object, i) => withoutDefaultNamespace(object, ours[i])))
    }, 60_000)
  }

  for (const file of filesIn(refused)) {
    it(`refused/${file}: refused by both, with a ValidationError naming the document`, async () => {
      const path = Path.join(refused, file)
      const run = await kubectlCreate(path)
      assert.notStrictEqual(run.code, 0, `kubectl read it: ${run.stdout}`)
      const parsed = parseFile(path)
      if (Result.isSuccess(parsed)) assert.fail(`Manifests.parse read it: ${JSON.stringify(parsed.success)}`)
      assert.strictEqual(parsed.failure._tag, "ValidationError")
      assert.match(parsed.failure.subject, /^(document\[\d+\]|manifests)/)
      assert.notInclude(parsed.failure.message, "s3cr3t-value")
    }, 60_000)
  }

  // -------------------------------------------------------------------------------------------------------------------
  // generated YAML 1.1 edge cases, many to a kubectl run
  // -------------------------------------------------------------------------------------------------------------------

  const words = ["y", "n", "yes", "no", "on", "off", "true", "false", "null", "nan", "inf"]
  const mixedCase = fc.tuple(fc.constantFrom(...words), fc.array(fc.boolean(), { minLength: 5, maxLength: 5 })).map((
    [word, upper]
  ) => word.split("").map((c, i) => (upper[i % 5] ? c.toUpperCase() : c)).join(""))
  const numberLike = fc.tuple(
    fc.constantFrom("", "+", "-", "."),
    fc.constantFrom("", "0", "0x", "0o", "0b", "0X", "0O", "0B", "00", "."),
    fc.stringMatching(/^[0-9a-fA-F_]{1,6}$/),
    fc.constantFrom("", "", "e3", "E-2", "e+400", ".5", ":20", ":20:30", ".", "_")
  ).map((parts) => parts.join(""))
  const bigNumber = fc.oneof(
    fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map(String),
    fc.double({ noNaN: true, noDefaultInfinity: true }).map(String).filter((s) => !/Infinity/.test(s))
  )
  const special = fc.constantFrom(
    "~",
    "",
    ".inf",
    "-.Inf",
    "+.INF",
    ".NaN",
    "0755",
    "0o755",
    "08",
    "09.5",
    "1:20",
    "2001-12-14",
    "2001-12-14 21:59:43.10",
    "1e3",
    "1.",
    ".5",
    "<<",
    "0x",
    "_1",
    "1__",
    "=",
    "-0"
  )
  /** Free-form plain tokens: what a chart or an operator bundle may hold, numbers and words mixed. */
  const token = fc.stringMatching(/^[0-9a-zA-Z.+_~/=-][0-9a-zA-Z.+_:~/=@%# -]{0,10}[0-9a-zA-Z.+_~/=@%-]$/)
  const scalar = fc.oneof(mixedCase, numberLike, bigNumber, special, token)
  const styled = fc.tuple(
    scalar,
    fc.constantFrom("plain", "plain", "plain", "single", "double", "!!str", "!!int", "!!float", "!!bool", "!!null")
  ).map(([text, style]) => {
    switch (style) {
      case "plain":
        return text === "" ? "" : text
      case "single":
        return `'${text}'`
      case "double":
        return `"${text}"`
      default:
        return `${style} ${text === "" ? "''" : text}`
    }
  })
  /** A scalar in the places manifests put them: a value, a list item, an aliased value, a map key. */
  const manifestCase = fc.record({ value: styled, item: styled, key: scalar })
  const documentFor = (c: { value: string; item: string; key: string }, name: string) =>
    [
      "apiVersion: yaml.test/v1",
      "kind: Probe",
      `metadata: {name: ${name}}`,
      "spec:",
      `  value: ${c.value}`,
      `  list: [${c.item}, x]`,
      `  anchored: &a ${c.value}`,
      "  alias: *a",
      "  map:",
      `    ${c.key === "" || c.key === "<<" ? "''" : c.key}: k`,
      "  block:",
      `  - ${c.item}`,
      `  merged: {<<: {m: ${c.value}}, n: 1}`,
      `  nested: {a: [{b: ${c.item}}]}`,
      ""
    ].join("\n")

  it("generated YAML 1.1 scalars read as kubectl reads them", async () => {
    let batch = 0
    await fc.assert(
      fc.asyncProperty(fc.array(manifestCase, { minLength: 40, maxLength: 80 }), async (cases) => {
        const caseDir = Path.join(dir, `cases-${batch++}`)
        Fs.mkdirSync(caseDir)
        cases.forEach((c, i) => Fs.writeFileSync(Path.join(caseDir, `case-${i}.yaml`), documentFor(c, `case-${i}`)))
        const run = await kubectlCreate(caseDir)
        const theirs = new Map(
          kubectlObjects(run.stdout).map((o) => [(o["metadata"] as { name: string }).name, o] as const)
        )
        cases.forEach((c, i) => {
          const text = documentFor(c, `case-${i}`)
          const parsed = parseFile(Path.join(caseDir, `case-${i}.yaml`))
          const kubectlObject = theirs.get(`case-${i}`)
          if (kubectlObject === undefined) {
            assert.include(run.stderr, `case-${i}.yaml`, `kubectl neither read nor refused:\n${text}`)
            assert.isTrue(Result.isFailure(parsed), `kubectl refused, Manifests.parse read:\n${text}`)
          } else {
            assert.isTrue(Result.isSuccess(parsed), `kubectl read, Manifests.parse refused:\n${text}\n${String(parsed)}`)
            if (Result.isSuccess(parsed)) assert.deepStrictEqual(parsed.success, [kubectlObject], text)
          }
        })
      }),
      { numRuns: 4, endOnFailure: true }
    )
  }, 120_000)
})

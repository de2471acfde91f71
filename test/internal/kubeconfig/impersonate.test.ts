/**
 * Impersonation and OIDC refresh over the real path: a kubeconfig file on disk, the Node
 * transport, a loopback "cluster" that records the headers it is sent, and a loopback
 * OIDC issuer (discovery document and token endpoint).
 */
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as HttpClient from "effect/http/HttpClient"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Fs from "node:fs"
import type * as Http from "node:http"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Util from "node:util"
import * as Yaml from "yaml"
import type { KubeConfigError } from "../../../packages/effect-kube/src/Errors.js"
import * as Impersonate from "../../../packages/effect-kube/src/internal/kubeconfig/impersonate.js"
import * as Kube from "../../../packages/effect-kube/src/Kube.js"
import * as KubeConfig from "../../../packages/effect-kube/src/KubeConfig.js"
import * as NodeKube from "../../../packages/effect-kube/src/NodeKube.js"
import { ConfigMaps } from "../../../packages/effect-kube/src/resources/index.js"
import { serve } from "../../util/loopback.js"

const tempDir = Effect.acquireRelease(
  Effect.sync(() => Fs.mkdtempSync(Path.join(Os.tmpdir(), "effect-kube-auth-"))),
  (dir) => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true }))
)

const kubeconfig = (server: string, user: object) => ({
  apiVersion: "v1",
  kind: "Config",
  "current-context": "ctx",
  clusters: [{ name: "c", cluster: { server } }],
  users: [{ name: "u", user }],
  contexts: [{ name: "ctx", context: { cluster: "c", user: "u", namespace: "default" } }]
})

const writeConfig = (dir: string, server: string, user: object): string => {
  const path = Path.join(dir, "kubeconfig")
  Fs.writeFileSync(path, Yaml.stringify(kubeconfig(server, user)))
  return path
}

interface Seen {
  /** Header name (lower case) and value, one entry per header line, in order. */
  readonly lines: ReadonlyArray<readonly [string, string]>
}

/** A "cluster" that answers every GET with a ConfigMap when the bearer token is `accept`, else 401. */
const cluster = (accept: (token: string | undefined) => boolean) =>
  Effect.gen(function*() {
    const seen: Array<Seen> = []
    const server = yield* serve((req, res) => {
      const lines: Array<readonly [string, string]> = []
      for (let i = 0; i < req.rawHeaders.length; i += 2) {
        lines.push([req.rawHeaders[i]!.toLowerCase(), req.rawHeaders[i + 1]!])
      }
      seen.push({ lines })
      const auth = req.headers.authorization
      res.setHeader("content-type", "application/json")
      if (!accept(auth?.startsWith("Bearer ") ? auth.slice(7) : undefined)) {
        res.statusCode = 401
        res.end(JSON.stringify({ kind: "Status", apiVersion: "v1", status: "Failure", code: 401, reason: "Unauthorized" }))
        return
      }
      res.end(JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a", namespace: "default" } }))
    })
    return { url: server.url, seen }
  })

const getA = Kube.api(ConfigMaps).get("a")

const impersonationLines = (seen: Seen) => seen.lines.filter(([name]) => name.startsWith("impersonate-"))

describe("impersonation", () => {
  it.effect("as, as-uid, as-groups and as-user-extra become Impersonate-* headers, one line per value", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const server = yield* cluster((token) => token === "t")
      const path = writeConfig(dir, server.url, {
        token: "t",
        as: "jane",
        "as-uid": "uid-1",
        "as-groups": ["dev", "ops"],
        "as-user-extra": { reason: ["on call"], "example.com/scopes": ["a", "b"], "100%": ["p"], "é": ["x"], none: [] }
      })
      const found = yield* Effect.provide(getA, NodeKube.layerFromFile({ path }))
      assert.isTrue(Option.isSome(found))
      assert.deepStrictEqual(impersonationLines(server.seen[0]!), [
        ["impersonate-user", "jane"],
        ["impersonate-uid", "uid-1"],
        ["impersonate-group", "dev"],
        ["impersonate-group", "ops"],
        ["impersonate-extra-reason", "on call"],
        // @effect/platform lower-cases header names; the API server lower-cases them too
        // before it decodes the key, so %2f and %2F are the same key.
        ["impersonate-extra-example.com%2fscopes", "a"],
        ["impersonate-extra-example.com%2fscopes", "b"],
        ["impersonate-extra-100%25", "p"],
        ["impersonate-extra-%c3%a9", "x"]
      ])
    }))

  it.effect("an empty as-user-extra: {} (minikube) or as-groups: [] is no impersonation, and loads", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const server = yield* cluster((token) => token === "t")
      const path = writeConfig(dir, server.url, { token: "t", "as-user-extra": {}, "as-groups": [] })
      const config = yield* Effect.provide(KubeConfig.fromFile({ path }), NodeKube.layerPlatform)
      assert.isUndefined(config.impersonate)
      yield* Effect.provide(getA, NodeKube.layerFromFile({ path }))
      assert.deepStrictEqual(impersonationLines(server.seen[0]!), [])
    }))

  it.effect("groups, a uid or extras without as are refused before any request, naming file, context and field", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const errors: Array<KubeConfigError> = []
      for (const user of [{ "as-groups": ["dev"] }, { "as-uid": "1" }, { "as-user-extra": { k: ["v"] } }]) {
        const path = writeConfig(dir, "https://127.0.0.1:1", { token: "t", ...user })
        errors.push(yield* Effect.flip(Effect.provide(KubeConfig.fromFile({ path }), NodeKube.layerPlatform)))
      }
      for (const error of errors) {
        assert.strictEqual(error.field, "users[u].user.as")
        assert.strictEqual(error.context, "ctx")
        assert.include(error.message, Path.join(dir, "kubeconfig"))
      }
      assert.include(errors[0]!.message, "is required with as-groups")
      const badValue = yield* Effect.flip(Effect.provide(
        KubeConfig.fromString(Yaml.stringify(kubeconfig("https://h", { as: "jane", "as-groups": ["a\nb"] }))),
        NodeKube.layerPlatform
      ))
      assert.strictEqual(badValue.field, "users[u].user.as-groups[0]")
    }))

  it.effect("explicit configurations impersonate too", () =>
    Effect.gen(function*() {
      const server = yield* cluster(() => true)
      const layer = NodeKube.layerFromKubeConfig(KubeConfig.layerFrom({
        server: server.url,
        impersonate: { user: "system:serviceaccount:ci:deployer", groups: ["system:masters"] }
      }))
      yield* Effect.provide(getA, layer)
      assert.deepStrictEqual(impersonationLines(server.seen[0]!), [
        ["impersonate-user", "system:serviceaccount:ci:deployer"],
        ["impersonate-group", "system:masters"]
      ])
    }))

  it("extra keys are escaped as client-go's headerKeyEscape", () => {
    assert.strictEqual(Impersonate.escapeExtraKey("scopes"), "scopes")
    assert.strictEqual(Impersonate.escapeExtraKey("example.com/scopes"), "example.com%2Fscopes")
    assert.strictEqual(Impersonate.escapeExtraKey("a b%"), "a%20b%25")
    assert.strictEqual(Impersonate.escapeExtraKey("ü"), "%C3%BC")
  })
})

const b64url = (value: object) => Buffer.from(JSON.stringify(value)).toString("base64url")
const jwt = (claims: { readonly exp: number; readonly sub: string }) => `${b64url({ alg: "none" })}.${b64url(claims)}.c2ln`
const nowSeconds = () => Math.floor(Date.now() / 1000)

interface TokenRequest {
  readonly authorization: string | undefined
  readonly form: URLSearchParams
}

/** An OIDC issuer on loopback: discovery, and a token endpoint that answers with `answer`. */
const issuer = (answer: (request: TokenRequest) => { readonly status: number; readonly body: object }) =>
  Effect.gen(function*() {
    const tokenRequests: Array<TokenRequest> = []
    const discoveries: Array<string> = []
    let base = ""
    const handler: Http.RequestListener = (req, res) => {
      res.setHeader("content-type", "application/json")
      if (req.method === "GET" && req.url === "/realm/.well-known/openid-configuration") {
        discoveries.push(req.url)
        res.end(JSON.stringify({ issuer: `${base}/realm`, token_endpoint: `${base}/realm/token` }))
        return
      }
      if (req.method === "POST" && req.url === "/realm/token") {
        let text = ""
        req.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")))
        req.on("end", () => {
          const request = { authorization: req.headers.authorization, form: new URLSearchParams(text) }
          tokenRequests.push(request)
          const { body, status } = answer(request)
          res.statusCode = status
          res.end(JSON.stringify(body))
        })
        return
      }
      res.statusCode = 404
      res.end("{}")
    }
    const server = yield* serve(handler)
    base = server.url
    return { url: `${server.url}/realm`, tokenRequests, discoveries }
  })

const oidcUser = (issuerUrl: string, idToken: string, extra: object = {}) => ({
  "auth-provider": {
    name: "oidc",
    config: {
      "id-token": idToken,
      "refresh-token": "refresh-1-s3cr3t",
      "client-id": "kubectl",
      "client-secret": "client-s3cr3t",
      "idp-issuer-url": issuerUrl,
      ...extra
    }
  }
})

describe("oidc auth-provider", () => {
  it.live("an expired id-token is renewed with the refresh-token before the request; the file is not written", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const fresh = jwt({ exp: nowSeconds() + 3600, sub: "fresh" })
      const idp = yield* issuer(() => ({
        status: 200,
        body: { id_token: fresh, refresh_token: "refresh-2-s3cr3t", token_type: "Bearer" }
      }))
      const server = yield* cluster((token) => token === fresh)
      const path = writeConfig(dir, server.url, oidcUser(idp.url, jwt({ exp: nowSeconds() - 60, sub: "old" })))
      const before = Fs.readFileSync(path, "utf8")
      // The issuer is reached through OidcHttpClient, here fetch counting its requests.
      const issuerRequests: Array<string> = []
      const issuerClient = Layer.effect(
        KubeConfig.OidcHttpClient,
        Effect.map(
          Effect.provide(HttpClient.HttpClient, FetchHttpClient.layer),
          HttpClient.tapRequest((request) => Effect.sync(() => issuerRequests.push(`${request.method} ${request.url}`)))
        )
      )
      const layer = NodeKube.layerFromKubeConfig(Layer.provide(KubeConfig.layerFromFile({ path }), issuerClient))
      yield* Effect.provide(Effect.zip(getA, getA), layer)
      assert.strictEqual(idp.tokenRequests.length, 1, "one refresh, then the fresh token is cached")
      const [request] = idp.tokenRequests
      assert.strictEqual(request!.form.get("grant_type"), "refresh_token")
      assert.strictEqual(request!.form.get("refresh_token"), "refresh-1-s3cr3t")
      assert.strictEqual(
        request!.authorization,
        `Basic ${Buffer.from("kubectl:client-s3cr3t").toString("base64")}`
      )
      assert.deepStrictEqual(issuerRequests, [
        `GET ${idp.url}/.well-known/openid-configuration`,
        `POST ${idp.url}/token`
      ])
      assert.strictEqual(server.seen.length, 2, "no request went with the expired token")
      assert.strictEqual(Fs.readFileSync(path, "utf8"), before, "nothing written back")
    }))

  it.live("after a 401 the id-token is renewed once and the request sent again; the rotated refresh-token is used next", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const later = nowSeconds() + 3600
      let issued = 0
      const idp = yield* issuer(() => {
        issued++
        return {
          status: 200,
          body: { id_token: jwt({ exp: later, sub: `fresh-${issued}` }), refresh_token: `refresh-${issued + 1}` }
        }
      })
      let accepted = ""
      const server = yield* cluster((token) => token === accepted)
      const path = writeConfig(dir, server.url, oidcUser(idp.url, jwt({ exp: later, sub: "revoked" })))
      const service = yield* Effect.provide(KubeConfig.fromFile({ path }), NodeKube.layerPlatform)
      const layer = NodeKube.layerFromKubeConfig(Layer.succeed(KubeConfig.KubeConfig, service))
      accepted = jwt({ exp: later, sub: "fresh-1" })
      yield* Effect.provide(getA, layer)
      assert.strictEqual(server.seen.length, 2, "401, then the retry")
      assert.strictEqual(idp.tokenRequests.length, 1)
      // The server revokes again: the next refresh presents the rotated refresh token.
      accepted = jwt({ exp: later, sub: "fresh-2" })
      yield* Effect.provide(getA, layer)
      assert.strictEqual(idp.tokenRequests.length, 2)
      assert.strictEqual(idp.tokenRequests[1]!.form.get("refresh_token"), "refresh-2")
      assert.strictEqual(idp.discoveries.length, 1, "the token endpoint is discovered once")
    }))

  it.live("persistOidcTokens writes the renewed tokens back to the file, keeping comments and other users", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const fresh = jwt({ exp: nowSeconds() + 3600, sub: "fresh" })
      const idp = yield* issuer(() => ({ status: 200, body: { id_token: fresh, refresh_token: "refresh-2-s3cr3t" } }))
      const server = yield* cluster((token) => token === fresh)
      const path = Path.join(dir, "kubeconfig")
      const config = kubeconfig(server.url, oidcUser(idp.url, jwt({ exp: nowSeconds() - 60, sub: "old" })))
      const other = { name: "someone-else", user: { token: "other-token" } }
      Fs.writeFileSync(path, `# written by hand\n${Yaml.stringify({ ...config, users: [...config.users, other] })}`)
      yield* Effect.provide(getA, NodeKube.layerFromFile({ path, persistOidcTokens: true }))
      const text = Fs.readFileSync(path, "utf8")
      assert.isTrue(text.startsWith("# written by hand\n"))
      const written = Yaml.parse(text)
      assert.strictEqual(written.users[0].user["auth-provider"].config["id-token"], fresh)
      assert.strictEqual(written.users[0].user["auth-provider"].config["refresh-token"], "refresh-2-s3cr3t")
      assert.strictEqual(written.users[0].user["auth-provider"].config["client-secret"], "client-s3cr3t")
      assert.deepStrictEqual(written.users[1], other)
    }))

  it.live("a refused refresh and an expired token without a refresh-token fail naming the field, and no secret", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const expired = jwt({ exp: nowSeconds() - 60, sub: "old" })
      const idp = yield* issuer(() => ({
        status: 400,
        body: { error: "invalid_grant", error_description: "refresh-1-s3cr3t is revoked" }
      }))
      const path = writeConfig(dir, "https://127.0.0.1:1", oidcUser(idp.url, expired))
      const service = yield* Effect.provide(KubeConfig.fromFile({ path }), NodeKube.layerPlatform)
      const refused = yield* Effect.flip(service.auth.credentials)
      assert.strictEqual(refused.field, "users[u].user.auth-provider.config.refresh-token")
      assert.include(refused.message, "HTTP 400, invalid_grant")
      assert.include(refused.message, path)

      const noRefresh = yield* Effect.provide(
        KubeConfig.fromString(Yaml.stringify(kubeconfig("https://h", {
          "auth-provider": { name: "oidc", config: { "id-token": expired, "client-secret": "client-s3cr3t" } }
        }))),
        NodeKube.layerPlatform
      )
      const stale = yield* Effect.flip(noRefresh.auth.credentials)
      assert.strictEqual(stale.field, "users[u].user.auth-provider.config.id-token")
      assert.include(stale.message, "has expired")
      assert.isFalse(yield* noRefresh.auth.invalidate, "nothing to renew with: a retry would not help")

      const unreachable = yield* Effect.provide(
        KubeConfig.fromString(Yaml.stringify(kubeconfig("https://h", oidcUser("http://127.0.0.1:1/nowhere", expired)))),
        NodeKube.layerPlatform
      )
      const down = yield* Effect.flip(unreachable.auth.credentials)
      assert.strictEqual(down.field, "users[u].user.auth-provider.config.idp-issuer-url")
      for (const error of [refused, stale, down]) {
        for (const text of [error.message, JSON.stringify(error), Util.inspect(error, { depth: 10 })]) {
          for (const secret of ["refresh-1-s3cr3t", "client-s3cr3t", expired]) assert.notInclude(text, secret)
        }
      }
    }))
})

describe("oidc issuer trust", () => {
  it.effect("idp-certificate-authority is refused unless an OidcHttpClient that can trust it is provided", () =>
    Effect.gen(function*() {
      const text = Yaml.stringify(kubeconfig("https://h", oidcUser("https://issuer.example", "not-a-jwt", {
        "idp-certificate-authority-data": "LS0tLS1CRUdJTg=="
      })))
      const refused = yield* Effect.flip(Effect.provide(KubeConfig.fromString(text), NodeKube.layerPlatform))
      assert.strictEqual(refused.field, "users[u].user.auth-provider.config.idp-certificate-authority-data")
      assert.include(refused.message, "OidcHttpClient")
      const own = Layer.effect(KubeConfig.OidcHttpClient, Effect.provide(HttpClient.HttpClient, FetchHttpClient.layer))
      const loaded = yield* Effect.provide(KubeConfig.fromString(text), Layer.merge(NodeKube.layerPlatform, own))
      assert.strictEqual(loaded.auth.kind, "oidc")
    }))
})

describe("refused auth, with the replacement named", () => {
  const load = (user: object) =>
    Effect.flip(Effect.provide(KubeConfig.fromString(Yaml.stringify(kubeconfig("https://h", user))), NodeKube.layerPlatform))

  it.effect("gcp, azure and exec v1alpha1", () =>
    Effect.gen(function*() {
      const gcp = yield* load({ "auth-provider": { name: "gcp", config: { "access-token": "s3cr3t-gcp" } } })
      assert.strictEqual(gcp.field, "users[u].user.auth-provider.name")
      assert.strictEqual(gcp.context, "ctx")
      assert.include(gcp.message, "gke-gcloud-auth-plugin")
      const azure = yield* load({ "auth-provider": { name: "azure", config: { "access-token": "s3cr3t-az" } } })
      assert.include(azure.message, "kubelogin")
      const alpha = yield* load({
        exec: { apiVersion: "client.authentication.k8s.io/v1alpha1", command: "plugin", args: ["s3cr3t-arg"] }
      })
      assert.strictEqual(alpha.field, "users[u].user.exec.apiVersion")
      assert.include(alpha.message, "client.authentication.k8s.io/v1beta1")
      for (const error of [gcp, azure, alpha]) {
        for (const secret of ["s3cr3t-gcp", "s3cr3t-az", "s3cr3t-arg"]) {
          assert.notInclude(JSON.stringify(error) + error.message, secret)
        }
      }
    }))
})

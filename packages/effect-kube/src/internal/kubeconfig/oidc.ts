/**
 * The `oidc` auth-provider: an id-token used as a bearer token, renewed with the
 * refresh-token when it has expired (its JWT `exp`, with client-go's ten seconds of
 * slack) or after the server answered 401: the issuer's discovery document names the
 * token endpoint, which is asked for `grant_type=refresh_token`.
 *
 * The issuer is a third party: it is reached through its own HttpClient (fetch with the
 * platform's trust store unless the user provides one), never the cluster's, whose CA
 * and client certificate belong to the cluster alone. Nothing is written back to the
 * kubeconfig unless `onRefresh` is given. Messages never quote a token, the client
 * secret or a response body.
 *
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Base64 from "effect/encoding/Base64"
import * as Base64Url from "effect/encoding/Base64Url"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as Redacted from "effect/Redacted"
import * as Result from "effect/Result"
import * as Semaphore from "effect/Semaphore"
import type { KubeConfigError } from "../../Errors.js"
import type { AuthProvider } from "../../KubeConfig.js"
import type { Where } from "./fields.js"
import * as F from "./fields.js"

let defaultClient: HttpClient.HttpClient | undefined

/** fetch with the platform's own trust store: what an issuer on the public Internet needs. @internal */
export const makeDefaultClient = (): HttpClient.HttpClient => {
  if (defaultClient === undefined) {
    defaultClient = Effect.runSync(Effect.provide(HttpClient.HttpClient, FetchHttpClient.layer))
  }
  return defaultClient
}

/** The HttpClient that talks to OIDC issuers; see `KubeConfig.OidcHttpClient`. @internal */
export const OidcHttpClient: Context.Reference<HttpClient.HttpClient> = Context.Reference<HttpClient.HttpClient>(
  "effect-kube/KubeConfig/OidcHttpClient",
  { defaultValue: makeDefaultClient }
)

/** Fresh tokens, for a caller that keeps them (e.g. writes them back to the kubeconfig). @internal */
export interface Refreshed {
  readonly idToken: Redacted.Redacted<string>
  readonly refreshToken: Redacted.Redacted<string> | undefined
}

/** @internal */
export interface OidcSpec {
  readonly where: Where
  /** e.g. `users[u].user.auth-provider`. */
  readonly field: string
  readonly idToken: Redacted.Redacted<string> | undefined
  readonly refreshToken: Redacted.Redacted<string> | undefined
  readonly clientId: string | undefined
  readonly clientSecret: Redacted.Redacted<string> | undefined
  readonly issuerUrl: string | undefined
  readonly client: HttpClient.HttpClient
  readonly onRefresh?: ((tokens: Refreshed) => Effect.Effect<void>) | undefined
}

/** client-go renews a token this long before it expires. */
const expirySlackMillis = 10_000

/** The `exp` of a JWT in epoch milliseconds; `undefined` when the token is not a JWT or has none. @internal */
export const expiryOf = (token: string): number | undefined => {
  const parts = token.split(".")
  if (parts.length !== 3) return undefined
  const payload = Base64Url.decodeString(parts[1]!)
  if (Result.isFailure(payload)) return undefined
  try {
    const claims: unknown = JSON.parse(payload.success)
    const exp = F.isMapping(claims) ? claims["exp"] : undefined
    return typeof exp === "number" && Number.isFinite(exp) ? exp * 1000 : undefined
  } catch {
    return undefined
  }
}

/** An OAuth error code is safe to show (`invalid_grant`); anything else in a body may be a token. */
const oauthErrorCode = (body: unknown): string | undefined =>
  F.isMapping(body) && typeof body["error"] === "string" && /^[a-z_]{1,64}$/.test(body["error"])
    ? body["error"]
    : undefined

const readJson = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/** @internal */
export const oidc = (spec: OidcSpec): Effect.Effect<AuthProvider> =>
  Effect.gen(function*() {
    const lock = yield* Semaphore.make(1)
    const configField = `${spec.field}.config`
    const failWith = (field: string, detail: string): KubeConfigError => F.fail(spec.where, field, detail)
    const canRefresh = spec.refreshToken !== undefined && spec.clientId !== undefined && spec.issuerUrl !== undefined
    let idToken = spec.idToken
    let refreshToken = spec.refreshToken
    /** Set by `invalidate`: the server refused the current id-token. */
    let refused = false
    let tokenEndpoint: string | undefined

    const usable = (now: number): Redacted.Redacted<string> | undefined => {
      if (idToken === undefined || refused) return undefined
      const expiresAt = expiryOf(Redacted.value(idToken))
      return expiresAt === undefined || now + expirySlackMillis < expiresAt ? idToken : undefined
    }

    const issuer = (spec.issuerUrl ?? "").replace(/\/+$/, "")
    const unreachable = (what: string) =>
      failWith(`${configField}.idp-issuer-url`, `cannot reach the identity provider's ${what} at ${issuer}`)

    const discover = Effect.gen(function*() {
      if (tokenEndpoint !== undefined) return tokenEndpoint
      const response = yield* Effect.mapError(
        spec.client.execute(
          HttpClientRequest.get(`${issuer}/.well-known/openid-configuration`, { acceptJson: true })
        ),
        () => unreachable("discovery document")
      )
      const json = readJson(yield* Effect.orElseSucceed(response.text, () => ""))
      const endpoint = F.isMapping(json) ? json["token_endpoint"] : undefined
      if (response.status !== 200 || typeof endpoint !== "string" || !/^https?:\/\//.test(endpoint)) {
        return yield* Effect.fail(
          failWith(
            `${configField}.idp-issuer-url`,
            `${issuer}/.well-known/openid-configuration did not name a token_endpoint (HTTP ${response.status})`
          )
        )
      }
      tokenEndpoint = endpoint
      return endpoint
    })

    const refresh = Effect.gen(function*() {
      const endpoint = yield* discover
      const form: Record<string, string> = {
        grant_type: "refresh_token",
        refresh_token: Redacted.value(refreshToken!)
      }
      let request = HttpClientRequest.post(endpoint, { acceptJson: true })
      if (spec.clientSecret !== undefined) {
        // RFC 6749 2.3.1: client id and secret, form-encoded, in HTTP Basic.
        const pair = `${encodeURIComponent(spec.clientId!)}:${encodeURIComponent(Redacted.value(spec.clientSecret))}`
        request = HttpClientRequest.setHeader(request, "authorization", `Basic ${Base64.encode(pair)}`)
      } else {
        form["client_id"] = spec.clientId!
      }
      request = HttpClientRequest.bodyUrlParams(request, form)
      const response = yield* Effect.mapError(spec.client.execute(request), () => unreachable("token endpoint"))
      const json = readJson(yield* Effect.orElseSucceed(response.text, () => ""))
      if (response.status < 200 || response.status >= 300) {
        const code = oauthErrorCode(json)
        return yield* Effect.fail(
          failWith(
            `${configField}.refresh-token`,
            `the identity provider refused to refresh the id-token (HTTP ${response.status}${
              code !== undefined ? `, ${code}` : ""
            }); log in again`
          )
        )
      }
      const fresh = F.isMapping(json) ? json["id_token"] : undefined
      if (typeof fresh !== "string" || fresh === "") {
        return yield* Effect.fail(
          failWith(`${configField}.refresh-token`, "the identity provider's answer has no id_token")
        )
      }
      const rotated = F.isMapping(json) ? json["refresh_token"] : undefined
      idToken = Redacted.make(fresh)
      if (typeof rotated === "string" && rotated !== "") refreshToken = Redacted.make(rotated)
      refused = false
      if (spec.onRefresh !== undefined) yield* spec.onRefresh({ idToken, refreshToken })
      return idToken
    })

    const obtain = Effect.gen(function*() {
      const ready = usable(yield* Clock.currentTimeMillis)
      if (ready !== undefined) return ready
      if (!canRefresh) {
        return yield* Effect.fail(
          idToken === undefined
            ? failWith(
              `${configField}.id-token`,
              "is required, unless refresh-token, client-id and idp-issuer-url are given to obtain one"
            )
            : failWith(
              `${configField}.id-token`,
              "has expired and cannot be renewed without refresh-token, client-id and idp-issuer-url; log in again"
            )
        )
      }
      return yield* refresh
    })

    const credentials = Effect.gen(function*() {
      const ready = usable(yield* Clock.currentTimeMillis)
      if (ready !== undefined) return { token: ready }
      // One refresh at a time; a fiber that waited finds the fresh token.
      return { token: yield* lock.withPermits(1)(obtain) }
    })

    return {
      kind: "oidc",
      credentials,
      invalidate: Effect.sync(() => {
        if (!canRefresh) return false
        refused = true
        return true
      })
    }
  })

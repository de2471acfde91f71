/**
 * Service-account tokens as kube-apiserver issues them: JWTs signed RS256 with the
 * service-account claims (`iss`, `sub`, `aud`, `exp`, `iat`, `nbf`, `jti` and
 * `kubernetes.io` with the namespace, the account and the bound pod, secret or node),
 * and their verification: the signature, the issuer, the audience, the times on the
 * fake's clock, and that the account (and bound object) still exist with the uids the
 * token names. Requests carrying one are authenticated; TokenReview reports it.
 *
 * One RSA key serves every fake of the process (made on first use: key generation is
 * the slow part); a token still only works on the fake that issued it, whose uids it
 * names.
 *
 * @internal
 */
import * as Crypto from "node:crypto"
import { isObject, type JsonObject } from "../store/json.js"
import type { FakeState } from "../store/state.js"
import { keyOf } from "../store/store.js"

/** The issuer and default audience of the fake's tokens, as a cluster's `--service-account-issuer`. @internal */
export const issuer = "https://kubernetes.default.svc.cluster.local"

interface SigningKey {
  readonly privateKey: Crypto.KeyObject
  readonly publicKey: Crypto.KeyObject
  readonly kid: string
}

let made: SigningKey | undefined
let making: Promise<SigningKey> | undefined

/** The process's signing key (its `kid` is the base64url SHA-256 of the public key, as kube-apiserver's). */
const signingKey = (): Promise<SigningKey> =>
  made !== undefined ? Promise.resolve(made) : (making ??= new Promise<SigningKey>((resolve, reject) => {
    Crypto.generateKeyPair("rsa", { modulusLength: 2048 }, (error, publicKey, privateKey) => {
      if (error !== null) return reject(error)
      const der = publicKey.export({ type: "spki", format: "der" })
      const kid = Crypto.createHash("sha256").update(der).digest("base64url")
      resolve(made = { privateKey, publicKey, kid })
    })
  }))

const base64url = (text: string): string => Buffer.from(text).toString("base64url")

/** JSON with keys in order, as the API server's JWT library writes the claims. */
const sortedJson = (value: unknown): string => {
  if (Array.isArray(value)) return `[${value.map(sortedJson).join(",")}]`
  if (isObject(value)) {
    return `{${
      Object.keys(value).filter((k) => value[k] !== undefined).sort().map((k) =>
        `${JSON.stringify(k)}:${sortedJson(value[k])}`
      ).join(",")
    }}`
  }
  return JSON.stringify(value)
}

/** A reference in the `kubernetes.io` claim: `{ name, uid }`. @internal */
export interface Named {
  readonly name: string
  readonly uid: string
}

/** What a token says about who holds it. @internal */
export interface TokenClaims {
  readonly namespace: string
  readonly serviceAccount: Named
  readonly pod?: Named | undefined
  readonly secret?: Named | undefined
  readonly node?: Named | undefined
  readonly audiences: ReadonlyArray<string>
  readonly jti: string
  readonly expiresAt: number
}

/** Signs a service-account token for the claims, valid from now (the fake's clock) for `seconds`. @internal */
export const issue = async (
  state: FakeState,
  claims: Omit<TokenClaims, "jti" | "expiresAt">,
  seconds: number
): Promise<{ readonly token: string; readonly expiresAt: number }> => {
  const key = await signingKey()
  const iat = Math.floor(state.clock.now() / 1000)
  const exp = iat + seconds
  const payload = {
    aud: claims.audiences,
    exp,
    iat,
    iss: issuer,
    jti: Crypto.randomUUID(),
    "kubernetes.io": {
      namespace: claims.namespace,
      node: claims.node,
      pod: claims.pod,
      secret: claims.secret,
      serviceaccount: claims.serviceAccount
    },
    nbf: iat,
    sub: `system:serviceaccount:${claims.namespace}:${claims.serviceAccount.name}`
  }
  const signingInput = `${base64url(JSON.stringify({ alg: "RS256", kid: key.kid }))}.${base64url(sortedJson(payload))}`
  const signature = Crypto.sign("sha256", Buffer.from(signingInput), key.privateKey).toString("base64url")
  return { token: `${signingInput}.${signature}`, expiresAt: exp * 1000 }
}

const named = (value: unknown): Named | undefined =>
  isObject(value) && typeof value.name === "string" && typeof value.uid === "string" ?
    { name: value.name, uid: value.uid } :
    undefined

/** Whether an object of a kind exists in the fake with that uid. */
const exists = (state: FakeState, plural: string, namespace: string, ref: Named): boolean => {
  const kind = state.registry.byResource("", "v1", plural)
  const entry = kind === undefined ? undefined : state.store.existing(kind)?.entries.get(keyOf(namespace, ref.name))
  return entry !== undefined && entry.uid === ref.uid
}

/**
 * The claims of a token this fake issued and still honours, or why not: a bad
 * signature, another issuer, none of `audiences`, expired or not yet valid, or an
 * account or bound object that is gone (or was made again).
 *
 * @internal
 */
export const verify = (
  state: FakeState,
  token: string,
  audiences: ReadonlyArray<string> = [issuer]
): TokenClaims | { readonly error: string } => {
  const invalid = { error: "invalid bearer token" }
  const parts = token.split(".")
  if (parts.length !== 3 || made === undefined) return invalid
  let header: unknown
  let payload: unknown
  try {
    header = JSON.parse(Buffer.from(parts[0]!, "base64url").toString("utf8"))
    payload = JSON.parse(Buffer.from(parts[1]!, "base64url").toString("utf8"))
  } catch {
    return invalid
  }
  if (!isObject(header) || header.alg !== "RS256" || !isObject(payload)) return invalid
  const signed = Crypto.verify(
    "sha256",
    Buffer.from(`${parts[0]}.${parts[1]}`),
    made.publicKey,
    Buffer.from(parts[2]!, "base64url")
  )
  if (!signed || payload.iss !== issuer) return invalid
  const now = state.clock.now() / 1000
  if (typeof payload.exp !== "number" || payload.exp < now) {
    return { error: "[invalid bearer token, service account token has expired]" }
  }
  if (typeof payload.nbf === "number" && payload.nbf > now + 60) {
    return { error: "[invalid bearer token, service account token is not valid yet]" }
  }
  const tokenAudiences = Array.isArray(payload.aud) ? payload.aud.filter((a): a is string => typeof a === "string") : []
  const accepted = tokenAudiences.filter((a) => audiences.includes(a))
  if (accepted.length === 0) {
    return { error: "[invalid bearer token, token audiences is invalid for the target audiences]" }
  }
  const k8s = isObject(payload["kubernetes.io"]) ? payload["kubernetes.io"] : {}
  const namespace = k8s.namespace
  const serviceAccount = named(k8s.serviceaccount)
  if (typeof namespace !== "string" || serviceAccount === undefined) return invalid
  if (!exists(state, "serviceaccounts", namespace, serviceAccount)) {
    return { error: `[invalid bearer token, service account ${namespace}/${serviceAccount.name} has been deleted]` }
  }
  const pod = named(k8s.pod)
  if (pod !== undefined && !exists(state, "pods", namespace, pod)) {
    return { error: `[invalid bearer token, pod ${namespace}/${pod.name} has been deleted]` }
  }
  const secret = named(k8s.secret)
  if (secret !== undefined && !exists(state, "secrets", namespace, secret)) {
    return { error: `[invalid bearer token, secret ${namespace}/${secret.name} has been deleted]` }
  }
  const node = named(k8s.node)
  return {
    namespace,
    serviceAccount,
    pod,
    secret,
    node,
    audiences: accepted,
    jti: typeof payload.jti === "string" ? payload.jti : "",
    expiresAt: payload.exp * 1000
  }
}

/** The user a token's claims authenticate, as TokenReview reports it. @internal */
export const userOf = (claims: TokenClaims): JsonObject => {
  const extra: Record<string, Array<string>> = {}
  if (claims.jti !== "") extra["authentication.kubernetes.io/credential-id"] = [`JTI=${claims.jti}`]
  if (claims.node !== undefined) {
    extra["authentication.kubernetes.io/node-name"] = [claims.node.name]
    extra["authentication.kubernetes.io/node-uid"] = [claims.node.uid]
  }
  if (claims.pod !== undefined) {
    extra["authentication.kubernetes.io/pod-name"] = [claims.pod.name]
    extra["authentication.kubernetes.io/pod-uid"] = [claims.pod.uid]
  }
  return {
    username: `system:serviceaccount:${claims.namespace}:${claims.serviceAccount.name}`,
    uid: claims.serviceAccount.uid,
    groups: ["system:serviceaccounts", `system:serviceaccounts:${claims.namespace}`, "system:authenticated"],
    extra
  }
}

/**
 * Whether a request's `Authorization` header authenticates it: any request when the fake
 * has no token, else its token or a service-account token it issued and still honours.
 *
 * @internal
 */
export const authenticates = (state: FakeState, authorization: string | undefined): boolean => {
  if (state.token === undefined) return true
  if (authorization === undefined || !authorization.startsWith("Bearer ")) return false
  const token = authorization.slice(7)
  if (token === state.token) return true
  return !("error" in verify(state, token))
}
